"""The five seed studies: what each published number is, and each study in the paper's order.

One module per study, each with:

    ID, REPORT, TITLE, CITE     the study (ID is what --study takes)
    references()                the numbers set beside a result of ours (RefValue)
    derived()                   the numbers recomputed for this machine (Derived)
    graph_refs()                the curve verdicts set beside our curve class (GraphRef)
    NOT_COMPARABLE              the rest, each with the reason (NotComparable)
    view(ctx)                   its tables, figures and conclusions (view.StudyView)

The published numbers themselves are osmeter/data/seed-results.toml, read by
osmeter/references.py; the view's types are in view.py; osmeter/report/study.py renders
a view as text and HTML.
"""
from __future__ import annotations

import importlib

IDS = ("o90", "lb96", "vl03", "mg05", "cc06")


def modules() -> list:
    return [importlib.import_module("%s.%s" % (__name__, i)) for i in IDS]


def get(study_id: str):
    if study_id not in IDS:
        raise KeyError("unknown study '%s' (studies: %s)" % (study_id, ", ".join(IDS)))
    return importlib.import_module("%s.%s" % (__name__, study_id))


def build(study_id: str, cmp):
    """The study laid out with the comparison's runs beside it."""
    from .view import Ctx
    return get(study_id).view(Ctx(cmp))
