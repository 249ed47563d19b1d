"""Running a plan: repetitions in separate processes, interleaved, with progress,
interference watching, interruption and storage.

Repetitions are interleaved round-robin (every benchmark once, then every benchmark
again, ...) and, when several variants are measured on one host (several --dir), the
variants are interleaved inside each round, so that drift of the machine hits all of
them alike.
"""
from __future__ import annotations

import datetime as dt
import importlib
import pkgutil
import secrets
import shlex
import signal
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field

from . import __version__, core, curves, families, fsinfo, monitor, stats, sysinfo
from .catalog import Catalog, CatalogError
from .model import Result, Run, Sample


class Interrupted(Exception):
    """Ctrl-C, SIGTERM or SIGHUP (the terminal or SSH connection went away) during a run."""


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


def new_run_id(now: dt.datetime) -> str:
    return now.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def validate(catalog: Catalog, items: list[PlanItem], variants: list[Variant]) -> None:
    """Ask the core to check every parameter of the plan before anything runs."""
    import subprocess
    for item in items:
        for variant in variants:
            params = effective_params(catalog, item, variant)
            args = [str(core.core_path()), "check", item.bench] + [
                "%s=%s" % kv for kv in params.items()]
            r = subprocess.run(args, capture_output=True, text=True, timeout=30)
            if r.returncode != 0:
                msg = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "invalid"
                raise CatalogError(msg.replace("osmeter-core: ", ""))


def effective_params(catalog: Catalog, item: PlanItem, variant: Variant) -> dict:
    params = {k: v for k, v in variant.params.items() if catalog.declares(item.bench, k)}
    params.update(item.params)
    return params


