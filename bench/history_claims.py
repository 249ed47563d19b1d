#!/usr/bin/env python3
"""Measure osmeter history's change-point claims by simulation (docs/history.md).

A series is N runs; each run's median is the true level times exp(between-run noise +
the median of REPS repetitions' within-run noise).  The between-run noise is heavy-tailed
(Student t with 4 degrees of freedom, scaled to the given spread), as osmeter's runs on
a shared machine are; the within-run noise is normal.  Scenarios:

    steady     nothing changes                       -> a change found is a false alarm
    step 5%    +5% from run N/2 on                   -> found within 1 run of N/2, a step
    step 20%   +20% from run N/2 on
    revert     +20% for runs N/3 .. 2N/3, then back  -> two changes, called a revert
    drift      a straight ramp to +20% at the end    -> called a drift
    bad run    run N/2 alone +30%                    -> one bad run, no change
    latest     the newest run +20%                   -> 'latest': new level or bad run
    pooled     steady, every repetition taken as a point (not what history does)

    python3 bench/history_claims.py [--series 300] [--runs 30] [--seed 1]
    python3 bench/history_claims.py --short [--series 2000]

--short measures short series (fewer than history.SHORT_RUNS runs, where the t test on
the runs' log medians with the repetitions' floor decides): false alarms on steady
series of 4-11 runs, a 50% step three runs after it in 8 runs, a 10% step at CV 3%
(runs and repetitions) 2-5 runs after it, and the table of runs needed by step size and
noise (docs/history.md).
"""
from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from osmeter.analysis import history  # noqa: E402

REPS = 5
WITHIN = 0.02       # a repetition's spread inside one run


def noise(rng: random.Random, spread: float) -> float:
    # Student t(4) has variance 2: scale to the wanted sd
    z = rng.gauss(0, 1) / math.sqrt(rng.gammavariate(2, 2) / 4)
    return spread * z / math.sqrt(2)


def run_values(rng, level: float, spread: float) -> list[float]:
    between = noise(rng, spread)
    return [level * math.exp(between + rng.gauss(0, WITHIN)) for _ in range(REPS)]


def levels(kind: str, n: int) -> list[float]:
    mid = n // 2
    if kind == "steady" or kind == "pooled":
        return [1.0] * n
    if kind.startswith("step"):
        size = float(kind.split()[1].rstrip("%")) / 100
        return [1.0] * mid + [1.0 + size] * (n - mid)
    if kind == "revert":
        a, b = n // 3, 2 * n // 3
        return [1.2 if a <= i < b else 1.0 for i in range(n)]
    if kind == "drift":
        return [1.0 + 0.2 * i / (n - 1) for i in range(n)]
    if kind == "bad run":
        return [1.3 if i == mid else 1.0 for i in range(n)]
    if kind == "latest":
        return [1.0] * (n - 1) + [1.2]
    raise ValueError(kind)


