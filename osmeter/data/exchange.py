"""Runs as portable JSON documents (export / import / --json / show FILE).

The document's shape is published as a JSON Schema (osmeter/data/results.schema.json,
linked from docs/; explained in docs/results-schema.md) and every document osmeter reads
is checked against it before anything uses it, so whatever is accepted can be stored,
shown, compared, reported and exported.  Besides the schema, reading refuses what JSON
Schema cannot express: NaN and infinities (Python's json reads them, and 1e400 becomes
inf), integers beyond 64 bits (a 50-million-digit number would make int() raise),
duplicate keys, nesting deeper than MAX_DEPTH and documents over MAX_DOCUMENT_BYTES,
and two results for the same benchmark, metric and x.  A refusal is one line naming the
field, e.g. `run.json: results[3].summary.median: not a finite number`.
"""
from __future__ import annotations

import functools
import gzip
import io
import json
import math
import os
import re
import sys
import zlib
from pathlib import Path

from . import schema, selection, writes
from .. import stats
from .model import EXPORT_FORMAT, SCHEMA_VERSION, Result, Run

SCHEMA_FILE = Path(__file__).resolve().parent / "results.schema.json"
MAX_DOCUMENT_BYTES = 128 << 20     # bounds memory; a full suite (every curve point) is ~30 MB
MAX_DEPTH = 32                     # a real document nests about 12 levels deep
INT_RANGE = (-(1 << 63), (1 << 63) - 1)   # what SQLite stores as an integer


class ExchangeError(Exception):
    """A one-line, user-facing problem with a results file."""


RUN_FIELDS = ("id", "label", "started", "finished", "status", "suite", "smoke", "command",
              "osmeter_version", "sysinfo", "environment")


@functools.lru_cache(maxsize=None)
def results_schema() -> schema.Schema:
    return schema.Schema.load(SCHEMA_FILE)


def schema_id() -> str:
    return results_schema().root["$id"]


def check_name(value: str | None, what: str) -> str | None:
    """A name osmeter will store and show (a run's label, a noise profile's name) follows
    the results schema's rule for names, whichever way it comes in (a document, an
    option, a suite file): no control character, terminal escape or bidirectional
    override, at most 1,000 characters.  Returns value; ExchangeError (one line) if not."""
    if value is not None:
        try:
            results_schema().validate_as(value, "name", what)
        except schema.SchemaError as e:
            raise ExchangeError(str(e)) from None
    return value


def check_time(value: str | None, what: str) -> None:
    """A timestamp the schema's pattern accepts must also be a day of the calendar
    (2026-02-31 is not) whose time in UTC stays within the years 1 to 9999: the one date
    rule, selection.parse_time's, by which --where since/until finds it."""
    if value is not None and selection.parse_time(value) is None:
        raise ExchangeError("%s: %s is not a date of the calendar" % (what, schema.show(value)))


# ---- writing ------------------------------------------------------------------------

def run_to_document(run: Run) -> dict:
    return {"$schema": schema_id(), "format": EXPORT_FORMAT, "schema_version": SCHEMA_VERSION,
            "run": {k: getattr(run, k) for k in RUN_FIELDS},
            "results": [r.to_dict() for r in run.results]}


# formats/junit.py's name for writes.write_file (atomic only for a regular file).
write_atomically = writes.write_file


def document_text(run: Run) -> str:
    return json.dumps(run_to_document(run), indent=1) + "\n"


def write_run_file(run: Run, path: str | os.PathLike) -> None:
    """writes.WriteError (one line) if it cannot be written completely."""
    writes.write_file(path, document_text(run))


# ---- reading ------------------------------------------------------------------------

class _Unsafe:
    """Stands in for a JSON token osmeter refuses; the walk reports it with its path."""
    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason


def _parse_int(text: str):
    digits = len(text) - text.startswith("-")
    if digits > 19:
        return _Unsafe("an integer of %d digits, beyond 64 bits" % digits)
    value = int(text)
    if not INT_RANGE[0] <= value <= INT_RANGE[1]:
        return _Unsafe("an integer beyond 64 bits (%s)" % text)
    return value


