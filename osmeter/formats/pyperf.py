"""pyperf's JSON (format version 1.0) for time results, so `python -m pyperf stats /
hist / compare_to` work on osmeter runs.

pyperf's model is ours: a benchmark is measured by several worker processes ("runs"),
each giving several values.  So every osmeter repetition (a separate process) becomes a
pyperf run whose values are that repetition's samples, in seconds (sizes such as a
program's peak RSS: in bytes, pyperf's "byte" unit); `loops` is the calibrated batch's
iteration count where the core recorded one per repetition (pyperf then reads a value
as a batch's time per iteration), and each run's metadata holds its `duration` (the
repetition's wall time, as osmeter's interference monitor measured it) and `date` (the
osmeter run's start: a repetition's own start is not recorded).  Each result (a sweep
point counts as one) is a pyperf benchmark named like osmeter's label.  Lost: results
that are neither times nor sizes where lower is better (pyperf's compare assumes lower
is better), scatter results (each value has its own population, so they are not
repetitions of one measurement), values that are not positive (pyperf refuses them),
osmeter's interval and warnings, and all but a few system facts (in the suite
metadata).  Results without a recorded batch size are counted on standard error.
"""
from __future__ import annotations

import json
import re

from . import Export, Format, count_note, measured, not_measured_note, unique_names

SECONDS_PER = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
BYTES_PER = {"bytes": 1, "B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}
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


def _count_at(noted, x) -> int | None:
    """One repetition's batch size: a number, or for a sweep the entry 'n=X: COUNT' of
    the result's coordinate X (the core notes one per size)."""
    if isinstance(noted, list):
        for entry in noted:
            m = re.fullmatch(r"\s*[^=:\s]+=([^:]+):\s*(\d+)\s*", str(entry))
            try:
                if m and x is not None and float(m.group(1)) == float(x):
                    return int(m.group(2))
            except ValueError:
                continue
        return None
    try:
        n = int(noted)
    except (TypeError, ValueError):
        return None
    return n if n >= 1 else None


def _loops_by_rep(result, reps: list[int]) -> dict[int, int]:
    """rep -> iterations per batch, where the core noted one per repetition."""
    noted = result.notes.get("iterations_per_batch")
    if noted is None:
        return {}
    per_rep = noted if isinstance(noted, list) and len(noted) == len(reps) \
        else [noted] * len(reps)
    out = {}
    for rep, n in zip(reps, per_rep):
        count = _count_at(n, result.x)
        if count is None:
            return {}
        out[rep] = count
    return out


def _durations_by_rep(result, reps: list[int]) -> dict[int, float]:
    """rep -> its wall time in seconds, from the interference monitor's notes."""
    noted = result.notes.get("interference")
    if not isinstance(noted, list) or len(noted) != len(reps):
        return {}
    out = {}
    for rep, entry in zip(reps, noted):
        wall = entry.get("wall_s") if isinstance(entry, dict) else None
        if isinstance(wall, (int, float)) and wall > 0:
            out[rep] = float(wall)
    return out


def render(runs) -> Export:
    run = runs[0]
    results = measured(run)
    names = unique_names(results)
    benchmarks = []
    not_time = scatter = no_samples = not_positive = no_loops = 0
    for r in results:
        if r.unit in SECONDS_PER and r.better == "lower":
            scale, unit = SECONDS_PER[r.unit], "second"
        elif r.unit in BYTES_PER and r.better == "lower":
            scale, unit = BYTES_PER[r.unit], "byte"
        else:
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
        by_rep: dict[int, list[float]] = {}
        for s in r.samples:
            by_rep.setdefault(s.rep, []).append(s.value * scale)
        loops = _loops_by_rep(r, sorted(by_rep))
        durations = _durations_by_rep(r, sorted(by_rep))
        if unit == "second" and not loops:
            no_loops += 1
        pyperf_runs = []
        for rep in sorted(by_rep):
            meta = {"osmeter_repetition": rep}
            if run.started:
                meta["date"] = run.started
            if rep in durations:
                meta["duration"] = durations[rep]
            if rep in loops:
                meta["loops"] = loops[rep]
            pyperf_runs.append({"values": by_rep[rep], "metadata": meta})
        benchmarks.append({"metadata": {"name": names[id(r)], "unit": unit},
                           "runs": pyperf_runs})
    left = not_measured_note(run) + count_note(
        not_time, "result(s) that are neither times nor sizes where lower is better "
        "(pyperf compares those)") + count_note(
        scatter, "scatter result(s): every value has its own population") + count_note(
        no_samples, "result(s) with a summary but no samples") + count_note(
        not_positive, "result(s) with values that are not positive (pyperf refuses them)") \
        + count_note(no_loops, "'loops' of time result(s) whose batch size the core does "
                     "not record (pyperf takes each value as one timing)")
    doc = {"version": JSON_VERSION, "benchmarks": benchmarks, "metadata": _metadata(run)}
    return Export(json.dumps(doc, indent=1) + "\n", left, len(benchmarks))


FORMAT = Format("pyperf", render, "pyperf JSON of the time results: each repetition a "
                "pyperf run (python -m pyperf stats / compare_to)")
