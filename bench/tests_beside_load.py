#!/usr/bin/env python3
"""Issue 44's claim about the test command: ./run-tests passes, in about ten minutes,
run after run, beside an ordinary background load.

    python3 bench/tests_beside_load.py [--runs 3] [--load 'SHELL COMMAND'] [-- PYTEST ARGS]

--load starts the command (a build: it is run again each time it ends) in a process
group of its own before the first run and stops that group after the last; without it
the runs are at rest.  Each run's wall time, exit status and pytest's summary line are
printed, and the load average at its start.  Exit 1 when any run failed.

Measured (README, Measured figures): NetBSD's build.sh tools with one job as the load,
from the source tree scripts/netbsd-build.py unpacks:

    python3 bench/tests_beside_load.py --load 'rm -rf /var/tmp/lb &&
        cd /var/cache/osmeter-netbsd/src && HOST_CC=gcc HOST_CXX=g++ ./build.sh -U
        -m amd64 -j 1 -N 0 -O /var/tmp/lb/obj -T /var/tmp/lb/tools
        -V HOST_CFLAGS="-O2 -fcommon -std=gnu89 -w" tools'
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def start_load(command: str) -> subprocess.Popen:
    """The load, again and again, in a session of its own (so that it is stopped whole)."""
    loop = "while :; do ( %s ) >/dev/null 2>&1; done" % command
    return subprocess.Popen(["sh", "-c", loop], start_new_session=True,
                            stdin=subprocess.DEVNULL)


def stop_load(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--load", help="a shell command run over and over beside the tests")
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args()
    load = start_load(args.load) if args.load else None
    failed = 0
    try:
        if load:
            time.sleep(30)     # the load under way before the first run
        for i in range(1, args.runs + 1):
            avg = "%.2f %.2f %.2f" % os.getloadavg()
            t = time.monotonic()
            r = subprocess.run(["./run-tests", *args.pytest_args], cwd=REPO,
                               capture_output=True, text=True)
            took = time.monotonic() - t
            summary = [line for line in r.stdout.splitlines()
                       if re.search(r"\d+ (passed|failed)", line)]
            print("run %d: exit %d in %dm%02ds (load average at its start %s): %s" % (
                i, r.returncode, took // 60, took % 60, avg,
                summary[-1].strip("= ") if summary else "no pytest summary"))
            for line in r.stdout.splitlines():
                if line.startswith(("FAILED", "ERROR")):
                    print("   " + line)
            sys.stdout.flush()
            failed += r.returncode != 0
    finally:
        if load:
            stop_load(load)
    print("%d of %d runs failed" % (failed, args.runs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
