"""Adaptive repetitions (--until-ci PCT --max-runs N): repeat only what is still too
wide, interleaved, within the user's bound, and say what happened."""
import math
import random

import pytest

from clirun import osmeter
from osmeter.analysis import adaptive, monitor
from osmeter.running import coreproc, plan, runner
from osmeter.system import fsinfo, sysinfo
from synth import fake_catalog


@pytest.fixture
def fake_core(monkeypatch):
    """Benchmark "a" measures 100 ns within 0.1%; "b" scatters by 30%, each in batches
    (three samples a repetition: a single 100 ns timing would be too short to time
    alone).  Records the order in which the runner asked for repetitions."""
    rng = random.Random(8)
    calls = []

    def invoke(bench, **kw):
        calls.append(bench)
        spread = 0.001 if bench == "a" else 0.3
        level = 100 * (1 + rng.gauss(0, spread))
        return coreproc.Invocation(bench=bench, status="ok", header={"params": {}},
                                   samples=[("latency", None, level)] * 3)
    monkeypatch.setattr(coreproc, "invoke", invoke)
    monkeypatch.setattr(coreproc, "core_version", lambda: {})
    monkeypatch.setattr(sysinfo, "collect", lambda build: {"hostname": "sim"})
    monkeypatch.setattr(fsinfo, "describe", lambda path: {})
    monkeypatch.setattr(monitor, "before_run", lambda: {"warnings": []})
    return calls


def test_only_the_wide_benchmark_is_repeated_up_to_the_bound(fake_core):
    items = [plan.PlanItem("a"), plan.PlanItem("b")]
    opts = plan.Options(runs=6, progress=False, until_ci=2.0, max_runs=11)
    (run,) = runner.execute(fake_catalog(), items, [plan.Variant()], opts)
    # Seven interleaved rounds of both (the first look), then "b" alone until the bound.
    assert fake_core == ["a", "b"] * 7 + ["b"] * 4
    a = next(r for r in run.results if r.bench == "a")
    b = next(r for r in run.results if r.bench == "b")
    assert a.summary["repetitions"] == 7 and b.summary["repetitions"] == 11
    # The stored interval is the last look's, which holds at 95% over all the looks.
    assert a.summary["ci_level"] == 0.95 and a.extra["until_ci"]["looks"] == 1
    assert b.extra["until_ci"]["looks"] == 5
    assert a.extra["until_ci"]["reached"] and a.extra["until_ci"]["half_width_pct"] < 2
    assert not b.extra["until_ci"]["reached"] and b.extra["until_ci"]["repetitions"] == 11
    lines = adaptive.summary_lines(run)
    assert lines[0].startswith("--until-ci 2%: 1 of 2 benchmark(s) reached")
    assert "not reached after 11 repetitions (--max-repetitions): b (+-" in lines[1]


def test_without_until_ci_nothing_changes(fake_core):
    items = [plan.PlanItem("a"), plan.PlanItem("b")]
    (run,) = runner.execute(fake_catalog(), items, [plan.Variant()],
                            plan.Options(runs=3, progress=False))
    assert fake_core == ["a", "b"] * 3
    assert all("until_ci" not in r.extra for r in run.results)


def test_the_looks_spend_the_five_percent():
    levels = [adaptive.look_level(j) for j in range(1, 200)]
    assert levels[0] == pytest.approx(0.975) and levels[1] == pytest.approx(1 - 0.05 / 6)
    assert sum(1 - x for x in levels) < 0.05
    assert adaptive.first_look() == 7
    values = [100.0, 101, 99, 100.5, 99.5, 100.2, 99.8]
    lo, hi, level = adaptive.sequential_interval(values, 1)
    assert (lo, hi) == (99, 101) and level >= 0.975
    assert adaptive.sequential_interval(values, 2) is None     # 7 values cannot reach 99.2%
    assert adaptive.relative_half_width(values, 1) == pytest.approx(0.01, rel=0.01)


