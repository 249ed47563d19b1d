"""Several runs side by side: tables per category, verdicts, indices, normalisation.

A comparison is built once (`compare(runs)`) and then rendered by the exporters in
osmeter/report/ (terminal, Markdown, CSV, JSON, HTML).  Everything here is data.

* Rows: one per (bench, metric, x) measured in at least one run; grouped by category,
  the bench id's prefix (syscall, ctx, proc, mem, ...).
* Ratio to the baseline, oriented so that > 1 always means better (faster, more
  bandwidth): baseline time / run time, or run rate / baseline rate.
* Ratios with their interval and verdicts: osmeter.stats.significance (Welch t on log
  per-repetition medians, Hodges–Lehmann ratio; the between-run variance added when a
  noise profile gives it, osmeter.analysis.noise).  Per row: better / worse, the same within
  +-margin, or cannot tell (with the repetitions that would tell).
* The family as a user reads it: a benchmark (its metrics, phases and every point of
  its curves) against one other run is one question.  Benjamini & Bogomolov's selective
  procedure: Simes' p per question, Benjamini–Hochberg at alpha over the questions,
  then inside each selected question Benjamini–Hochberg at alpha x selected / asked.
  The tests per row: each run against the baseline, and the best against the second
  best and the worst against the second worst (winner / loser).  "Same within
  +-margin" is each row's own claim (TOST at alpha): of the rows that truly differ by
  more than the margin, at most alpha are called the same.
* Indices: geometric mean of the ratios, per category and overall, as UnixBench does
  against its reference machine.  Each benchmark metric weighs the same: a sweep is
  first reduced to the geometric mean over its x values.  Their interval: Welch t on
  the log scale from the per-repetition spread of every metric in the index (a sweep's
  repetition is the mean of its log values over x), Satterthwaite's degrees of freedom,
  plus the between-run noise where a profile gives it.
* Ousterhout's MIPS-relative speed: the ratio divided by the ratio of the machines' raw
  CPU speeds, measured by `cpu.integer`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import fmean, median

from ..stats import significance as sig
from . import flags
from .. import stats
from ..data.model import Result, Run

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


def program_diff(rows, runs: list[Run]) -> list[tuple[str, list[str]]]:
    """What differs besides the metadata: per benchmark whose runs timed different
    programs, ('<bench>: program', [the program per run])."""
    out = {}
    for row in rows:
        if row.unlike:
            out[row.bench + ": program"] = [
                (c.result.notes.get("program") or "—") if c is not None and c.result
                else "—" for c in row.cells]
    return list(out.items())


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

INDEX_LEVEL = 0.95


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
    verdict: sig.Verdict | None = None   # vs baseline: p, interval of the ratio
    curve_class: str | None = None
    result: Result | None = None
    ci_level: float | None = None    # actual level of [ci_low, ci_high]
    ci_method: str | None = None     # "order statistics" or "bootstrap" (old runs)
    standing: str | None = None      # disturbed | imprecise | ... (analysis/flags.py), or None
    disturbed: str = ""              # what disturbed it: 'other processes on CPU 1'
    caveat: str = ""                 # on its verdict: 'disturbed in B: other processes ...'

    @property
    def interval_note(self) -> str:
        """'' for an interval of at least 95%; else its level, or 'bootstrap'."""
        return stats.level_note(self.ci_level, self.ci_method, len(self.reps))


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
    tests: dict = field(default_factory=dict)   # (run a, run b) -> Verdict of b against a
    unlike: str = ""     # why its runs are not like for like: no ratio, verdict or index


@dataclass
class IndexInterval:
    low: float
    high: float
    level: float


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
    index_ci: dict[str, list[IndexInterval | None]] = field(default_factory=dict)
    overall_ci: list[IndexInterval | None] = field(default_factory=list)
    noise: object | None = None                  # osmeter.analysis.noise.Profile, when given
    test_count: int = 0                          # tests in the verdicts' family
    discoveries: int = 0                         # of them significant: verdicts shown
    questions: int = 0                           # benchmarks x run pairs asked about
    selected: int = 0                            # of them with a difference found
    margin: float = sig.MARGIN                   # "same" means within +-margin
    warnings: list[str] = field(default_factory=list)
    index_left_out: list[str] = field(default_factory=list)   # "bench metric: why"

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.runs]

    def rows_in(self, category: str) -> list[Row]:
        return [r for r in self.rows if r.category == category]

    @property
    def expected_false(self) -> float:
        """The procedure's bound: at most alpha of the verdicts shown, on average."""
        return self.alpha * self.discoveries


