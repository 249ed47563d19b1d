#!/usr/bin/env python3
"""The file-system comparison end to end: make ext4, xfs and btrfs (loop-mounted images)
and a tmpfs, run the file-system and application benchmarks in each, repetitions
interleaved across the file systems, and print the kind of table the studies printed:
benchmarks as rows, file systems as columns (medians over the repetitions).

    sudo python3 bench/fs_compare.py                    # quick sizes, 3 repetitions
    sudo python3 bench/fs_compare.py --preset default --reps 5
    sudo python3 bench/fs_compare.py --dir /mnt/nfs     # add a directory of your own
                                                        # (a network mount: Ousterhout's
                                                        # remote penalty for it)
    sudo python3 bench/fs_compare.py --sshfs            # add sshfs across two netns

Drives osmeter-core directly (osmeter.core.invoke); `osmeter run --dir A --dir B`
followed by `osmeter compare` does the same through the front-end.  Needs root, and
mkfs.xfs / mkfs.btrfs (apt: xfsprogs btrfs-progs) for those columns.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from osmeter import core, fsinfo  # noqa: E402
from tests import fsimages  # noqa: E402

BENCHES = ["fs.crtdel", "fs.bonnie.write", "fs.bonnie.rewrite", "fs.bonnie.read",
           "fs.bonnie.seek", "fs.frag.layout", "fs.frag.contention", "mab.local",
           "fs.tar.create", "fs.tar.extract", "fs.rm_tree"]


def fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 1:
        return "%.2f" % v
    return "%.3g" % v


def fmt_x(x) -> str:
    if x is None:
        return ""
    for unit, div in (("G", 2 ** 30), ("M", 2 ** 20), ("K", 2 ** 10)):
        if x >= div and x % div == 0:
            return " %d%s" % (x // div, unit)
    return " %d" % x


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="quick", choices=["smoke", "quick", "default"])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--kinds", default=",".join(fsimages.KINDS))
    ap.add_argument("--bench", default=",".join(BENCHES))
    ap.add_argument("--size-mb", type=int, default=1024, help="size of each image/tmpfs")
    ap.add_argument("--dir", action="append", default=[],
                    help="also run in this directory (e.g. a network mount); repeatable")
    ap.add_argument("--sshfs", action="store_true",
                    help="add a remote column: sshfs across two network namespaces")
    ap.add_argument("--delay-ms", type=float, default=0.0,
                    help="netem delay on the sshfs link (one way), ms")
    args = ap.parse_args()
    benches = args.bench.split(",")
    kinds = args.kinds.split(",")

    with contextlib.ExitStack() as stack:
        columns = {}   # name -> directory
        remote = []    # names of the user's directories
        for kind in kinds:
            try:
                columns[kind] = stack.enter_context(fsimages.mounted(kind, args.size_mb))
            except fsimages.Unavailable as e:
                print("# %s: not available: %s" % (kind, e))
        if args.sshfs:
            try:
                columns["sshfs"] = stack.enter_context(fsimages.sshfs_mounted(args.delay_ms))
                remote.append("sshfs")
            except fsimages.Unavailable as e:
                print("# sshfs: not available: %s" % e)
        for d in args.dir:
            err = fsinfo.check_dir(d)
            if err:
                print("error: " + err, file=sys.stderr)
                return 2
            name = os.path.basename(os.path.normpath(d)) or d
            columns[name] = d
            remote.append(name)
        if not columns:
            print("error: no file system to compare", file=sys.stderr)
            return 1
        for name, d in columns.items():
            info = fsinfo.describe(d)
            print("# %-8s %s on %s (%s) options %s" % (
                name, info["fs_type"], info["device"], info.get("backing_file") or
                info["mount_point"], info["mount_options"]))

        # (bench, metric, x) -> column -> [values]; bench -> column -> skip reason
        values: dict = {}
        units: dict = {}
        order: dict = {}   # (bench, metric) -> position in the benchmark's declaration
        skipped: dict = {}
        plan = [(b, c) for b in benches for c in columns]
        t0 = time.monotonic()
        for rep in range(args.reps):
            for bench, col in plan:   # repetitions interleave across the file systems
                inv = core.invoke(bench, params={"dir": columns[col]},
                                  preset=None if args.preset == "default" else args.preset,
                                  timeout=3600)
                if inv.status != "ok":
                    skipped.setdefault(bench, {})[col] = "%s: %s" % (inv.status, inv.reason)
                    continue
                for i, m in enumerate(inv.header.get("metrics", [])):
                    units[(bench, m["name"])] = m["unit"]
                    order[(bench, m["name"])] = i
                for metric, x, v in inv.samples:
                    values.setdefault((bench, metric, x), {}).setdefault(col, []).append(v)
            print("# repetition %d done (%.0f s)" % (rep + 1, time.monotonic() - t0),
                  flush=True)

        names = list(columns)
        width = max(10, *(len(n) for n in names))
        rows = sorted(values, key=lambda k: (benches.index(k[0]), order[k[:2]], k[2] or 0))
        label_w = max(len("%s %s%s" % (b, m, fmt_x(x))) for b, m, x in rows) + 2 if rows else 20
        print()
        print("%-*s %-8s" % (label_w, "benchmark (median of %d)" % args.reps, "unit")
              + "".join("%*s" % (width + 1, n) for n in names))
        for key in rows:
            bench, metric, x = key
            cells = []
            for n in names:
                vs = values[key].get(n)
                cells.append(fmt(statistics.median(vs)) if vs else
                             ("skip" if n in skipped.get(bench, {}) else "-"))
            print("%-*s %-8s" % (label_w, "%s %s%s" % (bench, metric, fmt_x(x)),
                                 units.get((bench, metric), ""))
                  + "".join("%*s" % (width + 1, c) for c in cells))
        for bench, cols in skipped.items():
            for col, why in sorted(set(cols.items())):
                print("# %s on %s: %s" % (bench, col, why))

        # Ousterhout's remote penalty (mab.remote is mab.local in a network directory):
        # each of the user's directories against each local file system.
        totals = values.get(("mab.local", "total", None), {})
        for r in remote:
            for local in kinds:
                if totals.get(r) and totals.get(local):
                    print("# remote penalty of %s vs %s (O90 T8): %.0f%%" % (
                        r, local, fsinfo.remote_penalty_pct(statistics.median(totals[local]),
                                                            statistics.median(totals[r]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
