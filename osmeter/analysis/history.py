"""A benchmark's history over many stored runs, and where it changed.

The unit is one run: a run's median (of its repetitions) is one point of the series, in
the order the runs started.  Repetitions of one run share that run's conditions (boot,
placement, neighbours), so runs differ by more than their repetitions do; a test that
took every repetition as a point of its own would see a change at every run-to-run
wobble (bench/history_claims.py measures it: 'pooled repetitions' in docs/history.md).
The repetitions are kept to draw each run's spread.

Finding the changes (`analyse`), on the logarithm of the medians (a change is a ratio):

1. The noise: sigma from the median absolute difference of neighbouring runs, which a
   few steps or bad runs hardly move.
2. Bad runs: a run inside the series that lies more than OUTLIER_SIGMAS sigma away from
   its neighbours on both sides, in the same direction, is one bad run, named and left
   out of step finding.  The newest (or oldest) run has neighbours on one side only: a
   newest run that differs is a new level or one bad run, which only the next runs can
   tell ('latest', said so).
3. Steps: binary segmentation.  In a stretch of runs, the split with the largest
   two-sample t statistic is a change point when a permutation test (PERMUTATIONS
   shuffles of the stretch at a fixed seed: the largest t over all splits, as often as
   the shuffles reach it) gives p <= ALPHA; then both halves are searched again.  The
   test assumes runs are exchangeable when nothing changed: a machine whose noise
   wanders slowly (load that comes and goes for hours) gets more false alarms.
4. What the changes are: two steps of opposite sign that nearly cancel are a step that
   reverted; when a straight line fits the series better than the steps do (by BIC)
   the change is a slow drift; otherwise each is a step; when the two fit about as
   well (BIC within EITHER_BIC) it is said that the runs cannot tell a step from a
   drift.

False alarms and detection rates, measured by simulation: docs/history.md.
"""
from __future__ import annotations

import bisect
import functools
import math
import random
import statistics
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from ..base import numbers
from ..stats import pooling
from ..data.model import Result, Run, system_keys
from ..stats.distributions import t_sf

ALPHA = 0.01            # a change point's p-value at most this; a short series (fewer
                        # than SHORT_RUNS runs) splits it between its two questions:
STEP_ALPHA = 0.008      # a step,
LATEST_ALPHA = 0.002    # and the newest run (bench/history_claims.py --short: false
                        # alarms per series, both together, at most ALPHA)
PERMUTATIONS = 199      # p-values in steps of 1/200
SEED = 27               # every analysis shuffles the same way: the same runs, the same answer
OUTLIER_SIGMAS = 6.0    # a bad run: this many noise sigmas from its neighbours on both sides
NEIGHBOURS = 3          # runs on each side a bad run is judged against
MIN_RUNS = 4            # fewer runs: no change can be told from noise
SHORT_RUNS = 20         # fewer runs: a t test (a permutation test is weaker; below 12
                        # runs it cannot reach ALPHA at all)
REVERT_FRACTION = 0.5   # a second step undoing at least half of the first: a revert
EITHER_BIC = 2.0        # steps and a line closer than this in BIC: the runs cannot tell
SHOWN_STEP = 6.0        # a short series finds, within 2-3 runs, a step this many noise
                        # sigmas (docs/history.md: runs needed by step size and noise)


@dataclass
class Point:
    run: int                        # index into History.runs
    median: float
    repetitions: list[float]        # the medians of the run's repetitions
    low: float | None = None        # the run's interval of the median
    high: float | None = None


@dataclass
class Change:
    at: int             # the index (into the series' points) of the first point after it
    before: float       # median of the runs before it (up to the previous change)
    after: float        # median of the runs after it (up to the next change)
    p: float            # permutation p-value
    kind: str = "step"  # step | reverted | revert | drift | latest

    @property
    def ratio(self) -> float:
        return self.after / self.before if self.before else math.inf


@dataclass
class Analysis:
    changes: list[Change] = field(default_factory=list)
    outliers: list[int] = field(default_factory=list)   # indices of bad runs
    drift: float | None = None      # a slow drift: the fitted ratio from first to last run
    either: bool = False            # steps and a drift fit about as well: cannot tell which
    sigma: float = 0.0              # the noise, in log units (~ relative spread)
    too_few: bool = False


