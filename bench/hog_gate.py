#!/usr/bin/env python3
"""Issue 40's real case: a plain slowdown beside a short history must fail the gate.

    python3 bench/hog_gate.py [--quiet-runs 5] [--store DB]

In a store of its own: QUIET-RUNS runs of issue 40's 12-benchmark set (`--preset quick
--runs 5`), then one run with a CPU hog pinned to the last CPU, where the benchmarks pin
themselves (a hog on the other CPU slowed nothing here, 2026-11-28).  Then, as a user
would:

* the hog run against the last quiet run with the gate at 10%: the history is the other
  quiet runs (the hog run is disturbed and never enters it).  The claim: the gate fails,
  and names fork;
* every pair of quiet runs with the history the store gives it (at least 3 other quiet
  runs: QUIET-RUNS >= 5): the claim: exit 0, no verdict, in about 95% of pairs.

It prints each comparison's verdicts, gate and history, and the counts.  Exit 1 when the
hog's gate does not fail.  A claim about this machine's noise: not in the test command.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..")
SET = ("syscall.getpid", "syscall.getppid", "syscall.read", "syscall.write", "syscall.stat",
       "proc.fork.dynamic", "ctx.pipe_pingpong", "thread.mutex", "mem.memcpy",
       "net.udp_ttcp", "net.tcp_lat", "fs.crtdel")


def osmeter(db, *args, check=True):
    r = subprocess.run([sys.executable, "-m", "osmeter", *args], capture_output=True,
                       text=True, env=dict(os.environ, OSMETER_DB=db), cwd=REPO)
    if check and r.returncode not in (0, 1, 3):
        raise SystemExit("osmeter %s: exit %d\n%s" % (args[0], r.returncode, r.stderr))
    return r


def measure(db, label, hog=False):
    proc = None
    if hog:     # a busy loop on the benchmarks' CPU, killed with the run
        cpu = max(os.sched_getaffinity(0))
        proc = subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c",
                                 "while True: pass"])
    try:
        osmeter(db, "run", *SET, "--preset", "quick", "--runs", "5", "--label", label,
                "--quiet")
    finally:
        if proc:
            proc.kill()
            proc.wait()


def judged(db, a, b):
    """(exit, outcome, verdict lines, failing rows, history line) of compare a b."""
    r = osmeter(db, "compare", a, b, "--fail-on-slower", "10", "--json")
    doc = json.loads(r.stdout)
    verdicts = ["%s %s %s" % (row["bench"], row["metric"], c["verdict"]["word"])
                for row in doc["rows"] for c in row["cells"]
                if c and c.get("verdict") and c["verdict"]["word"] in ("better", "worse")]
    gate = doc["regression_gate"]
    fails = ["%s %s" % (g.get("bench"), g.get("metric")) for g in gate.get("rows", [])
             if g.get("outcome") == "fail"]
    noise = doc.get("between_run_noise")
    history = (["between-run noise: %s (%d runs)" % (noise["profile"], len(noise["runs"]))]
               if noise else ["no between-run noise profile"])
    history += [w for w in r.stderr.splitlines() + doc.get("warnings", []) if "history" in w]
    return r.returncode, gate["outcome"], verdicts, fails, history


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quiet-runs", type=int, default=5)
    ap.add_argument("--store", help="keep the runs in this store; where it holds them "
                    "already (the labels q1.. and hog), judge them again without measuring")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="osmeter-hog-") as tmp:
        db = args.store or os.path.join(tmp, "r.db")
        quiet = ["q%d" % i for i in range(1, args.quiet_runs + 1)]
        have = osmeter(db, "runs", "--json", check=False).stdout if os.path.exists(db) else ""
        for label in quiet + ["hog"]:
            if '"%s"' % label not in have:
                measure(db, label, hog=label == "hog")
        code, outcome, verdicts, fails, history = judged(db, quiet[-1], "hog")
        print("hog vs %s: exit %d, gate %s, %d rows fail (%s), verdicts: %s"
              % (quiet[-1], code, outcome, len(fails), "; ".join(fails),
                 "; ".join(verdicts) or "none"))
        for line in history:
            print("   " + line)
        pairs = list(itertools.combinations(quiet, 2))
        clean = 0
        for a, b in pairs:
            c, o, v, f, h = judged(db, a, b)
            clean += c == 0 and not v
            print("%s vs %s: exit %d, gate %s, verdicts: %s; %s" % (
                a, b, c, o, "; ".join(v) or "none", h[0]))
        print("quiet pairs with exit 0 and no verdict: %d of %d; the hog's gate: %s"
              % (clean, len(pairs), outcome))
        return 0 if outcome == "fail" else 1


if __name__ == "__main__":
    sys.exit(main())
