"""Pre-flight check: what on this machine makes results vary, and what to change.

Like `pyperf system show`: each finding says what was read, what it does to results and
what to change.  It only reads; osmeter never changes the system (the commands to
change it are printed for the user to run).  Linux is read from /proc and /sys; the
BSDs and macOS through sysctl where a setting has one; what cannot be read here is
said, never guessed.
"""
from __future__ import annotations

import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..analysis import monitor
from ..system.sysinfo import _read, _sysctl, virtualization

OK, ADVICE, UNKNOWN = "ok", "advice", "unknown"
CPU = "/sys/devices/system/cpu"


@dataclass
class Finding:
    topic: str
    verdict: str          # ok | advice | unknown
    state: str            # what was read (or why nothing could be)
    effect: str = ""      # what it does to results
    change: str = ""      # what to do about it (commands for the user)

    def to_dict(self) -> dict:
        return asdict(self)


def _glob(pattern: str) -> list[Path]:
    return sorted(Path("/").glob(pattern.lstrip("/")))


def _unknown(topic: str, why: str, effect: str = "") -> Finding:
    return Finding(topic, UNKNOWN, "cannot be read here: " + why, effect)


def _linux() -> bool:
    return platform.system() == "Linux"


def governor() -> Finding:
    topic = "CPU frequency governor"
    effect = ("a governor other than 'performance' lowers the clock when the CPU idles and "
              "raises it under load: a short benchmark after a pause measures the ramp-up, "
              "and results depend on what ran just before")
    if _linux():
        govs = {}
        for f in _glob(CPU + "/cpu[0-9]*/cpufreq/scaling_governor"):
            govs.setdefault(_read(str(f)) or "?", []).append(f.parent.parent.name)
        if not govs:
            return _unknown(topic, "no cpufreq in /sys (the firmware or the hypervisor sets "
                            "the clock, as on most VMs)", effect)
        state = "; ".join("%s on %d CPU(s)" % (g, len(c)) for g, c in sorted(govs.items()))
        if set(govs) == {"performance"}:
            return Finding(topic, OK, state)
        return Finding(topic, ADVICE, state, effect,
                       "sudo cpupower frequency-set -g performance (until reboot)")
    policy = _sysctl("hw.perfpolicy")                  # OpenBSD
    if policy:
        if policy == "high":
            return Finding(topic, OK, "hw.perfpolicy=high")
        return Finding(topic, ADVICE, "hw.perfpolicy=%s" % policy, effect,
                       "sudo apm -H (or sysctl hw.perfpolicy=high)")
    levels = _sysctl("dev.cpu.0.freq_levels")          # FreeBSD with cpufreq(4)
    if levels:
        return Finding(topic, ADVICE, "cpufreq(4) active; dev.cpu.0.freq=%s MHz"
                       % (_sysctl("dev.cpu.0.freq") or "?"), effect,
                       "stop powerd (service powerd stop) and set dev.cpu.0.freq to the "
                       "highest of dev.cpu.0.freq_levels")
    return _unknown(topic, "no governor interface found on %s" % platform.system(), effect)


def _setting(topic: str, name: str, value: str, good: str, effect: str,
             change: str) -> Finding:
    """A switch read as name=value: fine when it is `good`, else the advice."""
    state = "%s=%s" % (name, value)
    if value == good:
        return Finding(topic, OK, state)
    return Finding(topic, ADVICE, state, effect, change)


def boost() -> Finding:
    topic = "Turbo / boost"
    effect = ("the clock rises above nominal while the chip is cool and few cores are busy: "
              "the same benchmark runs faster or slower with temperature and with what else "
              "runs")
    if _linux():
        for name, good in (("intel_pstate/no_turbo", "1"), ("cpufreq/boost", "0")):
            value = _read("%s/%s" % (CPU, name))
            if value is not None:
                return _setting(topic, name, value, good, effect,
                                "echo %s | sudo tee %s/%s" % (good, CPU, name))
        return _unknown(topic, "neither intel_pstate/no_turbo nor cpufreq/boost exists (on "
                        "a VM the host decides)", effect)
    return _unknown(topic, "no boost switch is readable on %s" % platform.system(), effect)


