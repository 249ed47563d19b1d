"""Between-run noise: how much repeated runs of one system differ, per benchmark.

The repetitions inside one run share the run's luck (the boot, the machine's state that
day, where the kernel placed things); two runs of one system therefore differ by more
than their repetitions suggest, and a comparison that ignores this is overconfident.
From several runs of one system osmeter estimates that extra part and adds it to the
variance of every ratio between runs, the verdicts, the indices and the gate.

Model, on the log scale (a slowdown is a shift of logs):

    log value(run r, repetition j) = level + u_r + e_rj,   Var u = tau^2, Var e = sigma^2

The mean over run r's m_r repetitions varies by tau^2 + sigma^2 / m_r, so from R >= 2
runs tau^2 = max(0, S^2 - mean(s_r^2 / m_r)), S^2 the variance of the run means and s_r
the spread inside run r (one-way random effects, method of moments; R - 1 degrees of
freedom).  Comparing two runs, the between part of the log ratio's variance is 2 tau^2.

The same is done for each benchmark metric (a sweep reduced per repetition to its mean
log value over x) and for each category's and the overall index, because run effects
are often shared by many benchmarks (a slower boot is slower everywhere); an index's
between-run part is the larger of that direct estimate and the one that assumes the
metrics independent.  A profile applies to runs of the system it was recorded on, with
the same parameters (rows whose parameters differ are left out).
"""
from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field
from statistics import fmean, median

from ..stats import significance as sig
from .compare import CPU_BENCH, category_of
from ..data.model import Run
from . import flags
from ..stats import variance
from ..stats import pooling

FORMAT = "osmeter.noise"
VERSION = 1
TIMING_PARAMS = {"samples", "batch_ms"}   # as in compare: they change duration, not meaning


class NoiseError(Exception):
    """A profile that cannot be made or read (one line, for the user)."""


@dataclass
class Component:
    """The between-run variance of one row, metric or index (log scale)."""
    tau2: float            # between-run variance of a run's mean log value
    df: float              # its degrees of freedom (runs - 1)
    runs: int
    within: float          # median spread of log repetition medians inside a run
    params: dict = field(default_factory=dict)
    metrics: list = field(default_factory=list)   # for an index: "bench|metric" it covers
    # While estimating only (not stored): the variance of the run means, and its part
    # that the repetitions inside the runs explain.
    run_means_var: float = field(default=0.0, repr=False)
    within_of_mean: float = field(default=0.0, repr=False)

    def between(self) -> sig.Between:
        """significance.Between of a log ratio of two runs (twice one run's variance)."""
        return sig.Between(2.0 * self.tau2, self.df)

    @property
    def between_cv(self) -> float:
        return math.sqrt(self.tau2)

    def to_dict(self) -> dict:
        d = {"tau2": self.tau2, "df": self.df, "runs": self.runs, "within": self.within}
        if self.params:
            d["params"] = self.params
        if self.metrics:
            d["metrics"] = self.metrics
        return d


