"""Results in SQLite: every run, every result, every sample.

The schema lives here and only here (SCHEMA).  A run is written in one transaction,
so a reader never sees half a run and two runs writing at once are both stored (WAL
mode, a generous busy timeout).  A file that is not an osmeter database is refused,
never modified.  The commands that only read open the store read-only (no schema is
made, nothing is written), so a database on a read-only or full file system still
answers them.  Every SQLite error becomes one StoreError line that says what it was: a
damaged database (move it aside) is told apart from a full disk, a read-only file
system, a file size limit or a lock (Store._errors).
"""
from __future__ import annotations

import contextlib
import json
import os
import resource
import sqlite3
from pathlib import Path
from urllib.parse import quote

from . import text
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


TABLES = ("meta", "runs", "results", "samples")
FULL_BYTES = 1 << 20    # less free space than this, and a write that failed found it full

# What an SQLite error means for the user, from its primary result code (Python >= 3.11
# gives it) or else its message: the database is damaged, the disk is full, ...
_DAMAGED, _FULL, _READ_ONLY, _BUSY, _UNREADABLE = ("damaged", "full", "read-only", "busy",
                                                   "unreadable")
_KIND_BY_CODE = {11: _DAMAGED, 26: _DAMAGED, 13: _FULL, 8: _READ_ONLY, 5: _BUSY, 6: _BUSY,
                 10: _UNREADABLE, 14: _UNREADABLE, 3: _UNREADABLE, 23: _UNREADABLE}
_KIND_BY_WORDS = (("malformed", _DAMAGED), ("not a database", _DAMAGED),
                  ("no such table", _DAMAGED), ("no such column", _DAMAGED),
                  ("disk is full", _FULL), ("readonly", _READ_ONLY), ("read-only", _READ_ONLY),
                  ("locked", _BUSY), ("busy", _BUSY), ("disk i/o error", _UNREADABLE),
                  ("unable to open", _UNREADABLE), ("authorization", _UNREADABLE))


def error_kind(e: sqlite3.Error) -> str | None:
    """damaged | full | read-only | busy | unreadable, or None (anything else)."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None and (code & 0xff) in _KIND_BY_CODE:
        return _KIND_BY_CODE[code & 0xff]
    words = str(e).lower()
    return next((kind for w, kind in _KIND_BY_WORDS if w in words), None)


def _reference() -> sqlite3.Connection:
    """An empty store in memory, made from SCHEMA: what an osmeter database has."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.executescript(SCHEMA)
    return db


