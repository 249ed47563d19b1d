"""`osmeter delete RUN`: remove a stored run."""
from __future__ import annotations

from .common import open_store


def register(subparsers) -> None:
    s = subparsers.add_parser("delete", help="remove a stored run")
    s.add_argument("run")
    s.set_defaults(func=handle)


def handle(args) -> int:
    run_id = open_store(args).delete_run(args.run)
    print("deleted run %s" % run_id)
    return 0
