"""Results in the formats other tools read: one module per format (docs/formats.md).

A module of this package that defines a `Format` is registered by that alone
(`formats()` finds it; `osmeter export --format` offers it; tests/test_registries.py
holds README's and docs/formats.md's lists to it).  Every exporter is a function
`render(runs) -> Export`: the text of the file and, one line
each, what the format could not carry (so `osmeter export` can say so).  Most formats
describe one run, because the tools that read them do the comparing themselves (pyperf
compare_to, Bencher's thresholds, github-action-benchmark's alerts); the long format
holds several.  The regression gate's JUnit file is written by junit.py from the gate's
rows, not from runs.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable

from ..data.model import Result, Run, _fmt_x


@dataclass
class Export:
    text: str
    left_out: list[str] = field(default_factory=list)   # what the format cannot carry
    entries: int | None = None      # what it does carry; 0 = nothing worth a file


@dataclass
class Format:
    name: str
    render: Callable[[list[Run]], Export]
    what: str
    several_runs: bool = False


DEFAULT = "osmeter"


def formats() -> dict[str, Format]:
    """Every Format defined by a module of this package, the default first."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        mod = importlib.import_module("%s.%s" % (__name__, info.name))
        found += [v for v in vars(mod).values() if isinstance(v, Format)]
    found.sort(key=lambda f: f.name != DEFAULT)
    return {f.name: f for f in found}


# ---- naming results in formats keyed by name ----------------------------------------

def point_name(r: Result) -> str:
    """The benchmark and, for a sweep point, where it lies: 'mem.read [bytes=4096]'."""
    if r.x is None:
        return r.bench
    return "%s [%s=%s]" % (r.bench, r.x_name or "x", _fmt_x(r.x))


def measured(run: Run) -> list[Result]:
    """Results with a value; skipped and failed ones are absent from foreign formats."""
    return [r for r in run.results if r.status == "ok" and "median" in r.summary]


def unique_names(results: list[Result]) -> dict[int, str]:
    """id(result) -> its label, spelled out (and numbered) where two labels coincide."""
    names: dict[int, str] = {}
    taken: set[str] = set()
    for r in results:
        name = r.label
        if name in taken:       # the short label leaves the metric out: put it in
            name = "%s %s" % (r.bench, r.metric) + (
                "" if r.x is None else " [%s=%s]" % (r.x_name or "x", _fmt_x(r.x)))
        base, n = name, 1
        while name in taken:
            n += 1
            name = "%s #%d" % (base, n)
        taken.add(name)
        names[id(r)] = name
    return names


def count_note(n: int, what: str) -> list[str]:
    """['3 results ...'] or [] when there are none."""
    return ["%d %s" % (n, what)] if n else []


def not_measured_note(run: Run) -> list[str]:
    n = sum(1 for r in run.results if r.status != "ok")
    return count_note(n, "skipped or failed result(s): absent (a number is measured or absent)")
