#!/usr/bin/env python3
"""The file-system comparison end to end: make ext4, xfs and btrfs (loop-mounted images)
and a tmpfs, run the file-system and application benchmarks in each with
`osmeter run --dir A --dir B ...` (repetitions interleaved across the directories, one
run per directory), compare the runs with `osmeter compare`, and print the kind of
table the studies printed: benchmarks as rows, file systems as columns (medians).

    sudo python3 bench/fs_compare.py                    # quick sizes, 3 repetitions
    sudo python3 bench/fs_compare.py --preset default --runs 5
    sudo python3 bench/fs_compare.py --sshfs            # add sshfs across two netns
    sudo python3 bench/fs_compare.py --dir /mnt/nfs     # add a directory of your own

Directories on a network file system (--sshfs, or a --dir on NFS, SMB, ...) are remote:
the script prints Ousterhout's remote penalty of each against each local file system (O90
Table 8: 100 × (T_remote − T_local) / T_local on the mab.local totals), as
`osmeter compare` computes it for every local/remote pair (osmeter/analysis/remote.py).  --direct
drives osmeter-core itself instead of the front-end.  The runs go to a temporary store
unless --db is given.  Needs root, and
mkfs.xfs / mkfs.btrfs (apt: xfsprogs btrfs-progs), sshfs openssh-server for --sshfs.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from osmeter import api  # noqa: E402
from osmeter.system import fsinfo  # noqa: E402
from osmeter.analysis import remote  # noqa: E402
from tests import fsimages  # noqa: E402

BENCHES = ["fs.crtdel", "fs.bonnie.write", "fs.bonnie.rewrite", "fs.bonnie.read",
           "fs.bonnie.seek", "fs.frag.layout", "fs.frag.contention", "mab.local",
           "fs.tar.create", "fs.tar.extract", "fs.rm_tree"]


def quick_overrides(benches: list[str]) -> list[str]:
    """--param ID.KEY=VALUE for every parameter whose quick value differs from the
    default: the front-end runs explicitly named benchmarks at default sizes."""
    out = []
    for b in api.Catalog().benches:
        for p in b["params"] if b["id"] in benches else []:
            if p["quick"] != p["default"]:
                out += ["--param", "%s.%s=%s" % (b["id"], p["name"], p["quick"])]
    return out


def via_frontend(args, benches, columns) -> tuple[dict, dict, dict, list]:
    """Run and compare through the front-end; (values, units, skipped) as via_core and
    the remote penalties `osmeter compare` found: [(remote column, local column, %)]."""
    env = dict(os.environ)
    with contextlib.ExitStack() as stack:
        if args.db:
            env["OSMETER_DB"] = args.db
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="osmeter-fscmp-"))
            env["OSMETER_DB"] = os.path.join(tmp, "runs.sqlite")
        label = "fscmp-%d" % os.getpid()
        cmd = [sys.executable, "-m", "osmeter", "run", *benches, "--runs", str(args.runs),
               "--label", label, "--quiet"]
        cmd += ["--smoke"] if args.preset == "smoke" else (
            quick_overrides(benches) if args.preset == "quick" else [])
        for d in columns.values():
            cmd += ["--dir", os.path.abspath(d)]
        r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit("osmeter run failed (%d):\n%s%s" % (r.returncode, r.stdout,
                                                                 r.stderr))
        names = {"%s:dir=%s" % (label, os.path.abspath(d)): n for n, d in columns.items()}
        r = subprocess.run([sys.executable, "-m", "osmeter", "compare", "--json", *names],
                           cwd=REPO, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit("osmeter compare failed (%d):\n%s" % (r.returncode, r.stderr))
    cmp = json.loads(r.stdout)
    run_col = {run["id"]: names[run["label"]] for run in cmp["runs"]}
    penalties = [(run_col[p["remote_run"]], run_col[p["local_run"]], p["penalty_pct"])
                 for p in cmp.get("remote_penalties", [])
                 if (p["bench"], p["metric"]) == ("mab.local", "total")]
    values, units, skipped = {}, {}, {}
    for row in cmp["rows"]:
        key = (row["bench"], row["metric"], None if row["x"] is None else int(row["x"]))
        units[key[:2]] = row["unit"]
        for cell in row["cells"]:
            col = run_col[cell["run"]]
            if cell["status"] == "ok" and cell.get("median") is not None:
                values.setdefault(key, {})[col] = cell["median"]
            elif cell["status"] != "ok":
                skipped.setdefault(row["bench"], {})[col] = "%s: %s" % (cell["status"],
                                                                        cell["reason"])
    return values, units, skipped, penalties


def via_core(args, benches, columns) -> tuple[dict, dict, dict, list]:
    """Run osmeter-core directly, repetitions interleaved across the directories; the
    remote penalty of each remote column against each local one (mab.local totals)."""
    samples, units, skipped = {}, {}, {}
    t0 = time.monotonic()
    for rep in range(args.runs):
        for bench in benches:
            for col, d in columns.items():
                inv = api.invoke(bench, params={"dir": d}, timeout=3600,
                                      preset=None if args.preset == "default" else args.preset)
                if inv.status != "ok":
                    skipped.setdefault(bench, {})[col] = "%s: %s" % (inv.status, inv.reason)
                    continue
                for m in inv.header.get("metrics", []):
                    units[(bench, m["name"])] = m["unit"]
                for metric, x, v in inv.samples:
                    samples.setdefault((bench, metric, x), {}).setdefault(col, []).append(v)
        print("# repetition %d done (%.0f s)" % (rep + 1, time.monotonic() - t0), flush=True)
    values = {k: {c: statistics.median(vs) for c, vs in cols.items()}
              for k, cols in samples.items()}
    totals = values.get(("mab.local", "total", None), {})
    remote_cols = [c for c, d in columns.items() if fsinfo.describe(d)["remote"]]
    penalties = [(r, col, remote.penalty_pct(totals[col], totals[r]))
                 for r in remote_cols for col in columns
                 if col not in remote_cols and r in totals and col in totals]
    return values, units, skipped, penalties


def fmt(v: float) -> str:
    if v == 0 or abs(v) >= 100:
        return "%.0f" % v
    return "%.2f" % v if abs(v) >= 1 else "%.3g" % v


def fmt_x(x) -> str:
    if x is None:
        return ""
    for unit, div in (("G", 2 ** 30), ("M", 2 ** 20), ("K", 2 ** 10)):
        if x >= div and x % div == 0:
            return " %d%s" % (x // div, unit)
    return " %d" % x


def print_table(benches, columns, values, units, skipped, runs):
    names = list(columns)
    width = max(10, *(len(n) for n in names)) + 1
    metric_order = {}
    for b in api.Catalog().benches:
        for i, m in enumerate(b["metrics"]):
            metric_order[(b["id"], m["name"])] = i
    rows = sorted(values, key=lambda k: (benches.index(k[0]), metric_order.get(k[:2], 99),
                                         k[2] or 0))
    label_w = max([len("%s %s%s" % (b, m, fmt_x(x))) for b, m, x in rows] + [24]) + 2
    print()
    print("%-*s %-8s" % (label_w, "benchmark (median, %d runs)" % runs, "unit")
          + "".join("%*s" % (width, n) for n in names))
    for key in rows:
        cells = [fmt(values[key][n]) if n in values[key] else
                 ("skip" if n in skipped.get(key[0], {}) else "-") for n in names]
        print("%-*s %-8s" % (label_w, "%s %s%s" % (key[0], key[1], fmt_x(key[2])),
                             units.get(key[:2], "")) + "".join("%*s" % (width, c) for c in cells))
    for bench, cols in skipped.items():
        for col, why in sorted(cols.items()):
            print("# %s on %s: %s" % (bench, col, why))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="quick", choices=["smoke", "quick", "default"])
    ap.add_argument("--runs", type=int, default=3, help="repetitions per file system")
    ap.add_argument("--kinds", default=",".join(fsimages.KINDS))
    ap.add_argument("--bench", default=",".join(BENCHES))
    ap.add_argument("--size-mb", type=int,
                    help="size of each image/tmpfs (default: 320 smoke, 1024 quick, 4096 "
                         "default: room for the largest bonnie and fs.frag files)")
    ap.add_argument("--dir", action="append", default=[],
                    help="also run in this directory (remote when it is on a network file "
                    "system); repeatable")
    ap.add_argument("--sshfs", action="store_true",
                    help="add a remote column: sshfs across two network namespaces")
    ap.add_argument("--delay-ms", type=float, default=0.0,
                    help="netem delay on the sshfs link (one way), ms")
    ap.add_argument("--direct", action="store_true",
                    help="drive osmeter-core directly instead of osmeter run/compare")
    ap.add_argument("--db", help="store the runs here (default: a temporary store)")
    args = ap.parse_args()
    benches = args.bench.split(",")
    size_mb = args.size_mb or {"smoke": 320, "quick": 1024, "default": 4096}[args.preset]

    with contextlib.ExitStack() as stack:
        columns = {}   # column name -> directory
        for kind in args.kinds.split(","):
            try:
                columns[kind] = stack.enter_context(fsimages.mounted(kind, size_mb))
            except fsimages.Unavailable as e:
                print("# %s: not available: %s" % (kind, e))
        if args.sshfs:
            try:
                columns["sshfs"] = stack.enter_context(fsimages.sshfs_mounted(args.delay_ms))
            except fsimages.Unavailable as e:
                print("# sshfs: not available: %s" % e)
        for d in args.dir:
            err = fsinfo.check_dir(d)
            if err:
                print("error: " + err, file=sys.stderr)
                return 2
            name = os.path.basename(os.path.normpath(d)) or d
            columns[name] = d
        if not columns:
            print("error: no file system to compare", file=sys.stderr)
            return 1
        for name, d in columns.items():
            info = fsinfo.describe(d)
            print("# %-6s %s on %s (%s) options %s" % (
                name, info["fs_type"], info["device"],
                info.get("backing_file") or info["mount_point"], info["mount_options"]))
        t0 = time.monotonic()
        values, units, skipped, penalties = (via_core if args.direct else via_frontend)(
            args, benches, columns)
        print("# %d runs of %d benchmarks on %d file systems in %.0f s (%s)" % (
            args.runs, len(benches), len(columns), time.monotonic() - t0,
            "osmeter-core directly" if args.direct else "osmeter run --dir ... + compare"))
        print_table(benches, columns, values, units, skipped, args.runs)
        for r, local, pct in penalties:
            print("# remote penalty of %s vs %s (O90 T8, mab.local total): %.0f%%"
                  % (r, local, pct))
    return 0


if __name__ == "__main__":
    sys.exit(main())
