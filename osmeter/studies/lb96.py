"""Lai & Baker 1996, "A Performance Comparison of UNIX Operating Systems on the Pentium".

The paper's tables and figures are lost from the text: what remains are the numbers its
prose states and the shapes it describes.  The view follows the paper's sections: each
with a table of the prose numbers (Linux 1.2.8, FreeBSD 2.0.5R and Solaris 2.4 as
columns, this machine's runs beside them, the winners), the figures with our curves, and
the conclusions restated with today's verdict.
"""
from __future__ import annotations

from ..analysis import curves
from ..data import references as refs
from . import across, common
from .view import (Conclusion, Row, StudyView, Table, against, interval, judge, num,
                   ratio_interval,
                   significant, verdict_words)

ID, REPORT, STUDY = "lb96", "laibaker1996", "LB96"
TITLE = "Lai & Baker 1996: A Performance Comparison of UNIX Operating Systems on the Pentium"
MACHINE = "Pentium P54C-100 (tnt.stanford.edu)"
SYSTEMS = ["Linux 1.2.8", "FreeBSD 2.0.5R", "Solaris 2.4"]
ALL_THREE = "all three systems"
# The paper's quantity is a context switch, and its Figure 1 plots time per switch: the
# prose numbers are set against the switch too (the round trip / 2, pipe cost included).
PER_SWITCH = ("per switch: osmeter's pipe round trip / 2 (pipe cost included), as Figure 1 "
              "reads it; the text calls it a context switch without saying how it divided")
_UNIT_WORDS = {"microseconds": "us", "megabytes/second": "MB/s", "megabits/second": "Mbit/s",
               "Megabits/second": "Mbit/s", "ns": "ns", "ms": "ms"}

# The prose numbers set beside ours: quantity -> (bench, metric, x, related, note).
PROSE = {
    "context switch between two active processes (ctx)":
        ("ctx.pipe_pingpong", "per_switch", None, False, PER_SWITCH),
    "context switch between two active processes (ctx, pipe overhead included)":
        ("ctx.pipe_pingpong", "per_switch", None, False, PER_SWITCH),
    "estimated context switch without the pipe overhead":
        ("ctx.pipe_pingpong", "switch_minus_pipe", None, True,
         "LB96 subtracted one pipe overhead (80 µs) from 220 µs; osmeter estimates the "
         "switch as (round trip − 2 × pipe_self) / 2"),
    "overhead of sending a byte from a process through a pipe and back to the same process":
        ("ctx.pipe_self", "latency", None, False, ""),
    "copy bandwidth with a prefetching copy routine":
        ("mem.copy_prefetch", "bandwidth", "peak", False, ""),
    "peak copy bandwidth of the prefetching custom copy routine":
        ("mem.copy_prefetch", "bandwidth", "peak", False, ""),
    "copy bandwidth without the prefetching optimisation":
        ("mem.memcpy", "bandwidth", "largest", True,
         "the paper's ~40 MB/s is its own non-prefetching copy routine; osmeter's is the C "
         "library's memcpy, at the largest buffer (main memory)"),
    "peak read bandwidth from the first-level cache": ("mem.read", "bandwidth", "peak", False,
                                                       ""),
    "read bandwidth on the L2 plateau": ("mem.read", "bandwidth.plateau.L2", None, False,
                                         "the L2 plateau osmeter finds in the mem.read curve"),
    "read bandwidth from main memory (large buffers)":
        ("mem.read", "bandwidth", "largest", False, "at the largest buffer (main memory)"),
    "peak memset write bandwidth": ("mem.memset", "bandwidth", "peak", False, ""),
    "peak write bandwidth of the prefetching custom write routine":
        ("mem.write_prefetch", "bandwidth", "peak", False, ""),
    "random seek time to blocks on disk (average non-cached seek)":
        ("fs.bonnie.seek", "seeks", "largest", False,
         "1 / bonnie's cold random seeks per second at the largest file"),
    "crtdel time": ("fs.crtdel", "sequence", 10240, True,
                    "the text gives no file size (its sweep: 1 KB-1 MB)"),
    "UDP bandwidth (peak, loopback)": ("net.udp_ttcp", "received", "peak", False,
                                       "what arrived: ttcp's receiver"),
    "peak UDP bandwidth": ("net.udp_ttcp", "received", "peak", False,
                           "what arrived: ttcp's receiver"),
    "UDP bandwidth": ("net.udp_ttcp", "received", "peak", False, "what arrived: ttcp's receiver"),
}
RESTATED = "recomputed from this machine's peaks in the §6 'restated' table"
# Prose numbers recomputed for this machine in the view.
DERIVED = {
    "buffer size above which read bandwidth drops (L1 data cache size)":
        "set beside where this machine's first mem.read plateau breaks (Figure 2)",
    "second plateau (L2 cache) range of buffer sizes":
        "set beside this machine's second mem.read plateau (Figure 2)",
    "file size up to which all three systems cache the file (of 32 MB RAM)":
        "set beside the largest file fs.bonnie.warm kept cached under its memory limit "
        "(Figure 9)",
    "UDP bandwidth as a fraction of pipe bandwidth":
        "set beside this machine's UDP peak / pipe bandwidth (§9)",
    "time per word read at L1 peak": RESTATED,
    "time per four words read at L1 peak (= five clock ticks at 100 MHz)": RESTATED,
    "equivalent total (read+write) bandwidth of the prefetching copy": RESTATED,
    "Ethernet speed none of the systems can fully utilise":
        "set beside this machine's TCP and UDP bandwidth over loopback in the conclusions "
        "(§9)",
}


