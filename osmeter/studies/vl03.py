"""von Leitner 2003, "Benchmarking BSD and Linux" (the scalability page).

No graph's numbers are in the text: what there is to compare are the verdicts, the growth
class of each curve per system ("O(1)", "O(n)", "does not scale").  The view sets our
curve and its class beside each published graph, gathers the verdicts in one table (the
systems as columns, our runs beside them) and restates the conclusions.
"""
from __future__ import annotations

from ..analysis import curves
from ..data import references as refs
from . import common
from .view import Conclusion, Row, StudyView, Table, against, judge, num, ratio_interval

ID, REPORT, STUDY = "vl03", "vonleitner2003", "VL03"
TITLE = "von Leitner 2003: Benchmarking BSD and Linux (scalability)"
MACHINE = "Dell Inspiron 8000, Pentium 3 900 MHz"
SYSTEMS = ["Linux 2.4.22", "Linux 2.6.0-test7", "FreeBSD 5.1-CURRENT", "NetBSD 1.6.1",
           "OpenBSD 3.4-CURRENT"]
POLL_SYSTEM = "NetBSD 1.6.1"       # the one system whose server used poll()
HTTP_BENCHES = ("net.http_connect", "net.http_request")   # each has a .poll variant

FIGURES = {
    "socket graph (unnumbered)": ("scale.socket", "socket"),
    "bind graph (unnumbered)": ("scale.bind", "bind"),
    "fork graph, dynamically linked (unnumbered)": ("scale.fork.dynamic", "fork"),
    "fork graph, static vs dynamic (unnumbered)": ("scale.fork.static", "fork"),
    "mmap graph (unnumbered)": ("scale.mmap", "mmap"),
    "mmap touch graphs (three: Linux+FreeBSD; +NetBSD; +OpenBSD)": ("scale.mmap_touch", "touch"),
    "HTTP connect latency graph (unnumbered; Linux and FreeBSD graphs omitted)":
        ("net.http_connect", "accept"),
    "HTTP request latency graphs (two: without and with NetBSD)": ("net.http_request", "request"),
    "[Oct 23 2003] fork cleanup (kill + wait) graph, plus zoomed version without NetBSD":
        ("scale.exit.dynamic", "exit"),
    "[Oct 23 2003] manymap open graph": ("scale.manymap.open", "open"),
    "[Oct 23 2003] manymap mmap graph (+ zoomed version with only OpenBSD and Linux 2.6)":
        ("scale.manymap.mmap", "mmap"),
    "[Oct 23 2003] manymap touch graph (+ zoomed version without OpenBSD)":
        ("scale.manymap.touch", "touch"),
}
GRAPH_REASONS = {
    "download throughput graph, red/green/blue (unnumbered; 'not OS specific', measured on "
    "Linux 2.6)": "throughput over time of downloads over Fast Ethernet: no growth class; "
                  "fs.frag.* read the same layouts from the local disk and are set beside "
                  "the text's MB/s",
    "[Oct 20 2003] NetBSD 1.6.1 vs NetBSD-CURRENT graphs; [Nov 1 2003] NetBSD re-check; "
    "[Oct 22 2003] FreeBSD 4.9-RC3 vs 5.1-CURRENT graphs": "re-runs of the whole suite on other releases, with no class per "
                          "curve",
}


def _bench_for(figure: str, system: str) -> tuple[str, str]:
    """Our counterpart of one system's curve: the poll server for NetBSD's HTTP curves."""
    bench, metric = FIGURES[figure]
    if bench in HTTP_BENCHES and system.startswith(POLL_SYSTEM):
        return bench + ".poll", metric
    return bench, metric


def references() -> list[refs.RefValue]:
    out = []
    for st in refs.stated(REPORT):
        q = st["quantity"]
        if q == "linear read rate of the IDE disk":
            metric, note = "contiguous", "a file written alone, read cold from this disk"
        elif q in ("throughput for a badly fragmented file (green graph)",
                   "throughput for the badly fragmented file"):
            metric, note = "interleaved", ("a file written piece by piece as BitTorrent does, "
                                           "read cold from this disk; the study served it "
                                           "over HTTP")
        else:
            continue
        out.append(refs.RefValue(STUDY, "download graph (prose)", st.get("system") or MACHINE,
                                 MACHINE, "fs.frag.layout", metric, None, q, float(st["value"]),
                                 "MB/s", "higher", key=refs.stated_key(st), related=True,
                                 qualifier=st.get("qualifier", ""), note=note))
    return out


