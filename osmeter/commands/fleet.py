"""`osmeter fleet [RUN ...] [--where KEY=GLOB] [--by KEY] [--bench GLOB] [-o FILE]`: many
runs (hosts) read at once: one row per run with the chosen benchmarks, the fleet's median
and spread per benchmark, and the outlier hosts named (osmeter/analysis/fleet.py); -o also writes
the fleet report (the HTML page `osmeter report` writes for many runs)."""
from __future__ import annotations

import shutil
import sys

from ..analysis import fleet
from .common import RunSource, UsageError, add_fleet_options, add_where, write_page

TITLE = "osmeter fleet report"


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "fleet", help="many runs (hosts) at once: a row per run, outliers named",
        description="Read many runs at once, e.g. every host of a fleet: a table with one "
                    "row per run and one column per benchmark (a table per category, as "
                    "wide as the terminal), each benchmark's median and spread across the "
                    "runs, and the hosts that lie far from the others.")
    s.add_argument("runs", nargs="*", metavar="RUN", help="runs (id, label, or a results "
                   "file); with --where, added to those it selects")
    add_where(s)
    add_fleet_options(s)
    s.add_argument("-o", "--output", metavar="FILE", help="also write the fleet report "
                   "(HTML) to FILE")
    s.add_argument("--title", default=TITLE, help="the report's title")
    s.set_defaults(func=handle)


def load_fleet(args, refs: list[str]) -> fleet.Fleet:
    if not refs and not args.where:
        raise UsageError("name the runs, or select them with --where KEY=GLOB (e.g. "
                         "--where 'label=nov:*')")
    with RunSource(args.db) as source:
        runs = source.runs(refs, args.where)
    try:
        return fleet.analyse(runs, args.by, args.bench)
    except fleet.FleetError as e:
        raise UsageError(str(e)) from None


def handle(args) -> int:
    from ..report import fleet as fleet_report
    from ..report import fleet_table
    analysed = load_fleet(args, args.runs)
    width = shutil.get_terminal_size((fleet_table.DEFAULT_WIDTH, 24)).columns
    sys.stdout.write(fleet_table.terminal(analysed, named=bool(args.bench), width=width))
    if args.output:
        write_page(args.output, lambda: fleet_report.write(analysed, args.output, args.title))
    return 0
