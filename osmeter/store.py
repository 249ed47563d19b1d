"""Results in SQLite: every run, every result, every sample.

The schema lives here and only here (SCHEMA).  A run is written in one transaction,
so a reader never sees half a run and two runs writing at once are both stored (WAL
mode, a generous busy timeout).  A file that is not an osmeter database is refused,
never modified.
"""
from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from .model import SCHEMA_VERSION, Result, Run, Sample

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, label TEXT, started TEXT NOT NULL, finished TEXT,
    status TEXT NOT NULL, suite TEXT, smoke INTEGER NOT NULL, command TEXT,
    osmeter_version TEXT, sysinfo TEXT NOT NULL, environment TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    bench TEXT NOT NULL, metric TEXT NOT NULL, x REAL, x_name TEXT, unit TEXT NOT NULL,
    better TEXT NOT NULL, shape TEXT NOT NULL, params TEXT NOT NULL, status TEXT NOT NULL,
    reason TEXT, summary TEXT NOT NULL, warnings TEXT NOT NULL, notes TEXT NOT NULL,
    extra TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS samples (
    result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    rep INTEGER NOT NULL, x REAL, value REAL NOT NULL);
CREATE INDEX IF NOT EXISTS results_by_run ON results(run_id);
CREATE INDEX IF NOT EXISTS samples_by_result ON samples(result_id);
CREATE INDEX IF NOT EXISTS runs_by_label ON runs(label);
CREATE TABLE IF NOT EXISTS noise_profiles (
    name TEXT PRIMARY KEY, created TEXT NOT NULL, profile TEXT NOT NULL);
"""
# Added after schema 1 was published: created on first use in older databases (an
# additive table that older osmeter versions ignore, so no new schema version).
NOISE_TABLE = ("CREATE TABLE IF NOT EXISTS noise_profiles (name TEXT PRIMARY KEY, "
               "created TEXT NOT NULL, profile TEXT NOT NULL)")


class StoreError(Exception):
    """A one-line, user-facing problem with the results database."""


class AlreadyStored(StoreError):
    """save_run(replace=False) found a run of that id in the store."""


def default_db_path() -> Path:
    """$OSMETER_DB, else the user's data directory (XDG on Unix, ~/Library on macOS)."""
    if os.environ.get("OSMETER_DB"):
        return Path(os.environ["OSMETER_DB"])
    if os.uname().sysname == "Darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "osmeter" / "results.sqlite"


