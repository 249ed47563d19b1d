"""Terminal output: the summary of a run (grouped by family, fitted to the terminal's
width, warnings as short tags with a legend), plain tables, the run's header and the
progress line of a run.  Numbers are written by numbers.py, as everywhere."""
from __future__ import annotations

import sys
import textwrap
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from ..analysis import curves, flags
from ..base import numbers
from .. import stats
from ..analysis.compare import family_sort_key
from ..data.model import Result, Run
from ..analysis.results import TOO_SHORT, TOO_SHORT_KEY, too_short
from .flag_words import (CURVE_TAGS, FAILED_MARK, IMPRECISE_MARK, MARK_WORDS, MARKS, mark_of,
                         tag_of)
from .width import fit_table, terminal_width  # noqa: F401 (terminal_width: used elsewhere)


def table(rows: list[list[str]], header: list[str], right: set[int] = frozenset(),
          width: int | None = None, fold_first=()) -> str:
    """Rows in aligned columns under a header, within the terminal's width (width.py:
    the widest text columns wrap, the last ones, or `fold_first`, fold when they must)."""
    return "\n".join(fit_table([header] + rows, width, right, fold_first=fold_first))


# ---- the summary of a run ---------------------------------------------------------------

@dataclass
class SummaryRow:
    label: str
    bench: str
    cells: tuple | None = None       # (median, interval, CV) of a point
    text: str = ""                    # spans the value columns: curves, results not run
    tags: list = field(default_factory=list)
    mark: str = " "
    kind: str = "point"               # point | sweep | scatter | not run


def is_zero_time(r: Result) -> bool:
    """A time measured as exactly 0 is a time below what the clock or the kernel's CPU
    accounting resolves (getrusage counts CPU time in ticks), not a time of zero."""
    return r.unit in numbers.TIME_UNITS and r.summary.get("median") == 0


def median_text(r: Result) -> str:
    return numbers.measured(r.summary["median"], r.unit)


def interval_text(summary: dict, div: float = 1.0, common=None) -> str:
    """'[a, b]' in the median's unit; its level beside it where it differs from the
    level shared by the table (`common`, stated once below it); 'none' without one."""
    iv = stats.interval_of(summary)
    if iv is None:
        reps = summary.get("repetitions", 0)
        return "none (%d repetition)" % reps if reps == 1 else "none"
    lo, hi, level, method = iv
    text = numbers.interval(lo, hi, div)
    key = stats.level_class(level, method)
    if key == common:
        return text
    return "%s %s" % (text, level_mark(key))


def level_mark(key) -> str:
    """The level beside an interval that differs from the table's shared one."""
    if key == stats.BOOTSTRAP:
        return "bootstrap"
    return "≥95%" if key == stats.AT_LEAST else "%s%%" % stats.fmt_percent(key)


def _level_key(r: Result):
    iv = stats.interval_of(r.summary) if r.status == "ok" else None
    return None if iv is None else stats.level_class(iv[2], iv[3])


def _point_row(r: Result, common, label: str | None = None) -> SummaryRow:
    s = r.summary
    tags = [tag_of(w)[0] for w in r.warnings]
    if is_zero_time(r):
        cells = (median_text(r), "", "")
    else:
        div, _ = numbers.scale(s["median"], r.unit)
        cells = (median_text(r), interval_text(s, div, common),
                 "%.1f%%" % (100 * s.get("cv", 0.0)))
    return SummaryRow(label or r.label, r.bench, cells=cells, tags=tags, mark=mark_of([r]))


def _sweep_label(r: Result) -> str:
    plain = r.metric in ("latency", "value") or r.bench.split(".")[-1] == r.metric
    return r.bench if plain else "%s %s" % (r.bench, r.metric)


def _plateaus_text(plateaus: list[Result]) -> str:
    parts = []
    for p in plateaus:
        name = p.metric.split(".plateau.", 1)[1]
        if p.status == "ok" and p.summary.get("median") is not None:
            parts.append("%s %s" % (name, numbers.quantity(p.summary["median"], p.unit)))
    return "plateaus " + ", ".join(parts) if parts else ""


