"""A comparison as text: terminal tables, Markdown, CSV and JSON.

All four read the same `compare.Comparison`; the HTML report (html.py) reuses the cell
formatting here.  Ratios are oriented so that > 1 means better than the baseline.
"""
from __future__ import annotations

import csv
import io
import json
import math

from .. import compare as cmpmod
from .. import significance as sig


def fmt(v, digits: int = 3) -> str:
    """A number with `digits` significant digits, no exponent for everyday sizes."""
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    if v == 0 or not math.isfinite(v):
        return "%g" % v
    mag = math.floor(math.log10(abs(v)))
    if -3 <= mag < 9:
        decimals = max(0, digits - 1 - mag)
        return "{:,.{}f}".format(v, decimals).replace(",", " ") if mag >= 4 else \
            "%.*f" % (decimals, v)
    return "%.*g" % (digits, v)


def fmt_ratio(r) -> str:
    return "—" if r is None else "×%.3f" % r


def fmt_value(c) -> str:
    if c is None:
        return "not run"
    if c.status != "ok":
        return c.status
    if c.median is None:
        return "—"
    s = fmt(c.median)
    if c.ci_low is not None and c.ci_high is not None:
        s += " [%s–%s]" % (fmt(c.ci_low), fmt(c.ci_high))
    return s


def verdict_text(c) -> str:
    v = c.verdict if c is not None else None
    if v is None:
        return ""
    if v.significant:
        return "%s (p=%.2g)" % (v.word, v.p)
    return v.word


def marks(row, i) -> str:
    return ("winner" if row.winner == i else "") + ("loser" if row.loser == i else "")


def legend(cmp) -> list[str]:
    base = cmp.names[cmp.baseline]
    lines = ["Values: median [95% interval of the median] per benchmark.",
             "Ratios: speed relative to the baseline %r; > 1 = better (faster, more "
             "bandwidth), < 1 = worse." % base]
    if len(cmp.runs) > 1:
        lines.append(
            "Verdicts: %s, alpha %.3g, minimum effect %.3g%%; a winner/loser is marked only "
            "where the difference is significant, otherwise 'no clear difference'.  No "
            "correction for testing many rows: expect about one false verdict in %d."
            % (sig.TEST_NAME, cmp.alpha, 100 * cmp.min_effect, round(1 / cmp.alpha)))
    return lines


# ---- terminal ---------------------------------------------------------------------------

