"""`osmeter runs [--json]`: the stored runs."""
from __future__ import annotations

import json
import sys

from .. import display
from .common import open_store


def register(subparsers) -> None:
    s = subparsers.add_parser("runs", help="list stored runs")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=handle)


def handle(args) -> int:
    store = open_store(args, readonly=True)
    runs = store.list_runs()
    if args.json:
        json.dump(runs, sys.stdout, indent=1)
        print()
        return 0
    if not runs:
        print("no runs stored in %s" % store.path)
        return 0
    rows = [[r["id"], r["label"] or "", r["started"], r["status"] + (" smoke" if r["smoke"] else ""),
             r["suite"] or "custom", r["host"] or "", r["kernel"] or "", str(r["results"])]
            for r in runs]
    print(display.table(rows, ["id", "label", "started", "status", "suite", "host", "kernel",
                               "results"], right={7}))
    return 0
