"""osmeter's public API: the names a script may import and rely on.

    from osmeter import api

    [run] = api.measure(["syscall.getpid", "ctx.*"], repetitions=5)
    with api.open_store() as store:           # where `osmeter run` stores (or a path/URL)
        base = store.load_run("main")
    cmp = api.compare([base, run])
    outcome = api.gate(cmp, 10)               # the regression gate's outcome, as data
    print(api.comparison_text(cmp, gate=outcome))
    raise SystemExit(outcome.exit_code)

The scripts in bench/ use these names.  Everything else under osmeter/ is internal: its
modules move (issue #42 moved every one of them) and its names change without notice.
A script that needs something missing here should ask for it to be added, not import
the module it lives in.  `tests/test_api.py` holds this list to what it names.

A note on words: a *run* is what `osmeter run` stores (a `Run`, listed by `osmeter
runs`); a *repetition* is one of the separate processes that measure a benchmark inside
it (`--repetitions N`, `--runs N` as hyperfine says, `repetitions=` here).
"""
from __future__ import annotations

from dataclasses import dataclass

from .analysis.compare import CompareError, Comparison, compare
from .analysis.gate import Gate, GateRow, evaluate as gate
from .analysis.noise import NoiseError, Profile as NoiseProfile, estimate as estimate_noise
from .data.exchange import ExchangeError, read_run_file, write_run_file
from .data.model import Result, Run, Sample
from .data.store import Store, StoreError
from .report import gate_words, tables
from .running import runner
from .running.catalog import PRESETS, SUITES, Catalog
from .running.coreproc import CoreError, Invocation, core_path, invoke
from .running.plan import Options, build, validate
from .stats import median, median_interval, summarize
from .stats.distributions import t_sf
from .stats.significance import (ALPHA, compare_values, log_ratio_t, mann_whitney_u,
                                 rep_values, slowdown, speed_logs, t_test)

__all__ = (
    # what a run is
    "Run", "Result", "Sample",
    # making one: the catalogue, a plan, the runner; one benchmark in the core alone
    "Catalog", "SUITES", "PRESETS", "Plan", "plan", "measure",
    "invoke", "Invocation", "core_path", "CoreError",
    # keeping runs: the store, results files
    "open_store", "StoreError", "read_run_file", "write_run_file", "ExchangeError",
    # what results mean: comparisons, the regression gate, between-run noise
    "compare", "Comparison", "CompareError", "gate", "Gate", "GateRow",
    "estimate_noise", "NoiseProfile", "NoiseError",
    # the statistics behind them (docs/statistics.md)
    "summarize", "median", "median_interval", "ALPHA", "rep_values", "speed_logs",
    "log_ratio_t", "t_test", "t_sf", "mann_whitney_u", "compare_values", "slowdown",
    # words: as the commands write them
    "comparison_text", "gate_text",
)


@dataclass
class Plan:
    """What to run, checked against the core: built once, measured as often as wanted."""
    catalog: Catalog
    items: list
    variants: list
    suite: str | None = None          # the suite the stored run names, if any
    smoke: bool = False               # smallest sizes: never compared with real runs


def plan(ids=(), suite: str | None = None, preset: str | None = None, params=(),
         smoke: bool = False, dirs: list | None = None) -> Plan:
    """The plan of `osmeter run ID... | --suite S [--preset P] [--param ID.KEY=VALUE]`.
    Raises the CatalogError/PlanError of a bad id or parameter (each one line)."""
    catalog = Catalog()
    run_suite, items, variants = build(catalog, list(ids), suite=suite, preset=preset,
                                       smoke=smoke, param_specs=list(params), dirs=dirs)
    validate(catalog, items, variants)
    return Plan(catalog, items, variants, run_suite, smoke)


def measure(what, repetitions: int = 5, label: str | None = None, store=None,
            progress: bool = False, timeout: float = 900.0,
            suite: str | None = None) -> list[Run]:
    """Measure a Plan (or the ids of one) as `osmeter run` does: one Run per variant
    (one, unless the plan names several --dir), stored when a store is given.
    `suite`: the suite name the run records (default the plan's)."""
    p = what if isinstance(what, Plan) else plan(what)
    opts = Options(runs=repetitions, label=label, suite=suite or p.suite, smoke=p.smoke,
                   progress=progress, timeout=timeout)
    return runner.execute(p.catalog, p.items, p.variants, opts, store=store)


def open_store(location=None, readonly: bool = False) -> Store:
    """The results store: an SQLite file, a postgresql:// URL, or (None) where `osmeter`
    keeps it ($OSMETER_DB, else the default).  A context manager."""
    return Store(location, readonly=readonly)


def comparison_text(cmp: Comparison, gate: Gate | None = None, form: str = "text",
                    width: int | None = None) -> str:
    """The comparison as `osmeter compare` writes it: form text, markdown, json or csv
    (the gate's section in all but csv)."""
    if form == "text":
        return tables.terminal(cmp, width=width, gate=gate)
    if form == "markdown":
        return tables.markdown(cmp, gate=gate)
    if form == "json":
        return tables.json_text(cmp, gate=gate)
    if form == "csv":
        return tables.csv_text(cmp)
    raise ValueError("form %r is not text, markdown, json or csv" % form)


def gate_text(outcome: Gate, cmp: Comparison) -> list[str]:
    """The gate's lines as `osmeter compare --fail-on-slower` shows them."""
    return gate_words.section(outcome, cmp.names[cmp.baseline])
