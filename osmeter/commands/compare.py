"""`osmeter compare RUN_A RUN_B ...`: runs side by side, verdicts, indices, regression gate."""
from __future__ import annotations

import sys

from .. import compare as cmpmod
from .. import significance as sig
from .common import fail, load_runs

EXIT_REGRESSION = 1


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "compare", help="compare runs side by side (winners, indices, regression gate)",
        description="Compare stored runs (id, label, 'latest') or exported JSON files. Ratios "
                    "are speed relative to the baseline: > 1 = better.")
    s.add_argument("runs", nargs="*", metavar="RUN", help="runs to compare (first = baseline)")
    s.add_argument("--baseline", metavar="RUN", help="the run the others are measured "
                   "against (default: the first; added if not among RUN)")
    fmt = s.add_mutually_exclusive_group()
    fmt.add_argument("--md", action="store_true", help="Markdown")
    fmt.add_argument("--csv", action="store_true", help="CSV, one line per result and run")
    fmt.add_argument("--json", action="store_true", help="JSON")
    s.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: stdout)")
    s.add_argument("--references", action="store_true", help="put the runs next to the "
                   "seed studies' published numbers (DECstation 3100, Pentium 100, ...)")
    s.add_argument("--fail-on-slower", type=float, metavar="PCT", help="exit %d when any "
                   "result is significantly slower than the baseline by more than PCT "
                   "percent" % EXIT_REGRESSION)
    s.add_argument("--junit", metavar="FILE", help="with --fail-on-slower: also write the "
                   "gate's outcome per benchmark as JUnit XML (for CI test reporters)")
    s.add_argument("--alpha", type=float, default=sig.ALPHA,
                   help="significance level (default %(default)s)")
    s.add_argument("--min-effect", type=float, default=100 * sig.MIN_EFFECT, metavar="PCT",
                   help="smallest difference that gets a verdict, percent (default %(default)s)")
    s.set_defaults(func=handle)


def check_options(args) -> str | None:
    if not 0 < args.alpha < 1:
        return "--alpha must be between 0 and 1"
    if args.min_effect < 0:
        return "--min-effect must not be negative"
    if args.fail_on_slower is not None and args.fail_on_slower < 0:
        return "--fail-on-slower must not be negative"
    if args.junit and args.fail_on_slower is None:
        return "--junit writes the regression gate's outcome: give --fail-on-slower PCT"
    return None


def handle(args) -> int:
    problem = check_options(args)
    if problem:
        return fail(problem)
    runs, base = load_runs(args.runs, args.baseline, args.db)
    if len(runs) < 2 and not args.references:
        return fail("compare needs two runs or more (or --references to set one run "
                    "against the published studies)")
    if args.fail_on_slower is not None and len(runs) < 2:
        return fail("--fail-on-slower needs a baseline and at least one other run")
    try:
        cmp = cmpmod.compare(runs, base, args.alpha, args.min_effect / 100.0,
                             args.fail_on_slower)
    except cmpmod.CompareError as e:
        return fail(str(e))
    from ..report import tables
    if args.json:
        text = tables.json_text(cmp, args.references)
    elif args.csv:
        text = tables.csv_text(cmp)
    elif args.md:
        text = tables.markdown(cmp, args.references)
    else:
        text = tables.terminal(cmp, args.references)
    if args.output and args.output != "-":
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            return fail("cannot write %s: %s" % (args.output, e.strerror))
    else:
        sys.stdout.write(text)
    if args.junit:
        from ..formats import junit
        junit.write_gate(cmp, args.junit)
    if cmp.gate_pct is not None:
        undecided = cmpmod.undecided_rows(cmp)
        if undecided:
            print("osmeter: warning: the regression gate could not judge %d result(s) with "
                  "too few repetitions (use --runs 4 or more)" % len(undecided), file=sys.stderr)
    if cmp.gate_pct is not None and cmp.regressions:
        # The list goes to stderr too, so a CI log shows it whatever the format.
        for row, i, pct, p in cmp.regressions:
            print("osmeter: regression: %s is %.1f%% slower in %s than in %s (p=%.2g)"
                  % (row.label, pct, cmp.names[i], cmp.names[cmp.baseline], p), file=sys.stderr)
        return EXIT_REGRESSION
    return 0
