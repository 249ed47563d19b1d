#!/usr/bin/env python3
"""Measure how long one repetition of each benchmark takes at each preset, for the
estimates the core declares (`est` in core/bench/*.c) and the first ETA of a run.

    python3 bench/eta_estimates.py [--presets smoke,quick,default] [--max-default S] [ID ...]
    python3 bench/eta_estimates.py --from DB [--from DB ...] [--label GLOB ...] [--write]

Runs every benchmark once per preset through the front-end's own invocation (one core
process, as a repetition of a run is), prints a table with the current estimate beside
the measured wall time, and one C initialiser per benchmark to paste.  A benchmark whose
default-size estimate exceeds --max-default seconds (default 30) is not run at the
default preset (it would take minutes); its current estimate is kept and marked.

--from reads instead what whole runs stored in a results store took (each run records
every repetition's wall time per benchmark, environment.timing.steps): per benchmark and
preset (quick for --suite quick, smoke for smoke runs, default otherwise) the median over
every repetition of every run in the stores.  A run of a whole suite is how a user meets
the estimates (the caches and the memory as the suite leaves them, the sweep sizes of
this machine), which one core process per benchmark is not.  --write puts the measured
values into the initialisers in core/bench/*.c (two significant digits; presets not
measured keep theirs).
"""
from __future__ import annotations

import argparse
import fnmatch
import glob
import os
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from osmeter import api  # noqa: E402


def measure(bench: str, preset: str) -> tuple[float, str]:
    t0 = time.monotonic()
    inv = api.invoke(bench, preset=preset, timeout=900, scratch_parent=tempfile.gettempdir())
    return time.monotonic() - t0, inv.status


def stored(paths: list[str], labels: list | None = None) -> dict:
    """{(bench, preset): [seconds of every repetition]} from the runs in these stores
    (those whose label matches one of the globs `labels`, if given)."""
    found: dict = {}
    for path in paths:
        with api.open_store(path, readonly=True) as store:
            for ref in store.list_runs():
                if labels and not any(fnmatch.fnmatchcase(ref.get("label") or "", g)
                                      for g in labels):
                    continue
                run = store.load_run(ref["id"])
                steps = ((run.environment or {}).get("timing") or {}).get("steps") or {}
                preset = ("smoke" if run.smoke else "quick" if run.suite == "quick"
                          else "default")
                skipped = {r.bench for r in run.results if r.status == "skipped"}
                for bench, step in steps.items():
                    if bench not in skipped:
                        found.setdefault((bench, preset), []).extend(step["measured_s"])
    return found


def write_estimates(values: dict) -> list[str]:
    """Rewrite the {default, quick, smoke} initialiser of each benchmark in core/bench;
    returns the ids whose initialiser was not found in the form {"id", ... {a, b, c}."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "core", "bench")
    missing = set(values)
    entry = re.compile(r'\n\s*\{"[a-z0-9_]+\.[a-z0-9_.]+",')   # the next benchmark
    triple = re.compile(r"\{\s*([0-9.eE+-]+)\s*,\s*([0-9.eE+-]+)\s*,\s*([0-9.eE+-]+)\s*\}")
    for path in sorted(glob.glob(os.path.join(root, "*.c"))):
        text = open(path, encoding="utf-8").read()
        for bench in sorted(missing):
            start = text.find('{"%s",' % bench)
            m = triple.search(text, start) if start >= 0 else None
            following = entry.search(text, start + 1) if start >= 0 else None
            if m is None or (following and following.start() < m.start()):
                continue                 # its initialiser is not written out (a macro)
            new = "{%s}" % ", ".join("%.2g" % v for v in values[bench])
            text = text[:m.start()] + new + text[m.end():]
            missing.discard(bench)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return sorted(missing)


def from_stores(catalog, paths: list[str], write: bool, labels: list) -> int:
    found = stored(paths, labels)
    print("%-26s %-8s %10s %10s %6s  %s" % ("benchmark", "preset", "declared", "measured",
                                            "ratio", "repetitions"))
    values = {}
    for (bench, preset), secs in sorted(found.items()):
        if bench not in catalog.by_id or not secs:
            continue
        declared = catalog.estimates(bench)
        median = statistics.median(secs)
        print("%-26s %-8s %10.3g %10.3g %6.2f  %d" % (bench, preset, declared[preset], median,
                                                       median / declared[preset]
                                                       if declared[preset] else 0, len(secs)))
        vals = values.setdefault(bench, [declared[p] for p in ("default", "quick", "smoke")])
        vals[("default", "quick", "smoke").index(preset)] = median
    if write:
        missing = write_estimates(values)
        print("\nwrote the estimates of %d benchmarks into core/bench/*.c%s"
              % (len(values) - len(missing), "; not found (edit by hand): " +
                 ", ".join(missing) if missing else ""))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--presets", default=",".join(api.PRESETS[::-1]))
    ap.add_argument("--max-default", type=float, default=30.0)
    ap.add_argument("--from", dest="stores", action="append", default=[],
                    help="a results store: the repetition times of its runs")
    ap.add_argument("--label", action="append", default=[], help="with --from: only the "
                    "runs whose label matches this glob (repeatable)")
    ap.add_argument("--write", action="store_true",
                    help="with --from: put the measured estimates into core/bench/*.c")
    args = ap.parse_args()
    catalog = api.Catalog()
    if args.stores:
        return from_stores(catalog, args.stores, args.write, args.label)
    ids = args.ids or [b["id"] for b in catalog.benches if b["suites"]]
    presets = args.presets.split(",")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("# load average %.2f on %d CPUs at the start" % (load, os.cpu_count() or 0))
    print("%-26s %-8s %10s %10s  %s" % ("benchmark", "preset", "declared", "measured", "status"))
    found = {}
    for bench in ids:
        declared = catalog.estimates(bench)
        for preset in presets:
            if preset == "default" and declared["default"] > args.max_default:
                found[(bench, preset)] = None
                print("%-26s %-8s %10.2f %10s  not run (declared > %g s)"
                      % (bench, preset, declared[preset], "-", args.max_default))
                continue
            seconds, status = measure(bench, preset)
            found[(bench, preset)] = seconds
            print("%-26s %-8s %10.2f %10.2f  %s" % (bench, preset, declared[preset], seconds,
                                                    status), flush=True)
    print("\n# C initialisers {default, quick, smoke} (kept where not measured)")
    for bench in ids:
        declared = catalog.estimates(bench)
        vals = [found.get((bench, p)) or declared[p] for p in ("default", "quick", "smoke")]
        print("%-26s {%s}" % (bench, ", ".join("%.3g" % v for v in vals)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
