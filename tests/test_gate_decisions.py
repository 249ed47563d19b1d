"""Issue 40: the gate's decisions under real noise — the interval a failure prints and
the repetitions a "would decide" promises.  Fixed seeds, small counts
(bench/stats_claims.py section 10 measures them with more)."""
import math
import random

from osmeter.analysis import compare, gate, noise
from osmeter.data.model import Run, Result, Sample
from osmeter.stats import significance as sig
from osmeter.report import gate_words


def _run(run_id, levels, rng, cv=0.03, reps=5, slower=None, slow_cv=None):
    """levels: {bench: ns}; `slower` {bench: factor} with its own spread slow_cv."""
    results = []
    for b, level in levels.items():
        f = (slower or {}).get(b, 1.0)
        sd = slow_cv if f != 1.0 and slow_cv else cv
        results.append(Result(bench=b, metric="latency", unit="ns", better="lower",
                              shape="point", summary={}, samples=[
                                  Sample(r, None, level * f * math.exp(rng.gauss(0, sd)))
                                  for r in range(reps)]))
    return Run(id=run_id, label=run_id, started="2026-11-28T00:00:00Z", status="complete",
               sysinfo={"hostname": "sim"}, results=results)


LEVELS = {"sim.b%02d" % k: 1000.0 * (k + 1) for k in range(12)}


def test_a_failure_prints_the_interval_of_the_test_that_failed_it():
    """`16.5% slower, slowdown in [-1.9%, +41.9%] (99.7%): slower, beyond 10%`: the
    interval was the pass test's.  Now it is the one-sided test's that failed the row,
    at the row's level after the correction: its lower end is above 0."""
    rng = random.Random(4)
    failed = 0
    for trial in range(20):
        a = _run("a", LEVELS, rng)
        b = _run("b", LEVELS, rng, slower={"sim.b03": 1.2})
        g = gate.evaluate(compare.compare([a, b]), 10)
        failed += len(g.having(gate.FAIL))
        for r in g.having(gate.FAIL):
            assert r.slowdown_low_pct > 0 > -r.slowdown_high_pct
            assert r.interval_level == gate.fail_level(r.p_slower, r.q_slower, g.alpha)
            assert r.slowdown_low_pct <= r.slowdown_pct <= r.slowdown_high_pct
            assert "slowdown in [+" in gate_words._outcome_message(r, 10)
    assert failed >= 15


def test_the_repetitions_promised_use_t_quantiles_and_both_sides_for_same():
    """"same within 5%" at zero difference needs both one-sided tests: z(0.9), not z(0.8);
    at small n the t quantiles (the issue measured 49% for a promised 80%)."""
    normal = math.ceil(2 * 0.03 ** 2 / (math.log(1.05) / (1.645 + 0.842)) ** 2)
    assert normal == 5                                  # what was promised before
    assert sig.repetitions_to_decide(0.03, 0.05, 0.05) == 8
    assert sig.repetitions_to_tell(10.0, 0.03, 0.05) == 3
    # Between-run noise makes it more, or impossible.
    b = noise.Component(0.0004, 4, 5, 0.03).between()
    assert sig.repetitions_to_tell(10.0, 0.03, 0.05, b) > 3
    assert sig.repetitions_to_decide(0.03, 0.05, 0.05, sig.Between(0.01, 4)) is None


def test_the_promise_is_kept_in_simulation():
    """N against N repetitions of an unchanged row, N as promised: "same" and a gate pass
    in at least 75% of 300 comparisons (stated 80%)."""
    rng = random.Random(11)
    for cv in (0.03, 0.06):
        n_same = sig.repetitions_to_decide(cv, 0.05, 0.05)
        n_pass = sig.repetitions_to_tell(10.0, cv, 0.05)
        same = passes = 0
        for _ in range(300):
            v = sig.compare_values([math.exp(rng.gauss(0, cv)) for _ in range(n_same)],
                                   [math.exp(rng.gauss(0, cv)) for _ in range(n_same)],
                                   "lower")
            same += v.word == sig.SAME
            v = sig.compare_values([math.exp(rng.gauss(0, cv)) for _ in range(n_pass)],
                                   [math.exp(rng.gauss(0, cv)) for _ in range(n_pass)],
                                   "lower")
            passes += sig.slowdown(v, 10.0, 0.05).p_not_slower <= 0.05
        assert same >= 225 and passes >= 225, (cv, same, passes)


def test_compare_promises_with_the_profile_it_used():
    """With a profile, "~N repetitions would tell" includes the between-run part (it
    did not)."""
    rng = random.Random(6)
    hist = [_run("h%d" % i, LEVELS, rng, cv=0.06) for i in range(5)]
    prof = noise.estimate(hist, "h")
    a, b = _run("a", LEVELS, rng, cv=0.06), _run("b", LEVELS, rng, cv=0.06)
    plain, with_prof = compare.compare([a, b]), compare.compare([a, b], noise=prof)
    for r0, r1 in zip(plain.rows, with_prof.rows):
        v0, v1 = r0.cells[1].verdict, r1.cells[1].verdict
        if v1.word == sig.CANNOT_TELL and v1.repetitions_needed is not None:
            assert v1.repetitions_needed == sig.repetitions_to_decide(
                v1.spread, v1.margin, 0.05, v1.between)
            assert v1.between is not None
