"""The seed studies' published numbers as reference data, next to a run of today.

The numbers come from osmeter/data/seed-results.toml (a copy of the project's transcript
of the five studies; nothing in it is computed).  This module is the engine: it reads the
data, enumerates every published number, converts units and puts a run's results next to
a reference.  What each number is -- which benchmark, metric, size and unit it is set
against, or why it cannot be compared -- is study knowledge and lives in osmeter/studies/
(one module per study), which also lays each study out in the paper's order.

Every published number is accounted for (`coverage()`): set beside a result of ours
(`RefValue`), recomputed for this machine (`Derived`: MIPS-relative speeds, bytes per
instruction, the remote penalty, the conclusions' ranges), compared as a curve class
(`GraphRef`), or listed as not comparable with the reason (`NotComparable`).
tests/test_studies.py fails on a number that is none of these.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from . import remote

try:
    import tomllib
except ImportError:              # Python < 3.11: the same parser, as a package
    import tomli as tomllib

DATA = Path(__file__).resolve().parent / "data" / "seed-results.toml"

# Units: (kind, factor to the kind's base unit: time -> ns, bandwidth -> bytes/s).
UNITS = {"ns": ("time", 1.0), "us": ("time", 1e3), "µs": ("time", 1e3),
         "ms": ("time", 1e6), "s": ("time", 1e9),
         "MB/s": ("bandwidth", 1e6), "Mbit/s": ("bandwidth", 1e6 / 8),
         "GB/s": ("bandwidth", 1e9), "KB/s": ("bandwidth", 1e3),
         "%": ("percent", 1.0), "index": ("index", 1.0),
         "Mops/s": ("integer rate", 1.0), "MIPS": ("integer rate", 1.0)}


# Operations per second: the time per operation is their inverse (bonnie's seeks/s is set
# against Lai & Baker's "14 ms per seek").
RATES = {"seeks/s", "ops/s"}


def convert(value: float, from_unit: str, to_unit: str) -> float | None:
    if from_unit in RATES and UNITS.get(to_unit, ("",))[0] == "time":
        return convert(1e9 / value, "ns", to_unit) if value > 0 else None
    a, b = UNITS.get(from_unit), UNITS.get(to_unit)
    if a is None or b is None or a[0] != b[0]:
        return None
    return value * a[1] / b[1]


# ---- the data file ------------------------------------------------------------------------

@lru_cache(maxsize=1)
def load() -> dict:
    with open(DATA, "rb") as f:
        return tomllib.load(f)


def table(report: str, name: str) -> dict:
    for t in load()["table"]:
        if t["report"] == report and t["table"] == name:
            return t
    raise KeyError("%s %s not in %s" % (report, name, DATA.name))


def stated(report: str) -> list[dict]:
    return [s for s in load()["stated"] if s["report"] == report]


def graphs(report: str) -> list[dict]:
    return [g for g in load()["graph"] if g["report"] == report]


def report_entry(report: str) -> dict:
    return next(r for r in load()["report"] if r["id"] == report)


def num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class Published:
    """One published number (or, for a [[graph]], one published curve verdict)."""
    key: str
    report: str
    kind: str           # table | stated | graph | report
    where: str          # the table, the section, the figure, or "report"
    label: str          # the row label, the quantity, the OS, or the field
    column: str = ""    # the table column, or the position in a stated list
    system: str = ""    # the stated entry's system
    value: object = None


def table_key(report: str, table_name: str, label: str, column: str) -> str:
    return "%s | %s | %s | %s" % (report, table_name, label, column)


def stated_key(st: dict, index: int | None = None) -> str:
    return "%s | %s | %s | %s%s" % (st["report"], st["section"], st["quantity"],
                                    st.get("system", ""),
                                    "" if index is None else " [%d]" % index)


def graph_key(g: dict, result: dict) -> str:
    return "%s | %s | %s" % (g["report"], g["figure"], result["os"])


@lru_cache(maxsize=1)
def published_numbers() -> tuple[Published, ...]:
    """Every number of the data file, and every curve verdict of its [[graph]] entries."""
    out = []
    data = load()
    for r in data["report"]:
        for k, v in r.items():
            if num(v) is not None:
                out.append(Published("%s | report | %s" % (r["id"], k), r["id"], "report",
                                     "report", k, value=v))
    for t in data["table"]:
        for row in t["rows"]:
            for col, v in zip(t["columns"], row["values"]):
                if num(v) is not None:
                    out.append(Published(table_key(t["report"], t["table"], row["label"], col),
                                         t["report"], "table", t["table"], row["label"], col,
                                         value=v))
    for st in data["stated"]:
        values = st["value"] if isinstance(st["value"], list) else [st["value"]]
        many = isinstance(st["value"], list)
        for i, v in enumerate(values):
            if num(v) is not None:
                out.append(Published(stated_key(st, i if many else None), st["report"],
                                     "stated", st["section"], st["quantity"],
                                     str(i) if many else "", st.get("system", ""), v))
    for g in data["graph"]:
        for res in g["result"]:
            out.append(Published(graph_key(g, res), g["report"], "graph", g["figure"],
                                 res["os"], value=res["shape"]))
    return tuple(out)


# ---- what a published number is -------------------------------------------------------------

@dataclass
class RefValue:
    """A published number set beside one of osmeter's results."""
    study: str          # O90, LB96, VL03, MG05, CC06
    source: str         # "Table 2", "§5 (prose)"
    system: str         # "DS3100 Ultrix 3.1"
    machine: str        # "DECstation 3100"
    bench: str
    metric: str         # the osmeter metric it is set against
    x: object           # None (point), a number, "peak" (best over x) or "largest" (max x)
    quantity: str       # what the number is
    value: float
    unit: str           # the paper's unit: "ns", "us", "ms", "s", "MB/s", "Mbit/s", ...
    better: str         # lower | higher
    key: str = ""       # the Published number it is
    qualifier: str = ""
    related: bool = False               # same quantity, another or an unknown method
    mips_relative: float | None = None  # as printed (O90)
    remote: bool | None = None          # a remote (True) / local (False) configuration
    note: str = ""                      # what to know when reading it


