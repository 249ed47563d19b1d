"""What the study modules share: the paper's set-up, tables with the paper's systems as
columns, figures with our curves, and the published curve verdicts read as classes."""
from __future__ import annotations

import random

from ..analysis import curves
from ..analysis.results import too_short
from ..data import references as refs
from . import across
from .view import (BEHAVES_LIKE, BORDERLINE, NOT_JUDGED, NOT_MEASURED, Conclusion, Figure,
                   Row, Series, Table, judge, num)

GROWING = (curves.LOG, curves.LINEAR, curves.WORSE)
NOT_CONSTANT = "not O(1)"


# ---- the paper ---------------------------------------------------------------------------

def setup(report: str) -> list[str]:
    r = refs.report_entry(report)
    lines = ["%s (%s). %s." % (r["title"], r["author"], r.get("venue") or r.get("date")
                               or r["year"])]
    if r.get("hardware"):
        lines.append("Hardware: " + r["hardware"])
    lines.append("Systems: " + "; ".join(r["systems"]))
    for key in ("settings", "notes"):
        if r.get(key):
            lines.append(r[key])
    return lines


def report_rule(report: str) -> refs.NotComparable:
    return refs.NotComparable("the study's set-up (year, hardware, counts, prices): shown "
                              "in the study view's header, not a measurement", "report",
                              report)


def stated_rule(report: str):
    """NotComparable for one of the report's [[stated]] quantities: rule(quantity, why)."""
    def rule(quantity: str, reason: str) -> refs.NotComparable:
        return refs.NotComparable(reason, "stated", report, label=quantity)
    return rule


def missing(report: str) -> list[str]:
    return ["%s: %s. %s" % (m["table"], m["described_as"], m["what_text_says"])
            for m in refs.load()["missing_table"] if m["report"] == report]


# ---- published curve verdicts ------------------------------------------------------------

def class_of(shape: str) -> str | None:
    """The growth class a published description states, in curves.py's names; None when
    it states none (or two, as a bimodal curve does)."""
    s = shape.lower()
    has_const, has_lin = "o(1)" in s, "o(n)" in s
    if "not o(1)" in s:
        return NOT_CONSTANT
    if "no o(n)" in s:                  # "scales well (no O(n))"
        return curves.CONSTANT
    if has_const != has_lin:
        return curves.CONSTANT if has_const else curves.LINEAR
    if has_const and has_lin:
        return None
    if "non-linear" in s or "does not scale" in s or "scales badly" in s:
        return curves.WORSE
    if "linear" in s:
        return curves.LINEAR
    if "constant" in s or "scales well" in s or "not affected" in s:
        return curves.CONSTANT
    return None


def agreement(published: str, ours: str | None) -> str:
    """Our class against a published one, in words."""
    if ours is None or ours == curves.INSUFFICIENT:
        return "no class here (%s)" % (ours or "not measured")
    grows = ours in GROWING
    if published == NOT_CONSTANT:
        return "agrees (%s)" % ours if grows else "differs: %s here" % ours
    if ours == published:
        return "agrees"
    if published in GROWING and grows:
        return "grows here too (%s)" % ours
    return "differs: %s here" % ours


def graph_refs(study: str, report: str, figures: dict) -> list[refs.GraphRef]:
    """The published verdicts of the report's [[graph]] entries that state a class, for
    the figures mapped to our benchmarks: figures = {figure: (bench, metric)}."""
    out = []
    for g in refs.graphs(report):
        if g["figure"] not in figures:
            continue
        bench, metric = figures[g["figure"]]
        for res in g["result"]:
            cls = class_of(res["shape"])
            if cls is not None:
                out.append(refs.GraphRef(refs.graph_key(g, res), study, g["figure"], res["os"],
                                         res["shape"], cls, bench, metric))
    return out


def graph_rules(report: str, figures: dict, reasons: dict) -> list[refs.NotComparable]:
    """NotComparable for every verdict of the report's [[graph]] entries that no class of
    ours can be set beside: those of figures in `reasons` ({figure: why}), and those of
    mapped figures that state no growth class."""
    out = []
    for g in refs.graphs(report):
        if g["figure"] in reasons:
            out.append(refs.NotComparable(reasons[g["figure"]], "graph", report, g["figure"]))
        elif g["figure"] in figures:
            for res in g["result"]:
                if class_of(res["shape"]) is None:
                    out.append(refs.NotComparable(
                        "the description states no growth class to set our curve's class "
                        "beside (its numbers, where the text gives them, are compared from "
                        "the prose)", "graph", report, g["figure"], res["os"]))
    return out


