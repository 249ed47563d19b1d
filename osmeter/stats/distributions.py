"""The few probability distributions osmeter needs and the standard library lacks.

* Binomial(n, 1/2): the coverage of an interval between two order statistics.
* Student's t (any positive, also fractional, degrees of freedom): tests and intervals
  on the log scale once between-run noise is part of the variance.
* Chi-square: how far a spread estimated from n repetitions strays above the true one
  (the limit beyond which a result is imprecise, osmeter/analysis/precision.py).
* Digamma and trigamma: the mean and variance of the log of a chi-square variable, with
  which between-run variances of many rows are pooled (osmeter/analysis/noise.py).

The t distribution goes through the regularised incomplete beta function, evaluated by
its continued fraction (Lentz's method), which converges fast everywhere it is used.
"""
from __future__ import annotations

import math
from statistics import NormalDist

_STANDARD_NORMAL = NormalDist()


def binomial_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), exact."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n


def normal_quantile(p: float) -> float:
    return _STANDARD_NORMAL.inv_cdf(p)


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    tiny, eps = 1e-300, 3e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with df degrees of freedom."""
    if math.isinf(df):
        return _STANDARD_NORMAL.cdf(t)
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_sf(t: float, df: float) -> float:
    """P(T > t), accurate in the far tail too."""
    return t_cdf(-t, df)


def t_pdf(t: float, df: float) -> float:
    log_c = math.lgamma((df + 1) / 2.0) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1) / 2.0 * math.log1p(t * t / df))


def t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p: Newton's method from the normal quantile, kept inside a
    bracket that bisection narrows when a step would leave it."""
    if not 0.0 < p < 1.0:
        raise ValueError("quantile of p=%r" % p)
    if math.isinf(df):
        return normal_quantile(p)
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    t = min(max(normal_quantile(p), lo), hi)
    for _ in range(100):
        f = t_cdf(t, df) - p
        if abs(f) < 1e-14:
            break
        if f < 0:
            lo = t
        else:
            hi = t
        step = t - f / t_pdf(t, df)
        t = step if lo < step < hi else (lo + hi) / 2.0
        if hi - lo < 1e-13 * max(1.0, hi):
            break
    return t


def _lower_gamma_regularised(a: float, x: float) -> float:
    """P(a, x), the regularised lower incomplete gamma function: its series below a + 1,
    its continued fraction (Lentz) above."""
    if x <= 0.0:
        return 0.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        n = a
        for _ in range(1000):
            n += 1.0
            term *= x / n
            total += term
            if abs(term) < abs(total) * 3e-16:
                break
        return math.exp(log_front) * total
    tiny = 1e-300
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        if abs(d * c - 1.0) < 3e-16:
            break
    return 1.0 - math.exp(log_front) * h


def chi2_cdf(x: float, df: float) -> float:
    """P(X <= x) for X ~ chi-square with df degrees of freedom."""
    return _lower_gamma_regularised(df / 2.0, x / 2.0)


def chi2_quantile(p: float, df: float) -> float:
    """The x with P(X <= x) = p, by bisection (monotone, and only needed for a few df)."""
    if not 0.0 < p < 1.0:
        raise ValueError("quantile of p=%r" % p)
    lo, hi = 0.0, max(1.0, df)
    while chi2_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if chi2_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


def f_sf(f: float, d1: float, d2: float) -> float:
    """P(X > f) for X ~ F(d1, d2)."""
    if f <= 0:
        return 1.0
    return incomplete_beta(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f))


def digamma(x: float) -> float:
    """psi(x) = d/dx log Gamma(x), x > 0: recurrence up to 6, then the asymptotic series."""
    out = 0.0
    while x < 6.0:
        out -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    return out + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f / 240)))


def trigamma(x: float) -> float:
    """psi'(x), x > 0: recurrence up to 6, then the asymptotic series."""
    out = 0.0
    while x < 6.0:
        out += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    return out + 1.0 / x + f / 2.0 + f / x * (1 / 6 - f * (1 / 30 - f * (1 / 42 - f / 30)))


def trigamma_inverse(y: float) -> float:
    """The x > 0 with trigamma(x) = y (trigamma decreases from infinity to 0), by
    bisection on a log scale."""
    if y <= 0:
        raise ValueError("trigamma takes only positive values, not %r" % y)
    lo, hi = 1e-8, 1.0
    while trigamma(hi) > y:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if trigamma(mid) > y else (lo, mid)
        if hi / lo < 1 + 1e-12:
            break
    return math.sqrt(lo * hi)
