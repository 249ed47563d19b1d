"""Context switches, process life cycle, signals and readiness checks at smoke size."""
import pytest


def test_pingpong_reports_round_trip_and_its_parts(smoke):
    inv = smoke("ctx.pipe_pingpong")
    rt, ps, self_, est = (inv.values(m) for m in
                          ("round_trip", "per_switch", "pipe_self", "switch_minus_pipe"))
    assert len(rt) == 2
    for r, p, s, e in zip(rt, ps, self_, est):
        assert p == pytest.approx(r / 2)
        assert e == pytest.approx((r - 2 * s) / 2)
        assert 100 < r < 50_000_000 and s > 0
    assert inv.notes["placement"].startswith("all processes pinned")


def test_unpinned_placement_is_recorded(smoke):
    assert "unpinned" in smoke("ctx.pipe_pingpong", pin="none").notes["placement"]


@pytest.mark.parametrize("bench", ["ctx.pipe_ring", "ctx.pipe_chain_lifo"])
def test_token_sweeps_cover_every_n(smoke, bench):
    inv = smoke(bench, n="2,3,9")
    for n in (2, 3, 9):
        vals = inv.values("per_switch", n)
        assert len(vals) == 2 and all(50 < v < 50_000_000 for v in vals)


def test_ring_working_set_is_summed_by_every_process(smoke):
    """lmbench lat_ctx -s: each of the n processes sums its own array per hop, so a hop
    costs at least the sum (sum_self, one process) more than without; lmbench's figure is
    per_switch - sum_self."""
    plain = smoke("ctx.pipe_ring", n="2,8", samples=3)
    assert not plain.values("sum_self") and not plain.values("switch_minus_self")
    big = smoke("ctx.pipe_ring", n="2,8", size="512k", samples=3)
    assert "524288 bytes" in big.notes["timing"]
    for n in (2, 8):
        hop, self_, est = (big.values(m, n) for m in
                           ("per_switch", "sum_self", "switch_minus_self"))
        assert len(hop) == len(self_) == len(est) == 3
        for h, s, e in zip(hop, self_, est):
            assert e == pytest.approx(h - s)
        # 512 KB is 64k words: microseconds to sum, far above a pipe hop without it
        assert min(self_) > 3 * min(plain.values("per_switch", n)) / 2
        assert min(hop) > min(plain.values("per_switch", n)) + min(self_) / 2


def test_ring_refuses_more_processes_than_allowed(smoke):
    inv = smoke("ctx.pipe_ring", expect="failed", n="4097")
    assert "out of range" in inv.reason


@pytest.mark.parametrize("bench", ["proc.fork.dynamic", "proc.fork.static", "proc.exit.dynamic",
                                   "proc.exit.static", "proc.exec.dynamic", "proc.exec.static",
                                   "proc.fork_exit", "proc.fork_exec_exit", "proc.shell"])
def test_process_lifecycle_is_plausible(smoke, bench):
    inv = smoke(bench)
    assert inv.header["static"] == bench.endswith(".static")
    assert inv.notes["linkage"] == ("static" if bench.endswith(".static") else "dynamic")
    # A process costs microseconds to milliseconds, never nothing and never seconds.
    assert all(1_000 < v < 1_000_000_000 for v in inv.values("latency")), inv.samples


def test_exec_costs_more_than_fork(smoke):
    fork = min(smoke("proc.fork.dynamic", samples=3).values("latency"))
    exec_ = min(smoke("proc.exec.dynamic", samples=3).values("latency"))
    assert exec_ > fork


def test_signal_install_and_catch(smoke):
    inv = smoke("lat.signal")
    assert all(10 < v < 1_000_000 for v in inv.values("install") + inv.values("catch"))
    assert min(inv.values("catch")) > min(inv.values("install"))


def test_signal_reports_lmbenchs_catch_without_the_send(smoke):
    """lmbench lat_sig subtracts kill(pid, 0) from its catch figure; osmeter times that
    call after each catch batch and reports it and the difference, sample by sample."""
    inv = smoke("lat.signal", samples=3)
    catch, kill0, diff = (inv.values(m) for m in ("catch", "kill0", "catch_minus_kill0"))
    assert len(catch) == len(kill0) == len(diff) == 3
    for c, k, d in zip(catch, kill0, diff):
        assert d == pytest.approx(c - k)
        assert 10 < k < 1_000_000
    # a send without a signal costs less than a send that runs a handler
    assert min(kill0) < min(catch)


@pytest.mark.parametrize("bench", ["syscall.select", "syscall.poll", "syscall.epoll"])
def test_readiness_checks_report_three_configurations(smoke, bench):
    inv = smoke(bench)
    for metric in ("1_empty", "10_empty", "10_full"):
        assert all(10 < v < 1_000_000 for v in inv.values(metric))


