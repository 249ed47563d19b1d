"""The comparison and the gate on real runs of this machine (issue 25's proof by example).

One pair of real runs of a few quick benchmarks, one after the other: the second run's
syscall.* samples made 15% slower through export and import fail the gate against the
second run itself, naming them; zeros in some repetitions: compare, report, the gate and
every export succeed.

How often two such runs give a verdict or a gate that does not pass (the A/A rate) is a
claim about this machine's noise, not about osmeter's code: it is bench/aa_gate.py, which
prints its counts (issue 44: a host that moves a guest failed it on an ordinary VM).
When the runs' own flags call the scaled rows imprecise or disturbed, the gate rightly
leaves them ungated, and the slowdown test skips with the flags instead of failing.
"""
from __future__ import annotations

import json

import pytest

from clirun import labelled_runs, osmeter
from osmeter.analysis import flags
from osmeter import stats
from osmeter.data.model import Result, Sample

SUBSET = ("syscall.getpid", "syscall.read", "syscall.stat", "lat.signal", "thread.mutex",
          "cpu.integer")
SCALED = "syscall."


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """(tmp dir, store) of two real runs a1 and a2."""
    tmp = tmp_path_factory.mktemp("real")
    db = tmp / "db.sqlite"
    labelled_runs(db, SUBSET, ("a1", "a2"), "--preset", "quick", "--runs", "5")
    return tmp, db


def flagged(tmp, db, ref: str, prefix: str) -> list[str]:
    """The rows of run `ref` whose bench starts with `prefix` that the run itself flags
    (imprecise or disturbed), with the flag's text."""
    out = tmp / ("%s-flags.json" % ref)
    osmeter("export", ref, "-o", out, db=db, check=0)
    rows = [Result.from_dict(r) for r in json.loads(out.read_text())["results"]
            if r["bench"].startswith(prefix) and r["status"] == "ok"]
    return ["%s %s: %s" % (r.bench, r.metric, flags.standing(r)) for r in rows
            if flags.standing(r)]


def _scaled_copy(tmp, db, ref: str, label: str, edit) -> str:
    """Export run `ref`, change its samples with edit(result_dict), import it as `label`."""
    out = tmp / ("%s.json" % label)
    osmeter("export", ref, "-o", out, db=db, check=0)
    doc = json.loads(out.read_text())
    doc["run"]["id"] = doc["run"]["id"] + "-" + label
    doc["run"]["label"] = label
    for res in doc["results"]:
        if res.get("samples") and edit(res):
            res["summary"].update(stats.summarize([Sample(r, x, v)
                                                   for r, x, v in res["samples"]]))
    out.write_text(json.dumps(doc))
    osmeter("import", out, db=db, check=0)
    return label


def test_a_family_15_percent_slower_fails_the_gate_naming_its_rows(two_runs):
    tmp, db = two_runs

    def slower(res):
        if not res["bench"].startswith(SCALED) or res["shape"] == "derived":
            return False
        f = 1.15 if res["better"] == "lower" else 1 / 1.15
        res["samples"] = [[r, x, v * f] for r, x, v in res["samples"]]
        return True
    _scaled_copy(tmp, db, "a2", "a2-slower", slower)
    # against the run it was made from: only the 15% differs, not the machine's moods
    r = osmeter("compare", "a2", "a2-slower", "--fail-on-slower", "10", "--no-history",
                db=db)
    if r.returncode != 1:
        noisy = flagged(tmp, db, "a2", SCALED)
        if noisy:
            pytest.skip("cannot judge: the runs flagged the rows made slower (%s), so the "
                        "gate rightly left them ungated at 10%%" % "; ".join(noisy))
    assert r.returncode == 1, r.stdout + r.stderr
    failed = [line for line in r.stderr.splitlines() if line.startswith("osmeter: regression:")]
    assert failed and all(SCALED in line for line in failed), r.stderr


def test_zeros_in_some_repetitions_never_crash(two_runs):
    tmp, db = two_runs

    def zeros(res):
        if res["bench"] != "syscall.getpid" or res["shape"] == "derived":
            return False
        res["samples"] = [[r, x, 0.0 if r in (1, 3) else v] for r, x, v in res["samples"]]
        return True
    _scaled_copy(tmp, db, "a2", "a2-zeros", zeros)
    for extra in ([], ["--md"], ["--csv"], ["--json"]):
        r = osmeter("compare", "a1", "a2-zeros", "--fail-on-slower", "10", "--junit",
                    tmp / "g.xml", *extra, db=db)
        assert r.returncode in (0, 1, 3) and "Traceback" not in r.stderr, r.stderr
    osmeter("report", "a1", "a2-zeros", "-o", tmp / "r.html", db=db, check=0)
    for fmt in ("osmeter", "bmf", "pyperf", "github-smaller", "github-bigger", "long"):
        osmeter("export", "a2-zeros", "--format", fmt, "-o", tmp / ("e." + fmt), db=db,
                check=0)