def _unit(st: dict) -> str | None:
    return _UNIT_WORDS.get(st.get("unit", ""))


def references() -> list[refs.RefValue]:
    out = []
    for st in refs.stated(REPORT):
        m = PROSE.get(st["quantity"])
        if m is None or refs.num(st["value"]) is None:
            continue
        bench, metric, x, related, note = m
        unit = "ms" if bench == "fs.bonnie.seek" else _unit(st)
        better = "lower" if refs.UNITS[unit][0] == "time" else "higher"
        out.append(refs.RefValue(
            STUDY, "§%s (prose)" % st["section"].split()[0].rstrip("."),
            st.get("system") or ALL_THREE, MACHINE, bench, metric, x, st["quantity"],
            float(st["value"]), unit, better, key=refs.stated_key(st),
            qualifier=st.get("qualifier", ""), related=related, note=note))
    return out


def derived() -> list[refs.Derived]:
    out = []
    for st in refs.stated(REPORT):
        how = DERIVED.get(st["quantity"])
        if how:
            many = isinstance(st["value"], list)
            for k in range(len(st["value"]) if many else 1):
                out.append(refs.Derived(refs.stated_key(st, k if many else None), how))
    return out


FIGURES = {
    "Figure 1": ("ctx.pipe_ring", "per_switch"),
    "Figures 2-8": ("mem.read", "bandwidth"),
    "Figure 9": ("fs.bonnie.warm", "read"),
    "Figure 10": ("fs.bonnie.warm", "write"),
    "Figure 11": ("fs.bonnie.seek", "seeks"),
    "Figure 12": ("fs.crtdel", "sequence"),
    "Figure 13": ("net.udp_ttcp", "received"),
}


def graph_refs() -> list[refs.GraphRef]:
    return common.graph_refs(STUDY, REPORT, FIGURES)


_rule = common.stated_rule(REPORT)


BETWEEN = "a comparison between two of the paper's systems (their own numbers are lost)"
NOT_COMPARABLE = [
    common.report_rule(REPORT),
    _rule("processor cache sizes within which the whole getpid loop could execute",
          "the Pentium's cache sizes (this machine's are in osmeter sysinfo)"),
    _rule("process count below which Linux context-switches faster than FreeBSD",
          "where two of the paper's curves cross"),
    _rule("process count at which Solaris context-switch time rises steeply (ring and LIFO "
          "chain)", "where Solaris's curve steps: a property of that system (Figure 1 shows "
                    "where ours does)"),
    _rule("process count above which the LIFO-chain variant shows only a gradual increase",
          "where Solaris's chain curve bends: a property of that system"),
    _rule("data transferred per buffer size (buffers reused until this total)",
          "a parameter: the mem.* sweeps move 8 MB per size too"),
    _rule("bytes per iteration of the main inner loop / bytes handled by the byte-wise tail "
          "loop", "a parameter: mem.read.lb96 and the custom loops use 16 bytes per "
                  "iteration and a byte tail"),
    _rule("bonnie file sizes", "a parameter: fs.bonnie.* sweep 2 MB-1 GB"),
    _rule("bonnie invocations per file size", "a method: osmeter's repetitions (--repetitions)"),
    _rule("read advantage over Linux and Solaris for files in the buffer cache", BETWEEN),
    _rule("write advantage over Solaris or Linux for files smaller than 8 MB", BETWEEN),
    _rule("Linux write bandwidth relative to FreeBSD or Solaris", BETWEEN),
    _rule("extra random seeks+I/O per second for files inside the file cache", BETWEEN),
    _rule("block read and rewritten per bonnie seek", "a parameter: fs.bonnie.seek's block is "
                                                      "8 KB too"),
    _rule("range of data written", "a parameter: fs.crtdel sweeps 0-1 MB"),
    _rule("near-constant difference between FreeBSD and Solaris crtdel times", BETWEEN),
    _rule("size bound of the small files used in MAB", "a property of MAB's source tree"),
    _rule("FreeBSD network bandwidth relative to Linux", BETWEEN),
    _rule("bw_pipe transfer size and chunk size",
          "a parameter: net.pipe_bw moves 50 MB in 64 KB chunks too"),
    _rule("data transferred per ttcp iteration", "a parameter: net.udp_ttcp sends 4 MB too"),
    _rule("bw_tcp data per iteration and buffer size",
          "a parameter: net.tcp_bw moves 3 MB through a 48 KB buffer too"),
    _rule("TCP window", "a property of Linux 1.2.8's TCP"),
    _rule("context switch for two active processes",
          "Linux 1.3.40, a development kernel the paper did not benchmark"),
    *common.graph_rules(REPORT, FIGURES, {}),
]


# ---- the view -------------------------------------------------------------------------------

