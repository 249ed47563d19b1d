"""McGarry 2005, "Benchmark Comparison of NetBSD 2.0 and FreeBSD 5.3".

Three tables (core functionality, threads, Sun's ping-pong) with NetBSD and FreeBSD as
columns, this machine's runs beside them; nine scalability figures (von Leitner's
programs and pthread_create) whose published shapes are set beside our curve classes.
"""
from __future__ import annotations

from ..analysis import curves
from ..data import references as refs
from ..stats import significance as sig
from . import across, common
from .view import Conclusion, StudyView, judge, significant, verdict_words

ID, REPORT, STUDY = "mg05", "mcgarry2005", "MG05"
TITLE = "McGarry 2005: Benchmark Comparison of NetBSD 2.0 and FreeBSD 5.3"
MACHINE = "Pentium 4 3 GHz (Asus P4-800SE)"
# Table 1's quantity is a context switch: set against osmeter's per switch (round trip / 2).
PER_SWITCH = ("per switch: osmeter's pipe round trip / 2 (pipe cost included); the table "
              "names a context switch without saying how it was divided")
# Table 3's rows: the ping-pong experiment's metric by the row label's last words.
PINGPONG = {"thread creation time": "create", "game completion time": "completion"}

FIGURES = {
    "Figure 1 (fork_dynamic_create.eps)": ("scale.fork.dynamic", "fork"),
    "Figure 2 (fork_dynamic_terminate.eps)": ("scale.exit.dynamic", "exit"),
    "Figure 3 (fork_static_create.eps)": ("scale.fork.static", "fork"),
    "Figure 4 (fork_static_terminate.eps)": ("scale.exit.static", "exit"),
    "Figure 5 (mmap_create.eps)": ("scale.mmap", "mmap"),
    "Figure 6 (mmap_touch.eps)": ("scale.mmap_touch", "touch"),
    "Figure 7 (socket.eps)": ("scale.socket", "socket"),
    "Figure 8 (bind4.eps)": ("scale.bind", "bind"),
    "Figure 9 (pthread_create.eps)": ("thread.create", "create"),
}


def _metric(table: str, row: dict) -> str:
    if table == "Table 3":
        return next(m for words, m in PINGPONG.items() if row["label"].endswith(words))
    return "per_switch" if row["bench"] == "ctx.pipe_pingpong" else "latency"


def references() -> list[refs.RefValue]:
    out = []
    for name in ("Table 1", "Table 2", "Table 3"):
        t = refs.table(REPORT, name)
        for row in t["rows"]:
            ctx = row["bench"] == "ctx.pipe_pingpong"
            for system, v in zip(t["columns"], row["values"]):
                if refs.num(v) is None:
                    continue
                out.append(refs.RefValue(
                    STUDY, name, system, MACHINE, row["bench"], _metric(name, row), None,
                    row["label"], float(v), "us", "lower",
                    key=refs.table_key(REPORT, name, row["label"], system),
                    related=ctx, note=PER_SWITCH if ctx else ""))
    return out


def derived() -> list[refs.Derived]:
    return []


def graph_refs() -> list:
    return common.graph_refs(STUDY, REPORT, FIGURES)


_rule = common.stated_rule(REPORT)


BETWEEN = "a comparison between NetBSD 2.0 and FreeBSD 5.3 (their numbers are not in the text)"
NOT_COMPARABLE = [
    common.report_rule(REPORT),
    _rule("number of system processes at the start of the termination benchmark",
          "a parameter: scale.exit.* start from n=3000 processes too"),
    _rule("window size, file size, offset between windows",
          "a parameter: scale.mmap maps 4 KB windows of a 200 MB file too"),
    _rule("NetBSD improvement for the initial mmap call", BETWEEN),
    _rule("FreeBSD improvement for accessing the mapped window", BETWEEN),
    _rule("FreeBSD improvement for a single mapping plus subsequent access (total of both)",
          BETWEEN),
    _rule("thread count below which NetBSD creates threads faster than FreeBSD",
          "where two of the paper's curves cross"),
    _rule("thread count called 'ample for most multi-threaded applications' (apparent x-range)",
          "a parameter: thread.create goes to n=1000"),
    _rule("worker threads (plus one master thread)", "a parameter: thread.condvar uses 10 "
                                                     "workers too"),
    _rule("games, players, iterations (default stack size)",
          "a parameter: thread.pingpong.e1/e2 play the same games"),
    _rule("games, players, iterations, stack size",
          "a parameter: thread.pingpong.e3 plays the same games"),
    _rule("mutex operations and context switches per iteration count",
          "a property of the ping-pong program"),
    _rule("default thread stack size", "a property of NetBSD 2.0's thread library"),
    *common.graph_rules(REPORT, FIGURES, {}),
]


