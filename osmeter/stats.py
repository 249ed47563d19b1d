"""Summaries of samples: median, 95% interval, run-to-run variation, outliers.

Samples come from several repetitions, each a separate process.  Values within one
process share its luck (placement, cache colouring, ASLR), so the variation that
matters is between processes: the interval and the coefficient of variation are
computed over per-repetition medians, and every sample is kept besides.
"""
from __future__ import annotations

import math
import random
import statistics
from collections import defaultdict

BOOTSTRAP_RESAMPLES = 2000
NOISY_CV = 0.05          # run-to-run CV above this makes a result "unreliable"
FEW_REPETITIONS = 3      # fewer than this: the interval cannot reflect run-to-run noise


def median(values):
    return statistics.median(values)


def bootstrap_median_ci(values, level=0.95, resamples=BOOTSTRAP_RESAMPLES, seed=0):
    """Percentile bootstrap interval of the median; deterministic for a given input."""
    n = len(values)
    if n == 1:
        return values[0], values[0]
    rng = random.Random(seed ^ n)
    meds = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    lo = meds[int(math.floor((1 - level) / 2 * resamples))]
    hi = meds[min(resamples - 1, int(math.ceil((1 + level) / 2 * resamples)) - 1)]
    return lo, hi


def count_outliers(values):
    """Samples with a modified z-score above 3.5 (Iglewicz & Hoaglin); kept, only counted."""
    if len(values) < 3:
        return 0
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values)
    if mad > 0:
        return sum(1 for v in values if 0.6745 * abs(v - med) / mad > 3.5)
    # Over half the values are identical: scale by the mean absolute deviation instead.
    mean_ad = statistics.fmean(abs(v - med) for v in values)
    if mean_ad == 0:
        return 0
    return sum(1 for v in values if abs(v - med) / (1.253314 * mean_ad) > 3.5)


def summarize(samples) -> dict:
    """Summary of a list of model.Sample (rep, x, value) for one result."""
    values = [s.value for s in samples]
    if not values:
        return {"n": 0}
    by_rep = defaultdict(list)
    for s in samples:
        by_rep[s.rep].append(s.value)
    rep_medians = [statistics.median(v) for _, v in sorted(by_rep.items())]
    mean = statistics.fmean(values)
    out = {
        "n": len(values),
        "repetitions": len(rep_medians),
        "median": statistics.median(values),
        "mean": mean,
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
        "outliers": count_outliers(values),
    }
    if len(rep_medians) >= 2:
        # Interval and CV between processes: what another run of osmeter would see.
        out["ci_low"], out["ci_high"] = bootstrap_median_ci(rep_medians)
        m = statistics.fmean(rep_medians)
        out["cv"] = statistics.stdev(rep_medians) / m if m else 0.0
        out["interval_basis"] = "repetitions"
    else:
        out["ci_low"], out["ci_high"] = bootstrap_median_ci(values)
        out["cv"] = out["stdev"] / mean if mean else 0.0
        out["interval_basis"] = "samples of one process"
    within = [statistics.stdev(v) / statistics.fmean(v) for v in by_rep.values()
              if len(v) > 1 and statistics.fmean(v)]
    if within:
        out["cv_within"] = statistics.median(within)
    return out


def reliability_warnings(summary: dict, noisy_cv: float = NOISY_CV) -> list[str]:
    """Plain-language reasons a summarised result should not be trusted."""
    warnings = []
    if not summary.get("n"):
        return warnings
    cv = summary.get("cv", 0.0)
    if cv > noisy_cv:
        between = "run-to-run" if summary.get("repetitions", 0) >= 2 else "sample-to-sample"
        warnings.append("noisy: %s variation %.1f%% exceeds %.0f%%"
                        % (between, cv * 100, noisy_cv * 100))
    if summary.get("repetitions", 0) < FEW_REPETITIONS:
        warnings.append("only %d repetition(s): the interval cannot show run-to-run noise"
                        % summary.get("repetitions", 0))
    return warnings
