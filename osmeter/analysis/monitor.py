"""Watching for what spoils measurements: other busy processes, load, steal, frequency,
thermal throttling; and judging whether what was seen could explain a verdict.

Around every core invocation the runner takes a `Snapshot` before and after; the
difference says how much CPU time *other* processes used meanwhile (CPU time minus
what our own benchmark process tree used; on Linux per CPU, so that a benchmark pinned
to one CPU is judged by that CPU), how much a hypervisor stole, whether the CPU clock
moved and whether the CPU was throttled for heat.  `judge` turns that into
"disturbed" flags (osmeter/analysis/flags.py) where it could move the result by as much as a
verdict needs; steal is judged against this machine's steal at rest (`at_rest`,
measured before the run).  The CPU time comes from /proc/stat on Linux,
kern.cp_time on the BSDs (sysctl) and the Mach host statistics on macOS; busy
processes from /proc on Linux and ps(1) elsewhere.
"""
from __future__ import annotations

import math
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import flags

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
# A disturbance counts when it could move a result by at least this much, or by its own
# spread if that is larger: the smallest difference `compare` calls a verdict.
MIN_EFFECT = 0.02
MAX_SHARE = 0.95            # beyond this, "others took the CPU" has no meaningful size


def _proc_stat():
    """(all CPUs, {cpu: counts}) from /proc/stat, each (busy, steal, total) jiffies, or
    (None, {}).  Busy is user + nice + system: time that processes used.  Interrupt time
    is left out: it is mostly the kernel serving what runs (a network benchmark's own
    packets), not another process."""
    try:
        with open("/proc/stat") as f:
            lines = [l.split() for l in f if l.startswith("cpu")]
    except OSError:
        return None, {}
    every, per_cpu = None, {}
    for parts in lines:
        vals = [int(v) for v in parts[1:9]] + [0] * max(0, 9 - len(parts))
        user, nice, system, idle, iowait, irq, softirq, steal = vals[:8]
        counts = (user + nice + system, steal, sum(vals[:8]))
        if parts[0] == "cpu":
            every = counts
        elif parts[0][3:].isdigit():
            per_cpu[int(parts[0][3:])] = counts
    return every, per_cpu


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
    """(busy, steal, total) ticks summed over all CPUs, the same per CPU where the
    system tells ({} elsewhere), and the tick rate where it is known (Linux: CLK_TCK;
    elsewhere None: the ticks are then used as proportions)."""
    stat, per_cpu = _proc_stat()
    if stat is not None:
        return stat, per_cpu, CLK_TCK
    if sys.platform == "darwin":
        return _mach_cpu_ticks(), {}, None
    if shutil.which("sysctl"):
        try:
            out = subprocess.run(["sysctl", "-n", "kern.cp_time"], capture_output=True,
                                 text=True, timeout=5)
            return parse_cp_time(out.stdout) if out.returncode == 0 else None, {}, None
        except (OSError, subprocess.TimeoutExpired):
            pass
    return None, {}, None


def _per_cpu_files(name: str) -> dict:
    """{cpu: int} of /sys/devices/system/cpu/cpuN/<name> where it exists (Linux)."""
    out = {}
    for f in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/" + name):
        try:
            out[int(f.parents[len(Path(name).parts) - 1].name[3:])] = int(f.read_text())
        except (OSError, ValueError):
            pass
    return out


def _freqs_khz() -> dict:
    return _per_cpu_files("cpufreq/scaling_cur_freq")


def _throttle_counts() -> dict:
    """Thermal throttling events so far per CPU (Linux x86: core + package counters)."""
    core = _per_cpu_files("thermal_throttle/core_throttle_count")
    package = _per_cpu_files("thermal_throttle/package_throttle_count")
    return {c: core.get(c, 0) + package.get(c, 0) for c in set(core) | set(package)}


# A core run elsewhere (osmeter run --core): the CPUs it is pinned to are that machine's,
# not these, and the processes that run it here (a virtual machine's qemu) are the
# benchmark's own, not others.  Set by `watch_far_core`.
_FAR_CORE = False
_FAR_CORE_PIDS: list[int] = []


def watch_far_core(far: bool, pids=()) -> None:
    """Whether the core runs through a command (set by each run, so that a local run after
    a far one in the same process is judged as local); if it does, judge this machine as
    a whole, and count the CPU time of PIDS (the processes running it here, e.g. a guest's
    qemu) as our own."""
    global _FAR_CORE, _FAR_CORE_PIDS
    _FAR_CORE, _FAR_CORE_PIDS = far, [int(p) for p in pids] if far else []


