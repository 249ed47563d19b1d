#!/usr/bin/env python3
"""How precise each kind of benchmark is on this machine at rest: the measured basis of
osmeter/analysis/precision.py's KINDS and SHORTEST_ALONE_S.

Runs the quick suite (or another suite, or the ids given at the quick sizes; with
--by-family one family of them per run, in turn, short enough for the quiet gaps of a
shared machine) several times with the usual 5 repetitions, in separate osmeter runs, as
a user runs it: the spreads are those of the results a user's run judges (issue 25: a
basis measured on 43 representative benchmarks in one-minute runs, 37% of a quick run's
results, flagged 16-33% of quick runs).  It keeps for each result only the runs in which
nothing disturbed it (others used at most 0.1 CPU over the whole run, and nothing seen
while the result was measured could move it by 2%: other processes, steal above the
machine's at rest, a clock change; the judgement that flags results disturbed, at its
strictest).  Then, per kind of benchmark (osmeter.analysis.precision.kind_of):

  * each result's spread: its run-to-run CV pooled over those quiet runs (root mean
    square), and of these the median, the 90th percentile (the kind's `spread`, what 9
    in 10 of its results reach at rest) and the largest;
  * how often a quiet result would be flagged imprecise with the spreads as they are in
    osmeter/analysis/precision.py, and with the ones measured here;
  * per run: the share of its results flagged imprecise, with the spreads in the code and
    with those measured here (what issue 25 asks: at most 10% at rest);
  * phases timed once per repetition: their duration against their spread, and the
    shortest duration from which on every such phase is as precise as its kind (the
    basis of SHORTEST_ALONE_S).

    python3 bench/precision.py [--trials 20] [--runs 5] [--suite S | ID ...]
                               [--json raw.json] [--from raw.json ...]
    python3 bench/precision.py --count DB [LABEL-GLOB]

--count judges again, with the code as it is now, the runs stored in DB (all, or those
whose label matches): per run and kind, how many results are flagged imprecise as stored
and as judged now (spreads from the stored samples; the mem.* cache levels derived again
from the stored sweep points), with the disturbed ones beside them, as stored.  That is
how a change of the limits or of what is judged is counted on real runs.

Long: one run of the quick suite takes 3-5 minutes on 2 cores (one family of it, with
--by-family, from seconds to a minute).  Run it on a quiet machine; what it prints says
how many results were quiet in how many runs.  --json is rewritten after every run, so an interrupted
measurement is kept; several --from files are analysed together.
"""
from __future__ import annotations

import argparse
import copy
import datetime as dt
import fnmatch
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from osmeter import api  # noqa: E402
# What this script measures and calibrates (the kinds' spreads, the flags' judgement,
# the mem.* levels it derives again) is internal by nature; the rest goes through api.
from osmeter.analysis import flags, monitor, precision  # noqa: E402
from osmeter.analysis.families import mem  # noqa: E402

# A result is "at rest" when nothing seen meanwhile could move it by 2%: the judgement
# that flags results disturbed, at its strictest (monitor.judge with its lowest floor).
QUIET = monitor.MIN_EFFECT

SHORTEST_ALONE_S = precision.SHORTEST_ALONE_S   # as in the code (measuring sets it to 0)

# ... in a run during which other processes used at most this many CPUs on average.
RUN_QUIET = 0.1

def quiet(seen: list, at_rest: dict) -> bool:
    """Nothing seen meanwhile could move this result by 2% (its stored interference,
    judged as osmeter judges it with the lowest floor; derived results have none)."""
    return None not in seen and not monitor.disturbances(seen, at_rest, floor=QUIET)


def wait_quiet(most_s: float) -> float:
    """Wait up to `most_s` for a 2-second window in which other processes used at most
    RUN_QUIET CPUs (a shared machine has such gaps); what the last window saw."""
    end = time.monotonic() + most_s
    while True:
        before = monitor.Snapshot.take()
        time.sleep(2.0)
        seen = monitor.between(before, monitor.Snapshot.take())
        others = (seen.other_cpu_s or 0.0) / seen.wall_s
        if others <= RUN_QUIET or time.monotonic() >= end:
            return others


