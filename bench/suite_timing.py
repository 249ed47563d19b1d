#!/usr/bin/env python3
"""Where a suite's time goes: wall time of each benchmark beside its estimate, and the
total, for one repetition of --suite quick, full or a study suite.

    python3 bench/suite_timing.py --suite quick [--suite full ...] [--runs 1] [--setup]
    python3 bench/suite_timing.py --run REF [--db PATH]     # a stored run instead
    python3 bench/suite_timing.py --run REF --replay        # today's ETA over its times

Each suite runs through the real command (`python3 -m osmeter run --suite S --runs N`)
into a scratch results store; the table comes from what the run recorded itself
(environment.timing.steps: every repetition's wall time, and the core's estimate).
--replay recomputes, with the ETA code as it is now, what the progress line would have
shown over a stored run's recorded times (to judge a change to osmeter/running/eta.py without
running the suite again).  --keep DB keeps the scratch results store.
--setup also times ./run-benchmarks' set-up (scripts/bootstrap.sh, warm: its stamp
makes it fast when nothing changed), as a user's quick suite includes it.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from osmeter import api  # noqa: E402


def load() -> str:
    one, five, _ = os.getloadavg()
    return "load %.2f (1 min) %.2f (5 min) on %d CPUs" % (one, five, os.cpu_count() or 0)


def print_table(run) -> float:
    """The per-benchmark table of a stored run; returns the summed wall time."""
    timing = run.environment.get("timing") or {}
    steps = timing.get("steps")
    if not steps:
        print("run %s recorded no per-benchmark timing (made before it was recorded)" % run.id)
        return float("nan")
    rows = sorted(steps.items(), key=lambda kv: -sum(kv[1]["measured_s"]))
    total_m = sum(sum(s["measured_s"]) for _, s in rows)
    print("%-28s %8s %9s %9s %6s %6s" % ("benchmark", "est s", "wall s", "per rep", "ratio",
                                        "share"))
    for bench, s in rows:
        reps = s["measured_s"]
        per = sum(reps) / len(reps)
        est = s["estimated_s"]
        print("%-28s %8.1f %9.1f %9.1f %6s %5.1f%%"
              % (bench, est, sum(reps), per, "%.2f" % (per / est) if est else "-",
                 100 * sum(reps) / total_m if total_m else 0))
    reps = max(len(s["measured_s"]) for _, s in rows)
    est_total = sum(s["estimated_s"] for _, s in rows) * reps
    print("%-28s %8.1f %9.1f   (%d benchmarks x %d repetition%s; run's own clock %.1f s,"
          " first ETA %s s)"
          % ("TOTAL", est_total, total_m, len(rows), reps, "" if reps == 1 else "s",
             timing.get("measuring_s", float("nan")), timing.get("first_estimate_s")))
    if timing.get("skipped_known"):
        print("known before the run to skip (left out of the ETA): %s"
              % ", ".join(timing["skipped_known"]))
    for line in eta_lines(timing):
        print(line)
    return total_m


def eta_at(trace: list, t: float) -> float:
    """The ETA the progress line showed `t` seconds into the run: the last one set at
    an item's start, counted down with the clock since (as the line does), never below 0."""
    shown = [(at, left) for at, left in trace if at <= t]
    if not shown:
        return float("nan")
    at, left = shown[-1]
    return max(0.0, left - (t - at))


def replayed(run, earlier: list[dict] = ()) -> dict:
    """The run's timing with the ETA trace recomputed by today's osmeter/running/eta.py from its
    recorded repetition times, in the order the run made them (round by round);
    `earlier`: the timings of earlier runs on its host, remembered as a run would."""
    from osmeter.running import eta            # what it replays: internal
    from osmeter.running.plan import PlanItem
    timing = dict(run.environment.get("timing") or {})
    steps = timing.get("steps") or {}
    catalog = eta.Remembered(api.Catalog(), list(earlier))
    preset = "smoke" if run.smoke else "quick" if run.suite == "quick" else "default"
    items = [PlanItem(b, preset=preset) for b in steps if b in catalog.catalog.by_id]
    rounds = max(len(s["measured_s"]) for s in steps.values())
    skipped = set(timing.get("skipped_known") or [])
    seen_skip = {r.bench for r in run.results if r.status == "skipped"}
    durations, trace, clock = {}, [], 0.0
    for rep in range(rounds):
        for it in items:
            times = steps[it.result_id]["measured_s"]
            if rep >= len(times):
                continue
            trace.append((round(clock, 1), round(eta.remaining_seconds(
                catalog, items, rep, it, rounds, 1, durations, skipped), 1)))
            durations.setdefault(it.result_id, []).append(times[rep])
            if it.result_id in seen_skip:
                skipped.add(it.result_id)
            clock += times[rep]
    timing["eta_trace"], timing["measuring_s"] = trace, clock
    timing["first_estimate_s"] = trace[0][1] if trace else None
    return timing


