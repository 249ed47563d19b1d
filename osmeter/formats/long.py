"""The long format: one CSV row per sample, for R, pandas, spreadsheets and fleets.

Columns: run, label, host, kernel, os, cpu, started, benchmark, metric, unit, better,
parameters (the benchmark's parameters as compact JSON with sorted keys), x_name, x,
repetition, value.  The system's columns are those a fleet is grouped by (kernel, OS,
CPU model) and `started` puts runs on a time line.
Several runs go into one file, so a fleet's or a comparison's samples stay together.
Lost: summaries, intervals, warnings, notes and the rest of the system description
(they can be recomputed or looked up by run id); skipped and failed results have no
samples and so no rows.  A text cell that would start a spreadsheet formula begins with
' (base/text.py's spreadsheet_cell, as compare --csv).
"""
from __future__ import annotations

import csv
import io
import json

from ..base import text
from ..data.model import system_keys
from . import Export, Format, not_measured_note

FIELDS = ["run", "label", "host", "kernel", "os", "cpu", "started", "benchmark", "metric",
          "unit", "better", "parameters", "x_name", "x", "repetition", "value"]


def _number(v) -> str:
    if v is None:
        return ""
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))


def rows(runs):
    """One dict per sample of every run (FIELDS as keys, strings as values)."""
    for run in runs:
        system = system_keys(run.sysinfo)
        common = {"run": run.id, "label": run.label or "", "started": run.started,
                  **{k: system[k] or "" for k in ("host", "kernel", "os", "cpu")}}
        for r in run.results:
            params = json.dumps(r.params, sort_keys=True, separators=(",", ":"),
                                ensure_ascii=False)
            for s in r.samples:
                yield dict(common, benchmark=r.bench, metric=r.metric, unit=r.unit,
                           better=r.better, parameters=params, x_name=r.x_name or "",
                           x=_number(s.x), repetition=str(s.rep), value=repr(float(s.value)))


def render(runs) -> Export:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    n = 0
    for row in rows(runs):
        writer.writerow(text.spreadsheet_row(row))
        n += 1
    left = ["%s%s" % ("run %s: " % run.id if len(runs) > 1 else "", note)
            for run in runs for note in not_measured_note(run)]
    return Export(buf.getvalue(), left, n)


FORMAT = Format("long", render, "CSV, one row per sample (run, host, kernel, os, cpu, "
                "started, benchmark, metric, parameters, x, repetition, value); several runs "
                "in one file",
                several_runs=True)
