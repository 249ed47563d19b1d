"""The processes a test made itself, and nothing else.

Another osmeter, or another test suite, may be running beside this one: a check that
counts every osmeter-core on the machine fails because of them, and a clean-up that
kills by name would kill theirs.  So tests look only at the tree of a process they
started and at the process groups of the cores in it (each core leads a session and a
group of its own, and its workload stays in that group).  `ps` works alike on Linux,
the BSDs and macOS.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time


def table() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, process group, state) of every process now."""
    out = subprocess.run(["ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "pgid=", "-o", "stat="],
                         capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4:
            rows[int(f[0])] = (int(f[1]), int(f[2]), f[3])
    return rows


def descendants(pid: int, rows: dict | None = None) -> set[int]:
    """Every live process below pid (children, their children, ...)."""
    rows = table() if rows is None else rows
    kids: dict[int, list[int]] = {}
    for p, (ppid, _, state) in rows.items():
        if not state.startswith("Z"):
            kids.setdefault(ppid, []).append(p)
    found, todo = set(), [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            if k not in found:
                found.add(k)
                todo.append(k)
    return found


def groups_below(pid: int) -> set[int]:
    """The process groups of pid's descendants, except the test runner's own group."""
    rows = table()
    return {rows[p][1] for p in descendants(pid, rows) if p in rows} - {os.getpgrp()}


def alive(pids=(), groups=()) -> set[int]:
    """Which of pids, and which members of the process groups, still run (not zombies)."""
    pids, groups = set(pids), set(groups)
    return {p for p, (_, pgid, state) in table().items()
            if (p in pids or pgid in groups) and not state.startswith("Z")}


def wait_gone(pids=(), groups=(), timeout: float = 2.0) -> set[int]:
    """Wait until none of them runs; returns those still running at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        left = alive(pids, groups)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def kill_tree(pid: int) -> None:
    """SIGKILL pid, everything below it and the process groups they lead (a core and
    its workload), never the test runner's own group."""
    rows = table()
    below = descendants(pid, rows)
    for group in {rows[p][1] for p in below if p in rows} - {os.getpgrp()}:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for p in below | {pid}:
        try:
            os.kill(p, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
