"""The five seed studies: what each published number is, and each study in the paper's order.

One module per study, each with:

    ID, REPORT, TITLE, CITE     the study (ID is what --study takes)
    references()                the numbers set beside a result of ours (RefValue)
    derived()                   the numbers recomputed for this machine (Derived)
    graph_refs()                the curve verdicts set beside our curve class (GraphRef)
    NOT_COMPARABLE              the rest, each with the reason (NotComparable)
    view(ctx)                   its tables, figures and conclusions (view.StudyView)

The published numbers themselves are osmeter/data/seed-results.toml, read by
osmeter/data/references.py; a run is set next to one by osmeter/analysis/matching.py; the
view's types are in view.py; osmeter/report/study.py renders a view as text and HTML.  Below: the
gathering over every study (every reference, the coverage of the published numbers, the
runs against all of them) -- the one place that knows all the studies.
"""
from __future__ import annotations

import importlib

from ..analysis import matching
from ..data.references import (Derived, GraphRef, NotComparable, Published, RefValue,
                               published_numbers)

IDS = ("o90", "lb96", "vl03", "mg05", "cc06")


def modules() -> list:
    return [importlib.import_module("%s.%s" % (__name__, i)) for i in IDS]


def get(study_id: str):
    if study_id not in IDS:
        raise KeyError("unknown study '%s' (studies: %s)" % (study_id, ", ".join(IDS)))
    return importlib.import_module("%s.%s" % (__name__, study_id))


def build(study_id: str, cmp):
    """The study laid out with the comparison's runs beside it."""
    from .view import Ctx, finish
    v = get(study_id).view(Ctx(cmp))
    v.conclusions = [finish(c) for c in v.conclusions]
    return v


def references() -> list[RefValue]:
    """Every published number osmeter can put a run next to."""
    return [r for m in modules() for r in m.references()]


def graph_refs() -> list[GraphRef]:
    return [g for m in modules() for g in m.graph_refs()]


def derived() -> list[Derived]:
    return [d for m in modules() for d in m.derived()]


def not_comparable() -> list[NotComparable]:
    return [n for m in modules() for n in m.NOT_COMPARABLE]


def coverage() -> list[tuple[Published, list]]:
    """Every published number with what accounts for it: RefValue, Derived, GraphRef or
    NotComparable entries (an empty list: nothing does)."""
    by_key: dict[str, list] = {}
    for item in [*references(), *derived(), *graph_refs()]:
        by_key.setdefault(item.key, []).append(item)
    rules = not_comparable()
    return [(p, by_key.get(p.key, []) + [r for r in rules if r.matches(p)])
            for p in published_numbers()]


def against(runs: list) -> list[matching.RefRow]:
    """Every reference value next to each run's matching result, or the reason there is
    none ("not measured" only where the benchmark did not run)."""
    return [matching.row(ref, runs) for ref in references()]
