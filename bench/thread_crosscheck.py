#!/usr/bin/env python3
"""Cross-check the thread family against perf bench and sysbench, in one run.

    python3 bench/thread_crosscheck.py [--rounds N]      # needs linux-perf and sysbench

The pair that measures the same thing (ratio osmeter/tool checked against 0.8-1.25):
  thread.ctx.pipe pinned        vs  taskset -c CPU perf bench sched pipe -T  (round trip/op)
Pairs that measure related but different things (ratio printed with the reason and the
range it should fall in, never counted as agreement):
  thread.ctx.pipe unpinned      vs  perf bench sched pipe -T (placement left to the
                                    scheduler on both sides, so not the same placement)
  thread.mutex                  vs  sysbench mutex --threads=1 (adds a rand() per lock)
  thread.mutex_contended, n thr vs  sysbench mutex --threads=n (1 mutex, no loops; its
                                    rand() adds a second, libc-internal contended lock)
  thread.futex.wake round_trip/2 vs sysbench threads per sched_yield (2 threads, one CPU)
  thread.futex.wake wake_latency vs perf bench futex wake (one cold wake per run)
Tools with no osmeter counterpart, printed with what they measure: perf bench futex hash,
perf bench futex lock-pi, perf bench sched messaging -t.

osmeter and the tool alternate round by round, so drift on a shared machine hits both;
each side's figure is the median over the rounds.  Pinned pairs run this script (and so
osmeter-core, whose pin=same takes the last allowed CPU, and the tool) on one CPU.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from osmeter import api  # noqa: E402


class Unavailable(Exception):
    """A tool is missing or did not print what we read."""


def osmeter(bench: str, metric: str, x=None, **params) -> float:
    inv = api.invoke(bench, params=params, timeout=300)
    if inv.status != "ok":
        raise Unavailable("%s: %s (%s)" % (bench, inv.status, inv.reason))
    values = inv.values(metric, x)
    if not values:
        raise Unavailable("%s: no %s samples" % (bench, metric))
    return statistics.median(values)


def run_tool(args: list[str], pattern: str, cpu: int | None = None) -> tuple:
    """Run a tool once (pinned with taskset when cpu is given); the groups matched."""
    if not shutil.which(args[0]):
        raise Unavailable("%s is not installed (Debian: linux-perf, sysbench)" % args[0])
    if cpu is not None:
        args = ["taskset", "-c", str(cpu)] + args
    out = subprocess.run(args, capture_output=True, text=True, timeout=300)
    text = out.stdout + out.stderr
    m = re.search(pattern, text, re.M)
    if out.returncode != 0 or not m:
        raise Unavailable("%s: failed or printed no match for %r: %s"
                          % (" ".join(args), pattern, text[-300:].strip()))
    return m.groups()


def perf_pipe_ns(cpu=None) -> float:
    """perf bench sched pipe -T: two threads, a token each way through two pipes.  Ten
    short runs and their median, as osmeter takes the median of ten short batches, so
    that a burst of load on a shared machine weighs the same on both sides."""
    runs = [run_tool(["perf", "bench", "sched", "pipe", "-T", "-l", "5000"],
                     r"([\d.]+) usecs/op", cpu)[0] for _ in range(10)]
    return statistics.median(float(u) for u in runs) * 1000


def sysbench_ns(args: list[str], ops_per_event: int, cpu=None) -> float:
    """sysbench 1.0: wall 'total time' / (events x operations per event), in ns.  (A mutex
    test has one event per thread, a threads test --events of them.)"""
    total, events = run_tool(["sysbench"] + args + ["run"],
                             r"total time:\s+([\d.]+)s\s*\n\s*total number of events:\s+(\d+)",
                             cpu)
    return float(total) * 1e9 / (int(events) * ops_per_event)


def perf_futex_wake_ns(cpu=None) -> float:
    (ms,) = run_tool(["perf", "bench", "futex", "wake", "-t", "1", "-w", "1"],
                     r"^Wokeup \d+ of \d+ threads in ([\d.]+) ms", cpu)
    return float(ms) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--rounds", type=int, default=3, help="alternations osmeter/tool")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    try:
        api.core_path()
    except api.CoreError as e:
        raise SystemExit(str(e))
    allowed = os.sched_getaffinity(0)
    cpu = max(allowed)  # the CPU osmeter's pin=same picks when only it is allowed
    ncpus = len(allowed)

    # (label, osmeter, tool, lo, hi, same thing?, why, pinned?)
    pairs = [
        ("thread switch over pipes, one CPU: thread.ctx.pipe vs perf bench sched pipe -T",
         lambda: osmeter("thread.ctx.pipe", "round_trip", pin="same"),
         lambda: perf_pipe_ns(cpu), 0.8, 1.25, True,
         "both: two threads of one process, a token each way through two pipes", True),
        ("uncontested mutex: thread.mutex vs sysbench mutex (1 thread, 1 mutex, no loops)",
         lambda: osmeter("thread.mutex", "latency"),
         lambda: sysbench_ns(["mutex", "--threads=1", "--mutex-num=1", "--mutex-loops=0",
                              "--mutex-locks=5000000"], 5000000, cpu),
         0.2, 1.5, False, "sysbench adds a rand() call (itself a libc-locked call) per lock, "
         "so osmeter should not be much higher", True),
        ("thread switch, one CPU: thread.futex.wake round_trip/2 vs sysbench threads "
         "(2 threads) per yield",
         lambda: osmeter("thread.futex.wake", "round_trip", pin="same") / 2,
         lambda: sysbench_ns(["threads", "--threads=2", "--thread-yields=1000",
                              "--thread-locks=64", "--events=400", "--time=0"], 1000, cpu),
         0.3, 3.0, False, "a futex wake + wait switch vs a sched_yield switch (with an "
         "uncontested lock): the same order", True),
        ("futex wake-up, one CPU: thread.futex.wake wake_latency vs perf bench futex wake "
         "(1 thread)",
         lambda: osmeter("thread.futex.wake", "wake_latency", pin="same"),
         lambda: perf_futex_wake_ns(cpu), None, None, False,
         "perf wakes, once per run, a thread that has slept 100 ms and times its whole "
         "FUTEX_WAKE loop with gettimeofday (the woken thread may preempt the waker inside "
         "that window); osmeter averages thousands of hot wake-to-running hand-offs", True),
        ("thread switch over pipes, unpinned: thread.ctx.pipe vs perf bench sched pipe -T",
         lambda: osmeter("thread.ctx.pipe", "round_trip", pin="none"),
         lambda: perf_pipe_ns(), 0.25, 2.0, False,
         "the same exchange, but where the two threads run is the scheduler's choice on "
         "each side (perf's are two fresh threads, osmeter's the measuring thread and one "
         "peer), so only the pinned pair is held to a target", False),
    ]
    for n in sorted({2, 2 * ncpus}):
        pairs.append((
            "contended mutex, %d threads: thread.mutex_contended vs sysbench mutex "
            "(1 mutex, no loops)" % n,
            lambda n=n: osmeter("thread.mutex_contended", "per_op", x=n, max_threads=n),
            lambda n=n: sysbench_ns(["mutex", "--threads=%d" % n, "--mutex-num=1",
                                     "--mutex-loops=0", "--mutex-locks=5000000"], 5000000),
            0.1, 1.5, False, "both: wall time / all locks of all threads, but sysbench calls "
            "rand() per lock, which takes a second libc-internal lock that the threads also "
            "contend for, so osmeter should not be much higher", False))

    out_of_target = 0
    print("thread family cross-check: %d CPUs, %d round(s), ns unless stated" %
          (ncpus, args.rounds))
    for label, mine, tool, lo, hi, same, why, pinned in pairs:
        os.sched_setaffinity(0, {cpu} if pinned else allowed)
        ours, theirs = [], []
        try:
            for _ in range(args.rounds):
                ours.append(mine())
                theirs.append(tool())
        except (Unavailable, subprocess.TimeoutExpired) as e:
            print("\n%s\n  not run: %s" % (label, e))
            continue
        finally:
            os.sched_setaffinity(0, allowed)
        o, t = statistics.median(ours), statistics.median(theirs)
        r = o / t
        if lo is None:
            verdict = "differs (no expected ratio): " + why
        elif same:
            ok = lo <= r <= hi
            out_of_target += not ok
            verdict = "%s (target %.2f-%.2f); %s" % ("ok" if ok else "OUT", lo, hi, why)
        else:
            verdict = "differs (%s, expected %.2f-%.2f): %s" % (
                "as expected" if lo <= r <= hi else "NOT as expected", lo, hi, why)
        print("\n%s\n  osmeter %.1f   tool %.1f   ratio %.2f   %s" % (label, o, t, r, verdict))

    info = [
        ("perf bench futex hash -t 2 (ns per FUTEX_WAIT)",
         ["perf", "bench", "futex", "hash", "-t", "2", "-r", "2"],
         r"Averaged (\d+) operations/sec", lambda v: 1e9 / float(v),
         "FUTEX_WAIT calls that return at once (value mismatch): the kernel's futex hash "
         "lookup, with no sleep and no wake-up"),
        ("perf bench futex lock-pi -t 2 (ns per PI lock + unlock)",
         ["perf", "bench", "futex", "lock-pi", "-t", "2", "-r", "2"],
         r"Averaged (\d+) operations/sec", lambda v: 1e9 / float(v),
         "priority-inheritance futexes locked in the kernel; pthread mutexes here are the "
         "default (non-PI) kind"),
        ("perf bench sched messaging -t -g 2 (total ns)",
         ["perf", "bench", "sched", "messaging", "-t", "-g", "2"],
         r"Total time: ([\d.]+) \[sec\]", lambda v: float(v) * 1e9,
         "bulk messages between 20 sender and 20 receiver threads per group over "
         "socketpairs: throughput under load, not one switch"),
    ]
    for label, cmd, pattern, convert, why in info:
        try:
            (v,) = run_tool(cmd, pattern)
            print("\n%s\n  tool %.0f   no osmeter counterpart: %s" % (label, convert(v), why))
        except (Unavailable, subprocess.TimeoutExpired) as e:
            print("\n%s\n  not run: %s" % (label, e))
    print("\nno Debian tool times: thread.lifecycle, thread.condvar, thread.pingpong.e1/e2/e3 "
          "(McGarry's tables), thread.rwlock")
    print("%d same-thing comparison(s) out of target" % out_of_target)
    return 1 if out_of_target else 0


if __name__ == "__main__":
    sys.exit(main())
