"""Is a difference between two runs real, and how large is it?

The unit of evidence is the *repetition*: every repetition is a separate process (its
own address-space layout, CPU placement, cache state), and the repetitions of a run are
interleaved round-robin over the whole run, so their spread includes the machine's
drift during the run; the samples inside one repetition share all of that and are not
independent.  Each repetition is reduced to its median and the tests compare those
medians between two runs on the log scale (a ratio of speeds is a shift of logs).
"Speed logs" are oriented so that larger is better: -log(time), +log(rate).

* **Test**: Welch's t on the log repetition medians, Satterthwaite's degrees of freedom
  (bench/stats_claims.py chose it by simulation over an exact rank test, which cannot go
  below p = 0.0079 with 5 against 5 repetitions, and over Student's pooled t, which is
  liberal at small alpha when the two runs' spreads differ; docs/statistics.md).  With a
  between-run noise profile (osmeter.analysis.noise) its variance is added and the degrees of
  freedom are capped at the profile's (runs - 1, up to twice that where its rows are pooled).
* **Ratio**: the Hodges–Lehmann estimate (median of all pairwise differences of speed
  logs: one odd repetition does not swing it), with the (1 - alpha) Welch interval of
  the shift; the same estimator with or without a profile.
* **Verdict** per row (osmeter.analysis.compare corrects for the many rows): better / worse when
  the difference is significant and at least `min_effect`; "same" when the (1 - 2 alpha)
  interval lies inside +-margin (two one-sided tests, TOST); otherwise "cannot tell",
  with the repetitions per run that would tell.
* **Values not all positive** (a loss of 0%, a time below the timer's resolution): no
  ratio; an exact Mann–Whitney test on the values themselves, and the row says so.

The regression gate (osmeter.analysis.gate) reads the same verdicts and the slowdown's interval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import fmean, median

from .distributions import normal_quantile, t_cdf, t_quantile, t_sf
from ..base.numbers import p_value
from . import variance

ALPHA = 0.05          # significance level (false-discovery rate for verdicts)
MIN_EFFECT = 0.02     # smallest relative difference that gets a better/worse verdict
MARGIN = 0.05         # "same": the difference lies within +-MARGIN (equivalence)
EXACT_LIMIT = 60      # exact U distribution without ties when both sides have <= this many
EXACT_TIES_LIMIT = 40  # exact conditional distribution with ties up to this many values
T_METHOD = ("Welch t on log per-repetition medians (Satterthwaite df); "
            "Hodges-Lehmann ratio")
T_NOISE_METHOD = T_METHOD + "; between-run noise added (df at most the profile's)"
RANK_METHOD = "Mann-Whitney U (exact) on the per-repetition values: not all positive, no ratio"

# ---- Mann–Whitney U --------------------------------------------------------------------

@lru_cache(maxsize=None)
def _u_counts(m: int, n: int) -> tuple:
    """Number of arrangements of m x's and n y's giving each value of U (no ties)."""
    if m == 0 or n == 0:
        return (1,)
    a = _u_counts(m - 1, n)       # the largest element is an x: it beats all n y's
    b = _u_counts(m, n - 1)       # the largest element is a y: adds nothing
    out = [0] * (m * n + 1)
    for u, c in enumerate(a):
        out[u + n] += c
    for u, c in enumerate(b):
        out[u] += c
    return tuple(out)


def _ranks(values: list[float]) -> tuple[list[float], list[int]]:
    """Average ranks (1-based) and the sizes of the groups of equal values (ascending)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    groups = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        groups.append(j - i + 1)
        i = j + 1
    return ranks, groups


