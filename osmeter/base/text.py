"""Text from the system that need not be UTF-8: paths, arguments, the core's output.

Python hands the undecodable bytes of arguments and paths on as lone surrogates (PEP
383): passed back to the system they are the same bytes again, but they cannot be stored
(SQLite, JSON files) or printed.  What osmeter records or shows goes through `shown`, in
which such a byte is written \\xNN; the core's output is decoded the same way (ERRORS).
"""
from __future__ import annotations

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