def category_of(bench: str) -> str:
    return bench.split(".", 1)[0]


# The order families are shown in everywhere (terminal, comparison, report): the raw CPU
# speed first, then from the cheapest kernel entry up to whole applications; families
# not named here (a user's commands, a new family) follow in alphabetical order.
FAMILY_ORDER = ("cpu", "syscall", "lat", "ctx", "proc", "thread", "mem", "fs", "mab", "net",
                "scale", "app", "ub")


def family_sort_key(family: str) -> tuple:
    known = family in FAMILY_ORDER
    return (0 if known else 1, FAMILY_ORDER.index(family) if known else 0, family)


def _cell(res: Result) -> Cell:
    s = res.summary or {}
    reps = sig.rep_values(res) if res.samples else []
    med = s.get("median")
    if med is None and res.samples:
        med = median(x.value for x in res.samples)
    curve = (res.extra or {}).get("curve") or {}
    interval = stats.interval_of(s)
    lo, hi, level, method = interval if interval else (None, None, None, None)
    return Cell(median=med, ci_low=lo, ci_high=hi, ci_level=level, ci_method=method,
                n=int(s.get("n") or len(res.samples)), reps=reps, status=res.status,
                reason=res.reason, curve_class=curve.get("class"), result=res,
                standing=flags.standing(res), disturbed=flags.disturbance_text(res))


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
            min_effect: float = sig.MIN_EFFECT, noise=None,
            margin: float = sig.MARGIN) -> Comparison:
    """Runs side by side; `noise` is a between-run noise profile (analysis/noise.py) or
    None."""
    if not runs:
        raise CompareError("nothing to compare: no runs given")
    if not 0 <= baseline < len(runs):
        raise CompareError("baseline index %d out of range" % baseline)
    check_comparable(runs)
    if noise is not None and bool(noise.smoke) != bool(runs[0].smoke):
        raise CompareError("noise profile %s was recorded from %s runs; these are %s runs"
                           % (noise.name, "smoke" if noise.smoke else "real",
                              "smoke" if runs[0].smoke else "real"))
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
        _fill_row(row, baseline, speeds, (alpha, min_effect, margin), noise,
                  [r.name for r in runs])
        for kind in (flags.DISTURBED, flags.IMPRECISE, flags.INCOMPLETE, flags.UNRELIABLE):
            row.notes += _once_per_row(kind, [
                (run.name, "; ".join(f.text for f in flags.of(res) if f.kind == kind))
                for run, res in zip(runs, results)
                if res is not None and kind in flags.kinds(res)], len(runs))
        rows.append(row)
    cats = sorted({r.category for r in rows}, key=family_sort_key)
    diff, same = metadata_diff(runs)
    diff += program_diff(rows, runs)
    cmp = Comparison(runs=runs, baseline=baseline, rows=rows, categories=cats, index={},
                     index_counts={}, overall=[], meta_diff=diff, meta_same=same,
                     cpu_speed=speeds, alpha=alpha, min_effect=min_effect, noise=noise,
                     margin=margin)
    if noise is not None:
        cmp.warnings += noise.notes
        mine = [r.name for r in runs if r.id in set(noise.runs)]
        if mine:
            cmp.warnings.append(
                "noise profile %s was estimated from %s, compared here: the runs' own "
                "difference then counts as noise (record it from other runs)"
                % (noise.name, ", ".join(mine)))
    _correct_and_mark(cmp)
    _indices(cmp)
    for i, run in enumerate(runs):
        for w in (run.environment or {}).get("warnings") or []:
            cmp.warnings.append("%s: %s" % (run.name, w))
    if len(runs) > 1 and speeds[baseline] is None:
        cmp.warnings.append("the baseline has no %s result: no MIPS-relative speeds" % CPU_BENCH)
    return cmp