def _pid_cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of one process (and its threads) from /proc; 0 where
    it cannot be read (gone, or not Linux)."""
    try:
        fields = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return 0.0


def _own_cpu_seconds():
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
            + sum(_pid_cpu_seconds(p) for p in _FAR_CORE_PIDS))


def allowed_cpus() -> list[int]:
    """The CPUs this process may run on (all where the system cannot tell)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


@dataclass
class Snapshot:
    wall: float
    own_cpu: float
    stat: tuple | None
    freqs: dict                     # cpu -> kHz now
    load: tuple | None
    tick_hz: float | None = None    # ticks per second of stat, where known
    per_cpu: dict = field(default_factory=dict)     # cpu -> (busy, steal, total) ticks
    throttled: dict = field(default_factory=dict)   # cpu -> thermal throttling events

    @classmethod
    def take(cls) -> "Snapshot":
        try:
            load = os.getloadavg()
        except OSError:
            load = None
        stat, per_cpu, hz = _cpu_ticks()
        return cls(time.monotonic(), _own_cpu_seconds(), stat, _freqs_khz(), load, hz,
                   per_cpu, _throttle_counts())


@dataclass
class Interference:
    """What happened on the machine between two snapshots: raw counts, so that several
    repetitions can be added up before anything is judged (one clock tick is 10 ms, a
    third of a short repetition's window).  Per CPU where the system counts per CPU, so
    that a benchmark pinned to one CPU is judged by what happened on that CPU."""
    wall_s: float = 0.0
    other_cpu_s: float | None = None    # CPU time used by processes not ours, all CPUs
    steal_ticks: int = 0
    total_ticks: int = 0
    freq_range_khz: tuple | None = None
    load: tuple | None = None
    own_cpu_s: float = 0.0
    tick_s: float | None = None         # seconds per tick where known
    cpu_busy_s: dict = field(default_factory=dict)    # cpu -> CPU seconds busy (anyone)
    cpu_ticks: dict = field(default_factory=dict)     # cpu -> (steal, total) ticks
    cpu_freqs: dict = field(default_factory=dict)     # cpu -> (lowest, highest) kHz seen
    throttled: dict = field(default_factory=dict)     # cpu -> throttling events

    def on(self, cpus) -> dict:
        """The counts on the CPUs a benchmark was pinned to (`cpus`), or on every CPU
        osmeter may use (None: unpinned): what `disturbances` judges, and what is
        stored with each result."""
        if _FAR_CORE:           # pinned on the far machine: here, judge every CPU
            cpus = None
        pinned = bool(cpus)
        cpus = sorted(cpus) if cpus else allowed_cpus()
        per_cpu = bool(self.cpu_busy_s) and all(c in self.cpu_busy_s for c in cpus)
        if per_cpu:
            busy = sum(self.cpu_busy_s[c] for c in cpus)
            other = max(0.0, busy - self.own_cpu_s)
            steal = sum(self.cpu_ticks[c][0] for c in cpus)
            total = sum(self.cpu_ticks[c][1] for c in cpus)
        else:   # no per-CPU counts here: all CPUs, judged as if unpinned
            other, steal, total = self.other_cpu_s, self.steal_ticks, self.total_ticks
            cpus, pinned = list(range(os.cpu_count() or 1)), False
        freqs = [self.cpu_freqs[c] for c in cpus if c in self.cpu_freqs]
        return {"cpus": cpus, "pinned": pinned, "ncpus": len(cpus),
                "wall_s": round(self.wall_s, 4), "own_cpu_s": round(self.own_cpu_s, 4),
                "other_cpu_s": None if other is None else round(other, 4),
                "tick_s": self.tick_s, "steal_ticks": steal, "total_ticks": total,
                "freq_range_khz": (min(f[0] for f in freqs), max(f[1] for f in freqs))
                if freqs else None,
                "throttled": sum(self.throttled.get(c, 0) for c in cpus)}

    def to_dict(self, cpus=None):
        d = {"wall_s": round(self.wall_s, 4), "other_cpu_s": self.other_cpu_s,
             "steal_ticks": self.steal_ticks, "total_ticks": self.total_ticks,
             "freq_range_khz": self.freq_range_khz, "load": self.load}
        d["benchmark_cpus"] = self.on(cpus)
        return d


def busy_cpu_seconds(busy_ticks, total_ticks, tick_hz, wall_s, ncpus):
    """CPU seconds the busy ticks stand for: at the tick rate where it is known (Linux),
    else as the busy share of all CPUs' time over the wall time (the BSDs count at their
    statistics clock, stathz, macOS at its own)."""
    if tick_hz:
        return busy_ticks / tick_hz
    return busy_ticks / total_ticks * ncpus * wall_s if total_ticks > 0 else 0.0


