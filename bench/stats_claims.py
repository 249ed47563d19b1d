#!/usr/bin/env python3
"""How often osmeter's printed statements about uncertainty are right, by simulation.

Prints (fixed seeds, so the same numbers every time):
  1. the interval of the median: stated level and measured coverage for 2..20
     repetitions, next to the percentile bootstrap osmeter used before;
  2. two runs of one system (A/A), 100 rows: how often a comparison shows any false
     verdict, without correction (before) and with Benjamini–Hochberg (now);
  3. the regression gate on A/A, 90 rows at CV 3%, 5 and 10 repetitions: how often it
     fails, before (one-sided test per row at alpha, no correction) and now (Holm), and
     what it says otherwise;
  4. a real 20% slowdown of one row in 30 at CV 3%: how often the gate catches it.

    python3 bench/stats_claims.py [--quick]

The test suite (tests/test_claims.py) asserts the same claims with fewer trials.
"""
from __future__ import annotations

import math
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from osmeter import compare, gate, stats                      # noqa: E402
from osmeter import significance as sig                       # noqa: E402
from osmeter.model import Result, Run, Sample                 # noqa: E402


def old_bootstrap(values, rng, resamples=1000, level=0.95):
    """The percentile bootstrap of the median osmeter printed as '95%' before."""
    n = len(values)
    meds = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    lo = meds[int(math.floor((1 - level) / 2 * resamples))]
    hi = meds[min(resamples - 1, int(math.ceil((1 + level) / 2 * resamples)) - 1)]
    return lo, hi


def coverage_table(trials: int, boot_trials: int) -> None:
    print("1. Interval of the median over per-repetition medians (skewed: 1000 + 50 Exp(1))")
    print("   reps  printed level  measured coverage   old bootstrap ('95%') coverage")
    truth = 1000 + 50 * math.log(2)
    rng = random.Random(1)
    for n in (2, 3, 4, 5, 6, 7, 8, 10, 15, 20):
        hits = 0
        level = None
        for _ in range(trials):
            s = stats.summarize([Sample(r, None, 1000 + rng.expovariate(1 / 50))
                                 for r in range(n)])
            hits += s["ci_low"] <= truth <= s["ci_high"]
            level = s["ci_level"]
        old = 0
        for _ in range(boot_trials):
            lo, hi = old_bootstrap([1000 + rng.expovariate(1 / 50) for _ in range(n)], rng)
            old += lo <= truth <= hi
        print("   %4d  %12.1f%%  %16.1f%%  %31.1f%%" % (n, 100 * level, 100 * hits / trials,
                                                        100 * old / boot_trials))


def flat_run(run_id, rng, rows, reps, cv, slower=None):
    results = []
    for k in range(rows):
        centre = 1000.0 * (k + 1) * (slower or {}).get(k, 1.0)
        values = [centre * math.exp(rng.gauss(0, cv)) for _ in range(reps)]
        results.append(Result(bench="sim.r%03d" % k, metric="latency", unit="ns",
                              better="lower", shape="point",
                              samples=[Sample(r, None, v) for r, v in enumerate(values)],
                              summary={"median": statistics.median(values)}))
    return Run(id=run_id, label=None, started="", status="complete", results=results)


def aa_verdicts(trials: int) -> None:
    print("\n2. A/A, 100 rows, 8 vs 8 repetitions, CV 3%: comparisons showing any "
          "(false) verdict")
    rng = random.Random(2)
    before = now = rows_before = 0
    for _ in range(trials):
        cmp = compare.compare([flat_run("a", rng, 100, 8, 0.03),
                               flat_run("b", rng, 100, 8, 0.03)])
        raw = [v for row in cmp.rows for v in row.tests.values()
               if v.p is not None and v.p <= 0.05 and abs(v.ratio - 1) >= 0.02]
        before += bool(raw)
        rows_before += len(raw)
        now += cmp.discoveries > 0
    print("   before (alpha 0.05 per row): %.1f%% of comparisons, %.2f%% of rows"
          % (100 * before / trials, 100 * rows_before / trials / 100))
    print("   now (Benjamini-Hochberg, FDR 5%%): %.1f%% of comparisons (stated: <= 5%%)"
          % (100 * now / trials))


def old_gate_fails(cmp, pct, alpha=0.05) -> bool:
    """The gate before: a one-sided shifted Mann-Whitney per row at alpha, no correction."""
    f = 1 + pct / 100.0
    for row in cmp.rows:
        base, other = row.cells[0].reps, row.cells[1].reps
        if sig.min_p_value(len(base), len(other), False) >= alpha:
            continue
        _, p = sig.mann_whitney_u(other, [v * f for v in base], "greater")
        if p < alpha:
            return True
    return False


def aa_gate(trials: int) -> None:
    print("\n3. Gate on A/A, 90 rows at CV 3%")
    rng = random.Random(3)
    for reps in (5, 10):
        for pct in (0, 2, 5, 10):
            old = fails = passes = undecided = 0
            for _ in range(trials):
                cmp = compare.compare([flat_run("a", rng, 90, reps, 0.03),
                                       flat_run("b", rng, 90, reps, 0.03)])
                old += old_gate_fails(cmp, pct)
                g = gate.evaluate(cmp, pct)
                fails += g.outcome == "fail"
                passes += g.outcome == "pass"
                undecided += g.outcome == "undecided"
            print("   %2d reps, --fail-on-slower %-3g before: fail %5.1f%%   now: fail %4.1f%% "
                  "(stated <= 5%%), pass %5.1f%%, undecided %5.1f%%"
                  % (reps, pct, 100 * old / trials, 100 * fails / trials,
                     100 * passes / trials, 100 * undecided / trials))


def slowdown_caught(trials: int) -> None:
    print("\n4. One row of 30 really 20% slower, CV 3%, --fail-on-slower 5")
    rng = random.Random(4)
    for reps in (5, 6, 8, 10):
        out = {"fail": 0, "pass": 0, "undecided": 0}
        needed = []
        for _ in range(trials):
            cmp = compare.compare([flat_run("a", rng, 30, reps, 0.03),
                                   flat_run("b", rng, 30, reps, 0.03, {7: 1.2})])
            g = gate.evaluate(cmp, 5)
            out[g.outcome] += 1
            needed += [r.repetitions_needed for r in g.having("undecided")
                       if r.repetitions_needed]
        print("   %2d repetitions: fail %5.1f%%, undecided %5.1f%%, pass %5.1f%%%s" % (
            reps, 100 * out["fail"] / trials, 100 * out["undecided"] / trials,
            100 * out["pass"] / trials,
            "  (undecided rows ask for %d repetitions, median)" % statistics.median(needed)
            if needed else ""))


def main() -> int:
    quick = "--quick" in sys.argv
    t0 = time.monotonic()
    coverage_table(2000 if quick else 20000, 300 if quick else 2000)
    aa_verdicts(100 if quick else 1000)
    aa_gate(50 if quick else 300)
    slowdown_caught(50 if quick else 200)
    print("\n(%.0f s)" % (time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
