"""One self-contained HTML report: tables, bar charts with intervals, curves over size,
scalability scatters with their fitted curves, and optionally the studies' numbers.

No script, no web font, no external file: the page opens from disk anywhere.  Every
figure is an inline SVG from svg.py and can also be written as a separate .svg file.
"""
from __future__ import annotations

import math
import os
import re
from datetime import datetime, timezone
from html import escape


from ..analysis import compare
from . import display
from ..analysis import flags
from ..analysis import remote
from .. import studies
from ..base import numbers
from ..data import writes
from . import against, gate_words, study, svg
from .tables import (with_winners, cell_results, fmt, fmt_cell_ratio, fmt_index, fmt_value,
                     is_too_short, legend, row_scale, verdict_summary, verdict_text)

CSS = """
*{box-sizing:border-box}
body{margin:0;padding:0 16px 40px;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1d1d1f;background:#fafafa}
main{max-width:1280px;margin:0 auto}
h1{font-size:24px;margin:20px 0 4px}h2{font-size:19px;margin:30px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
p.meta,.note{color:#555;font-size:13px}
.scroll{overflow-x:auto;max-width:100%;margin:6px 0 12px;border:1px solid #e3e3e3;background:#fff}
table{border-collapse:collapse;font-size:13px;width:100%}
th,td{padding:4px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#f2f2f2}
td.num{text-align:right;font-variant-numeric:tabular-nums;overflow-wrap:normal}
td.wrap{min-width:12em}
td.fold{padding:0}td.fold details{margin:0}td.fold summary{padding:4px 8px}
td.fold table{background:#fcfcfc}
.better{color:#006b3c;font-weight:600}.worse{color:#b00020;font-weight:600}.unclear{color:#777}
.win{background:#e6f4ea}.lose{background:#fdecea}
.swatch{display:inline-block;width:10px;height:10px;margin-right:5px;vertical-align:baseline}
figure{margin:10px 0 18px;background:#fff;border:1px solid #e3e3e3;padding:6px;min-width:0}
figure svg{display:block;width:100%;max-width:760px;height:auto}
figcaption{font-size:12px;color:#555;margin-top:4px}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,620px),1fr));gap:12px}
.warn{background:#fff4e5;border-left:4px solid #e69f00;padding:6px 10px;margin:6px 0;overflow-wrap:anywhere}
.warn pre{white-space:pre-wrap}
nav{margin:8px 0}nav a{color:#0b57d0;text-decoration:none}
details{margin:8px 0}summary{cursor:pointer;color:#0b57d0}
table.study{width:auto;min-width:60%}tr.ours td{background:#eef5ff}tr.derived td{font-style:italic;background:#f7f7f7}
.published ul{margin:2px 0 6px 18px;padding:0;font-size:13px}
"""


def slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("_")[:80] or "figure"


class Page:
    def __init__(self):
        self.parts: list[str] = []
        self.figures: list[tuple[str, str]] = []      # (file name, svg)

    def add(self, s: str) -> None:
        self.parts.append(s)

    def figure(self, name: str, svg_text: str, caption: str = "") -> None:
        base = slug(name)
        names = {n for n, _ in self.figures}
        k, fname = 2, base + ".svg"
        while fname in names:
            fname, k = "%s_%d.svg" % (base, k), k + 1
        self.figures.append((fname, svg_text))
        self.add('<figure id="fig-%s">%s%s</figure>' % (
            escape(fname[:-4]), svg_text,
            "<figcaption>%s</figcaption>" % escape(caption) if caption else ""))


def _table(head: list[str], rows: list[list[str]], raw: bool = False) -> str:
    """rows hold HTML already when raw, else text to escape."""
    h = "".join("<th>%s</th>" % escape(c) for c in head)
    body = []
    for r in rows:
        cells = r if raw else ["<td>%s</td>" % escape(c) for c in r]
        body.append("<tr>%s</tr>" % "".join(cells))
    return '<div class="scroll"><table><thead><tr>%s</tr></thead><tbody>%s</tbody></table></div>' % (
        h, "".join(body))


