"""Watching for what spoils measurements: other busy processes, load, steal, frequency.

Around every core invocation the runner takes a `Snapshot` before and after; the
difference says how much CPU time *other* processes used meanwhile (all CPU time
minus what our own benchmark process tree used), how much a hypervisor stole, and
whether the CPU clock moved.  Where /proc is missing only the load average is used.
"""
from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
OTHER_BUSY_CPUS = 0.25     # other processes using a quarter of a CPU or more
STEAL_FRACTION = 0.02      # more than 2% of CPU time stolen by the hypervisor
FREQ_CHANGE = 0.10         # a CPU clock that moved by more than 10%


def _proc_stat():
    """(busy, steal, total) jiffies summed over all CPUs, or None."""
    try:
        with open("/proc/stat") as f:
            parts = f.readline().split()
    except OSError:
        return None
    vals = [int(v) for v in parts[1:]]
    user, nice, system, idle, iowait, irq, softirq = vals[:7]
    steal = vals[7] if len(vals) > 7 else 0
    busy = user + nice + system + irq + softirq
    return busy, steal, sum(vals[:8])


def _freqs_khz():
    freqs = []
    for f in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_cur_freq"):
        try:
            freqs.append(int(f.read_text()))
        except (OSError, ValueError):
            pass
    return freqs


def _own_cpu_seconds():
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


@dataclass
class Snapshot:
    wall: float
    own_cpu: float
    stat: tuple | None
    freqs: list
    load: tuple | None

    @classmethod
    def take(cls) -> "Snapshot":
        try:
            load = os.getloadavg()
        except OSError:
            load = None
        return cls(time.monotonic(), _own_cpu_seconds(), _proc_stat(), _freqs_khz(), load)


@dataclass
class Interference:
    """What happened on the machine between two snapshots: raw counts, so that several
    repetitions can be added up before anything is judged (one clock tick is 10 ms, a
    third of a short repetition's window)."""
    wall_s: float = 0.0
    other_cpu_s: float | None = None    # CPU time used by processes not ours
    steal_ticks: int = 0
    total_ticks: int = 0
    freq_range_khz: tuple | None = None
    load: tuple | None = None

    def to_dict(self):
        return {"wall_s": round(self.wall_s, 4), "other_cpu_s": self.other_cpu_s,
                "steal_ticks": self.steal_ticks, "total_ticks": self.total_ticks,
                "freq_range_khz": self.freq_range_khz, "load": self.load}


def between(a: Snapshot, b: Snapshot) -> Interference:
    out = Interference(wall_s=b.wall - a.wall, load=b.load)
    if a.stat and b.stat:
        busy = (b.stat[0] - a.stat[0]) / CLK_TCK
        out.other_cpu_s = round(max(0.0, busy - (b.own_cpu - a.own_cpu)), 4)
        out.steal_ticks = b.stat[1] - a.stat[1]
        out.total_ticks = b.stat[2] - a.stat[2]
    freqs = a.freqs + b.freqs
    if freqs:
        out.freq_range_khz = (min(freqs), max(freqs))
    return out


def judge(parts: list[Interference]) -> list[str]:
    """Plain-language warnings about the interference over several repetitions."""
    warnings = []
    wall = sum(p.wall_s for p in parts)
    others = [p.other_cpu_s for p in parts if p.other_cpu_s is not None]
    # Below a few ticks' worth of time the jiffy counts say nothing.
    if others and wall >= 0.3:
        other = sum(others) / wall
        if other >= OTHER_BUSY_CPUS:
            warnings.append("other processes used %.2f CPUs on average meanwhile" % other)
    total = sum(p.total_ticks for p in parts)
    if total >= 20:
        steal = sum(p.steal_ticks for p in parts) / total
        if steal >= STEAL_FRACTION:
            warnings.append("the hypervisor stole %.1f%% of CPU time meanwhile" % (steal * 100))
    ranges = [p.freq_range_khz for p in parts if p.freq_range_khz]
    if ranges:
        lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
        if hi and (hi - lo) / hi > FREQ_CHANGE:
            warnings.append("the CPU clock varied between %.2f and %.2f GHz"
                            % (lo / 1e6, hi / 1e6))
    return warnings


def processes():
    """(pid, command, fields after the command) of every process in /proc/*/stat;
    fields[0] is the state, fields[1] the parent, fields[11:13] user and system ticks."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue   # gone meanwhile
        yield (int(entry), stat[stat.index("(") + 1:stat.rindex(")")],
               stat[stat.rindex(")") + 2:].split())


def busy_processes(interval: float = 0.5, threshold: float = 0.10) -> list[dict]:
    """Processes (not ours) that used more than `threshold` of a CPU over `interval` s."""
    def sample():
        return {pid: (comm, int(f[11]) + int(f[12])) for pid, comm, f in processes()}
    if not Path("/proc/stat").exists():
        return []
    first = sample()
    time.sleep(interval)
    second = sample()
    mine = os.getpid()
    busy = []
    for pid, (comm, ticks) in second.items():
        if pid == mine or pid not in first:
            continue
        share = (ticks - first[pid][1]) / CLK_TCK / interval
        if share >= threshold:
            busy.append({"pid": pid, "command": comm, "cpu_share": round(share, 2)})
    return sorted(busy, key=lambda p: -p["cpu_share"])


def before_run() -> dict:
    """The state of the machine before a run, and warnings about it."""
    snap = Snapshot.take()
    busy = busy_processes()
    env = {"load_before": list(snap.load) if snap.load else None, "busy_before": busy,
           "warnings": []}
    ncpu = os.cpu_count() or 1
    if busy:
        env["warnings"].append("busy before the run: " + ", ".join(
            "%s (pid %d, %.0f%% CPU)" % (p["command"], p["pid"], p["cpu_share"] * 100)
            for p in busy[:5]))
    if snap.load and snap.load[0] > 0.5 * ncpu:
        env["warnings"].append("load average %.2f on %d CPUs before the run"
                               % (snap.load[0], ncpu))
    return env
