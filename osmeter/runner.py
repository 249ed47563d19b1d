"""Running a plan: repetitions in separate processes, interleaved, with progress,
interference watching, interruption and storage.  What to run comes from plan.py; the
samples become results in results.py.

Repetitions are interleaved round-robin (every benchmark once, then every benchmark
again, ...) and, when several variants are measured on one host (several --dir), the
variants are interleaved inside each round, so that drift of the machine hits all of
them alike.
"""
from __future__ import annotations

import datetime as dt
import secrets
import signal
import tempfile
import time
from collections import defaultdict

from . import __version__, adaptive, coreproc, display, eta, fsinfo, monitor, results, sysinfo
from .catalog import Catalog
from .model import Run
from .plan import Options, PlanItem, Variant, effective_params


class Interrupted(Exception):
    """Ctrl-C, SIGTERM or SIGHUP (the terminal or SSH connection went away) during a run."""


def new_run_id(now: dt.datetime) -> str:
    return now.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def _raise_interrupted(signum, frame):
    raise Interrupted()


def execute(catalog: Catalog, items: list[PlanItem], variants: list[Variant], opts: Options,
            store=None) -> list[Run]:
    """Run the plan and return one Run per variant (stored when a store is given).

    On Ctrl-C / SIGTERM / SIGHUP the runs are finalised with what was measured, marked
    'interrupted', stored, and Interrupted is raised to the caller.
    """
    started = dt.datetime.now(dt.timezone.utc)
    build = coreproc.core_version()
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
    # With --until-ci the rounds go on, for the benchmarks not yet narrow enough, up to
    # the user's bound; the first ones make at least a 95% interval possible.
    adaptive_on = bool(opts.until_ci or opts.until_decided)
    rounds = opts.max_runs if adaptive_on else opts.runs
    first_check = max(opts.runs, adaptive.first_look()) if opts.until_ci else opts.runs
    total = rounds * len(items) * len(variants)
    progress = display.Progress(total, opts.progress)
    interrupted = False
    stops = (signal.SIGTERM, signal.SIGHUP)
    old_stops = {sig: signal.signal(sig, _raise_interrupted) for sig in stops}
    try:
        todo = items
        for rep in range(rounds):
            if adaptive_on and rep >= first_check:
                if opts.until_ci:
                    still = adaptive.unsettled(catalog, todo, invocations, opts.until_ci,
                                               adaptive.look_of(rep, first_check))
                elif rep in adaptive.decided_looks(first_check, opts.max_runs):
                    still = adaptive.undecided(catalog, todo, invocations,
                                               opts.until_decided, opts.against)
                else:
                    still = todo
                progress.total -= (len(todo) - len(still)) * len(variants) * (rounds - rep)
                todo = still
                if not todo:
                    break
            for item in todo:
                for v, variant in enumerate(variants):
                    progress.show("%s (%d/%d)" % (item.result_id, rep + 1, rounds),
                                  eta.remaining_seconds(catalog, todo, rep, item, rounds,
                                                        len(variants), durations))
                    params = effective_params(catalog, item, variant)
                    t0 = time.monotonic()
                    before = monitor.Snapshot.take()
                    inv = coreproc.invoke(item.bench, params=params, preset=item.preset,
                                          timeout=opts.timeout, scratch_parent=scratch_parent,
                                          env=opts.env)
                    interference = monitor.between(before, monitor.Snapshot.take())
                    durations[item.result_id].append(time.monotonic() - t0)
                    invocations[v][item.result_id].append((rep, inv, interference))
                    progress.done += 1
    except (KeyboardInterrupt, Interrupted):
        interrupted = True
    finally:
        for sig, handler in old_stops.items():
            signal.signal(sig, handler)
        progress.finish()
    timing = {"measuring_s": round(progress.elapsed(), 3),
              "first_estimate_s": round(progress.first_eta, 3)
              if progress.first_eta is not None else None,
              # Wall time of each repetition (all variants) beside the core's estimate,
              # so where a run's time went can be read back (bench/suite_timing.py).
              "steps": {it.result_id: {"estimated_s": round(eta.declared(catalog, it), 3),
                                       "measured_s": [round(d, 3)
                                                      for d in durations[it.result_id]]}
                        for it in items if durations.get(it.result_id)}}

    # Finalising and storing must not be cut short by a second Ctrl-C or hang-up.
    old_quiet = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT,
                                                                      signal.SIGHUP)}
    try:
        finished = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        env_after = monitor.before_run() if not interrupted else {}
        for run, invs in zip(runs, invocations):
            run.results = results.build_results(catalog, items, invs,
                                                run.environment.get("at_rest"))
            results.derive(run)
            if opts.until_ci:
                adaptive.record(run, opts.until_ci, opts.max_runs, first_check)
            if opts.until_decided:
                adaptive.record_decided(run, opts.until_decided, opts.max_runs, opts.against,
                                        first_check)
            run.finished = finished
            run.status = "interrupted" if interrupted else "complete"
            run.environment["load_after"] = env_after.get("load_before")
            run.environment["busy_after"] = env_after.get("busy_before")
            run.environment["at_rest_after"] = env_after.get("at_rest")
            run.environment["timing"] = timing
            if store is not None and (run.results or not interrupted):
                store.save_run(run)
    finally:
        for sig, handler in old_quiet.items():
            signal.signal(sig, handler)
    if interrupted:
        raise Interrupted()
    return runs
