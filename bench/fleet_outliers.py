#!/usr/bin/env python3
"""The cutoffs that name outlier hosts in a fleet report (osmeter/analysis/fleet.py
OUTLIER_CUTOFF), and the check that they hold.

A host is named an outlier of a benchmark when its value's robust z-score among the n
hosts' values (on logs: 0.6745 (log v - median) / MAD) exceeds cutoff(n), and it differs
from the fleet median by at least the smallest effect.  cutoff(n) is chosen so that in a
fleet of n like hosts (log values drawn from one normal distribution) at most 5% of
fleets name any host at all: it is the upper 99% confidence bound of the simulated 95.5th
percentile of the largest |z| among n hosts (a margin under the 5% claimed, so that the
claim holds beyond the simulation's own error).  The statistic does not depend on the
distribution's mean or spread, so one simulation per n serves every benchmark.

    python3 bench/fleet_outliers.py            # prints the table for osmeter/analysis/fleet.py
    python3 bench/fleet_outliers.py --check    # false alarms and power of the table in use
"""
from __future__ import annotations

import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from osmeter.analysis import fleet  # noqa: E402

TARGET = 0.955
SIZES = list(range(5, 31)) + [35, 40, 45, 50, 60, 70, 80, 100, 120, 150, 200, 300, 500, 1000]


def fleets_for(n: int) -> int:
    return 40000 if n <= 50 else 20000 if n <= 200 else 8000


def cutoff(n: int, fleets: int, rng: random.Random) -> float:
    largest = sorted(fleet.largest_z([rng.gauss(0.0, 1.0) for _ in range(n)])
                     for _ in range(fleets))
    # the 95.5th percentile's upper 99% bound: an order statistic above it (normal approx.)
    k = math.ceil(fleets * TARGET + 2.33 * math.sqrt(fleets * TARGET * (1 - TARGET)))
    return largest[min(k, fleets - 1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--seed", type=int, default=16)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if args.check:
        print("hosts  fleets  false alarm (like hosts)  named when one host is 1.25x")
        for n in (5, 8, 12, 24, 50, 100):
            sims = 4000
            alarms = sum(bool(fleet.outliers_among([math.exp(rng.gauss(0, 0.02))
                                                    for _ in range(n)]))
                         for _ in range(sims))
            found = 0
            for _ in range(sims // 4):
                values = [math.exp(rng.gauss(0, 0.02)) for _ in range(n)]
                values[0] *= 1.25
                found += 0 in fleet.outliers_among(values)
            print("%5d  %6d  %23.2f%%  %27.1f%%" % (n, sims, 100.0 * alarms / sims,
                                                   100.0 * found / (sims // 4)))
        return
    print("OUTLIER_CUTOFF = {")
    for n in SIZES:
        print("    %d: %.3f," % (n, cutoff(n, fleets_for(n), rng)), flush=True)
    print("}")


if __name__ == "__main__":
    main()
