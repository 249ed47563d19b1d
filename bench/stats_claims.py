#!/usr/bin/env python3
"""How often osmeter's printed statements about uncertainty are right, by simulation.

    python3 bench/stats_claims.py [--quick] [--store PATH] [--section N ...]

Fixed seeds: the same numbers every time.  Sections:
  1. the interval of the median: stated level and measured coverage, 2..20 repetitions;
  2. the test per row, chosen here: type-I error at alpha 0.05 and 0.001 and power,
     5 against 5 repetitions, for Welch's t, Student's pooled t (what a hierarchical
     model with one repetition variance for both runs reduces to) and the exact rank
     test, on normal, heavy-tailed, bimodal and outlier-ridden repetitions (and on
     repetitions resampled from a store's real runs with --store);
  3. A/A, suite-shaped synthetic runs (90 benchmarks, 330 rows, CV 3%, 5 repetitions):
     comparisons with any (false) verdict; the gate at --fail-on-slower 10: exit 0;
  4. power: one benchmark 15% slower (CV 3%) fails the gate at 10%; rows 1.5x apart
     get a verdict;
  5. between-run noise: A/A with a 3-run and a 6-run profile (false verdicts, gate);
  6. --until-ci: coverage of the interval when the repetitions stop at the first look;
  7. with --store: A/A on the store's real runs: every pair, and the rows resampled
     (repetitions pooled over the runs, drawn 5 + 5 without replacement);
  8. --until-decided: the gate's error rates when the repetitions stop adaptively;
  9. a 3- and 5-run history profile: does a plain 3x slowdown fail the gate (issue 40
     asks it to), and A/A pass;
 10. '~N repetitions would tell/decide': the power each promise reaches;
 11. pooled between-run noise where rows are unlike: A/A with 3- and 5-run profiles
     whose rows' between-run spreads differ (log-normally; 5 rows ten times the rest;
     with --store, the spreads two real runs show row by row).

The test suite (tests/test_claims.py) asserts the same claims with fewer trials.
"""
from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from osmeter import api  # noqa: E402
from osmeter.api import Result, Run, Sample  # noqa: E402


# ---- building runs ------------------------------------------------------------------------

# Rows per benchmark in a quick run (90 benchmarks, 330 rows): many single results, some
# metrics with phases, curves of up to 19 sizes.
SUITE_SHAPE = [1] * 40 + [2] * 20 + [4] * 15 + [8] * 10 + [19] * 5


def point(bench, metric, reps, better="lower", x=None):
    samples = [Sample(r, x, v) for r, v in enumerate(reps)]
    return Result(bench=bench, metric=metric, unit="ns", better=better,
                  shape="point" if x is None else "sweep", x=x, samples=samples,
                  summary={"median": statistics.median(reps)})


def run_of(run_id, results):
    return Run(id=run_id, label=run_id, started="", status="complete", results=results,
               sysinfo={"hostname": "sim"})


def suite_run(run_id, rng, reps=5, cv=0.03, slower=None, draw=None, run_sd=0.0):
    """A quick-suite-shaped run: benchmark k has SUITE_SHAPE[k] rows (a curve for the
    larger ones); `slower` {k: factor} for whole benchmarks; `draw` a noise generator
    (default normal logs with sd `cv`); `run_sd` this run's own offset per row."""
    draw = draw or (lambda: rng.gauss(0.0, cv))
    out = []
    for k, rows in enumerate(SUITE_SHAPE):
        f = (slower or {}).get(k, 1.0)
        for j in range(rows):
            centre = 1000.0 * (j + 1) * f * math.exp(rng.gauss(0, run_sd) if run_sd else 0)
            vals = [centre * math.exp(draw()) for _ in range(reps)]
            out.append(point("sim.b%02d" % k, "latency", vals,
                             x=None if rows == 1 else float(j)))
    return run_of(run_id, out)


def any_verdict(cmp) -> bool:
    return cmp.discoveries > 0


# ---- 1. interval of the median -----------------------------------------------------------

