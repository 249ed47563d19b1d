"""A small interpreter of the JSON Schema (draft 2020-12) subset osmeter's published
schema uses, so that docs/results.schema.json is the single source of truth for what
`osmeter import` accepts, with no third-party package at run time.

Keywords: type, enum, const, properties, required, additionalProperties, propertyNames,
items, prefixItems, minItems, maxItems, minimum, maximum, minLength, maxLength, pattern, $ref
(within the file: "#/$defs/NAME"), allOf and if/then/else.  "errorMessage" (the ajv-errors
convention) replaces the message when a keyword of the same schema object fails.
Annotations ($schema, $id, title, description) are ignored.  A schema that uses any other
keyword is refused when loaded, so the published file can never promise a check that
osmeter does not make.

Validation stops at the first problem and says where it is, as one line:
`results[3].summary.median: expected a number, got a string`.
"""
from __future__ import annotations

import json
import re

KEYWORDS = {"type", "enum", "const", "properties", "required", "additionalProperties",
            "propertyNames", "items", "prefixItems", "minItems", "maxItems", "minimum",
            "maximum", "minLength", "maxLength", "pattern", "$ref", "allOf", "if", "then", "else",
            "errorMessage"}
ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description"}
# Keywords whose value is one schema, a list of schemas, or a map of names to schemas.
ONE_SCHEMA = ("additionalProperties", "propertyNames", "items", "if", "then", "else")
SCHEMA_LISTS = ("prefixItems", "allOf")
SCHEMA_MAPS = ("properties", "$defs")

TYPE_WORDS = {"object": "an object", "array": "an array", "string": "a string",
              "number": "a number", "integer": "an integer", "boolean": "true or false",
              "null": "null"}
PLAIN_KEY = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")


class SchemaError(Exception):
    """The document does not follow the schema: one line naming the field."""


class _Invalid(Exception):
    def __init__(self, path, message: str):
        super().__init__(path, message)
        self.path, self.message = path, message


_TYPE_OF = {dict: "object", list: "array", str: "string", int: "integer", float: "number",
            bool: "boolean", type(None): "null"}


def json_type(value) -> str:
    return _TYPE_OF.get(type(value)) or type(value).__name__


def is_type(value, name: str) -> bool:
    actual = json_type(value)
    if name == "number":
        return actual in ("integer", "number")
    if name == "integer":      # JSON Schema: 2.0 is an integer
        return actual == "integer" or (actual == "number" and value.is_integer())
    return actual == name


def render_path(keys) -> str:
    """("results", 3, "summary") -> 'results[3].summary' (keys shown safely)."""
    out = ""
    for key in keys:
        if isinstance(key, int):
            out += "[%d]" % key
        elif PLAIN_KEY.match(key):
            out += ".%s" % key if out else key
        else:
            out += "[%s]" % json.dumps(key, ensure_ascii=True)
    return out


def describe_path(path) -> str:
    """A path is built cheaply as nested pairs (parent, key), rendered only for a message."""
    keys = []
    while path is not None:
        path, key = path
        keys.append(key)
    return render_path(keys[::-1])


def show(value) -> str:
    """A value as it may safely appear in a one-line message (ASCII, no escapes, short)."""
    if isinstance(value, (dict, list)):
        return TYPE_WORDS[json_type(value)]
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


