"""Every statement osmeter prints about uncertainty, checked by simulation.

Each test draws many synthetic experiments whose truth is known and counts how often
the printed statement is wrong, with a fixed seed (the same numbers every time).  The
tolerance is what the number of trials justifies: a rate measured over T trials has a
standard error of sqrt(L (1 - L) / T), and the tests allow three or four of those.
Each test also checks that it could fail: the old method it replaces, or a deliberately
wrong claim, is outside the same tolerance.
"""
from __future__ import annotations

import math
import random
from statistics import median

import pytest

from osmeter.analysis import compare, gate, noise
from osmeter.report import gate_words
from osmeter import stats
from osmeter.stats import significance as sig
from osmeter.data.model import Result, Run, Sample


def slack(level: float, trials: int, k: float = 4.0) -> float:
    return k * math.sqrt(level * (1.0 - level) / trials)


# ---- building runs quickly ---------------------------------------------------------------

def point(bench: str, values_by_rep, better: str = "lower") -> Result:
    samples = [Sample(rep, None, v) for rep, vals in enumerate(values_by_rep) for v in vals]
    return Result(bench=bench, metric="latency", unit="ns", better=better, shape="point",
                  samples=samples,
                  summary={"median": median(median(v) for v in values_by_rep)})


def run_of(run_id: str, results: list[Result], smoke: bool = False) -> Run:
    return Run(id=run_id, label=None, started="2026-11-23T00:00:00Z", status="complete",
               smoke=smoke, sysinfo={"hostname": "sim"}, results=results)


def flat_run(run_id, rng, rows, reps, cv, slower=None, run_sd=0.0):
    """rows point results 'sim.rNNN' around 1000 ns x row, log-normal noise `cv` between
    repetitions; `slower` {row: factor}; `run_sd`: this run's own offset per row (the
    between-run noise)."""
    out = []
    for k in range(rows):
        centre = 1000.0 * (k + 1) * (slower or {}).get(k, 1.0) * math.exp(rng.gauss(0, run_sd))
        out.append(point("sim.r%03d" % k, [[centre * math.exp(rng.gauss(0, cv))]
                                            for _ in range(reps)]))
    return run_of(run_id, out)


# ---- 1. the interval of the median ------------------------------------------------------

def test_median_interval_covers_at_its_printed_level():
    rng = random.Random(20261123)
    trials = 3000
    truth = 1000.0 + 50.0 * math.log(2.0)          # median of 1000 + 50 Exp(1): skewed
    for n in (3, 5, 7, 10, 20):
        hits, levels = 0, set()
        for _ in range(trials):
            samples = [Sample(rep, None, 1000.0 + rng.expovariate(1 / 50.0))
                       for rep in range(n)]
            s = stats.summarize(samples)
            hits += s["ci_low"] <= truth <= s["ci_high"]
            levels.add(s["ci_level"])
        (level,) = levels
        coverage = hits / trials
        assert abs(coverage - level) <= slack(level, trials), (n, coverage, level)
        # What the table prints: the level itself wherever it is below 95%.
        note = stats.level_note(level, stats.ORDER_STATISTICS, n)
        assert (note == "") == (level >= 0.95), (n, note)
        if n == 5:
            assert note == "93.8% with 5 repetitions"
    # The claim could fail: calling the 5-repetition interval 95% is outside tolerance.
    assert 0.95 - 0.9375 > 0 and abs(0.9375 - 0.95) > slack(0.95, 30000)


def test_median_interval_with_several_samples_per_repetition():
    # Process luck (symmetric) plus samples inside the process: the interval is about
    # what one repetition measures, here centred on 100.
    rng = random.Random(7)
    trials, n, hits = 2000, 5, 0
    for _ in range(trials):
        samples = []
        for rep in range(n):
            luck = rng.gauss(0, 3)
            samples += [Sample(rep, None, 100 + luck + rng.gauss(0, 1)) for _ in range(4)]
        s = stats.summarize(samples)
        hits += s["ci_low"] <= 100 <= s["ci_high"]
    assert abs(hits / trials - 0.9375) <= slack(0.9375, trials)


def test_the_old_bootstrap_did_not_cover_what_it_claimed():
    # The percentile bootstrap over 3 repetition medians covered about 75%, not 95%:
    # the tolerance used above would have caught it.
    rng = random.Random(3)
    trials, hits = 2000, 0
    for _ in range(trials):
        v = sorted(rng.gauss(0, 1) for _ in range(3))
        hits += v[0] <= 0 <= v[2]          # what a bootstrap of 3 values spans at most
    assert hits / trials < 0.95 - slack(0.95, trials)