def _prose_table(ctx, tid: str, title: str, quantities: list[tuple[str, str]],
                 notes: list[str] = ()) -> Table:
    """The prose numbers of a section: a row per quantity (with its unit), the three
    systems as columns (or one column for all three), our runs beside, and a winner row."""
    mine = references()
    systems = [*SYSTEMS, ALL_THREE]
    rows = []
    for label, quantity in quantities:
        cells = [next((r for r in mine if r.quantity == quantity and
                       (r.system == s or r.system.startswith(s))), None) for s in systems]
        unit = next((r.unit for r in cells if r is not None), "")
        rows.append(("%s (%s)" % (label, unit), cells))
    used = [k for k, s in enumerate(systems) if any(c[k] is not None for _, c in rows)]
    systems = [systems[k] for k in used]
    rows = [(label, [cells[k] for k in used]) for label, cells in rows]
    t = common.columns_table(ctx, tid, title, MACHINE + "; the paper's numbers as its prose "
                             "states them", systems, rows, list(notes))
    for (label, cells), row in zip(rows, t.rows):
        ref = next((r for r in cells if r is not None), None)
        if ref is not None and ref.qualifier:
            row.label += " [%s]" % ref.qualifier
        if ref is not None and isinstance(ref.x, (int, float)):
            row.label += " [at %s]" % ref.size_words()     # the size it was set against
    return t


def _winners(t: Table, runs: int, better: str) -> None:
    """A row naming the best of the paper's systems and the best of our runs (the first
    row's), where there are two to choose from."""
    cells = [None] * (len(t.head) - 1)
    paper = len(cells) - runs
    row = t.rows[0]
    w = common.winner(row.cells[:paper], better)
    if w is not None:
        cells[w] = "winner"
    o = common.winner(row.cells[paper:], better)
    if o is not None:
        cells[paper + o] = "winner"
    t.rows.append(Row("winner (%s)" % row.label, cells, "derived"))


def _restated(ctx) -> Table:
    """§6's peaks restated as the paper restates them: time per 4-byte word and per four
    words at the L1 read peak, and the prefetching copy counted read + write."""
    t = Table("§6 restated", "§6 The peaks restated", "the paper's arithmetic on its own "
              "peaks, redone on this machine's (mem.read and mem.copy_prefetch peaks)",
              ["", ALL_THREE, *ctx.names], [], ["a Pentium clock tick at 100 MHz is 10 ns: "
                                                 "50 ns are five ticks"])
    def peak(i, bench):
        vs = [r.median for r in ctx.results(i, bench, "bandwidth") if r.median]
        return refs.convert(max(vs), ctx.results(i, bench, "bandwidth")[0].unit, "MB/s") \
            if vs else None
    read = [peak(i, "mem.read") for i in range(len(ctx.runs))]
    copy = [peak(i, "mem.copy_prefetch") for i in range(len(ctx.runs))]
    for label, paper, f in (
            ("L1 peak: time per 4-byte word (ns)", 13, lambda i: 4e3 / read[i]),
            ("L1 peak: time per four words (ns)", 50, lambda i: 16e3 / read[i]),
            ("prefetching copy, read + write counted (MB/s)", 320, lambda i: 2 * copy[i])):
        src = read if "L1" in label else copy
        t.rows.append(Row(label, [refs.Printed(paper)] + [f(i) if src[i] else None
                                                          for i in range(len(ctx.runs))],
                          "derived"))
    return t


def _mem_plateaus(ctx) -> Table:
    t = Table("Figure 2 plateaus", "Figure 2: the read curve's plateaus",
              "LB96: > 300 MB/s up to 8 KB (L1), 110 MB/s from ~10 to 256 KB (L2), ~75 MB/s "
              "beyond (memory); this machine: the plateaus osmeter finds in mem.read",
              ["", "level (MB/s)", "sizes", "breaks at", "nearest cache"], [])
    for i in range(len(ctx.runs)):
        plats = [r for r in ctx.runs[i].results if r.bench == "mem.read"
                 and r.metric.startswith("bandwidth.plateau.") and r.status == "ok"]
        for r in plats:
            e = r.extra or {}
            near = e.get("nearest_cache") or {}
            t.rows.append(Row("%s: %s" % (ctx.names[i], r.metric.rsplit(".", 1)[-1]), [
                r.median, "%d-%d bytes" % (e.get("first_x"), e.get("last_x")),
                e.get("break_x"), "L%s (%s bytes)" % (near["level"], near["size"])
                if near else None], "ours"))
        if not plats:
            t.notes.append("%s: no plateau found (%s)" % (
                ctx.names[i], ctx.why_not(i, "mem.read") if not ctx.results(
                    i, "mem.read", "bandwidth") else "too few sizes: run at the default sizes"))
    return t


