"""A comparison as text: terminal tables, Markdown, CSV and JSON.

All four read the same `compare.Comparison`; the HTML report (html.py) reuses the cell
formatting here.  Ratios are oriented so that > 1 means better than the baseline.
"""
from __future__ import annotations

import csv
import io
import json

from ..analysis import compare
from ..stats import significance as sig
from .. import stats
from . import display, flag_words, gate_words
from ..analysis import flags
from ..analysis.results import too_short
from ..base import numbers, text
from .width import fit_lines, terminal_width
from . import against
from .grid import align as _align, markdown_table as _md_table, md_text


def fmt(v) -> str:
    """A plain number (ratios, MIPS, counts): osmeter/base/numbers.py's one format."""
    return numbers.number(v)


def fmt_ratio(r, low=None, high=None, level=None) -> str:
    """×1.084, with its interval (and the interval's level where below 95%) if given."""
    if r is None:
        return "—"
    s = "×%.3f" % r
    if low is not None and high is not None:
        s += " [%.3f–%.3f]" % (low, high)
        note = stats.level_note(level)
        if note:
            s += " " + note
    return s


def fmt_cell_ratio(c) -> str:
    if c is None:
        return "—"
    v = c.verdict
    if v is None:
        return fmt_ratio(c.ratio)
    return fmt_ratio(c.ratio, v.ratio_low, v.ratio_high, v.ratio_level)


def fmt_index(value, interval) -> str:
    if interval is None:
        return fmt_ratio(value)
    return fmt_ratio(value, interval.low, interval.high, interval.level)


def row_scale(row) -> tuple[float, str]:
    """One divisor and unit for every cell of a row (the baseline's, or the first
    measured), so that the runs' values read side by side: 1.02 ms against 1.10 ms."""
    meds = [c.median for c in row.cells if c is not None and c.status == "ok"
            and c.median is not None and c.median != 0]
    return numbers.scale(meds[0], row.unit) if meds else (1.0, row.unit)


def fmt_value(c, scale: tuple[float, str] | None = None, common=None) -> str:
    """'1.02 ms [0.98, 1.07]' in the row's unit (`scale`, from row_scale); the interval's
    level beside it unless it is the table's shared one (`common`, a stats.level_class
    said once below the table)."""
    if c is None:
        return "not run"
    if c.status != "ok":
        return c.status
    if c.median is None:
        return "—"
    div, unit = scale or (1.0, "")
    if c.median == 0 and unit in numbers.TIME_UNITS:
        return "below resolution"
    s = numbers.join(numbers.number(c.median / div), unit)
    if c.ci_low is not None and c.ci_high is not None:
        s += " " + numbers.interval(c.ci_low, c.ci_high, div)
        if common is None:
            s += " " + c.interval_note if c.interval_note else ""
        elif stats.level_class(c.ci_level, c.ci_method) != common:
            s += " " + display.level_mark(stats.level_class(c.ci_level, c.ci_method))
    elif len(c.reps) == 1:
        s += " (1 repetition: no interval)"
    return s


def verdict_text(c) -> str:
    """The verdict, and that it was reached on a disturbed measurement where it was."""
    v = c.verdict if c is not None else None
    if v is None:
        return ""
    text = v.word
    if v.significant:
        text = "%s (p=%s, q=%s)" % (v.word, numbers.p_value(v.p), numbers.p_value(
            v.p_adjusted if v.p_adjusted is not None else v.p))
    elif v.word == sig.SAME and v.ratio is not None:
        text = "same within ±%g%%" % (100 * v.margin)
    elif v.word == sig.CANNOT_TELL:
        text += " (%s%s)" % (v.detail, "; ~%d repetitions would tell" % v.repetitions_needed
                             if v.repetitions_needed and v.repetitions_needed > max(
                                 v.n_base, v.n_other) else "")
    elif v.ratio is None and v.detail:
        text += " (%s)" % v.detail
    return text + (", DISTURBED" if c.caveat else "")


def marks(row, i) -> str:
    return ("winner" if row.winner == i else "") + ("loser" if row.loser == i else "")


