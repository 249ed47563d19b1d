"""`osmeter show [RUN] [--json]`: one stored run or results file."""
from __future__ import annotations

import json
import sys

from ..report import display
from ..data import exchange
from .common import load_run_ref


def register(subparsers) -> None:
    s = subparsers.add_parser("show", help="print a stored run (default: the latest)")
    s.add_argument("run", nargs="?", help="run id, label, 'latest', or a results file")
    s.add_argument("--json", action="store_true", help="the whole run as the JSON results "
                   "document (docs/results-schema.md), samples included")
    s.set_defaults(func=handle)


def handle(args) -> int:
    run = load_run_ref("latest" if args.run is None else args.run, args.db)
    if args.json:
        json.dump(exchange.run_to_document(run), sys.stdout, indent=1)
        print()
        return 0
    width = display.terminal_width()
    print(display.run_header(run, width))
    print(display.results_table(run.results, condense_sweeps=False, width=width,
                                run_ref=run.label or run.id))
    notes = display.full_notes(run.results, width)
    if notes:
        print()
        print(notes)
    return 0