def _align(table: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    out = []
    for k, r in enumerate(table):
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def _headers(cmp) -> list[str]:
    h = ["benchmark", "unit"]
    for i, name in enumerate(cmp.names):
        if i == cmp.baseline:
            h.append(name + " (baseline)")
        else:
            h += [name, "ratio", "verdict"]
    if len(cmp.runs) > 1:
        h.append("winner / loser")
    return h


def _cells(cmp, row) -> list[str]:
    r = [row.label, row.unit]
    for i, c in enumerate(row.cells):
        val = fmt_value(c)
        if c is not None and c.curve_class:
            val += " " + c.curve_class
        if i == cmp.baseline:
            r.append(val)
        else:
            r += [val, fmt_ratio(c.ratio if c else None), verdict_text(c)]
    if len(cmp.runs) > 1:
        r.append(" / ".join([cmp.names[row.winner] if row.winner is not None else "—",
                             cmp.names[row.loser] if row.loser is not None else "—"]))
    return r


def index_rows(cmp) -> list[list[str]]:
    rows = [["category", "metrics"] + cmp.names]
    for cat in cmp.categories:
        if cat in cmp.index:
            rows.append([cat, str(cmp.index_counts[cat])] + [fmt_ratio(v) for v in cmp.index[cat]])
    rows.append(["overall", str(sum(cmp.index_counts.values()))] +
                [fmt_ratio(v) for v in cmp.overall])
    return rows


def terminal(cmp, references: bool = False) -> str:
    out = []
    out.append("osmeter comparison: " + ", ".join(
        "%s (%s, %s)" % (r.name, r.id, r.started) for r in cmp.runs))
    out += legend(cmp)
    if len(cmp.runs) > 1:
        out.append("")
        out.append("What differs between the systems (%d metadata keys equal):" % cmp.meta_same)
        if cmp.meta_diff:
            out += _align([["key"] + cmp.names] + [[k] + v for k, v in cmp.meta_diff])
        else:
            out.append("  nothing recorded differs")
    for w in cmp.warnings:
        out.append("warning: " + w)
    for cat in cmp.categories:
        out.append("")
        out.append("== %s ==" % cat)
        out += _align([_headers(cmp)] + [_cells(cmp, r) for r in cmp.rows_in(cat)])
        for r in cmp.rows_in(cat):
            for n in r.notes:
                out.append("  note: %s: %s" % (r.label, n))
    if len(cmp.runs) > 1:
        out.append("")
        out.append("Indices (geometric mean of ratios to %r; > 1 = better):"
                   % cmp.names[cmp.baseline])
        out += _align(index_rows(cmp))
        mt = cmpmod.mips_relative_table(cmp)
        if mt:
            out.append("")
            out.append("MIPS-relative speed (Ousterhout): ratio / (cpu.integer ratio); "
                       "1 = the OS kept pace with the CPU")
            out.append("cpu.integer (Mops/s): " + ", ".join(
                "%s %s" % (n, fmt(s)) for n, s in zip(cmp.names, cmp.cpu_speed)))
            out += _align([["benchmark"] + cmp.names] +
                          [[row.label] + [fmt(v) for v in vals] for row, vals in mt])
    out += regression_lines(cmp)
    out += _remote_lines(cmp)
    if references:
        out.append("")
        out += references_text(cmp)
    return "\n".join(out) + "\n"


def _remote_lines(cmp) -> list[str]:
    from . import against
    return against.remote_lines(cmp)


def regression_lines(cmp) -> list[str]:
    if cmp.gate_pct is None:
        return []
    out = ["", "Regression gate: slower than %r by more than %g%% (one-sided Mann-Whitney, "
           "alpha %.3g):" % (cmp.names[cmp.baseline], cmp.gate_pct, cmp.alpha)]
    if not cmp.regressions:
        out.append("  none found")
    for row, i, pct, p in cmp.regressions:
        out.append("  SLOWER %s: %s is %.1f%% slower (p=%.2g)" % (row.label, cmp.names[i], pct, p))
    undecided = cmpmod.undecided_rows(cmp)
    if undecided:
        out.append("  not judged (too few repetitions): %d rows, e.g. %s"
                   % (len(undecided), ", ".join(undecided[:3])))
    return out


def references_text(cmp) -> list[str]:
    from . import against
    return against.text_lines(cmp)


# ---- Markdown ---------------------------------------------------------------------------

def _md_table(table: list[list[str]]) -> list[str]:
    esc = [[c.replace("|", "\\|") for c in r] for r in table]
    out = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(esc[0])]
    out += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return out


def markdown(cmp, references: bool = False) -> str:
    out = ["# osmeter comparison", ""]
    out += ["- **%s**: run `%s`, started %s, suite %s%s" % (
        r.name, r.id, r.started, r.suite or "—", " (baseline)" if i == cmp.baseline else "")
        for i, r in enumerate(cmp.runs)]
    out += [""] + legend(cmp)
    if len(cmp.runs) > 1:
        out += ["", "## What differs", "", "%d metadata keys are equal." % cmp.meta_same, ""]
        if cmp.meta_diff:
            out += _md_table([["key"] + cmp.names] + [[k] + v for k, v in cmp.meta_diff])
    if cmp.warnings:
        out += [""] + ["> warning: " + w for w in cmp.warnings]
    for cat in cmp.categories:
        out += ["", "## %s" % cat, ""]
        out += _md_table([_headers(cmp)] + [_cells(cmp, r) for r in cmp.rows_in(cat)])
    if len(cmp.runs) > 1:
        out += ["", "## Indices", "", "Geometric mean of ratios to the baseline; > 1 = better.", ""]
        out += _md_table(index_rows(cmp))
        mt = cmpmod.mips_relative_table(cmp)
        if mt:
            out += ["", "## MIPS-relative speed", ""]
            out += _md_table([["benchmark"] + cmp.names] +
                             [[row.label] + [fmt(v) for v in vals] for row, vals in mt])
    reg = regression_lines(cmp)
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
              "run_id", "baseline", "status", "n", "median", "ci_low", "ci_high", "ratio",
              "mips_relative", "verdict", "p", "winner", "loser", "curve_class"]