# ---- 2. the interval of a ratio --------------------------------------------------------

def test_ratio_interval_covers_at_its_printed_level():
    rng = random.Random(11)
    trials, truth = 2000, 100.0 / 110.0            # 10% slower: speed ratio 1/1.1
    for reps in (3, 5, 8):
        hits, levels = 0, set()
        for _ in range(trials):
            base = [100 * math.exp(rng.gauss(0, 0.03)) for _ in range(reps)]
            other = [110 * math.exp(rng.gauss(0, 0.03)) for _ in range(reps)]
            v = sig.compare_values(base, other, "lower")
            hits += v.ratio_low <= truth <= v.ratio_high
            levels.add(round(v.ratio_level, 12))
        (level,) = levels
        assert abs(hits / trials - level) <= slack(level, trials), (reps, hits, level)


def test_index_interval_covers_the_true_index():
    """Six point metrics and a sweep whose x values share each process's luck."""
    rng = random.Random(5)
    speeds = [1.10, 0.95, 1.0, 1.3, 0.8, 1.05, 1.2]      # per metric, the last is the sweep
    truth = math.exp(sum(math.log(s) for s in speeds) / len(speeds))
    trials, hits = 300, 0

    def make(run_id, factor_of):
        results = [point("cat.m%d" % k, [[1000 * factor_of(k) * math.exp(rng.gauss(0, 0.03))]
                                        for _ in range(5)]) for k in range(6)]
        lucks = [rng.gauss(0, 0.03) for _ in range(5)]
        for x in (1, 2, 3, 4):
            r = point("cat.sweep", [[500 * x * factor_of(6) * math.exp(l + rng.gauss(0, 0.01))]
                                    for l in lucks])
            r.shape, r.x, r.x_name = "sweep", float(x), "size"
            results.append(r)
        return run_of(run_id, results)

    for _ in range(trials):
        a = make("a", lambda k: 1.0)
        b = make("b", lambda k: 1.0 / speeds[k])
        cmp = compare.compare([a, b])
        ci = cmp.overall_ci[1]
        hits += ci.low <= truth <= ci.high
    assert hits / trials >= 0.95 - slack(0.95, trials, 3), hits


# ---- 3. many rows: Benjamini–Hochberg -----------------------------------------------------

def test_aa_comparison_of_100_rows_gives_false_verdicts_at_most_alpha():
    """Two runs of the same system: every verdict is false, so the false-discovery rate
    is the chance of showing any verdict at all; it must stay at or below alpha."""
    rng = random.Random(17)
    trials, any_verdict, uncorrected = 200, 0, 0
    for _ in range(trials):
        cmp = compare.compare([flat_run("a", rng, 100, 8, 0.03),
                               flat_run("b", rng, 100, 8, 0.03)])
        shown = cmp.discoveries
        any_verdict += shown > 0
        uncorrected += any(v.p is not None and v.p <= 0.05
                           for row in cmp.rows for v in row.tests.values())
        assert cmp.expected_false == 0.05 * shown
    assert any_verdict / trials <= 0.05 + slack(0.05, trials, 3), any_verdict
    # Without the correction nearly every comparison showed a false verdict.
    assert uncorrected / trials > 0.9


def test_real_differences_are_still_found_among_many_rows():
    rng = random.Random(19)
    slower = {k: 1.25 for k in range(0, 100, 10)}          # 10 of 100 rows 25% slower
    found = 0
    for _ in range(20):
        cmp = compare.compare([flat_run("a", rng, 100, 8, 0.03),
                               flat_run("b", rng, 100, 8, 0.03, slower)])
        worse = {int(r.bench[-3:]) for r in cmp.rows if r.cells[1].verdict.word == "worse"}
        found += len(worse & set(slower))
        assert len(worse - set(slower)) <= 2
    assert found >= 0.9 * 20 * len(slower)


# ---- 4. the gate ---------------------------------------------------------------------------

