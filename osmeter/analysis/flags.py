"""What may be wrong with a result, in two kinds kept apart, and what to do about it.

* **disturbed**: something outside the benchmark interfered while it ran (other busy
  processes on its CPUs, hypervisor steal above this machine's at rest, a change of the
  CPU clock, thermal throttling), by enough to explain a difference that `compare` would
  call a verdict (osmeter/analysis/monitor.py judges it).
* **imprecise**: the benchmark's own run-to-run spread is larger than its kind of
  benchmark reaches on a quiet machine (osmeter/analysis/precision.py, thresholds measured).
* **incomplete**: some repetitions failed and the rest were used.

A flag is stored with its result as a dict (kind, reason, text, advice, magnitude,
threshold, cpus); results stored by older versions carry plain strings, which are read
as kind "unreliable" and shown as they were.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

DISTURBED, IMPRECISE, INCOMPLETE, UNRELIABLE = "disturbed", "imprecise", "incomplete", "unreliable"

# reasons (the short words a flag is grouped and tagged by)
OTHER_PROCESSES = "other processes"
STEAL = "hypervisor steal"
CLOCK = "clock change"
THROTTLING = "thermal throttling"
SPREAD = "spread"
FAILED_REPETITIONS = "failed repetitions"


@dataclass
class Flag:
    kind: str                       # disturbed | imprecise | incomplete | unreliable (old runs)
    reason: str                     # one of the reasons above (old runs: the text)
    text: str                       # one sentence with the numbers
    advice: str = ""                # what the user can do
    magnitude: float | None = None  # how much it could change the result (fraction), or
                                    # its spread (imprecise); None where unknown
    threshold: float | None = None  # what the magnitude was judged against
    cpus: list | None = None        # the CPUs it concerns (None: all, or not known)

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None and v != ""}

    @property
    def legacy(self) -> bool:
        return self.kind == UNRELIABLE


def read(stored) -> Flag:
    """A stored warning: a dict written by this version, or an old plain string."""
    if isinstance(stored, Flag):
        return stored
    if isinstance(stored, dict):
        return Flag(kind=str(stored.get("kind") or UNRELIABLE),
                    reason=str(stored.get("reason") or ""),
                    text=str(stored.get("text") or stored.get("reason") or ""),
                    advice=str(stored.get("advice") or ""),
                    magnitude=_number(stored.get("magnitude")),
                    threshold=_number(stored.get("threshold")),
                    cpus=stored.get("cpus") if isinstance(stored.get("cpus"), list) else None)
    return Flag(kind=UNRELIABLE, reason=str(stored), text=str(stored))


def _number(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def of(result) -> list[Flag]:
    """The flags of a Result (or of anything with a `warnings` list)."""
    return [read(w) for w in (getattr(result, "warnings", None) or [])]


def texts(result) -> list[str]:
    return [f.text for f in of(result)]


def kinds(result) -> set[str]:
    return {f.kind for f in of(result)}


def standing(result) -> str | None:
    """The one word a result is counted under: disturbed before imprecise (a disturbed
    result's spread is no evidence about the benchmark), then incomplete, then
    unreliable (old runs); None when nothing is wrong."""
    mine = kinds(result)
    for kind in (DISTURBED, IMPRECISE, INCOMPLETE, UNRELIABLE):
        if kind in mine:
            return kind
    return None


def disturbance_text(result) -> str:
    """'other processes on CPU 1; hypervisor steal' for a disturbed result, else ''."""
    return "; ".join(dict.fromkeys(where(f) for f in of(result) if f.kind == DISTURBED))


def where(f: Flag) -> str:
    """A disturbance's reason with the CPUs it concerns."""
    if f.cpus:
        return "%s on CPU%s %s" % (f.reason, "s" if len(f.cpus) > 1 else "",
                                   ",".join(str(c) for c in f.cpus))
    return f.reason


def counted(results) -> list:
    """The results a run's count line is about: every measured one with a row of its
    own (not the phases too short to time alone)."""
    return [r for r in results if r.status == "ok" and (r.summary or {}).get("median")
            is not None and "once_per_repetition_s" not in (r.extra or {})]


def count_line(results) -> str:
    """The run in one line: '4 of 177 results disturbed (other processes on CPU 1 during
    ctx.*), 3 imprecise', so that a user sees at once whether it can be used."""
    measured = counted(results)
    if not measured:
        return ""
    by: dict[str, list] = {}
    for r in measured:
        s = standing(r)
        if s:
            by.setdefault(s, []).append(r)
    n = len(measured)
    if not by:
        return "%d result%s: none disturbed, none imprecise." % (n, "" if n == 1 else "s")
    if set(by) == {UNRELIABLE}:            # a run stored by an older version
        return ("%d of %d results marked unreliable by an older osmeter (which did not "
                "tell disturbed from imprecise)." % (len(by[UNRELIABLE]), n))
    parts = []
    disturbed = by.get(DISTURBED, [])
    parts.append("%d of %d result%s disturbed%s" % (
        len(disturbed), n, "" if n == 1 else "s",
        " (%s)" % _causes(disturbed, results) if disturbed else ""))
    parts.append("%d imprecise" % len(by.get(IMPRECISE, [])))
    for kind, word in ((INCOMPLETE, "with failed repetitions"),
                       (UNRELIABLE, "marked unreliable by an older osmeter")):
        if by.get(kind):
            parts.append("%d %s" % (len(by[kind]), word))
    return ", ".join(parts) + "."


def _causes(disturbed, results) -> str:
    """'other processes on CPU 1 during ctx.*, proc.fork; hypervisor steal during mem.*'"""
    benches: dict[str, list[str]] = {}
    for r in disturbed:
        for f in of(r):
            if f.kind == DISTURBED:
                who = benches.setdefault(where(f), [])
                if r.bench not in who:
                    who.append(r.bench)
    every = {}
    for r in results:
        every.setdefault(r.bench.split(".", 1)[0], set()).add(r.bench)
    return "; ".join("%s during %s" % (cause, bench_globs(names, every))
                     for cause, names in benches.items())


def bench_globs(names: list[str], every: dict[str, set], most: int = 4) -> str:
    """Benchmark ids, a whole family as 'ctx.*', at most `most` items then 'and N more'."""
    items = []
    for fam in dict.fromkeys(n.split(".", 1)[0] for n in names):
        mine = [n for n in names if n.split(".", 1)[0] == fam]
        if len(mine) > 1 and set(mine) >= every.get(fam, set()):
            items.append(fam + ".*")
        else:
            items += mine
    if len(items) > most:
        return "%s and %d more" % (", ".join(items[:most]), len(items) - most)
    return ", ".join(items)
