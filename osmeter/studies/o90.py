"""Ousterhout 1990, "Why aren't operating systems getting faster as fast as hardware?"

Ten tables, each a row per configuration (machine, OS, local or remote disk).  This
machine's runs are set below the paper's rows, with the derived columns recomputed:
the MIPS-relative speed (Tables 2-4, 6, 8), bytes per instruction (Table 5) and the
remote penalty (Table 8), with cpu.integer standing in for MIPS.  Remote rows are set
beside results that ran on a network file system (osmeter run --dir REMOTE).
"""
from __future__ import annotations

from ..analysis import matching
from ..data import references as refs
from ..analysis import remote
from . import common
from .view import (Conclusion, Row, StudyView, Table, against, interval, judge,
                   product_interval, ratio_interval)

ID, REPORT, STUDY = "o90", "ousterhout1990", "O90"
TITLE = "Ousterhout 1990: Why aren't operating systems getting faster as fast as hardware?"

MACHINE = {"M2000": "MIPS M2000", "DS3100": "DECstation 3100", "Sun4": "Sun-4/280",
           "8800": "VAX 8800", "Sun3": "Sun-3/75", "MVAX2": "MicroVAX II"}
UNIX_REFERENCE = "Sun3 SunOS 3.5"      # Ousterhout's reference for Ultrix, SunOS, RISC/os
SPRITE_REFERENCE = "Sun3 Sprite"       # ... and for Sprite
MAB_REFERENCE = "Sun3 Sprite Local"    # Table 8 reproduces only with this one (427 s)
# Today's MAB is the same five phases over another source tree, compiled by today's
# compiler for this machine: the paper's compile phase ran a fixed gcc targeting SPUR.
MAB_DIFFERS = ("today's MAB runs the same five phases over "
               "another source tree and compiles it with this machine's compiler; the "
               "paper's compiled a fixed source with a gcc that generated SPUR code")

# (table, column, bench, metric, x, unit, better, quantity); Table 6 is the 16 KB point
# of fs.cache_read's sweep.
COLUMNS = [
    ("Table 2", 0, "syscall.getpid", "latency", None, "us", "lower", "getpid"),
    ("Table 3", 0, "ctx.pipe_pingpong", "round_trip", None, "ms", "lower",
     "pipe round trip (2 context switches)"),
    ("Table 4", 0, "syscall.select", "1_empty", None, "us", "lower", "select, 1 pipe"),
    ("Table 4", 1, "syscall.select", "10_empty", None, "us", "lower", "select, 10 empty pipes"),
    ("Table 4", 2, "syscall.select", "10_full", None, "us", "lower", "select, 10 full pipes"),
    ("Table 5", 0, "mem.bcopy", "cached", None, "MB/s", "higher", "bcopy, cached"),
    ("Table 5", 1, "mem.bcopy", "uncached", None, "MB/s", "higher", "bcopy, uncached"),
    ("Table 6", 0, "fs.cache_read", "bandwidth", 16384, "MB/s", "higher",
     "read from the file cache, 16 KB blocks"),
    ("Table 7", 0, "mab.local", "o90_copy", None, "s", "lower", "MAB copy phases"),
    ("Table 7", 1, "mab.local", "compile", None, "s", "lower", "MAB compile phase"),
    ("Table 7", 2, "mab.local", "total", None, "s", "lower", "MAB total"),
    ("Table 9", 0, "fs.openclose", "foo", None, "ms", "lower", "open+close 'foo'"),
    ("Table 9", 1, "fs.openclose", "a/b/c/foo", None, "ms", "lower",
     "open+close '/a/b/c/foo'"),
    ("Table 10", 0, "fs.crtdel", "sequence", 0, "ms", "lower", "create-use-delete, no data"),
    ("Table 10", 1, "fs.crtdel", "sequence", 10240, "ms", "lower", "create-use-delete, 10 KB"),
    ("Table 10", 2, "fs.crtdel", "sequence", 102400, "ms", "lower",
     "create-use-delete, 100 KB"),
]
# Tables whose last column is the MIPS-relative speed, and the column it is computed from.
MIPS_TABLES = {"Table 2": 0, "Table 3": 0, "Table 4": 2, "Table 6": 0}
FILE_TABLES = ("Table 7", "Table 9", "Table 10")     # local and remote configurations


