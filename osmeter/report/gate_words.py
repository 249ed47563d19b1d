"""The regression gate's words, written here and nowhere else.

The gate's outcome is data (analysis/gate.py: `Gate`, `GateRow`, `NotJudged`, numbers and
outcomes only).  Whatever a person or a CI log reads of it comes from this module: a
row's one-line message, the gate's note, the section of `osmeter compare` (terminal and
Markdown; the HTML report shows the same lines), the lines `compare` prints on stderr,
the message and note of `compare --json`, and the JUnit file's messages
(formats/junit.py).  A change to the gate's words is a change here only.
"""
from __future__ import annotations

from ..analysis.gate import (FAIL, NO_REPETITIONS, NO_SLOWDOWN, NO_VERDICT, NOT_GATED,
                             NOT_JUDGED, NOT_MEASURED, PASS, UNDECIDED, Gate, GateRow,
                             NotJudged)
from ..base.numbers import p_value

# What a row counted in the stderr summary is called, in the order it is listed.
SUMMARY_ORDER = (FAIL, UNDECIDED, NOT_GATED, PASS, NOT_JUDGED)
LOGGED = 10                # undecided rows named on stderr; the rest counted


def row_message(r: GateRow, pct: float) -> str:
    """One line with the row's numbers, for people (and a JUnit case's message)."""
    if r.not_judged is not None:
        return not_judged_text(r.not_judged)
    text = _outcome_message(r, pct)
    return text + ("; " + r.disturbed if r.disturbed else "")


def not_judged_text(n: NotJudged) -> str:
    if n.why == NOT_MEASURED:
        return "not measured in %s" % n.run_name
    if n.why == NO_REPETITIONS:
        return "no repetitions in %s" % n.run_name
    if n.why == NO_VERDICT:
        return "no verdict"
    if n.why == NO_SLOWDOWN:
        return n.detail or "no slowdown"
    return "%s in %s: %s" % (n.why, n.run_name, n.detail or "no reason given")


def _outcome_message(r: GateRow, pct: float) -> str:
    est = "%.1f%% %s" % (abs(r.slowdown_pct), "slower" if r.slowdown_pct >= 0 else "faster")
    est += ", slowdown in [%+.1f%%, %+.1f%%] (%s%%)" % (
        r.slowdown_low_pct, r.slowdown_high_pct, _pct(r.interval_level))
    if r.outcome == FAIL:
        text = "%s: slower, beyond %g%% (one-sided p=%s, q=%s)" % (
            est, pct, p_value(r.p_slower), p_value(r.q_slower))
        if r.verdict != "worse":
            text += "; compare's two-sided verdict: %s" % r.verdict
        return text
    if r.outcome == PASS:
        return "%s: not slower than %g%%, p=%s" % (est, pct, p_value(r.p_not_slower))
    if r.slowdown_low_pct > pct:
        return "%s: %s: slower than %g%% by its own test (p=%s), not after the correction " \
            "over the gate's questions (q=%s)" % (
                est, "undecided" if r.outcome == UNDECIDED else "not gated", pct,
                p_value(r.p_slower), p_value(r.q_slower))
    why = "%s: %s %g%%" % (est, "undecided at" if r.outcome == UNDECIDED
                            else "not gated: noisier than", pct)
    if r.repetitions_needed is None:
        return why + "; between-run noise alone is larger than the threshold"
    if r.repetitions_needed > max(r.repetitions):
        return why + "; about %d repetitions per run would decide it" % r.repetitions_needed
    return why + "; the slowdown is close to the threshold"


def _pct(level) -> str:
    return "?" if level is None else ("%.1f" % (100 * level)).rstrip("0").rstrip(".")


