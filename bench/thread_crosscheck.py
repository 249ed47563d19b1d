#!/usr/bin/env python3
"""Cross-check the thread family against perf bench and sysbench, in one go.

    python3 bench/thread_crosscheck.py            # needs perf (linux-perf) and sysbench

Each line: what osmeter measured, what the tool measured, the ratio osmeter / tool and,
where both measure the same thing, whether the ratio is within the target.  Lines marked
"differs" measure related but different things; their ratio is printed with the reason
and an expected direction, never counted as agreement.  Tools that are missing are
reported as such.  Both sides run on the same machine, right after each other; "same CPU"
pairs run with this script (and so osmeter-core and the tool) pinned to CPU 0.
"""
from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from osmeter import core  # noqa: E402

RESULTS = []  # (label, ours, theirs, ratio, verdict)


def median_of(bench: str, metric: str, x=None, **params) -> float:
    inv = core.invoke(bench, params=params, timeout=300)
    if inv.status != "ok":
        raise RuntimeError("%s: %s (%s)" % (bench, inv.status, inv.reason))
    values = inv.values(metric, x)
    if not values:
        raise RuntimeError("%s: no %s samples" % (bench, metric))
    return statistics.median(values)


def tool(args: list[str], pattern: str, convert=float, cpu: int | None = None,
         runs: int = 3) -> float:
    """Run a tool `runs` times (pinned with taskset when cpu is given); the median of the
    number picked out of each run."""
    if not shutil.which(args[0]):
        raise FileNotFoundError("%s not installed" % args[0])
    if cpu is not None:
        args = ["taskset", "-c", str(cpu)] + args
    values = []
    for _ in range(runs):
        out = subprocess.run(args, capture_output=True, text=True, timeout=300)
        text = out.stdout + out.stderr
        m = re.search(pattern, text, re.M)
        if out.returncode != 0 or not m:
            raise RuntimeError("%s failed or printed no match for %r:\n%s"
                               % (" ".join(args), pattern, text[-800:]))
        values.append(convert(m.group(1)) if m.lastindex == 1 else convert(*m.groups()))
    return statistics.median(values)


def sysbench_ns_per(args: list[str], per_event: int, cpu: int | None = None) -> float:
    """sysbench 1.0: wall 'total time' / (events x operations per event), in ns."""
    total = tool(["sysbench"] + args + ["run"],
                 r"total time:\s+([\d.]+)s\s*\n\s*total number of events:\s+(\d+)",
                 lambda t, n: float(t) * 1e9 / (int(n) * per_event), cpu)
    return total


def compare(label: str, ours, theirs, lo, hi, why: str, same: bool = True):
    """ours/theirs: callables returning ns.  same=True: both measure the same thing and
    lo..hi is the agreement target; same=False: they differ, lo..hi (or None) is only
    the expected range, reported but never counted as agreement or failure."""
    try:
        o, t = ours(), theirs()
    except (FileNotFoundError, RuntimeError, subprocess.TimeoutExpired) as e:
        RESULTS.append((label, None, None, None, "not run: %s" % str(e).splitlines()[0]))
        return
    r = o / t
    if lo is None:
        verdict = "differs (no expected ratio): " + why
    elif same:
        verdict = "%s (target %.2f-%.2f); %s" % ("ok" if lo <= r <= hi else "OUT", lo, hi, why)
    else:
        verdict = "differs (%s, expected %.2f-%.2f): %s" % (
            "as expected" if lo <= r <= hi else "not as expected", lo, hi, why)
    RESULTS.append((label, o, t, r, verdict))


def only_tool(label: str, theirs, unit: str, why: str):
    try:
        t = theirs()
    except (FileNotFoundError, RuntimeError, subprocess.TimeoutExpired) as e:
        RESULTS.append((label, None, None, None, "not run: %s" % str(e).splitlines()[0]))
        return
    RESULTS.append((label, None, t, None, "no osmeter counterpart (%s %s): %s" % (
        "%.0f" % t, unit, why)))


