"""From samples to results: the invocations of a run become Results (one per metric, per
x for sweeps) with their summaries, flags (disturbed: analysis/monitor.py; imprecise:
analysis/precision.py; analysis/flags.py) and notes; then the derived analysis (curve
classes of scatters, each family's own in analysis/families/).

A phase timed once per repetition that is too short to time alone becomes no row of its
own: it is reported as skipped with the reason, and counts only in its benchmark's
longer metrics.
"""
from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict

from . import curves, families, flags, monitor, precision
from ..data import note_keys
from .. import stats
from ..data.model import Result, Run, Sample
from ..base import numbers


def build_results(catalog, items: list, invs: dict,
                  at_rest: dict | None = None) -> list[Result]:
    """The results of one variant, in plan order (items: running/plan.py's PlanItems;
    catalog: running/catalog.py's Catalog, read by id); invs: result id -> the
    repetitions' (rep, coreproc.Invocation, monitor.Interference); at_rest: the
    machine's steal before the run (monitor.at_rest)."""
    results = []
    for item in items:
        reps = invs.get(item.result_id)
        if not reps:
            continue
        mine = results_for_bench(catalog.by_id[item.bench], reps, at_rest)
        for r in mine:   # a user's command is stored under its own name
            r.bench = item.result_id
        results += mine
    return results


def results_for_bench(meta: dict, reps: list, at_rest: dict | None = None) -> list[Result]:
    """Turn the invocations of one benchmark into Results (one per metric, per x for sweeps)."""
    ok = [(rep, inv, itf) for rep, inv, itf in reps if inv.status == "ok"]
    bad = [(rep, inv) for rep, inv, _ in reps if inv.status != "ok"]
    metrics = {m["name"]: m for m in meta["metrics"]}
    params = next((inv.header.get("params", {}) for _, inv, _ in reps if inv.header), {})
    if not ok:
        status = "skipped" if all(inv.status == "skipped" for _, inv in bad) else "failed"
        reason = next((inv.reason for _, inv in bad if inv.reason), "no reason given")
        return [Result(bench=meta["id"], metric=m["name"], unit=m["unit"], better=m["better"],
                       shape=m["shape"], x_name=m["x_name"], params=params, status=status,
                       reason=reason) for m in meta["metrics"]]

    grouped: dict[tuple, list[Sample]] = defaultdict(list)
    for rep, inv, _ in ok:
        for metric, x, value in inv.samples:
            shape = metrics[metric]["shape"]
            key_x = x if shape == "sweep" else None
            grouped[(metric, key_x)].append(Sample(rep, x, value))

    incomplete = []
    if bad:
        incomplete.append(flags.Flag(
            flags.INCOMPLETE, flags.FAILED_REPETITIONS,
            "%d of %d repetitions did not complete: %s" % (len(bad), len(reps), bad[0][1].reason),
            "the rest were used; see why the others failed", len(bad) / len(reps)))
    notes = merge_notes([inv.notes for _, inv, _ in ok])
    # Interference on the CPUs the benchmark ran on, added up over its repetitions.
    cpus = note_keys.placement_cpus(notes)
    seen = [itf for _, _, itf in ok]
    notes["interference"] = [itf.to_dict(cpus) for itf in seen]

    order = {m["name"]: i for i, m in enumerate(meta["metrics"])}
    results = []
    for (metric, x), samples in sorted(grouped.items(),
                                       key=lambda kv: (order[kv[0][0]], kv[0][1] or 0)):
        m = metrics[metric]
        short = precision.too_short_alone(samples, m["unit"], m["shape"], meta["id"], metric)
        if short is not None:
            # Measured and kept (the studies compare such phases), but no row of its own
            # and not judged: the summary shows it only beside its benchmark's whole.
            results.append(Result(bench=meta["id"], metric=metric, unit=m["unit"],
                                  better=m["better"], shape=m["shape"], x=x,
                                  x_name=m["x_name"], params=params, samples=samples,
                                  summary=stats.summarize(samples), notes=notes,
                                  extra={TOO_SHORT_KEY: short,
                                         "too_short": too_short_reason(short, meta["id"])}))
            continue
        summary = stats.summarize(samples)
        found = incomplete + judge(summary, meta["id"], m["shape"], metric, m["unit"], seen,
                                   cpus, at_rest)
        results.append(Result(bench=meta["id"], metric=metric, unit=m["unit"],
                              better=m["better"], shape=m["shape"], x=x, x_name=m["x_name"],
                              params=params, samples=samples, summary=summary,
                              warnings=[f.to_dict() for f in found], notes=notes))
    return results


def judge(summary: dict, bench: str, shape: str, metric: str, unit: str, seen: list, cpus,
          at_rest: dict | None) -> list[flags.Flag]:
    """Disturbed where what happened meanwhile could move the result by as much as a
    verdict needs (2%, or its own spread if larger) and can move a metric like it;
    imprecise where its spread is above its kind's."""
    # Against the spread its kind reaches at rest, not this run's: a disturbance that
    # inflated the spread would otherwise hide itself (a hog on its CPU: CV 100%).
    floor = max(monitor.MIN_EFFECT, precision.kind_of(bench, shape, metric).spread or 0.0)
    return [f for f in monitor.judge(seen, cpus, at_rest, floor)
            if can_move(f.reason, metric, unit)] + precision.judge(summary, bench, shape,
                                                                   metric)


def can_move(reason: str, metric: str, unit: str) -> bool:
    """Whether a disturbance of this kind can change such a metric: a size (peak memory)
    is no larger for others being busy, and a program's own CPU time (user, system)
    counts only the time it ran itself, whoever else ran or stole meanwhile (a slower
    clock or throttling still shows in it)."""
    if unit in precision.SIZE_UNITS:
        return False
    if metric in precision.CPU_TIME_METRICS:
        return reason not in (flags.OTHER_PROCESSES, flags.STEAL)
    return True


TOO_SHORT = "too short to time alone"
TOO_SHORT_KEY = "once_per_repetition_s"     # in a result's extra: it is one of those


def too_short(r) -> bool:
    """A phase too short to time alone: measured, but no row of its own."""
    return r.status == "ok" and TOO_SHORT_KEY in (r.extra or {})


def too_short_reason(seconds: float, bench: str) -> str:
    return ("%s: timed once per repetition, about %s; one timing needs %s to be as precise "
            "as a %s benchmark gets" % (TOO_SHORT, numbers.quantity(seconds, "s"),
                                        numbers.quantity(precision.SHORTEST_ALONE_S, "s"),
                                        precision.kind_of(bench).name))


def merge_notes(per_rep: list[dict]) -> dict:
    """One value where every repetition agrees, the list of values where they differ."""
    keys = []
    for n in per_rep:
        keys += [k for k in n if k not in keys]
    merged = {}
    for k in keys:
        values = [n.get(k) for n in per_rep]
        merged[k] = values[0] if all(v == values[0] for v in values) else values
    return merged


def derive(run: Run) -> None:
    """Curve classification of scatters, then each family's own analysis."""
    for r in run.results:
        if r.shape == "scatter" and r.status == "ok" and r.samples:
            r.extra["curve"] = curves.summarize_scatter(r.samples, x_name=r.x_name, unit=r.unit)
    for mod_info in pkgutil.iter_modules(families.__path__):
        mod = importlib.import_module("%s.%s" % (families.__name__, mod_info.name))
        fn = getattr(mod, "derive", None)
        if fn is None:
            continue
        for bench in sorted({r.bench for r in run.results}):
            mine = [r for r in run.results if r.bench == bench]
            extra = fn(bench, mine, run.sysinfo) or []
            run.results += extra
