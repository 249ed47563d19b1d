"""Suite files: a team's own benchmark suite in TOML, kept under version control and run
with `osmeter run --suite-file FILE`.  The format is documented in docs/suite-files.md;
examples/suite.toml is an example.

    [suite]                      # optional
    label = "nightly"            # default --label
    repetitions = 5              # default --repetitions ('runs' is the same key)
    preset = "default"           # sizes (and commands' samples/warmup): default|quick|smoke

    [[bench]]
    id = "ctx.pipe_ring"         # an id, a glob ('ub.*') or a family ('syscall')
    params = { n = [2, 16], pin = "none" }

    [[command]]
    name = "python-startup"      # stored as cmd.python-startup
    run = ["python3", "-c", "pass"]   # a list runs directly; a string runs with /bin/sh -c
    warmup = 2
    samples = 10

Every problem is reported as one line naming the file, the line where it can be found,
the entry and the key.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import plan, user_command
from .catalog import PRESETS, Catalog, CatalogError

MAX_BYTES = 1 << 20     # read no more (a suite file named /dev/zero ends here)
SUITE_KEYS = {"label": str, "repetitions": int, "runs": int, "preset": str}
BENCH_KEYS = {"id": str, "params": dict, "preset": str}
COMMAND_KEYS = {"name": str, "run": (list, str), "shell": bool, "setup": str, "cleanup": str,
                "cold_cache": bool, "warmup": int, "samples": int, "timeout": int,
                "output": str}


class SuiteFileError(CatalogError):
    """One line: FILE:LINE: where: what is wrong."""


@dataclass
class SuiteFile:
    path: str
    items: list = field(default_factory=list)      # plan.PlanItem
    label: str | None = None
    runs: int | None = None


def _toml():
    try:
        import tomllib
        return tomllib
    except ImportError:     # Python < 3.11
        try:
            import tomli
            return tomli
        except ImportError:
            raise SuiteFileError("suite files need Python 3.11 or newer (tomllib), or the "
                                 "'tomli' package")


class _Locator:
    """Finds the line of an entry or key in the file's text, for error messages."""

    def __init__(self, path: str, text: str):
        self.path, self.lines = path, text.splitlines()

    def _headers(self, table: str, array: bool) -> list[int]:
        pat = re.compile(r"^\s*\[\[\s*%s\s*\]\]" % re.escape(table) if array
                         else r"^\s*\[\s*%s\s*\]" % re.escape(table))
        return [i for i, line in enumerate(self.lines) if pat.match(line)]

    def line(self, table: str | None, index: int | None = None, key: str | None = None) -> int | None:
        start, end = 0, len(self.lines)
        if table is not None:
            heads = self._headers(table, index is not None)
            pos = index or 0
            if pos >= len(heads):
                return None
            start = heads[pos]
            end = next((i for i in range(start + 1, len(self.lines))
                        if re.match(r"^\s*\[", self.lines[i])), len(self.lines))
        if key is None:
            return start + 1
        pat = re.compile(r"^\s*[\"']?%s[\"']?\s*=" % re.escape(key))
        for i in range(start, end):
            if pat.match(self.lines[i]):
                return i + 1
        return start + 1 if table is not None else None

    def error(self, msg: str, table=None, index=None, key=None) -> SuiteFileError:
        n = self.line(table, index, key)
        return SuiteFileError("%s%s: %s" % (self.path, ":%d" % n if n else "", msg))


def _where(table: str, index: int, entry: dict, key: str | None = None) -> str:
    name = entry.get("name") or entry.get("id")
    s = "[[%s]] #%d%s" % (table, index + 1, " (%s)" % name if isinstance(name, str) else "")
    return s + (" key '%s'" % key if key else "")


def _type_name(t) -> str:
    names = {str: "a string", int: "an integer", bool: "true or false", dict: "a table",
             list: "a list"}
    if isinstance(t, tuple):
        return " or ".join(names[x] for x in t)
    return names[t]


def _check_keys(loc, table, index, entry, known) -> None:
    for key, value in entry.items():
        if key not in known:
            where = _where(table, index, entry) if index is not None else "[%s]" % table
            raise loc.error("%s: unknown key '%s' (known: %s)"
                            % (where, key, ", ".join(known)), table, index, key)
        want = known[key]
        ok = isinstance(value, want) and not (isinstance(value, bool) and want is int)
        if not ok:
            where = _where(table, index, entry, key) if index is not None else \
                "[%s] key '%s'" % (table, key)
            raise loc.error("%s: must be %s" % (where, _type_name(want)), table, index, key)


