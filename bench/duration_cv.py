#!/usr/bin/env python3
"""Is a shortened duration as precise?  Run-to-run CV of one benchmark at its old and its
new timing parameters, processes alternated.

    python3 bench/duration_cv.py ub.syscall lps --old batch_ms=10000 --new batch_ms=2000
    python3 bench/duration_cv.py app.cpu.audio_play cpu --x 1 --old seconds=30 \
        --new seconds=10 --set instances=1 [--procs 5]

Each process's figure is the median of its samples (at --x for a sweep); the table gives
the median over processes, their CV (the run-to-run spread a user sees between
repetitions) and the wall time per process, for the old and the new parameters.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from osmeter import api  # noqa: E402


def params(specs):
    return dict(s.split("=", 1) for s in specs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench")
    ap.add_argument("metric")
    ap.add_argument("--old", action="append", default=[], help="KEY=VALUE (repeatable)")
    ap.add_argument("--new", action="append", default=[], help="KEY=VALUE (repeatable)")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE for both")
    ap.add_argument("--x", type=float, help="the x of a sweep metric")
    ap.add_argument("--procs", type=int, default=5)
    args = ap.parse_args()
    if args.procs < 2:
        ap.error("--procs must be at least 2")
    common = params(args.set)
    sides = {"old " + " ".join(args.old): dict(common, **params(args.old)),
             "new " + " ".join(args.new): dict(common, **params(args.new))}
    figures = {k: [] for k in sides}
    walls = {k: [] for k in sides}
    print("# %s %s, %d processes each, alternated; load %.2f %.2f %.2f at the start"
          % ((args.bench, args.metric, args.procs) + os.getloadavg()), flush=True)
    for _ in range(args.procs):
        for name, p in sides.items():
            t0 = time.monotonic()
            inv = api.invoke(args.bench, params=p, timeout=3600)
            walls[name].append(time.monotonic() - t0)
            if inv.status != "ok":
                raise SystemExit("%s %s: %s %s" % (args.bench, p, inv.status, inv.reason))
            vals = inv.values(args.metric, args.x) if args.x is not None \
                else inv.values(args.metric)
            figures[name].append(statistics.median(vals))
    print("%-34s %14s %8s %10s" % ("parameters", "median", "CV", "s/process"))
    for name in sides:
        f = figures[name]
        print("%-34s %14.4g %7.2f%% %10.1f" % (name, statistics.median(f),
                                              100 * statistics.stdev(f) / statistics.fmean(f),
                                              statistics.fmean(walls[name])))
    print("# load %.2f %.2f %.2f at the end" % os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
