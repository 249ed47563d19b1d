"""Runner internals: the ETA, merging notes, results from invocations."""
from osmeter import plan, runner
from osmeter.catalog import Catalog
from osmeter.coreproc import Invocation
from osmeter.monitor import Interference


def fake_catalog():
    def bench(bid, est):
        return {"id": bid, "est_seconds": est, "params": [], "suites": [],
                "metrics": [{"name": "latency", "unit": "ns", "better": "lower",
                             "shape": "point", "x_name": None}]}
    return Catalog([bench("a", 10), bench("b", 20)])


def test_eta_uses_the_registry_until_it_has_measurements():
    c = fake_catalog()
    items = [plan.PlanItem("a"), plan.PlanItem("b")]
    assert runner._remaining_seconds(c, items, 0, items[0], 3, 1, {}) == 90
    # "a" took a tenth of its estimate: "b" is expected to as well.
    assert runner._remaining_seconds(c, items, 0, items[1], 3, 1, {"a": [1.0]}) == 8
    # two variants double everything
    assert runner._remaining_seconds(c, items, 2, items[0], 3, 2, {"a": [1.0], "b": [3.0]}) == 8


def test_notes_merge_to_one_value_or_the_list():
    assert runner.merge_notes([{"p": "cpu 1", "i": "5"}, {"p": "cpu 1", "i": "7"}]) == \
        {"p": "cpu 1", "i": ["5", "7"]}


def test_failed_repetitions_are_counted_not_hidden():
    c = fake_catalog()
    ok = Invocation("a", status="ok", samples=[("latency", None, 10.0), ("latency", None, 11.0)])
    bad = Invocation("a", status="failed", reason="core killed by signal 9")
    reps = [(0, ok, Interference()), (1, bad, Interference())]
    [res] = runner.results_for_bench(c.by_id["a"], reps)
    assert res.status == "ok" and res.summary["n"] == 2
    assert any("1 of 2 repetitions did not complete: core killed by signal 9" in w
               for w in res.warnings)
    [res] = runner.results_for_bench(c.by_id["a"], [(0, bad, Interference())])
    assert res.status == "failed" and res.reason == "core killed by signal 9" and not res.samples