def legend(cmp, level_below: bool = False) -> list[str]:
    """The legend above a comparison's rows.  level_below: the intervals' shared level is
    said under the table (display.interval_advice), so it is not said here as well."""
    base = cmp.names[cmp.baseline]
    level = ("at the level stated below" if level_below else
             "at least 95% unless its level is printed beside it")
    lines = ["Values: median of the per-repetition medians [interval of the median: "
             "order statistics, distribution-free, %s; 'bootstrap' = an interval stored "
             "by an older osmeter]." % level,
             "Ratios: speed relative to the baseline %r; > 1 = better (faster, more "
             "bandwidth), < 1 = worse; [95%% interval of the ratio, level printed where "
             "lower]." % base]
    if len(cmp.runs) > 1:
        method = sig.T_NOISE_METHOD if cmp.noise is not None else sig.T_METHOD
        lines.append(
            "Verdicts: %s; p = the row's own p-value, q = corrected over the %d questions "
            "asked (a benchmark against one other run; Benjamini–Bogomolov over %d tests); "
            "better/worse (winner/loser) needs q <= %.3g and a difference of at least "
            "%.3g%%; 'same' = the %.3g%% interval within ±%g%%; otherwise 'cannot tell'. "
            "Values not all positive: no ratio, Mann–Whitney on the values."
            % (method, cmp.questions, cmp.test_count, cmp.alpha, 100 * cmp.min_effect,
               100 * (1 - 2 * cmp.alpha), 100 * cmp.margin))
        lines.append(compare.noise_note(cmp))
    return lines


def verdict_summary(cmp) -> str:
    """How many verdicts are shown and how many of them may be false."""
    same = sum(1 for row in cmp.rows for v in row.tests.values() if v.word == sig.SAME)
    return ("%d verdict(s) better/worse and %d 'same' over %d questions asked (%d tests); "
            "at a false-discovery rate of %.3g over the questions, expect at most %.2g of "
            "the verdicts to be false on average%s."
            % (cmp.discoveries, same, cmp.questions, cmp.test_count, cmp.alpha,
               cmp.expected_false, "; left out of the indices (values not all positive): "
               + ", ".join(cmp.index_left_out) if cmp.index_left_out else ""))


# ---- terminal ---------------------------------------------------------------------------

def with_winners(cmp) -> bool:
    return len(cmp.runs) > 2 or any(r.winner is not None or r.loser is not None
                                    for r in cmp.rows)


def _headers(cmp, tags: bool = False, names=None) -> list[str]:
    h = ["benchmark"]
    for i, name in enumerate(names or cmp.names):
        if i == cmp.baseline:
            h.append(name + " (baseline)")
        else:
            h += [name, "ratio", "verdict"]
    if len(cmp.runs) > 1 and with_winners(cmp):
        h.append("winner / loser")
    return h + (["notes"] if tags else [])


def _cells(cmp, row, common=None, tags: bool = False, names=None) -> list[str]:
    r = [row.label]
    scale = row_scale(row)
    for i, c in enumerate(row.cells):
        val = fmt_value(c, scale, common)
        if c is not None and c.curve_class:
            val += " " + c.curve_class
        if i == cmp.baseline:
            r.append(val)
        else:
            r += [val, fmt_cell_ratio(c), verdict_text(c)]
    if len(cmp.runs) > 1 and with_winners(cmp):
        names = names or cmp.names
        r.append(" / ".join([names[row.winner] if row.winner is not None else "—",
                             names[row.loser] if row.loser is not None else "—"]))
    return r + ([row_tags(cmp, row)] if tags else [])


def row_tags(cmp, row) -> str:
    """The row's reliability warnings as tags, once per row: 'noisy (B), few-reps'
    (a tag without runs concerns every run)."""
    by_tag: dict[str, list[str]] = {}
    for i, c in enumerate(row.cells):
        if c is None or c.result is None:
            continue
        for w in c.result.warnings:
            who = by_tag.setdefault(flag_words.tag_of(w)[0], [])
            if cmp.names[i] not in who:
                who.append(cmp.names[i])
    return ", ".join(t if len(who) == len(row.cells) else "%s (%s)" % (t, ", ".join(who))
                     for t, who in by_tag.items())


