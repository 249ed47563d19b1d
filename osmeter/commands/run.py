"""`osmeter run`: build the plan from the arguments, run it, store and show the results."""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import shlex
import signal
import socket
import sys

from ..analysis import adaptive
from ..running import coreproc, eta, needs, plan, runner, safekeeping, suitefile, user_command
from ..report import display
from ..analysis.compare import CompareError
from ..data import exchange, writes
from ..base import text
from ..running.catalog import DEFAULT_SUITE, PRESETS, SUITES, Catalog
from ..data.store import StoreError
from ..running.coreproc import SECRET_ENV
from .common import EXIT_INTERRUPTED, UsageError, fail, open_store, read_secret_file


EXIT_NOT_STORED = 1     # measured, but the store did not take it (kept in a file)
MAX_REPETITIONS = 1000  # the results schema's bound on summary.repetitions


def register(subparsers) -> None:
    s = subparsers.add_parser("run", help="run benchmarks and store the results")
    s.add_argument("ids", nargs="*", metavar="ID", help="benchmark ids, globs ('ctx.*') or "
                   "family prefixes ('syscall'); default: --suite %s" % DEFAULT_SUITE)
    s.add_argument("--suite", choices=list(SUITES), help="; ".join(
        "%s: %s" % (k, v[0]) for k, v in SUITES.items()))
    s.add_argument("--param", action="append", metavar="ID.KEY=VALUE",
                   help="override a parameter (ID may be a glob)")
    s.add_argument("--repetitions", "--runs", dest="runs", type=int, metavar="N",
                   help="repetitions of each benchmark, each in a separate process (--runs: "
                   "the same, hyperfine's name; default 5; 2 with --smoke; 7 with "
                   "--until-ci). 5 give a 93.8%% interval of the median, 6 or more at "
                   "least 95%%")
    s.add_argument("--until-ci", type=float, metavar="PCT", help="repeat each benchmark "
                   "(interleaved, in separate processes) until its 95%% interval of the "
                   "median lies within +-PCT%% of the median, or --max-repetitions is reached")
    s.add_argument("--until-decided", type=float, metavar="PCT", help="repeat each "
                   "benchmark until every result's interval against --against RUN (or, "
                   "without it, against a run as noisy) is narrow enough to tell a PCT%% "
                   "slowdown from none, or --max-repetitions is reached")
    s.add_argument("--against", metavar="RUN", help="with --until-decided: the baseline "
                   "run (id, label, 'latest') whose results the new ones will be compared with")
    s.add_argument("--max-repetitions", "--max-runs", dest="max_runs", type=int, metavar="N",
                   help="with --until-ci or "
                   "--until-decided: at most N repetitions per benchmark (required: the "
                   "bound is yours)")
    s.add_argument("--label", help="name this run (usable wherever a run is named)")
    s.add_argument("--json", metavar="FILE", help="also write the results file")
    s.add_argument("--report", metavar="FILE", help="also write the HTML report of this run")
    s.add_argument("--smoke", action="store_true", help="smallest sizes, to check that "
                   "everything works (never compared with real runs)")
    s.add_argument("--preset", choices=list(PRESETS),
                   help="parameter sizes: default = the studies' (for named ids and study "
                   "suites), quick = the quick suite's, smoke = --smoke")
    s.add_argument("--dir", action="append", metavar="PATH", help="directory for file-system "
                   "benchmarks; repeat to compare several (one run each, interleaved)")
    s.add_argument("--peer", metavar="HOST[:PORT]", help="run network benchmarks against "
                   "'osmeter serve' on another host")
    s.add_argument("--peer-secret-file", metavar="FILE", help="the peer's shared secret "
                   "(default: $%s)" % SECRET_ENV)
    s.add_argument("--timeout", type=seconds, default=900.0,
                   help="seconds one repetition may take before it is killed (default 900)")
    s.add_argument("--quiet", action="store_true", help="no progress display")
    s.add_argument("--core", metavar="COMMAND", help="run the measurement core through "
                   "COMMAND, its arguments appended: e.g. 'ssh -p 2222 root@127.0.0.1 "
                   "/opt/osmeter/osmeter-core' for a system without Python (the system is "
                   "described by the core there, and the run records COMMAND)")
    s.add_argument("--suite-file", metavar="FILE", help="run the benchmarks and commands "
                   "named in a TOML suite file (docs/suite-files.md)")
    user_command.add_arguments(s)
    s.set_defaults(func=handle)


def seconds(word: str) -> float:
    """A time limit: a finite number of seconds above 0 (argparse type)."""
    try:
        value = float(word)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError("%r is not a number of seconds above 0" % word)
    return value