def test_kqueue_is_skipped_with_a_reason_on_linux(smoke):
    import sys
    if not sys.platform.startswith("linux"):
        pytest.skip("kqueue exists here")
    inv = smoke("syscall.kqueue", expect="skipped")
    assert "kqueue is not available" in inv.reason and not inv.samples


def test_a_helper_that_cannot_be_executed_fails_quickly(tmp_path, monkeypatch):
    import shutil
    import time

    from osmeter.running import coreproc
    for name in ("osmeter-core", "osmeter-core-static"):
        shutil.copy2(coreproc.core_dir() / name, tmp_path / name)
    broken = tmp_path / "osmeter-helper-dynamic"
    broken.write_text("not a program\n")
    broken.chmod(0o755)
    monkeypatch.setenv("OSMETER_CORE_DIR", str(tmp_path))
    start = time.monotonic()
    inv = coreproc.invoke("proc.exec.dynamic", preset="smoke", timeout=60)
    assert inv.status == "failed" and "exec of the helper failed" in inv.reason
    assert time.monotonic() - start < 30   # never a wait for a byte that will not come


def ring_under_descriptor_limit(soft, hard):
    """ctx.pipe_ring over n=2,16,64,128 in a core whose RLIMIT_NOFILE is (soft, hard)."""
    import resource
    import subprocess

    from osmeter.running import coreproc

    def set_limit():   # in the core's process only
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    r = subprocess.run([str(coreproc.core_path()), "run", "ctx.pipe_ring", "n=2,16,64,128",
                        "samples=1", "batch_ms=1"], capture_output=True, text=True,
                       timeout=120, preexec_fn=set_limit)
    assert r.returncode == 0, r.stderr
    inv = coreproc.parse_lines("ctx.pipe_ring", r.stdout.splitlines())
    assert inv.status == "ok", inv.reason
    return inv


def test_ring_ends_its_curve_at_the_descriptor_limit_and_says_so():
    inv = ring_under_descriptor_limit(200, 200)
    assert sorted({x for _, x, _ in inv.samples}) == [2, 16, 64]
    assert inv.notes["curve_end"] == ("stopped before n=128: 128 processes need 272 "
                                      "descriptors; RLIMIT_NOFILE is 200 (ulimit -n raises it)")


def test_ring_raises_its_soft_descriptor_limit_to_the_hard_one():
    """Soft 200, hard 1024: 128 processes need 272 descriptors, which the hard limit
    allows, so the curve goes on instead of ending at the soft limit."""
    inv = ring_under_descriptor_limit(200, 1024)
    assert sorted({x for _, x, _ in inv.samples}) == [2, 16, 64, 128]
    assert "curve_end" not in inv.notes


def test_every_static_benchmark_runs_in_the_static_core():
    """OM_STATIC_CORE in the table, not the name, sends a benchmark to the static twin;
    the ids that end in .static are the ones so marked."""
    from osmeter.running import coreproc
    from osmeter.running.catalog import Catalog
    static = [b for b in Catalog().by_id if b.endswith(".static")]
    assert len(static) == 5
    for bench in static:
        inv = coreproc.invoke(bench, preset="smoke", timeout=120)
        if inv.status == "skipped" and "static" in inv.reason:
            continue   # no static linking on this system
        assert inv.status == "ok" and inv.header["static"] is True, (bench, inv.reason)


def test_the_study_sizes_of_the_ring_reach_1024_processes():
    from osmeter.running.catalog import Catalog
    n = Catalog().param("ctx.pipe_ring", "n")
    assert n["default"].split(",")[-1] == "1024"
    assert "ctx.pipe_ring" in Catalog().suite("lb96")


@pytest.mark.parametrize("what", ["fork", "exec"])
def test_static_programs_fork_and_exec_faster_than_dynamic_ones(what):
    """McGarry's Table 1: static linking makes process creation and program load cheaper
    (fewer pages to copy, no dynamic loader).  Physics, not a unit test: the two are
    measured alternately, so that the machine's state hits both alike, and the best of
    each is compared (the minimum is what the operation costs without interference)."""
    from osmeter.running import coreproc
    best = {"static": float("inf"), "dynamic": float("inf")}
    for _ in range(5):
        for link in best:
            inv = coreproc.invoke("proc.%s.%s" % (what, link), preset="smoke", timeout=120,
                                  params={"samples": "3"})
            if inv.status == "skipped":
                pytest.skip(inv.reason)
            assert inv.status == "ok", inv.reason
            best[link] = min(best[link], *inv.values("latency"))
    assert best["static"] < best["dynamic"], best
