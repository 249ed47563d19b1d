"""Command-line interface: argument parsing only; each command calls one function elsewhere.

Further commands are found in modules osmeter/cmd_*.py, each defining
`register(subparsers)` that adds its parser and `set_defaults(func=handler)`.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import sys

from . import __version__, core, display, exchange, fsinfo, runner, suitefile, sysinfo, usercmd
from .catalog import DEFAULT_SUITE, SUITES, Catalog, CatalogError
from .store import Store, StoreError, default_db_path

EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A one-line problem with what the user typed."""


def fail(msg: str, code: int = 2) -> int:
    print("osmeter: error: %s" % msg, file=sys.stderr)
    return code


# ---- list -------------------------------------------------------------------------

def cmd_list(args) -> int:
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
                          if p["name"] not in ("samples", "batch_ms"))
        rows.append([b["id"], ",".join(units), b["source"] or "", b["help"] or "",
                     params])
    print(display.table(rows, ["id", "unit", "from", "what it measures", "parameters"]))
    print("\n%d benchmarks. Suites: %s" % (len(rows), ", ".join(SUITES)))
    return 0


# ---- run --------------------------------------------------------------------------

def parse_param_overrides(catalog: Catalog, ids: list[str], specs: list[str]) -> dict:
    """--param id.key=value (id may be a glob) -> {bench_id: {key: value}}."""
    import fnmatch
    out: dict[str, dict] = {}
    for spec in specs:
        if "=" not in spec:
            raise UsageError("--param %s: expected ID.KEY=VALUE" % spec)
        lhs, value = spec.split("=", 1)
        if "." not in lhs:
            raise UsageError("--param %s: expected ID.KEY=VALUE" % spec)
        bench_pat, key = lhs.rsplit(".", 1)
        targets = [i for i in ids if i == bench_pat or fnmatch.fnmatchcase(i, bench_pat)]
        if not targets:
            raise UsageError("--param %s: no selected benchmark matches '%s'" % (spec, bench_pat))
        for t in targets:
            if not catalog.declares(t, key):
                names = ", ".join(p["name"] for p in catalog.by_id[t]["params"])
                raise UsageError("--param %s: %s has no parameter '%s' (it has: %s)"
                                 % (spec, t, key, names or "none"))
            out.setdefault(t, {})[key] = value
    return out


def build_plan(args, catalog: Catalog):
    if args.ids and args.suite:
        raise UsageError("give benchmark ids or --suite, not both")
    args.smoke = args.smoke or args.preset == "smoke"
    suite = None
    command_items = usercmd.plan_items(args)          # osmeter run cmd --name N -- COMMAND
    named = [i for i in args.ids if i != usercmd.CLI_WORD]
    file_items = []
    if args.suite_file:                                 # the benchmarks come from the file
        if named or args.suite:
            raise UsageError("--suite-file names its benchmarks itself; give no ids or --suite")
        loaded = suitefile.load(args.suite_file, catalog, smoke=args.smoke)
        file_items = loaded.items
        args.runs = args.runs if args.runs is not None else loaded.runs
        args.label = args.label or loaded.label
        ids, preset = [], "default"
    elif named:
        ids = catalog.select(named)
        preset = "default"
    elif command_items:
        ids, preset = [], "default"
    else:
        suite = args.suite or DEFAULT_SUITE
        ids = catalog.suite(suite)
        preset = SUITES[suite][1]
    if args.preset:
        preset = args.preset
    if args.smoke:
        preset = "smoke"
    overrides = parse_param_overrides(catalog, ids, args.param or [])
    items = [runner.PlanItem(bench=i, params=overrides.get(i, {}), preset=preset) for i in ids]
    items += file_items + command_items

    variants = [runner.Variant()]
    if args.dir:
        variants = []
        for d in args.dir:
            problem = fsinfo.check_dir(d)
            if problem:
                raise UsageError(problem)
            path = os.path.abspath(d)
            variants.append(runner.Variant(name="dir=" + path, params={"dir": path},
                                           facts={"dir": path,
                                                  "filesystem": fsinfo.describe(path)}))
        if not any(catalog.declares(i, "dir") for i in ids):
            raise UsageError("--dir given, but none of the selected benchmarks uses a directory")
    if args.peer:
        if not any(catalog.declares(i, "peer") for i in ids):
            raise UsageError("--peer given, but none of the selected benchmarks uses a peer")
        for v in variants:
            v.params["peer"] = args.peer
            v.facts["peer"] = args.peer
    return suite, items, variants


