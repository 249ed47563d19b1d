"""`osmeter list [--suite S] [--json]`: every benchmark the core knows."""
from __future__ import annotations

import json
import sys

from ..report import display
from ..running.catalog import SUITES, TIMING_PARAMS, Catalog


def register(subparsers) -> None:
    s = subparsers.add_parser("list", help="show every benchmark")
    s.add_argument("--suite", choices=list(SUITES))
    s.add_argument("--json", action="store_true", help="every benchmark as the core lists it (JSON)")
    s.set_defaults(func=handle)


def handle(args) -> int:
    catalog = Catalog()
    ids = catalog.suite(args.suite) if args.suite else [b["id"] for b in catalog.benches]
    benches = [catalog.by_id[i] for i in ids]
    if args.json:
        json.dump(benches, sys.stdout, indent=1)
        print()
        return 0
    rows = []
    for b in benches:
        units = sorted({"%s" % m["unit"] for m in b["metrics"]})
        params = " ".join("%s=%s" % (p["name"], p["default"]) for p in b["params"]
                          if p["name"] not in TIMING_PARAMS)
        rows.append([b["id"], ",".join(units), b["source"] or "", b["help"] or "",
                     params])
    print(display.table(rows, ["id", "unit", "from", "what it measures", "parameters"]))
    print("\n%d benchmarks. Suites: %s" % (len(rows), ", ".join(SUITES)))
    return 0
