"""`osmeter report [RUN ...] -o report.html`: one self-contained HTML file."""
from __future__ import annotations

import sys

from .. import compare as cmpmod
from .. import fleet as fleetmod
from .. import noise as noisemod
from .. import studies
from .common import add_noise_options, add_where, fail, load_runs, noise_profile
from .fleet import add_fleet_options

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
                   "report from %d runs on" % (fleetmod.MIN_RUNS, fleetmod.MIN_RUNS))
    add_fleet_options(s)
    s.set_defaults(func=handle)


def write(runs: list, path: str, baseline: int = 0, references: bool = False,
          figures_dir: str | None = None, png: bool = False, title: str = TITLE,
          study_ids: list = (), noise=None) -> list:
    """Compare the runs and write the HTML report (and the figures); the figures' names.

    Raises CompareError for runs that cannot be compared, OSError and RasterError when
    something cannot be written.  Also used by `osmeter run --report`.  `noise`: the
    between-run noise profile (osmeter.noise), as compare's, so that the two agree."""
    from ..report import html
    cmp = cmpmod.compare(runs, baseline, noise=noise)
    views = [studies.build(i, cmp) for i in study_ids]
    figures = html.write(cmp, path, references, figures_dir, title, views)
    if png:
        html.svgs_to_png(figures_dir, figures)
    return figures


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
    if args.fleet or len(runs) >= fleetmod.MIN_RUNS or args.by or args.bench:
        return write_fleet(args, runs)
    try:
        figures = write(runs, args.output, base, args.references, args.figures, args.png,
                        args.title, args.study or [], noise_profile(args, runs))
    except (cmpmod.CompareError, noisemod.NoiseError) as e:
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
        fleet = fleetmod.analyse(runs, args.by, args.bench)
        title = args.title if args.title != TITLE else "osmeter fleet report"
        figures = fleet_report.write(fleet, args.output, title, args.figures)
    except fleetmod.FleetError as e:
        return fail(str(e))
    except OSError as e:
        return fail("cannot write the report: %s" % e)
    print("wrote the fleet report of %d runs to %s (%d figures)" % (len(runs), args.output,
                                                                   len(figures)),
          file=sys.stderr)
    return 0
