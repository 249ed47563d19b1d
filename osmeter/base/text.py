"""Text from the system that need not be UTF-8: paths, arguments, the core's output.

Python hands the undecodable bytes of arguments and paths on as lone surrogates (PEP
383): passed back to the system they are the same bytes again, but they cannot be stored
(SQLite, JSON files) or printed.  What osmeter records or shows goes through `shown`, in
which such a byte is written \\xNN; the core's output is decoded the same way (ERRORS).
What reaches a terminal goes through `inert` (no control character, terminal escape or
bidirectional override), and every CSV cell osmeter writes through `spreadsheet_cell`.
"""
from __future__ import annotations

import re

ERRORS = "backslashreplace"     # b"\xff" -> "\\xff" when decoding bytes that are not UTF-8


def shown(value):
    """value with every byte that is not UTF-8 written as \\xNN (in strings, and in the
    keys and values of dicts and lists)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            pass
        try:
            raw = value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:      # a surrogate that is no escaped byte
            raw = value.encode("utf-8", ERRORS)
        return raw.decode("utf-8", ERRORS)
    if isinstance(value, dict):
        return {shown(k): shown(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(shown(v) for v in value)
    return value


# What must not reach a terminal as it is: C0 and C1 controls (ESC starts a terminal
# escape), DEL, and the bidirectional overrides (they reorder what is shown).
UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def inert(value: str, keep: str = "") -> str:
    """value with every character of UNPRINTABLE but those in keep written as an escape:
    \\x1b below DEL, \\u009b from DEL on (inside a JSON string that is the same character
    again); bytes that are not UTF-8 as `shown` writes them."""
    return UNPRINTABLE.sub(lambda m: m.group() if m.group() in keep else
                           "\\x%02x" % ord(m.group()) if ord(m.group()) < 0x7f
                           else "\\u%04x" % ord(m.group()), shown(value))


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value):
    """A CSV cell a spreadsheet will not run: text that starts with = + - @, a tab or a
    carriage return gets a leading ' (OWASP's CSV injection); a number stays a number
    (-0.5), and what is not text is returned as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        try:
            float(value)
        except ValueError:
            return "'" + value
    return value


def spreadsheet_row(row: dict) -> dict:
    """Every cell of a csv.DictWriter row through spreadsheet_cell."""
    return {k: spreadsheet_cell(v) for k, v in row.items()}