# ---- tables -----------------------------------------------------------------------------

def columns_table(ctx, tid: str, title: str, caption: str, systems: list[str],
                  rows: list[tuple[str, list]], notes: list[str] = ()) -> Table:
    """A table with the paper's systems as columns and each run as one more column:
    rows = [(label, [RefValue or None per system])]; a run's cell is the value of the
    row's first reference, in its unit."""
    t = Table(tid, title, caption, ["", *systems, *ctx.names], [], list(notes))
    for label, cells in rows:
        ref = next((c for c in cells if c is not None), None)
        if ref is not None:
            line = mapping_note(label, ref)
            if line not in t.notes:
                t.notes.append(line)
        ours = [ours_cell(ctx, i, ref, t.notes) for i in range(len(ctx.runs))] \
            if ref is not None else [None] * len(ctx.runs)
        t.rows.append(Row(label, [refs.printed(c.value) if c is not None else None
                                  for c in cells] + ours))
    return t


def mapping_note(label: str, ref) -> str:
    """What a row's pairing is, in the table's notes: 'label: like for like', 'related:
    the difference', 'stand-in for what'."""
    return "%s — %s" % (label, ref.mapping_words())


def ours_cell(ctx, i: int, ref, notes: list[str]):
    """A run's value for a reference, or None with the reason added to the notes once."""
    m = ctx.match(i, ref)
    if m.value is not None and m.result is not None and too_short(m.result):
        line = "%s %s: %s" % (SHORT_MARK, ctx.names[i], m.result.extra.get("too_short") or
                              "too short to time alone")
        if line not in notes:
            notes.append(line)
        return "%s %s" % (num(m.value), SHORT_MARK)
    if m.value is not None:
        return m.value
    line = "%s: %s" % (ctx.names[i], m.detail)
    if line not in notes:
        notes.append(line)
    return None


SHORT_MARK = "‡"      # a value of ours the core flagged too short to time alone


def winner(cells: list, better: str) -> str | None:
    """The best of the numbers in cells (index), or None."""
    vals = [(v, i) for i, v in enumerate(cells) if isinstance(v, (int, float))]
    if len(vals) < 2:
        return None
    return (min if better == "lower" else max)(vals)[1]


# ---- figures ----------------------------------------------------------------------------

def figure(ctx, fid: str, title: str, graph: dict | None, bench: str, metric: str,
           published: list[tuple[str, str]] | None = None) -> Figure:
    """Our curve of bench/metric in every run beside a published [[graph]] entry (or the
    given published descriptions)."""
    pub = published if published is not None else \
        [(r["os"], r["shape"]) for r in graph["result"]] if graph else []
    caption = "%s against %s (as the paper plotted it)" % (graph["y"], graph["x"]) if graph \
        else ""
    series, kind, x_label, y_label = [], "sweep", "x", metric
    classed = any(class_of(shape) for _, shape in pub)
    for i in range(len(ctx.runs)):
        res = ctx.results(i, bench, metric)
        if not res:
            continue
        first = res[0]
        kind = "scatter" if first.shape == "scatter" else "sweep"
        x_label, y_label = first.x_name or "x", "%s (%s)" % (metric, first.unit)
        # A class only where the paper states one: a bandwidth curve has none to compare.
        c = (ctx.curve(i, bench, metric) or {}) if classed else {}
        if kind == "scatter":
            pts = [(float(s.x), s.value) for s in first.samples if s.x is not None]
            series.append(Series(i, ctx.names[i], pts, c.get("fit_points"), c.get("class"),
                                 curves.describe(c, first.x_name, first.unit) if c else ""))
        else:
            pts = [(float(r.x), r.median, (r.summary or {}).get("ci_low"),
                    (r.summary or {}).get("ci_high")) for r in sorted(res, key=lambda r: r.x)
                   if r.x is not None]
            series.append(Series(i, ctx.names[i], pts, None, c.get("class"),
                                 curves.describe(c, first.x_name, first.unit) if c else
                                 _span(pts, first.x_name, first.unit),
                                 sorted({(r.summary or {}).get("ci_level") for r in res
                                         if (r.summary or {}).get("ci_level")})))
    fig = Figure(fid, title, caption, bench, metric, kind, x_label, y_label, pub, series)
    if not series:
        fig.missing = "; ".join(sorted({ctx.why_not(i, bench) for i in range(len(ctx.runs))}))
    elif classed:
        fig.verdict = "; ".join(
            "%s: %s — %s" % (s.name, s.cls or "unclassified", ", ".join(
                "%s %s" % (os_, agreement(cls, s.cls)) for os_, shape in pub
                for cls in [class_of(shape)] if cls is not None) or "no published class")
            for s in series)
    return fig


