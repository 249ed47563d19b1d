"""Scalability curves: how the cost of one operation grows with the population.

`classify(points)` says whether a curve of (population, cost) points is constant,
logarithmic, linear or worse, with the fitted cost per added object, how well the fit
explains the curve and how much the cost grows over the range.  A curve is called
non-constant only when its growth is both beyond the noise and large enough to matter:
the fitted cost at least doubles (or halves) over the range.  A smaller drift (bind
rising from 2.1 to 3.5 µs over 10,000 ports) is O(1) with its trend and growth factor
reported beside the class.  `summarize_scatter(samples)` does that for every repetition of a
scatter result and for all of them together, and flags repetitions that disagree and
costs that fall into two bands (Linux 2.4's fork alternated between two curves).

Robust by construction and without numpy: the points are sorted by x and cut into bins
of equal count, and every fit is a Theil-Sen line through the bins' medians, so a few
outliers (an interrupt, a page-cache miss) or one odd bin (the cold start of a curve)
cannot pull it; yet every point is kept and outliers are counted.
"""
from __future__ import annotations

import math
from collections import defaultdict

CONSTANT, LOG, LINEAR, WORSE, DECREASING = "O(1)", "O(log n)", "O(n)", "O(n^2)/worse", \
    "decreasing"
INSUFFICIENT = "insufficient data"

MIN_POINTS = 8         # fewer points than this are not a curve
MAX_BINS = 30
REL_RISE = 0.10        # a change below 10% of the typical cost over the range is "constant"
MIN_GROWTH = 2.0       # ... as is one that less than doubles (halves) the cost over the range
Z = 3.0                # ... as is one within 3 standard errors of the noise
PREFER_LINEAR = 0.8    # log or n^2 must cut the linear fit's residual by 20% to win
OUTLIER_MADS = 10.0    # a point this many robust deviations from its bin's median

# How each growth model bends x: cost = a + b * f(x).
_MODELS = {
    LOG: lambda x: math.log2(1.0 + max(x, 0.0)),
    LINEAR: lambda x: float(x),
    WORSE: lambda x: float(x) * float(x),
}


# ---- small robust statistics ---------------------------------------------------------

def _median(values):
    v = sorted(values)
    n = len(v)
    if n == 0:
        raise ValueError("median of nothing")
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def _mad(values, med=None):
    """Median absolute deviation scaled to a standard deviation for normal data."""
    med = _median(values) if med is None else med
    return 1.4826 * _median([abs(v - med) for v in values])


def _finite(v):
    return v if v is not None and math.isfinite(v) else None


