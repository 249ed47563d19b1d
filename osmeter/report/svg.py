"""Small, dependency-free SVG charts: bars (linear axes) or dots (log axes) with
intervals, curves over size, scatters of single operations.

Every chart is a standalone <svg> string with a viewBox (it scales with the page), a
<title> for accessibility, nothing that needs a script or a network, and the number of
values it draws in `data-points` (each drawn value is an element of class "pt").  Each
run keeps one style in every figure, from `run_style`: a colour of the Okabe–Ito palette
(readable with the common colour-vision deficiencies) AND a marker shape and a dash
pattern, so that runs stay apart in grey print and in fleets of many runs.  Numbers and
units are written by numbers.py.
"""
from __future__ import annotations

import math
from html import escape

from ..base import numbers

PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#999999"]
MARKERS = ("circle", "square", "triangle", "diamond", "cross")
DASHES = ("", "7 3", "2 3", "9 3 2 3", "4 2 1 2")
WIDTH = 760
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"
MAX_POINTS = 6000        # per scatter figure; beyond it points are thinned evenly
LOG_SPAN = 50.0          # values spanning more than this factor go on a log axis


def run_style(i: int) -> tuple[str, str, str]:
    """(colour, marker, dash) of run i: 8 colours x 5 markers, unique up to 40 runs."""
    return PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)], DASHES[i % len(DASHES)]


def colour(i: int) -> str:
    return run_style(i)[0]


def marker(shape: str, x: float, y: float, r: float, fill: str, cls: str = "pt",
           title: str = "") -> str:
    """One value's mark: a small shape centred on (x, y)."""
    t = "<title>%s</title>" % escape(title) if title else ""
    if shape == "square":
        return ('<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s">%s'
                '</rect>' % (cls, x - r, y - r, 2 * r, 2 * r, fill, t))
    if shape in ("triangle", "diamond", "up"):
        pts = ((x, y - 1.2 * r), (x + 1.1 * r, y + 0.8 * r), (x - 1.1 * r, y + 0.8 * r)) \
            if shape != "diamond" else ((x, y - 1.3 * r), (x + 1.3 * r, y), (x, y + 1.3 * r),
                                        (x - 1.3 * r, y))
        return ('<polygon class="%s" points="%s" fill="%s">%s</polygon>'
                % (cls, " ".join("%.1f,%.1f" % p for p in pts), fill, t))
    if shape == "cross":
        d = r * 0.9
        return ('<path class="%s" d="M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f" stroke="%s" '
                'stroke-width="%.1f" fill="none">%s</path>'
                % (cls, x - d, y - d, x + d, y + d, x - d, y + d, x + d, y - d, fill,
                   max(1.2, r * 0.7), t))
    return '<circle class="%s" cx="%.1f" cy="%.1f" r="%.1f" fill="%s">%s</circle>' % (
        cls, x, y, r, fill, t)


# ---- scales -----------------------------------------------------------------------------

