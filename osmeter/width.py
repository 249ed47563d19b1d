"""Fitting text to the terminal: every command's tables and prose within its width.

The width is $COLUMNS, else the terminal's, else 100 (a file or a pipe).  A table wider
than that shrinks its widest text columns, wrapping their cells onto more lines within
the column (numbers, right-aligned, are never wrapped); when even that cannot fit, the
last columns fold under each row as 'name: value' lines, the way `run` puts a row's
notes under it.  Prose lines wrap with an indent.
"""
from __future__ import annotations

import os
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
    return textwrap.wrap(text, max(1, width), break_on_hyphens=False) or [""]


def _widths(table: list[list[str]], width: int, right) -> tuple[list[int], int]:
    """Column widths that fit `width` by shrinking the widest text columns, and how many
    columns stay side by side (the rest fold)."""
    ncols = max(len(r) for r in table)
    natural = [max(len(r[i]) if i < len(r) else 0 for r in table) for i in range(ncols)]
    # Numbers keep their width; the first column (the row's name) too, up to half the
    # width; other text columns shrink down to MIN_COLUMN before the last ones fold.
    # A column of single words (ids, dates) keeps its width too: wrapping would cut words.
    floor = [natural[i] if i in right or not any(" " in r[i] for r in table[1:] if i < len(r))
             else min(natural[i], max(MIN_COLUMN, len(table[0][i]) if i < len(table[0]) else 0))
             for i in range(ncols)]
    floor[0] = min(natural[0], max(floor[0], width // 2))
    for keep in range(ncols, 0, -1):
        widths = natural[:keep]
        over = sum(widths) + len(GAP) * (keep - 1) - width
        while over > 0:
            i = max((i for i in range(keep) if widths[i] > floor[i]),
                    key=lambda i: widths[i], default=None)
            if i is None:
                break
            widths[i] -= 1
            over -= 1
        if over <= 0:
            return widths, keep
    return [min(natural[0], width)], 1


def fit_table(table: list[list[str]], width: int | None = None, right=frozenset(),
              rule: bool = True) -> list[str]:
    """The rows of `table` (its first row the header) aligned in columns within `width`;
    `right`: the columns aligned right (numbers, never wrapped); `rule`: a line of dashes
    under the header."""
    if not table:
        return []
    width = width or terminal_width()
    widths, keep = _widths(table, width, right)
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
        folded = ["%s: %s" % (header[i] if i < len(header) else "", row[i])
                  for i in range(keep, len(row)) if row[i]]
        for text in folded:
            out += textwrap.wrap(text, width, initial_indent="    ", subsequent_indent="      ",
                                 break_on_hyphens=False)
    return out


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
