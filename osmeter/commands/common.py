"""What the subcommands share: the one-line error, the store, finding a run."""
from __future__ import annotations

import os
import sys

from ..data import exchange, selection
from ..base import text
from ..analysis import fleet, noise
from ..data.model import Run
from ..data.store import Store

EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A one-line problem with what the user typed."""


def fail(msg: str, code: int = 2) -> int:
    print("osmeter: error: %s" % printable(msg), file=sys.stderr)
    return code


# Control characters (terminal escapes, newlines) and bidirectional overrides.
def printable(msg: str) -> str:
    """msg as one line that cannot move the cursor or recolour the terminal: what the
    user typed is echoed with its escapes written \\xNN (and bytes that are not UTF-8
    too, as text.shown writes them)."""
    return text.inert(msg)


def write_page(path: str, write) -> None:
    """write() of an -o option's page to path: an unwritable path is one line, and a
    written one is said on stderr."""
    try:
        write()
    except OSError as e:
        raise UsageError("cannot write %s: %s" % (path, e.strerror or e)) from None
    print("wrote %s" % path, file=sys.stderr)


def open_store(args, readonly: bool = False) -> Store:
    """The results store named by --db (default $OSMETER_DB or the user's data dir);
    commands that only read open it read-only."""
    return Store(args.db, readonly=readonly)


def add_where(parser) -> None:
    """--where KEY=GLOB (repeatable): the runs a command takes, selected by what they are."""
    parser.add_argument("--where", action="append", metavar="KEY=GLOB", help=selection.HELP)


class RunSource:
    """Runs as the user names them: stored runs (id, prefix, label, 'latest'), exported
    results files, and --where selections; the store is opened once, read-only, when
    first needed."""

    def __init__(self, db):
        self.db = db
        self._store = None

    def __enter__(self) -> "RunSource":
        return self

    def __exit__(self, *exc) -> None:
        if self._store is not None:
            self._store.close()

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store(self.db, readonly=True)
        return self._store

    def load(self, ref: str) -> Run:
        """A stored run or a path to an exported file."""
        if not ref.strip():
            raise UsageError("an empty name names no run (a run id, a label, 'latest' or "
                             "a results file)")
        if os.path.sep in ref or ref.endswith(".json"):
            if os.path.exists(ref):
                return exchange.read_run_file(ref)
        return self.store.load_run(ref)

    def selected_ids(self, where: list[str] | None) -> list[str]:
        """The ids of the stored runs --where selects, oldest first; one line if none."""
        chosen = selection.parse(where)
        ids = [r["id"] for r in chosen.runs(self.store)]
        if not ids:
            raise selection.SelectionError("no run in %s matches %s (osmeter runs lists them)"
                                           % (self.store.location, chosen))
        return ids

    def baseline(self, word: str) -> Run:
        """--baseline: a run's name, or conditions ('host=ref1,kernel=6.1*') of which the
        latest matching run is the baseline."""
        if not selection.is_condition(word):
            return self.load(word)
        chosen = selection.parse_baseline(word)
        matching = chosen.runs(self.store)
        if not matching:
            raise selection.SelectionError("no run in %s matches the baseline %s"
                                           % (self.store.location, chosen))
        if len(matching) > 1:
            print("osmeter: baseline %s: run %s, the latest of the %d runs it matches"
                  % (chosen, matching[-1]["id"], len(matching)), file=sys.stderr)
        return self.store.load_run(matching[-1]["id"])

    def runs(self, refs: list[str], where: list[str] | None = None) -> list[Run]:
        """The runs named, then those --where selects (each run once, in that order)."""
        names = list(refs) + (self.selected_ids(where) if where else [])
        runs, seen = [], set()
        for name in names:
            run = self.load(name)
            if run.id not in seen:
                seen.add(run.id)
                runs.append(run)
        return runs


def load_run_ref(ref: str, db) -> Run:
    """A stored run (id, prefix, label, 'latest') or a path to an exported file."""
    with RunSource(db) as source:
        return source.load(ref)


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


def load_runs(refs: list[str], baseline: str | None, db,
              where: list[str] | None = None) -> tuple[list, int]:
    """The runs (named, then selected by --where) and the baseline's index; the baseline
    (a name or conditions) is added first when not among them."""
    with RunSource(db) as source:
        runs = source.runs(refs, where)
        if baseline is None:
            return runs, 0
        base = source.baseline(baseline)
    for i, r in enumerate(runs):
        if r.id == base.id:
            return runs, i
    return [base] + runs, 0


def add_fleet_options(s) -> None:
    """--by and --bench, for the fleet table and the fleet report."""
    s.add_argument("--by", metavar="KEY", help="group the runs by a recorded key: %s, or a "
                   "dotted path into 'osmeter sysinfo --json' (e.g. libc.version)"
                   % ", ".join(fleet.GROUP_KEYS))
    s.add_argument("--bench", action="append", metavar="GLOB", help="only these benchmarks "
                   "(ids or globs, repeatable); naming them also shows a sweep's sizes")


def add_noise_options(s) -> None:
    """--noise and --no-history, for every command that compares runs."""
    s.add_argument("--noise", metavar="NAME|FILE", help="between-run noise profile "
                   "(osmeter noise) to include in intervals, verdicts, indices and the gate; "
                   "without it, runs of one host learn it from the store's other runs of "
                   "that host (%d or more)" % noise.HISTORY_MIN_RUNS)
    s.add_argument("--no-history", action="store_true", help="do not learn between-run "
                   "noise from the store's history: the verdicts are about these runs")


def noise_profile(args, runs: list):
    """The profile --noise names, else one learned from the store's history of the runs'
    host (None with --no-history, for one run, or without enough history).  Raises
    UsageError for both options at once, NoiseError for a profile that cannot be read."""
    if args.noise and args.no_history:
        raise UsageError("--no-history and --noise exclude each other")
    profile = noise.load(args.noise, args.db) if args.noise else None
    if profile is None and not args.no_history and len(runs) > 1:
        short: list[str] = []
        profile = noise.from_history(runs, args.db, short)
        for line in short:
            print("osmeter: %s" % printable(line), file=sys.stderr)
    return profile


def subcommands(parser) -> dict:
    """{name: parser} of the command line's commands (help and completion read them)."""
    import argparse
    return next(a for a in parser._actions
                if isinstance(a, argparse._SubParsersAction)).choices
