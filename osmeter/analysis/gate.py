"""The regression gate: is anything slower than the baseline by more than PCT percent?

The gate asks a one-sided question, so it tests one-sidedly: a row's p-value is that of
"slower" (the comparison's t on log repetition medians, osmeter.analysis.compare), and
Benjamini–Bogomolov runs over the gate's questions (a benchmark against one run) at
alpha, as the comparison does with its two-sided p-values.  A two-sided test would spend
half of alpha on "faster", which can never fail a gate.  Per row and run against the
baseline:

* **fail**: slower after the correction (q of "slower" <= alpha) and the estimated
  slowdown is beyond PCT (for a result whose repetitions stopped with `run
  --until-decided`, q <= what its look spends, as for a pass); the interval it keeps is
  that test's (`fail_level`).  When nothing is slower at all, the chance that any row fails
  is at most alpha (with no real difference anywhere the correction makes any rejection
  that unlikely); the estimate beyond PCT keeps small real slowdowns and between-run
  shifts from failing it.  Where the comparison's two-sided verdict on the row is not
  "worse", the row's message says so: that is the half of alpha the gate does not spend
  on "faster".
* **pass**: the (1 - 2 alpha) interval's upper end of the slowdown is below PCT (the
  one-sided test of "slower by PCT or more" rejects at alpha; for a result whose
  repetitions stopped with `run --until-decided`, at alpha / (j (j + 1)) after j looks).  All rows must pass for a
  pass; each row's own test suffices for that (intersection-union), no correction.
* **not gated: noisier than PCT**: neither (the row's noise is larger than PCT, or its
  slowdown is close to PCT); listed with the repetitions per run that would decide it.
  It does not change the outcome unless `undecided_fails` or the row matches a
  `gate_on` pattern: then the gate is undecided (exit 3; 1 with `undecided_fails`).

Outcome: fail (exit 1) if any row fails; else undecided (exit 3) as just said; else pass
(exit 0).  A row measured while something outside the benchmark disturbed it
(analysis/flags.py) keeps its outcome and says so.  Rows one side did not measure, and
rows whose values are not all positive (no ratio), are "not judged" (`NotJudged` says
why); cpu.integer and derived rows are not gated.

The outcome is data (`Gate`, `GateRow`): numbers and outcomes, no words.  Every word a
person or a CI log reads of it (a row's message, the gate's note, compare's section, the
lines on stderr, the JSON's message and note, the JUnit cases) is written by
report/gate_words.py, once.
"""
from __future__ import annotations

import fnmatch
from dataclasses import asdict, dataclass, field

from ..stats import significance as sig
from .compare import CPU_BENCH, Comparison

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_UNDECIDED = 3

PASS, FAIL, UNDECIDED, NOT_JUDGED = "pass", "fail", "undecided", "not judged"
NOT_GATED = "not gated"        # noisier than PCT: listed, the outcome not changed

# Why a row is not judged (NotJudged.why), besides a result's own status (failed, skipped).
NOT_MEASURED, NO_REPETITIONS = "not measured", "no repetitions"
NO_VERDICT, NO_SLOWDOWN = "no verdict", "no slowdown"


@dataclass
class NotJudged:
    """Why a row has no outcome but "not judged"."""
    why: str                      # NOT_MEASURED | NO_REPETITIONS | NO_VERDICT | NO_SLOWDOWN
                                  # | the result's status in run_name (failed, skipped)
    run_name: str | None = None   # the run that lacks it (NOT_MEASURED, a status, ...)
    detail: str | None = None     # the result's reason; for NO_SLOWDOWN the comparison's
                                  # detail of its verdict (e.g. '0 vs 0: no ratio')


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
    outcome: str                          # pass | fail | not gated | undecided | not judged
    slowdown_pct: float | None = None     # estimate; > 0 = slower than the baseline
    slowdown_low_pct: float | None = None
    slowdown_high_pct: float | None = None
    interval_level: float | None = None   # of [low, high]: 1 - 2 alpha (or what the reps allow)
    p: float | None = None                # the comparison's two-sided p (any difference)
    q: float | None = None                # the same after the comparison's correction
    p_slower: float | None = None         # the gate's one-sided p of "slower"
    q_slower: float | None = None         # the same after the correction over the gate's
                                          # questions: <= alpha and beyond PCT fails
    verdict: str = ""                     # the comparison's word for the row
    p_not_slower: float | None = None     # one-sided: slower by less than the threshold
    repetitions: tuple = (0, 0)           # baseline, this run
    repetitions_needed: int | None = None  # per run, to tell a slowdown of PCT from none
    method: str = ""
    disturbed: str | None = None          # 'disturbed in B (other processes on CPU 1)': the
                                          # outcome may be the disturbance's
    not_judged: NotJudged | None = None   # why, for a row not judged