class Scale:
    """Linear or log10 mapping of [lo, hi] onto pixels [a, b].  A log scale with
    `zero_gap` > 0 also places 0 (which a log axis cannot show): at `a`, separated from
    the log range, which starts `zero_gap` pixels further, by a break in the axis."""

    def __init__(self, lo: float, hi: float, a: float, b: float, log: bool = False,
                 zero_gap: float = 0.0):
        if log:
            lo, hi = max(lo, 1e-300), max(hi, 1e-300)
        if hi <= lo:
            hi = lo * 1.1 + 1e-9 if not log else lo * 10
        self.lo, self.hi, self.a, self.b, self.log = lo, hi, a, b, log
        self.zero_gap = zero_gap if log else 0.0
        self.base2 = False

    def __call__(self, v: float) -> float:
        if self.log:
            if v <= 0 and self.zero_gap:
                return self.a
            v = max(v, 1e-300)
            t = (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
            start = self.a + math.copysign(self.zero_gap, self.b - self.a)
            return start + t * (self.b - start)
        t = (v - self.lo) / (self.hi - self.lo)
        return self.a + t * (self.b - self.a)

    def ticks(self, n: int = 6) -> list[float]:
        zero = [0.0] if self.zero_gap else []
        if self.log and self.base2:
            e0, e1 = math.floor(math.log2(self.lo)), math.ceil(math.log2(self.hi))
            step = max(1, math.ceil((e1 - e0) / 8))
            return zero + [2.0 ** e for e in range(e0, e1 + 1, step)
                           if self.lo * 0.999 <= 2.0 ** e <= self.hi * 1.001]
        if self.log:
            e0, e1 = math.floor(math.log10(self.lo)), math.ceil(math.log10(self.hi))
            step = max(1, math.ceil((e1 - e0) / 8))
            ticks = [10.0 ** e for e in range(e0, e1 + 1, step)]
            if e1 - e0 <= 2:
                ticks = sorted(set(ticks + [m * 10.0 ** e for e in range(e0, e1 + 1)
                                            for m in (2, 5)]))
            return zero + [t for t in ticks if self.lo * 0.999 <= t <= self.hi * 1.001]
        span = self.hi - self.lo
        raw = span / n
        mag = 10 ** math.floor(math.log10(raw))
        step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
        t = math.ceil(self.lo / step) * step
        out = []
        while t <= self.hi + step * 1e-9:
            out.append(0.0 if abs(t) < step * 1e-9 else t)
            t += step
        return out


def nice_range(values: list[float], log: bool, zero: bool = False) -> tuple[float, float]:
    vals = [v for v in values if v is not None and (v > 0 or not log)]
    if not vals:
        return (1.0, 10.0) if log else (0.0, 1.0)
    lo, hi = min(vals), max(vals)
    if log:
        return 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
    if zero:
        lo = min(0.0, lo)
    pad = (hi - lo) * 0.05 or abs(hi) * 0.1 or 1.0
    return (lo if zero else lo - pad), hi + pad


def wants_log(values: list[float], threshold: float = LOG_SPAN) -> bool:
    vals = [v for v in values if v is not None and v > 0]
    return bool(vals) and max(vals) / min(vals) > threshold


def quantile(sorted_values: list[float], q: float) -> float:
    k = (len(sorted_values) - 1) * q
    i = int(k)
    j = min(i + 1, len(sorted_values) - 1)
    return sorted_values[i] + (sorted_values[j] - sorted_values[i]) * (k - i)


# ---- drawing --------------------------------------------------------------------------------

class Svg:
    def __init__(self, width: int, height: int, title: str, kind: str):
        self.w, self.h, self.parts = width, height, []
        self.title, self.kind = title, kind
        self.points = 0                 # values drawn (elements of class "pt")

    def add(self, s: str) -> None:
        self.parts.append(s)

    def mark(self, shape, x, y, r, fill, title="", cls="pt") -> None:
        self.add(marker(shape, x, y, r, fill, cls, title))
        self.points += 1

    def text(self, x, y, s, size=12, anchor="start", weight="normal", fill="#222", extra=""):
        self.add('<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" font-weight="%s" '
                 'fill="%s"%s>%s</text>' % (x, y, size, anchor, weight, fill, extra, escape(str(s))))

    def line(self, x1, y1, x2, y2, stroke="#888", width=1.0, dash=None):
        d = ' stroke-dasharray="%s"' % dash if dash else ""
        self.add('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"%s/>'
                 % (x1, y1, x2, y2, stroke, width, d))

    def render(self) -> str:
        return ('<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-kind="%s" '
                'data-points="%d" viewBox="0 0 %d %d" width="%d" height="%d" role="img" '
                'style="%s"><title>%s</title><rect width="100%%" height="100%%" fill="#fff"/>'
                '%s</svg>' % (self.kind, self.points, self.w, self.h, self.w, self.h, FONT,
                              escape(self.title), "".join(self.parts)))


def _legend(svg: Svg, names: list[tuple[int, str]], x: float, y: float) -> None:
    """Each run's colour, marker and dash, with its name; rows of up to 4 entries."""
    per_row = min(4, max(1, len(names)))
    step = (svg.w - x) / per_row
    for k, (ri, name) in enumerate(names):
        xx = x + (k % per_row) * step
        yy = y + (k // per_row) * 16
        col, shape, dash = run_style(ri)
        svg.add('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>'
                % (xx, yy - 4, xx + 22, yy - 4, col,
                   ' stroke-dasharray="%s"' % dash if dash else ""))
        svg.add(marker(shape, xx + 11, yy - 4, 4, col, "key"))
        svg.text(xx + 28, yy, name[:max(4, int((step - 34) / 6.5))], 12)


def legend_height(n: int) -> int:
    return 16 * ((n + 3) // 4)


def _x_axis(svg, sx, y, fmt, label):
    svg.line(sx.a, y, sx.b, y, "#444")
    if sx.zero_gap:                      # the break between 0 and the log range
        bx = sx.a + sx.zero_gap / 2
        svg.add('<rect x="%.1f" y="%.1f" width="6" height="9" fill="#fff"/>' % (bx - 3, y - 4))
        svg.line(bx - 5, y + 4, bx - 1, y - 4, "#444")
        svg.line(bx + 1, y + 4, bx + 5, y - 4, "#444")
    for t in sx.ticks():
        X = sx(t)
        svg.line(X, y, X, y + 4, "#444")
        svg.text(X, y + 17, fmt(t), 11, "middle")
    svg.text((sx.a + sx.b) / 2, y + 34, label, 12, "middle")


def _y_axis(svg, sy, x, x_right, fmt, label):
    svg.line(x, sy.a, x, sy.b, "#444")
    if sy.zero_gap:                      # the break between 0 and the log range
        by = sy.a - sy.zero_gap / 2
        svg.add('<rect x="%.1f" y="%.1f" width="9" height="6" fill="#fff"/>' % (x - 4, by - 3))
        svg.line(x - 4, by + 1, x + 4, by + 5, "#444")
        svg.line(x - 4, by - 5, x + 4, by - 1, "#444")
    for t in sy.ticks():
        Y = sy(t)
        svg.line(x - 4, Y, x, Y, "#444")
        svg.line(x, Y, x_right, Y, "#e5e5e5")
        svg.text(x - 7, Y + 4, fmt(t), 11, "end")
    svg.text(14, (sy.a + sy.b) / 2, label, 12, "middle",
             extra=' transform="rotate(-90 14 %.1f)"' % ((sy.a + sy.b) / 2))


def _label(text: str, room_px: float) -> str:
    chars = max(6, int(room_px / 6.2))
    return text if len(text) <= chars else text[:chars - 1] + "…"


# ---- charts ---------------------------------------------------------------------------------

def bar_chart(title: str, unit: str, groups: list[tuple[str, list[tuple]]],
              names: list[str], note: str = "", reference: float | None = None) -> str:
    """One row per group: groups = [(row label, [(run index, value, lo, hi), ...])].
    Bars from zero on a linear axis; where the values span more than 50x, dots on a log
    axis instead (a bar's length means nothing there).  Whiskers show the interval."""
    values = [v for _, bars in groups for _, m, lo, hi in bars for v in (m, lo, hi)
              if v is not None]
    div, shown_unit = numbers.axis_unit(values, unit)
    scaled = [(label, [(ri, _div(m, div), _div(lo, div), _div(hi, div))
                       for ri, m, lo, hi in bars]) for label, bars in groups]
    label_w = min(330, 14 + 6.3 * max((len(g[0]) for g in groups), default=10))
    per_bar = 14
    nb = max((len(b) for _, b in groups), default=1)
    group_h = nb * per_bar + 12
    top = 48
    legend_h = legend_height(len(names)) if len(names) > 1 else 0
    h = int(top + group_h * len(groups) + 44 + legend_h + 8)
    vals = [v for _, bars in scaled for _, m, lo, hi in bars for v in (m, lo, hi)
            if v is not None]
    if reference is not None:
        vals.append(reference)
    log = wants_log(vals)
    svg = Svg(WIDTH, h, title, "dot" if log else "bar")
    svg.text(10, 20, title, 14, weight="bold")
    if note:
        svg.text(10, 38, note, 11, fill="#555")
    lo, hi = nice_range(vals, log, zero=not log)
    sx = Scale(lo, hi, label_w, WIDTH - 20, log, 24.0 if log and 0 in vals else 0.0)
    bottom = top + group_h * len(groups)
    for t in sx.ticks():
        svg.line(sx(t), top - 4, sx(t), bottom, "#e5e5e5")
    y = top
    for (label, bars), (full, _) in zip(scaled, groups):
        svg.add('<text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#222">'
                '<title>%s</title>%s</text>' % (label_w - 8, y + group_h / 2 + 3, escape(full),
                                                escape(_label(label, label_w - 12))))
        for k, (ri, m, blo, bhi) in enumerate(bars):
            by = y + 4 + k * per_bar
            cy = by + (per_bar - 3) / 2
            col, shape, _ = run_style(ri)
            if m is None:
                svg.text(label_w + 4, by + 10, "not measured", 10, fill="#888")
                continue
            tip = "%s: %s" % (names[ri], numbers.join(numbers.number(m), shown_unit))
            if not log:
                x0 = sx(max(0.0, sx.lo))
                svg.add('<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%d" '
                        'fill="%s" fill-opacity="0.85"><title>%s</title></rect>'
                        % (x0, by, max(1.0, sx(m) - x0), per_bar - 3, col, escape(tip)))
            if blo is not None and bhi is not None and (not log or blo > 0):
                svg.line(sx(blo), cy, sx(bhi), cy, "#111", 1.2)
                svg.line(sx(blo), cy - 4, sx(blo), cy + 4, "#111", 1.2)
                svg.line(sx(bhi), cy - 4, sx(bhi), cy + 4, "#111", 1.2)
            svg.mark(shape, sx(m), cy, 4.5 if log else 3.5, col if log else "#fff", tip)
        y += group_h
    if reference is not None:
        svg.line(sx(reference), top - 4, sx(reference), bottom, "#000", 1.2, "4 3")
    _x_axis(svg, sx, bottom, numbers.tick, shown_unit + (" (log scale)" if log else ""))
    if len(names) > 1:
        _legend(svg, list(enumerate(names)), label_w, bottom + 52)
    return svg.render()


def _div(v, div):
    return None if v is None else v / div


def _plot_frame(title, x_label, y_label, xs, ys, logx, logy, height=380, note="",
                x_is_size=False, legend_rows=1):
    svg = Svg(WIDTH, height, title, "")
    svg.text(10, 20, title, 14, weight="bold")
    if note:
        svg.text(10, 38, note, 11, fill="#555")
    left, right, top, bottom = 74, WIDTH - 20, 50, height - 56 - 16 * legend_rows
    xpos = [x for x in xs if x > 0] if logx else xs
    xlo = min(xpos) if xpos else 0.0          # the x axis spans exactly the measured range
    xhi = max(xpos) if xpos else 1.0
    ylo, yhi = nice_range(ys, logy, zero=not logy)
    zero_gap = 28.0 if logx and any(x <= 0 for x in xs) else 0.0
    sx = Scale(xlo, xhi, left, right, logx, zero_gap)
    sx.base2 = logx and x_is_size
    sy = Scale(ylo, yhi, bottom, top, logy, 24.0 if logy and any(y <= 0 for y in ys) else 0.0)
    _y_axis(svg, sy, left, right, lambda v: "0" if v == 0 else numbers.tick(v),
            y_label + (" (log)" if logy else ""))
    xfmt = numbers.size if x_is_size else numbers.tick
    _x_axis(svg, sx, bottom, lambda v: "0" if v == 0 else xfmt(v),
            x_label + (" (log scale)" if logx else ""))
    return svg, sx, sy


def line_chart(title: str, x_label: str, y_label: str,
               series: list[tuple[int, str, list[tuple]]], note: str = "",
               unit: str = "", x_is_size: bool = False) -> str:
    """Curves over size: series = [(run index, name, [(x, median, lo, hi), ...])].
    Log x axis (sizes grow by powers of two; 0 sits before a break in the axis); log y
    when the values span > 50x.  Every point is drawn with the run's marker."""
    values = [v for _, _, pts in series for p in pts for v in p[1:] if v is not None]
    div, shown_unit = numbers.axis_unit(values, unit)
    series = [(ci, name, [(x, _div(m, div), _div(lo, div), _div(hi, div)) for x, m, lo, hi in pts])
              for ci, name, pts in series]
    xs = [p[0] for _, _, pts in series for p in pts if p[0] is not None]
    ys = [v for _, _, pts in series for p in pts for v in p[1:] if v is not None]
    positive = [x for x in xs if x > 0]
    logx = bool(positive) and max(positive) / min(positive) >= 8
    logy = wants_log(ys)
    rows = (len(series) + 3) // 4
    svg, sx, sy = _plot_frame(title, x_label, "%s (%s)" % (y_label, shown_unit) if shown_unit
                              else y_label, xs, ys, logx, logy, 380 + 16 * (rows - 1), note,
                              x_is_size, rows)
    svg.kind = "sweep"
    for ci, name, pts in series:
        col, shape, dash = run_style(ci)
        pts = sorted((p for p in pts if p[1] is not None), key=lambda p: p[0])
        band = [(x, lo) for x, _, lo, _ in pts if lo is not None]
        band_hi = [(x, hi) for x, _, _, hi in pts if hi is not None]
        if len(band) == len(pts) == len(band_hi) and len(pts) > 1:
            poly = " ".join("%.1f,%.1f" % (sx(x), sy(v)) for x, v in band + band_hi[::-1])
            svg.add('<polygon points="%s" fill="%s" fill-opacity="0.15" stroke="none"/>'
                    % (poly, col))
        path = " ".join("%.1f,%.1f" % (sx(x), sy(m)) for x, m, _, _ in pts)
        svg.add('<polyline class="series" points="%s" fill="none" stroke="%s" '
                'stroke-width="2"%s><title>%s</title></polyline>'
                % (path, col, ' stroke-dasharray="%s"' % dash if dash else "", escape(name)))
        for x, m, _, _ in pts:
            svg.mark(shape, sx(x), sy(m), 3.5, col, "%s: %s = %s, %s" % (
                name, x_label, numbers.size(x) if x_is_size and x > 0 else numbers.number(x),
                numbers.join(numbers.number(m), shown_unit)))
    _legend(svg, [(ci, n) for ci, n, _ in series], 74, svg.h - 8 - 16 * (rows - 1))
    return svg.render()


def scatter_chart(title: str, x_label: str, y_label: str,
                  series: list[tuple[int, str, list[tuple[float, float]],
                                     list[tuple[float, float]] | None, str | None]],
                  note: str = "", unit: str = "") -> str:
    """Every single operation as a dot in its run's colour and marker, with the fitted
    curve over it and its class in the legend.  series = [(run index, name, points, fit
    polyline or None, class)].  The y axis shows the bulk (up to the 99.5th percentile,
    and 1.15 times it): a few far outliers (a 9 ms operation among 30 µs ones) would
    flatten everything else; they are drawn as triangles on the top edge instead."""
    ally = sorted(y for _, _, pts, _, _ in series for _, y in pts)
    cut = quantile(ally, 0.995) * 1.15 if len(ally) >= 20 else None
    div, shown_unit = numbers.axis_unit([y for y in ally if cut is None or y <= cut] or ally,
                                        unit)
    series = [(ci, name, [(x, y / div) for x, y in pts],
               [(x, y / div) for x, y in fit] if fit else None, cls)
              for ci, name, pts, fit, cls in series]
    ally = [y / div for y in ally]
    allx = [x for _, _, pts, _, _ in series for x, _ in pts]
    total = len(allx)
    step = max(1, math.ceil(total / MAX_POINTS))
    drawn = sum(len(pts[::step]) for _, _, pts, _, _ in series)
    notes = [note] if note else []
    if step > 1:
        notes.append("every %s point (%s of %s)" % (numbers.ordinal(step), numbers.number(drawn),
                                                    numbers.number(total)))
    bulk = ally
    top_y = None
    if len(ally) >= 20:
        q = quantile(ally, 0.995)
        if ally[-1] > 1.5 * q > 0:           # outliers would flatten the bulk: cut above
            top_y = q * 1.15
            bulk = [y for y in ally if y <= top_y]
            above = len(ally) - len(bulk)
            notes.append("%s point%s above %s, up to %s: ▲ on the top edge" % (
                numbers.number(above), "" if above == 1 else "s",
                numbers.join(numbers.number(top_y), shown_unit),
                numbers.join(numbers.number(ally[-1]), shown_unit)))
    logy = wants_log(bulk, 200.0)
    rows = (len(series) + 3) // 4
    svg, sx, sy = _plot_frame(title, x_label, "%s (%s)" % (y_label, shown_unit) if shown_unit
                              else y_label, allx, bulk, False, logy, 420 + 16 * (rows - 1),
                              "; ".join(notes))
    svg.kind = "scatter"
    for ci, name, pts, _, _ in series:
        col, shape, _ = run_style(ci)
        marks = []
        for x, y in pts[::step]:
            if top_y is not None and y > top_y:
                marks.append(marker("up", sx(x), sy.b + 4, 3.2, col, "pt outlier",
                                    numbers.join(numbers.number(y), shown_unit)))
            else:
                marks.append(marker(shape, sx(x), sy(max(y, sy.lo) if logy else y), 1.7, col))
        svg.points += len(marks)
        svg.add('<g class="points" fill-opacity="0.5"><title>%s</title>%s</g>'
                % (escape(name), "".join(marks)))
    for ci, name, _, fit, cls in series:
        if fit:
            col, _, dash = run_style(ci)
            path = " ".join("%.1f,%.1f" % (sx(x), sy(min(y, sy.hi))) for x, y in fit
                            if sy.lo <= y or not logy)
            svg.add('<polyline class="fit" points="%s" fill="none" stroke="%s" '
                    'stroke-width="2.5" stroke-dasharray="%s"><title>%s fit: %s</title>'
                    '</polyline>' % (path, col, dash or "7 3", escape(name), escape(cls or "")))
    _legend(svg, [(ci, "%s: %s" % (n, cls or "unclassified")) for ci, n, _, _, cls in series],
            74, svg.h - 8 - 16 * (rows - 1))
    return svg.render()
