"""Plain-text tables: columns aligned with a dashed rule under the header, and the same
grid as a Markdown table.  Every text renderer of report/ lays its tables out here."""
from __future__ import annotations


def align(table: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    out = []
    for k, r in enumerate(table):
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def markdown_table(table: list[list[str]]) -> list[str]:
    esc = [[c.replace("|", "\\|") for c in r] for r in table]
    out = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(esc[0])]
    out += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return out
