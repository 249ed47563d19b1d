"""Several runs side by side: tables per category, verdicts, indices, normalisation.

A comparison is built once (`compare(runs)`) and then rendered by the exporters in
osmeter/report/ (terminal, Markdown, CSV, JSON, HTML).  Everything here is data.

* Rows: one per (bench, metric, x) measured in at least one run; grouped by category,
  the bench id's prefix (syscall, ctx, proc, mem, ...).
* Ratio to the baseline, oriented so that > 1 always means better (faster, more
  bandwidth): baseline time / run time, or run rate / baseline rate.
* Verdicts: osmeter.significance (Mann–Whitney U on per-repetition medians, alpha,
  minimum effect); a winner and a loser per row only where the difference is
  significant.
* Indices: geometric mean of the ratios, per category and overall, as UnixBench does
  against its reference machine.  Each benchmark metric weighs the same: a sweep is
  first reduced to the geometric mean over its x values.
* Ousterhout's MIPS-relative speed: the ratio divided by the ratio of the machines' raw
  CPU speeds, measured by `cpu.integer`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median

from . import significance as sig
from .model import Result, Run

CPU_BENCH = "cpu.integer"      # the raw-speed measure that stands in for MIPS
CPU_METRIC = "rate"
# Parameters that change how long a measurement takes, not what it measures.
TIMING_PARAMS = {"samples", "batch_ms"}


class CompareError(Exception):
    """A comparison that cannot be made (bad reference, smoke vs real, ...)."""


def check_comparable(runs: list[Run]) -> None:
    smoke = [r for r in runs if r.smoke]
    if smoke and len(smoke) != len(runs):
        raise CompareError(
            "refusing to compare smoke run(s) %s with real runs: smoke sizes measure "
            "almost nothing (run the same suite without --smoke)"
            % ", ".join(r.name for r in smoke))
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        # Same label twice: tell the columns apart by id.
        for r in runs:
            if names.count(r.name) > 1:
                r.label = "%s (%s)" % (r.name, r.id)


# ---- metadata ----------------------------------------------------------------------

def flatten(d, prefix: str = "") -> dict[str, str]:
    """Nested dicts/lists -> {"cpu.model": "...", "caches.0.size": ...} of strings."""
    out: dict[str, str] = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(flatten(v, "%s.%s" % (prefix, k) if prefix else str(k)))
    elif isinstance(d, (list, tuple)):
        if all(not isinstance(v, (dict, list, tuple)) for v in d):
            out[prefix] = ", ".join(str(v) for v in d)
        else:
            for i, v in enumerate(d):
                out.update(flatten(v, "%s.%d" % (prefix, i)))
    else:
        out[prefix] = "" if d is None else str(d)
    return out


def run_metadata(run: Run) -> dict[str, str]:
    meta = {"run.suite": run.suite or "", "run.osmeter_version": run.osmeter_version,
            "run.status": run.status, "run.started": run.started}
    meta.update(flatten(run.sysinfo))
    return meta


# Keys (or their last component) that always differ and say nothing about the systems.
VOLATILE_KEYS = {"run.started", "uptime", "uptime_s", "boot_time", "loadavg", "load",
                 "mem_available", "available", "free", "pid", "timestamp"}


def metadata_diff(runs: list[Run]) -> tuple[list[tuple[str, list[str]]], int]:
    """([(key, [value per run])] for keys whose values differ, count of equal keys)."""
    metas = [run_metadata(r) for r in runs]
    keys = sorted(set().union(*metas))
    differ, same = [], 0
    for k in keys:
        vals = [m.get(k, "—") for m in metas]
        if len(set(vals)) == 1:
            same += 1
        elif k not in VOLATILE_KEYS and k.rsplit(".", 1)[-1] not in VOLATILE_KEYS:
            differ.append((k, vals))
    return differ, same


# ---- the comparison ------------------------------------------------------------------

@dataclass
class Cell:
    """One run's value in one row."""
    median: float | None
    ci_low: float | None
    ci_high: float | None
    n: int                           # samples
    reps: list[float]                # per-repetition medians
    status: str = "ok"
    reason: str | None = None
    ratio: float | None = None       # vs baseline, > 1 better
    mips_relative: float | None = None
    verdict: sig.Verdict | None = None
    curve_class: str | None = None
    result: Result | None = None