def test_until_ci_end_to_end_and_its_bad_input(tmp_path):
    db = tmp_path / "db.sqlite"
    r = osmeter("run", "syscall.getppid", "--smoke", "--until-ci", "100000", "--max-runs", "8",
                "--quiet", db=db, check=0)
    assert "1 of 1 benchmark(s) reached" in r.stdout and "(7 repetitions)" in r.stdout
    for args, words in ((["--until-ci", "5"], "needs --max-repetitions"),
                        (["--max-runs", "9"], "needs --until-ci"),
                        (["--until-ci", "5", "--max-runs", "4"], "at least 7"),
                        (["--until-ci", "0", "--max-runs", "9"], "positive")):
        r = osmeter("run", "syscall.getppid", "--smoke", *args, db=db, check=2)
        assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_until_decided_repeats_only_what_cannot_tell_the_slowdown_yet(fake_core):
    # "a" (0.1% spread) tells a 5% slowdown at once; "b" (30%) never within 9 rounds.
    items = [plan.PlanItem("a"), plan.PlanItem("b")]
    opts = plan.Options(runs=5, progress=False, until_decided=5.0, max_runs=9)
    (run,) = runner.execute(fake_catalog(), items, [plan.Variant()], opts)
    assert fake_core == ["a", "b"] * 5 + ["b"] * 4
    a = next(r for r in run.results if r.bench == "a")
    b = next(r for r in run.results if r.bench == "b")
    assert a.extra["until_decided"]["decidable"] is True
    assert b.extra["until_decided"]["decidable"] is False
    assert b.summary["repetitions"] == 9
    lines = adaptive.decided_lines(run)
    assert lines[0] == "--until-decided 5%: 1 of 2 result(s) can tell a 5% slowdown from none"
    assert "still too noisy after 9 repetitions (--max-repetitions): b" in lines[1]


def test_until_decided_bad_input(tmp_path):
    db = tmp_path / "db.sqlite"
    for args, words in ((["--until-decided", "5"], "needs --max-repetitions"),
                        (["--until-decided", "5", "--until-ci", "5", "--max-runs", "9"],
                         "exclude each other"),
                        (["--against", "x"], "needs --until-decided"),
                        (["--until-decided", "5", "--max-runs", "9", "--against", "nosuch"],
                         "--against nosuch")):
        r = osmeter("run", "syscall.getppid", "--smoke", *args, db=db, check=2)
        assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def _point_run(run_id, rows, rng, reps, cv=0.03):
    """rows {bench: factor}: one point result each, `reps` repetitions."""
    from osmeter.data.model import Result, Run, Sample
    res = []
    for b, f in rows.items():
        vals = [1000.0 * f * math.exp(rng.gauss(0, cv)) for _ in range(reps)]
        res.append(Result(bench=b, metric="latency", unit="ns", better="lower",
                          shape="point", samples=[Sample(r, None, v) for r, v in
                                                  enumerate(vals)],
                          summary={"median": sorted(vals)[reps // 2], "repetitions": reps}))
    return Run(id=run_id, label=run_id, started="", status="complete", results=res,
               sysinfo={"hostname": "sim"})


def test_until_decided_stops_exactly_when_the_gate_decides():
    """Issue 40: --until-decided never stopped early (0 of N results 'could tell' a 10%
    slowdown) while the gate on the same data decided every row.  Now its rule is the
    gate's: on 30 pairs of runs (some rows 2x slower, some unchanged, some noisy), a
    result is 'decided' exactly when the gate passes or fails its row."""
    from osmeter.analysis import compare, gate
    rng = random.Random(3)
    rows = {"b%d" % k: f for k, f in enumerate([1.0, 1.0, 2.0, 2.0, 1.05, 1.1])}
    agree = decided = 0
    for trial in range(30):
        reps = rng.choice([5, 8, 12])
        base = _point_run("a", {b: 1.0 for b in rows}, rng, 5)
        cand = _point_run("b", rows, rng, reps, cv=rng.choice([0.01, 0.03, 0.2]))
        adaptive.record_decided(cand, 10.0, 30, base, 5)
        g = gate.evaluate(compare.compare([base, cand]), 10.0)
        for row in g.rows:
            r = next(x for x in cand.results if x.bench == row.bench)
            by_gate = row.outcome in (gate.PASS, gate.FAIL)
            agree += r.extra["until_decided"]["decidable"] is by_gate
            decided += by_gate
    assert agree == 30 * len(rows) and decided > 60
