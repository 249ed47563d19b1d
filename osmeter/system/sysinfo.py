"""What system this is: everything a comparison needs to say what differs.

Linux is read from /proc and /sys; the BSDs and macOS through sysctl.  Anything that
cannot be read is absent (never guessed).  A core run through a command (osmeter run
--core) describes its own system (`osmeter-core sysinfo`): `from_core` reads that with
the same parsers.
"""
from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from .. import __version__


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(errors="replace").strip()
    except OSError:
        return None


def _cmd(*args: str, timeout: float = 5.0) -> str | None:
    if not shutil.which(args[0]):
        return None
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def _sysctl(name: str) -> str | None:
    return _cmd("sysctl", "-n", name)


def os_release(text: str | None = None, system: str | None = None,
               release: str | None = None) -> dict:
    """From /etc/os-release (this machine's unless its text is given); where there is
    none (the BSDs, macOS), the kernel's name and release."""
    info = {}
    text = _read("/etc/os-release") if text is None and system is None else text
    system, release = system or platform.system(), release or platform.release()
    for line in (text or "").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            info[k] = v.strip().strip('"')
    name = info.get("PRETTY_NAME") or "%s %s" % (system, release)
    return {"name": name, "id": info.get("ID", system.lower()),
            "version": info.get("VERSION_ID", release)}


# arm64 /proc/cpuinfo names no model: it gives the MIDR's implementer and part
# numbers, named here as lscpu and the kernel's cputype.h name them.  An unlisted
# part is recorded by its numbers, never guessed.
ARM_IMPLEMENTERS = {0x41: "ARM", 0x42: "Broadcom", 0x43: "Cavium", 0x46: "Fujitsu",
                    0x48: "HiSilicon", 0x4E: "NVIDIA", 0x50: "APM", 0x51: "Qualcomm",
                    0x61: "Apple", 0x6D: "Microsoft", 0xC0: "Ampere"}
ARM_PARTS = {
    (0x41, 0xD03): "Cortex-A53", (0x41, 0xD04): "Cortex-A35", (0x41, 0xD05): "Cortex-A55",
    (0x41, 0xD07): "Cortex-A57", (0x41, 0xD08): "Cortex-A72", (0x41, 0xD09): "Cortex-A73",
    (0x41, 0xD0A): "Cortex-A75", (0x41, 0xD0B): "Cortex-A76", (0x41, 0xD0C): "Neoverse-N1",
    (0x41, 0xD0D): "Cortex-A77", (0x41, 0xD40): "Neoverse-V1", (0x41, 0xD41): "Cortex-A78",
    (0x41, 0xD44): "Cortex-X1", (0x41, 0xD46): "Cortex-A510", (0x41, 0xD47): "Cortex-A710",
    (0x41, 0xD48): "Cortex-X2", (0x41, 0xD49): "Neoverse-N2", (0x41, 0xD4F): "Neoverse-V2",
    (0x41, 0xD80): "Cortex-A520", (0x41, 0xD81): "Cortex-A720", (0x41, 0xD84): "Neoverse-V3",
    (0x41, 0xD8E): "Neoverse-N3", (0x43, 0x0AF): "ThunderX2", (0x46, 0x001): "A64FX",
    (0x48, 0xD01): "TaiShan v110", (0xC0, 0xAC3): "Ampere-1", (0xC0, 0xAC4): "Ampere-1a",
}


def _arm_model(implementer: str, part: str) -> str:
    try:
        imp, prt = int(implementer, 16), int(part, 16)
    except ValueError:
        return "implementer %s part %s" % (implementer, part)
    name = ARM_PARTS.get((imp, prt))
    vendor = ARM_IMPLEMENTERS.get(imp, "implementer 0x%02x" % imp)
    return "%s %s" % (vendor, name) if name else "%s part 0x%03x" % (vendor, prt)


def parse_cpuinfo(text: str) -> dict:
    """/proc/cpuinfo: the model, cores and flags.  x86 names its model and core ids;
    arm64 gives the implementer and part of each CPU (big.LITTLE: several) and no
    topology, so there its cores are its processor entries (sysfs, when readable,
    is asked first: see cpu_info)."""
    cpu: dict = {}
    models = re.findall(r"^model name\s*:\s*(.+)$", text, re.M)
    if models:
        cpu["model"] = models[0]
    cores = set()
    phys = None
    for line in text.splitlines():
        if line.startswith("physical id"):
            phys = line.split(":")[1].strip()
        elif line.startswith("core id"):
            cores.add((phys, line.split(":")[1].strip()))
    if cores:
        cpu["cores"] = len(cores)
    arm = re.findall(r"^CPU implementer\s*:\s*(\S+)\s*$.*?^CPU part\s*:\s*(\S+)\s*$", text,
                     re.M | re.S)
    if arm and "model" not in cpu:
        cpu["model"] = " + ".join(dict.fromkeys(_arm_model(i, p) for i, p in arm))
        cpu["cores"] = len(arm)
    flags = re.search(r"^flags\s*:\s*(.+)$", text, re.M)
    if flags:
        cpu["hypervisor_flag"] = "hypervisor" in flags.group(1).split()
    mhz = re.findall(r"^cpu MHz\s*:\s*([\d.]+)", text, re.M)
    if mhz:
        cpu["mhz_reported"] = float(mhz[0])
    return cpu


