"""`osmeter report [RUN ...] -o report.html`: one self-contained HTML file."""
from __future__ import annotations

import sys

from . import compare as cmpmod


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "report", help="write a self-contained HTML report (tables, charts, curves)",
        description="Write one HTML file that opens anywhere without a network: comparison "
                    "tables, bar charts with intervals, curves over size, scalability scatters.")
    s.add_argument("runs", nargs="*", metavar="RUN",
                   help="runs (id, label, 'latest' or JSON file); default: the latest run")
    s.add_argument("-o", "--output", default="report.html", metavar="FILE",
                   help="HTML file to write (default %(default)s)")
    s.add_argument("--baseline", metavar="RUN", help="run the others are compared with "
                   "(default: the first)")
    s.add_argument("--figures", metavar="DIR", help="also write every figure as an SVG file")
    s.add_argument("--png", action="store_true", help="with --figures: PNG copies too "
                   "(needs rsvg-convert)")
    s.add_argument("--references", action="store_true", help="add the seed studies' "
                   "published numbers and Ousterhout's MIPS-relative tables")
    s.add_argument("--title", default="osmeter report", help="page title")
    s.set_defaults(func=handle)


def handle(args) -> int:
    from .cli import fail
    from .cmd_compare import load
    from .report import html
    runs, base = load(args.runs or ["latest"], args.baseline, args.db)
    try:
        cmp = cmpmod.compare(runs, base)
    except cmpmod.CompareError as e:
        return fail(str(e))
    if args.png and not args.figures:
        return fail("--png goes with --figures DIR")
    try:
        figures = html.write(cmp, args.output, args.references, args.figures, args.title)
        if args.png:
            html.svgs_to_png(args.figures, figures)
    except OSError as e:
        return fail("cannot write the report: %s" % e)
    except html.RasterError as e:
        return fail(str(e))
    print("wrote %s (%d figures%s)" % (args.output, len(figures),
                                       ", also as %s files in %s"
                                       % ("SVG and PNG" if args.png else "SVG", args.figures)
                                       if args.figures else ""), file=sys.stderr)
    return 0
