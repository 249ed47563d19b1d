"""One truth per figure (issue 44): the quick suite's time, the set-up's, the share of
results flagged at rest and the interval's level with the default repetitions are stated
once, in the README's "Measured figures" with the date and the machine; the README's
other sections, docs/ and every command's --help point there and give no copy of their
own (a copy is where two truths begin: "3.3-3.4 minutes" in one place, "< 3 minutes" in
another, 2m35s measured)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from osmeter import cli
from osmeter.commands.common import subcommands

REPO = Path(__file__).resolve().parent.parent
SECTION = "## Measured figures"

# A figure stated: each pattern matches a statement of its value, not a pointer to it.
FIGURES = {
    "quick suite time": r"quick suite\b[^.]{0,80}?(\d+(\.\d+)?(-\d+(\.\d+)?)? ?minutes|"
                        r"\d+ ?min \d+ ?s|\d+m\d+s|< ?\d+ minutes)",
    "set-up time": r"(set-up|setup|pip builds the C core)[^.]{0,60}?\b(about )?\d+(\.\d+)? ?s\b",
    "flag rate": r"\d+(\.\d+)?(-\d+(\.\d+)?)?% of (the |each kind's |its )?(results|rows)"
                 r"[^.]{0,20}?\b(were |are )?(then )?flagged",
}
# the level said of the interval with 5 repetitions ("CV 3% with 5 repetitions" is not one)
LEVEL_AT_5 = r"(?<!CV )\b(?P<a>\d+(\.\d+)?)%( interval)? with (the default )?5 repetitions|" \
             r"5-repetition interval is (?P<b>\d+(\.\d+)?)%"


def readme_parts() -> tuple[str, str]:
    """(the Measured figures section, the rest of the README)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.index("\n## ", start + 1)
    return text[start:end], text[:start] + text[end:]


def helps() -> str:
    parser = cli.make_parser()
    return "\n".join([parser.format_help()] +
                     [p.format_help() for p in subcommands(parser).values()])


def elsewhere() -> dict[str, str]:
    """Every text a reader meets besides the figures' section: {where: text}."""
    texts = {"README.md (outside %s)" % SECTION: readme_parts()[1], "--help": helps()}
    for page in sorted((REPO / "docs").glob("*.md")):
        texts["docs/" + page.name] = page.read_text(encoding="utf-8")
    return texts


def copies(pattern: str) -> list[str]:
    return ["%s: %s" % (where, m.group(0)) for where, text in elsewhere().items()
            for m in re.finditer(pattern, " ".join(text.split()))]


@pytest.mark.parametrize("figure", FIGURES)
def test_a_figure_is_stated_in_the_measured_figures_only(figure):
    section, _ = readme_parts()
    assert re.search(FIGURES[figure], " ".join(section.split())), figure
    assert copies(FIGURES[figure]) == [], figure


def test_every_statement_of_the_5_repetition_level_says_the_same():
    texts = [" ".join(t.split()) for t in list(elsewhere().values()) + [readme_parts()[0]]]
    levels = {m.group("a") or m.group("b") for t in texts for m in re.finditer(LEVEL_AT_5, t)}
    assert levels == {"93.8"}, levels


def test_each_measured_figure_says_when_and_on_what():
    section, _ = readme_parts()
    rows = [line for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| figure")]
    assert len(rows) >= 5
    for row in rows:
        value, measured = [c.strip() for c in row.strip("|").split("|")][1:3]
        assert value and (re.search(r"20\d\d-\d\d", measured) or "not measured" in measured), row


def test_the_patterns_find_the_copies_the_issue_found():
    """Each pattern matches the statements that were copies, so that the tests above can
    fail."""
    said = {"quick suite time": ["The quick suite took 3.3-3.4 minutes for its 5",
                                 "the quick suite (< 3 minutes on 2 cores)"],
            "set-up time": ["installing osmeter (pip builds the C core with cc, about 20 s)",
                            "set-up 0.15 s when nothing changed"],
            "flag rate": ["2-10% of each kind's results are then flagged",
                          "16-33% of the results were flagged"]}
    for figure, lines in said.items():
        for line in lines:
            assert re.search(FIGURES[figure], line), (figure, line)
    assert re.search(LEVEL_AT_5, "93.8% with the default 5 repetitions")
