"""The one number formatter of every output: terminal tables, Markdown, text and the SVG
figures all write numbers through here, so one value reads the same everywhere.

* Three significant digits, thousands separated by commas, never an exponent;
  a value that is a whole number is written as one (`processes=2`, not `2.00`).
* Units scaled per value: times to ns / µs / ms / s, byte counts to B / KiB / MiB / GiB
  (the core's sizes are powers of 1024), bandwidths to MB/s / GB/s and Mbit/s / Gbit/s
  (1 MB = 10^6 bytes, as the core measures).  Other units (ops/s, lps, index, %) are
  written as they are.
* An interval is written in the unit of the value it belongs to, so that `1.02 ms
  [0.675, 1.36]` reads at a glance.
"""
from __future__ import annotations

import math

SIGNIFICANT = 3

# unit -> ((factor to the unit's base, name), ...) largest first; the base is the
# smallest step.  A unit not listed is never rescaled.
_TIME_NS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))
_BYTES = ((float(1 << 30), "GiB"), (float(1 << 20), "MiB"), (float(1 << 10), "KiB"),
          (1.0, "B"))
_MBPS = ((1e3, "GB/s"), (1.0, "MB/s"), (1e-3, "KB/s"))
_MBITPS = ((1e3, "Gbit/s"), (1.0, "Mbit/s"), (1e-3, "kbit/s"))
# For each unit: its steps and how many of the steps' base units one unit is.
_SCALES = {
    "ns": (_TIME_NS, 1.0), "µs": (_TIME_NS, 1e3), "us": (_TIME_NS, 1e3),
    "ms": (_TIME_NS, 1e6), "s": (_TIME_NS, 1e9),
    "bytes": (_BYTES, 1.0), "B": (_BYTES, 1.0),
    "MB/s": (_MBPS, 1.0), "Mbit/s": (_MBITPS, 1.0),
}
TIME_UNITS = ("ns", "µs", "us", "ms", "s")


def number(v, digits: int = SIGNIFICANT) -> str:
    """1234.5 -> '1,235', 2.0 -> '2', 0.000123 -> '0.000123', 1.5 -> '1.50'; None -> '—'."""
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    v = float(v)
    if math.isnan(v):
        return "—"
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if v.is_integer() and abs(v) < 1e18:
        return "{:,d}".format(int(v))
    if abs(v) >= 10 ** (digits - 1):        # whole digits only: 1,235, 107,467
        return "{:,.0f}".format(v)
    rounded = float("%.*g" % (digits, v))   # 9.996 -> 10.0: the magnitude after rounding
    mag = math.floor(math.log10(abs(rounded))) if rounded else 0
    return "{:,.{}f}".format(rounded, max(0, digits - 1 - mag))


def p_value(p: float) -> str:
    """A p-value in two significant digits, never in e-notation: below 0.0001 it reads
    '<0.0001' (what a verdict needs is that it is small, not how small)."""
    return "<0.0001" if p < 1e-4 else "%.2g" % p


def tick(v) -> str:
    """An axis label: as `number`, without trailing zeros (0.05, not 0.0500)."""
    text = number(v)
    return text.rstrip("0").rstrip(".") if "." in text else text


def scale(value: float, unit: str) -> tuple[float, str]:
    """(divisor, unit) that writes `value` naturally: (1e6, 'ms') for 1,234,567 ns."""
    steps, per_unit = _SCALES.get(unit, ((), 1.0))
    if not steps or value is None or not math.isfinite(value) or value == 0:
        return 1.0, unit
    base = abs(value) * per_unit
    for factor, name in steps:
        if base >= factor * 0.9995:          # 999.6 µs rounds to 1.00 ms, not '1,000 µs'
            return factor / per_unit, name
    factor, name = steps[-1]
    return factor / per_unit, name


def quantity(value, unit: str) -> str:
    """'1.02 ms', '27.8 GB/s', '2.20 MiB', '1,377 index'."""
    if value is None:
        return "—"
    div, name = scale(value, unit)
    return join(number(value / div), name)


def measured(value, unit: str) -> str:
    """quantity(), but a time of exactly 0 is 'below resolution': below what the clock or
    the kernel's CPU accounting resolves, not a time of zero."""
    if value == 0 and unit in TIME_UNITS:
        return "below resolution"
    return quantity(value, unit)


def count(n: int, noun: str) -> str:
    """'1 run', '2 runs'."""
    return "%d %s%s" % (n, noun, "" if n == 1 else "s")


def join(text: str, unit: str) -> str:
    return "%s %s" % (text, unit) if unit else text


def interval(low, high, div: float = 1.0) -> str:
    """'[0.675, 1.36]' with both ends divided by `div` (the value's divisor)."""
    return "[%s, %s]" % (number(low / div), number(high / div))


def size(nbytes: float) -> str:
    """A size in bytes for axes and parameters: '4 KiB' when exact, else scaled."""
    for factor, name in _BYTES[:-1]:
        if nbytes >= factor and nbytes % factor == 0:
            return "%d %s" % (nbytes // factor, name)
    return quantity(nbytes, "bytes")


def is_size(name: str | None) -> bool:
    """Whether a coordinate's name says it counts bytes (buffer_bytes, file_bytes, ...)."""
    return bool(name) and (name == "bytes" or name.endswith("_bytes"))


def coordinate(x, name: str | None) -> str:
    """An x value as its name says: sizes as sizes, counts as numbers; '—' for none (a
    skipped sweep's result has no x)."""
    if x is None:
        return "—"
    return size(x) if is_size(name) and x > 0 else number(x)


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 22nd, 23rd."""
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return "%d%s" % (n, suffix)


def axis_unit(values, unit: str) -> tuple[float, str]:
    """One divisor and unit for a whole axis, chosen by its largest magnitude."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v) and v != 0]
    return scale(max(finite), unit) if finite else (1.0, unit)