def smt() -> Finding:
    topic = "SMT (hyper-threading)"
    effect = ("two hardware threads share one core's execution units and caches: whatever "
              "runs on the sibling slows the benchmark, differently from run to run")
    if _linux():
        active = _read(CPU + "/smt/active")
        if active is None:
            return _unknown(topic, "no %s/smt" % CPU, effect)
        return _setting(topic, "smt/active", active, "0", effect,
                        "echo off | sudo tee %s/smt/control (until reboot), or keep the "
                        "sibling of the benchmark's CPU idle" % CPU)
    value = _sysctl("hw.smt")                          # OpenBSD
    if value is not None:
        return _setting(topic, "hw.smt", value, "0", effect, "sysctl hw.smt=0")
    phys, logical = _sysctl("hw.physicalcpu"), _sysctl("hw.logicalcpu")   # macOS
    if phys and logical:
        return _setting(topic, "logical CPUs per physical", "%s/%s" % (logical, phys),
                        "%s/%s" % (phys, phys), effect,
                        "keep the machine otherwise idle while measuring")
    return _unknown(topic, "no SMT switch is readable on %s" % platform.system(), effect)


def aslr() -> Finding:
    topic = "ASLR"
    effect = ("every process gets another address layout, which moves code and data across "
              "cache sets; osmeter's repetitions are separate processes, so this becomes "
              "run-to-run variation inside the interval (what users of this system see)")
    states = {"0": "off", "1": "partial (stack, mmap, vdso)", "2": "full"}
    if _linux():
        v = _read("/proc/sys/kernel/randomize_va_space")
        if v is None:
            return _unknown(topic, "no /proc/sys/kernel/randomize_va_space", effect)
        if v == "0":
            return Finding(topic, ADVICE, "off", "results describe one fixed layout; "
                           "systems with ASLR on will vary more than these numbers suggest",
                           "echo 2 | sudo tee /proc/sys/kernel/randomize_va_space, unless "
                           "comparing layouts is not the point")
        return Finding(topic, OK, states.get(v, v) + " (layout effects are part of the "
                       "interval)")
    for name in ("kern.elf64.aslr.enable", "security.pax.aslr.enabled"):   # FreeBSD, NetBSD
        v = _sysctl(name)
        if v is not None:
            return Finding(topic, OK, "%s=%s" % (name, v))
    if platform.system() in ("OpenBSD", "Darwin"):
        return Finding(topic, OK, "always on (%s has no switch)" % platform.system())
    return _unknown(topic, "no ASLR setting is readable on %s" % platform.system(), effect)


def transparent_huge_pages() -> Finding:
    topic = "Transparent huge pages"
    effect = ("with 'always' a memory benchmark gets 2 MiB pages only when the kernel finds "
              "free contiguous memory: bandwidth and page-fault costs change from run to run")
    if _linux():
        v = _read("/sys/kernel/mm/transparent_hugepage/enabled")
        if v is None:
            return _unknown(topic, "no /sys/kernel/mm/transparent_hugepage", effect)
        chosen = v[v.index("[") + 1:v.index("]")] if "[" in v else v
        if chosen == "always":
            return Finding(topic, ADVICE, "always", effect,
                           "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled")
        return Finding(topic, OK, chosen)
    v = _sysctl("vm.pmap.pg_ps_enabled")               # FreeBSD superpages
    if v is not None:
        return _setting(topic, "vm.pmap.pg_ps_enabled", v, "0",
                        effect.replace("with 'always'", "with superpages on"),
                        "vm.pmap.pg_ps_enabled=0 in /boot/loader.conf")
    return _unknown(topic, "no huge-page policy is readable on %s" % platform.system(), effect)


def isolated_cpus() -> Finding:
    topic = "Isolated CPUs"
    effect = ("without isolated CPUs the scheduler puts other tasks and interrupts on the "
              "benchmark's CPU now and then: rare slow repetitions")
    if _linux():
        iso = _read(CPU + "/isolated")
        if iso is None:
            return _unknown(topic, "no %s/isolated" % CPU, effect)
        if iso:
            nohz = _read(CPU + "/nohz_full") or "none"
            return Finding(topic, OK, "isolated %s (nohz_full %s); run osmeter under "
                           "taskset -c %s to use them" % (iso, nohz, iso))
        return Finding(topic, ADVICE, "none", effect,
                       "for the steadiest numbers boot with isolcpus=N nohz_full=N "
                       "rcu_nocbs=N and run osmeter under taskset -c N")
    return _unknown(topic, "CPU isolation is not readable on %s" % platform.system(), effect)


