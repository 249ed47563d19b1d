"""Every reader of a run that was imported (tests/test_exchange.py, test_properties.py)."""
import copy
import tempfile
from pathlib import Path

from osmeter.analysis import compare, gate
from osmeter.report import display
from osmeter.data import redact, selection
from osmeter.formats import formats, junit
from osmeter.report import html, tables
from osmeter.data.store import Store


def read_everywhere(run, other) -> None:
    """Every reader of an imported run: the store and --where since/until, show, runs,
    compare both ways and against itself, every table and the report, the gate and its
    JUnit file, every export format (also redacted)."""
    with tempfile.TemporaryDirectory() as d:
        with Store(Path(d) / "db.sqlite") as store:
            store.save_run(run)
            back = store.load_run(run.id)
            listed = store.list_runs()
            for spec in (["since=2026-01-01"], ["until=2026-01-01"], ["since=1000-01-01"],
                         ["until=9998-12-31"], ["since=7d"], ["since=700000d"]):
                selection.parse(spec).runs(store)
    display.run_header(back)
    display.results_table(back.results, condense_sweeps=True)
    display.results_table(back.results, condense_sweeps=False)
    display.full_notes(back.results)
    display.table([[r["id"], r["label"] or "", r["started"]] for r in listed],
                  ["id", "label", "started"])
    twin = copy.deepcopy(back)
    twin.id = back.id + "-twin"
    for runs in ([back, other], [other, back], [back, twin]):
        try:
            cmp = compare.compare(runs)
        except compare.CompareError:
            continue
        tables.terminal(cmp, True)
        tables.markdown(cmp, True)
        tables.csv_text(cmp)
        tables.json_text(cmp, True)
        html.render(cmp, True)
        for pct in (0, 5, 1000):
            result = gate.evaluate(cmp, pct)
            junit.render(junit.cases_from_gate(result, "base"), "gate")
    for fmt in formats().values():
        fmt.render([back])
        fmt.render([redact.redact(back)])
