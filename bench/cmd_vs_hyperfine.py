#!/usr/bin/env python3
"""Cross-check: osmeter's command runner (cmd.run) against hyperfine on the same commands.

Both run each command as a whole process without a shell (hyperfine -N), with the same
warm-up and the same number of timed runs, interleaved in rounds so that drift of the
machine hits both alike, and both in a session of their own (the front-end starts the
core that way; with autogroup scheduling a session is a scheduling group).  Besides the
medians it prints the minima, which show the fixed cost of starting a command when the
machine is too busy for medians to agree.  Prints the median wall time of each and their ratio; the
target is |ratio - 1| <= 10% for commands of 1 ms and more.

    python3 bench/cmd_vs_hyperfine.py [--rounds 10] [--runs 5]
Needs hyperfine (apt-get install -y hyperfine) and a built core (make -C core).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from osmeter import api  # noqa: E402

TARGET = 0.10


def commands():
    py = os.path.realpath(sys.executable)
    cmds = [["sleep", "0.01"], ["sleep", "0.05"], [py, "-c", "pass"],
            ["perl", "-e", "1"], ["sh", "-c", "for i in 1 2 3 4 5 6 7 8; do :; done"],
            ["ls", "-la", "/usr/bin"], ["sort", "-n", "/etc/services"]]
    return [c for c in cmds if shutil.which(c[0])]


def osmeter_times(argv, runs, warmup):
    inv = api.invoke("cmd.run", params={"argv": json.dumps(argv), "samples": str(runs),
                                             "warmup": str(warmup)}, timeout=600)
    if inv.status != "ok":
        raise SystemExit("osmeter failed on %s: %s" % (argv, inv.reason))
    return [v / 1e9 for v in inv.values("wall")]


def hyperfine_times(argv, runs, warmup):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmdline = " ".join(subprocess.list2cmdline([a]) if " " in a else a for a in argv)
        subprocess.run(["hyperfine", "-N", "--style", "none", "--warmup", str(warmup),
                        "--runs", str(runs), "--export-json", out.name, cmdline],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       start_new_session=True)   # as api.invoke starts the core
        return json.load(open(out.name))["results"][0]["times"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5, help="timed runs per round and tool")
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()
    if not shutil.which("hyperfine"):
        raise SystemExit("hyperfine not installed (apt-get install -y hyperfine)")
    version = subprocess.run(["hyperfine", "--version"], capture_output=True,
                             text=True).stdout.strip()
    print("osmeter cmd.run vs %s: %d rounds x %d runs each, warm-up %d, no shell"
          % (version, args.rounds, args.runs, args.warmup))
    print("%-44s %11s %12s %7s  %-12s %9s" % ("command", "osmeter ms", "hyperfine ms",
                                              "ratio", "within 10%", "min ratio"))
    failures = 0
    for argv in commands():
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours += osmeter_times(argv, args.runs, args.warmup)
            theirs += hyperfine_times(argv, args.runs, args.warmup)
        mo, mt = statistics.median(ours), statistics.median(theirs)
        ratio = mo / mt
        applies = mt >= 0.001
        ok = abs(ratio - 1) <= TARGET
        verdict = ("yes" if ok else "NO") if applies else "n/a (< 1 ms)"
        failures += applies and not ok
        name = " ".join(argv)
        print("%-44s %11.3f %12.3f %7.3f  %-12s %9.3f" % (name[:44], mo * 1e3, mt * 1e3, ratio,
                                                       verdict, min(ours) / min(theirs)))
    print("%s: %d command(s) outside the 10%% target" % ("FAIL" if failures else "OK", failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
