"""How long the rest of a run will take, for the progress line.

Before anything is measured, the estimate is what the core declares for one repetition
of each benchmark at the preset being run (`est` in core/bench/*.c: seconds measured on
the reference machine by bench/eta_estimates.py, one value per preset, because a smoke
repetition takes a hundredth of a default one).  As the run goes it corrects itself:
a benchmark measured in this run is expected to take what it took, and one not measured
yet is scaled by how the measured ones compared with their estimates (a machine twice
as slow as the reference doubles them all after the first few benchmarks).

Why not durations remembered from earlier runs on this machine?  They would be better
on a second run, but the first run of a new machine, where a wrong ETA does the most
harm, has none; the declared estimates cover it, and the correction covers the machine.
"""
from __future__ import annotations

from .catalog import Catalog
from .plan import PlanItem


def declared(catalog: Catalog, item: PlanItem) -> float:
    """The core's estimate of one repetition of `item` at its preset, in seconds."""
    return catalog.estimates(item.bench)[item.preset]


def first_estimate(catalog: Catalog, items: list[PlanItem], rounds: int,
                   nvariants: int = 1) -> float:
    """The whole run before anything was measured."""
    return sum(declared(catalog, it) for it in items) * rounds * nvariants


def remaining_seconds(catalog: Catalog, items: list[PlanItem], rep: int, current: PlanItem,
                      rounds: int, nvariants: int, durations: dict) -> float:
    """Time left from `current` in round `rep` (0-based) on, with `items` still to run in
    each round; `durations` maps an item's result id to the seconds its repetitions took."""
    measured = [it for it in items if durations.get(it.result_id)]
    seen = {it.result_id: sum(durations[it.result_id]) / len(durations[it.result_id])
            for it in measured}
    scale = 1.0
    if measured:
        expected = sum(declared(catalog, it) for it in measured)
        if expected > 0:
            scale = sum(seen.values()) / expected

    def per_rep(it: PlanItem) -> float:
        return seen.get(it.result_id, declared(catalog, it) * scale)

    per_round = sum(per_rep(it) for it in items) * nvariants
    position = items.index(current)
    this_round = sum(per_rep(it) for it in items[position:]) * nvariants
    return this_round + per_round * (rounds - rep - 1)