def measure(ids, suite, trials: int, runs: int, path: str | None, by_family: bool = False,
            wait_s: float = 0.0, only_quiet: bool = False) -> dict:
    catalog = api.Catalog()
    if not ids and not suite:
        suite = "quick"
    if ids:
        groups, preset = [ids], "quick"
    else:
        groups, preset = [list(catalog.suite(suite))], api.SUITES[suite][1]
    if by_family:
        # Each run measures one family of them (in turn), short enough to fit in the
        # quiet gaps of a shared machine; every benchmark is still measured.
        families: dict[str, list] = {}
        for i in groups[0]:
            families.setdefault(i.split(".", 1)[0], []).append(i)
        groups = list(families.values())
    plans = []
    for group in groups:
        plans.append(api.plan(group, preset=preset))
    # Every phase, also those osmeter does not show alone: their spread is measured here.
    precision.SHORTEST_ALONE_S = 0.0
    out = {"host": os.uname().nodename, "started": dt.datetime.now().isoformat(
        timespec="seconds"), "suite": None if ids else suite, "ids": ids, "runs": runs,
        "trials": []}
    for t in range(trials):
        planned = plans[t % len(plans)]
        if wait_s and wait_quiet(wait_s) > RUN_QUIET and only_quiet:
            print("trial %d/%d: not run, others stayed busy for %g s" % (t + 1, trials, wait_s),
                  file=sys.stderr)
            continue
        load = os.getloadavg()[0]
        before = monitor.Snapshot.take()
        [run] = api.measure(planned, runs, suite=None if ids else suite)
        whole = monitor.between(before, monitor.Snapshot.take())
        others = (whole.other_cpu_s or 0.0) / whole.wall_s
        rows = []
        for r in run.results:
            s = r.summary or {}
            if r.status != "ok" or (s.get("repetitions") or 0) < 2 or s.get("cv") is None:
                continue
            reps = {}
            for smp in r.samples:
                reps[smp.rep] = reps.get(smp.rep, 0) + 1
            once = r.shape == "point" and r.unit in precision.TIME_UNITS_S and \
                all(n == 1 for n in reps.values()) and not any(
                    fnmatch.fnmatchcase(r.bench, b) and r.metric == m
                    for b, m in precision.NOT_ONE_TIMING)
            seen = [p.get("benchmark_cpus") for p in r.notes.get("interference") or []]
            rows.append({"bench": r.bench, "metric": r.metric, "x": r.x, "shape": r.shape,
                         "unit": r.unit, "cv": s["cv"], "median": s["median"],
                         "repetitions": s["repetitions"], "once_per_repetition": once,
                         "seen": seen})
        trial = {"load_before": load, "others_cpus": round(others, 3),
                 "at_rest": run.environment.get("at_rest"), "rows": rows}
        print("trial %d/%d: load %.2f before, others used %.2f CPUs meanwhile, %d results, "
              "%d quiet, steal at rest %s" % (
                  t + 1, trials, load, others, len(rows),
                  sum(is_quiet(r, trial) for r in rows),
                  (run.environment.get("at_rest") or {}).get("steal")), file=sys.stderr)
        out["trials"].append(trial)
        if path:
            with open(path, "w") as f:
                json.dump(out, f)
    return out


