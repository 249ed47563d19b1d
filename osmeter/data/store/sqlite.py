"""The SQLite back-end: the embedded default, one file.

Writers take the write lock at the start of their transaction (BEGIN IMMEDIATE) and the
database runs in WAL mode with a generous busy timeout, so two runs writing at once are
both stored.  A file that is not an osmeter database is refused, never modified.  A
read-only open touches nothing (and reads a WAL database on a read-only or full file
system as it is).  Every SQLite error is sorted by its result code (or its words): a
damaged database (move it aside) is told apart from a full disk, a read-only file
system, a file size limit or a lock.
"""
from __future__ import annotations

import contextlib
import os
import resource
import sqlite3
import stat
import time
from pathlib import Path
from urllib.parse import quote

from ..model import SCHEMA_VERSION
from . import schema
from .base import (BUSY, DAMAGED, FULL, READ_ONLY, UNREADABLE, Store, StoreError,
                   default_location)

LOCK_WAIT_S = 60          # how long a writer waits for another to finish
LOCK_SLICE_S = 0.2        # ... in slices this long (signals are handled between them)
FULL_BYTES = 1 << 20    # less free space than this, and a write that failed found it full

_KIND_BY_CODE = {11: DAMAGED, 26: DAMAGED, 13: FULL, 8: READ_ONLY, 5: BUSY, 6: BUSY,
                 10: UNREADABLE, 14: UNREADABLE, 3: UNREADABLE, 23: UNREADABLE}
_KIND_BY_WORDS = (("malformed", DAMAGED), ("not a database", DAMAGED),
                  ("no such table", DAMAGED), ("no such column", DAMAGED),
                  ("disk is full", FULL), ("readonly", READ_ONLY), ("read-only", READ_ONLY),
                  ("locked", BUSY), ("busy", BUSY), ("disk i/o error", UNREADABLE),
                  ("unable to open", UNREADABLE), ("authorization", UNREADABLE))


def error_kind(e: sqlite3.Error) -> str | None:
    """From the primary result code (Python >= 3.11 gives it) or else the message."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None and (code & 0xff) in _KIND_BY_CODE:
        return _KIND_BY_CODE[code & 0xff]
    words = str(e).lower()
    return next((kind for w, kind in _KIND_BY_WORDS if w in words), None)


def _not_a_file(path: Path) -> str | None:
    """What a path that exists is when it is not a regular file (a link is followed)."""
    mode = path.stat().st_mode
    for test, kind in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a regular file"


def _reference() -> sqlite3.Connection:
    """An empty store in memory, made from the schema."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.executescript(schema.SQLITE)
    return db


class SQLiteStore(Store):
    driver_error = sqlite3.Error
    SAMPLE_ORDER = "s.rowid"

    def __init__(self, location=None, readonly: bool = False):
        self.path = Path(location) if location else Path(default_location())
        self.location = str(self.path)
        self.keep_dir = os.path.dirname(os.path.abspath(self.path))
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
                self.db = sqlite3.connect(str(self.path), timeout=LOCK_WAIT_S,
                                          isolation_level=None)
                self.db.execute("PRAGMA busy_timeout = %d" % (LOCK_WAIT_S * 1000))
                self.db.execute("PRAGMA foreign_keys = ON")
            self._init_schema()

    def _check_file(self) -> bool:
        """Refuse a file that exists but is not SQLite, before SQLite touches it; whether
        the file exists."""
        try:
            if self.path.is_dir():
                raise StoreError("database path %s is a directory" % self.path)
            exists = self.path.exists()
            kind = _not_a_file(self.path) if exists else None
            if kind:     # /dev/null, /dev/zero, a FIFO: SQLite cannot keep a database there
                raise StoreError("database path %s is %s, not a file; choose an SQLite file "
                                 "with --db" % (self.path, kind))
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
            if error_kind(e) not in (UNREADABLE, READ_ONLY, FULL):
                raise
        # A reader of a WAL database needs the -shm index beside it, which it cannot
        # create on a read-only or full file system; nothing can write there either, so
        # read the file as it is (immutable: no index, no locks).
        return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)

    def close(self) -> None:
        self.db.close()

    # ---- the primitives of base.Store ---------------------------------------------------

    def _execute(self, sql: str, params: tuple = ()):
        return self.db.execute(sql, params)

    @contextlib.contextmanager
    def _write_transaction(self, key: str | None = None):
        self._lock_for_writing()
        try:
            yield
            self.db.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def _lock_for_writing(self) -> None:
        """BEGIN IMMEDIATE (the whole database's write lock), waiting up to LOCK_WAIT_S
        for another writer in slices: SQLite waits in C, where Python's signal handlers
        cannot run, so a SIGTERM to a run waiting to be stored is handled within a
        slice (osmeter/running/safekeeping.py), not after the whole wait."""
        deadline = time.monotonic() + LOCK_WAIT_S
        self.db.execute("PRAGMA busy_timeout = %d" % (LOCK_SLICE_S * 1000))
        try:
            while True:
                try:
                    self.db.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as e:
                    if error_kind(e) != BUSY or time.monotonic() >= deadline:
                        raise
        finally:
            self.db.execute("PRAGMA busy_timeout = %d" % (LOCK_WAIT_S * 1000))

    def _rollback(self) -> None:
        """After a failed statement SQLite may have rolled back already (a full disk):
        then there is nothing to roll back, and the first error is the one to tell."""
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def _insert_result(self, sql: str, params: tuple) -> int:
        return self.db.execute(sql, params).lastrowid

    def _insert_samples(self, per_result) -> None:
        self.db.executemany("INSERT INTO samples VALUES (?,?,?,?)",
                            ((rid, s.rep, s.x, s.value)
                             for rid, samples in per_result for s in samples))

    def _tables(self) -> set[str]:
        return {r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")}

    def _columns(self, table: str) -> list[str]:
        return [row[1] for row in self.db.execute("PRAGMA table_info(%s)" % table)]

    def _create_schema(self) -> None:
        try:
            self.db.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:
            pass  # e.g. a network file system without shared memory: rollback journal is fine
        with self._write_transaction():
            for stmt in schema.statements(schema.SQLITE):
                self.db.execute(stmt)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                            (str(SCHEMA_VERSION),))

    def _become_empty(self) -> None:
        self.db.close()         # an empty file: an empty store, left as it is
        self.db = _reference()

    def _foreign(self, tables) -> StoreError:
        return StoreError("%s is an SQLite database but not an osmeter one; choose another "
                          "with --db" % self.path)

    def _kind(self, e) -> str | None:
        return error_kind(e)

    def _explain(self, e: sqlite3.Error) -> str:
        kind = error_kind(e)
        if kind == DAMAGED:
            return ("the database is damaged (%s); move it aside or choose another with --db"
                    % e)
        if kind == BUSY:
            return "the database is locked by another program (%s)" % e
        # SQLite often says only "disk I/O error": the file system tells what it was.
        disk = self._disk_problem() if kind in (FULL, READ_ONLY, UNREADABLE) else None
        if disk:
            return "%s (%s)" % (disk, e)
        if kind == FULL:
            return "the disk is full (%s)" % e
        if kind == READ_ONLY:
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