# ---- the view -------------------------------------------------------------------------------

def _table(ctx, name: str):
    t = refs.table(REPORT, name)
    mine = {(r.key): r for r in references() if r.source == name}
    rows = [(row["label"], [mine.get(refs.table_key(REPORT, name, row["label"], c))
                            for c in t["columns"]]) for row in t["rows"]]
    table = common.columns_table(ctx, name, "%s: %s" % (name, t["caption"]),
                                 "%s; %s" % (t["unit"], MACHINE), t["columns"], rows,
                                 [t["notes"]] if t.get("notes") else [])
    for row, src in zip(table.rows, t["rows"]):     # as printed: '954 660', not 954660
        for k, raw in enumerate(src.get("raw", [])):
            if isinstance(row.cells[k], refs.Printed):
                row.cells[k].text = raw
    return table


def _static_vs_dynamic(ctx) -> Conclusion:
    ev, faster, used = [], [], []
    for what in ("fork", "exit", "exec"):
        for i in range(len(ctx.runs)):
            a, b = ("proc.%s.static" % what, "latency"), ("proc.%s.dynamic" % what, "latency")
            vs = ctx.versus(i, a, b)
            if vs is None:
                continue
            ratio, v = vs
            used += [ctx.result(i, *a), ctx.result(i, *b)]
            ev.append("%s %s: static %.2g× the dynamic time (%s)" % (
                ctx.names[i], what, ratio, verdict_words(v)))
            faster.append(significant(v))
    return Conclusion(
        "Statically linked programs are created, terminated and loaded faster than "
        "dynamically linked ones (fork 63 vs 146 µs, exec 96 vs 463 µs on NetBSD)",
        "Table 1", judge(faster),
        ("; ".join(ev) if ev else "needs proc.{fork,exit,exec}.{static,dynamic} (osmeter run "
         "--suite mg05)"),
        "holds where static is significantly faster than dynamic for fork, exit and "
        "exec, by the comparison's Welch t on the repetitions' log medians (alpha %g); not "
        "holds where one is the same within +-%g%% or slower; not judged where the "
        "repetitions cannot tell" % (ctx.cmp.alpha, 100 * sig.MARGIN),
        "; ".join(ev), rests_on=used)


def view(ctx) -> StudyView:
    sections = [_table(ctx, "Table 1"), _table(ctx, "Table 2"), _table(ctx, "Table 3")]
    for fig, (bench, metric) in FIGURES.items():
        sections.append(common.figure(ctx, fig.split(" (")[0], fig,
                                      common.graph(REPORT, fig), bench, metric))
    conclusions = [
        _static_vs_dynamic(ctx),
        common.contrast_claim(
            ctx, "Process creation and termination do not depend on the number of "
            "processes on NetBSD (O(1)); FreeBSD's grow linearly", "Figures 1-4",
            [("scale.fork.dynamic", "fork"), ("scale.exit.dynamic", "exit"),
             ("scale.fork.static", "fork"), ("scale.exit.static", "exit")],
            {"NetBSD 2.0": {curves.CONSTANT}, "FreeBSD 5.3": {curves.LINEAR}}, ID),
        common.class_claim(ctx, "Mapping a window of a file and touching it are O(1) on both "
                           "systems", "Figures 5-6",
                           [("scale.mmap", "mmap", {curves.CONSTANT}),
                            ("scale.mmap_touch", "touch", {curves.CONSTANT})], ID),
        # "Grow linearly" names a class: O(1) does not reproduce it.
        common.class_claim(ctx, "Socket creation and bind grow linearly on both systems, but "
                           "neither shows a scalability problem", "Figures 7-8",
                           [(b, m, {curves.LINEAR}) for b, m in (("scale.socket", "socket"),
                                                                ("scale.bind", "bind"))], ID),
        common.contrast_claim(
            ctx, "Thread creation is O(1) on FreeBSD; NetBSD's grows beyond 250 threads",
            "Figure 9", [("thread.create", "create")],
            {"FreeBSD 5.3": {curves.CONSTANT}, "NetBSD 2.0": set(common.GROWING)}, ID),
        across.conclusion(
            "NetBSD 2.0 has closed the performance gap and surpassed FreeBSD 5.3 in the "
            "areas investigated (Tables 1-3)", "Conclusions",
            across.ranking(ctx, ["NetBSD 2.0", "FreeBSD 5.3"], references()),
            "over the rows of Tables 1-3, " + across.SURPASS_RULE),
    ]
    return StudyView(ID, TITLE, "G. McGarry, 3 January 2005", common.setup(REPORT), ctx.names,
                     sections, conclusions, common.missing(REPORT))