class Schema:
    def __init__(self, document: dict):
        self.root = document
        self._patterns: dict[str, re.Pattern] = {}
        self._refs: dict[str, dict] = {}
        self._check_schema(document, "#")

    @classmethod
    def load(cls, path) -> "Schema":
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    # ---- the schema itself ---------------------------------------------------------

    def _check_schema(self, schema, where: str) -> None:
        if isinstance(schema, bool):
            return
        if not isinstance(schema, dict):
            raise ValueError("%s: a schema must be an object or a boolean" % where)
        unknown = set(schema) - KEYWORDS - ANNOTATIONS
        if unknown:
            raise ValueError("%s: keyword(s) %s are outside the subset osmeter checks"
                             % (where, ", ".join(sorted(unknown))))
        for key in ONE_SCHEMA:
            if key in schema:
                self._check_schema(schema[key], "%s/%s" % (where, key))
        for key in SCHEMA_LISTS:
            for i, sub in enumerate(schema.get(key, [])):
                self._check_schema(sub, "%s/%s/%d" % (where, key, i))
        for key in SCHEMA_MAPS:
            for name, sub in schema.get(key, {}).items():
                self._check_schema(sub, "%s/%s/%s" % (where, key, name))
        if "$ref" in schema:
            self._refs[schema["$ref"]] = self._resolve(schema["$ref"])
        if "pattern" in schema:
            self._patterns[schema["pattern"]] = re.compile(schema["pattern"])

    def _resolve(self, ref: str):
        if not ref.startswith("#/"):
            raise ValueError("only references within the file are supported: %s" % ref)
        node = self.root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    # ---- validating a document -----------------------------------------------------

    def validate(self, document) -> None:
        """Raise SchemaError naming the first field that does not follow the schema."""
        try:
            self._check(self.root, document, None)
        except _Invalid as e:
            where = describe_path(e.path)
            raise SchemaError("%s: %s" % (where or "the document", e.message)) from None

    def _check(self, schema, value, path) -> None:
        if schema is True:
            return
        if schema is False:
            raise _Invalid(path, "not expected here")
        types = schema.get("type")
        if types is not None:
            names = [types] if isinstance(types, str) else types
            if not any(is_type(value, t) for t in names):
                raise _Invalid(path, "expected %s, got %s" % (
                    " or ".join(TYPE_WORDS[t] for t in names), TYPE_WORDS.get(
                        json_type(value), json_type(value))))
        try:
            self._check_here(schema, value, path)
        except _Invalid as e:
            if "errorMessage" in schema and e.path == path:
                raise _Invalid(path, schema["errorMessage"]) from None
            raise

    def _check_here(self, schema: dict, value, path) -> None:
        if "const" in schema and not _same(value, schema["const"]):
            raise _Invalid(path, "must be %s (got %s)" % (show(schema["const"]), show(value)))
        if "enum" in schema and not any(_same(value, v) for v in schema["enum"]):
            raise _Invalid(path, "must be one of %s (got %s)" % (
                ", ".join(show(v) for v in schema["enum"]), show(value)))
        kind = json_type(value)
        if kind == "string":
            self._check_string(schema, value, path)
        elif kind in ("integer", "number"):
            if "minimum" in schema and value < schema["minimum"]:
                raise _Invalid(path, "must be at least %s (got %s)"
                               % (schema["minimum"], show(value)))
            if "maximum" in schema and value > schema["maximum"]:
                raise _Invalid(path, "must be at most %s (got %s)"
                               % (schema["maximum"], show(value)))
        elif kind == "array":
            self._check_array(schema, value, path)
        elif kind == "object":
            self._check_object(schema, value, path)
        # Referenced and combined schemas after this one's own keywords: the more
        # specific message comes first.
        if "$ref" in schema:
            self._check(self._refs[schema["$ref"]], value, path)
        for sub in schema.get("allOf", ()):
            self._check(sub, value, path)
        if "if" in schema:
            try:
                self._check(schema["if"], value, path)
                branch = schema.get("then")
            except _Invalid:
                branch = schema.get("else")
            if branch is not None:
                self._check(branch, value, path)

    def _check_string(self, schema: dict, value: str, path) -> None:
        if "minLength" in schema and len(value) < schema["minLength"]:
            raise _Invalid(path, "must not be empty" if schema["minLength"] == 1 else
                           "must be at least %d characters long" % schema["minLength"])
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise _Invalid(path, "is %d characters long; at most %d allowed"
                           % (len(value), schema["maxLength"]))
        if "pattern" in schema and not self._patterns[schema["pattern"]].search(value):
            raise _Invalid(path, "does not match %s" % schema["pattern"])

    def _check_array(self, schema: dict, value: list, path) -> None:
        if "minItems" in schema and len(value) < schema["minItems"]:
            raise _Invalid(path, "has %d item(s); at least %d expected"
                           % (len(value), schema["minItems"]))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise _Invalid(path, "has %d item(s); at most %d allowed"
                           % (len(value), schema["maxItems"]))
        prefix = schema.get("prefixItems", ())
        for i, (sub, item) in enumerate(zip(prefix, value)):
            self._check(sub, item, (path, i))
        if "items" in schema:
            for i in range(len(prefix), len(value)):
                self._check(schema["items"], value[i], (path, i))

    def _check_object(self, schema: dict, value: dict, path) -> None:
        for key in schema.get("required", ()):
            if key not in value:
                raise _Invalid((path, key), "missing")
        names = schema.get("propertyNames")
        if names is not None:
            for key in value:
                try:
                    self._check(names, key, path)
                except _Invalid as e:
                    raise _Invalid(path, "key %s %s" % (show(key), e.message)) from None
        props = schema.get("properties", {})
        for key, sub in props.items():
            if key in value:
                self._check(sub, value[key], (path, key))
        extra = schema.get("additionalProperties")
        if extra is not None:
            for key, item in value.items():
                if key in props:
                    continue
                if extra is False:
                    raise _Invalid((path, key), "not a field of this format")
                self._check(extra, item, (path, key))


def _same(a, b) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b
