"""Cross-system claims: system A against system B, row by row, as the papers judged them.

Most of the papers' conclusions compare systems ("Linux's metadata is an order of
magnitude faster than FreeBSD's", "NetBSD surpassed FreeBSD").  One run can only behave
like one side; two or more runs (`osmeter replicate --systems RUN,RUN`, or the report of
several runs) are judged as the paper judged its systems.  Each run is one system; a
paper's system is played by the run whose kernel is of its family (a NetBSD run plays
NetBSD 2.0), and the roles no kernel matches by the remaining runs in the order they were
given (two host configurations of one Linux: the first plays the paper's first system).
The evidence says who plays whom.
"""
from __future__ import annotations

from .view import (BORDERLINE, NOT_JUDGED, UNDECIDED, Conclusion, against, judge, num,
                   ratio_interval)

FAMILIES = ("linux", "freebsd", "netbsd", "openbsd", "solaris", "sunos")
# A row is won where one system's value is better than the other's by more than this
# factor on the interval of their ratio; within it, or with the interval across it, the
# row is undecided (a tie).
WIN = 1.05
NEEDS_TWO = ("needs runs of two systems (osmeter replicate --systems RUN,RUN, or osmeter "
             "report RUN RUN --study all)")


def family(run) -> str:
    """The kernel family of a run ('linux', 'netbsd', ...), or ''."""
    k = (run.sysinfo or {}).get("kernel") or {}
    name = str(k.get("name") or ((run.sysinfo or {}).get("os") or {}).get("name") or "")
    return next((f for f in FAMILIES if f in name.lower()), "")


def system_name(ctx, i: int) -> str:
    """A run as a system: its name and its kernel."""
    k = (ctx.runs[i].sysinfo or {}).get("kernel") or {}
    kernel = " ".join(str(k[f]) for f in ("name", "release") if k.get(f))
    return "%s (%s)" % (ctx.names[i], kernel) if kernel else ctx.names[i]


def plays(run, side: str) -> bool:
    """Whether a run's kernel is of the family a paper's system names ('Linux 1.2.8'; 'a
    BSD (FreeBSD 6.1, NetBSD 3.0, OpenBSD 3.9)' names three)."""
    f = family(run)
    return bool(f) and f in side.lower()


def roles(ctx, sides: list[str]) -> dict | None:
    """{paper's system: run index} for a claim between `sides` (in the paper's order), as
    many as there are runs; None with fewer than two runs.  A paper's system is played by
    a run of its kernel family; the roles left by the runs left, in the order given."""
    if len(ctx.runs) < 2:
        return None
    out, free = {}, list(range(len(ctx.runs)))
    for side in sides:
        i = next((i for i in free if plays(ctx.runs[i], side)), None)
        if i is not None:
            out[side] = i
            free.remove(i)
    for side in sides:
        if side not in out and free:
            out[side] = free.pop(0)
    return {s: out[s] for s in sides if s in out}


def cast(ctx, who: dict) -> str:
    """Who plays whom, in words."""
    return "; ".join("%s as %s%s" % (system_name(ctx, i), side, "" if plays(
        ctx.runs[i], side) else " (by order)") for side, i in who.items())


def pair_ratio_claim(ctx, sides: list[str], ref, threshold: float, rule: str):
    """A claim that the paper's second system's value is at least `threshold` times the
    first's (Linux 21 ns, the BSDs 184-234 ns): (outcome, evidence, margin, results) on the
    interval of the ratio, or None with fewer than two runs."""
    who = roles(ctx, sides)
    if not who or len(who) < 2:
        return None
    a, b = who[sides[0]], who[sides[1]]
    rr = ratio(ctx, b, a, ref)
    if rr is None:
        return None, cast(ctx, who) + "; " + ref.bench + " did not run on both", "", []
    r, lo, hi, used = rr
    o, m = against(r, lo, hi, threshold, False, "×")
    return o, "%s; %s: %s / %s = %s× (%s)" % (
        cast(ctx, who), ref.quantity, num(ctx.match(b, ref).value),
        num(ctx.match(a, ref).value), num(r), rule), m, used