def _tied_rank_sum_counts(m: int, groups: tuple) -> dict:
    """{2 x rank sum of the x's: number of ways} over all C(N, m) choices of which m of
    the N values are x's, the values' tie groups (sizes, ascending) being fixed: the
    exact permutation distribution of Mann–Whitney's statistic given the ties."""
    ways = [dict() for _ in range(m + 1)]
    ways[0][0] = 1
    start = 0                                  # values before this group
    for size in groups:
        twice_rank = 2 * start + size + 1      # twice the group's average rank
        new = [dict() for _ in range(m + 1)]
        for taken, sums in enumerate(ways):
            for s, count in sums.items():
                for k in range(min(size, m - taken) + 1):
                    key = s + k * twice_rank
                    new[taken + k][key] = new[taken + k].get(key, 0) + count * math.comb(size, k)
        ways = new
        start += size
    return ways[m]


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def mann_whitney_u(x: list[float], y: list[float], alternative: str = "two-sided"
                   ) -> tuple[float, float]:
    """(U of x, p-value).  alternative: 'two-sided', 'greater' (x tends to be larger),
    'less'.  Exact: counted without ties, the conditional permutation distribution with
    ties (up to EXACT_TIES_LIMIT values); beyond that the normal approximation with tie
    and continuity correction."""
    m, n = len(x), len(y)
    if m == 0 or n == 0:
        raise ValueError("Mann-Whitney U needs at least one value on each side")
    ranks, groups = _ranks(list(x) + list(y))
    u = sum(ranks[:m]) - m * (m + 1) / 2.0
    ties = len(groups) < m + n
    if not ties and m <= EXACT_LIMIT and n <= EXACT_LIMIT:
        counts = _u_counts(m, n)
        total = sum(counts)
        ui = int(round(u))
        p_le = sum(counts[:ui + 1]) / total
        p_ge = sum(counts[ui:]) / total
    elif ties and m + n <= EXACT_TIES_LIMIT:
        dist = _tied_rank_sum_counts(m, tuple(groups))
        total = sum(dist.values())
        observed = int(round(2 * sum(ranks[:m])))
        p_le = sum(c for s, c in dist.items() if s <= observed) / total
        p_ge = sum(c for s, c in dist.items() if s >= observed) / total
    else:
        N = m + n
        tie_sum = sum(t ** 3 - t for t in groups)
        var = m * n / 12.0 * ((N + 1) - tie_sum / (N * (N - 1)))
        if var <= 0:
            return u, 1.0
        sd = math.sqrt(var)
        p_ge = _normal_sf((u - m * n / 2.0 - 0.5) / sd)
        p_le = 1.0 - _normal_sf((u - m * n / 2.0 + 0.5) / sd)
    if alternative == "greater":
        return u, min(1.0, p_ge)
    if alternative == "less":
        return u, min(1.0, p_le)
    return u, min(1.0, 2.0 * min(p_le, p_ge))


# ---- ratios and their intervals -------------------------------------------------------

def speed_logs(values: list[float], better: str) -> list[float] | None:
    """Logs oriented so that larger is better; None if a value is not positive."""
    if any(v <= 0 for v in values):
        return None
    sign = -1.0 if better == "lower" else 1.0
    return [sign * math.log(v) for v in values]


def hodges_lehmann(base_s: list[float], other_s: list[float]) -> float:
    """The shift other - base of speed logs: the median of all pairwise differences
    (one odd repetition does not swing it, as it swings a difference of means)."""
    return median(o - b for o in other_s for b in base_s)


@dataclass
class Between:
    """Variance of the between-run part of a log ratio (two runs: twice one run's), with
    its degrees of freedom (the profile's runs - 1, more where its rows are pooled), from
    osmeter.analysis.noise."""
    var: float
    df: float


def variance_parts(base_s: list[float], other_s: list[float]):
    """[(variance, degrees of freedom)] of the two means' contributions to the variance
    of mean(other) - mean(base); a side with one repetition borrows the other side's
    spread; None when a side is empty or neither has two."""
    m, n = len(base_s), len(other_s)
    if m == 0 or n == 0 or (m < 2 and n < 2):
        return None
    var_b = variance(base_s) if m > 1 else None
    var_o = variance(other_s) if n > 1 else None
    df_b, df_o = m - 1, n - 1
    if var_b is None:
        var_b, df_b = var_o, n - 1
    if var_o is None:
        var_o, df_o = var_b, m - 1
    return [(var_b / m, df_b), (var_o / n, df_o)]