def build_plan(args, catalog: Catalog):
    """(suite, items, variants) from the run command's arguments."""
    if args.ids and args.suite:
        raise UsageError("give benchmark ids or --suite, not both")
    if args.smoke and args.preset not in (None, "smoke"):
        raise UsageError("--smoke is --preset smoke: give it or --preset %s, not both"
                         % args.preset)
    args.smoke = args.smoke or args.preset == "smoke"
    command_items = user_command.plan_items(args)       # osmeter run cmd ... -- COMMAND
    named = [i for i in args.ids if i != user_command.CLI_WORD]
    file_items = None
    if args.suite_file:                                 # the benchmarks come from the file
        if named or args.suite:
            raise UsageError("--suite-file names its benchmarks itself; give no ids or --suite")
        loaded = suitefile.load(args.suite_file, catalog, smoke=args.smoke)
        file_items = loaded.items
        args.runs = args.runs if args.runs is not None else loaded.runs
        args.label = args.label or loaded.label
    return plan.build(catalog, named, suite=args.suite, preset=args.preset, smoke=args.smoke,
                      param_specs=args.param or [], dirs=args.dir, peer=args.peer,
                      file_items=file_items, command_items=command_items)


def handle(args) -> int:
    with coreproc.through(args.core):
        return run_plan(args)


def run_plan(args) -> int:
    try:
        with stops_as_ctrl_c():
            catalog, items, variants, opts, store, skipping, estimates = prepare(args)
    except KeyboardInterrupt:   # from the run's start on, the runner's Stopper has them
        return interrupted_early()
    kept = safekeeping.SafeStore(store)    # a run the store refuses is kept in a file
    try:
        done = runner.execute(catalog, items, variants, opts, store=kept, skipping=skipping,
                              estimates=estimates)
    except runner.Interrupted:
        if kept.problems:
            print("osmeter: interrupted", file=sys.stderr)
            return not_stored(kept, EXIT_INTERRUPTED)
        if not kept.stored:
            return interrupted_early()
        print("osmeter: interrupted; what was measured is stored as run %s "
              "(osmeter runs)" % ", ".join(kept.stored), file=sys.stderr)
        return EXIT_INTERRUPTED
    return summarise(args, done, kept, store)


@contextlib.contextmanager
def stops_as_ctrl_c():
    """While the run is prepared, SIGTERM and a hang-up (unless ignored: nohup) stop it
    as Ctrl-C does, with the same line."""
    def ctrl_c(signum, frame):
        raise KeyboardInterrupt()
    stops = [signal.SIGTERM] + ([signal.SIGHUP] if signal.getsignal(signal.SIGHUP)
                                != signal.SIG_IGN else [])
    old = {sig: signal.signal(sig, ctrl_c) for sig in stops}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def interrupted_early() -> int:
    """Ctrl-C, SIGTERM or a hang-up before anything was measured: one line, whichever."""
    print("osmeter: interrupted before anything was measured; nothing stored",
          file=sys.stderr)
    return EXIT_INTERRUPTED


def prepare(args):
    """Everything up to the run: the checked plan, its options, the store (writable), what
    will skip and this machine's remembered timings."""
    catalog = Catalog()
    suite, items, variants = build_plan(args, catalog)
    plan.validate(catalog, items, variants)
    runs = args.runs if args.runs is not None else (
        adaptive.first_look() if args.until_ci else 2 if args.smoke else 5)
    if not 1 <= runs <= MAX_REPETITIONS:
        raise UsageError("--repetitions (--runs) must be from 1 to %d" % MAX_REPETITIONS)
    if args.max_runs is not None and args.max_runs > MAX_REPETITIONS:
        raise UsageError("--max-repetitions (--max-runs) must be at most %d" % MAX_REPETITIONS)
    check_adaptive(args, runs)
    against = None
    if args.against:
        from ..data.store import Store, StoreError
        try:
            with Store(args.db, readonly=True) as st:
                against = st.load_run(args.against)
        except StoreError as e:
            raise UsageError("--against %s: %s" % (args.against, e)) from None
    env = {}
    secret_file = getattr(args, "peer_secret_file", None)
    if secret_file:
        env[SECRET_ENV] = read_secret_file(secret_file, "--peer-secret-file")
    store = open_store(args)
    store.check_writable()
    if args.json:
        parent = os.path.dirname(os.path.abspath(args.json))
        if not os.access(parent, os.W_OK):
            raise UsageError("cannot write --json %s: directory not writable" % args.json)
    timeout = user_command.repetition_timeout(catalog, items, args.timeout)
    opts = plan.Options(runs=runs, label=text.shown(args.label), suite=suite, smoke=args.smoke,
                        timeout=timeout, env=env, progress=not args.quiet,
                        command=command_line(), until_ci=args.until_ci,
                        max_runs=args.max_runs, until_decided=args.until_decided,
                        against=against)
    # What this host lacks says nothing of a core run elsewhere (--core): it skips there.
    will_skip = [] if args.core else needs.skips(
        [(it.result_id, it.bench, plan.effective_params(catalog, it, v))
         for it in items for v in variants])
    skipping = frozenset(s.bench for s in will_skip)
    estimates = remembered(catalog, store, far=bool(args.core))
    print("osmeter: %d benchmark(s) x %s repetition(s)%s -> %s; about %s"
          % (len(items), "%d..%d (until +-%g%%)" % (runs, args.max_runs, args.until_ci)
             if args.until_ci else "%d..%d (until a %g%% slowdown can be told)" % (
                 runs, args.max_runs, args.until_decided) if args.until_decided else runs,
             " x %d variants" % len(variants) if len(variants) > 1 else "", store.location,
             display.fmt_duration(eta.first_estimate(estimates, items, runs, len(variants),
                                                     skipping))),
          file=sys.stderr)
    if will_skip:
        print("\n".join(needs.summary_lines(will_skip, display.terminal_width(sys.stderr))),
              file=sys.stderr)
    return catalog, items, variants, opts, store, skipping, estimates


