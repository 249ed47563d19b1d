"""`osmeter runs [--where KEY=GLOB] [--json]`: the stored runs."""
from __future__ import annotations

import json
import sys

from .. import display, selection
from .common import add_where, open_store, printable


def register(subparsers) -> None:
    s = subparsers.add_parser("runs", help="list stored runs")
    add_where(s)
    s.add_argument("--json", action="store_true",
                   help="the stored runs as a JSON list (id, label, started, status, suite, host, ...)")
    s.set_defaults(func=handle)


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
    rows = [[r["id"], r["label"] or "", r["started"], r["status"] + (" smoke" if r["smoke"] else ""),
             r["suite"] or "custom", r["host"] or "", r["kernel"] or "", str(r["results"])]
            for r in runs]
    print(display.table(rows, ["id", "label", "started", "status", "suite", "host", "kernel",
                               "results"], right={7}))
    return 0