def is_quiet(row: dict, trial: dict) -> bool:
    """A result measured at rest: quiet by its own interference (judged by the code as it
    is now) in a run during which other processes used little of the machine."""
    if "seen" not in row:                     # measured by an earlier version of this
        return row.get("quiet", False)
    return trial.get("others_cpus", 0.0) <= RUN_QUIET and quiet(row["seen"], trial["at_rest"])


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
                r["quiet"] = is_quiet(r, trial)
                r["trial"] = (data["started"], id(trial))
                by_row.setdefault((r["bench"], r["metric"], r["x"]), []).append(r)
        others = ["%.2f" % t["others_cpus"] for t in data["trials"] if "others_cpus" in t]
        print("%s, %s: %d runs of %s with %d repetitions; CPUs other processes used during "
              "each: %s" % (data["host"], data["started"], len(data["trials"]),
                            data["suite"] or "%d benchmarks" % len(data["ids"]), data["runs"],
                            ", ".join(others) or "not recorded"))
    quiet_obs = sum(o["quiet"] for obs in by_row.values() for o in obs)
    print("%d results, %d of %d observations quiet" % (
        len(by_row), quiet_obs, sum(len(obs) for obs in by_row.values())))
    kinds: dict[str, list] = {}
    alone = []
    for key, obs in by_row.items():
        calm = [o for o in obs if o["quiet"]]
        if not calm:
            continue
        first = calm[0]
        kind = precision.kind_of(first["bench"], first["shape"], first["metric"])
        if first["once_per_repetition"] and first["median"] * precision.TIME_UNITS_S[
                first["unit"]] < SHORTEST_ALONE_S:
            alone.append((key, calm))         # no result of its own: not in its kind
            continue
        pooled = math.sqrt(statistics.fmean(o["cv"] ** 2 for o in calm))
        kinds.setdefault(kind.name, []).append((key, pooled, calm))
    print()
    print("%-24s %5s %5s %9s %9s %9s %9s %11s %11s" % (
        "kind", "rows", "obs", "median", "p90", "max", "in code", "flagged", "flagged"))
    print("%-24s %5s %5s %9s %9s %9s %9s %11s %11s" % (
        "", "", "", "spread", "spread", "spread", "spread", "(code)", "(measured)"))
    measured, readme = {}, []
    for kind in precision.KINDS:
        rows = kinds.get(kind.name)
        if not rows:
            continue
        spreads = [p for _, p, _ in rows]
        p90 = math.ceil(1000 * percentile(spreads, 0.9)) / 1000     # up to 0.1%
        measured[kind.name] = p90
        obs = [o for _, _, calm in rows for o in calm]
        as_coded = sum(o["cv"] > precision.limit(kind, o["repetitions"]) for o in obs
                       if kind.spread)
        as_measured = sum(o["cv"] > precision.limit(precision.Kind(
            kind.name, kind.ids, p90, "", kind.metrics), o["repetitions"]) for o in obs)
        print("%-24s %5d %5d %8.1f%% %8.1f%% %8.1f%% %8.1f%% %10.1f%% %10.1f%%" % (
            kind.name, len(rows), len(obs), 100 * statistics.median(spreads), 100 * p90,
            100 * max(spreads), 100 * (kind.spread or 0.0), 100 * as_coded / len(obs),
            100 * as_measured / len(obs)))
        runs = len({o["trial"] for o in obs})
        readme.append("| %s | %.1f%% | %.1f%% | %s |" % (
            kind.name, 100 * p90, 100 * precision.limit(precision.Kind(
                kind.name, kind.ids, p90, ""), 5),
            "%d results in %d runs" % (len(rows), runs)))
    print()
    print("Per run: results flagged imprecise (spreads in the code / measured here), "
          "of the undisturbed ones; others' CPUs during the run")
    for data in sources:
        for n, trial in enumerate(data["trials"], 1):
            rows = [r for r in trial["rows"] if "seen" in r and not (
                r["once_per_repetition"] and r["median"] * precision.TIME_UNITS_S[r["unit"]]
                < SHORTEST_ALONE_S)]
            calm = [r for r in rows if quiet(r["seen"], trial["at_rest"])]
            if not calm:
                continue
            flagged = {"code": 0, "measured": 0}
            for r in calm:
                kind = precision.kind_of(r["bench"], r["shape"], r["metric"])
                for which, spread in (("code", kind.spread), ("measured",
                                                              measured.get(kind.name))):
                    most = precision.limit(precision.Kind(kind.name, kind.ids, spread, ""),
                                           r["repetitions"])
                    flagged[which] += most is not None and r["cv"] > most
            print("  %s run %2d: %3d of %3d results undisturbed: %4.1f%% / %4.1f%%; "
                  "others %.2f CPUs" % (data["started"], n, len(calm), len(rows),
                                        100.0 * flagged["code"] / len(calm),
                                        100.0 * flagged["measured"] / len(calm),
                                        trial.get("others_cpus", float("nan"))))
    print()
    print("As docs/measurement.md's table (kind | spread | limit at 5 repetitions | basis):")
    print("\n".join(readme))
    print()
    print("Timed once per repetition (quiet runs): duration, spread, spread x duration "
          "(the jitter of one timing), its kind's p90; '-' below SHORTEST_ALONE_S = %g s"
          % SHORTEST_ALONE_S)
    once = []
    for kind_name, rows in kinds.items():
        once += [(key, pooled, calm, kind_name) for key, pooled, calm in rows
                 if calm[0]["once_per_repetition"]]
    once += [(key, math.sqrt(statistics.fmean(o["cv"] ** 2 for o in calm)), calm, None)
             for key, calm in alone]
    for key, pooled, calm, kind_name in sorted(once, key=lambda o: o[2][0]["median"] *
                                               precision.TIME_UNITS_S[o[2][0]["unit"]]):
        seconds = statistics.median(o["median"] for o in calm) * \
            precision.TIME_UNITS_S[calm[0]["unit"]]
        print("  %s %10.6f s  %6.1f%%  %9.6f s  %s  %s %s" % (
            "-" if kind_name is None else " ", seconds, 100 * pooled, pooled * seconds,
            "(kind %4.1f%%)" % (100 * measured[kind_name]) if kind_name else " " * 12,
            key[0], key[1]))


