"""The history report: one self-contained HTML page with every result over many runs.

Per result one plot: the runs in the order they started along x (every run a point,
the whisker the range of its repetitions' medians), the level between change points
as a line, each change point a dashed line labelled with its size and the run where it
happened, bad runs as red diamonds.  Under each plot the same in words.  The analysis
is osmeter/analysis/history.py; this module only draws it.
"""
from __future__ import annotations

import math
from html import escape

from ..analysis import history as hist
from ..data.model import system_keys
from ..base import numbers
from . import svg
from .html import CSS, Page, _table, write_page

WIDTH, HEIGHT = 620, 260
LEFT, RIGHT, TOP, BOTTOM = 62, 14, 34, 58
DOT, CHANGE, BAD, LEVEL = "#1f4e79", "#c0392b", "#c0392b", "#e69f00"
NAME_CHAR_PX, NAME_GAP_PX = 6.0, 6.0     # the runs' names under the x axis


def plot(h: hist.History, s: hist.Series) -> str:
    div, unit = numbers.axis_unit([p.median for p in s.points], s.unit)
    values = [v / div for p in s.points for v in [p.median] + p.repetitions]
    log = svg.wants_log(values)
    lo, hi = svg.nice_range(values, log)
    n = len(s.points)
    sx = svg.Scale(-0.5, n - 0.5, LEFT, WIDTH - RIGHT)
    sy = svg.Scale(lo, hi, HEIGHT - BOTTOM, TOP, log)
    g = svg.Svg(WIDTH, HEIGHT, "%s over %d runs" % (s.label, n), "history")
    g.text(8, 18, "%s (%s, %s is better)" % (s.label, unit, s.better), 13, weight="600")
    for t in sy.ticks():
        g.line(LEFT - 4, sy(t), WIDTH - RIGHT, sy(t), "#eee")
        g.text(LEFT - 6, sy(t) + 4, numbers.tick(t), 11, "end", fill="#444")
    names = [h.names[p.run][:14] for p in s.points]
    # every step-th run named, so that no two names overlap (a name of font size 10 is
    # at most NAME_CHAR_PX a character wide, with a gap of NAME_GAP_PX between names)
    step = max(1, math.ceil((NAME_CHAR_PX * max(map(len, names)) + NAME_GAP_PX)
                            / (sx(1) - sx(0))))
    for i in range(0, n, step):
        g.text(sx(i), HEIGHT - BOTTOM + 14, names[i], 10, "middle", fill="#444")
    g.text((LEFT + WIDTH) / 2, HEIGHT - 18, "runs, oldest first%s; whisker: the "
           "repetitions' range" % (" (log scale)" if log else ""), 11, "middle", fill="#555")
    _levels(g, s, sx, sy, div)
    for c in s.analysis.changes:
        x = sx(c.at - 0.5)
        g.line(x, TOP, x, HEIGHT - BOTTOM, CHANGE, 1.2, "5 3")
        g.add('<text class="change" x="%.1f" y="%d" font-size="11" fill="%s" '
              'text-anchor="%s">%s</text>' % (
                  x + 3, TOP - 4, CHANGE, "start" if c.at < n * 0.7 else "end",
                  escape("%s at %s" % (hist.percent(c.ratio), h.names[s.points[c.at].run]))))
    for i, p in enumerate(s.points):
        x = sx(i)
        if len(p.repetitions) > 1:
            g.line(x, sy(min(p.repetitions) / div), x, sy(max(p.repetitions) / div),
                   "#9db3cc", 1.2)
        tip = "%s: %s %s" % (h.names[p.run], numbers.number(p.median / div), unit)
        if i in s.analysis.outliers:
            g.mark("diamond", x, sy(p.median / div), 5, BAD, tip + " (a bad run)")
        else:
            g.mark("circle", x, sy(p.median / div), 3.2, DOT, tip)
    return g.render()


def _levels(g: svg.Svg, s: hist.Series, sx, sy, div: float) -> None:
    """The median level between change points (a drift: the fitted line's ends)."""
    a = s.analysis
    if a.too_few:
        return
    cuts = [c.at for c in a.changes]
    bounds = [0] + cuts + [len(s.points)]
    for lo, hi in zip(bounds, bounds[1:]):
        kept = [p.median for i, p in enumerate(s.points[lo:hi], lo) if i not in a.outliers]
        if not kept:
            continue
        level = sorted(kept)[len(kept) // 2] / div
        g.line(sx(lo - 0.4), sy(level), sx(hi - 0.6), sy(level), LEVEL, 2.0)


def render(h: hist.History, title: str) -> tuple[str, list[tuple[str, str]]]:
    page = Page()
    page.add("<h1>%s</h1>" % escape(title))
    changed = [s for s in h.series if s.analysis.changes or s.analysis.outliers]
    page.add('<p class="meta">%d runs from %s to %s on %s; %d results, %d of them changed '
             'or with a bad run. Each plot has every run as a point (oldest first), the '
             'level between change points as an orange line, each change point dashed '
             'in red with its size and the run where it happened.</p>' % (
                 len(h.runs), escape(h.runs[0].started or "?"),
                 escape(h.runs[-1].started or "?"), escape(", ".join(h.hosts)),
                 len(h.series), len(changed)))
    page.add('<p class="note">Change points: a permutation test on the runs\' medians '
             '(p &le; %g, %d shuffles at a fixed seed), runs far from both neighbours '
             'named as bad runs, a straight line preferred when it fits better (a drift); '
             'false-alarm and detection rates are measured in docs/history.md.</p>'
             % (hist.ALPHA, hist.PERMUTATIONS))
    page.add('<h2 id="changes">Changes</h2>')
    if changed:
        page.add('<ul class="changes">%s</ul>' % "".join(
            "<li><b>%s</b>: %s</li>" % (escape(s.label), escape("; ".join(hist.describe(h, s))))
            for s in changed))
    else:
        page.add("<p>None found.</p>")
    page.add('<h2 id="series">Every result</h2><div class="figs">')
    for s in h.series:
        page.figure("history-%s" % s.label, plot(h, s), "; ".join(hist.describe(h, s))
                    or "steady")
    page.add("</div>")
    page.add('<h2 id="runs">Runs</h2>')
    page.add(_table(["run", "started", "host", "kernel", "id"], [
        [name, r.started or "", system_keys(r.sysinfo)["host"] or "",
         system_keys(r.sysinfo)["kernel"] or "", r.id] for name, r in zip(h.names, h.runs)]))
    html = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<title>%s</title><style>%s</style></head><body><main>%s</main></body></html>\n'
            % (escape(title), CSS, "\n".join(page.parts)))
    return html, page.figures


def write(h: hist.History, path: str, title: str, figures_dir: str | None = None) -> list[str]:
    text, figures = render(h, title)
    return write_page(path, text, figures, figures_dir)
