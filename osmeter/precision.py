"""How precise each kind of benchmark can be, and when a result is less precise than that.

A system call measured in calibrated batches repeats within a percent; starting a
program or writing to a disk varies by several percent on any machine, and nobody can
make it quieter.  So "imprecise" is judged per kind of benchmark: a result is imprecise
when its run-to-run spread (the CV of its per-repetition medians) is larger than its
kind reaches at rest, by more than its repetitions could show by chance.

`KINDS` holds, per kind, the spread nine in ten of its results reach on a quiet machine,
measured by bench/precision.py (the quick suite, 5 repetitions, several runs, counting
only results that nothing disturbed); README "How it measures" shows the same table.
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
from .distributions import chi2_quantile

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

# To be measured at rest by `python3 bench/precision.py --by-kind --wait-quiet 30
# --only-quiet` (the 90th percentile over the kind's results of their spread pooled over
# the runs nothing disturbed).  Not measured yet: on the shared 2-vCPU VM this project is
# developed on, other processes used 1-1.7 CPUs and the hypervisor stole up to 16%
# throughout the attempt (2026-11-23), and spreads measured so (memory: 36%) would be
# no limit at all.  A kind not measured judges nothing imprecise: absent, not guessed.
NOT_MEASURED = "not measured at rest yet (bench/precision.py)"
KINDS = (
    # A program's user and system CPU time (getrusage): counted in scheduler ticks.
    Kind("program CPU time", ("app.*", "cmd.*", "*"), None, NOT_MEASURED, CPU_TIME_METRICS),
    Kind("memory", ("mem.*", "fs.cache_read*"), None, NOT_MEASURED),
    Kind("system call", ("syscall.*", "lat.*", "fs.openclose", "cpu.*", "ub.syscall"), None,
         NOT_MEASURED),
    Kind("process creation", ("proc.*", "thread.lifecycle", "ub.spawn", "ub.execl"), None,
         NOT_MEASURED),
    Kind("context switch and IPC", ("ctx.*", "thread.*", "ub.pipe", "ub.ctx"), None,
         NOT_MEASURED),
    Kind("network", ("net.*",), None, NOT_MEASURED),
    Kind("file system", ("fs.*", "mab.*"), None, NOT_MEASURED),
    Kind("program start-up", ("app.start.*", "app.vim_open"), None, NOT_MEASURED),
    Kind(SCATTER, (), None, NOT_MEASURED),
    Kind("application", ("*",), None, NOT_MEASURED),   # whole programs, users' commands
)

# A phase timed once per repetition needs at least this long for one timing to reach
# compare's smallest verdict (2%): one timing loses up to about 20 µs to an interrupt or
# a wake-up (mab.local's mkdir at rest, issue 22: 0.1 ms with 19.8% spread), and 20 µs
# is 2% of 1 ms.  bench/precision.py prints each phase's spread x duration (the jitter
# of one timing) to check it.
SHORTEST_ALONE_S = 0.001
# Metrics sampled once per repetition that are not one short timing: a per-operation
# average over a long timed loop (thread.pingpong: a 0.26 s game divided by its
# hand-offs), precise however small the value.
NOT_ONE_TIMING = (("thread.pingpong*", "per_handoff"),)
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


ADVICE = ("more repetitions narrow its interval (--runs 10, or --until-ci PCT --max-runs N); "
          "a longer preset (--preset default) measures longer per repetition; a spread this "
          "large also comes from what osmeter cannot see (another VM on the host, a cold "
          "disk)")


def judge(summary: dict, bench: str, shape: str = "point",
          metric: str | None = None) -> list[flags.Flag]:
    """An imprecise flag when the result's spread is above what its kind reaches at rest
    (none with one repetition: there is no run-to-run spread to judge)."""
    reps = summary.get("repetitions") or 0
    cv = summary.get("cv")
    if reps < 2 or cv is None or not summary.get("n"):
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