@dataclass
class Profile:
    name: str
    created: str
    runs: list[str]                 # ids of the runs it was estimated from
    smoke: bool
    hosts: list[str]
    components: dict[str, Component]
    notes: list[str] = field(default_factory=list)   # history: the runs left out, and why

    def row(self, bench: str, metric: str, x, params: dict | None = None):
        """significance.Between for a log ratio of two runs in this row, or None."""
        c = self.components.get(row_key(bench, metric, x))
        if c is None or (params is not None and _meaning(params) != c.params):
            return None
        return c.between()

    def index_between(self, category: str | None, metrics: list[tuple]):
        """Between for the log of an index over `metrics` [(bench, metric)], or None
        when the profile does not cover every one of them."""
        comps = [self.components.get(metric_key(b, m)) for b, m in metrics]
        if not comps or any(c is None for c in comps):
            return None
        k = len(comps)
        tau2 = sum(c.tau2 for c in comps) / (k * k)        # metrics independent
        df = sig.satterthwaite([(c.tau2 / (k * k), c.df) for c in comps])[1]
        direct = self.components.get(index_key(category))
        if direct is not None and sorted(direct.metrics) == sorted(
                "%s|%s" % bm for bm in metrics) and direct.tau2 > tau2:
            tau2, df = direct.tau2, direct.df
        return sig.Between(2.0 * tau2, df)

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "name": self.name,
                "created": self.created, "runs": self.runs, "smoke": self.smoke,
                "hosts": self.hosts,
                "components": {k: c.to_dict() for k, c in sorted(self.components.items())}}

    @classmethod
    def from_dict(cls, d: dict) -> "Profile":
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise NoiseError("not an osmeter noise profile (format %r)"
                             % (d.get("format") if isinstance(d, dict) else type(d).__name__))
        if d.get("version", 0) > VERSION:
            raise NoiseError("noise profile version %s is newer than this osmeter reads (%d)"
                             % (d.get("version"), VERSION))
        try:
            comps = {k: Component(float(c["tau2"]), float(c["df"]), int(c["runs"]),
                                  float(c["within"]), dict(c.get("params") or {}),
                                  list(c.get("metrics") or []))
                     for k, c in d["components"].items()}
            return cls(str(d["name"]), str(d["created"]), [str(r) for r in d["runs"]],
                       bool(d["smoke"]), [str(h) for h in d.get("hosts") or []], comps)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise NoiseError("noise profile is incomplete or malformed (%s)" % e) from None


def row_key(bench: str, metric: str, x) -> str:
    return "row:%s|%s|%s" % (bench, metric, "" if x is None else repr(float(x)))


def metric_key(bench: str, metric: str) -> str:
    return "metric:%s|%s" % (bench, metric)


def index_key(category: str | None) -> str:
    return "index:%s" % (category or "overall")


def _meaning(params: dict) -> dict:
    return {k: str(v) for k, v in params.items() if k not in TIMING_PARAMS}


def between_run_variance(per_run: list[list[float]]) -> Component | None:
    """Component from the log values of several runs (one list of repetition values per
    run); None with fewer than two runs."""
    per_run = [v for v in per_run if v]
    if len(per_run) < 2:
        return None
    means = [fmean(v) for v in per_run]
    within_of_mean = [variance(v) / len(v) if len(v) > 1 else 0.0 for v in per_run]
    spreads = [math.sqrt(variance(v)) for v in per_run if len(v) > 1]
    tau2 = max(0.0, variance(means) - fmean(within_of_mean))
    return Component(tau2, len(per_run) - 1, len(per_run), median(spreads) if spreads else 0.0,
                     run_means_var=variance(means), within_of_mean=fmean(within_of_mean))


def moderate(rows: list[Component]) -> float | None:
    """Pool the between-run variances of a profile's rows (stats/pooling.py): each row's
    variance of run means, estimated with only runs - 1 degrees of freedom, is drawn
    towards what rows of its within-run noise show, and gains d0 degrees of freedom (at
    most its own).  Rows too unlike for one prior, and a row noisier than its kind, keep
    their own.  Changes each row's tau2 and df in place; returns d0, or None when too few
    rows allow it."""
    use = [c for c in rows if c.run_means_var > 0 and c.df >= 1]
    p = pooling.prior([c.run_means_var for c in use], [c.df for c in use],
                      [c.within_of_mean for c in use])
    if p is None:
        return None
    for c, s0 in zip(use, p.scale):
        if s0 is None:
            continue            # a row noisier than its kind: its own estimate stands
        k = c.df
        gain = pooling.gain(p.d0, k)
        pooled = (gain * s0 + k * c.run_means_var) / (gain + k)
        c.tau2 = max(0.0, pooled - c.within_of_mean)
        c.df = k + gain
    return p.d0


