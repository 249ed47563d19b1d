"""Bencher Metric Format (BMF): {benchmark: {measure: {value, lower_value, upper_value}}}.

A benchmark is a result's label, the metric in it where the benchmark has several
('ctx.pipe_pingpong round_trip', 'mem.read [bytes=4096]'), so that its name stays the
same from run to run.  A measure is a unit and a direction, so a whole suite is gated
with a handful of Bencher thresholds (one per measure: `bencher run --threshold-measure
NAME ...`) instead of one per metric:

    latency          times, in ns (Bencher's built-in measure); ms and s converted
    throughput       operations per second (Bencher's built-in): ops/s, Mops/s, lps,
                     seeks/s converted
    bandwidth        MB/s (Mbit/s converted); higher is better
    size             bytes; lower is better
    percent-lower    %, lower is better (a loss rate)
    percent-higher   %, higher is better
    index            UnixBench's indices; higher is better

value is our median and lower_value/upper_value our interval of the median, at its own
level (docs/formats.md), so Bencher's thresholds can use them.  Lost: every sample,
warnings, notes and the system description; skipped and failed results are absent.
"""
from __future__ import annotations

import json

from . import Export, Format, measured, not_measured_note, unique_names

# (unit, better) -> (measure, factor to the measure's unit)
MEASURES = {
    ("ns", "lower"): ("latency", 1.0),
    ("us", "lower"): ("latency", 1e3),
    ("µs", "lower"): ("latency", 1e3),
    ("ms", "lower"): ("latency", 1e6),
    ("s", "lower"): ("latency", 1e9),
    ("ops/s", "higher"): ("throughput", 1.0),
    ("Mops/s", "higher"): ("throughput", 1e6),
    ("lps", "higher"): ("throughput", 1.0),
    ("seeks/s", "higher"): ("throughput", 1.0),
    ("MB/s", "higher"): ("bandwidth", 1.0),
    ("Mbit/s", "higher"): ("bandwidth", 1.0 / 8),
    ("bytes", "lower"): ("size", 1.0),
    ("%", "lower"): ("percent-lower", 1.0),
    ("%", "higher"): ("percent-higher", 1.0),
    ("index", "higher"): ("index", 1.0),
}


def measure_of(unit: str, better: str) -> tuple[str, float]:
    """The measure a result goes to, and the factor to its unit; a unit not listed gets a
    measure of its own ('<unit>-<better>')."""
    return MEASURES.get((unit, better), ("%s-%s" % (unit, better), 1.0))


def render(runs) -> Export:
    run = runs[0]
    report: dict[str, dict] = {}
    results = measured(run)
    names = unique_names(results)
    for r in results:
        measure, factor = measure_of(r.unit, r.better)
        s = r.summary
        metric = {"value": s["median"] * factor}
        if s.get("ci_low") is not None and s.get("ci_high") is not None:
            metric["lower_value"] = s["ci_low"] * factor
            metric["upper_value"] = s["ci_high"] * factor
        report.setdefault(names[id(r)], {})[measure] = metric
    return Export(json.dumps(report, indent=1) + "\n", not_measured_note(run), len(report))


FORMAT = Format("bmf", render, "Bencher Metric Format: the median with its interval as "
                "lower/upper value, in a few measures by unit and direction "
                "(bencher run --adapter json)")
