"""The runs against the studies' published numbers (`--references`), and Ousterhout's
remote penalty for every local/remote pair of results, as text, JSON and HTML.

Every published number is said to be one of: set beside a result of these runs, not
set beside one and why (the benchmark did not run, was skipped, or ran without that size,
plateau or kind of file system), recomputed in a study view, a curve verdict set beside
our curve class, or not comparable with its reason (osmeter/studies/__init__.py's coverage).
"""
from __future__ import annotations

from collections import OrderedDict
from html import escape

from ..analysis import matching
from .. import studies
from ..data import references as refs
from ..analysis import remote
from ..studies import common, o90
from ..base import numbers
from . import svg
from .grid import align as _align
from ..base.numbers import number as fmt


def _published(r) -> str:
    return (r.qualifier + " " if r.qualifier else "") + numbers.quantity(r.value, r.unit)


def _quantity(r) -> str:
    if r.stands_for:
        return "%s (stand-in: %s for %s)" % (r.quantity, r.bench, r.stands_for)
    return r.quantity + (" (related: %s)" % r.bench if r.related else "")


def _unfound(rows) -> tuple[OrderedDict, list[str]]:
    """(detail -> references, for benchmarks that ran; benchmarks that did not run)."""
    why, absent = OrderedDict(), set()
    for rr in rows:
        if any(v is not None for v in rr.ours):
            continue
        for w, d in zip(rr.why, rr.detail):
            if w == "not measured":
                absent.add(rr.ref.bench)
            else:
                why.setdefault(d, []).append(rr.ref)
    return why, sorted(absent)


def _not_comparable() -> OrderedDict:
    """(study report, reason) -> (how many published numbers, their distinct titles)."""
    out = OrderedDict()
    for p, items in studies.coverage():
        for rule in items:
            if isinstance(rule, refs.NotComparable):
                count, titles = out.setdefault((p.report, rule.reason), [0, []])
                out[(p.report, rule.reason)][0] = count + 1
                title = "%s %s" % (p.where, p.label) if p.kind != "report" else p.label
                if title not in titles:
                    titles.append(title)
    return out


def curve_verdicts(runs) -> list[tuple]:
    """(GraphRef, [our class per run], [agreement per run])"""
    out = []
    for g in studies.graph_refs():
        ours = [(matching.curve_of(run, g.bench, g.metric) or {}).get("class") for run in runs]
        out.append((g, ours, [common.agreement(g.cls, c) if c else "not measured"
                              for c in ours]))
    return out


# ---- text -----------------------------------------------------------------------------------

def text_lines(cmp) -> list[str]:
    rows = studies.against(cmp.runs)
    out = ["Your machine against the published numbers (speed-up > 1 = this machine is "
           "faster):"]
    if any(r.smoke for r in cmp.runs):
        out.append("  (smoke runs: their sizes are not the studies'; the numbers show that "
                   "everything is wired, not how this machine compares)")
    table = [["study", "source", "system (machine)", "published"] +
             sum([[n, "speed-up"] for n in cmp.names], []) + ["measure"]]
    for rr in rows:
        if all(v is None for v in rr.ours):
            continue
        r = rr.ref
        line = [r.study, r.source, "%s (%s)" % (r.system, r.machine), _published(r)]
        for v, up in zip(rr.ours, rr.speedups):
            line += [fmt(v) + " " + r.unit if v is not None else "—",
                     "×" + fmt(up) if up is not None else "—"]
        table.append(line + [_quantity(r)])
    if len(table) == 1:
        out.append("  none of the benchmarks in the study tables were measured in these runs")
    else:
        out += _align(table)
    why, absent = _unfound(rows)
    if why:
        out.append("")
        out.append("Ran, but set beside nothing:")
        for detail, rs in why.items():
            out.append("  %s: %d published number(s) (%s)" % (
                detail, len(rs), ", ".join(sorted({"%s %s" % (r.study, r.source) for r in rs}))))
    if absent:
        out.append("not measured here (did not run): " + ", ".join(absent))
    verdicts = curve_verdicts(cmp.runs)
    if any(any(c for c in ours) for _, ours, _ in verdicts):
        out.append("")
        out.append("Curve verdicts (the published growth class beside ours):")
        t = [["study", "figure", "system", "published"] + cmp.names]
        for g, ours, agree in verdicts:
            if any(ours):
                t.append([g.study, g.figure.split(" (")[0], g.os, g.cls] +
                         ["%s: %s" % (c, a) if c else "—" for c, a in zip(ours, agree)])
        out += _align(t)
    nc = _not_comparable()
    out.append("")
    out.append("Not comparable: %d published numbers, by reason:" % sum(n for n, _ in
                                                                      nc.values()))
    for (report, reason), (n, titles) in nc.items():
        out.append("  %s — %s: %d (%s)" % (report, reason, n, "; ".join(titles[:3]) +
                                          ("; ..." if len(titles) > 3 else "")))
    for mt in o90.mips_tables(cmp.runs, cmp.cpu_speed):
        out.append("")
        out.append("Ousterhout 1990 %s, %s (%s, %s), MIPS-relative to Sun3 SunOS 3.5:"
                   % (mt.table, mt.caption, mt.quantity, mt.unit))
        t = [["system", "MIPS", mt.unit, "MIPS-relative"]]
        t += [[s, fmt(m), fmt(v), fmt(mr)] for s, m, v, mr in mt.rows]
        t += [["this machine: " + n, fmt(m) + " *", fmt(v), fmt(mr)] for n, m, v, mr in mt.ours]
        out += _align(t)
        if not mt.ours:
            out.append("  (no row for this machine: the run lacks this benchmark or cpu.integer)")
    out.append("* " + refs.STAND_IN)
    out.append("Each study in the paper's order: osmeter compare RUN... --study "
               "o90|lb96|vl03|mg05|cc06")
    return out