def load(interval: float = 0.5) -> Finding:
    topic = "Load"
    effect = ("other processes compete for CPUs, caches and memory bandwidth; results "
              "they could move by a verdict's worth are flagged disturbed, with the reason")
    ncpu = os.cpu_count() or 1
    before = monitor.Snapshot.take()
    busy = monitor.busy_processes(interval)
    seen = monitor.between(before, monitor.Snapshot.take())
    if seen.other_cpu_s is None:
        return _unknown(topic, "CPU time is not counted here", effect)
    # Judged as the monitor judges a run (others' CPU time over the last moment), not by
    # the load average, which trails by minutes.
    others = monitor.others_before(seen)
    state = "other processes used %.0f%% of %d CPU(s) over %.1f s" % (
        100 * min(1.0, seen.other_cpu_s / max(1e-9, ncpu * seen.wall_s)), ncpu, seen.wall_s)
    if busy:
        state += "; busy: " + ", ".join("%s (pid %d, %.0f%% CPU)" % (
            p["command"], p["pid"], 100 * p["cpu_share"]) for p in busy[:5])
    if busy or others:
        return Finding(topic, ADVICE, state, effect,
                       "wait until the machine is idle, or stop what is running")
    return Finding(topic, OK, state)


def battery() -> Finding:
    topic = "Power source"
    effect = "on battery the system saves power: lower clocks, sometimes throttling"
    if _linux():
        supplies = _glob("/sys/class/power_supply/*")
        batteries = [p for p in supplies if _read(str(p / "type")) == "Battery"]
        mains = [p for p in supplies if _read(str(p / "type")) == "Mains"]
        if not batteries:
            return Finding(topic, OK, "no battery")
        if any(_read(str(p / "online")) == "1" for p in mains) or all(
                _read(str(p / "status")) in ("Charging", "Full", "Not charging")
                for p in batteries):
            return Finding(topic, OK, "on mains power")
        return Finding(topic, ADVICE, "on battery", effect, "plug in the power supply")
    for name in ("hw.acpi.acline", "hw.power"):        # FreeBSD, OpenBSD: 1 = mains
        v = _sysctl(name)
        if v is not None:
            return _setting(topic, name, v, "1", effect, "plug in the power supply")
    return _unknown(topic, "no power source is readable on %s" % platform.system(), effect)


def steal(interval: float = 0.5) -> Finding:
    topic = "Hypervisor steal"
    effect = ("a virtual machine's CPU time goes to other guests now and then: times include "
              "the wait, and vary with the neighbours' load")
    virt = virtualization()
    kind = virt.get("detected") or virt.get("product") or ""
    vm = bool(kind) and kind not in ("none", "unknown")
    before = monitor.Snapshot.take()
    time.sleep(interval)
    seen = monitor.between(before, monitor.Snapshot.take())
    if not seen.total_ticks:
        if vm:
            return _unknown(topic, "steal is not counted here (no /proc/stat); "
                            "virtualisation: %s" % kind, effect)
        return _unknown(topic, "steal is not counted on %s" % platform.system(), effect)
    share = seen.steal_ticks / seen.total_ticks
    state = "%.1f%% of CPU time stolen over %.1f s%s" % (
        100 * share, interval, "; virtualisation: %s" % kind if vm else "")
    if share >= monitor.MIN_EFFECT:
        return Finding(topic, ADVICE, state + "; runs judge their steal against this "
                       "machine's at rest, but steal this high comes and goes", effect,
                       "use dedicated (pinned) vCPUs or a bare-metal host")
    return Finding(topic, OK, state + ("; it comes and goes: osmeter measures it before a "
                                       "run and flags results that saw more" if vm else ""))


CHECKS = (governor, boost, smt, aslr, transparent_huge_pages, isolated_cpus, load, battery,
          steal)


def check() -> list[Finding]:
    return [c() for c in CHECKS]