def bin_medians(points, bins=None):
    """Sort by x, cut into equal-count bins; per bin: median x, median y, standard error
    of that median (from the bin's MAD), count and the robust spread."""
    pts = sorted((float(x), float(y)) for x, y in points)
    n = len(pts)
    k = bins or max(3, min(MAX_BINS, n // 10))
    k = min(k, n)
    out = []
    for i in range(k):
        chunk = pts[i * n // k:(i + 1) * n // k]
        if not chunk:
            continue
        ys = [y for _, y in chunk]
        my = _median(ys)
        spread = _mad(ys, my)
        out.append({"x": _median([x for x, _ in chunk]), "y": my, "n": len(chunk),
                    "spread": spread, "se": 1.2533 * spread / math.sqrt(len(chunk))})
    return out


def _fit(xs, ys, f):
    """cost = a + b*f(x) on the bin medians, by Theil-Sen (b is the median of the slopes
    between every pair of bins, so one odd bin - the cold start of a curve - cannot tilt
    it): a, b, SSE, se(b) from the residuals, and the range of f."""
    fx = [f(x) for x in xs]
    k = len(xs)
    slopes = [(ys[j] - ys[i]) / (fx[j] - fx[i])
              for i in range(k) for j in range(i + 1, k) if fx[j] != fx[i]]
    if not slopes:
        return None
    b = _median(slopes)
    a = _median([y - b * v for v, y in zip(fx, ys)])
    mf = sum(fx) / k
    sff = sum((v - mf) ** 2 for v in fx)
    sse = sum((y - a - b * v) ** 2 for v, y in zip(fx, ys))
    se_b = math.sqrt(sse / (k - 2) / sff) if k > 2 and sff > 0 else float("inf")
    return {"a": a, "b": b, "sse": sse, "se_b": se_b, "f_min": min(fx), "f_max": max(fx)}


# ---- one curve -----------------------------------------------------------------------

def classify(points, detect_bands=True):
    """Classify a list of (x, y) points: growth class, cost per added object, fit quality.

    Returns a JSON-serialisable dict; "class" is one of O(1), O(log n), O(n),
    O(n^2)/worse, decreasing, or "insufficient data".
    """
    pts = [(float(x), float(y)) for x, y in points
           if x is not None and y is not None and math.isfinite(x) and math.isfinite(y)]
    result = {"class": INSUFFICIENT, "n_points": len(pts)}
    xs_all = {x for x, _ in pts}
    if len(pts) < MIN_POINTS or len(xs_all) < 3:
        return result
    bins = bin_medians(pts)
    xs, ys = [b["x"] for b in bins], [b["y"] for b in bins]
    level = _median([y for _, y in pts])
    ref = abs(level) if level else max(abs(y) for y in ys) or 1.0
    my = sum(ys) / len(ys)
    sst = sum((y - my) ** 2 for y in ys)
    # Noise of one bin median, and the noise of a difference between two of them.
    bin_se = _median([b["se"] for b in bins])

    fits = {name: _fit(xs, ys, f) for name, f in _MODELS.items()}
    fits = {k: v for k, v in fits.items() if v}
    if LINEAR not in fits:
        return result
    r2 = {CONSTANT: 0.0}
    for name, fit in fits.items():
        r2[name] = 1.0 - fit["sse"] / sst if sst > 0 else 1.0

    # Linear unless log or n^2 explains the bins clearly better.
    best = LINEAR
    for name in (LOG, WORSE):
        if name in fits and fits[name]["sse"] < PREFER_LINEAR * fits[best]["sse"]:
            best = name
    fit = fits[best]
    span = fit["f_max"] - fit["f_min"]
    rise = fit["b"] * span
    rise_se = math.sqrt((fit["se_b"] * span) ** 2 + 2 * bin_se ** 2) \
        if math.isfinite(fit["se_b"]) else float("inf")
    significant = abs(rise) > Z * rise_se and abs(rise) > REL_RISE * ref
    trend = DECREASING if rise < 0 else best
    trend_fit = (fits[LINEAR], _MODELS[LINEAR]) if rise < 0 else (fit, _MODELS[best])
    growth = _growth(trend_fit, min(xs_all), max(xs_all), ys)
    matters = growth is not None and (growth >= MIN_GROWTH or growth <= 1.0 / MIN_GROWTH)
    cls = trend if significant and matters else CONSTANT

    lin = fits[LINEAR]
    lin_rise = lin["b"] * (lin["f_max"] - lin["f_min"])
    x_min, x_max = min(xs_all), max(xs_all)
    result.update({
        "class": cls,
        "bins": len(bins),
        "x_min": x_min,
        "x_max": x_max,
        "level": level,                          # median cost over the whole curve
        "start": ys[0],                          # median cost in the first bin
        "end": ys[-1],                           # ... and in the last
        "rise": rise if significant else lin_rise,   # fitted change over the range
        "rise_rel": (rise if significant else lin_rise) / ref,
        "growth": growth,                        # fitted cost at x_max / at x_min
        "trend": trend if significant else CONSTANT,   # the shape, whether it matters or not
        "slope_per_object": lin["b"],            # ns per added object (linear fit)
        "slope_se": _finite(lin["se_b"]),
        "per_doubling": fits[LOG]["b"] if LOG in fits else None,
        "quad_coef": fits[WORSE]["b"] if WORSE in fits else None,
        "r2": {k: round(v, 6) for k, v in r2.items()},
        "noise": bin_se,
    })
    if cls == CONSTANT:
        result["cost"], result["cost_unit"] = level, "per operation"
        # R^2 means nothing for a flat line: how far the bins stray from it instead.
        result["fit"] = {"measure": "cv of bin medians",
                         "value": round(math.sqrt(sst / len(ys)) / ref, 6)}
    elif cls == LOG:
        result["cost"], result["cost_unit"] = fit["b"], "per doubling"
    elif cls == WORSE:
        # The marginal cost of one more object at the end of the curve.
        result["cost"], result["cost_unit"] = 2 * fit["b"] * x_max, "per object at x_max"
    else:
        result["cost"], result["cost_unit"] = lin["b"], "per object"
    if cls != CONSTANT:
        result["fit"] = {"measure": "R^2 of bin medians",
                         "value": round(r2.get(cls, r2[LINEAR]), 6)}
    # The fitted curve as a polyline through the bins, for plots: the trend where there is
    # one beyond the noise, even when it is too small to change the class.
    if not significant:
        result["fit_points"] = [[x_min, level], [x_max, level]]
    else:
        model, f = trend_fit
        result["fit_points"] = [[x, model["a"] + model["b"] * f(x)] for x in xs]

    # Outliers are kept and counted, never dropped.
    outliers = 0
    edges = _bin_lookup(bins)
    for x, y in pts:
        b = bins[edges(x)]
        if b["spread"] > 0 and abs(y - b["y"]) > OUTLIER_MADS * b["spread"]:
            outliers += 1
    result["outliers"] = outliers

    if detect_bands:
        bands = detect_bimodal(pts)
        if bands:
            result["bimodal"] = bands
    return _clean(result)


def _growth(trend_fit, x_min, x_max, ys):
    """How many times the cost grows over the range: the fitted curve's value at x_max
    over its value at x_min (the first and last bins' medians where the fit is not
    positive at both ends)."""
    model, f = trend_fit
    start, end = model["a"] + model["b"] * f(x_min), model["a"] + model["b"] * f(x_max)
    if start <= 0 or end <= 0:
        start, end = ys[0], ys[-1]
    return end / start if start > 0 and end > 0 else None


def _bin_lookup(bins):
    """x -> index of the bin whose median x is nearest."""
    centres = [b["x"] for b in bins]

    def find(x):
        lo, hi = 0, len(centres) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if centres[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        if lo > 0 and abs(centres[lo - 1] - x) <= abs(centres[lo] - x):
            return lo - 1
        return lo
    return find


def _otsu(values, min_share):
    """Index splitting sorted values into two groups with the largest between-group
    variance, each group holding at least `min_share` of them."""
    n = len(values)
    prefix = [0.0]
    for v in values:
        prefix.append(prefix[-1] + v)
    total = prefix[-1]
    lo = max(1, int(min_share * n))
    best, cut = -1.0, None
    for i in range(lo, n - lo + 1):
        m1, m2 = prefix[i] / i, (total - prefix[i]) / (n - i)
        between = i * (n - i) * (m1 - m2) ** 2
        if between > best:
            best, cut = between, i
    return cut


def detect_bimodal(pts, min_share=0.1, min_ratio=1.15, min_separation=6.0):
    """Do the costs fall into two bands (a fast and a slow curve)?

    Within each bin of about 100 neighbouring x, the logarithms of the costs are split in
    two where the split separates them best (Otsu).  Two bands means: the gap between the
    two groups' medians is at least `min_separation` times their robust spread (one band
    split in two gives 2-4 for normal, log-normal and heavy-tailed costs), the bands
    differ by a factor of at least `min_ratio`, and each holds at least `min_share` of all
    points.  Each band is then classified on its own: Linux 2.4's fork alternated between
    an O(1) and an O(n) band.  Returns None or a dict describing the bands.
    """
    pts = sorted((x, y) for x, y in pts if y > 0)
    n = len(pts)
    if n < 100:
        return None
    k = max(1, min(MAX_BINS, n // 100))
    low, high, seps, gaps = [], [], [], []
    for i in range(k):
        chunk = sorted((math.log(y), x, y) for x, y in pts[i * n // k:(i + 1) * n // k])
        logs = [v for v, _, _ in chunk]
        cut = _otsu(logs, min_share)
        if cut is None:
            continue
        lo, hi = logs[:cut], logs[cut:]
        gap = _median(hi) - _median(lo)
        spread = 0.5 * (_mad(lo) + _mad(hi))
        seps.append(gap / spread if spread > 0 else float("inf"))
        gaps.append(gap)
        low += [(x, y) for _, x, y in chunk[:cut]]
        high += [(x, y) for _, x, y in chunk[cut:]]
    if not seps:
        return None
    separation, ratio = _median(seps), math.exp(_median(gaps))
    share = len(low) / n
    if separation < min_separation or ratio < min_ratio or \
            not min_share <= share <= 1 - min_share:
        return None
    bands = []
    for group in (low, high):
        c = classify(group, detect_bands=False)
        bands.append({"share": round(len(group) / n, 4), "class": c["class"],
                      "level": c.get("level"), "cost": c.get("cost"),
                      "cost_unit": c.get("cost_unit"), "fit": c.get("fit")})
    return {"ratio": ratio, "separation": separation, "bands": bands}


def _clean(obj):
    """JSON-safe: no NaN or infinity (they become None)."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


# ---- text ------------------------------------------------------------------------------

def _fmt_ns(v):
    a = abs(v)
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if a >= scale:
            return "%.3g %s" % (v / scale, unit)
    return "%.3g ns" % v


def _singular(x_name):
    if not x_name:
        return "object"
    if x_name.endswith("sses"):
        return x_name[:-2]
    if x_name.endswith("s"):
        return x_name[:-1]
    return x_name


def describe(c, x_name=None, unit="ns"):
    """One line, e.g. 'O(n), +38 ns per process'."""
    cls = c.get("class")
    one = _singular(x_name)
    fmt = _fmt_ns if unit == "ns" else (lambda v: "%.3g %s" % (v, unit))
    if cls == INSUFFICIENT or "cost" not in c:
        return cls or INSUFFICIENT
    growth = c.get("growth")
    over = " (×%.3g over the range)" % growth if growth else ""
    if cls == CONSTANT:
        text = "O(1), %s per operation" % fmt(c["cost"])
        if c.get("trend") not in (None, CONSTANT) and growth:
            text += " (×%.3g over the range: a %s trend, less than %s)" % (
                growth, c["trend"], "doubling" if growth >= 1 else "halving")
    elif cls == LOG:
        text = "O(log n), +%s per doubling of %s%s" % (fmt(c["cost"]), x_name or "objects", over)
    elif cls == WORSE:
        text = "O(n^2)/worse, +%s per %s at %d (%s at the start, %s at the end)" % (
            fmt(c["cost"]), one, c["x_max"], fmt(c["start"]), fmt(c["end"]))
    elif cls == DECREASING:
        text = "decreasing, %s per %s%s" % (fmt(c["cost"]), one, over)
    else:
        text = "O(n), +%s per %s%s" % (fmt(c["cost"]), one, over)
    if c.get("bimodal"):
        text += " (two bands, %.2gx apart)" % c["bimodal"]["ratio"]
    return text


# ---- every repetition of a scatter result ---------------------------------------------

def _differ(a, b, key, se_key, rel):
    """Two estimates differ beyond their noise and by more than `rel` of the larger."""
    va, vb = a.get(key), b.get(key)
    if va is None or vb is None:
        return False
    sa, sb = a.get(se_key) or 0.0, b.get(se_key) or 0.0
    gap = abs(va - vb)
    return gap > Z * math.sqrt(sa * sa + sb * sb) and gap > rel * max(abs(va), abs(vb))


def summarize_scatter(samples, x_name=None, unit="ns"):
    """Classify each repetition and all of them together; flag disagreement.

    samples: osmeter.data.model.Sample (rep, x, value) of one scatter result.
    """
    by_rep = defaultdict(list)
    for s in samples:
        if s.x is not None:
            by_rep[s.rep].append((s.x, s.value))
    all_points = [p for pts in by_rep.values() for p in pts]
    overall = classify(all_points)
    reps = {rep: classify(pts) for rep, pts in sorted(by_rep.items())}
    disagreements = []
    valid = {r: c for r, c in reps.items() if c["class"] != INSUFFICIENT}
    ids = list(valid)
    # Different classes count when the slopes behind them differ beyond the noise too;
    # otherwise two curves merely fell on either side of a threshold.
    if any(valid[a]["class"] != valid[b]["class"] and
           _differ(valid[a], valid[b], "slope_per_object", "slope_se", 0.0)
           for i, a in enumerate(ids) for b in ids[i + 1:]):
        disagreements.append("repetitions differ in class: " + ", ".join(
            "rep %s %s" % (r, c["class"]) for r, c in valid.items()))
    for i, ra in enumerate(ids):
        for rb in ids[i + 1:]:
            a, b = valid[ra], valid[rb]
            span = max(a["x_max"] - a["x_min"], b["x_max"] - b["x_min"], 1.0)
            # A slope difference matters when it changes the cost over the range by >10%.
            ref = max(abs(a["level"]), abs(b["level"]), 1e-12)
            if _differ(a, b, "slope_per_object", "slope_se", 0.25) and \
                    abs(a["slope_per_object"] - b["slope_per_object"]) * span > REL_RISE * ref:
                disagreements.append("rep %s and rep %s: slopes %s and %s per %s" % (
                    ra, rb, _fmt_ns(a["slope_per_object"]), _fmt_ns(b["slope_per_object"]),
                    _singular(x_name)))
    if len(valid) >= 2:
        med_level = _median([c["level"] for c in valid.values()])
        for r, c in valid.items():
            if med_level and abs(c["level"] - med_level) > 0.25 * abs(med_level) and \
                    abs(c["level"] - med_level) > Z * math.sqrt(2) * (c.get("noise") or 0):
                disagreements.append("rep %s: typical cost %s vs %s for the repetitions' "
                                     "median" % (r, _fmt_ns(c["level"]), _fmt_ns(med_level)))
    for r, c in valid.items():
        if c.get("bimodal"):
            disagreements.append("rep %s: costs fall into two bands %.2gx apart" % (
                r, c["bimodal"]["ratio"]))
    out = {
        "class": overall["class"],
        "description": describe(overall, x_name, unit),
        "fit_points": overall.get("fit_points"),   # the fitted curve, for plots
        "all": overall,
        "reps": {str(r): dict(c, description=describe(c, x_name, unit)) for r, c in reps.items()},
        "agree": not disagreements,
        "disagreements": disagreements,
    }
    return _clean(out)
