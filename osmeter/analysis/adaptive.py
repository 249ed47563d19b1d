"""Opt-in adaptive repetitions: `osmeter run --until-ci PCT --max-repetitions N`, and
`--until-decided PCT --max-repetitions N [--against RUN]`.

After the first rounds, each new round repeats only the benchmarks whose interval is
still wider than +-PCT% of the median, interleaved as usual and each repetition in its
own process, until every one is narrow enough or N repetitions are reached.  The bound
is the user's: osmeter never repeats without one (other suites' unbounded reruns are a
known complaint), and it says for every benchmark whether the target was reached.

Looking again and again and stopping when the interval looks narrow would make the
interval optimistic (measured: 86-94% coverage for a stated 96.9% when stopping at the
first look).  So the looks spend the 5% a 95% interval may miss: look j (j = 1, 2, ...)
uses an interval of level 1 - 0.05 / (j (j + 1)) (97.5%, 99.2%, 99.6%, ...; the shares
add up to less than 5%), so that whenever the repetitions stop, the interval at that
look covers the median with probability at least 95% (a union bound over the looks).
The first look is at the first round whose [min, max] reaches look 1's level (7
repetitions).  The result's stored interval is that look's, stated as 95%.

`--until-decided PCT` repeats a benchmark until the gate would decide every one of its
results against RUN's (without RUN, against a run as noisy as this one): the gate's own
rule (gate.decide_all), each look spending its share of alpha on both the pass and the
failure, so that whenever the repetitions stop a pass or a failure keeps its level
(measured in bench/stats_claims.py section 8).
"""
from __future__ import annotations

import math

from . import gate, results
from .. import stats
from ..stats import significance as sig

STATIC_SHAPES = ("point", "sweep")      # the shapes whose interval is the target
FINAL_LEVEL = stats.LEVEL               # what the interval claims whenever it stops


def look_level(j: int) -> float:
    """Level of the interval at look j (1-based): the looks' misses add up to less than
    1 - FINAL_LEVEL."""
    return 1.0 - (1.0 - FINAL_LEVEL) / (j * (j + 1))


def first_look() -> int:
    """Repetitions at the first look: the fewest whose [min, max] reaches look 1."""
    return stats.repetitions_for(look_level(1))


def look_of(repetitions: int, first: int) -> int:
    """Which look `repetitions` completed rounds are (1 at the first)."""
    return max(1, repetitions - first + 1)


def sequential_interval(values: list[float], j: int):
    """(low, high, level) of the median's interval at look j, or None when no interval of
    the values reaches look j's level."""
    iv = stats.median_interval(values, look_level(j))
    if iv is None or iv[2] < look_level(j):
        return None
    return iv


def relative_half_width(values: list[float], j: int) -> float | None:
    iv = sequential_interval(values, j)
    med = stats.median(values) if values else None
    if iv is None or not med:
        return None
    return max(med - iv[0], iv[1] - med) / abs(med)


def _widest_at_look(bench_results, j: int) -> float | None:
    widths = [relative_half_width(stats.repetition_medians(r.samples), j)
              for r in bench_results if r.status == "ok" and r.shape in STATIC_SHAPES]
    if not widths:
        return None
    return max(float("inf") if w is None else w for w in widths)


def unsettled(catalog, items, invocations, pct: float, look: int = 1) -> list:
    """Plan items whose interval at this look is still wider than +-pct% in some
    variant."""
    out = []
    for item in items:
        for invs in invocations:
            if item.result_id not in invs:
                continue
            w = _widest_at_look(results.build_results(catalog, [item], invs), look)
            if w is not None and w > pct / 100.0:
                out.append(item)
                break
    return out


def record(run, pct: float, max_runs: int, first: int | None = None) -> None:
    """Note in each result's extra what the adaptive rule did for its benchmark, and
    give each result the interval of its last look, which holds at FINAL_LEVEL whenever
    the looks stopped."""
    first = first or first_look()
    by_bench: dict[str, list] = {}
    for r in run.results:
        by_bench.setdefault(r.bench, []).append(r)
    for bench_results in by_bench.values():
        reps = max((r.summary.get("repetitions") or 0) for r in bench_results)
        j = look_of(reps, first)
        w = _widest_at_look(bench_results, j) if reps >= first else None
        outcome = {"target_pct": pct, "max_runs": max_runs, "repetitions": reps,
                   "looks": j if reps >= first else 0,
                   "reached": w is not None and w <= pct / 100.0,
                   "half_width_pct": None if w is None or w == float("inf") else 100 * w}
        for r in bench_results:
            r.extra["until_ci"] = outcome
            iv = (sequential_interval(stats.repetition_medians(r.samples), j)
                  if reps >= first and r.status == "ok" and r.shape in STATIC_SHAPES
                  else None)
            if iv is not None:
                r.summary.update(ci_low=iv[0], ci_high=iv[1], ci_level=FINAL_LEVEL)


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
        lines.append("not reached after %d repetitions (--max-repetitions): %s" % (
            first["max_runs"], ", ".join(
                "%s (+-%s)" % (b, "%.1f%%" % o["half_width_pct"]
                               if o["half_width_pct"] is not None else "no 95% interval")
                for b, o in sorted(short.items()))))
    return lines


