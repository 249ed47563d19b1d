"""Curve classification on synthetic data of known shape."""
import json
import math
import random
import re

import pytest

from osmeter.analysis import curves
from osmeter.data.model import Sample


def make(shape, n=3000, noise=0.05, seed=1, x0=0):
    """n points (x, y) with y = shape(x) times log-normal-ish noise of `noise`."""
    rng = random.Random(seed)
    return [(x, shape(x) * (1 + rng.gauss(0, noise))) for x in range(x0, x0 + n)]


def test_constant():
    c = curves.classify(make(lambda x: 2000.0))
    assert c["class"] == "O(1)"
    assert c["cost"] == pytest.approx(2000, rel=0.02)
    assert c["cost_unit"] == "per operation"
    assert c["fit"]["value"] < 0.02  # bin medians stray <2% from the level


def test_linear_slope_is_recovered():
    c = curves.classify(make(lambda x: 1000 + 38 * x))
    assert c["class"] == "O(n)"
    assert c["cost"] == pytest.approx(38, rel=0.05)
    assert c["fit"]["value"] > 0.95 and c["fit"]["measure"].startswith("R^2")
    # The fitted polyline runs from about 1000 to about 1000 + 38 * 3000.
    assert c["fit_points"][0][1] == pytest.approx(1000 + 38 * c["fit_points"][0][0], rel=0.05)
    assert c["fit_points"][-1][1] == pytest.approx(1000 + 38 * c["fit_points"][-1][0], rel=0.05)
    assert re.fullmatch(r"O\(n\), \+3[789](\.\d)? ns per process \(×1\d\d over the range\)",
                        curves.describe(c, "processes"))


def test_small_linear_growth_on_a_large_base():
    # +30% over the range: a real O(n) term under a large constant cost, measurable but
    # too small to matter: O(1), with the trend, its slope and the growth reported.
    c = curves.classify(make(lambda x: 100_000 + 10 * x, noise=0.03))
    assert c["class"] == "O(1)" and c["trend"] == "O(n)"
    assert c["growth"] == pytest.approx(1.3, rel=0.05)
    assert c["slope_per_object"] == pytest.approx(10, rel=0.2)
    assert "×1.3 over the range: a O(n) trend, less than doubling" in curves.describe(c)


def test_a_drift_below_doubling_is_not_worse_than_constant():
    # scale.bind as measured here: 2.1 -> 3.5 us over 10,000 ports, bending upwards.
    c = curves.classify(make(lambda x: 2100 + 1.4e-5 * x * x, n=10000, noise=0.05))
    assert c["class"] == "O(1)" and c["trend"] == "O(n^2)/worse"
    assert c["growth"] == pytest.approx(3.5 / 2.1, rel=0.05)
    # The plotted fit follows the drift, not a flat line.
    assert c["fit_points"][-1][1] > 1.5 * c["fit_points"][0][1]


@pytest.mark.parametrize("factor,cls", [(1.8, "O(1)"), (2.5, "O(n)"), (0.4, "decreasing")])
def test_growth_of_two_is_where_a_curve_stops_being_constant(factor, cls):
    c = curves.classify(make(lambda x: 1000 + 1000 * (factor - 1) * x / 2999, noise=0.02))
    assert c["class"] == cls
    assert c["growth"] == pytest.approx(factor, rel=0.05)


def test_logarithmic():
    c = curves.classify(make(lambda x: 1000 + 300 * math.log2(1 + x), n=10000))
    assert c["class"] == "O(log n)"
    assert c["cost"] == pytest.approx(300, rel=0.1)
    assert c["cost_unit"] == "per doubling"
    assert "per doubling of sockets" in curves.describe(c, "sockets")


def test_quadratic():
    c = curves.classify(make(lambda x: 1000 + 0.001 * x * x))
    assert c["class"] == "O(n^2)/worse"
    # Marginal cost at the end: d/dx 0.001 x^2 = 0.002 x at x = 2999.
    assert c["cost"] == pytest.approx(0.002 * 2999, rel=0.1)


def test_exponential_counts_as_worse():
    c = curves.classify(make(lambda x: 1000 * math.exp(x / 600.0)))
    assert c["class"] == "O(n^2)/worse"


def test_decreasing():
    c = curves.classify(make(lambda x: 5000 - x))
    assert c["class"] == "decreasing"
    assert c["slope_per_object"] == pytest.approx(-1, rel=0.05)


def test_very_noisy_constant_stays_constant():
    c = curves.classify(make(lambda x: 2000.0, noise=0.5))
    assert c["class"] == "O(1)"


def test_outliers_do_not_bend_the_fit_and_are_counted():
    rng = random.Random(7)
    pts = make(lambda x: 1000 + 2 * x, seed=3)
    # 3% of the points hit by a 50x delay (an interrupt, a page-cache miss).
    pts = [(x, y * 50 if rng.random() < 0.03 else y) for x, y in pts]
    c = curves.classify(pts)
    assert c["class"] == "O(n)"
    assert c["cost"] == pytest.approx(2, rel=0.1)
    assert c["outliers"] > 50