def _fill_row(row: Row, baseline: int, speeds, levels, noise, names: list[str]) -> None:
    base = row.cells[baseline]
    ok = [c if c is not None and c.status == "ok" and c.median is not None else None
          for c in row.cells]
    # Parameters that differ (other than timing ones) make the row a different experiment.
    params = [c.result.params for c in row.cells if c is not None and c.result is not None]
    differing = sorted(k for k in set().union(*params) - TIMING_PARAMS
                       if len({str(p.get(k)) for p in params}) > 1) if params else []
    if differing:
        row.notes.append("parameters differ between runs: " + ", ".join(differing))
    row.unlike = programs_differ(row, names)
    if row.unlike:
        row.notes.append(row.unlike)
    between = None
    if noise is not None and base is not None and base.result is not None:
        between = noise.row(row.bench, row.metric, row.x, base.result.params)
    if noise is not None and between is None and row.shape != "derived":
        row.notes.append("between-run noise unknown for this row (not in noise profile %s)"
                         % noise.name)
    not_run = [(i, c) for i, c in enumerate(row.cells) if c is not None and c.status != "ok"]
    for status in dict.fromkeys(c.status for _, c in not_run):
        row.notes += _once_per_row(status, [(names[i], c.reason or "")
                                            for i, c in not_run if c.status == status],
                                   len(row.cells))
    for i, c in enumerate(row.cells):
        if c is None or row.unlike:
            continue
        if i == baseline or ok[i] is None or ok[baseline] is None:
            continue
        c.ratio = sig.speed_ratio(base.median, c.median, row.better)
        c.caveat = disturbed_caveat(base, c, names[baseline], names[i])
        if row.shape != "derived":
            c.verdict = _test(row, baseline, i, levels, between)
            if c.verdict.ratio is not None:
                c.ratio = c.verdict.ratio
        if c.ratio is not None and speeds[i] and speeds[baseline]:
            c.mips_relative = c.ratio / (speeds[i] / speeds[baseline])
    if row.unlike:
        return
    if ok[baseline] is not None and len(row.cells) > 1:
        ok[baseline].ratio = 1.0
        if speeds[baseline]:
            ok[baseline].mips_relative = 1.0
    # Best against second best and worst against second worst (3 runs or more; with two
    # the baseline comparison is that test).
    present = [i for i, c in enumerate(ok) if c is not None and c.reps]
    if len(present) < 2 or row.shape == "derived":
        return
    order = sorted(present, key=lambda i: ok[i].median, reverse=row.better != "lower")
    for a, b in ((order[1], order[0]), (order[-2], order[-1])):
        if (a, b) not in row.tests and (b, a) not in row.tests:
            _test(row, a, b, levels, between)


def programs_differ(row: Row, names: list[str]) -> str:
    """'timed different programs: A /usr/bin/python3, B /home/u/.pyenv/shims/python3' when
    the runs' results name different programs (the 'program' note: a PATH that differed
    between the runs), else ''.  Such a row compares two programs, not two systems."""
    programs = [(n, c.result.notes.get("program")) for n, c in zip(names, row.cells)
                if c is not None and c.result is not None and c.result.notes.get("program")]
    if len({p for _, p in programs}) < 2:
        return ""
    return "timed different programs: " + ", ".join("%s %s" % np for np in programs)