def coverage_table(trials: int) -> None:
    print("1. Interval of the median over per-repetition medians (skewed: 1000 + 50 Exp(1))")
    print("   reps  printed level  measured coverage")
    truth = 1000 + 50 * math.log(2)
    rng = random.Random(1)
    for n in (2, 3, 4, 5, 6, 7, 8, 10, 15, 20):
        hits, level = 0, None
        for _ in range(trials):
            s = api.summarize([Sample(r, None, 1000 + rng.expovariate(1 / 50))
                                 for r in range(n)])
            hits += s["ci_low"] <= truth <= s["ci_high"]
            level = s["ci_level"]
        print("   %4d  %12.1f%%  %16.1f%%" % (n, 100 * level, 100 * hits / trials))


# ---- 2. the test per row ----------------------------------------------------------------

def _var(v):
    m = statistics.fmean(v)
    return sum((x - m) ** 2 for x in v) / (len(v) - 1)


def welch_p(a, b):
    fit = api.log_ratio_t(a, b)
    return api.t_test(*fit)


def pooled_p(a, b):
    m, n = len(a), len(b)
    sp = ((m - 1) * _var(a) + (n - 1) * _var(b)) / (m + n - 2)
    se = math.sqrt(sp * (1 / m + 1 / n))
    if se == 0:
        return 1.0
    return min(1.0, 2 * api.t_sf(abs(statistics.fmean(b) - statistics.fmean(a)) / se, m + n - 2))


def rank_p(a, b):
    return api.mann_whitney_u(b, a)[1]


TESTS = (("Welch t (chosen)", welch_p), ("pooled t / hierarchical", pooled_p),
         ("exact rank test (before)", rank_p))


def generators(rng, real_pools):
    def t3():
        return rng.gauss(0, 1) / math.sqrt(sum(rng.gauss(0, 1) ** 2 for _ in range(3)) / 3)
    gens = {"normal": lambda: rng.gauss(0, 1), "heavy-tailed (t3)": t3,
            "bimodal (30% +2 sd)": lambda: rng.gauss(0, 0.3) + (2 if rng.random() < 0.3 else 0),
            "outliers (10% +8 sd)": lambda: rng.gauss(0, 1) + (8 if rng.random() < 0.1 else 0)}
    if real_pools:
        pools = [p for p in real_pools if len(set(p)) > 3]

        def real():
            return None                      # marker: drawn per trial from one row's pool
        gens["real rows, resampled"] = real
        gens["_pools"] = pools
    return gens


def test_choice(trials: int, real_pools) -> None:
    print("\n2. Test per row, 5 vs 5 repetitions: rejection rate / nominal under no "
          "difference (1.00 = exact; > 1 too many false verdicts), and power for a shift "
          "of 4 sd at p <= 5.6e-4 (the level one question in 90 needs)")
    rng = random.Random(2)
    gens = generators(rng, real_pools)
    pools = gens.pop("_pools", None)
    print("   %-24s %-26s %9s %9s %9s" % ("repetitions", "test", "a=0.05", "a=0.001",
                                         "power"))
    for name, g in gens.items():
        counts = {t: [0, 0, 0] for t, _ in TESTS}
        for _ in range(trials):
            if g() is None and pools:
                pool = rng.choice(pools)
                sd = statistics.stdev(pool) or 1.0
                rest = rng.sample(pool, 10)
                a, b = rest[:5], rest[5:]
                shifted = [x + 4 * sd for x in rng.sample(pool, 5)]
            else:
                a = [g() for _ in range(5)]
                b = [g() for _ in range(5)]
                shifted = [g() + 4 for _ in range(5)]
                sd = 1.0
            for t, f in TESTS:
                p = f(a, b)
                counts[t][0] += p <= 0.05
                counts[t][1] += p <= 0.001
                counts[t][2] += f(a, shifted) <= 5.6e-4
        for t, _ in TESTS:
            c = counts[t]
            print("   %-24s %-26s %9.2f %9.2f %8.1f%%" % (
                name, t, c[0] / trials / 0.05, c[1] / trials / 0.001, 100 * c[2] / trials))
    rng = random.Random(22)
    print("   unequal spreads (normal, sd ratio r):")
    for r in (2, 4):
        counts = {t: [0, 0] for t, _ in TESTS[:2]}
        for _ in range(trials):
            a = [rng.gauss(0, 1) for _ in range(5)]
            b = [rng.gauss(0, r) for _ in range(5)]
            for t, f in TESTS[:2]:
                p = f(a, b)
                counts[t][0] += p <= 0.05
                counts[t][1] += p <= 0.001
        for t, _ in TESTS[:2]:
            print("   %-24s %-26s %9.2f %9.2f" % ("sd ratio %d" % r, t,
                                                  counts[t][0] / trials / 0.05,
                                                  counts[t][1] / trials / 0.001))


