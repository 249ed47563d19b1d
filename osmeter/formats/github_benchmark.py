"""github-action-benchmark's custom tools: a list of {name, unit, value, range, extra}.

The action takes one direction per file, so there are two formats: github-smaller
(tool: customSmallerIsBetter) holds the results where lower is better, github-bigger
(customBiggerIsBetter) those where higher is better.  value is our median; range is
"± h", h the larger half of our interval (the action wants one symmetric number and
rescales it with the unit), and extra states the interval itself with its level, the
repetitions and any reliability warning.  Lost: every sample, notes and the system description; skipped
and failed results are absent.
"""
from __future__ import annotations

import json

from .. import flags, stats
from . import Export, Format, count_note, measured, not_measured_note, unique_names


def _number(v: float) -> str:
    return "%.6g" % v


def entry(r, name: str) -> dict:
    s = r.summary
    out = {"name": name, "unit": r.unit, "value": s["median"]}
    extra = []
    lo, hi = s.get("ci_low"), s.get("ci_high")
    if lo is not None and hi is not None:
        out["range"] = "± %s" % _number(max(s["median"] - lo, hi - s["median"], 0.0))
        level = s.get("ci_level")
        extra.append("%sinterval: %s to %s %s" % (
            "%s%% " % stats.fmt_percent(level) if level is not None else "",
            _number(lo), _number(hi), r.unit))
    if s.get("repetitions"):
        extra.append("repetitions: %d (%d samples)" % (s["repetitions"], s.get("n", 0)))
    for f in flags.of(r):
        extra.append("%s: %s" % (f.kind, f.text))
    if extra:
        out["extra"] = "\n".join(extra)
    return out


def _render(runs, better: str, other_format: str) -> Export:
    run = runs[0]
    results = measured(run)
    names = unique_names(results)
    chosen = [r for r in results if r.better == better]
    left = not_measured_note(run) + count_note(
        len(results) - len(chosen), "result(s) where %s is better: in --format %s"
        % ("higher" if better == "lower" else "lower", other_format))
    return Export(json.dumps([entry(r, names[id(r)]) for r in chosen], indent=1) + "\n",
                  left, len(chosen))


def render_smaller(runs) -> Export:
    return _render(runs, "lower", "github-bigger")


def render_bigger(runs) -> Export:
    return _render(runs, "higher", "github-smaller")


SMALLER = Format("github-smaller", render_smaller, "github-action-benchmark, tool "
                 "customSmallerIsBetter: the results where lower is better")
BIGGER = Format("github-bigger", render_bigger, "github-action-benchmark, tool "
                "customBiggerIsBetter: the results where higher is better")
