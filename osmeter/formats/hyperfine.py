"""hyperfine's --export-json for whole-process timings (cmd.* and app.*), so hyperfine's
scripts (plot_whisker, plot_histogram, advanced_statistics, welch_ttest, ...) read them.

One hyperfine result per benchmark: `times` are the wall-clock samples of every
repetition in seconds, mean/stddev/median/min/max are computed over them as hyperfine
does, `user` and `system` are the means of the user and system CPU time samples,
`memory_usage_byte` the peak resident sizes, and `exit_codes` zero for every time (a
run whose command failed fails its repetition, so no time of a failed run is kept).
`command` is the command line for `cmd.NAME` and the benchmark id for `app.*`;
`parameters` are the benchmark's parameters other than the command and its timing.
Lost: the repetition each time came from, osmeter's interval and warnings, the system
description, and every other benchmark (they do not time a whole process).
"""
from __future__ import annotations

import json
import shlex
import statistics

from . import Export, Format, count_note, not_measured_note

FAMILIES = ("cmd.", "app.")
# Parameters that say how the command ran rather than what it was.
NOT_PARAMETERS = {"argv", "name", "shell", "setup", "cleanup", "output", "samples", "warmup",
                  "timeout_s", "batch_ms", "cold_cache"}
TO_SECONDS = 1e-9          # the process metrics are in ns


def command_text(bench: str, params: dict) -> str:
    try:
        words = json.loads(params.get("argv", ""))
    except (TypeError, ValueError):
        words = None
    if isinstance(words, list) and words and all(isinstance(w, str) for w in words):
        return words[0] if params.get("shell") == "yes" else shlex.join(words)
    return bench


def _values(results: dict, metric: str, unit: str = "ns") -> list[float]:
    r = results.get(metric)
    if r is None or r.unit != unit:
        return []
    return [s.value for s in r.samples]


def render(runs) -> Export:
    run = runs[0]
    by_bench: dict[str, dict] = {}
    for r in run.results:
        if r.status == "ok" and r.shape == "point" and r.bench.startswith(FAMILIES):
            by_bench.setdefault(r.bench, {})[r.metric] = r
    out = []
    incomplete = 0
    for bench, results in by_bench.items():
        wall = [v * TO_SECONDS for v in _values(results, "wall")]
        user = [v * TO_SECONDS for v in _values(results, "user")]
        system = [v * TO_SECONDS for v in _values(results, "system")]
        if not wall or not user or not system:
            incomplete += 1
            continue
        params = results["wall"].params
        entry = {
            "command": command_text(bench, params),
            "mean": statistics.fmean(wall),
            "stddev": statistics.stdev(wall) if len(wall) > 1 else None,
            "median": statistics.median(wall),
            "user": statistics.fmean(user), "system": statistics.fmean(system),
            "min": min(wall), "max": max(wall), "times": wall,
        }
        rss = _values(results, "max_rss", "bytes")
        if len(rss) == len(wall):
            entry["memory_usage_byte"] = [int(v) for v in rss]
        entry["exit_codes"] = [0] * len(wall)
        scan = {k: str(v) for k, v in sorted(params.items()) if k not in NOT_PARAMETERS}
        if scan:
            entry["parameters"] = scan
        out.append(entry)
    others = len({r.bench for r in run.results if r.status == "ok"} - set(by_bench))
    left = not_measured_note(run) + count_note(
        others, "benchmark(s) that do not time a whole process (hyperfine holds cmd.* and "
        "app.*)") + count_note(incomplete, "benchmark(s) without wall, user and system times")
    return Export(json.dumps({"results": out}, indent=2) + "\n", left, len(out))


FORMAT = Format("hyperfine", render, "hyperfine --export-json of the cmd.* and app.* "
                "results (hyperfine's scripts read it)")