def pooled_spread(base_s: list[float], other_s: list[float]) -> float | None:
    """Pooled within-run standard deviation of two runs' values; None if neither has two."""
    dfs = [(len(v) - 1, variance(v)) for v in (base_s, other_s) if len(v) > 1]
    if not dfs:
        return None
    return math.sqrt(sum(d * v for d, v in dfs) / sum(d for d, _ in dfs))


def satterthwaite(parts) -> tuple[float, float]:
    """(standard error, degrees of freedom) of a sum of independent variance estimates
    [(variance, df)] (Welch–Satterthwaite)."""
    se2 = sum(v for v, _ in parts)
    denom = sum(v * v / d for v, d in parts if v > 0 and d > 0)
    return math.sqrt(se2), (se2 * se2 / denom if denom > 0 else float("inf"))


def welch(parts, between: Between | None = None) -> tuple[float, float]:
    """(standard error, degrees of freedom) of a log ratio from its within-run parts
    [(variance, df)] and the between-run part, if any: Satterthwaite's, the degrees of
    freedom capped at the between part's (an estimate from R runs knows the between-run
    part no better than R - 1 degrees of freedom allow, however many repetitions each
    run has; pooling a profile's rows, noise.moderate, adds what the other rows tell);
    the one rule for the tests and for the repetitions that would decide them.
    (Weighing the between part's degrees of freedom by the 95% upper bound of its run
    means' variance instead let a 3x slowdown with a 3-run history fail, but gave 8.7%
    A/A comparisons with a false verdict, stated 5%: bench/stats_claims.py 5, 9.)"""
    se, df = satterthwaite(parts + ([(between.var, between.df)] if between else []))
    return se, df if between is None else min(df, between.df)


def log_ratio_t(base_s: list[float], other_s: list[float], between: Between | None = None):
    """(estimate, standard error, degrees of freedom) of mean(other) - mean(base) of
    speed logs, Welch; with `between` its variance added (`welch`).  None without a
    within-run variance (one repetition on both sides)."""
    parts = variance_parts(base_s, other_s)
    if parts is None:
        return None
    se, df = welch(parts, between)
    return fmean(other_s) - fmean(base_s), se, df


def _t_p(t: float, df: float, alternative: str) -> float:
    if alternative == "greater":
        return t_sf(t, df)
    if alternative == "less":
        return t_cdf(t, df)
    return min(1.0, 2.0 * t_sf(abs(t), df))


def t_test(est: float, se: float, df: float, shift: float = 0.0,
           alternative: str = "two-sided") -> float:
    """p-value of est - shift against 0; an exact value (se 0) is certain either way."""
    if se == 0:
        d = est - shift
        hit = {"greater": d > 0, "less": d < 0}.get(alternative, d != 0)
        return 0.0 if hit else 1.0
    return _t_p((est - shift) / se, df, alternative)


def t_interval(est: float, se: float, df: float, level: float) -> tuple[float, float]:
    half = se * t_quantile(0.5 + level / 2.0, df) if se > 0 else 0.0
    return est - half, est + half


def tost_p(est: float, se: float, df: float, margin: float) -> float:
    """p-value of "the shift is outside +-log(1 + margin)" (two one-sided tests): at most
    alpha exactly when the (1 - 2 alpha) interval lies inside the margin."""
    bound = math.log1p(margin)
    return max(t_test(est, se, df, -bound, "greater"), t_test(est, se, df, bound, "less"))


# ---- one comparison -------------------------------------------------------------------

def rep_values(result) -> list[float]:
    """One value per repetition of a Result: the median of that repetition's samples."""
    by_rep: dict[int, list[float]] = {}
    for s in result.samples:
        by_rep.setdefault(s.rep, []).append(s.value)
    return [median(v) for _, v in sorted(by_rep.items())]


