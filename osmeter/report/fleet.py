"""The fleet report: one self-contained HTML page that reads across many runs (hosts).

`osmeter report` writes it for fleet.MIN_RUNS (20) runs or more, or with --fleet: a
comparison's columns and legends do not read across dozens of runs.  Per result, one
dot plot: a row per run, labelled with the run's name directly beside its value, so
every run stays identifiable however many there are (no legend to match colours
against); the fleet's median and interquartile range behind the dots; outliers drawn
as red diamonds and named; with --by KEY the rows are grouped (kernel, CPU model, file
system, ...) with each group's median marked.  Under each plot the distribution in
numbers.  The analysis is osmeter/analysis/fleet.py; this module only draws it.
"""
from __future__ import annotations

from html import escape

from ..analysis.fleet import Fleet, Row
from ..data.model import system_keys
from ..base import numbers
from . import svg
from .fleet_table import claim, column_unit, number, outliers_by_run
from .html import CSS, Page, _table, slug, write_page

WIDTH = 620             # one plot: two side by side on a wide screen
ROW_H = 15
LABEL_W = 190           # the run names' column
TOP, BOTTOM = 34, 40
OUTLIER = "#c0392b"
DOT = "#1f4e79"

FLEET_CSS = """
figure.dot svg{max-width:%dpx}
td.wrapcell{white-space:normal;max-width:22em}
ul.outliers li{margin:2px 0}
""" % WIDTH


def dot_plot(fleet: Fleet, row: Row) -> str:
    """The row's values, one line per run, as an SVG."""
    div, unit = column_unit(row)
    order = _order(fleet, row)
    blocks = [g for g in dict.fromkeys(fleet.groups[v.run] for v in order)] \
        if fleet.group_by else [None]
    height = TOP + BOTTOM + ROW_H * (len(order) + (len(blocks) if fleet.group_by else 0))
    s = svg.Svg(WIDTH, height, "%s across %d runs" % (row.label, len(order)), "fleet")
    s.text(8, 18, "%s (%s, %s is better)" % (row.label, unit, row.better), 13, weight="600")
    values = [v.median / div for v in row.values] + \
        [x / div for v in row.values for x in (v.low, v.high) if x is not None]
    log = svg.wants_log(values)
    lo, hi = svg.nice_range(values, log)      # around the values: the hosts' differences
    sx = svg.Scale(lo, hi, LABEL_W + 10, WIDTH - 16, log)
    bottom = height - BOTTOM
    q = row.quartiles
    s.add('<rect class="iqr" x="%.1f" y="%d" width="%.1f" height="%d" fill="#eef2f7"/>'
          % (sx(q[1] / div), TOP - 4, max(1.0, sx(q[3] / div) - sx(q[1] / div)),
             bottom - TOP + 4))
    s.line(sx(q[2] / div), TOP - 4, sx(q[2] / div), bottom, "#7a8ca3", 1.2, "4 3")
    for t in sx.ticks():
        s.line(sx(t), bottom, sx(t), bottom + 4, "#888")
        s.text(sx(t), bottom + 16, numbers.tick(t), 11, "middle", fill="#444")
    s.text((LABEL_W + WIDTH) / 2, bottom + 32, "%s%s; dashed: fleet median; band: middle "
           "half" % (unit, ", log scale" if log else ""), 11, "middle", fill="#555")
    y = TOP
    for block in blocks:
        members = [v for v in order if not fleet.group_by or fleet.groups[v.run] == block]
        if fleet.group_by:
            y += ROW_H
            med = next((m for g, _, m in row.groups if g == block), None)
            s.text(8, y - 3, "%s: %s" % (fleet.group_by, block or "not recorded"), 11,
                   weight="600", fill="#333")
            if med is not None:
                s.line(sx(med / div), y - ROW_H + 4, sx(med / div),
                       y + ROW_H * len(members) - 4, "#e69f00", 2.0)
        for v in members:
            y += ROW_H
            _run_line(s, fleet, row, v, sx, div, y - 4)
    return s.render()


def _order(fleet: Fleet, row: Row) -> list:
    """Best first within each group (groups in name order)."""
    sign = 1 if row.better == "lower" else -1
    return sorted(row.values, key=lambda v: (fleet.groups[v.run] or "" if fleet.group_by
                                             else "", sign * v.median))


def _run_line(s: svg.Svg, fleet: Fleet, row: Row, v, sx, div: float, y: float) -> None:
    name = fleet.names[v.run]
    shown = name if len(name) <= 28 else name[:27] + "…"
    colour = OUTLIER if v.outlier else DOT
    tip = "%s: %s %s%s%s" % (name, number(v.median / div), column_unit(row)[1],
                            " [%s, %s]" % (number(v.low / div), number(v.high / div))
                            if v.low is not None and v.high is not None else "",
                            " (outlier)" if v.outlier else "")
    parts = ['<g class="run" data-run="%s"><title>%s</title>' % (escape(fleet.runs[v.run].id),
                                                                escape(tip)),
             '<text class="name" x="%.1f" y="%.1f" font-size="11" text-anchor="end" '
             'fill="%s"%s>%s</text>' % (LABEL_W, y + 4, colour,
                                        ' font-weight="700"' if v.outlier else "",
                                        escape(shown))]
    if v.low is not None and v.high is not None:
        parts.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" '
                     'stroke-width="1.2"/>' % (sx(v.low / div), y, sx(v.high / div), y, colour))
    x = sx(v.median / div)
    if v.outlier:
        parts.append('<polygon class="dot outlier" points="%.1f,%.1f %.1f,%.1f %.1f,%.1f '
                     '%.1f,%.1f" fill="%s"/>' % (x, y - 5, x + 5, y, x, y + 5, x - 5, y,
                                                 OUTLIER))
    else:
        parts.append('<circle class="dot" cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>'
                     % (x, y, DOT))
    s.add("".join(parts) + "</g>")


