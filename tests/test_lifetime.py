"""The front-end dying must not leave the core running.

`osmeter run` starts the core in a session of its own, so neither a terminal hang-up
nor a signal to the front-end reaches it.  SIGTERM, SIGINT and SIGHUP are handled by the
front-end (the run is stored as interrupted, the core stopped); SIGKILL cannot be, so
the core watches a pipe whose write end only the front-end holds and on Linux has a
parent-death signal too.  Each test looks only at the processes of the run it started
(its tree and the cores' process groups) and at its own temporary directory.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

import proctree
from clirun import REPO
from osmeter.running import coreproc
from osmeter.data.store import Store

# A fast benchmark first (so an interrupted run has results), then a ring of 64
# processes with 3-second batches: plenty of workload to leave behind.
RUN = ["run", "syscall.getppid", "ctx.pipe_ring", "--param", "ctx.pipe_ring.n=64",
       "--param", "ctx.pipe_ring.batch_ms=3000", "--runs", "3"]


@pytest.fixture
def run_env(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, OSMETER_DB=str(tmp_path / "db.sqlite"), TMPDIR=str(tmp),
               PYTHONPATH=str(REPO))
    return env, tmp


def scratch_dirs(tmp) -> list[str]:
    return [f for f in os.listdir(tmp) if f.startswith("osmeter")]


def wait_for_ring(front_end_pid: int) -> tuple[set[int], set[int]]:
    """The run's processes and the process groups of its cores, once the ring runs."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pids = proctree.descendants(front_end_pid)
        if len(pids) > 32:
            return pids, proctree.groups_below(front_end_pid)
        time.sleep(0.1)
    proctree.kill_tree(front_end_pid)
    pytest.fail("the ring never started")


def assert_nothing_left(pids, groups, tmp):
    left = proctree.wait_gone(pids, groups, timeout=2.0)
    if left:
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert not left, "processes of the run still running 2 s later: %s" % sorted(left)
    deadline = time.monotonic() + 2.0
    while scratch_dirs(tmp) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert scratch_dirs(tmp) == []


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP])
def test_signal_to_the_front_end_leaves_nothing(run_env, sig):
    env, tmp = run_env
    p = subprocess.Popen([sys.executable, "-m", "osmeter", *RUN, "--quiet"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids, groups = wait_for_ring(p.pid)
    assert groups and scratch_dirs(tmp)
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert_nothing_left(pids, groups, tmp)
    if sig == signal.SIGKILL:
        assert p.returncode == -signal.SIGKILL
        return
    # A hang-up is an interruption like Ctrl-C: what was measured is stored.
    assert p.returncode == 130 and "interrupted" in err, err
    runs = Store(env["OSMETER_DB"]).list_runs()
    assert [r["status"] for r in runs] == ["interrupted"]


def test_terminal_hang_up_stores_the_run_and_leaves_nothing(run_env):
    """The SSH connection drops: the terminal hangs up (SIGHUP, then every write to it
    fails with EIO, the progress display included).  The run is still stored."""
    import pty
    env, tmp = run_env
    pid, master = pty.fork()
    if pid == 0:  # the child: a session whose controlling terminal is the pty
        try:
            os.execve(sys.executable, [sys.executable, "-m", "osmeter", *RUN], env)
        finally:
            os._exit(127)
    try:
        os.set_blocking(master, False)
        deadline = time.monotonic() + 60
        while len(proctree.descendants(pid)) <= 32 and time.monotonic() < deadline:
            try:
                os.read(master, 65536)  # the progress display; keep the pty from filling
            except (BlockingIOError, OSError):
                pass
            time.sleep(0.1)
        pids, groups = proctree.descendants(pid), proctree.groups_below(pid)
        assert len(pids) > 32, "the ring never started"
    except BaseException:
        proctree.kill_tree(pid)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(master)  # the hang-up
    _, status = os.waitpid(pid, 0)
    assert_nothing_left(pids, groups, tmp)
    runs = Store(env["OSMETER_DB"]).list_runs()
    assert [r["status"] for r in runs] == ["interrupted"], status


def test_core_dies_when_the_launchers_pipe_closes(tmp_path):
    """The portable watch on its own (the BSDs and macOS have no parent-death signal):
    the launcher stays alive but its end of the pipe closes.  The core kills its
    workload, removes the scratch directory the launcher made for it, and dies of
    SIGHUP."""
    scratch = tempfile.mkdtemp(prefix="osmeter-scratch-", dir=tmp_path)
    read_end, write_end = os.pipe()
    p = subprocess.Popen([str(coreproc.core_path()), "run", "ctx.pipe_ring", "n=32",
                          "batch_ms=3000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, OSMETER_PARENT_FD=str(read_end),
                                  OSMETER_SCRATCH=scratch),
                         pass_fds=(read_end,), start_new_session=True)
    os.close(read_end)
    try:
        assert p.stdout.readline().startswith(b'{"type":"header"')
        deadline = time.monotonic() + 30
        while len(proctree.descendants(p.pid)) < 31 and time.monotonic() < deadline:
            time.sleep(0.05)
        workload = proctree.descendants(p.pid)
        assert len(workload) >= 31
    finally:
        os.close(write_end)
    assert p.wait(timeout=2) == -signal.SIGHUP
    p.stdout.close()
    p.stderr.close()
    assert not proctree.wait_gone(workload, {p.pid}, timeout=2.0)
    assert not os.path.exists(scratch)


def test_a_bad_parent_fd_is_ignored_with_one_line():
    out = subprocess.run([str(coreproc.core_path()), "run", "syscall.getpid", "--preset=smoke"],
                         capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, OSMETER_PARENT_FD="nonsense"))
    assert out.returncode == 0 and '"status":"ok"' in out.stdout
    assert out.stderr.count("OSMETER_PARENT_FD") == 1, out.stderr
