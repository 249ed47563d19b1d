"""Small, dependency-free SVG charts: bars with intervals, curves over size, scatters.

Every chart is a standalone <svg> string with a viewBox (it scales with the page), a
<title> for accessibility, and nothing that needs a script or a network.  Colours are
the Okabe–Ito palette, readable with the common colour-vision deficiencies; each run
keeps its colour in every figure.
"""
from __future__ import annotations

import math
from html import escape

PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#999999"]
WIDTH = 760
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"
MAX_POINTS = 6000        # per scatter figure; beyond it points are thinned evenly


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def num(v: float) -> str:
    """Axis label: short, no exponent for everyday sizes."""
    if v == 0:
        return "0"
    a = abs(v)
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            s = "%.3g" % (v / div)
            return s + suffix
    return "%.3g" % v


def size_label(v: float) -> str:
    """Byte counts as 4K, 64K, 1M (powers of 1024) when they are exact."""
    for div, suffix in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if v >= div and v % div == 0:
            return "%d%s" % (v // div, suffix)
    return num(v)


# ---- scales -----------------------------------------------------------------------------

class Scale:
    def __init__(self, lo: float, hi: float, a: float, b: float, log: bool = False):
        if log:
            lo, hi = max(lo, 1e-300), max(hi, 1e-300)
        if hi <= lo:
            hi = lo * 1.1 + 1e-9 if not log else lo * 10
        self.lo, self.hi, self.a, self.b, self.log = lo, hi, a, b, log

    def __call__(self, v: float) -> float:
        if self.log:
            v = max(v, 1e-300)
            t = (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        else:
            t = (v - self.lo) / (self.hi - self.lo)
        return self.a + t * (self.b - self.a)

    def ticks(self, n: int = 6) -> list[float]:
        if self.log and getattr(self, "base2", False):
            e0, e1 = math.floor(math.log2(self.lo)), math.ceil(math.log2(self.hi))
            step = max(1, math.ceil((e1 - e0) / 8))
            return [2.0 ** e for e in range(e0, e1 + 1, step)
                    if self.lo * 0.999 <= 2.0 ** e <= self.hi * 1.001]
        if self.log:
            e0, e1 = math.floor(math.log10(self.lo)), math.ceil(math.log10(self.hi))
            step = max(1, math.ceil((e1 - e0) / 8))
            ticks = [10.0 ** e for e in range(e0, e1 + 1, step)]
            if e1 - e0 <= 2:
                ticks = sorted(set(ticks + [m * 10.0 ** e for e in range(e0, e1 + 1)
                                            for m in (2, 5)]))
            return [t for t in ticks if self.lo * 0.999 <= t <= self.hi * 1.001]
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


def wants_log(values: list[float], threshold: float = 50.0) -> bool:
    vals = [v for v in values if v is not None and v > 0]
    return bool(vals) and max(vals) / min(vals) > threshold


# ---- drawing --------------------------------------------------------------------------------

class Svg:
    def __init__(self, width: int, height: int, title: str, kind: str):
        self.w, self.h, self.parts = width, height, []
        self.title, self.kind = title, kind

    def add(self, s: str) -> None:
        self.parts.append(s)

    def text(self, x, y, s, size=12, anchor="start", weight="normal", fill="#222", extra=""):
        self.add('<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" font-weight="%s" '
                 'fill="%s"%s>%s</text>' % (x, y, size, anchor, weight, fill, extra, escape(str(s))))

    def line(self, x1, y1, x2, y2, stroke="#888", width=1.0, dash=None):
        d = ' stroke-dasharray="%s"' % dash if dash else ""
        self.add('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"%s/>'
                 % (x1, y1, x2, y2, stroke, width, d))

    def render(self) -> str:
        return ('<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-kind="%s" '
                'viewBox="0 0 %d %d" width="%d" height="%d" role="img" style="%s">'
                '<title>%s</title><rect width="100%%" height="100%%" fill="#fff"/>%s</svg>'
                % (self.kind, self.w, self.h, self.w, self.h, FONT, escape(self.title),
                   "".join(self.parts)))


def _legend(svg: Svg, names: list[tuple[int, str]], x: float, y: float) -> None:
    step = (svg.w - x) / max(1, len(names))   # names share the width; cut only when crowded
    for k, (ci, name) in enumerate(names):
        xx = x + k * step
        svg.add('<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/>'
                % (xx, y - 10, colour(ci)))
        svg.text(xx + 17, y, name[:max(4, int((step - 20) / 6.5))], 12)


def _x_axis(svg, sx, y, fmt, label):
    svg.line(sx.a, y, sx.b, y, "#444")
    for t in sx.ticks():
        X = sx(t)
        svg.line(X, y, X, y + 4, "#444")
        svg.text(X, y + 17, fmt(t), 11, "middle")
    svg.text((sx.a + sx.b) / 2, y + 34, label, 12, "middle")


def _y_axis(svg, sy, x, x_right, fmt, label):
    svg.line(x, sy.a, x, sy.b, "#444")
    for t in sy.ticks():
        Y = sy(t)
        svg.line(x - 4, Y, x, Y, "#444")
        svg.line(x, Y, x_right, Y, "#e5e5e5")
        svg.text(x - 7, Y + 4, fmt(t), 11, "end")
    svg.text(14, (sy.a + sy.b) / 2, label, 12, "middle",
             extra=' transform="rotate(-90 14 %.1f)"' % ((sy.a + sy.b) / 2))


# ---- charts ---------------------------------------------------------------------------------

def bar_chart(title: str, unit: str, groups: list[tuple[str, list[tuple]]],
              names: list[str], note: str = "", reference: float | None = None) -> str:
    """Horizontal bars: groups = [(row label, [(run index, value, lo, hi), ...])].
    Whiskers show the interval; a log axis is used when values span > 50×."""
    label_w = min(300, 12 + 6.6 * max((len(g[0]) for g in groups), default=10))
    per_bar = 14
    nb = max((len(b) for _, b in groups), default=1)
    group_h = nb * per_bar + 12
    top = 48
    h = int(top + group_h * len(groups) + 56)
    svg = Svg(WIDTH, h, title, "bar")
    svg.text(10, 20, title, 14, weight="bold")
    if note:
        svg.text(10, 38, note, 11, fill="#555")
    vals = [v for _, bars in groups for _, m, lo, hi in bars for v in (m, lo, hi) if v is not None]
    if reference is not None:
        vals.append(reference)
    log = wants_log(vals)
    lo, hi = nice_range(vals, log, zero=not log)
    sx = Scale(lo, hi, label_w, WIDTH - 20, log)
    bottom = top + group_h * len(groups)
    for t in sx.ticks():
        svg.line(sx(t), top - 4, sx(t), bottom, "#e5e5e5")
    y = top
    for label, bars in groups:
        svg.text(label_w - 8, y + group_h / 2, label[:46], 11, "end")
        for k, (ri, m, blo, bhi) in enumerate(bars):
            by = y + 4 + k * per_bar
            if m is None:
                svg.text(label_w + 4, by + 10, "not measured", 10, fill="#888")
                continue
            x0 = sx(sx.lo) if log else sx(max(0.0, sx.lo))
            svg.add('<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s">'
                    '<title>%s: %s %s</title></rect>'
                    % (x0, by, max(1.0, sx(m) - x0), per_bar - 3, colour(ri),
                       escape(names[ri]), num(m), escape(unit)))
            if blo is not None and bhi is not None:
                cy = by + (per_bar - 3) / 2
                svg.line(sx(blo), cy, sx(bhi), cy, "#111", 1.2)
                svg.line(sx(blo), cy - 4, sx(blo), cy + 4, "#111", 1.2)
                svg.line(sx(bhi), cy - 4, sx(bhi), cy + 4, "#111", 1.2)
        y += group_h
    if reference is not None:
        svg.line(sx(reference), top - 4, sx(reference), bottom, "#000", 1.2, "4 3")
    _x_axis(svg, sx, bottom, num, unit + (" (log scale)" if log else ""))
    if len(names) > 1:
        _legend(svg, list(enumerate(names)), label_w, h - 6)
    return svg.render()


def _plot_frame(title, x_label, y_label, xs, ys, logx, logy, height=380, note=""):
    svg = Svg(WIDTH, height, title, "")
    svg.text(10, 20, title, 14, weight="bold")
    if note:
        svg.text(10, 38, note, 11, fill="#555")
    left, right, top, bottom = 74, WIDTH - 20, 50, height - 72
    sizes = "byte" in x_label.lower() or "size" in x_label.lower()
    xlo = min(xs) if xs else 0.0          # the x axis spans exactly the measured range
    xhi = max(xs) if xs else 1.0
    ylo, yhi = nice_range(ys, logy, zero=not logy)
    sx = Scale(xlo, xhi, left, right, logx)
    sx.base2 = logx and sizes
    sy = Scale(ylo, yhi, bottom, top, logy)
    _y_axis(svg, sy, left, right, num, y_label + (" (log)" if logy else ""))
    xfmt = size_label if sizes else num
    _x_axis(svg, sx, bottom, xfmt, x_label + (" (log scale)" if logx else ""))
    return svg, sx, sy


def line_chart(title: str, x_label: str, y_label: str,
               series: list[tuple[int, str, list[tuple]]], note: str = "") -> str:
    """Curves over size: series = [(colour index, name, [(x, median, lo, hi), ...])].
    Log x axis (sizes grow by powers of two); log y when the values span > 50×."""
    xs = [p[0] for _, _, pts in series for p in pts if p[0] is not None and p[0] > 0]
    ys = [v for _, _, pts in series for p in pts for v in p[1:] if v is not None]
    logx = bool(xs) and min(xs) > 0 and max(xs) / min(xs) >= 8
    svg, sx, sy = _plot_frame(title, x_label, y_label, xs, ys, logx, wants_log(ys), note=note)
    svg.kind = "sweep"
    for ci, name, pts in series:
        pts = sorted((p for p in pts if p[1] is not None and (p[0] > 0 or not logx)),
                     key=lambda p: p[0])
        band = [(x, lo) for x, _, lo, _ in pts if lo is not None]
        band_hi = [(x, hi) for x, _, _, hi in pts if hi is not None]
        if len(band) == len(pts) == len(band_hi) and len(pts) > 1:
            poly = " ".join("%.1f,%.1f" % (sx(x), sy(v)) for x, v in band + band_hi[::-1])
            svg.add('<polygon points="%s" fill="%s" fill-opacity="0.18" stroke="none"/>'
                    % (poly, colour(ci)))
        path = " ".join("%.1f,%.1f" % (sx(x), sy(m)) for x, m, _, _ in pts)
        svg.add('<polyline class="series" points="%s" fill="none" stroke="%s" stroke-width="2">'
                '<title>%s</title></polyline>' % (path, colour(ci), escape(name)))
        for x, m, _, _ in pts:
            svg.add('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %s = %s</title>'
                    '</circle>' % (sx(x), sy(m), colour(ci), escape(name), num(x), num(m)))
    _legend(svg, [(ci, n) for ci, n, _ in series], 74, svg.h - 8)
    return svg.render()


def scatter_chart(title: str, x_label: str, y_label: str,
                  series: list[tuple[int, str, list[tuple[float, float]], list[tuple[float, float]] | None, str | None]],
                  note: str = "") -> str:
    """Every single operation as a dot, one colour per run, with the fitted curve drawn
    over it and its class in the legend.  series = [(colour, name, points, fit polyline
    or None, class)]."""
    allx = [x for _, _, pts, _, _ in series for x, _ in pts]
    ally = [y for _, _, pts, _, _ in series for _, y in pts]
    total = len(allx)
    step = max(1, math.ceil(total / MAX_POINTS))
    if step > 1:
        note = (note + "  " if note else "") + "showing every %d%s point (%d of %d)" % (
            step, "nd" if step == 2 else "th", total // step, total)
    logy = wants_log(ally, 200.0)
    svg, sx, sy = _plot_frame(title, x_label, y_label, allx, ally, False, logy, 420, note)
    svg.kind = "scatter"
    for ci, name, pts, _, _ in series:
        dots = "".join('<circle cx="%.1f" cy="%.1f" r="1.6"/>' % (sx(x), sy(y))
                       for x, y in pts[::step])
        svg.add('<g class="points" fill="%s" fill-opacity="0.45"><title>%s</title>%s</g>'
                % (colour(ci), escape(name), dots))
    for ci, name, _, fit, cls in series:
        if fit:
            path = " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in fit
                            if sy.lo <= y <= sy.hi or not logy)
            svg.add('<polyline class="fit" points="%s" fill="none" stroke="%s" stroke-width="2.5"'
                    ' stroke-dasharray="7 3"><title>%s fit: %s</title></polyline>'
                    % (path, colour(ci), escape(name), escape(cls or "")))
    _legend(svg, [(ci, "%s: %s" % (n, cls or "unclassified")) for ci, n, _, _, cls in series],
            74, svg.h - 8)
    return svg.render()