def distribution_text(fleet: Fleet, row: Row) -> str:
    """The row's numbers under its plot."""
    div, unit = column_unit(row)
    q = row.quartiles

    def val(x):
        return "%s %s" % (number(x / div), unit)
    parts = ["%d runs: median %s, middle half %s to %s (spread %.1f%%), range %s to %s"
             % (len(row.values), val(q[2]), val(q[1]), val(q[3]), 100 * (row.spread or 0),
                val(q[0]), val(q[4]))]
    if row.outliers:
        parts.append("outliers: " + ", ".join(
            "%s (%s x the median, %s)" % (fleet.names[v.run], number(v.median / q[2]),
                                          "worse" if row.worse(v) else "better")
            for v in row.outliers))
    elif row.cutoff is None:
        parts.append("outliers not named: %s" % row.why_no_outliers)
    if row.groups:
        parts.append("by %s: %s" % (fleet.group_by, "; ".join(
            "%s %s (%d)" % (g, val(m), n) for g, n, m in row.groups)))
    if row.missing:
        parts.append("not measured on %s" % ", ".join(
            "%s (%s)" % (fleet.names[i], why) for i, why in row.missing))
    return ". ".join(parts) + "."


def render(fleet: Fleet, title: str) -> tuple[str, list[tuple[str, str]]]:
    page = Page()
    hosts = {system_keys(r.sysinfo)["host"] for r in fleet.runs}
    judged = [r for r in fleet.rows if r.cutoff is not None]
    page.add("<h1>%s</h1>" % escape(title))
    page.add('<p class="meta">%d runs from %d hosts%s; %d results. Each plot has a line per '
             'run, named beside its value; the dot is the run\'s median, the whisker its '
             'interval.</p>' % (len(fleet.runs), len(hosts), "; grouped by %s"
                                % escape(fleet.group_by) if fleet.group_by else "",
                                len(fleet.rows)))
    for note in fleet.left_out:
        page.add('<p class="note">Not in this report: %s.</p>' % escape(note))
    page.add('<h2 id="runs">Runs</h2>')
    page.add(_table(["run", "host", "kernel", "OS", "CPU"] +
                    ([fleet.group_by] if _group_column(fleet) else []) + ["started", "id"],
                    [_run_cells(fleet, i) for i in range(len(fleet.runs))], raw=True))
    page.add('<h2 id="outliers">Outliers</h2>')
    page.add('<p class="note">%s.</p>' % escape(claim(len(judged))[0].upper() +
                                                claim(len(judged))[1:]))
    named = outliers_by_run(fleet, judged)
    if named:
        page.add('<ul class="outliers">%s</ul>' % "".join(
            "<li><b>%s</b>: %s</li>" % (escape(fleet.names[run]), escape(text))
            for run, text in named))
    else:
        page.add("<p>None.</p>")
    for category in dict.fromkeys(r.category for r in fleet.rows):
        page.add('<h2 id="cat-%s">%s</h2>' % (escape(slug(category)), escape(category)))
        page.add('<div class="figs">')
        for row in fleet.rows:
            if row.category != category or not row.values:
                continue
            name = "fleet-%s" % row.label
            page.figure(name, dot_plot(fleet, row), distribution_text(fleet, row))
            page.parts[-1] = page.parts[-1].replace("<figure ", '<figure class="dot" ', 1)
        page.add("</div>")
    html = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<title>%s</title><style>%s%s</style></head><body><main>%s</main></body></html>\n'
            % (escape(title), CSS, FLEET_CSS, "\n".join(page.parts)))
    return html, page.figures


def _run_cells(fleet: Fleet, i: int) -> list[str]:
    run = fleet.runs[i]
    keys = system_keys(run.sysinfo)
    texts = [fleet.names[i], keys["host"] or "", keys["kernel"] or "", keys["os"] or "",
             keys["cpu"] or ""] + ([fleet.groups[i] or ""] if _group_column(fleet) else []) + \
        [run.started, run.id]
    return ['<td class="wrapcell">%s</td>' % escape(t) for t in texts]


def _group_column(fleet: Fleet) -> bool:
    """The runs table has a column for the groups unless it shows that key already."""
    return bool(fleet.group_by) and fleet.group_by not in ("host", "kernel", "os", "cpu")


def write(fleet: Fleet, path: str, title: str, figures_dir: str | None = None) -> list[str]:
    """Write the page (and each plot as an SVG file when figures_dir is given); the
    figures' file names."""
    text, figures = render(fleet, title)
    return write_page(path, text, figures, figures_dir)
