"""What to run: the plan's items and variants, parameter overrides, and their validation.

A plan is a list of PlanItems (a benchmark with the user's parameters and the preset of
sizes) measured under one or more Variants (one per --dir, say; each becomes one stored
run), with the run's Options.  The sources of items are the command line (`build`), suite
files (suitefile.py) and the user's own commands (user_command.py); the runner
(runner.py) runs what they built.  Every parameter is checked by the core before
anything runs (`validate`).
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field

from . import address, coreproc
from ..data import exchange
from ..system import fsinfo
from ..base import text
from .catalog import DEFAULT_SUITE, SUITES, Catalog, CatalogError


class PlanError(CatalogError):
    """A one-line problem with what was asked to run."""


@dataclass
class PlanItem:
    bench: str
    params: dict = field(default_factory=dict)   # user overrides (strings)
    preset: str = "default"
    name: str | None = None   # stored results' bench id when not `bench` (cmd.NAME)

    @property
    def result_id(self) -> str:
        return self.name or self.bench


@dataclass
class Variant:
    """One configuration measured on this host; becomes one stored run."""
    name: str | None = None                       # e.g. "dir=/mnt/xfs"
    params: dict = field(default_factory=dict)    # applied to benchmarks that declare them
    facts: dict = field(default_factory=dict)     # recorded with the run (fs of --dir, ...)


@dataclass
class Options:
    runs: int = 5
    label: str | None = None
    suite: str | None = None
    smoke: bool = False
    timeout: float = 900.0
    env: dict = field(default_factory=dict)       # extra environment for the core
    progress: bool = True
    command: str = ""
    until_ci: float | None = None                 # adaptive: target +-PCT of the median
    max_runs: int | None = None                   # adaptive: the user's bound
    until_decided: float | None = None            # adaptive: decide a slowdown of PCT
    against: object | None = None                 # ... against this baseline Run

    def __post_init__(self):
        exchange.check_name(self.label, "--label")  # the rule import holds labels to


def build(catalog: Catalog, named: list[str], suite: str | None = None,
          preset: str | None = None, smoke: bool = False, param_specs: list[str] = (),
          dirs: list[str] | None = None, peer: str | None = None,
          file_items: list[PlanItem] | None = None,
          command_items: list[PlanItem] = ()) -> tuple[str | None, list, list]:
    """(suite run, items, variants) for what the user named: ids, globs or families
    (`named`), a suite, or the items of a suite file or of user commands alone.

    preset overrides the sizes the selection implies (a suite's preset, else the
    studies' defaults); smoke overrides both.  param_specs are --param ID.KEY=VALUE.
    """
    suite_run = None
    if file_items is not None:                  # the benchmarks come from a suite file
        ids, implied = [], "default"
    elif named:
        ids, implied = catalog.select(named), "default"
    elif command_items:
        ids, implied = [], "default"
    else:
        suite_run = suite or DEFAULT_SUITE
        ids = catalog.suite(suite_run)
        implied = SUITES[suite_run][1]
    preset = "smoke" if smoke else (preset or implied)
    overrides = parse_param_overrides(catalog, ids, list(param_specs))
    items = [PlanItem(bench=i, params=overrides.get(i, {}), preset=preset) for i in ids]
    items += list(file_items or []) + list(command_items)
    return suite_run, items, variants_for(catalog, ids, dirs, peer)


def parse_param_overrides(catalog: Catalog, ids: list[str], specs: list[str]) -> dict:
    """--param id.key=value (id may be a glob) -> {bench_id: {key: value}}."""
    out: dict[str, dict] = {}
    for spec in specs:
        if "=" not in spec:
            raise PlanError("--param %s: expected ID.KEY=VALUE" % spec)
        lhs, value = spec.split("=", 1)
        if "." not in lhs:
            raise PlanError("--param %s: expected ID.KEY=VALUE" % spec)
        bench_pat, key = lhs.rsplit(".", 1)
        targets = [i for i in ids if i == bench_pat or fnmatch.fnmatchcase(i, bench_pat)]
        if not targets:
            raise PlanError("--param %s: no selected benchmark matches '%s'" % (spec, bench_pat))
        for t in targets:
            if not catalog.declares(t, key):
                names = ", ".join(p["name"] for p in catalog.by_id[t]["params"])
                raise PlanError("--param %s: %s has no parameter '%s' (it has: %s)"
                                % (spec, t, key, names or "none"))
            out.setdefault(t, {})[key] = value
    return out


def variants_for(catalog: Catalog, ids: list[str], dirs: list[str] | None,
                 peer: str | None) -> list[Variant]:
    """One variant per --dir (each a checked, absolute directory), all with --peer."""
    out = [Variant()]
    if dirs:
        out = []
        for d in dirs:
            problem = fsinfo.check_dir(d)
            if problem:
                raise PlanError(problem)
            path = os.path.abspath(d)   # passed to the core as it is; recorded as text
            out.append(Variant(name="dir=" + text.inert(path), params={"dir": path},
                               facts=text.shown({"dir": path,
                                                 "filesystem": fsinfo.describe(path)})))
        if not any(catalog.declares(i, "dir") for i in ids):
            raise PlanError("--dir given, but none of the selected benchmarks uses a directory")
    if peer is not None:
        problem = address.problem(peer)
        if problem:
            raise PlanError("--peer %s: %s" % (text.shown(peer), problem))
        if not any(catalog.declares(i, "peer") for i in ids):
            raise PlanError("--peer given, but none of the selected benchmarks uses a peer")
        for v in out:
            v.params["peer"] = peer
            v.facts["peer"] = peer
    return out


def effective_params(catalog: Catalog, item: PlanItem, variant: Variant) -> dict:
    params = {k: v for k, v in variant.params.items() if catalog.declares(item.bench, k)}
    params.update(item.params)
    return params


def validate(catalog: Catalog, items: list[PlanItem], variants: list[Variant]) -> None:
    """Ask the core to check every parameter of the plan before anything runs."""
    for item in items:
        for variant in variants:
            problem = coreproc.check(item.bench, effective_params(catalog, item, variant))
            if problem:
                raise PlanError(problem)