def cell_results(cmp) -> list:
    return [c.result for row in cmp.rows for c in row.cells if c is not None and c.result]


def index_rows(cmp, names=None) -> list[list[str]]:
    rows = [["category", "metrics"] + (names or cmp.names)]
    for cat in cmp.categories:
        if cat in cmp.index:
            rows.append([cat, str(cmp.index_counts[cat])] +
                        [fmt_index(v, ci) for v, ci in zip(cmp.index[cat], cmp.index_ci[cat])])
    rows.append(["overall", str(sum(cmp.index_counts.values()))] +
                [fmt_index(v, ci) for v, ci in zip(cmp.overall, cmp.overall_ci)])
    return rows


# A ratio this far from 1 either way is shown by default even without a verdict (with
# few repetitions nothing is significant, and a reader still wants to see it).
LARGE_DIFFERENCE = 1.2


def is_too_short(row) -> bool:
    """A phase too short to time alone in every run: measured, shown only beside its
    benchmark's whole (osmeter.analysis.results.too_short), never a verdict of its own."""
    results = [c.result for c in row.cells if c is not None]
    return bool(results) and all(r is not None and too_short(r) for r in results)


def is_headline(row) -> bool:
    """What a reader of a comparison looks for: a verdict, a winner or a loser, a
    difference of 20% or more, or curves of different classes."""
    if is_too_short(row):
        return False
    if len(row.cells) < 2 or row.unlike:
        return True
    if row.winner is not None or row.loser is not None:
        return True
    for c in row.cells:
        if c is None or c.status != "ok":
            continue
        if c.verdict is not None and c.verdict.significant:
            return True
        if c.ratio is not None and not 1 / LARGE_DIFFERENCE < c.ratio < LARGE_DIFFERENCE:
            return True
    return len({c.curve_class for c in row.cells if c is not None and c.curve_class}) > 1


def is_not_run(row) -> bool:
    return any(c is None or c.status != "ok" for c in row.cells)


def not_run_line(cmp, rows) -> str:
    """'not run: 12 rows in B (mem.write, ...); skipped in every run: syscall.kqueue'."""
    parts: dict[str, list[str]] = {}
    for row in rows:
        missing = [i for i, c in enumerate(row.cells) if c is None or c.status != "ok"]
        statuses = {"not run" if row.cells[i] is None else row.cells[i].status for i in missing}
        where = ("every run" if len(missing) == len(row.cells) else
                 ", ".join(cmp.names[i] for i in missing))
        key = "%s in %s" % ("/".join(sorted(statuses)), where)
        if row.bench not in parts.setdefault(key, []):
            parts[key].append(row.bench)
    return "; ".join("%s: %s" % (k, ", ".join(v[:6]) + (" and %d more" % (len(v) - 6)
                                                         if len(v) > 6 else ""))
                     for k, v in parts.items())