def estimate(runs: list[Run], name: str) -> Profile:
    """A profile from repeated runs of one system."""
    if len(runs) < 2:
        raise NoiseError("between-run noise needs at least two runs of the same system "
                         "(better five or more); got %d" % len(runs))
    if len({r.id for r in runs}) != len(runs):
        raise NoiseError("the same run was given twice")
    if len({bool(r.smoke) for r in runs}) > 1:
        raise NoiseError("mixing smoke and real runs: record noise from runs made alike")
    by_key: dict[tuple, list] = {}
    for i, run in enumerate(runs):
        for res in run.results:
            if res.status == "ok" and res.samples and res.shape in ("point", "sweep",
                                                                    "scatter"):
                by_key.setdefault(res.key, [None] * len(runs))[i] = res
    comps: dict[str, Component] = {}
    metric_rows: dict[tuple, list[tuple]] = {}
    for (bench, metric, x), results in by_key.items():
        present = [r for r in results if r is not None]
        if len({json.dumps(_meaning(r.params), sort_keys=True) for r in present}) > 1:
            continue                       # not the same experiment in every run
        logs = [sig.speed_logs(sig.rep_values(r), r.better) for r in present]
        if any(v is None for v in logs):
            continue
        c = between_run_variance(logs)
        if c is not None:
            c.params = _meaning(present[0].params)
            comps[row_key(bench, metric, x)] = c
        # A scalability scatter is a row of its own (compare tests its repetitions'
        # medians), not part of the indices' metrics.
        if all(r is not None for r in results) and present[0].shape != "scatter":
            metric_rows.setdefault((bench, metric), []).append(results)
    # Metrics and indices: only what every run measured.
    levels: dict[tuple, list[list[float]]] = {}
    for (bench, metric), xs in metric_rows.items():
        per_run = [sig.metric_repetitions([res[i] for res in xs]) for i in range(len(runs))]
        c = between_run_variance(per_run)
        if c is not None and all(per_run):
            comps[metric_key(bench, metric)] = c
            levels[(bench, metric)] = per_run
    groups: dict[str | None, list[tuple]] = {}
    for bench, metric in levels:
        if bench != CPU_BENCH:
            groups.setdefault(category_of(bench), []).append((bench, metric))
            groups.setdefault(None, []).append((bench, metric))
    for cat, metrics in groups.items():
        c = _index_component(metrics, levels, len(runs))
        c.metrics = sorted("%s|%s" % bm for bm in metrics)
        comps[index_key(cat)] = c
    if not comps:
        raise NoiseError("the runs have no benchmark in common with repetitions to "
                         "compare")
    moderate([c for k, c in comps.items() if k.startswith("row:")])
    hosts = sorted({str((r.sysinfo or {}).get("hostname")) for r in runs})
    return Profile(name=name, created=dt.datetime.now(dt.timezone.utc).isoformat(
        timespec="seconds"), runs=[r.id for r in runs], smoke=bool(runs[0].smoke),
        hosts=hosts, components=comps)


def _index_component(metrics, levels, nruns) -> Component:
    """Between-run variance of an index's log (mean over metrics of their run means)."""
    k = len(metrics)
    means, within = [], []
    for i in range(nruns):
        vals = [levels[bm][i] for bm in metrics]
        means.append(fmean(fmean(v) for v in vals))
        within.append(sum(variance(v) / len(v) for v in vals if len(v) > 1) / (k * k))
    tau2 = max(0.0, variance(means) - fmean(within))
    return Component(tau2, nruns - 1, nruns, 0.0)


# ---- learned from the store's history ------------------------------------------------

HISTORY_MIN_RUNS = 3        # fewer leave the between-run part with 1 degree of freedom
HISTORY_MAX_RUNS = 10       # the latest ones: the machine's noise today, not last year's
HISTORY_LOOK_BACK = 40      # stored runs of the host read to find them


def _benches(run: Run) -> set:
    return {r.bench for r in run.results}


def _presets(run: Run) -> set:
    steps = ((run.environment or {}).get("timing") or {}).get("steps") or {}
    return {str(s.get("preset")) for s in steps.values() if isinstance(s, dict)}