@dataclass
class Series:
    key: tuple
    label: str
    unit: str
    better: str
    points: list[Point]
    analysis: Analysis


@dataclass
class History:
    runs: list[Run]
    names: list[str]
    series: list[Series]
    hosts: list[str]


# ---- change points ----------------------------------------------------------------

def _stretches(n: int):
    """The stretches (i, j) of n runs a change may set apart, every piece at least 2
    runs: y[i:j] against the rest (i = 0 or j = n: a single split)."""
    for i in [0] + list(range(2, n - 1)):
        for j in list(range(i + 2, n - 1)) + ([n] if i else []):
            yield i, j


def _max_between(y: list[float]) -> tuple[float, int, int]:
    """The stretch y[i:j] that differs most from the rest of y (`_stretches`); and
    (i, j).  A stretch in the middle is a step that reverted (circular binary
    segmentation, Olshen et al. 2004).  "Most" is the between-groups sum of squares,
    S^2 n / (L (n - L)) with S the stretch's sum of deviations from the mean and L its
    length: the two-sample t statistic grows with it."""
    n = len(y)
    mean = sum(y) / n
    prefix = [0.0]
    for v in y:
        prefix.append(prefix[-1] + v - mean)
    best, where = -1.0, (0, 0)
    for i, j in _stretches(n):
        b = (prefix[j] - prefix[i]) ** 2 * n / ((j - i) * (n - j + i))
        if b > best:
            best, where = b, (i, j)
    return best, where[0], where[1]


def _step_t(y: list[float], i: int, j: int, floor: float = 0.0,
            prior: "SeriesPrior | None" = None) -> float:
    """|t| of "the stretch y[i:j] is at the level of the rest": Student's t on the runs'
    log medians, the variance of a run's median from the residuals around the two
    levels (n - 2 degrees of freedom; with a prior, pooled with it: d0 more) and never
    below `floor`, what the runs' repetitions alone make it vary by."""
    inside, rest = y[i:j], y[:i] + y[j:]
    n, k = len(y), len(inside)
    mi, mr = sum(inside) / k, sum(rest) / (n - k)
    sse = sum((v - mi) ** 2 for v in inside) + sum((v - mr) ** 2 for v in rest)
    if prior is None:
        var = sse / (n - 2)
    else:
        var = (prior.d0 * prior.scale + sse) / (prior.d0 + n - 2)
    var = max(var, floor)
    if var <= 0:
        return math.inf if mi != mr else 0.0
    return abs(mi - mr) / math.sqrt(var * (1.0 / k + 1.0 / (n - k)))


NULL_SERIES = 2000      # normal series simulated for the short series' null distribution
POOL_MIN_D0 = 4.0       # series less alike than this (the prior's d0) are not pooled (as
                        # measured by bench/history_claims.py --short)
PRIOR_D0 = (2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 18, 24, 32, 48, 64, 100)
                        # a prior's d0 is taken down to one of these (fewer: heavier
                        # tails, safe)


@dataclass(frozen=True)
class SeriesPrior:
    """What the other series of a history tell of this one's run-to-run variance
    (stats/pooling.py): prior variance `scale` (log units squared) worth d0 runs."""
    scale: float
    d0: float


def _max_t(y: list[float], floor: float = 0.0, prior: SeriesPrior | None = None
           ) -> tuple[float, int, int]:
    """The single split (a step: y[:j] against y[j:], each at least 2 runs) with the
    largest `_step_t`, and (0, j)."""
    return max((_step_t(y, 0, j, floor, prior), 0, j) for j in range(2, len(y) - 1))


@functools.lru_cache(maxsize=None)
def _null_max_t(n: int, d0: int = 0) -> tuple[float, ...]:
    """The largest |t| over every split of n runs that do not change (normal noise),
    NULL_SERIES times at a fixed seed, sorted: the null distribution of `_max_t`.  With
    a prior of d0 runs, the series' variance is itself drawn from the prior (limma's
    model: the prior's part of the pooled variance is then a chi-square with d0 degrees
    of freedom, in the series' own units)."""
    rng = random.Random(SEED)
    out = []
    for _ in range(NULL_SERIES):
        y = [rng.gauss(0.0, 1.0) for _ in range(n)]
        prior = SeriesPrior(rng.gammavariate(d0 / 2, 2.0) / d0, d0) if d0 else None
        out.append(_max_t(y, 0.0, prior)[0])
    return tuple(sorted(out))


