#!/usr/bin/env python3
"""Flags on real runs (issue 22's proof), with their counts: a fixed set of benchmarks from every family at
the quick sizes, run three times on the machine as it is and once with a CPU hog pinned
to the CPU osmeter measures on.

* As it is: at most 10% of the rows are flagged (disturbed or imprecise).  A row as
  precise as its kind is flagged imprecise in 5% of runs by design, so one run of 31 rows
  flags 4 or more (over 10%) in about 7% of runs: the claim is a rate, judged on three
  runs by a one-sided binomial test at 1% on the middle one.  Flags come in bursts (a
  noisy moment the guest cannot see flagged 14 of 31 rows in one CI run and 4 in
  the next, with the guest quiet): the middle of three runs leaves one burst out, while
  a rate of 33% (issue 25's) still fails in 94% of trials (8 or more of 31 in two runs;
  a rate of 10% does so in 0.03%).
* With the hog: at least 90% of the rows it disturbs (measurably slower than without
  it) are flagged disturbed, for "other processes".

A VM's host can take cycles from the guest that osmeter's monitor counts neither as
other processes' nor as steal: in one CI run, three runs in a row flagged 11-13 of 31 rows
(those its log showed: imprecise) with others at 0.01 CPUs, and cpu.integer, a loop
with no system call and no memory traffic, varied 6.2% between repetitions (under 3%
while the host is quiet).  Such a run is not "at rest": the test judges the first three
runs in which cpu.integer was steady (in the run and in a run of it alone just after),
taking up to MOST_RUNS, and says so and skips if it finds fewer.

    python3 bench/disturbed_runs.py

Until issue 44 this was tests/test_disturbed_runs.py: how many rows an ordinary machine
flags is a claim about the machine, which the test command cannot make on any machine;
the flags' logic is tested on made-up windows in tests/test_flags.py.  Exit 1 when a
claim fails, 2 when the machine could not be judged (it says why), 0 otherwise.

The machine may not be quiet while this runs (other test suites, other users).  Before
the runs the test measures, in windows of a few seconds, how much CPU time processes
other than its own use, and waits a little for a quiet window; over the run without the
hog it measures it again.  "Quiet" is less than osmeter's smallest disturbance: others
using under 2% of the machine (0.04 CPUs on 2), which cannot flag a row.  When others
are busier before the runs, or during the run without the hog when it flagged too many
rows, the test says how busy and skips, instead of passing or failing on a machine it
cannot judge; on a quiet machine (CI) it judges.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from osmeter.analysis import flags, monitor  # noqa: E402
from osmeter.api import Result  # noqa: E402
from binomial import most_explained  # noqa: E402
from clirun import osmeter  # noqa: E402

FIXED_SET = ["cpu.integer", "syscall.getpid", "syscall.stat", "lat.signal",
             "ctx.pipe_pingpong", "ctx.pipe_self", "proc.fork.dynamic", "proc.exec.dynamic",
             "thread.ctx.pipe", "thread.mutex", "mem.bcopy", "fs.cache_read",
             "fs.openclose", "net.unix_lat", "net.tcp_lat", "scale.mmap", "app.start.sh"]
REPETITIONS = 5
# Others' CPU time, as a share of the machine, below which no row can be flagged for
# them (osmeter's smallest disturbance): the machine is quiet enough to judge.
QUIET_SHARE = monitor.MIN_EFFECT / (1 + monitor.MIN_EFFECT)
WINDOW_S, WINDOWS = 3.0, 5   # look for a quiet window this long, this many times at most
# cpu.integer's run-to-run CV (5 repetitions of 66 ms at the quick size) above which the
# CPU itself ran unevenly.  40 runs in a row on this idle guest (stop 38) gave
# 0.1-2.8% in 27 and 3.3-11.7% in 13, in bursts, where whole repetitions ran 10-20% slow;
# the CI run that flagged 11-13 of 31 rows had 6.2% in its first run.
STEADY_CPU = 0.03
MOST_RUNS = 6             # runs as the machine is, to find three with the CPU steady
SLOWER = 0.05             # a row the hog disturbs: slower by this and beyond its interval
FLAG_RATE, FLAG_LEVEL = 0.10, 0.01   # the rate claimed at rest, and one run's level



class CannotJudge(Exception):
    """The machine was too busy or too uneven to judge the claims: why."""


def others_busy() -> float:
    """CPUs' worth of time that processes other than this test's used in the quietest of
    up to WINDOWS windows of WINDOW_S seconds (it stops at the first quiet one)."""
    quietest = math.inf
    for _ in range(WINDOWS):
        before = monitor.Snapshot.take()
        time.sleep(WINDOW_S)
        quietest = min(quietest, others_since(before))
        if quietest <= quiet_enough():
            break
    return quietest


def others_since(before: monitor.Snapshot) -> float:
    seen = monitor.between(before, monitor.Snapshot.take())
    return (seen.other_cpu_s or 0.0) / seen.wall_s


def quiet_enough() -> float:
    return QUIET_SHARE * (os.cpu_count() or 1)


def need_quiet(when: str, busy: float) -> None:
    load = os.getloadavg()[0]
    if busy > quiet_enough():
        raise CannotJudge("cannot judge: other processes used %.2f CPUs %s (load average %.2f); "
                    "below %.2f (%.0f%% of the machine, osmeter's smallest disturbance) "
                    "no row could be flagged for them" % (
                        busy, when, load, quiet_enough(), 100 * QUIET_SHARE))
    print("judged: other processes used %.2f CPUs %s (load average %.2f)" % (
        busy, when, load))


def measure(tmp_path, name: str, benches=FIXED_SET) -> dict:
    out = tmp_path / (name + ".json")
    r = osmeter("run", *benches, "--preset", "quick", "--runs", REPETITIONS, "--quiet",
                "--json", out, db=tmp_path / "db.sqlite", check=0, timeout=600,
                env={"COLUMNS": "100"})
    doc = json.loads(out.read_text())
    doc["stdout"] = r.stdout
    return doc


def measured(doc) -> dict:
    return {(r["bench"], r["metric"], r["x"]): r for r in doc["results"]
            if r["status"] == "ok" and r["summary"].get("median") is not None}


def standing(r) -> str | None:
    return flags.standing(Result.from_dict(r))


def count_line(doc) -> str:
    """The run's count line, as the summary ends with it."""
    return flags.count_line([Result.from_dict(r) for r in doc["results"]])


