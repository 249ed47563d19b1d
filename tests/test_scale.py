"""Scalability family at small populations: stored curves, limits, cleanup after Ctrl-C."""
import glob
import json
import os
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest

from osmeter.running import coreproc
from osmeter.analysis import curves
from osmeter.data.model import Sample

# id -> (metric, population at smoke size, x runs up (+1) or down (-1))
CURVES = {
    "scale.socket": ("socket", 200, 1),
    "scale.bind": ("bind", 200, 1),
    "scale.fork.dynamic": ("fork", 100, 1),
    "scale.fork.static": ("fork", 100, 1),
    "scale.exit.dynamic": ("exit", 100, -1),
    "scale.exit.static": ("exit", 100, -1),
    "scale.mmap": ("mmap", 256, 1),
    "scale.mmap_touch": ("touch", 256, 1),
    "scale.manymap.open": ("open", 200, 1),
    "scale.manymap.mmap": ("mmap", 200, 1),
    "scale.manymap.touch": ("touch", 200, 1),
    "thread.create": ("create", 100, 1),
}


def static_core_built():
    return (coreproc.core_dir() / "osmeter-core-static").exists()


@pytest.mark.parametrize("bench", sorted(CURVES))
def test_curve_has_one_point_per_operation(smoke, bench):
    if bench.endswith(".static") and not static_core_built():
        pytest.skip("no static build of the core on this system")
    metric, n, direction = CURVES[bench]
    inv = smoke(bench)
    (declared,) = inv.header["metrics"]
    assert (declared["name"], declared["unit"], declared["shape"]) == (metric, "ns", "scatter")
    assert declared["x_name"]
    assert inv.header["static"] == bench.endswith(".static")
    xs = [x for m, x, _ in inv.samples]
    values = inv.values(metric)
    assert len(values) == n
    # x is the population when the operation began: 0..n-1 growing, n..1 shrinking.
    assert xs == (list(range(n)) if direction > 0 else list(range(n, 0, -1)))
    # Single system calls, page faults, forks: more than a few ns, less than a second each
    # (even on a machine as overloaded as a shared one can be).
    assert all(10 < v < 1e9 for v in values), (min(values), max(values))
    assert "cycle_counter" in inv.notes and "timer_pair_overhead_ns" in inv.notes
    assert inv.notes["between_operations_ns"].startswith("first tenth ")
    assert inv.notes.get("limit"), "the limits read before growing are recorded"
    assert "stopped_by" not in inv.notes
    summary = curves.summarize_scatter([Sample(0, x, v) for _, x, v in inv.samples],
                                       x_name=declared["x_name"])
    assert summary["class"] in ("O(1)", "O(log n)", "O(n)", "O(n^2)/worse", "decreasing")
    json.dumps(summary, allow_nan=False)


def test_process_benchmarks_record_linkage_and_placement(smoke):
    inv = smoke("scale.fork.dynamic", pin="none")
    assert inv.notes["linkage"] == "dynamic"
    assert inv.notes["placement"].startswith("unpinned")
    inv = smoke("scale.exit.dynamic")
    assert inv.notes["placement"].startswith("all processes pinned")


