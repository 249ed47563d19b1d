"""The seed studies' published numbers as reference data, next to a run of today.

The numbers come from osmeter/data/seed-results.toml (a copy of the project's transcript
of the five studies; nothing in it is computed).  This module maps the printed tables
and prose numbers to osmeter's benchmark ids and units, so that a run can be put next to
"the DECstation 3100 of 1990 and the Pentium 100 of 1995" with speed-up columns, and
Ousterhout's MIPS-relative tables can be recomputed with this machine as one more row.

Only measurements that are the same experiment are mapped.  CC06's latency table names
no tool or procedure, so its rows are marked `related` (same quantity, unknown method).
O90's remote (diskless / NFS) configurations and the MAB tables are left out: osmeter
measures local file systems and its MAB is a different program.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

try:
    import tomllib
except ImportError:              # Python < 3.11: the same parser, as a package
    import tomli as tomllib

DATA = Path(__file__).resolve().parent / "data" / "seed-results.toml"

STUDY = {"ousterhout1990": "O90", "laibaker1996": "LB96", "mcgarry2005": "MG05",
         "vonleitner2003": "VL03", "camacho2006": "CC06"}

# Ousterhout's machines by the abbreviation that starts each row label (Table 1).
O90_MACHINE = {"M2000": "MIPS M2000", "DS3100": "DECstation 3100", "Sun4": "Sun-4/280",
               "8800": "VAX 8800", "Sun3": "Sun-3/75", "MVAX2": "MicroVAX II"}
O90_REFERENCE_ROW = "Sun3 SunOS 3.5"    # Ousterhout's reference for UNIX-derived systems
PENTIUM_100 = "Pentium P54C-100 (tnt.stanford.edu)"
P4_3GHZ = "Pentium 4 3 GHz (Asus P4-800SE)"

# Units: factor to a base unit of the kind (time -> ns, bandwidth -> bytes/s).
UNITS = {"ns": ("time", 1.0), "us": ("time", 1e3), "µs": ("time", 1e3),
         "ms": ("time", 1e6), "s": ("time", 1e9),
         "MB/s": ("bandwidth", 1e6), "Mbit/s": ("bandwidth", 1e6 / 8),
         "GB/s": ("bandwidth", 1e9), "KB/s": ("bandwidth", 1e3)}


def convert(value: float, from_unit: str, to_unit: str) -> float | None:
    a, b = UNITS.get(from_unit), UNITS.get(to_unit)
    if a is None or b is None or a[0] != b[0]:
        return None
    return value * a[1] / b[1]


@dataclass
class RefValue:
    """One published number, mapped to an osmeter benchmark."""
    study: str          # O90, LB96, MG05, CC06
    source: str         # "Table 2", "§5 (prose)"
    system: str         # "DS3100 Ultrix 3.1"
    machine: str        # "DECstation 3100"
    bench: str
    metric: str | None  # osmeter metric name, None = the bench's only metric
    x: object           # None (point), a number, or "peak" (best value over x)
    quantity: str       # what the number is
    value: float
    unit: str           # "ns", "us", "ms", "MB/s", "Mbit/s"
    better: str         # lower | higher
    qualifier: str = ""
    related: bool = False
    mips_relative: float | None = None   # as printed (O90)


# O90 tables: (table, column, bench, metric, x, unit, better, quantity)
_O90 = [
    ("Table 2", 0, "syscall.getpid", "latency", None, "us", "lower", "getpid"),
    ("Table 3", 0, "ctx.pipe_pingpong", "round_trip", None, "ms", "lower",
     "pipe round trip (2 context switches)"),
    ("Table 4", 0, "syscall.select", "1_empty", None, "us", "lower", "select, 1 pipe"),
    ("Table 4", 1, "syscall.select", "10_empty", None, "us", "lower", "select, 10 empty pipes"),
    ("Table 4", 2, "syscall.select", "10_full", None, "us", "lower", "select, 10 full pipes"),
    ("Table 5", 0, "mem.bcopy", "cached", None, "MB/s", "higher", "bcopy, cached"),
    ("Table 5", 1, "mem.bcopy", "uncached", None, "MB/s", "higher", "bcopy, uncached"),
    ("Table 6", 0, "fs.cache_read", None, None, "MB/s", "higher",
     "read from the file cache, 16 KB blocks"),
    ("Table 9", 0, "fs.openclose", "foo", None, "ms", "lower", "open+close 'foo'"),
    ("Table 9", 1, "fs.openclose", "a/b/c/foo", None, "ms", "lower",
     "open+close '/a/b/c/foo'"),
    ("Table 10", 0, "fs.crtdel", "sequence", 0, "ms", "lower", "create-use-delete, no data"),
    ("Table 10", 1, "fs.crtdel", "sequence", 10240, "ms", "lower", "create-use-delete, 10 KB"),
    ("Table 10", 2, "fs.crtdel", "sequence", 102400, "ms", "lower", "create-use-delete, 100 KB"),
]
# The tables whose last column is Ousterhout's MIPS-relative speed, and from which column.
O90_MIPS_TABLES = {"Table 2": 0, "Table 3": 0, "Table 4": 2, "Table 6": 0}

# Per-row benches of MG05 Tables 1-2 and CC06 Test 4 carry their own `bench`.
_CC06_RELATED = {"lat.syscall": ("syscall.getpid", "latency"),
                 "lat.ctx": ("ctx.pipe_pingpong", "per_switch"),
                 "lat.fork": ("proc.fork.dynamic", None),
                 "lat.exec": ("proc.exec.dynamic", None),
                 "lat.signal": ("lat.signal", "catch")}

# Numbers LB96 states in prose (its tables are lost): (bench, metric, x, how the
# [[stated]] entry's quantity starts).  ttcp's UDP bandwidth is what arrived (a sender
# can hand datagrams to send() faster than they are delivered), so `received`.
_LB96_PROSE = [
    ("ctx.pipe_pingpong", "round_trip", None, "context switch between two active processes"),
    ("ctx.pipe_self", None, None, "overhead of sending a byte"),
    ("net.udp_ttcp", "received", "peak", "UDP bandwidth (peak"),
    ("net.udp_ttcp", "received", "peak", "peak UDP bandwidth"),
    ("net.udp_ttcp", "received", "peak", "UDP bandwidth"),
    ("mem.read", None, "peak", "peak read bandwidth from the first-level cache"),
    ("mem.write_prefetch", None, "peak", "peak write bandwidth of the prefetching"),
    ("mem.copy_prefetch", None, "peak", "peak copy bandwidth of the prefetching"),
]
CTX_AMBIGUOUS = " (the text does not say per switch or per round trip; set against the round trip)"
_UNIT_WORDS = {"microseconds": "us", "megabytes/second": "MB/s", "megabits/second": "Mbit/s",
               "Megabits/second": "Mbit/s", "ns": "ns", "ms": "ms"}


@lru_cache(maxsize=1)
def load() -> dict:
    with open(DATA, "rb") as f:
        return tomllib.load(f)


def _table(report: str, name: str) -> dict:
    for t in load()["table"]:
        if t["report"] == report and t["table"] == name:
            return t
    raise KeyError("%s %s not in %s" % (report, name, DATA.name))


def o90_mips() -> dict[str, float]:
    """Ousterhout's MIPS ratings by abbreviation (Table 1)."""
    return {row["values"][0]: float(row["values"][2])
            for row in _table("ousterhout1990", "Table 1")["rows"]}