def _swatch(i: int) -> str:
    """The run's colour and marker, as in every figure."""
    col, shape, _ = svg.run_style(i)
    return ('<svg class="swatch" width="12" height="12" viewBox="0 0 12 12">%s</svg>'
            % svg.marker(shape, 6, 6, 4.5, col, "key"))


def _verdict_html(c) -> str:
    v = c.verdict if c is not None else None
    if v is None:
        return "<td></td>"
    cls = "better" if v.word == "better" and v.significant else \
        "worse" if v.word == "worse" and v.significant else "unclear"
    title = v.detail or ("p = %.3g" % v.p if v.p is not None else "")
    return '<td class="%s" title="%s">%s</td>' % (cls, escape(title), escape(verdict_text(c)))


def _value_cells(cmp, row, common) -> list[str]:
    """The runs' cells of one row in the row's unit: value [interval], ratio, verdict."""
    out = []
    scale = row_scale(row)
    for i, c in enumerate(row.cells):
        cls = "num" + (" win" if row.winner == i else "") + (" lose" if row.loser == i else "")
        val = fmt_value(c, scale, common)
        if c is not None and c.curve_class:
            val += " · %s" % c.curve_class
        out.append('<td class="%s">%s</td>' % (cls, escape(val)))
        if i != cmp.baseline:
            out.append('<td class="num">%s</td>' % escape(fmt_cell_ratio(c)))
            out.append(_verdict_html(c))
    if len(cmp.runs) > 1 and with_winners(cmp):
        out.append("<td>%s</td>" % escape(" / ".join([
            cmp.names[row.winner] if row.winner is not None else "—",
            cmp.names[row.loser] if row.loser is not None else "—"])))
    return out


def _notes_cell(notes: list[str]) -> str:
    return '<td class="wrap note">%s</td>' % escape("; ".join(notes)) if notes else "<td></td>"


def _head(cmp) -> list[str]:
    h = ["benchmark"]
    for i, n in enumerate(cmp.names):
        h += [n + " (baseline)" if len(cmp.names) > 1 else n] if i == cmp.baseline else \
            [n, "ratio", "verdict"]
    if len(cmp.runs) > 1 and with_winners(cmp):
        h.append("winner / loser")
    return h + ["notes"]


def _fit_points(curve: dict, xs: list[float]) -> list[tuple[float, float]] | None:
    """The fitted curve as a polyline, from what the curve classifier stored."""
    if not curve or not xs:
        return None
    pts = curve.get("fit_points") or curve.get("points")
    if isinstance(pts, list) and pts and all(isinstance(p, (list, tuple)) and len(p) == 2
                                             for p in pts):
        return [(float(a), float(b)) for a, b in pts]
    a = curve.get("intercept_ns", curve.get("intercept"))
    b = curve.get("slope_ns_per_object", curve.get("slope"))
    if a is None or b is None:
        return None
    lo, hi = min(xs), max(xs)
    return [(lo, a + b * lo), (hi, a + b * hi)]


def _points(n: int) -> str:
    return "%s point%s" % (numbers.number(n), "" if n == 1 else "s")


def sweeps_of(rows) -> dict[tuple, list]:
    """(bench, metric) -> the rows of one curve over size, in x order."""
    out: dict[tuple, list] = {}
    for row in rows:
        if row.shape == "sweep":
            out.setdefault((row.bench, row.metric), []).append(row)
    return out