class Store:
    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path else default_db_path()
        self._check_file()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError("cannot create the directory for database %s: %s"
                             % (self.path, e.strerror or e)) from None
        try:
            self.db = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None)
            self.db.execute("PRAGMA busy_timeout = 60000")
            self.db.execute("PRAGMA foreign_keys = ON")
            self._init_schema()
        except sqlite3.DatabaseError as e:
            raise StoreError("%s is not a usable osmeter database (%s); move it aside or "
                             "choose another with --db" % (self.path, e)) from None

    def _check_file(self):
        """Refuse a file that exists but is not SQLite, before SQLite touches it."""
        if self.path.is_dir():
            raise StoreError("database path %s is a directory" % self.path)
        if self.path.exists() and self.path.stat().st_size > 0:
            try:
                with open(self.path, "rb") as f:
                    magic = f.read(16)
            except OSError as e:
                raise StoreError("cannot read database %s: %s" % (self.path, e.strerror))
            if magic != b"SQLite format 3\x00":
                raise StoreError("%s is not an SQLite database (corrupt or a different file); "
                                 "move it aside or choose another with --db" % self.path)
        elif not self.path.exists():
            parent = self.path.parent
            while not parent.exists() and parent != parent.parent:
                parent = parent.parent
            if not os.access(parent, os.W_OK | os.X_OK):
                raise StoreError("cannot create database %s: directory %s is not writable"
                                 % (self.path, parent))

    def _init_schema(self):
        tables = {r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and "meta" not in tables:
            raise StoreError("%s is an SQLite database but not an osmeter one; choose another "
                             "with --db" % self.path)
        if "meta" in tables:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise StoreError("%s was written by a newer osmeter (schema %d, this one reads "
                                 "%d); upgrade osmeter" % (self.path, version, SCHEMA_VERSION))
            return
        try:
            self.db.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:
            pass  # e.g. a network file system without shared memory: rollback journal is fine
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for stmt in SCHEMA.split(";"):
                if stmt.strip():
                    self.db.execute(stmt)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                            (str(SCHEMA_VERSION),))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def check_writable(self):
        """Fail now, not after a long run, if results could not be stored."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("ROLLBACK")
        except sqlite3.OperationalError as e:
            raise StoreError("cannot write to database %s: %s" % (self.path, e)) from None

    def close(self):
        self.db.close()

    # ---- writing -------------------------------------------------------------------

    def save_run(self, run: Run, replace: bool = True) -> None:
        """Insert (or replace) a whole run in one transaction.  With replace=False a run
        already stored raises AlreadyStored, checked inside the transaction: of two
        simultaneous imports of one run exactly one stores it."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                if not replace and self.db.execute("SELECT 1 FROM runs WHERE id = ?",
                                                   (run.id,)).fetchone():
                    raise AlreadyStored("run %s is already stored (use --replace to "
                                        "overwrite it)" % run.id)
                self.db.execute("DELETE FROM runs WHERE id = ?", (run.id,))
                self.db.execute(
                    "INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (run.id, run.label, run.started, run.finished, run.status, run.suite,
                     int(run.smoke), run.command, run.osmeter_version,
                     json.dumps(run.sysinfo), json.dumps(run.environment)))
                for r in run.results:
                    cur = self.db.execute(
                        "INSERT INTO results (run_id, bench, metric, x, x_name, unit, better, "
                        "shape, params, status, reason, summary, warnings, notes, extra) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (run.id, r.bench, r.metric, r.x, r.x_name, r.unit, r.better, r.shape,
                         json.dumps(r.params), r.status, r.reason, json.dumps(r.summary),
                         json.dumps(r.warnings), json.dumps(r.notes), json.dumps(r.extra)))
                    rid = cur.lastrowid
                    self.db.executemany("INSERT INTO samples VALUES (?,?,?,?)",
                                        ((rid, s.rep, s.x, s.value) for s in r.samples))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as e:
            raise StoreError("could not store run %s in %s: %s" % (run.id, self.path, e)) from None

    def save_noise(self, name: str, created: str, profile: dict) -> None:
        """Store (or replace) a between-run noise profile (osmeter.noise)."""
        try:
            self.db.execute(NOISE_TABLE)
            self.db.execute("INSERT OR REPLACE INTO noise_profiles VALUES (?,?,?)",
                            (name, created, json.dumps(profile)))
        except sqlite3.OperationalError as e:
            raise StoreError("could not store noise profile %s in %s: %s"
                             % (name, self.path, e)) from None

    def _has_noise_table(self) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                               "name='noise_profiles'").fetchone() is not None

    def load_noise(self, name: str) -> dict | None:
        if not self._has_noise_table():
            return None
        row = self.db.execute("SELECT profile FROM noise_profiles WHERE name = ?",
                              (name,)).fetchone()
        return json.loads(row[0]) if row else None

    def list_noise(self) -> list[dict]:
        if not self._has_noise_table():
            return []
        return [json.loads(p) for (p,) in self.db.execute(
            "SELECT profile FROM noise_profiles ORDER BY created, name")]

    def runs_labelled(self, label: str) -> list[str]:
        """Ids of every run with this label, oldest first."""
        return [r[0] for r in self.db.execute(
            "SELECT id FROM runs WHERE label = ? ORDER BY started, id", (label,))]

    def delete_run(self, ref: str) -> str:
        run_id = self.resolve(ref)
        self.db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        return run_id

    # ---- reading -------------------------------------------------------------------

    def list_runs(self) -> list[dict]:
        rows = self.db.execute(
            "SELECT r.id, r.label, r.started, r.finished, r.status, r.suite, r.smoke, "
            "r.sysinfo, (SELECT COUNT(*) FROM results WHERE run_id = r.id) "
            "FROM runs r ORDER BY r.started, r.id").fetchall()
        out = []
        for rid, label, started, finished, status, suite, smoke, sysinfo, n in rows:
            si = json.loads(sysinfo)
            out.append({"id": rid, "label": label, "started": started, "finished": finished,
                        "status": status, "suite": suite, "smoke": bool(smoke),
                        "host": si.get("hostname"),
                        "kernel": (si.get("kernel") or {}).get("release"), "results": n})
        return out

    def resolve(self, ref: str) -> str:
        """A run id, a unique id prefix, a label (latest run with it), or 'latest'."""
        if ref in ("latest", "last"):
            row = self.db.execute("SELECT id FROM runs ORDER BY started DESC, id DESC "
                                  "LIMIT 1").fetchone()
            if not row:
                raise StoreError("no runs stored in %s yet" % self.path)
            return row[0]
        row = self.db.execute("SELECT id FROM runs WHERE id = ?", (ref,)).fetchone()
        if row:
            return row[0]
        row = self.db.execute("SELECT id FROM runs WHERE label = ? ORDER BY started DESC, "
                              "id DESC LIMIT 1", (ref,)).fetchone()
        if row:
            return row[0]
        rows = self.db.execute("SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\'",
                               (ref.replace("%", "\\%").replace("_", "\\_") + "%",)).fetchall()
        if len(rows) == 1:
            return rows[0][0]
        if len(rows) > 1:
            raise StoreError("run '%s' is ambiguous: %s" % (ref, ", ".join(r[0] for r in rows)))
        raise StoreError("no run '%s' in %s (osmeter runs lists them)" % (ref, self.path))

    def load_run(self, ref: str) -> Run:
        run_id = self.resolve(ref)
        row = self.db.execute("SELECT id, label, started, finished, status, suite, smoke, "
                              "command, osmeter_version, sysinfo, environment FROM runs "
                              "WHERE id = ?", (run_id,)).fetchone()
        run = Run(id=row[0], label=row[1], started=row[2], finished=row[3], status=row[4],
                  suite=row[5], smoke=bool(row[6]), command=row[7] or "",
                  osmeter_version=row[8] or "", sysinfo=json.loads(row[9]),
                  environment=json.loads(row[10]))
        samples: dict[int, list[Sample]] = {}
        for rid, rep, x, value in self.db.execute(
                "SELECT s.result_id, s.rep, s.x, s.value FROM samples s JOIN results r "
                "ON r.id = s.result_id WHERE r.run_id = ? ORDER BY s.rowid", (run_id,)):
            samples.setdefault(rid, []).append(Sample(rep, x, value))
        for (rid, bench, metric, x, x_name, unit, better, shape, params, status, reason,
             summary, warnings, notes, extra) in self.db.execute(
                "SELECT id, bench, metric, x, x_name, unit, better, shape, params, status, "
                "reason, summary, warnings, notes, extra FROM results WHERE run_id = ? "
                "ORDER BY id", (run_id,)):
            run.results.append(Result(
                bench=bench, metric=metric, unit=unit, better=better, shape=shape, x=x,
                x_name=x_name, params=json.loads(params), status=status, reason=reason,
                samples=samples.get(rid, []), summary=json.loads(summary),
                warnings=json.loads(warnings), notes=json.loads(notes),
                extra=json.loads(extra)))
        return run