def derived() -> list[refs.Derived]:
    return [refs.Derived(refs.stated_key(st), "set beside this machine's static/dynamic fork "
                         "levels in the study's conclusions")
            for st in refs.stated(REPORT) if st["quantity"] == STATIC_HALVES]


STATIC_HALVES = "effect of static linking on fork latency"


def graph_refs() -> list[refs.GraphRef]:
    out = []
    for g in common.graph_refs(STUDY, REPORT, FIGURES):
        g.bench, g.metric = _bench_for(g.figure, g.os)
        out.append(g)
    return out


_rule = common.stated_rule(REPORT)


NOT_COMPARABLE = [
    common.report_rule(REPORT),
    _rule("number of socket() calls", "a parameter: scale.socket makes n=10000 sockets too"),
    _rule("resolution of the CPU cycle counter relative to gettimeofday",
          "a property of the author's timer; osmeter times every operation in cycles too"),
    _rule("open-descriptor count above which FreeBSD suddenly gets faster (suspected "
          "pre-allocation)", "a property of FreeBSD 5.1's descriptor table"),
    _rule("number of TCP ports", "a fact about TCP, not a measurement"),
    _rule("traditional lower bound of ephemeral ports", "a fact about TCP, not a measurement"),
    _rule("default /proc/sys/net/ipv4/ip_local_port_range",
          "Linux 2.4/2.6's default setting, not a measurement"),
    _rule("runs per graph (all points of all runs plotted)",
          "a method: osmeter keeps and plots every point of every repetition too"),
    _rule("loader.conf setting to raise the process limit (learned after the runs)",
          "a FreeBSD setting, not a measurement"),
    _rule("file size and page granularity (every other 4k page is mapped)",
          "a parameter: scale.mmap maps 4 KB windows of a 200 MB file"),
    _rule("sustained throughput, one client, one big unfragmented CD image, dedicated Fast "
          "Ethernet (red graph)", "bound by the Fast Ethernet link, not by the system"),
    _rule("rate limit of the competing second download over loopback (blue graph)",
          "a parameter of the experiment; fs.frag.contention's second reader is not "
          "rate-limited (the view's competing-download table says so beside it)"),
    _rule("initial throughput of the blue graph before the second download starts",
          "bound by the Fast Ethernet link, not by the system"),
    _rule("connection count up to which FreeBSD is a little slower (faster after)",
          "where two of the paper's curves cross"),
    _rule("maximum process count reached",
          "where OpenBSD and NetBSD stopped; osmeter records the limit that ends its curves"),
    _rule("files total / files per subdirectory",
          "a parameter: scale.manymap.* use 10000 files, 100 per directory"),
    _rule("size of each small file (one page mapped)",
          "a parameter: scale.manymap.* files are about 150 bytes"),
    _rule("file index where the strange OpenBSD pattern starts", "a property of OpenBSD 3.4"),
    _rule("page count up to which OpenBSD is OK", "a property of OpenBSD 3.4"),
    *common.graph_rules(REPORT, FIGURES, GRAPH_REASONS),
]


# ---- the view -------------------------------------------------------------------------------

def _verdicts_table(ctx) -> Table:
    """The published classes per graph and system, with our runs' classes beside them."""
    t = Table("verdicts", "Scalability verdicts",
              "the growth class each curve showed (published: as the text states it)",
              ["", *SYSTEMS, *ctx.names], [],
              ["classes of ours: osmeter's curve classifier (a curve is non-constant only when "
               "its cost at least doubles over the range); for NetBSD's HTTP curves our "
               "counterpart is the poll() server"])
    for figure, (bench, metric) in FIGURES.items():
        g = common.graph(REPORT, figure)
        cells = []
        for system in SYSTEMS:
            res = next((r for r in g["result"] if r["os"].startswith(system.split("-")[0])), None)
            cells.append((common.class_of(res["shape"]) or res["shape"][:40]) if res else None)
        for i in range(len(ctx.runs)):
            c = ctx.curve(i, bench, metric)
            cells.append(c.get("class") if c else None)
        t.rows.append(Row("%s (%s)" % (figure.split(" (")[0], bench), cells))
    return t


