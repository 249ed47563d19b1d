"""Opt-in adaptive repetitions: `osmeter run --until-ci PCT --max-runs N`.

After the first rounds (at least as many as a 95% interval of the median needs), each
new round repeats only the benchmarks whose interval is still wider than +-PCT% of the
median, interleaved as usual and each repetition in its own process, until every one
is narrow enough or N repetitions are reached.  The bound is the user's: osmeter never
repeats without one (other suites' unbounded reruns are a known complaint), and it says
for every benchmark whether the target was reached.

"Narrow enough": the distribution-free interval of the median (osmeter.stats) has a
level of at least 95% and both its ends lie within PCT% of the median.  A benchmark that
was skipped or failed is not repeated for this (repeating would not help).  Stopping
when an interval looks narrow makes the final interval slightly optimistic, as any
sequential rule does; with the minimum of 6 repetitions and targets of a few percent
the effect is small, and the stored level is that of the order statistics.
"""
from __future__ import annotations

from . import results, stats

STATIC_SHAPES = ("point", "sweep")      # the shapes whose interval is the target


def half_width(summary: dict) -> float | None:
    """Largest distance from the median to an end of its interval, relative to the
    median; None without an interval of at least 95%."""
    iv = stats.interval_of(summary)
    med = summary.get("median")
    if not iv or not med or iv[2] is None or iv[2] < stats.LEVEL:
        return None
    return max(med - iv[0], iv[1] - med) / abs(med)


def widest(bench_results) -> float | None:
    """The widest relative half-width over a benchmark's results (inf when some result
    has no 95% interval yet); None when nothing can be narrowed (not run, failed)."""
    widths = [half_width(r.summary) for r in bench_results
              if r.status == "ok" and r.shape in STATIC_SHAPES]
    if not widths:
        return None
    return max(float("inf") if w is None else w for w in widths)


def unsettled(catalog, items, invocations, pct: float) -> list:
    """Plan items whose interval is still wider than +-pct% in some variant."""
    out = []
    for item in items:
        for invs in invocations:
            if item.result_id not in invs:
                continue
            w = widest(results.build_results(catalog, [item], invs))
            if w is not None and w > pct / 100.0:
                out.append(item)
                break
    return out


def record(run, pct: float, max_runs: int) -> None:
    """Note in each result's extra what the adaptive rule did for its benchmark."""
    by_bench: dict[str, list] = {}
    for r in run.results:
        by_bench.setdefault(r.bench, []).append(r)
    for bench_results in by_bench.values():
        w = widest(bench_results)
        reps = max((r.summary.get("repetitions") or 0) for r in bench_results)
        outcome = {"target_pct": pct, "max_runs": max_runs, "repetitions": reps,
                   "reached": w is not None and w <= pct / 100.0,
                   "half_width_pct": None if w is None or w == float("inf") else 100 * w}
        for r in bench_results:
            r.extra["until_ci"] = outcome


def summary_lines(run) -> list[str]:
    """What the rule did, for the terminal: reached, and where the bound stopped it."""
    seen: dict[str, dict] = {}
    for r in run.results:
        if "until_ci" in r.extra:
            seen.setdefault(r.bench, r.extra["until_ci"])
    if not seen:
        return []
    first = next(iter(seen.values()))
    reached = {b: o for b, o in seen.items() if o["reached"]}
    short = {b: o for b, o in seen.items() if not o["reached"] and o["repetitions"]}
    lines = ["--until-ci %g%%: %d of %d benchmark(s) reached an interval within +-%g%% of "
             "the median%s." % (first["target_pct"], len(reached), len(seen),
                                first["target_pct"], " (%s repetitions)" % _span(reached)
                                if reached else "")]
    if short:
        lines.append("not reached after %d repetitions (--max-runs): %s" % (
            first["max_runs"], ", ".join(
                "%s (+-%s)" % (b, "%.1f%%" % o["half_width_pct"]
                               if o["half_width_pct"] is not None else "no 95% interval")
                for b, o in sorted(short.items()))))
    return lines


def _span(outcomes: dict) -> str:
    reps = sorted(o["repetitions"] for o in outcomes.values())
    return str(reps[0]) if reps[0] == reps[-1] else "%d-%d" % (reps[0], reps[-1])