def summarise(args, done, kept, store) -> int:
    """The runs measured and stored: their tables, --json files and --report."""
    failed = unwritten = 0
    width = display.terminal_width()
    for i, run in enumerate(done):
        print(display.run_header(run, width))
        print(display.results_table(run.results, condense_sweeps=True, width=width,
                                    run_ref=run.label or run.id))
        for line in adaptive.summary_lines(run) + adaptive.decided_lines(run):
            print(line)
        print()
        failed += sum(1 for r in run.results if r.status == "failed")
        if args.json:
            path = args.json
            if len(done) > 1:
                root, ext = os.path.splitext(args.json)
                path = "%s-%d%s" % (root, i + 1, ext or ".json")
            try:
                exchange.write_run_file(run, path)
            except writes.WriteError as e:     # the run itself is stored (or kept)
                unwritten += 1
                fail("%s (the results file of --json)" % e, 1)
            else:
                print("results file: %s" % path)
    if kept.stored:
        print("stored as run %s in %s" % (", ".join(kept.stored), store.location))
    timing = done[0].environment.get("timing") or {} if done else {}
    if timing.get("first_estimate_s") is not None and not kept.problems:
        print("measured for %s (estimated %s at the start)" % (
            display.fmt_duration(timing["measuring_s"]),
            display.fmt_duration(timing["first_estimate_s"])))
    if args.report:
        write_report(done, args.report)
    if kept.problems:
        return not_stored(kept, EXIT_NOT_STORED)
    if failed:
        print("osmeter: %d result(s) failed; see above" % failed, file=sys.stderr)
    return 1 if failed or unwritten else 0


def remembered(catalog: Catalog, store, far: bool = False) -> eta.Remembered:
    """What benchmarks took in the latest runs on the machine measured (this host, or
    with --core the one the core runs on), for the ETA (none when the store cannot say:
    the declared estimates then)."""
    host = socket.gethostname()
    if far:
        try:
            host = (coreproc.core_sysinfo().get("uname") or {}).get("nodename") or host
        except coreproc.CoreError:
            pass
    try:
        timings = store.recent_timings(host)
    except StoreError:
        timings = []
    return eta.Remembered(catalog, timings)


def not_stored(kept: safekeeping.SafeStore, code: int) -> int:
    """One line for each run the store did not take: why, and where it is kept."""
    for problem in kept.problems:
        fail(problem, code)
    return code


def check_adaptive(args, runs: int) -> None:
    """--until-ci / --until-decided and --max-repetitions belong together; the bound is the
    user's."""
    if args.until_ci is not None and args.until_decided is not None:
        raise UsageError("--until-ci and --until-decided exclude each other")
    if args.against and args.until_decided is None:
        raise UsageError("--against needs --until-decided PCT")
    option = "--until-ci" if args.until_ci is not None else "--until-decided"
    target = args.until_ci if args.until_ci is not None else args.until_decided
    if target is None:
        if args.max_runs is not None:
            raise UsageError("--max-repetitions needs --until-ci PCT or --until-decided PCT")
        return
    if not (math.isfinite(target) and target > 0):
        raise UsageError("%s must be a positive percentage" % option)
    if args.max_runs is None:
        raise UsageError("%s needs --max-repetitions N: the bound on repetitions is yours"
                         % option)
    first = adaptive.first_look() if args.until_ci is not None else 2
    least = max(runs, first)
    if args.max_runs < least:
        raise UsageError("--max-repetitions must be at least %d (%s%s)" % (
            least, "the first look at a 95%% interval that stays 95%% over later looks "
            "needs %d repetitions" % first if args.until_ci is not None
            else "a spread needs 2 repetitions", ", and --repetitions is %d" % runs
            if runs > first else ""))


def write_report(runs, path: str) -> None:
    """The HTML report of the runs just made (several variants are compared)."""
    from ..report import html
    try:
        html.write_runs(runs, path)
    except (CompareError, OSError, writes.WriteError) as e:
        raise UsageError("results stored, but the report could not be written: %s" % e)
    print("report: %s" % os.path.abspath(path))


def command_line() -> str:
    """The command as typed, recorded with the run."""
    return text.inert(" ".join(shlex.quote(a) for a in ["osmeter"] + sys.argv[1:]))
