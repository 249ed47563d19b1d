"""What the subcommands share: the one-line error, the store, finding a run."""
from __future__ import annotations

import os
import sys

from .. import exchange, text
from ..model import Run
from ..store import Store

EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A one-line problem with what the user typed."""


def fail(msg: str, code: int = 2) -> int:
    print("osmeter: error: %s" % text.shown(msg), file=sys.stderr)
    return code


def open_store(args, readonly: bool = False) -> Store:
    """The results store named by --db (default $OSMETER_DB or the user's data dir);
    commands that only read open it read-only."""
    return Store(args.db, readonly=readonly)


def load_run_ref(ref: str, db) -> Run:
    """A stored run (id, prefix, label, 'latest') or a path to an exported file."""
    if os.path.sep in ref or ref.endswith(".json"):
        if os.path.exists(ref):
            return exchange.read_run_file(ref)
    return Store(db, readonly=True).load_run(ref)


SECRET_MAX_BYTES = 4096     # a shared secret is one line; /dev/zero is not one


def read_secret_file(path: str, option: str) -> str:
    """The shared secret in a file (its first SECRET_MAX_BYTES, stripped), or UsageError."""
    try:
        with open(path, "rb") as f:
            raw = f.read(SECRET_MAX_BYTES + 1)
    except OSError as e:
        raise UsageError("cannot read %s %s: %s" % (option, path, e.strerror or e)) from None
    if len(raw) > SECRET_MAX_BYTES:
        raise UsageError("%s %s is longer than %d bytes: a shared secret is one line"
                         % (option, path, SECRET_MAX_BYTES))
    try:
        secret = raw.decode("utf-8").strip()
    except UnicodeDecodeError as e:
        raise UsageError("%s %s is not UTF-8 text (byte %d)" % (option, path, e.start)) \
            from None
    if "\0" in secret:
        raise UsageError("%s %s contains a NUL byte" % (option, path))
    return secret


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
