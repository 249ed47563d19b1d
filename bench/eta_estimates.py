#!/usr/bin/env python3
"""Measure how long one repetition of each benchmark takes at each preset, for the
estimates the core declares (`est` in core/bench/*.c) and the first ETA of a run.

    python3 bench/eta_estimates.py [--presets smoke,quick,default] [--max-default S] [ID ...]

Runs every benchmark once per preset through the front-end's own invocation (one core
process, as a repetition of a run is), prints a table with the current estimate beside
the measured wall time, and one C initialiser per benchmark to paste.  A benchmark whose
default-size estimate exceeds --max-default seconds (default 30) is not run at the
default preset (it would take minutes); its current estimate is kept and marked.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from osmeter import coreproc  # noqa: E402
from osmeter.catalog import PRESETS, Catalog  # noqa: E402


def measure(bench: str, preset: str) -> tuple[float, str]:
    t0 = time.monotonic()
    inv = coreproc.invoke(bench, preset=preset, timeout=900, scratch_parent=tempfile.gettempdir())
    return time.monotonic() - t0, inv.status


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--presets", default=",".join(PRESETS[::-1]))
    ap.add_argument("--max-default", type=float, default=30.0)
    args = ap.parse_args()
    catalog = Catalog()
    ids = args.ids or [b["id"] for b in catalog.benches if b["suites"]]
    presets = args.presets.split(",")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("# load average %.2f on %d CPUs at the start" % (load, os.cpu_count() or 0))
    print("%-26s %-8s %10s %10s  %s" % ("benchmark", "preset", "declared", "measured", "status"))
    found = {}
    for bench in ids:
        declared = catalog.estimates(bench)
        for preset in presets:
            if preset == "default" and declared["default"] > args.max_default:
                found[(bench, preset)] = None
                print("%-26s %-8s %10.2f %10s  not run (declared > %g s)"
                      % (bench, preset, declared[preset], "-", args.max_default))
                continue
            seconds, status = measure(bench, preset)
            found[(bench, preset)] = seconds
            print("%-26s %-8s %10.2f %10.2f  %s" % (bench, preset, declared[preset], seconds,
                                                    status), flush=True)
    print("\n# C initialisers {default, quick, smoke} (kept where not measured)")
    for bench in ids:
        declared = catalog.estimates(bench)
        vals = [found.get((bench, p)) or declared[p] for p in ("default", "quick", "smoke")]
        print("%-26s {%s}" % (bench, ", ".join("%.3g" % v for v in vals)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
