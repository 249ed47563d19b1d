"""How precise each kind of benchmark can be, and when a result is less precise than that.

A system call measured in calibrated batches repeats within a percent; starting a
program or writing to a disk varies by several percent on any machine, and nobody can
make it quieter.  So "imprecise" is judged per kind of benchmark: a result is imprecise
when its run-to-run spread (the CV of its per-repetition medians) is larger than its
kind reaches at rest, by more than its repetitions could show by chance.

`KINDS` holds, per kind, the spread nine in ten of its results reach on a quiet machine,
measured by bench/precision.py (the quick suite, 5 repetitions, several runs, counting
only results that nothing disturbed); docs/measurement.md shows the same table.
The limit for n repetitions is that spread times sqrt(chi2(0.95, n-1) / (n-1)): a result
whose true spread is the kind's exceeds it in 5% of runs, whatever n (a normal model of
the repetition medians; tests/test_flags.py checks it by simulation, also on skewed
data).

Phases timed once per repetition that are too short to time alone (one timing of a
100 µs mkdir phase varies by 20% from one to the next) are not results of their own:
`too_short_alone` says which.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fnmatch import fnmatchcase

from . import flags
from ..stats.distributions import chi2_quantile

LEVEL = 0.95          # a spread above the limit: above the kind's, at this confidence


@dataclass(frozen=True)
class Kind:
    name: str             # what the user reads: "system call"
    ids: tuple            # benchmark id patterns (the first kind that matches wins)
    spread: float | None  # run-to-run CV that 9 in 10 of its results reach at rest
                          # (None: not measured yet, and nothing of the kind is judged)
    basis: str            # what was measured (bench/precision.py), or why not
    metrics: tuple = ()   # only these metrics of those benchmarks (empty: every metric)


SCATTER = "scalability curve"       # every scatter result, whatever its id
CPU_TIME_METRICS = ("user", "system")   # a program's own CPU time (app.*, cmd.*)
SIZE_UNITS = ("bytes", "B", "KiB", "MiB", "GiB", "pages")   # sizes: not slower, not faster

# Measured at rest by `python3 bench/precision.py --trials 10 --wait-quiet 20` on the
# 2-vCPU Debian 12 VM this project is developed on (2026-11-23, about 21:00 UTC: 10 runs
# of 43 representative benchmarks at the quick sizes, 5 repetitions each; other
# processes used 0.00 CPUs and steal was 0 throughout): per kind, the 90th percentile
# over its results of their run-to-run CV pooled over the 10 runs.  With these, 2-10% of
# a kind's quiet results are flagged.  Another machine's spreads may differ: run the
# script there and read its table.  Those 43 benchmarks gave 37% of a quick run's
# results (of its memory results 57 of 214, of its scalability curves 5 of 16), and quick
# runs nothing disturbed had 16-33% flagged (issue 25; measured again on quick runs at
# rest: the README's Measured figures).


def measured(results: int) -> str:
    return "%d results in 10 quiet runs, 2-vCPU VM, 2026-11-23 (bench/precision.py)" % results


KINDS = (
    # A program's user and system CPU time (getrusage): counted in scheduler ticks.
    Kind("program CPU time", ("app.*", "cmd.*", "*"), 0.268, measured(8), CPU_TIME_METRICS),
    Kind("memory", ("mem.*", "fs.cache_read*"), 0.138, measured(49)),
    Kind("system call", ("syscall.*", "lat.*", "fs.openclose", "cpu.*", "ub.syscall"), 0.039,
         measured(11)),
    Kind("process creation", ("proc.*", "thread.lifecycle", "ub.spawn", "ub.execl"), 0.033,
         measured(5)),
    Kind("context switch and IPC", ("ctx.*", "thread.*", "ub.pipe", "ub.ctx"), 0.177,
         measured(15)),
    Kind("network", ("net.*",), 0.080, measured(5)),
    Kind("file system", ("fs.*", "mab.*"), 0.405, measured(24)),
    Kind("program start-up", ("app.start.*", "app.vim_open"), 0.057, measured(6)),
    Kind(SCATTER, (), 0.029, measured(5)),
    Kind("application", ("*",), 0.042, measured(2)),   # whole programs, users' commands
)

# A phase timed once per repetition needs at least this long for one timing to reach
# the precision of its kind: measured at rest (bench/precision.py, the run above), most
# phases under 1 ms spread 26-38% (mab.local stat, mkdir, copy, o90_copy; a jitter of
# up to 0.25 ms per timing), those above it 1.3-15% (fs.rm_tree 22 ms, fs.tar.extract
# 33 ms, mab.local compile 0.39 s), within their kinds' spreads.
SHORTEST_ALONE_S = 0.001
# Metrics sampled once per repetition that are not one short timing: a per-operation
# average over a long timed loop (thread.pingpong: a 0.26 s game divided by its
# hand-offs), precise however small the value.
NOT_ONE_TIMING = (("thread.pingpong*", "per_handoff"),)
# Shares of events that sit at a bound (datagrams lost, a file's pages resident): their
# spread is in percentage points, and a share that is 0 in some repetitions (loss 0, 0,
# 18.4, 8.2, 0) has a CV of 100% or more out of nothing, whatever the kind reaches at
# rest.  No spread in points has been measured at rest: they are not judged imprecise.
SHARES = (("net.udp_ttcp*", "loss"), ("fs.bonnie.warm", "resident"))
TIME_UNITS_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def kind_of(bench: str, shape: str = "point", metric: str | None = None) -> Kind:
    if shape == "scatter":
        return next(k for k in KINDS if k.name == SCATTER)
    return next(k for k in KINDS if any(fnmatchcase(bench, p) for p in k.ids)
                and (not k.metrics or metric in k.metrics))


def limit(kind: Kind, repetitions: int) -> float | None:
    """The largest spread n repetitions of a result as precise as its kind show in 95%
    of runs (None: the kind's spread is not measured)."""
    if kind.spread is None:
        return None
    df = repetitions - 1
    return kind.spread * math.sqrt(chi2_quantile(LEVEL, df) / df)


ADVICE = ("more repetitions narrow its interval (--repetitions 10, or --until-ci PCT "
          "--max-repetitions N); "
          "a longer preset (--preset default) measures longer per repetition; a spread this "
          "large also comes from what osmeter cannot see (another VM on the host, a cold "
          "disk)")


def judge(summary: dict, bench: str, shape: str = "point",
          metric: str | None = None) -> list[flags.Flag]:
    """An imprecise flag when the result's spread is above what its kind reaches at rest
    (none with one repetition: there is no run-to-run spread to judge; none for SHARES,
    whose CV means nothing)."""
    reps = summary.get("repetitions") or 0
    cv = summary.get("cv")
    if reps < 2 or cv is None or not summary.get("n") or any(
            fnmatchcase(bench, b) and metric == m for b, m in SHARES):
        return []
    kind = kind_of(bench, shape, metric)
    most = limit(kind, reps)
    if most is None or cv <= most:
        return []
    return [flags.Flag(
        flags.IMPRECISE, flags.SPREAD,
        "run-to-run variation %.1f%% is above the %.1f%% a %s result reaches at rest with "
        "%d repetitions" % (100 * cv, 100 * most, kind.name, reps),
        ADVICE, round(cv, 4), round(most, 4))]


def too_short_alone(samples, unit: str, shape: str, bench: str = "",
                    metric: str = "") -> float | None:
    """The median of a time measured once per repetition that is too short to time alone
    (in seconds), else None."""
    if shape != "point" or unit not in TIME_UNITS_S or not samples or any(
            fnmatchcase(bench, b) and metric == m for b, m in NOT_ONE_TIMING):
        return None
    per_rep: dict[int, int] = {}
    for s in samples:
        per_rep[s.rep] = per_rep.get(s.rep, 0) + 1
    if any(n != 1 for n in per_rep.values()):
        return None                  # timed in batches or several times: not a lone phase
    values = sorted(s.value for s in samples)
    seconds = values[len(values) // 2] * TIME_UNITS_S[unit]
    return seconds if seconds < SHORTEST_ALONE_S else None
