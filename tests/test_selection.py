"""Selecting runs by what they are (osmeter/data/selection.py) and every command that takes
runs: runs, compare (and its baseline), report, export, delete, noise."""
import csv
import datetime as dt
import io
import json

import pytest

import synth
from clirun import osmeter
from osmeter.data import exchange, selection
from osmeter.data.selection import SelectionError
from osmeter.data.store import Store

# host, kernel, cpu, label, started
FLEET = [("web1", "6.1.0-18-amd64", "EPYC 7763", "nightly", "2026-10-30T08:00:00+00:00"),
         ("web2", "6.1.0-18-amd64", "EPYC 7763", "nightly", "2026-11-02T08:00:00+00:00"),
         ("web3", "6.6.8-amd64", "Xeon 6338", "nightly", "2026-11-05T08:00:00+00:00"),
         ("db1", "6.6.8-amd64", "Xeon 6338", "db-nightly", "2026-11-05T23:59:00+00:00"),
         ("ref1", "6.1.0-18-amd64", "EPYC 7763", "ref", "2026-11-01T08:00:00+00:00"),
         ("ref1", "6.1.0-18-amd64", "EPYC 7763", "ref", "2026-11-03T08:00:00+00:00")]


def fleet_run(i):
    host, kernel, cpu, label, started = FLEET[i]
    return synth.make_run("r%d-%s" % (i, host), label=label, seed=i + 1, host=host,
                          kernel=kernel, cpu_model=cpu, started=started)


@pytest.fixture
def fleet_db(store_location):
    with Store(store_location) as store:
        for i in range(len(FLEET)):
            store.save_run(fleet_run(i))
    return store_location


def chosen(location, *where):
    with Store(location, readonly=True) as store:
        return [r["id"] for r in selection.parse(list(where)).runs(store)]


def test_conditions_on_one_key_are_alternatives_on_several_all_hold(fleet_db):
    assert chosen(fleet_db, "host=web*") == ["r0-web1", "r1-web2", "r2-web3"]
    assert chosen(fleet_db, "host=web1", "host=db1") == ["r0-web1", "r3-db1"]
    assert chosen(fleet_db, "host=web*", "kernel=6.6*") == ["r2-web3"]
    assert chosen(fleet_db, "host!=web*", "host!=ref*") == ["r3-db1"]
    assert chosen(fleet_db, "cpu=Xeon*", "label=*nightly") == ["r2-web3", "r3-db1"]
    assert chosen(fleet_db, "os=Debian*", "suite=quick", "status=complete",
                  "smoke=no") == [r for r in chosen(fleet_db)]
    assert chosen(fleet_db, "smoke=yes") == []
    assert chosen(fleet_db, "id=r1-*") == ["r1-web2"]


def test_date_ranges_are_utc_and_until_a_date_includes_the_day(fleet_db):
    assert chosen(fleet_db, "since=2026-11-01", "until=2026-11-03") == \
        ["r4-ref1", "r1-web2", "r5-ref1"]
    assert chosen(fleet_db, "until=2026-11-05", "host=db1") == ["r3-db1"]    # at 23:59
    assert chosen(fleet_db, "since=2026-11-05T12:00") == ["r3-db1"]
    assert chosen(fleet_db, "until=2026-11-05T12:00", "since=2026-11-05") == ["r2-web3"]


def test_an_age_counts_back_from_now():
    now = dt.datetime(2026, 11, 6, tzinfo=dt.timezone.utc)
    sel = selection.parse(["since=2d"], now=now)
    runs = [{"started": "2026-11-05T08:00:00+00:00"}, {"started": "2026-11-03T08:00:00Z"}]
    assert [sel.matches(r) for r in runs] == [True, False]


@pytest.mark.parametrize("spec, words", [
    ("web*", "is not a condition: give KEY=GLOB"),
    ("hots=web*", "no key 'hots' (one of label, host"),
    ("since=yesterday", "not a date or an age"),
    ("since!=2026-11-01", "since takes '='"),
])
def test_a_bad_condition_is_one_clear_line(spec, words):
    with pytest.raises(SelectionError, match=words.replace("(", r"\(")):
        selection.parse([spec])


