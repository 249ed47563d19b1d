"""Reading across a fleet: many runs (hosts) at once, per benchmark.

For every benchmark result measured in the runs (a point, or one x of a sweep):

* each run's median with its interval, the run named by its label or host;
* the distribution across the runs: least, quartiles, median, most, and the spread
  (interquartile range relative to the median);
* the outlier hosts, named: a host whose value lies far from the others' -- its robust
  z-score on logs, 0.6745 (log v - median) / MAD, beyond cutoff(n) -- and at least the
  smallest effect (2%) away from the fleet's median.  cutoff(n) makes a fleet of n like
  hosts (log-normal values) name any host in at most 5% of fleets, whatever the spread:
  bench/fleet_outliers.py computes the table below and checks it; tests/test_fleet.py
  checks it with a seed of its own.  Fewer than 5 runs name no outliers; neither does a
  benchmark where half the hosts or more have the same value (no spread to measure by);
* the runs grouped by a recorded key (kernel, OS, CPU model, file system, or any dotted
  path into the system description): each group's median and how many runs it has.

Scatter results (the scalability curves) have no single value per run; they stay in the
comparison report.  Nothing here looks at the order of the runs: every run counts alike.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .. import stats
from .compare import category_of
from ..data.model import Run, system_keys

MIN_RUNS = 20           # from this many runs `osmeter report` writes a fleet report
MIN_EFFECT = 0.02       # an outlier is at least this far from the fleet's median
MIN_HOSTS_FOR_OUTLIERS = 5
MAD_TO_SD = 0.6745      # the MAD of a normal distribution, in standard deviations

# hosts -> cutoff of |robust z| (bench/fleet_outliers.py, seed 16): at most 5% of fleets
# of like hosts name an outlier.  Between two sizes the larger cutoff is used.
OUTLIER_CUTOFF = {
    5: 8.802,
    6: 5.934,
    7: 6.208,
    8: 5.145,
    9: 5.425,
    10: 4.822,
    11: 4.827,
    12: 4.528,
    13: 4.626,
    14: 4.352,
    15: 4.458,
    16: 4.295,
    17: 4.331,
    18: 4.192,
    19: 4.204,
    20: 4.130,
    21: 4.146,
    22: 4.035,
    23: 4.080,
    24: 4.020,
    25: 4.060,
    26: 4.000,
    27: 4.003,
    28: 3.954,
    29: 3.978,
    30: 3.922,
    35: 3.915,
    40: 3.853,
    45: 3.858,
    50: 3.816,
    60: 3.849,
    70: 3.828,
    80: 3.801,
    100: 3.808,
    120: 3.812,
    150: 3.828,
    200: 3.878,
    300: 3.942,
    500: 4.018,
    1000: 4.146,
}

# --by KEY: a shortcut for a place in the run's system description
GROUP_KEYS = {
    "host": "hostname", "kernel": "kernel.release", "os": "os.name", "cpu": "cpu.model",
    "arch": "arch", "libc": "libc.version", "virtualization": "virtualization.detected",
    "fs": "variant.filesystem.fs_type|scratch_filesystem.fs_type",
}


class FleetError(Exception):
    """Runs that cannot be read as a fleet (none, smoke mixed with real, a bad key)."""


@dataclass
class HostValue:
    run: int                # index into Fleet.runs
    median: float
    low: float | None       # the interval of the median, where the run has one
    high: float | None
    z: float | None = None  # robust z-score among the fleet (None: not computed)
    outlier: bool = False


@dataclass
class Row:
    bench: str
    metric: str
    x: float | None
    label: str
    unit: str
    better: str
    category: str
    values: list[HostValue] = field(default_factory=list)
    missing: list[tuple[int, str]] = field(default_factory=list)    # (run, why)
    quartiles: tuple[float, float, float, float, float] | None = None
    cutoff: float | None = None     # None: no outliers named, `why_no_outliers` says why
    why_no_outliers: str = ""
    groups: list[tuple[str, int, float]] = field(default_factory=list)  # name, n, median

    @property
    def spread(self) -> float | None:
        """Interquartile range relative to the median."""
        if not self.quartiles or not self.quartiles[2]:
            return None
        return (self.quartiles[3] - self.quartiles[1]) / abs(self.quartiles[2])

    @property
    def outliers(self) -> list[HostValue]:
        return [v for v in self.values if v.outlier]

    def worse(self, v: HostValue) -> bool:
        """Whether the value is worse than the fleet's median."""
        above = v.median > self.quartiles[2]
        return above if self.better == "lower" else not above


@dataclass
class Fleet:
    runs: list[Run]
    names: list[str]            # how each run is called: its label, else its host, else id
    group_by: str | None
    groups: list[str | None]    # each run's group (None: not recorded)
    rows: list[Row]
    left_out: list[str] = field(default_factory=list)   # what a fleet report cannot show


def group_value(run: Run, key: str) -> str | None:
    """The run's value of a --by key (a shortcut or a dotted path into sysinfo)."""
    for path in GROUP_KEYS.get(key, key).split("|"):
        value = run.sysinfo
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None and not isinstance(value, (dict, list)):
            return str(value)
    return None


def run_names(runs: list[Run]) -> list[str]:
    """Each run's name: its label, else its host, else its id; made unique with the id."""
    names = [r.label or system_keys(r.sysinfo)["host"] or r.id for r in runs]
    return [n if names.count(n) == 1 else "%s (%s)" % (n, r.id) for n, r in zip(names, runs)]


