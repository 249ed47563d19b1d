"""How long the rest of a run will take, for the progress line.

Before anything is measured, the estimate is what the core declares for one repetition
of each benchmark at the preset being run (`est` in core/bench/*.c: seconds measured on
the reference machine by bench/eta_estimates.py, one value per preset, because a smoke
repetition takes a hundredth of a default one).  A benchmark known before the run to
skip here (needs.py: a program not installed, a facility this system lacks) counts 0:
its estimate (minutes for the video players) is no time to come.

As the run goes the estimate corrects itself: a benchmark measured in this run is
expected to take what it took, and one not measured yet is scaled by how the measured
ones compared with their estimates (a machine twice as slow as the reference doubles
them), per family where the family has measured benchmarks (a busy machine's memory
benchmarks took 15-45 times their estimate while its system calls took theirs), and
for a family not measured yet by the families' average on a log scale.  The
machine's scale is drawn towards 1 by up to PRIOR_S seconds of the reference machine's
time, so that the first few short benchmarks (whose process start-up dwarfs their
estimate) do not swing the whole ETA by minutes in the first seconds.  Benchmarks that skipped
say nothing about the machine's speed and are left out of the scale.

Within a long item (a UnixBench loop of 50 s) the estimate moves with the clock:
`Countdown` takes the time left when the item starts and counts down while it runs,
never below what the items after it will take.

Where earlier runs on this host recorded what each benchmark took (environment.timing),
those times replace the declared estimates (`Remembered`): the estimates come from one
reference machine, and a VM reporting a 260 MiB L3 cache runs the memory benchmarks at
sizes up to four times that (at load 12: 25-45 times their estimate).  The first run of
a new machine has none: the declared estimates cover it, and the correction covers the
machine.
"""
from __future__ import annotations

import math
import time

from .catalog import Catalog
from .plan import PlanItem

PRIOR_S = 30.0      # reference seconds of evidence the scale starts with (at 1.0), at most
FAMILY_PRIOR_S = 0.1    # a family's scale starts at the machine's, for this much evidence


def declared(catalog: Catalog, item: PlanItem) -> float:
    """The core's estimate of one repetition of `item` at its preset, in seconds."""
    return catalog.estimates(item.bench)[item.preset]