def _prior_d0(prior: SeriesPrior | None) -> int:
    return max((d for d in PRIOR_D0 if d <= prior.d0), default=0) if prior else 0


def _short_split(y: list[float], floor: float, prior: SeriesPrior | None = None
                 ) -> tuple[int, int, float] | None:
    """For fewer than SHORT_RUNS runs: the step with the largest t (its run medians'
    residual spread, pooled with the other series' prior when there is one, at least
    what the repetitions alone give) and the share of unchanged normal series whose
    largest t reaches it (every split it could have chosen accounted for).  Steps only:
    a stretch that reverted needs more runs."""
    d0 = _prior_d0(prior)
    prior = SeriesPrior(prior.scale, d0) if d0 else None
    t, i, j = _max_t(y, floor, prior)
    null = _null_max_t(len(y), d0)
    reached = len(null) - bisect.bisect_left(null, t * (1 - 1e-12))
    p = (1 + reached) / (1 + len(null))
    return (i, j, p) if p <= STEP_ALPHA else None


def _split(y: list[float], rng: random.Random, floor: float = 0.0,
           prior: SeriesPrior | None = None) -> tuple[int, int, float] | None:
    """The most likely change in y (the stretch i:j against the rest) and its p-value;
    None if y is too short or has no change at ALPHA.  SHORT_RUNS or more: the
    permutation test (it stops once it shows p > ALPHA); fewer, where its p cannot go
    below ALPHA: `_short_split`."""
    if len(y) < MIN_RUNS:
        return None
    if len(y) < SHORT_RUNS:
        return _short_split(y, floor, prior)
    t, i, j = _max_between(y)
    if t <= 1e-24:
        return None
    shuffled = list(y)
    reached = 0
    for _ in range(PERMUTATIONS):
        rng.shuffle(shuffled)
        if _max_between(shuffled)[0] >= t * (1 - 1e-12):
            reached += 1
            if (1 + reached) / (1 + PERMUTATIONS) > ALPHA:
                return None
    return i, j, (1 + reached) / (1 + PERMUTATIONS)


def noise_sigma(y: list[float]) -> float:
    """The run-to-run noise of y: from the median absolute difference of neighbours
    (normal-consistent), so that steps and bad runs hardly move it."""
    diffs = [abs(b - a) for a, b in zip(y, y[1:])]
    if not diffs:
        return 0.0
    return 1.4826 * statistics.median(diffs) / math.sqrt(2)


def bad_runs(y: list[float], sigma: float) -> list[int]:
    """Runs inside the series far from their neighbours on both sides, the same way."""
    if sigma <= 0:
        return []
    found = []
    for i in range(1, len(y) - 1):
        left = y[max(0, i - NEIGHBOURS):i]
        right = y[i + 1:i + 1 + NEIGHBOURS]
        dl = y[i] - statistics.median(left)
        dr = y[i] - statistics.median(right)
        if dl * dr > 0 and min(abs(dl), abs(dr)) > OUTLIER_SIGMAS * sigma:
            found.append(i)
    return found


def _segments(y: list[float], rng: random.Random, floor: float = 0.0,
              prior: SeriesPrior | None = None) -> list[tuple[int, float]]:
    """Circular binary segmentation: (index, p) of every change point found, in order
    (a stretch that differs from the rest gives two: its start and its end)."""
    found = []
    stack = [(0, len(y))]
    while stack:
        a, b = stack.pop()
        split = _split(y[a:b], rng, floor, prior)
        if split is None:
            continue
        i, j, p = split
        cuts = [a + c for c in (i, j) if 0 < c < b - a]
        found += [(c, p) for c in cuts]
        bounds = [a] + cuts + [b]
        stack += list(zip(bounds, bounds[1:]))
    return sorted(found)