def metric_repetitions(results) -> list[float]:
    """Per-repetition speed logs of one metric: a point result's log repetition medians;
    a sweep's (one Result per x) mean over x of them, for the repetitions measured at
    every x.  Empty when a value is not positive."""
    per_x = []
    for r in results:
        by_rep: dict[int, list[float]] = {}
        for s in r.samples:
            by_rep.setdefault(s.rep, []).append(s.value)
        per_x.append({rep: median(v) for rep, v in by_rep.items()})
    if not per_x:
        return []
    out = []
    for rep in sorted(set.intersection(*(set(d) for d in per_x))):
        logs = speed_logs([d[rep] for d in per_x], results[0].better)
        if logs is None:
            return []
        out.append(fmean(logs))
    return out


SAME, CANNOT_TELL = "same", "cannot tell"


@dataclass
class Verdict:
    """Outcome of comparing one run's result with the baseline's."""
    ratio: float | None       # speed relative to baseline, > 1 = better (Hodges–Lehmann)
    p: float | None           # this comparison's own two-sided p-value (no difference)
    n_base: int
    n_other: int
    significant: bool
    word: str                 # better | worse | same | cannot tell | too few repetitions | no samples
    detail: str = ""
    ratio_low: float | None = None     # interval of the ratio ...
    ratio_high: float | None = None
    ratio_level: float | None = None   # ... and its level
    p_adjusted: float | None = None    # p after the correction over the comparison
    method: str = T_METHOD
    p_same: float | None = None        # TOST: the difference is outside +-margin
    margin: float = MARGIN
    direction: int = 0                 # +1 other better, -1 worse, 0 no difference seen
    shift: float | None = None         # Welch: mean difference of speed logs, its se, df
    se: float | None = None
    df: float | None = None
    spread: float | None = None        # pooled sd of the log repetition medians
    repetitions_needed: int | None = None   # per run, for "cannot tell"
    between: Between | None = None     # the between-run part the test included

    @property
    def decided(self) -> bool:
        return self.word in ("better", "worse", SAME)


def speed_ratio(base_median: float, other_median: float, better: str) -> float | None:
    """How much better `other` is than the baseline: > 1 better, < 1 worse."""
    if base_median is None or other_median is None or base_median <= 0 or other_median <= 0:
        return None
    return base_median / other_median if better == "lower" else other_median / base_median


def _g(x: float) -> str:
    return "%.4g" % x


def compare_values(base: list[float], other: list[float], better: str,
                   alpha: float = ALPHA, min_effect: float = MIN_EFFECT,
                   between: Between | None = None, level: float = 0.95,
                   margin: float = MARGIN) -> Verdict:
    """Verdict on per-repetition values of the baseline and another run, as if this were
    the only comparison made (osmeter.analysis.compare corrects for many and calls `decide`)."""
    m, n = len(base), len(other)
    if not m or not n:
        return Verdict(None, None, m, n, False, "no samples")
    bs, os_ = speed_logs(base, better), speed_logs(other, better)
    if bs is None or os_ is None:
        return decide(_rank_verdict(base, other, better), alpha, min_effect)
    method = T_NOISE_METHOD if between is not None else T_METHOD
    est = hodges_lehmann(bs, os_)
    fit = log_ratio_t(bs, os_, between)
    if fit is None:
        return Verdict(math.exp(est), None, m, n, False, "too few repetitions",
                       "one repetition on each side: the within-run spread is unknown",
                       method=method, margin=margin)
    shift, se, df = fit
    lo, hi = t_interval(shift, se, df, level)
    v = Verdict(math.exp(est), t_test(shift, se, df), m, n, False, "", "",
                math.exp(lo), math.exp(hi), level, method=method,
                p_same=tost_p(shift, se, df, margin), margin=margin,
                direction=(shift > 0) - (shift < 0), shift=shift, se=se, df=df,
                spread=pooled_spread(bs, os_), between=between)
    return decide(v, alpha, min_effect)


def _rank_verdict(base: list[float], other: list[float], better: str) -> Verdict:
    """Values not all positive (a loss of 0 %, a time below resolution): no ratio; the
    exact rank test on the values, oriented so that larger is better."""
    m, n = len(base), len(other)
    text = "%s vs %s: no ratio" % (_g(median(base)), _g(median(other)))
    if len(set(base) | set(other)) == 1:
        return Verdict(None, 1.0, m, n, False, "", "every repetition %s in both runs"
                       % _g(base[0]), method=RANK_METHOD, p_same=0.0)
    sign = 1.0 if better == "higher" else -1.0
    o, b = [sign * x for x in other], [sign * x for x in base]
    _, p = mann_whitney_u(o, b)
    d = median(o) - median(b)
    return Verdict(None, p, m, n, False, "", text, method=RANK_METHOD,
                   direction=(d > 0) - (d < 0))


