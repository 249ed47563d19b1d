"""Putting a run next to a published number: the run's result in the paper's unit, or
why there is none ("not measured" only when the benchmark did not run), and a run's
curve class beside a published curve verdict.  The published numbers are
osmeter/data/references.py; the studies (osmeter/studies/) use this to lay themselves out, and
osmeter/studies/__init__.py to set a run against every reference.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import curves, remote
from ..data.references import RATES, UNITS, RefValue, convert


@dataclass
class Match:
    """A reference's counterpart in one run: the value in the reference's unit, or why
    there is none.  `why` is "not measured" only when the benchmark did not run."""
    value: float | None = None
    result: object = None
    why: str = ""
    detail: str = ""


LEVELS = ["L1", "L2", "L3", "L4", "memory"]


def _spans_level(metric: str, wanted: str) -> bool:
    """Whether a plateau metric ("bandwidth.plateau.L1-L2") spans the cache level another
    names ("bandwidth.plateau.L2"): the plateau-finder joins levels it cannot tell apart."""
    base, _, label = metric.partition(".plateau.")
    wbase, _, level = wanted.partition(".plateau.")
    ends = label.split("#")[0].split("-")
    if base != wbase or level not in LEVELS or not all(e in LEVELS for e in ends):
        return False
    return LEVELS.index(ends[0]) <= LEVELS.index(level) <= LEVELS.index(ends[-1])


def _sizes(results) -> str:
    xs = sorted({r.x for r in results if r.x is not None})
    return ", ".join("%g" % x for x in xs) or "none"


def measured(run, ref: RefValue) -> Match:
    # A remote or local configuration: the same experiment under either of its ids.
    same = {ref.bench} | ({b for b, local in remote.SAME_EXPERIMENT.items() if local == ref.bench}
                          if ref.remote is not None else set())
    mine = [r for r in run.results if r.bench in same]
    if not mine:
        return Match(why="not measured", detail="%s did not run (osmeter run %s)"
                     % (ref.bench, ref.bench))
    ok = [r for r in mine if r.status == "ok"]
    if not ok:
        return Match(why=mine[0].status, detail="%s %s: %s" % (ref.bench, mine[0].status,
                                                              mine[0].reason or ""))
    if ref.remote is not None:
        want = "remote" if ref.remote else "local"
        placed = [r for r in ok if (remote.where(run, r) or "local") == want]
        if not placed:
            return Match(why="not here", detail="%s ran only on a %s file system" % (
                ref.bench, "local" if ref.remote else "remote"))
        ok = placed
    cands = [r for r in ok if r.metric == ref.metric and (r.unit in UNITS or r.unit in RATES)]
    if not cands and ".plateau." in ref.metric:   # the first plateau that spans the level
        cands = [r for r in ok if _spans_level(r.metric, ref.metric)][:1]
    if not cands:
        if ".plateau." in ref.metric:
            label = ref.metric.rsplit(".", 1)[-1]
            return Match(why="not found", detail="no %s plateau in this run's %s curve "
                         "(sizes %s)" % (label, ref.bench, _sizes(ok)))
        return Match(why="not found", detail="%s has no metric %s" % (ref.bench, ref.metric))
    valued = [r for r in cands if r.median is not None]
    if ref.x is None:
        chosen = [r for r in valued if r.x is None]
    elif ref.x == "peak":
        sign = 1 if ref.better == "higher" else -1
        chosen = [max(valued, key=lambda r: sign * r.median)] if valued else []
    elif ref.x == "largest":
        sized = [r for r in valued if r.x is not None]
        chosen = [max(sized, key=lambda r: r.x)] if sized else []
    else:
        chosen = [r for r in valued if r.x is not None and float(r.x) == float(ref.x)]
    if len(chosen) != 1:
        return Match(why="not found", detail="%s ran without %s=%g (sizes %s)" % (
            ref.bench, cands[0].x_name or "x", float(ref.x), _sizes(cands))
            if isinstance(ref.x, (int, float)) else "%s: no value" % ref.bench)
    r = chosen[0]
    v = convert(r.median, r.unit, ref.unit)
    if v is None:
        return Match(why="not found", detail="%s in %s cannot be set against %s"
                     % (ref.bench, r.unit, ref.unit))
    return Match(value=v, result=r)


def speedup(ref: RefValue, ours: float) -> float | None:
    """How many times faster this machine is than the reference (> 1 = faster)."""
    if ours <= 0 or ref.value <= 0:
        return None
    return ref.value / ours if ref.better == "lower" else ours / ref.value


@dataclass
class RefRow:
    ref: RefValue
    ours: list[float | None]          # per run, in ref.unit
    speedups: list[float | None]
    labels: list[str | None]
    why: list[str] = field(default_factory=list)      # per run: "" or the reason kind
    detail: list[str] = field(default_factory=list)   # per run: the reason


def row(ref: RefValue, runs: list) -> RefRow:
    """One reference value next to each run's matching result, or the reason there is
    none ("not measured" only where the benchmark did not run)."""
    matches = [measured(run, ref) for run in runs]
    return RefRow(ref, [m.value for m in matches],
                  [speedup(ref, m.value) if m.value is not None else None for m in matches],
                  [m.result.label if m.result is not None else None for m in matches],
                  [m.why for m in matches], [m.detail for m in matches])


def curve_of(run, bench: str, metric: str) -> dict | None:
    """Our curve class of a benchmark in a run: the scatter's stored classification, or a
    sweep's points classified (every sample at its x) -- None when it did not run."""
    res = [r for r in run.results if r.bench == bench and r.metric == metric
           and r.status == "ok"]
    if not res:
        return None
    if res[0].shape == "scatter":
        c = (res[0].extra or {}).get("curve") or {}
        return c.get("all") or c
    pts = [(s.x, s.value) for r in res for s in r.samples if s.x is not None]
    return curves.classify(pts, detect_bands=False)