def latest_differs(y: list[float], sigma: float, floor: float = 0.0,
                   prior: SeriesPrior | None = None) -> bool:
    """The newest run lies more than OUTLIER_SIGMAS sigma from the runs before it: a new
    level or one bad run (no test on one run can tell which).  In a short series, whose
    sigma is known poorly, its t against the others must also reach LATEST_ALPHA."""
    if sigma <= 0 or len(y) < MIN_RUNS:
        return False
    before = statistics.median(y[-1 - NEIGHBOURS:-1])
    if abs(y[-1] - before) <= OUTLIER_SIGMAS * sigma:
        return False
    n = len(y)
    df = n - 2 + (prior.d0 if prior else 0)
    return n >= SHORT_RUNS or \
        2.0 * t_sf(_step_t(y, n - 1, n, floor, prior), df) <= LATEST_ALPHA


def _sse(y: list[float], cuts: list[int]) -> float:
    total, bounds = 0.0, [0] + cuts + [len(y)]
    for a, b in zip(bounds, bounds[1:]):
        m = sum(y[a:b]) / (b - a)
        total += sum((v - m) ** 2 for v in y[a:b])
    return total


def _line(y: list[float]) -> tuple[float, float, float]:
    """Least-squares line through y over 0..n-1: intercept, slope, SSE."""
    n = len(y)
    xm, ym = (n - 1) / 2, sum(y) / n
    sxx = sum((i - xm) ** 2 for i in range(n))
    slope = sum((i - xm) * (v - ym) for i, v in enumerate(y)) / sxx
    icpt = ym - slope * xm
    return icpt, slope, sum((v - icpt - slope * i) ** 2 for i, v in enumerate(y))


def _bic(sse: float, n: int, params: int) -> float:
    return n * math.log(max(sse, 1e-300) / n) + params * math.log(n)


def repetition_floor(repetitions: list[list[float]] | None) -> float:
    """What the runs' repetitions alone make a run's log median vary by: the median over
    runs of the variance of its log repetition values over their number (0 without
    them)."""
    own = [statistics.variance([math.log(v) for v in reps]) / len(reps)
           for reps in repetitions or [] if len(reps) > 1 and all(v > 0 for v in reps)]
    return statistics.median(own) if own else 0.0


def own_variance(values: list[float], repetitions: list[list[float]] | None = None
                 ) -> tuple[float, int, float, float, int] | None:
    """What a series tells of its own run-to-run noise, for `priors`: the variance of its
    runs' log medians about their mean (bad runs left out; a step it holds makes it
    larger, never smaller) and its degrees of freedom, the repetitions' floor, and the
    variance around its likeliest step with its degrees of freedom (the noise a series
    with a step has: whether it is noisier than its kind); None for a series too short,
    or not all positive."""
    if len(values) < MIN_RUNS or not all(v > 0 for v in values):
        return None
    y = [math.log(v) for v in values]
    floor = repetition_floor(repetitions)
    out = set(bad_runs(y, max(noise_sigma(y), math.sqrt(floor))))
    kept = [v for i, v in enumerate(y) if i not in out]
    if len(kept) < MIN_RUNS:
        return None
    s2 = statistics.variance(kept)
    around = min(_sse(kept, [j]) for j in range(2, len(kept) - 1)) / (len(kept) - 2)
    return (s2, len(kept) - 1, floor, around, len(kept) - 2) if s2 > 0 else None


def priors(owns: list[tuple | None]) -> list[SeriesPrior | None]:
    """Each series' prior from every series of one history (`own_variance` of each):
    the runs are the same runs, so series whose runs are as noisy as their repetitions
    make them alike lend each other degrees of freedom (stats/pooling.py); None for a
    series the pool cannot help (too few series, too unlike, or noisier than its kind)."""
    use = [o for o in owns if o is not None]
    p = pooling.prior([o[0] for o in use], [o[1] for o in use], [o[2] for o in use],
                      [(max(o[3], 1e-300), o[4]) for o in use], refit=True,
                      min_d0=POOL_MIN_D0)
    scale = iter(p.scale if p is not None else [])
    out: list[SeriesPrior | None] = []
    for o in owns:
        s0 = next(scale, None) if o is not None else None
        out.append(SeriesPrior(s0, p.d0) if s0 is not None else None)
    return out


