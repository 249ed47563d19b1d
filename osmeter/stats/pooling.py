"""Pooling the variances of many rows (empirical Bayes, as limma's moderated variances,
Smyth 2004), for the between-run noise of a profile's rows (analysis/noise.py) and the
run-to-run noise of a history's series (analysis/history.py).

Each row's variance s^2 is estimated with only k degrees of freedom (runs - 1, or
runs - 2 around a step).  Rows that measure alike things are alike in noise: a prior
for each row's variance, a trend on the log scale over a covariate (its within-run
spread: a row noisier inside a run is noisier between runs), with d0 degrees of freedom,
the more the rows' estimates are more alike than their chance spread allows.  A row
then weighs its own estimate and the prior by their degrees of freedom.

Measured by simulation (bench/stats_claims.py sections 9 and 11; bench/history_claims.py
--short): too few rows say too little about how alike they are; rows whose spreads differ
more than a prior of one shape allows (d0 below MIN_D0) are not pooled (pooled,
log-normally unlike rows gave 6.5% of A/A comparisons a false verdict; at 3, 1.0% and 3.0%
with 3- and 5-run profiles, and a 3x slowdown with a 3-run profile failed the gate in
95.7%, 94.0% at 4); a row whose own variance is this unlikely under its kind's (robust,
as limma's robust=TRUE) keeps its own.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import fmean

from .distributions import chi2_quantile, digamma, f_sf, trigamma, trigamma_inverse

MIN_ROWS = 8
MIN_D0 = 3.0
MAX_DF = 100.0
CONFIDENCE = 0.5      # the residuals' variance at its chi-square median
OUTLIER = 0.05        # a row whose variance is this unlikely under its prior keeps its own
MAX_GAIN = 1.0        # a row takes from the prior at most this many times its own df


@dataclass
class Prior:
    """What the rows tell of each row's variance: d0 degrees of freedom, and per row the
    prior variance (None for a row noisier than its kind, which keeps its own)."""
    d0: float
    scale: list[float | None]


def prior(variances: list[float], dfs: list[float], covariate: list[float],
          own: list[tuple[float, float]] | None = None, refit: bool = False,
          min_d0: float = MIN_D0) -> Prior | None:
    """The prior of rows with variances `variances` (each positive, with `dfs` degrees of
    freedom) and within-run spreads `covariate`; None with fewer than MIN_ROWS rows, or
    when they are too unlike for one (d0 < min_d0, d0 then is the Prior's, scale empty).
    `own`: (variance, df) per row to judge whether it is noisier than its kind, where
    that differs from what the prior is fitted on (a history's series: its noise around
    a step it may hold).  `refit`: fitted once more without the rows the first fit finds
    noisier than their kind (a history's series that hold a step would otherwise make
    all the others look unlike, and nothing would be pooled).  A profile's rows are not
    refitted: on the rows of real runs, refitted, 6.5% of A/A comparisons with a 5-run
    profile gave a false verdict (bench/stats_claims.py section 11)."""
    if len(variances) < MIN_ROWS:
        return None
    # log s^2 less its mean under chi-square sampling: an estimate of log sigma^2
    e = [math.log(v) - digamma(k / 2) + math.log(k / 2) for v, k in zip(variances, dfs)]
    fitted = list(range(len(e)))
    for _ in range(2 if refit else 1):
        d0, prior_of = _fit([e[i] for i in fitted], [dfs[i] for i in fitted],
                            [covariate[i] for i in fitted])
        scale = [prior_of(w) for w in covariate]
        rest = [i for i, (v, k, s0) in enumerate(zip(variances, dfs, scale))
                if f_sf(v / s0, k, d0) >= OUTLIER]
        if rest == fitted or len(rest) < MIN_ROWS:
            break
        fitted = rest
    if d0 < min_d0:
        return Prior(d0, [])
    own = own or list(zip(variances, dfs))
    return Prior(d0, [None if f_sf(v / s0, k, d0) < OUTLIER else s0
                      for (v, k), s0 in zip(own, scale)])


def gain(d0: float, df: float) -> float:
    """The degrees of freedom a row with df of its own takes from a prior worth d0: its
    own residuals keep a say in how noisy it is, which keeps heavy-tailed runs from false
    verdicts and alarms (bench/stats_claims.py section 11, bench/history_claims.py
    --short)."""
    return min(d0, MAX_GAIN * df)


def _fit(e: list[float], dfs: list[float], covariate: list[float]):
    """d0, and the prior variance as a function of a row's covariate, from rows' e."""
    line, nparam = _trend(e, covariate)
    resid = [a - line(w) for a, w in zip(e, covariate)]
    # The rows' spread beyond what chance gives each row's estimate.
    spread = sum(r * r for r in resid) / chi2_quantile(1 - CONFIDENCE, len(e) - nparam)
    excess = spread - fmean(trigamma(k / 2) for k in dfs)
    d0 = MAX_DF if excess <= 0 else min(MAX_DF, 2 * trigamma_inverse(excess))
    # the prior's scale from its own d0
    return d0, lambda w: math.exp(line(w) + digamma(d0 / 2) - math.log(d0 / 2))


def _trend(e: list[float], covariate: list[float]):
    """The least-squares line of e on log(covariate), as a function of a covariate, or
    e's mean when the covariate does not vary (or is 0 somewhere); with the number of
    parameters fitted."""
    me = fmean(e)
    if all(w > 0 for w in covariate):
        x = [math.log(w) for w in covariate]
        mx = fmean(x)
        sxx = sum((a - mx) ** 2 for a in x)
        if sxx > 0:
            b = sum((a - mx) * (y - me) for a, y in zip(x, e)) / sxx
            return (lambda w: me + b * (math.log(w) - mx) if w > 0 else me), 2
    return (lambda w: me), 1