def most_flags(rows: int, rate: float = FLAG_RATE, level: float = FLAG_LEVEL) -> int:
    """The most flagged rows of `rows` that a flag rate of `rate` explains at `level`."""
    return most_explained(rows, rate, level)


def start_hog(cpu: int, seconds: int) -> subprocess.Popen:
    """A busy loop pinned to `cpu`, ending by itself after `seconds` at the latest."""
    code = ("import os, time\nos.sched_setaffinity(0, {%d})\nend = time.monotonic() + %d\n"
            "while time.monotonic() < end:\n    pass\n" % (cpu, seconds))
    return subprocess.Popen([sys.executable, "-c", code])


def cpu_spread(doc) -> float | None:
    """cpu.integer's run-to-run CV in a run: its loop has no system call and no memory
    traffic beyond L1, so only the CPU itself can make it uneven."""
    r = measured(doc).get(("cpu.integer", "rate", None))
    return r["summary"]["cv"] if r else None


def runs(tmp):
    """The fixed set as the machine is, until three runs found the CPU steady (at most
    MOST_RUNS), then with the hog on the measuring CPU."""
    need_quiet("before the runs (the quietest %g s window)" % WINDOW_S, others_busy())
    quiet = []
    while sum(1 for doc in quiet if doc["steady"]) < 3 and len(quiet) < MOST_RUNS:
        before = monitor.Snapshot.take()
        quiet.append(measure(tmp, "quiet%d" % len(quiet)))
        quiet[-1]["others_cpus"] = others_since(before)
        # cpu.integer runs first in the set; once more after it, so that a slow moment
        # of the host later in the run is seen too
        spreads = [cpu_spread(quiet[-1]), cpu_spread(measure(tmp, "cpu%d" % len(quiet),
                                                             ["cpu.integer"]))]
        quiet[-1]["cpu_spreads"] = spreads
        quiet[-1]["steady"] = all(c is not None and c <= STEADY_CPU for c in spreads)
    cpu = max(os.sched_getaffinity(0))       # the core pins to the last CPU it may use
    hog = start_hog(cpu, 600)
    try:
        time.sleep(0.5)
        hogged = measure(tmp, "hog")
    finally:
        hog.kill()
        hog.wait()
    return quiet, hogged, cpu


