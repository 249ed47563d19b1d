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
from dataclasses import dataclass, field
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
    """What happened on the machine between two snapshots."""
    other_cpus: float | None = None     # CPUs' worth of time used by other processes
    steal_fraction: float | None = None
    freq_range_khz: tuple | None = None
    load: tuple | None = None
    warnings: dict = field(default_factory=dict)   # kind -> message

    def to_dict(self):
        return {"other_cpus": self.other_cpus, "steal_fraction": self.steal_fraction,
                "freq_range_khz": self.freq_range_khz, "load": self.load}


def between(a: Snapshot, b: Snapshot) -> Interference:
    out = Interference(load=b.load)
    wall = b.wall - a.wall
    if a.stat and b.stat and wall > 0:
        busy = (b.stat[0] - a.stat[0]) / CLK_TCK
        other = max(0.0, busy - (b.own_cpu - a.own_cpu)) / wall
        out.other_cpus = round(other, 3)
        total = b.stat[2] - a.stat[2]
        out.steal_fraction = round((b.stat[1] - a.stat[1]) / total, 4) if total else 0.0
        # Jiffy accounting is coarse: only trust it over a few ticks' worth of time.
        if wall >= 0.2 and other >= OTHER_BUSY_CPUS:
            out.warnings["busy"] = "other processes used up to %.2f CPUs" % other
        if out.steal_fraction >= STEAL_FRACTION:
            out.warnings["steal"] = ("the hypervisor stole up to %.1f%% of CPU time"
                                     % (out.steal_fraction * 100))
    freqs = a.freqs + b.freqs
    if freqs:
        lo, hi = min(freqs), max(freqs)
        out.freq_range_khz = (lo, hi)
        if hi and (hi - lo) / hi > FREQ_CHANGE:
            out.warnings["frequency"] = ("the CPU clock varied between %.2f and %.2f GHz"
                                         % (lo / 1e6, hi / 1e6))
    return out


def busy_processes(interval: float = 0.5, threshold: float = 0.10) -> list[dict]:
    """Processes (not ours) that used more than `threshold` of a CPU over `interval` s."""
    def sample():
        usage = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path("/proc", entry, "stat").read_text()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            usage[int(entry)] = (comm, int(fields[11]) + int(fields[12]))
        return usage
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
