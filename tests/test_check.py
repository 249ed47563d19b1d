"""`osmeter check`: reads the machine, advises, changes nothing."""
import fnmatch
import json
from pathlib import Path

import pytest

from clirun import osmeter
from osmeter.running import preflight

WATCHED = ["/proc/sys/kernel/randomize_va_space",
           "/sys/kernel/mm/transparent_hugepage/enabled",
           "/sys/devices/system/cpu/smt/control",
           "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
           "/sys/devices/system/cpu/intel_pstate/no_turbo",
           "/sys/devices/system/cpu/cpufreq/boost"]


def _snapshot():
    out = {}
    for p in WATCHED:
        try:
            out[p] = Path(p).read_text()
        except OSError:
            out[p] = None
    return out


def test_check_reads_this_machine_and_changes_nothing():
    before = _snapshot()
    r = osmeter("check", check=0)
    assert _snapshot() == before
    for topic in ("CPU frequency governor", "Turbo / boost", "SMT", "ASLR",
                  "Transparent huge pages", "Isolated CPUs", "Load", "Power source",
                  "Hypervisor steal"):
        assert topic in r.stdout
    findings = json.loads(osmeter("check", "--json", check=0).stdout)
    assert len(findings) == 9
    assert {f["verdict"] for f in findings} <= {"ok", "advice", "unknown"}
    assert all(f["change"] for f in findings if f["verdict"] == "advice")
    aslr = next(f for f in findings if f["topic"] == "ASLR")
    value = before["/proc/sys/kernel/randomize_va_space"]
    if value is None:
        assert aslr["verdict"] == "unknown"
    else:
        assert aslr["state"].startswith({"0": "off", "1": "partial", "2": "full"}[value.strip()])


@pytest.fixture
def fake_sys(monkeypatch):
    """Readings as a dict: path -> text (None = missing)."""
    files = {}
    monkeypatch.setattr(preflight, "_read", lambda p: files.get(str(p)))
    monkeypatch.setattr(preflight, "_glob", lambda pattern: sorted(
        {Path(k) for k in files if fnmatch.fnmatch(k, pattern)} |
        {Path(k).parent for k in files if fnmatch.fnmatch(str(Path(k).parent), pattern)}))
    monkeypatch.setattr(preflight, "_linux", lambda: True)
    return files


def test_each_check_says_effect_and_change(fake_sys, monkeypatch):
    cpu = preflight.CPU
    fake_sys["/sys/kernel/mm/transparent_hugepage/enabled"] = "[always] madvise never"
    f = preflight.transparent_huge_pages()
    assert f.verdict == "advice" and "madvise" in f.change and "2 MiB" in f.effect
    fake_sys["/sys/kernel/mm/transparent_hugepage/enabled"] = "always [madvise] never"
    assert preflight.transparent_huge_pages().verdict == "ok"
    fake_sys[cpu + "/intel_pstate/no_turbo"] = "0"
    f = preflight.boost()
    assert f.verdict == "advice" and "no_turbo" in f.change
    fake_sys[cpu + "/smt/active"], fake_sys[cpu + "/smt/control"] = "1", "on"
    assert preflight.smt().verdict == "advice"
    fake_sys["/proc/sys/kernel/randomize_va_space"] = "0"
    assert preflight.aslr().verdict == "advice"
    fake_sys[cpu + "/isolated"] = "1"
    assert preflight.isolated_cpus().verdict == "ok"
    assert preflight.governor().verdict == "unknown"          # no cpufreq files at all
    assert "cannot be read here" in preflight.governor().state
    fake_sys[cpu + "/cpu0/cpufreq/scaling_governor"] = "powersave"
    fake_sys[cpu + "/cpu1/cpufreq/scaling_governor"] = "performance"
    f = preflight.governor()
    assert f.verdict == "advice" and "powersave on 1 CPU" in f.state
    assert "cpupower frequency-set -g performance" in f.change
    fake_sys["/sys/class/power_supply/BAT0/type"] = "Battery"
    fake_sys["/sys/class/power_supply/BAT0/status"] = "Discharging"
    fake_sys["/sys/class/power_supply/AC/type"] = "Mains"
    fake_sys["/sys/class/power_supply/AC/online"] = "0"
    assert preflight.battery().verdict == "advice"
    fake_sys["/sys/class/power_supply/AC/online"] = "1"
    assert preflight.battery().state == "on mains power"
