"""Camacho 2006, "Benchmarking Unix Operating Systems: FreeBSD 6.1, GNU/Linux 2.6.16,
NetBSD 3.0 and OpenBSD 3.9".

Four tables with the systems as columns and this machine's runs beside them.  The
hardware is not stated, and most tools are named but not their inputs, so many rows are
set beside osmeter's nearest experiment as "related"; the desktop start-up rows are not
comparable (osmeter starts no desktop; docs/applications.md says why).
"""
from __future__ import annotations

from ..data import references as refs
from . import across, common
from .view import NOT_MEASURED, Conclusion, StudyView

ID, REPORT, STUDY = "cc06", "camacho2006", "CC06"
TITLE = "Camacho 2006: Benchmarking Unix Operating Systems"
MACHINE = "not stated in the text"
T1, T2, T3, T4 = ("Test 1: Subjective tests", "Test 2: VFS tests", "Test 3: Performance tests",
                  "Test 4: Latencia tests")

# Each row's counterpart: (bench, metric, x, unit, better, related, note).  Keyed by
# (table, the row's bench, instances or None).
ROWS = {
    (T1, "app.vim_open", None): ("app.vim_open", "wall", None, "s", "lower", False,
                                 "a generated 470 MB text file"),
    (T1, "app.cpu.xine_avi", None): (
        "app.cpu.avi_play", "cpu", None, "%", "lower", True,
        "osmeter decodes an AVI at its real-time pace with ffmpeg; the study played one "
        "in Totem/xine"),
    (T1, "app.cpu.xmms", 1): ("app.cpu.audio_play", "cpu", 1, "%", "lower", True,
                              "real-time ffmpeg decodes of an MP2 file; the study ran XMMS"),
    (T1, "app.cpu.xmms", 2): ("app.cpu.audio_play", "cpu", 2, "%", "lower", True,
                              "real-time ffmpeg decodes of an MP2 file; the study ran XMMS"),
    (T1, "app.cpu.xmms", 4): ("app.cpu.audio_play", "cpu", 4, "%", "lower", True,
                              "real-time ffmpeg decodes of an MP2 file; the study ran XMMS"),
    (T2, "fs.tar.extract", None): ("fs.tar.extract", "time", None, "s", "lower", True,
                                   "osmeter's generated tree (the study's archive is not named)"),
    (T2, "fs.tar.create", None): ("fs.tar.create", "time", None, "s", "lower", True,
                                  "osmeter's generated tree (the study's archive is not named)"),
    (T2, "fs.rm_tree", None): ("fs.rm_tree", "time", None, "s", "lower", True,
                               "osmeter's generated tree (the study's tree is not named)"),
    (T2, "fs.bonniepp", None): ("fs.bonniepp", "time", None, "s", "lower", True,
                                "bonnie++'s parameters are not stated; osmeter's are its own"),
    (T2, "mem.read", None): ("mem.read", "bandwidth", "largest", "MB/s", "higher", True,
                             "at the largest buffer (main memory); the tool is not named"),
    (T2, "mem.write", None): ("mem.write", "bandwidth", "largest", "MB/s", "higher", True,
                              "at the largest buffer (main memory); the tool is not named"),
    (T3, "app.convert.jpeg_png", None): ("app.convert.jpeg_png", "wall", None, "s", "lower",
                                         True, "a generated JPEG (the study's is not named)"),
    (T3, "app.convert.avi_mpeg", None): ("app.convert.avi_mpeg", "wall", None, "s", "lower",
                                         True, "a generated AVI (the study's is not named)"),
    (T4, "lat.syscall", None): ("syscall.getpid", "latency", None, "ns", "lower", True,
                                "the call is not named; set against getpid"),
    (T4, "lat.ctx", None): ("ctx.pipe_pingpong", "per_switch", None, "ns", "lower", True,
                            "the tool is not named; set against a pipe switch"),
    (T4, "lat.fork", None): ("proc.fork.dynamic", "latency", None, "us", "lower", True,
                             "the tool is not named"),
    (T4, "lat.exec", None): ("proc.exec.dynamic", "latency", None, "us", "lower", True,
                             "the tool is not named"),
    (T4, "lat.signal", None): ("lat.signal", "catch_minus_kill0", None, "ns", "lower", True,
                               "the tool is not named; set against lmbench's definition "
                               "(lat_sig.c): the catch minus kill(pid, 0), which osmeter "
                               "times beside it"),
}
UB_NOTE = {"ub.ctx": "ub.ctx's index is on UnixBench 5's scale (4.1.0's index has no "
                     "context-switch baseline; the study does not say which it used)"}