# 350 simulated comparisons of 90 rows (about 50 s on a busy 2-vCPU VM): with --long;
# the default run's: test_gate_passes_when_nothing_is_slower_and_noise_is_small.
@pytest.mark.long
def test_gate_false_failure_on_aa_at_most_alpha():
    """90 identical rows at CV 3%, 5 repetitions: the gate fails at most alpha of A/A
    comparisons whatever the threshold, and at 10% it passes (exit 0) in 95% or more."""
    rng = random.Random(23)
    for pct, trials in ((0.0, 100), (2.0, 100), (10.0, 150)):
        failures, passes = 0, 0
        for _ in range(trials):
            cmp = compare.compare([flat_run("a", rng, 90, 5, 0.03),
                                   flat_run("b", rng, 90, 5, 0.03)])
            g = gate.evaluate(cmp, pct)
            failures += g.outcome == "fail"
            passes += g.exit_code == gate.EXIT_PASS
            # A row fails only slower after the correction and estimated beyond PCT.
            for r in g.having("fail"):
                assert r.q_slower <= 0.05 and r.slowdown_pct > pct
        assert failures / trials <= 0.05 + slack(0.05, trials, 3), (pct, failures)
        if pct == 10.0:
            assert passes / trials >= 0.95 - slack(0.95, trials, 3), passes


def test_gate_catches_a_real_slowdown_and_names_the_row():
    rng = random.Random(29)
    outcomes = {"pass": 0, "fail": 0, "undecided": 0}
    for _ in range(100):
        cmp = compare.compare([flat_run("a", rng, 30, 5, 0.03),
                               flat_run("b", rng, 30, 5, 0.03, {7: 1.3})])
        g = gate.evaluate(cmp, 10)
        outcomes[g.outcome] += 1
        if g.outcome == "fail":
            assert [r.bench for r in g.having("fail")] == ["sim.r007"]
            assert g.having("fail")[0].q_slower <= 0.05
    assert outcomes["fail"] >= 95 and outcomes["pass"] <= 5, outcomes
    # Noisy rows are listed with the repetitions that would decide them, and do not
    # change the outcome unless named.
    cmp = compare.compare([flat_run("a", rng, 30, 5, 0.03),
                           flat_run("b", rng, 30, 5, 0.3)])
    g = gate.evaluate(cmp, 10)
    assert g.having("not gated") and all(r.repetitions_needed > 5
                                          for r in g.having("not gated"))
    assert g.exit_code == gate.EXIT_PASS or g.outcome == "fail"
    named = gate.evaluate(cmp, 10, gate_on=["sim.r00*"])
    assert named.outcome in ("undecided", "fail") and named.exit_code != 0


# 300 simulated comparisons (about 40 s): with --long; the default run's:
# test_gate_catches_a_real_slowdown_and_names_the_row.
@pytest.mark.long
def test_gate_catches_one_row_15_percent_slower_at_the_default_5_repetitions():
    """The issue's power requirement: one benchmark of 90 questions 15% slower at CV 3%,
    5 repetitions, --fail-on-slower 10: the gate fails naming it in 80% of comparisons
    or more.  The gate's question is one-sided; with the comparison's two-sided verdicts
    (the old gate: fail = "worse" and beyond PCT) it was caught less often than that."""
    rng = random.Random(37)
    trials, named, old = 300, 0, 0
    for _ in range(trials):
        cmp = compare.compare([flat_run("a", rng, 90, 5, 0.03),
                               flat_run("b", rng, 90, 5, 0.03, {7: 1.15})])
        g = gate.evaluate(cmp, 10)
        named += [r.bench for r in g.having("fail")] == ["sim.r007"]
        old += any(r.verdict == "worse" and r.slowdown_pct > 10 for r in g.rows)
    assert named / trials >= 0.80, named
    assert old / trials < 0.80, old


def test_gate_passes_when_nothing_is_slower_and_noise_is_small():
    rng = random.Random(31)
    passes = sum(gate.evaluate(compare.compare([flat_run("a", rng, 30, 8, 0.01),
                                                flat_run("b", rng, 30, 8, 0.01)]),
                               10).outcome == "pass" for _ in range(50))
    assert passes >= 45


def test_the_issues_59_percent_slower_stat_is_named_not_passed():
    # syscall.stat 59% slower, compare said "worse, p=0.032"; --fail-on-slower 5, 10 and
    # 20 printed "none found".  Now it is listed, with its own test and the correction.
    base = [1000.0, 1010.0, 1020.0, 1030.0, 1040.0]
    cand = [1600.0, 1620.0, 1640.0, 1660.0, 1025.0]
    others = [flat_run("a", random.Random(1), 40, 5, 0.03).results,
              flat_run("b", random.Random(2), 40, 5, 0.03).results]
    a = run_of("a", others[0] + [point("syscall.stat", [[v] for v in base])])
    b = run_of("b", others[1] + [point("syscall.stat", [[v] for v in cand])])
    for pct in (5, 10, 20):
        g = gate.evaluate(compare.compare([a, b]), pct)
        row = next(r for r in g.rows if r.bench == "syscall.stat")
        assert row.outcome in ("fail", "not gated") and row.slowdown_pct > 40
        assert row.outcome == "fail" or "not gated" in gate_words.row_message(row, pct)
        strict = gate.evaluate(compare.compare([a, b]), pct, gate_on=["syscall.stat"])
        assert strict.exit_code != 0


