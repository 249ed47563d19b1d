"""The comparison and the gate on real runs of this machine (issue 25's proof by example).

Two runs of a few quick benchmarks, one after the other, nothing changed: no verdict
and the gate passes, in all but alpha (5%) of such pairs.  One pair cannot show a rate
and fails by chance now and then (here 2 of 30 pairs gave a verdict and 2 an undecided
gate, stop 38; one CI run failed on a "worse"), so the test makes PAIRS pairs, each in a
store of its own as a user's first two runs are, and fails when more of them show a
verdict, or a gate that does not pass, than a rate of 5% explains at level 1% (3 or more
of 6: 0.2% at 5%, 1.6% at 10%; 46% at a rate of 40%, issue 25's).  The second run's
syscall.* samples made 15% slower through export and import: the gate fails naming them.  Zeros in some repetitions: compare, report, the
gate and every export succeed.

Two runs of one machine only agree when nothing else moves it: on a busy machine (other
processes using more than MAX_OTHERS CPUs) the first two tests skip with the reason,
unless OSMETER_REAL_GATE=1 asks for them anyway (then a failure may be the load's).  A
quiet guest can still give noisy runs (another VM on the host): when the runs' own flags
call the scaled rows imprecise or disturbed, the gate rightly leaves them ungated, and
the slowdown test skips with the flags instead of failing.
"""
from __future__ import annotations

import json
import os
import sys
import time

import pytest

from binomial import most_explained
from clirun import osmeter
from osmeter.analysis import flags, monitor
from osmeter import stats
from osmeter.stats import significance as sig
from osmeter.data.model import Result, Sample

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="other processes' CPU time is read from /proc (Linux)")

SUBSET = ("syscall.getpid", "syscall.read", "syscall.stat", "lat.signal", "thread.mutex",
          "cpu.integer")
SCALED = "syscall."
MAX_OTHERS = 0.1          # CPUs' worth of other processes' time: quiet enough
PAIRS = 6                 # A/A pairs of runs, each in a store of its own


def others_busy(seconds: float = 3.0) -> float:
    before = monitor.Snapshot.take()
    time.sleep(seconds)
    seen = monitor.between(before, monitor.Snapshot.take())
    return (seen.other_cpu_s or 0.0) / seen.wall_s


@pytest.fixture(scope="module")
def aa_pairs(tmp_path_factory):
    """([(tmp dir, store)] of PAIRS pairs of runs a1 and a2, what other processes used
    before and during the runs in CPUs, the larger)."""
    busy = others_busy()
    before = monitor.Snapshot.take()
    pairs = []
    for i in range(PAIRS):
        tmp = tmp_path_factory.mktemp("real%d" % i)
        db = tmp / "db.sqlite"
        for label in ("a1", "a2"):
            osmeter("run", *SUBSET, "--preset", "quick", "--runs", "5", "--label", label,
                    "--quiet", db=db, check=0, timeout=900)
        pairs.append((tmp, db))
    seen = monitor.between(before, monitor.Snapshot.take())
    return pairs, max(busy, (seen.other_cpu_s or 0.0) / seen.wall_s)


@pytest.fixture(scope="module")
def two_runs(aa_pairs):
    """(tmp dir, store, what other processes used) of the first pair."""
    pairs, busy = aa_pairs
    return pairs[0] + (busy,)


def most_pairs(pairs: int, rate: float = sig.ALPHA, level: float = 0.01) -> int:
    """The most pairs of `pairs` that a rate of `rate` explains at `level`."""
    return most_explained(pairs, rate, level)


def need_quiet(busy: float) -> None:
    if busy > MAX_OTHERS and os.environ.get("OSMETER_REAL_GATE") != "1":
        pytest.skip("cannot judge A/A on a busy machine: other processes used %.2f CPUs "
                    "(load average %.2f; quiet is <= %.2f); OSMETER_REAL_GATE=1 runs it "
                    "anyway" % (busy, os.getloadavg()[0], MAX_OTHERS))
    print("other processes used %.2f CPUs before the runs (load average %.2f)"
          % (busy, os.getloadavg()[0]))


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


def test_most_pairs_is_the_binomial_bound():
    assert most_pairs(6) == 2 and most_pairs(6, rate=0.4) == 5 and most_pairs(12) == 3


def test_two_runs_minutes_apart_rarely_give_a_verdict_and_the_gate_passes(aa_pairs):
    pairs, busy = aa_pairs
    need_quiet(busy)
    verdicts, gates = [], []
    for tmp, db in pairs:
        r = osmeter("compare", "a1", "a2", "--fail-on-slower", "10", "--json", db=db)
        assert r.returncode in (0, 1, 3), r.stderr
        doc = json.loads(r.stdout)
        verdicts.append(["%s %s %s (ratio %s)" % (row["bench"], row["metric"],
                                                  c["verdict"]["word"], c.get("ratio"))
                         for row in doc["rows"] for c in row["cells"]
                         if c and c.get("verdict") and c["verdict"]["word"] in ("better",
                                                                                "worse")])
        gates.append(doc["regression_gate"]["outcome"])
        assert (r.returncode == 0) == (gates[-1] == "pass")
    print("A/A pairs: verdicts %s; gates %s" % (verdicts, gates))
    assert sum(1 for v in verdicts if v) <= most_pairs(len(pairs)), verdicts
    assert sum(1 for g in gates if g != "pass") <= most_pairs(len(pairs)), gates


def test_a_family_15_percent_slower_fails_the_gate_naming_its_rows(two_runs):
    tmp, db, busy = two_runs
    need_quiet(busy)

    def slower(res):
        if not res["bench"].startswith(SCALED) or res["shape"] == "derived":
            return False
        f = 1.15 if res["better"] == "lower" else 1 / 1.15
        res["samples"] = [[r, x, v * f] for r, x, v in res["samples"]]
        return True
    _scaled_copy(tmp, db, "a2", "a2-slower", slower)
    r = osmeter("compare", "a1", "a2-slower", "--fail-on-slower", "10", db=db)
    if r.returncode != 1:
        noisy = flagged(tmp, db, "a1", SCALED) + flagged(tmp, db, "a2", SCALED)
        if noisy:
            pytest.skip("cannot judge: the runs flagged the rows made slower (%s), so the "
                        "gate rightly left them ungated at 10%%" % "; ".join(noisy))
    assert r.returncode == 1, r.stdout + r.stderr
    failed = [line for line in r.stderr.splitlines() if line.startswith("osmeter: regression:")]
    assert failed and all(SCALED in line for line in failed), r.stderr


def test_zeros_in_some_repetitions_never_crash(two_runs):
    tmp, db, _ = two_runs          # busy or not: nothing may crash

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