def count(db: str, label: str | None) -> None:
    """Imprecise flags of stored runs, as stored and as judged by the code now."""
    with api.open_store(db, readonly=True) as store:
        refs = [r for r in store.list_runs() if label is None or fnmatch.fnmatchcase(
            r.get("label") or "", label)]
        for ref in refs:
            run = store.load_run(ref["id"])
            stored = flags.counted(run.results)
            now = rejudged(run)
            print("%s (%s): %d results, %d disturbed; imprecise %d as stored (%.0f%%), %d "
                  "judged now (%.0f%%, of %d); of the undisturbed: %d as stored, %d now" % (
                      ref.get("label") or ref["id"], ref["id"], len(stored),
                      sum(flags.DISTURBED in flags.kinds(r) for r in stored),
                      _imprecise(stored), 100.0 * _imprecise(stored) / max(1, len(stored)),
                      _imprecise(now), 100.0 * _imprecise(now) / max(1, len(now)), len(now),
                      _imprecise(stored, True), _imprecise(now, True)))
            by_kind: dict[str, list] = {}
            for when, rs in (("stored", stored), ("now", now)):
                for r in rs:
                    kind = precision.kind_of(r.bench, r.shape, r.metric).name
                    row = by_kind.setdefault(kind, {"stored": [0, 0, 0], "now": [0, 0, 0]})
                    row[when][0] += 1
                    row[when][1] += flags.IMPRECISE in flags.kinds(r)
                    row[when][2] += flags.DISTURBED in flags.kinds(r)
            for kind, row in by_kind.items():
                print("  %-24s stored: %3d results, %3d imprecise, %3d disturbed; now: %3d, "
                      "%3d imprecise" % (kind, *row["stored"], *row["now"][:2]))


def _imprecise(rs, undisturbed_only: bool = False) -> int:
    return sum(flags.IMPRECISE in flags.kinds(r) for r in rs
               if not (undisturbed_only and flags.DISTURBED in flags.kinds(r)))


def rejudged(run) -> list:
    """The run's counted results with their imprecise flags judged by the code now (the
    derived mem.* levels derived again: their names may have changed)."""
    run = copy.deepcopy(run)          # the stored flags stay as they were
    keep = [r for r in run.results if not (r.shape == "derived" and r.bench.startswith("mem."))]
    for b in sorted({r.bench for r in keep if r.bench.startswith("mem.")}):
        keep += mem.derive(b, [r for r in keep if r.bench == b], run.sysinfo)
    out = []
    for r in flags.counted(keep):
        if r.samples and r.shape != "derived":
            r.summary = api.summarize(r.samples)
        others = [w for w in r.warnings if flags.read(w).kind != flags.IMPRECISE]
        r.warnings = others + [f.to_dict() for f in precision.judge(
            r.summary, r.bench, r.shape, r.metric)]
        out.append(r)
    return out


def main() -> int:
    global RUN_QUIET
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--suite")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", help="also write the raw measurements here")
    ap.add_argument("--by-family", action="store_true",
                    help="each run measures one family of the benchmarks, in turn")
    ap.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                    help="before each run wait up to this long for others to be quiet")
    ap.add_argument("--only-quiet", action="store_true",
                    help="with --wait-quiet: skip a run when others stayed busy")
    ap.add_argument("--from", dest="sources", action="append",
                    help="analyse raw measurements written before (repeatable)")
    ap.add_argument("--run-quiet", type=float, default=RUN_QUIET, metavar="CPUS",
                    help="count only runs during which others used at most this many "
                    "CPUs (default %(default)s)")
    ap.add_argument("--count", metavar="DB", help="count the imprecise flags of the runs "
                    "stored in DB (those labelled like the one id given, a glob), as stored "
                    "and as judged now")
    args = ap.parse_args()
    RUN_QUIET = args.run_quiet
    if args.count:
        count(args.count, args.ids[0] if args.ids else None)
        return 0
    if args.sources:
        data = []
        for path in args.sources:
            with open(path) as f:
                data.append(json.load(f))
    else:
        data = [measure(args.ids, args.suite, args.trials, args.runs, args.json,
                        args.by_family, args.wait_quiet, args.only_quiet)]
    analyse(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