def note(g: Gate) -> str:
    """What the outcome alone does not say: nothing judged, nothing decided, noise not
    accounted for, rows not gated, disturbed rows."""
    pct = g.threshold_pct
    judged = g.judged()
    outcomes = {r.outcome for r in judged}
    notes = []
    if not judged:
        notes.append("nothing to judge: no result measured in the baseline and another run")
    elif PASS not in outcomes and FAIL not in outcomes:
        notes.append("no result could be shown within %g%% or beyond it" % pct)
    elif g.noise is None:
        notes.append("between-run noise is not accounted for: the verdicts are about these "
                     "two runs (record it with osmeter noise, or keep 3 or more runs of "
                     "this host)")
    not_gated = g.having(NOT_GATED)
    if not_gated:
        notes.append("%d row(s) not gated: noisier than %g%% (--undecided-fails or "
                     "--gate-on GLOB makes them count)" % (len(not_gated), pct))
    disturbed = g.disturbed_not_passed()
    if disturbed:
        notes.append("%d of the results that did not pass were measured while something "
                     "disturbed them: run them again on a quiet machine before trusting "
                     "the outcome" % len(disturbed))
    return "; ".join(notes)


def section(g: Gate, baseline_name: str) -> list[str]:
    """The gate's part of `osmeter compare` (terminal; indented in Markdown and HTML)."""
    pct = g.threshold_pct
    out = ["Regression gate: slower than %r by more than %g%%? %s (alpha %.3g; fail = "
           "slower by a one-sided test corrected over the questions, estimated beyond %g%%, "
           "pass = the slowdown's upper bound below it, %d results judged)"
           % (baseline_name, pct, g.outcome.upper(), g.alpha, pct,
              sum(1 for r in g.rows if r.p_not_slower is not None))]
    said = note(g)
    if said:
        out.append("  note: " + said)
    for outcome, word in ((FAIL, "SLOWER"), (UNDECIDED, "UNDECIDED")):
        for r in g.having(outcome):
            out.append("  %s %s (%s): %s" % (word, r.label, r.run_name, row_message(r, pct)))
    not_gated = g.having(NOT_GATED)
    if not_gated:
        out.append("  not gated: noisier than %g%%: %d result(s), e.g. %s" % (
            pct, len(not_gated), "; ".join(
                "%s (%s): %s" % (r.label, r.run_name, row_message(r, pct))
                for r in not_gated[:3])))
    passed = g.having(PASS)
    if passed:
        out.append("  pass: %d result(s) shown not slower than %g%%" % (len(passed), pct))
    missing = g.having(NOT_JUDGED)
    if missing:
        out.append("  not judged: %d result(s), e.g. %s" % (len(missing), "; ".join(
            "%s (%s): %s" % (r.label, r.run_name, row_message(r, pct)) for r in missing[:3])))
    return out


def log_lines(g: Gate) -> list[str]:
    """What `osmeter compare --fail-on-slower` prints on stderr, whatever the format: a
    CI log shows the regressions, the undecided rows and the outcome with its exit code."""
    pct = g.threshold_pct
    lines = ["osmeter: regression: %s in %s: %s" % (r.label, r.run_name, row_message(r, pct))
             for r in g.having(FAIL)]
    undecided = g.having(UNDECIDED)
    lines += ["osmeter: undecided: %s in %s: %s" % (r.label, r.run_name, row_message(r, pct))
              for r in undecided[:LOGGED]]
    if len(undecided) > LOGGED:
        lines.append("osmeter: undecided: %d more (see the gate in the output)"
                     % (len(undecided) - LOGGED))
    said = note(g)
    lines.append("osmeter: gate %s at %g%%: %s (exit %d)%s" % (
        g.outcome.upper(), pct, "; ".join(
            "%d %s" % (len(g.having(o)), o) for o in SUMMARY_ORDER if g.having(o)),
        g.exit_code, "; " + said if said else ""))
    return lines


def to_dict(g: Gate) -> dict:
    """`compare --json`'s regression_gate: the gate's data with each row's message and the
    gate's note (docs/statistics.md, "The gate as data")."""
    d = g.to_dict()
    d["note"] = note(g)
    for rd, r in zip(d["rows"], g.rows):
        rd["message"] = row_message(r, g.threshold_pct)
    return d


def junit_title(baseline_name: str) -> str:
    return "osmeter regression gate against %s" % baseline_name


def case_name(r: GateRow, baseline_name: str) -> str:
    return "%s: %s vs %s" % (r.label, r.run_name, baseline_name)
