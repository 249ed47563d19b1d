"""`osmeter compare RUN_A RUN_B ...`: runs side by side, verdicts, indices, regression gate.

Exit codes (documented in README and docs/ci.md for CI):
  0  compared; with --fail-on-slower: the gate passed
  1  --fail-on-slower: the gate failed (a significant slowdown beyond PCT), or it was
     undecided and --undecided-fails was given
  2  bad input (one line on stderr, nothing written)
  3  --fail-on-slower: undecided (a result named by --gate-on is too noisy to tell a
     slowdown of PCT; with --undecided-fails any such result, and the exit is 1)
"""
from __future__ import annotations

import math
import sys

from ..analysis import compare, gate, noise
from ..stats import significance as sig
from .. import studies
from ..data import writes
from ..report.width import fit_lines, terminal_width
from .common import add_noise_options, add_where, fail, load_runs, noise_profile


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "compare", help="compare runs side by side (winners, indices, regression gate)",
        description="Compare stored runs (id, label, 'latest') or exported JSON files. Ratios "
                    "are speed relative to the baseline: > 1 = better.  Exit codes with "
                    "--fail-on-slower: 0 pass, 1 fail, 3 undecided (1 with "
                    "--undecided-fails), 2 bad input.")
    s.add_argument("runs", nargs="*", metavar="RUN", help="runs to compare (first = baseline)")
    add_where(s)
    s.add_argument("--baseline", metavar="RUN|KEY=GLOB,...", help="the run the others are "
                   "measured against: a run's name, or conditions like --where's joined by "
                   "commas (the latest run matching them); default: the first; added if not "
                   "among the runs")
    fmt = s.add_mutually_exclusive_group()
    fmt.add_argument("--md", action="store_true", help="Markdown")
    fmt.add_argument("--csv", action="store_true", help="CSV, one line per result and run")
    fmt.add_argument("--json", action="store_true", help="JSON, every row and cell (the osmeter.comparison document)")
    s.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: stdout)")
    s.add_argument("--all", action="store_true", dest="show_all", help="every row, also "
                   "those without a verdict or a difference of 20%% or more, and the "
                   "MIPS-relative table (--md, --csv and --json always have every row)")
    s.add_argument("--references", action="store_true", help="put the runs next to the "
                   "seed studies' published numbers (DECstation 3100, Pentium 100, ...)")
    s.add_argument("--study", action="append", choices=studies.IDS, metavar="ID",
                   help="lay a study out in the paper's order with the runs beside it: its "
                   "tables, figures and conclusions with today's verdict (%s; repeatable)"
                   % ", ".join(studies.IDS))
    s.add_argument("--fail-on-slower", type=float, metavar="PCT", help="regression gate: "
                   "exit %d (fail) when the comparison calls a result worse than the "
                   "baseline with an estimated slowdown beyond PCT percent, else %d "
                   "(pass); results noisier than PCT are listed as not gated, and make it "
                   "undecided (%d) only with --gate-on or --undecided-fails"
                   % (gate.EXIT_FAIL, gate.EXIT_PASS, gate.EXIT_UNDECIDED))
    s.add_argument("--undecided-fails", action="store_true", help="with --fail-on-slower: "
                   "every result must be decided; one noisier than PCT exits %d"
                   % gate.EXIT_FAIL)
    s.add_argument("--gate-on", action="append", metavar="GLOB", help="with "
                   "--fail-on-slower: results matching GLOB ('syscall.*', 'mem.copy "
                   "bandwidth') must be decided; one noisier than PCT makes the gate "
                   "undecided (exit %d; repeatable)" % gate.EXIT_UNDECIDED)
    add_noise_options(s)
    s.add_argument("--junit", metavar="FILE", help="with --fail-on-slower: also write the "
                   "gate's outcome per benchmark as JUnit XML (for CI test reporters)")
    s.add_argument("--alpha", type=float, default=sig.ALPHA,
                   help="significance level: false-discovery rate over the questions "
                   "(verdicts, and so the gate's failures); the level of 'same' and of a "
                   "gate pass per row (default %(default)s)")
    s.add_argument("--min-effect", type=float, default=100 * sig.MIN_EFFECT, metavar="PCT",
                   help="smallest difference that gets a better/worse verdict, percent "
                   "(default %(default)s)")
    s.add_argument("--margin", type=float, default=100 * sig.MARGIN, metavar="PCT",
                   help="'same' means the difference's interval lies within +-PCT percent "
                   "(default %(default)s)")
    s.set_defaults(func=handle)


