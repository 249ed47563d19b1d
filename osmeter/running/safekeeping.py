"""A measured run is never lost: when the store cannot take it (a full disk, a damaged
database, an unreachable server, ...), it is written as a results file in exchange.py's
format beside the store (an SQLite file), else in the current directory, else in
$TMPDIR, and the one-line message says where and why; `osmeter import FILE` stores it
later.
"""
from __future__ import annotations

import os
import signal
import tempfile

from ..data import exchange, writes
from ..data.model import Run
from ..data.store import Store, StoreError


class Terminated(Exception):
    """SIGTERM, Ctrl-C or a hang-up while a run waited to be stored."""


STOPPED = {signal.SIGTERM: "terminated (SIGTERM)", signal.SIGINT: "interrupted (SIGINT)",
           signal.SIGHUP: "hung up (SIGHUP)"}


class SafeStore:
    """The store as the runner uses it (save_run), keeping in a file what the store
    refuses.  Afterwards `stored` lists the runs stored and `problems` one line per run
    that was not (where it is kept, or why it could not be).

    While the runner finalises and stores its runs, on_signal handles SIGTERM, Ctrl-C
    and a hang-up: a run waiting for the store (another writer holds it) stops waiting
    and is kept as a file, and so is every run after it, at once; SIGTERM asks to stop
    soon, and a SIGKILL may follow; Ctrl-C asks no less."""

    def __init__(self, store: Store):
        self.store = store
        self.location = store.location
        self.stored: list[str] = []
        self.problems: list[str] = []
        self.terminated = None      # what stopped the storing, in words
        self._waiting = False

    def on_signal(self, signum, frame) -> None:
        self.terminated = self.terminated or STOPPED.get(signum, "stopped (%d)" % signum)
        if self._waiting:
            self._waiting = False
            raise Terminated()

    def save_run(self, run: Run) -> None:
        saved = False
        try:
            if self.terminated:
                raise Terminated()
            self._waiting = True
            self.store.save_run(run)
            saved = True
            self._waiting = False
        except Terminated:
            self._waiting = False
            if saved or self._has(run.id):  # the signal came just after the commit
                self.stored.append(run.id)
            else:
                self.problems.append(keep(run, "%s before run %s was stored in %s"
                                          % (self.terminated, run.id, self.location),
                                          self.store.keep_dir))
        except StoreError as e:
            self._waiting = False
            self.problems.append(keep(run, str(e), self.store.keep_dir))
        except Exception as e:   # unforeseen (a bug): still, the measurements are kept
            self._waiting = False
            self.problems.append(keep(run, "could not store run %s in %s (%s: %s)" % (
                run.id, self.location, type(e).__name__, e), self.store.keep_dir))
        else:
            self.stored.append(run.id)

    def _has(self, run_id: str) -> bool:
        try:
            return self.store.has_run(run_id)
        except Exception:       # cannot tell: keeping a copy loses nothing
            return False


def keep(run: Run, why: str, beside: str | None) -> str:
    """Write the run as a results file in the first place that takes it; the one line
    that tells the user why it was not stored and where it is."""
    name = "osmeter-run-%s.json" % run.id
    refused = []
    for directory in _places(beside):
        path = os.path.join(directory, name)
        try:
            exchange.write_run_file(run, path)
        except writes.WriteError as e:
            refused.append(str(e))
            continue
        return "%s; the run is kept in %s ('osmeter import %s' stores it)" % (why, path, path)
    return "%s; and it could not be written to a file either (%s): the run is lost" \
        % (why, "; ".join(refused))


def _places(beside: str | None) -> list[str]:
    """Beside the store (an SQLite file's directory), the current directory, $TMPDIR:
    each once, in that order."""
    places = [beside] if beside else []
    try:
        places.append(os.getcwd())
    except OSError:
        pass    # the current directory was removed
    places.append(tempfile.gettempdir())
    return [d for i, d in enumerate(places) if d not in places[:i]]