@dataclass
class Row:
    category: str
    bench: str
    metric: str
    x: float | None
    x_name: str | None
    label: str
    unit: str
    better: str
    shape: str
    cells: list[Cell | None]
    winner: int | None = None
    loser: int | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    runs: list[Run]
    baseline: int
    rows: list[Row]
    categories: list[str]
    index: dict[str, list[float | None]]        # category -> geometric mean per run
    index_counts: dict[str, int]                 # category -> metrics in the index
    overall: list[float | None]
    meta_diff: list[tuple[str, list[str]]]
    meta_same: int
    cpu_speed: list[float | None]                # cpu.integer median per run (Mops/s)
    alpha: float
    min_effect: float
    regressions: list[tuple[Row, int, float, float]] = field(default_factory=list)
    gate_pct: float | None = None                # --fail-on-slower threshold, if asked
    warnings: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.runs]

    def rows_in(self, category: str) -> list[Row]:
        return [r for r in self.rows if r.category == category]


def category_of(bench: str) -> str:
    return bench.split(".", 1)[0]


def _cell(res: Result) -> Cell:
    s = res.summary or {}
    reps = sig.rep_values(res) if res.samples else []
    med = s.get("median")
    if med is None and res.samples:
        med = median(x.value for x in res.samples)
    curve = (res.extra or {}).get("curve") or {}
    return Cell(median=med, ci_low=s.get("ci_low"), ci_high=s.get("ci_high"),
                n=int(s.get("n") or len(res.samples)), reps=reps, status=res.status,
                reason=res.reason, curve_class=curve.get("class"), result=res)


def cpu_speed(run: Run) -> float | None:
    for r in run.results:
        if r.bench == CPU_BENCH and r.metric == CPU_METRIC and r.status == "ok":
            c = _cell(r)
            return c.median
    return None


def _order_key(key):
    bench, metric, x = key
    return (bench, metric, -1e300 if x is None else x)


def compare(runs: list[Run], baseline: int = 0, alpha: float = sig.ALPHA,
            min_effect: float = sig.MIN_EFFECT, fail_on_slower: float | None = None
            ) -> Comparison:
    if not runs:
        raise CompareError("nothing to compare: no runs given")
    if not 0 <= baseline < len(runs):
        raise CompareError("baseline index %d out of range" % baseline)
    check_comparable(runs)
    by_key: dict[tuple, list[Result | None]] = {}
    for i, run in enumerate(runs):
        for res in run.results:
            by_key.setdefault(res.key, [None] * len(runs))[i] = res
    speeds = [cpu_speed(r) for r in runs]
    rows = []
    for key in sorted(by_key, key=_order_key):
        results = by_key[key]
        first = next(r for r in results if r is not None)
        row = Row(category=category_of(first.bench), bench=first.bench, metric=first.metric,
                  x=first.x, x_name=first.x_name, label=first.label, unit=first.unit,
                  better=first.better, shape=first.shape,
                  cells=[_cell(r) if r is not None else None for r in results])
        _fill_row(row, baseline, speeds, alpha, min_effect)
        for run, res in zip(runs, results):   # say when a value should not be trusted
            if res is not None and res.warnings:
                who = "%s unreliable" % run.name if len(runs) > 1 else "unreliable"
                row.notes.append("%s: %s" % (who, "; ".join(res.warnings)))
        rows.append(row)
    cats = []
    for r in rows:
        if r.category not in cats:
            cats.append(r.category)
    index, counts, overall = _indices(rows, len(runs))
    diff, same = metadata_diff(runs)
    cmp = Comparison(runs=runs, baseline=baseline, rows=rows, categories=cats, index=index,
                     index_counts=counts, overall=overall, meta_diff=diff, meta_same=same,
                     cpu_speed=speeds, alpha=alpha, min_effect=min_effect)
    for i, run in enumerate(runs):
        for w in (run.environment or {}).get("warnings") or []:
            cmp.warnings.append("%s: %s" % (run.name, w))
    if len(runs) > 1 and speeds[baseline] is None:
        cmp.warnings.append("the baseline has no %s result: no MIPS-relative speeds" % CPU_BENCH)
    if fail_on_slower is not None:
        cmp.gate_pct = fail_on_slower
        cmp.regressions = regressions(cmp, fail_on_slower)
    return cmp


def _fill_row(row: Row, baseline: int, speeds, alpha, min_effect) -> None:
    base = row.cells[baseline]
    ok = [c if c is not None and c.status == "ok" and c.median is not None else None
          for c in row.cells]
    # Parameters that differ (other than timing ones) make the row a different experiment.
    params = [c.result.params for c in row.cells if c is not None and c.result is not None]
    differing = sorted(k for k in set().union(*params) - TIMING_PARAMS
                       if len({str(p.get(k)) for p in params}) > 1) if params else []
    if differing:
        row.notes.append("parameters differ between runs: " + ", ".join(differing))
    for i, c in enumerate(row.cells):
        if c is None:
            continue
        if c.status != "ok":
            row.notes.append("%s: %s" % (c.status, c.reason or ""))
        if i == baseline or ok[i] is None or ok[baseline] is None:
            continue
        c.ratio = sig.speed_ratio(base.median, c.median, row.better)
        if row.shape != "derived":
            c.verdict = sig.compare_values(base.reps, c.reps, row.better, alpha, min_effect)
        if c.ratio is not None and speeds[i] and speeds[baseline]:
            c.mips_relative = c.ratio / (speeds[i] / speeds[baseline])
    if ok[baseline] is not None and len(row.cells) > 1:
        ok[baseline].ratio = 1.0
        if speeds[baseline]:
            ok[baseline].mips_relative = 1.0
    _winner_loser(row, ok, alpha, min_effect)


