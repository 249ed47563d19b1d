#!/usr/bin/env python3
"""Cross-check the foundation benchmarks against established tools, in one run.

    python3 bench/foundation_crosscheck.py [--rounds N]

Pairs (osmeter result vs tool), alternated round by round so drift hits both alike:
  syscall.getppid            vs  perf bench syscall basic          (usecs/op of getppid())
  ctx.pipe_pingpong pinned   vs  taskset -c CPU perf bench sched pipe   (one round trip per op)
  ctx.pipe_pingpong unpinned vs  perf bench sched pipe
  proc.fork_exit             vs  stress-ng --fork (fork + exit + wait per bogo op)
  proc.fork_exec_exit        vs  hyperfine -N /bin/true (spawn + exec + exit + wait; /bin/true
                                 is a dynamically linked program like our helper)
Prints each median, the ratio osmeter/tool, and whether it is within the +-20% target.
Also prints the run-to-run CV of syscall.getpid and ctx.pipe_pingpong (target < 5% on a
quiet machine).  Needs perf (linux-perf) and stress-ng.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from osmeter import coreproc  # noqa: E402

TARGET = 0.20


def osmeter(bench, metric, **params):
    inv = coreproc.invoke(bench, params=params, timeout=300)
    if inv.status != "ok":
        raise SystemExit("%s: %s" % (bench, inv.reason))
    return statistics.median(inv.values(metric)), inv


def perf_usecs(args, cpu=None):
    """ns per op from `perf bench ...`, optionally pinned to one CPU with taskset."""
    pin = ["taskset", "-c", cpu] if cpu is not None else []
    out = subprocess.run(pin + ["perf", "bench", *args], capture_output=True, text=True).stdout
    m = re.search(r"([\d.]+) usecs/op", out)
    if not m:
        raise SystemExit("could not read perf output:\n" + out)
    return float(m.group(1)) * 1000


def stress_ng_fork_ns(ops=20000):
    out = subprocess.run(["stress-ng", "--fork", "1", "--fork-ops", str(ops), "--metrics-brief",
                          "--timeout", "60"], capture_output=True, text=True)
    text = out.stdout + out.stderr
    # metrics-brief line: "fork  20000  2.34  0.50  1.80  8547.01  ..." (bogo ops/s real time)
    m = re.search(r"\bfork\s+(\d+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+([\d.]+)", text)
    if not m:
        raise SystemExit("could not read stress-ng output:\n" + text)
    return 1e9 / float(m.group(3))


def hyperfine_true_ns(runs=500):
    import json
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run(["hyperfine", "-N", "--runs", str(runs), "--warmup", "20",
                        "--export-json", f.name, "true"], capture_output=True, check=True)
        return json.load(open(f.name))["results"][0]["median"] * 1e9


def last_cpu():
    return max(os.sched_getaffinity(0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--rounds", type=int, default=5, help="alternations (at least 2)")
    args = ap.parse_args()
    if args.rounds < 2:
        ap.error("--rounds must be at least 2 (the CV needs two processes)")
    for tool in ("perf", "stress-ng", "taskset", "hyperfine"):
        if not shutil.which(tool):
            raise SystemExit("%s is not installed (Debian: linux-perf, stress-ng, util-linux, "
                             "hyperfine)" % tool)
    cpu = str(last_cpu())
    pairs = {
        "getppid": (lambda: osmeter("syscall.getppid", "latency")[0],
                    lambda: perf_usecs(["syscall", "basic", "-l", "3000000"])),
        "pipe round trip, pinned": (
            lambda: osmeter("ctx.pipe_pingpong", "round_trip", pin="same")[0],
            lambda: perf_usecs(["sched", "pipe", "-l", "100000"], cpu=cpu)),
        "pipe round trip, unpinned": (
            lambda: osmeter("ctx.pipe_pingpong", "round_trip", pin="none")[0],
            lambda: perf_usecs(["sched", "pipe", "-l", "100000"])),
        "fork+exit+wait": (lambda: osmeter("proc.fork_exit", "latency", pin="none")[0],
                           lambda: stress_ng_fork_ns()),
        "fork+exec+exit+wait": (
            lambda: osmeter("proc.fork_exec_exit", "latency", pin="none")[0],
            lambda: hyperfine_true_ns()),
    }
    ours = {k: [] for k in pairs}
    theirs = {k: [] for k in pairs}
    for r in range(args.rounds):
        for name, (mine, tool) in pairs.items():
            ours[name].append(mine())
            theirs[name].append(tool())
        print("round %d/%d done" % (r + 1, args.rounds), file=sys.stderr)
    print("%-28s %14s %14s %8s  %s" % ("comparison", "osmeter", "tool", "ratio", "within ±20%"))
    for name in pairs:
        a, b = statistics.median(ours[name]), statistics.median(theirs[name])
        ratio = a / b
        print("%-28s %11.1f ns %11.1f ns %8.3f  %s" % (name, a, b, ratio,
                                                       "yes" if abs(ratio - 1) <= TARGET else "NO"))
    print()
    print("run-to-run CV over %d separate processes (target < 5%% on a quiet machine):"
          % args.rounds)
    for bench, metric in (("syscall.getpid", "latency"), ("ctx.pipe_pingpong", "round_trip")):
        meds = [osmeter(bench, metric)[0] for _ in range(args.rounds)]
        cv = statistics.stdev(meds) / statistics.fmean(meds)
        print("  %-20s %-10s median %.1f ns, CV %.2f%%" % (bench, metric,
                                                          statistics.median(meds), cv * 100))


if __name__ == "__main__":
    main()