def between(a: Snapshot, b: Snapshot) -> Interference:
    out = Interference(wall_s=b.wall - a.wall, load=b.load, own_cpu_s=b.own_cpu - a.own_cpu,
                       tick_s=1.0 / a.tick_hz if a.tick_hz else None)
    deltas = [y - x for x, y in zip(a.stat, b.stat)] if a.stat and b.stat else []
    if deltas and min(deltas) >= 0:   # a counter that went back (wrapped) says nothing
        busy = busy_cpu_seconds(deltas[0], deltas[2], a.tick_hz, out.wall_s,
                                os.cpu_count() or 1)
        out.other_cpu_s = round(max(0.0, busy - out.own_cpu_s), 4)
        out.steal_ticks = deltas[1]
        out.total_ticks = deltas[2]
    if a.tick_hz:
        for cpu in set(a.per_cpu) & set(b.per_cpu):
            d = [y - x for x, y in zip(a.per_cpu[cpu], b.per_cpu[cpu])]
            if min(d) >= 0:
                out.cpu_busy_s[cpu] = d[0] / a.tick_hz
                out.cpu_ticks[cpu] = (d[1], d[2])
    freqs = list(a.freqs.values()) + list(b.freqs.values())
    if freqs:
        out.freq_range_khz = (min(freqs), max(freqs))
    for cpu in set(a.freqs) & set(b.freqs):
        out.cpu_freqs[cpu] = (min(a.freqs[cpu], b.freqs[cpu]), max(a.freqs[cpu], b.freqs[cpu]))
    for cpu in set(a.throttled) & set(b.throttled):
        if b.throttled[cpu] > a.throttled[cpu]:
            out.throttled[cpu] = b.throttled[cpu] - a.throttled[cpu]
    return out


# ---- judging: could what happened explain a verdict? -----------------------------------

QUIET_ADVICE = ("quiet the machine (osmeter check names busy processes) and run again; "
                "for the steadiest numbers keep a CPU for the benchmark (isolcpus, taskset)")
STEAL_ADVICE = ("the VM's host was busier than at rest: run again later, or on dedicated "
                "vCPUs or bare metal")
CLOCK_ADVICE = ("fix the clock: the 'performance' governor and turbo off (osmeter check "
                "prints the commands)")
THROTTLE_ADVICE = "let the machine cool down, check its cooling, and run again"


def judge(parts: list[Interference], cpus=None, at_rest: dict | None = None,
          floor: float = MIN_EFFECT) -> list[flags.Flag]:
    """The disturbances, over the repetitions of one benchmark, that could move its
    result by at least `floor` (the smallest difference compare would call a verdict for
    it: 2%, or its own spread if larger).  `cpus`: the CPUs it was pinned to (None:
    unpinned, any CPU osmeter may use); `at_rest`: this machine's steal before the run
    (`at_rest()`), which is not a disturbance of this benchmark."""
    return disturbances([p.on(cpus) for p in parts], at_rest, floor)


def others_share(seen: list[dict], floor: float = 0.0) -> float:
    """The share of the CPU time on the benchmark's CPUs that other processes took, over
    its repetitions (`Interference.on` of each), or 0 where that does not stand out
    from tick counting as more than `floor` could explain.

    On the CPUs it was pinned to, or on all it may use when unpinned: an unpinned
    benchmark is not safe on a machine that looks half idle on average, since others
    come in bursts that fill every CPU now and then (bench/precision.py measured system
    calls at 15% spread beside processes that used half of two CPUs, 0.6% at rest).

    Busy time is counted in ticks: each window's count per CPU is off by up to one
    (variance 1/6), and a CPU busy a small share of the time is counted busy at a few
    ticks only (Poisson).  A share counts when its ticks lie three standard deviations
    above what a share of floor / (1 + floor), the largest that moves a result by less
    than floor, would give."""
    seen = [s for s in seen if s.get("other_cpu_s") is not None]
    wall = sum(s["wall_s"] for s in seen)
    if not seen or wall <= 0:
        return 0.0
    ncpus = seen[0]["ncpus"]
    tick = seen[0].get("tick_s") or 0.01
    ticks = sum(s["other_cpu_s"] for s in seen) / tick
    capacity = ncpus * wall / tick
    usual = floor / (1 + floor) * capacity
    if ticks <= usual + 3 * math.sqrt(usual + len(seen) * ncpus / 6):
        return 0.0
    return min(MAX_SHARE, ticks / capacity)


def _where(s: dict) -> str:
    if s.get("pinned"):
        return "CPU%s %s" % ("s" if s["ncpus"] > 1 else "", ",".join(map(str, s["cpus"])))
    return "the %d CPU%s it may use" % (s["ncpus"], "" if s["ncpus"] == 1 else "s")


