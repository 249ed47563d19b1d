"""Runner internals: the ETA."""
from osmeter import eta, plan
from synth import fake_catalog


def test_eta_uses_the_registry_until_it_has_measurements():
    c = fake_catalog()
    items = [plan.PlanItem("a"), plan.PlanItem("b")]
    assert eta.remaining_seconds(c, items, 0, items[0], 3, 1, {}) == 90
    # "a" took a tenth of its estimate: "b" is expected to as well.
    assert eta.remaining_seconds(c, items, 0, items[1], 3, 1, {"a": [1.0]}) == 8
    # two variants double everything
    assert eta.remaining_seconds(c, items, 2, items[0], 3, 2, {"a": [1.0], "b": [3.0]}) == 8