def cmd_run(args) -> int:
    catalog = Catalog()
    suite, items, variants = build_plan(args, catalog)
    runner.validate(catalog, items, variants)
    runs = args.runs if args.runs is not None else (2 if args.smoke else 5)
    if runs < 1:
        raise UsageError("--runs must be at least 1")
    store = Store(args.db)
    store.check_writable()
    if args.json:
        parent = os.path.dirname(os.path.abspath(args.json))
        if not os.access(parent, os.W_OK):
            raise UsageError("cannot write --json %s: directory not writable" % args.json)
    env = {}
    secret_file = getattr(args, "peer_secret_file", None)
    if secret_file:
        try:
            with open(secret_file) as f:
                env["OSMETER_PEER_SECRET"] = f.read().strip()
        except OSError as e:
            raise UsageError("cannot read --peer-secret-file %s: %s" % (secret_file, e.strerror))
    timeout = usercmd.repetition_timeout(catalog, items, args.timeout)
    opts = runner.Options(runs=runs, label=args.label, suite=suite, smoke=args.smoke,
                          timeout=timeout, env=env, progress=not args.quiet,
                          command=runner.command_line())
    print("osmeter: %d benchmark(s) x %d repetition(s)%s -> %s"
          % (len(items), runs, " x %d variants" % len(variants) if len(variants) > 1 else "",
             store.path), file=sys.stderr)
    try:
        done = runner.execute(catalog, items, variants, opts, store=store)
    except runner.Interrupted:
        print("osmeter: interrupted; what was measured is stored as an interrupted run "
              "(osmeter runs)", file=sys.stderr)
        return EXIT_INTERRUPTED
    failed = 0
    for i, run in enumerate(done):
        print(display.run_header(run))
        print(display.results_table(run.results, condense_sweeps=True))
        print()
        failed += sum(1 for r in run.results if r.status == "failed")
        if args.json:
            path = args.json
            if len(done) > 1:
                root, ext = os.path.splitext(args.json)
                path = "%s-%d%s" % (root, i + 1, ext or ".json")
            exchange.write_run_file(run, path)
            print("results file: %s" % path)
    names = ", ".join(r.id for r in done)
    print("stored as run %s in %s" % (names, store.path))
    if args.report:
        write_report(done, args.report)
    if failed:
        print("osmeter: %d result(s) failed; see above" % failed, file=sys.stderr)
        return 1
    return 0


def write_report(runs, path: str) -> None:
    """The HTML report of the runs just made (several variants are compared)."""
    from . import compare
    from .report import html
    try:
        html.write(compare.compare(runs), path, False, None, "osmeter report")
    except (compare.CompareError, OSError) as e:
        raise UsageError("results stored, but the report could not be written: %s" % e)
    print("report: %s" % os.path.abspath(path))


# ---- runs, show, export, import, delete ---------------------------------------------

def load_run_ref(ref: str, db) -> "exchange.Run":
    """A stored run (id, prefix, label, 'latest') or a path to an exported file."""
    if os.path.sep in ref or ref.endswith(".json"):
        if os.path.exists(ref):
            return exchange.read_run_file(ref)
    return Store(db).load_run(ref)


def cmd_runs(args) -> int:
    runs = Store(args.db).list_runs()
    if args.json:
        json.dump(runs, sys.stdout, indent=1)
        print()
        return 0
    if not runs:
        print("no runs stored in %s" % Store(args.db).path)
        return 0
    rows = [[r["id"], r["label"] or "", r["started"], r["status"] + (" smoke" if r["smoke"] else ""),
             r["suite"] or "custom", r["host"] or "", r["kernel"] or "", str(r["results"])]
            for r in runs]
    print(display.table(rows, ["id", "label", "started", "status", "suite", "host", "kernel",
                               "results"], right={7}))
    return 0


