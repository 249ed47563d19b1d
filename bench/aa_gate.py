#!/usr/bin/env python3
"""A/A on this machine: two runs of a few quick benchmarks, one after the other, nothing
changed, compared with the regression gate at 10%.  The claim: a verdict ("better" or
"worse"), or a gate that does not pass, in about alpha (5%) of such pairs.

    python3 bench/aa_gate.py [--pairs 6]

Each pair is made in a store of its own, as a user's first two runs are.  It prints every
pair's verdicts and gate, the counts, the most a rate of 5% explains at level 1%
(binomial; 2 of 6: 3 or more of 6 is 0.2% at 5%, 1.6% at 10%, 46% at issue 25's 40%),
and what other processes used meanwhile (a busy machine, or a host that moves a guest,
gives more: the count is this machine's, not osmeter's alone).  Exit 1 when the counts
exceed the bound.  This was tests/test_gate_real.py's first test until issue 44: a claim
about the machine's noise does not belong in the test command.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from binomial import most_explained  # noqa: E402
from osmeter.analysis import monitor  # noqa: E402
from osmeter import api  # noqa: E402

SUBSET = ("syscall.getpid", "syscall.read", "syscall.stat", "lat.signal", "thread.mutex",
          "cpu.integer")


def osmeter(db, *args):
    return subprocess.run([sys.executable, "-m", "osmeter", *args], capture_output=True,
                          text=True, env=dict(os.environ, OSMETER_DB=db), cwd=HERE + "/..")


def one_pair(db: str) -> tuple[list[str], str]:
    for label in ("a1", "a2"):
        r = osmeter(db, "run", *SUBSET, "--preset", "quick", "--runs", "5", "--label", label,
                    "--quiet")
        if r.returncode:
            raise SystemExit(r.stderr)
    r = osmeter(db, "compare", "a1", "a2", "--fail-on-slower", "10", "--json")
    doc = json.loads(r.stdout)
    verdicts = ["%s %s %s" % (row["bench"], row["metric"], c["verdict"]["word"])
                for row in doc["rows"] for c in row["cells"]
                if c and c.get("verdict") and c["verdict"]["word"] in ("better", "worse")]
    return verdicts, doc["regression_gate"]["outcome"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=6)
    args = ap.parse_args()
    before, t0 = monitor.Snapshot.take(), time.monotonic()
    with_verdict = not_passed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.pairs):
            verdicts, gate = one_pair(os.path.join(tmp, "pair%d.sqlite" % i))
            with_verdict += bool(verdicts)
            not_passed += gate != "pass"
            print("pair %d: gate %s; verdicts: %s" % (i + 1, gate, "; ".join(verdicts) or "none"))
    seen = monitor.between(before, monitor.Snapshot.take())
    bound = most_explained(args.pairs, api.ALPHA, 0.01)
    print("%d of %d pairs gave a verdict, %d a gate that did not pass; a rate of %.0f%% "
          "explains %d at level 1%%" % (with_verdict, args.pairs, not_passed,
                                         api.ALPHA * 100, bound))
    print("%.0f s; other processes used %.2f CPUs meanwhile (load average %.2f)"
          % (time.monotonic() - t0, (seen.other_cpu_s or 0.0) / seen.wall_s,
             os.getloadavg()[0]))
    return 1 if max(with_verdict, not_passed) > bound else 0


if __name__ == "__main__":
    sys.exit(main())