def _span(pts, x_name: str, unit: str) -> str:
    """A curve in words where it has no class: its sizes and the range of its medians."""
    ys = [p[1] for p in pts if p[1] is not None]
    if not ys:
        return "no values"
    return "%d %s from %s to %s, %s to %s %s" % (
        len(pts), x_name or "sizes", num(pts[0][0]), num(pts[-1][0]), num(min(ys)),
        num(max(ys)), unit)


def graph(report: str, figure_name: str) -> dict:
    return next(g for g in refs.graphs(report) if g["figure"] == figure_name)


# A curve whose growth over its range is this close to the classifier's cut between O(1)
# and growing (curves.MIN_GROWTH, a factor 2) could fall either side of it in another run.
EDGE = 1.25


def _class_check(c: dict, expect: set, others: list = ()):
    """A curve's class against the classes that reproduce a claim: True/False, or
    BORDERLINE when the answer is not the curve's own: its growth factor lies within EDGE
    of the classifier's cut and the other side of the cut would give the other answer,
    or the curve redrawn from its own repetitions (`others`: those classes) gives it."""
    ok = c["class"] in expect
    if any((o in expect) != ok for o in others if o not in (None, curves.INSUFFICIENT)):
        return BORDERLINE
    g = c.get("growth")
    if g and g > 0:
        g = max(g, 1 / g)
        if curves.MIN_GROWTH / EDGE <= g <= curves.MIN_GROWTH * EDGE:
            other = curves.CONSTANT if c["class"] != curves.CONSTANT else curves.LINEAR
            if (other in expect) != ok:
                return BORDERLINE
    return ok


def _curves(ctx, bench: str, metric: str):
    """(run index, its curve, its results) for every run where bench/metric ran."""
    for i in range(len(ctx.runs)):
        res = ctx.results(i, bench, metric)
        if res:
            yield i, ctx.curve(i, bench, metric) or {}, res


RESAMPLES = 12


def resampled_classes(res) -> list:
    """The classes of a curve redrawn from its own repetitions (RESAMPLES draws of as many
    repetitions, with replacement, fixed seed): the spread of its class, as an interval is
    the spread of a value.  Empty with fewer than 3 repetitions."""
    by_rep: dict = {}
    for r in res:
        for s in r.samples:
            x = s.x if s.x is not None else r.x
            if x is not None:
                by_rep.setdefault(s.rep, []).append((x, s.value))
    reps = sorted(by_rep)
    if len(reps) < 3:
        return []
    rng = random.Random(1)
    out = []
    for _ in range(RESAMPLES):
        pts = [p for _ in reps for p in by_rep[rng.choice(reps)]]
        out.append(curves.classify(pts, detect_bands=False).get("class"))
    return out


CLASS_RULE = ("each curve's growth class from osmeter's classifier (non-constant only where "
              "the fitted cost at least doubles over the range, beyond the noise); it reads "
              "borderline where the growth factor is within %g× of that cut, or where "
              "the curve redrawn from its own repetitions gives the other answer" % EDGE)