def _category_figures(page: Page, cmp, cat: str) -> None:
    rows = cmp.rows_in(cat)
    names = cmp.names
    # Point results, one chart per unit so that one axis makes sense.
    by_unit: dict[str, list] = {}
    for row in rows:
        if row.shape in ("point", "derived"):
            bars = [(i, c.median, c.ci_low, c.ci_high) if c is not None and c.status == "ok"
                    else (i, None, None, None) for i, c in enumerate(row.cells)]
            if any(m is not None for _, m, _, _ in bars):   # a skipped row: its table line
                by_unit.setdefault(row.unit, []).append((row.label, bars, row.better))
    for unit, groups in by_unit.items():
        better = {g[2] for g in groups}
        note = "median with its interval (levels in the table); " + (
            "lower is better" if better == {"lower"} else
            "higher is better" if better == {"higher"} else "see the table for direction")
        drawn = sum(1 for _, bars, _ in groups for _, m, _, _ in bars if m is not None)
        # The title names the unit the axis shows (GB/s, not the stored MB/s).
        shown = numbers.axis_unit([v for _, bars, _ in groups for _, m, lo, hi in bars
                                   for v in (m, lo, hi) if v is not None], unit)[1]
        page.figure("%s_%s" % (cat, unit.replace("/", "per")),
                    svg.bar_chart("%s (%s)" % (cat, shown), unit,
                                  [(l, b) for l, b, _ in groups], names, note),
                    "%s: %d results in %s, %s" % (cat, len(groups), shown, _points(drawn)))
    # Curves over size: one chart per (bench, metric) sweep, every size of every run.
    for (bench, metric), srows in sweeps_of(rows).items():
        first = srows[0]
        series = []
        for i in range(len(cmp.runs)):
            pts = [(float(r.x), r.cells[i].median, r.cells[i].ci_low, r.cells[i].ci_high)
                   for r in srows if r.x is not None and r.cells[i] is not None
                   and r.cells[i].status == "ok" and r.cells[i].median is not None]
            if pts:
                series.append((i, names[i], pts))
        if not series:
            continue
        title = bench if metric in ("latency", "value") else "%s %s" % (bench, metric)
        drawn = sum(len(p) for _, _, p in series)
        page.figure(title, svg.line_chart(
            title, first.x_name or "x", metric, series,
            "median with interval band (levels in the table); %s is better" % first.better,
            unit=first.unit, x_is_size=numbers.is_size(first.x_name)),
            "%s over %s: %s" % (title, first.x_name or "x", _points(drawn)))
    # Scalability scatters: every run's points, fitted curve and class.
    for row in rows:
        if row.shape != "scatter":
            continue
        series = []
        for i, c in enumerate(row.cells):
            if c is None or c.status != "ok" or c.result is None:
                continue
            pts = [(float(s.x), s.value) for s in c.result.samples if s.x is not None]
            if not pts:
                continue
            curve = (c.result.extra or {}).get("curve") or {}
            fit = _fit_points(curve, [x for x, _ in pts])
            series.append((i, names[i], pts, fit, curve.get("class")))
        if series:
            total = sum(len(p) for _, _, p, _, _ in series)
            step = max(1, -(-total // svg.MAX_POINTS))
            drawn = sum(len(p[::step]) for _, _, p, _, _ in series)
            page.figure(row.label, svg.scatter_chart(
                row.label, row.x_name or "x", row.metric, series,
                "every operation of every repetition; dashed: fitted curve", unit=row.unit),
                "%s: %s; %s" % (row.label, ", ".join(
                    "%s %s" % (n, cls or "unclassified") for _, n, _, _, cls in series),
                    _points(drawn) if step == 1 else "every %s of %s points: %s drawn"
                    % (numbers.ordinal(step), numbers.number(total), numbers.number(drawn))))


def _measured_nowhere(row) -> bool:
    return all(c is None or c.status != "ok" or c.median is None for c in row.cells)


def _why_not(cmp, row) -> str:
    """'skipped: ffmpeg not installed' (per run where the runs differ)."""
    said = ["%s%s" % ("not run" if c is None else c.status,
                      ": " + c.reason if c is not None and c.reason else "")
            for c in row.cells]
    if len(set(said)) == 1:
        return said[0]
    return "; ".join("%s: %s" % (n, w) for n, w in zip(cmp.names, said))


def _category_table(cmp, cat: str, common) -> str:
    """The category's rows in human units; each curve over size folded into one row
    whose sizes open on demand."""
    head = _head(cmp)
    rows, done, short = [], set(), []
    sweeps = sweeps_of(cmp.rows_in(cat))
    for row in cmp.rows_in(cat):
        if is_too_short(row):
            short.append(row)
            continue
        if _measured_nowhere(row):       # skipped or failed in every run: one line
            if row.bench not in done:
                done.add(row.bench)
                rows.append(['<td colspan="%d">%s: %s</td>' % (
                    len(head), escape(row.bench), escape(_why_not(cmp, row)))])
            continue
        if row.shape != "sweep":
            rows.append(["<td>%s</td>" % escape(row.label)] + _value_cells(cmp, row, common) +
                        [_notes_cell(row.notes)])
            continue
        key = (row.bench, row.metric)
        if key in done:
            continue
        done.add(key)
        # A run that skipped the sweep adds a point without x: its reason, listed last.
        points = sorted(sweeps[key], key=lambda p: p.x is None)
        sized = [p for p in points if p.x is not None] or points
        inner = _table(["%s" % (row.x_name or "x")] + head[1:],
                       [["<td>%s</td>" % escape(numbers.coordinate(p.x, p.x_name))] +
                        _value_cells(cmp, p, common) + [_notes_cell(p.notes)] for p in points],
                       raw=True)
        label = row.bench if row.metric in ("latency", "value") else \
            "%s %s" % (row.bench, row.metric)
        notes = list(dict.fromkeys(n for p in points for n in p.notes))
        summary = "%s: %d sizes, %s %s–%s (show every size)" % (
            label, len(sized), row.x_name or "x",
            numbers.coordinate(sized[0].x, row.x_name),
            numbers.coordinate(sized[-1].x, row.x_name))
        if notes:
            summary += "; %d note%s" % (len(notes), "" if len(notes) == 1 else "s")
        rows.append(['<td class="fold" colspan="%d"><details><summary>%s</summary>%s'
                     '</details></td>' % (len(head), escape(summary), inner)])
    if short:  # phases too short to time alone: beside their wholes, folded, no verdict
        inner = _table(head, [["<td>%s</td>" % escape(row.label)] +
                              _value_cells(cmp, row, common) + [_notes_cell(row.notes)]
                              for row in short], raw=True)
        summary = "%d phase%s too short to time alone (%s): part of their benchmark's " \
                  "whole, not judged on their own" % (
                      len(short), "" if len(short) == 1 else "s",
                      ", ".join(dict.fromkeys(r.label for r in short)))
        rows.append(['<td class="fold" colspan="%d"><details><summary>%s</summary>%s'
                     '</details></td>' % (len(head), escape(summary), inner)])
    return _table(head, rows, raw=True)


def _category_section(page: Page, cmp, cat: str, common) -> None:
    """Per family: the figures first, then the table."""
    page.add('<h2 id="cat-%s">%s</h2>' % (escape(slug(cat)), escape(cat)))
    before = len(page.parts)
    page.add('<div class="figs">')
    _category_figures(page, cmp, cat)
    if len(page.parts) == before + 1:
        page.parts.pop()
    else:
        page.add("</div>")
    page.add(_category_table(cmp, cat, common))


def machine_line(run) -> str:
    """The machine a run measured, in one line: host, OS, kernel, CPU, memory, libc."""
    si = run.sysinfo or {}

    def part(key) -> dict:
        return si.get(key) if isinstance(si.get(key), dict) else {}
    cpu, libc, kernel = part("cpu"), part("libc"), part("kernel")
    threads = cpu.get("threads")
    memory = si.get("memory_bytes")
    bits = [part("os").get("name") or (si.get("os") if isinstance(si.get("os"), str) else None),
            " ".join(str(v) for v in (kernel.get("name"), kernel.get("release")) if v) or None,
            "%s%s" % (cpu.get("model") or "CPU unknown",
                      " × %d threads" % threads if threads else ""),
            "%s memory" % numbers.quantity(memory, "bytes") if memory else None,
            " ".join(str(v) for v in (libc.get("name"), libc.get("version")) if v) or None]
    return "%s: %s" % (si.get("hostname") or "host unknown", ", ".join(b for b in bits if b))


def _runs_table(cmp) -> str:
    """The runs: name (the label, else the id: then no second id column), when, suite;
    the baseline marked when there are several (the machines are in the headline)."""
    multi = len(cmp.runs) > 1
    labelled = any(r.name != r.id for r in cmp.runs)
    rows = []
    for i, r in enumerate(cmp.runs):
        cells = ["<td>%s%s</td>" % (_swatch(i) if multi else "", escape(r.name))]
        cells += ["<td>%s</td>" % escape(str(v)) for v in (
            ([r.id] if labelled else []) +
            [r.started, (r.suite or "custom") + (", smoke" if r.smoke else "")] +
            (["baseline" if i == cmp.baseline else ""] if multi else []))]
        rows.append(cells)
    return _table(["run"] + (["id"] if labelled else []) + ["started", "suite"] +
                  ([""] if multi else []), rows, raw=True)


HEADLINE_DIFFERENCES = 5        # the largest differences shown first


def _largest_differences(cmp) -> list:
    """(row, run index, cell) of the largest differences from the baseline, verdicts
    first, then by the size of the ratio; phases too short to time alone left out."""
    found = []
    for row in cmp.rows:
        if is_too_short(row):
            continue
        for i, c in enumerate(row.cells):
            if i == cmp.baseline or c is None or c.ratio is None or c.ratio <= 0:
                continue
            significant = bool(c.verdict is not None and c.verdict.significant)
            found.append((not significant, -abs(math.log(c.ratio)), row.label, i, row, c))
    found.sort(key=lambda f: f[:3])
    return [(row, i, c) for _, _, _, i, row, c in found[:HEADLINE_DIFFERENCES]]


def _references_glance(cmp) -> list[list[str]]:
    """Per study: how many of its published numbers these runs measured, and the
    geometric mean speed-up over its machines per run."""
    by_study: dict[str, list] = {}
    for rr in studies.against(cmp.runs):
        by_study.setdefault(rr.ref.study, []).append(rr)
    rows = []
    for study_id, rrs in by_study.items():
        measured = sum(1 for rr in rrs if any(v is not None for v in rr.ours))
        cells = [study_id, "%d of %d" % (measured, len(rrs))]
        for i in range(len(cmp.runs)):
            ups = sorted((rr.speedups[i], rr.ref.bench) for rr in rrs
                         if rr.speedups[i] is not None and rr.speedups[i] > 0)
            cells.append(_glance_cell(ups))
        rows.append(cells)
    return rows


def _glance_cell(ups: list[tuple[float, str]]) -> str:
    """'×0.818 over 12 numbers, from ×0.05 (syscall.getpid) to ×30 (cpu.integer)': the
    mean, and the extremes that move it (a mean of a few speed-ups that span orders of
    magnitude is no figure to read alone)."""
    if not ups:
        return "—"
    mean = math.exp(sum(math.log(u) for u, _ in ups) / len(ups))
    text = "×%s over %s" % (fmt(mean), numbers.count(len(ups), "number"))
    if len(ups) > 1:
        (lo, lo_bench), (hi, hi_bench) = ups[0], ups[-1]
        text += ", from ×%s (%s) to ×%s (%s)" % (fmt(lo), lo_bench, fmt(hi), hi_bench)
    return text


def _headline(page: Page, cmp, references: bool, gate=None) -> None:
    """The first screen: the machine, how it compares (indices, the largest differences,
    the studies at a glance), then what was flagged and why."""
    multi = len(cmp.runs) > 1
    page.add('<section id="headline"><h2>Headline</h2>')
    for i, run in enumerate(cmp.runs):
        page.add('<p class="machine">%s<b>%s</b>%s — %s</p>' % (
            _swatch(i) if multi else "", escape(run.name),
            " (baseline)" if multi and i == cmp.baseline else "", escape(machine_line(run))))
    if multi and cmp.index:
        base = cmp.names[cmp.baseline]
        others = [i for i in range(len(cmp.runs)) if i != cmp.baseline]
        cats = [c for c in cmp.categories if c in cmp.index]
        page.add('<p class="note">Indices: the geometric mean of the ratios to %s per '
                 'category and overall; &gt; 1 = better [95%% interval].</p>' % escape(base))
        page.add(_table(["run", "overall"] + cats, [
            [cmp.names[i], fmt_index(cmp.overall[i], cmp.overall_ci[i])] +
            [fmt_index(cmp.index[c][i], cmp.index_ci[c][i]) for c in cats] for i in others]))
        largest = _largest_differences(cmp)
        if largest:
            page.add("<h3>The largest differences from %s</h3>" % escape(base))
            page.add(_table(["result", "run", "ratio (> 1 = better) [interval]", "verdict"],
                            [[row.label, cmp.names[i], fmt_cell_ratio(c),
                              verdict_text(c) or "no clear difference"]
                             for row, i, c in largest]))
    glance = _references_glance(cmp)
    if glance:
        page.add("<h3>Against the studies, at a glance</h3>")
        page.add('<p class="note">Speed-up of this machine over the studies\' machines '
                 '(geometric mean over the published numbers it measured; &gt; 1 = faster, '
                 '&lt; 1 = slower than the study\'s machine on those numbers), with the '
                 'smallest and the largest speed-up: a mean of a few numbers that span '
                 'orders of magnitude moves with them between runs%s.'
                 '</p>' % (': every number in <a href="#studies">Against the studies</a>'
                           if references else "; every number: osmeter report RUN "
                           "--references"))
        page.add(_table(["study", "published numbers measured"] + cmp.names, glance))
    _flagged(page, cmp, gate)
    page.add("</section>")


def _flagged(page: Page, cmp, gate=None) -> None:
    """What was flagged, with its cause: each run's count line (what is not counted said
    there), the warnings about the machine before the run, the gate."""
    multi = len(cmp.runs) > 1
    page.add("<h3>Flagged</h3>")
    for run in cmp.runs:
        count = flags.count_line(run.results)
        if count:
            page.add('<p class="note">%s%s</p>' % (
                escape(run.name + ": ") if multi else "",
                escape(count + display.not_counted(run.results, " Not counted: %s."))))
    if gate is not None:
        page.add('<div class="warn"><pre>%s</pre></div>' % escape("\n".join(
            gate_words.section(gate, cmp.names[cmp.baseline]))))
    for w in cmp.warnings:
        page.add('<div class="warn">%s</div>' % escape(w))


def _intro(page: Page, cmp, references: bool, title: str, common, studies=(),
           gate=None) -> None:
    multi = len(cmp.runs) > 1
    page.add("<h1>%s</h1>" % escape(title))
    counted = sum(len(flags.counted(r.results)) for r in cmp.runs)
    page.add('<p class="meta">Generated %s by osmeter. %d run%s, %d results%s.</p>' % (
        datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), len(cmp.runs),
        "" if len(cmp.runs) == 1 else "s", counted, " in all" if multi else ""))
    _headline(page, cmp, references, gate)
    links = ([("differs", "What differs")] if multi else []) + \
        ([("indices", "Indices")] if multi and cmp.index else []) + \
        [("cat-" + slug(c), c) for c in cmp.categories] + \
        ([("mips", "MIPS-relative")] if compare.mips_relative_table(cmp) else []) + \
        ([("remote", "Remote penalty")] if remote.penalties(cmp.runs) else []) + \
        ([("studies", "Against the studies")] if references else []) + \
        [("study-" + v.id, v.title.split(":")[0]) for v in studies]
    page.add('<nav class="note">Contents: %s</nav>' % " · ".join(
        '<a href="#%s">%s</a>' % (escape(a), escape(t)) for a, t in links))
    page.add('<h2 id="runs">Runs</h2>')
    page.add(_runs_table(cmp))
    # The legends that apply: ratios and verdicts only when runs are compared.
    shared = display.interval_advice(cell_results(cmp), common)
    page.add("".join('<p class="note">%s</p>' % escape(line)
                     for line in legend(cmp, level_below=bool(shared))[:None if multi else 1]))
    if shared:
        page.add('<p class="note">%s</p>' % escape(shared))
    if multi:
        page.add('<p class="note">%s</p>' % escape(verdict_summary(cmp)))


def _differs(page: Page, cmp) -> None:
    if len(cmp.runs) > 1:
        page.add('<h2 id="differs">What differs between the systems</h2>')
        page.add('<p class="note">%d recorded metadata keys are equal.</p>' % cmp.meta_same)
        if cmp.meta_diff:
            page.add(_table(["key"] + cmp.names, [[k] + v for k, v in cmp.meta_diff]))
        else:
            page.add("<p>Nothing recorded differs.</p>")
    else:
        meta = compare.run_metadata(cmp.runs[0])
        page.add("<details><summary>System information (%d keys)</summary>%s</details>" % (
            len(meta), _table(["key", "value"], [[k, v] for k, v in sorted(meta.items())])))


def _indices(page: Page, cmp) -> None:
    if len(cmp.runs) < 2 or not cmp.index:
        return
    page.add('<h2 id="indices">Indices</h2>')
    page.add('<p class="note">Geometric mean of the ratios to the baseline %s, per category '
             'and overall (each benchmark metric weighs the same; a sweep counts once); '
             '&gt; 1 = better.</p>' % escape(repr(cmp.names[cmp.baseline])))

    def bars(values, intervals):
        return [(i, v, ci.low if ci else None, ci.high if ci else None)
                for i, (v, ci) in enumerate(zip(values, intervals))]
    groups = [(c, bars(cmp.index[c], cmp.index_ci[c]))
              for c in cmp.categories if c in cmp.index]
    groups.append(("overall", bars(cmp.overall, cmp.overall_ci)))
    drawn = sum(1 for _, b in groups for _, v, _, _ in b if v is not None)
    page.figure("indices", svg.bar_chart("Indices relative to %s" % cmp.names[cmp.baseline],
                                         "", groups, cmp.names,
                                         "geometric mean of ratios with 95% interval; "
                                         "dashed line = baseline", reference=1.0),
                "per-category indices: %s" % _points(drawn))
    irows = [[c, str(cmp.index_counts[c])] +
             [fmt_index(v, ci) for v, ci in zip(cmp.index[c], cmp.index_ci[c])]
             for c in cmp.categories if c in cmp.index]
    irows.append(["overall", str(sum(cmp.index_counts.values()))] +
                 [fmt_index(v, ci) for v, ci in zip(cmp.overall, cmp.overall_ci)])
    page.add(_table(["category", "metrics"] + cmp.names, irows))


def _mips(page: Page, cmp) -> None:
    mt = compare.mips_relative_table(cmp)
    if not mt:
        return
    page.add('<h2 id="mips">MIPS-relative speed (Ousterhout 1990)</h2>')
    page.add('<p class="note">Each ratio divided by the ratio of the machines\' raw CPU '
             'speed (cpu.integer): 1 = the operation sped up exactly as much as plain '
             'integer code; &lt; 1 = the OS did not keep up. cpu.integer: %s.</p>'
             % escape(", ".join("%s %s" % (n, numbers.quantity(s, "Mops/s"))
                                for n, s in zip(cmp.names, cmp.cpu_speed))))
    page.add(_table(["benchmark"] + cmp.names,
                    [[row.label] + [fmt(v) for v in vals] for row, vals in mt
                     if not is_too_short(row)]))


def render(cmp, references: bool = False, title: str = "osmeter report",
           studies: list = (), gate=None) -> tuple[str, list]:
    """(HTML text, [(figure file name, svg text)]); studies: study views
    (osmeter/studies/) laid out after the comparison; gate: a regression gate's outcome
    (analysis/gate.py), shown among what was flagged.  The page is a sequence of
    sections, each its own function; per family the figures come first, then the table."""
    page = Page()
    common = display.common_level(cell_results(cmp))
    _intro(page, cmp, references, title, common, studies, gate)
    _differs(page, cmp)
    _indices(page, cmp)
    for cat in cmp.categories:
        _category_section(page, cmp, cat, common)
    _mips(page, cmp)
    against.remote_html(page, cmp)
    if references:
        against.html(page, cmp)
    for view in studies:
        study.html(view, page)
    return document(title, page), page.figures


def document(title: str, page: Page) -> str:
    """The page's parts as one self-contained HTML document (the report's CSS inline)."""
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<title>%s</title><style>%s</style></head><body><main>%s</main></body></html>\n'
            % (escape(title), CSS, "\n".join(page.parts)))


