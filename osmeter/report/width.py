"""Fitting text to the terminal: every command's tables and prose within its width.

The width is $COLUMNS, else the terminal's, else 100 (a file or a pipe).  A table wider
than that shrinks its widest text columns, wrapping their cells onto more lines within
the column (numbers, right-aligned, are never wrapped); when even that cannot fit, the
last columns fold under each row as 'name: value' lines, the way `run` puts a row's
notes under it.  Prose lines wrap with an indent.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap

DEFAULT_WIDTH = 100
MIN_COLUMN = 20         # a text column is not squeezed below this (or its header)
GAP = "  "


def terminal_width(stream=None) -> int:
    """$COLUMNS, else the terminal's width, else 100 (a file or a pipe)."""
    if os.environ.get("COLUMNS", "").isdigit():
        return max(40, int(os.environ["COLUMNS"]))
    stream = stream or sys.stdout
    try:
        if stream.isatty():
            return max(40, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    except (AttributeError, ValueError, OSError):
        pass
    return DEFAULT_WIDTH


def _wrap_cell(text: str, width: int) -> list[str]:
    if len(text) <= width:
        return [text]
    # At spaces; a label or a date at its hyphens too.
    return textwrap.wrap(text, max(1, width), break_on_hyphens=len(text.split()) <= 2) or [""]


def _shrink(natural: list[int], floor: list[int], keep: int, width: int) -> list[int] | None:
    """The first `keep` columns' widths within `width`, the widest shrunk first down to
    their floors; None when they cannot fit."""
    widths = natural[:keep]
    over = sum(widths) + len(GAP) * (keep - 1) - width
    while over > 0:
        i = max((i for i in range(keep) if widths[i] > floor[i]), key=lambda i: widths[i],
                default=None)
        if i is None:
            return None
        widths[i] -= 1
        over -= 1
    return widths


def _widths(table: list[list[str]], width: int, right,
            break_words: bool = True) -> tuple[list[int], int]:
    """Column widths that fit `width`, and how many columns stay side by side (the rest
    fold under each row)."""
    ncols = max(len(r) for r in table)
    natural = [max(len(r[i]) if i < len(r) else 0 for r in table) for i in range(ncols)]
    header = [len(table[0][i]) if i < len(table[0]) else 0 for i in range(ncols)]
    # Numbers keep their width; the first column (the row's name) too, up to half the
    # width; prose columns shrink down to MIN_COLUMN, wrapping at spaces.  Then columns
    # of a word or two (labels, dates) may break too, at hyphens and spaces, before the
    # last columns fold.
    cells = [[r[i] for r in table[1:] if i < len(r)] for i in range(ncols)]
    prose = [any(len(c.split()) > 2 for c in cells[i]) for i in range(ncols)]
    first = min(natural[0], width // 2)
    words = [natural[i] if i in right or not prose[i]
             else min(natural[i], max(MIN_COLUMN, header[i])) for i in range(ncols)]
    pieces = [max((len(p) + 1 for c in cells[i] for p in re.split(r"[- ]", c)), default=0)
              for i in range(ncols)]
    broken = [natural[i] if i in right else min(natural[i], max(pieces[i], header[i]))
              for i in range(ncols)]
    for floor in (words, broken) if break_words else (words,):
        floor[0] = max(min(floor[0], first), min(natural[0], first))
        widths = _shrink(natural, floor, ncols, width)
        if widths:
            return widths, ncols
    for keep in range(ncols - 1, 0, -1):
        widths = _shrink(natural, words, keep, width)
        if widths:
            return widths, keep
    return [min(natural[0], width)], 1


def fit_table(table: list[list[str]], width: int | None = None, right=frozenset(),
              rule: bool = True, fold_first=()) -> list[str]:
    """The rows of `table` (its first row the header) aligned in columns within `width`;
    `right`: the columns aligned right (numbers, never wrapped); `rule`: a line of dashes
    under the header; `fold_first`: the columns that fold under their row first, when
    the table cannot fit by wrapping its prose (the last columns fold otherwise)."""
    if not table:
        return []
    width = width or terminal_width()
    widths, keep = _widths(table, width, right)
    if fold_first and (keep < len(table[0]) or _breaks_words(table, widths)):
        order = [i for i in range(len(table[0])) if i not in fold_first] + list(fold_first)
        moved = {new: old for new, old in enumerate(order)}
        table = [[r[i] if i < len(r) else "" for i in order] for r in table]
        right = {new for new, old in moved.items() if old in right}
        widths, keep = _widths(table, width, right, break_words=False)
    header = table[0]
    out = []
    for k, row in enumerate(table):
        cells = [_wrap_cell(row[i], widths[i]) if i < len(row) and i not in right
                 else [row[i] if i < len(row) else ""] for i in range(keep)]
        for n in range(max(len(c) for c in cells)):
            out.append(GAP.join(
                (c[n] if n < len(c) else "").rjust(widths[i]) if i in right
                else (c[n] if n < len(c) else "").ljust(widths[i])
                for i, c in enumerate(cells)).rstrip())
        if k == 0:
            if rule:
                out.append(GAP.join("-" * w for w in widths))
            continue
        folded = "; ".join("%s: %s" % (header[i] if i < len(header) else "", row[i])
                           for i in range(keep, len(row)) if row[i])
        out += textwrap.wrap(folded, width, initial_indent="    ", subsequent_indent="      ",
                             break_on_hyphens=False)
    return out


def _breaks_words(table: list[list[str]], widths: list[int]) -> bool:
    """Whether a column of a word or two (a label, a date) is narrower than its cells."""
    return any(len(r[i]) > w and len(r[i].split()) <= 2
               for r in table[1:] for i, w in enumerate(widths) if i < len(r))


def fit_lines(lines: list[str], width: int | None = None, indent: str = "  ") -> list[str]:
    """Each line within `width`: longer ones wrapped, continued with `indent` (and the
    line's own leading spaces)."""
    width = width or terminal_width()
    out = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        lead = line[:len(line) - len(line.lstrip())]
        out += textwrap.wrap(line, width, initial_indent="", subsequent_indent=lead + indent,
                             break_on_hyphens=False) or [""]
    return out