def _parse_constant(text: str):
    return _Unsafe("not a finite number (%s)" % text)


def _object(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                return _Unsafe("the key %s appears twice" % schema.show(key))
            seen.add(key)
    return obj


def parse_document(text: str):
    """JSON text -> document; refuses what could not be read back safely."""
    # Numbers by the C parser (fast); floats that overflowed to inf and integers beyond
    # 64 bits are found by the walk below.  An integer too long to convert quickly makes
    # Python raise ValueError (its digit limit); without that limit (old or configured
    # Pythons) every integer goes through _parse_int, which looks at its length first.
    hooks = {} if _python_limits_int_digits() else {"parse_int": _parse_int}
    try:
        try:
            doc = json.loads(text, parse_constant=_parse_constant, object_pairs_hook=_object,
                             **hooks)
        except json.JSONDecodeError:
            raise
        except ValueError:          # over the digit limit: read again to say where
            doc = json.loads(text, parse_constant=_parse_constant, object_pairs_hook=_object,
                             parse_int=_parse_int)
    except RecursionError:
        raise ExchangeError("%s: nested deeper than %d levels"
                            % (_deep_path(text) or "the document", MAX_DEPTH)) from None
    except json.JSONDecodeError as e:
        raise ExchangeError("not valid JSON (%s)" % e) from None
    _check_values(doc)
    return doc


def _python_limits_int_digits() -> bool:
    limit = getattr(sys, "get_int_max_str_digits", None)
    return limit is not None and 0 < limit() <= 100_000


def _check_values(doc) -> None:
    """Nesting depth, numbers that overflowed to infinity, and the tokens refused while
    parsing, each with its path."""
    stack = [(doc, None, 1)]
    while stack:
        value, path, depth = stack.pop()
        if type(value) is _Unsafe:
            raise ExchangeError("%s: %s" % (schema.describe_path(path) or "the document",
                                            value.reason))
        if depth > MAX_DEPTH:
            raise ExchangeError("%s: nested deeper than %d levels"
                                % (schema.describe_path(path), MAX_DEPTH))
        if type(value) is not dict and type(value) is not list:
            continue                            # a document that is a single value
        later = []
        for key, item in (value.items() if type(value) is dict else enumerate(value)):
            kind = type(item)
            if kind is float:
                if item - item != 0.0:          # inf - inf is nan
                    raise ExchangeError("%s: not a finite number (%r)"
                                        % (schema.describe_path((path, key)), item))
            elif kind is int:
                if not INT_RANGE[0] <= item <= INT_RANGE[1]:
                    raise ExchangeError("%s: %s" % (schema.describe_path((path, key)),
                                                    _parse_int(str(item)).reason))
            elif kind is dict or kind is list or kind is _Unsafe:
                later.append((item, (path, key), depth + 1))
        stack.extend(reversed(later))       # in document order


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]')


def _deep_path(text: str) -> str:
    """Where a document too deep for the parser first nests deeper than MAX_DEPTH."""
    keys: list = []        # per open container: its current key or index
    kinds: list = []
    last_string = None
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok in "[{":
            kinds.append(tok)
            keys.append(0 if tok == "[" else None)
            if len(kinds) > MAX_DEPTH:
                return schema.render_path([k for k in keys[:-1] if k is not None])
        elif tok in "]}":
            if kinds:
                kinds.pop()
                keys.pop()
        elif tok == ",":
            if kinds and kinds[-1] == "[":
                keys[-1] += 1
        elif tok == ":":
            if kinds and kinds[-1] == "{" and last_string is not None:
                try:
                    keys[-1] = json.loads(last_string)
                except ValueError:
                    keys[-1] = "?"
        else:
            last_string = tok
    return ""