def analyse(runs: list[Run], group_by: str | None = None,
            benches: list[str] | None = None) -> Fleet:
    """The fleet's rows; `benches`: globs of the benchmark ids to keep (default all)."""
    import fnmatch
    if not runs:
        raise FleetError("no runs to read as a fleet")
    if len({r.smoke for r in runs}) > 1:
        raise FleetError("smoke runs mixed with real ones: smoke sizes measure almost "
                         "nothing (select one kind, e.g. --where smoke=no)")
    groups = [group_value(r, group_by) for r in runs] if group_by else [None] * len(runs)
    if group_by and all(g is None for g in groups):
        raise FleetError("no run records '%s' (keys: %s, or a dotted path into "
                         "osmeter sysinfo --json)" % (group_by, ", ".join(GROUP_KEYS)))
    rows: dict[tuple, Row] = {}
    scatters = set()
    for i, run in enumerate(runs):
        for res in run.results:
            if benches and not any(fnmatch.fnmatchcase(res.bench, g) for g in benches):
                continue
            if res.shape == "scatter":
                scatters.add(res.bench)
                continue
            row = rows.setdefault(res.key, Row(
                bench=res.bench, metric=res.metric, x=res.x, label=res.label, unit=res.unit,
                better=res.better, category=category_of(res.bench)))
            median = (res.summary or {}).get("median")
            if res.status != "ok" or median is None:
                row.missing.append((i, res.reason or res.status))
                continue
            interval = stats.interval_of(res.summary)
            low, high = (interval[0], interval[1]) if interval else (None, None)
            row.values.append(HostValue(i, float(median), low, high))
    for row in rows.values():
        _describe(row, groups)
    ordered = sorted(rows.values(), key=lambda r: (r.bench, r.metric,
                                                   -1e300 if r.x is None else r.x))
    left = ["%d scatter result(s) (%s): curves, in the comparison report"
            % (len(scatters), ", ".join(sorted(scatters)))] if scatters else []
    return Fleet(runs, run_names(runs), group_by, groups, ordered, left)


def _describe(row: Row, groups: list[str | None]) -> None:
    values = sorted(v.median for v in row.values)
    if not values:
        row.why_no_outliers = "not measured on any run"
        return
    row.quartiles = (values[0], quantile(values, 0.25), quantile(values, 0.5),
                     quantile(values, 0.75), values[-1])
    by_group: dict[str, list[float]] = {}
    for v in row.values:
        if groups[v.run] is not None:
            by_group.setdefault(groups[v.run], []).append(v.median)
    row.groups = sorted(((g, len(vs), quantile(sorted(vs), 0.5)) for g, vs in by_group.items()),
                        key=lambda t: t[0])
    row.cutoff = cutoff_for(len(values))
    if row.cutoff is None:
        row.why_no_outliers = ("fewer than %d runs" % MIN_HOSTS_FOR_OUTLIERS
                               if len(values) < MIN_HOSTS_FOR_OUTLIERS else
                               "more runs than the outlier cutoffs are made for")
        return
    if values[0] <= 0:
        row.cutoff, row.why_no_outliers = None, "a value of zero or less"
        return
    zs: list[float] = []
    flagged = outliers_among([v.median for v in row.values], zs)
    if not zs:
        row.cutoff, row.why_no_outliers = None, "half the runs or more have the same value"
        return
    for v, z in zip(row.values, zs):
        v.z = z
    for k in flagged:
        row.values[k].outlier = True


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between order statistics (type 7)."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def robust_z(logs: list[float]) -> list[float] | None:
    """0.6745 (x - median) / MAD for each x; None when the MAD is 0."""
    ordered = sorted(logs)
    centre = quantile(ordered, 0.5)
    mad = quantile(sorted(abs(x - centre) for x in logs), 0.5)
    if mad <= 0:
        return None
    return [MAD_TO_SD * (x - centre) / mad for x in logs]


def largest_z(logs: list[float]) -> float:
    zs = robust_z(logs)
    return max(abs(z) for z in zs) if zs else 0.0


def cutoff_for(n: int) -> float | None:
    """The cutoff of |z| for n hosts, or None when outliers are not named (too few hosts,
    or more than the table covers)."""
    if n < MIN_HOSTS_FOR_OUTLIERS or n > max(OUTLIER_CUTOFF):
        return None
    if n in OUTLIER_CUTOFF:
        return OUTLIER_CUTOFF[n]
    below = max(k for k in OUTLIER_CUTOFF if k < n)
    above = min(k for k in OUTLIER_CUTOFF if k > n)
    return max(OUTLIER_CUTOFF[below], OUTLIER_CUTOFF[above])


def outliers_among(values: list[float], zs_out: list | None = None) -> list[int]:
    """The indices of the values named outliers (all values positive); `zs_out`, when
    given, receives each value's robust z (nothing when there is no spread)."""
    cut = cutoff_for(len(values))
    if cut is None or any(v <= 0 for v in values):
        return []
    logs = [math.log(v) for v in values]
    zs = robust_z(logs)
    if zs is None:
        return []
    if zs_out is not None:
        zs_out.extend(zs)
    centre = quantile(sorted(logs), 0.5)
    return [i for i, (z, lg) in enumerate(zip(zs, logs))
            if abs(z) > cut and abs(math.exp(lg - centre) - 1) >= MIN_EFFECT]
