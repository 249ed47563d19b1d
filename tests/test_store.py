"""The SQLite store: round trip, concurrent writers, corrupt and foreign files."""
import multiprocessing
import sqlite3

import pytest

from osmeter import exchange
from osmeter.model import Result, Run, Sample
from osmeter.store import Store, StoreError


def make_run(run_id, label=None, n_results=3):
    run = Run(id=run_id, label=label, started="2026-01-01T00:00:0%d+00:00" % (len(run_id) % 10),
              status="complete", sysinfo={"hostname": "h", "kernel": {"release": "6"}},
              environment={"warnings": []})
    for i in range(n_results):
        run.results.append(Result(
            bench="b.%d" % i, metric="latency", unit="ns", better="lower", shape="sweep",
            x=float(i), x_name="n", params={"k": "1"},
            samples=[Sample(r, float(i), 1.0 + r + i / 10) for r in range(3)],
            summary={"n": 3, "median": 2.0}, warnings=["w"], notes={"a": 1},
            extra={"curve": {"class": "O(1)"}}))
    return run


def test_round_trip_keeps_everything(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    run = make_run("r1", label="base")
    store.save_run(run)
    back = Store(tmp_path / "db.sqlite").load_run("base")
    assert exchange.run_to_document(back) == exchange.run_to_document(run)


def test_references_by_id_prefix_label_and_latest(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    store.save_run(make_run("20260101-a", label="x"))
    store.save_run(make_run("20260102-b", label="x"))
    assert store.resolve("x") == "20260102-b"          # the latest with that label
    assert store.resolve("20260101") == "20260101-a"   # unique prefix
    with pytest.raises(StoreError, match="ambiguous"):
        store.resolve("2026")
    with pytest.raises(StoreError, match="no run 'nope'"):
        store.resolve("nope")


def _writer(path, prefix, count):
    store = Store(path)
    for i in range(count):
        store.save_run(make_run("%s-%d" % (prefix, i), n_results=20))


def test_concurrent_writers_are_all_stored(tmp_path):
    path = str(tmp_path / "db.sqlite")
    Store(path).close()  # SQLite connections must not cross fork()
    procs = [multiprocessing.Process(target=_writer, args=(path, p, 15)) for p in "abc"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    store = Store(path)
    runs = store.list_runs()
    assert len(runs) == 45 and all(r["results"] == 20 for r in runs)
    assert len(store.load_run("b-7").results[5].samples) == 3


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