def main() -> int:
    try:
        core.core_path()
    except core.CoreError as e:
        print(e, file=sys.stderr)
        return 1
    cpus = os.cpu_count() or 1
    everywhere = os.sched_getaffinity(0)

    # --- one CPU: osmeter pin=same pins to the CPU it starts on, which is CPU 0 here ---
    os.sched_setaffinity(0, {0})
    compare("thread switch over pipes, same CPU: thread.ctx.pipe round_trip vs "
            "perf bench sched pipe -T usecs/op",
            lambda: median_of("thread.ctx.pipe", "round_trip", pin="same"),
            lambda: tool(["perf", "bench", "sched", "pipe", "-T", "-l", "20000"],
                         r"([\d.]+) usecs/op", lambda v: float(v) * 1000, cpu=0, runs=5),
            0.67, 1.5, "both: two threads, one token each way through two pipes")
    compare("uncontested mutex: thread.mutex vs sysbench mutex (1 thread, 1 mutex, no loops)",
            lambda: median_of("thread.mutex", "latency"),
            lambda: sysbench_ns_per(["mutex", "--threads=1", "--mutex-num=1",
                                     "--mutex-loops=0", "--mutex-locks=5000000"], 5000000,
                                    cpu=0),
            0.2, 1.5, "sysbench adds a rand() call (itself a locked libc call) per lock, "
            "so osmeter should not be much higher", same=False)
    compare("thread switch, same CPU: thread.futex.wake round_trip / 2 vs sysbench threads "
            "(2 threads) per yield",
            lambda: median_of("thread.futex.wake", "round_trip", pin="same") / 2,
            lambda: sysbench_ns_per(["threads", "--threads=2", "--thread-yields=1000",
                                     "--thread-locks=64", "--events=400", "--time=0"], 1000,
                                    cpu=0),
            0.3, 3.0, "a sched_yield switch (plus an uncontested lock) vs a futex "
            "wake + wait switch: the same order", same=False)

    compare("futex wake-up, same CPU: thread.futex.wake wake_latency vs perf bench futex "
            "wake (1 thread) time in FUTEX_WAKE",
            lambda: median_of("thread.futex.wake", "wake_latency", pin="same"),
            lambda: tool(["perf", "bench", "futex", "wake", "-t", "1", "-w", "1"],
                         r"^Wokeup \d+ of \d+ threads in ([\d.]+) ms",
                         lambda v: float(v) * 1e6, cpu=0),
            None, None, "perf wakes, once per run, a thread that has slept 100 ms and times "
            "its whole FUTEX_WAKE loop with gettimeofday (on one CPU the woken thread can "
            "preempt the waker inside that window); osmeter averages thousands of hot "
            "wake-to-running hand-offs", same=False)

    # --- unpinned: the scheduler places the threads of both sides ---
    os.sched_setaffinity(0, everywhere)
    compare("thread switch over pipes, unpinned: thread.ctx.pipe vs perf bench sched pipe -T",
            lambda: median_of("thread.ctx.pipe", "round_trip", pin="none"),
            lambda: tool(["perf", "bench", "sched", "pipe", "-T", "-l", "20000"],
                         r"([\d.]+) usecs/op", lambda v: float(v) * 1000, runs=5),
            0.5, 2.0, "placement is the scheduler's on both sides and varies between runs")
    for n in sorted({2, 2 * cpus}):
        compare("contended mutex, %d threads: thread.mutex_contended per_op vs sysbench mutex "
                "(1 mutex, no loops) wall time per lock" % n,
                lambda n=n: median_of("thread.mutex_contended", "per_op", x=n, max_threads=n),
                lambda n=n: sysbench_ns_per(["mutex", "--threads=%d" % n, "--mutex-num=1",
                                             "--mutex-loops=0", "--mutex-locks=10000000"],
                                            10000000 * n),
                0.33, 3.0, "both: wall time / all locks of all threads; sysbench also calls "
                "rand() (an internal libc lock) per lock and gives each thread a fixed count")
    only_tool("perf bench futex hash (ns per FUTEX_WAIT, 2 threads)",
              lambda: tool(["perf", "bench", "futex", "hash", "-t", "2", "-r", "2"],
                           r"Averaged (\d+) operations/sec", lambda v: 1e9 / float(v),
                           runs=1),
              "ns/op", "FUTEX_WAIT calls that return at once (value mismatch): the kernel's "
              "futex hash lookup, no sleep and no wake-up")
    only_tool("perf bench futex lock-pi (ns per PI lock+unlock, 2 threads)",
              lambda: tool(["perf", "bench", "futex", "lock-pi", "-t", "2", "-r", "2"],
                           r"Averaged (\d+) operations/sec", lambda v: 1e9 / float(v),
                           runs=1),
              "ns/op", "priority-inheritance futexes taken in the kernel; pthread mutexes "
              "here are the default (non-PI) kind")
    only_tool("perf bench sched messaging -t (total, 2 groups of 20+20 threads)",
              lambda: tool(["perf", "bench", "sched", "messaging", "-t", "-g", "2"],
                           r"Total time: ([\d.]+) \[sec\]", lambda v: float(v) * 1e9,
                           runs=1),
              "ns", "bulk messages between groups of sender and receiver threads over "
              "socketpairs: throughput under load, not one switch")

    print("thread family cross-check (%d CPUs; ns unless stated)" % cpus)
    failed = 0
    for label, o, t, r, verdict in RESULTS:
        print("\n" + label)
        if r is not None:
            print("  osmeter %.1f   tool %.1f   ratio %.2f   %s" % (o, t, r, verdict))
        else:
            print("  " + verdict)
        failed += verdict.startswith("OUT")
    print("\nnot measured by any tool here: thread.lifecycle, thread.condvar, "
          "thread.pingpong.e1/e2/e3, thread.rwlock (no Debian tool times these)")
    print("%d comparison(s) out of target" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