def _counterpart(table: str, row: dict):
    bench = row["bench"]
    if bench.startswith("ub."):
        # ub.ctx's scale is UnixBench 5's, not the study's: related, not like for like.
        return (bench, "index", None, "index", "higher", bench in UB_NOTE,
                UB_NOTE.get(bench, "UnixBench 4.1.0's index (George = 10)"))
    return ROWS.get((table, bench, row.get("instances")))


def references() -> list[refs.RefValue]:
    out = []
    for name in (T1, T2, T3, T4):
        t = refs.table(REPORT, name)
        for row in t["rows"]:
            c = _counterpart(name, row)
            if c is None:
                continue
            bench, metric, x, unit, better, related, note = c
            for system, v in zip(t["columns"], row["values"]):
                if refs.num(v) is not None:
                    out.append(refs.RefValue(
                        STUDY, name.split(":")[0], system, MACHINE, bench, metric, x,
                        "%s (%s)" % (row["label"], row["bench"]), float(v), unit, better,
                        key=refs.table_key(REPORT, name, row["label"], system),
                        related=related, note=note,
                        x_unit="instances" if row.get("instances") else "bytes"))
    return out


def derived() -> list[refs.Derived]:
    return []


def graph_refs() -> list:
    return []


DESKTOP = ("a desktop start-up timed by hand under GNOME/KDE: osmeter starts no desktop "
           "(docs/applications.md; app.start.* time programs that need no display)")


_rule = common.stated_rule(REPORT)


NOT_COMPARABLE = [
    common.report_rule(REPORT),
    refs.NotComparable(
        "a desktop start-up timed by hand: Firefox's start could be timed headless (firefox "
        "--headless), but the paper's includes drawing its window under GNOME/KDE, so a "
        "headless time would be another quantity; osmeter has no app.start.firefox "
        "(docs/applications.md)", "table", REPORT, T1, "Start Firefox"),
    refs.NotComparable(DESKTOP, "table", REPORT, T1, "Start Gnome"),
    refs.NotComparable(DESKTOP, "table", REPORT, T1, "Start KDE"),
    _rule("audio channel count raised from / to; max simultaneous files playable",
          "a property of FreeBSD 6.1's audio driver"),
    _rule("XMMS instance counts", "a parameter: app.cpu.audio_play runs 1, 2 and 4 players"),
    _rule("size of the file opened with Vim", "a parameter: app.vim_open opens 470 MB"),
    _rule("time reading documentation before using the system: FreeBSD vs the others",
          "the author's reading time, not a measurement of the system"),
]


# ---- the view -------------------------------------------------------------------------------

def _table(ctx, name: str):
    t = refs.table(REPORT, name)
    mine = {r.key: r for r in references() if r.source == name.split(":")[0]}
    rows = [(row["label"], [mine.get(refs.table_key(REPORT, name, row["label"], c))
                            for c in t["columns"]]) for row in t["rows"]]
    notes = ["%s: %s" % (r.quantity, r.note) for r in
             {r.quantity: r for r in mine.values() if r.note}.values()]
    notes += ["TEST WINNER (as printed): %s; TEST LOSER: %s" % (t["winner"], t["loser"])]
    notes += t.get("footnotes", [])
    table = common.columns_table(ctx, name.split(":")[0], name, "%s; %s" % (t["unit"], t.get(
        "method", "")), t["columns"], rows, notes)
    for row in table.rows:   # the printed cells where the text has a mark, not a number
        label = row.label
        src = next(r for r in t["rows"] if r["label"] == label)
        for k, v in enumerate(src["values"]):
            if refs.num(v) is None:
                row.cells[k] = v
    return table


