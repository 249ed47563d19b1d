"""github-action-benchmark's custom tools: a list of {name, unit, value, range, extra}.

The action takes one direction per file, so there are two formats: github-smaller
(tool: customSmallerIsBetter) holds the results where lower is better, github-bigger
(customBiggerIsBetter) those where higher is better.  value is our median; range is
"± h", h the larger half of our interval of the median (the action wants one symmetric
number and rescales it with the unit), and extra states the interval itself with its
real level (93.8% with 5 repetitions, not "95%"), the repetitions and any reliability
warning.  A median of 0 (a CPU time below the kernel's resolution, no packet lost) is
left out, and said so: the action's smaller-is-better ratio from 0 is infinite, an
alert one repetition away.  Lost: every sample, notes and the system description;
skipped and failed results are absent.
"""
from __future__ import annotations

import json

from ..analysis import flags
from .. import stats
from . import Export, Format, count_note, measured, not_measured_note, unique_names


def _number(v: float) -> str:
    return "%.6g" % v


def level_text(summary: dict) -> str:
    """The interval's real level: '93.8%', 'at least 95%', or 'bootstrap' (old runs)."""
    interval = stats.interval_of(summary)
    if interval is None:
        return "no"
    level, method = interval[2], interval[3]
    if method == stats.BOOTSTRAP:
        return "bootstrap"
    return stats.AT_LEAST if level is None else "%s%%" % stats.fmt_percent(level)


def entry(r, name: str) -> dict:
    s = r.summary
    out = {"name": name, "unit": r.unit, "value": s["median"]}
    extra = []
    lo, hi = s.get("ci_low"), s.get("ci_high")
    if lo is not None and hi is not None:
        out["range"] = "± %s" % _number(max(s["median"] - lo, hi - s["median"], 0.0))
        extra.append("%s interval: %s to %s %s" % (level_text(s), _number(lo), _number(hi),
                                                  r.unit))
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
    direction = [r for r in results if r.better == better]
    chosen = [r for r in direction if r.summary["median"] != 0]
    left = not_measured_note(run) + count_note(
        len(results) - len(direction), "result(s) where %s is better: in --format %s"
        % ("higher" if better == "lower" else "lower", other_format)) + count_note(
        len(direction) - len(chosen), "result(s) with a median of 0 (the action's ratio "
        "from 0 is infinite)")
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