def _sysfs_cores() -> int | None:
    """Cores from the kernel's topology: one set of thread siblings per core."""
    sets = {_read(str(p)) for p in
            Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology/thread_siblings_list")}
    sets.discard(None)
    return len(sets) or None


def sysctl_cpu(get, system: str) -> dict:
    """The BSDs and macOS, from sysctl values (`get(name)` -> text or None): the model
    (macOS's hw.model names the machine, not the CPU), and cores where the system counts
    them apart from hardware threads: macOS hw.physicalcpu, FreeBSD kern.smp.cores,
    OpenBSD hw.ncpuonline with SMT off (hw.smt=0).  NetBSD does not say."""
    cpu = {}
    model = get("machdep.cpu.brand_string") if system == "Darwin" else get("hw.model")
    if model:
        cpu["model"] = model
    cores = (get("hw.physicalcpu") or get("kern.smp.cores")
             or (get("hw.ncpuonline") if get("hw.smt") == "0" else None))
    if cores and cores.isdigit():
        cpu["cores"] = int(cores)
    return cpu


def cpu_info() -> dict:
    cpu = {"threads": os.cpu_count()}
    text = _read("/proc/cpuinfo")
    if text:
        cpu.update(parse_cpuinfo(text))
        if "CPU implementer" in text:   # arm64: the kernel's topology when it has one
            cpu["cores"] = _sysfs_cores() or cpu.get("cores")
    else:
        cpu.update(sysctl_cpu(_sysctl, platform.system()))
    caches = []
    for idx in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        size = _read(str(idx / "size"))
        level = _read(str(idx / "level"))
        if size and level:
            m = re.match(r"(\d+)([KMG]?)", size)
            mult = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}[m.group(2)]
            caches.append({"level": int(level), "type": _read(str(idx / "type")),
                           "size": int(m.group(1)) * mult,
                           "shared_cpus": _read(str(idx / "shared_cpu_list"))})
    if caches:
        cpu["caches"] = caches
    base = "/sys/devices/system/cpu/cpu0/cpufreq/"
    gov = _read(base + "scaling_governor")
    if gov:
        cpu["governor"] = gov
        cpu["driver"] = _read(base + "scaling_driver")
        cpu["freq_min_khz"] = _read(base + "scaling_min_freq")
        cpu["freq_max_khz"] = _read(base + "scaling_max_freq")
    else:
        cpu["governor"] = "not visible"
    boost = _read("/sys/devices/system/cpu/cpufreq/boost")
    no_turbo = _read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    if boost is not None:
        cpu["boost"] = boost == "1"
    elif no_turbo is not None:
        cpu["boost"] = no_turbo == "0"
    return cpu


def mitigations() -> dict:
    d = Path("/sys/devices/system/cpu/vulnerabilities")
    if not d.is_dir():
        return {}
    return {f.name: _read(str(f)) for f in sorted(d.iterdir())}


def memory_bytes(get=None) -> int | None:
    text = _read("/proc/meminfo") if get is None else None
    if text:
        m = re.search(r"^MemTotal:\s+(\d+) kB", text, re.M)
        if m:
            return int(m.group(1)) * 1024
    get = get or _sysctl
    # macOS hw.memsize; NetBSD's hw.physmem is 32 bits, hw.physmem64 is not.
    v = get("hw.memsize") or get("hw.physmem64") or get("hw.physmem")
    return int(v) if v and v.isdigit() else None


def clock_source(get=None) -> str | None:
    """Linux's clocksource; the BSDs' timecounter.  macOS does not name one."""
    if get is None:
        v = _read("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        if v or sys.platform.startswith("linux"):
            return v
        get = _sysctl
    return get("kern.timecounter.hardware")


def virtualization() -> dict:
    v = {}
    detect = _cmd("systemd-detect-virt")
    if detect:
        v["detected"] = detect
    product = _read("/sys/class/dmi/id/product_name")
    if product:
        v["product"] = product
    if Path("/.dockerenv").exists():
        v["container"] = "docker"
    cg = _read("/proc/1/cgroup") or ""
    if "kubepods" in cg or "lxc" in cg:
        v["container"] = "kubernetes" if "kubepods" in cg else "lxc"
    vm_guest = _sysctl("kern.vm_guest")
    if vm_guest:
        v["detected"] = vm_guest
    return v


def libc(core_build: dict | None = None) -> dict:
    """The C library of the core (what it was built against and runs with), as the
    core reports it; without a core, the Python interpreter's."""
    if core_build and (core_build.get("libc") or {}).get("name"):
        return dict(core_build["libc"])
    ver = None
    try:
        ver = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError, AttributeError):
        pass
    if ver:
        name, _, version = ver.partition(" ")
        return {"name": name, "version": version}
    ldd = None
    if shutil.which("ldd"):
        try:
            r = subprocess.run(["ldd", "--version"], capture_output=True, text=True, timeout=5)
            ldd = (r.stdout + r.stderr).strip()
        except (OSError, subprocess.TimeoutExpired):
            pass
    if ldd and "musl" in ldd:
        m = re.search(r"Version ([\d.]+)", ldd)
        return {"name": "musl", "version": m.group(1) if m else None}
    name, version = platform.libc_ver()
    return {"name": name or platform.system() + " libc", "version": version or platform.release()}


