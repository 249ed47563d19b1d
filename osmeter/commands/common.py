"""What the subcommands share: the one-line error, the store, finding a run."""
from __future__ import annotations

import os
import sys

from .. import exchange
from ..model import Run
from ..store import Store

EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A one-line problem with what the user typed."""


def fail(msg: str, code: int = 2) -> int:
    print("osmeter: error: %s" % msg, file=sys.stderr)
    return code


def open_store(args) -> Store:
    """The results store named by --db (default $OSMETER_DB or the user's data dir)."""
    return Store(args.db)


def load_run_ref(ref: str, db) -> Run:
    """A stored run (id, prefix, label, 'latest') or a path to an exported file."""
    if os.path.sep in ref or ref.endswith(".json"):
        if os.path.exists(ref):
            return exchange.read_run_file(ref)
    return Store(db).load_run(ref)


def load_runs(refs: list[str], baseline: str | None, db) -> tuple[list, int]:
    """The runs and the baseline's index; the baseline is added first when not among them."""
    runs = [load_run_ref(r, db) for r in refs]
    if baseline is None:
        return runs, 0
    base = load_run_ref(baseline, db)
    for i, r in enumerate(runs):
        if r.id == base.id:
            return runs, i
    return [base] + runs, 0
