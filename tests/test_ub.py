"""UnixBench-style items: loops per second at smoke size, and the index derivation."""
import pytest

from osmeter.analysis.families import ub
from osmeter.data.model import Result, Sample

ITEMS = ["ub.syscall", "ub.pipe", "ub.ctx", "ub.spawn", "ub.execl"]


@pytest.mark.parametrize("bench", ITEMS)
def test_items_report_loops_per_second(smoke, bench):
    inv = smoke(bench)
    lps = inv.values("lps")
    assert len(lps) == 2
    # Plausible on anything from a slow VM to a fast machine, never a placeholder.
    assert all(1 < v < 1e9 for v in lps)
    assert int(inv.notes["loops_per_batch"]) >= 1
    if bench in ("ub.ctx", "ub.spawn", "ub.execl"):
        assert inv.notes["placement"].startswith("unpinned")   # as UnixBench runs it


@pytest.mark.parametrize("bench,unixbench", [("ub.syscall", "10 x 10 s"), ("ub.execl", "3 x 30 s")])
def test_the_duration_run_is_noted_beside_unixbench_s(smoke, bench, unixbench):
    # Shorter batches than UnixBench's samples: the result says what ran and what
    # UnixBench runs, from the parameters actually used.
    inv = smoke(bench, samples="2", batch_ms="30")
    assert inv.notes["duration"] == "2 x 0.03 s (UnixBench 4.1.0: %s)" % unixbench


def test_pinning_is_available(smoke):
    assert smoke("ub.ctx", pin="same").notes["placement"].startswith("all processes pinned")


def test_baselines_are_unixbench_georges():
    assert {k: v[1] for k, v in ub.BASELINES.items()} == {
        "ub.syscall": 15000.0, "ub.pipe": 12440.0, "ub.ctx": 4000.0, "ub.spawn": 126.0,
        "ub.execl": 43.0}


def lps_result(bench, values_by_rep):
    samples = [Sample(rep, None, v) for rep, vals in enumerate(values_by_rep) for v in vals]
    from osmeter import stats
    return Result(bench=bench, metric="lps", unit="lps", better="higher", shape="point",
                  samples=samples, summary=stats.summarize(samples))


def test_index_is_ten_times_measured_over_baseline_with_its_interval():
    r = lps_result("ub.pipe", [[124400, 124400], [248800, 248800], [186600, 186600]])
    (idx,) = ub.derive("ub.pipe", [r], {})
    assert idx.bench == "ub.pipe" and idx.metric == "index" and idx.shape == "derived"
    assert idx.better == "higher" and idx.unit == "index"
    assert idx.summary["median"] == pytest.approx(10 * r.summary["median"] / 12440)
    assert idx.summary["median"] == pytest.approx(150.0)
    assert idx.summary["ci_low"] == pytest.approx(10 * r.summary["ci_low"] / 12440)
    assert idx.summary["ci_high"] == pytest.approx(10 * r.summary["ci_high"] / 12440)
    assert idx.summary["ci_low"] < idx.summary["ci_high"]
    assert len(idx.samples) == 6 and idx.extra["baseline_lps"] == 12440
    assert "SPARCstation 20-61" in idx.extra["baseline_source"]
    assert r.extra["unixbench_index"] == pytest.approx(150.0)


def test_failed_items_get_no_index_number():
    r = Result(bench="ub.execl", metric="lps", unit="lps", better="higher", shape="point",
               status="failed", reason="helper missing")
    (idx,) = ub.derive("ub.execl", [r], {})
    assert idx.status == "failed" and not idx.samples and not idx.summary


def test_other_benchmarks_are_left_alone():
    assert ub.derive("syscall.getpid", [lps_result("syscall.getpid", [[1.0]])], {}) == []


def test_cli_prints_the_index(tmp_path):
    from clirun import osmeter
    from osmeter.data.store import Store
    db = tmp_path / "db.sqlite"
    r = osmeter("run", "ub.syscall", "--smoke", "--runs", "2", "--quiet", db=db, check=0)
    assert "ub.syscall index" in r.stdout
    run = Store(db).load_run("latest")
    idx = [x for x in run.results if x.metric == "index"][0]
    lps = [x for x in run.results if x.metric == "lps"][0]
    assert idx.summary["median"] == pytest.approx(10 * lps.summary["median"] / 15000)