def disturbed_caveat(base: Cell, c: Cell, base_name: str, name: str) -> str:
    """What a verdict between two cells must say when either was disturbed: 'disturbed
    in B: other processes on CPU 1' (the difference may be the disturbance's)."""
    parts = [(n, x.disturbed) for n, x in ((base_name, base), (name, c)) if x.disturbed]
    if not parts:
        return ""
    return "disturbed in " + "; ".join("%s (%s)" % p for p in parts)


def _once_per_row(what: str, by_run: list[tuple[str, str]], nruns: int) -> list[str]:
    """One note for a row however many runs it concerns: runs that say the same thing
    share it ('unreliable in A, B: ...'); in a single run, no run name at all."""
    if not by_run:
        return []
    same: dict[str, list[str]] = {}
    for name, text in by_run:
        same.setdefault(text, []).append(name)
    if nruns == 1:
        return ["%s: %s" % (what, by_run[0][1])]
    if len(same) == 1:
        text, who = next(iter(same.items()))
        return ["%s in %s: %s" % (what, "every run" if len(who) == nruns else ", ".join(who),
                                  text)]
    return ["%s: %s" % (what, " | ".join("%s: %s" % (", ".join(who), text)
                                          for text, who in same.items()))]


def _test(row: Row, a: int, b: int, levels, between) -> sig.Verdict:
    """Run b against run a in this row; recorded in row.tests for the correction."""
    alpha, min_effect, margin = levels
    v = sig.compare_values(row.cells[a].reps, row.cells[b].reps, row.better, alpha,
                           min_effect, between, margin=margin)
    row.tests[(a, b)] = v
    return v


def _pair(row: Row, a: int, b: int):
    """(verdict, sign): sign +1 if it tests b against a, -1 if a against b."""
    if (a, b) in row.tests:
        return row.tests[(a, b)], 1
    v = row.tests.get((b, a))
    return v, -1


def _correct_and_mark(cmp: Comparison) -> None:
    """Benjamini–Bogomolov over the comparison's questions (a benchmark against one other
    run); then the words (osmeter.stats.significance.decide), winners and losers."""
    by_question: dict[tuple, list[sig.Verdict]] = {}
    for row in cmp.rows:
        for (a, b), v in row.tests.items():
            by_question.setdefault((row.bench, min(a, b), max(a, b)), []).append(v)
    fams = [[v for v in vs if v.p is not None] for vs in by_question.values()]
    adjusted, cmp.selected = sig.benjamini_bogomolov([[v.p for v in f] for f in fams],
                                                     cmp.alpha)
    for f, qs in zip(fams, adjusted):
        for v, q in zip(f, qs):
            v.p_adjusted = q
    cmp.questions = sum(1 for f in fams if f)
    family = [v for vs in by_question.values() for v in vs]
    for v in family:
        sig.decide(v, cmp.alpha, cmp.min_effect)
        if v.word == sig.CANNOT_TELL and v.ratio is not None:
            v.repetitions_needed = sig.repetitions_to_decide(
                v.spread, v.margin, cmp.alpha, v.between)
    cmp.test_count = sum(1 for v in family if v.p is not None)
    cmp.discoveries = sum(1 for v in family if v.significant)
    for row in cmp.rows:
        ok = [i for i, c in enumerate(row.cells) if c is not None and c.status == "ok"
              and c.median is not None and c.reps]
        if len(ok) < 2 or row.shape == "derived":
            continue
        order = sorted(ok, key=lambda i: row.cells[i].median, reverse=row.better != "lower")
        v, sign = _pair(row, order[1], order[0])
        if v is not None and v.significant and v.word == ("better" if sign > 0 else "worse"):
            row.winner = order[0]
        v, sign = _pair(row, order[-2], order[-1])
        if v is not None and v.significant and v.word == ("worse" if sign > 0 else "better"):
            row.loser = order[-1]


