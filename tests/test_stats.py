"""Statistics: medians, intervals, variation, outliers, warnings."""
import random

from osmeter import stats
from osmeter.model import Sample


def samples(values_by_rep):
    return [Sample(rep, None, v) for rep, vals in enumerate(values_by_rep) for v in vals]


def test_summary_of_identical_values_is_exact():
    s = stats.summarize(samples([[10.0] * 4] * 5))
    assert s["median"] == 10.0 and s["ci_low"] == 10.0 and s["ci_high"] == 10.0
    assert s["cv"] == 0.0 and s["n"] == 20 and s["repetitions"] == 5
    assert stats.reliability_warnings(s) == []


def test_interval_contains_the_median_and_covers_the_truth():
    rng = random.Random(1)
    hits = 0
    for trial in range(200):
        reps = [[rng.gauss(100, 5) for _ in range(3)] for _ in range(9)]
        s = stats.summarize(samples(reps))
        assert s["ci_low"] <= s["median"] <= s["ci_high"]
        hits += s["ci_low"] <= 100 <= s["ci_high"]
    # A 95% interval of the median of 9 repetitions should cover the true median
    # most of the time (bootstrap intervals run a little narrow at small n).
    assert hits >= 160, hits


def test_cv_is_between_processes_not_within():
    # Each process is internally noisy but all processes agree: low run-to-run CV.
    s = stats.summarize(samples([[90, 110, 100]] * 5))
    assert s["cv"] == 0.0 and s["cv_within"] > 0.05
    # Processes disagree: high CV and a warning.
    s = stats.summarize(samples([[100] * 3, [130] * 3, [100] * 3, [70] * 3, [100] * 3]))
    assert s["cv"] > 0.05
    assert any("noisy" in w for w in stats.reliability_warnings(s))


def test_single_repetition_is_flagged():
    s = stats.summarize(samples([[1.0, 1.1, 0.9]]))
    assert s["interval_basis"] == "samples of one process"
    assert any("1 repetition" in w for w in stats.reliability_warnings(s))


def test_outliers_are_counted_not_dropped():
    vals = [10.0] * 20 + [10.5, 9.5, 1000.0]
    s = stats.summarize(samples([vals]))
    assert s["outliers"] == 1 and s["max"] == 1000.0 and s["n"] == 23


def test_bootstrap_is_deterministic():
    vals = [random.Random(3).random() for _ in range(7)]
    assert stats.bootstrap_median_ci(vals) == stats.bootstrap_median_ci(list(vals))
