"""osmeter.system.sysinfo off x86 Linux: arm64 /proc/cpuinfo, the BSDs' and macOS's sysctl
values, and the C library taken from the core (units on text in each system's format:
arm64 cpuinfo as the kernel's cpuinfo.c prints it, sysctl values as sysctl -n prints
them)."""
from __future__ import annotations

from osmeter.running import coreproc
from osmeter.system import sysinfo

ARM64_BLOCK = """processor\t: {n}
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs
CPU implementer\t: {imp}
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: {part}
CPU revision\t: 1
"""


def arm64_cpuinfo(*parts):
    return "\n".join(ARM64_BLOCK.format(n=n, imp=imp, part=part)
                     for n, (imp, part) in enumerate(parts))


def test_arm64_cpuinfo_names_the_model_and_counts_cores():
    cpu = sysinfo.parse_cpuinfo(arm64_cpuinfo(*[("0x41", "0xd0c")] * 4))   # Graviton2
    assert cpu == {"model": "ARM Neoverse-N1", "cores": 4}


def test_arm64_big_little_names_both_kinds():
    cpu = sysinfo.parse_cpuinfo(arm64_cpuinfo(*[("0x41", "0xd03")] * 4 + [("0x41", "0xd08")] * 2))
    assert cpu == {"model": "ARM Cortex-A53 + ARM Cortex-A72", "cores": 6}


def test_arm64_unknown_part_is_recorded_by_its_numbers():
    assert sysinfo.parse_cpuinfo(arm64_cpuinfo(("0x41", "0xfff")))["model"] == "ARM part 0xfff"
    assert (sysinfo.parse_cpuinfo(arm64_cpuinfo(("0x99", "0x001")))["model"]
            == "implementer 0x99 part 0x001")


def test_x86_cpuinfo_still_counts_core_ids():
    text = "".join("processor\t: %d\nmodel name\t: AMD EPYC\nphysical id\t: 0\ncore id\t: %d\n"
                   "flags\t\t: fpu hypervisor\ncpu MHz\t\t: 2245.780\n\n" % (i, i // 2)
                   for i in range(4))
    assert sysinfo.parse_cpuinfo(text) == {"model": "AMD EPYC", "cores": 2,
                                           "hypervisor_flag": True, "mhz_reported": 2245.78}


SYSCTL = {
    "FreeBSD": {"hw.model": "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", "hw.ncpu": "28",
                "kern.smp.cores": "14", "hw.physmem": "34246115328",
                "kern.timecounter.hardware": "TSC-low"},
    "NetBSD": {"hw.model": "Intel(R) Core(TM) i5-8250U CPU @ 1.60GHz", "hw.ncpu": "8",
               "hw.physmem": "2147483647", "hw.physmem64": "17096327168",
               "kern.timecounter.hardware": "hpet0"},
    "OpenBSD": {"hw.model": "AMD Ryzen 7 3700X 8-Core Processor", "hw.ncpu": "16",
                "hw.ncpuonline": "8", "hw.smt": "0", "hw.physmem": "34213928960",
                "kern.timecounter.hardware": "tsc"},
    "Darwin": {"machdep.cpu.brand_string": "Apple M1", "hw.model": "MacBookAir10,1",
               "hw.ncpu": "8", "hw.physicalcpu": "8", "hw.memsize": "17179869184"},
}


def test_bsd_and_macos_sysctl_values():
    expect = {
        "FreeBSD": ({"model": "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", "cores": 14},
                    34246115328, "TSC-low"),
        # NetBSD's hw.physmem is a 32-bit int; hw.physmem64 is the real size.  It does
        # not count cores apart from hardware threads: absent, not hw.ncpu.
        "NetBSD": ({"model": "Intel(R) Core(TM) i5-8250U CPU @ 1.60GHz"}, 17096327168, "hpet0"),
        "OpenBSD": ({"model": "AMD Ryzen 7 3700X 8-Core Processor", "cores": 8},
                    34213928960, "tsc"),
        # hw.model is the machine on macOS; no timecounter to name.
        "Darwin": ({"model": "Apple M1", "cores": 8}, 17179869184, None),
    }
    for system, values in SYSCTL.items():
        cpu, memory, clock = expect[system]
        assert sysinfo.sysctl_cpu(values.get, system) == cpu, system
        assert sysinfo.memory_bytes(values.get) == memory, system
        assert sysinfo.clock_source(values.get) == clock, system


def test_openbsd_with_smt_on_does_not_call_threads_cores():
    values = dict(SYSCTL["OpenBSD"], **{"hw.smt": "1", "hw.ncpuonline": "16"})
    assert "cores" not in sysinfo.sysctl_cpu(values.get, "OpenBSD")


def test_the_c_library_recorded_is_the_cores():
    musl_core = {"core_version": "0.1.0", "libc": {"name": "musl", "version": None}}
    assert sysinfo.collect(musl_core)["libc"] == {"name": "musl", "version": None}
    built = coreproc.core_version()
    assert built["libc"]["name"] in ("glibc", "musl")
    assert sysinfo.collect(built)["libc"] == built["libc"]