# ---- 3. A/A on suite-shaped runs ----------------------------------------------------------

def aa_suite(trials: int) -> None:
    print("\n3. A/A, suite-shaped (90 benchmarks, 330 rows), 5 repetitions: comparisons "
          "with any false verdict (stated <= 5%); gate at 10%: exit 0 (required >= 95%)")
    for name, cv, heavy in (("CV 3%, normal", 0.03, False), ("CV 10%, heavy-tailed", 0.10,
                                                               True)):
        rng = random.Random(3)
        draw = None
        if heavy:
            def draw():
                return 0.1 * rng.gauss(0, 1) / math.sqrt(
                    sum(rng.gauss(0, 1) ** 2 for _ in range(3)) / 3)
        verdicts = exit0 = same = 0
        for _ in range(trials):
            cmp = api.compare([suite_run("a", rng, cv=cv, draw=draw),
                                   suite_run("b", rng, cv=cv, draw=draw)])
            verdicts += any_verdict(cmp)
            same += sum(1 for r in cmp.rows if r.cells[1].verdict.word == "same")
            exit0 += api.gate(cmp, 10).exit_code == 0
        print("   %-22s any false verdict %5.1f%%   gate exit 0 %5.1f%%   rows 'same "
              "within 5%%' %5.1f%%" % (name, 100 * verdicts / trials, 100 * exit0 / trials,
                                       100 * same / trials / 330))


# ---- 4. power -----------------------------------------------------------------------------