def _columns(db: sqlite3.Connection) -> dict[str, list[str]]:
    """table -> its columns, for every table of TABLES."""
    return {t: [row[1] for row in db.execute("PRAGMA table_info(%s)" % t)] for t in TABLES}


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
    """The results database.  readonly=True (the commands that only read) never creates,
    migrates or writes anything: a database on a read-only or full file system still
    answers, and a missing one is an empty store."""

    def __init__(self, path: str | os.PathLike | None = None, readonly: bool = False):
        self.path = Path(path) if path else default_db_path()
        self.readonly = readonly
        exists = self._check_file()
        if readonly and not exists:     # nothing stored yet: an empty store, in memory
            self.db = _reference()
            return
        if not readonly:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError("cannot create the directory for database %s: %s"
                                 % (self.path, e.strerror or e)) from None
        with self._errors("open database"):
            if readonly:
                self.db = self._connect_read_only()
            else:
                self.db = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None)
                self.db.execute("PRAGMA busy_timeout = 60000")
                self.db.execute("PRAGMA foreign_keys = ON")
            self._init_schema()

    def _check_file(self) -> bool:
        """Refuse a file that exists but is not SQLite, before SQLite touches it; whether
        the file exists."""
        try:
            if self.path.is_dir():
                raise StoreError("database path %s is a directory" % self.path)
            exists = self.path.exists()
            if exists and self.path.stat().st_size > 0:
                with open(self.path, "rb") as f:
                    magic = f.read(16)
                if magic != b"SQLite format 3\x00":
                    raise StoreError("%s is not an SQLite database (corrupt or a different "
                                     "file); move it aside or choose another with --db"
                                     % self.path)
        except OSError as e:
            raise StoreError("cannot read database %s: %s" % (self.path, e.strerror or e)) \
                from None
        if not exists and not self.readonly:
            parent = self.path.parent
            while not parent.exists() and parent != parent.parent:
                parent = parent.parent
            if not os.access(parent, os.W_OK | os.X_OK):
                raise StoreError("cannot create database %s: directory %s is not writable"
                                 % (self.path, parent))
        return exists

    def _connect_read_only(self) -> sqlite3.Connection:
        uri = "file:%s?mode=ro" % quote(os.fsencode(os.path.abspath(self.path)))
        db = sqlite3.connect(uri, uri=True, timeout=60.0, isolation_level=None)
        try:
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.Error as e:
            db.close()
            if error_kind(e) not in (_UNREADABLE, _READ_ONLY, _FULL):
                raise
        # A reader of a WAL database needs the -shm index beside it, which it cannot
        # create on a read-only or full file system; nothing can write there either, so
        # read the file as it is (immutable: no index, no locks).
        return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)

    def _init_schema(self):
        tables = {r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and "meta" not in tables:
            raise StoreError("%s is an SQLite database but not an osmeter one; choose another "
                             "with --db" % self.path)
        if "meta" in tables:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            try:
                version = int(row[0]) if row else 0
            except (TypeError, ValueError):
                raise self._damaged("its schema_version is %r, not a number" % (row[0],))
            if version > SCHEMA_VERSION:
                raise StoreError("%s was written by a newer osmeter (schema %d, this one reads "
                                 "%d); upgrade osmeter" % (self.path, version, SCHEMA_VERSION))
            missing = [t for t in TABLES if t not in tables]
            if missing:
                raise self._damaged("it has no '%s' table" % "', '".join(missing))
            found = _columns(self.db)
            for table, columns in _columns(_reference()).items():
                lacking = [c for c in columns if c not in found[table]]
                if lacking:
                    raise self._damaged("table '%s' has no column '%s'" % (table, lacking[0]))
            return
        if self.readonly:       # an empty file: an empty store, left as it is
            self.db.close()
            self.db = _reference()
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
            self._rollback()
            raise

    # ---- errors: every SQLite error becomes one StoreError line here --------------------

    def _damaged(self, what: str) -> StoreError:
        return StoreError("%s is not a usable osmeter database (%s); move it aside or choose "
                          "another with --db" % (self.path, what))

    def _explain(self, e: sqlite3.Error) -> str:
        """Why, in words: the real reason first, SQLite's own words after it."""
        kind = error_kind(e)
        if kind == _DAMAGED:
            return ("the database is damaged (%s); move it aside or choose another with --db"
                    % e)
        if kind == _BUSY:
            return "the database is locked by another program (%s)" % e
        # SQLite often says only "disk I/O error": the file system tells what it was.
        disk = self._disk_problem() if kind in (_FULL, _READ_ONLY, _UNREADABLE) else None
        if disk:
            return "%s (%s)" % (disk, e)
        if kind == _FULL:
            return "the disk is full (%s)" % e
        if kind == _READ_ONLY:
            return "the database is read-only (%s)" % e
        return str(e)

    def _disk_problem(self) -> str | None:
        """A read-only file system, a full one, or a file size limit, if one is found."""
        try:
            fs = os.statvfs(self.path.parent)
        except OSError:
            return None
        if fs.f_flag & os.ST_RDONLY:
            return "it is on a read-only file system"
        if fs.f_bavail * fs.f_frsize < FULL_BYTES:
            return "the disk is full"
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        try:
            size = self.path.stat().st_size
        except OSError:
            size = 0
        if limit != resource.RLIM_INFINITY and limit < size + FULL_BYTES:
            return "files may not grow beyond %d bytes here (ulimit -f)" % limit
        return None

    @contextlib.contextmanager
    def _errors(self, doing: str):
        """Turn an SQLite error while `doing` into one line: a damaged database is named as
        such (move it aside); anything else (full, read-only, locked, ...) says what."""
        try:
            yield
        except sqlite3.Error as e:
            if error_kind(e) == _DAMAGED and doing == "open database":
                raise self._damaged(str(e)) from None
            raise StoreError("could not %s %s: %s" % (doing, self.path, self._explain(e))) \
                from None

    def _rollback(self):
        """After a failed statement SQLite may have rolled back already (a full disk):
        then there is nothing to roll back, and the first error is the one to tell."""
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def _json(self, raw, run_id: str, column: str, want: type = dict):
        """A JSON column's value, checked: a damaged row is named, not a traceback."""
        try:
            value = json.loads(raw)
        except (TypeError, ValueError):
            value = None
        if not isinstance(value, want):
            raise StoreError("%s: run %s is damaged: its %s is not a JSON %s ('osmeter delete "
                             "%s' removes the run)" % (self.path, run_id, column,
                                                       "object" if want is dict else "list",
                                                       run_id))
        return value

    def check_writable(self):
        """Fail now, not after a long run, if results could not be stored."""
        with self._errors("write to database"):
            self.db.execute("BEGIN IMMEDIATE")
            try:    # a statement that writes nothing, but fails on a read-only file
                self.db.execute("UPDATE meta SET value = value WHERE 0")
            finally:
                self._rollback()

    def close(self):
        self.db.close()

    # `with Store(...) as store:` closes it at the end (a connection that is only dropped
    # stays open until the garbage collector finds it, and with it the file).
    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- writing -------------------------------------------------------------------

    def save_run(self, run: Run, replace: bool = True) -> None:
        """Insert (or replace) a whole run in one transaction.  With replace=False a run
        already stored raises AlreadyStored, checked inside the transaction: of two
        simultaneous imports of one run exactly one stores it."""
        with self._errors("store run %s in" % run.id):
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
                self._rollback()
                raise

    def save_noise(self, name: str, created: str, profile: dict) -> None:
        """Store (or replace) a between-run noise profile (osmeter.noise)."""
        with self._errors("store noise profile %s in" % name):
            self.db.execute(NOISE_TABLE)
            self.db.execute("INSERT OR REPLACE INTO noise_profiles VALUES (?,?,?)",
                            (name, created, json.dumps(profile)))

    def _has_noise_table(self) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                               "name='noise_profiles'").fetchone() is not None

    def load_noise(self, name: str) -> dict | None:
        with self._errors("read noise profile %s from" % name):
            if not self._has_noise_table():
                return None
            row = self.db.execute("SELECT profile FROM noise_profiles WHERE name = ?",
                                  (name,)).fetchone()
        return json.loads(row[0]) if row else None

    def list_noise(self) -> list[dict]:
        with self._errors("read the noise profiles in"):
            if not self._has_noise_table():
                return []
            return [json.loads(p) for (p,) in self.db.execute(
                "SELECT profile FROM noise_profiles ORDER BY created, name")]

    def runs_labelled(self, label: str) -> list[str]:
        """Ids of every run with this label, oldest first."""
        with self._errors("look up label '%s' in" % text.shown(label)):
            return [r[0] for r in self.db.execute(
                "SELECT id FROM runs WHERE label = ? ORDER BY started, id",
                (text.shown(label),))]

    def delete_run(self, ref: str) -> str:
        run_id = self.resolve(ref)
        with self._errors("delete run %s from" % run_id):
            self.db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        return run_id

    # ---- reading -------------------------------------------------------------------

    def list_runs(self) -> list[dict]:
        with self._errors("read the runs in"):
            rows = self.db.execute(
                "SELECT r.id, r.label, r.started, r.finished, r.status, r.suite, r.smoke, "
                "r.sysinfo, (SELECT COUNT(*) FROM results WHERE run_id = r.id) "
                "FROM runs r ORDER BY r.started, r.id").fetchall()
        out = []
        for rid, label, started, finished, status, suite, smoke, sysinfo, n in rows:
            si = self._json(sysinfo, rid, "runs.sysinfo")
            kernel = si.get("kernel")
            out.append({"id": rid, "label": label, "started": started, "finished": finished,
                        "status": status, "suite": suite, "smoke": bool(smoke),
                        "host": si.get("hostname"),
                        "kernel": kernel.get("release") if isinstance(kernel, dict) else None,
                        "results": n})
        return out

    def resolve(self, ref: str) -> str:
        """A run id, a unique id prefix, a label (latest run with it), or 'latest'."""
        ref = text.shown(ref)   # names are stored as text: a label's odd bytes as \xNN
        with self._errors("look up run '%s' in" % ref):
            return self._resolve(ref)

    def _resolve(self, ref: str) -> str:
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
        with self._errors("read run %s from" % run_id):
            return self._load_run(run_id)

    def _load_run(self, run_id: str) -> Run:
        row = self.db.execute("SELECT id, label, started, finished, status, suite, smoke, "
                              "command, osmeter_version, sysinfo, environment FROM runs "
                              "WHERE id = ?", (run_id,)).fetchone()
        run = Run(id=row[0], label=row[1], started=row[2], finished=row[3], status=row[4],
                  suite=row[5], smoke=bool(row[6]), command=row[7] or "",
                  osmeter_version=row[8] or "",
                  sysinfo=self._json(row[9], run_id, "runs.sysinfo"),
                  environment=self._json(row[10], run_id, "runs.environment"))
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
            def column(name, raw, want=dict):
                return self._json(raw, run_id, "results.%s of %s" % (name, bench), want)
            run.results.append(Result(
                bench=bench, metric=metric, unit=unit, better=better, shape=shape, x=x,
                x_name=x_name, params=column("params", params), status=status, reason=reason,
                samples=samples.get(rid, []), summary=column("summary", summary),
                warnings=column("warnings", warnings, list), notes=column("notes", notes),
                extra=column("extra", extra)))
        return run
