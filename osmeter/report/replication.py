"""The replication report: all five studies in one page, a summary of what still holds
first.  `osmeter replicate` writes it after running the studies' suites, `osmeter report
--study all` from stored runs; the terminal prints `summary_lines()`, the same summary.

The summary restates each conclusion of each paper with today's verdict, the rule that
decided it and its margin; the papers follow, each laid out by report/study.py.
"""
from __future__ import annotations

import sys
from html import escape

from ..analysis import compare
from ..data import references as refs
from .. import studies
from ..studies import view as sv
from . import study
from .html import Page, document, write_page



def _year(view) -> int:
    return int(refs.report_entry(view_report(view))["year"])


def view_report(view) -> str:
    return studies.get(view.id).REPORT


def _now_year(runs) -> int:
    started = [str(getattr(r, "started", "") or "") for r in runs]
    years = [int(s[:4]) for s in started if s[:4].isdigit()]
    return max(years) if years else 0


def span_words(views, runs) -> str:
    now = _now_year(runs)
    ages = sorted(now - _year(v) for v in views) if now else []
    return "%d–%d years" % (ages[0], ages[-1]) if ages else "years"


def counts(views) -> dict:
    out: dict = {}
    for v in views:
        for c in v.conclusions:
            k = "behaves like one side" if c.verdict.startswith(sv.BEHAVES_LIKE) else c.verdict
            out[k] = out.get(k, 0) + 1
    return out


def too_few_repetitions(views, runs) -> str:
    """The warning the report opens with when the verdicts rest on fewer repetitions than
    they need, else ''."""
    reps = sorted({sv.repetitions(r) for v in views for c in v.conclusions
                   for r in c.rests_on if r is not None} - {0})
    if not reps or reps[0] >= sv.REPETITIONS_NEEDED:
        return ""
    return ("Warning: these verdicts rest on as few as %d repetitions; they need %d (the rank "
            "test cannot decide a difference below 5 a side, and a %d-repetition interval "
            "has a lower level than 93.8%%): run osmeter replicate --runs %d" % (
                reps[0], sv.REPETITIONS_NEEDED, reps[0], sv.REPETITIONS_NEEDED))


def summary_lines(views, runs) -> list[str]:
    """The summary as terminal lines: per paper, each conclusion with today's verdict."""
    out = ["What still holds after %s (%s)" % (span_words(views, runs), ", ".join(
        r.label or r.id for r in runs))]
    warning = too_few_repetitions(views, runs)
    if warning:
        out.append(warning)
    out.append("  " + "; ".join("%s: %d" % kv for kv in sorted(counts(views).items())))
    for v in views:
        out += ["", "%s (%d)" % (v.title.split(":")[0], _year(v))]
        for c in v.conclusions:
            out.append("  %-26s %s" % (c.verdict, _short(c.claim)))
            if c.margin:
                out.append("  %-26s margin: %s" % ("", _short(c.margin, 130)))
            if c.basis:
                out.append("  %-26s rests on: %s" % ("", c.basis))
    return out


def _first(margin: str, most: int = 3) -> str:
    """A margin of many runs or tables in the summary: the first few, the rest counted
    (all of them are in the paper's own section)."""
    parts = [p for p in margin.split("; ") if p]
    if len(parts) <= most:
        return margin
    return "; ".join(parts[:most]) + "; … %d more in the paper's section" % (len(parts) - most)


def _short(s: str, n: int = 110) -> str:
    return s if len(s) <= n else s[:n - 1].rstrip() + "…"


def _summary_html(page: Page, views, runs) -> None:
    page.add('<h2 id="summary">What still holds after %s</h2>' % escape(span_words(views, runs)))
    page.add('<p class="note">Each conclusion of the five papers, restated with today\'s '
             'verdict on %s: <b>holds</b> (by the rule shown, at the level shown), <b>does '
             'not hold</b>, <b>undecided: on the edge</b> (the threshold lies within the '
             'measurement\'s own interval), <b>undecided: cannot tell</b> (too few '
             'repetitions, sizes or systems), <b>behaves like</b> one side of a two-system '
             'contrast (one system), <b>not measured</b>. Counts: %s.</p>' % (
                 escape(", ".join(r.label or r.id for r in runs)),
                 escape("; ".join("%s %d" % kv for kv in sorted(counts(views).items())))))
    for v in views:
        rows = ['<tr><td class="wrap">%s</td><td style="min-width:5em">%s</td>'
                '<td class="%s" style="min-width:7em">%s</td><td class="wrap">%s</td>'
                '<td class="wrap">%s</td></tr>' % (
                    escape(c.claim), escape(c.source),
                    study.VERDICT_CLASS.get(c.verdict, "unclear"), escape(c.verdict),
                    escape(_first(c.margin) or c.rule or c.evidence), escape(c.basis))
                for c in v.conclusions]
        page.add('<h3><a href="#study-%s">%s</a> (%d)</h3>' % (
            escape(v.id), escape(v.title), _year(v)))
        page.add('<div class="scroll"><table class="conclusions"><thead><tr><th>the paper '
                 'concluded</th><th>where</th><th>today</th><th>margin (or rule)</th>'
                 '<th>rests on</th></tr>'
                 '</thead><tbody>%s</tbody></table></div>' % "".join(rows))


def render(views, runs, title: str = "osmeter replication") -> tuple[str, list]:
    page = Page()
    page.add("<h1>%s</h1>" % escape(title))
    page.add('<p class="meta">Five papers, 1990–2006, against %s. Contents: <a '
             'href="#summary">summary</a>%s</p>' % (
                 escape(", ".join(r.label or r.id for r in runs)),
                 "".join(', <a href="#study-%s">%s</a>' % (escape(v.id), escape(
                     v.title.split(":")[0])) for v in views)))
    warning = too_few_repetitions(views, runs)
    if warning:
        page.add('<p class="warning"><b>%s</b></p>' % escape(warning))
    _summary_html(page, views, runs)
    for v in views:
        study.html(v, page)
    return document(title, page), page.figures


def write(runs: list, path: str, title: str = "osmeter replication") -> list[str]:
    """Compare the runs, write the replication report of all five studies and print its
    summary; the figures' names.  Raises CompareError and OSError."""
    cmp = compare.compare(runs)
    views = [studies.build(i, cmp) for i in studies.IDS]
    text, figures = render(views, cmp.runs, title)
    names = write_page(path, text, figures, None)
    print("\n".join(summary_lines(views, cmp.runs)))
    return names


def write_or_reason(runs: list, path: str, title: str = "osmeter replication") -> str | None:
    """write(), saying so on stderr; None when written, else the one-line reason (runs
    that cannot be compared, a file that cannot be written) for the command to fail on."""
    try:
        figures = write(runs, path, title)
    except compare.CompareError as e:
        return str(e)
    except OSError as e:
        return "cannot write the report: %s" % e
    print("wrote %s (%d figures)" % (path, len(figures)), file=sys.stderr)
    return None
