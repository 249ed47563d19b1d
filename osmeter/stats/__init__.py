"""Summaries of samples: median, interval of the median, run-to-run variation, outliers.

Samples come from several repetitions, each a separate process.  Values within one
process share its luck (placement, cache colouring, ASLR), so the variation that
matters is between processes: the median, its interval and the coefficient of variation
are computed over per-repetition medians, and every sample is kept besides.

The interval is distribution-free: two order statistics of the n per-repetition
medians, [x(k), x(n+1-k)], cover the true median (of what one repetition measures) with
probability 1 - 2 P(Binomial(n, 1/2) <= k-1), whatever the distribution.  osmeter takes
the narrowest such interval whose level is at least 95%; with fewer than 6 repetitions
none reaches 95% and [min, max] is given with its actual level (50% with 2 repetitions,
75% with 3, 87.5% with 4, 93.8% with 5).  With one repetition there is no interval:
one process says nothing about how the next would differ.  The level is stored with
the summary (`ci_level`) and printed wherever it is below 95%.

Runs stored before this (no `ci_method`) carry a percentile-bootstrap interval whose
level was not what it claimed; they are shown as "bootstrap".
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict

from .distributions import binomial_half_cdf

LEVEL = 0.95             # the interval level osmeter aims for
ORDER_STATISTICS = "order statistics"   # ci_method of the distribution-free interval
BOOTSTRAP = "bootstrap"                 # what runs stored before ci_method carry


def median(values):
    return statistics.median(values)


def order_statistic_level(n: int, k: int) -> float:
    """Coverage of [x(k), x(n+1-k)] (1-based, sorted) for the median of a continuous
    distribution; for tied values the closed interval covers at least this often."""
    return 1.0 - 2.0 * binomial_half_cdf(k - 1, n)


def median_interval(values, level: float = LEVEL):
    """(low, high, actual level) of the narrowest order-statistic interval of the median
    with level >= `level`, or [min, max] with its own (lower) level when no interval
    reaches it; None for fewer than 2 values."""
    v = sorted(values)
    n = len(v)
    if n < 2:
        return None
    k = 1
    while k + 1 <= n - k and order_statistic_level(n, k + 1) >= level:
        k += 1
    return v[k - 1], v[n - k], order_statistic_level(n, k)


def repetitions_for(level: float = LEVEL) -> int:
    """Fewest repetitions whose [min, max] reaches `level` (6 for 95%)."""
    n = 2
    while order_statistic_level(n, 1) < level:
        n += 1
    return n


def variance(values) -> float:
    """Sample variance in plain floats (statistics.variance is exact but 50x slower)."""
    m = statistics.fmean(values)
    return sum((v - m) ** 2 for v in values) / (len(values) - 1)


def stdev(values) -> float:
    return math.sqrt(variance(values))


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


def repetition_medians(samples) -> list[float]:
    """One value per repetition (the median of its samples), in repetition order."""
    by_rep = defaultdict(list)
    for s in samples:
        by_rep[s.rep].append(s.value)
    return [statistics.median(v) for _, v in sorted(by_rep.items())]


def summarize(samples) -> dict:
    """Summary of a list of model.Sample (rep, x, value) for one result."""
    values = [s.value for s in samples]
    if not values:
        return {"n": 0}
    by_rep = defaultdict(list)
    for s in samples:
        by_rep[s.rep].append(s.value)
    rep_medians = repetition_medians(samples)
    mean = statistics.fmean(values)
    out = {
        "n": len(values),
        "repetitions": len(rep_medians),
        "median": statistics.median(rep_medians if len(rep_medians) > 1 else values),
        "mean": mean,
        "stdev": stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
        "outliers": count_outliers(values),
    }
    interval = median_interval(rep_medians)
    if interval:
        # Interval and CV between processes: what another run of osmeter would see.
        out["ci_low"], out["ci_high"], out["ci_level"] = interval
        out["ci_method"] = ORDER_STATISTICS
        m = statistics.fmean(rep_medians)
        out["cv"] = stdev(rep_medians) / m if m else 0.0
        out["interval_basis"] = "repetitions"
    else:
        out["cv"] = out["stdev"] / mean if mean else 0.0
        out["interval_basis"] = "none: one repetition"
    within = [stdev(v) / statistics.fmean(v) for v in by_rep.values()
              if len(v) > 1 and statistics.fmean(v)]
    if within:
        out["cv_within"] = statistics.median(within)
    return out


def interval_of(summary: dict):
    """(low, high, level or None, method) of a stored summary, old or new; None when it
    has no interval."""
    if summary.get("ci_low") is None or summary.get("ci_high") is None:
        return None
    method = summary.get("ci_method") or BOOTSTRAP
    return summary["ci_low"], summary["ci_high"], summary.get("ci_level"), method


def level_note(level, method: str | None = None, repetitions: int | None = None) -> str:
    """What to print beside an interval: nothing for a distribution-free one of at least
    95%; its level (and why) when lower; "bootstrap" for intervals of old runs."""
    if method == BOOTSTRAP:
        return "bootstrap"
    if level is None or level >= LEVEL - 1e-12:
        return ""
    s = "%s%%" % fmt_percent(level)
    if repetitions:
        s += " with %d repetitions" % repetitions
    return s


AT_LEAST = "at least 95%"


def level_class(level, method: str | None = None):
    """How an interval's level reads in a table that states a shared level once: its
    own level below 95%, AT_LEAST above, BOOTSTRAP for intervals of old runs."""
    if method == BOOTSTRAP:
        return BOOTSTRAP
    if level is None or level >= LEVEL - 1e-12:
        return AT_LEAST
    return level


def fmt_percent(level: float) -> str:
    """93.75 -> '93.8', 50 -> '50', 99.2 -> '99.2'."""
    pct = 100.0 * level
    return ("%.1f" % pct).rstrip("0").rstrip(".")