def judge(kind: str, n: int, a: history.Analysis) -> dict:
    """What counts as right for the scenario, and what was said."""
    mid = n // 2
    found = len(a.changes) > 0
    kinds = {c.kind for c in a.changes}
    out = {"any change": found, "bad run named": bool(a.outliers),
           "step or drift": found and a.either}
    if kind in ("steady", "pooled"):
        out["right"] = not found
    elif kind.startswith("step"):
        near = [c for c in a.changes if abs(c.at - mid) <= 1]
        out["right"] = bool(near) and a.drift is None and near[0].kind == "step"
        out["found near"] = bool(near)
    elif kind == "revert":
        out["right"] = "reverted" in kinds and "revert" in kinds
        out["found near"] = any(abs(c.at - n // 3) <= 1 for c in a.changes)
    elif kind == "drift":
        out["right"] = a.drift is not None
        out["found near"] = found
    elif kind == "bad run":
        out["right"] = a.outliers == [mid] and not found
        out["found near"] = mid in a.outliers
    elif kind == "latest":
        out["right"] = bool(a.changes) and a.changes[-1].kind == "latest"
        out["found near"] = any(c.at == n - 1 for c in a.changes)
    return out


SCENARIOS = ("steady", "step 5%", "step 20%", "revert", "drift", "bad run", "latest",
             "pooled")


def short_series(rng, before: int, after: int, step: float, spread: float,
                 within: float) -> history.Analysis:
    """`before` runs at 1, `after` at 1 + step; heavy-tailed run-to-run noise `spread`,
    REPS normal repetitions of spread `within`; analysed as `osmeter history` does."""
    runs = []
    for i in range(before + after):
        between = noise(rng, spread)
        level = 1.0 + (step if i >= before else 0.0)
        runs.append([level * math.exp(between + rng.gauss(0, within)) for _ in range(REPS)])
    return history.analyse([statistics.median(r) for r in runs], rng.randrange(1 << 30),
                           runs)


def found_at(a: history.Analysis, at: int) -> bool:
    return any(abs(c.at - at) <= 1 and c.kind != "latest" for c in a.changes)


def short_claims(series: int, seed: int) -> None:
    print("Short series (%d each, seed %d): a run is the median of %d repetitions; "
          "run-to-run noise Student t(4)" % (series, seed, REPS))
    print("\nFalse alarms on steady series: a step (+ only 'latest run: a new level or one "
          "bad run', the 6-sigma rule on the newest run):")
    print("| runs | 1% runs, 1% reps | 3% runs, 3% reps | 5% runs, 2% reps | 10% runs, 5% reps |")
    print("|---|---|---|---|---|")
    for n in range(4, 12):
        cells = []
        for spread, within in ((0.01, 0.01), (0.03, 0.03), (0.05, 0.02), (0.10, 0.05)):
            rng = random.Random("%d steady %d %s" % (seed, n, spread))
            steps = latest = 0
            for _ in range(series):
                kinds = {c.kind for c in short_series(rng, n, 0, 0.0, spread, within).changes}
                steps += bool(kinds - {"latest"})
                latest += kinds == {"latest"}
            cells.append("%.2f%% (+%.2f%%)" % (100 * steps / series, 100 * latest / series))
        print("| %d | %s |" % (n, " | ".join(cells)))
    print("\nA 50% step (2x slower), 5 runs before it, k runs after (found within one run "
          "of it):")
    for spread, within in ((0.05, 0.05), (0.10, 0.10), (0.20, 0.10)):
        rng = random.Random("%d half %s" % (seed, spread))
        row = []
        for k in (2, 3):
            hits = sum(found_at(short_series(rng, 5, k, 1.0, spread, within), 5)
                       for _ in range(series))
            row.append("%d after: %.1f%%" % (k, 100 * hits / series))
        print("   runs differ by %g%%, repetitions by %g%%: %s" % (
            100 * spread, 100 * within, ", ".join(row)))
    print("\nA 10% step, repetitions at CV 3%, 5 runs before it:")
    for spread in (0.0, 0.01, 0.03):
        rng = random.Random("%d ten %s" % (seed, spread))
        print("   runs differ by %g%% beyond their repetitions: " % (100 * spread) + ", ".join(
            "%d after: %.1f%%" % (k, 100 * sum(
                found_at(short_series(rng, 5, k, 0.10, spread, 0.03), 5)
                for _ in range(series)) / series) for k in (2, 3, 4, 5)))
    print("\nRuns needed after a step (5 runs before it) to find it in 80% of series "
          "(repetitions' spread = the runs'; '>10': not within 10):")
    steps, spreads = (0.05, 0.10, 0.20, 0.50), (0.01, 0.03, 0.05, 0.10)
    print("| step | " + " | ".join("runs differ by %g%%" % (100 * s) for s in spreads) + " |")
    print("|---|" + "---|" * len(spreads))
    for step in steps:
        cells = []
        for spread in spreads:
            rng = random.Random("%d need %s %s" % (seed, step, spread))
            need = ">10"
            for k in range(2, 11):
                m = max(50, series // 10)
                hits = sum(found_at(short_series(rng, 5, k, step, spread, spread), 5)
                           for _ in range(m))
                if hits >= 0.8 * m:
                    need = str(k)
                    break
            cells.append(need)
        print("| %g%% | %s |" % (100 * step, " | ".join(cells)))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--series", type=int, default=300)
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--spread", type=float, action="append",
                   help="between-run spread (sd of log), repeatable; default 0.02 0.05")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--short", action="store_true", help="short series (see above)")
    args = p.parse_args()
    if args.short:
        short_claims(args.series, args.seed)
        return 0
    spreads = args.spread or [0.02, 0.05]
    print("%d series of %d runs per cell, %d repetitions a run (within-run spread %.0f%%), "
          "seed %d; alpha %.2g, %d permutations"
          % (args.series, args.runs, REPS, 100 * WITHIN, args.seed, history.ALPHA,
             history.PERMUTATIONS))
    print()
    print("| scenario | run-to-run spread | found (right place) | called right | any "
          "change | 'step or drift' | bad run named |")
    print("|---|---|---|---|---|---|---|")
    for spread in spreads:
        for kind in SCENARIOS:
            rng = random.Random("%d %s %s" % (args.seed, kind, spread))
            tally: dict[str, int] = {}
            for _ in range(args.series):
                runs = [run_values(rng, lv, spread) for lv in levels(kind, args.runs)]
                if kind == "pooled":
                    values = [v for r in runs for v in r]
                else:
                    values = [statistics.median(r) for r in runs]
                a = history.analyse(values, seed=rng.randrange(1 << 30))
                for k, v in judge(kind, args.runs, a).items():
                    tally[k] = tally.get(k, 0) + bool(v)
            n = args.series

            def pct(key):
                return "%.1f%%" % (100 * tally[key] / n) if key in tally else "-"
            print("| %s | %.0f%% | %s | %s | %s | %s | %s |" % (
                kind, 100 * spread, pct("found near"), pct("right"), pct("any change"),
                pct("step or drift"), pct("bad run named")))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