def _indices(cmp: Comparison) -> None:
    """Geometric mean of ratios per category and overall, one weight per bench metric,
    with intervals."""
    nruns, b = len(cmp.runs), cmp.baseline
    per_metric: dict[tuple, list[Row]] = {}
    for row in cmp.rows:
        if row.shape == "derived" or row.bench == CPU_BENCH or row.unlike:
            continue
        if any(c is None or c.status != "ok" or not c.reps for c in row.cells):
            continue       # only rows every run measured: otherwise indices differ in content
        per_metric.setdefault((row.category, row.bench, row.metric), []).append(row)
    by_cat: dict[str, list] = {}
    for (cat, bench, metric), rows in per_metric.items():
        ratios = [sig.geometric_mean([r.cells[i].ratio for r in rows]) for i in range(nruns)]
        if len(rows) == 1:               # a point: its repetition medians, as logs
            reps = [sig.speed_logs(rows[0].cells[i].reps, rows[0].better) or []
                    for i in range(nruns)]
        else:
            reps = [sig.metric_repetitions([r.cells[i].result for r in rows])
                    for i in range(nruns)]
        if any(not r for r in reps) or any(x is None for x in ratios):
            # A value of 0 or below (a loss of 0 %, a time below resolution) has no log:
            # the rank test still compares the row; the index, a mean of logs, cannot.
            cmp.index_left_out.append("%s %s" % (bench, metric))
            continue
        by_cat.setdefault(cat, []).append((bench, metric, ratios, reps))
    every = [m for ms in by_cat.values() for m in ms]
    for cat, metrics in by_cat.items():
        cmp.index[cat] = [sig.geometric_mean([m[2][i] for m in metrics]) for i in range(nruns)]
        cmp.index_counts[cat] = len(metrics)
        cmp.index_ci[cat] = [None if i == b else _index_interval(cmp, metrics, i, cat)
                             for i in range(nruns)]
    if every:
        cmp.overall = [sig.geometric_mean([m[2][i] for m in every]) for i in range(nruns)]
        cmp.overall_ci = [None if i == b else _index_interval(cmp, every, i, None)
                          for i in range(nruns)]
    else:
        cmp.overall, cmp.overall_ci = [None] * nruns, [None] * nruns


def _index_interval(cmp: Comparison, metrics, i: int, category: str | None):
    """Welch t interval of the log index of run i against the baseline, or None when a
    metric's spread is unknown."""
    k = len(metrics)
    parts = []
    for _, _, _, reps in metrics:
        spread = sig.variance_parts(reps[cmp.baseline], reps[i])
        if spread is None:
            return None
        parts += [(v / (k * k), df) for v, df in spread]
    if cmp.noise is not None:
        between = cmp.noise.index_between(category, [(bench, metric)
                                                     for bench, metric, _, _ in metrics])
        if between is None:
            return None            # the profile does not cover the index: no honest interval
        parts.append((between.var, between.df))
    ratios = [m[2][i] for m in metrics]
    if any(r is None or r <= 0 for r in ratios):
        return None
    # Centred on the mean of the metrics' mean log differences, the estimate the Welch
    # variance belongs to (centred on the ratios' logs it covered 94.3% for 95%).
    est = fmean(fmean(m[3][i]) - fmean(m[3][cmp.baseline]) for m in metrics)
    se, df = sig.satterthwaite(parts)
    lo, hi = sig.t_interval(est, se, df, INDEX_LEVEL)
    return IndexInterval(math.exp(lo), math.exp(hi), INDEX_LEVEL)


def noise_note(cmp: Comparison) -> str:
    """What the verdicts do not account for (printed with the legend)."""
    if cmp.noise is None:
        return ("Between-run noise is not accounted for: intervals and verdicts reflect "
                "the variation between repetitions inside each run; two runs of one "
                "system usually differ by more (record it: osmeter noise RUN RUN RUN ..., "
                "then compare --noise NAME).")
    return ("Between-run noise from profile %s (%d runs) is included in the ratio "
            "intervals, verdicts, indices and the gate (degrees of freedom at most %d): a "
            "difference must exceed what runs of this system differ by."
            % (cmp.noise.name, len(cmp.noise.runs), len(cmp.noise.runs) - 1))


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