def _winner_loser(row: Row, ok: list, alpha, min_effect) -> None:
    """Best and worst run, each marked only if it differs significantly from the
    runner-up (second best / second worst)."""
    present = [i for i, c in enumerate(ok) if c is not None and c.reps]
    if len(present) < 2 or row.shape == "derived":
        return
    lower = row.better == "lower"
    order = sorted(present, key=lambda i: ok[i].median, reverse=not lower)  # best first
    best, second = order[0], order[1]
    v = sig.compare_values(ok[second].reps, ok[best].reps, row.better, alpha, min_effect)
    if v.significant and v.word == "better":
        row.winner = best
    worst, second_worst = order[-1], order[-2]
    v = sig.compare_values(ok[second_worst].reps, ok[worst].reps, row.better, alpha,
                           min_effect)
    if v.significant and v.word == "worse":
        row.loser = worst


def _indices(rows: list[Row], nruns: int):
    """Geometric mean of ratios per category and overall; one weight per bench metric."""
    per_metric: dict[tuple, list[list[float]]] = {}
    for row in rows:
        if row.shape == "derived" or row.bench == CPU_BENCH:
            continue
        ratios = [c.ratio if c is not None else None for c in row.cells]
        if any(r is None for r in ratios):
            continue       # only rows every run measured: otherwise indices differ in content
        per_metric.setdefault((row.category, row.bench, row.metric), []).append(ratios)
    index: dict[str, list] = {}
    counts: dict[str, int] = {}
    all_metric_ratios: list[list[float]] = []
    by_cat: dict[str, list[list[float]]] = {}
    for (cat, _, _), lists in per_metric.items():
        metric_ratio = [sig.geometric_mean([l[i] for l in lists]) for i in range(nruns)]
        by_cat.setdefault(cat, []).append(metric_ratio)
        all_metric_ratios.append(metric_ratio)
    for cat, lists in by_cat.items():
        index[cat] = [sig.geometric_mean([l[i] for l in lists]) for i in range(nruns)]
        counts[cat] = len(lists)
    overall = [sig.geometric_mean([l[i] for l in all_metric_ratios]) for i in range(nruns)] \
        if all_metric_ratios else [None] * nruns
    return index, counts, overall


def regressions(cmp: Comparison, pct: float) -> list[tuple[Row, int, float, float]]:
    """(row, run index, slowdown %, p) for every significant slowdown beyond pct."""
    found = []
    b = cmp.baseline
    for row in cmp.rows:
        if row.shape == "derived" or row.bench == CPU_BENCH:
            continue
        base = row.cells[b]
        if base is None or base.status != "ok" or not base.reps:
            continue
        for i, c in enumerate(row.cells):
            if i == b or c is None or c.status != "ok" or not c.reps or c.ratio is None:
                continue
            slow, p = sig.slower_beyond(base.reps, c.reps, row.better, pct, cmp.alpha)
            if slow:
                found.append((row, i, 100.0 * (1.0 / c.ratio - 1.0), p))
    return found


def undecided_rows(cmp: Comparison) -> list[str]:
    """Rows the regression gate could not judge because there are too few repetitions."""
    out = []
    for row in cmp.rows:
        for i, c in enumerate(row.cells):
            if i != cmp.baseline and c is not None and c.verdict is not None \
                    and c.verdict.word == "too few repetitions":
                out.append("%s (%s)" % (row.label, cmp.runs[i].name))
    return out


def mips_relative_table(cmp: Comparison) -> list[tuple[Row, list[float | None]]]:
    """Rows with MIPS-relative speeds (only when cpu.integer was measured everywhere)."""
    if len(cmp.runs) < 2 or any(s is None for s in cmp.cpu_speed):
        return []
    out = []
    for row in cmp.rows:
        if row.bench == CPU_BENCH or row.shape in ("derived", "scatter"):
            continue
        vals = [c.mips_relative if c is not None else None for c in row.cells]
        if all(v is not None for v in vals):
            out.append((row, vals))
    return out
