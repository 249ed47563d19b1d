"""A PostgreSQL server of the test's own: initdb in a fresh directory as an unprivileged
user, its own port on 127.0.0.1 (and a socket in its data directory, never the system's
/var/run/postgresql), password authentication, stopped and deleted afterwards.

Uses the server programs of Debian's `postgresql` package (/usr/lib/postgresql/N/bin)
or any initdb/pg_ctl on PATH; `Unavailable` says what is missing.  Another PostgreSQL
(the system's, another test suite's) may run beside it: nothing here looks at or stops
anything but the server this module started.
"""
from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass

SUPERUSER = "osmeter_test"
PASSWORD = "osmeter-test-secret"     # only ever on 127.0.0.1, for the server's lifetime


class Unavailable(Exception):
    """No PostgreSQL server can be started here; the reason."""


@dataclass
class Server:
    port: int
    datadir: str
    pid: int            # the postmaster's

    def url(self, dbname: str = "postgres", user: str = SUPERUSER,
            password: str = PASSWORD) -> str:
        return "postgresql://%s:%s@127.0.0.1:%d/%s" % (user, password, self.port, dbname)

    def create_database(self, name: str) -> str:
        """A fresh, empty database; its URL."""
        import psycopg
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)
            con.execute('CREATE DATABASE "%s"' % name)
        return self.url(name)

    def sql(self, dbname: str, statement: str, params=()) -> list:
        import psycopg
        with psycopg.connect(self.url(dbname), autocommit=True) as con:
            cur = con.execute(statement, params)
            return cur.fetchall() if cur.description else []


def _bindir() -> str:
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return os.path.dirname(os.path.realpath(found))
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                      key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if not versions:
        raise Unavailable("PostgreSQL's initdb is not installed (apt: postgresql)")
    return os.path.dirname(versions[-1])


def _unprivileged_user() -> pwd.struct_passwd:
    """initdb refuses root: the 'postgres' account where there is one, else nobody."""
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise Unavailable("no unprivileged account (postgres, nobody) to run PostgreSQL as")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running():
    """Yield a Server; stopped and its directory removed afterwards, whatever happened."""
    try:
        import psycopg  # noqa: F401  (the tests talk to it through the driver)
    except ImportError:
        raise Unavailable("the psycopg driver is not installed (pip install "
                          "'osmeter[postgres]')") from None
    bindir = _bindir()
    user = _unprivileged_user() if os.geteuid() == 0 else None
    # Not under the tests' private $TMPDIR: its parents are private to root, and the
    # server's account must reach its data directory.
    base = tempfile.mkdtemp(prefix="osmeter-pg-", dir="/tmp" if user else None)
    datadir = os.path.join(base, "data")
    pwfile = os.path.join(base, "pw")
    as_user = {"user": user.pw_uid, "group": user.pw_gid} if user else {}
    started = False
    try:
        with open(pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        if user:
            os.chown(base, user.pw_uid, user.pw_gid)
            os.chown(pwfile, user.pw_uid, user.pw_gid)
        r = subprocess.run([os.path.join(bindir, "initdb"), "-D", datadir, "-U", SUPERUSER,
                            "--pwfile", pwfile, "--auth=scram-sha-256", "-E", "UTF8",
                            "--locale=C", "--no-sync"], capture_output=True, text=True,
                           timeout=120, cwd=base, **as_user)
        if r.returncode != 0:
            raise RuntimeError("initdb failed: %s" % (r.stderr or r.stdout).strip())
        port = _free_port()
        options = ("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories=%s "
                   "-c fsync=off -c max_connections=60 -c shared_buffers=16MB"
                   % (port, datadir))
        r = subprocess.run([os.path.join(bindir, "pg_ctl"), "-D", datadir, "-w", "-t", "60",
                            "-l", os.path.join(base, "log"), "-o", options, "start"],
                           capture_output=True, text=True, timeout=90, cwd=base, **as_user)
        started = True
        if r.returncode != 0:
            log = open(os.path.join(base, "log")).read() if os.path.exists(
                os.path.join(base, "log")) else ""
            raise RuntimeError("pg_ctl start failed: %s %s" % (r.stderr.strip(), log[-2000:]))
        yield Server(port, datadir, postmaster_pid(datadir))
    finally:
        if started:
            pid = postmaster_pid(datadir)
            subprocess.run([os.path.join(bindir, "pg_ctl"), "-D", datadir, "-w", "-t", "60",
                            "-m", "fast", "stop"], capture_output=True, timeout=90, cwd=base,
                           **as_user)
            if pid:
                _make_sure_gone(pid)
        shutil.rmtree(base, ignore_errors=True)


def postmaster_pid(datadir: str) -> int | None:
    try:
        with open(os.path.join(datadir, "postmaster.pid")) as f:
            return int(f.readline())
    except (OSError, ValueError):
        return None


def _make_sure_gone(pid: int) -> None:
    """Kill the postmaster if pg_ctl could not stop it, and reap it: under a subreaper
    (the tests' pytest) the daemon became our child."""
    for attempt in range(100):
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:       # not our child: gone when kill says so
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
        if attempt == 50:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
