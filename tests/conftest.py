"""Shared fixtures.

* The core is built once per session (make -C core).
* Every test runs with a private TMPDIR and, on Linux, with pytest as a child
  subreaper, so that a process or temporary file a benchmark leaks is found
  afterwards even when it was orphaned: `no_leaks` (autouse) fails the test then.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from osmeter.running import coreproc  # noqa: E402
from osmeter.analysis import monitor
import proctree  # noqa: E402

# A suite started in the background of a script (where the shell ignores SIGINT) or
# under nohup (SIGHUP ignored) would hand those dispositions on to every osmeter it
# starts, and the interrupt tests would then test the shell, not osmeter: start from
# the defaults.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGHUP, signal.SIG_DFL)

PR_SET_CHILD_SUBREAPER = 36
# Daemons a session fixture started on purpose (a PostgreSQL server): under the
# subreaper they are pytest's children, and not a test's leftovers.
SESSION_DAEMONS: set[int] = set()


def _become_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except OSError:
        return False


SUBREAPER = _become_subreaper()


def _children_of(pid: int) -> dict[int, tuple[str, str]]:
    """pid -> (comm, state) of live processes whose parent is pid (Linux /proc)."""
    return {p: (comm, f[0]) for p, comm, f in monitor.processes() if int(f[1]) == pid}


@pytest.fixture(scope="session", autouse=True)
def built_core():
    if not os.environ.get("OSMETER_CORE_DIR"):
        r = subprocess.run(["make", "-s", "-C", str(REPO / "core")], capture_output=True,
                           text=True)
        if r.returncode != 0:
            pytest.exit("building the core failed:\n" + r.stdout + r.stderr, returncode=1)
    return coreproc.core_dir()


@pytest.fixture(scope="session", autouse=True)
def private_tmpdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("osmeter-tmp")
    old = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(d)
    import tempfile
    tempfile.tempdir = None
    yield d
    if old is None:
        del os.environ["TMPDIR"]
    else:
        os.environ["TMPDIR"] = old
    tempfile.tempdir = None


@pytest.fixture(autouse=True)
def no_leaks(private_tmpdir, request):
    """Fail a test that leaves processes or osmeter temporary files behind."""
    before_files = set(os.listdir(private_tmpdir))
    before_procs = set(_children_of(os.getpid())) if SUBREAPER else set()
    yield
    if "allow_leaks" in request.keywords:
        return
    leaked = {}
    if SUBREAPER:
        deadline = time.monotonic() + 3.0
        while True:
            kids = _children_of(os.getpid())
            for pid, (_, state) in list(kids.items()):
                if state == "Z" and pid not in before_procs:
                    try:
                        os.waitpid(pid, os.WNOHANG)  # an orphan that died: reap it
                    except ChildProcessError:
                        pass
            leaked = {p: c for p, (c, s) in kids.items()
                      if s != "Z" and p not in before_procs and p not in SESSION_DAEMONS}
            if not leaked or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        for pid in leaked:  # with what runs below it (a core's workload, in its group)
            proctree.kill_tree(pid)
    new_files = [f for f in set(os.listdir(private_tmpdir)) - before_files
                 if f.startswith("osmeter")]
    assert not leaked, "processes left behind: %s" % leaked
    assert not new_files, "temporary files left behind: %s" % new_files


def pytest_addoption(parser):
    parser.addoption("--long", action="store_true",
                     help="also run the tests marked 'long' (minutes each: the long fuzz "
                          "runs, the full matrices and simulations whose default run is "
                          "smaller, the README recipe with the quick suite); or set "
                          "OSMETER_LONG_TESTS=1")


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_leaks: the test manages leftovers itself")
    config.addinivalue_line("markers", "root: needs root (mounts, namespaces)")
    config.addinivalue_line("markers", "long: minutes long; runs only with --long (CI does)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--long") or os.environ.get("OSMETER_LONG_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="long test: run with --long (CI does)")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def sanitized_core():
    """osmeter-core built with AddressSanitizer + UBSan (make -C core sanitize).  Where
    the compiler cannot build it the test is skipped with the reason, unless
    OSMETER_REQUIRE_SANITIZER=1 (CI) makes that a failure."""
    import sanitizer
    path, why = sanitizer.build()
    if path is None:
        if os.environ.get("OSMETER_REQUIRE_SANITIZER") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return path


@pytest.fixture
def smoke():
    """smoke(bench, **params) -> coreproc.Invocation of one smoke-sized run; must be ok."""
    def run(bench: str, expect: str = "ok", **params):
        inv = coreproc.invoke(bench, params=params, preset="smoke", timeout=120)
        assert inv.status == expect, "%s: %s (%s)\n%s" % (bench, inv.status, inv.reason,
                                                          inv.stderr)
        return inv
    return run


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL server of the tests' own for the whole session (tests/pgserver.py),
    stopped and deleted at the end.  Where none can be started the tests that need it
    are skipped with the reason, unless OSMETER_REQUIRE_POSTGRES=1 (CI) makes that a
    failure."""
    import pgserver
    try:
        with pgserver.running() as server:
            SESSION_DAEMONS.add(server.pid)
            yield server
    except pgserver.Unavailable as e:
        if os.environ.get("OSMETER_REQUIRE_POSTGRES") == "1":
            pytest.fail(str(e))
        pytest.skip(str(e))


_databases = iter(range(1, 1 << 30))


@pytest.fixture
def pg_url(pg_server):
    """The URL of a fresh, empty PostgreSQL database for this test."""
    return pg_server.create_database("t%d" % next(_databases))


@pytest.fixture(params=["sqlite", "postgres"])
def store_location(request, tmp_path):
    """Where a test's results store is: an SQLite file, then a PostgreSQL database (the
    store's behaviour is checked on both back-ends)."""
    if request.param == "sqlite":
        return str(tmp_path / "db.sqlite")
    return request.getfixturevalue("pg_url")