def ratio(ctx, a: int, b: int, ref) -> tuple | None:
    """Run a's value of a reference against run b's: (ratio a/b, lo, hi, the two results),
    on the interval of the ratio; None where either has none."""
    ma, mb = ctx.match(a, ref), ctx.match(b, ref)
    if not ma.value or not mb.value or ma.result is None or mb.result is None:
        return None
    r = ma.value / mb.value
    lo, hi = ratio_interval(ma.result, mb.result)
    k = r / (ma.result.median / mb.result.median) if ma.result.median and mb.result.median \
        else 1.0                      # the interval in the values' unit (peak, largest)
    return r, lo * k if lo else None, hi * k if hi else None, [ma.result, mb.result]


def row_winner(ctx, a: int, b: int, ref) -> tuple | None:
    """Which of runs a and b is better at a reference: ('a' | 'b' | None for a tie or an
    interval that cannot tell, the line of the row, the results); None where either lacks
    it."""
    rr = ratio(ctx, a, b, ref)
    if rr is None:
        return None
    r, lo, hi, used = rr
    # a/b below 1/WIN is a win for a where lower is better, above WIN where higher is.
    lower = ref.better == "lower"
    a_wins, _ = against(r, lo, hi, 1 / WIN if lower else WIN, lower)
    b_wins, _ = against(r, lo, hi, WIN if lower else 1 / WIN, not lower)
    who = "a" if a_wins is True else "b" if b_wins is True else None
    line = "%s: %s / %s = %s×%s → %s" % (
        ref.quantity, num(ctx.match(a, ref).value), num(ctx.match(b, ref).value), num(r),
        " (interval %s-%s)" % (num(lo), num(hi)) if lo is not None else "",
        {"a": ctx.names[a], "b": ctx.names[b]}.get(who, "tie or cannot tell"))
    return who, line, used


def surpasses(ctx, a: int, b: int, refs_: list) -> tuple:
    """Run a against run b over rows (references): (outcome, evidence lines, margin,
    results).  Holds where a wins more rows than b and at least half of the rows both
    have; does not hold where b wins as many rows as a or more (and some row is won); else
    undecided."""
    wins = {"a": 0, "b": 0, None: 0}
    lines, used = [], []
    seen = set()
    for ref in refs_:
        if (ref.bench, ref.metric, ref.x) in seen:
            continue
        seen.add((ref.bench, ref.metric, ref.x))
        w = row_winner(ctx, a, b, ref)
        if w is None:
            continue
        wins[w[0]] += 1
        lines.append(w[1])
        used += w[2]
    n = sum(wins.values())
    if n == 0:
        return None, lines, "", used
    outcome = (True if wins["a"] > wins["b"] and 2 * wins["a"] >= n else
               False if wins["b"] >= wins["a"] and wins["a"] + wins["b"] > 0 else UNDECIDED)
    margin = "%s wins %d, %s wins %d, %d tied or undecided, of %d rows" % (
        ctx.names[a], wins["a"], ctx.names[b], wins["b"], wins[None], n)
    return outcome, lines, margin, used


def verdict(outcome) -> str:
    """A cross-system outcome (True, False, BORDERLINE, UNDECIDED; None: not measured) as
    a verdict."""
    return judge([] if outcome is None else [None if outcome == UNDECIDED else outcome])


def conclusion(claim: str, source: str, judged, rule: str, alone: str = "",
               alone_used=()) -> Conclusion:
    """A cross-system conclusion from (outcome, evidence, margin, results), or, where there
    are not two systems (judged None), undecided with what it needs and what the one
    system shows (`alone`, from the results `alone_used`)."""
    if judged is None:
        return Conclusion(claim, source, NOT_JUDGED, (alone + "; " if alone else "")
                          + NEEDS_TWO, rule, rests_on=list(alone_used))
    o, ev, margin, used = judged
    return Conclusion(claim, source, verdict(o), ev, rule, margin, rests_on=used)


def ranking(ctx, sides: list[str], refs_: list):
    """The paper's order of systems (best first) judged on the runs that play them: each
    system surpasses every one after it (surpasses()); (outcome, evidence, margin, results)
    or None with fewer than two runs."""
    who = roles(ctx, sides)
    if not who or len(who) < 2:
        return None
    order = [s for s in sides if s in who]
    outcomes, ev, margins, used = [], [cast(ctx, who)], [], []
    for k, first in enumerate(order):
        for second in order[k + 1:]:
            o, lines, m, u = surpasses(ctx, who[first], who[second], refs_)
            outcomes.append(o)
            ev.append("%s against %s: %s" % (first, second, "; ".join(lines) or "no rows"))
            margins.append(m)
            used += u
    o = False if False in outcomes else True if all(x is True for x in outcomes) \
        else UNDECIDED
    return o, ". ".join(ev), "; ".join(m for m in margins if m), used


