#!/usr/bin/env python3
"""How long the scalability curves take at their default populations, and whether the
tool's own bookkeeping stays O(1) per point.

For each benchmark of the scale family (and thread.create): runs at the default
population (target: under 2 minutes each on a 2-core machine).  The core stores the start
and end of every operation and notes the median time from the end of one operation to
the start of the next, in the first and in the last tenth of the curve: that is the
tool's own work between operations.  It must not grow with the population (the ratio
last/first stays near 1; an O(n) bookkeeping would multiply it by the population ratio).

    python3 bench/scale_timing.py [--only ID ...] [--runs K]
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from osmeter import api  # noqa: E402
from osmeter.analysis import curves  # noqa: E402  (what it times: internal)

BENCHES = ["scale.socket", "scale.bind", "scale.fork.dynamic", "scale.fork.static",
           "scale.exit.dynamic", "scale.exit.static", "scale.mmap", "scale.mmap_touch",
           "scale.manymap.open", "scale.manymap.mmap", "scale.manymap.touch",
           "thread.create"]
TARGET_S = 120.0
MAX_RATIO = 2.0          # gap between operations, last tenth vs first tenth
NOISE_NS = 200.0         # ... or gaps this close are equal on a shared, noisy machine


def gaps(inv: api.Invocation) -> tuple[float, float] | None:
    """(first tenth, last tenth) median ns between operations, from the core's note."""
    note = inv.notes.get("between_operations_ns")
    if isinstance(note, list):
        note = note[-1]
    m = re.match(r"first tenth ([-0-9.]+), last tenth ([-0-9.]+)", note or "")
    return (float(m.group(1)), float(m.group(2))) if m else None


def run(bench: str, params: dict) -> tuple[api.Invocation, float]:
    t0 = time.monotonic()
    inv = api.invoke(bench, params=params, timeout=600)
    return inv, time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="benchmark ids (default: all)")
    ap.add_argument("--runs", type=int, default=1, help="repetitions at the default size")
    args = ap.parse_args()
    defaults = {b["id"]: b for b in api.Catalog().benches}
    ok = True
    print("%-20s %7s %8s %6s %11s %11s %6s  %s" % (
        "benchmark", "n", "wall s", "<2min", "gap 1st ns", "gap last ns", "ratio", "curve"))
    for bench in args.only or BENCHES:
        samples, walls, big = [], [], None
        for rep in range(args.runs):
            big, wall = run(bench, {})
            walls.append(wall)
            if big.status != "ok":
                break
            samples += [api.Sample(rep, x, v) for _, x, v in big.samples]
        # With every process on one CPU, the time between two forks also holds the
        # child's own run into pause(): the kernel's work, not ours.  The bookkeeping
        # check therefore lets the scheduler place the processes.
        spread = {"pin": "none"} if any(p["name"] == "pin"
                                        for p in defaults[bench]["params"]) else {}
        checked = run(bench, spread)[0] if spread else big
        bad = [i for i in (big, checked) if i.status != "ok"]
        if bad:
            print("%-20s %s: %s" % (bench, bad[0].status, bad[0].reason))
            ok = ok and bad[0].status == "skipped"
            continue
        gap_first, gap_last = gaps(checked) or (float("nan"), float("nan"))
        ratio = gap_last / gap_first if gap_first and gap_first > 0 else float("inf")
        o1 = ratio < MAX_RATIO or abs(gap_last - gap_first) < NOISE_NS
        fast = max(walls) < TARGET_S
        ok = ok and o1 and fast
        x_name = defaults[bench]["metrics"][0]["x_name"]
        summary = curves.summarize_scatter(samples, x_name=x_name)
        stopped = big.notes.get("stopped_by")
        print("%-20s %7d %8.1f %6s %11.0f %11.0f %6.2f  %s%s%s" % (
            bench, len(big.samples), max(walls), "yes" if fast else "NO", gap_first, gap_last,
            ratio, summary["description"], "" if o1 else "  [bookkeeping NOT O(1)]",
            "  [stopped by %s]" % stopped if stopped else ""))
        if not summary["agree"]:
            for d in summary["disagreements"]:
                print("%20s   %s" % ("", d))
    print("all within %.0f s and O(1) bookkeeping: %s" % (TARGET_S, "yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