@dataclass
class Derived:
    """A published number that osmeter recomputes for this machine (a MIPS-relative
    speed, bytes per instruction, a remote penalty, a conclusion's range)."""
    key: str
    how: str


@dataclass
class GraphRef:
    """A published curve verdict ("O(1)", "O(n)") set beside our curve class."""
    key: str
    study: str
    figure: str
    os: str
    shape: str          # as published
    cls: str            # the class it states, in curves.py's names
    bench: str          # our benchmark
    metric: str


@dataclass
class NotComparable:
    """Published numbers that no result of osmeter can be set beside, and why.  The
    fields that are given select them: kind, where (table, section or figure), label
    (row, quantity or OS), column."""
    reason: str
    kind: str
    report: str
    where: str | None = None
    label: str | None = None
    column: str | None = None

    def matches(self, p: Published) -> bool:
        return p.kind == self.kind and p.report == self.report and all(
            want is None or want == got for want, got in
            ((self.where, p.where), (self.label, p.label), (self.column, p.column)))

    @property
    def title(self) -> str:
        return " / ".join(s for s in (self.where, self.label, self.column) if s) or self.kind


def _studies():
    from . import studies          # the study modules import this one
    return studies


def references() -> list[RefValue]:
    """Every published number osmeter can put a run next to."""
    return [r for m in _studies().modules() for r in m.references()]


def graph_refs() -> list[GraphRef]:
    return [g for m in _studies().modules() for g in m.graph_refs()]


def derived() -> list[Derived]:
    return [d for m in _studies().modules() for d in m.derived()]


def not_comparable() -> list[NotComparable]:
    return [n for m in _studies().modules() for n in m.NOT_COMPARABLE]


def coverage() -> list[tuple[Published, list]]:
    """Every published number with what accounts for it: RefValue, Derived, GraphRef or
    NotComparable entries (an empty list: nothing does)."""
    by_key: dict[str, list] = {}
    for item in [*references(), *derived(), *graph_refs()]:
        by_key.setdefault(item.key, []).append(item)
    rules = not_comparable()
    return [(p, by_key.get(p.key, []) + [r for r in rules if r.matches(p)])
            for p in published_numbers()]


# ---- putting a run next to them ----------------------------------------------------------

@dataclass
class Match:
    """A reference's counterpart in one run: the value in the reference's unit, or why
    there is none.  `why` is "not measured" only when the benchmark did not run."""
    value: float | None = None
    result: object = None
    why: str = ""
    detail: str = ""


LEVELS = ["L1", "L2", "L3", "L4", "memory"]


def _spans_level(metric: str, wanted: str) -> bool:
    """Whether a plateau metric ("bandwidth.plateau.L1-L2") spans the cache level another
    names ("bandwidth.plateau.L2"): the plateau-finder joins levels it cannot tell apart."""
    base, _, label = metric.partition(".plateau.")
    wbase, _, level = wanted.partition(".plateau.")
    ends = label.split("#")[0].split("-")
    if base != wbase or level not in LEVELS or not all(e in LEVELS for e in ends):
        return False
    return LEVELS.index(ends[0]) <= LEVELS.index(level) <= LEVELS.index(ends[-1])


def _sizes(results) -> str:
    xs = sorted({r.x for r in results if r.x is not None})
    return ", ".join("%g" % x for x in xs) or "none"