def _where(label: str) -> bool | None:
    return True if label.endswith("Remote") else False if label.endswith("Local") else None


def references() -> list[refs.RefValue]:
    out = []
    for name, col, bench, metric, x, unit, better, quantity in COLUMNS:
        t = refs.table(REPORT, name)
        mips_col = len(t["columns"]) - 1 if MIPS_TABLES.get(name) == col else None
        for row in t["rows"]:
            v = refs.num(row["values"][col])
            if v is None:
                continue
            abbrev = row["label"].split()[0]
            out.append(refs.RefValue(
                STUDY, name, row["label"], MACHINE.get(abbrev, abbrev), bench, metric, x,
                quantity, v, unit, better,
                key=refs.table_key(REPORT, name, row["label"], t["columns"][col]),
                related=bench == "mab.local", note=MAB_DIFFERS if bench == "mab.local"
                else "",
                remote=_where(row["label"]) if name in FILE_TABLES else None,
                mips_relative=refs.num(row["values"][mips_col]) if mips_col is not None
                else None))
    t1 = refs.table(REPORT, "Table 1")
    for row in t1["rows"]:
        out.append(refs.RefValue(
            STUDY, "Table 1", row["label"], row["label"], "cpu.integer", "rate", None,
            "MIPS rating (the author's estimate; osmeter's stand-in is cpu.integer)",
            float(row["values"][2]), "MIPS", "higher", stands_for="the MIPS rating",
            key=refs.table_key(REPORT, "Table 1", row["label"], "MIPS"),
            note="cpu.integer counts C-level integer operations; a 1990 MIPS rating is an "
                 "estimate of instructions: the same order of magnitude, not the same number"))
    return out


def derived() -> list[refs.Derived]:
    out = []
    for name in (*MIPS_TABLES, "Table 5", "Table 8"):
        t = refs.table(REPORT, name)
        cols = {"Table 5": ["Bytes/instruction"], "Table 8": t["columns"]}.get(
            name, [t["columns"][-1]])
        for row in t["rows"]:
            for col in cols:
                if refs.num(row["values"][t["columns"].index(col)]) is not None:
                    out.append(refs.Derived(refs.table_key(REPORT, name, row["label"], col),
                                            "recomputed for this machine in the study view "
                                            "(osmeter report --study o90): " + col))
    for st in refs.stated(REPORT):
        if st["quantity"] in CONCLUSION_NUMBERS:
            for k in range(len(st["value"]) if isinstance(st["value"], list) else 1):
                out.append(refs.Derived(refs.stated_key(
                    st, k if isinstance(st["value"], list) else None),
                    "set beside this machine's value in the study's conclusions"))
    return out


def graph_refs() -> list:
    return []


CONCLUSION_NUMBERS = {
    "range of MIPS-relative speeds of the RISC machines for getpid",
    "normalised uncached copy rating, CISC machines (8800, Sun3, MVAX2)",
    "normalised uncached copy rating, RISC machines",
    "slow-down of NFS-based RISC workstations, remote vs local",
    "slow-down of MVAX2 with NFS instead of a local disk",
    "create+delete time with no data on the UNIX derivatives",
}


_stated_rule = common.stated_rule(REPORT)