def _options(run: Run) -> dict:
    """{result key: its parameters that change what is measured} (--dir, a pin, sizes)."""
    return {r.key: _meaning(r.params or {}) for r in run.results}


def why_not_comparable(h: Run, like: Run) -> str | None:
    """Why history run `h` cannot tell how runs like `like` vary (None: it can): other
    benchmarks, other options on a result both have (--dir, placement, sizes), another
    preset, or measured while something disturbed it."""
    if _benches(h) != _benches(like):
        return "other benchmarks"
    mine, theirs = _options(like), _options(h)
    if any(theirs[k] != v for k, v in mine.items() if k in theirs):
        return "other options"
    if _presets(h) != _presets(like):
        return "another preset"
    if any(flags.DISTURBED in flags.kinds(r) for r in h.results):
        return "disturbed"
    return None


def from_history(runs: list[Run], db, notes: list | None = None) -> Profile | None:
    """A profile learned from the stored runs comparable with the runs compared (same
    host and smoke-ness, complete, same suite, benchmarks, options and preset, not
    disturbed, not themselves compared: `why_not_comparable`), the latest
    HISTORY_MAX_RUNS of them, when at least HISTORY_MIN_RUNS exist; else None.  The
    profile's `notes` name the runs of the host left out and why; with too few left,
    so does `notes` (a list given by the caller), with how many more are needed."""
    hosts = {(r.sysinfo or {}).get("hostname") for r in runs}
    if len(hosts) != 1 or None in hosts:
        return None
    (host,) = hosts
    from ..data.store import Store, StoreError
    try:
        store = Store(db, readonly=True)
    except (StoreError, OSError):
        return None
    ids = {r.id for r in runs}
    picked, left_out = [], {}
    try:
        suites = {r.suite for r in runs}
        candidates = [d["id"] for d in store.list_runs()
                      if d["host"] == host and d["status"] == "complete" and d["id"] not in ids
                      and bool(d["smoke"]) == bool(runs[0].smoke) and d["suite"] in suites]
        for rid in reversed(candidates[-HISTORY_LOOK_BACK:]):
            h = store.load_run(rid)
            why = why_not_comparable(h, runs[0])
            if why is None:
                picked.insert(0, h)
            else:
                left_out.setdefault(why, []).append(h.name)
            if len(picked) == HISTORY_MAX_RUNS:
                break
    except StoreError:
        return None
    finally:
        store.close()
    said = ["history of %s: left out %s (%s)" % (host, ", ".join(names), why)
            for why, names in left_out.items()]
    if len(picked) < HISTORY_MIN_RUNS:
        if notes is not None and (picked or left_out):
            notes.append("history of %s: %d comparable run(s) (%s), %d needed to learn "
                         "between-run noise: not used" % (
                             host, len(picked), ", ".join(h.name for h in picked) or "none",
                             HISTORY_MIN_RUNS))
            notes.extend(said)
        return None
    try:
        profile = estimate(picked, "history of %s" % host)
    except NoiseError:
        return None
    profile.notes = said
    return profile


# ---- where profiles live ---------------------------------------------------------------

def load(ref: str, db) -> Profile:
    """A profile by stored name, or from a file written by `osmeter noise -o`."""
    import os
    if os.path.sep in ref or ref.endswith(".json"):
        try:
            with open(ref, encoding="utf-8") as f:
                doc = json.load(f)
        except OSError as e:
            raise NoiseError("cannot read noise profile %s: %s" % (ref, e.strerror))
        except ValueError as e:
            raise NoiseError("noise profile %s is not JSON (%s)" % (ref, e))
        return Profile.from_dict(doc)
    from ..data.store import Store
    with Store(db, readonly=True) as store:
        doc = store.load_noise(ref)
    if doc is None:
        raise NoiseError("no noise profile '%s' (osmeter noise --list shows them; record "
                         "one with osmeter noise RUN RUN RUN ... --name %s)" % (ref, ref))
    return Profile.from_dict(doc)
