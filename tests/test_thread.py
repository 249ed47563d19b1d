"""Thread family at small sizes: units, plausibility, every thread joined, clean failure."""
import re
import resource
import subprocess
import sys

import pytest

from osmeter.running import coreproc

LINUX = sys.platform.startswith("linux")
PINGPONG = ["thread.pingpong.e1", "thread.pingpong.e2", "thread.pingpong.e3"]
ALL = ["thread.lifecycle", "thread.mutex", "thread.condvar", *PINGPONG, "thread.ctx.pipe",
       "thread.futex.wake", "thread.mutex_contended", "thread.rwlock"]


def assert_all_joined(inv):
    """The core counts its threads (/proc/self/task) after each benchmark: only main."""
    if LINUX:
        assert inv.notes.get("threads_after") == "1", inv.notes


def positive(values):
    return values and all(v > 0 for v in values)


def test_family_is_listed_in_its_suites():
    benches = {b["id"]: b for b in coreproc.list_benchmarks()}
    for bench in ALL:
        assert bench in benches, bench
        assert {"quick", "full"} <= set(benches[bench]["suites"]), bench
    for bench in ["thread.lifecycle", "thread.mutex", "thread.condvar", *PINGPONG]:
        assert "mg05" in benches[bench]["suites"], bench


def test_mcgarry_table2_is_plausible(smoke):
    lifecycle = smoke("thread.lifecycle", samples=3)
    mutex = smoke("thread.mutex", samples=3)
    condvar = smoke("thread.condvar", samples=3)
    for inv, metric in ((lifecycle, "latency"), (mutex, "latency"), (condvar, "latency")):
        assert len(inv.values(metric)) == 3
        assert positive(inv.values(metric)), (inv.bench, inv.values(metric))
        assert inv.header["metrics"][0]["unit"] == "ns"
        assert_all_joined(inv)
    # Creating and joining a thread is far dearer than an uncontested lock + unlock, and a
    # condition-variable hand-off needs a thread switch that the mutex never makes.
    assert min(lifecycle.values("latency")) > max(mutex.values("latency"))
    assert min(condvar.values("latency")) > max(mutex.values("latency"))
    assert max(mutex.values("latency")) < 10_000  # no system call in the uncontested path
    assert condvar.header["params"]["workers"] == "10"
    assert "10 workers" in condvar.notes["threads"]


@pytest.mark.parametrize("bench", PINGPONG)
def test_pingpong_reports_creation_and_completion(smoke, bench):
    inv = smoke(bench)
    games, iterations = int(inv.header["params"]["games"]), int(inv.header["params"]["iterations"])
    create, completion = inv.values("create"), inv.values("completion")
    per_handoff = inv.values("per_handoff")
    assert len(create) == 1 and len(completion) == 1 and len(per_handoff) == 1
    assert positive(create + completion + per_handoff)
    # per_handoff is completion spread over every hand-off of every game
    assert per_handoff[0] == pytest.approx(completion[0] / (2 * iterations * games))
    assert completion[0] > per_handoff[0]
    assert "context_switches" in inv.notes
    assert inv.notes["games"].startswith("%d games, %d players" % (games, 2 * games))
    assert_all_joined(inv)


def test_pingpong_e3_plays_500_games_on_32k_stacks_at_reduced_iterations(smoke):
    inv = smoke("thread.pingpong.e3", iterations=3)
    params = inv.header["params"]
    assert params["games"] == "500" and params["stack"] == "32768"
    assert inv.notes["stack_bytes"].startswith("32768 ")
    # 1000 threads created: the creation time cannot be below 1000 x a few hundred ns
    assert inv.values("create")[0] > 1000 * 100
    assert_all_joined(inv)


def test_pingpong_published_sizes_are_the_defaults():
    benches = {b["id"]: b for b in coreproc.list_benchmarks()}
    expected = {"thread.pingpong.e1": ("1", "1000000", "0"),
                "thread.pingpong.e2": ("4", "1000000", "0"),
                "thread.pingpong.e3": ("500", "100", "32768")}
    for bench, (games, iterations, stack) in expected.items():
        p = {q["name"]: q for q in benches[bench]["params"]}
        assert (p["games"]["default"], p["iterations"]["default"],
                p["stack"]["default"]) == (games, iterations, stack), bench


def test_pingpong_hands_off_once_per_context_switch(smoke):
    """McGarry: context switches = 2 x iterations per game (one per hand-off), on one CPU."""
    if not LINUX:
        pytest.skip("getrusage context-switch counts are checked on Linux only")
    inv = smoke("thread.pingpong.e1", iterations=2000)
    m = re.search(r"\((\d+) voluntary, (\d+) involuntary", inv.notes["context_switches"])
    voluntary, involuntary = int(m.group(1)), int(m.group(2))
    handoffs = 2 * 2000
    # On one CPU every hand-off needs a switch; a loaded machine turns some of the
    # voluntary ones (a player blocks) into involuntary ones (it was preempted first).
    assert voluntary + involuntary >= 0.9 * handoffs, inv.notes["context_switches"]
    # Notifying after unlocking: no second switch to block on the mutex.
    assert voluntary <= 1.3 * handoffs, inv.notes["context_switches"]


def test_pingpong_unpinned(smoke):
    inv = smoke("thread.pingpong.e2", pin="none")
    assert inv.notes["placement"].startswith("unpinned")
    assert positive(inv.values("completion"))
    assert_all_joined(inv)


