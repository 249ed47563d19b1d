"""Every file osmeter writes, written one way and checked to the end.

A regular file (or a new one) is replaced atomically: written to a temporary file beside
it, flushed, fsync'ed and renamed over it, so a reader never sees half a file and a
failure (a full disk, a quota) leaves the old file and nothing else.  The file replaced
keeps its mode and owner (a new one gets 0666 less the umask).  A symlink is followed to
its target, which is replaced the same way (in the target's directory; the link stays),
so a full disk behind a link loses nothing either.  Anything else the user names is
written to in place and never replaced: a device (-o /dev/null, /dev/full, /dev/stdout)
or a FIFO, which must have a reader within FIFO_WAIT_S (else it is an error, never a wait
without end).  A directory or a socket is refused.  Whatever fails, down to the last
flush and close, raises WriteError (one line); standard output goes through
CheckedStream, so a full disk behind it is an error too, never a silent loss.
"""
from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
import time

from ..base.text import inert


FIFO_WAIT_S = 5.0   # how long a FIFO named as the output may wait for its reader


class WriteError(Exception):
    """A file (or standard output) that could not be written completely; one line."""


def write_file(path: str | os.PathLike, text: str | bytes) -> None:
    """Write text (UTF-8) or bytes to path, as the module's docstring says."""
    path = os.fspath(path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        mode = _mode(path, follow=False)
        if mode is not None and stat.S_ISLNK(mode):
            mode = _mode(path, follow=True)
            target = os.path.realpath(path)
            if (mode is None or stat.S_ISREG(mode)) and not _descriptor(path, target):
                path = target       # the link's target is replaced; the link stays
            elif mode is not None and stat.S_ISREG(mode):   # /dev/stdout > file
                return _write_in_place(path, data)
    except OSError as e:
        raise WriteError("cannot write %s: %s" % (path, e.strerror or e)) from None
    if mode is None or stat.S_ISREG(mode):
        _replace(path, data)
    elif stat.S_ISDIR(mode):
        raise WriteError("cannot write %s: it is a directory" % path)
    elif stat.S_ISSOCK(mode):
        raise WriteError("cannot write %s: it is a socket" % path)
    else:       # a device or a FIFO: never replaced
        _write_in_place(path, data, fifo=stat.S_ISFIFO(mode))


def _mode(path: str, follow: bool) -> int | None:
    try:
        return (os.stat if follow else os.lstat)(path).st_mode
    except FileNotFoundError:
        return None


def _descriptor(path: str, target: str) -> bool:
    """/dev/stdout, /dev/fd/N, /proc/self/fd/N: a descriptor the caller opened, written
    as it is (a shell's `>>` appends), never replaced by a new file."""
    return path.startswith("/dev/") or target.startswith("/proc/")


def _replace(path: str, data: bytes) -> None:
    directory = os.path.dirname(path) or "."
    try:
        old = os.stat(path)
    except FileNotFoundError:
        old = None
    except OSError as e:
        raise WriteError("cannot write %s: %s" % (path, e.strerror or e)) from None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".osmeter-", dir=directory)
    except OSError as e:
        raise WriteError("cannot write %s: %s" % (path, e.strerror or e)) from None
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
            if old is None:
                os.fchmod(fd, 0o666 & ~_umask())
            else:           # the file replaced keeps its owner and mode
                _keep_owner(fd, old)
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WriteError("cannot write %s: %s" % (path, e.strerror or e)) from None
    _sync_directory(directory)


def _keep_owner(fd: int, old: os.stat_result) -> None:
    """The new file (fd) takes the owner and group of the old one; when this process may
    not give it them, nothing is replaced (OSError)."""
    new = os.fstat(fd)
    if (new.st_uid, new.st_gid) == (old.st_uid, old.st_gid):
        return
    try:
        os.fchown(fd, old.st_uid, old.st_gid)
    except PermissionError:
        raise OSError(errno.EPERM, "it belongs to user %d, group %d, which replacing it "
                      "would change (it is left as it was)" % (old.st_uid, old.st_gid)) \
            from None


def _write_in_place(path: str, data: bytes, fifo: bool = False) -> None:
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | (
        os.O_NONBLOCK if fifo else os.O_CREAT | os.O_TRUNC)
    waited = time.monotonic() + FIFO_WAIT_S
    while True:
        try:
            fd = os.open(path, flags, 0o666)
            break
        except OSError as e:
            if not (fifo and e.errno == errno.ENXIO):
                raise WriteError("cannot write %s: %s" % (path, e.strerror or e)) from None
            if time.monotonic() > waited:
                raise WriteError("cannot write %s: it is a FIFO that no process read "
                                 "within %g s" % (path, FIFO_WAIT_S)) from None
            time.sleep(0.05)
    try:
        try:
            if fifo:        # a reader is there: the writes may wait for it
                os.set_blocking(fd, True)
            _write_all(fd, data)
            if stat.S_ISREG(os.fstat(fd).st_mode):      # /dev/stdout to a file
                os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        raise WriteError("cannot write %s: %s" % (path, e.strerror or e)) from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:      # not seen, but a loop that cannot end must not be possible
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        view = view[n:]


def _sync_directory(directory: str) -> None:
    """The rename itself survives a crash once the directory is synced; file systems
    that cannot sync a directory (EINVAL) have nothing to do."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.EBADF, errno.EROFS):
            raise WriteError("cannot write %s: %s" % (directory, e.strerror or e)) from None
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class CheckedStream:
    """Standard output that raises WriteError (one line) when a write or flush fails for
    any reason but a closed pipe (BrokenPipeError: the reader went away, not a loss);
    afterwards it points to /dev/null, so that Python's last flush at exit does not fail
    a second time with a traceback.  No control character but newline and tab passes
    (text.inert): whatever a store of an older osmeter holds, no terminal escape reaches
    the terminal."""

    def __init__(self, stream, name: str = "standard output"):
        self._stream = stream
        self._name = name

    def write(self, text):
        try:
            return self._stream.write(inert(text, "\n\t"))
        except OSError as e:
            self._failed(e)

    def flush(self):
        try:
            self._stream.flush()
        except OSError as e:
            self._failed(e)

    def _failed(self, e: OSError):
        if isinstance(e, BrokenPipeError):
            raise e
        try:
            fd = self._stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass
        raise WriteError("cannot write to %s: %s" % (self._name, e.strerror or e)) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def checked_stdout() -> CheckedStream:
    return sys.stdout if isinstance(sys.stdout, CheckedStream) else CheckedStream(sys.stdout)
