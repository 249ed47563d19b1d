"""Watching for what spoils measurements: other busy processes, load, steal, frequency.

Around every core invocation the runner takes a `Snapshot` before and after; the
difference says how much CPU time *other* processes used meanwhile (all CPU time
minus what our own benchmark process tree used), how much a hypervisor stole, and
whether the CPU clock moved.  The CPU time comes from /proc/stat on Linux,
kern.cp_time on the BSDs (sysctl) and the Mach host statistics on macOS; busy
processes from /proc on Linux and ps(1) elsewhere.
"""
from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
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


def parse_cp_time(text: str):
    """`sysctl -n kern.cp_time` as (busy, steal, total) ticks, or None.  FreeBSD prints
    "user nice sys intr idle", NetBSD "user = 1, nice = 2, sys = 3, intr = 4, idle = 5",
    OpenBSD "user,nice,sys,spin,intr,idle"; idle is last everywhere, and no BSD counts
    steal here."""
    ticks = [int(v) for v in re.findall(r"\d+", text or "")]
    if len(ticks) not in (5, 6):
        return None
    return sum(ticks) - ticks[-1], 0, sum(ticks)


def mach_ticks_to_stat(ticks):
    """macOS host_cpu_load_info.cpu_ticks (user, system, idle, nice) as (busy, steal, total)."""
    user, system, idle, nice = ticks
    return user + system + nice, 0, user + system + idle + nice


_mach = None


def _mach_cpu_ticks():
    """macOS: the Mach host statistics (HOST_CPU_LOAD_INFO), through libSystem."""
    global _mach
    try:
        import ctypes
        if _mach is None:
            lib = ctypes.CDLL("/usr/lib/libSystem.dylib")
            lib.mach_host_self.restype = ctypes.c_uint32
            _mach = (lib, lib.mach_host_self())   # one port right, kept
        lib, host = _mach
        info = (ctypes.c_uint32 * 4)()
        count = ctypes.c_uint32(4)   # HOST_CPU_LOAD_INFO_COUNT
        if lib.host_statistics(host, 3, info, ctypes.byref(count)) != 0:   # HOST_CPU_LOAD_INFO
            return None
    except (OSError, AttributeError):
        return None
    return mach_ticks_to_stat(list(info))


def _cpu_ticks():
    """(busy, steal, total) ticks summed over all CPUs, and the tick rate where it is
    known (Linux: CLK_TCK; elsewhere None: the ticks are then used as proportions)."""
    stat = _proc_stat()
    if stat is not None:
        return stat, CLK_TCK
    if sys.platform == "darwin":
        return _mach_cpu_ticks(), None
    if shutil.which("sysctl"):
        try:
            out = subprocess.run(["sysctl", "-n", "kern.cp_time"], capture_output=True,
                                 text=True, timeout=5)
            return parse_cp_time(out.stdout) if out.returncode == 0 else None, None
        except (OSError, subprocess.TimeoutExpired):
            pass
    return None, None


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
    tick_hz: float | None = None   # ticks per second of stat, where known

    @classmethod
    def take(cls) -> "Snapshot":
        try:
            load = os.getloadavg()
        except OSError:
            load = None
        stat, hz = _cpu_ticks()
        return cls(time.monotonic(), _own_cpu_seconds(), stat, _freqs_khz(), load, hz)


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


def busy_cpu_seconds(busy_ticks, total_ticks, tick_hz, wall_s, ncpus):
    """CPU seconds the busy ticks stand for: at the tick rate where it is known (Linux),
    else as the busy share of all CPUs' time over the wall time (the BSDs count at their
    statistics clock, stathz, macOS at its own)."""
    if tick_hz:
        return busy_ticks / tick_hz
    return busy_ticks / total_ticks * ncpus * wall_s if total_ticks > 0 else 0.0


def between(a: Snapshot, b: Snapshot) -> Interference:
    out = Interference(wall_s=b.wall - a.wall, load=b.load)
    deltas = [y - x for x, y in zip(a.stat, b.stat)] if a.stat and b.stat else []
    if deltas and min(deltas) >= 0:   # a counter that went back (wrapped) says nothing
        busy = busy_cpu_seconds(deltas[0], deltas[2], a.tick_hz, out.wall_s,
                                os.cpu_count() or 1)
        out.other_cpu_s = round(max(0.0, busy - (b.own_cpu - a.own_cpu)), 4)
        out.steal_ticks = deltas[1]
        out.total_ticks = deltas[2]
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


def cpu_time_seconds(text: str) -> float:
    """ps(1)'s TIME column: [dd-][hh:]mm:ss[.cc] (the BSDs and macOS print hundredths)."""
    days, _, rest = text.rpartition("-")
    seconds = 0.0
    for part in rest.split(":"):
        seconds = seconds * 60 + float(part)
    return seconds + (int(days) * 86400 if days else 0)


def parse_ps(text: str) -> dict:
    """`ps -A -o pid= -o time= -o comm=` as {pid: (command, CPU seconds)}."""
    out = {}
    for line in text.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0].isdigit():
            try:
                out[int(parts[0])] = (parts[2].strip(), cpu_time_seconds(parts[1]))
            except ValueError:
                continue
    return out


def _ps_sample() -> dict:
    try:
        r = subprocess.run(["ps", "-A", "-o", "pid=", "-o", "time=", "-o", "comm="],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return parse_ps(r.stdout) if r.returncode == 0 else {}


def busy_processes(interval: float = 0.5, threshold: float = 0.10) -> list[dict]:
    """Processes (not ours) that used more than `threshold` of a CPU over `interval` s."""
    def sample():
        if Path("/proc/stat").exists():
            return {pid: (comm, (int(f[11]) + int(f[12])) / CLK_TCK)
                    for pid, comm, f in processes()}
        return _ps_sample() if shutil.which("ps") else {}
    first = sample()
    if not first:
        return []
    time.sleep(interval)
    second = sample()
    mine = os.getpid()
    busy = []
    for pid, (comm, seconds) in second.items():
        if pid == mine or pid not in first:
            continue
        share = (seconds - first[pid][1]) / interval
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