class Remembered:
    """The estimates of one machine: what each benchmark took at its preset in the
    latest runs on this host (their recorded timing), else the core's declared one.
    Pass it wherever a catalog is taken below."""

    def __init__(self, catalog: Catalog, timings: list[dict]):
        self.catalog = catalog
        self.times: dict[tuple, float] = {}
        for timing in timings:                      # newest first: the newest wins
            preset = "smoke" if timing.get("smoke") else \
                "quick" if timing.get("suite") == "quick" else "default"
            skipped = set(timing.get("skipped_known") or [])
            for rid, step in (timing.get("steps") or {}).items():
                took = sorted(step.get("measured_s") or [])
                if took and not step.get("skipped") and rid not in skipped:  # 0 s says nothing
                    self.times.setdefault((rid, step.get("preset") or preset),
                                          took[len(took) // 2])

    def estimate(self, item: PlanItem) -> float:
        return self.times.get((item.result_id, item.preset), declared(self.catalog, item))


def _base(source, item: PlanItem) -> float:
    """One repetition's estimate before this run measured it: a Remembered's, or the
    core's."""
    return source.estimate(item) if isinstance(source, Remembered) else declared(source, item)


def first_estimate(catalog: Catalog, items: list[PlanItem], rounds: int,
                   nvariants: int = 1, skipping=frozenset()) -> float:
    """The whole run before anything was measured (the benchmarks in `skipping` count 0)."""
    return sum(_base(catalog, it) for it in items
               if it.result_id not in skipping) * rounds * nvariants


def _ratio(seen: float, expected: float, prior: float, towards: float) -> float:
    """seen / expected, drawn towards `towards` by `prior` seconds of estimate."""
    return (seen + prior * towards) / (expected + prior)


def family(item: PlanItem) -> str:
    return item.bench.split(".", 1)[0]


# Benchmarks whose duration a clock sets, not the machine's speed: UnixBench's items run
# for a fixed time, the players decode at the media's own pace (ffmpeg -re).  A machine
# twice as fast takes them as long, so they neither set the machine's scale nor take it
# (the full suite's first run here: the playback of 91 s was expected in 53 s, because the
# other app benchmarks had been faster than declared, and the ETA at half-way was 55% short).
PACED = ("ub.", "app.cpu.")


def paced(item: PlanItem) -> bool:
    return item.bench.startswith(PACED)


def scales(catalog: Catalog, items: list[PlanItem], durations: dict,
           skipped=frozenset()) -> tuple[float, dict]:
    """(machine, {family: scale}): how much longer than declared this machine's
    benchmarks take so far, over all and per family (the memory benchmarks of a busy
    machine may take 20 times their estimate while the system calls take theirs).  The
    machine's scale is the families' weighted log-average, drawn towards 1 by PRIOR_S
    seconds of estimate (at most a tenth of a round); a family's is drawn towards the
    machine's by FAMILY_PRIOR_S.  Chosen with bench/suite_timing.py --replay over four
    quick runs and a full run of a 2-vCPU VM at load 6-19 (the full run within 25% of
    the time left from its first minute on; docs in issue 29's note)."""
    rounds = [it for it in items if it.result_id not in skipped]
    prior = max(0.5, min(PRIOR_S, 0.1 * sum(_base(catalog, it) for it in rounds)))
    seen, exp = {}, {}
    for it in rounds:
        if durations.get(it.result_id) and not paced(it):
            f = family(it)
            seen[f] = seen.get(f, 0.0) + (sum(durations[it.result_id])
                                          / len(durations[it.result_id]))
            exp[f] = exp.get(f, 0.0) + _base(catalog, it)
    # The machine: the families' ratios averaged on a log scale, each weighted by the
    # estimate it covers, so that one family far off its estimates (the memory
    # benchmarks at a large cache's sizes, 30x) moves the others less than a plain sum
    # would (which overestimated the end of a quick run by 3x); drawn towards 1 while
    # little has been measured.
    evidence = sum(exp.values())
    typical = math.exp(sum(exp[f] * math.log(_ratio(seen[f], exp[f], 1.0, 1.0))
                           for f in seen) / evidence) if evidence > 0 else 1.0
    machine = (typical * evidence + prior) / (evidence + prior)
    return machine, {f: _ratio(seen[f], exp[f], FAMILY_PRIOR_S, machine) for f in seen}


def expected(catalog: Catalog, item: PlanItem, durations: dict, skipped=frozenset(),
             scale=(1.0, {})) -> float:
    """What one repetition of `item` is expected to take: what it took in this run, else
    its estimate times its family's scale, or the machine's (`scales`); 0 when it skips
    here."""
    if durations.get(item.result_id):
        return sum(durations[item.result_id]) / len(durations[item.result_id])
    if item.result_id in skipped:
        return 0.0
    if paced(item):
        return _base(catalog, item)
    machine, by_family = scale
    return _base(catalog, item) * by_family.get(family(item), machine)


def drift(items: list[PlanItem], durations: dict, rep: int, position: int,
          nvariants: int = 1) -> float:
    """How much slower (> 1) or faster this round's benchmarks so far ran than the same
    benchmarks in the earlier rounds: a shared machine's load changes over a run (one
    quick run's rounds took 62, 50, 55, 80 and 106 s).  Drawn towards 1 by a twentieth
    of a round."""
    if rep < 1:
        return 1.0
    now = before = 0.0
    for it in items[:position]:
        took = durations.get(it.result_id) or []
        if len(took) >= (rep + 1) * nvariants:     # measured in this round and before
            now += sum(took[rep * nvariants:(rep + 1) * nvariants]) / nvariants
            before += sum(took[:rep * nvariants]) / (rep * nvariants)
    prior = 0.05 * sum(sum(d) / len(d) for d in durations.values() if d)
    return (now + prior) / (before + prior) if before + prior > 0 else 1.0


def remaining_seconds(catalog: Catalog, items: list[PlanItem], rep: int, current: PlanItem,
                      rounds: int, nvariants: int, durations: dict,
                      skipped=frozenset(), variant: int = 0) -> float:
    """Time left from `current` (its variant number `variant`) in round `rep` (0-based)
    on, with `items` still to run in each round; `durations` maps an item's result id
    to the seconds its repetitions took; `skipped`: result ids that skip here (known
    before the run, or seen skipping)."""
    scale = scales(catalog, items, durations, skipped)
    pace = drift(items, durations, rep, items.index(current), nvariants)

    def per_rep(it: PlanItem) -> float:
        took = expected(catalog, it, durations, skipped, scale)
        return took * pace if durations.get(it.result_id) else took

    per_round = sum(per_rep(it) for it in items) * nvariants
    position = items.index(current)
    this_round = (sum(per_rep(it) for it in items[position + 1:]) * nvariants
                  + per_rep(current) * (nvariants - variant))
    return this_round + per_round * (rounds - rep - 1)


class Countdown:
    """The ETA between two benchmarks: set when an item starts (`start`), read any time
    (`now`), moving down with the clock while the item runs."""

    def __init__(self):
        self.at = time.monotonic()
        self.total = 0.0        # the time left when the current item started
        self.after = 0.0        # what the items after the current one will take

    def start(self, total: float, after: float) -> None:
        self.at, self.total, self.after = time.monotonic(), total, min(after, total)

    def now(self) -> float:
        return max(self.after, self.total - (time.monotonic() - self.at))
