"""`osmeter report [RUN ...] -o report.html`: one self-contained HTML file."""
from __future__ import annotations

import sys

from .. import studies
from ..analysis import fleet
from ..analysis.compare import CompareError
from ..analysis.noise import NoiseError
from .common import (add_fleet_options, add_noise_options, add_where, fail, load_runs,
                     noise_profile)

TITLE = "osmeter report"


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "report", help="write a self-contained HTML report (tables, charts, curves)",
        description="Write one HTML file that opens anywhere without a network: comparison "
                    "tables, bar charts with intervals, curves over size, scalability scatters.")
    s.add_argument("runs", nargs="*", metavar="RUN",
                   help="runs (id, label, 'latest' or JSON file); default: the latest run")
    add_where(s)
    s.add_argument("-o", "--output", default="report.html", metavar="FILE",
                   help="HTML file to write (default %(default)s)")
    s.add_argument("--baseline", metavar="RUN|KEY=GLOB,...", help="run the others are "
                   "compared with: a run's name or conditions like --where's joined by commas "
                   "(default: the first)")
    s.add_argument("--figures", metavar="DIR", help="also write every figure as an SVG file")
    s.add_argument("--png", action="store_true", help="with --figures: PNG copies too "
                   "(needs rsvg-convert)")
    s.add_argument("--references", action="store_true", help="add the seed studies' "
                   "published numbers and Ousterhout's MIPS-relative tables")
    s.add_argument("--study", action="append", choices=[*studies.IDS, "all"], metavar="ID",
                   help="add a study laid out in the paper's order with the runs beside it "
                   "(%s; repeatable); all: the replication report of all five, a summary "
                   "of what still holds first (as osmeter replicate --no-run)"
                   % ", ".join(studies.IDS))
    add_noise_options(s)
    s.add_argument("--title", default=TITLE, help="page title")
    s.add_argument("--fleet", action="store_true", help="the fleet report (a line per run "
                   "in every plot, outliers named) for fewer than %d runs too; it is the "
                   "report from %d runs on" % (fleet.MIN_RUNS, fleet.MIN_RUNS))
    add_fleet_options(s)
    s.set_defaults(func=handle)


def handle(args) -> int:
    from ..report import html
    if args.png and not args.figures:
        return fail("--png goes with --figures DIR")
    named = args.runs or ([] if args.where else ["latest"])
    runs, base = load_runs(named, args.baseline, args.db, args.where)
    if "all" in (args.study or []):
        from ..report import replication
        reason = replication.write_or_reason(runs, args.output, args.title if args.title
                                             != TITLE else "osmeter replication")
        return fail(reason) if reason else 0
    if args.fleet or len(runs) >= fleet.MIN_RUNS or args.by or args.bench:
        return write_fleet(args, runs)
    try:
        figures = html.write_runs(runs, args.output, base, args.references, args.figures,
                                  args.png, args.title, args.study or [],
                                  noise_profile(args, runs))
    except (CompareError, NoiseError) as e:
        return fail(str(e))
    except OSError as e:
        return fail("cannot write the report: %s" % e)
    except html.RasterError as e:
        return fail(str(e))
    print("wrote %s (%d figures%s)" % (args.output, len(figures),
                                       ", also as %s files in %s"
                                       % ("SVG and PNG" if args.png else "SVG", args.figures)
                                       if args.figures else ""), file=sys.stderr)
    return 0


def write_fleet(args, runs) -> int:
    """The fleet report of the runs (report/fleet.py)."""
    from ..report import fleet as fleet_report
    if args.png or args.references or args.study or args.noise:
        return fail("--png, --references, --study and --noise belong to the comparison "
                    "report, not the fleet report (%d runs)" % len(runs))
    try:
        analysed = fleet.analyse(runs, args.by, args.bench)
        title = args.title if args.title != TITLE else "osmeter fleet report"
        figures = fleet_report.write(analysed, args.output, title, args.figures)
    except fleet.FleetError as e:
        return fail(str(e))
    except OSError as e:
        return fail("cannot write the report: %s" % e)
    print("wrote the fleet report of %d runs to %s (%d figures)" % (len(runs), args.output,
                                                                   len(figures)),
          file=sys.stderr)
    return 0