def _level_ratio(ctx, i) -> tuple:
    """The interval of static/dynamic fork cost: the spread of the per-repetition ratio
    of median costs (min, max over the repetitions both have)."""
    def per_rep(bench):
        res = ctx.results(i, bench, "fork")
        reps = {}
        for smp in (res[0].samples if res else []):
            reps.setdefault(smp.rep, []).append(smp.value)
        return {k: sorted(v)[len(v) // 2] for k, v in reps.items() if v}
    s, d = per_rep("scale.fork.static"), per_rep("scale.fork.dynamic")
    ratios = [s[k] / d[k] for k in s if k in d and d[k] > 0]
    return (min(ratios), max(ratios)) if len(ratios) > 1 else (None, None)


def _static_fork(ctx) -> Conclusion:
    ev, ok, margins, used = [], [], [], []
    for i in range(len(ctx.runs)):
        used += ctx.results(i, "scale.fork.static", "fork") + ctx.results(
            i, "scale.fork.dynamic", "fork")
        s, d = ctx.curve(i, "scale.fork.static", "fork"), ctx.curve(i, "scale.fork.dynamic",
                                                                    "fork")
        if s and d and s.get("level") and d.get("level"):
            ratio = s["level"] / d["level"]
            ev.append("%s: static fork %.2g× the dynamic one (typical costs %.3g and %.3g µs)"
                      % (ctx.names[i], ratio, s["level"] / 1e3, d["level"] / 1e3))
            lo, hi = _level_ratio(ctx, i)
            o, m = against(ratio, lo, hi, 0.8, True, "×")
            ok.append(o)
            margins.append("%s: %s" % (ctx.names[i], m))
    return Conclusion("Linking statically almost halves the fork latency (FreeBSD, Linux 2.6)",
                      "fork benchmark (static)", judge(ok),
                      "; ".join(ev) if ev else "needs scale.fork.static and scale.fork.dynamic "
                      "(osmeter run --suite vl03)",
                      "holds where static fork's typical cost is below 0.8× the dynamic "
                      "one's, on the interval of the ratio", "; ".join(margins),
                      rests_on=used)


CONTENTION_NOTE = ("fs.frag.contention reads a second file from the same disk while the "
                   "first is read; its second reader is NOT rate-limited (it reads as fast as "
                   "the disk lets it), a harder competitor than the paper's 4 MB/s download "
                   "over loopback: related, not like for like")


def _contention_table(ctx) -> Table:
    """The blue graph: a download that loses throughput once a second, rate-limited
    download starts; beside it, fs.frag.contention's two cold readers."""
    t = Table("competing download", "Competing download (blue graph)",
              "MB/s; the paper: downloads over Fast Ethernet from %s; osmeter: cold reads "
              "from this machine's disk" % MACHINE, ["", "paper (as printed)", *ctx.names],
              [], [CONTENTION_NOTE])
    for label, metric, paper in (
            ("first reader alone", "alone", "11 (at first; bound by Fast Ethernet)"),
            ("first reader while a second reads", "with_second_reader",
             "falls: 'the head has to move around'"),
            ("second reader", "second_reader", "4 (its rate limit)")):
        t.rows.append(Row(label, [paper] + [ctx.value(i, "fs.frag.contention", metric)
                                            for i in range(len(ctx.runs))]))
    for i in range(len(ctx.runs)):
        if ctx.value(i, "fs.frag.contention", "alone") is None:
            t.notes.append("%s: %s" % (ctx.names[i], ctx.why_not(i, "fs.frag.contention")))
    return t


def _contention(ctx) -> Conclusion:
    ev, ok, margins, used = [], [], [], []
    for i in range(len(ctx.runs)):
        a = ctx.result(i, "fs.frag.contention", "with_second_reader")
        b = ctx.result(i, "fs.frag.contention", "alone")
        if a is None or b is None or not a.median or not b.median:
            continue
        used += [a, b]
        ratio = a.median / b.median
        lo, hi = ratio_interval(a, b)
        o, m = against(ratio, lo, hi, 0.8, True, "×")
        ev.append("%s: %s MB/s alone, %s MB/s with a second reader (%.2g×)" % (
            ctx.names[i], num(b.median), num(a.median), ratio))
        ok.append(o)
        margins.append("%s: %s" % (ctx.names[i], m))
    return Conclusion(
        "A download from a disk loses much of its throughput as soon as a second one "
        "competes: the disk head has to move between the files", "download graph (blue)",
        judge(ok), ("; ".join(ev) + "; " + CONTENTION_NOTE) if ev else
        "needs fs.frag.contention (osmeter run --suite vl03)",
        "holds where the first reader with a second one gets below 0.8× its "
        "throughput alone, on the interval of the ratio", "; ".join(margins), rests_on=used)


def view(ctx) -> StudyView:
    sections = [_verdicts_table(ctx)]
    for figure, (bench, metric) in FIGURES.items():
        g = common.graph(REPORT, figure)
        main = [(r["os"], r["shape"]) for r in g["result"]
                if _bench_for(figure, r["os"])[0] == bench]
        sections.append(common.figure(ctx, figure.split(" (")[0], figure, g, bench, metric,
                                      main))
        if bench in HTTP_BENCHES:
            poll = [(r["os"], r["shape"]) for r in g["result"] if r not in main
                    and r["os"].startswith(POLL_SYSTEM)]
            sections.append(common.figure(ctx, figure.split(" (")[0] + ", poll()",
                                          figure + " — NetBSD's poll() server", g,
                                          bench + ".poll", metric, poll))
    frag = common.columns_table(ctx, "download", "Download throughput and fragmentation",
                                "MB/s; the study downloaded over HTTP, osmeter reads the same "
                                "layouts from the local disk", [MACHINE],
                                [(r.quantity + " — " + r.system, [r]) for r in references()])
    sections.append(frag)
    sections.append(_contention_table(ctx))
    conclusions = [
        common.class_claim(ctx, "socket() and bind() scale on every system: no O(n) (OpenBSD's and "
               "NetBSD's bind excepted)", "socket, bind graphs",
               [("scale.socket", "socket", {curves.CONSTANT}),
                ("scale.bind", "bind", {curves.CONSTANT})], ID),
        common.class_claim(ctx, "fork is O(1) on Linux 2.6 (the clear winner)", "fork graph",
               [("scale.fork.dynamic", "fork", {curves.CONSTANT})], ID),
        _static_fork(ctx),
        _contention(ctx),
        common.class_claim(ctx, "mmap and the page fault on first touch are O(1) on Linux 2.6",
               "mmap, mmap touch graphs", [("scale.mmap", "mmap", {curves.CONSTANT}),
                                           ("scale.mmap_touch", "touch", {curves.CONSTANT})],
               ID),
        common.class_claim(ctx, "A server with epoll/kqueue answers in O(1) however many connections are "
               "idle; with poll (NetBSD 1.6.1) the latency grows O(n)", "HTTP graphs",
               [("net.http_request", "request", {curves.CONSTANT}),
                ("net.http_request.poll", "request", set(common.GROWING))], ID),
        common.class_claim(ctx, "Cleaning up a process (kill + wait) is not O(1), even on Linux 2.6",
               "[Oct 23 2003] fork cleanup graph",
               [("scale.exit.dynamic", "exit", set(common.GROWING))], ID),
        common.contrast_claim(
            ctx, "Linux 2.6 is the clear winner, scaling O(1) in every respect; OpenBSD the "
            "clear loser, its fork and mmap growing with the count", "Conclusion (mmap), "
            "fork graph", [("scale.fork.dynamic", "fork"), ("scale.mmap", "mmap")],
            {"Linux 2.6.0-test7": {curves.CONSTANT}, "OpenBSD 3.4-CURRENT":
             set(common.GROWING)}, ID),
    ]
    return StudyView(ID, TITLE, "F. von Leitner, October-November 2003", common.setup(REPORT),
                     ctx.names, sections, conclusions, common.missing(REPORT))
