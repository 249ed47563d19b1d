#!/usr/bin/env python3
"""How precise each kind of benchmark is on this machine at rest: the measured basis of
osmeter/precision.py's KINDS and SHORTEST_ALONE_S.

Runs representative benchmarks of every kind (REPRESENTATIVE below; or a suite, or the
ids given) at the quick sizes several times with the usual 5 repetitions, in separate
osmeter runs, and keeps for each result only the runs in which nothing disturbed it (nothing seen meanwhile could move it by 2%: other
processes, steal above the machine's at rest, a clock change; the judgement that flags
results disturbed, at its strictest).  Then, per kind of benchmark (osmeter.precision.kind_of):

  * each result's spread: its run-to-run CV pooled over those quiet runs (root mean
    square), and of these the median, the 90th percentile (the kind's `spread`, what 9
    in 10 of its results reach at rest) and the largest;
  * how often a quiet result would be flagged imprecise with the spreads as they are in
    osmeter/precision.py, and with the ones measured here;
  * phases timed once per repetition: their duration against their spread, and the
    shortest duration from which on every such phase is as precise as its kind (the
    basis of SHORTEST_ALONE_S).

    python3 bench/precision.py [--trials 20] [--runs 5] [--suite S | ID ...]
                               [--json raw.json] [--from raw.json ...]

Long: one run of the representative set takes about a minute on 2 cores (the quick
suite about 2).  Run it on a quiet machine; what it prints says how many results were
quiet in how many runs.  --json is rewritten after every run, so an interrupted
measurement is kept; several --from files are analysed together.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from osmeter import monitor, plan, precision, runner          # noqa: E402
from osmeter.catalog import Catalog                           # noqa: E402

# A result is "at rest" when nothing seen meanwhile could move it by 2%: the judgement
# that flags results disturbed, at its strictest (monitor.judge with its lowest floor).
QUIET = monitor.MIN_EFFECT

# A few benchmarks of every kind (osmeter.precision.KINDS), at their quick sizes.
REPRESENTATIVE = {
    "memory": ["mem.read", "mem.bcopy", "mem.latency", "fs.cache_read"],
    "system call": ["cpu.integer", "syscall.getpid", "syscall.read", "syscall.stat",
                    "syscall.select", "lat.signal", "fs.openclose"],
    "process creation": ["proc.fork.dynamic", "proc.exec.static", "proc.fork_exec_exit",
                         "proc.shell", "thread.lifecycle"],
    "context switch and IPC": ["ctx.pipe_pingpong", "ctx.pipe_ring", "thread.ctx.pipe",
                               "thread.futex.wake", "thread.mutex", "thread.pingpong.e1"],
    "network": ["net.tcp_lat", "net.udp_lat", "net.unix_bw", "net.tcp_bw", "net.tcp_connect"],
    "file system": ["fs.crtdel", "fs.bonnie.write", "fs.bonnie.read", "fs.frag.layout",
                    "fs.tar.extract", "fs.rm_tree", "mab.local"],
    "program start-up": ["app.start.sh", "app.start.python3", "app.vim_open"],
    precision.SCATTER: ["scale.mmap", "scale.socket", "scale.fork.dynamic", "thread.create",
                        "net.http_connect"],
    "application": ["app.convert.avi_mpeg"],
}


def quiet(notes: dict, at_rest: dict) -> bool:
    """Nothing seen meanwhile could move this result by 2% (its stored interference,
    judged as osmeter judges it with the lowest floor)."""
    seen = [p.get("benchmark_cpus") for p in notes.get("interference") or []]
    return bool(seen) and None not in seen and \
        not monitor.disturbances(seen, at_rest, floor=QUIET)


def measure(ids, suite, trials: int, runs: int, path: str | None) -> dict:
    catalog = Catalog()
    if not ids and not suite:
        ids = [i for kind in REPRESENTATIVE.values() for i in kind]
    _, items, variants = plan.build(catalog, ids, suite=None if ids else suite,
                                    preset="quick" if ids else None)
    plan.validate(catalog, items, variants)
    # Every phase, also those osmeter does not show alone: their spread is measured here.
    precision.SHORTEST_ALONE_S = 0.0
    out = {"host": os.uname().nodename, "started": dt.datetime.now().isoformat(
        timespec="seconds"), "suite": None if ids else suite, "ids": ids, "runs": runs,
        "trials": []}
    for t in range(trials):
        load = os.getloadavg()[0]
        opts = plan.Options(runs=runs, suite=None if ids else suite, progress=False)
        [run] = runner.execute(catalog, items, variants, opts)
        rows = []
        for r in run.results:
            s = r.summary or {}
            if r.status != "ok" or (s.get("repetitions") or 0) < 2 or s.get("cv") is None:
                continue
            reps = {}
            for smp in r.samples:
                reps[smp.rep] = reps.get(smp.rep, 0) + 1
            once = r.shape == "point" and r.unit in precision.TIME_UNITS_S and \
                all(n == 1 for n in reps.values())
            rows.append({"bench": r.bench, "metric": r.metric, "x": r.x, "shape": r.shape,
                         "unit": r.unit, "cv": s["cv"], "median": s["median"],
                         "repetitions": s["repetitions"], "once_per_repetition": once,
                         "quiet": quiet(r.notes, run.environment.get("at_rest"))})
        quiet_rows = sum(r["quiet"] for r in rows)
        print("trial %d/%d: load %.2f before, %d results, %d quiet, steal at rest %s"
              % (t + 1, trials, load, len(rows), quiet_rows,
                 (run.environment.get("at_rest") or {}).get("steal")), file=sys.stderr)
        out["trials"].append({"load_before": load, "at_rest": run.environment.get("at_rest"),
                              "rows": rows})
        if path:
            with open(path, "w") as f:
                json.dump(out, f)
    return out


def percentile(values, q: float) -> float:
    v = sorted(values)
    k = (len(v) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def analyse(sources: list[dict]) -> None:
    by_row: dict[tuple, list] = {}
    for data in sources:
        for trial in data["trials"]:
            for r in trial["rows"]:
                by_row.setdefault((r["bench"], r["metric"], r["x"]), []).append(r)
        loads = [t["load_before"] for t in data["trials"]]
        print("%s, %s: %d runs of %s with %d repetitions; load before each run %s"
              % (data["host"], data["started"], len(data["trials"]), data["suite"] or
                 "%d benchmarks" % len(data["ids"]), data["runs"],
                 ", ".join("%.2f" % l for l in loads)))
    quiet_obs = sum(o["quiet"] for obs in by_row.values() for o in obs)
    print("%d results, %d of %d observations quiet" % (
        len(by_row), quiet_obs, sum(len(obs) for obs in by_row.values())))
    kinds: dict[str, list] = {}
    for key, obs in by_row.items():
        calm = [o for o in obs if o["quiet"]]
        if not calm:
            continue
        first = calm[0]
        kind = precision.kind_of(first["bench"], first["shape"])
        pooled = math.sqrt(statistics.fmean(o["cv"] ** 2 for o in calm))
        kinds.setdefault(kind.name, []).append((key, pooled, calm))
    print()
    print("%-24s %5s %5s %9s %9s %9s %9s %11s %11s" % (
        "kind", "rows", "obs", "median", "p90", "max", "in code", "flagged", "flagged"))
    print("%-24s %5s %5s %9s %9s %9s %9s %11s %11s" % (
        "", "", "", "spread", "spread", "spread", "spread", "(code)", "(measured)"))
    measured = {}
    for kind in precision.KINDS:
        rows = kinds.get(kind.name)
        if not rows:
            continue
        spreads = [p for _, p, _ in rows]
        p90 = math.ceil(1000 * percentile(spreads, 0.9)) / 1000     # up to 0.1%
        measured[kind.name] = p90
        obs = [o for _, _, calm in rows for o in calm]
        as_coded = sum(o["cv"] > precision.limit(kind, o["repetitions"]) for o in obs
                       if kind.spread > 0)
        as_measured = sum(o["cv"] > precision.limit(precision.Kind(
            kind.name, kind.ids, p90, ""), o["repetitions"]) for o in obs)
        print("%-24s %5d %5d %8.1f%% %8.1f%% %8.1f%% %8.1f%% %10.1f%% %10.1f%%" % (
            kind.name, len(rows), len(obs), 100 * statistics.median(spreads), 100 * p90,
            100 * max(spreads), 100 * kind.spread, 100 * as_coded / len(obs),
            100 * as_measured / len(obs)))
    print()
    print("Phases timed once per repetition (quiet runs): duration, pooled spread, kind's p90")
    once = []
    for kind_name, rows in kinds.items():
        for key, pooled, calm in rows:
            if calm[0]["once_per_repetition"]:
                seconds = statistics.median(o["median"] for o in calm) * \
                    precision.TIME_UNITS_S[calm[0]["unit"]]
                once.append((seconds, pooled, measured[kind_name], key))
    for seconds, pooled, kind_p90, key in sorted(once):
        print("  %10.6f s  %6.1f%%  (kind %4.1f%%)  %s %s" % (
            seconds, 100 * pooled, 100 * kind_p90, key[0], key[1]))
    worse = [s for s, p, k, _ in once if p > k]
    if once:
        print("Shortest duration from which on every such phase is as precise as its kind: "
              "above %s s" % (max(worse) if worse else 0.0))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--suite")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", help="also write the raw measurements here")
    ap.add_argument("--from", dest="sources", action="append",
                    help="analyse raw measurements written before (repeatable)")
    args = ap.parse_args()
    if args.sources:
        data = []
        for path in args.sources:
            with open(path) as f:
                data.append(json.load(f))
    else:
        data = [measure(args.ids, args.suite, args.trials, args.runs, args.json)]
    analyse(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