@dataclass
class Gate:
    threshold_pct: float
    alpha: float
    baseline_id: str
    outcome: str                          # pass | fail | undecided
    rows: list[GateRow] = field(default_factory=list)
    noise: str | None = None              # name of the noise profile used, if any
    undecided_fails: bool = False
    gate_on: list = field(default_factory=list)   # patterns whose rows must be decided

    @property
    def exit_code(self) -> int:
        if self.outcome == FAIL or (self.outcome == UNDECIDED and self.undecided_fails):
            return EXIT_FAIL
        return EXIT_UNDECIDED if self.outcome == UNDECIDED else EXIT_PASS

    def having(self, outcome: str) -> list[GateRow]:
        return [r for r in self.rows if r.outcome == outcome]

    def judged(self) -> list[GateRow]:
        """The rows with a slowdown and its tests (every outcome but not judged)."""
        return [r for r in self.rows if r.not_judged is None]

    def disturbed_not_passed(self) -> list[GateRow]:
        """The judged rows that did not pass and were measured while disturbed."""
        return [r for r in self.judged() if r.disturbed and r.outcome != PASS]

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k != "rows"}
        d["exit_code"] = self.exit_code
        d["rows"] = [asdict(r) for r in self.rows]
        return d


def gated_name(row) -> str:
    """What --gate-on patterns match: 'bench metric' (and '@x' for a curve's point)."""
    return "%s %s" % (row.bench, row.metric) + ("" if row.x is None else "@%g" % row.x)


def evaluate(cmp: Comparison, pct: float, undecided_fails: bool = False,
             gate_on: list | None = None) -> Gate:
    """The gate over every row and every run against the comparison's baseline (the
    comparison is not changed).  `gate_on`: glob patterns (fnmatch) over 'bench metric'
    or the bench alone whose rows must be decided (not gated -> undecided)."""
    alpha, b = cmp.alpha, cmp.baseline
    gate = Gate(threshold_pct=pct, alpha=alpha, baseline_id=cmp.runs[b].id,
                outcome=PASS, noise=cmp.noise.name if cmp.noise is not None else None,
                undecided_fails=undecided_fails, gate_on=list(gate_on or []))
    judged = []    # (GateRow, Slowdown, between-run noise, row, Verdict, the row's alpha)
    for row in cmp.rows:
        if row.shape == "derived" or row.bench == CPU_BENCH:
            continue
        base = row.cells[b]
        for i, c in enumerate(row.cells):
            if i == b:
                continue
            g = GateRow(row.bench, row.metric, row.x, row.label, row.unit, cmp.runs[i].id,
                        cmp.names[i], NOT_JUDGED)
            gate.rows.append(g)
            g.not_judged = _missing(base, c, cmp.names[b], cmp.names[i])
            v = c.verdict if c is not None else None
            if g.not_judged is not None or v is None:
                g.not_judged = g.not_judged or NotJudged(NO_VERDICT)
                continue
            own_alpha = row_alpha(c.result, alpha)
            s = sig.slowdown(v, pct, own_alpha)
            if s is None:
                g.not_judged = NotJudged(NO_SLOWDOWN, detail=v.detail or v.word)
                continue
            g.repetitions = (v.n_base, v.n_other)
            g.slowdown_pct, g.slowdown_low_pct, g.slowdown_high_pct = (
                s.estimate_pct, s.low_pct, s.high_pct)
            g.interval_level, g.p_not_slower = s.level, s.p_not_slower
            g.p, g.q, g.method, g.verdict = v.p, v.p_adjusted, s.method, v.word
            g.p_slower = s.p_slower
            g.disturbed = c.caveat or None
            between = None
            if cmp.noise is not None and base.result is not None:
                between = cmp.noise.row(row.bench, row.metric, row.x, base.result.params)
            judged.append((g, s, between, row, v, own_alpha))
    decisions = decide_all([((g.bench, g.run_id), s, a) for g, s, _, _, _, a in judged],
                           pct, alpha)
    for (g, s, between, row, v, own_alpha), (decided, q) in zip(judged, decisions):
        g.q_slower = q
        if decided == FAIL:
            g.outcome = FAIL
            g.interval_level = fail_level(g.p_slower, g.q_slower, own_alpha)
            g.slowdown_low_pct, g.slowdown_high_pct = sig.slowdown_interval(
                v, g.interval_level)
        elif decided == PASS:
            g.outcome = PASS
        else:
            must = gate.gate_on and any(
                fnmatch.fnmatchcase(name, pat) for pat in gate.gate_on
                for name in (row.bench, gated_name(row)))
            g.outcome = UNDECIDED if must or undecided_fails else NOT_GATED
            g.repetitions_needed = sig.repetitions_to_tell(pct, s.spread, alpha, between)
    outcomes = {g.outcome for g, *_ in judged}
    # Nothing shown either way (every row noisier than PCT) is no pass.
    gate.outcome = FAIL if FAIL in outcomes else UNDECIDED if UNDECIDED in outcomes or \
        PASS not in outcomes else PASS
    return gate


