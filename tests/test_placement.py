"""CPU placement (core/placement.c): one rule for every family, and the binding is real
-- the kernel's view of the running processes and threads (/proc/PID/task/*/status)
says so, not only the note."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from osmeter.running import coreproc

ALLOWED = sorted(os.sched_getaffinity(0))
LAST = ALLOWED[-1]

# One benchmark of every family with a pin parameter (pin=same is each one's default
# or asked for), with its parameters.
EVERY_FAMILY = [
    ("ctx.pipe_pingpong", {}), ("proc.fork.dynamic", {}), ("net.pipe_bw", {}),
    ("net.tcp_lat", {}), ("net.http_connect", {}), ("net.http_throughput", {"pin": "same"}),
    ("thread.ctx.pipe", {}), ("scale.fork.dynamic", {}), ("ub.ctx", {"pin": "same"}),
]


@pytest.mark.parametrize("bench, params", EVERY_FAMILY)
def test_same_is_the_same_cpu_for_every_family(smoke, bench, params):
    inv = smoke(bench, **params)
    assert inv.notes["placement"] == "all processes pinned to CPU %d" % LAST


@pytest.mark.skipif(len(ALLOWED) < 2, reason="pin=split needs two CPUs; this process has one")
@pytest.mark.parametrize("bench", ["net.pipe_bw", "net.tcp_bw", "net.http_connect"])
def test_split_puts_the_far_end_on_the_last_cpu_and_this_process_before_it(smoke, bench):
    inv = smoke(bench, pin="split")
    assert inv.notes["placement"] == "near end on CPU %d, far end on CPU %d" % (ALLOWED[-2],
                                                                             LAST)


def test_placement_follows_the_cpus_this_process_may_use(smoke):
    os.sched_setaffinity(0, {ALLOWED[0]})   # the core inherits it
    try:
        inv = smoke("ctx.pipe_pingpong")
        assert inv.notes["placement"] == "all processes pinned to CPU %d" % ALLOWED[0]
        inv = smoke("net.pipe_bw", expect="skipped", pin="split")
        assert inv.reason == "pin=split needs two CPUs and this process may use 1"
    finally:
        os.sched_setaffinity(0, ALLOWED)


def cpus_allowed(pid: int) -> dict:
    """tid -> the CPUs the kernel lets that thread of pid run on, or {} once it is gone."""
    out = {}
    for status in Path("/proc/%d/task" % pid).glob("*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                out[int(status.parent.name)] = line.split(":", 1)[1].strip()
    return out


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in
                Path("/proc/%d/task/%d/children" % (pid, pid)).read_text().split()]
    except OSError:
        return []


def watch(bench: str, params: dict, want) -> dict:
    """Run bench long enough to look at it; wait until want(core_pid) is true (returns
    what it returned) or 10 s pass; then stop the core and its children."""
    args = [str(coreproc.core_path()), "run", bench, "--preset=smoke"]
    args += ["%s=%s" % kv for kv in params.items()]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    seen = None
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None and not seen:
            seen = want(proc.pid)
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)   # the core kills and reaps its children
        proc.wait(timeout=10)
    return seen


def test_every_thread_of_a_threaded_benchmark_is_bound():
    def threads_bound(pid):
        allowed = cpus_allowed(pid)
        return allowed if len(allowed) >= 2 else None   # the main thread and its peer
    seen = watch("thread.ctx.pipe", {"samples": 1000, "batch_ms": 50}, threads_bound)
    assert seen and set(seen.values()) == {str(LAST)}, seen


@pytest.mark.skipif(len(ALLOWED) < 2, reason="pin=split needs two CPUs; this process has one")
def test_split_binds_the_far_end_child_to_its_own_cpu():
    # The child is forked on the near end's CPU and binds itself a moment later: wait
    # for the far end to leave the near end's CPU, and keep the last look for the message.
    looks = []
    def both_ends(pid):
        kids = children(pid)
        if not kids:
            return None
        near, far = cpus_allowed(pid), cpus_allowed(kids[0])
        if not (near and far):
            return None
        looks.append((set(near.values()), set(far.values())))
        return looks[-1] if looks[-1][0] != looks[-1][1] else None
    seen = watch("net.pipe_bw", {"pin": "split", "samples": 1000}, both_ends)
    assert seen == ({str(ALLOWED[-2])}, {str(LAST)}), (seen, looks[-1:])