NOT_COMPARABLE = [
    common.report_rule(REPORT),
    _stated_rule("expected speed of DS3100 relative to Sun4 if OS performance scaled with MIPS",
                 "arithmetic on Table 1's MIPS ratings: a prediction, not a measurement"),
    _stated_rule("expected speed of DS3100 relative to Sun3 if OS performance scaled with MIPS",
                 "arithmetic on Table 1's MIPS ratings: a prediction, not a measurement"),
    _stated_rule("worked example of MIPS-relative speed, M2000",
                 "the text's worked example of Table 2's M2000 row (recomputed there)"),
    _stated_rule("worked example of bytes/instruction, 8800",
                 "the text's worked example of Table 5's 8800 row (recomputed there)"),
    _stated_rule("suspected spurious wait of RISC/os select with empty pipes and zero "
                 "timeout (M2000)", "an anomaly of RISC/os 4.0's select on the M2000"),
    _stated_rule("number of pipes in the second and third configurations",
                 "a parameter of the experiment: syscall.select uses 10 pipes too"),
    _stated_rule("read block size",
                 "a parameter of the experiment: Table 6 is set beside fs.cache_read's "
                 "16 KB point"),
    _stated_rule("DS3100-Ultrix-Local slower than DS3100-Sprite-Remote",
                 "a comparison between two of the paper's configurations"),
    _stated_rule("data amounts tried",
                 "a parameter of the experiment: fs.crtdel's sizes include 0, 10 and 100 KB"),
    _stated_rule("minimum age before Sprite writes file data to disk",
                 "a property of Sprite's file cache, not a measurement"),
    _stated_rule("empty-file time, DS3100-Ultrix-Local vs 8800-Ultrix-Local",
                 "a comparison between two of the paper's configurations"),
    _stated_rule("100-kbyte file, DS3100-Ultrix-Remote vs DS3100-Sprite-Remote",
                 "a comparison between two of the paper's configurations"),
    _stated_rule("write bandwidth achieved by DS3100-Ultrix-Remote",
                 "a property of Ultrix 3.1's NFS client, inferred from Table 10"),
    _stated_rule("extra sweep of data sizes",
                 "a parameter of an extra experiment (fs.crtdel with sizes=2k,3k,...,9k "
                 "repeats it)"),
    _stated_rule("time for 2-8 kbyte files",
                 "SunOS 4.0's jump between 8 and 9 KB: a property of that system (fs.crtdel's "
                 "sweep shows whether today's has one)"),
    _stated_rule("time from 9 kbytes on",
                 "SunOS 4.0's jump between 8 and 9 KB: a property of that system (fs.crtdel's "
                 "sweep shows whether today's has one)"),
]


# ---- the derived quantities ----------------------------------------------------------------

def bytes_per_instruction(uncached_mbps: float, mips: float) -> float:
    """Table 5's last column: uncached bcopy MB/s divided by the MIPS rating."""
    return uncached_mbps / mips


def mips_tables(runs: list, cpu_speeds: list) -> list[refs.MipsTable]:
    """Tables 2, 3, 4 and 6 with each run as one more row, MIPS-relative recomputed:

        mips_relative = (T_sun3 / T_machine) / (MIPS_machine / MIPS_sun3)       (times)
        mips_relative = (B_machine / B_sun3) / (MIPS_machine / MIPS_sun3)       (bandwidths)

    with Sun3 SunOS 3.5 as the reference and the run's cpu.integer rate (millions of
    integer operations per second) standing in for its MIPS rating."""
    mips = refs.o90_mips()
    out = []
    for name, col in MIPS_TABLES.items():
        quantity = next(c[7] for c in COLUMNS if c[0] == name and c[1] == col)
        mine = [r for r in references() if r.source == name and r.quantity == quantity]
        sun3 = next(r for r in mine if r.system == UNIX_REFERENCE)
        rows = [(r.system, mips.get(r.system.split()[0]), r.value, r.mips_relative)
                for r in mine]
        ours = []
        for run, speed in zip(runs, cpu_speeds):
            m = matching.measured(run, mine[0])
            if m.value and speed:
                ours.append((run.name, speed, m.value, refs.mips_relative(
                    sun3.value, m.value, sun3.better, speed, mips["Sun3"])))
        out.append(refs.MipsTable(name, refs.table(REPORT, name)["caption"], mine[0].unit,
                                  quantity, rows, ours))
    return out


# ---- the view -------------------------------------------------------------------------------