def _knee(ctx, i) -> tuple | None:
    """(largest size cached ≥ 90%, the limit, in-cache read MB/s, beyond-cache MB/s)."""
    res = ctx.results(i, "fs.bonnie.warm", "resident")
    if not res:
        return None
    limit = _size(res[0].params.get("mem_limit"))
    cached = [r.x for r in res if (r.median or 0) >= 90]
    reads = {r.x: r.median for r in ctx.results(i, "fs.bonnie.warm", "read")}
    inside = [reads[x] for x in cached if x in reads]
    beyond = [v for x, v in reads.items() if x not in cached]
    return (max(cached) if cached else None, limit,
            sorted(inside)[len(inside) // 2] if inside else None,
            sorted(beyond)[len(beyond) // 2] if beyond else None)


def _bonnie_table(ctx) -> Table:
    t = Table("§7.1", "§7.1 Large files (bonnie)", MACHINE + ", 32 MB of memory",
              ["", ALL_THREE, *ctx.names], [], [])
    knee = [_knee(ctx, i) for i in range(len(ctx.runs))]
    t.rows.append(Row("cached up to (MB) of the memory (MB)", ["20 of 32"] + [
        "%s of %s" % ("%.3g" % (k[0] / 2 ** 20) if k[0] else "none",
                      "%.3g" % (k[1] / 2 ** 20) if k[1] else "all") if k else None
        for k in knee]))
    t.rows.append(Row("read in the cache / beyond it (MB/s)", [None] + [
        "%s / %s" % (num(k[2]), num(k[3]) if k[3] else "—") if k and k[2] else None
        for k in knee]))
    seek = next(r for r in references() if r.bench == "fs.bonnie.seek")
    t.rows.append(Row("random seek to a block on disk (ms)", [refs.printed(seek.value)] + [
        common.ours_cell(ctx, i, seek, t.notes) for i in range(len(ctx.runs))]))
    for i, k in enumerate(knee):
        if k is None:
            t.notes.append("%s: %s" % (ctx.names[i], ctx.why_not(i, "fs.bonnie.warm")))
    t.notes.append("fs.bonnie.warm runs in a cgroup whose memory limit plays the machine's "
                   "RAM (mem_limit, recorded with the result); bonnie's cold curves are "
                   "fs.bonnie.read/write")
    return t


def _udp_table(ctx) -> Table:
    t = _prose_table(ctx, "§9.2", "§9.2 UDP (ttcp over loopback)", [
        ("UDP bandwidth, peak", "UDP bandwidth (peak, loopback)"),
        ("UDP bandwidth, peak", "peak UDP bandwidth"),
        ("UDP bandwidth, peak", "UDP bandwidth")])
    # The three quantities name one row each system: merge them into one.
    merged = [next((r.cells[k] for r in t.rows if r.cells[k] is not None), None)
              for k in range(len(t.head) - 1)]
    t.rows = [Row(t.rows[0].label, merged)]
    fractions = {s.get("system"): s["value"] for s in refs.stated(REPORT)
                 if s["quantity"] == "UDP bandwidth as a fraction of pipe bandwidth"}
    paper = t.head[1:len(t.head) - len(ctx.runs)]
    cells = [fractions.get(s) for s in paper]
    for i in range(len(ctx.runs)):
        udp = merged[len(paper) + i]
        pipe = ctx.value(i, "net.pipe_bw", "bandwidth", unit="Mbit/s")
        cells.append(100 * udp / pipe if udp and pipe else None)
    t.rows.append(Row("UDP as % of pipe bandwidth", cells, "derived"))
    _winners(t, len(ctx.runs), "higher")
    return t


# Figures 2-8 share one description in the text; each figure's part of it.
MEM_FIGURES = [
    (2, "mem.read", "> 300 MB/s up to 8 KB (L1), ~110 MB/s from ~10 KB to 256 KB (L2), "
                    "~75 MB/s beyond"),
    (2, "mem.read.lb96", "the paper's own loop: > 300 MB/s up to 8 KB (L1), ~110 MB/s to "
                         "256 KB (L2), ~75 MB/s beyond; spikes when 15 bytes are left for "
                         "the byte-wise tail loop"),
    (3, "mem.memset", "memset < 50 MB/s"),
    (4, "mem.write", "the non-prefetching custom write < 50 MB/s"),
    (5, "mem.write_prefetch", "the prefetching write: peak 310 MB/s"),
    (6, "mem.memcpy", "memcpy resembles the non-prefetching custom copy (~40 MB/s)"),
    (7, "mem.copy", "the non-prefetching custom copy: ~40 MB/s"),
    (8, "mem.copy_prefetch", "the prefetching copy: > 160 MB/s"),
]


def _figures(ctx) -> dict:
    """Our figures by section: ctx, mem, bonnie, crtdel, udp."""
    g = {name: common.graph(REPORT, name) for name in FIGURES}
    mem = g["Figures 2-8"]
    out = {"ctx": [common.figure(ctx, "Figure 1", "Figure 1: context switch vs active "
                                 "processes (ring)", g["Figure 1"], "ctx.pipe_ring",
                                 "per_switch"),
                   common.figure(ctx, "Figure 1 (chain)", "Figure 1: the LIFO chain variant",
                                 g["Figure 1"], "ctx.pipe_chain_lifo", "per_switch")],
           "mem": [common.figure(ctx, "Figure %d %s" % (n, bench), "Figure %d: %s" % (n, bench),
                                 mem, bench, "bandwidth", [("all three (Pentium)", shape)])
                   for n, bench, shape in MEM_FIGURES],
           "bonnie": [], "crtdel": [], "udp": []}
    for name, title, bench, metric, section in (
            ("Figure 9", "Figure 9: bonnie read, warm cache", "fs.bonnie.warm", "read", "bonnie"),
            ("Figure 9", "Figure 9: bonnie read, cold (block)", "fs.bonnie.read", "block",
             "bonnie"),
            ("Figure 10", "Figure 10: bonnie write, warm cache", "fs.bonnie.warm", "write",
             "bonnie"),
            ("Figure 11", "Figure 11: bonnie random seeks, cold", "fs.bonnie.seek", "seeks",
             "bonnie"),
            ("Figure 12", "Figure 12: crtdel vs data written", "fs.crtdel", "sequence", "crtdel"),
            ("Figure 13", "Figure 13: UDP bandwidth vs datagram size", "net.udp_ttcp",
             "received", "udp")):
        fid = name if bench != "fs.bonnie.read" else name + " (cold)"
        out[section].append(common.figure(ctx, fid, title, g[name], bench, metric))
    return out


def _size(text) -> float | None:
    """A parameter's size ("32m") in bytes."""
    try:
        mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(str(text)[-1:].lower(), 1)
        return float(str(text)[:-1] if mult > 1 else text) * mult
    except ValueError:
        return None


STEP = 1.2     # a step down between two plateaus: a fall of at least 20%


def _steps(ctx) -> Conclusion:
    """Read bandwidth in the paper's three steps: L1, L2, memory, each a plateau of its
    own and each lower than the one before.  A curve whose plateau-finder joins two of
    the levels ("L1-L2") shows fewer steps than the paper names."""
    ev, outcomes, margins, used = [], [], [], []
    for i in range(len(ctx.runs)):
        if not ctx.results(i, "mem.read", "bandwidth"):
            continue
        if len(ctx.results(i, "mem.read", "bandwidth")) < 6:
            ev.append("%s: mem.read ran at too few sizes to find plateaus" % ctx.names[i])
            outcomes.append(None)
            continue
        plats = {r.metric.rsplit(".", 1)[-1]: r for r in ctx.runs[i].results
                 if r.bench == "mem.read" and r.metric.startswith("bandwidth.plateau.")
                 and r.status == "ok" and r.median}
        used += plats.values()
        named = "L1" in plats and "L2" in plats
        beyond = [r for lab, r in plats.items() if lab not in ("L1", "L2")]
        ev.append("%s: %s%s" % (ctx.names[i], ", ".join(
            "%s %s MB/s" % (lab, num(r.median)) for lab, r in plats.items()) or "no plateaus",
            "" if named else " — L1 and L2 are not two plateaus here, so the paper's step "
            "from L1 to L2 does not show" if plats else ""))
        if not (named and beyond):
            outcomes.append(False)
            continue
        memory = min(beyond, key=lambda r: r.median)
        for upper, lower in ((plats["L1"], plats["L2"]), (plats["L2"], memory)):
            lo, hi = ratio_interval(upper, lower)
            o, m = against(upper.median / lower.median, lo, hi, STEP, False, "×")
            outcomes.append(o)
            margins.append("%s %s/%s: %s" % (ctx.names[i], upper.metric.rsplit(".", 1)[-1],
                                             lower.metric.rsplit(".", 1)[-1], m))
    return Conclusion(
        "Read bandwidth falls in steps at the cache sizes: > 300 MB/s in L1, 110 MB/s in L2, "
        "75 MB/s from memory", "§6.1, Figure 2", judge(outcomes),
        "; ".join(ev) if ev else "needs mem.read (osmeter run --suite lb96)",
        "holds where the read curve has the steps the paper names: an L1 and an L2 "
        "plateau of their own (not one joined L1-L2 plateau), and a level beyond L2 "
        "(memory; an L3 between is allowed), each step a fall of at least %g× (the paper's: "
        "2.7× and 1.5×) on the interval of the ratio of the two plateaus" % STEP,
        "; ".join(margins), rests_on=used)


def _ratio_claim(ctx, i, a, b, threshold: float, holds_below: bool):
    """The ratio of result a to result b of run i against a threshold, on the interval of
    the ratio: (ratio, outcome, margin, the two results) or None."""
    ra, rb = ctx.result(i, *a), ctx.result(i, *b)
    if ra is None or rb is None or not ra.median or not rb.median:
        return None
    ratio = ra.median / rb.median
    lo, hi = ratio_interval(ra, rb)
    o, m = against(ratio, lo, hi, threshold, holds_below, "×")
    return ratio, o, m, (ra, rb)


def _conclusions(ctx) -> list[Conclusion]:
    out = []
    # Context switches and the number of processes: a contrast of the paper's systems.
    out.append(common.contrast_claim(
        ctx, "Context-switch time depends on the number of active processes: it grows "
        "linearly on Linux 1.2.8 (fastest below 20 processes), FreeBSD's is almost "
        "constant, Solaris's jumps at 32", "§5, Figure 1",
        [("ctx.pipe_ring", "per_switch")],
        {"Linux 1.2.8": {curves.LINEAR}, "FreeBSD 2.0.5R": {curves.CONSTANT}}, ID))
    out.append(_steps(ctx))
    # Prefetching.
    ev, outcomes, margins, used = [], [], [], []
    for plain, pre in (("mem.write", "mem.write_prefetch"), ("mem.copy", "mem.copy_prefetch")):
        for i in range(len(ctx.runs)):
            xs = [r.x for r in ctx.results(i, pre, "bandwidth")]
            if not xs:
                continue
            x = max(xs)
            vs = ctx.versus(i, (pre, "bandwidth", x), (plain, "bandwidth", x), "higher")
            rc = _ratio_claim(ctx, i, (pre, "bandwidth", x), (plain, "bandwidth", x), 1.5,
                              False)
            if vs is None or rc is None:
                continue
            ratio, v = vs
            used += rc[3]
            ev.append("%s: %s %.2g× %s at %s bytes (%s)" % (
                ctx.names[i], pre, ratio, plain, "%g" % x, verdict_words(v)))
            sig = significant(v)
            outcomes.append(rc[1] if rc[1] is not True else sig)
            margins.append("%s %s: %s" % (ctx.names[i], pre, rc[2]))
    out.append(Conclusion(
        "Prefetching the cache lines raises write and copy bandwidth several-fold (310 vs "
        "< 50 MB/s writing, 160 vs 40 MB/s copying): the Pentium does not allocate on a "
        "write miss", "§6.2-6.3, Figures 4-8", judge(outcomes),
        ("; ".join(ev) + (" — today's caches allocate on write and prefetch in hardware"
                          if False in outcomes else "") if ev else
         "needs mem.write, mem.write_prefetch, mem.copy, mem.copy_prefetch (osmeter run "
         "--suite lb96)"),
        "holds where the prefetching loop is at least 1.5× the plain one at the "
        "largest buffer, on the interval of the ratio, and significantly faster",
        "; ".join(margins), rests_on=used))
    # The cache knee.
    ev, ok, used, knee_margins = [], [], [], []
    for i in range(len(ctx.runs)):
        k = _knee(ctx, i)
        if k is None or k[2] is None:
            continue
        used += ctx.results(i, "fs.bonnie.warm", "read")
        ev.append("%s: files up to %s cached under a %s memory limit, read at %s MB/s; %s" % (
            ctx.names[i], "%.3g MB" % (k[0] / 2 ** 20) if k[0] else "none",
            "%.3g MB" % (k[1] / 2 ** 20) if k[1] else "no", num(k[2]),
            "%s MB/s beyond" % num(k[3]) if k[3] else "no size beyond the cache"))
        if k[3] is None:
            ok.append(None)         # no size beyond the cache: the knee cannot show
            continue
        o, m = against(k[3] / k[2], None, None, 0.8, True, "×")
        ok.append(o)
        knee_margins.append("%s: %s" % (ctx.names[i], m))
    out.append(Conclusion(
        "All three systems cache bonnie's file up to 20 MB of the 32 MB machine; beyond, "
        "reads go to the disk", "§7.1, Figure 9",
        judge(ok),
        "; ".join(ev) if ev else "needs fs.bonnie.warm, which needs a memory cgroup "
        "(osmeter run fs.bonnie.warm as root on Linux)",
        "holds where the median read beyond the cached sizes is below 0.8× the median "
        "inside them (the sizes' medians: their spread is the knee itself, not an "
        "interval)", "; ".join(knee_margins), rests_on=used))
    # Small files and synchronous metadata.
    ev, ok, margins, used = [], [], [], []
    for i in range(len(ctx.runs)):
        rc = _ratio_claim(ctx, i, ("fs.crtdel", "sequence_fsync", 0), ("fs.crtdel", "sequence", 0),
                          10.0, False)
        if rc is None:
            continue
        ratio, o, m, rs = rc
        used += rs
        ev.append("%s: %.3g ms without fsync, %.3g ms with (%.2g×)" % (
            ctx.names[i], rs[1].median, rs[0].median, ratio))
        ok.append(o)
        margins.append("%s: %s" % (ctx.names[i], m))
    out.append(Conclusion(
        "Linux's ext2 never waits for the disk on small files (asynchronous metadata), an "
        "order of magnitude faster than FreeBSD's and Solaris's synchronous updates",
        "§7.2, Figure 12", judge(ok),
        ("; ".join(ev) + (" — waiting for the disk still costs an order of magnitude"
                          if ev and all(o is True for o in ok) else "") if ev else
         "needs fs.crtdel (osmeter run --suite lb96)"),
        "holds where crtdel with fsync takes at least 10× (an order of magnitude) the "
        "time without, on the interval of the ratio; the empty file",
        "; ".join(margins), rests_on=used))
    # UDP below pipes.
    ev, ok, margins, used = [], [], [], []
    udp = next((r for r in references() if r.bench == "net.udp_ttcp"), None)
    for i in range(len(ctx.runs)):
        m = ctx.match(i, udp)
        pipe_r = ctx.result(i, "net.pipe_bw", "bandwidth")
        pipe = ctx.value(i, "net.pipe_bw", "bandwidth", unit="Mbit/s")
        if m.value and pipe:
            ratio = m.value / pipe
            lo, hi = ratio_interval(m.result, pipe_r)      # in the results' own units
            k = ratio / (m.result.median / pipe_r.median)
            lo, hi = (lo * k, hi * k) if lo is not None else (None, None)
            o, mg = against(ratio, lo, hi, 1.0, True, "× the pipe")
            used += [m.result, pipe_r]
            ev.append("%s: UDP peak %s Mbit/s = %.0f%% of the pipe's %s Mbit/s" % (
                ctx.names[i], num(m.value), 100 * ratio, num(pipe)))
            ok.append(o)
            margins.append("%s: %s" % (ctx.names[i], mg))
    out.append(Conclusion(
        "UDP over loopback reaches only a fraction of pipe bandwidth (50% on FreeBSD and "
        "Solaris, 14% on Linux)", "§9.2, Figure 13",
        judge(ok),
        "; ".join(ev) if ev else "needs net.udp_ttcp and net.pipe_bw (osmeter run --suite lb96)",
        "holds where UDP's peak is below the pipe's bandwidth, on the interval of the "
        "ratio", "; ".join(margins), rests_on=used))
    out.append(_ethernet(ctx))
    out += _across(ctx)
    return out


# The microbenchmarks of §4-§9 as rows to set two systems against each other (§12).
MICRO_ROWS = [
    across.row("syscall.getpid", "latency", None, "getpid", "us", "lower"),
    across.row("ctx.pipe_pingpong", "per_switch", None, "context switch", "us", "lower"),
    across.row("ctx.pipe_self", "latency", None, "pipe overhead", "us", "lower"),
    across.row("mem.read", "bandwidth", "largest", "read from memory", "MB/s", "higher"),
    across.row("mem.memcpy", "bandwidth", "largest", "memcpy from memory", "MB/s", "higher"),
    across.row("fs.crtdel", "sequence", 0, "crtdel, empty file", "ms", "lower"),
    across.row("net.pipe_bw", "bandwidth", None, "pipe bandwidth", "Mbit/s", "higher"),
    across.row("net.tcp_bw", "bandwidth", None, "TCP bandwidth", "Mbit/s", "higher"),
    across.row("net.udp_ttcp", "received", "peak", "UDP peak", "Mbit/s", "higher"),
]
MAB_TOTAL = across.row("mab.local", "total", None, "the MAB total", "s", "lower")
# §7.2: Linux's small-file time an order of magnitude below FreeBSD's (and Solaris's).
METADATA_FACTOR = 10.0


def _across(ctx) -> list[Conclusion]:
    """The conclusions that compare the paper's systems: judged over two systems' runs."""
    sides = [SYSTEMS[0], SYSTEMS[1]]
    crtdel = MICRO_ROWS[5]
    return [
        across.conclusion(
            "Across systems: Linux's small-file operations (asynchronous metadata) are an "
            "order of magnitude faster than FreeBSD's and Solaris's (synchronous)",
            "§7.2, §12", across.pair_ratio_claim(ctx, sides, crtdel, METADATA_FACTOR,
                                                 "FreeBSD's role over Linux's"),
            "holds where the empty-file crtdel of the run playing FreeBSD 2.0.5R is at "
            "least %g× that of the run playing Linux 1.2.8, on the interval of the ratio "
            "(%s)" % (METADATA_FACTOR, across.CAST_RULE)),
        across.conclusion(
            "No one system dominates the benchmarks: each out-performs the others in some "
            "area", "Abstract, §12", across.nobody_best(ctx, MICRO_ROWS),
            "over the microbenchmark rows (%s) of every pair of runs, %s; holds where "
            "every system loses at least one row, does not hold where one loses none and "
            "wins a row against every other; undecided where fewer than half the rows ran "
            "on both" % (", ".join(r.quantity for r in MICRO_ROWS),
                                                across.ROW_RULE)),
        across.conclusion(
            "Despite the differences on the microbenchmarks, the systems' overall "
            "performance on the MAB workload is much closer", "§12",
            across.closer(ctx, MAB_TOTAL, MICRO_ROWS),
            "for every pair of runs: the MAB total's spread (the slower over the faster) "
            "on its interval below the median spread of the microbenchmark rows; does "
            "not hold where above it"),
    ]


ETHERNET_MBITS = 100.0


def _ethernet(ctx) -> Conclusion:
    """§9: 'none of the x86 systems can fully utilize a 100 Megabit/second Ethernet link'
    -- what their protocol stacks could move, set beside what today's moves over loopback
    (no link in the way: an upper bound of what it could send on one)."""
    ev, ok, margins, used = [], [], [], []
    for i in range(len(ctx.runs)):
        for bench, metric, x in (("net.tcp_bw", "bandwidth", None),
                                 ("net.udp_ttcp", "received", "peak")):
            rs = ctx.results(i, bench, metric)
            if not rs:
                continue
            r = max(rs, key=lambda r: r.median or 0) if x == "peak" else ctx.result(
                i, bench, metric)
            if r is None or not r.median:
                continue
            used.append(r)
            k = refs.convert(1.0, r.unit, "Mbit/s")
            lo, hi, _ = interval(r)
            v = r.median * k
            o, m = against(v, lo * k if lo is not None else None,
                           hi * k if hi is not None else None, ETHERNET_MBITS, True, "Mbit/s")
            ev.append("%s %s: %s Mbit/s over loopback" % (ctx.names[i], bench, num(v)))
            ok.append(o)
            margins.append("%s %s: %s" % (ctx.names[i], bench, m))
    return Conclusion(
        "None of the x86 systems can fully use a 100 Mbit/s Ethernet link (Linux two to "
        "three times slower than FreeBSD and Solaris)", "§9.3",
        judge(ok), "; ".join(ev) if ev else "needs net.tcp_bw and net.udp_ttcp (osmeter run "
        "--suite lb96)",
        "holds where TCP and UDP over loopback stay below 100 Mbit/s (loopback has no "
        "link: what the stack could move)", "; ".join(margins), rests_on=used)


MAB_PHASES = ("mkdir", "copy", "stat", "read", "compile", "total")


def _mab_remote(phase) -> list:
    """References (with no published value: the paper's Table is lost) that find a run's
    MAB on a network file system, per phase."""
    return [refs.RefValue(STUDY, "§10", ALL_THREE, MACHINE, "mab.local", p, None,
                          "MAB over NFS, " + p, 0.0, "s", "lower", remote=True)
            for p in (MAB_PHASES if phase is None else (phase,))]


def view(ctx) -> StudyView:
    getpid = Table("§4", "§4 System call (Table 2, lost)", "getpid in a loop; the text says: "
                   "Linux fastest, then FreeBSD, then Solaris", ["", *ctx.names],
                   [Row("getpid (µs)", [ctx.value(i, "syscall.getpid", "latency", unit="us")
                                        for i in range(len(ctx.runs))], "ours")])
    ctx_table = _prose_table(ctx, "§5", "§5 Context switching", [
        ("ctx, two active processes", "context switch between two active processes (ctx)"),
        ("ctx, two active processes", "context switch between two active processes (ctx, "
                                      "pipe overhead included)"),
        ("pipe overhead (same process)", "overhead of sending a byte from a process through "
                                         "a pipe and back to the same process"),
        ("ctx without the pipe overhead", "estimated context switch without the pipe "
                                          "overhead")])
    # Solaris's 220 µs is stated apart from the other two: one row.
    first, second = ctx_table.rows[0], ctx_table.rows[1]
    first.cells = [a if a is not None else b for a, b in zip(first.cells, second.cells)]
    del ctx_table.rows[1]
    _winners(ctx_table, len(ctx.runs), "lower")
    mem_table = _prose_table(ctx, "§6", "§6 Memory bandwidth", [
        ("read, L1 peak", "peak read bandwidth from the first-level cache"),
        ("read, L2 plateau", "read bandwidth on the L2 plateau"),
        ("read, main memory", "read bandwidth from main memory (large buffers)"),
        ("memset, peak", "peak memset write bandwidth"),
        ("write with prefetch, peak", "peak write bandwidth of the prefetching custom write "
                                      "routine"),
        ("memcpy, main memory", "copy bandwidth without the prefetching optimisation"),
        ("copy with prefetch, peak", "peak copy bandwidth of the prefetching custom copy "
                                     "routine")])
    crtdel = _prose_table(ctx, "§7.2", "§7.2 Small files (crtdel)", [
        ("crtdel", "crtdel time")], ["Linux: 'well below the 14 ms seek time' (Figure 12)"])
    sections = [getpid, ctx_table]
    figs = _figures(ctx)
    sections += figs["ctx"] + [mem_table, _restated(ctx), _mem_plateaus(ctx)] + figs["mem"]
    sections += [_bonnie_table(ctx)] + figs["bonnie"] + [crtdel] + figs["crtdel"]
    mab = Table("§8", "§8 Modified Andrew Benchmark (Table 3, lost)", "seconds per phase; the "
                "text says: Linux first, FreeBSD competitive with Solaris except in stating "
                "directories", ["", "mkdir", "copy", "stat", "read", "compile", "total"], [
                    Row(ctx.names[i], [ctx.value(i, "mab.local", m) for m in (
                        "mkdir", "copy", "stat", "read", "compile", "total")], "ours")
                    for i in range(len(ctx.runs))])
    net = Table("§9.1", "§9.1 Pipes and §9.3 TCP (Tables 4-5, lost)", "the text says: Linux "
                "has the best pipe bandwidth; Linux's TCP is as slow as its UDP",
                ["", "pipe (Mbit/s)", "TCP (Mbit/s)"], [
                    Row(ctx.names[i], [ctx.value(i, "net.pipe_bw", "bandwidth", unit="Mbit/s"),
                                       ctx.value(i, "net.tcp_bw", "bandwidth", unit="Mbit/s")],
                        "ours") for i in range(len(ctx.runs))])
    nfs = Table("§10", "§10 MAB across NFS (lost)", "seconds per phase of the Andrew "
                "benchmark on a network file system (mab.remote, or mab.local run with --dir "
                "on one); the text says: with a Linux server FreeBSD's client was best, "
                "Linux second, Solaris third; with a SunOS server all were slower",
                ["", "mkdir", "copy", "stat", "read", "compile", "total"], [
                    Row(ctx.names[i], [ctx.match(i, r).value for r in _mab_remote(m)], "ours")
                    for i in range(len(ctx.runs))
                    for m in [None] if ctx.match(i, _mab_remote("total")[0]).value is not None],
                ["MAB is related, not like for like: today's source tree and compiler"])
    for i in range(len(ctx.runs)):
        m = ctx.match(i, _mab_remote("total")[0])
        if m.value is None:
            nfs.notes.append("%s: %s" % (ctx.names[i], m.detail or m.why))
    sections += [mab, nfs, net, _udp_table(ctx)] + figs["udp"]
    return StudyView(ID, TITLE, "K. Lai and M. Baker, USENIX 1996", common.setup(REPORT),
                     ctx.names, sections, _conclusions(ctx), common.missing(REPORT))
