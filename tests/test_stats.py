"""Statistics: medians, intervals, variation, outliers."""
import pytest

from osmeter.analysis import precision
from osmeter import stats
from osmeter.data.model import Sample


def samples(values_by_rep):
    return [Sample(rep, None, v) for rep, vals in enumerate(values_by_rep) for v in vals]


def test_summary_of_identical_values_is_exact():
    s = stats.summarize(samples([[10.0] * 4] * 5))
    assert s["median"] == 10.0 and s["ci_low"] == 10.0 and s["ci_high"] == 10.0
    assert s["cv"] == 0.0 and s["n"] == 20 and s["repetitions"] == 5


def test_interval_is_two_order_statistics_with_their_binomial_level():
    # n = 5: [min, max], 1 - 2/32 = 93.75%; n = 9: 2nd and 8th, 1 - 2*10/512.
    s = stats.summarize(samples([[v] for v in (5.0, 1.0, 4.0, 2.0, 3.0)]))
    assert (s["ci_low"], s["ci_high"]) == (1.0, 5.0)
    assert s["ci_level"] == 0.9375 and s["ci_method"] == "order statistics"
    s = stats.summarize(samples([[float(v)] for v in range(9)]))
    assert (s["ci_low"], s["ci_high"]) == (1.0, 7.0)
    assert s["ci_level"] == pytest.approx(1 - 2 * 10 / 512)
    levels = {n: stats.median_interval(list(range(n)))[2] for n in (2, 3, 4, 5, 6, 7, 10, 20)}
    assert levels[2] == 0.5 and levels[3] == 0.75 and levels[4] == 0.875
    assert all(levels[n] >= 0.95 for n in (6, 7, 10, 20))
    assert stats.repetitions_for(0.95) == 6 and stats.repetitions_for(0.99) == 8


def test_median_is_the_median_of_repetition_medians():
    # Two processes agree, one is off: the interval and the median are about processes.
    s = stats.summarize(samples([[10, 11, 12], [10, 11, 12], [30, 31, 32]]))
    assert s["median"] == 11 and s["repetitions"] == 3
    assert s["ci_low"] <= s["median"] <= s["ci_high"]


def test_one_repetition_has_no_interval():
    s = stats.summarize(samples([[1.0, 1.1, 0.9]]))
    assert "ci_low" not in s and "ci_level" not in s
    assert stats.interval_of(s) is None


def test_old_runs_intervals_are_shown_as_bootstrap():
    old = {"n": 5, "median": 3.0, "ci_low": 1.0, "ci_high": 5.0, "repetitions": 5}
    assert stats.interval_of(old) == (1.0, 5.0, None, "bootstrap")
    assert stats.level_note(None, "bootstrap") == "bootstrap"
    assert stats.level_note(0.9375, "order statistics", 5) == "93.8% with 5 repetitions"
    assert stats.level_note(0.96875, "order statistics", 6) == ""


def test_cv_is_between_processes_not_within(monkeypatch):
    # Each process is internally noisy but all processes agree: low run-to-run CV.
    s = stats.summarize(samples([[90, 110, 100]] * 5))
    assert s["cv"] == 0.0 and s["cv_within"] > 0.05
    # Processes disagree: high CV, and too high for a system call (tests/test_flags.py).
    s = stats.summarize(samples([[100] * 3, [130] * 3, [100] * 3, [70] * 3, [100] * 3]))
    assert s["cv"] > 0.05
    monkeypatch.setattr(precision, "KINDS", (precision.Kind(
        "system call", ("syscall.*",), 0.01, "simulated"),))
    assert precision.judge(s, "syscall.getpid")[0].kind == "imprecise"


def test_single_repetition_has_no_run_to_run_spread():
    s = stats.summarize(samples([[1.0, 1.1, 0.9]]))
    assert s["interval_basis"] == "none: one repetition"
    assert precision.judge(s, "syscall.getpid") == []


def test_outliers_are_counted_not_dropped():
    vals = [10.0] * 20 + [10.5, 9.5, 1000.0]
    s = stats.summarize(samples([vals]))
    assert s["outliers"] == 1 and s["max"] == 1000.0 and s["n"] == 23


def test_run_table_says_what_the_interval_is_and_what_95_needs():
    from osmeter.report import display
    from osmeter.data.model import Result
    def result(reps):
        smp = samples([[100.0 + r, 101.0 + r] for r in range(reps)])
        return Result(bench="syscall.r%d" % reps, metric="latency", unit="ns", better="lower",
                      shape="point", samples=smp, summary=stats.summarize(smp))
    text = display.results_table([result(1), result(5), result(6)], width=100)
    # The level most intervals share is said once; the row that differs carries its own.
    assert "93.8% ([min, max] of 5 repetitions) unless marked" in text
    assert "none (1 repetition)" in text
    assert next(l for l in text.splitlines() if "syscall.r6" in l).split("]")[1].strip() \
        .startswith("≥95%")
    assert "a 95% interval needs at least 6 repetitions (--repetitions 6)" in " ".join(text.split())
    text = display.results_table([result(6), result(9)])
    assert "needs" not in text and "at least 95% unless marked" in text
