"""The regression gate: is anything slower than the baseline by more than PCT percent?

Three outcomes, each a claim that holds at level alpha:

* **fail** (exit 1): at least one result is slower than the baseline by more than PCT,
  significantly after Holm's correction over every result the gate judged.  The chance
  that the gate fails although no result is slower by more than PCT is at most alpha
  (family-wise).
* **pass** (exit 0): every result judged is shown to be slower by less than PCT (or
  faster): its own one-sided test rejects "slower by PCT or more" at alpha.  Passing
  needs every row to pass (intersection-union), so the chance of passing although some
  result is slower by more than PCT is at most alpha, with no correction needed.
* **undecided** (exit 3; 1 with `undecided_fails`): neither; the noise is too large to
  tell a slowdown of PCT from none.  The rows are named with how many repetitions per
  run would tell them apart.

A row measured while something outside the benchmark disturbed it (osmeter.flags) keeps
its outcome, and says so: its message names the disturbance, and the gate's note counts
the rows that did not pass on such measurements.

Rows that one side did not measure (missing, skipped, failed) are listed as "not
judged" and do not change the outcome; cpu.integer (the yardstick of the machine's raw
speed) and derived rows are not gated.  Without a between-run noise profile the tests
are within-run rank tests (exact, distribution-free): a difference between two runs of
one system then counts as real, which the output says.

`Gate` and `GateRow` are the outcome as data (for JUnit and other writers): rows with
outcome, slowdown estimate and interval, p-values and the repetitions needed.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import significance as sig
from .compare import CPU_BENCH, Comparison

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_UNDECIDED = 3

PASS, FAIL, UNDECIDED, NOT_JUDGED = "pass", "fail", "undecided", "not judged"


@dataclass
class GateRow:
    """One result of one run against the baseline."""
    bench: str
    metric: str
    x: float | None
    label: str
    unit: str
    run_id: str
    run_name: str
    outcome: str                          # pass | fail | undecided | not judged
    message: str                          # one line with the numbers, for people
    slowdown_pct: float | None = None     # estimate; > 0 = slower than the baseline
    slowdown_low_pct: float | None = None
    slowdown_high_pct: float | None = None
    interval_level: float | None = None   # of [low, high]: 1 - 2 alpha (or what the reps allow)
    p_slower: float | None = None         # one-sided: slower by more than the threshold
    p_slower_holm: float | None = None    # the same after Holm's correction
    p_not_slower: float | None = None     # one-sided: slower by less than the threshold
    repetitions: tuple = (0, 0)           # baseline, this run
    repetitions_needed: int | None = None  # per run, to tell a slowdown of PCT from none
    method: str = ""
    disturbed: str | None = None          # 'disturbed in B (other processes on CPU 1)': the
                                          # outcome may be the disturbance's


@dataclass
class Gate:
    threshold_pct: float
    alpha: float
    baseline_id: str
    outcome: str                          # pass | fail | undecided
    rows: list[GateRow] = field(default_factory=list)
    noise: str | None = None              # name of the noise profile used, if any
    undecided_fails: bool = False
    note: str = ""

    @property
    def exit_code(self) -> int:
        if self.outcome == FAIL or (self.outcome == UNDECIDED and self.undecided_fails):
            return EXIT_FAIL
        return EXIT_UNDECIDED if self.outcome == UNDECIDED else EXIT_PASS

    def having(self, outcome: str) -> list[GateRow]:
        return [r for r in self.rows if r.outcome == outcome]

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k != "rows"}
        d["exit_code"] = self.exit_code
        d["rows"] = [asdict(r) for r in self.rows]
        return d


def evaluate(cmp: Comparison, pct: float, undecided_fails: bool = False) -> Gate:
    """The gate over every row and every run against the comparison's baseline; also
    stored as cmp.gate."""
    alpha, b = cmp.alpha, cmp.baseline
    gate = Gate(threshold_pct=pct, alpha=alpha, baseline_id=cmp.runs[b].id,
                outcome=PASS, noise=cmp.noise.name if cmp.noise is not None else None,
                undecided_fails=undecided_fails)
    judged = []                            # (GateRow, Slowdown, Between)
    for row in cmp.rows:
        if row.shape == "derived" or row.bench == CPU_BENCH:
            continue
        base = row.cells[b]
        for i, c in enumerate(row.cells):
            if i == b:
                continue
            g = GateRow(row.bench, row.metric, row.x, row.label, row.unit, cmp.runs[i].id,
                        cmp.names[i], NOT_JUDGED, "")
            gate.rows.append(g)
            missing = _missing(base, c, cmp.names[b], cmp.names[i])
            if missing:
                g.message = missing
                continue
            between = None
            if cmp.noise is not None and base.result is not None:
                between = cmp.noise.row(row.bench, row.metric, row.x, base.result.params)
            s = sig.slowdown(base.reps, c.reps, row.better, pct, alpha, between)
            if s is None:
                g.message = "values not positive: no ratio"
                continue
            g.repetitions = (len(base.reps), len(c.reps))
            g.slowdown_pct, g.slowdown_low_pct, g.slowdown_high_pct = (
                s.estimate_pct, s.low_pct, s.high_pct)
            g.interval_level, g.p_slower, g.p_not_slower = s.level, s.p_slower, s.p_not_slower
            g.method = s.method
            g.disturbed = c.caveat or None
            judged.append((g, s, between))
    # Holm over the tests that can reach alpha at all (the others can never fail).
    family = [(g, s) for g, s, _ in judged if s.smallest_p <= alpha]
    for (g, _), adj in zip(family, sig.holm([s.p_slower for _, s in family])):
        g.p_slower_holm = adj
    per_test_alpha = alpha / max(1, len(family) or len(judged))
    for g, s, between in judged:
        if g.p_slower_holm is not None and g.p_slower_holm <= alpha:
            g.outcome = FAIL
        elif g.p_not_slower <= alpha:
            g.outcome = PASS
        else:
            g.outcome = UNDECIDED
            g.repetitions_needed = sig.repetitions_to_tell(
                pct, s.spread, per_test_alpha, between, rank=between is None)
        g.message = _message(g, pct)
    outcomes = {g.outcome for g, _, _ in judged}
    gate.outcome = FAIL if FAIL in outcomes else UNDECIDED if UNDECIDED in outcomes or \
        not judged else PASS
    if not judged:
        gate.note = "nothing to judge: no result measured in the baseline and another run"
    elif cmp.noise is None:
        gate.note = ("between-run noise is not accounted for: a difference between two "
                     "runs of one system counts as real (record it with osmeter noise)")
    disturbed = [g for g, _, _ in judged if g.disturbed and g.outcome != PASS]
    if disturbed:
        gate.note = "; ".join(n for n in (gate.note, "%d of the results that did not pass "
                                          "were measured while something disturbed them: "
                                          "run them again on a quiet machine before "
                                          "trusting the outcome" % len(disturbed)) if n)
    cmp.gate = gate
    return gate


def _missing(base, c, base_name: str, name: str) -> str:
    for cell, who in ((base, base_name), (c, name)):
        if cell is None:
            return "not measured in %s" % who
        if cell.status != "ok":
            return "%s in %s: %s" % (cell.status, who, cell.reason or "no reason given")
        if not cell.reps:
            return "no repetitions in %s" % who
    return ""


def _message(g: GateRow, pct: float) -> str:
    text = _outcome_message(g, pct)
    return text + ("; " + g.disturbed if g.disturbed else "")


def _outcome_message(g: GateRow, pct: float) -> str:
    est = "%.1f%% %s" % (abs(g.slowdown_pct), "slower" if g.slowdown_pct >= 0 else "faster")
    if g.slowdown_low_pct is not None:
        est += ", slowdown in [%+.1f%%, %+.1f%%] (%s%%)" % (
            g.slowdown_low_pct, g.slowdown_high_pct, _pct(g.interval_level))
    if g.outcome == FAIL:
        return "%s: slower than %g%%, p=%.2g (Holm %.2g)" % (est, pct, g.p_slower,
                                                              g.p_slower_holm)
    if g.outcome == PASS:
        return "%s: not slower than %g%%, p=%.2g" % (est, pct, g.p_not_slower)
    holm = ", Holm %.2g" % g.p_slower_holm if g.p_slower_holm is not None else ""
    why = "%s: undecided at %g%% (p slower %.2g%s; p not slower %.2g)" % (
        est, pct, g.p_slower, holm, g.p_not_slower)
    if g.repetitions_needed is None:
        return why + "; between-run noise alone is larger than the threshold"
    if g.repetitions_needed > max(g.repetitions):
        return why + "; about %d repetitions per run would tell a %g%% slowdown from none" \
            % (g.repetitions_needed, pct)
    return why + "; the slowdown is close to the threshold"


def _pct(level) -> str:
    return "?" if level is None else ("%.1f" % (100 * level)).rstrip("0").rstrip(".")