def analyse(values: list[float], seed: int = SEED,
            repetitions: list[list[float]] | None = None,
            prior: SeriesPrior | None = None) -> Analysis:
    """Change points, bad runs and drift in a series of run medians (oldest first);
    `repetitions`, each run's repetition values, bound the noise from below; `prior`,
    what the history's other series tell of its noise (`priors`)."""
    n = len(values)
    if n < MIN_RUNS:
        return Analysis(too_few=True)
    positive = all(v > 0 for v in values)
    y = [math.log(v) for v in values] if positive else list(values)
    floor = repetition_floor(repetitions) if positive else 0.0
    sigma = max(noise_sigma(y), math.sqrt(floor))
    out = bad_runs(y, sigma) if positive else []
    if prior is not None and positive:
        # The pool's runs count at most as much as the series' own, as a profile's rows
        prior = SeriesPrior(prior.scale, pooling.gain(prior.d0, n - 2))
    else:
        prior = None
    latest = latest_differs(y, sigma, floor, prior)
    keep = [i for i in range(n - latest) if i not in out]
    yk = [y[i] for i in keep]
    rng = random.Random(seed)
    cuts = _segments(yk, rng, floor, prior)
    analysis = Analysis(outliers=out, sigma=sigma)
    idx = [c for c, _ in cuts]
    bounds = [0] + idx + [len(yk)]
    level = [statistics.median(values[keep[j]] for j in range(a, b))
             for a, b in zip(bounds, bounds[1:])]
    changes = [Change(at=keep[c], before=level[j], after=level[j + 1], p=p)
               for j, (c, p) in enumerate(cuts)]
    if latest:
        changes.append(Change(at=n - 1, before=level[-1], after=values[-1], p=math.nan,
                              kind="latest"))
    analysis.changes = changes
    if not cuts:
        return analysis
    # a straight line that fits better than the steps (BIC: a step costs a level and a
    # place): a drift, not steps
    if len(yk) >= 2 * MIN_RUNS:
        icpt, slope, line_sse = _line(yk)
        line_bic = _bic(line_sse, len(yk), 2)
        steps_bic = _bic(_sse(yk, idx), len(yk), 2 * len(idx) + 1)
        analysis.either = abs(line_bic - steps_bic) < EITHER_BIC
        if line_bic < steps_bic:
            ends = (icpt, icpt + slope * (len(yk) - 1))
            analysis.drift = math.exp(ends[1] - ends[0]) if positive else \
                (ends[1] / ends[0] if ends[0] else math.inf)
            for c in changes:
                if c.kind != "latest":
                    c.kind = "drift"
            return analysis
    steps = [c for c in changes if c.kind != "latest"]
    for first, second in zip(steps, steps[1:]):
        s1, s2 = _log_ratio(first), _log_ratio(second)
        if s1 * s2 < 0 and abs(s1 + s2) <= REVERT_FRACTION * max(abs(s1), abs(s2)) \
                and first.kind == "step":
            first.kind, second.kind = "reverted", "revert"
    return analysis


def _log_ratio(c: Change) -> float:
    if c.before > 0 and c.after > 0:
        return math.log(c.after / c.before)
    return c.after - c.before


# ---- series from stored runs --------------------------------------------------------

def repetition_medians(r: Result) -> list[float]:
    by_rep: dict[int, list[float]] = {}
    for s in r.samples:
        by_rep.setdefault(s.rep, []).append(s.value)
    return [statistics.median(v) for _, v in sorted(by_rep.items())]


def run_name(run: Run) -> str:
    return run.label or run.id


def build(runs: list[Run], bench: list[str] | None = None, seed: int = SEED) -> History:
    """Every result's series over the runs (oldest first), analysed."""
    runs = sorted(runs, key=lambda r: (r.started or "", r.id))
    by_key: dict[tuple, list[tuple[int, Result]]] = {}
    for i, run in enumerate(runs):
        for r in run.results:
            if r.status != "ok" or r.median is None or r.shape == "scatter":
                continue
            if bench and not any(fnmatchcase(r.bench, g) or fnmatchcase(r.label, g)
                                 for g in bench):
                continue
            by_key.setdefault(r.key, []).append((i, r))
    series = []
    for key, found in by_key.items():
        last = found[-1][1]
        points = [Point(i, r.median, repetition_medians(r), r.summary.get("ci_low"),
                        r.summary.get("ci_high")) for i, r in found]
        series.append(Series(key, last.label, last.unit, last.better, points, Analysis()))
    owns = [own_variance([p.median for p in s.points], [p.repetitions for p in s.points])
            for s in series]
    for s, prior in zip(series, priors(owns)):
        s.analysis = analyse([p.median for p in s.points], seed,
                             [p.repetitions for p in s.points], prior)
    hosts = list(dict.fromkeys(system_keys(r.sysinfo)["host"] or "?" for r in runs))
    return History(runs, [run_name(r) for r in runs], series, hosts)