# ---- 5. between-run noise --------------------------------------------------------------------

def test_between_run_noise_makes_intervals_and_the_gate_honest_again():
    """A system whose runs differ by 3% per benchmark while repetitions agree within 1%.
    Without a noise profile the ratio intervals of A/A comparisons miss 1.0 most of the
    time; with a profile from six earlier runs they cover it at their level and the gate
    keeps its false-failure rate."""
    rng = random.Random(37)
    rows, reps, cv, run_sd = 20, 5, 0.01, 0.03
    profile = noise.estimate([flat_run("n%d" % i, rng, rows, reps, cv, run_sd=run_sd)
                              for i in range(6)], "sim")
    tau = [math.sqrt(c.tau2) for k, c in profile.components.items() if k.startswith("row:")]
    assert 0.02 < median(tau) < 0.04
    trials, covered_without, covered_with, cells, failures = 60, 0, 0, 0, 0
    for _ in range(trials):
        a = flat_run("a", rng, rows, reps, cv, run_sd=run_sd)
        b = flat_run("b", rng, rows, reps, cv, run_sd=run_sd)
        plain = compare.compare([a, b])
        with_noise = compare.compare([a, b], noise=profile)
        for p_row, n_row in zip(plain.rows, with_noise.rows):
            cells += 1
            v, w = p_row.cells[1].verdict, n_row.cells[1].verdict
            covered_without += v.ratio_low <= 1.0 <= v.ratio_high
            covered_with += w.ratio_low <= 1.0 <= w.ratio_high
        failures += gate.evaluate(with_noise, 2).outcome == "fail"
    assert covered_without / cells < 0.6                      # overconfident without
    assert covered_with / cells >= 0.95 - slack(0.95, trials, 3)
    assert failures / trials <= 0.05 + slack(0.05, trials, 3)
    assert "not accounted for" in compare.noise_note(plain)
    assert "profile sim" in compare.noise_note(with_noise)


# ---- 6. adaptive repetitions -----------------------------------------------------------------

def test_until_ci_interval_holds_its_level_whenever_the_looks_stop():
    """Stopping as soon as the interval is narrow made it optimistic (86-94% for a
    stated 96.9% at the first look); with the looks spending the 5%, the interval at the
    stopping look covers at least 95% overall."""
    from osmeter.analysis import adaptive
    rng = random.Random(41)
    first, trials, hits, old_hits = adaptive.first_look(), 1500, 0, 0
    for _ in range(trials):
        values = [1000 * math.exp(rng.gauss(0, 0.03)) for _ in range(first)]
        while True:
            j = adaptive.look_of(len(values), first)
            w = adaptive.relative_half_width(values, j)
            if (w is not None and w <= 0.03) or len(values) >= 30:
                break
            values.append(1000 * math.exp(rng.gauss(0, 0.03)))
        lo, hi, _ = adaptive.sequential_interval(values, j)
        hits += lo <= 1000 <= hi
        # The old rule: a 95% interval, looked at from 6 repetitions on.
        old = [1000 * math.exp(rng.gauss(0, 0.03)) for _ in range(6)]
        while True:
            lo, hi, _ = stats.median_interval(old)
            if max(median(old) - lo, hi - median(old)) / median(old) <= 0.03 or len(old) >= 30:
                break
            old.append(1000 * math.exp(rng.gauss(0, 0.03)))
        old_hits += lo <= 1000 <= hi
    assert hits / trials >= 0.95 - slack(0.95, trials, 3), hits
    assert old_hits < hits


def test_the_real_run_claims_bound_is_the_binomial_tail():
    """bench/aa_gate.py and bench/disturbed_runs.py judge a claimed rate with it."""
    from binomial import most_explained
    assert most_explained(6, 0.05, 0.01) == 2 and most_explained(6, 0.4, 0.01) == 5
    assert most_explained(31, 0.10, 0.01) == 7 and most_explained(62, 0.10, 0.01) == 12
    assert most_explained(62, 0.10, 0.001) == 14
