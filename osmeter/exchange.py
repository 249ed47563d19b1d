"""Runs as portable JSON documents (export / import / --json), schema in docs/results-schema.md."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .model import EXPORT_FORMAT, SCHEMA_VERSION, Result, Run


class ExchangeError(Exception):
    """A one-line, user-facing problem with a results file."""


RUN_FIELDS = ("id", "label", "started", "finished", "status", "suite", "smoke", "command",
              "osmeter_version", "sysinfo", "environment")


def run_to_document(run: Run) -> dict:
    return {"format": EXPORT_FORMAT, "schema_version": SCHEMA_VERSION,
            "run": {k: getattr(run, k) for k in RUN_FIELDS},
            "results": [r.to_dict() for r in run.results]}


def write_run_file(run: Run, path: str | os.PathLike) -> None:
    """Write atomically: a reader never sees half a file, a failure leaves the old one."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".osmeter-", suffix=".json", dir=path.parent or ".")
    except OSError as e:
        raise ExchangeError("cannot write %s: %s" % (path, e.strerror)) from None
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(run_to_document(run), f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        raise ExchangeError("cannot write %s: %s" % (path, e.strerror)) from None


def document_to_run(doc) -> Run:
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise ExchangeError("not an osmeter results document (format is not %r)" % EXPORT_FORMAT)
    version = doc.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION or version < 1:
        raise ExchangeError("unsupported schema_version %r (this osmeter reads 1..%d)"
                            % (version, SCHEMA_VERSION))
    r = doc.get("run")
    if not isinstance(r, dict) or not r.get("id") or not r.get("started"):
        raise ExchangeError("the document has no valid 'run' (id and started are required)")
    try:
        run = Run(**{k: r.get(k) for k in RUN_FIELDS if k in r})
        run.sysinfo = run.sysinfo or {}
        run.environment = run.environment or {}
        run.smoke = bool(run.smoke)
        run.results = [Result.from_dict(d) for d in doc.get("results", [])]
    except (KeyError, TypeError, ValueError) as e:
        raise ExchangeError("malformed result in the document: %s" % e) from None
    return run


def read_run_file(path: str | os.PathLike) -> Run:
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise ExchangeError("cannot read %s: %s" % (path, e.strerror)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ExchangeError("%s is not valid JSON (%s)" % (path, e)) from None
    try:
        return document_to_run(doc)
    except ExchangeError as e:
        raise ExchangeError("%s: %s" % (path, e)) from None
