"""The results store on both back-ends: round trip, the same answers, concurrent writers,
the schema version; the SQLite file's and the PostgreSQL server's own failures.

`store_location` (conftest.py) runs a test once on an SQLite file and once on a fresh
database of a real PostgreSQL server the tests start themselves (tests/pgserver.py).
"""
import multiprocessing
import sqlite3
import subprocess
import sys

import pytest

from clirun import REPO, osmeter
from osmeter.data import exchange
from osmeter.data.model import Result, Run, Sample
from osmeter.data.store import AlreadyStored, Store, StoreError

# Values a float column must keep exactly: no rounding to 32 bits, no text round trip.
AWKWARD = [0.1 + 0.2, 1e-300, 5e-324, 1.7976931348623157e308, -2.5e-7, 123456789.123456789,
           float("inf")]


def make_run(run_id, label=None, n_results=3, host="h", started=None):
    run = Run(id=run_id, label=label,
              started=started or "2026-01-01T00:00:0%d+00:00" % (len(run_id) % 10),
              status="complete", sysinfo={"hostname": host, "kernel": {"release": "6"},
                                          "os": {"name": "Debian"}, "cpu": {"model": "m"}},
              environment={"warnings": []})
    for i in range(n_results):
        run.results.append(Result(
            bench="b.%d" % i, metric="latency", unit="ns", better="lower", shape="sweep",
            x=float(i), x_name="n", params={"k": "1"},
            samples=[Sample(r, float(i), 1.0 + r + i / 10) for r in range(3)],
            summary={"n": 3, "median": 2.0}, warnings=["w"], notes={"a": 1},
            extra={"curve": {"class": "O(1)"}}))
    return run


def awkward_run(run_id="odd"):
    run = make_run(run_id, n_results=1)
    # out of order on purpose: samples come back in the order they were stored
    run.results[0].samples = [Sample(rep % 3, None if rep % 2 else 2.5, v)
                              for rep, v in reversed(list(enumerate(AWKWARD)))]
    return run


def document(run):
    return exchange.run_to_document(run)


def test_round_trip_keeps_everything(store_location):
    with Store(store_location) as store:
        for run in (make_run("r1", label="base"), awkward_run()):
            store.save_run(run)
    with Store(store_location, readonly=True) as store:
        assert document(store.load_run("base")) == document(make_run("r1", label="base"))
        back = store.load_run("odd")
    def exact(samples):     # hex: every bit of every value
        return [(s.rep, s.x, s.value.hex()) for s in samples]
    assert exact(back.results[0].samples) == exact(awkward_run().results[0].samples)


def test_both_back_ends_give_the_same_answers(tmp_path, pg_url):
    runs = [make_run("20260101-a", label="x"), make_run("20260102-b", label="x", host="g"),
            awkward_run("20260103-c")]
    stores = [Store(tmp_path / "db.sqlite"), Store(pg_url)]
    for store in stores:
        for run in runs:
            store.save_run(run)
        store.save_noise("quiet", "2026-01-01", {"name": "quiet", "runs": ["a"]})
    answers = [(store.list_runs(), [document(store.load_run(r.id)) for r in runs],
                store.resolve("x"), store.resolve("20260101"), store.runs_labelled("x"),
                store.list_noise(), store.load_noise("quiet")) for store in stores]
    assert answers[0] == answers[1]
    for store in stores:
        store.close()


def test_references_by_id_prefix_label_and_latest(store_location):
    with Store(store_location) as store:
        store.save_run(make_run("20260101-a", label="x"))
        store.save_run(make_run("20260102-b", label="x"))
        store.save_run(make_run("a_b%c", started="2025-12-31T00:00:00+00:00"))
        assert store.resolve("x") == "20260102-b"          # the latest with that label
        assert store.resolve("20260101") == "20260101-a"   # unique prefix
        assert store.resolve("latest") == "20260102-b"
        assert store.resolve("a_b") == "a_b%c"             # _ and % are not wildcards
        with pytest.raises(StoreError, match="ambiguous"):
            store.resolve("2026")
        with pytest.raises(StoreError, match="no run 'a%'"):
            store.resolve("a%")
        with pytest.raises(StoreError, match="no run 'nope'"):
            store.resolve("nope")


