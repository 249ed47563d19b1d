"""JUnit XML for the regression gate, so Jenkins, GitLab and GitHub test reporters show it.

The writer takes a small explicit input, one GateCase per judged benchmark row and
candidate run: a name, an outcome (pass, fail or undecided), a one-line message and the
numbers behind it.  A failure is a JUnit <failure> with the message and the numbers; an
undecided row (too noisy to tell, or not measured in one of the runs) is <skipped> with
its reason and the numbers as its text (GitLab drops a skipped case's <system-out>); a
pass carries its numbers in <system-out>.  `cases_from_gate` builds the cases from the
regression gate's rows (osmeter/analysis/gate.py), with both runs' medians and intervals;
their names and messages are the gate's words (report/gate_words.py).

The file is valid against the Jenkins xunit plugin's junit-10.xsd (tests/junit-10.xsd):
the counts on <testsuites> are tests, failures and errors only (`skipped` is allowed on
<testsuite> alone).  Every case's classname is GROUP ("osmeter gate"): not a path,
so that reporters which turn a classname into a file name annotate no file, and the
benchmark's family is named once, in the case's name.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from ..report import gate_words

OUTCOMES = ("pass", "fail", "undecided")
# XML 1.0 cannot hold these characters at all, escaped or not.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass
class GateCase:
    name: str                   # what was judged, e.g. "syscall.getpid: pr-123 vs main"
    outcome: str                # pass | fail | undecided
    message: str                # one line: the verdict and why
    numbers: dict = field(default_factory=dict)    # name -> number or text, shown as is
    group: str = "osmeter gate"     # JUnit classname


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
    root = ET.Element("testsuites", dict(name="osmeter", tests=totals["tests"],
                                         failures=totals["failures"], errors="0"))
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
            ET.SubElement(tc, "skipped", message=_text(c.message)).text = detail or None
            if detail:
                ET.SubElement(tc, "system-out").text = detail
        elif detail:
            ET.SubElement(tc, "system-out").text = _text(c.message) + "\n" + detail
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


# ---- the gate -> cases ----------------------------------------------------------------

def write_gate(gate, cmp, path: str) -> None:
    """The gate (gate.Gate) of the comparison as a JUnit file (ExchangeError, one line,
    if it cannot be written)."""
    from ..data.exchange import write_atomically
    base = cmp.names[cmp.baseline]
    text = render(cases_from_gate(gate, base, medians_of(cmp)), gate_words.junit_title(base), {
        "baseline": base, "fail_on_slower_pct": gate.threshold_pct, "alpha": gate.alpha,
        "outcome": gate.outcome, "noise_profile": gate.noise or "none",
        "runs": ", ".join(cmp.names)})
    write_atomically(path, text)


# Gate row outcome -> JUnit outcome.  A row one side did not measure cannot be judged:
# like an undecided one it is a skipped test case, with its reason.
_OUTCOME = {"pass": "pass", "fail": "fail", "undecided": "undecided",
            "not judged": "undecided", "not gated": "undecided"}
_NUMBERS = ("unit", "slowdown_pct", "slowdown_low_pct", "slowdown_high_pct",
            "interval_level", "p", "q", "p_slower", "q_slower", "p_not_slower",
            "repetitions", "repetitions_needed", "method")


def medians_of(cmp) -> dict:
    """(run id, bench, metric, x) -> the result's median and interval, for the cases."""
    out = {}
    for run in cmp.runs:
        for r in run.results:
            if r.status == "ok" and r.median is not None:
                out[(run.id, r.bench, r.metric, r.x)] = r.summary
    return out


def _median_text(summary: dict | None, unit: str) -> str | None:
    if not summary or summary.get("median") is None:
        return None
    text = "%.6g %s" % (summary["median"], unit)
    if summary.get("ci_low") is not None and summary.get("ci_high") is not None:
        level = summary.get("ci_level")
        text += " [%.6g, %.6g]%s" % (summary["ci_low"], summary["ci_high"],
                                     " (%.3g%% interval)" % (100 * level) if level else "")
    return text


def cases_from_gate(gate, base_name: str, medians: dict | None = None) -> list[GateCase]:
    """One case per row the gate looked at (each result of each run but the baseline);
    `medians` (medians_of) puts both runs' medians and intervals into its numbers."""
    medians = medians or {}
    cases = []
    for r in gate.rows:
        numbers = {}
        base = _median_text(medians.get((gate.baseline_id, r.bench, r.metric, r.x)), r.unit)
        this = _median_text(medians.get((r.run_id, r.bench, r.metric, r.x)), r.unit)
        if base or this:
            numbers["median_%s" % base_name] = base
            numbers["median_%s" % r.run_name] = this
        numbers.update({k: getattr(r, k) for k in _NUMBERS})
        numbers["repetitions"] = "%d vs %d" % tuple(r.repetitions)
        numbers["threshold_pct"] = gate.threshold_pct
        cases.append(GateCase(name=gate_words.case_name(r, base_name),
                              outcome=_OUTCOME[r.outcome],
                              message=gate_words.row_message(r, gate.threshold_pct),
                              numbers=numbers))
    return cases
