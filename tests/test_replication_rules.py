"""Every rule of the five studies can decide (issue 41): on constructed data each comes out
"holds" and "does not hold" -- no rule so slack that everything is undecided, none so
weak that everything holds.  One case per conclusion; test_every_conclusion_has_a_case
fails when a conclusion is added without one.

Runs are the fixture's machine (test_replication.drawn_run, one seed so that two runs of
it differ only where a case moves them), with results moved by factors; growth classes
are set directly (the classifier has tests of its own) by replacing the studies' curve
lookup.
"""
from __future__ import annotations

import copy

import pytest

from osmeter.analysis import compare, curves
from osmeter import studies
from osmeter.data.model import Result, Sample
from osmeter.stats import summarize
from osmeter.studies import common, view as sv
from test_replication import _fixture, drawn_run

C, L = curves.CONSTANT, curves.LINEAR


def med(bench, metric, x=None) -> float:
    """The fixture's median of a result."""
    d = next(d for d in _fixture()["results"] if d["bench"] == bench and d["metric"] == metric
             and (x is None or d["x"] == x))
    reps = d["reps"]
    vals = sorted(reps) if reps and not isinstance(reps[0], list) else [d["summary"]["median"]]
    return vals[len(vals) // 2]


def every(factor: float) -> dict:
    """Every result worse by `factor` (higher times, lower bandwidths)."""
    return {(d["bench"], d["metric"]): factor if d["better"] == "lower" else 1 / factor
            for d in _fixture()["results"]}


def quiet_run(name: str, scale=None):
    """The fixture's machine at rest: each result's repetitions within ±1% of its median
    (the fixture's own spread, from a busy machine, leaves many ratios undecided), and not
    flagged disturbed; scatters as drawn."""
    run = drawn_run(1, name, scale)
    for r in run.results:
        r.warnings = []
        if r.shape == "scatter" or r.median is None:
            continue
        if r.samples:
            m = r.median
            for s in r.samples:
                s.value = m * (1 + 0.01 * (s.rep - 2) / 2)
            r.summary = summarize(r.samples)
        else:
            r.summary.update(ci_low=0.99 * r.median, ci_high=1.01 * r.median)
    return run


def one(scale=None):
    return lambda: [quiet_run("sys-a", scale)]


def two(scale_b=None, scale_a=None):
    """Two systems: the fixture's machine twice, the second moved by scale_b."""
    return lambda: [quiet_run("sys-a", scale_a), quiet_run("sys-b", scale_b)]


def _result(bench, metric, x, value, unit, better, params=None, spread=0.005):
    r = Result(bench, metric, unit, better, "sweep", x, "bytes", params or {}, "ok", "")
    r.samples = [Sample(k, x, value * (1 + spread * (k - 2))) for k in range(5)]
    r.summary = summarize(r.samples)
    return r


def with_plateaus(levels: dict):
    """mem.read's plateaus at the given MB/s, each tight (±1%)."""
    def make():
        run = quiet_run("sys-a")
        run.results = [r for r in run.results if not r.metric.startswith("bandwidth.plateau.")
                       or r.bench != "mem.read"]
        for k, (level, v) in enumerate(levels.items()):
            r = _result("mem.read", "bandwidth.plateau." + level, None, v, "MB/s", "higher")
            r.extra = {"first_x": 1024 << 4 * k, "last_x": 8192 << 4 * k,
                       "break_x": 16384 << 4 * k}
            run.results.append(r)
        return [run]
    return make


def with_bonnie(reads: list):
    """fs.bonnie.warm at three sizes, the first two cached, read at `reads` MB/s."""
    def make():
        run = quiet_run("sys-a")
        for x, resident, read in zip((2 << 20, 8 << 20, 64 << 20), (100, 100, 40), reads):
            run.results.append(_result("fs.bonnie.warm", "resident", x, resident, "%", "higher",
                                       {"mem_limit": "32M"}))
            run.results.append(_result("fs.bonnie.warm", "read", x, read, "MB/s", "higher"))
        return [run]
    return make


def with_static_fork(factor: float):
    """scale.fork.static as a copy of scale.fork.dynamic moved by factor (its curve too)."""
    def make():
        run = quiet_run("sys-a")
        for r in [r for r in run.results if r.bench == "scale.fork.dynamic"]:
            s = copy.deepcopy(r)
            s.bench = "scale.fork.static"
            for smp in s.samples:
                smp.value *= factor
            s.summary = summarize(s.samples)
            s.extra["curve"] = {"all": curves.classify([(p.x, p.value) for p in s.samples],
                                                       detect_bands=False)}
            run.results.append(s)
        return [run]
    return make


def remote_pair(factor: float):
    """A local run and a run whose MAB ran on NFS, its total moved by factor."""
    def make():
        runs = [quiet_run("local"), quiet_run("nfs", {("mab.local", "total"): factor})]
        for run, fs in zip(runs, ("ext4", "nfs")):
            for r in run.results:
                if r.bench == "mab.local":
                    r.notes = {"fs_type": fs}
        return runs
    return make


# (study, words of the claim, classes or None, the runs where it holds, where it does not).
# classes: {bench: class, or [class per run]} set for the curve lookup; others O(1).
CASES = [
    ("o90", "has not kept up with CPU speed", None, one({("cpu.integer", "rate"): 1e3}),
     one({("cpu.integer", "rate"): 1e-4})),
    ("o90", "Memory bandwidth has not kept up", None, one({("cpu.integer", "rate"): 1e3}),
     one({("cpu.integer", "rate"): 1e-4})),
    ("o90", "Remote file systems cost", None, remote_pair(2.0), remote_pair(0.8)),
    ("o90", "Creating and deleting a file is slow", None,
     one({("fs.crtdel", "sequence"): 1e5}), one({("fs.crtdel", "sequence"): 1e-2})),
    ("lb96", "Context-switch time depends", ({"ctx.pipe_ring": [L, C]}, {"ctx.pipe_ring": C}),
     two(), two()),
    ("lb96", "Read bandwidth falls in steps", None, with_plateaus({"L1": 300, "L2": 110,
                                                                   "L3": 75}),
     with_plateaus({"L1": 100, "L2": 99, "L3": 75})),
    ("lb96", "Prefetching the cache lines", None,
     one({("mem.write_prefetch", "bandwidth"): 5 * med("mem.write", "bandwidth", 1 << 30)
          / med("mem.write_prefetch", "bandwidth", 1 << 30),
          ("mem.copy_prefetch", "bandwidth"): 5 * med("mem.copy", "bandwidth", 1 << 30)
          / med("mem.copy_prefetch", "bandwidth", 1 << 30)}),
     one({("mem.write_prefetch", "bandwidth"): 0.5, ("mem.copy_prefetch", "bandwidth"): 0.5})),
    ("lb96", "cache bonnie's file", None, with_bonnie([1000, 1000, 100]),
     with_bonnie([1000, 1000, 990])),
    ("lb96", "Linux's ext2 never waits", None,
     one({("fs.crtdel", "sequence_fsync"): 100 * med("fs.crtdel", "sequence", 0)
          / med("fs.crtdel", "sequence_fsync", 0)}),
     one({("fs.crtdel", "sequence_fsync"): med("fs.crtdel", "sequence", 0)
          / med("fs.crtdel", "sequence_fsync", 0)})),
    ("lb96", "UDP over loopback reaches only", None, one({("net.udp_ttcp", "received"): 1e-3}),
     one({("net.udp_ttcp", "received"): 1e3})),
    ("lb96", "100 Mbit/s Ethernet", None,
     one({("net.tcp_bw", "bandwidth"): 1e-6, ("net.udp_ttcp", "received"): 1e-6}), one()),
    ("lb96", "Across systems: Linux's small-file", None, two({("fs.crtdel", "sequence"): 20}),
     two({("fs.crtdel", "sequence"): 1.5})),
    ("lb96", "No one system dominates", None,
     two({("syscall.getpid", "latency"): 2, ("mem.read", "bandwidth"): 2}), two(every(2))),
    ("lb96", "MAB workload is much closer", None,
     two({**every(3), ("mab.local", "total"): 1.0}),
     two({**every(1.0), ("mab.local", "total"): 3.0})),
    ("vl03", "socket() and bind() scale", ({}, {"scale.socket": L}), one(), one()),
    ("vl03", "fork is O(1) on Linux 2.6", ({}, {"scale.fork.dynamic": L}), one(), one()),
    ("vl03", "Linking statically almost halves", None, with_static_fork(0.5),
     with_static_fork(1.0)),
    ("vl03", "as soon as a second one competes", None,
     one({("fs.frag.contention", "with_second_reader"): 0.3 * med("fs.frag.contention", "alone")
          / med("fs.frag.contention", "with_second_reader")}),
     one({("fs.frag.contention", "with_second_reader"): med("fs.frag.contention", "alone")
          / med("fs.frag.contention", "with_second_reader")})),
    ("vl03", "mmap and the page fault", ({}, {"scale.mmap_touch": L}), one(), one()),
    ("vl03", "A server with epoll/kqueue", ({"net.http_request.poll": L}, {}), one(), one()),
    ("vl03", "Cleaning up a process", ({"scale.exit.dynamic": L}, {}), one(), one()),
    ("vl03", "Linux 2.6 is the clear winner", ({"scale.fork.dynamic": [C, L],
                                               "scale.mmap": [C, L]},
                                              {"scale.fork.dynamic": [C, C],
                                               "scale.mmap": [C, C]}), two(), two()),
    ("mg05", "Statically linked programs", None,
     one({("proc.%s.static" % w, "latency"): 0.3 for w in ("fork", "exit", "exec")}),
     one({("proc.%s.static" % w, "latency"): 3 for w in ("fork", "exit", "exec")})),
    ("mg05", "Process creation and termination do not depend",
     ({"scale.fork.dynamic": [C, L], "scale.exit.dynamic": [C, L]},
      {"scale.fork.dynamic": [L, L], "scale.exit.dynamic": [C, L]}), two(), two()),
    ("mg05", "Mapping a window of a file", ({}, {"scale.mmap": L}), one(), one()),
    ("mg05", "Socket creation and bind grow linearly",
     ({"scale.socket": L, "scale.bind": L}, {}), one(), one()),
    ("mg05", "Thread creation is O(1) on FreeBSD", ({"thread.create": [C, L]},
                                                    {"thread.create": [L, C]}), two(), two()),
    ("mg05", "NetBSD 2.0 has closed the performance gap", None, two(every(2)),
     two(every(0.5))),
    ("cc06", "Linux's system call is an order", None, two({("syscall.getpid", "latency"): 10}),
     two({("syscall.getpid", "latency"): 1.5})),
    ("cc06", "Subjective tests: GNU/Linux", None, two(every(2)), two(every(0.5))),
    # sys-a's kernel is Linux: it plays Linux, the test's loser; sys-b plays NetBSD.
    ("cc06", "VFS: NetBSD 3.0", None, two(every(0.5)), two(every(2))),
    ("cc06", "Performance tests: Linux 2.6", None, two(every(2)), two(every(0.5))),
    ("cc06", "Latency tests: NetBSD", None, two(every(2)), two(every(0.5))),
    ("cc06", "Overall: Linux 2.6, NetBSD 3.0", None, two(every(2)), two(every(0.5))),
]


def _set_classes(monkeypatch, classes: dict):
    """The curve lookup of class and contrast claims replaced: each run's curve of a bench
    has the class given (per run where a list), O(1) otherwise."""
    def fake(ctx, bench, metric):
        for i in range(len(ctx.runs)):
            res = ctx.results(i, bench, metric)
            if not res:
                continue
            cls = classes.get(bench, C)
            cls = cls[i] if isinstance(cls, list) else cls
            yield i, {"class": cls, "growth": 1.0 if cls == C else 4.0}, res
    monkeypatch.setattr(common, "_curves", fake)
    monkeypatch.setattr(common, "resampled_classes", lambda res: [])


def _verdict(monkeypatch, sid, words, classes, runs):
    if classes is not None:
        _set_classes(monkeypatch, classes)
    view = studies.build(sid, compare.compare(runs))
    c = next(c for c in view.conclusions if words in c.claim)
    assert c.rule, c.claim
    return c


@pytest.mark.parametrize("sid,words,classes,holds,fails", CASES,
                         ids=["%s: %s" % (c[0], c[1]) for c in CASES])
def test_every_rule_can_hold_and_can_fail(monkeypatch, sid, words, classes, holds, fails):
    c = _verdict(monkeypatch, sid, words, classes and classes[0], holds())
    assert c.verdict == sv.HOLDS, (c.verdict, c.evidence, c.margin)
    assert c.basis and "repetition" in c.basis
    c = _verdict(monkeypatch, sid, words, classes and classes[1], fails())
    assert c.verdict == sv.DOES_NOT_HOLD, (c.verdict, c.evidence, c.margin)


def test_every_conclusion_has_a_case():
    run = drawn_run(1, "sys-a")
    for sid in studies.IDS:
        for c in studies.build(sid, compare.compare([run])).conclusions:
            assert any(s == sid and w in c.claim for s, w, *_ in CASES), (sid, c.claim)


def test_runs_whose_kernels_differ_play_the_papers_systems_of_their_family():
    """The NetBSD and Linux guests: the NetBSD run plays NetBSD whatever the order given."""
    from osmeter.studies import across
    linux, netbsd = quiet_run("linux-guest"), quiet_run("netbsd-guest")
    netbsd.sysinfo = dict(netbsd.sysinfo, kernel={"name": "NetBSD", "release": "6.99.16"})
    ctx = sv.Ctx(compare.compare([linux, netbsd]))
    who = across.roles(ctx, ["NetBSD 2.0", "FreeBSD 5.3"])
    assert who == {"NetBSD 2.0": 1, "FreeBSD 5.3": 0}
    assert "netbsd-guest (NetBSD 6.99.16) as NetBSD 2.0;" in across.cast(ctx, who)
    assert "as FreeBSD 5.3 (by order)" in across.cast(ctx, who)
    bsd = "a BSD (FreeBSD 6.1, NetBSD 3.0)"
    assert across.roles(ctx, [bsd, "Linux 2.6"]) == {bsd: 1, "Linux 2.6": 0}
    assert across.roles(sv.Ctx(compare.compare([linux])), ["NetBSD 2.0", "FreeBSD 5.3"]) is None
