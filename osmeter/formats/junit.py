"""JUnit XML for the regression gate, so Jenkins, GitLab and GitHub test reporters show it.

The writer takes a small explicit input, one GateCase per judged benchmark row and
candidate run: a name, an outcome (pass, fail or undecided), a one-line message and the
numbers behind it.  A failure is a JUnit <failure> with the message and the numbers; an
undecided row is <skipped> with its reason (too few repetitions, not measured in one of
the runs); a pass carries its numbers in <system-out>.  `cases_from_comparison` builds
the cases from today's gate (compare.regressions); a gate that decides each row itself
only needs to hand over its rows.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

OUTCOMES = ("pass", "fail", "undecided")
# XML 1.0 cannot hold these characters at all, escaped or not.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass
class GateCase:
    name: str                   # what was judged, e.g. "syscall.getpid: pr-123 vs main"
    outcome: str                # pass | fail | undecided
    message: str                # one line: the verdict and why
    numbers: dict = field(default_factory=dict)    # name -> number or text, shown as is
    group: str = "osmeter"      # JUnit classname, e.g. "osmeter.syscall"


def _text(s) -> str:
    return _NOT_XML.sub("?", str(s))


def _numbers(case: GateCase) -> str:
    return "\n".join("%s: %s" % (k, "—" if v is None else (
        "%.6g" % v if isinstance(v, float) else v)) for k, v in case.numbers.items())


def render(cases: list[GateCase], suite: str, properties: dict | None = None) -> str:
    """The JUnit XML document (one <testsuite>) for the cases."""
    for c in cases:
        if c.outcome not in OUTCOMES:
            raise ValueError("outcome %r is not one of %s" % (c.outcome, ", ".join(OUTCOMES)))
    counts = {o: sum(1 for c in cases if c.outcome == o) for o in OUTCOMES}
    totals = {"tests": str(len(cases)), "failures": str(counts["fail"]), "errors": "0",
              "skipped": str(counts["undecided"])}
    root = ET.Element("testsuites", dict(name="osmeter", **totals))
    ts = ET.SubElement(root, "testsuite", dict(name=_text(suite), **totals))
    if properties:
        props = ET.SubElement(ts, "properties")
        for k, v in properties.items():
            ET.SubElement(props, "property", name=_text(k), value=_text(v))
    for c in cases:
        tc = ET.SubElement(ts, "testcase", classname=_text(c.group), name=_text(c.name))
        detail = _text(_numbers(c))
        if c.outcome == "fail":
            ET.SubElement(tc, "failure", message=_text(c.message), type="regression").text = \
                detail
        elif c.outcome == "undecided":
            ET.SubElement(tc, "skipped", message=_text(c.message))
            if detail:
                ET.SubElement(tc, "system-out").text = detail
        elif detail:
            ET.SubElement(tc, "system-out").text = _text(c.message) + "\n" + detail
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


# ---- today's gate -> cases ------------------------------------------------------------

def write_gate(cmp, path: str) -> None:
    """The comparison's gate as a JUnit file (ExchangeError, one line, if it cannot be)."""
    from ..exchange import write_atomically
    base = cmp.names[cmp.baseline]
    text = render(cases_from_comparison(cmp), "osmeter regression gate against %s" % base, {
        "baseline": base, "fail_on_slower_pct": cmp.gate_pct, "alpha": cmp.alpha,
        "runs": ", ".join(cmp.names)})
    write_atomically(path, text)


def cases_from_comparison(cmp) -> list[GateCase]:
    """One case per row the gate looks at and per run other than the baseline."""
    from .. import compare as cmpmod
    from .. import significance as sig
    failed = {(id(row), i): (pct, p) for row, i, pct, p in cmp.regressions}
    b = cmp.baseline
    base_name = cmp.names[b]
    cases = []
    for row in cmp.rows:
        if row.shape == "derived" or row.bench == cmpmod.CPU_BENCH:
            continue        # the gate does not judge these
        base = row.cells[b]
        for i, cell in enumerate(row.cells):
            if i == b:
                continue
            name = cmp.names[i]
            numbers = {"unit": row.unit, "threshold_pct": cmp.gate_pct,
                       "baseline_median": base.median if base else None,
                       "baseline_ci": _interval(base),
                       "candidate_median": cell.median if cell else None,
                       "candidate_ci": _interval(cell)}
            case = GateCase(name="%s: %s vs %s" % (row.label, name, base_name),
                            outcome="pass", message="", numbers=numbers,
                            group="osmeter.%s" % row.category)
            missing = [(n, c) for n, c in ((base_name, base), (name, cell))
                       if c is None or c.status != "ok" or not c.reps]
            if missing:
                n, c = missing[0]
                case.outcome = "undecided"
                case.message = "not measured in %s%s" % (
                    n, "" if c is None else ": %s %s" % (c.status, c.reason or ""))
            elif (id(row), i) in failed:
                pct, p = failed[(id(row), i)]
                numbers.update(slower_pct=pct, p=p)
                case.outcome = "fail"
                case.message = "%s is %.1f%% slower in %s than in %s (p=%.2g; threshold %g%%)" \
                    % (row.label, pct, name, base_name, p, cmp.gate_pct)
            elif cell.ratio is None:
                case.outcome = "undecided"
                case.message = "no speed ratio: a median is not positive"
            elif sig.min_p_value(len(base.reps), len(cell.reps), False) >= cmp.alpha:
                case.outcome = "undecided"
                case.message = ("too few repetitions to judge (%d vs %d; use --runs 4 or more)"
                                % (len(base.reps), len(cell.reps)))
            else:
                numbers["speed_ratio"] = cell.ratio
                case.message = "not slower than %s by more than %g%% (speed ratio %.3f)" % (
                    base_name, cmp.gate_pct, cell.ratio)
            cases.append(case)
    return cases


def _interval(cell) -> str | None:
    if cell is None or cell.ci_low is None or cell.ci_high is None:
        return None
    return "%.6g to %.6g" % (cell.ci_low, cell.ci_high)