def at_rest(runs) -> bool:
    """At most 10% of the rows flagged in the middle of three steady runs as it is."""
    quiet, _, _ = runs
    counts, bad = [], {}
    for i, doc in enumerate(quiet):
        rows = measured(doc)
        assert len(rows) >= 25
        flagged = {(i,) + k: [w["text"] if isinstance(w, dict) else w for w in r["warnings"]]
                   for k, r in rows.items() if standing(r)}
        counts.append((len(flagged), len(rows)))
        bad.update(flagged)
        assert count_line(doc) in " ".join(doc["stdout"].split())
    spreads = ", ".join("/".join("-" if c is None else "%.1f%%" % (100 * c)
                                 for c in doc["cpu_spreads"]) for doc in quiet)
    print("runs as the machine is flagged %s rows; cpu.integer varied %s (under %.0f%%: "
          "steady)" % (", ".join("%d of %d" % c for c in counts), spreads, 100 * STEADY_CPU))
    steady = [c for c, doc in zip(counts, quiet) if doc["steady"]]
    if len(steady) < 3:
        raise CannotJudge(
            "cannot judge: the CPU ran unevenly in %d of %d runs (cpu.integer, a loop with "
            "no system call and no memory traffic, varied %s between repetitions, where at "
            "rest it varies under %.0f%%): a VM's host can take cycles that the guest counts "
            "neither as other processes' nor as steal" % (len(quiet) - len(steady), len(quiet),
                                                 spreads, 100 * STEADY_CPU))
    middle, rows = sorted(steady)[1]
    if middle > most_flags(rows):
        # Too many: a fault, unless other processes were busy meanwhile after all.
        need_quiet("during the runs without the hog, which flagged %s rows"
                   % ", ".join("%d of %d" % c for c in counts),
                   max(doc["others_cpus"] for doc in quiet if doc["steady"]))
        for key, texts in sorted(bad.items(), key=str):
            print("flagged in run %d: %s %s %s: %s" % (key + ("; ".join(texts),)))
    print("at rest: the middle of three steady runs flagged %d of %d rows; a rate of "
          "%.0f%% explains %d" % (middle, rows, 100 * FLAG_RATE, most_flags(rows)))
    return middle <= most_flags(rows)


def hog_found(runs) -> bool:
    """At least 90% of the rows a hog on the measuring CPU disturbs are flagged for it."""
    quiet, hogged, cpu = runs
    # the run without the hog that its own flags call the least disturbed or imprecise
    quiet = min(quiet, key=lambda doc: sum(1 for r in measured(doc).values() if standing(r)))
    # What the hog slowed down is told from the run without it: that must be undisturbed.
    need_quiet("during the run without the hog (what the hog's run is held against)",
               quiet["others_cpus"])
    before, after = measured(quiet), measured(hogged)
    disturbed = []
    for key, q in before.items():
        h = after.get(key)
        if h is None:
            continue
        lower = q["better"] == "lower"
        qm, hm = q["summary"]["median"], h["summary"]["median"]
        edge = q["summary"].get("ci_high" if lower else "ci_low", qm)
        slower = hm > max(edge, qm * (1 + SLOWER)) if lower else \
            hm < min(edge, qm * (1 - SLOWER))
        if slower:
            disturbed.append(key)
    # The hog shares a CPU with every pinned benchmark: at least the fork, the exec and a
    # pipe within one process are slower (x1.8-5.5 here; otherwise this test could not
    # fail).  How many more (4-10 seen) depends on where the scheduler puts unpinned
    # partners, and on the baseline: in one CI run ctx.pipe_pingpong's round trip (x7.7
    # with the hog here) spread 29% at rest and did not count as disturbed.
    print("with the hog on CPU %d: %d rows slower by %.0f%% or more: %s"
          % (cpu, len(disturbed), 100 * SLOWER, ", ".join(k[0] for k in disturbed)))
    if len(disturbed) < 3:
        print("too few rows disturbed: the hog did not share the measuring CPU")
        return False
    found = [k for k in disturbed if any(
        flags.read(w).kind == flags.DISTURBED and flags.read(w).reason == flags.OTHER_PROCESSES
        for w in after[k]["warnings"])]
    missed = {k: (before[k]["summary"]["median"], after[k]["summary"]["median"],
                  after[k]["warnings"], after[k]["notes"].get("placement"))
              for k in disturbed if k not in found}
    print("%d of them flagged disturbed by other processes; missed: %s"
          % (len(found), missed or "none"))
    line = count_line(hogged)
    print("the summary's last line: %s" % line)
    return len(found) >= 0.9 * len(disturbed) and \
        "other processes on CPU %d during" % cpu in line and \
        line in " ".join(hogged["stdout"].split())


def main() -> int:
    if not sys.platform.startswith("linux"):
        print("per-CPU counts are read from /proc/stat (Linux)")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        try:
            done = runs(Path(tmp))
            ok = [at_rest(done), hog_found(done)]
        except CannotJudge as e:
            print(e)
            return 2
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