def eta_lines(timing: dict) -> list[str]:
    """The ETA shown against the time that was actually left, at 10%, 50% and 90% of
    the run, and at the first minute."""
    trace, total = timing.get("eta_trace"), timing.get("measuring_s")
    if not trace or not total:
        return ["(no ETA trace recorded: a run made before it was)"]
    out = ["ETA shown against the time actually left:"]
    points = [(p, p * total) for p in (0.0, 0.1, 0.5, 0.9)]
    if total > 60:
        points = sorted(points + [(60 / total, 60.0)])
    for share, t in points:
        shown, left = eta_at(trace, t), total - t
        out.append("  at %5.1f s (%3.0f%%): ETA %7.1f s, actually %7.1f s left: %+.0f%%"
                   % (t, 100 * share, shown, left, 100 * (shown - left) / left if left else 0))
    return out


def run_suite(suite: str, runs: int, db: str) -> tuple[str, float]:
    label = "suite-timing-%s-%d" % (suite, int(time.time()))
    cmd = [sys.executable, "-m", "osmeter", "run", "--suite", suite, "--runs", str(runs),
           "--label", label]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, OSMETER_DB=db),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if proc.returncode not in (0, 1):   # 1: some benchmark failed; the run is stored
        sys.exit("osmeter run --suite %s failed (%d): %s" % (suite, proc.returncode,
                                                            proc.stderr.strip()[-500:]))
    return label, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", action="append", default=[])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--run", help="show a stored run instead of running a suite")
    ap.add_argument("--db", help="results store of --run (default: the user's)")
    ap.add_argument("--setup", action="store_true", help="also time scripts/bootstrap.sh")
    ap.add_argument("--replay", action="store_true",
                    help="with --run: the ETA today's code would show over its times")
    ap.add_argument("--keep", metavar="DB", help="store the suites' runs in DB (kept)")
    args = ap.parse_args()
    if args.run:
        with api.open_store(args.db, readonly=True) as store:
            run = store.load_run(args.run)
        print("# run %s (suite %s), %s now" % (run.id, run.suite, load()))
        if args.replay:
            with api.open_store(args.db, readonly=True) as store:
                timings = store.recent_timings(run.sysinfo.get("hostname"), limit=1000)
            ids = [t["run"] for t in timings]
            earlier = timings[ids.index(run.id) + 1:][:10] if run.id in ids else []
            print("replayed with today's osmeter/running/eta.py%s:" % (
                ", remembering %d earlier run(s) on %s" % (len(earlier),
                                                          run.sysinfo.get("hostname"))
                if earlier else " (no earlier run on this host: the core's estimates)"))
            for line in eta_lines(replayed(run, earlier)):
                print(line)
            return 0
        print_table(run)
        return 0
    if args.setup:
        print("# %s" % load())
        t0 = time.monotonic()
        subprocess.run(["sh", "scripts/bootstrap.sh"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print("set-up (scripts/bootstrap.sh): %.1f s\n" % (time.monotonic() - t0))
    with tempfile.TemporaryDirectory(prefix="suite-timing-") as tmp:
        db = args.keep or os.path.join(tmp, "results.sqlite")
        for suite in args.suite or ["quick"]:
            print("# --suite %s --runs %d: %s at the start" % (suite, args.runs, load()))
            label, wall = run_suite(suite, args.runs, db)
            with api.open_store(db, readonly=True) as store:
                run = store.load_run(label)
            print_table(run)
            print("whole command %.1f s (%.1f min); %s at the end\n"
                  % (wall, wall / 60, load()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