def _ours_rows(ctx, name: str, t: dict, refs_by_col: dict) -> tuple[list[Row], list[str]]:
    """This machine's rows of a table: one per run (and per local/remote where the table
    has both), with the derived columns recomputed."""
    rows, notes = [], []
    mips = refs.o90_mips()
    places = (False, True) if name in FILE_TABLES else (None,)
    for i, run in enumerate(ctx.runs):
        for place in places:
            cells = []
            for col in range(len(t["columns"])):
                ref = refs_by_col.get((col, place))
                cells.append(common.ours_cell(ctx, i, ref, notes) if ref else None)
            if all(c is None for c in cells) and place:
                continue              # no remote run: no remote row
            speed = ctx.cpu[i]
            if name in MIPS_TABLES and speed:
                src = refs_by_col[(MIPS_TABLES[name], None)]
                base = next(r for r in references() if r.source == name and
                            r.quantity == src.quantity and r.system == UNIX_REFERENCE)
                v = cells[MIPS_TABLES[name]]
                cells[-1] = refs.mips_relative(base.value, v, base.better, speed,
                                               mips["Sun3"]) if v else None
            if name == "Table 5" and speed and cells[1]:
                cells[2] = bytes_per_instruction(cells[1], speed)
            where = "" if place is None else " (remote)" if place else " (local)"
            rows.append(Row("this machine: %s%s" % (ctx.names[i], where), cells, "ours"))
    return rows, notes


def _table8(ctx) -> Table:
    t = refs.table(REPORT, "Table 8")
    rows = [Row(r["label"], [refs.printed(v) if refs.num(v) is not None else "—"
                             for v in r["values"]]) for r in t["rows"]]
    mips = refs.o90_mips()
    ref_total = next(r["values"][2] for r in refs.table(REPORT, "Table 7")["rows"]
                     if r["label"] == MAB_REFERENCE)
    total = next(r for r in references() if r.source == "Table 7" and r.metric == "total"
                 and r.remote is False)
    notes = []
    pens = remote.penalties(ctx.runs)
    for i in range(len(ctx.runs)):
        v = common.ours_cell(ctx, i, total, notes)
        mrel = refs.mips_relative(ref_total, v, "lower", ctx.cpu[i], mips["Sun3"]) \
            if v and ctx.cpu[i] else None
        mine = [p for p in pens if p.bench == "mab.local" and p.metric == "total"
                and i in (p.local_run, p.remote_run)]
        pen = "; ".join("%+.0f%% (%s vs %s)" % (p.pct, ctx.names[p.remote_run],
                                                 ctx.names[p.local_run]) for p in mine)
        rows.append(Row("this machine: %s" % ctx.names[i], [mrel, pen or None], "ours"))
    notes.append("the MAB totals are related, not like for like: " + MAB_DIFFERS)
    notes.append("MIPS-relative (local) against %s's %g s, as the printed values require; "
                 "remote penalty = 100 × (T_remote − T_local) / T_local of the MAB totals "
                 "for every local/remote pair of results (osmeter run mab.local --dir LOCAL "
                 "--dir REMOTE)" % (MAB_REFERENCE, ref_total))
    if not pens:
        notes.append("no remote penalty here: no MAB ran on a network file system")
    return Table("Table 8", "Table 8: " + t["caption"], t["unit"], ["", *t["columns"]], rows,
                 notes)