def check_options(args) -> str | None:
    if not 0 < args.alpha < 0.5:
        return "--alpha must be between 0 and 0.5"
    # NaN compares false with everything: ask for what is wanted, not against what is not
    if not (math.isfinite(args.min_effect) and args.min_effect >= 0):
        return "--min-effect must be a percentage of 0 or more (got %s)" % args.min_effect
    if args.fail_on_slower is not None and not (math.isfinite(args.fail_on_slower) and
                                                args.fail_on_slower >= 0):
        return "--fail-on-slower must be a percentage of 0 or more (got %s)" \
            % args.fail_on_slower
    if not (math.isfinite(args.margin) and args.margin > 0):
        return "--margin must be a positive percentage (got %s)" % args.margin
    if args.undecided_fails and args.fail_on_slower is None:
        return "--undecided-fails needs --fail-on-slower"
    if args.gate_on and args.fail_on_slower is None:
        return "--gate-on needs --fail-on-slower"
    if args.junit and args.fail_on_slower is None:
        return "--junit writes the regression gate's outcome: give --fail-on-slower PCT"
    return None


def study_text(cmp, ids: list[str], markdown: bool, as_json: bool) -> str:
    """The study views of the comparison's runs (text, Markdown or one JSON list)."""
    from ..report import study
    views = [studies.build(i, cmp) for i in ids]
    if as_json:
        return "[\n" + ",\n".join(study.json_text(v).rstrip() for v in views) + "\n]\n"
    text = "\n".join(study.text(v, markdown) for v in views)
    if markdown:
        return text
    return "\n".join(fit_lines(text.split("\n"))) + ("\n" if text.endswith("\n") else "")


def handle(args) -> int:
    problem = check_options(args)
    if problem:
        return fail(problem)
    runs, base = load_runs(args.runs, args.baseline, args.db, args.where)
    if len(runs) == 1 and len(args.runs) > 1 and not args.where:
        return fail("%s are the same run (%s, %s): compare needs two different runs"
                    % (" and ".join("'%s'" % r for r in args.runs), runs[0].id,
                       runs[0].name))
    if len(runs) < 2 and not args.references and not args.study:
        return fail("compare needs two runs or more (or --references or --study to set one "
                    "run against the published studies)")
    if args.study and args.csv:
        return fail("--study has no CSV form (use the text, --md or --json)")
    if args.fail_on_slower is not None and len(runs) < 2:
        return fail("--fail-on-slower needs a baseline and at least one other run")
    try:
        profile = noise_profile(args, runs)
        cmp = compare.compare(runs, base, args.alpha, args.min_effect / 100.0, profile,
                             args.margin / 100.0)
    except (compare.CompareError, noise.NoiseError) as e:
        return fail(str(e))
    outcome = None
    if args.fail_on_slower is not None:
        outcome = gate.evaluate(cmp, args.fail_on_slower, args.undecided_fails,
                                args.gate_on)
    from ..report import gate_words, tables
    if args.study:
        text = study_text(cmp, args.study, args.md, args.json)
    elif args.json:
        text = tables.json_text(cmp, args.references, outcome)
    elif args.csv:
        text = tables.csv_text(cmp)
    elif args.md:
        text = tables.markdown(cmp, args.references, outcome)
    else:
        text = tables.terminal(cmp, args.references, args.show_all, terminal_width(),
                               outcome)
    if args.output and args.output != "-":
        writes.write_file(args.output, text)
    else:
        sys.stdout.write(text)
    if outcome is None:
        return 0
    if args.junit:
        from ..formats import junit
        junit.write_gate(outcome, cmp, args.junit)
    # The outcome goes to stderr too, so a CI log shows it whatever the format.
    print("\n".join(fit_lines(gate_words.log_lines(outcome), terminal_width(sys.stderr))),
          file=sys.stderr)
    return outcome.exit_code
