"""Every file osmeter writes, written one way and checked to the end.

A regular file (or a new one) is replaced atomically: written to a temporary file beside
it, flushed, fsync'ed and renamed over it, so a reader never sees half a file and a
failure (a full disk, a quota) leaves the old file and nothing else.  Anything else the
user names is written to in place and never replaced: a device (-o /dev/null, /dev/full,
/dev/stdout), a FIFO, or a symlink, which is written through (the link stays, its target
receives the text).  A directory or a socket is refused.  Whatever fails, down to the
last flush and close, raises WriteError (one line); standard output goes through
CheckedStream, so a full disk behind it is an error too, never a silent loss.
"""
from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile


class WriteError(Exception):
    """A file (or standard output) that could not be written completely; one line."""


def write_file(path: str | os.PathLike, text: str | bytes) -> None:
    """Write text (UTF-8) or bytes to path, as the module's docstring says."""
    path = os.fspath(path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise WriteError("cannot write %s: %s" % (path, e.strerror or e)) from None
    if mode is None or stat.S_ISREG(mode):
        _replace(path, data)
    elif stat.S_ISDIR(mode):
        raise WriteError("cannot write %s: it is a directory" % path)
    elif stat.S_ISSOCK(mode):
        raise WriteError("cannot write %s: it is a socket" % path)
    else:       # a device, a FIFO, or a symlink (written through): never replaced
        _write_in_place(path, data)


def _replace(path: str, data: bytes) -> None:
    directory = os.path.dirname(path) or "."
    try:
        fd, tmp = tempfile.mkstemp(prefix=".osmeter-", dir=directory)
    except OSError as e:
        raise WriteError("cannot write %s: %s" % (path, e.strerror or e)) from None
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WriteError("cannot write %s: %s" % (path, e.strerror or e)) from None
    _sync_directory(directory)


def _write_in_place(path: str, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0),
                     0o666)
    except OSError as e:
        raise WriteError("cannot write %s: %s" % (path, e.strerror or e)) from None
    try:
        try:
            _write_all(fd, data)
            if stat.S_ISREG(os.fstat(fd).st_mode):      # a symlink to a regular file
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
    a second time with a traceback."""

    def __init__(self, stream, name: str = "standard output"):
        self._stream = stream
        self._name = name

    def write(self, text):
        try:
            return self._stream.write(text)
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
