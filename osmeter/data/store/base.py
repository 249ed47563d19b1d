"""The results store's one interface and the SQL both back-ends share.

`Store(location)` opens the back-end the location names: a postgresql:// URL opens
PostgreSQL (postgres.py), anything else is an SQLite file (sqlite.py).  Both keep the
same schema (schema.py, one version number) with the same meaning: a run is written in
one transaction, so a reader never sees half a run and writers on many hosts may store
runs at once; save_run(replace=False) refuses a run already stored, checked inside that
transaction; every sample is kept, in order, as the 64-bit float it was.  The commands
that only read open a store read-only, and a store with nothing in it yet reads as
empty.  Every error of the database becomes one StoreError line (`_errors`), worded by
the back-end (`_explain`).

A back-end supplies the primitives at the bottom of the class: running one statement,
a write transaction, inserting a result and its samples, the names of its tables and
columns, and what an error means.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import re
from pathlib import Path

from ...base import text
from ..model import SCHEMA_VERSION, Result, Run, Sample, system_keys
from . import schema

POSTGRES_SCHEMES = ("postgresql://", "postgres://")

# What an error means for the user; each back-end sorts its driver's errors into these.
DAMAGED, FULL, READ_ONLY, BUSY, UNREADABLE = ("damaged", "full", "read-only", "busy",
                                              "unreadable")


# flags.counted in SQL, on the stored JSON text (json.dumps' separators): a median that
# is a number, and not a phase too short to time alone (results.TOO_SHORT_KEY).
COUNTED_LIKE = ('%"median": %', '%"median": null%', '%"once_per_repetition_s"%')


class StoreError(Exception):
    """A one-line, user-facing problem with the results database."""


class AlreadyStored(StoreError):
    """save_run(replace=False) found a run of that id in the store."""


def default_location() -> str | Path:
    """$OSMETER_DB (a file or a postgresql:// URL), else the user's data directory (XDG on
    Unix, ~/Library on macOS)."""
    if os.environ.get("OSMETER_DB"):
        value = os.environ["OSMETER_DB"]
        return value if is_url(value) else Path(value)
    if os.uname().sysname == "Darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "osmeter" / "results.sqlite"


def is_url(location) -> bool:
    return isinstance(location, str) and re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", location) \
        is not None


def _backend(location) -> type:
    if is_url(location):
        if location.startswith(POSTGRES_SCHEMES):
            from .postgres import PostgresStore
            return PostgresStore
        raise StoreError("%s://...: osmeter stores results in an SQLite file (a path) or in "
                         "PostgreSQL (postgresql://user@host[:port]/database)"
                         % location.split("://")[0])
    from .sqlite import SQLiteStore
    return SQLiteStore


class Store:
    """The results database.  readonly=True (the commands that only read) never creates,
    migrates or writes anything, and a store that does not exist yet is an empty one."""

    location: str           # the store as it is named in messages (no password)
    keep_dir: str | None    # where a run the store refuses is kept (safekeeping.py)
    readonly: bool
    driver_error: type = Exception      # the back-end driver's base error class
    SAMPLE_ORDER = ""       # SQL ordering a run's samples as they were stored

    def __new__(cls, location=None, readonly: bool = False):
        if cls is Store:
            cls = _backend(location if location else default_location())
        return super().__new__(cls)

    # `with Store(...) as store:` closes it at the end (a connection that is only dropped
    # stays open until the garbage collector finds it).
    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- the schema, checked on every open -------------------------------------------

    def _init_schema(self) -> None:
        """Check an existing schema (version, tables, columns); make it in a store that
        has none, unless read-only: then the store reads as empty."""
        tables = self._tables()
        if tables and "meta" not in tables:
            raise self._foreign(tables)
        if "meta" not in tables:
            if self.readonly:
                self._become_empty()
            else:
                self._create_schema()
            return
        row = self._execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        try:
            version = int(row[0]) if row else 0
        except (TypeError, ValueError):
            raise self._damaged("its schema_version is %r, not a number" % (row[0],))
        if version > SCHEMA_VERSION:
            raise StoreError("%s was written by a newer osmeter (schema %d, this one reads "
                             "%d); upgrade osmeter" % (self.location, version, SCHEMA_VERSION))
        missing = [t for t in schema.TABLES if t not in tables]
        if missing:
            raise self._damaged("it has no '%s' table" % "', '".join(missing))
        for table, wanted in expected_columns().items():
            found = self._columns(table)
            lacking = [c for c in wanted if c not in found]
            if lacking:
                raise self._damaged("table '%s' has no column '%s'" % (table, lacking[0]))

    # ---- errors: every database error becomes one StoreError line here --------------

    def _damaged(self, what: str) -> StoreError:
        return StoreError("%s is not a usable osmeter database (%s); move it aside or choose "
                          "another with --db" % (self.location, what))

    @contextlib.contextmanager
    def _errors(self, doing: str):
        """Turn a database error while `doing` into one line: a damaged database is named
        as such; anything else (full, read-only, locked, refused, ...) says what."""
        try:
            yield
        except self.driver_error as e:
            if self._kind(e) == DAMAGED and doing == "open database":
                raise self._damaged(one_line(e)) from None
            raise StoreError("could not %s %s: %s" % (doing, self.location, self._explain(e))) \
                from None

    def _json(self, raw, run_id: str, column: str, want: type = dict):
        """A JSON column's value, checked: a damaged row is named, not a traceback."""
        try:
            value = json.loads(raw)
        except (TypeError, ValueError):
            value = None
        if not isinstance(value, want):
            raise StoreError("%s: run %s is damaged: its %s is not a JSON %s ('osmeter delete "
                             "%s' removes the run)" % (self.location, run_id, column,
                                                       "object" if want is dict else "list",
                                                       run_id))
        return value

    def check_writable(self) -> None:
        """Fail now, not after a long run, if results could not be stored."""
        with self._errors("write to database"):
            with self._write_transaction():     # writes nothing, but fails where it could not
                self._execute("UPDATE meta SET value = value WHERE 1 = 0")

    # ---- writing -------------------------------------------------------------------

    def save_run(self, run: Run, replace: bool = True) -> None:
        """Insert (or replace) a whole run in one transaction.  With replace=False a run
        already stored raises AlreadyStored, checked inside the transaction: of two
        simultaneous imports of one run exactly one stores it."""
        with self._errors("store run %s in" % run.id):
            with self._write_transaction(run.id):
                if not replace and self._execute("SELECT 1 FROM runs WHERE id = ?",
                                                 (run.id,)).fetchone():
                    raise AlreadyStored("run %s is already stored (use --replace to "
                                        "overwrite it)" % run.id)
                self._execute("DELETE FROM runs WHERE id = ?", (run.id,))
                self._execute(
                    "INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (run.id, run.label, run.started, run.finished, run.status, run.suite,
                     int(run.smoke), run.command, run.osmeter_version,
                     json.dumps(run.sysinfo), json.dumps(run.environment)))
                ids = [self._insert_result(
                    "INSERT INTO results (run_id, bench, metric, x, x_name, unit, better, "
                    "shape, params, status, reason, summary, warnings, notes, extra) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (run.id, r.bench, r.metric, r.x, r.x_name, r.unit, r.better, r.shape,
                     json.dumps(r.params), r.status, r.reason, json.dumps(r.summary),
                     json.dumps(r.warnings), json.dumps(r.notes), json.dumps(r.extra)))
                    for r in run.results]
                self._insert_samples([(rid, r.samples) for rid, r in zip(ids, run.results)])

    def save_noise(self, name: str, created: str, profile: dict) -> None:
        """Store (or replace) a between-run noise profile (osmeter.analysis.noise)."""
        with self._errors("store noise profile %s in" % name):
            with self._write_transaction("noise:" + name):
                self._execute(schema.NOISE_TABLE)
                self._execute("DELETE FROM noise_profiles WHERE name = ?", (name,))
                self._execute("INSERT INTO noise_profiles VALUES (?,?,?)",
                              (name, created, json.dumps(profile)))

    def delete_run(self, ref: str) -> str:
        run_id = self.resolve(ref)
        with self._errors("delete run %s from" % run_id):
            with self._write_transaction(run_id):
                self._execute("DELETE FROM runs WHERE id = ?", (run_id,))
        return run_id

    # ---- reading -------------------------------------------------------------------

    def load_noise(self, name: str) -> dict | None:
        with self._errors("read noise profile %s from" % name):
            if "noise_profiles" not in self._tables():
                return None
            row = self._execute("SELECT profile FROM noise_profiles WHERE name = ?",
                                (name,)).fetchone()
        return json.loads(row[0]) if row else None

    def list_noise(self) -> list[dict]:
        with self._errors("read the noise profiles in"):
            if "noise_profiles" not in self._tables():
                return []
            return [json.loads(p) for (p,) in self._execute(
                "SELECT profile FROM noise_profiles ORDER BY created, name").fetchall()]

    def runs_labelled(self, label: str) -> list[str]:
        """Ids of every run with this label, oldest first."""
        with self._errors("look up label '%s' in" % text.shown(label)):
            return [r[0] for r in self._execute(
                "SELECT id FROM runs WHERE label = ? ORDER BY started, id",
                (text.shown(label),)).fetchall()]

    def has_run(self, run_id: str) -> bool:
        with self._errors("look up run %s in" % run_id):
            return self._execute("SELECT 1 FROM runs WHERE id = ?",
                                 (run_id,)).fetchone() is not None

    def list_runs(self) -> list[dict]:
        """Every run, oldest first, as a dict of what describes it (id, label, started,
        finished, status, suite, smoke, host, kernel, os, arch, cpu, results, rows).
        `results` counts as flags.counted does (measured, with a row of its own), the
        number the count line and the report give; `rows` counts every stored row (the
        skipped, the failed and the phases too short to time alone too)."""
        with self._errors("read the runs in"):
            rows = self._execute(
                "SELECT r.id, r.label, r.started, r.finished, r.status, r.suite, r.smoke, "
                "r.sysinfo, (SELECT COUNT(*) FROM results WHERE run_id = r.id), "
                "(SELECT COUNT(*) FROM results WHERE run_id = r.id AND status = 'ok' "
                "AND summary LIKE ? AND summary NOT LIKE ? AND extra NOT LIKE ?) "
                "FROM runs r ORDER BY r.started, r.id", COUNTED_LIKE).fetchall()
        out = []
        for rid, label, started, finished, status, suite, smoke, sysinfo, n, counted in rows:
            si = self._json(sysinfo, rid, "runs.sysinfo")
            out.append(dict(id=rid, label=label, started=started, finished=finished,
                            status=status, suite=suite, smoke=bool(smoke),
                            results=int(counted), rows=int(n), **system_keys(si)))
        return out

    def recent_timings(self, host: str | None, limit: int = 10) -> list[dict]:
        """The newest runs' recorded timing on `host` (environment.timing, with the
        run's suite and smoke flag), newest first: what the ETA remembers."""
        with self._errors("read the runs' timing in"):
            rows = self._execute("SELECT id, sysinfo, environment, suite, smoke FROM runs "
                                 "ORDER BY started DESC, id DESC LIMIT ?",
                                 (4 * limit,)).fetchall()
        out = []
        for rid, sysinfo, environment, suite, smoke in rows:
            if system_keys(self._json(sysinfo, rid, "runs.sysinfo"))["host"] != host:
                continue
            timing = (self._json(environment, rid, "runs.environment") or {}).get("timing")
            if timing and timing.get("steps"):
                out.append(dict(timing, run=rid, suite=suite, smoke=bool(smoke)))
        return out[:limit]

    def resolve(self, ref: str) -> str:
        """A run id, a unique id prefix, a label (latest run with it), or 'latest'."""
        ref = text.shown(ref)   # names are stored as text: a label's odd bytes as \xNN
        with self._errors("look up run '%s' in" % ref):
            return self._resolve(ref)

    def _resolve(self, ref: str) -> str:
        if ref in ("latest", "last"):
            row = self._execute("SELECT id FROM runs ORDER BY started DESC, id DESC "
                                "LIMIT 1").fetchone()
            if not row:
                raise StoreError("no runs stored in %s yet" % self.location)
            return row[0]
        row = self._execute("SELECT id FROM runs WHERE id = ?", (ref,)).fetchone()
        if row:
            return row[0]
        row = self._execute("SELECT id FROM runs WHERE label = ? ORDER BY started DESC, "
                            "id DESC LIMIT 1", (ref,)).fetchone()
        if row:
            return row[0]
        rows = self._execute("SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\' ORDER BY id",
                             (ref.replace("\\", "\\\\").replace("%", "\\%")
                              .replace("_", "\\_") + "%",)).fetchall()
        if len(rows) == 1:
            return rows[0][0]
        if len(rows) > 1:
            raise StoreError("run '%s' is ambiguous: %s" % (ref, ", ".join(r[0] for r in rows)))
        raise StoreError("no run '%s' in %s (osmeter runs lists them)" % (ref, self.location))

    def load_run(self, ref: str) -> Run:
        run_id = self.resolve(ref)
        with self._errors("read run %s from" % run_id):
            return self._load_run(run_id)

    def _load_run(self, run_id: str) -> Run:
        row = self._execute("SELECT id, label, started, finished, status, suite, smoke, "
                            "command, osmeter_version, sysinfo, environment FROM runs "
                            "WHERE id = ?", (run_id,)).fetchone()
        if row is None:         # deleted since it was resolved
            raise StoreError("no run '%s' in %s (osmeter runs lists them)"
                             % (run_id, self.location))
        run = Run(id=row[0], label=row[1], started=row[2], finished=row[3], status=row[4],
                  suite=row[5], smoke=bool(row[6]), command=row[7] or "",
                  osmeter_version=row[8] or "",
                  sysinfo=self._json(row[9], run_id, "runs.sysinfo"),
                  environment=self._json(row[10], run_id, "runs.environment"))
        samples: dict[int, list[Sample]] = {}
        for rid, rep, x, value in self._sample_rows(run_id):
            samples.setdefault(rid, []).append(Sample(rep, x, value))
        for (rid, bench, metric, x, x_name, unit, better, shape, params, status, reason,
             summary, warnings, notes, extra) in self._execute(
                "SELECT id, bench, metric, x, x_name, unit, better, shape, params, status, "
                "reason, summary, warnings, notes, extra FROM results WHERE run_id = ? "
                "ORDER BY id", (run_id,)).fetchall():
            def column(name, raw, want=dict):
                return self._json(raw, run_id, "results.%s of %s" % (name, bench), want)
            run.results.append(Result(
                bench=bench, metric=metric, unit=unit, better=better, shape=shape, x=x,
                x_name=x_name, params=column("params", params), status=status, reason=reason,
                samples=samples.get(rid, []), summary=column("summary", summary),
                warnings=column("warnings", warnings, list), notes=column("notes", notes),
                extra=column("extra", extra)))
        return run

    def _sample_rows(self, run_id: str):
        """(result id, rep, x, value) of every sample of the run, in the order stored."""
        return self._execute(
            "SELECT s.result_id, s.rep, s.x, s.value FROM samples s JOIN results r "
            "ON r.id = s.result_id WHERE r.run_id = ? ORDER BY " + self.SAMPLE_ORDER,
            (run_id,)).fetchall()

    # ---- what a back-end supplies ----------------------------------------------------

    def close(self) -> None:
        raise NotImplementedError

    def _execute(self, sql: str, params: tuple = ()):
        """Run one statement (placeholders '?'); a cursor (fetchone, fetchall)."""
        raise NotImplementedError

    def _write_transaction(self, key: str | None = None):
        """A context manager: one transaction that writes, committed at the end, rolled
        back on any exception.  Writers of the same key (a run id) go one at a time."""
        raise NotImplementedError

    def _insert_result(self, sql: str, params: tuple) -> int:
        """Run an INSERT INTO results; the new row's id."""
        raise NotImplementedError

    def _insert_samples(self, per_result: list[tuple[int, list[Sample]]]) -> None:
        raise NotImplementedError

    def _tables(self) -> set[str]:
        """The names of the tables of the store that osmeter's schema might use."""
        raise NotImplementedError

    def _columns(self, table: str) -> list[str]:
        raise NotImplementedError

    def _create_schema(self) -> None:
        raise NotImplementedError

    def _become_empty(self) -> None:
        """A read-only store with no schema yet: answer as an empty store."""
        raise NotImplementedError

    def _foreign(self, tables: set[str]) -> StoreError:
        """The error for a database that holds tables, but not osmeter's."""
        raise NotImplementedError

    def _kind(self, e: Exception) -> str | None:
        """DAMAGED, FULL, READ_ONLY, BUSY, UNREADABLE or None for a driver error."""
        raise NotImplementedError

    def _explain(self, e: Exception) -> str:
        """Why, in one line: the real reason first, the driver's own words after it."""
        raise NotImplementedError


@functools.lru_cache(maxsize=None)
def expected_columns() -> dict[str, list[str]]:
    """table -> the columns every osmeter store has, from an empty SQLite store made from
    the schema (a back-end may have more, e.g. PostgreSQL's samples.pos)."""
    import sqlite3
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema.SQLITE)
        return {t: [row[1] for row in db.execute("PRAGMA table_info(%s)" % t)]
                for t in schema.TABLES}
    finally:
        db.close()


def one_line(e: Exception) -> str:
    """An error's words on one line (drivers' messages may span several)."""
    return " ".join(str(e).split())