def remote_lines(cmp) -> list[str]:
    pens = remote.penalties(cmp.runs)
    if not pens:
        return []
    out = ["", "Remote penalty (Ousterhout 1990, Table 8): 100 × (T_remote − T_local) / "
               "T_local, for every local/remote pair:"]
    t = [["experiment", "unit", "local", "remote", "T_local", "T_remote", "penalty"]]
    for p in pens:
        t.append([p.label, p.unit, cmp.names[p.local_run], cmp.names[p.remote_run],
                  fmt(p.local), fmt(p.remote), "%+.1f%%" % p.pct])
    return out + _align(t)


# ---- JSON -----------------------------------------------------------------------------------

def to_dict(cmp) -> dict:
    ids = [r.id for r in cmp.runs]
    return {
        "references": [{
            "key": rr.ref.key, "study": rr.ref.study, "source": rr.ref.source,
            "system": rr.ref.system, "machine": rr.ref.machine, "bench": rr.ref.bench,
            "metric": rr.ref.metric, "x": rr.ref.x, "quantity": rr.ref.quantity,
            "published": rr.ref.value, "unit": rr.ref.unit, "qualifier": rr.ref.qualifier,
            "related": rr.ref.related, "mapping": rr.ref.mapping,
            "stands_for": rr.ref.stands_for or None, "remote": rr.ref.remote, "note": rr.ref.note,
            "measured": rr.ours, "speedup": rr.speedups,
            "why_not": [{"run": i, "kind": w, "detail": d} if w else None
                        for i, w, d in zip(ids, rr.why, rr.detail)]}
            for rr in studies.against(cmp.runs)],
        "curve_verdicts": [{
            "key": g.key, "study": g.study, "figure": g.figure, "system": g.os,
            "published_shape": g.shape, "published_class": g.cls, "bench": g.bench,
            "ours": [{"run": i, "class": c, "agreement": a} for i, c, a in zip(ids, ours, agree)]}
            for g, ours, agree in curve_verdicts(cmp.runs)],
        "derived": [{"key": d.key, "how": d.how} for d in studies.derived()],
        "not_comparable": [{"key": p.key, "reason": item.reason}
                           for p, items in studies.coverage() for item in items
                           if isinstance(item, refs.NotComparable)],
        "ousterhout_mips_relative": [{
            "table": mt.table, "quantity": mt.quantity, "unit": mt.unit,
            "published": [{"system": s, "mips": m, "value": v, "mips_relative": mr}
                          for s, m, v, mr in mt.rows],
            "this_machine": [{"run": n, "cpu_integer_mops": m, "value": v, "mips_relative": mr}
                             for n, m, v, mr in mt.ours],
            "mips_stand_in": refs.STAND_IN}
            for mt in o90.mips_tables(cmp.runs, cmp.cpu_speed)],
    }


def remote_dict(cmp) -> list[dict]:
    return [{"bench": p.bench, "metric": p.metric, "x": p.x, "unit": p.unit,
             "local_run": cmp.runs[p.local_run].id, "remote_run": cmp.runs[p.remote_run].id,
             "local": p.local, "remote": p.remote, "penalty_pct": p.pct}
            for p in remote.penalties(cmp.runs)]


# ---- HTML -----------------------------------------------------------------------------------

def _table(head, rows) -> str:
    return ('<div class="scroll"><table><thead><tr>%s</tr></thead><tbody>%s</tbody></table>'
            '</div>' % ("".join("<th>%s</th>" % escape(h) for h in head), "".join(
                "<tr>%s</tr>" % "".join("<td>%s</td>" % escape(c) for c in r) for r in rows)))


