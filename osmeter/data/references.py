"""The seed studies' published numbers as reference data: the ground floor of the studies.

The numbers come from osmeter/data/seed-results.toml (a copy of the project's transcript
of the five studies; nothing in it is computed).  This module reads the data, enumerates
every published number, converts units and holds the types a study states its numbers
in.  What each number is -- which benchmark, metric, size and unit it is set against, or
why it cannot be compared -- is study knowledge and lives in osmeter/studies/ (one module
per study).  Putting a run's results next to a reference is osmeter/analysis/matching.py; the
gathering over all the studies (every reference, the coverage, a run against all of
them) is osmeter/studies/__init__.py.  This module imports neither.

Every published number is accounted for (`studies.coverage()`): set beside a result of
ours (`RefValue`), recomputed for this machine (`Derived`: MIPS-relative speeds, bytes per
instruction, the remote penalty, the conclusions' ranges), compared as a curve class
(`GraphRef`), or listed as not comparable with the reason (`NotComparable`).
tests/test_studies.py fails on a number that is none of these.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

try:
    import tomllib
except ImportError:              # Python < 3.11: the same parser, as a package
    import tomli as tomllib

DATA = Path(__file__).resolve().parent / "seed-results.toml"

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


class Printed(float):
    """A published number that formats as the paper printed it (544.7, not 545; 0.9, not
    0.900): a float for arithmetic, its printed digits for display (`text`)."""

    def __new__(cls, value):
        obj = super().__new__(cls, value)
        text = repr(float(value)) if not isinstance(value, int) else str(value)
        obj.text = text[:-2] if text.endswith(".0") else text
        return obj


def printed(v):
    """A published value for a table cell: a number as Printed, anything else as it is."""
    return Printed(v) if num(v) is not None else v


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
    stands_for: str = ""                # a stand-in: what of the paper's our metric stands for
    x_unit: str = "bytes"               # what x counts (Camacho's XMMS rows: instances)

    @property
    def mapping(self) -> str:
        """What the pairing is: "like for like" (the same quantity, the same method),
        "related" (the same quantity by another method; the note says the difference) or
        "stand-in" (another quantity in place of the paper's; stands_for says which)."""
        return "stand-in" if self.stands_for else "related" if self.related else \
            "like for like"

    def mapping_words(self) -> str:
        """The mapping in a sentence: its kind, the difference or what it stands for, and
        the size it was set against."""
        words = self.mapping
        if self.stands_for:
            words += " for " + self.stands_for
        size = self.size_words()
        parts = [p for p in (self.note, size and "set against " + size) if p]
        return words + (": " + "; ".join(parts) if parts else "")

    def size_words(self) -> str:
        """The size of ours a number was set against: '10 KB', 'the peak', ''."""
        if self.x is None:
            return ""
        if self.x == "peak":
            return "the peak over the sweep"
        if self.x == "largest":
            return "the largest size of the sweep"
        x = float(self.x)
        if self.x_unit != "bytes":
            return "%g %s" % (x, self.x_unit)
        for unit, f in (("MB", 1 << 20), ("KB", 1 << 10)):
            if x >= f and x % f == 0:
                return "%g %s" % (x / f, unit)
        return "%g bytes" % x


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


STAND_IN = ("MIPS for this machine = the cpu.integer rate: millions of C-level integer "
            "operations per second of a fixed LCG/xor/shift/table/branch loop.  "
            "Ousterhout's 1990 ratings were his own estimates of base integer performance; "
            "the recomputed MIPS-relative value of a modern machine says how far the OS "
            "operation kept up with plain integer speed, to an order of magnitude.")
