"""Runner internals: the ETA."""
import pytest

from osmeter.running import eta, plan
from osmeter.running.catalog import Catalog
from synth import fake_catalog


def test_eta_uses_the_registry_until_it_has_measurements():
    c = fake_catalog()
    items = [plan.PlanItem("a"), plan.PlanItem("b")]
    assert eta.remaining_seconds(c, items, 0, items[0], 3, 1, {}) == 90
    # "a" took a tenth of its estimate: "b" is expected to take less too, but one
    # benchmark is little evidence: its family's ratio (drawn towards 1 by a second:
    # 2/11) is drawn towards 1 by a tenth of a round (3 s of estimate).
    left = eta.remaining_seconds(c, items, 0, items[1], 3, 1, {"a": [1.0]})
    machine = (2 / 11 * 10 + 3) / (10 + 3)
    assert left == pytest.approx(20 * machine * 3 + 1 * 2)
    # two variants double everything; measured benchmarks take what they took
    assert eta.remaining_seconds(c, items, 2, items[0], 3, 2, {"a": [1.0], "b": [3.0]}) == 8
    # the second variant of the current item: one repetition of it less
    assert eta.remaining_seconds(c, items, 2, items[0], 3, 2, {"a": [1.0], "b": [3.0]},
                                 variant=1) == 7


def _catalog(estimates: dict) -> Catalog:
    return Catalog([{"id": b, "est_seconds": e, "params": [], "suites": [], "metrics": []}
                    for b, e in estimates.items()])


def test_benchmarks_that_skip_count_nothing():
    """A benchmark known to skip (a program not installed) is no time to come, and one
    that skipped says nothing about the machine's speed."""
    c = _catalog({"app.video": 300, "mem.read": 10, "mem.copy": 10})
    items = [plan.PlanItem(b) for b in ("app.video", "mem.read", "mem.copy")]
    assert eta.first_estimate(c, items, 2) == 640
    assert eta.first_estimate(c, items, 2, skipping={"app.video"}) == 40
    left = eta.remaining_seconds(c, items, 0, items[1], 2, 1, {"app.video": [0.01]},
                                 skipped={"app.video"})
    assert left == pytest.approx(20 + 0.01 + 20)


def test_the_first_short_benchmarks_do_not_swing_a_long_run():
    """A 0.1-s benchmark that took 1 s (process start-up) moves a 10-minute estimate by
    a few percent, not tenfold; a whole family that took 20 times its estimate moves
    the rest of that family, not the other families."""
    c = _catalog({"proc.a": 0.1, "fs.loop": 300, "fs.other": 300,
                  "mem.a": 1, "mem.b": 1, "mem.c": 1, "syscall.x": 10})
    names = ["proc.a", "fs.loop", "fs.other", "mem.a", "mem.b", "mem.c", "syscall.x"]
    items = [plan.PlanItem(b) for b in names]
    first = eta.first_estimate(c, items, 1)
    left = eta.remaining_seconds(c, items, 0, items[1], 1, 1, {"proc.a": [1.0]})
    assert left / first == pytest.approx(1, abs=0.05)
    took = {"proc.a": [0.1], "fs.loop": [300.0], "fs.other": [300.0], "mem.a": [20.0]}
    machine, by_family = eta.scales(c, items, took)
    assert machine == pytest.approx(1, abs=0.1) and by_family["mem"] > 10
    left = eta.remaining_seconds(c, items, 0, items[4], 1, 1, took)
    assert left == pytest.approx(2 * by_family["mem"] + 10 * machine)


def test_clock_paced_benchmarks_neither_set_the_scale_nor_take_it():
    """UnixBench's loops and the players take what a clock says, however fast the
    machine: a run whose other benchmarks took half their estimate still expects the
    91-s playback to take 91 s (the full suite's ETA was 55% short at half-way), and a
    UnixBench loop that took its time says nothing about the others."""
    c = _catalog({"app.convert": 10, "app.cpu.audio_play": 91, "ub.pipe": 50,
                  "fs.a": 10, "fs.b": 10})
    items = [plan.PlanItem(b) for b in ("app.convert", "fs.a", "app.cpu.audio_play",
                                        "ub.pipe", "fs.b")]
    took = {"app.convert": [5.0], "fs.a": [5.0]}
    left = eta.remaining_seconds(c, items, 0, items[2], 1, 1, took)
    machine, by_family = eta.scales(c, items, took)
    assert machine < 0.8 and by_family["app"] < 0.8 and by_family["fs"] < 0.8
    assert left == pytest.approx(91 + 50 + 10 * by_family["fs"])
    took = {"ub.pipe": [500.0]}            # ten times its estimate: no scale from it
    assert eta.scales(c, items, took) == (1.0, {})