def measured(run, ref: RefValue) -> Match:
    # A remote or local configuration: the same experiment under either of its ids.
    same = {ref.bench} | ({b for b, local in remote.SAME_EXPERIMENT.items() if local == ref.bench}
                          if ref.remote is not None else set())
    mine = [r for r in run.results if r.bench in same]
    if not mine:
        return Match(why="not measured", detail="%s did not run (osmeter run %s)"
                     % (ref.bench, ref.bench))
    ok = [r for r in mine if r.status == "ok"]
    if not ok:
        return Match(why=mine[0].status, detail="%s %s: %s" % (ref.bench, mine[0].status,
                                                              mine[0].reason or ""))
    if ref.remote is not None:
        want = "remote" if ref.remote else "local"
        placed = [r for r in ok if (remote.where(run, r) or "local") == want]
        if not placed:
            return Match(why="not here", detail="%s ran only on a %s file system" % (
                ref.bench, "local" if ref.remote else "remote"))
        ok = placed
    cands = [r for r in ok if r.metric == ref.metric and (r.unit in UNITS or r.unit in RATES)]
    if not cands and ".plateau." in ref.metric:   # the first plateau that spans the level
        cands = [r for r in ok if _spans_level(r.metric, ref.metric)][:1]
    if not cands:
        if ".plateau." in ref.metric:
            label = ref.metric.rsplit(".", 1)[-1]
            return Match(why="not found", detail="no %s plateau in this run's %s curve "
                         "(sizes %s)" % (label, ref.bench, _sizes(ok)))
        return Match(why="not found", detail="%s has no metric %s" % (ref.bench, ref.metric))
    valued = [r for r in cands if r.median is not None]
    if ref.x is None:
        chosen = [r for r in valued if r.x is None]
    elif ref.x == "peak":
        sign = 1 if ref.better == "higher" else -1
        chosen = [max(valued, key=lambda r: sign * r.median)] if valued else []
    elif ref.x == "largest":
        sized = [r for r in valued if r.x is not None]
        chosen = [max(sized, key=lambda r: r.x)] if sized else []
    else:
        chosen = [r for r in valued if r.x is not None and float(r.x) == float(ref.x)]
    if len(chosen) != 1:
        return Match(why="not found", detail="%s ran without %s=%g (sizes %s)" % (
            ref.bench, cands[0].x_name or "x", float(ref.x), _sizes(cands))
            if isinstance(ref.x, (int, float)) else "%s: no value" % ref.bench)
    r = chosen[0]
    v = convert(r.median, r.unit, ref.unit)
    if v is None:
        return Match(why="not found", detail="%s in %s cannot be set against %s"
                     % (ref.bench, r.unit, ref.unit))
    return Match(value=v, result=r)


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
    why: list[str] = field(default_factory=list)      # per run: "" or the reason kind
    detail: list[str] = field(default_factory=list)   # per run: the reason


def against(runs: list) -> list[RefRow]:
    """Every reference value next to each run's matching result, or the reason there is
    none ("not measured" only where the benchmark did not run)."""
    rows = []
    for ref in references():
        matches = [measured(run, ref) for run in runs]
        rows.append(RefRow(ref, [m.value for m in matches],
                           [speedup(ref, m.value) if m.value is not None else None
                            for m in matches],
                           [m.result.label if m.result is not None else None for m in matches],
                           [m.why for m in matches], [m.detail for m in matches]))
    return rows


def curve_of(run, bench: str, metric: str) -> dict | None:
    """Our curve class of a benchmark in a run: the scatter's stored classification, or a
    sweep's points classified (every sample at its x) -- None when it did not run."""
    from . import curves
    res = [r for r in run.results if r.bench == bench and r.metric == metric
           and r.status == "ok"]
    if not res:
        return None
    if res[0].shape == "scatter":
        c = (res[0].extra or {}).get("curve") or {}
        return c.get("all") or c
    pts = [(s.x, s.value) for r in res for s in r.samples if s.x is not None]
    return curves.classify(pts, detect_bands=False)


# ---- Ousterhout's MIPS-relative speed ----------------------------------------------------

def mips_relative(ref_value: float, value: float, better: str, mips: float,
                  ref_mips: float) -> float:
    """Ousterhout's MIPS-relative speed of a machine against the reference machine:
    how much faster it is, divided by how much faster its CPU is (1 = kept pace)."""
    faster = ref_value / value if better == "lower" else value / ref_value
    return faster / (mips / ref_mips)


def o90_mips() -> dict[str, float]:
    """Ousterhout's MIPS ratings by abbreviation (Table 1)."""
    return {row["values"][0]: float(row["values"][2])
            for row in table("ousterhout1990", "Table 1")["rows"]}


@dataclass
class MipsTable:
    table: str
    caption: str
    unit: str
    quantity: str
    rows: list[tuple[str, float | None, float, float | None]]   # system, MIPS, value, printed mips-rel
    ours: list[tuple[str, float, float, float]]                 # run name, "MIPS", value, recomputed


def ousterhout_tables(runs: list, cpu_speeds: list[float | None]) -> list[MipsTable]:
    """O90 Tables 2, 3, 4 and 6 with each run as one more row, MIPS-relative recomputed
    (see osmeter/studies/o90.py)."""
    from .studies import o90
    return o90.mips_tables(runs, cpu_speeds)


STAND_IN = ("MIPS for this machine = the cpu.integer rate: millions of C-level integer "
            "operations per second of a fixed LCG/xor/shift/table/branch loop.  "
            "Ousterhout's 1990 ratings were his own estimates of base integer performance; "
            "the recomputed MIPS-relative value of a modern machine says how far the OS "
            "operation kept up with plain integer speed, to an order of magnitude.")
