"""`osmeter replicate`: run what the five studies need, at their sizes, and write one
report of all five papers with a summary of what still holds; `--no-run` writes it from
stored runs (as `osmeter report --study all` does).

The run is `osmeter run --suite studies --repetitions N`: every benchmark of the o90, lb96,
vl03, mg05 and cc06 suites, once each, at the studies' sizes (the default preset).  Five
repetitions by default: the comparison's rank test decides a difference from 5
repetitions a side (with 3 it cannot go below p = 0.1, so "static vs dynamic" and the
other significance checks could only read "undecided"), and intervals of 5 repetitions
are 93.8% (the 95% band needs 6).  That is also the cheapest run that can decide every
conclusion: fewer repetitions leave the significance checks undecided, smaller sizes
(--smoke) the growth classes.

`--systems RUN,RUN...` writes the report of stored runs of two or more systems (or
configurations) and judges the papers' cross-system claims on them (studies/across.py).
"""
from __future__ import annotations

import time

from ..report import replication
from .common import EXIT_INTERRUPTED, fail, load_runs

REPETITIONS = 5
OUTPUT = "replication.html"
# Not measured at rest by us.  The estimates are the run's own (running/eta.py): from the
# catalogue's declared durations on a host that has run nothing, about 59 minutes for 5
# repetitions and 35 for 3 (computed 2026-11-28); from the host's own timings once it has
# run.  The one measurement is issue 41's: --runs 3 on a busy 2-vCPU VM, estimated 20m14s
# at its start, took 26m51s (31 minutes with the report).
TIME = ("time: the run prints its estimate at its start, for a machine at rest: from the "
        "catalogue's declared durations about 59 minutes for 5 repetitions (35 for 3) on "
        "a host that has run nothing yet, from this host's own timings after; measured "
        "only busy (issue 41: --runs 3 on a 2-vCPU VM, estimated 20m14s, took 27-31 "
        "minutes)")


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "replicate", help="run the five studies' suites and write one report of all five "
        "papers, with what still holds",
        description="Run every benchmark the five seed studies need, at their sizes, store "
                    "the run, and write one HTML report: a summary of each paper's "
                    "conclusions with today's verdict first, then each paper's tables and "
                    "figures with this machine beside the published systems.  The terminal "
                    "prints the summary.  With --systems, judge the papers' cross-system "
                    "claims on stored runs of two or more systems.  The default (5 "
                    "repetitions, the studies' sizes) is the cheapest choice of --runs and "
                    "sizes that decides every conclusion.  " + TIME[0].upper() + TIME[1:] + ".")
    s.add_argument("--repetitions", "--runs", dest="runs", type=int, default=REPETITIONS,
                   metavar="N", help="repetitions of each benchmark (--runs: the same; "
                   "default %(default)s: what the verdicts' tests need to decide)")
    s.add_argument("--with", dest="others", action="append", default=[], metavar="RUN",
                   help="another stored run to set beside (a NetBSD run, an older run; "
                   "repeatable)")
    s.add_argument("--no-run", action="store_true", help="run nothing: the report of the "
                   "latest run (or those named with --with)")
    s.add_argument("--systems", metavar="RUN,RUN...", help="run nothing: judge stored runs "
                   "of two or more systems (or configurations) against each other as the "
                   "papers did; each paper's system is played by the run of its kernel "
                   "family, the others by the runs in this order")
    s.add_argument("--label", help="name today's run (default replicate-YYYYMMDD-HHMM)")
    s.add_argument("-o", "--output", default=OUTPUT, metavar="FILE",
                   help="HTML file to write (default %(default)s)")
    s.add_argument("--dir", action="append", default=[], metavar="PATH",
                   help="directory for file-system benchmarks, as for osmeter run (twice, "
                   "a local and a network one: Ousterhout's remote penalty, Lai & Baker "
                   "§10)")
    s.add_argument("--smoke", action="store_true", help="smallest sizes (checks that it "
                   "works; the verdicts then mostly read 'undecided')")
    s.add_argument("--quiet", action="store_true", help="no progress display")
    s.set_defaults(func=handle)


def _run(args) -> tuple[str, int]:
    """Run the studies' suite as `osmeter run` does (args.main: the command line's own
    entry, handed down by cli.py, so that no command imports another); the label of the
    stored run and the exit code of the run."""
    label = args.label or time.strftime("replicate-%Y%m%d-%H%M")
    argv = (["--db", args.db] if args.db else []) + \
        ["run", "--suite", "studies", "--repetitions", str(args.runs), "--label", label]
    argv += [w for d in args.dir for w in ("--dir", d)]
    argv += (["--smoke"] if args.smoke else []) + (["--quiet"] if args.quiet else [])
    return label, args.main(argv)


def handle(args) -> int:
    if args.runs < 1:
        return fail("--repetitions (--runs) must be at least 1")
    named = list(args.others)
    if args.systems:
        named = [n for n in args.systems.split(",") if n] + named
        if len(named) < 2:
            return fail("--systems needs two or more runs (RUN,RUN...)")
    elif not args.no_run:
        label, rc = _run(args)
        if rc == EXIT_INTERRUPTED:
            return rc
        if rc not in (0, 1):        # 1: stored, with some results failed (the views say)
            return fail("the studies' run did not complete; nothing written (osmeter runs "
                        "lists what was stored)")
        named.insert(0, label)
    elif not named:
        named = ["latest"]
    runs, _ = load_runs(named, None, args.db)
    reason = replication.write_or_reason(runs, args.output)
    return fail(reason) if reason else 0
