"""`osmeter runs [--where KEY=GLOB] [--json]`: the stored runs."""
from __future__ import annotations

import json
import sys

from ..report import display
from ..data import selection
from ..report.width import fit_lines
from .common import add_where, open_store, printable


def register(subparsers) -> None:
    s = subparsers.add_parser("runs", help="list stored runs")
    add_where(s)
    s.add_argument("--json", action="store_true",
                   help="the stored runs as a JSON list (id, label, started, status, suite, host, ...)")
    s.set_defaults(func=handle)


def _minute(started) -> str:
    """'2026-11-25 22:37' of '2026-11-25T22:37:21+00:00' (the id has the seconds)."""
    return (started or "")[:16].replace("T", " ")


def handle(args) -> int:
    chosen = selection.parse(args.where)
    with open_store(args, readonly=True) as store:
        runs = chosen.runs(store)
    if args.json:
        json.dump(runs, sys.stdout, indent=1)
        print()
        return 0
    if not runs:
        print(printable("no runs %sin %s" % ("matching %s " % chosen if chosen else "stored ",
                                             store.location)))
        return 0
    rows = [[r["id"], r["label"] or "", _minute(r["started"]), r["status"] + (" smoke" if r["smoke"] else ""),
             r["suite"] or "custom", r["host"] or "", r["kernel"] or "", str(r["results"])]
            for r in runs]
    print(display.table(rows, ["id", "label", "started", "status", "suite", "host", "kernel",
                               "results"], right={7}, fold_first=(5, 6)))
    left = sum(r["rows"] - r["results"] for r in runs)
    if left:
        print("\n".join(fit_lines([
            "results: measured, with a row of their own (as each run's count line and "
            "report count them); not counted: %d stored rows skipped, failed, or phases too "
            "short to time alone (osmeter show RUN lists them)." % left])))
    return 0