def _sweep_row(points: list[Result], plateaus: list[Result], common) -> SummaryRow:
    first = points[0]
    label = _sweep_label(first)
    if len(points) == 1:             # one size: a point, with its size beside the name
        return _point_row(first, common, "%s @%s" % (label, numbers.coordinate(
            first.x, first.x_name)))
    xs = [p.x for p in points]
    meds = [p.summary["median"] for p in points]
    ends = "%s → %s" % (numbers.quantity(meds[0], first.unit),
                        numbers.quantity(meds[-1], first.unit))
    text = "%d points, %s %s–%s: %s" % (
        len(points), first.x_name or "x", numbers.coordinate(min(xs), first.x_name),
        numbers.coordinate(max(xs), first.x_name), ends)
    plateau_text = _plateaus_text(plateaus)
    if plateau_text:
        text += "; " + plateau_text
    tags = []
    for p in points + plateaus:
        tags += [t for t in (tag_of(w)[0] for w in p.warnings) if t not in tags]
    return SummaryRow(label, first.bench, text=text, tags=tags, mark=mark_of(points + plateaus),
                      kind="sweep")


def curve_text(r: Result) -> str:
    """The class of a scatter with its cost, in the house's number format."""
    curve = r.extra.get("curve") or {}
    fitted = curve.get("all") or {}
    if fitted.get("class"):
        return curves.describe(fitted, r.x_name, r.unit)
    return curve.get("description") or curve.get("class") or "not classified"


def _scatter_row(r: Result) -> SummaryRow:
    curve = r.extra.get("curve") or {}
    tags = [tag_of(w)[0] for w in r.warnings]
    if curve.get("agree") is False:
        tags.append("disagree")
    if r.notes.get("stopped_by"):
        tags.append("limit")
    xs = [s.x for s in r.samples if s.x is not None]
    span = " %s %s–%s," % (r.x_name or "x", numbers.coordinate(min(xs), r.x_name),
                           numbers.coordinate(max(xs), r.x_name)) if xs else ""
    text = "%s points,%s %s" % (numbers.number(r.summary.get("n", 0)), span, curve_text(r))
    mark = mark_of([r])
    if mark == " " and curve.get("agree") is False:
        mark = IMPRECISE_MARK        # its repetitions disagree: a matter of precision
    return SummaryRow(r.label, r.bench, text=text, tags=tags, mark=mark, kind="scatter")


def _not_run_row(r: Result) -> SummaryRow:
    return SummaryRow(r.bench, r.bench, text="%s: %s" % (r.status, r.reason or "no reason"),
                      mark=FAILED_MARK if r.status == "failed" else " ", kind="not run")


def _too_short_row(rs: list[Result]) -> SummaryRow:
    """A benchmark's phases too short to time alone, in one line."""
    took = [r.extra.get(TOO_SHORT_KEY) for r in rs]
    took = sorted(t for t in took if isinstance(t, (int, float)))
    span = ""
    if took:
        span = numbers.quantity(took[0], "s") if len(took) == 1 else "%s–%s" % (
            numbers.quantity(took[0], "s"), numbers.quantity(took[-1], "s"))
    return SummaryRow(rs[0].bench, rs[0].bench, kind="not run", text="%s: %s (timed once per "
                      "repetition%s; osmeter show says more)" % (
                          ", ".join(r.metric for r in rs), TOO_SHORT,
                          ", " + span if span else ""))


def summary_rows(results: list[Result], condense_sweeps: bool = True,
                 common=None) -> list[tuple[str, list[SummaryRow]]]:
    """[(family, rows)] in the house's family order; a benchmark's rows in its order,
    derived ones (plateaus, indices) with it."""
    by_bench: dict[str, list[Result]] = {}
    for r in results:
        by_bench.setdefault(r.bench, []).append(r)
    families: dict[str, list[SummaryRow]] = {}
    for bench, mine in by_bench.items():
        rows = families.setdefault(bench.split(".", 1)[0], [])
        if all(r.status != "ok" for r in mine):
            rows.append(_not_run_row(mine[0]))
            continue
        done = set()
        short = [r for r in mine if too_short(r)]
        for r in mine:
            if too_short(r):
                if r is short[0]:
                    rows.append(_too_short_row(short))
            elif r.status != "ok":
                rows.append(_not_run_row(r))
            elif r.shape == "sweep":
                if r.metric in done:
                    continue
                done.add(r.metric)
                points = [p for p in mine if p.metric == r.metric and p.shape == "sweep"
                          and p.status == "ok"]
                plateaus = [p for p in mine if p.metric.startswith(r.metric + ".plateau.")]
                rows.append(_sweep_row(points, plateaus, common))
                if not condense_sweeps and len(points) > 1:
                    rows += [_point_row(p, common, "  @%s" % numbers.coordinate(p.x, p.x_name))
                             for p in points]
                    rows += [_point_row(p, common) for p in plateaus]
            elif r.shape == "scatter":
                rows.append(_scatter_row(r))
            elif ".plateau." in r.metric:
                continue                     # beside its curve
            elif r.summary.get("median") is not None:
                rows.append(_point_row(r, common))
    return sorted(families.items(), key=lambda kv: family_sort_key(kv[0]))