def terminal(cmp, references: bool = False, show_all: bool = False,
             width: int | None = None, gate=None) -> str:
    """The comparison for a reader: by default the rows with a verdict or a large
    difference, the indices, the gate (analysis/gate.py's Gate, when one was evaluated)
    and the metadata that differs; every row with show_all (the Markdown, CSV and JSON
    forms always have every row)."""
    width = width or terminal_width()

    def align(table):
        return _align(table, width)
    multi = len(cmp.runs) > 1
    out = ["osmeter comparison: " + ", ".join(
        "%s (%s, %s)" % (r.name, r.id, r.started) for r in cmp.runs)]
    out += legend(cmp, level_below=True)
    if multi:
        out.append("")
        out.append("What differs between the systems (%d metadata keys equal):" % cmp.meta_same)
        if cmp.meta_diff:
            cut = max(16, (width - 30) // len(cmp.names)) if not show_all else None
            out += align([["key"] + cmp.names] + [[k] + [_cut(v, cut) for v in vals]
                                                   for k, vals in cmp.meta_diff])
        else:
            out.append("  nothing recorded differs")
    out += ["warning: " + w for w in cmp.warnings]
    results = cell_results(cmp)
    common = display.common_level(results)
    quiet = []                      # categories with nothing to show by default
    for cat in cmp.categories:
        rows = cmp.rows_in(cat)
        shown = rows if show_all or not multi else \
            [r for r in rows if is_headline(r) and not is_not_run(r)]
        missing = [] if show_all else [r for r in rows if is_not_run(r) and r not in shown]
        if not shown:
            quiet.append("%s (%d row%s)" % (cat, len(rows), "" if len(rows) == 1 else "s"))
            if missing:
                out += ["", "== %s ==" % cat, "  " + not_run_line(cmp, missing)]
            continue
        out.append("")
        out.append("== %s ==%s" % (cat, "" if len(shown) == len(rows) else
                                   "  %d of %d rows shown (--all: every row)"
                                   % (len(shown), len(rows))))
        out += align([_headers(cmp, tags=True)] + [_cells(cmp, r, common, tags=True)
                                                    for r in shown])
        for r in shown:
            other = [n for n in r.notes if not n.startswith(FLAG_NOTES)]
            if other:
                out.append("  note: %s: %s" % (r.label, " | ".join(other)))
        if missing:
            out.append("  " + not_run_line(cmp, missing))
    if quiet and not show_all:
        out += ["", "No verdict and no difference of %d%% or more in: %s."
                % (round(100 * (LARGE_DIFFERENCE - 1)), ", ".join(quiet))]
    out += [""] + legend_of_tags(cmp, results, common)
    if multi:
        out += ["", verdict_summary(cmp), ""]
        out.append("Indices (geometric mean of ratios to %r; > 1 = better; [95%% interval]):"
                   % cmp.names[cmp.baseline])
        out += align(index_rows(cmp))
        mt = compare.mips_relative_table(cmp)
        if mt and show_all:
            out.append("")
            out.append("MIPS-relative speed (Ousterhout): ratio / (cpu.integer ratio); "
                       "1 = the OS kept pace with the CPU")
            out.append("cpu.integer (Mops/s): " + ", ".join(
                "%s %s" % (n, fmt(s)) for n, s in zip(cmp.names, cmp.cpu_speed)))
            out += align([["benchmark"] + cmp.names] +
                          [[row.label] + [fmt(v) for v in vals] for row, vals in mt])
        elif mt:
            out += ["", "MIPS-relative speeds (Ousterhout) of %d rows: --all." % len(mt)]
    out += gate_lines(cmp, gate)
    out += _remote_lines(cmp)
    if references:
        out.append("")
        out += references_text(cmp)
    return "\n".join(_wrap_long(out, width)) + "\n"


# Row notes that the tags column stands for (osmeter.analysis.flags kinds).
FLAG_NOTES = (flags.DISTURBED, flags.IMPRECISE, flags.INCOMPLETE, flags.UNRELIABLE)


def legend_of_tags(cmp, results, common) -> list[str]:
    """The intervals' shared level and the meaning of the tags in the notes column."""
    lines = [display.interval_advice(results, common)]
    meanings = {}
    for r in results:
        for w in r.warnings:
            meanings.setdefault(*flag_words.tag_of(w))
    if any(c.caveat for row in cmp.rows for c in row.cells if c is not None):
        lines.append("DISTURBED beside a verdict: one of the two runs was disturbed in that "
                     "row by enough to explain the difference (the notes say what); measure "
                     "again on a quiet machine before acting on it.")
    if meanings:
        lines.append("Notes: flagged results, by tag: " + "; ".join(
            "%s = %s" % kv for kv in meanings.items()) + ". In full: --md or --json.")
    return [l for l in lines if l]


def _cut(text: str, room: int | None) -> str:
    return text if room is None or len(text) <= room else text[:room - 1] + "…"


def _wrap_long(lines: list[str], width: int) -> list[str]:
    """Prose lines wrapped to the width (the tables were fitted to it already)."""
    return fit_lines(lines, width)


def _remote_lines(cmp) -> list[str]:
    return against.remote_lines(cmp)


def gate_lines(cmp, gate) -> list[str]:
    """The gate's section (report/gate_words.py) after a blank line; none without a gate."""
    return [] if gate is None else [""] + gate_words.section(gate, cmp.names[cmp.baseline])


def references_text(cmp) -> list[str]:
    return against.text_lines(cmp)


# ---- Markdown ---------------------------------------------------------------------------

def markdown(cmp, references: bool = False, gate=None) -> str:
    """The comparison as Markdown (GitHub's): what came with the runs (labels, the
    system description, warnings that quote them) is inert text (grid.md_text)."""
    names = [md_text(n) for n in cmp.names]
    out = ["# osmeter comparison", ""]
    out += ["- **%s**: run `%s`, started %s, suite %s%s" % (
        names[i], r.id, md_text(r.started), md_text(r.suite or "—"),
        " (baseline)" if i == cmp.baseline else "") for i, r in enumerate(cmp.runs)]
    out += [""] + [md_text(line) for line in legend(cmp)]
    if len(cmp.runs) > 1:
        out += ["", md_text(verdict_summary(cmp))]
        out += ["", "## What differs", "", "%d metadata keys are equal." % cmp.meta_same, ""]
        if cmp.meta_diff:
            out += _md_table([["key"] + names] + [[md_text(k)] + [md_text(x) for x in v]
                                                  for k, v in cmp.meta_diff])
    if cmp.warnings:
        out += [""] + ["> warning: " + md_text(w) for w in cmp.warnings]
    for cat in cmp.categories:
        out += ["", "## %s" % cat, ""]
        out += _md_table([_headers(cmp, names=names)] + [_cells(cmp, r, names=names)
                                                          for r in cmp.rows_in(cat)])
        unlike = ["> %s: %s" % (md_text(r.label), md_text(r.unlike))
                  for r in cmp.rows_in(cat) if r.unlike]
        out += [""] + unlike if unlike else []
    if len(cmp.runs) > 1:
        out += ["", "## Indices", "", "Geometric mean of ratios to the baseline; > 1 = better.", ""]
        out += _md_table(index_rows(cmp, names))
        mt = compare.mips_relative_table(cmp)
        if mt:
            out += ["", "## MIPS-relative speed", ""]
            out += _md_table([["benchmark"] + names] +
                             [[row.label] + [fmt(v) for v in vals] for row, vals in mt])
    reg = gate_lines(cmp, gate)
    if reg:
        out += ["", "## Regression gate", ""] + ["    " + l for l in reg[1:]]
    remote_lines = _remote_lines(cmp)
    if remote_lines:
        out += ["", "## Remote penalty", ""] + ["    " + l for l in remote_lines[1:]]
    if references:
        out += ["", "## Against the studies", ""] + ["    " + l for l in references_text(cmp)]
    return "\n".join(out) + "\n"


# ---- CSV --------------------------------------------------------------------------------

CSV_FIELDS = ["category", "bench", "metric", "x", "x_name", "unit", "better", "shape", "run",
              "run_id", "baseline", "status", "n", "median", "ci_low", "ci_high", "ci_level",
              "ci_method", "ratio", "ratio_low", "ratio_high", "ratio_level", "mips_relative",
              "verdict", "p", "q", "winner", "loser", "curve_class"]


def csv_text(cmp) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for row in cmp.rows:
        for i, c in enumerate(row.cells):
            if c is None:
                continue
            v = c.verdict
            w.writerow(text.spreadsheet_row({
                "category": row.category, "bench": row.bench, "metric": row.metric,
                "x": "" if row.x is None else repr(row.x), "x_name": row.x_name or "",
                "unit": row.unit, "better": row.better, "shape": row.shape,
                "run": cmp.names[i], "run_id": cmp.runs[i].id,
                "baseline": int(i == cmp.baseline), "status": c.status, "n": c.n,
                "median": _num(c.median), "ci_low": _num(c.ci_low), "ci_high": _num(c.ci_high),
                "ci_level": _num(c.ci_level), "ci_method": c.ci_method or "",
                "ratio": _num(c.ratio), "ratio_low": _num(v.ratio_low) if v else "",
                "ratio_high": _num(v.ratio_high) if v else "",
                "ratio_level": _num(v.ratio_level) if v else "",
                "mips_relative": _num(c.mips_relative),
                "verdict": v.word if v else "", "p": _num(v.p) if v else "",
                "q": _num(v.p_adjusted) if v else "",
                "winner": int(row.winner == i), "loser": int(row.loser == i),
                "curve_class": c.curve_class or ""}))
    return buf.getvalue()


def _num(v):
    return "" if v is None else repr(float(v))


# ---- JSON -------------------------------------------------------------------------------

def to_dict(cmp, references: bool = False, gate=None) -> dict:
    d = {
        "format": "osmeter.comparison", "version": 1,
        "test": sig.T_NOISE_METHOD if cmp.noise is not None else sig.T_METHOD,
        "alpha": cmp.alpha, "min_effect": cmp.min_effect,
        "verdicts": {"correction": "Benjamini-Bogomolov (questions: a benchmark against "
                     "one other run)", "questions": cmp.questions,
                     "questions_selected": cmp.selected, "margin": cmp.margin,
                     "tests": cmp.test_count,
                     "shown": cmp.discoveries, "expected_false_at_most": cmp.expected_false},
        "between_run_noise": None if cmp.noise is None else {
            "profile": cmp.noise.name, "runs": cmp.noise.runs},
        "ratio_orientation": "speed relative to the baseline: > 1 = better",
        "runs": [{"id": r.id, "label": r.label, "name": r.name, "started": r.started,
                  "suite": r.suite, "smoke": r.smoke} for r in cmp.runs],
        "baseline": cmp.runs[cmp.baseline].id,
        "metadata_differences": {k: v for k, v in cmp.meta_diff},
        "metadata_equal_keys": cmp.meta_same,
        "warnings": cmp.warnings,
        "cpu_integer_mops": cmp.cpu_speed,
        "indices": {cat: {"metrics": cmp.index_counts[cat], "per_run": v,
                          "intervals": [_interval(ci) for ci in cmp.index_ci[cat]]}
                    for cat, v in cmp.index.items()},
        "overall_index": cmp.overall,
        "overall_index_intervals": [_interval(ci) for ci in cmp.overall_ci],
        "rows": [],
    }
    for row in cmp.rows:
        cells = []
        for i, c in enumerate(row.cells):
            if c is None:
                cells.append(None)
                continue
            v = c.verdict
            cells.append({"run": cmp.runs[i].id, "status": c.status, "reason": c.reason,
                          "n": c.n, "median": c.median, "ci_low": c.ci_low,
                          "ci_high": c.ci_high, "ci_level": c.ci_level,
                          "ci_method": c.ci_method, "repetition_medians": c.reps,
                          "ratio": c.ratio, "mips_relative": c.mips_relative,
                          "ratio_low": v.ratio_low if v else None,
                          "ratio_high": v.ratio_high if v else None,
                          "ratio_level": v.ratio_level if v else None,
                          "verdict": None if v is None else {
                              "word": v.word, "p": v.p, "q": v.p_adjusted,
                              "significant": v.significant, "detail": v.detail,
                              "method": v.method},
                          "curve_class": c.curve_class, "standing": c.standing,
                          "disturbed": c.disturbed or None,
                          "verdict_caveat": c.caveat or None})
        d["rows"].append({"category": row.category, "bench": row.bench, "metric": row.metric,
                          "x": row.x, "x_name": row.x_name, "unit": row.unit,
                          "better": row.better, "shape": row.shape, "cells": cells,
                          "winner": cmp.runs[row.winner].id if row.winner is not None else None,
                          "loser": cmp.runs[row.loser].id if row.loser is not None else None,
                          "notes": row.notes})
    if gate is not None:
        d["regression_gate"] = gate_words.to_dict(gate)
    penalties = against.remote_dict(cmp)
    if penalties:
        d["remote_penalties"] = penalties
    if references:
        d.update(against.to_dict(cmp))
    return d


def _interval(ci):
    return None if ci is None else {"low": ci.low, "high": ci.high, "level": ci.level}


def json_text(cmp, references: bool = False, gate=None) -> str:
    return json.dumps(to_dict(cmp, references, gate), indent=2, allow_nan=False) + "\n"