def _table(ctx, name: str) -> Table:
    t = refs.table(REPORT, name)
    mine = [r for r in references() if r.source == name]
    by_col = {}
    for r in mine:
        col = next(c[1] for c in COLUMNS if c[0] == name and c[2] == r.bench
                   and c[3] == r.metric and c[4] == r.x) if name != "Table 1" else 2
        by_col.setdefault((col, r.remote), r)
    rows = [Row(r["label"], [refs.printed(v) for v in r["values"]]) for r in t["rows"]]
    ours, notes = _ours_rows(ctx, name, t, by_col)
    for (col, place), r in sorted(by_col.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        line = common.mapping_note(t["columns"][col], r)
        if line not in notes:
            notes.append(line)
    if name == "Table 1":
        notes.append(refs.STAND_IN)
    if name in MIPS_TABLES or name == "Table 5":
        notes.append("this machine's derived column uses cpu.integer (Mops/s) for MIPS; "
                     "MIPS-relative against %s" % UNIX_REFERENCE)
    caption = "%s (%s)" % (t.get("caption", ""), t.get("unit", ""))
    return Table(name, "%s: %s" % (name, t.get("caption", "")), caption,
                 ["", *t["columns"]], rows + ours, notes + ([t["notes"]] if t.get("notes")
                                                           else []))


# cpu.integer counts C-level integer operations of a fixed loop; a MIPS rating counts
# machine instructions.  One such operation is taken to be one to three instructions (an
# assumption, not a measurement): a value within 3× of a threshold is undecided.  A
# wider slack (10×) left every plausible value undecided (issue 41).
STAND_IN_SLACK = 3.0
STAND_IN_RULE = ("cpu.integer stands in for MIPS, taken as right to within %g× (one to "
                 "three machine instructions per C-level integer operation, an assumption): "
                 "a value within %g× of the threshold is undecided"
                 % (STAND_IN_SLACK, STAND_IN_SLACK))
# Table 8: the RISC workstations slowed by about 50% over NFS, the MVAX2 by 20%; a
# remote penalty below the smallest of them does not reproduce "remote costs".
NFS_PENALTY = 1.2


def _mips_results(ctx, i) -> list:
    """The results the MIPS-relative speeds of run i rest on."""
    out = [ctx.result(i, "cpu.integer", "rate")]
    for name, col in MIPS_TABLES.items():
        c = next(c for c in COLUMNS if c[0] == name and c[1] == col)
        out.append(ctx.result(i, c[2], c[3], c[4]))
    return out


def _penalty_results(ctx, p) -> tuple:
    """The local and the remote result a remote penalty was computed from."""
    def find(run, median):
        return next((r for r in ctx.runs[run].results if r.metric == p.metric and
                     r.median == median and r.bench in (p.bench, "mab.remote")), None)
    return find(p.local_run, p.local), find(p.remote_run, p.remote)


def _conclusions(ctx) -> list[Conclusion]:
    out = []
    # 1. OS speed has not kept up with hardware.
    ev, below, margins = [], [], []
    used = [r for i in range(len(ctx.runs)) for r in _mips_results(ctx, i)]
    for k, mt in enumerate(mips_tables(ctx.runs, ctx.cpu)):
        for name, _, _, mrel in mt.ours:
            cpu, *ops = _mips_results(ctx, next(i for i, run in enumerate(ctx.runs)
                                                if run.name == name))
            op = ops[k]
            lo, hi = product_interval(mrel, *(([], [op, cpu]) if op.better == "lower"
                                              else ([op], [cpu])))
            o, m = against(mrel, lo, hi, 1.0, True, slack=STAND_IN_SLACK)
            ev.append("%s %s %s %.2g" % (name, mt.table, mt.quantity.split(",")[0], mrel))
            below.append(o)
            margins.append("%s %s: %s" % (name, mt.table, m))
    out.append(Conclusion(
        "Operating-system performance has not kept up with CPU speed: the RISC machines' "
        "MIPS-relative speeds are only about .5-.7 for getpid, and below 1 for context "
        "switches, select and reading the file cache", "§4-§8, Tables 2-6",
        judge(below),
        ("MIPS-relative against the Sun-3 (cpu.integer as MIPS): " + "; ".join(ev)) if ev else
        "needs syscall.getpid, ctx.pipe_pingpong, syscall.select, fs.cache_read and "
        "cpu.integer (osmeter run --suite o90)",
        "holds where every MIPS-relative speed is below 1; " + STAND_IN_RULE,
        "; ".join(margins), rests_on=used))
    # 2. Memory bandwidth per instruction fell.
    ev, outcomes, margins, used = [], [], [], []
    for i in range(len(ctx.runs)):
        r = ctx.result(i, "mem.bcopy", "uncached")
        if r is not None and r.median and ctx.cpu[i]:
            used += [r, ctx.result(i, "cpu.integer", "rate")]
            b = bytes_per_instruction(r.median, ctx.cpu[i])
            lo, hi = product_interval(b, [r], [ctx.result(i, "cpu.integer", "rate")])
            o, m = against(b, lo, hi, 1.0, True, "bytes per operation", STAND_IN_SLACK)
            ev.append("%s: %.2g bytes per integer operation (uncached bcopy / cpu.integer)"
                      % (ctx.names[i], b))
            outcomes.append(o)
            margins.append("%s: %s" % (ctx.names[i], m))
    out.append(Conclusion(
        "Memory bandwidth has not kept up: bcopy moves 2.5-4 bytes per instruction on the "
        "CISC machines but only 0.4-1.0 on the RISC ones", "§7, Table 5",
        judge(outcomes),
        "; ".join(ev) if ev else "needs mem.bcopy and cpu.integer (osmeter run --suite o90)",
        "holds where bytes per instruction stay at or below the RISC machines' 1.0; "
        + STAND_IN_RULE, "; ".join(margins), rests_on=used))
    # 3. Remote file access costs.
    pens = [p for p in remote.penalties(ctx.runs) if p.bench == "mab.local"
            and p.metric == "total"]
    ok, margins, used = [], [], []
    for p in pens:
        local, far = _penalty_results(ctx, p)
        lo, hi = ratio_interval(far, local) if local and far else (None, None)
        o, m = against(p.remote / p.local, lo, hi, NFS_PENALTY, False, "× the local time")
        ok.append(o)
        used += [local, far]
        margins.append("%s against %s: %s" % (ctx.names[p.remote_run],
                                              ctx.names[p.local_run], m))
    out.append(Conclusion(
        "Remote file systems cost: NFS-based RISC workstations slow down by about 50% "
        "running the Andrew benchmark remotely (the MVAX2 by only 20%)", "§9, Table 8",
        judge(ok),
        "; ".join("remote penalty %+.0f%% (%s against %s)" % (
            p.pct, ctx.names[p.remote_run], ctx.names[p.local_run]) for p in pens) if pens else
        "no Andrew benchmark ran on a network file system here (osmeter run mab.local "
        "--dir LOCAL --dir REMOTE)",
        "holds where the MAB total on the network file system is at least %g× the local "
        "one (a penalty of 20%%, the smallest of Table 8: the MVAX2's; the RISC machines' "
        "was about 50%%), on the interval of the ratio; MAB is related, not like for like "
        "(Table 7)" % NFS_PENALTY, "; ".join(margins), rests_on=used))
    # 4. Synchronous metadata makes create-delete slow.
    ev, slow, margins, used = [], [], [], []
    for i in range(len(ctx.runs)):
        r = ctx.result(i, "fs.crtdel", "sequence", 0)
        used.append(r)
        w = ctx.value(i, "fs.crtdel", "sequence_fsync", 0)
        v = ctx.value(i, "fs.crtdel", "sequence", 0, unit="ms")
        if v is not None:
            lo, hi, _ = interval(r)
            ms = refs.convert(1.0, r.unit, "ms")
            o, m = against(v, lo * ms if lo is not None else None,
                           hi * ms if hi is not None else None, 35.0, False, "ms")
            ev.append("%s: %.3g ms without fsync%s" % (
                ctx.names[i], v, ", %.3g ms with fsync" % w if w is not None else ""))
            slow.append(o)
            margins.append("%s: %s" % (ctx.names[i], m))
    out.append(Conclusion(
        "Creating and deleting a file is slow on the UNIX derivatives (35-100 ms with no "
        "data) because their file systems write metadata synchronously; Sprite's delayed "
        "writes avoid it", "§11, Table 10",
        judge(slow),
        "; ".join(ev) + (" — far below 35 ms: today's file systems no longer write "
                         "metadata synchronously unless asked (fsync)" if ev and not any(slow)
                         else "") if ev else "needs fs.crtdel (osmeter run --suite o90)",
        "holds where create-use-delete of an empty file takes 35 ms or more (the "
        "UNIX derivatives' lower end)", "; ".join(margins), rests_on=used))
    return out


def view(ctx) -> StudyView:
    sections = [_table(ctx, "Table %d" % n) if n != 8 else _table8(ctx) for n in range(1, 11)]
    return StudyView(ID, TITLE, "J. K. Ousterhout, USENIX Summer 1990",
                     common.setup(REPORT), ctx.names, sections, _conclusions(ctx))
