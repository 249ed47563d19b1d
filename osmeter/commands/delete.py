"""`osmeter delete RUN... [--where KEY=GLOB] [--yes]`: remove stored runs."""
from __future__ import annotations

from .common import RunSource, UsageError, add_where, open_store


def register(subparsers) -> None:
    s = subparsers.add_parser("delete", help="remove stored runs")
    s.add_argument("runs", nargs="*", metavar="RUN", help="run id, label or 'latest'")
    add_where(s)
    s.add_argument("--yes", action="store_true", help="delete every run --where selects "
                   "(without it, the selection is only listed and nothing is deleted)")
    s.set_defaults(func=handle)


def handle(args) -> int:
    if not args.runs and not args.where:
        raise UsageError("name the runs to delete, or select them with --where KEY=GLOB")
    with RunSource(args.db) as source:
        ids = [source.store.resolve(ref) for ref in args.runs]
        selected = source.selected_ids(args.where) if args.where else []
    if selected and not args.yes:
        raise UsageError("nothing deleted: --where selects %d run%s (%s%s); add --yes to "
                         "delete %s" % (len(selected), "" if len(selected) == 1 else "s",
                                        ", ".join(selected[:10]),
                                        ", ..." if len(selected) > 10 else "",
                                        "it" if len(selected) == 1 else "them all"))
    with open_store(args) as store:
        for run_id in dict.fromkeys(ids + selected):
            print("deleted run %s" % store.delete_run(run_id))
    return 0
