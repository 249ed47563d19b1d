"""A study laid out in the paper's order: its tables with this machine's runs beside the
published systems, its figures with our curves beside the published shapes, and its
conclusions restated with today's verdict.  Data only; osmeter/report/study.py renders it.

`Ctx` is what a study module's view() gets: the comparison of the runs and helpers to
find a run's value of a benchmark in the paper's unit, its per-repetition values, its
curve class, and to set two results against each other with the comparison's own test.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis import flags, matching
from ..data import references as refs
from ..stats import significance as sig
from ..base.numbers import number as num  # one number formatter for text and tables

# One vocabulary for every verdict, in the summary and in each paper's section alike.
HOLDS, DOES_NOT_HOLD = "holds", "does not hold"
UNDECIDED = "undecided"
BORDERLINE = UNDECIDED + ": on the edge"       # the threshold lies within the interval
NOT_JUDGED = UNDECIDED + ": cannot tell"       # too few sizes, repetitions or systems
NOT_MEASURED = "not measured"  # what it needs did not run
BEHAVES_LIKE = "behaves like"  # a two-system contrast on one system: the side it is on
# What a verdict needs: the rank test decides from 5 repetitions a side (with 3 it cannot
# go below p = 0.1), and a 5-repetition interval is 93.8%.
REPETITIONS_NEEDED = 5


def judge(outcomes: list) -> str:
    """A conclusion's verdict from its checks: True (holds here), False (does not),
    BORDERLINE (the threshold lies within the result's interval), None (ran, but too few
    sizes or repetitions to tell); no checks: nothing it needs ran.  "Holds" needs
    every check to hold: with significance tests as checks this is an intersection-union
    test, whose error stays at the tests' alpha.  One check that clearly fails decides
    "does not hold"; otherwise one that cannot tell, then one on the edge, holds it back."""
    if not outcomes:
        return NOT_MEASURED
    if any(o is False for o in outcomes):
        return DOES_NOT_HOLD
    if any(o is None for o in outcomes):
        return NOT_JUDGED
    return BORDERLINE if any(o == BORDERLINE for o in outcomes) else HOLDS


def against(value: float, lo, hi, threshold: float, holds_below: bool,
            unit: str = "", slack: float = 1.0) -> tuple:
    """A measurement against a claim's threshold: (outcome, margin in words).  The claim
    holds below the threshold (holds_below) or above it.  The outcome is BORDERLINE when
    the threshold lies within the measurement's interval [lo, hi] (None: the median alone),
    widened by `slack` (a factor: a stand-in right only to within it), so that a verdict
    never turns on a difference the measurement cannot resolve."""
    lo = value if lo is None else min(lo, value)
    hi = value if hi is None else max(hi, value)
    lo, hi = lo / slack, hi * slack
    if lo <= threshold <= hi:
        outcome = BORDERLINE
    else:
        outcome = (hi < threshold) if holds_below else (lo > threshold)
    pct = 100.0 * (value - threshold) / threshold if threshold else 0.0
    margin = "%s%s vs %s %s: %s%% %s the threshold%s" % (
        num(value), (unit if unit.startswith("×") else " " + unit) if unit else "", "<" if holds_below else ">", num(threshold),
        num(abs(pct)), "above" if pct >= 0 else "below",
        "; interval %s-%s%s" % (num(lo), num(hi), " (× %s slack)" % num(slack)
                                if slack != 1.0 else "") if (lo, hi) != (value, value) else "")
    return outcome, margin


def interval(result) -> tuple:
    """A result's interval (lo, hi) and its level, or (None, None, None)."""
    s = (result.summary or {}) if result is not None else {}
    return s.get("ci_low"), s.get("ci_high"), s.get("ci_level")


def product_interval(value: float, num=(), den=()) -> tuple:
    """The interval of a value proportional to the results in `num` and inversely to
    those in `den` (a MIPS-relative speed: 1 / (time x cpu rate)): each result's interval
    carried over as a factor, at least the level of the lowest of them; (None, None)
    where one has none."""
    lo = hi = value
    for r, inverse in [(r, False) for r in num] + [(r, True) for r in den]:
        rlo, rhi, _ = interval(r)
        if None in (rlo, rhi) or not r.median or rlo <= 0:
            return None, None
        f_lo, f_hi = (r.median / rhi, r.median / rlo) if inverse else \
            (rlo / r.median, rhi / r.median)
        lo, hi = lo * f_lo, hi * f_hi
    return lo, hi


def ratio_interval(a, b) -> tuple:
    """The interval of a/b from the intervals of a and b: [a_lo/b_hi, a_hi/b_lo] -- at
    least the level of the lower of the two (both hold with that probability or more)."""
    alo, ahi, _ = interval(a)
    blo, bhi, _ = interval(b)
    if None in (alo, ahi, blo, bhi) or blo <= 0 or bhi <= 0:
        return None, None
    return alo / bhi, ahi / blo


def disturbed(results) -> list[str]:
    """The results among these that their run flagged disturbed, as 'bench metric'."""
    return sorted({"%s %s" % (r.bench, r.metric) for r in results if r is not None
                   and flags.DISTURBED in flags.kinds(r)})


def significant(v) -> bool | None:
    """A comparison verdict as a check: True (significantly better), None (too few
    repetitions or too much noise to tell), False (not better)."""
    if v.word in ("too few repetitions", "no samples", sig.CANNOT_TELL):
        return None
    return v.significant and v.word == "better"


@dataclass
class Row:
    label: str
    cells: list            # float (formatted by the renderer), str, or None ("—")
    kind: str = "paper"    # paper | ours | derived


@dataclass
class Table:
    id: str
    title: str
    caption: str
    head: list[str]
    rows: list[Row]
    notes: list[str] = field(default_factory=list)


