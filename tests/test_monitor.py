"""osmeter.analysis.monitor off Linux: busy CPU time from the BSDs' kern.cp_time and macOS's
Mach host statistics, busy processes from ps(1) (units on text in each system's
format: kern.cp_time as the BSDs' sysctl(8) prints it, ps TIME columns as procps and
the BSDs print them)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from osmeter.analysis import monitor


@pytest.mark.parametrize("text", [
    "1000 20 300 40 8640\n",                                             # FreeBSD, DragonFly
    "user = 1000, nice = 20, sys = 300, intr = 40, idle = 8640\n",       # NetBSD
])
def test_cp_time_of_freebsd_and_netbsd(text):
    assert monitor.parse_cp_time(text) == (1360, 0, 10000)


def test_cp_time_of_openbsd_counts_spin_as_busy():
    assert monitor.parse_cp_time("1000,20,300,5,35,8640\n") == (1360, 0, 10000)


@pytest.mark.parametrize("text", ["", "sysctl: unknown oid 'kern.cp_time'", "1 2 3"])
def test_cp_time_that_is_not_one_says_nothing(text):
    assert monitor.parse_cp_time(text) is None


def test_mach_host_statistics_order_is_user_system_idle_nice():
    assert monitor.mach_ticks_to_stat([1000, 300, 8640, 60]) == (1360, 0, 10000)


def test_busy_seconds_without_a_tick_rate_are_a_share_of_all_cpus():
    # 2 CPUs for 0.5 s: 1 CPU-second in all; a quarter of the ticks busy = 0.25 s.
    assert monitor.busy_cpu_seconds(25, 100, None, 0.5, 2) == pytest.approx(0.25)
    assert monitor.busy_cpu_seconds(25, 100, 100, 0.5, 2) == pytest.approx(0.25)
    assert monitor.busy_cpu_seconds(0, 0, None, 0.5, 2) == 0.0


def test_other_processes_seen_through_cp_time():
    a = monitor.Snapshot(wall=0.0, own_cpu=0.0, stat=(0, 0, 0), freqs={}, load=None)
    b = monitor.Snapshot(wall=1.0, own_cpu=0.25, stat=(100, 0, 200), freqs={}, load=None)
    # os.cpu_count() CPUs for 1 s, half of all ticks busy, a quarter second ours
    n = monitor.os.cpu_count()
    assert monitor.between(a, b).other_cpu_s == pytest.approx(n * 0.5 - 0.25)
    wrapped = monitor.Snapshot(wall=1.0, own_cpu=0.0, stat=(5, 0, 9), freqs={}, load=None)
    assert monitor.between(b, wrapped).other_cpu_s is None


@pytest.mark.parametrize("text, seconds", [
    ("0:00.02", 0.02), ("3:21.45", 201.45),            # the BSDs and macOS: mm:ss.cc
    ("00:00:05", 5.0), ("1-02:03:04", 93784.0),         # procps: [dd-]hh:mm:ss
])
def test_ps_cpu_time(text, seconds):
    assert monitor.cpu_time_seconds(text) == pytest.approx(seconds)


def test_ps_lines_with_spaces_in_the_command():
    out = ("    1   3:21.45 /sbin/launchd\n"
           "  345   0:00.02 /Applications/Some App.app/Contents/MacOS/Some App\n"
           "garbage\n")
    assert monitor.parse_ps(out) == {
        1: ("/sbin/launchd", pytest.approx(201.45)),
        345: ("/Applications/Some App.app/Contents/MacOS/Some App", pytest.approx(0.02))}


def test_the_warning_before_a_run_is_about_others_now_not_the_load_average(monkeypatch):
    """A load average of 14 left by osmeter's own previous run is no warning; CPU time
    other processes took in the moment before the run is, measured as a run's
    repetitions are judged."""
    from osmeter.analysis import monitor
    monkeypatch.setattr(monitor.os, "getloadavg", lambda: (14.22, 9.0, 4.0))
    monkeypatch.setattr(monitor, "busy_processes", lambda interval=0.5: [])
    quiet = monitor.Interference(wall_s=1.0, other_cpu_s=0.0, tick_s=0.01, total_ticks=200)
    monkeypatch.setattr(monitor, "between", lambda a, b: quiet)
    env = monitor.before_run()
    assert env["warnings"] == [] and env["others_before"] == 0
    assert env["load_before"][0] == 14.22          # still recorded, as a fact
    ncpu = monitor.os.cpu_count() or 1     # no per-CPU counts here: all of them
    busy = monitor.Interference(wall_s=1.0, other_cpu_s=0.5 * ncpu, tick_s=0.01,
                                total_ticks=100 * ncpu)
    monkeypatch.setattr(monitor, "between", lambda a, b: busy)
    env = monitor.before_run()
    assert env["others_before"] == pytest.approx(0.5, abs=0.01)
    assert env["warnings"] == ["other processes used 50%% of the %d CPUs in the 1.0 s "
                               "before the run" % ncpu]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc (Linux)")
def test_a_far_cores_processes_here_count_as_its_own_and_its_pinning_is_not_ours(monkeypatch):
    """osmeter run --core through a guest on this machine: the guest's qemu is not our
    child, so without OSMETER_CORE_PIDS its CPU time is "other processes"; with it, that
    time is the benchmark's own.  And the CPUs pinned to are the guest's, so this
    machine is judged as a whole."""
    monkeypatch.setattr(monitor, "_FAR_CORE", False)
    monkeypatch.setattr(monitor, "_FAR_CORE_PIDS", [])
    # A busy process that is not our child (its shell exits at once): a stand-in for qemu.
    out = subprocess.run(["sh", "-c", "%s -c 'import time\nt = time.time()\nwhile "
                          "time.time() - t < 3.0: pass' >/dev/null 2>&1 & echo $!"
                          % sys.executable], capture_output=True, text=True, check=True)
    pid = int(out.stdout)

    def window():
        """(our CPU seconds, the busy process's) over 0.4 s."""
        own, its = monitor._own_cpu_seconds(), monitor._pid_cpu_seconds(pid)
        time.sleep(0.4)
        return monitor._own_cpu_seconds() - own, monitor._pid_cpu_seconds(pid) - its
    try:
        time.sleep(0.1)
        own, its = window()
        assert its > 0.02 and own < its / 2            # busy, and not ours yet
        monitor.watch_far_core(True, [pid])
        own, its = window()
        assert its > 0.02 and own >= its               # now counted as ours
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    seen = monitor.Interference(wall_s=1.0, cpu_busy_s={0: 0.5}, cpu_ticks={0: (0, 100)})
    assert seen.on([0])["pinned"] is False        # the far machine's CPU 0 is not ours
    monitor.watch_far_core(False)                 # a local run after it: its own pinning
    assert seen.on([0])["pinned"] is True
