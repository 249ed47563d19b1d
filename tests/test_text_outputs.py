"""Whatever a label, a note or a date holds, every text output stays what it says (issue
43): Hypothesis draws labels from the results schema's own alphabet for names (and now
and then any character at all), notes from its alphabet for free text (tabs and
newlines too), dates from its timestamp pattern (impossible days too), puts them into a
results document, and what `import` accepts (exchange.document_to_run: the schema and
the calendar) is rendered by every text output:

* the terminal (run header, results table, notes, runs list, compare) through the
  standard output osmeter writes to: no control character but newline and tab;
* CSV (compare --csv, export --format long): no cell starts a formula (= + - @, tab, CR)
  unless it is a number;
* Markdown (compare --md), rendered as CommonMark: no tag but its own few, no link or
  image;
* HTML (the report): the same tags as the report of the same runs with a plain label.

What is refused must be refused by the one rule (exchange.check_name for a label given
as an option agrees with import).  Bounded for CI: MAX_EXAMPLES (OSMETER_HYPOTHESIS_EXAMPLES)
from a fixed seed (OSMETER_HYPOTHESIS_SEED).
"""
from __future__ import annotations

import collections
import copy
import io
import json
import os
import re

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis (test extra) is not installed")
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from osmeter.analysis import compare  # noqa: E402
from osmeter.data import exchange, writes  # noqa: E402
from osmeter.formats import long  # noqa: E402
from osmeter.report import display, html, tables  # noqa: E402
from synth import make_run  # noqa: E402
from test_links_and_labels import formula_cells, inert_html, markdown_html  # noqa: E402
from test_properties import timestamps  # noqa: E402

MAX_EXAMPLES = int(os.environ.get("OSMETER_HYPOTHESIS_EXAMPLES", "60"))
SEED = int(os.environ.get("OSMETER_HYPOTHESIS_SEED", "43"))
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

DEFS = exchange.results_schema().root["$defs"]
NAME_CHARS = re.compile(DEFS["singleLine"]["pattern"])
TEXT_CHARS = re.compile(DEFS["safeText"]["pattern"])
# What the active syntaxes of CSV, Markdown and HTML are made of, drawn more often.
ACTIVE = "=+-@<>[]()!`*_~&#|\\/:\"' \t\n"


def alphabet(pattern: re.Pattern) -> st.SearchStrategy:
    """The characters the schema's pattern accepts, the active ones weighted up."""
    return st.one_of(st.sampled_from([c for c in ACTIVE if pattern.match(c)]),
                     st.characters(codec="utf-8").filter(lambda c: pattern.match(c)))


LABELS = st.one_of(st.text(alphabet(NAME_CHARS), min_size=1, max_size=24),
                   st.sampled_from(['=cmd|"/c calc"!A1,x', "@SUM(1)", "-2+3", "+x",
                                    "<script>alert(1)</script>", "[l](javascript:alert(1))",
                                    "![i](x.png)", "&amp;", "`x`"]),
                   st.text(max_size=8))           # anything: refused or harmless
NOTES = st.text(alphabet(TEXT_CHARS), max_size=40)
DATES = st.one_of(timestamps(),     # the schema's pattern, any day 1 to 31 of a month
                  st.sampled_from(["2026-02-31T00:00:00Z", "9998-12-31T23:59:59-23:59",
                                   "2024-02-29T12:00:00+0530"]))


def through_stdout(text: str) -> str:
    """text as osmeter's standard output passes it on (cli: writes.checked_stdout)."""
    sink = io.StringIO()
    writes.CheckedStream(sink).write(text)
    return sink.getvalue()


def tag_counts(page: str) -> collections.Counter:
    return collections.Counter(t.lower() for t in re.findall(r"<\s*([A-Za-z][A-Za-z0-9]*)", page))


def document(label: str, note: str, started: str) -> dict:
    doc = exchange.run_to_document(make_run("20261122-080100-0001", seed=1))
    doc["run"]["label"] = label
    doc["run"]["started"] = started
    doc["run"]["finished"] = None
    doc["results"][0]["notes"] = {"mine": note}
    return json.loads(json.dumps(doc))


OTHER = make_run("20261122-080200-0002", label="other", seed=2)


@settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@seed(SEED)
@given(LABELS, NOTES, DATES)
def check_outputs(label, note, started):
    try:
        run = exchange.document_to_run(document(label, note, started))
    except exchange.ExchangeError as e:
        assert "\n" not in str(e)
        with pytest.raises(exchange.ExchangeError):     # the one rule, as import's
            exchange.check_name(label, "--label")
            exchange.check_time(started, "started")
        return
    assert exchange.check_name(label, "--label") == label
    plain = copy.deepcopy(run)
    plain.label = "plain"
    cmp = compare.compare([run, OTHER])
    # the terminal
    listing = display.table([[run.id, run.label, run.started]], ["id", "label", "started"])
    for text in (display.run_header(run), display.results_table(run.results),
                 display.full_notes(run.results), listing, tables.terminal(cmp, width=100)):
        assert not CONTROL.search(through_stdout(text))
        assert not CONTROL.search(text)         # nothing to filter: the schema held it
    # CSV
    for text in (tables.csv_text(cmp), long.render([run, OTHER]).text):
        assert formula_cells(text) == []
    # Markdown
    assert inert_html(markdown_html(tables.markdown(cmp))) == []
    # HTML: a label changes no structure of the page
    page, _ = html.render(cmp)
    same, _ = html.render(compare.compare([plain, OTHER]))
    assert tag_counts(page) == tag_counts(same)


def test_every_text_output_holds_whatever_a_label_note_or_date_holds():
    check_outputs()
    print("%d examples from seed %d" % (MAX_EXAMPLES, SEED))