ROW_RULE = ("a row is won where one system's value is better than the other's by more "
            "than %g× on the interval of their ratio (else a tie)" % WIN)
CAST_RULE = ("each paper's system played by the run of its kernel family, the others by "
             "the remaining runs in the order given")
SURPASS_RULE = ("row by row, %s; holds where the first system wins more rows than the "
                "second and at least half of the rows both ran; does not hold where the "
                "second wins as many or more; %s" % (ROW_RULE, CAST_RULE))


def row(bench: str, metric: str, x, label: str, unit: str, better: str):
    """A quantity to set two systems' runs against each other where no published number
    names it: a RefValue with no value, which a run is matched against."""
    from ..data.references import RefValue
    return RefValue("", "", "", "", bench, metric, x, label, 0.0, unit, better)


def nobody_best(ctx, refs_: list):
    """'No one system dominates': (outcome, evidence, margin, results), None with fewer
    than two runs.  Holds where every system loses at least one row to another (on the
    interval, row_winner); does not hold where one system loses none and wins at least
    one row against every other."""
    if len(ctx.runs) < 2:
        return None
    n = len(ctx.runs)
    lost, beat, lines, used = [0] * n, [set() for _ in range(n)], [], []
    for a in range(n):
        for b in range(a + 1, n):
            for ref in refs_:
                w = row_winner(ctx, a, b, ref)
                if w is None:
                    continue
                lines.append(w[1])
                used += w[2]
                if w[0]:
                    win, lose = (a, b) if w[0] == "a" else (b, a)
                    lost[lose] += 1
                    beat[win].add(lose)
    if not lines:
        return None, "no row ran on two systems", "", []
    best = [i for i in range(n) if not lost[i] and len(beat[i]) == n - 1]
    o = False if best else True if all(lost) else UNDECIDED
    if 2 * len(lines) < len(refs_) * n * (n - 1) // 2:
        o = UNDECIDED                   # fewer than half the rows ran on both
        lines.append("fewer than half of the %d rows ran on both systems" % len(refs_))
    margin = "; ".join("%s loses %d row%s" % (ctx.names[i], lost[i], "" if lost[i] == 1
                                              else "s") for i in range(n))
    return o, "; ".join(lines), margin, used


def closer(ctx, whole, parts: list):
    """'The whole workload is closer between systems than the microbenchmarks': for each
    pair of runs, the whole's spread (the larger over the smaller of its two values) on
    its interval against the median spread of the microbenchmark rows.  (outcome,
    evidence, margin, results), None with fewer than two runs."""
    if len(ctx.runs) < 2:
        return None
    outcomes, ev, margins, used = [], [], [], []
    for a in range(len(ctx.runs)):
        for b in range(a + 1, len(ctx.runs)):
            w = ratio(ctx, a, b, whole)
            spreads = sorted(max(r[0], 1 / r[0]) for r in (ratio(ctx, a, b, p) for p in parts)
                             if r is not None)
            if w is None or not spreads:
                continue
            mid = spreads[len(spreads) // 2]
            r, lo, hi, u = w
            if r < 1:                       # the spread: larger over smaller
                r, lo, hi = 1 / r, (1 / hi if hi else None), (1 / lo if lo else None)
            o, m = against(r, lo, hi, mid, True, "×")
            outcomes.append(o)
            used += u
            ev.append("%s vs %s: %s differs %s×, the median of %d microbenchmark rows %s×"
                      % (ctx.names[a], ctx.names[b], whole.quantity, num(r), len(spreads),
                         num(mid)))
            margins.append("%s vs %s: %s" % (ctx.names[a], ctx.names[b], m))
    if not outcomes:
        return None, "needs %s and the microbenchmarks on two systems" % whole.bench, "", []
    o = False if False in outcomes else BORDERLINE if BORDERLINE in outcomes else True
    return o, "; ".join(ev), "; ".join(margins), used