def decide(v: Verdict, alpha: float, min_effect: float) -> Verdict:
    """The word from the (corrected, where set) p-value and the effect's size: better /
    worse needs q <= alpha and a difference of at least min_effect; "same" needs the
    TOST p at most alpha (the (1 - 2 alpha) interval inside +-margin)."""
    if v.word in ("too few repetitions", "no samples"):
        return v
    q = v.p_adjusted if v.p_adjusted is not None else v.p
    q_same = v.p_same           # each row's own claim: see osmeter.analysis.compare
    big = v.ratio is None or abs(v.ratio - 1.0) >= min_effect
    same_side = v.ratio is None or (v.ratio - 1.0) * v.direction > 0
    v.significant = q is not None and q <= alpha and big and v.direction != 0 and same_side
    no_ratio = v.detail if v.ratio is None and v.detail.endswith("no ratio") else ""
    if v.significant:
        v.word, v.detail = ("better" if v.direction > 0 else "worse"), no_ratio
    elif q_same is not None and q_same <= alpha:
        v.word = SAME
        v.detail = v.detail if v.ratio is None else "within +-%g%%" % (100 * v.margin)
    else:
        v.word = CANNOT_TELL
        v.detail = no_ratio or (
            "difference below %g%%" % (100 * min_effect) if q is not None and q <= alpha
            else "p=%s alone, q=%s over the questions" % (p_value(v.p), p_value(q))
            if v.p is not None and v.p <= alpha and q is not None
            else "noisier than +-%g%%" % (100 * v.margin))
    return v


MAX_REPETITIONS = 100000     # beyond this "~N repetitions" says nothing useful