def csv_text(cmp) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for row in cmp.rows:
        for i, c in enumerate(row.cells):
            if c is None:
                continue
            v = c.verdict
            w.writerow({
                "category": row.category, "bench": row.bench, "metric": row.metric,
                "x": "" if row.x is None else repr(row.x), "x_name": row.x_name or "",
                "unit": row.unit, "better": row.better, "shape": row.shape,
                "run": cmp.names[i], "run_id": cmp.runs[i].id,
                "baseline": int(i == cmp.baseline), "status": c.status, "n": c.n,
                "median": _num(c.median), "ci_low": _num(c.ci_low), "ci_high": _num(c.ci_high),
                "ratio": _num(c.ratio), "mips_relative": _num(c.mips_relative),
                "verdict": v.word if v else "", "p": _num(v.p) if v else "",
                "winner": int(row.winner == i), "loser": int(row.loser == i),
                "curve_class": c.curve_class or ""})
    return buf.getvalue()


def _num(v):
    return "" if v is None else repr(float(v))


# ---- JSON -------------------------------------------------------------------------------

def to_dict(cmp, references: bool = False) -> dict:
    d = {
        "format": "osmeter.comparison", "version": 1,
        "test": sig.TEST_NAME, "alpha": cmp.alpha, "min_effect": cmp.min_effect,
        "ratio_orientation": "speed relative to the baseline: > 1 = better",
        "runs": [{"id": r.id, "label": r.label, "name": r.name, "started": r.started,
                  "suite": r.suite, "smoke": r.smoke} for r in cmp.runs],
        "baseline": cmp.runs[cmp.baseline].id,
        "metadata_differences": {k: v for k, v in cmp.meta_diff},
        "metadata_equal_keys": cmp.meta_same,
        "warnings": cmp.warnings,
        "cpu_integer_mops": cmp.cpu_speed,
        "indices": {cat: {"metrics": cmp.index_counts[cat], "per_run": v}
                    for cat, v in cmp.index.items()},
        "overall_index": cmp.overall,
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
                          "ci_high": c.ci_high, "repetition_medians": c.reps,
                          "ratio": c.ratio, "mips_relative": c.mips_relative,
                          "verdict": None if v is None else {
                              "word": v.word, "p": v.p, "significant": v.significant,
                              "detail": v.detail},
                          "curve_class": c.curve_class})
        d["rows"].append({"category": row.category, "bench": row.bench, "metric": row.metric,
                          "x": row.x, "x_name": row.x_name, "unit": row.unit,
                          "better": row.better, "shape": row.shape, "cells": cells,
                          "winner": cmp.runs[row.winner].id if row.winner is not None else None,
                          "loser": cmp.runs[row.loser].id if row.loser is not None else None,
                          "notes": row.notes})
    if cmp.gate_pct is not None:
        d["regression_gate"] = {
            "fail_on_slower_pct": cmp.gate_pct,
            "regressions": [{"bench": r.bench, "metric": r.metric, "x": r.x,
                             "run": cmp.runs[i].id, "slower_pct": pct, "p": p}
                            for r, i, pct, p in cmp.regressions]}
    from . import against
    penalties = against.remote_dict(cmp)
    if penalties:
        d["remote_penalties"] = penalties
    if references:
        d.update(against.to_dict(cmp))
    return d


def json_text(cmp, references: bool = False) -> str:
    return json.dumps(to_dict(cmp, references), indent=2, allow_nan=False) + "\n"
