"""The PostgreSQL back-end: one database for many hosts and CI jobs writing at once.

Named by a URL, `--db postgresql://user[:password]@host[:port]/database` (or
$OSMETER_DB); a password is better kept in ~/.pgpass or $PGPASSWORD, which the driver
reads, and it is never shown: messages name the store with '***' for it.  The driver is
psycopg 3, an optional extra (pip install 'osmeter[postgres]'); without it this
back-end is one clear line.

The tables are the SQLite back-end's (schema.py) in the database's search path (a
`?options=-csearch_path%3DNAME` in the URL puts them in a schema of their own); other
tables in the same database are left alone.  A run is written in one transaction, its
samples with one COPY.  Writers of the same run id go one at a time (a transaction-level
advisory lock on the id), so `save_run(replace=False)` finds a run stored by another
host's import exactly as SQLite does; the schema is made under a lock of its own, so
many first writers at once make it once.  A read-only open sets the session read-only,
and a database with no osmeter tables yet reads as empty (the tables made as temporary
ones of that session).
"""
from __future__ import annotations

import contextlib
import re
import sys

from ..model import SCHEMA_VERSION
from . import schema
from .base import (BUSY, DAMAGED, FULL, READ_ONLY, Store, StoreError, default_location,
                   one_line)

CONNECT_TIMEOUT_S = "10"     # unless the URL says otherwise
LOCK_PREFIX = "osmeter:"     # advisory lock keys: hashtext(LOCK_PREFIX + run id)

_KIND_BY_STATE = {"42P01": DAMAGED, "42703": DAMAGED, "XX001": DAMAGED, "XX002": DAMAGED,
                  "53100": FULL, "25006": READ_ONLY, "40001": BUSY, "40P01": BUSY,
                  "55P03": BUSY, "53300": BUSY}

# (sqlstate or None, words in the message) -> what it means, for the one line.
_REASONS = (
    (("28P01", "28000"), ("password authentication failed", "authentication failed"),
     "authentication failed: wrong user or password (a password goes in the URL, "
     "~/.pgpass or $PGPASSWORD)"),
    ((), ("no pg_hba.conf entry",), "the server does not let this user in from this "
     "address (its pg_hba.conf)"),
    (("3D000",), ("does not exist",), "the database does not exist (create it: createdb "
     "NAME)"),
    ((), ("connection refused",), "connection refused: no PostgreSQL server listens "
     "there"),
    ((), ("timeout expired", "timed out"), "the server did not answer in time "
     "(connect_timeout)"),
    ((), ("could not translate host name", "name or service not known",
          "temporary failure in name resolution"), "the host name is not known"),
    (("42501",), ("permission denied",), "permission denied: the user may not do this "
     "(to make osmeter's tables it must own the database or may CREATE in its schema)"),
    (("53100",), ("no space left",), "the server's disk is full"),
    (("25006",), ("read-only transaction",), "the database is read-only here"),
    (("53300",), ("too many connections", "too many clients"), "the server has no "
     "connection left (max_connections)"),
    (("57P01", "57P02", "57P03", "08006", "08003"),
     ("terminating connection", "server closed the connection", "connection is closed",
      "the database system is shutting down", "the database system is starting up"),
     "the server closed the connection (shut down or restarting)"),
    (("40001", "40P01"), (), "another writer got in the way; try again"),
)


def masked(url: str) -> str:
    """The URL with its password, if any, as ***."""
    url = re.sub(r"^([A-Za-z]+://[^/@:]*):[^@/]*@", r"\1:***@", url)
    return re.sub(r"(?i)(password=)[^&\s]*", r"\1***", url)


def _driver():
    try:
        import psycopg
    except ImportError as e:
        raise StoreError("a postgresql:// store needs the psycopg driver, which cannot be "
                         "imported by %s (%s): pip install 'osmeter[postgres]'"
                         % (sys.executable, one_line(e))) from None
    return psycopg