@dataclass
class Series:
    """One run's curve: sweep points (x, median, lo, hi) or scatter points (x, y)."""
    run: int
    name: str
    points: list
    fit: list | None = None
    cls: str | None = None
    description: str = ""
    levels: list = field(default_factory=list)   # the interval levels of its points


@dataclass
class Figure:
    id: str
    title: str
    caption: str           # what the paper plotted (axes)
    bench: str
    metric: str
    kind: str              # sweep | scatter
    x_label: str
    y_label: str
    published: list[tuple[str, str]]        # (system, shape as published)
    series: list[Series]
    verdict: str = ""      # our curve against the published one, in words
    missing: str = ""      # why there is no curve of ours


@dataclass
class Conclusion:
    claim: str             # what the paper concluded, in its words where possible
    source: str            # where it says so
    verdict: str           # holds | does not hold | undecided: ... | behaves like X |
    #                        not measured
    evidence: str          # today's numbers, and why
    rule: str = ""         # what decides the verdict: the threshold or the classes
    margin: str = ""       # how far today's measurement is from the threshold
    rests_on: list = field(default_factory=list)   # the results it was judged on
    basis: str = ""        # the level and repetitions it rests on (finish() states it)


def repetitions(result) -> int:
    """How many repetitions a result rests on."""
    reps = {s.rep for s in (result.samples or [])}
    return len(reps) if reps else int((result.summary or {}).get("n") or 0)


def finish(c: Conclusion) -> Conclusion:
    """The one place a conclusion gets what every conclusion states: the interval level
    and the repetitions of the results it rests on, and a note where their run flagged
    any of them disturbed."""
    used = [r for r in c.rests_on if r is not None]
    levels = sorted({(r.summary or {}).get("ci_level") for r in used} - {None})
    reps = sorted({repetitions(r) for r in used})
    if used:
        c.basis = "%s; %s" % (
            "intervals at %s" % "/".join("%g%%" % (100 * lv if lv <= 1 else lv)
                                         for lv in levels) if levels
            else "no interval (too few repetitions)",
            "%s repetition%s" % ("%d-%d" % (reps[0], reps[-1]) if reps[0] != reps[-1]
                                 else reps[0], "" if reps == [1] else "s"))
        if reps[0] < REPETITIONS_NEEDED and c.verdict != NOT_MEASURED:
            c.basis += " (below the %d a verdict needs)" % REPETITIONS_NEEDED
    d = disturbed(used)
    if d and "flagged disturbed" not in c.evidence:
        c.evidence += " [rests on results the run flagged disturbed: %s]" % ", ".join(d)
    return c


@dataclass
class StudyView:
    id: str
    title: str
    cite: str
    setup: list[str]       # hardware and systems, as the paper states them
    runs: list[str]
    sections: list         # Table | Figure, in the paper's order
    conclusions: list[Conclusion]
    missing: list[str] = field(default_factory=list)   # what the text lost (figures, tables)
    warnings: list[str] = field(default_factory=list)


class Ctx:
    """The runs of a comparison, as a study module sees them."""

    def __init__(self, cmp):
        self.cmp = cmp
        self.runs = cmp.runs
        self.names = cmp.names
        self.cpu = cmp.cpu_speed

    def results(self, i: int, bench: str, metric: str) -> list:
        return [r for r in self.runs[i].results if r.bench == bench and r.metric == metric
                and r.status == "ok"]

    def result(self, i: int, bench: str, metric: str, x=None):
        for r in self.results(i, bench, metric):
            if (x is None and r.x is None) or (x is not None and r.x is not None
                                               and float(r.x) == float(x)):
                return r
        return None

    def value(self, i: int, bench: str, metric: str, x=None, unit: str | None = None):
        """A run's median of bench/metric (at x), in `unit` when given."""
        r = self.result(i, bench, metric, x)
        v = r.median if r is not None else None
        if v is None or unit is None:
            return v
        return refs.convert(v, r.unit, unit)

    def reps(self, i: int, bench: str, metric: str, x=None) -> list[float]:
        r = self.result(i, bench, metric, x)
        return sig.rep_values(r) if r is not None and r.samples else []

    def why_not(self, i: int, bench: str) -> str:
        """Why a run has no value of bench: did not run, skipped or failed (with reason)."""
        mine = [r for r in self.runs[i].results if r.bench == bench]
        if not mine:
            return "%s did not run (osmeter run %s)" % (bench, bench)
        bad = next((r for r in mine if r.status != "ok"), None)
        if bad is not None:
            return "%s %s: %s" % (bench, bad.status, bad.reason or "")
        return "%s ran without this quantity" % bench

    def match(self, i: int, ref: refs.RefValue) -> matching.Match:
        return matching.measured(self.runs[i], ref)

    def curve(self, i: int, bench: str, metric: str) -> dict | None:
        return matching.curve_of(self.runs[i], bench, metric)

    def versus(self, i: int, a: tuple, b: tuple, better: str = "lower"):
        """Result a against result b of one run, both (bench, metric[, x]): the ratio of
        medians a/b and the comparison's verdict on their per-repetition values, or None
        when either is missing."""
        ra, rb = self.reps(i, *a), self.reps(i, *b)
        va, vb = self.value(i, *a), self.value(i, *b)
        if va is None or vb is None or not ra or not rb:
            return None
        return va / vb, sig.compare_values(rb, ra, better, self.cmp.alpha, self.cmp.min_effect)


def verdict_words(v) -> str:
    """The comparison's verdict in a sentence fragment."""
    if v.significant:
        return "p = %.2g" % v.p
    return v.word + (" (%s)" % v.detail if v.detail else "")
