"""System-call family and fs.openclose at smoke size: units and plausibility."""
import pytest

from osmeter.running import coreproc

SYSCALLS = ["syscall.getpid", "syscall.getppid", "syscall.read", "syscall.write",
            "syscall.stat", "syscall.fstat"]


@pytest.mark.parametrize("bench", SYSCALLS)
def test_syscall_latency_is_plausible(smoke, bench):
    inv = smoke(bench)
    values = inv.values("latency")
    assert len(values) == 2  # smoke preset: two samples
    # A real system call costs more than a function call and far less than a millisecond.
    assert all(5 < v < 1_000_000 for v in values), values
    assert inv.header["metrics"][0]["unit"] == "ns"


def test_stat_costs_more_than_getpid(smoke):
    getpid = min(smoke("syscall.getpid", samples=5).values("latency"))
    stat = min(smoke("syscall.stat", samples=5).values("latency"))
    assert stat > getpid


def test_openclose_reports_both_paths(smoke):
    inv = smoke("fs.openclose")
    shallow, deep = inv.values("foo"), inv.values("a/b/c/foo")
    assert len(shallow) == 2 and len(deep) == 2
    assert all(v > 50 for v in shallow + deep)


def test_unknown_benchmark_and_bad_parameter_fail_cleanly():
    inv = coreproc.invoke("no.such.bench")
    assert inv.status == "failed" and "unknown benchmark" in inv.reason
    assert inv.returncode == 2
    inv = coreproc.invoke("syscall.getpid", params={"samples": "0"})
    assert inv.status == "failed" and "out of range" in inv.reason
    inv = coreproc.invoke("syscall.getpid", params={"samples": "many"})
    assert "not an integer" in inv.reason
    inv = coreproc.invoke("syscall.getpid", params={"colour": "red"})
    assert "unknown parameter" in inv.reason


@pytest.mark.parametrize("nfds", ["n", "all"])
def test_select_files_looks_at_what_nfds_covers(smoke, nfds):
    # lmbench's lat_select passes nfds = n, so of its n descriptors (numbered from 3 or 4
    # up) select looks only at those below n (issue 30); nfds=all looks at every one.
    inv = smoke("syscall.select.files", n=10, nfds=nfds)
    assert inv.status == "ok", inv.reason
    note = inv.notes["descriptors"]
    watched = int(note.rsplit(" ", 1)[1])
    assert (watched < 10) if nfds == "n" else (watched == 10), note
    assert all(50 < v < 1_000_000 for v in inv.values("latency"))


def test_select_files_rejects_more_descriptors_than_it_holds():
    inv = coreproc.invoke("syscall.select.files", params={"n": "513"}, preset="smoke")
    assert inv.status == "failed" and "out of range" in inv.reason