class PostgresStore(Store):
    SAMPLE_ORDER = "s.result_id, s.pos"

    def __init__(self, location=None, readonly: bool = False):
        url = str(location or default_location())
        self.location = masked(url)
        self.keep_dir = None
        self.readonly = readonly
        psycopg = _driver()
        self.driver_error = psycopg.Error
        try:
            params = psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.Error as e:
            raise StoreError("%s is not a PostgreSQL URL (%s)" % (self.location, one_line(e))) \
                from None
        params.setdefault("connect_timeout", CONNECT_TIMEOUT_S)
        params.setdefault("application_name", "osmeter")
        self.db = None
        try:
            with self._errors("open database"):
                self.db = psycopg.connect(autocommit=True, **params)
                # floats as text with every bit (the default from PostgreSQL 12 on)
                self.db.execute("SET extra_float_digits = 3")
                self._init_schema()
                if readonly:
                    self.db.execute("SET default_transaction_read_only = on")
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.db is not None:
            try:
                self.db.close()
            except Exception:
                pass

    # ---- the primitives of base.Store ---------------------------------------------------

    def _execute(self, sql: str, params: tuple = ()):
        if not params:
            return self.db.execute(sql)
        return self.db.execute(sql.replace("%", "%%").replace("?", "%s"), params)

    @contextlib.contextmanager
    def _write_transaction(self, key: str | None = None):
        with self.db.transaction():
            if key is not None:
                self.db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                                (LOCK_PREFIX + key,))
            yield

    def _insert_result(self, sql: str, params: tuple) -> int:
        return self._execute(sql + " RETURNING id", params).fetchone()[0]

    # Samples go both ways as text written and parsed here (COPY in, one aggregated value
    # out): the driver's per-value conversion, in pure Python without psycopg's C
    # speed-ups, took seconds for a run of 100,000 samples.  A float's repr and
    # PostgreSQL's float8 text (the shortest that reads back exactly) keep every bit.
    def _insert_samples(self, per_result) -> None:
        text = "".join("%d\t%d\t%s\t%s\t%d\n" % (rid, s.rep, _copy_text(s.x),
                                                  _copy_text(s.value), pos)
                       for rid, samples in per_result for pos, s in enumerate(samples))
        with self.db.cursor() as cur:
            with cur.copy("COPY samples (result_id, rep, x, value, pos) FROM STDIN") as copy:
                copy.write(text)

    def _sample_rows(self, run_id: str):
        text = self._execute(
            "SELECT string_agg(s.result_id || ' ' || s.rep || ' ' || COALESCE(s.x::text, '-') "
            "|| ' ' || s.value::text, ',' ORDER BY s.result_id, s.pos) FROM samples s "
            "JOIN results r ON r.id = s.result_id WHERE r.run_id = ?", (run_id,)).fetchone()[0]
        rows = []
        for sample in text.split(",") if text else ():
            rid, rep, x, value = sample.split(" ")
            rows.append((int(rid), int(rep), None if x == "-" else float(x), float(value)))
        return rows

    def _tables(self) -> set[str]:
        names = list(schema.TABLES) + ["noise_profiles"]
        return {r[0] for r in self._execute(
            "SELECT c.relname FROM pg_class c WHERE c.relkind IN ('r', 'p') AND "
            "pg_table_is_visible(c.oid) AND c.relname = ANY(?)", (names,)).fetchall()}

    def _columns(self, table: str) -> list[str]:
        return [r[0] for r in self._execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(?) AND "
            "attnum > 0 AND NOT attisdropped ORDER BY attnum", (table,)).fetchall()]

    def _create_schema(self) -> None:
        with self._write_transaction("schema"):    # many first writers: made once
            if "meta" in self._tables():
                return
            for stmt in schema.statements(schema.POSTGRES):
                self._execute(stmt)
            self._execute("INSERT INTO meta VALUES ('schema_version', ?) "
                          "ON CONFLICT (key) DO NOTHING", (str(SCHEMA_VERSION),))

    def _become_empty(self) -> None:
        for stmt in schema.statements(schema.POSTGRES):
            if stmt.startswith("CREATE TABLE"):
                self._execute(stmt.replace("CREATE TABLE", "CREATE TEMPORARY TABLE", 1))

    def _foreign(self, tables) -> StoreError:
        return StoreError("%s has tables named %s that are not osmeter's (no 'meta' table); "
                          "choose another database, or a schema of its own with "
                          "?options=-csearch_path%%3DNAME in the URL"
                          % (self.location, ", ".join(sorted(tables))))

    def _kind(self, e) -> str | None:
        return _KIND_BY_STATE.get(getattr(e, "sqlstate", None) or "")

    def _explain(self, e) -> str:
        words = one_line(e)
        state = getattr(e, "sqlstate", None)
        low = words.lower()
        if self._kind(e) == DAMAGED:
            return ("the database is not as osmeter made it (%s); move it aside or choose "
                    "another with --db" % words)
        for states, phrases, reason in _REASONS:
            if state in states or any(p in low for p in phrases):
                return "%s (%s)" % (reason, words)
        return words


def _copy_text(v) -> str:
    """A float (or None) as COPY's text format has it."""
    if v is None:
        return "\\N"
    v = float(v)
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(v)