def _span(outcomes: dict) -> str:
    reps = sorted(o["repetitions"] for o in outcomes.values())
    return str(reps[0]) if reps[0] == reps[-1] else "%d-%d" % (reps[0], reps[-1])


# ---- --until-decided ----------------------------------------------------------------------

LOOK_GROWTH = 1.5      # --until-decided looks at 5, 8, 12, 18, 27, ... repetitions


def decided_looks(first: int, max_runs: int) -> list[int]:
    """The repetition counts at which --until-decided looks: few looks, so that each
    keeps a useful share of alpha (the last is always max_runs)."""
    out = [first]
    while out[-1] < max_runs:
        out.append(min(max_runs, max(out[-1] + 1, math.ceil(out[-1] * LOOK_GROWTH))))
    return out


def looks_taken(repetitions: int, first: int, max_runs: int) -> int:
    return max(1, sum(1 for n in decided_looks(first, max_runs) if n <= repetitions))


def decisions(run_results, pct: float, against=None, first: int = 5, max_runs: int = 0,
              alpha: float = sig.ALPHA) -> dict:
    """{result key: True (the gate decides it: pass or fail), False (not yet), None (it
    cannot be judged)} for results of one run against `against` (a Run; None: each
    result against itself, a run as noisy as this one).  The gate's own rule
    (gate.decide_all: the correction over the run's questions, each result at the alpha
    its looks may spend, gate.spent_alpha), so that the repetitions stop exactly when the
    gate would decide."""
    base = {r.key: r for r in against.results} if against is not None else {}
    judged, out = [], {}
    for r in run_results:
        out[r.key] = None
        if r.status != "ok" or r.shape not in STATIC_SHAPES or not r.samples:
            continue
        b = base.get(r.key)
        b = b if b is not None and b.status == "ok" and b.samples else r
        v = sig.compare_values(sig.rep_values(b), sig.rep_values(r), r.better, alpha)
        j = looks_taken(len(sig.rep_values(r)), first, max(max_runs, first))
        own = gate.spent_alpha(j, alpha)
        s = sig.slowdown(v, pct, own)
        if s is None:
            out[r.key] = False if v.word == "too few repetitions" else None
            continue
        judged.append((r.key, ((r.bench,), s, own)))
    for (key, _), (outcome, _) in zip(judged, gate.decide_all([row for _, row in judged],
                                                              pct, alpha)):
        out[key] = outcome is not None
    return out


def undecided(catalog, todo, invocations, pct: float, against=None,
              alpha: float = sig.ALPHA, first: int = 5, max_runs: int = 0,
              items=None) -> list:
    """The plan items of `todo` with a result the gate would not decide yet (the
    correction over every item's results: `items`, default `todo`)."""
    every = items or todo
    still = set()
    for invs in invocations:
        rs = results.build_results(catalog, [i for i in every if i.result_id in invs], invs)
        d = decisions(rs, pct, against, first, max_runs, alpha)
        still |= {r.bench for r in rs if d.get(r.key) is False}
    return [item for item in todo if item.result_id in still]


def record_decided(run, pct: float, max_runs: int, against=None, first: int = 5,
                   alpha: float = sig.ALPHA) -> None:
    """Note in each result what --until-decided did: decided by the gate's rule or not,
    repetitions, and the looks taken (the gate spends its alpha over them:
    gate.row_alpha)."""
    d = decisions(run.results, pct, against, first, max_runs, alpha)
    for r in run.results:
        reps = r.summary.get("repetitions") or 0
        r.extra["until_decided"] = {
            "target_pct": pct, "max_runs": max_runs, "against": against.id if against
            else None, "repetitions": reps, "looks": looks_taken(reps, first, max_runs),
            "decidable": d.get(r.key)}


def decided_lines(run) -> list[str]:
    seen = [r for r in run.results if r.extra.get("until_decided", {}).get("decidable")
            is not None]
    if not seen:
        return []
    o = seen[0].extra["until_decided"]
    short = sorted({r.bench for r in seen if not r.extra["until_decided"]["decidable"]})
    lines = ["--until-decided %g%%%s: %d of %d result(s) can tell a %g%% slowdown from none"
             % (o["target_pct"], " against %s" % o["against"] if o["against"] else "",
                len(seen) - sum(1 for r in seen if not r.extra["until_decided"]["decidable"]),
                len(seen), o["target_pct"])]
    if short:
        lines.append("still too noisy after %d repetitions (--max-repetitions): %s"
                     % (o["max_runs"], ", ".join(short)))
    return lines