def write(cmp, path: str, references: bool = False, figures_dir: str | None = None,
          title: str = "osmeter report", studies: list = ()) -> list[str]:
    """Write the report (and each figure as an SVG file when figures_dir is given);
    returns the figures' file names.  The runner can call this after a run."""
    text, figures = render(cmp, references, title, studies)
    return write_page(path, text, figures, figures_dir)


def write_runs(runs: list, path: str, baseline: int = 0, references: bool = False,
               figures_dir: str | None = None, png: bool = False, title: str = "osmeter report",
               study_ids: list = (), noise=None) -> list[str]:
    """Compare the runs and write the HTML report (and the figures); the figures' names.

    Raises CompareError for runs that cannot be compared, OSError and RasterError when
    something cannot be written.  Used by `osmeter report` and `osmeter run --report`.
    `noise`: the between-run noise profile (analysis/noise.py), as compare's, so that the
    two agree."""
    cmp = compare.compare(runs, baseline, noise=noise)
    views = [studies.build(i, cmp) for i in study_ids]
    figures = write(cmp, path, references, figures_dir, title, views)
    if png:
        svgs_to_png(figures_dir, figures)
    return figures


def write_page(path: str, text: str, figures: list[tuple[str, str]],
               figures_dir: str | None) -> list[str]:
    """Write, when figures_dir is given, each figure as an SVG file, then the page; the
    figures' file names.  (The comparison and the fleet report alike.)  A figures
    directory that cannot be made or written leaves no page behind."""
    if figures_dir:
        os.makedirs(figures_dir, exist_ok=True)
        for name, svg_text in figures:
            writes.write_file(os.path.join(figures_dir, name),
                              '<?xml version="1.0" encoding="UTF-8"?>\n' + svg_text + "\n")
    writes.write_file(path, text)
    return [name for name, _ in figures]


class RasterError(Exception):
    """PNG figures were asked for but cannot be made here."""


def svgs_to_png(figures_dir: str, names: list[str], scale: float = 2.0) -> list[str]:
    """PNG copies of the SVG figures, at `scale` times their size, for papers.  Uses
    rsvg-convert (Debian: librsvg2-bin); osmeter itself stays free of image libraries."""
    import shutil
    import subprocess
    tool = shutil.which("rsvg-convert")
    if not tool:
        raise RasterError("PNG figures need rsvg-convert (Debian: apt-get install "
                          "librsvg2-bin); the SVG figures were written")
    made = []
    for name in names:
        svg = os.path.join(figures_dir, name)
        png = os.path.splitext(svg)[0] + ".png"
        r = subprocess.run([tool, "--zoom", str(scale), "-o", png, svg], capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0:
            raise RasterError("rsvg-convert failed on %s: %s" % (name, r.stderr.strip()))
        made.append(os.path.basename(png))
    return made