def test_the_countdown_moves_within_an_item(monkeypatch):
    """Between two benchmarks the ETA counts down with the clock, down to what the
    items after the current one will take, and no further."""
    now = [100.0]
    monkeypatch.setattr(eta.time, "monotonic", lambda: now[0])
    cd = eta.Countdown()
    cd.start(120.0, 70.0)       # a 50-s item, then 70 s of others
    assert cd.now() == 120
    now[0] += 30
    assert cd.now() == 90
    now[0] += 40                # the item overran its estimate
    assert cd.now() == 70


def test_the_ticker_redraws_the_progress_line_with_a_moving_eta():
    """During one long item the progress line is redrawn with the countdown's ETA."""
    import time
    from osmeter.running import runner
    shown = []

    class Line:
        def show(self, what, left):
            shown.append((what, left))
    cd = eta.Countdown()
    cd.start(50.0, 0.0)
    ticker = runner.Ticker(Line(), cd, every=0.02)
    ticker.what = "ub.loop (1/1)"
    time.sleep(0.3)
    ticker.stop()
    assert len(shown) >= 3 and all(w == "ub.loop (1/1)" for w, _ in shown)
    lefts = [left for _, left in shown]
    assert lefts == sorted(lefts, reverse=True) and lefts[0] > lefts[-1]


def test_remembered_times_replace_the_estimates_but_not_with_a_skip():
    """What a benchmark took on this host last time is its estimate now; a benchmark
    that skipped then (0 s) keeps the core's estimate (it may run now)."""
    c = _catalog({"app.video": 300, "mem.read": 1})
    timings = [{"suite": None, "smoke": False, "skipped_known": [],
                "steps": {"mem.read": {"measured_s": [30.0, 31.0, 29.0]},
                          "app.video": {"measured_s": [0.01], "skipped": True}}},
               {"suite": None, "smoke": False, "skipped_known": ["app.video"],   # older
                "steps": {"mem.read": {"measured_s": [5.0]},
                          "app.video": {"measured_s": [0.02]}}}]
    known = eta.Remembered(c, timings)
    items = [plan.PlanItem("app.video"), plan.PlanItem("mem.read")]
    assert known.estimate(items[1]) == 30.0          # the newest run's median
    assert known.estimate(items[0]) == 300
    assert eta.first_estimate(known, items, 2) == 660
    # at the quick preset nothing was remembered: the core's estimate
    assert known.estimate(plan.PlanItem("mem.read", preset="quick")) == 1


def test_a_round_slower_than_the_earlier_ones_slows_the_rest():
    """The load of a shared machine changes over a run: when this round's benchmarks
    take twice what they took before, so are the rest expected to (drawn towards the
    earlier times by a twentieth of a round)."""
    c = _catalog({"a": 10, "b": 10})
    items = [plan.PlanItem("a"), plan.PlanItem("b")]
    took = {"a": [10.0, 20.0], "b": [10.0]}
    prior = 0.05 * (15 + 10)
    assert eta.drift(items, took, 1, 1) == pytest.approx((20 + prior) / (10 + prior))
    left = eta.remaining_seconds(c, items, 1, items[1], 2, 1, took)
    assert left == pytest.approx(10 * (20 + prior) / (10 + prior))
    assert eta.drift(items, took, 0, 1) == 1.0          # the first round: nothing to say


def test_a_far_core_is_timed_by_the_far_machines_own_runs(monkeypatch):
    """With --core the ETA remembers the runs of the machine the core runs on (a guest
    took 8 minutes where this host's timings said 2)."""
    from osmeter.commands import run as run_command
    from osmeter.running import coreproc
    asked = []

    class Store:
        def recent_timings(self, host):
            asked.append(host)
            return []

    monkeypatch.setattr(coreproc, "core_sysinfo", lambda: {"uname": {"nodename": "guest"}})
    run_command.remembered(fake_catalog(), Store(), far=True)
    run_command.remembered(fake_catalog(), Store())
    import socket
    assert asked == ["guest", socket.gethostname()]