def power(trials: int) -> None:
    print("\n4. Power, suite-shaped runs, CV 3%")
    for reps, k in ((5, 0), (6, 0), (5, 60)):
        rng = random.Random(4)
        fails = named = 0
        bench = "sim.b%02d" % k
        for _ in range(trials):
            cmp = api.compare([suite_run("a", rng, reps=reps),
                                   suite_run("b", rng, reps=reps, slower={k: 1.15})])
            g = api.gate(cmp, 10)
            fails += g.outcome == "fail"
            named += g.outcome == "fail" and {r.bench for r in g.having("fail")} == {bench}
        print("   one benchmark (%d row%s) 15%% slower, %d reps, --fail-on-slower 10: fails "
              "%5.1f%% (required >= 80%%), naming only it %5.1f%%"
              % (SUITE_SHAPE[k], "" if SUITE_SHAPE[k] == 1 else "s", reps,
                 100 * fails / trials, 100 * named / trials))
    for cv in (0.03, 0.10):
        rng = random.Random(5)
        told = total = 0
        for _ in range(max(10, trials // 10)):
            slower = {k: 1.5 for k in range(0, 90, 9)}
            cmp = api.compare([suite_run("a", rng, cv=cv),
                                   suite_run("b", rng, cv=cv, slower=slower)])
            for r in cmp.rows:
                if int(r.bench[-2:]) in slower:
                    total += 1
                    told += r.cells[1].verdict.word == "worse"
        print("   rows 1.5x slower (10 benchmarks of 90), CV %2d%%, 5 reps: verdict 'worse' "
              "%5.1f%% of rows (required >= 95%%)" % (100 * cv, 100 * told / total))


# ---- 5. between-run noise ----------------------------------------------------------------

def noise_profiles(trials: int) -> None:
    print("\n5. Between-run noise: runs differ by 3% per row, repetitions by 1%; 100 "
          "rows, 5 reps; a fresh profile each trial")
    for nruns in (3, 6):
        rng = random.Random(6)
        verdicts = fails = covered = cells = 0
        for _ in range(trials):
            def mk(i):
                return run_of("r%d" % i, [point("sim.r%03d" % k, "latency", [
                    1000 * (k + 1) * math.exp(off + rng.gauss(0, 0.01)) for _ in range(5)])
                    for k, off in enumerate(rng.gauss(0, 0.03) for _ in range(100))])
            prof = api.estimate_noise([mk(i) for i in range(nruns)], "sim")
            cmp = api.compare([mk(10), mk(11)], noise=prof)
            verdicts += any_verdict(cmp)
            fails += api.gate(cmp, 2).outcome == "fail"
            for r in cmp.rows:
                v = r.cells[1].verdict
                cells += 1
                covered += v.ratio_low <= 1 <= v.ratio_high
        print("   %d-run profile: any false verdict %5.1f%% (stated <= 5%%), gate at 2%% "
              "fails %5.1f%%, 95%% ratio intervals cover %5.1f%%"
              % (nruns, 100 * verdicts / trials, 100 * fails / trials, 100 * covered / cells))


def hog_history(trials: int) -> None:
    print("\n9. A 3-run history profile and a plain slowdown: 12 benchmarks, repetitions "
          "CV 5%, runs differ by 3%; the candidate's benchmark 0 is 3x slower with CV 15% "
          "(a CPU hog: its repetitions do not overlap the baseline's)")
    for nruns in (3, 5):
        rng = random.Random(10)
        fails = aa_pass = 0
        for _ in range(trials):
            def mk(i, slow=1.0):
                return run_of("r%d" % i, [point("sim.b%02d" % k, "latency", [
                    1000 * (k + 1) * (slow if k == 0 else 1.0) * math.exp(
                        off + rng.gauss(0, 0.15 if slow > 1 and k == 0 else 0.05))
                    for _ in range(5)])
                    for k, off in enumerate(rng.gauss(0, 0.03) for _ in range(12))])
            prof = api.estimate_noise([mk(i) for i in range(nruns)], "sim")
            fails += api.gate(api.compare([mk(10), mk(11, 3.0)], noise=prof), 10).outcome \
                == "fail"
            aa_pass += api.gate(api.compare([mk(10), mk(11)], noise=prof), 10).exit_code == 0
        print("   %d-run profile: the 3x slowdown fails the gate at 10%% in %5.1f%% "
              "(issue 40 asks >= 95%%); A/A exits 0 in %5.1f%% (stated >= 95%%)"
              % (nruns, 100 * fails / trials, 100 * aa_pass / trials))


def promises(trials: int) -> None:
    """Section 10: '~N repetitions would tell/decide' at its word."""
    from osmeter.analysis import noise
    from osmeter.stats import significance as sig
    print("\n10. '~N repetitions would tell': N computed for the true within-run spread and "
          "(with runs that differ) the profile in use, then N against N repetitions, "
          "nothing different, %d comparisons (with a profile: 20 profiles of 5 runs of 5 "
          "repetitions, each promising its own N); stated power 80%%" % trials)
    hist_runs, hist_reps, profiles = 5, 5, 20
    for what, cv, tau in (("same within 5%", 0.03, 0.0), ("same within 5%", 0.06, 0.0),
                          ("gate pass at 10%", 0.03, 0.0), ("gate pass at 10%", 0.06, 0.0),
                          ("same within 5%", 0.03, 0.005), ("gate pass at 10%", 0.03, 0.02),
                          ("gate pass at 10%", 0.06, 0.02)):
        rng = random.Random(11)
        hits = done = 0
        promised, unsized = [], 0
        for k in range(profiles if tau else 1):
            b = None
            if tau:
                b = noise.between_run_variance([
                    [off + rng.gauss(0, cv) for _ in range(hist_reps)]
                    for off in (rng.gauss(0, tau) for _ in range(hist_runs))]).between()
            if what.startswith("same"):
                n = sig.repetitions_to_decide(cv, 0.05, api.ALPHA, b)
            else:
                n = sig.repetitions_to_tell(10.0, cv, api.ALPHA, b)
            if n is None:
                unsized += 1
                continue
            promised.append(n)
            for _ in range(trials // (profiles if tau else 1)):
                ob, oo = (rng.gauss(0, tau), rng.gauss(0, tau)) if tau else (0.0, 0.0)
                base = [1000 * math.exp(ob + rng.gauss(0, cv)) for _ in range(n)]
                cand = [1000 * math.exp(oo + rng.gauss(0, cv)) for _ in range(n)]
                v = api.compare_values(base, cand, "lower", between=b)
                if what.startswith("same"):
                    hits += v.word == "same"
                else:
                    hits += api.slowdown(v, 10.0, api.ALPHA).p_not_slower <= api.ALPHA
                done += 1
        print("   %-16s CV %d%%%s: ~%s repetitions promised%s, reached %5.1f%% (stated 80%%, "
              "required >= 75%%)" % (
                  what, 100 * cv, ", runs differ by %g%%" % (100 * tau) if tau else "",
                  "%d-%d" % (min(promised), max(promised)) if tau else promised[0],
                  " (%d profile(s) promised none)" % unsized if unsized else "",
                  100 * hits / max(1, done)))


# ---- 11. pooling rows that are unlike -------------------------------------------------

def _unlike_rows_aa(what, taus, cvs, trials, nruns, seed):
    rng = random.Random(seed)
    verdicts = exit0 = cells = covered = 0
    for _ in range(trials):
        def mk(i):
            return run_of("r%d" % i, [point("sim.r%03d" % k, "latency", [
                1000 * (k + 1) * math.exp(off + rng.gauss(0, cvs[k])) for _ in range(5)])
                for k, off in enumerate(rng.gauss(0, t) for t in taus)])
        prof = api.estimate_noise([mk(i) for i in range(nruns)], "sim")
        cmp = api.compare([mk(10), mk(11)], noise=prof)
        verdicts += any_verdict(cmp)
        exit0 += api.gate(cmp, 10).exit_code == 0
        for r in cmp.rows:
            v = r.cells[1].verdict
            cells += 1
            covered += v.ratio_low <= 1 <= v.ratio_high
    print("   %-44s %d-run profile: any false verdict %5.1f%% (stated <= 5%%), gate at 10%% "
          "exit 0 %5.1f%%, 95%% intervals cover %5.1f%%" % (
              what, nruns, 100 * verdicts / trials, 100 * exit0 / trials,
              100 * covered / cells))


def real_spreads(runs):
    """Per row of the store's first two runs: (between-run sd, within-run sd) of logs,
    the between part from the two runs' difference (1 degree of freedom each: a
    harsher spread of rows than the truth, many 0 and a long tail)."""
    a, b = ({r.key: r for r in run.results if r.status == "ok" and r.samples
             and r.shape in ("point", "sweep")} for run in runs[:2])
    taus, cvs = [], []
    for k in sorted(a.keys() & b.keys(), key=str):
        x = api.speed_logs(api.rep_values(a[k]), a[k].better)
        y = api.speed_logs(api.rep_values(b[k]), b[k].better)
        if x and y and len(x) > 1 and len(y) > 1:
            w = (statistics.variance(x) + statistics.variance(y)) / 2
            d = statistics.fmean(x) - statistics.fmean(y)
            taus.append(math.sqrt(max(0.0, d * d / 2 - w / len(x))))
            cvs.append(math.sqrt(w))
    return taus, cvs


def unlike_rows(trials: int, runs) -> None:
    print("\n11. Pooled between-run noise where rows are unlike (noise.moderate): 100 rows, "
          "5 repetitions, %d A/A comparisons per line" % trials)
    rng = random.Random(5)
    cases = [("between 2% x lognormal(sd 1), within too",
              [0.02 * math.exp(rng.gauss(0, 1)) for _ in range(100)],
              [0.02 * math.exp(rng.gauss(0, 1)) for _ in range(100)]),
             ("95 rows between 1%, 5 rows 10%, within 1%", [0.01] * 95 + [0.10] * 5,
              [0.01] * 100)]
    if len(runs) >= 2:
        taus, cvs = real_spreads(runs)
        cases.append(("%d rows of %s and %s" % (len(taus), runs[0].name, runs[1].name),
                      taus, cvs))
    for what, taus, cvs in cases:
        for nruns in (3, 5):
            _unlike_rows_aa(what, taus, cvs, trials, nruns, seed=11 + nruns)


# ---- 6. --until-ci ----------------------------------------------------------------------

def until_ci(trials: int) -> None:
    from osmeter.analysis import adaptive    # the stopping rules simulated: internal
    print("\n6. --until-ci PCT --max-runs 30: coverage of the median's interval when the "
          "repetitions stop as soon as it is narrow enough (log-normal repetitions)")
    first = adaptive.first_look()
    for cv, pct in ((0.03, 2.0), (0.03, 3.0), (0.03, 5.0), (0.10, 10.0)):
        rng = random.Random(7)
        out = {}
        for rule in ("before", "now"):
            hits = at_first = first_hits = 0
            for _ in range(trials):
                values = []
                while True:
                    values.append(1000 * math.exp(rng.gauss(0, cv)))
                    n = len(values)
                    if rule == "before":            # a 95% interval, looked at from 6 on
                        if n < 6:
                            continue
                        lo, hi, _ = api.median_interval(values)
                        med = api.median(values)
                        done = max(med - lo, hi - med) / med <= pct / 100
                    else:
                        if n < first:
                            continue
                        w = adaptive.relative_half_width(values, adaptive.look_of(n, first))
                        done = w is not None and w <= pct / 100
                    if done or n >= 30:
                        break
                if rule == "before":
                    lo, hi, _ = api.median_interval(values)
                else:
                    lo, hi, _ = adaptive.sequential_interval(values, adaptive.look_of(n, first))
                hits += lo <= 1000 <= hi
                if n == (6 if rule == "before" else first):
                    at_first += 1
                    first_hits += lo <= 1000 <= hi
            out[rule] = (hits / trials, at_first, first_hits / max(1, at_first))
        print("   CV %2d%%, target +-%-3g before (stated 95%%+): covered %5.1f%%, at the "
              "first look %5.1f%% (%d)   now (stated 95%%): covered %5.1f%%, at the first "
              "look %5.1f%% (%d)" % (100 * cv, pct, 100 * out["before"][0],
                                     100 * out["before"][2], out["before"][1],
                                     100 * out["now"][0], 100 * out["now"][2], out["now"][1]))


def until_decided(trials: int) -> None:
    from osmeter.analysis import adaptive    # the stopping rule simulated: internal
    print("\n8. --until-decided PCT --max-runs 30 against a 5-repetition baseline, one row: "
          "the candidate's repetitions stop as soon as the gate's rule decides it (looks at "
          "5, 8, 12, 18, 27, 30); the gate then, on the data it stopped with (stated: a "
          "false failure and a false pass at most 5% each)")
    for name, cv, pct, heavy in (("normal CV 3%", 0.03, 3.0, False),
                                 ("normal CV 3%", 0.03, 5.0, False),
                                 ("normal CV 3%", 0.03, 10.0, False),
                                 ("heavy-tailed CV 5%", 0.05, 5.0, True)):
        rng = random.Random(9)

        def noise():
            z = rng.gauss(0, 1)
            if heavy:
                z /= math.sqrt(sum(rng.gauss(0, 1) ** 2 for _ in range(3)) / 3)
            return cv * z
        out = {}
        looks = adaptive.decided_looks(5, 30)
        for truth in (0.0, pct, 3 * pct):
            fails = passes = reps = early = 0
            for _ in range(trials):
                base = run_of("a", [point("sim.x", "latency",
                                          [1000 * math.exp(noise()) for _ in range(5)])])
                cand = []
                for n in looks:
                    while len(cand) < n:
                        cand.append(1000 * (1 + truth / 100) * math.exp(noise()))
                    r = point("sim.x", "latency", cand)
                    if adaptive.decisions([r], pct, base, 5, 30)[r.key] is not False:
                        break
                reps += len(cand)
                early += len(cand) < 30
                run = run_of("b", [point("sim.x", "latency", cand)])
                run.results[0].summary["repetitions"] = len(cand)
                adaptive.record_decided(run, pct, 30, base, 5)
                g = api.gate(api.compare([base, run]), pct)
                fails += g.outcome == "fail"
                passes += g.outcome == "pass"
            out[truth] = (fails / trials, passes / trials, reps / trials, early / trials)
        print("   %-19s PCT %2g: nothing slower -> fails %4.1f%%, passes %5.1f%%, stops "
              "before 30 in %5.1f%% (mean %4.1f reps); exactly PCT slower -> passes %4.1f%%; "
              "3 PCT slower -> fails %5.1f%% (mean %4.1f reps)" % (
                  name, pct, 100 * out[0.0][0], 100 * out[0.0][1], 100 * out[0.0][3],
                  out[0.0][2], 100 * out[pct][1], 100 * out[3 * pct][0], out[3 * pct][2]))


# ---- 7. real runs ------------------------------------------------------------------------

def load_store(path: str):
    st = api.open_store(path, readonly=True)
    runs = [st.load_run(r["id"]) for r in st.list_runs()]
    return [r for r in runs if r.status == "complete" and not r.smoke]


def real_pools(runs) -> list[list[float]]:
    """Per row (point or sweep, positive values): the log repetition medians of every run,
    each run's centred on the row's overall mean (so that a pool is the within-run
    spread only)."""
    by_key: dict[tuple, list] = {}
    for run in runs:
        for r in run.results:
            if r.status == "ok" and r.shape in ("point", "sweep") and r.samples:
                logs = api.speed_logs(api.rep_values(r), r.better)
                if logs and len(logs) > 1:
                    by_key.setdefault(r.key, []).append(logs)
    pools = []
    for per_run in by_key.values():
        if len(per_run) == len(runs):
            pools.append([x - statistics.fmean(v) for v in per_run for x in v])
    return pools


def real_aa(runs, trials: int) -> None:
    print("\n7. A/A on %d real runs of one machine (the store given)" % len(runs))
    print("   every pair: verdicts better/worse, 'same', gate at 10% (exit)")
    pairs = list(itertools.combinations(range(len(runs)), 2))
    zero = exit0 = 0
    for i, j in pairs:
        cmp = api.compare([runs[i], runs[j]])
        g = api.gate(cmp, 10)
        same = sum(1 for r in cmp.rows for v in r.tests.values() if v.word == "same")
        print("   %-12s vs %-12s verdicts %2d, same %3d, questions %d, gate %s (exit %d: "
              "%d fail, %d pass, %d not gated)" % (
                  runs[i].name, runs[j].name, cmp.discoveries, same, cmp.questions,
                  g.outcome, g.exit_code, len(g.having("fail")), len(g.having("pass")),
                  len(g.having("not gated"))))
        zero += cmp.discoveries == 0
        exit0 += g.exit_code == 0
    print("   %d of %d pairs with no verdict, %d of %d with gate exit 0"
          % (zero, len(pairs), exit0, len(pairs)))
    print("   between-run shifts beyond the within-run spread, per pair: median |log ratio|, "
          "median |t| (no shift: about 0.7) and the share of rows with |t| > 3 (no shift: "
          "about 2%)")
    for i, j in pairs:
        a = {r.key: r for r in runs[i].results}
        shifts, ts = [], []
        for r in runs[j].results:
            q = a.get(r.key)
            if q is None or "ok" != r.status or "ok" != q.status or not r.samples \
                    or not q.samples or r.shape not in ("point", "sweep"):
                continue
            x = api.speed_logs(api.rep_values(q), q.better)
            y = api.speed_logs(api.rep_values(r), r.better)
            fit = api.log_ratio_t(x, y) if x and y else None
            if fit and fit[1] > 0:
                shifts.append(abs(fit[0]))
                ts.append(abs(fit[0]) / fit[1])
        print("   %-12s vs %-12s median |log ratio| %.3f, median |t| %.2f, |t| > 3: %4.1f%%"
              % (runs[i].name, runs[j].name, statistics.median(shifts),
                 statistics.median(ts), 100 * sum(1 for t in ts if t > 3) / len(ts)))
    from osmeter.analysis.noise import HISTORY_MIN_RUNS     # compare's own rule: internal
    if len(runs) - 2 >= HISTORY_MIN_RUNS:
        print("   every pair with the profile compare learns from the store's other runs "
              "(history, %d runs):" % (len(runs) - 2))
        zero = exit0 = 0
        for i, j in pairs:
            others = [r for k, r in enumerate(runs) if k not in (i, j)]
            prof = api.estimate_noise(others, "history")
            cmp = api.compare([runs[i], runs[j]], noise=prof)
            g = api.gate(cmp, 10)
            print("   %-12s vs %-12s verdicts %2d, gate %s (exit %d: %d fail, %d pass, %d not "
                  "gated)" % (runs[i].name, runs[j].name, cmp.discoveries, g.outcome,
                              g.exit_code, len(g.having("fail")), len(g.having("pass")),
                              len(g.having("not gated"))))
            zero += cmp.discoveries == 0
            exit0 += g.exit_code == 0
        print("   with history: %d of %d pairs with no verdict, %d of %d with gate exit 0"
              % (zero, len(pairs), exit0, len(pairs)))
    # Resampled: the rows' repetitions pooled over the runs (each run centred), 5 + 5
    # drawn without replacement: A/A with the real shapes but no between-run shift.
    template = runs[0]
    by_key = {}
    for run in runs:
        for r in run.results:
            if r.status == "ok" and r.shape in ("point", "sweep") and r.samples:
                v = api.rep_values(r)
                if min(v) > 0:
                    by_key.setdefault(r.key, []).append(v)
    rng = random.Random(8)
    verdicts = exit0 = 0
    keys = [r for r in template.results if r.key in by_key and len(by_key[r.key]) == len(runs)]
    for _ in range(trials):
        a, b = [], []
        for r in keys:
            pool = []
            for v in by_key[r.key]:
                centre = statistics.fmean(math.log(x) for x in v)
                pool += [math.exp(math.log(x) - centre) * r.summary["median"] for x in v]
            draw = rng.sample(pool, 10)
            for side, vals in ((a, draw[:5]), (b, draw[5:])):
                side.append(Result(bench=r.bench, metric=r.metric, unit=r.unit,
                                   better=r.better, shape=r.shape, x=r.x, x_name=r.x_name,
                                   params=r.params,
                                   samples=[Sample(k, r.x, x) for k, x in enumerate(vals)],
                                   summary={"median": statistics.median(vals)}))
        cmp = api.compare([run_of("a", a), run_of("b", b)])
        verdicts += any_verdict(cmp)
        exit0 += api.gate(cmp, 10).exit_code == 0
    print("   resampled (%d rows, %d trials): any false verdict %5.1f%% (stated <= 5%%), "
          "gate at 10%% exit 0 %5.1f%%" % (len(keys), trials, 100 * verdicts / trials,
                                          100 * exit0 / trials))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--store", help="an osmeter SQLite store of repeated runs of one machine")
    ap.add_argument("--section", type=int, action="append")
    args = ap.parse_args()
    q = args.quick
    runs = load_store(args.store) if args.store else []
    want = set(args.section or range(1, 13))
    t0 = time.monotonic()
    if 1 in want:
        coverage_table(2000 if q else 20000)
    if 2 in want:
        test_choice(4000 if q else 40000, real_pools(runs) if runs else None)
    if 3 in want:
        aa_suite(40 if q else 200)
    if 4 in want:
        power(40 if q else 200)
    if 5 in want:
        noise_profiles(40 if q else 300)
    if 10 in want:
        promises(400 if q else 2000)
    if 9 in want:
        hog_history(40 if q else 300)
    if 11 in want:
        unlike_rows(40 if q else 200, runs)
    if 6 in want:
        until_ci(500 if q else 4000)
    if 8 in want:
        until_decided(300 if q else 3000)
    if 7 in want and len(runs) >= 2:
        real_aa(runs, 20 if q else 200)
    print("\n(%.0f s)" % (time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
