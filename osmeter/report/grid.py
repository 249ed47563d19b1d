"""Plain-text tables: columns aligned with a dashed rule under the header, and the same
grid as a Markdown table.  Every text renderer of report/ lays its tables out here."""
from __future__ import annotations

import re

from .width import fit_table


def align(table: list[list[str]], width: int | None = None) -> list[str]:
    """The table in columns within `width` (width.fit_table: text columns wrap, the last
    ones fold under their row when they must), a dashed rule under the header."""
    return fit_table(table, width)


MARKDOWN_ACTIVE = re.compile(r"([\\`*_~\[\]<>&!#])")


def md_text(value: str) -> str:
    """A name from a run (a label, a host, a value of the system description) as
    Markdown that renders as its own text and nothing else: every character that could
    start emphasis, code, a link or image, an HTML tag or entity or an autolink (<...>) is
    backslash-escaped (CommonMark escapes ASCII punctuation so); markdown_table escapes
    the pipes of every cell."""
    return MARKDOWN_ACTIVE.sub(r"\\\1", value)


def markdown_table(table: list[list[str]]) -> list[str]:
    esc = [[c.replace("|", "\\|") for c in r] for r in table]
    out = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(esc[0])]
    out += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return out