def spent_alpha(looks: int | None, alpha: float) -> float:
    """What a result whose repetitions stopped at look j of `run --until-decided` may
    spend on its tests (its pass, and its failure after the correction): alpha /
    (j (j + 1)), the shares adding up to less than alpha, so that a pass and a failure
    stay alpha-level claims whenever the looks stopped; alpha without looks."""
    return alpha / (looks * (looks + 1)) if looks else alpha


def row_alpha(result, alpha: float) -> float:
    """`spent_alpha` for a stored result (its looks in extra.until_decided)."""
    looks = ((result.extra or {}).get("until_decided") or {}).get("looks") \
        if result is not None else None
    return spent_alpha(looks, alpha)


def decide_all(rows: list[tuple], pct: float, alpha: float) -> list[tuple]:
    """The gate's decision, one place for `evaluate` and `run --until-decided` (which
    stops a benchmark as soon as this decides each of its rows).  rows: [(question (a
    benchmark against one run), Slowdown, the row's own alpha: alpha, or for a result
    whose repetitions stopped adaptively what its look may spend)]; returns [(FAIL,
    PASS or None, q_slower)]: q_slower from Benjamini–Bogomolov at alpha over the
    questions on the one-sided p-values of "slower", then `decide_row` at the row's
    own alpha."""
    by_question: dict = {}
    for k, (question, s, _) in enumerate(rows):
        by_question.setdefault(question, []).append(k)
    fams = list(by_question.values())
    adjusted, _ = sig.benjamini_bogomolov([[rows[k][1].p_slower for k in f] for f in fams],
                                          alpha)
    q = [1.0] * len(rows)
    for f, qs in zip(fams, adjusted):
        for k, qk in zip(f, qs):
            q[k] = qk
    return [(decide_row(s, q[k], pct, own), q[k]) for k, (_, s, own) in enumerate(rows)]


def decide_row(s: sig.Slowdown, q_slower: float, pct: float, alpha: float) -> str | None:
    """The gate's rule for one row, FAIL, PASS or None (neither): fail when slower after
    the correction over the gate's questions (q_slower <= alpha) and the estimate is
    beyond pct; pass when "slower by pct or more" is rejected at alpha."""
    if q_slower <= alpha and s.estimate_pct > pct:
        return FAIL
    if s.p_not_slower <= alpha:
        return PASS
    return None


def fail_level(p_slower: float, q_slower: float, alpha: float) -> float:
    """Two-sided level of the interval of the test that failed a row: the correction
    rejects "not slower" at the row's own level alpha p / q (p <= that level exactly
    when q <= alpha), so that interval's lower end is at or above 0."""
    own = alpha * p_slower / q_slower if q_slower > 0 else alpha
    return 1.0 - 2.0 * max(own, 1e-12)


def _missing(base, c, base_name: str, name: str) -> NotJudged | None:
    for cell, who in ((base, base_name), (c, name)):
        if cell is None:
            return NotJudged(NOT_MEASURED, who)
        if cell.status != "ok":
            return NotJudged(cell.status, who, cell.reason)
        if not cell.reps:
            return NotJudged(NO_REPETITIONS, who)
    return None