class Progress:
    """One line on a terminal (bar, current benchmark, ETA); sparse lines otherwise."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done = total, 0
        self.enabled = enabled
        self.tty = enabled and sys.stderr.isatty()
        self.last_line = 0.0
        self.start = time.monotonic()

    def show(self, what: str, remaining_s: float):
        if not self.enabled:
            return
        eta = _fmt_duration(remaining_s)
        if self.tty:
            width = 24
            filled = int(width * self.done / max(1, self.total))
            line = "[%s%s] %d/%d %-34s ETA %s" % ("#" * filled, "-" * (width - filled),
                                                  self.done, self.total, what[:34], eta)
            self._write("\r" + line[:120])
        elif time.monotonic() - self.last_line > 15 or self.done == 0:
            self._write("progress: %d/%d %s, ETA %s\n" % (self.done, self.total, what, eta))
            self.last_line = time.monotonic()

    def finish(self):
        if self.tty:
            self._write("\r" + " " * 120 + "\r")

    def _write(self, text: str):
        """A terminal that hung up (EIO) ends the progress display, not the run."""
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except OSError:
            self.enabled = self.tty = False


def _fmt_duration(s: float) -> str:
    s = max(0, int(s))
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%ds" % s


def _raise_interrupted(signum, frame):
    raise Interrupted()


def execute(catalog: Catalog, items: list[PlanItem], variants: list[Variant], opts: Options,
            store=None) -> list[Run]:
    """Run the plan and return one Run per variant (stored when a store is given).

    On Ctrl-C / SIGTERM / SIGHUP the runs are finalised with what was measured, marked
    'interrupted', stored, and Interrupted is raised to the caller.
    """
    started = dt.datetime.now(dt.timezone.utc)
    build = core.core_version()
    scratch_parent = tempfile.gettempdir()
    base_info = sysinfo.collect(build)
    base_info["scratch_filesystem"] = fsinfo.describe(scratch_parent)
    env_before = monitor.before_run()
    runs = []
    for i, variant in enumerate(variants):
        info = dict(base_info)
        if variant.facts:
            info["variant"] = variant.facts
        label = opts.label
        if variant.name:
            label = "%s:%s" % (opts.label or "run", variant.name)
        runs.append(Run(id=new_run_id(started) + ("" if len(variants) == 1 else str(i + 1)),
                        label=label, started=started.isoformat(timespec="seconds"),
                        suite=opts.suite, smoke=opts.smoke, command=opts.command,
                        osmeter_version=__version__, sysinfo=info,
                        environment=dict(env_before, warnings=list(env_before["warnings"]))))

    # invocations[v][bench] = list of (rep, Invocation, Interference)
    invocations = [defaultdict(list) for _ in variants]
    durations: dict[str, list[float]] = defaultdict(list)
    total = opts.runs * len(items) * len(variants)
    progress = Progress(total, opts.progress)
    interrupted = False
    stops = (signal.SIGTERM, signal.SIGHUP)
    old_stops = {sig: signal.signal(sig, _raise_interrupted) for sig in stops}
    try:
        for rep in range(opts.runs):
            for item in items:
                for v, variant in enumerate(variants):
                    progress.show("%s (%d/%d)" % (item.result_id, rep + 1, opts.runs),
                                  _remaining_seconds(catalog, items, rep, item, opts.runs,
                                                     len(variants), durations))
                    params = effective_params(catalog, item, variant)
                    before = monitor.Snapshot.take()
                    t0 = time.monotonic()
                    inv = core.invoke(item.bench, params=params, preset=item.preset,
                                      timeout=opts.timeout, scratch_parent=scratch_parent,
                                      env=opts.env)
                    durations[item.bench].append(time.monotonic() - t0)
                    interference = monitor.between(before, monitor.Snapshot.take())
                    invocations[v][item.result_id].append((rep, inv, interference))
                    progress.done += 1
    except (KeyboardInterrupt, Interrupted):
        interrupted = True
    finally:
        for sig, handler in old_stops.items():
            signal.signal(sig, handler)
        progress.finish()

    # Finalising and storing must not be cut short by a second Ctrl-C or hang-up.
    old_quiet = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT,
                                                                      signal.SIGHUP)}
    try:
        finished = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        env_after = monitor.before_run() if not interrupted else {}
        for run, invs in zip(runs, invocations):
            run.results = build_results(catalog, items, invs)
            derive(run)
            run.finished = finished
            run.status = "interrupted" if interrupted else "complete"
            run.environment["load_after"] = env_after.get("load_before")
            run.environment["busy_after"] = env_after.get("busy_before")
            if store is not None and (run.results or not interrupted):
                store.save_run(run)
    finally:
        for sig, handler in old_quiet.items():
            signal.signal(sig, handler)
    if interrupted:
        raise Interrupted()
    return runs


def _remaining_seconds(catalog: Catalog, items: list[PlanItem], rep: int, current: PlanItem,
                       runs: int, nvariants: int, durations: dict) -> float:
    """Time left: measured durations where there are some; elsewhere the registry's
    estimate (for default sizes), scaled by how the measured ones compared with theirs."""
    def registry(bench):
        return float(catalog.by_id[bench].get("est_seconds") or 1.0)
    measured = [b for b in durations if durations[b]]
    scale = 1.0
    if measured:
        scale = (sum(sum(durations[b]) / len(durations[b]) for b in measured)
                 / sum(registry(b) for b in measured))
    def per_rep(bench):
        seen = durations.get(bench)
        return sum(seen) / len(seen) if seen else registry(bench) * scale
    per_round = sum(per_rep(it.bench) for it in items) * nvariants
    position = items.index(current)
    this_round = sum(per_rep(it.bench) for it in items[position:]) * nvariants
    return this_round + per_round * (runs - rep - 1)


def build_results(catalog: Catalog, items: list[PlanItem], invs: dict) -> list[Result]:
    results = []
    for item in items:
        reps = invs.get(item.result_id)
        if not reps:
            continue
        mine = results_for_bench(catalog.by_id[item.bench], reps)
        for r in mine:   # a user's command is stored under its own name
            r.bench = item.result_id
        results += mine
    return results


def results_for_bench(meta: dict, reps: list) -> list[Result]:
    """Turn the invocations of one benchmark into Results (one per metric, per x for sweeps)."""
    ok = [(rep, inv, itf) for rep, inv, itf in reps if inv.status == "ok"]
    bad = [(rep, inv) for rep, inv, _ in reps if inv.status != "ok"]
    metrics = {m["name"]: m for m in meta["metrics"]}
    params = next((inv.header.get("params", {}) for _, inv, _ in reps if inv.header), {})
    if not ok:
        status = "skipped" if all(inv.status == "skipped" for _, inv in bad) else "failed"
        reason = next((inv.reason for _, inv in bad if inv.reason), "no reason given")
        return [Result(bench=meta["id"], metric=m["name"], unit=m["unit"], better=m["better"],
                       shape=m["shape"], x_name=m["x_name"], params=params, status=status,
                       reason=reason) for m in meta["metrics"]]

    grouped: dict[tuple, list[Sample]] = defaultdict(list)
    for rep, inv, _ in ok:
        for metric, x, value in inv.samples:
            shape = metrics[metric]["shape"]
            key_x = x if shape == "sweep" else None
            grouped[(metric, key_x)].append(Sample(rep, x, value))

    common_warnings = []
    if bad:
        common_warnings.append("%d of %d repetitions did not complete: %s"
                               % (len(bad), len(reps), bad[0][1].reason))
    # Interference, added up over the repetitions that measured.
    common_warnings += monitor.judge([itf for _, _, itf in ok])
    notes = merge_notes([inv.notes for _, inv, _ in ok])
    notes["interference"] = [itf.to_dict() for _, _, itf in ok]

    order = {m["name"]: i for i, m in enumerate(meta["metrics"])}
    results = []
    for (metric, x), samples in sorted(grouped.items(),
                                       key=lambda kv: (order[kv[0][0]], kv[0][1] or 0)):
        m = metrics[metric]
        summary = stats.summarize(samples)
        warnings = list(common_warnings)
        if m["shape"] != "scatter":
            warnings += stats.reliability_warnings(summary)
        results.append(Result(bench=meta["id"], metric=metric, unit=m["unit"],
                              better=m["better"], shape=m["shape"], x=x, x_name=m["x_name"],
                              params=params, samples=samples, summary=summary,
                              warnings=warnings, notes=notes))
    return results


def merge_notes(per_rep: list[dict]) -> dict:
    """One value where every repetition agrees, the list of values where they differ."""
    keys = []
    for n in per_rep:
        keys += [k for k in n if k not in keys]
    merged = {}
    for k in keys:
        values = [n.get(k) for n in per_rep]
        merged[k] = values[0] if all(v == values[0] for v in values) else values
    return merged


def derive(run: Run) -> None:
    """Curve classification of scatters, then each family's own analysis."""
    for r in run.results:
        if r.shape == "scatter" and r.status == "ok" and r.samples:
            r.extra["curve"] = curves.summarize_scatter(r.samples, x_name=r.x_name, unit=r.unit)
    for mod_info in pkgutil.iter_modules(families.__path__):
        mod = importlib.import_module("%s.%s" % (families.__name__, mod_info.name))
        fn = getattr(mod, "derive", None)
        if fn is None:
            continue
        for bench in sorted({r.bench for r in run.results}):
            mine = [r for r in run.results if r.bench == bench]
            extra = fn(bench, mine, run.sysinfo) or []
            run.results += extra


def command_line() -> str:
    return " ".join(shlex.quote(a) for a in ["osmeter"] + sys.argv[1:])