def test_outliers_on_a_constant_curve():
    rng = random.Random(11)
    pts = [(x, 2000 * (1 + rng.gauss(0, 0.03)) * (100 if rng.random() < 0.05 else 1))
           for x in range(2000)]
    assert curves.classify(pts)["class"] == "O(1)"


def test_growth_below_ten_percent_is_constant():
    # +3% over the whole range: measurable, but not a scalability problem.
    c = curves.classify(make(lambda x: 10000 + 0.1 * x, noise=0.01))
    assert c["class"] == "O(1)"


def test_insufficient_data():
    assert curves.classify([(1, 2), (2, 3)])["class"] == "insufficient data"
    assert curves.classify([(5, float(v)) for v in range(50)])["class"] == "insufficient data"


def test_two_bands_are_detected():
    # FreeBSD 5.3's fork: many points fast, many at half speed.
    rng = random.Random(5)
    pts = [(x, (1000 if rng.random() < 0.5 else 2000) * (1 + rng.gauss(0, 0.03)))
           for x in range(3000)]
    c = curves.classify(pts)
    assert c["bimodal"]["ratio"] == pytest.approx(2, rel=0.1)
    shares = sorted(b["share"] for b in c["bimodal"]["bands"])
    assert shares[0] > 0.4


def test_alternating_constant_and_linear_bands():
    # Linux 2.4's fork: from point to point either an O(1) or an O(n) curve.
    rng = random.Random(9)
    pts = [(x, (3000 if rng.random() < 0.5 else 3000 + 5 * x) * (1 + rng.gauss(0, 0.02)))
           for x in range(400, 4000)]
    c = curves.classify(pts)
    assert c.get("bimodal"), c
    assert sorted(b["class"] for b in c["bimodal"]["bands"]) == ["O(1)", "O(n)"]


@pytest.mark.parametrize("noise", [0.02, 0.1, 0.3])
def test_one_band_is_not_bimodal(noise):
    rng = random.Random(13)
    # Right-skewed, as latencies are.
    pts = [(x, 1000 * math.exp(rng.gauss(0, noise))) for x in range(3000)]
    assert "bimodal" not in curves.classify(pts)


def samples_of(reps):
    return [Sample(rep, x, y) for rep, pts in enumerate(reps) for x, y in pts]


def test_summary_of_agreeing_repetitions():
    reps = [make(lambda x: 1000 + 38 * x, seed=s) for s in range(5)]
    s = curves.summarize_scatter(samples_of(reps), x_name="processes")
    assert s["class"] == "O(n)"
    assert re.fullmatch(r"O\(n\), \+3[789](\.\d)? ns per process \(×1\d\d over the range\)",
                        s["description"]), s["description"]
    assert s["agree"] and not s["disagreements"]
    assert s["fit_points"] == s["all"]["fit_points"]
    assert set(s["reps"]) == {"0", "1", "2", "3", "4"}
    assert all(r["class"] == "O(n)" for r in s["reps"].values())
    json.dumps(s, allow_nan=False)


def test_summary_flags_a_repetition_with_another_slope():
    reps = [make(lambda x: 1000 + 38 * x, seed=s) for s in range(3)]
    reps.append(make(lambda x: 1000 + 80 * x, seed=9))
    s = curves.summarize_scatter(samples_of(reps))
    assert not s["agree"]
    assert any("rep 3" in d and "slopes" in d for d in s["disagreements"])


def test_summary_flags_a_repetition_of_another_class():
    reps = [make(lambda x: 5000.0, seed=s) for s in range(3)]
    reps.append(make(lambda x: 5000 + 3 * x, seed=9))
    s = curves.summarize_scatter(samples_of(reps))
    assert not s["agree"]
    assert any("differ in class" in d for d in s["disagreements"])


def test_summary_flags_a_repetition_at_another_level():
    reps = [make(lambda x: 5000.0, seed=s) for s in range(3)]
    reps.append(make(lambda x: 9000.0, seed=9))
    s = curves.summarize_scatter(samples_of(reps))
    assert any("rep 3: typical cost" in d for d in s["disagreements"])


def test_summary_is_json_even_for_degenerate_input():
    s = curves.summarize_scatter([Sample(0, 1, 5.0), Sample(0, None, 3.0)])
    assert s["class"] == "insufficient data"
    json.dumps(s, allow_nan=False)
    s = curves.summarize_scatter(samples_of([[(x, 7.0) for x in range(100)]]))
    assert s["class"] == "O(1)"
    json.dumps(s, allow_nan=False)


def test_a_cold_start_does_not_tilt_a_flat_curve():
    # The first operations of a curve run with cold caches: 50% slower for 3% of it.
    pts = make(lambda x: 2400.0 * (1.5 if x < 300 else 1.0), n=10000, noise=0.1)
    assert curves.classify(pts)["class"] == "O(1)"
