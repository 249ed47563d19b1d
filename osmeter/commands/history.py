"""`osmeter history [RUN ...] [--where KEY=GLOB] [--bench GLOB] [--json] [-o FILE]`: every
result over many stored runs, oldest first, one line each with a sparkline and where it
changed (osmeter/analysis/history.py); -o also writes the history report (HTML, every run a
point, the changes marked)."""
from __future__ import annotations

import json
import math
import sys

from ..report import display
from ..analysis import history as hist
from ..base import numbers
from .common import RunSource, UsageError, add_where, write_page

BARS = "▁▂▃▄▅▆▇█"
CHANGE_MARK = "|"       # between two runs: a change point
BAD_MARK = "×"          # one bad run


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "history", help="each result over many runs: a sparkline and where it changed",
        description="Read each benchmark result over many stored runs (oldest first): a "
                    "line per result with a sparkline of the runs' medians, and the change "
                    "points found (a step, a step that reverted, a slow drift, one bad "
                    "run), with their size and the run where they happened.  Select the "
                    "runs of one machine with --where (host=..., label=..., since=...).")
    s.add_argument("runs", nargs="*", metavar="RUN", help="runs (id, label, or a results "
                   "file); with --where, added to those it selects; none: every stored "
                   "run that is not a smoke run")
    add_where(s)
    s.add_argument("--bench", action="append", metavar="GLOB", help="only these "
                   "benchmarks (ids, labels or globs, repeatable)")
    s.add_argument("--changed", action="store_true", help="only the results with a "
                   "change or a bad run")
    s.add_argument("--json", action="store_true", help="the series and their changes as "
                   "JSON")
    s.add_argument("-o", "--output", metavar="FILE", help="also write the history report "
                   "(HTML) to FILE")
    s.add_argument("--title", default="osmeter history", help="the report's title")
    s.set_defaults(func=handle)


def load(args) -> hist.History:
    where = list(args.where or [])
    if not args.runs and not where:
        where = ["smoke=no"]
    with RunSource(args.db) as source:
        runs = source.runs(args.runs, where)
    h = hist.build(runs, args.bench)
    if not h.series:
        raise UsageError("no measured result %sin the %d run(s) selected"
                         % ("matches --bench %s " % " ".join(args.bench) if args.bench
                            else "", len(runs)))
    return h


def sparkline(s: hist.Series, width: int) -> str:
    """The newest `width` runs (marks included) as bars, lowest to highest."""
    changes = {c.at for c in s.analysis.changes}
    cells = []
    for i, p in enumerate(s.points):
        if i in changes and i:
            cells.append((None, CHANGE_MARK))
        cells.append((i, p.median))
    cells = cells[-width:]
    values = [v for i, v in cells if i is not None]
    positive = all(v > 0 for v in values)
    scaled = [math.log(v) for v in values] if positive else values
    lo, hi = min(scaled), max(scaled)
    out = []
    for i, v in cells:
        if i is None:
            out.append(v)
            continue
        if i in s.analysis.outliers:
            out.append(BAD_MARK)
            continue
        x = math.log(v) if positive else v
        level = 0 if hi <= lo else round((x - lo) / (hi - lo) * (len(BARS) - 1))
        out.append(BARS[level])
    return "".join(out)


def terminal(h: hist.History, width: int, changed_only: bool = False) -> str:
    first, last = h.runs[0], h.runs[-1]
    lines = ["%s from %s (%s) to %s (%s)%s" % (
        numbers.count(len(h.runs), "run"), h.names[0], (first.started or "?")[:16], h.names[-1],
        (last.started or "?")[:16], "" if len(h.hosts) == 1 else
        "; from %d hosts (%s): select one with --where host=NAME"
        % (len(h.hosts), ", ".join(h.hosts)))]
    shown = [s for s in h.series
             if not changed_only or s.analysis.changes or s.analysis.outliers]
    # A label longer than its column is never cut (four rows would read alike): it gets
    # a line of its own, the sparkline the next.
    label_w = min(max((len(s.label) for s in shown), default=10), max(16, width // 3))
    latest = {id(s): numbers.measured(s.points[-1].median, s.unit) for s in shown}
    latest_w = max((len(t) for t in latest.values()), default=9)
    spark_w = max(8, min(40, width - label_w - latest_w - 3))
    spark_w = min(spark_w, max(len(s.points) + len(s.analysis.changes) for s in shown)
                  if shown else 8)
    for s in shown:
        label = s.label
        if len(label) > label_w:
            lines.append(label)
            label = ""
        head = "%-*s %-*s %*s" % (label_w, label, spark_w, sparkline(s, spark_w),
                                  latest_w, latest[id(s)])
        said = hist.describe(h, s)
        text = "; ".join(said) if said else "steady"
        room = width - len(head) - 2
        lines += _wrapped(head, text, room, width)
    n_changed = sum(1 for s in h.series if s.analysis.changes)
    n_bad = sum(1 for s in h.series if s.analysis.outliers)
    lines.append("")
    lines.append("%d of %d results changed, %d with a bad run. Bars: each run's median "
                 "(log scale, at most the newest %d); %s a change point, %s a bad run."
                 % (n_changed, len(h.series), n_bad, spark_w, CHANGE_MARK, BAD_MARK))
    lines.append("Changes: on the runs' medians, p <= %g: under %d runs a t test (its "
                 "noise pooled with the other results', bounded by their repetitions; "
                 "a step at p <= %g, the newest run at %g), else a permutation test (%d "
                 "shuffles, fixed seed); false alarms and detection rates measured in "
                 "docs/history.md." % (hist.ALPHA, hist.SHORT_RUNS, hist.STEP_ALPHA,
                                       hist.LATEST_ALPHA, hist.PERMUTATIONS))
    out = []
    for line in lines:
        out += [line] if len(line) <= width else display._wrap(line, 0, width, 2)
    return "\n".join(out) + "\n"


def _wrapped(head: str, text: str, room: int, width: int) -> list[str]:
    """head and text on one line when it fits, else text indented under head."""
    if room >= 20 and len(text) <= room:
        return [head + "  " + text]
    return [head] + display._wrap("    " + text, 0, width, 6)


def handle(args) -> int:
    h = load(args)
    if args.json:
        json.dump(hist.to_json(h), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(terminal(h, display.terminal_width(), args.changed))
    if args.output:
        from ..report import history as history_report
        write_page(args.output, lambda: history_report.write(h, args.output, args.title))
    return 0
