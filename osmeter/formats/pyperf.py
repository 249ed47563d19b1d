"""pyperf's JSON (format version 1.0) for time results, so `python -m pyperf stats /
hist / compare_to` work on osmeter runs.

pyperf's model is ours: a benchmark is measured by several worker processes ("runs"),
each giving several values.  So every osmeter repetition (a separate process) becomes a
pyperf run whose values are that repetition's samples, in seconds; `loops` is the
calibrated batch's iteration count where the core recorded one per repetition.  Each
result (a sweep point counts as one) is a pyperf benchmark named like osmeter's label.
Lost: results that are not times (pyperf's compare assumes lower is better and knows
seconds, bytes and plain numbers only), scatter results (each value has its own
population, so they are not repetitions of one measurement), values that are not
positive (pyperf refuses them), osmeter's interval and warnings, and all but a few
system facts (in the suite metadata).
"""
from __future__ import annotations

import json

from . import Export, Format, count_note, measured, not_measured_note, unique_names

SECONDS_PER = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
JSON_VERSION = "1.0"


def _metadata(run) -> dict:
    """A few system facts as pyperf suite metadata (non-empty one-line values only)."""
    si = run.sysinfo
    cpu, kernel, os_ = si.get("cpu") or {}, si.get("kernel") or {}, si.get("os") or {}
    facts = {
        "date": run.started, "hostname": si.get("hostname"),
        "cpu_model_name": cpu.get("model"), "cpu_count": cpu.get("threads"),
        "platform": " ".join(str(v) for v in (kernel.get("name"), kernel.get("release"),
                                              si.get("arch"), os_.get("name")) if v),
        "osmeter_run": run.id, "osmeter_label": run.label, "osmeter_suite": run.suite,
        "osmeter_version": run.osmeter_version,
        "osmeter_redacted": ", ".join((si.get("redacted") or {}).get("removed") or []),
    }
    out = {}
    for key, value in facts.items():
        if isinstance(value, str):
            value = " ".join(value.split())
        if value not in (None, "") and not isinstance(value, bool):
            out[key] = value
    return out


def _loops_by_rep(result, reps: list[int]) -> dict[int, int]:
    """rep -> iterations per batch, where the core noted one number per repetition."""
    noted = result.notes.get("iterations_per_batch")
    per_rep = noted if isinstance(noted, list) else [noted] * len(reps)
    if len(per_rep) != len(reps):
        return {}
    out = {}
    for rep, n in zip(reps, per_rep):
        try:
            n = int(n)
        except (TypeError, ValueError):
            return {}
        if n < 1:
            return {}
        out[rep] = n
    return out


def render(runs) -> Export:
    run = runs[0]
    results = measured(run)
    names = unique_names(results)
    benchmarks = []
    not_time = scatter = no_samples = not_positive = 0
    for r in results:
        if r.unit not in SECONDS_PER or r.better != "lower":
            not_time += 1
            continue
        if r.shape == "scatter":
            scatter += 1
            continue
        if not r.samples:
            no_samples += 1
            continue
        if any(s.value <= 0 for s in r.samples):
            not_positive += 1
            continue
        scale = SECONDS_PER[r.unit]
        by_rep: dict[int, list[float]] = {}
        for s in r.samples:
            by_rep.setdefault(s.rep, []).append(s.value * scale)
        loops = _loops_by_rep(r, sorted(by_rep))
        pyperf_runs = []
        for rep in sorted(by_rep):
            meta = {"osmeter_repetition": rep}
            if rep in loops:
                meta["loops"] = loops[rep]
            pyperf_runs.append({"values": by_rep[rep], "metadata": meta})
        benchmarks.append({"metadata": {"name": names[id(r)], "unit": "second"},
                           "runs": pyperf_runs})
    left = not_measured_note(run) + count_note(
        not_time, "result(s) that are not times (pyperf compares times)") + count_note(
        scatter, "scatter result(s): every value has its own population") + count_note(
        no_samples, "result(s) with a summary but no samples") + count_note(
        not_positive, "result(s) with values that are not positive (pyperf refuses them)")
    doc = {"version": JSON_VERSION, "benchmarks": benchmarks, "metadata": _metadata(run)}
    return Export(json.dumps(doc, indent=1) + "\n", left, len(benchmarks))


FORMAT = Format("pyperf", render, "pyperf JSON of the time results: each repetition a "
                "pyperf run (python -m pyperf stats / compare_to)")