def cmd_show(args) -> int:
    run = load_run_ref(args.run or "latest", args.db)
    if args.json:
        json.dump(exchange.run_to_document(run), sys.stdout, indent=1)
        print()
        return 0
    print(display.run_header(run))
    print(display.results_table(run.results, condense_sweeps=False))
    return 0


def cmd_export(args) -> int:
    from . import formats, redact
    fmt = formats.formats()[args.format]
    if len(args.runs) > 1 and not fmt.several_runs:
        raise UsageError("--format %s holds one run; export them one at a time (the long "
                         "format holds several)" % fmt.name)
    runs = [load_run_ref(ref, args.db) for ref in args.runs]
    if args.redact:
        runs = [redact.redact(run) for run in runs]
        for run in runs:
            print("osmeter: run %s: --redact %s" % (run.id, redact.summary(run)),
                  file=sys.stderr)
    for run in runs:        # a run stored by an older osmeter may hold what import refuses
        try:
            exchange.check_document(exchange.run_to_document(run))
        except exchange.ExchangeError as e:
            print("osmeter: warning: run %s does not follow the results schema, so osmeter "
                  "import will refuse its document: %s" % (run.id, e), file=sys.stderr)
    out = fmt.render(runs)
    for note in out.left_out:
        print("osmeter: not in the %s file: %s" % (fmt.name, note), file=sys.stderr)
    if out.entries == 0:
        raise UsageError("nothing to export: %s holds none of the results of %s"
                         % (fmt.name, ", ".join(r.id for r in runs)))
    if args.output in (None, "-"):
        sys.stdout.write(out.text)
    else:
        exchange.write_atomically(args.output, out.text)
        print("exported %s as %s to %s" % (", ".join(r.id for r in runs), fmt.name,
                                           args.output), file=sys.stderr)
    return 0


def cmd_import(args) -> int:
    from .store import AlreadyStored
    runs = [exchange.read_run_file(f) for f in args.files]   # all valid, or nothing stored
    ids = [r.id for r in runs]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise UsageError("run %s is in more than one of the files" % ", ".join(twice))
    store = Store(args.db)
    known = {r["id"] for r in store.list_runs()}
    for run in runs:
        if run.id in known and not args.replace:
            raise UsageError("run %s is already stored (use --replace to overwrite it)" % run.id)
    for run in runs:
        try:        # checked again inside the transaction: another import may be quicker
            store.save_run(run, replace=args.replace)
        except AlreadyStored as e:
            raise UsageError(str(e)) from None
        print("imported run %s%s" % (run.id, " (%s)" % run.label if run.label else ""))
    return 0


def cmd_delete(args) -> int:
    run_id = Store(args.db).delete_run(args.run)
    print("deleted run %s" % run_id)
    return 0


def cmd_sysinfo(args) -> int:
    try:
        build = core.core_version()
    except core.CoreError:
        build = None
    info = sysinfo.collect(build)
    if args.json:
        json.dump(info, sys.stdout, indent=1)
        print()
        return 0
    def walk(prefix, obj):
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk("%s.%s" % (prefix, k) if prefix else k, v)
        else:
            print("%-40s %s" % (prefix, obj))
    walk("", info)
    return 0


# ---- parser -----------------------------------------------------------------------

