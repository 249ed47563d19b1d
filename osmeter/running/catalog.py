"""Benchmarks and suites.

The core's registry is the single source of truth for what a benchmark is (id,
parameters, metrics, the suites it belongs to); this module only names the suites
and resolves what a user asks for into benchmark ids.
"""
from __future__ import annotations

import fnmatch

from . import coreproc
from ..base import suggest

# Suite name -> (description, parameter preset used when running it).
SUITES = {
    "quick": ("the default: every core primitive at a short size (its time: the "
              "README's Measured figures)",
              "quick"),
    "minute": ("a minute or less: the quick suite's core services (system calls, processes, "
               "context switches, threads, IPC, files, memory) at its sizes, so its rows "
               "compare with a quick run's", "quick"),
    "full": ("every benchmark at the sizes of the studies", "default"),
    "o90": ("Ousterhout 1990, 'Why aren't operating systems getting faster as fast as "
            "hardware?'", "default"),
    "lb96": ("Lai & Baker 1996, 'A Performance Comparison of UNIX Operating Systems on the "
             "Pentium'", "default"),
    "vl03": ("von Leitner 2003, 'Benchmarking BSD and Linux' (scalability)", "default"),
    "mg05": ("McGarry 2005, 'Benchmark Comparison of NetBSD 2.0 and FreeBSD 5.3'", "default"),
    "cc06": ("Camacho 2006, 'Benchmarking Unix Operating Systems'", "default"),
    "studies": ("the five studies' suites together, at their sizes (osmeter replicate)",
                "default"),
}
STUDY_SUITES = ("o90", "lb96", "vl03", "mg05", "cc06")

# The one-minute suite: a part of the quick suite chosen here rather than in the core's
# tables, because it is a time budget, not a study.  One or two benchmarks per service the
# studies' tables name; their declared times at 5 repetitions stay within 55 s
# (tests/test_catalogue.py; measured, they take less: the README's measured figures).
MINUTE = ("cpu.integer", "syscall.getpid", "syscall.read", "syscall.write", "syscall.stat",
          "syscall.fstat", "syscall.poll", "syscall.select", "syscall.epoll", "syscall.kqueue",
          "ctx.pipe_pingpong", "ctx.pipe_self", "ctx.pipe_ring", "lat.signal",
          "proc.fork.dynamic", "proc.fork.static", "proc.exit.dynamic", "proc.exec.dynamic",
          "proc.fork_exec_exit", "proc.shell", "thread.create", "thread.mutex",
          "thread.condvar", "thread.rwlock", "thread.futex.wake", "thread.pingpong.e1",
          "net.pipe_bw", "net.unix_bw", "net.unix_lat", "net.tcp_lat", "net.udp_lat",
          "net.tcp_connect", "net.tcp_bw", "net.udp_ttcp", "net.http_connect", "fs.openclose",
          "fs.crtdel", "fs.rm_tree", "fs.tar.extract", "fs.cache_read", "scale.fork.dynamic",
          "scale.socket", "scale.bind", "scale.mmap", "mem.read", "mem.write", "mem.memcpy",
          "app.start.sh")
DEFAULT_SUITE = "quick"

# The parameter sizes every benchmark declares: the studies' (default), the quick suite's
# and the smallest that still runs (smoke); `osmeter-core list` gives each parameter one
# value per preset.
PRESETS = ("default", "quick", "smoke")

# Parameters that change how long a measurement takes, not what it measures (the
# harness's OM_BATCH_PARAMS).
TIMING_PARAMS = ("samples", "batch_ms")


class CatalogError(Exception):
    """A one-line, user-facing problem with what was asked for."""


class Catalog:
    def __init__(self, benches: list[dict] | None = None):
        self.benches = benches if benches is not None else coreproc.list_benchmarks()
        self.by_id = {b["id"]: b for b in self.benches}

    def suite(self, name: str) -> list[str]:
        if name not in SUITES:
            raise CatalogError("unknown suite '%s'%s (suites: %s)" % (
                name, suggest.did_you_mean(name, SUITES), ", ".join(SUITES)))
        if name == "full":
            # Everything that belongs to some suite; cmd.run needs a command and belongs
            # to none.
            return [b["id"] for b in self.benches if b["suites"]]
        if name == "minute":
            return [b["id"] for b in self.benches if b["id"] in MINUTE]
        if name == "studies":
            return [b["id"] for b in self.benches
                    if any(s in b["suites"] for s in STUDY_SUITES)]
        return [b["id"] for b in self.benches if name in b["suites"]]

    def select(self, patterns: list[str]) -> list[str]:
        """Ids from exact ids, glob patterns ('syscall.*') or family prefixes ('ctx')."""
        chosen: list[str] = []
        for pat in patterns:
            if pat in self.by_id:
                matches = [pat]
            elif any(c in pat for c in "*?["):
                matches = [i for i in self.by_id if fnmatch.fnmatchcase(i, pat)]
            else:
                matches = [i for i in self.by_id if i.startswith(pat + ".")]
            if not matches:
                families = {i.split(".", 1)[0] for i in self.by_id}
                raise CatalogError("unknown benchmark '%s'%s" % (pat, suggest.did_you_mean(
                    pat, list(self.by_id) + sorted(families)) or " (osmeter list shows them)"))
            chosen += [m for m in matches if m not in chosen]
        return chosen

    def param(self, bench_id: str, name: str) -> dict | None:
        for p in self.by_id[bench_id]["params"]:
            if p["name"] == name:
                return p
        return None

    def declares(self, bench_id: str, name: str) -> bool:
        return self.param(bench_id, name) is not None

    def estimates(self, bench_id: str) -> dict[str, float]:
        """Seconds one repetition takes at each preset, as the core declares them
        (measured on the reference machine by bench/eta_estimates.py).  A core that
        declares one number declares it for the studies' sizes: it stands for every
        preset then."""
        bench = self.by_id[bench_id]
        default = float(bench.get("est_seconds") or 1.0)
        per_preset = bench.get("est_seconds_by_preset") or {}
        return {p: float(per_preset.get(p, default)) for p in PRESETS}

    def metric(self, bench_id: str, name: str) -> dict:
        for m in self.by_id[bench_id]["metrics"]:
            if m["name"] == name:
                return m
        raise KeyError(name)