def repetitions_needed(spread: float | None, margin: float, alpha: float,
                       between: Between | None = None, power: float = 0.8,
                       both_sides: bool = False) -> int | None:
    """Repetitions per run (both runs alike) with which a row of this within-run spread
    (sd of log repetition medians), when nothing differs, shows a difference of `margin`
    excluded at one-sided level alpha with probability `power`: one side (the gate's
    "not slower by margin"), or both (`both_sides`: "same within +-margin", two one-sided
    tests, which at zero difference need each side at (1 + power) / 2).  Welch's
    standard error and degrees of freedom as the test computes them (`welch`), the t
    quantiles at those degrees of freedom.  None when between-run noise alone is too
    large for any number."""
    if spread is None or margin <= 0:
        return None
    side_power = (1.0 + power) / 2.0 if both_sides else power
    delta = math.log1p(margin)

    def enough(n: int) -> bool:
        v = spread * spread / n
        se, df = welch([(v, n - 1), (v, n - 1)], between)
        if se == 0:
            return True
        # The power's quantile at the profile's own degrees of freedom: the between-run
        # part of the standard error is as uncertain as its estimate (bench section 10).
        power_df = df if between is None else min(df, between.df)
        return (t_quantile(1.0 - alpha, df) + t_quantile(side_power, power_df)) * se <= delta

    if not enough(MAX_REPETITIONS):
        return None
    lo, hi = 1, 2                 # enough(hi) after the doubling; not enough(lo)
    while not enough(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def repetitions_to_decide(spread: float | None, margin: float, alpha: float,
                          between: Between | None = None, power: float = 0.8) -> int | None:
    """Repetitions per run with which a row of this spread that does not differ is
    called "same within +-margin" with probability `power` (TOST at alpha)."""
    return repetitions_needed(spread, margin, alpha, between, power, both_sides=True)


# ---- the gate's questions -------------------------------------------------------------

@dataclass
class Slowdown:
    """How much slower `other` is than the baseline.  Percentages: > 0 = slower (more
    time, less rate)."""
    estimate_pct: float            # Hodges–Lehmann, as the comparison's ratio
    low_pct: float                 # (1 - 2 alpha) interval of the slowdown
    high_pct: float
    level: float
    p_not_slower: float            # H0: slowdown >= threshold (one-sided t)
    p_slower: float                # H0: not slower (one-sided t): the gate's fail test
    spread: float | None           # pooled within-run sd of log repetition medians
    method: str


def _slowdown_pct(speed_log_shift: float) -> float:
    return 100.0 * (math.exp(-speed_log_shift) - 1.0)


def slowdown_interval(v: Verdict, level: float) -> tuple[float, float]:
    """(low, high) of the slowdown in percent at this two-sided level (Welch)."""
    lo, hi = t_interval(v.shift, v.se, v.df, level)
    return _slowdown_pct(hi), _slowdown_pct(lo)


def slowdown(v: Verdict, pct: float, alpha: float) -> Slowdown | None:
    """The gate's view of a verdict: the slowdown, its (1 - 2 alpha) interval and the
    one-sided tests of "slower by pct or more" and of "slower"; None without a ratio or
    a spread."""
    if v.ratio is None or v.shift is None:
        return None
    level = 1.0 - 2.0 * alpha
    low, high = slowdown_interval(v, level)
    delta = math.log1p(pct / 100.0)
    return Slowdown(_slowdown_pct(math.log(v.ratio)), low, high,
                    level, t_test(v.shift, v.se, v.df, -delta, "greater"),
                    t_test(v.shift, v.se, v.df, 0.0, "less"), v.spread, v.method)


def repetitions_to_tell(pct: float, spread: float | None, alpha: float,
                        between: Between | None = None, power: float = 0.8) -> int | None:
    """Repetitions per run with which an unchanged row passes the gate at pct with
    probability `power` (its upper bound below pct at one-sided level alpha; normal
    `repetitions_needed`).  None when between-run noise alone is too large for any
    number."""
    if pct <= 0:
        return None
    return repetitions_needed(spread, pct / 100.0, alpha, between, power)


# ---- many comparisons at once ---------------------------------------------------------

def benjamini_hochberg(pvalues: list[float]) -> list[float]:
    """Adjusted p-values (q-values) controlling the false-discovery rate: reject where
    q <= alpha and at most a fraction alpha of the rejections are expected to be false."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        out[i] = min(1.0, running)
    return out


def simes(pvalues: list[float]) -> float:
    """Simes' p-value of "none of these hypotheses is false": min over i of p(i) m / i
    (valid for independent or positively dependent tests, as a benchmark's rows are)."""
    m = len(pvalues)
    return min(1.0, min(p * m / (i + 1) for i, p in enumerate(sorted(pvalues))))


def benjamini_bogomolov(families: list[list[float]], q: float) -> tuple[list[list[float]], int]:
    """Selective inference over families of p-values (Benjamini & Bogomolov 2014):
    a family's p is Simes' over its tests, Benjamini–Hochberg at q over the families
    selects R of the m families, and inside each selected family Benjamini–Hochberg runs
    at q R / m.  The expected share of false discoveries among the families selected is
    at most q (so: with no real difference anywhere, the chance of any verdict is at most
    q), and so is the average over selected families of their share of false verdicts.

    Returns (per family, per test: a value that is <= q exactly when the test is
    rejected, the larger of its family's BH-adjusted Simes p and its BH-adjusted p
    within the family scaled by m / R; and R)."""
    m = len(families)
    if m == 0:
        return [], 0
    fam_q = benjamini_hochberg([simes(f) if f else 1.0 for f in families])
    selected = sum(1 for x in fam_q if x <= q)
    out = []
    for f, fq in zip(families, fam_q):
        inside = benjamini_hochberg(f) if f else []
        scale = m / selected if selected else 1.0      # none selected: fq > q anyway
        out.append([min(1.0, max(fq, x * scale)) for x in inside])
    return out, selected


def geometric_mean(values: list[float]) -> float | None:
    vals = [v for v in values if v is not None and v > 0]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))