def check_document(doc) -> None:
    """Raise ExchangeError naming the first field osmeter cannot use."""
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise ExchangeError("not an osmeter results document (format is not %r)"
                            % EXPORT_FORMAT)
    version = doc.get("schema_version")
    if not isinstance(version, (int, float)) or isinstance(version, bool) or \
            version not in range(1, SCHEMA_VERSION + 1):     # 1.0 == 1, as in the schema
        raise ExchangeError("unsupported schema_version %s (this osmeter reads 1..%d)"
                            % (schema.show(version), SCHEMA_VERSION))
    declared = doc.get("$schema", schema_id())
    if declared != schema_id():
        raise ExchangeError("the document declares schema %s; this osmeter follows %s"
                            % (schema.show(declared), schema_id()))
    try:
        results_schema().validate(doc)
    except schema.SchemaError as e:
        raise ExchangeError(str(e)) from None
    for key in ("started", "finished"):
        check_time(doc["run"].get(key), "run." + key)
    seen: dict[tuple, int] = {}
    for i, r in enumerate(doc["results"]):
        key = (r["bench"], r["metric"], r.get("x"))
        if key in seen:
            raise ExchangeError("results[%d]: the same benchmark, metric and x as results[%d]"
                                % (i, seen[key]))
        seen[key] = i


def document_to_run(doc) -> Run:
    """A checked document -> Run (ExchangeError, one line, if it is not one)."""
    check_document(doc)
    r = doc["run"]
    run = Run(**dict({"label": None}, **{k: r[k] for k in RUN_FIELDS if k in r}))  # label optional
    run.sysinfo = run.sysinfo or {}
    run.environment = run.environment or {}
    run.command = run.command or ""
    run.osmeter_version = run.osmeter_version or ""
    run.results = [Result.from_dict(d) for d in doc["results"]]
    recomputed = [r for r in run.results if _resummarize(r)]
    if recomputed:
        # The samples' own summary must be one a results file may hold (a mean of 1e-31
        # is not): else refuse, as for any other field.
        try:
            results_schema().validate(run_to_document(run))
        except schema.SchemaError as e:
            raise ExchangeError("a summary disagreed with its samples, and the samples' "
                                "own summary cannot be stored: %s" % e) from None
        run.environment.setdefault("warnings", []).append(
            "imported: the summary of %d result(s) disagreed with their samples and was "
            "recomputed from them (%s)" % (len(recomputed), ", ".join(
                "%s %s" % (r.bench, r.metric) for r in recomputed[:5])
                + (", ..." if len(recomputed) > 5 else "")))
    return run


def _resummarize(result: Result) -> bool:
    """Give a result whose stated summary disagrees with its samples (its median or its
    count) the summary of its samples; True when it did.  A summary is shown beside
    what the samples say (ratios, tests): the two must be one."""
    if result.status != "ok" or not result.samples:
        return False
    mine = stats.summarize(result.samples)
    stated = result.summary or {}
    median = stated.get("median")
    same = isinstance(median, (int, float)) and math.isclose(
        median, mine["median"], rel_tol=1e-6, abs_tol=1e-12) and stated.get("n", mine["n"]) \
        == mine["n"]
    if same:
        return False
    result.summary = dict(stated, **mine)
    for k in ("ci_low", "ci_high", "ci_level", "ci_method"):
        if k not in mine:
            result.summary.pop(k, None)
    return True


def read_document_text(path: str | os.PathLike) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as e:
        raise ExchangeError("cannot read %s: %s" % (path, e.strerror)) from None
    if data[:2] == b"\x1f\x8b":          # gzip (examples/ keeps its large runs so)
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as g:
                data = g.read(MAX_DOCUMENT_BYTES + 1)
        except (OSError, EOFError, zlib.error) as e:
            raise ExchangeError("%s is not a readable gzip file (%s)" % (path, e)) from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ExchangeError("%s is larger than %d MiB, more than any results document"
                            % (path, MAX_DOCUMENT_BYTES >> 20))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ExchangeError("%s is not valid JSON (not UTF-8 at byte %d)"
                            % (path, e.start)) from None


def read_run_file(path: str | os.PathLike) -> Run:
    text = read_document_text(path)
    try:
        return document_to_run(parse_document(text))
    except ExchangeError as e:
        raise ExchangeError("%s: %s" % (path, e) if not str(e).startswith("not valid JSON")
                            else "%s is %s" % (path, e)) from None
