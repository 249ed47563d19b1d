"""osmeter's own results document (docs/results-schema.md): everything, nothing lost."""
from __future__ import annotations

from ..data import exchange
from . import Export, Format


def render(runs) -> Export:
    return Export(exchange.document_text(runs[0]))


FORMAT = Format("osmeter", render, "osmeter's own JSON document (the default; import reads it)")
