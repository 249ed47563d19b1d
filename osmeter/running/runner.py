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
import os
import secrets
import signal
import tempfile
import threading
import time
from collections import defaultdict

from .. import __version__
from ..analysis import adaptive, monitor, results
from . import coreproc, eta
from ..report import display
from ..system import fsinfo, sysinfo
from .catalog import Catalog
from ..data.model import Run
from .plan import Options, PlanItem, Variant, effective_params


class Interrupted(Exception):
    """Ctrl-C, SIGTERM or SIGHUP (the terminal or SSH connection went away) during a run."""


def new_run_id(now: dt.datetime) -> str:
    return now.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


class Stopper:
    """The handler of Ctrl-C, SIGTERM and SIGHUP for the whole of a run.  While the run
    starts and measures, the first of them stops it (Interrupted, once); after that, while
    the runs are finalised and stored, a signal is noted (`late`: the runs not yet
    finalised are marked interrupted, and the run ends as interrupted: never silently)
    and goes to the store's on_signal (safekeeping.SafeStore: a store that waits stops
    waiting, and the run is kept as a file)."""

    def __init__(self):
        self.measuring = True
        self.late = None
        self.on_signal = None

    def __call__(self, signum, frame):
        if self.measuring:
            self.measuring = False
            raise Interrupted()
        self.late = self.late or signum
        if self.on_signal is not None:
            self.on_signal(signum, frame)


class Ticker:
    """Redraws the progress line every second, so that the ETA moves during long items."""

    def __init__(self, progress, countdown: eta.Countdown, every: float = 1.0):
        self.progress, self.countdown, self.every = progress, countdown, every
        self.what = ""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="osmeter-eta", daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.done.wait(self.every):
            if self.what:
                self.progress.show(self.what, self.countdown.now())

    def stop(self):
        self.done.set()
        self.thread.join()


def execute(catalog: Catalog, items: list[PlanItem], variants: list[Variant], opts: Options,
            store=None, skipping=frozenset(), estimates=None) -> list[Run]:
    """Run the plan and return one Run per variant (stored when a store is given);
    `skipping`: the result ids known before the run to skip here (needs.py), left out
    of the ETA; `estimates`: this machine's remembered times (eta.Remembered), else the
    core's declared estimates are the ETA's start.

    On Ctrl-C / SIGTERM / SIGHUP the runs are finalised with what was measured, marked
    'interrupted', stored, and Interrupted is raised to the caller.
    """
    # A hang-up ignored already (nohup) stays ignored: it must not stop the run.
    stops = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGHUP] if signal.getsignal(
        signal.SIGHUP) != signal.SIG_IGN else [])
    stopper = Stopper()
    old_stops = {sig: signal.signal(sig, stopper) for sig in stops}
    try:
        runs, scratch_parent = _new_runs(variants, opts)
        return _measure_and_store(catalog, items, variants, opts, store, runs,
                                  scratch_parent, stopper, skipping, estimates)
    finally:
        for sig, handler in old_stops.items():
            signal.signal(sig, handler)


def _new_runs(variants: list[Variant], opts: Options) -> tuple[list[Run], str]:
    """One Run per variant, with what is recorded about the system; the scratch
    directory's parent."""
    started = dt.datetime.now(dt.timezone.utc)
    build = coreproc.core_version()
    scratch_parent = tempfile.gettempdir()
    env_before = monitor.before_run()
    elsewhere = coreproc.core_command()     # osmeter run --core: the core runs through it
    # The processes that run a far core here (a guest's qemu) are the benchmark's.
    pids = [p.strip() for p in os.environ.get("OSMETER_CORE_PIDS", "").split(",")
            if p.strip().isdigit()] if elsewhere else []
    monitor.watch_far_core(bool(elsewhere), pids)
    if elsewhere:
        base_info = sysinfo.from_core(coreproc.core_sysinfo(), build, elsewhere)
        # Where the core ran; the monitor watched this machine, not necessarily that one.
        env_before["core_command"] = elsewhere
        if pids:
            env_before["core_pids_counted_as_own"] = pids
    else:
        base_info = sysinfo.collect(build)
        base_info["scratch_filesystem"] = fsinfo.describe(scratch_parent)
    runs = []
    for i, variant in enumerate(variants):
        info = dict(base_info)
        if variant.facts:
            info["variant"] = variant.facts
        label = opts.label
        if variant.name and not (opts.label and len(variants) == 1):
            # several variants are told apart by their names; one keeps the user's label
            label = "%s:%s" % (opts.label or "run", variant.name)
        runs.append(Run(id=new_run_id(started) + ("" if len(variants) == 1 else str(i + 1)),
                        label=label, started=started.isoformat(timespec="seconds"),
                        suite=opts.suite, smoke=opts.smoke, command=opts.command,
                        osmeter_version=__version__, sysinfo=info,
                        environment=dict(env_before, warnings=list(env_before["warnings"]))))
    return runs, scratch_parent


