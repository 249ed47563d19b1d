"""`osmeter export RUN [-o FILE]` and `osmeter import FILE...`: runs as JSON results files
(the format is osmeter/exchange.py's, documented in docs/results-schema.md)."""
from __future__ import annotations

import json
import sys

from .. import exchange
from .common import UsageError, open_store


def register(subparsers) -> None:
    s = subparsers.add_parser("export", help="write a stored run as a JSON results file")
    s.add_argument("run")
    s.add_argument("-o", "--output", help="file (default: standard output)")
    s.set_defaults(func=handle_export)

    s = subparsers.add_parser("import", help="store runs from JSON results files")
    s.add_argument("files", nargs="+", metavar="FILE")
    s.add_argument("--replace", action="store_true", help="overwrite a run already stored")
    s.set_defaults(func=handle_import)


def handle_export(args) -> int:
    run = open_store(args, readonly=True).load_run(args.run)
    if args.output in (None, "-"):
        json.dump(exchange.run_to_document(run), sys.stdout, indent=1)
        print()
    else:
        exchange.write_run_file(run, args.output)
        print("exported run %s to %s" % (run.id, args.output), file=sys.stderr)
    return 0


def handle_import(args) -> int:
    runs = [exchange.read_run_file(f) for f in args.files]   # all valid, or nothing stored
    store = open_store(args)
    known = {r["id"] for r in store.list_runs()}
    for run in runs:
        if run.id in known and not args.replace:
            raise UsageError("run %s is already stored (use --replace to overwrite it)" % run.id)
    for run in runs:
        store.save_run(run)
        print("imported run %s%s" % (run.id, " (%s)" % run.label if run.label else ""))
    return 0
