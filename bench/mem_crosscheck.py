#!/usr/bin/env python3
"""Cross-check osmeter's mem.memcpy and mem.memset against `perf bench mem memcpy/memset`.

Both call the same C library routine on buffers of the same size, so they should agree
where they measure the same way.  To make them measure the same way, each repetition
here is one process of each tool doing the same thing:

    perf bench --format=simple mem memcpy -f default -s SIZE -l LOOPS
        allocates the buffers, makes one untimed call (it "prefaults" them), then times
        LOOPS calls with gettimeofday() and prints bytes per second, counting SIZE bytes
        per call (a copy counts the bytes copied once).
    osmeter-core run mem.memcpy sizes=SIZE total=SIZE*LOOPS samples=1
        allocates and touches the buffers, makes one untimed batch of LOOPS calls, then
        times one batch of LOOPS calls on CLOCK_MONOTONIC and reports MB/s (10^6 bytes/s),
        bytes copied counted once.

The two tools alternate, REPS times per size (so that the load of a shared machine falls
on both alike), and the medians are compared; each tool's best run is printed too.
perf's human format says GB/sec meaning 2^30 bytes; its simple format, used here,
prints bytes/s, converted here to 10^6 bytes/s.

Remaining differences, none of which should move the result by more than a few per
cent: perf's buffers come from malloc (16 bytes past a page boundary above 128 KB),
osmeter's are page-aligned, so below 128 KB perf's source and destination differ in
their low 12 address bits where osmeter's are equal (a CPU may then stall a load on an
earlier store to the same page offset, "4K aliasing"); perf's memset stores a different
byte on every call, osmeter's the same one; perf's clock has microsecond resolution
(each run here lasts well over 10 ms); osmeter subtracts the cost of reading its clock
(about 25 ns).

Usage: python3 bench/mem_crosscheck.py [--reps N] [--perf /usr/bin/perf]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from osmeter import api  # noqa: E402
from osmeter.analysis.families import mem  # noqa: E402

TARGET = 0.20            # within +-20%
BYTES_PER_RUN = 1 << 30  # per timed batch: long enough for gettimeofday's microseconds


def perf_mb_per_s(perf: str, routine: str, size: int, loops: int) -> float:
    out = subprocess.run([perf, "bench", "--format=simple", "mem", routine, "-f", "default",
                          "-s", "%dB" % size, "-l", str(loops)],
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError("perf bench mem %s failed: %s" % (routine, out.stderr.strip()))
    lines = [ln for ln in out.stdout.splitlines() if ln.strip() and not ln.startswith("#")]
    return float(lines[-1]) / 1e6


def osmeter_mb_per_s(routine: str, size: int, loops: int) -> float:
    inv = api.invoke("mem." + routine, params={"sizes": size, "total": size * loops,
                                                    "samples": 1}, timeout=300)
    if inv.status != "ok":
        raise RuntimeError("osmeter mem.%s: %s %s" % (routine, inv.status, inv.reason))
    return inv.values("bandwidth", size)[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=9, help="alternating runs per size (9)")
    ap.add_argument("--perf", default=shutil.which("perf") or "/usr/bin/perf")
    args = ap.parse_args()
    if not os.access(args.perf, os.X_OK):
        print("perf not found (apt-get install linux-perf)", file=sys.stderr)
        return 1
    try:
        api.core_path()
    except api.CoreError as e:
        print(e, file=sys.stderr)
        return 1

    caches = mem.data_caches(None)
    llc = caches[-1]["size"] if caches else 64 << 20
    sizes = [("L1", 4 << 10), ("L2", 256 << 10), ("L3", 4 << 20), ("memory", 4 * llc)]
    print("caches: %s" % ", ".join("L%d %s" % (c["level"], mem._fmt_bytes(c["size"]))
                                   for c in caches))
    print("%-7s %-7s %8s %6s %12s %12s %7s  %s" % ("routine", "where", "size", "loops",
                                                 "perf MB/s", "osmeter MB/s", "ratio",
                                                 "within 20%"))
    failures = 0
    for routine in ("memcpy", "memset"):
        for where, size in sizes:
            loops = max(4, BYTES_PER_RUN // size)
            p, o = [], []
            for _ in range(args.reps):
                p.append(perf_mb_per_s(args.perf, routine, size, loops))
                o.append(osmeter_mb_per_s(routine, size, loops))
            pm, om = statistics.median(p), statistics.median(o)
            ratio = om / pm
            ok = abs(ratio - 1) <= TARGET
            failures += not ok
            print("%-7s %-7s %8s %6d %12.0f %12.0f %7.2f  %-4s (best %.0f / %.0f = %.2f)"
                  % (routine, where, mem._fmt_bytes(size), loops, pm, om, ratio,
                     "yes" if ok else "NO", max(o), max(p), max(o) / max(p)))
    print("MB/s = 10^6 bytes/s; ratio = osmeter / perf; both count bytes copied (or set) "
          "once and exclude first-touch page faults (one untimed call or batch first).")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