LINUX, BSD = "Linux 2.6.16", "a BSD (FreeBSD 6.1, NetBSD 3.0, OpenBSD 3.9)"
# "An order of magnitude" (21 against 184-234 ns: 8.8-11×): nearer 10× than 1× on a log
# scale, i.e. at least 10 ** 0.5 = 3.2×.
ORDER_OF_MAGNITUDE = 10 ** 0.5
GETPID = across.row("syscall.getpid", "latency", None, "getpid", "ns", "lower")
# Each test's winner and loser as printed, and the overall order (Conclusions).
WINNERS = [
    (T1, "Linux 2.6.16", "OpenBSD 3.9", "Subjective tests: GNU/Linux (Gentoo, Debian) is the "
     "winner, OpenBSD the loser"),
    (T2, "NetBSD 3.0", "Linux 2.6.16", "VFS: NetBSD 3.0 with UFS2 shows the best results at "
     "almost every level, surpassing GNU/Linux (ext3, the test's loser) in most cases"),
    (T3, "Linux 2.6.16", "FreeBSD 6.1", "Performance tests: Linux 2.6 clearly the winner; "
     "FreeBSD and NetBSD the losers, almost at the same level"),
    (T4, "NetBSD 3.0", "FreeBSD 6.1", "Latency tests: NetBSD the winner (OpenBSD and Linux "
     "close); FreeBSD the clear loser"),
]
RANKING = ["Linux 2.6.16", "NetBSD 3.0", "OpenBSD 3.9", "FreeBSD 6.1"]


def _winners(ctx) -> list[Conclusion]:
    out = []
    for table, first, last, claim in WINNERS:
        rows = [r for r in references() if r.source == table.split(":")[0]]
        out.append(across.conclusion(claim, table.split(":")[0], across.ranking(
            ctx, [first, last], rows), "over the rows of %s osmeter measures, %s" % (
                table.split(":")[0], across.SURPASS_RULE)))
    return out


def _syscall(ctx) -> Conclusion:
    """Linux's system call against a BSD's, over two systems' runs; on one system the
    evidence says which side its number is nearer."""
    ev, near_linux = [], []
    for i in range(len(ctx.runs)):
        v = ctx.value(i, "syscall.getpid", "latency", unit="ns")
        if v is not None:
            ev.append("%s: %.3g ns per getpid" % (ctx.names[i], v))
            near_linux.append(v < (21 * 184) ** 0.5)
    why = "" if not ev else (" — nearer Linux's 21 ns with sysenter than the BSDs' 184-234 ns"
                             if all(near_linux) else
                             " — nearer the BSDs' 184-234 ns than Linux's 21 ns: kernel "
                             "entry is not as cheap here as sysenter made it in 2006 (the "
                             "CPU-vulnerability mitigations in force are in osmeter sysinfo)")
    claim = ("Linux's system call is an order of magnitude faster (21 ns) because it uses "
             "sysenter/sysexit; the BSDs on i386 do not (184-234 ns)")
    rule = ("across systems: the getpid time of the run playing a BSD at least %.2g× that "
            "of the run playing Linux (nearer 10× than 1× on a log scale), on the interval "
            "of the ratio; %s" % (ORDER_OF_MAGNITUDE, across.CAST_RULE))
    if not ev:
        return Conclusion(claim, "Test 4 (*)", NOT_MEASURED,
                          "needs syscall.getpid (osmeter run --suite cc06)", rule)
    return across.conclusion(claim, "Test 4 (*)", across.pair_ratio_claim(
        ctx, [LINUX, BSD], GETPID, ORDER_OF_MAGNITUDE,
        "the BSD's role over Linux's"), rule, "; ".join(ev) + why,
        [ctx.result(i, "syscall.getpid", "latency") for i in range(len(ctx.runs))])


def _ranking(ctx) -> Conclusion:
    return across.conclusion(
        "Overall: Linux 2.6, NetBSD 3.0, OpenBSD 3.9, then FreeBSD 6.1 (three years earlier, "
        "by von Leitner: Linux 2.6, Linux 2.4, FreeBSD 5.1, NetBSD 1.6.1, OpenBSD 3.4)",
        "Conclusions", across.ranking(ctx, RANKING, references()),
        "each system present ahead of every one after it in the paper's order, over the "
        "rows of Tests 1-4 osmeter measures: " + across.SURPASS_RULE)


def view(ctx) -> StudyView:
    sections = [_table(ctx, name) for name in (T1, T2, T3, T4)]
    return StudyView(ID, TITLE, "C. Camacho, 2006", common.setup(REPORT), ctx.names, sections,
                     [_syscall(ctx), *_winners(ctx), _ranking(ctx)])
