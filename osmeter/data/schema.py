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
`results[3].summary.median: expected a number, got a string`.  Each schema object is
turned once into a small function, so a document of half a million samples is checked
in about a second.
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
# The Python types json.loads produces for each JSON Schema type ("integer" also takes a
# float without a fraction: JSON Schema says 2.0 is an integer).
_PY_TYPES = {"object": {dict}, "array": {list}, "string": {str}, "number": {int, float},
             "integer": {int}, "boolean": {bool}, "null": {type(None)}}


def json_type(value) -> str:
    return _TYPE_OF.get(type(value)) or type(value).__name__


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
        self._compiled: dict[int, object] = {}
        self._validate = self._compile(document)

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
            self._validate(document, None)
        except _Invalid as e:
            where = describe_path(e.path)
            raise SchemaError("%s: %s" % (where or "the document", e.message)) from None

    def validate_as(self, value, definition: str, what: str) -> None:
        """Check one value against a definition of the schema ("name" for
        #/$defs/name): the rule a document's field follows, for a value from elsewhere
        (a command-line option); SchemaError 'what: message'."""
        try:
            self._compile(self.root["$defs"][definition])(value, None)
        except _Invalid as e:
            raise SchemaError("%s %s" % (what, e.message)) from None

    def _compile(self, schema):
        """schema -> check(value, path), raising _Invalid; built once per schema object
        (a reference to a schema still being built goes through a forwarding cell)."""
        if schema is True:
            return _accept
        if schema is False:
            return _refuse
        key = id(schema)
        if key not in self._compiled:
            cell = []
            self._compiled[key] = lambda value, path: cell[0](value, path)
            cell.append(self._build(schema))
            self._compiled[key] = cell[0]
        return self._compiled[key]

    def _build(self, schema: dict):
        types = schema.get("type")
        names = None if types is None else [types] if isinstance(types, str) else types
        allowed = set().union(*(_PY_TYPES[t] for t in names)) if names else None
        integral_floats = bool(names) and "integer" in names and "number" not in names
        by_type = {str: self._string_check(schema), list: self._array_check(schema),
                   dict: self._object_check(schema), int: self._number_check(schema)}
        by_type[float] = by_type[int]
        by_type = {t: f for t, f in by_type.items() if f is not None}
        common = self._value_checks(schema)
        after = [self._compile(self._refs[schema["$ref"]])] if "$ref" in schema else []
        after += [self._compile(sub) for sub in schema.get("allOf", ())]
        if "if" in schema:
            after.append(self._condition(schema))
        message = schema.get("errorMessage")

        def check(value, path):
            kind = type(value)
            if allowed is not None and kind not in allowed and not (
                    integral_floats and kind is float and value.is_integer()):
                raise _Invalid(path, "expected %s, got %s" % (
                    " or ".join(TYPE_WORDS[t] for t in names),
                    TYPE_WORDS.get(json_type(value), json_type(value))))
            try:
                for c in common:
                    c(value, path)
                own = by_type.get(kind)
                if own is not None:
                    own(value, path)
                for c in after:       # referenced and combined schemas after this one's
                    c(value, path)    # own keywords: the more specific message first
            except _Invalid as e:
                if message is not None and e.path is path:
                    raise _Invalid(path, message) from None
                raise
        return check

    @staticmethod
    def _value_checks(schema: dict) -> list:
        out = []
        if "const" in schema:
            const = schema["const"]

            def check_const(value, path):
                if not _same(value, const):
                    raise _Invalid(path, "must be %s (got %s)" % (show(const), show(value)))
            out.append(check_const)
        if "enum" in schema:
            enum = schema["enum"]

            def check_enum(value, path):
                if not any(_same(value, v) for v in enum):
                    raise _Invalid(path, "must be one of %s (got %s)" % (
                        ", ".join(show(v) for v in enum), show(value)))
            out.append(check_enum)
        return out

    def _string_check(self, schema: dict):
        low, high = schema.get("minLength"), schema.get("maxLength")
        pattern = self._patterns.get(schema.get("pattern"))
        if low is None and high is None and pattern is None:
            return None

        def check(value, path):
            if low is not None and len(value) < low:
                raise _Invalid(path, "must not be empty" if low == 1 else
                               "must be at least %d characters long" % low)
            if high is not None and len(value) > high:
                raise _Invalid(path, "is %d characters long; at most %d allowed"
                               % (len(value), high))
            if pattern is not None and not pattern.search(value):
                raise _Invalid(path, "does not match %s" % pattern.pattern)
        return check

    @staticmethod
    def _number_check(schema: dict):
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is None and high is None:
            return None

        def check(value, path):
            if low is not None and value < low:
                raise _Invalid(path, "must be at least %s (got %s)" % (low, show(value)))
            if high is not None and value > high:
                raise _Invalid(path, "must be at most %s (got %s)" % (high, show(value)))
        return check

    def _array_check(self, schema: dict):
        low, high = schema.get("minItems"), schema.get("maxItems")
        prefix = [self._compile(s) for s in schema.get("prefixItems", ())]
        items = self._compile(schema["items"]) if "items" in schema else None
        if low is None and high is None and not prefix and items is None:
            return None

        def check(value, path):
            n = len(value)
            if low is not None and n < low:
                raise _Invalid(path, "has %d item(s); at least %d expected" % (n, low))
            if high is not None and n > high:
                raise _Invalid(path, "has %d item(s); at most %d allowed" % (n, high))
            for i, (sub, item) in enumerate(zip(prefix, value)):
                sub(item, (path, i))
            if items is not None:
                for i in range(len(prefix), n):
                    items(value[i], (path, i))
        return check

    def _object_check(self, schema: dict):
        required = schema.get("required", ())
        names = self._compile(schema["propertyNames"]) if "propertyNames" in schema else None
        props = {k: self._compile(v) for k, v in schema.get("properties", {}).items()}
        extra = schema.get("additionalProperties")
        extra = None if extra is None else False if extra is False else self._compile(extra)
        if not required and names is None and not props and extra is None:
            return None

        def check(value, path):
            for key in required:
                if key not in value:
                    raise _Invalid((path, key), "missing")
            if names is not None:
                for key in value:
                    try:
                        names(key, path)
                    except _Invalid as e:
                        raise _Invalid(path, "key %s %s" % (show(key), e.message)) from None
            for key, sub in props.items():
                if key in value:
                    sub(value[key], (path, key))
            if extra is not None:
                for key, item in value.items():
                    if key in props:
                        continue
                    if extra is False:
                        raise _Invalid((path, key), "not a field of this format")
                    extra(item, (path, key))
        return check

    def _condition(self, schema: dict):
        test = self._compile(schema["if"])
        then = self._compile(schema["then"]) if "then" in schema else _accept
        otherwise = self._compile(schema["else"]) if "else" in schema else _accept

        def check(value, path):
            try:
                test(value, path)
            except _Invalid:
                otherwise(value, path)
                return
            then(value, path)
        return check


def _accept(value, path) -> None:
    return None


def _refuse(value, path) -> None:
    raise _Invalid(path, "not expected here")


def _same(a, b) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b