def common_level(results: list[Result]):
    """The level class most intervals share (stats.level_class), or None."""
    keys = Counter(k for k in (_level_key(r) for r in results if r.shape != "scatter") if k)
    return keys.most_common(1)[0][0] if keys else None


def _wrap(text: str, first_col: int, width: int, indent: int) -> list[str]:
    """`text` starting at column first_col, continued at column indent."""
    room = max(12, width - first_col)
    lines = textwrap.wrap(text, room, break_on_hyphens=False) or [""]
    out = [lines[0]]
    rest = " ".join(lines[1:])
    if rest:
        out += [" " * indent + l for l in
                textwrap.wrap(rest, max(12, width - indent), break_on_hyphens=False)]
    return out


def _fit(label: str, bench: str, width: int) -> str:
    """The label within `width`: the benchmark id whole, the metric cut if it must be."""
    if len(label) <= width:
        return label
    return bench if len(bench) >= width - 1 else label[:width - 1] + "…"


HEADER = ("benchmark", "median", "interval", "CV", "notes")


def common_tags(groups) -> list[str]:
    """Tags every measured row carries (few repetitions in a smoke run, say): said once
    below the table instead of on every row; the rows keep their mark."""
    rows = [r for _, rs in groups for r in rs if r.kind in ("point", "sweep")]
    if len(rows) < 2:
        return []
    shared = [t for t in rows[0].tags if all(t in r.tags for r in rows)]
    for r in rows:
        r.tags = [t for t in r.tags if t not in shared]
    return shared


def render_rows(groups, width: int) -> list[str]:
    rows = [r for _, rs in groups for r in rs]
    cells = [r.cells for r in rows if r.cells] or [("", "", "")]
    wm, wi, wc = (max(len(HEADER[k + 1]), max(len(c[k]) for c in cells)) for k in range(3))
    values = wm + 2 + wi + 2 + wc
    longest_id = max((len(r.bench) for r in rows), default=9)
    longest = max((len(r.label) for r in rows), default=9)
    if 2 + longest + 2 + values + 2 + 12 <= width:   # the notes fit beside: all on one line
        wl = max(longest, 9)
    else:                                    # the labels first, the notes on the next line
        wl = max(longest_id, min(longest, width - (2 + 2 + values)), 9)
    span_col = 2 + wl + 2
    tail_col = span_col + values + 2

    def point_line(mark, label, c, tail):
        head = "%s %s  %s  %s  %s" % (mark, label.ljust(wl), c[0].rjust(wm), c[1].ljust(wi),
                                      c[2].rjust(wc))
        if not tail:
            return [head.rstrip()]
        if tail_col + 12 > width:                   # no room beside: the next line
            return [head.rstrip()] + [" " * span_col + l.strip()
                                      for l in _wrap(tail, span_col, width, span_col)]
        wrapped = _wrap(tail, tail_col, width, tail_col)
        return [head + "  " + wrapped[0]] + wrapped[1:]

    head = "  " + "%s  %s  %s  %s" % (HEADER[0].ljust(wl), HEADER[1].rjust(wm),
                                      HEADER[2].ljust(wi), HEADER[3].rjust(wc))
    out = [head + "  " + HEADER[4] if tail_col + 12 <= width else head]
    for family, rs in groups:
        out.append("== %s ==" % family)
        for r in rs:
            label = _fit(r.label, r.bench, wl)
            tail = ", ".join(r.tags)
            if r.cells:
                out += point_line(r.mark, label, r.cells, tail)
            else:
                text = r.text + ("  (%s)" % tail if tail else "")
                wrapped = _wrap(text, span_col, width, span_col)
                out.append("%s %s  %s" % (r.mark, label.ljust(wl), wrapped[0]))
                out += wrapped[1:]
    return [l.rstrip() for l in out]