def test_fork_is_slower_than_socket(smoke):
    # A fork copies a process; socket() allocates a descriptor.  Medians, not speed.
    fork = sorted(smoke("scale.fork.dynamic").values("fork"))
    sock = sorted(smoke("scale.socket").values("socket"))
    assert fork[len(fork) // 2] > sock[len(sock) // 2]


def run_core(args, limits=None, env=None):
    """The core as a subprocess with optional rlimits: its parsed JSON Lines."""
    def preexec():
        os.setsid()
        for res, value in (limits or {}).items():
            resource.setrlimit(res, (value, value))
    out = subprocess.run([str(coreproc.core_path())] + args, capture_output=True, text=True,
                         preexec_fn=preexec, timeout=120, env=env)
    return coreproc.parse_lines(args[1], out.stdout.splitlines())


def test_a_low_descriptor_limit_shortens_the_curve_and_says_so():
    inv = run_core(["run", "scale.socket", "n=2000"], {resource.RLIMIT_NOFILE: 300})
    assert inv.status == "ok", inv.reason
    assert "RLIMIT_NOFILE" in inv.notes["stopped_by"]
    assert 100 < len(inv.values("socket")) < 300


def test_a_limit_met_while_growing_ends_the_curve_cleanly():
    # Each thread's stack takes address space: with little of it, pthread_create fails
    # with EAGAIN part-way, and the curve ends there.
    inv = run_core(["run", "thread.create", "n=2000", "pin=none"],
                   {resource.RLIMIT_AS: 400 << 20})
    assert inv.status == "ok", inv.reason
    assert "pthread_create() failed" in inv.notes["stopped_by"]
    assert 2 <= len(inv.values("create")) < 2000


def test_bad_population_is_refused():
    inv = coreproc.invoke("scale.socket", params={"n": "1"})
    assert inv.status == "failed" and "out of range" in inv.reason


def children_of(pid):
    kids = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            text = Path(stat).read_text()
        except OSError:
            continue
        if int(text[text.rindex(")") + 2:].split()[1]) == pid:
            kids.append(int(stat.split("/")[2]))
    return kids


def scratch_dirs():
    return set(glob.glob(os.path.join(os.environ["TMPDIR"], "osmeter-core.*")))


def interrupt(bench, params, sig, wait_for_note, until=None):
    """Start the core alone (its own scratch directory), send `sig` once it has printed
    the note `wait_for_note` and `until()` holds; returns what existed at that moment."""
    before = scratch_dirs()
    proc = subprocess.Popen([str(coreproc.core_path()), "run", bench] + params,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        for line in proc.stdout:
            obj = json.loads(line)
            if obj.get("type") == "note" and obj["key"] == wait_for_note:
                break
            assert obj.get("type") != "trailer", "finished before it could be interrupted"
        deadline = time.monotonic() + 20
        while until and not until(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        seen = {"children": len(children_of(proc.pid)),
                "scratch": scratch_dirs() - before, "alive": proc.poll() is None}
        proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    seen["returncode"] = proc.returncode
    return seen


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_fork_curve_leaves_no_process(sig):
    # Interrupt while hundreds of children exist; the no_leaks fixture (pytest is the
    # subreaper) then finds any child that outlived the core.
    seen = interrupt("scale.exit.dynamic", ["n=3000", "pin=none"], sig, "linkage",
                     until=lambda pid: len(children_of(pid)) >= 200)
    assert seen["alive"] and seen["children"] >= 200
    assert seen["returncode"] == -sig


def test_interrupted_manymap_leaves_no_file():
    seen = interrupt("scale.manymap.touch", ["n=10000"], signal.SIGINT, "files",
                     until=lambda pid: len(glob.glob(os.path.join(
                         os.environ["TMPDIR"], "osmeter-core.*", "manymap", "0*"))) >= 3)
    assert seen["alive"] and seen["scratch"], "the files existed when interrupted"
    assert not scratch_dirs() & seen["scratch"]
    assert seen["returncode"] == -signal.SIGINT


def test_interrupted_mmap_leaves_no_file_or_mapping():
    seen = interrupt("scale.mmap_touch", ["n=25600"], signal.SIGTERM, "file")
    assert seen["alive"]
    assert not scratch_dirs() & seen["scratch"]
    # The mapped file was unlinked as soon as it was opened: nothing under any scratch
    # directory can hold it, and the mappings died with the process.
    assert seen["returncode"] == -signal.SIGTERM


def test_threads_are_gone_after_an_interrupt():
    seen = interrupt("thread.create", ["n=3000", "pin=none"], signal.SIGINT,
                     "timer_pair_overhead_ns")
    assert seen["alive"] and seen["returncode"] == -signal.SIGINT
