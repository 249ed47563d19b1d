"""`osmeter export RUN... [--where KEY=GLOB] [--format F] [-o FILE] [--redact]` and
`osmeter import FILE... [--skip-existing]`:
runs as osmeter's JSON results files (osmeter/data/exchange.py, docs/results-schema.md) or in
other tools' formats (osmeter/formats/, docs/formats.md)."""
from __future__ import annotations

import sys

from ..data import exchange, redact, writes
from ..formats import formats
from ..data.store import AlreadyStored
from .common import RunSource, UsageError, add_where, open_store


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "export", help="write a run in osmeter's JSON or another tool's format",
        description="Formats (docs/formats.md): " + "; ".join(
            "%s: %s" % (f.name, f.what) for f in formats().values()))
    s.add_argument("runs", nargs="*", metavar="RUN", help="run id, label, 'latest' or a "
                   "results file (several for --format long)")
    add_where(s)
    s.add_argument("--format", default="osmeter", choices=list(formats()),
                   help="default: osmeter")
    s.add_argument("-o", "--output", help="file (default: standard output)")
    s.add_argument("--redact", action="store_true", help="leave out what identifies the "
                   "machine and its users (host name, kernel command line, user names, "
                   "addresses) and say what was left out")
    s.set_defaults(func=handle_export)

    s = subparsers.add_parser("import", help="store runs from JSON results files (each is "
                              "checked completely before anything is stored)")
    s.add_argument("files", nargs="+", metavar="FILE")
    again = s.add_mutually_exclusive_group()
    again.add_argument("--replace", action="store_true", help="overwrite a run already stored")
    again.add_argument("--skip-existing", action="store_true", help="leave a run already "
                       "stored as it is and go on with the others (a batch run again, or "
                       "files collected from many hosts, adds only what is new)")
    s.set_defaults(func=handle_import)


def handle_export(args) -> int:
    fmt = formats()[args.format]
    if not args.runs and not args.where:
        raise UsageError("name the runs to export, or select them with --where KEY=GLOB")
    with RunSource(args.db) as source:
        runs = source.runs(args.runs, args.where)
    if len(runs) > 1 and not fmt.several_runs:
        raise UsageError("--format %s holds one run, and %d are named or selected; export "
                         "them one at a time (the long format holds several)"
                         % (fmt.name, len(runs)))
    for run in runs:        # a run stored by an older osmeter may hold what import refuses
        try:
            exchange.check_document(exchange.run_to_document(run))
        except exchange.ExchangeError as e:
            print("osmeter: warning: run %s does not follow the results schema, so osmeter "
                  "import will refuse its document: %s" % (run.id, e), file=sys.stderr)
    if args.redact:
        runs = redact.redact_all(runs)
        for run in runs:
            print("osmeter: run %s: --redact %s" % (run.id, redact.summary(run)),
                  file=sys.stderr)
    out = fmt.render(runs)
    for note in out.left_out:
        print("osmeter: not in the %s file: %s" % (fmt.name, note), file=sys.stderr)
    if out.entries == 0:
        raise UsageError("nothing to export: %s holds none of the results of %s"
                         % (fmt.name, ", ".join(r.id for r in runs)))
    if args.output in (None, "-"):
        sys.stdout.write(out.text)
    else:
        writes.write_file(args.output, out.text)
        print("exported %s as %s to %s" % (", ".join(r.id for r in runs), fmt.name,
                                           args.output), file=sys.stderr)
    return 0


def handle_import(args) -> int:
    runs = [exchange.read_run_file(f) for f in args.files]   # all valid, or nothing stored
    ids = [r.id for r in runs]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise UsageError("run %s is in more than one of the files" % ", ".join(twice))
    with open_store(args) as store:
        if not (args.replace or args.skip_existing):
            for run in runs:
                if store.has_run(run.id):
                    raise UsageError("run %s is already stored (use --replace to overwrite "
                                     "it, or --skip-existing to leave it)" % run.id)
        for run in runs:
            try:    # checked inside the transaction: another import may be quicker
                store.save_run(run, replace=args.replace)
            except AlreadyStored as e:
                if not args.skip_existing:
                    raise UsageError(str(e)) from None
                print("skipped run %s: already stored" % run.id)
                continue
            print("imported run %s%s" % (run.id, " (%s)" % run.label if run.label else ""))
    return 0