def legend_lines(results: list[Result], groups, common, shared: list[str], width: int,
                 run_ref: str = "RUN") -> list[str]:
    """Below the table: the interval's level, what the marks and tags mean and what to
    do; last, the count of disturbed and imprecise results."""
    rows = [r for _, rs in groups for r in rs]
    lines = []
    if shared:
        lines.append("On every result: %s." % ", ".join(shared))
    advice = interval_advice(results, common)
    if advice:
        lines.append(advice)
    marks = {r.mark for r in rows}
    standings = {flags.standing(r) for r in results} - {None}
    words = ["%s %s" % (MARKS[k], MARK_WORDS[k]) for k in (
        flags.DISTURBED, flags.INCOMPLETE, flags.UNRELIABLE, flags.IMPRECISE)
        if k in standings and MARKS[k] in marks]
    if IMPRECISE_MARK in marks and flags.IMPRECISE not in standings:
        words.append("%s the repetitions' curves disagree" % IMPRECISE_MARK)
    if FAILED_MARK in marks:
        words.append("%s failed" % FAILED_MARK)
    if words:
        lines.append("Marks: %s." % "; ".join(words))
    meanings = {}
    for r in results:
        for w in r.warnings:
            tag, meaning = tag_of(w)
            meanings.setdefault(tag, meaning)
    meanings.update({t: m for t, m in CURVE_TAGS.items() if any(t in r.tags for r in rows)})
    used = [t for t in meanings if t in shared or any(t in r.tags for r in rows)]
    if used:
        lines.append("Notes: " + "; ".join("%s = %s" % (t, meanings[t]) for t in used) +
                     ". In full: osmeter show %s." % run_ref)
    count = flags.count_line(results)
    if count:
        lines.append(count + not_counted(results, " Not counted: %s."))
    return [l for line in lines for l in textwrap.wrap(line, width, subsequent_indent="  ")]


def not_counted(results, form: str = "%s") -> str:
    """What a run's result count (flags.counted, the one definition: measured, with a
    row of its own) leaves out, e.g. '7 skipped, 3 phases too short to time alone', in
    `form`; '' when nothing is left out."""
    kept = {id(r) for r in flags.counted(results)}
    left: dict[str, int] = {}
    for r in results:
        if id(r) in kept:
            continue
        word = ("skipped" if r.status == "skipped" else "failed" if r.status == "failed"
                else "phases too short to time alone" if too_short(r) else "without a median")
        left[word] = left.get(word, 0) + 1
    return form % ", ".join("%d %s" % (n, w) for w, n in left.items()) if left else ""


def results_table(results: list[Result], condense_sweeps: bool = False,
                  width: int | None = None, run_ref: str = "RUN") -> str:
    """The results grouped by family, one line per point and per curve, within `width`
    columns, with the legend of its marks and notes below and, last, how many results
    were disturbed or imprecise."""
    width = width or terminal_width()
    common = common_level(results)
    groups = summary_rows(results, condense_sweeps, common)
    shared = common_tags(groups)
    lines = render_rows(groups, width) + legend_lines(results, groups, common, shared, width,
                                                      run_ref)
    return "\n".join(lines)


def full_notes(results: list[Result], width: int | None = None) -> str:
    """Every flag and note of every result in full (for `osmeter show`), and once each,
    what to do about them."""
    width = width or terminal_width()
    out, advice_by_tag = [], {}
    for r in results:
        texts = []
        for f in flags.of(r):
            texts.append(f.text if f.legacy else "%s: %s" % (f.kind, f.text))
            if f.advice:
                advice_by_tag.setdefault(tag_of(f)[0], f.advice)
        curve = r.extra.get("curve") or {}
        if curve.get("agree") is False:
            texts.append("repetitions disagree: " + "; ".join(curve.get("disagreements") or []))
        stops = r.notes.get("stopped_by")
        if stops:
            texts.append("stopped by " + (stops if isinstance(stops, str) else "; ".join(stops)))
        if r.status != "ok":
            texts.append("%s: %s" % (r.status, r.reason or "no reason given"))
        if r.extra.get("too_short"):
            texts.append(r.extra["too_short"])
        for t in dict.fromkeys(texts):
            out += textwrap.wrap("%s: %s" % (r.label, t), width, subsequent_indent="    ")
    if not out:
        return ""
    out = ["Notes in full:"] + out
    if advice_by_tag:
        out.append("What to do:")
        for tag, advice in advice_by_tag.items():
            out += textwrap.wrap("%s: %s" % (tag, advice), width, initial_indent="  ",
                                 subsequent_indent="    ")
    return "\n".join(out)