def test_replace_and_already_stored(store_location):
    with Store(store_location) as store:
        store.save_run(make_run("r1", n_results=3))
        with pytest.raises(AlreadyStored):
            store.save_run(make_run("r1", n_results=1), replace=False)
        assert len(store.load_run("r1").results) == 3     # the refused one left nothing
        store.save_run(make_run("r1", n_results=1))
        assert len(store.load_run("r1").results) == 1
        assert store.has_run("r1") and not store.has_run("r2")


def test_delete_removes_the_results_and_samples(store_location):
    with Store(store_location) as store:
        store.save_run(make_run("r1"))
        store.save_run(make_run("r2"))
        assert store.delete_run("r1") == "r1"
        assert [r["id"] for r in store.list_runs()] == ["r2"]
        counts = [store._execute("SELECT COUNT(*) FROM %s" % t).fetchone()[0]
                  for t in ("results", "samples")]
    assert counts == [3, 9]


def test_read_only_open_of_an_empty_store_makes_nothing(store_location):
    with Store(store_location, readonly=True) as store:
        assert store.list_runs() == [] and store.list_noise() == []
        with pytest.raises(StoreError, match="no runs stored"):
            store.resolve("latest")
    if store_location.startswith("postgresql://"):
        import psycopg
        with psycopg.connect(store_location) as con:
            assert con.execute("SELECT COUNT(*) FROM pg_tables WHERE schemaname = "
                               "'public'").fetchone()[0] == 0
    else:
        import os
        assert not os.path.exists(store_location)


def test_read_only_open_refuses_to_write(store_location):
    Store(store_location).close()
    with Store(store_location, readonly=True) as store:
        with pytest.raises(StoreError, match="read-only|readonly"):
            store.save_run(make_run("r1"))


def _writer(location, prefix, count):
    with Store(location) as store:
        for i in range(count):
            store.save_run(make_run("%s-%d" % (prefix, i), n_results=20))


def test_concurrent_writers_are_all_stored(store_location):
    # The first writers of a new PostgreSQL database also race to make its schema.
    if not store_location.startswith("postgresql://"):
        Store(store_location).close()  # SQLite connections must not cross fork()
    procs = [multiprocessing.Process(target=_writer, args=(store_location, p, 15))
             for p in "abcd"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with Store(store_location, readonly=True) as store:
        runs = store.list_runs()
        assert len(runs) == 60 and all(r["results"] == 20 for r in runs)
        assert len(store.load_run("b-7").results[5].samples) == 3
        assert store._execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 60 * 20 * 3


def _import_once(location, queue):
    try:
        with Store(location) as store:
            store.save_run(make_run("same", n_results=10), replace=False)
        queue.put("stored")
    except AlreadyStored:
        queue.put("already")


def test_simultaneous_imports_of_one_run_store_it_once(store_location):
    Store(store_location).close()
    queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_import_once, args=(store_location, queue))
             for _ in range(4)]
    for p in procs:
        p.start()
    outcomes = sorted(queue.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(60)
    assert outcomes == ["already"] * 3 + ["stored"]
    with Store(store_location, readonly=True) as store:
        assert len(store.load_run("same").results) == 10
        assert store._execute("SELECT COUNT(*) FROM results").fetchone()[0] == 10


def _set_schema_version(location, version, pg_server=None):
    if location.startswith("postgresql://"):
        pg_server.sql(location.rsplit("/", 1)[1],
                      "UPDATE meta SET value = %s WHERE key = 'schema_version'", (version,))
    else:
        con = sqlite3.connect(location)
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
        con.commit()
        con.close()


@pytest.mark.parametrize("readonly", [False, True])
def test_a_newer_schema_is_refused(store_location, readonly, request):
    with Store(store_location) as store:
        store.save_run(make_run("r1"))
    server = request.getfixturevalue("pg_server") if "postgresql" in store_location else None
    _set_schema_version(store_location, "99", server)
    with pytest.raises(StoreError, match="written by a newer osmeter .schema 99, this one "
                                         "reads 1.; upgrade osmeter"):
        Store(store_location, readonly=readonly)
    _set_schema_version(store_location, "one", server)
    with pytest.raises(StoreError, match="schema_version is 'one', not a number"):
        Store(store_location)


# ---- SQLite's own failures -------------------------------------------------------------

def test_corrupt_file_is_refused_and_untouched(tmp_path):
    path = tmp_path / "db.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not an SQLite database"):
        Store(path)
    assert path.read_bytes() == before