def disturbances(seen: list[dict], at_rest: dict | None = None,
                 floor: float = MIN_EFFECT) -> list[flags.Flag]:
    """`judge` on the counts as they are stored with a result (notes.interference[].
    benchmark_cpus), so that stored runs can be judged again."""
    seen = [s for s in seen if s]
    if not seen:
        return []
    where = seen[0]["cpus"] if seen[0].get("pinned") else None
    out = []
    share = others_share(seen, floor)
    effect = share / (1 - share)
    if share and effect >= floor:
        out.append(flags.Flag(
            flags.DISTURBED, flags.OTHER_PROCESSES,
            "other processes took %.0f%% of the CPU time it needed on %s meanwhile: could "
            "make it up to %.0f%% slower (%.0f%% would change a verdict)" % (
                100 * share, _where(seen[0]), 100 * effect, 100 * floor),
            QUIET_ADVICE, round(effect, 4), round(floor, 4), where))
    steal = sum(s["steal_ticks"] for s in seen)
    total = sum(s["total_ticks"] for s in seen)
    if total > 0:
        usual = (at_rest or {}).get("steal") or 0.0
        expected = usual * total
        # Steal comes in ticks too: judge only what stands out from the usual share.
        if steal > expected + 3 * math.sqrt(expected + 1):
            share = steal / total
            effect = (share - usual) / (1 - min(share, MAX_SHARE))
            if effect >= floor:
                out.append(flags.Flag(
                    flags.DISTURBED, flags.STEAL,
                    "the hypervisor stole %.1f%% of CPU time on %s meanwhile (%s at rest): "
                    "could make it up to %.0f%% slower" % (
                        100 * share, _where(seen[0]), "%.1f%%" % (100 * usual)
                        if at_rest and "steal" in at_rest else "not measured", 100 * effect),
                    STEAL_ADVICE, round(effect, 4), round(floor, 4), where))
    ranges = [s["freq_range_khz"] for s in seen if s.get("freq_range_khz")]
    if ranges:
        lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
        effect = hi / lo - 1 if lo > 0 else 0.0
        if effect >= floor:
            out.append(flags.Flag(
                flags.DISTURBED, flags.CLOCK,
                "the CPU clock varied between %.2f and %.2f GHz meanwhile (%.0f%%)"
                % (lo / 1e6, hi / 1e6, 100 * effect), CLOCK_ADVICE, round(effect, 4),
                round(floor, 4), where))
    events = sum(s.get("throttled") or 0 for s in seen)
    if events:
        out.append(flags.Flag(
            flags.DISTURBED, flags.THROTTLING,
            "the CPU was throttled for heat %d time%s meanwhile" % (events,
                                                                   "" if events == 1 else "s"),
            THROTTLE_ADVICE, None, None, where))
    return out


def at_rest(interval: float = 1.0, before: Snapshot | None = None) -> dict:
    """This machine's steal when osmeter is not measuring (over `interval` seconds, or
    since `before`): the baseline steal during a run is judged against."""
    if before is None:
        before = Snapshot.take()
        time.sleep(interval)
    seen = between(before, Snapshot.take())
    if not seen.total_ticks:
        return {}
    return {"steal": round(seen.steal_ticks / seen.total_ticks, 4),
            "steal_ticks": seen.steal_ticks, "total_ticks": seen.total_ticks,
            "window_s": round(seen.wall_s, 2)}


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
    """The state of the machine before a run, and warnings about it; `at_rest` is the
    steal this machine shows when osmeter is not measuring (the baseline a run's steal
    is judged against)."""
    snap = Snapshot.take()
    busy = busy_processes(1.0)
    seen = between(snap, Snapshot.take())
    env = {"load_before": list(snap.load) if snap.load else None, "busy_before": busy,
           "at_rest": at_rest(before=snap), "others_before": others_before(seen),
           "warnings": []}
    if busy:
        env["warnings"].append("busy before the run: " + ", ".join(
            "%s (pid %d, %.0f%% CPU)" % (p["command"], p["pid"], p["cpu_share"] * 100)
            for p in busy[:5]))
    elif env["others_before"]:
        # No one process stood out, yet others took CPU time: many small ones.
        env["warnings"].append("other processes used %.0f%% of the %d CPUs in the %.1f s "
                               "before the run" % (100 * env["others_before"],
                                                   seen.on(None)["ncpus"], seen.wall_s))
    return env


def others_before(seen: Interference) -> float:
    """The share of the CPUs osmeter may use that other processes took over `seen` (a
    window before the run), as the monitor judges a benchmark's repetitions: 0 unless it
    stands out from tick counting by more than MIN_EFFECT.  Not the load average, which
    trails by minutes (a run right after osmeter's own previous run would be warned of
    that run)."""
    return round(others_share([seen.on(None)], MIN_EFFECT), 3)