def interval_advice(results: list[Result], common=None) -> str:
    """One line: the level the intervals share, and how many repetitions reach 95%."""
    short = {r.summary.get("repetitions") for r in results
             if r.status == "ok" and r.shape != "scatter" and r.summary.get("repetitions")
             and (r.summary.get("ci_level") is None
                  or r.summary["ci_level"] < stats.LEVEL)
             and r.summary.get("ci_method") != stats.BOOTSTRAP}
    parts = []
    if common == stats.AT_LEAST:
        parts.append("Intervals of the median: at least 95% unless marked")
    elif common == stats.BOOTSTRAP:
        parts.append("Intervals of the median: bootstrap (stored by an older osmeter, "
                     "level unknown) unless marked")
    elif common is not None:
        reps = next((n for n in range(2, 64) if abs(stats.order_statistic_level(n, 1)
                                                    - common) < 1e-9), None)
        parts.append("Intervals of the median: %s%% (%s) unless marked"
                     % (stats.fmt_percent(common), "[min, max] of %d repetitions" % reps
                        if reps else "as stored"))      # an imported level of its own
        short.discard(reps)
    if short:
        parts.append(", ".join("%d repetition%s %s" % (
            n, " gives" if n == 1 else "s give",
            "no interval" if n == 1 else "%s%%" % stats.fmt_percent(
                stats.order_statistic_level(n, 1))) for n in sorted(short)))
    if isinstance(common, float) or short:
        need = stats.repetitions_for(stats.LEVEL)
        parts.append("a 95%% interval needs at least %d repetitions (--repetitions %d)"
                     % (need, need))
    return "; ".join(parts) + "." if parts else ""


def run_header(run: Run, width: int | None = None) -> str:
    width = width or terminal_width()
    si = run.sysinfo
    lines = ["run %s%s  (%s, %s%s)" % (run.id, "  label %s" % run.label if run.label else "",
                                       run.status, run.suite or "custom",
                                       ", SMOKE: sizes too small to compare" if run.smoke else ""),
             "  host %s: %s, kernel %s, %s, %s" % (
                 si.get("hostname"), (si.get("os") or {}).get("name"),
                 (si.get("kernel") or {}).get("release"), (si.get("cpu") or {}).get("model"),
                 " ".join(str(v) for v in ((si.get("libc") or {}).get("name"),
                                           (si.get("libc") or {}).get("version")) if v)),
             "  started %s, %s" % (run.started, "finished %s" % run.finished
                                      if run.finished else "no end recorded")]
    variant = si.get("variant")
    if variant:
        lines.append("  variant: %s" % ", ".join("%s=%s" % kv for kv in variant.items()
                                                 if not isinstance(kv[1], dict)))
    for w in (run.environment or {}).get("warnings", []):
        lines.append("  warning: %s" % w)
    return "\n".join(l for line in lines
                     for l in textwrap.wrap(line, width, subsequent_indent="    "))


# ---- progress ---------------------------------------------------------------------------

class Progress:
    """One line on a terminal (bar, current benchmark, ETA); sparse lines otherwise."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done = total, 0
        self.enabled = enabled
        self.tty = enabled and sys.stderr.isatty()
        self.last_line = 0.0
        self.start = time.monotonic()
        self.first_eta: float | None = None
        self.lock = threading.Lock()    # the run and its ETA ticker both draw the line

    def show(self, what: str, remaining_s: float):
        with self.lock:
            self._show(what, remaining_s)

    def _show(self, what: str, remaining_s: float):
        if self.first_eta is None:
            self.first_eta = remaining_s
        if not self.enabled:
            return
        eta = fmt_duration(remaining_s)
        if self.tty:
            width = 24
            filled = int(width * self.done / max(1, self.total))
            line = "[%s%s] %d/%d %-34s ETA %s" % ("#" * filled, "-" * (width - filled),
                                                  self.done, self.total, what[:34], eta)
            self._write("\r" + line[:max(20, terminal_width(sys.stderr) - 1)])
        elif time.monotonic() - self.last_line > 15 or not self.last_line:
            self._write("progress: %d/%d %s, ETA %s\n" % (self.done, self.total, what, eta))
            self.last_line = time.monotonic()

    def finish(self):
        with self.lock:
            self._finish()

    def _finish(self):
        if self.tty:
            self._write("\r" + " " * max(20, terminal_width(sys.stderr) - 1) + "\r")

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def _write(self, text: str):
        """A terminal that hung up (EIO) ends the progress display, not the run."""
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except OSError:
            self.enabled = self.tty = False


def fmt_duration(s: float) -> str:
    s = max(0, int(round(s)))
    if s >= 3600:
        return "%dh%02dm" % (s // 3600, s % 3600 // 60)
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%ds" % s