def _num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@lru_cache(maxsize=1)
def references() -> list[RefValue]:
    """Every published number osmeter can put a run next to."""
    out: list[RefValue] = []
    for table, col, bench, metric, x, unit, better, quantity in _O90:
        t = _table("ousterhout1990", table)
        mips_col = len(t["columns"]) - 1 if table in O90_MIPS_TABLES and \
            O90_MIPS_TABLES[table] == col else None
        for row in t["rows"]:
            if "Remote" in row["label"]:
                continue
            v = _num(row["values"][col])
            if v is None:
                continue
            abbrev = row["label"].split()[0]
            system = row["label"].replace(" Local", "")
            out.append(RefValue("O90", table, system, O90_MACHINE.get(abbrev, abbrev), bench,
                                metric, x, quantity, v, unit, better,
                                mips_relative=_num(row["values"][mips_col])
                                if mips_col is not None else None))
    for table in ("Table 1", "Table 2"):
        t = _table("mcgarry2005", table)
        for row in t["rows"]:
            for system, v in zip(t["columns"], row["values"]):
                if _num(v) is not None:
                    ctx = row["bench"] == "ctx.pipe_pingpong"
                    out.append(RefValue("MG05", table, system, P4_3GHZ, row["bench"],
                                        "round_trip" if ctx else None, None,
                                        row["label"] + (CTX_AMBIGUOUS if ctx else ""),
                                        float(v), "us", "lower"))
    t = _table("camacho2006", "Test 4: Latencia tests")
    for row in t["rows"]:
        bench, metric = _CC06_RELATED[row["bench"]]
        for system, v in zip(t["columns"], row["values"]):
            if _num(v) is not None:
                out.append(RefValue("CC06", "Test 4", system, "not stated in the text", bench,
                                    metric, None, row["label"] + " (%s)" % row["bench"],
                                    float(v), row["unit"], "lower",
                                    related=row["bench"] != "lat.signal"))
    for st in load()["stated"]:
        if st["report"] != "laibaker1996" or _num(st.get("value")) is None:
            continue
        unit = _UNIT_WORDS.get(st.get("unit", ""))
        if unit is None:
            continue
        for bench, metric, x, q in _LB96_PROSE:
            if st["bench"] == bench and st["quantity"].startswith(q):
                sysname = st.get("system") or "all three systems"
                if "Linux 1.3.40" in sysname:      # a development kernel, future work
                    break
                quantity = st["quantity"] + (CTX_AMBIGUOUS if bench == "ctx.pipe_pingpong"
                                             else "")
                out.append(RefValue("LB96", "§%s (prose)" % st["section"].split()[0].rstrip("."),
                                    sysname, PENTIUM_100, bench, metric, x, quantity,
                                    float(st["value"]), unit,
                                    "lower" if UNITS[unit][0] == "time" else "higher",
                                    qualifier=st.get("qualifier", "")))
                break
    return out