def test_damaged_sqlite_is_refused(tmp_path):
    path = tmp_path / "db.sqlite"
    store = Store(path)
    store.save_run(make_run("r1"))
    store.close()  # checkpoints the write-ahead log into the file we are about to damage
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)   # wreck the schema page, keep the magic
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="not a usable osmeter database"):
        Store(path).load_run("r1")


def test_foreign_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="not an osmeter one"):
        Store(path)


def test_unwritable_location_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot create"):
        Store(blocker / "sub" / "db.sqlite")


# ---- PostgreSQL's own failures, each one line --------------------------------------------

def test_postgres_errors_are_one_line_and_hide_the_password(pg_server, pg_url):
    name = pg_url.rsplit("/", 1)[1]
    import socket
    with socket.socket() as s:      # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    cases = [
        (pg_server.url(name, password="wrong-secret"), "authentication failed"),
        (pg_server.url(name).replace(str(pg_server.port), str(closed_port)),
         "connection refused"),
        (pg_server.url("no_such_db"), "the database does not exist"),
    ]
    for url, words in cases:
        with pytest.raises(StoreError) as e:
            Store(url)
        message = str(e.value)
        assert words in message and "\n" not in message, message
        assert "wrong-secret" not in message and pgserver_password() not in message
        assert message.startswith("could not open database postgresql://osmeter_test:***@")


def pgserver_password():
    import pgserver
    return pgserver.PASSWORD


def test_postgres_database_with_other_tables_is_refused_untouched(pg_server, pg_url):
    name = pg_url.rsplit("/", 1)[1]
    pg_server.sql(name, "CREATE TABLE runs (x INTEGER)")
    with pytest.raises(StoreError, match="has tables named runs that are not osmeter's"):
        Store(pg_url)
    assert pg_server.sql(name, "SELECT COUNT(*) FROM pg_tables WHERE schemaname = "
                               "'public'") == [(1,)]


def test_postgres_damaged_schema_is_named(pg_server, pg_url):
    Store(pg_url).close()
    pg_server.sql(pg_url.rsplit("/", 1)[1], "ALTER TABLE results DROP COLUMN summary")
    with pytest.raises(StoreError, match="not a usable osmeter database .table 'results' "
                                         "has no column 'summary'"):
        Store(pg_url)


def test_postgres_other_tables_in_the_database_are_left_alone(pg_server, pg_url):
    name = pg_url.rsplit("/", 1)[1]
    pg_server.sql(name, "CREATE TABLE inventory (host TEXT)")
    with Store(pg_url) as store:
        store.save_run(make_run("r1"))
    assert pg_server.sql(name, "SELECT COUNT(*) FROM inventory") == [(0,)]


def test_unknown_url_scheme_is_one_line():
    with pytest.raises(StoreError, match="mysql://...: osmeter stores results in an SQLite "
                                         "file .a path. or in PostgreSQL"):
        Store("mysql://u@127.0.0.1/db")


def test_missing_driver_is_one_line(tmp_path):
    # psycopg made unimportable in the child, as on a machine without the extra
    code = ("import sys; sys.modules['psycopg'] = None; from osmeter.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    r = subprocess.run([sys.executable, "-c", code, "--db",
                        "postgresql://u@127.0.0.1:1/db", "runs"], capture_output=True,
                       text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1
    assert "needs the psycopg driver" in r.stderr
    assert "pip install 'osmeter[postgres]'" in r.stderr


def test_cli_import_into_postgres_with_skip_existing(tmp_path, pg_url):
    files = []
    for run in (make_run("r1", label="one"), make_run("r2", label="two")):
        path = tmp_path / ("%s.json" % run.id)
        exchange.write_run_file(run, str(path))
        files.append(path)
    osmeter("import", files[0], db=pg_url, check=0)
    r = osmeter("import", *files, db=pg_url, check=2)
    assert "run r1 is already stored" in r.stderr
    r = osmeter("import", "--skip-existing", *files, db=pg_url, check=0)
    assert "imported run r2" in r.stdout and "skipped run r1: already stored" in r.stdout
    r = osmeter("import", "--skip-existing", *files, db=pg_url, check=0)
    assert "imported" not in r.stdout
    r = osmeter("runs", "--json", db=pg_url, check=0)
    assert [x["id"] for x in __import__("json").loads(r.stdout)] == ["r1", "r2"]
    assert "***" not in r.stderr