def _measure_and_store(catalog: Catalog, items: list[PlanItem], variants: list[Variant],
                       opts: Options, store, runs: list[Run], scratch_parent: str,
                       stopper: Stopper, skipping=frozenset(), estimates=None) -> list[Run]:
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
    skipped = set(skipping)         # known before the run, and seen skipping since
    source = estimates or catalog   # what the ETA starts from
    countdown = eta.Countdown()
    trace = []                      # (seconds into the run, ETA shown) at each item's start
    ticker = Ticker(progress, countdown) if opts.progress else None
    interrupted = False
    try:
        todo = items
        for rep in range(rounds):
            if adaptive_on and rep >= first_check:
                if opts.until_ci:
                    still = adaptive.unsettled(catalog, todo, invocations, opts.until_ci,
                                               adaptive.look_of(rep, first_check))
                elif rep in adaptive.decided_looks(first_check, opts.max_runs):
                    still = adaptive.undecided(catalog, todo, invocations,
                                               opts.until_decided, opts.against,
                                               first=first_check, max_runs=opts.max_runs,
                                               items=items)
                else:
                    still = todo
                progress.total -= (len(todo) - len(still)) * len(variants) * (rounds - rep)
                todo = still
                if not todo:
                    break
            for item in todo:
                for v, variant in enumerate(variants):
                    left = eta.remaining_seconds(source, todo, rep, item, rounds,
                                                 len(variants), durations, skipped, v)
                    countdown.start(left, left - eta.expected(
                        source, item, durations, skipped,
                        eta.scales(source, todo, durations, skipped)))
                    trace.append((round(progress.elapsed(), 1), round(left, 1)))
                    what = "%s (%d/%d)" % (item.result_id, rep + 1, rounds)
                    progress.show(what, left)
                    if ticker:
                        ticker.what = what
                    params = effective_params(catalog, item, variant)
                    t0 = time.monotonic()
                    before = monitor.Snapshot.take()
                    inv = coreproc.invoke(item.bench, params=params, preset=item.preset,
                                          timeout=opts.timeout, scratch_parent=scratch_parent,
                                          env=opts.env)
                    interference = monitor.between(before, monitor.Snapshot.take())
                    durations[item.result_id].append(time.monotonic() - t0)
                    if inv.status == "skipped":
                        skipped.add(item.result_id)
                    invocations[v][item.result_id].append((rep, inv, interference))
                    progress.done += 1
        stopper.measuring = False       # from here on a signal is noted (Stopper)
    except Interrupted:
        interrupted = True
    finally:
        stopper.measuring = False
        # Finalising and storing are not cut short by a signal; one stops a wait for the
        # store, and the run is kept as a file instead (SafeStore.on_signal).
        stopper.on_signal = getattr(store, "on_signal", None)
        if ticker:
            ticker.stop()
        progress.finish()
    timing = {"measuring_s": round(progress.elapsed(), 3),
              "first_estimate_s": round(progress.first_eta, 3)
              if progress.first_eta is not None else None,
              "eta_trace": trace,
              "skipped_known": sorted(skipping),
              # Wall time of each repetition (all variants) beside the core's estimate,
              # so where a run's time went can be read back (bench/suite_timing.py).
              "steps": {it.result_id: dict({"estimated_s": round(eta.declared(catalog, it), 3),
                                            "preset": it.preset,
                                            "measured_s": [round(d, 3)
                                                           for d in durations[it.result_id]]},
                                           **({"skipped": True} if it.result_id in skipped
                                              else {}))
                        for it in items if durations.get(it.result_id)}}

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
        run.status = "interrupted" if interrupted or stopper.late else "complete"
        run.environment["load_after"] = env_after.get("load_before")
        run.environment["busy_after"] = env_after.get("busy_before")
        run.environment["at_rest_after"] = env_after.get("at_rest")
        run.environment["timing"] = timing
        if store is not None and (run.results or not interrupted):
            store.save_run(run)
    if interrupted or stopper.late:
        raise Interrupted()
    return runs