def _param_value(value) -> str | None:
    """TOML value -> the core's key=value string (lists become comma lists)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool)
                                                 for v in value):
        return ",".join(str(v) for v in value)
    return None


def load(path: str, catalog: Catalog, smoke: bool = False) -> SuiteFile:
    """Read and check a suite file; every parameter is validated by the core."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise SuiteFileError("cannot read suite file %s: %s" % (path, e.strerror))
    if len(raw) > MAX_BYTES:
        raise SuiteFileError("%s: larger than %d MB; a suite file is a short list of "
                             "benchmarks" % (path, MAX_BYTES >> 20))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SuiteFileError("%s: not UTF-8 text (byte %d)" % (path, e.start))
    loc = _Locator(path, text)
    toml = _toml()
    try:
        doc = toml.loads(text)
    except RecursionError:
        raise SuiteFileError("%s: invalid TOML: arrays or tables nested too deeply" % path) \
            from None
    except toml.TOMLDecodeError as e:
        msg = str(e)
        # tomllib and older tomli put the place in the message; tomli >= 2.1 also has
        # lineno/colno, and says "(at end of document)" where that is the place.
        m = re.search(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)", msg)
        line = getattr(e, "lineno", None) or (m.group(1) if m else None)
        column = getattr(e, "colno", None) or (m.group(2) if m else None)
        if m:
            msg = msg[:m.start()].strip()
        if line and column:
            raise SuiteFileError("%s:%s:%s: invalid TOML: %s" % (path, line, column, msg))
        raise SuiteFileError("%s: invalid TOML: %s" % (path, msg))

    for key in doc:
        if key not in ("suite", "bench", "command"):
            raise loc.error("unknown table or key '%s' (a suite file has [suite], [[bench]] "
                            "and [[command]])" % key, None, None, key)
    suite = doc.get("suite", {})
    if not isinstance(suite, dict):
        raise loc.error("'suite' must be a table: [suite]", None, None, "suite")
    _check_keys(loc, "suite", None, suite, SUITE_KEYS)
    preset = suite.get("preset", "default")
    if preset not in PRESETS:
        raise loc.error("[suite] key 'preset': must be one of %s" % ", ".join(PRESETS),
                        "suite", None, "preset")
    key = "repetitions" if "repetitions" in suite else "runs"    # runs: --runs's name
    if "repetitions" in suite and "runs" in suite:
        raise loc.error("[suite] keys 'repetitions' and 'runs' say the same: give one",
                        "suite", None, "runs")
    runs = suite.get(key)
    if runs is not None and runs < 1:
        raise loc.error("[suite] key '%s': must be at least 1" % key, "suite", None, key)
    out = SuiteFile(path=path, label=suite.get("label"), runs=runs)

    for table in ("bench", "command"):
        entries = doc.get(table, [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise loc.error("'%s' must be an array of tables: [[%s]]" % (table, table),
                            None, None, table)
    seen: dict[str, str] = {}
    for i, entry in enumerate(doc.get("bench", [])):
        for item in _bench_items(loc, catalog, i, entry, "smoke" if smoke else preset):
            _add(loc, out, seen, item, "bench", i)
    for i, entry in enumerate(doc.get("command", [])):
        item = _command_item(loc, i, entry, "smoke" if smoke else preset)
        _add(loc, out, seen, item, "command", i)
    if not out.items:
        raise SuiteFileError("%s: names no benchmark (add [[bench]] or [[command]] entries)"
                             % path)
    return out


def _add(loc, out, seen, item, table, index) -> None:
    if item.result_id in seen:
        raise loc.error("%s: '%s' is already in the suite (%s); each benchmark may appear "
                        "once" % (_where(table, index, {}), item.result_id,
                                  seen[item.result_id]), table, index)
    seen[item.result_id] = "[[%s]] #%d" % (table, index + 1)
    out.items.append(item)


def _bench_items(loc, catalog, i, entry, preset) -> list:
    _check_keys(loc, "bench", i, entry, BENCH_KEYS)
    if "id" not in entry:
        raise loc.error("%s: missing key 'id'" % _where("bench", i, entry), "bench", i)
    preset = entry.get("preset", preset) if preset != "smoke" else preset
    if preset not in PRESETS:
        raise loc.error("%s: must be one of %s" % (_where("bench", i, entry, "preset"),
                                                   ", ".join(PRESETS)), "bench", i, "preset")
    try:
        ids = catalog.select([entry["id"]])
    except CatalogError as e:
        raise loc.error("%s: %s" % (_where("bench", i, entry, "id"), e), "bench", i, "id")
    ids = [b for b in ids if b != user_command.CORE_BENCH]
    if not ids:
        raise loc.error("%s: use a [[command]] entry for your own command"
                        % _where("bench", i, entry, "id"), "bench", i, "id")
    params = {}
    for key, value in entry.get("params", {}).items():
        s = _param_value(value)
        if s is None:
            raise loc.error("%s: parameter '%s' must be an integer, a string or a list of "
                            "integers" % (_where("bench", i, entry, "params"), key),
                            "bench", i, "params")
        params[key] = s
    items = []
    for bench in ids:
        for key in params:
            if not catalog.declares(bench, key):
                names = ", ".join(p["name"] for p in catalog.by_id[bench]["params"])
                raise loc.error("%s: %s has no parameter '%s' (it has: %s)"
                                % (_where("bench", i, entry, "params"), bench, key,
                                   names or "none"), "bench", i, "params")
        item = plan.PlanItem(bench=bench, params=dict(params), preset=preset)
        try:   # the core checks values and bounds
            plan.validate(catalog, [item], [plan.Variant()])
        except CatalogError as e:
            raise loc.error("%s: %s" % (_where("bench", i, entry, "params"), e),
                            "bench", i, "params" if params else "id")
        items.append(item)
    return items


def _command_item(loc, i, entry, preset):
    _check_keys(loc, "command", i, entry, COMMAND_KEYS)
    for key in ("name", "run"):
        if key not in entry:
            raise loc.error("%s: missing key '%s'" % (_where("command", i, entry), key),
                            "command", i)
    shell = entry.get("shell", isinstance(entry["run"], str))
    try:
        return user_command.command_item(
            entry["name"], entry["run"], shell=shell, setup=entry.get("setup"),
            cleanup=entry.get("cleanup"), cold_cache=entry.get("cold_cache", False),
            warmup=entry.get("warmup"), samples=entry.get("samples"),
            timeout=entry.get("timeout"), output=entry.get("output"), preset=preset)
    except user_command.CommandError as e:
        raise loc.error("%s: %s" % (_where("command", i, entry), e), "command", i,
                        e.key or "run")
