"""What system this is: everything a comparison needs to say what differs.

Linux is read from /proc and /sys; the BSDs and macOS through sysctl.  Anything that
cannot be read is absent (never guessed).
"""
from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
from pathlib import Path

from . import __version__


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


def os_release() -> dict:
    info = {}
    text = _read("/etc/os-release") or ""
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            info[k] = v.strip().strip('"')
    name = info.get("PRETTY_NAME") or "%s %s" % (platform.system(), platform.release())
    return {"name": name, "id": info.get("ID", platform.system().lower()),
            "version": info.get("VERSION_ID", platform.release())}


def cpu_info() -> dict:
    cpu = {"threads": os.cpu_count()}
    text = _read("/proc/cpuinfo")
    if text:
        models = re.findall(r"^model name\s*:\s*(.+)$", text, re.M)
        if models:
            cpu["model"] = models[0]
        cores = set()
        phys = core = None
        for line in text.splitlines():
            if line.startswith("physical id"):
                phys = line.split(":")[1].strip()
            elif line.startswith("core id"):
                core = line.split(":")[1].strip()
                cores.add((phys, core))
        if cores:
            cpu["cores"] = len(cores)
        flags = re.search(r"^flags\s*:\s*(.+)$", text, re.M)
        if flags:
            cpu["hypervisor_flag"] = "hypervisor" in flags.group(1).split()
        mhz = re.findall(r"^cpu MHz\s*:\s*([\d.]+)", text, re.M)
        if mhz:
            cpu["mhz_reported"] = float(mhz[0])
    else:
        model = _sysctl("machdep.cpu.brand_string") or _sysctl("hw.model")
        if model:
            cpu["model"] = model
        ncpu = _sysctl("hw.physicalcpu") or _sysctl("hw.ncpu")
        if ncpu and ncpu.isdigit():
            cpu["cores"] = int(ncpu)
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


def memory_bytes() -> int | None:
    text = _read("/proc/meminfo")
    if text:
        m = re.search(r"^MemTotal:\s+(\d+) kB", text, re.M)
        if m:
            return int(m.group(1)) * 1024
    v = _sysctl("hw.physmem") or _sysctl("hw.memsize")
    return int(v) if v and v.isdigit() else None


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


def libc() -> dict:
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


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


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
        "libc": libc(),
        "clocksource": _read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "transparent_hugepages": _read("/sys/kernel/mm/transparent_hugepage/enabled"),
        "limits": limits(),
        "python": platform.python_version(),
        "osmeter_version": __version__,
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