def class_claim(ctx, claim: str, source: str, checks: list, suite: str) -> Conclusion:
    """A conclusion about growth classes: checks = [(bench, metric, the classes that
    reproduce it)], judged on every run's curve of each."""
    ev, outcomes, used = [], [], []
    for bench, metric, expect in checks:
        for i, c, res in _curves(ctx, bench, metric):
            used += res
            if c.get("class") in (None, curves.INSUFFICIENT):
                ev.append("%s %s: too few points to classify" % (ctx.names[i], bench))
                outcomes.append(None)
            else:
                ev.append("%s %s: %s" % (ctx.names[i], bench,
                                         curves.describe(c, res[0].x_name, res[0].unit)))
                outcomes.append(_class_check(c, expect, resampled_classes(res)))
    benches = ", ".join(sorted({b for b, _, _ in checks}))
    rule = "%s; holds where every curve is %s" % (CLASS_RULE, " / ".join(
        "%s: %s" % (b, " or ".join(sorted(e))) for b, _, e in checks))
    return Conclusion(claim, source, judge(outcomes), ("; ".join(ev) if ev else
                      "needs %s (osmeter run --suite %s)" % (benches, suite)),
                      rule, _growths(ctx, checks), rests_on=used)


def contrast_claim(ctx, claim: str, source: str, checks: list, sides: dict,
                   suite: str) -> Conclusion:
    """A two-system contrast ("O(1) on NetBSD, O(n) on FreeBSD"), checks = [(bench,
    metric)], sides = {system: the classes it showed}.  Over two or more systems' runs it
    is judged as the paper judged it: each paper's system played by a run (across.roles),
    holds where each run shows its side's classes.  One system is not 'reproduced' by
    matching one side: the verdict names the side it behaves like."""
    who = across.roles(ctx, list(sides))
    ev, found, used, per_side = [], [], [], []
    for bench, metric in checks:
        for i, c, res in _curves(ctx, bench, metric):
            used += res
            cls = c.get("class")
            if cls in (None, curves.INSUFFICIENT):
                ev.append("%s %s: too few points to classify" % (ctx.names[i], bench))
                found.append(None)
                per_side.append(None)
                continue
            ev.append("%s %s: %s" % (ctx.names[i], bench,
                                     curves.describe(c, res[0].x_name, res[0].unit)))
            others = resampled_classes(res)
            per_side += [_class_check(c, sides[s], others) for s, j in (who or {}).items()
                         if j == i]
            like = [s for s, classes in sides.items()
                    if _class_check(c, classes, others) is True]
            edge = any(_class_check(c, classes, others) == BORDERLINE
                       for classes in sides.values())
            found.append(BORDERLINE if edge else like[0] if len(like) == 1 else
                         "neither (%s)" % cls if not like else None)
    classes = "; ".join("%s %s" % (s, " or ".join(sorted(c))) for s, c in sides.items())
    if who and len(who) > 1:
        return Conclusion(claim, source, judge(per_side), across.cast(ctx, who) + ". " + (
            "; ".join(ev) if ev else "needs %s (osmeter run --suite %s)" % (
                ", ".join(sorted({b for b, _ in checks})), suite)),
            "%s; across systems, holds where the run playing each paper's system shows its "
            "class: %s" % (CLASS_RULE, classes),
            _growths(ctx, [(b, m, ()) for b, m in checks]), rests_on=used)
    rule = "%s; the side whose class today's curve shows: %s" % (CLASS_RULE, classes)
    if not found:
        verdict = NOT_MEASURED
    elif None in found:
        verdict = NOT_JUDGED
    elif BORDERLINE in found or len(set(found)) > 1:
        verdict = BORDERLINE
    else:
        verdict = "%s %s" % (BEHAVES_LIKE, found[0])
    benches = ", ".join(sorted({b for b, _ in checks}))
    return Conclusion(claim, source, verdict, ("; ".join(ev) if ev else
                      "needs %s (osmeter run --suite %s)" % (benches, suite)), rule,
                      _growths(ctx, [(b, m, ()) for b, m in checks]), rests_on=used)


def _growths(ctx, checks) -> str:
    out = []
    for bench, metric, _ in checks:
        for i, c, _res in _curves(ctx, bench, metric):
            if c.get("growth"):
                out.append("%s %s grows %s× over its range (cut: %g×)" % (
                    ctx.names[i], bench, num(c["growth"]), curves.MIN_GROWTH))
    return "; ".join(out)