# ---- putting a run next to them ----------------------------------------------------------

def _candidates(run, bench: str, metric: str | None):
    res = [r for r in run.results if r.bench == bench and r.status == "ok"]
    if metric is not None:
        exact = [r for r in res if r.metric == metric]
        if exact:
            return exact
    metrics = {r.metric for r in res}
    # Without the exact metric name, only an unambiguous single metric will do.
    return res if len(metrics) == 1 else []


def _median(r) -> float | None:
    m = (r.summary or {}).get("median")
    if m is None and r.samples:
        from statistics import median
        m = median(s.value for s in r.samples)
    return m


def measured(run, ref: RefValue) -> tuple[float, str, str] | None:
    """(value in the reference's unit, osmeter unit label, result label) or None."""
    cands = [r for r in _candidates(run, ref.bench, ref.metric) if UNITS.get(r.unit)]
    if ref.x is None:
        cands = [r for r in cands if r.x is None]
    elif ref.x == "peak":
        cands = [r for r in cands if _median(r) is not None]
        if cands:
            key = (lambda r: _median(r)) if ref.better == "higher" else (lambda r: -_median(r))
            cands = [max(cands, key=key)]
    else:
        cands = [r for r in cands if r.x is not None and float(r.x) == float(ref.x)]
    if len(cands) != 1:
        return None
    r = cands[0]
    m = _median(r)
    if m is None:
        return None
    v = convert(m, r.unit, ref.unit)
    if v is None:
        return None
    return v, r.unit, r.label


def mips_relative(ref_value: float, value: float, better: str, mips: float,
                  ref_mips: float) -> float:
    """Ousterhout's MIPS-relative speed of a machine against the reference machine:
    how much faster it is, divided by how much faster its CPU is (1 = kept pace)."""
    faster = ref_value / value if better == "lower" else value / ref_value
    return faster / (mips / ref_mips)


def speedup(ref: RefValue, ours: float) -> float | None:
    """How many times faster this machine is than the reference (> 1 = faster)."""
    if ours <= 0 or ref.value <= 0:
        return None
    return ref.value / ours if ref.better == "lower" else ours / ref.value


@dataclass
class RefRow:
    ref: RefValue
    ours: list[float | None]          # per run, in ref.unit
    speedups: list[float | None]
    labels: list[str | None]


def against(runs: list) -> list[RefRow]:
    """Every reference value next to each run's matching result (None if not measured)."""
    rows = []
    for ref in references():
        ours, ups, labels = [], [], []
        for run in runs:
            m = measured(run, ref)
            ours.append(m[0] if m else None)
            labels.append(m[2] if m else None)
            ups.append(speedup(ref, m[0]) if m else None)
        rows.append(RefRow(ref, ours, ups, labels))
    return rows


@dataclass
class MipsTable:
    table: str
    caption: str
    unit: str
    quantity: str
    rows: list[tuple[str, float | None, float, float | None]]   # system, MIPS, value, printed mips-rel
    ours: list[tuple[str, float, float, float]]                 # run name, "MIPS", value, recomputed


def ousterhout_tables(runs: list, cpu_speeds: list[float | None]) -> list[MipsTable]:
    """O90 Tables 2, 3, 4 and 6 with each run as one more row, MIPS-relative recomputed:

        mips_relative = (T_sun3 / T_machine) / (MIPS_machine / MIPS_sun3)       (times)
        mips_relative = (B_machine / B_sun3) / (MIPS_machine / MIPS_sun3)       (bandwidths)

    with Sun3 SunOS 3.5 as the reference and the run's cpu.integer rate (millions of
    integer operations per second) standing in for its MIPS rating."""
    mips = o90_mips()
    out = []
    for table, col in O90_MIPS_TABLES.items():
        t = _table("ousterhout1990", table)
        quantity = next(s[7] for s in _O90 if s[0] == table and s[1] == col)
        refs = [r for r in references() if r.study == "O90" and r.source == table
                and r.quantity == quantity]
        if not refs:
            continue
        sun3 = next((r for r in refs if r.system == O90_REFERENCE_ROW), None)
        rows = [(r.system, mips.get(r.system.split()[0]), r.value, r.mips_relative)
                for r in refs]
        ours = []
        if sun3 is not None:
            for run, speed in zip(runs, cpu_speeds):
                m = measured(run, refs[0])
                if m is None or not speed:
                    continue
                value = m[0]
                if value > 0:
                    ours.append((run.name, speed, value, mips_relative(
                        sun3.value, value, sun3.better, speed, mips["Sun3"])))
        out.append(MipsTable(table, t["caption"], refs[0].unit, refs[0].quantity, rows, ours))
    return out


STAND_IN = ("MIPS for this machine = the cpu.integer rate: millions of C-level integer "
            "operations per second of a fixed LCG/xor/shift/table/branch loop.  "
            "Ousterhout's 1990 ratings were his own estimates of base integer performance; "
            "the recomputed MIPS-relative value of a modern machine says how far the OS "
            "operation kept up with plain integer speed, to an order of magnitude.")
