#!/usr/bin/env python3
"""osmeter's own precision beside the machine's: run-to-run CV of primitives measured by
osmeter and by `perf bench` under the same conditions, side by side.

    python3 bench/primitives_cv.py [--procs 7] [--only NAME,...]

Each repetition is one process of each tool, alternated (so a shared machine's drift
falls on both alike); the CV is that of the per-process figures (osmeter: the median of
its samples in that process, perf: its one figure).  If osmeter's CV is close to perf's,
the spread is the machine's; if it is clearly larger, osmeter adds noise.
  getppid           syscall.getppid           perf bench syscall basic
  pipe round trip   ctx.pipe_pingpong pin=same  taskset -c CPU perf bench sched pipe
  memcpy 1 MiB      mem.memcpy sizes=1m         perf bench mem memcpy -s 1MB
  getpid, fork+exit+wait (osmeter only: perf 6.1 has no fork benchmark; lmbench is not
  packaged in Debian 12, so its lat_syscall is used only when installed)
Needs perf (linux-perf) and taskset; prints `uptime`'s load with the result.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from osmeter import api  # noqa: E402

MIB = 1 << 20


def osmeter(bench, metric, x=None, **params):
    inv = api.invoke(bench, params=params, timeout=300)
    if inv.status != "ok":
        raise SystemExit("%s: %s %s" % (bench, inv.status, inv.reason))
    return statistics.median(inv.values(metric, x) if x is not None else inv.values(metric))


def perf(args, pin=None, simple=False):
    """perf bench's figure: usecs/op as ns, or (simple format) the last number printed."""
    cmd = (["taskset", "-c", pin] if pin else []) + ["perf", "bench"] + \
        (["--format=simple"] if simple else []) + args
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode:
        raise SystemExit("%s failed: %s" % (" ".join(cmd), out.stderr.strip()))
    if simple:
        return float([ln for ln in out.stdout.splitlines() if ln.strip()][-1])
    for line in out.stdout.splitlines():
        if "usecs/op" in line:
            return float(line.split()[0]) * 1000
    raise SystemExit("no usecs/op in the output of " + " ".join(cmd))


def lat_syscall_null():
    out = subprocess.run(["lat_syscall", "null"], capture_output=True, text=True, timeout=60)
    return float(out.stderr.split()[-2]) * 1000   # "Simple syscall: 0.1234 microseconds"


def cv(xs):
    return statistics.stdev(xs) / statistics.fmean(xs) if len(xs) > 1 else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--procs", type=int, default=7, help="processes of each tool (>= 3)")
    ap.add_argument("--only", default="", help="comma-separated row names")
    args = ap.parse_args()
    if args.procs < 3:
        ap.error("--procs must be at least 3")
    for tool in ("perf", "taskset"):
        if not shutil.which(tool):
            raise SystemExit("%s is not installed (Debian: linux-perf, util-linux)" % tool)
    cpu = str(max(os.sched_getaffinity(0)))
    rows = {
        "getppid": (lambda: osmeter("syscall.getppid", "latency"),
                    lambda: perf(["syscall", "basic", "-l", "3000000"]), "perf bench"),
        "pipe round trip (one CPU)": (
            lambda: osmeter("ctx.pipe_pingpong", "round_trip", pin="same"),
            lambda: perf(["sched", "pipe", "-l", "100000"], pin=cpu), "perf bench"),
        "memcpy 1 MiB": (
            lambda: osmeter("mem.memcpy", "bandwidth", MIB, sizes=MIB, total=512 * MIB),
            lambda: perf(["mem", "memcpy", "-f", "default", "-s", "1MB", "-l", "512"],
                         simple=True) / 1e6, "perf bench"),
        "getpid": (lambda: osmeter("syscall.getpid", "latency"), None, None),
        "fork+exit+wait": (lambda: osmeter("proc.fork_exit", "latency", pin="none"),
                           None, None),
    }
    if shutil.which("lat_syscall"):
        rows["null syscall (lmbench)"] = (lambda: osmeter("syscall.getppid", "latency"),
                                          lat_syscall_null, "lat_syscall")
    if args.only:
        rows = {k: v for k, v in rows.items() if k in args.only.split(",")}
    print("# %d processes of each tool, alternated; load %.2f %.2f %.2f at the start"
          % ((args.procs,) + os.getloadavg()), flush=True)
    print("%-26s %14s %9s %14s %9s  %s" % ("primitive", "osmeter median", "CV", "tool median",
                                          "CV", "tool"))
    for name, (mine, theirs, tool) in rows.items():
        ours, refs = [], []
        for _ in range(args.procs):
            ours.append(mine())
            if theirs:
                refs.append(theirs())
        ref = ("%14.1f %8.2f%%" % (statistics.median(refs), 100 * cv(refs))) if refs \
            else "%14s %9s" % ("-", "-")
        print("%-26s %14.1f %8.2f%% %s  %s" % (name, statistics.median(ours), 100 * cv(ours),
                                               ref, tool or "(no counterpart installed)"),
              flush=True)
    print("# load %.2f %.2f %.2f at the end; ns per operation, memcpy in MB/s (10^6 B/s)"
          % os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
