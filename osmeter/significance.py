"""Is a difference between two runs real?  Mann–Whitney U on per-repetition values.

The unit of evidence is the *repetition*: every repetition is a separate process (its
own address-space layout, CPU placement, cache state), while the samples inside one
repetition share all of that and are not independent.  So each repetition is reduced to
its median and the test compares those medians between the two runs.

Mann–Whitney U is rank-based: it assumes no distribution (timings are skewed, with
outliers) and is exact for the small counts of repetitions benchmarks have.  With
m + n repetitions the smallest two-sided p-value it can give is 2 / C(m+n, m): three
repetitions against three can never reach p < 0.05 (the minimum is 0.1), and the
comparison then says so instead of pretending.

A difference is called significant when p < alpha AND the ratio of medians differs from
1 by at least `min_effect` (a tiny but consistent difference is real but not worth a
verdict).  The regression gate asks a sharper question: is the candidate slower than
the baseline by more than PCT?  It shifts the baseline by the threshold and runs the
one-sided test against the shifted values.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import median

ALPHA = 0.05          # significance level
MIN_EFFECT = 0.02     # smallest relative difference of medians that gets a verdict
EXACT_LIMIT = 60      # exact distribution of U when both sides have at most this many
TEST_NAME = "Mann-Whitney U (two-sided) on per-repetition medians"


@lru_cache(maxsize=None)
def _u_counts(m: int, n: int) -> tuple:
    """Number of arrangements of m x's and n y's giving each value of U (no ties)."""
    if m == 0 or n == 0:
        return (1,)
    a = _u_counts(m - 1, n)       # the largest element is an x: it beats all n y's
    b = _u_counts(m, n - 1)       # the largest element is a y: adds nothing
    size = m * n + 1
    out = [0] * size
    for u, c in enumerate(a):
        out[u + n] += c
    for u, c in enumerate(b):
        out[u] += c
    return tuple(out)


def _ranks(values: list[float]) -> tuple[list[float], bool]:
    """Average ranks (1-based) and whether there were ties."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    ties = False
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        if j > i:
            ties = True
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks, ties


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def mann_whitney_u(x: list[float], y: list[float], alternative: str = "two-sided"
                   ) -> tuple[float, float]:
    """(U of x, p-value).  alternative: 'two-sided', 'greater' (x tends to be larger),
    'less'.  Exact without ties for small samples, else normal approximation with tie
    and continuity correction."""
    m, n = len(x), len(y)
    if m == 0 or n == 0:
        raise ValueError("Mann-Whitney U needs at least one value on each side")
    ranks, ties = _ranks(list(x) + list(y))
    u = sum(ranks[:m]) - m * (m + 1) / 2.0
    if not ties and m <= EXACT_LIMIT and n <= EXACT_LIMIT:
        counts = _u_counts(m, n)
        total = sum(counts)
        ui = int(round(u))
        p_le = sum(counts[:ui + 1]) / total
        p_ge = sum(counts[ui:]) / total
    else:
        mu = m * n / 2.0
        tie_sum = 0.0
        allv = sorted(list(x) + list(y))
        i = 0
        while i < len(allv):
            j = i
            while j + 1 < len(allv) and allv[j + 1] == allv[i]:
                j += 1
            t = j - i + 1
            tie_sum += t ** 3 - t
            i = j + 1
        N = m + n
        var = m * n / 12.0 * ((N + 1) - tie_sum / (N * (N - 1))) if N > 1 else 0.0
        if var <= 0:
            return u, 1.0
        sd = math.sqrt(var)
        p_ge = _normal_sf((u - mu - 0.5) / sd)
        p_le = 1.0 - _normal_sf((u - mu + 0.5) / sd)
    if alternative == "greater":
        return u, min(1.0, p_ge)
    if alternative == "less":
        return u, min(1.0, p_le)
    return u, min(1.0, 2.0 * min(p_le, p_ge))


def min_p_value(m: int, n: int, two_sided: bool = True) -> float:
    """Smallest p-value Mann-Whitney U can give with m and n values (no ties)."""
    if m == 0 or n == 0:
        return 1.0
    p = 1.0 / math.comb(m + n, m)
    return min(1.0, 2.0 * p if two_sided else p)


def rep_values(result) -> list[float]:
    """One value per repetition of a Result: the median of that repetition's samples."""
    by_rep: dict[int, list[float]] = {}
    for s in result.samples:
        by_rep.setdefault(s.rep, []).append(s.value)
    return [median(v) for _, v in sorted(by_rep.items())]


@dataclass
class Verdict:
    """Outcome of comparing one run's result with the baseline's."""
    ratio: float | None       # speed relative to baseline, > 1 = better than baseline
    p: float | None
    n_base: int
    n_other: int
    significant: bool
    word: str                 # "better" | "worse" | "no clear difference" | "too few repetitions" | "no samples"
    detail: str = ""


def speed_ratio(base_median: float, other_median: float, better: str) -> float | None:
    """How much better `other` is than the baseline: > 1 better, < 1 worse."""
    if base_median is None or other_median is None or base_median <= 0 or other_median <= 0:
        return None
    return base_median / other_median if better == "lower" else other_median / base_median


def compare_values(base: list[float], other: list[float], better: str,
                   alpha: float = ALPHA, min_effect: float = MIN_EFFECT) -> Verdict:
    """Verdict on per-repetition values of the baseline and another run."""
    m, n = len(base), len(other)
    ratio = speed_ratio(median(base), median(other), better) if m and n else None
    if not m or not n:
        return Verdict(ratio, None, m, n, False, "no samples")
    floor = min_p_value(m, n)
    if floor >= alpha:
        return Verdict(ratio, None, m, n, False, "too few repetitions",
                       "%d vs %d repetitions: the smallest possible p is %.3g >= %.3g"
                       % (m, n, floor, alpha))
    _, p = mann_whitney_u(other, base)
    effect_ok = ratio is not None and abs(ratio - 1.0) >= min_effect
    if p < alpha and effect_ok:
        return Verdict(ratio, p, m, n, True, "better" if ratio > 1 else "worse")
    why = ("p = %.3g" % p) if p >= alpha else ("difference below %.3g%%" % (100 * min_effect))
    return Verdict(ratio, p, m, n, False, "no clear difference", why)


def slower_beyond(base: list[float], other: list[float], better: str, pct: float,
                  alpha: float = ALPHA) -> tuple[bool, float | None]:
    """Is `other` significantly slower than the baseline by more than pct percent?

    The baseline's values are moved by the threshold (times × (1+pct/100) or rates ÷ it)
    and a one-sided Mann–Whitney test asks whether `other` is still worse than that.
    Returns (verdict, p).
    """
    if not base or not other or min_p_value(len(base), len(other), False) >= alpha:
        return False, None
    f = 1.0 + pct / 100.0
    if better == "lower":
        shifted = [v * f for v in base]
        _, p = mann_whitney_u(other, shifted, "greater")
    else:
        shifted = [v / f for v in base]
        _, p = mann_whitney_u(other, shifted, "less")
    return p < alpha, p


def geometric_mean(values: list[float]) -> float | None:
    vals = [v for v in values if v is not None and v > 0]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))