def test_a_label_with_an_equals_sign_is_still_a_name():
    assert selection.is_condition("host=web1") and selection.is_condition("kernel!=6*")
    assert not selection.is_condition("n=5") and not selection.is_condition("web1")


def test_runs_lists_what_where_selects(fleet_db):
    r = osmeter("runs", "--where", "host=web*", "--where", "since=2026-11-01", db=fleet_db,
                check=0)
    assert "r1-web2" in r.stdout and "r2-web3" in r.stdout and "r0-web1" not in r.stdout
    listed = json.loads(osmeter("runs", "--json", "--where", "cpu=Xeon*", db=fleet_db,
                                check=0).stdout)
    assert [(x["id"], x["host"], x["kernel"], x["cpu"]) for x in listed] == [
        ("r2-web3", "web3", "6.6.8-amd64", "Xeon 6338"),
        ("r3-db1", "db1", "6.6.8-amd64", "Xeon 6338")]
    r = osmeter("runs", "--where", "host=nothing*", db=fleet_db, check=0)
    assert "no runs matching host=nothing* in" in r.stdout


def test_compare_takes_a_selection_and_a_baseline_named_the_same_way(tmp_path):
    db = tmp_path / "db.sqlite"
    with Store(db) as store:
        for i in range(len(FLEET)):
            store.save_run(fleet_run(i))
    r = osmeter("compare", "--where", "host=web*", "--baseline", "host=ref1", "--json",
                db=db, check=0)
    doc = json.loads(r.stdout)
    assert [run["id"] for run in doc["runs"]] == ["r5-ref1", "r0-web1", "r1-web2", "r2-web3"]
    assert "baseline host=ref1: run r5-ref1, the latest of the 2 runs it matches" in r.stderr
    r = osmeter("compare", "--where", "host=web*", "--baseline", "host=ref1,until=2026-11-02",
                "--json", db=db, check=0)
    assert json.loads(r.stdout)["runs"][0]["id"] == "r4-ref1"
    r = osmeter("compare", "--where", "host=web3", "--baseline", "host=none", db=db, check=2)
    assert r.stderr.count("\n") == 1 and "no run in %s matches the baseline host=none" % db \
        in r.stderr
    r = osmeter("compare", "--where", "kernel=5*", db=db, check=2)
    assert "no run in %s matches kernel=5*" % db in r.stderr
    r = osmeter("compare", "--where", "kernal=6*", db=db, check=2)
    assert "no key 'kernal'" in r.stderr and r.stderr.count("\n") == 1


def test_report_export_delete_and_noise_take_selections(tmp_path):
    db = tmp_path / "db.sqlite"
    with Store(db) as store:
        for i in range(len(FLEET)):
            store.save_run(fleet_run(i))
    out = tmp_path / "r.html"
    osmeter("report", "--where", "label=nightly", "-o", out, db=db, check=0)
    page = out.read_text()
    assert all(h in page for h in ("r0-web1", "r1-web2", "r2-web3")) and "r3-db1" not in page

    r = osmeter("export", "--where", "host=web*", "--format", "long", db=db, check=0)
    hosts = {row["host"] for row in csv.DictReader(io.StringIO(r.stdout))}
    assert hosts == {"web1", "web2", "web3"}
    r = osmeter("export", "--where", "host=web*", db=db, check=2)
    assert "--format osmeter holds one run, and 3 are named or selected" in r.stderr
    r = osmeter("export", "--where", "host=db1", db=db, check=0)
    assert exchange.document_to_run(json.loads(r.stdout)).id == "r3-db1"

    r = osmeter("delete", "--where", "host=ref1", db=db, check=2)
    assert "selects 2 runs (r4-ref1, r5-ref1); add --yes" in r.stderr
    assert len(Store(db).list_runs()) == len(FLEET)           # nothing deleted
    r = osmeter("delete", "--where", "host=ref1", "--yes", db=db, check=0)
    assert r.stdout.splitlines() == ["deleted run r4-ref1", "deleted run r5-ref1"]

    r = osmeter("noise", "--where", "label=nightly", "--name", "web", db=db, check=0)
    assert "noise profile web: 3 runs (r0-web1, r1-web2, r2-web3)" in r.stdout