def html(page, cmp) -> None:
    page.add('<h2 id="studies">Against the studies</h2>')
    page.add('<p class="note">Published numbers from the seed studies next to these runs; '
             'speed-up &gt; 1 = this machine is faster. "related" rows are the same quantity '
             'measured another way or by an unnamed tool; a "stand-in" is another quantity '
             'in place of the paper\'s. Each study in the paper\'s order: '
             '<code>osmeter report RUN --study o90</code> (lb96, vl03, mg05, cc06).</p>')
    rows = []
    by_study: dict[str, list] = {}
    all_rows = studies.against(cmp.runs)
    for rr in all_rows:
        if all(v is None for v in rr.ours):
            continue
        r = rr.ref
        line = [r.study, r.source, r.system, r.machine, _published(r)]
        for v, up in zip(rr.ours, rr.speedups):
            line += [numbers.quantity(v, r.unit) if v is not None else "—",
                     "×" + fmt(up) if up is not None else "—"]
        rows.append(line + [_quantity(r)])
        if any(u is not None for u in rr.speedups):
            by_study.setdefault(r.study, []).append((
                "%s: %s" % (r.system, r.quantity),
                [(i, u, None, None) for i, u in enumerate(rr.speedups)]))
    if not rows:
        page.add("<p>None of the benchmarks in the study tables were measured in these runs.</p>")
    else:
        # One chart per study, each with every row that has a speed-up.
        page.add('<div class="figs">')
        for study, groups in by_study.items():
            drawn = sum(1 for _, b in groups for _, u, _, _ in b if u is not None)
            page.figure("references_speedup_%s" % study, svg.bar_chart(
                "Speed-up over %s's systems" % study, "times faster", groups, cmp.names,
                "this machine's median / the study's number; dashed line = equal",
                reference=1.0), "speed-up over the machines of %s: %d rows, %s point%s"
                % (study, len(groups), numbers.number(drawn), "" if drawn == 1 else "s"))
        page.add("</div>")
        page.add(_table(["study", "source", "system", "machine", "published"] +
                        sum([[n, "speed-up"] for n in cmp.names], []) + ["measure"], rows))
    why, absent = _unfound(all_rows)
    if why or absent:
        page.add("<h3>Set beside nothing in these runs</h3><ul class=\"note\">%s%s</ul>" % (
            "".join("<li>%s: %d published number(s)</li>" % (escape(d), len(rs))
                    for d, rs in why.items()),
            "<li>did not run: %s</li>" % escape(", ".join(absent)) if absent else ""))
    verdicts = [v for v in curve_verdicts(cmp.runs) if any(v[1])]
    if verdicts:
        page.add("<h3>Curve verdicts</h3>")
        page.add(_table(["study", "figure", "system", "published", *cmp.names], [
            [g.study, g.figure.split(" (")[0], g.os, g.cls] +
            ["%s: %s" % (c, a) if c else "—" for c, a in zip(ours, agree)]
            for g, ours, agree in verdicts]))
    nc = _not_comparable()
    page.add("<details><summary>Not comparable: %d published numbers, with the reason"
             "</summary>%s</details>" % (sum(n for n, _ in nc.values()), _table(
                 ["study", "reason", "numbers", "which"],
                 [[rep, reason, str(n), "; ".join(titles)]
                  for (rep, reason), (n, titles) in nc.items()])))
    for mt in o90.mips_tables(cmp.runs, cmp.cpu_speed):
        page.add("<h3>Ousterhout 1990 %s: %s</h3>" % (escape(mt.table), escape(mt.caption)))
        trows = [[s, fmt(m), fmt(v), fmt(mr)] for s, m, v, mr in mt.rows]
        trows += [["this machine: %s" % n, "%s *" % fmt(m), fmt(v), fmt(mr)]
                  for n, m, v, mr in mt.ours]
        page.add(_table(["system", "MIPS", "%s (%s)" % (mt.quantity, mt.unit),
                         "MIPS-relative speed"], trows))
        if not mt.ours:
            page.add('<p class="note">No row for this machine: the run lacks this benchmark '
                     'or cpu.integer.</p>')
    page.add('<p class="note">* %s MIPS-relative = (T_Sun3 / T_machine) / (MIPS_machine / '
             'MIPS_Sun3) for times, (B_machine / B_Sun3) / (MIPS_machine / MIPS_Sun3) for '
             'bandwidths, with Sun3 SunOS 3.5 as the reference (1.8 MIPS).</p>'
             % escape(refs.STAND_IN))


def remote_html(page, cmp) -> None:
    pens = remote.penalties(cmp.runs)
    if not pens:
        return
    page.add('<h2 id="remote">Remote penalty</h2>')
    page.add('<p class="note">Ousterhout 1990, Table 8: the slow-down with a remote disk '
             'instead of a local one, 100 × (T_remote − T_local) / T_local, for every pair of '
             'a local and a remote result of the same experiment.</p>')
    page.add(_table(["experiment", "unit", "local", "remote", "T_local", "T_remote", "penalty"],
                    [[p.label, p.unit, cmp.names[p.local_run], cmp.names[p.remote_run],
                      fmt(p.local), fmt(p.remote), "%+.1f%%" % p.pct] for p in pens]))