def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="osmeter", description="Portable operating-system "
                                "benchmarks, after the classic OS comparison studies.")
    p.add_argument("--version", action="version", version="osmeter " + __version__)
    p.add_argument("--db", default=None, help="results database (default $OSMETER_DB or %s)"
                   % default_db_path())
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("list", help="show every benchmark")
    s.add_argument("--suite", choices=list(SUITES))
    s.add_argument("--json", action="store_true", help="machine-readable")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("run", help="run benchmarks and store the results")
    s.add_argument("ids", nargs="*", metavar="ID", help="benchmark ids, globs ('ctx.*') or "
                   "family prefixes ('syscall'); default: --suite %s" % DEFAULT_SUITE)
    s.add_argument("--suite", choices=list(SUITES), help="; ".join(
        "%s: %s" % (k, v[0]) for k, v in SUITES.items()))
    s.add_argument("--param", action="append", metavar="ID.KEY=VALUE",
                   help="override a parameter (ID may be a glob)")
    s.add_argument("--runs", type=int, help="repetitions, each in a separate process "
                   "(default 5; 2 with --smoke)")
    s.add_argument("--label", help="name this run (usable wherever a run is named)")
    s.add_argument("--json", metavar="FILE", help="also write the results file")
    s.add_argument("--report", metavar="FILE", help="also write the HTML report of this run")
    s.add_argument("--smoke", action="store_true", help="smallest sizes, to check that "
                   "everything works (never compared with real runs)")
    s.add_argument("--preset", choices=["default", "quick", "smoke"],
                   help="parameter sizes: default = the studies' (for named ids and study "
                   "suites), quick = the quick suite's, smoke = --smoke")
    s.add_argument("--dir", action="append", metavar="PATH", help="directory for file-system "
                   "benchmarks; repeat to compare several (one run each, interleaved)")
    s.add_argument("--peer", metavar="HOST[:PORT]", help="run network benchmarks against "
                   "'osmeter serve' on another host")
    s.add_argument("--peer-secret-file", metavar="FILE", help="the peer's shared secret "
                   "(default: $OSMETER_PEER_SECRET)")
    s.add_argument("--timeout", type=float, default=900.0,
                   help="seconds one repetition may take before it is killed (default 900)")
    s.add_argument("--quiet", action="store_true", help="no progress display")
    s.add_argument("--suite-file", metavar="FILE", help="run the benchmarks and commands "
                   "named in a TOML suite file (docs/suite-files.md)")
    usercmd.add_arguments(s)
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("runs", help="list stored runs")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_runs)

    s = sub.add_parser("show", help="print a stored run (default: the latest)")
    s.add_argument("run", nargs="?", help="run id, label, 'latest', or a results file")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_show)

    from .formats import formats
    s = sub.add_parser("export", help="write a run in osmeter's JSON or another tool's "
                       "format", description="Formats (docs/formats.md): " + "; ".join(
                           "%s: %s" % (f.name, f.what) for f in formats().values()))
    s.add_argument("runs", nargs="+", metavar="RUN", help="run id, label, 'latest' or a "
                   "results file (several for --format long)")
    s.add_argument("--format", default="osmeter", choices=list(formats()),
                   help="default: osmeter")
    s.add_argument("-o", "--output", help="file (default: standard output)")
    s.add_argument("--redact", action="store_true", help="leave out what identifies the "
                   "machine and its users (host name, kernel command line, user names, "
                   "addresses) and say what was left out")
    s.set_defaults(func=cmd_export)

    s = sub.add_parser("import", help="store runs from JSON results files (each is checked "
                       "completely before anything is stored)")
    s.add_argument("files", nargs="+", metavar="FILE")
    s.add_argument("--replace", action="store_true", help="overwrite a run already stored")
    s.set_defaults(func=cmd_import)

    s = sub.add_parser("delete", help="remove a stored run")
    s.add_argument("run")
    s.set_defaults(func=cmd_delete)

    s = sub.add_parser("sysinfo", help="describe this system (recorded with every run)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_sysinfo)

    import osmeter
    for mod in sorted(m.name for m in pkgutil.iter_modules(osmeter.__path__)):
        if mod.startswith("cmd_"):
            importlib.import_module("osmeter." + mod).register(sub)
    return p


def main(argv=None) -> int:
    parser = make_parser()
    argv, user_command = usercmd.split_argv(sys.argv[1:] if argv is None else list(argv))
    args = parser.parse_args(argv)
    args.user_command = user_command
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (UsageError, CatalogError, StoreError, exchange.ExchangeError, core.CoreError) as e:
        return fail(str(e))
    except KeyboardInterrupt:
        return fail("interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