def worse(series: Series, c: Change) -> bool:
    return (c.after > c.before) == (series.better == "lower")


def percent(ratio: float) -> str:
    if math.isinf(ratio):
        return "from 0"
    return "%+.1f%%" % (100 * (ratio - 1))


def describe(h: History, s: Series) -> list[str]:
    """What happened in a series, one phrase per change or bad run."""
    a = s.analysis
    if a.too_few:
        return ["%s: too few to tell a change (%d needed)"
                % (numbers.count(len(s.points), "run"), MIN_RUNS)]
    out = []
    if a.drift is not None:
        first, last = s.points[0], s.points[-1]
        out.append("drift %s from %s to %s (%s)" % (
            percent(a.drift), h.names[first.run], h.names[last.run],
            "worse" if (a.drift > 1) == (s.better == "lower") else "better"))
    for c in a.changes:
        if a.drift is not None and c.kind != "latest":
            continue
        where = h.names[s.points[c.at].run]
        how = "worse" if worse(s, c) else "better"
        if c.kind == "latest":
            out.append("latest run %s %s (%s): a new level or one bad run, the next "
                       "runs tell" % (where, percent(c.ratio), how))
        elif c.kind == "revert":
            out.append("reverted at %s (%s)" % (where, percent(c.ratio)))
        else:
            out.append("%s %s at %s (p=%.3f)" % (percent(c.ratio), how, where, c.p))
    if a.either:
        out.append("a step or a slow drift: the runs fit both about as well")
    if not out and not a.outliers and len(s.points) < SHORT_RUNS and a.sigma > 0:
        out.append("steady as far as %d runs show: a step under about %s (%g x their "
                   "noise, +-%.1f%%) needs more runs to show" % (
                       len(s.points), percent(math.exp(SHOWN_STEP * a.sigma)).lstrip("+"),
                       SHOWN_STEP, 100 * a.sigma))
    for i in a.outliers:
        p = s.points[i]
        near = statistics.median(q.median for q in s.points[max(0, i - NEIGHBOURS):
                                                            i + NEIGHBOURS + 1]
                                 if q is not p)
        out.append("one bad run %s (%s)" % (h.names[p.run], percent(p.median / near)
                                            if near else "?"))
    return out


def _finite(v: float) -> float | None:
    """JSON has no NaN or infinity: None (a 'latest' change has no p; a ratio from 0)."""
    return v if math.isfinite(v) else None


def to_json(h: History) -> dict:
    return {
        "runs": [{"id": r.id, "label": r.label, "started": r.started,
                  "host": system_keys(r.sysinfo)["host"]} for r in h.runs],
        "method": {"alpha": ALPHA, "step_alpha": STEP_ALPHA, "latest_alpha": LATEST_ALPHA,
                   "short_runs": SHORT_RUNS, "permutations": PERMUTATIONS, "seed": SEED,
                   "outlier_sigmas": OUTLIER_SIGMAS, "min_runs": MIN_RUNS},
        "series": [{
            "bench": s.key[0], "metric": s.key[1], "x": s.key[2], "label": s.label,
            "unit": s.unit, "better": s.better,
            "points": [{"run": h.runs[p.run].id, "median": p.median,
                        "repetitions": p.repetitions, "ci_low": p.low, "ci_high": p.high}
                       for p in s.points],
            "changes": [{"run": h.runs[s.points[c.at].run].id, "index": c.at,
                         "before": c.before, "after": c.after, "ratio": _finite(c.ratio),
                         "p": _finite(c.p), "kind": c.kind, "worse": worse(s, c)}
                        for c in s.analysis.changes],
            "bad_runs": [h.runs[s.points[i].run].id for i in s.analysis.outliers],
            "drift": s.analysis.drift, "noise": s.analysis.sigma,
            "summary": describe(h, s)} for s in h.series],
    }
