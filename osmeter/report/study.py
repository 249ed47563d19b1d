"""A study view (osmeter/studies/) as text and as HTML: the paper's tables with this
machine's runs beside them, its figures with our curves, its conclusions with today's
verdict.  `osmeter compare --study ID` prints `text()`, `osmeter report --study ID` puts
`html()` into the report."""
from __future__ import annotations

import json
from html import escape

from . import svg
from .grid import align as _align, markdown_table as _md_table
from ..data import references as refs
from ..base.numbers import number as fmt

VERDICT_CLASS = {"holds": "better", "does not hold": "worse"}


def band_words(f) -> str:
    """A sweep figure's caption: the interval level its results really have (a
    3-repetition interval is 75%, not 95%)."""
    levels = sorted({lv for s in f.series for lv in (s.levels or [])})
    if not levels:
        banded = any(p[2] is not None for s in f.series for p in s.points if len(p) > 2)
        return "median with interval band (level not recorded)" if banded else \
            "median (no interval: too few repetitions)"
    words = "/".join("%g%%" % (100 * lv if lv <= 1 else lv) for lv in levels)
    return "median with %s interval band" % words


def _cell(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, refs.Printed):
        return v.text                       # the paper's number, as it printed it
    return fmt(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def _grid(t) -> list[list[str]]:
    return [t.head] + [[r.label] + [_cell(c) for c in r.cells] for r in t.rows]


# ---- text -----------------------------------------------------------------------------------

def text(view, markdown: bool = False) -> str:
    out = []
    h = (lambda s, n: "#" * n + " " + s) if markdown else (lambda s, n: "== %s ==" % s
                                                           if n > 1 else s)
    out += [h(view.title, 1), "", view.cite, ""] + ["  " + s if not markdown else "- " + s
                                                     for s in view.setup]
    out += ["", "This machine's runs: " + ", ".join(view.runs)]
    for w in view.warnings:
        out.append("warning: " + w)
    for sec in view.sections:
        out.append("")
        out.append(h(sec.title, 2))
        if hasattr(sec, "rows"):
            out.append(sec.caption)
            out += _md_table(_grid(sec)) if markdown else _align(_grid(sec))
            out += ["  note: " + n for n in sec.notes]
        else:
            out.append("published (%s):" % sec.caption if sec.caption else "published:")
            out += ["  %s: %s" % p for p in sec.published]
            if sec.missing:
                out.append("ours: none — " + sec.missing)
            for s in sec.series:
                out.append("ours, %s: %s" % (s.name, s.description or s.cls or "unclassified"))
            if sec.verdict:
                out.append("against the paper: " + sec.verdict)
    if view.missing:
        out += ["", h("Lost from the text", 2)] + ["  " + m for m in view.missing]
    out += ["", h("Conclusions, with today's verdict", 2)]
    for c in view.conclusions:
        out.append("- %s (%s)" % (c.claim, c.source))
        out.append("  %s: %s" % (c.verdict.upper(), c.evidence))
        if c.rule:
            out.append("  rule: " + c.rule)
        if c.margin:
            out.append("  margin: " + c.margin)
        if c.basis:
            out.append("  rests on: " + c.basis)
    return "\n".join(out) + "\n"


def to_dict(view) -> dict:
    def table(t):
        return {"id": t.id, "title": t.title, "caption": t.caption, "head": t.head,
                "rows": [{"label": r.label, "kind": r.kind, "cells": r.cells} for r in t.rows],
                "notes": t.notes}

    def figure(f):
        return {"id": f.id, "title": f.title, "bench": f.bench, "metric": f.metric,
                "published": [{"system": s, "shape": sh} for s, sh in f.published],
                "ours": [{"run": s.name, "class": s.cls, "description": s.description}
                         for s in f.series], "verdict": f.verdict, "missing": f.missing}
    return {"study": view.id, "title": view.title, "runs": view.runs,
            "sections": [table(s) if hasattr(s, "rows") else figure(s) for s in view.sections],
            "conclusions": [{k: v for k, v in c.__dict__.items() if k != "rests_on"}
                            for c in view.conclusions], "lost": view.missing}


def json_text(view) -> str:
    return json.dumps(to_dict(view), indent=2, allow_nan=False, default=str) + "\n"


# ---- HTML -----------------------------------------------------------------------------------

def _html_table(t) -> str:
    head = "".join("<th>%s</th>" % escape(c) for c in t.head)
    body = []
    for r in t.rows:
        cls = {"ours": ' class="ours"', "derived": ' class="derived"'}.get(r.kind, "")
        body.append("<tr%s><td>%s</td>%s</tr>" % (cls, escape(r.label), "".join(
            '<td class="num">%s</td>' % escape(_cell(c)) for c in r.cells)))
    return ('<div class="scroll"><table class="study"><thead><tr>%s</tr></thead><tbody>%s'
            '</tbody></table></div>' % (head, "".join(body)))


def _figure_svg(f) -> str | None:
    if not f.series:
        return None
    if f.kind == "scatter":
        return svg.scatter_chart(f.title, f.x_label, f.y_label,
                                 [(s.run, s.name, s.points, s.fit, s.cls) for s in f.series],
                                 "every operation of every repetition; dashed: fitted curve")
    return svg.line_chart(f.title, f.x_label, f.y_label,
                          [(s.run, s.name, s.points) for s in f.series],
                          band_words(f))


def html(view, page) -> None:
    """Add the study view to a report page (osmeter/report/html.py's Page)."""
    sid = "study-" + view.id
    page.add('<h2 id="%s">%s</h2>' % (sid, escape(view.title)))
    page.add('<p class="meta">%s</p>' % escape(view.cite))
    page.add("<details><summary>The study's set-up</summary>%s</details>" % "".join(
        "<p class=\"note\">%s</p>" % escape(s) for s in view.setup))
    for w in view.warnings:
        page.add('<div class="warn">%s</div>' % escape(w))
    for sec in view.sections:
        if hasattr(sec, "rows"):
            page.add('<h3 class="study-table" id="%s-%s">%s</h3>' % (
                sid, escape(_slug(sec.id)), escape(sec.title)))
            page.add('<p class="note">%s</p>' % escape(sec.caption))
            page.add(_html_table(sec))
            if sec.notes:
                page.add("<ul class=\"note\">%s</ul>" % "".join(
                    "<li>%s</li>" % escape(n) for n in sec.notes))
            continue
        page.add('<h3 class="study-figure" id="%s-%s">%s</h3>' % (
            sid, escape(_slug(sec.id)), escape(sec.title)))
        pub = "".join("<li><b>%s</b>: %s</li>" % (escape(s), escape(sh))
                      for s, sh in sec.published)
        page.add('<div class="published"><p class="note">Published%s:</p><ul>%s</ul></div>' % (
            " (%s)" % escape(sec.caption) if sec.caption else "", pub or "<li>—</li>"))
        chart = _figure_svg(sec)
        if chart:
            page.figure("%s_%s" % (view.id, sec.id), chart, sec.verdict)
        else:
            page.add('<p class="note">No curve of ours: %s</p>' % escape(sec.missing))
    if view.missing:
        page.add("<h3>Lost from the text</h3><ul class=\"note\">%s</ul>" % "".join(
            "<li>%s</li>" % escape(m) for m in view.missing))
    page.add('<h3 id="%s-conclusions">Conclusions, with today\'s verdict</h3>' % sid)
    rows = ['<tr><td class="wrap">%s</td><td>%s</td><td class="%s">%s</td>'
            '<td class="wrap">%s%s%s%s</td></tr>' % (
                escape(c.claim), escape(c.source), VERDICT_CLASS.get(c.verdict, "unclear"),
                escape(c.verdict), escape(c.evidence),
                "<br><i>rule:</i> " + escape(c.rule) if c.rule else "",
                "<br><i>margin:</i> " + escape(c.margin) if c.margin else "",
                "<br><i>rests on:</i> " + escape(c.basis) if c.basis else "")
            for c in view.conclusions]
    page.add('<div class="scroll"><table class="conclusions"><thead><tr><th>the paper '
             'concluded</th><th>where</th><th>today</th><th>measured here, the rule and the '
             'margin</th></tr></thead><tbody>%s</tbody></table></div>' % "".join(rows))


def _slug(s: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in s)