def collect(core_build: dict | None = None) -> dict:
    """The whole description; `core_build` is osmeter-core's version record."""
    uname = platform.uname()
    info = {
        "hostname": socket.gethostname(),
        "os": os_release(),
        "kernel": {"name": uname.system, "release": uname.release, "version": uname.version,
                   "cmdline": _read("/proc/cmdline")},
        "arch": uname.machine,
        "cpu": cpu_info(),
        "mitigations": mitigations(),
        "memory_bytes": memory_bytes(),
        "virtualization": virtualization(),
        "libc": libc(core_build),
        "clocksource": clock_source(),
        "transparent_hugepages": _read("/sys/kernel/mm/transparent_hugepage/enabled"),
        "limits": limits(),
        "python": platform.python_version(),
        "osmeter_version": __version__,
    }
    if core_build:
        info["core"] = core_build
    return info


def from_core(raw: dict, core_build: dict | None, command: str) -> dict:
    """The description of the system a core ran on, from what it printed for
    `osmeter-core sysinfo` (reached through `command`): what the core can read there,
    interpreted as collect() interprets this machine.  What it cannot say is absent."""
    uname = raw.get("uname") or {}
    files = raw.get("files") or {}
    ctl = {k: str(v) for k, v in (raw.get("sysctl") or {}).items()}
    system = uname.get("sysname") or "unknown"
    cpu = {"threads": raw.get("ncpu_online") if (raw.get("ncpu_online") or 0) > 0 else None}
    if files.get("/proc/cpuinfo"):
        cpu.update(parse_cpuinfo(files["/proc/cpuinfo"]))
    else:
        cpu.update(sysctl_cpu(ctl.get, system))
    m = re.search(r"^MemTotal:\s+(\d+) kB", files.get("/proc/meminfo") or "", re.M)
    memory = int(m.group(1)) * 1024 if m else memory_bytes(ctl.get)
    clock = (files.get("/sys/devices/system/clocksource/clocksource0/current_clocksource")
             or clock_source(ctl.get))
    virt = {k: v for k, v in (("detected", ctl.get("kern.vm_guest")),
                              ("product", files.get("/sys/class/dmi/id/product_name"))) if v}
    lim = {k: v for k, v in (raw.get("rlimits") or {}).items() if v is not None}
    for key, path in (("pid_max", "/proc/sys/kernel/pid_max"),
                      ("max_map_count", "/proc/sys/vm/max_map_count"),
                      ("ip_local_port_range", "/proc/sys/net/ipv4/ip_local_port_range")):
        if files.get(path):
            lim[key] = files[path].strip().replace("\t", " ")
    for key in ("kern.maxproc", "kern.maxfiles", "kern.maxfilesperproc"):
        if key in ctl:
            lim[key] = ctl[key]
    info = {
        "hostname": uname.get("nodename"),
        "os": os_release(files.get("/etc/os-release"), system, uname.get("release")),
        "kernel": {"name": system, "release": uname.get("release"),
                   "version": uname.get("version") or ctl.get("kern.version"),
                   "cmdline": (files.get("/proc/cmdline") or "").strip() or None},
        "arch": uname.get("machine"),
        "cpu": cpu,
        "memory_bytes": memory,
        "virtualization": virt,
        "libc": libc(core_build) if core_build else {},
        "clocksource": (clock or "").strip() or None,
        "transparent_hugepages": (files.get("/sys/kernel/mm/transparent_hugepage/enabled")
                                  or "").strip() or None,
        "limits": lim,
        "osmeter_version": __version__,
        # Where the facts come from: the core on the target, not this machine's Python.
        "gathered_by": "osmeter-core sysinfo through: %s" % command,
    }
    if core_build:
        info["core"] = core_build
    return info


def limits() -> dict:
    import resource
    out = {}
    for name in ("RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_AS", "RLIMIT_MEMLOCK"):
        lim = getattr(resource, name, None)
        if lim is not None:
            soft, hard = resource.getrlimit(lim)
            out[name] = [None if soft == resource.RLIM_INFINITY else soft,
                         None if hard == resource.RLIM_INFINITY else hard]
    for key, path in (("pid_max", "/proc/sys/kernel/pid_max"),
                      ("max_map_count", "/proc/sys/vm/max_map_count"),
                      ("ip_local_port_range", "/proc/sys/net/ipv4/ip_local_port_range")):
        v = _read(path)
        if v:
            out[key] = v.replace("\t", " ")
    return out

