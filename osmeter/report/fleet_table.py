"""The fleet in the terminal: one row per run (host), one column per chosen benchmark, as
lmbench's summary tables read; the columns in category order, in as many tables as the
terminal's width needs.

Each column is in one unit (its header says which); a value marked `!` is an outlier
of its column (osmeter/analysis/fleet.py says what that claims), `-` was not measured on that
run.  Under the rows: the fleet's median and spread per column, and the outliers named
with how far and which way they lie.
"""
from __future__ import annotations

import textwrap

from . import display
from ..analysis.fleet import MIN_EFFECT, Fleet, Row

from ..base.numbers import axis_unit, number

DEFAULT_WIDTH = 100


def column_unit(row: Row) -> tuple[float, str]:
    """(divisor, unit) the column's values are written in."""
    return axis_unit([v.median for v in row.values], row.unit)


def chosen_rows(fleet: Fleet, named: bool) -> list[Row]:
    """The rows to show: every measured row when benchmarks were named, else the points
    (a sweep's sizes are columns only when asked for by name)."""
    return [r for r in fleet.rows if r.values and (named or r.x is None)]


def terminal(fleet: Fleet, named: bool = False, width: int = DEFAULT_WIDTH) -> str:
    rows = chosen_rows(fleet, named)
    if not rows:
        return "no result measured on these runs to show\n"
    name_w = min(28, max(len(n) for n in fleet.names))
    lead = ["run"] + (["%s" % fleet.group_by] if fleet.group_by else [])
    group_w = max([len(g or "?") for g in fleet.groups] + [len(fleet.group_by or "")]) + 2 \
        if fleet.group_by else 0
    out = []
    for chunk in _chunks(rows, width - name_w - group_w):    # in category order
        out.append(_table(fleet, chunk, lead, name_w))
        out.append("")
    for line in outlier_lines(fleet, rows):
        out += textwrap.wrap(line, width, subsequent_indent=" " * (4 if line[:1] == " " else 2),
                             break_on_hyphens=False)
    return "\n".join(out).rstrip() + "\n"


def _chunks(rows: list[Row], room: int) -> list[list[Row]]:
    chunks, current, used = [], [], 0
    for r in rows:
        w = _col_width(r) + 2
        if current and used + w > room:
            chunks.append(current)
            current, used = [], 0
        current.append(r)
        used += w
    return chunks + ([current] if current else [])


def _head(r: Row) -> tuple[str, str]:
    return r.label, "(%s)" % column_unit(r)[1]


def _col_width(r: Row) -> int:
    return max(9, *(len(h) for h in _head(r)))


def _cell(r: Row, run: int) -> str:
    div, _ = column_unit(r)
    for v in r.values:
        if v.run == run:
            return number(v.median / div) + ("!" if v.outlier else "")
    return "-"


def _table(fleet: Fleet, rows: list[Row], lead: list[str], name_w: int) -> str:
    heads = [_head(r) for r in rows]
    body = []
    for i, name in enumerate(fleet.names):
        cells = [name if len(name) <= name_w else name[:name_w - 1] + "…"]
        if fleet.group_by:
            cells.append(fleet.groups[i] or "?")
        body.append(cells + [_cell(r, i) for r in rows])
    pad = [""] * (len(lead) - 1)
    body.append(["median"] + pad + [number(r.quartiles[2] / column_unit(r)[0]) for r in rows])
    for group in sorted({g for g in fleet.groups if g is not None}):
        body.append(["median of"] + pad[:-1] + [group] + [_group_median(r, group) for r in rows])
    body.append(["spread (IQR)"] + pad + [("%.1f%%" % (100 * r.spread))
                                          if r.spread is not None else "-" for r in rows])
    text = display.table(body, lead + [h[0] for h in heads],
                         right=set(range(len(lead), len(lead) + len(rows))))
    lines = text.split("\n")
    tail = 2 + len({g for g in fleet.groups if g is not None})     # the rows under the rule
    # the units under the names, aligned like the rule below the header
    rule = lines[1]
    widths = [len(w) for w in rule.split("  ")]
    units = ["".ljust(w) for w in widths[:len(lead)]] + \
        [h[1].rjust(w) for h, w in zip(heads, widths[len(lead):])]
    return "\n".join([lines[0], "  ".join(units).rstrip()] + lines[1:-tail] + [rule] +
                     lines[-tail:])


def _group_median(r: Row, group: str) -> str:
    for g, _, median in r.groups:
        if g == group:
            return number(median / column_unit(r)[0])
    return "-"


def outlier_lines(fleet: Fleet, rows: list[Row]) -> list[str]:
    """One line per outlier of the rows shown, and what naming one claims."""
    judged = [r for r in rows if r.cutoff is not None]
    lines = ["  %s: %s" % (fleet.names[run], text) for run, text in outliers_by_run(fleet, judged)]
    if not judged:
        return []
    return ["%s among %d runs in %d results; %s" % (
        "outliers" if lines else "no outlier", len(fleet.runs), len(judged),
        claim(len(judged)))] + lines


def outliers_by_run(fleet: Fleet, rows: list[Row]) -> list[tuple[int, str]]:
    """(run, what stands out in it) for each run named an outlier in any of the rows:
    'worse in syscall.getpid (1.43 x the median), ...; better in ...'."""
    found: dict[int, dict[str, list[str]]] = {}
    for r in rows:
        for v in r.outliers:
            way = "worse" if r.worse(v) else "better"
            found.setdefault(v.run, {}).setdefault(way, []).append(
                "%s (%s x the median)" % (r.label, number(v.median / r.quartiles[2])))
    return [(run, "; ".join("%s in %s" % (way, ", ".join(items))
                            for way, items in sorted(ways.items(), key=lambda t: t[0] != "worse")))
            for run, ways in sorted(found.items())]


def claim(results: int) -> str:
    """What naming outliers claims, for this many results judged."""
    return ("a host is named where it lies far from the others and at least %d%% from their "
            "median; where all hosts are alike, each result names one with at most 5%% "
            "chance (so %.1f of %d by chance at most, on average)"
            % (round(100 * MIN_EFFECT), 0.05 * results, results))
