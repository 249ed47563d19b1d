"""Bencher Metric Format (BMF): {benchmark: {measure: {value, lower_value, upper_value}}}.

A benchmark is a bench id with its sweep coordinate ('mem.read [bytes=4096]'); a measure
is the metric with its unit ('wall (ns)'), except that a latency in nanoseconds is
Bencher's built-in 'latency' measure.  value is our median and lower_value/upper_value
our interval of it (95% from 6 repetitions on, lower with fewer: the level is in
osmeter's own export), so Bencher's thresholds can use them.  Lost: every sample, the
direction (Bencher's thresholds say which side is bad), warnings, notes and the system
description; skipped and failed results are absent.
"""
from __future__ import annotations

import json

from . import Export, Format, count_note, measured, not_measured_note, point_name

MAX_MEASURE = 64        # Bencher's limit on a measure's name or slug


def measure_name(metric: str, unit: str) -> str:
    if metric == "latency" and unit == "ns":
        return "latency"
    return "%s (%s)" % (metric, unit)


def render(runs) -> Export:
    run = runs[0]
    report: dict[str, dict] = {}
    too_long = 0
    for r in measured(run):
        measure = measure_name(r.metric, r.unit)
        if len(measure) > MAX_MEASURE:
            too_long += 1
            continue
        s = r.summary
        metric = {"value": s["median"]}
        if s.get("ci_low") is not None and s.get("ci_high") is not None:
            metric["lower_value"] = s["ci_low"]
            metric["upper_value"] = s["ci_high"]
        report.setdefault(point_name(r), {})[measure] = metric
    left = not_measured_note(run) + count_note(
        too_long, "result(s) whose measure name is longer than Bencher's %d characters"
        % MAX_MEASURE)
    return Export(json.dumps(report, indent=1) + "\n", left, sum(map(len, report.values())))


FORMAT = Format("bmf", render, "Bencher Metric Format: median with its interval as "
                "lower/upper value (bencher run --adapter json)")
