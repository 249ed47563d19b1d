"""Plain-text tables: columns aligned with a dashed rule under the header, and the same
grid as a Markdown table.  Every text renderer of report/ lays its tables out here."""
from __future__ import annotations

from .width import fit_table


def align(table: list[list[str]], width: int | None = None) -> list[str]:
    """The table in columns within `width` (width.fit_table: text columns wrap, the last
    ones fold under their row when they must), a dashed rule under the header."""
    return fit_table(table, width)


def markdown_table(table: list[list[str]]) -> list[str]:
    esc = [[c.replace("|", "\\|") for c in r] for r in table]
    out = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(esc[0])]
    out += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return out