def test_thread_switch_over_pipes(smoke):
    inv = smoke("thread.ctx.pipe", samples=3)
    trips, switches = inv.values("round_trip"), inv.values("per_switch")
    assert len(trips) == 3 and positive(trips)
    assert switches == [t / 2 for t in trips]
    assert all(v < 10_000_000 for v in trips)  # a round trip, not a timeout
    assert "pinned to CPU" in inv.notes["placement"]
    assert_all_joined(inv)


def test_futex_wake_latency(smoke):
    inv = coreproc.invoke("thread.futex.wake", preset="smoke", params={"samples": 3}, timeout=120)
    if not LINUX:
        assert inv.status == "skipped" and "futex" in inv.reason
        return
    assert inv.status == "ok", inv.reason
    trips, wakes = inv.values("round_trip"), inv.values("wake_latency")
    assert len(trips) == 3 and len(wakes) == 3
    assert positive(trips) and positive(wakes)
    # a round trip is two wake-ups (and the waits around them): one wake-up is less
    for trip, wake in zip(trips, wakes):
        assert wake < trip
    assert_all_joined(inv)


@pytest.mark.parametrize("bench,params", [
    ("thread.mutex_contended", {}),
    ("thread.rwlock", {}),
    ("thread.rwlock", {"write_every": 0}),
    ("thread.mutex_contended", {"pin": "same"}),
])
def test_contended_sweeps_cover_every_thread_count(smoke, bench, params):
    inv = smoke(bench, max_threads=5, **params)
    xs = sorted({x for _, x, _ in inv.samples})
    assert xs == [1, 2, 3, 4, 5]
    assert positive([v for _, _, v in inv.samples])
    assert inv.header["metrics"][0]["x_name"] == "threads"
    assert_all_joined(inv)


def test_contended_default_goes_to_twice_the_cpus():
    benches = {b["id"]: b for b in coreproc.list_benchmarks()}
    p = {q["name"]: q for q in benches["thread.mutex_contended"]["params"]}
    assert p["max_threads"]["default"] == "0"  # 0 = 2 x online CPUs, resolved in the core
    inv = coreproc.invoke("thread.mutex_contended", preset="smoke",
                          params={"max_threads": 0, "batch_ms": 2}, timeout=120)
    assert inv.status == "ok", inv.reason
    assert max(x for _, x, _ in inv.samples) == 2 * inv.header["ncpus"]


def _run_limited(bench, params, limit_as):
    """The core run directly under an address-space limit (root ignores RLIMIT_NPROC)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    args = [str(coreproc.core_path()), "run", bench] + ["%s=%s" % kv for kv in params.items()]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, preexec_fn=limit)
    return proc, coreproc.parse_lines(bench, proc.stdout.splitlines())


@pytest.mark.parametrize("bench,params,wanted", [
    ("thread.pingpong.e2", {"games": 100, "iterations": 10}, 200),
    ("thread.condvar", {"workers": 100, "samples": 1, "batch_ms": 1}, 100),
])
def test_thread_creation_failure_names_the_limit_and_joins_the_rest(bench, params, wanted):
    # 100+ threads with 8 MB default stacks cannot fit in 256 MB of address space; the
    # threads already created wait at their start and must be released and joined.
    proc, inv = _run_limited(bench, params, 256 * 1024 * 1024)
    assert inv.status == "skipped", (inv.status, inv.reason, proc.stderr)
    assert "RLIMIT_AS" in inv.reason and "cannot create %d threads" % wanted in inv.reason
    assert not inv.samples
    assert_all_joined(inv)
    assert proc.returncode == 0


def test_a_limit_ends_a_contended_sweep_with_the_points_measured_so_far():
    proc, inv = _run_limited("thread.rwlock", {"max_threads": 100, "samples": 1,
                                               "batch_ms": 1}, 256 * 1024 * 1024)
    assert inv.status == "ok", (inv.reason, proc.stderr)
    assert "RLIMIT_AS" in inv.notes["limit"] and "cannot create" in inv.notes["limit"]
    xs = sorted({x for _, x, _ in inv.samples})
    assert xs[:4] == [1, 2, 3, 4] and xs[-1] < 100
    assert_all_joined(inv)


def test_stack_below_the_minimum_is_a_clear_skip(smoke):
    inv = coreproc.invoke("thread.pingpong.e3", preset="smoke", params={"stack": 1024})
    assert inv.status == "skipped" and "minimum thread stack" in inv.reason
    assert not inv.samples


def test_bad_parameters_fail_cleanly():
    inv = coreproc.invoke("thread.pingpong.e1", params={"games": 0})
    assert inv.status == "failed" and "out of range" in inv.reason and inv.returncode == 2
    inv = coreproc.invoke("thread.condvar", params={"pin": "sideways"})
    assert inv.status == "failed" and "not one of" in inv.reason and inv.returncode == 2


def test_smoke_sizes_are_reduced():
    """Smoke runs play few turns (speed itself is not checked: the machine is shared)."""
    benches = {b["id"]: b for b in coreproc.list_benchmarks()}
    for bench in PINGPONG:
        p = {q["name"]: q for q in benches[bench]["params"]}
        games, iterations = int(p["games"]["smoke"]), int(p["iterations"]["smoke"])
        assert 2 * games * iterations <= 10_000, bench
    assert benches["thread.pingpong.e3"]["params"][0]["smoke"] == "500"  # all 500 games
