"""`osmeter serve`: run the far end of the network benchmarks on this host.

Another host then runs `osmeter run net... --peer THIS_HOST:PORT` with the same secret.
The work is done by `osmeter-core serve` (core/serve_main.c, core/servers/peer*.c); this command finds the core,
hands it the secret through the environment (never on the command line, where `ps`
would show it) and stops it cleanly on Ctrl-C.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess

from ..running import address, coreproc
from ..running.coreproc import SECRET_ENV
from .common import UsageError, fail, read_secret_file

DEFAULT_PORT = 7227  # OM_PEER_DEFAULT_PORT in core/servers/peer.h
MAX_SESSION_SECONDS = 86400     # the core's bound on --max-seconds


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "serve", help="run the far end of the network benchmarks for another host",
        description="Serve the far end of the net.* benchmarks.  Clients authenticate "
                    "with a shared secret (HMAC-SHA256 challenge-response; the secret never "
                    "crosses the wire).  One client at a time; each session is limited in "
                    "time and bytes.")
    p.add_argument("--listen", default="127.0.0.1:%d" % DEFAULT_PORT, metavar="ADDR:PORT",
                   type=listen_address,
                   help="address to listen on (default 127.0.0.1:%d; [::]:PORT for IPv6 "
                        "and IPv4; port 0 picks a free one)" % DEFAULT_PORT)
    p.add_argument("--secret-file", metavar="FILE",
                   help="file holding the shared secret (default: $%s)" % SECRET_ENV)
    p.add_argument("--max-seconds", type=session_seconds, metavar="N",
                   help="longest session, seconds (default 300)")
    p.add_argument("--max-bytes", type=byte_size, metavar="N",
                   help="most data one session may move, e.g. 4g (default 4g)")
    p.set_defaults(func=handle)


# The checks of the core's own (core/serve_main.c), made here so that a mistake is one line.

def listen_address(spec: str) -> str:
    why = address.problem(spec, lowest_port=0)
    if why:
        raise argparse.ArgumentTypeError(why)
    return spec


def session_seconds(word: str) -> int:
    if not (word.isascii() and word.isdigit() and 1 <= int(word) <= MAX_SESSION_SECONDS):
        raise argparse.ArgumentTypeError("'%s' is not a whole number of seconds from 1 to %d"
                                         % (word, MAX_SESSION_SECONDS))
    return int(word)


def byte_size(word: str) -> str:
    m = re.fullmatch(r"([0-9]{1,18})([kKmMgG]?)", word)
    if not m or int(m.group(1)) < 1:
        raise argparse.ArgumentTypeError("'%s' is not a size in bytes such as 500m or 4g" % word)
    return word


def _secret(args) -> str | None:
    if args.secret_file:
        return read_secret_file(args.secret_file, "--secret-file")
    return os.environ.get(SECRET_ENV)


def handle(args) -> int:
    try:
        secret = _secret(args)
    except UsageError as e:
        return fail(str(e))
    if not secret or len(secret) < 8:
        return fail("osmeter serve needs a shared secret of at least 8 characters "
                    "(--secret-file FILE or $%s)" % SECRET_ENV)
    try:
        cmd = [str(coreproc.core_path()), "serve", "--listen", args.listen]
    except coreproc.CoreError as e:
        return fail(str(e))
    if args.max_seconds is not None:
        cmd += ["--max-seconds", str(args.max_seconds)]
    if args.max_bytes is not None:
        cmd += ["--max-bytes", str(args.max_bytes)]
    # The core watches the read end of this pipe (OSMETER_PARENT_FD): when we die, even
    # by SIGKILL, it closes and the core stops too, on every system (docs/protocol.md).
    watch_r, watch_w = os.pipe()
    try:
        proc = subprocess.Popen(cmd, env=dict(os.environ, **{SECRET_ENV: secret},
                                              OSMETER_PARENT_FD=str(watch_r)),
                                pass_fds=(watch_r,))
    finally:
        os.close(watch_r)
    previous = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    previous[signal.SIGINT] = signal.getsignal(signal.SIGINT)
    try:
        return proc.wait()
    except (KeyboardInterrupt, _Stop):
        # Ctrl-C reached the core too (same process group); SIGTERM/SIGHUP only us.
        for sig in previous:    # a second signal (timeout(1) sends two) must not cut this short
            signal.signal(sig, signal.SIG_IGN)
        return _stop(proc)
    finally:
        if proc.poll() is None:
            _stop(proc)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(watch_w)


class _Stop(Exception):
    """SIGTERM or SIGHUP to the front-end: stop the core and leave cleanly."""


def _raise_stop(signum, frame):
    raise _Stop()


def _stop(proc: subprocess.Popen) -> int:
    for sig, wait in ((signal.SIGINT, 5.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        proc.send_signal(sig)
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    return 0
