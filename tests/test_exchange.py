"""Reading results documents: the published JSON Schema, the checks around it, and what
`osmeter import` does with a bad file (issue 20 item 4): one line naming the field, a
non-zero exit, nothing stored.  Also: whatever the check accepts, every command reads."""
import copy
import io
import json
import os
import random
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from clirun import REPO, osmeter
from osmeter import cli
from osmeter.report import display
from osmeter.data import exchange, schema
from osmeter.formats import formats
from osmeter.data.model import Result
from osmeter.data.store import AlreadyStored, Store
from readers import read_everywhere
from synth import make_run

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (test extra) is not installed")
SCHEMA = json.loads(exchange.SCHEMA_FILE.read_text())


def base_run(run_id="base", label="base", **kw):
    run = make_run(run_id, label, **kw)
    run.results.append(Result(bench="net.tcp_peer", metric="latency", unit="ns",
                              better="lower", shape="point", status="skipped",
                              reason="no --peer given", params={"peer": ""}))
    return run


def base_doc():
    return json.loads(exchange.document_text(base_run()))


def index_of(doc, bench, metric=None, shape=None):
    for i, r in enumerate(doc["results"]):
        if r["bench"] == bench and (metric is None or r["metric"] == metric) and \
                (shape is None or r["shape"] == shape):
            return i
    raise KeyError(bench)


def put(path, value):
    """A mutation: set the value at path (keys and indexes) of the base document."""
    def apply(doc):
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return doc
    return apply


def drop(path):
    def apply(doc):
        node = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
        return doc
    return apply


def text(fn):
    """A mutation at the level of the JSON text: fn(text of the base document)."""
    fn.is_text = True
    return fn


def replace_median(token):
    return text(lambda t: t.replace('"median": %s' % json.dumps(
        base_doc()["results"][0]["summary"]["median"]), '"median": %s' % token, 1))


SWEEP = ("results", 6)          # mem.read at 4096 bytes (checked below)
SKIPPED = ("results", 12)       # the skipped net.tcp_peer
# (name, mutation, text the one-line message must contain)
BAD = [
    ("doc is a list", lambda d: [d], "not an osmeter results document"),
    ("doc is a number", lambda d: 5, "not an osmeter results document"),
    ("doc is 1e400", text(lambda t: "1e400"), "not an osmeter results document"),
    ("format missing", drop(["format"]), "not an osmeter results document"),
    ("format other", put(["format"], "pyperf"), "not an osmeter results document"),
    ("schema_version string", put(["schema_version"], "1"), "unsupported schema_version"),
    ("schema_version newer", put(["schema_version"], 2), "unsupported schema_version 2"),
    ("schema_version bool", put(["schema_version"], True), "unsupported schema_version"),
    ("other $schema", put(["$schema"], "urn:elsewhere"), "declares schema"),
    ("run missing", drop(["run"]), "run: missing"),
    ("run a list", put(["run"], []), "run: expected an object"),
    ("results missing", drop(["results"]), "results: missing"),
    ("results an object", put(["results"], {}), "results: expected an array"),
    ("unknown top-level key", put(["colour"], 1), "colour: not a field"),
    ("id a number", put(["run", "id"], 7), "run.id: expected a string"),
    ("id null", put(["run", "id"], None), "run.id: expected a string"),
    ("id empty", put(["run", "id"], ""), "run.id"),
    ("id a path", put(["run", "id"], "../../etc"), "run.id: is not a run id"),
    ("id with an escape", put(["run", "id"], "r\x1b[2J"), "run.id"),
    ("id too long", put(["run", "id"], "r" * 65), "run.id"),
    ("label a dict", put(["run", "label"], {"a": 1}), "run.label: expected a string or null"),
    ("label with ANSI", put(["run", "label"], "\x1b[31mred\x1b[0m"), "run.label: contains a control"),
    ("label with a newline", put(["run", "label"], "a\nb"), "run.label: contains a control"),
    ("label with a bidi override", put(["run", "label"], "abc\u202edef"), "run.label"),
    ("label with a lone surrogate", put(["run", "label"], "a\ud800"), "run.label"),
    ("label with a C1 control", put(["run", "label"], "a\x9bb"), "run.label"),
    ("started a number", put(["run", "started"], 12345), "run.started: expected a string"),
    ("started not a date", put(["run", "started"], "yesterday"), "run.started: is not an ISO"),
    ("finished a list", put(["run", "finished"], []), "run.finished"),
    ("status unknown", put(["run", "status"], "running"), "run.status: must be one of"),
    ("smoke a string", put(["run", "smoke"], "no"), "run.smoke: expected true or false"),
    ("suite a number", put(["run", "suite"], 5), "run.suite"),
    ("command a dict", put(["run", "command"], {}), "run.command"),
    ("osmeter_version a list", put(["run", "osmeter_version"], [1]), "run.osmeter_version"),
    ("unknown run key", put(["run", "owner"], "me"), "run.owner: not a field"),
    ("sysinfo a list", put(["run", "sysinfo"], []), "run.sysinfo: expected an object"),
    ("sysinfo a string", put(["run", "sysinfo"], "linux"), "run.sysinfo: expected an object"),
    ("kernel a string", put(["run", "sysinfo", "kernel"], "6.1"), "run.sysinfo.kernel: expected an object"),
    ("kernel release a list", put(["run", "sysinfo", "kernel", "release"], ["6"]),
     "run.sysinfo.kernel.release"),
    ("hostname a dict", put(["run", "sysinfo", "hostname"], {"n": 1}), "run.sysinfo.hostname"),
    ("hostname with ANSI", put(["run", "sysinfo", "hostname"], "h\x1b]0;x\x07"),
     "run.sysinfo.hostname: contains a control"),
    ("os a string", put(["run", "sysinfo", "os"], "Debian"), "run.sysinfo.os"),
    ("cpu model a number", put(["run", "sysinfo", "cpu", "model"], 5), "run.sysinfo.cpu.model"),
    ("cpu cores negative", put(["run", "sysinfo", "cpu", "cores"], -1), "run.sysinfo.cpu.cores: must be at least 0"),
    ("libc a list", put(["run", "sysinfo", "libc"], ["glibc"]), "run.sysinfo.libc"),
    ("memory_bytes a string", put(["run", "sysinfo", "memory_bytes"], "lots"), "run.sysinfo.memory_bytes"),
    ("unknown sysinfo value with ANSI", put(["run", "sysinfo", "board"], ["ok", "\x1b[1m"]),
     "run.sysinfo.board[1]: contains a control"),
    ("sysinfo key with ANSI", put(["run", "sysinfo", "\x1b[1mx"], 1), "run.sysinfo: key"),
    ("variant a string", put(["run", "sysinfo", "variant"], "dir=/tmp"), "run.sysinfo.variant"),
    ("environment a list", put(["run", "environment"], []), "run.environment: expected an object"),
    ("warnings a string", put(["run", "environment", "warnings"], "busy"), "run.environment.warnings"),
    ("warnings of numbers", put(["run", "environment", "warnings"], [1]), "run.environment.warnings[0]"),
    ("warning with ANSI", put(["run", "environment", "warnings"], ["\x1b[5mbusy"]),
     "run.environment.warnings[0]: contains a control"),
    ("load of strings", put(["run", "environment", "load_before"], ["x"]), "run.environment.load_before[0]"),
    ("busy pid a string", put(["run", "environment", "busy_before"], [{"pid": "x"}]),
     "run.environment.busy_before[0].pid"),
    ("result a string", put(["results", 0], "syscall.getpid"), "results[0]: expected an object"),
    ("bench missing", drop(["results", 0, "bench"]), "results[0].bench: missing"),
    ("bench a number", put(["results", 0, "bench"], 3), "results[0].bench"),
    ("bench empty", put(["results", 0, "bench"], ""), "results[0].bench: must not be empty"),
    ("metric with ANSI", put(["results", 0, "metric"], "l\x1b[0m"), "results[0].metric"),
    ("x a string", put(list(SWEEP) + ["x"], "4096"), "results[6].x: expected a number or null"),
    ("x a list", put(["results", 0, "x"], [1]), "results[0].x"),
    ("sweep point without x", put(list(SWEEP) + ["x"], None), "results[6].x: expected a number"),
    ("unit null", put(["results", 0, "unit"], None), "results[0].unit"),
    ("better unknown", put(["results", 0, "better"], "faster"), "results[0].better: must be one of"),
    ("shape unknown", put(["results", 0, "shape"], "line"), "results[0].shape"),
    ("status unknown", put(["results", 0, "status"], "maybe"), "results[0].status"),
    ("params a list", put(["results", 0, "params"], []), "results[0].params: expected an object"),
    ("param a dict", put(["results", 0, "params", "samples"], {"n": 5}), "results[0].params.samples"),
    ("summary a list", put(["results", 0, "summary"], []), "results[0].summary: expected an object"),
    ("median a string", put(["results", 0, "summary", "median"], "fast"), "results[0].summary.median: expected a number"),
    ("median missing", drop(["results", 0, "summary", "median"]), "results[0].summary.median: missing"),
    ("n negative", put(["results", 0, "summary", "n"], -3), "results[0].summary.n: must be at least 0"),
    ("n a fraction", put(["results", 0, "summary", "n"], 1.5), "results[0].summary.n: expected an integer"),
    ("summary value a dict", put(["results", 0, "summary", "p99"], {}), "results[0].summary.p99"),
    ("warnings a string", put(["results", 0, "warnings"], "noisy"), "results[0].warnings"),
    ("warnings of objects", put(["results", 0, "warnings"], [{}]), "results[0].warnings[0]"),
    ("notes a list", put(["results", 0, "notes"], []), "results[0].notes: expected an object"),
    ("stopped_by a number", put(["results", 0, "notes", "stopped_by"], 5), "results[0].notes.stopped_by"),
    ("extra a list", put(["results", 0, "extra"], []), "results[0].extra: expected an object"),
    ("curve a string", put(["results", 0, "extra", "curve"], "O(1)"), "results[0].extra.curve"),
    ("fit points of strings", put(["results", 0, "extra", "curve"], {"fit_points": [["a", 1]]}),
     "results[0].extra.curve.fit_points[0][0]"),
    ("samples a dict", put(["results", 0, "samples"], {}), "results[0].samples: expected an array"),
    ("sample too short", put(["results", 0, "samples", 0], [0, None]), "results[0].samples[0]"),
    ("sample rep a string", put(["results", 0, "samples", 0], ["r", None, 1.0]), "results[0].samples[0][0]"),
    ("sample rep negative", put(["results", 0, "samples", 0], [-1, None, 1.0]), "results[0].samples[0][0]"),
    ("sample value a string", put(["results", 0, "samples", 0], [0, None, "1"]), "results[0].samples[0][2]"),
    ("skipped with samples", put(list(SKIPPED) + ["samples"], [[0, None, 1.0]]),
     "results[12].samples: a skipped or failed result has no samples"),
    ("the same result twice", lambda d: dict(d, results=d["results"] + d["results"][:1]),
     "the same benchmark, metric and x as results[0]"),
    ("NaN", replace_median("NaN"), "results[0].summary.median: not a finite number"),
    ("Infinity", replace_median("Infinity"), "results[0].summary.median: not a finite number"),
    ("-Infinity", replace_median("-Infinity"), "results[0].summary.median: not a finite number"),
    ("1e400", replace_median("1e400"), "results[0].summary.median: not a finite number"),
    ("10^400", replace_median("1" + "0" * 400), "results[0].summary.median: an integer of 401 digits"),
    ("2^63", replace_median(str(2 ** 63)), "results[0].summary.median: an integer beyond 64 bits"),
    ("a 50-million-digit number", replace_median("9" * 50_000_000),
     "results[0].summary.median: an integer of 50000000 digits"),
    ("nested 100 deep", put(["results", 0, "extra", "deep"], json.loads("[" * 100 + "]" * 100)),
     "results[0].extra.deep[0][0]"),
    ("nested 100000 deep", text(lambda t: t.replace('"extra": {}', '"extra": {"deep": %s}'
                                                    % ("[" * 100000 + "]" * 100000), 1)),
     "results[0].extra.deep[0][0]"),
    ("a key twice", text(lambda t: t.replace('"run": {', '"run": {"id": "x",', 1)),
     "run: the key \"id\" appears twice"),
    # issue 31: accepted by the schema of before, then crashed a reader
    ("started in year 1 with an offset", put(["run", "started"], "0001-01-01T00:00:00+05:00"),
     "run.started: is not an ISO 8601 date and time from the years 1000 to 9998"),
    ("started in year 9999 with an offset",
     put(["run", "started"], "9999-12-31T23:59:59-05:00"), "run.started: is not an ISO 8601"),
    ("finished in month 13", put(["run", "finished"], "2026-13-01T00:00:00+00:00"),
     "run.finished: is not an ISO 8601"),
    ("offset of 99 hours", put(["run", "started"], "2026-11-01T00:00:00+99:00"),
     "run.started: is not an ISO 8601"),
    ("n 2^63-1", put(["results", 0, "summary", "n"], 2 ** 63 - 1),
     "results[0].summary.n: must be at most 9007199254740992"),
    ("an ok point without samples", put(["results", 0, "samples"], []),
     "results[0].samples: a measured ok result has at least one sample"),
    ("an ok sweep point without samples", drop(["results", SWEEP[1], "samples"]),
     "results[6].samples: missing"),
    ("a sample of 1e308", put(["results", 0, "samples", 0, 2], 1e308),
     "results[0].samples[0][2]: is beyond 1e30"),
    ("a sample of -1e308", put(["results", 0, "samples", 0, 2], -1e308),
     "results[0].samples[0][2]: is beyond -1e30"),
    ("a sample of 1e-308", put(["results", 0, "samples", 0, 2], 1e-308),
     "results[0].samples[0][2]: is too close to 0"),
    ("a median of 1e308", put(["results", 0, "summary", "median"], 1e308),
     "results[0].summary.median: is beyond 1e30"),
    ("an x of 1e308", put(["results", SWEEP[1], "x"], 1e308), "results[6].x: is beyond 1e30"),
    ("fs_type an object", put(["results", 0, "notes", "fs_type"], {"a": 1}),
     "results[0].notes.fs_type: expected a string or an array or null, got an object"),
    ("fs_type a list of objects", put(["results", 0, "notes", "fs_type"], [{"a": 1}]),
     "results[0].notes.fs_type[0]: expected a string"),
    ("truncated", text(lambda t: t[: len(t) // 2]), "is not valid JSON"),
    ("empty", text(lambda t: ""), "is not valid JSON"),
    ("not UTF-8", text(lambda t: t.encode().replace(b"base", b"b\xffse", 1)), "not UTF-8"),
]


def write_case(path: Path, mutation) -> None:
    if getattr(mutation, "is_text", False):
        out = mutation(json.dumps(base_doc(), indent=1))
        path.write_bytes(out if isinstance(out, bytes) else out.encode("utf-8", "surrogatepass"))
    else:
        path.write_text(json.dumps(mutation(base_doc()), indent=1))


def test_the_base_document_is_valid_and_the_cases_hit_what_they_say():
    doc = base_doc()
    jsonschema.validate(doc, SCHEMA)
    exchange.document_to_run(doc)
    assert doc["results"][SWEEP[1]]["shape"] == "sweep"
    assert doc["results"][SKIPPED[1]]["status"] == "skipped"
    assert '"extra": {}' in json.dumps(doc, indent=1)
    assert len(BAD) >= 74


@pytest.fixture
def store_with_a_run(tmp_path):
    db = tmp_path / "db.sqlite"
    Store(db).save_run(make_run("kept", "kept", seed=5))
    return db


def _main(*argv):
    """cli.main in this process: a traceback would fail the test; returns (code, err)."""
    err, out = io.StringIO(), io.StringIO()
    with redirect_stderr(err), redirect_stdout(out):
        code = cli.main(list(map(str, argv)))
    return code, err.getvalue()


@pytest.mark.parametrize("name, mutation, message", BAD, ids=[b[0] for b in BAD])
def test_import_refuses_a_bad_document_with_one_line_naming_the_field(
        tmp_path, store_with_a_run, name, mutation, message):
    bad = tmp_path / "bad.json"
    write_case(bad, mutation)
    before = Store(store_with_a_run).list_runs()
    code, err = _main("--db", store_with_a_run, "import", bad)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("osmeter: error: %s" % bad), err
    assert message in lines[0], lines[0]
    assert lines[0].isprintable() and len(lines[0]) < 400
    assert Store(store_with_a_run).list_runs() == before


@pytest.mark.parametrize("name", ["label with ANSI", "a 50-million-digit number",
                                  "nested 100000 deep", "kernel a string", "1e400"])
def test_bad_documents_in_a_real_process(tmp_path, store_with_a_run, name):
    """The same through the installed entry point: exit 2, one line, no traceback, and
    neither import, show nor compare lets the document through."""
    mutation, message = {b[0]: (b[1], b[2]) for b in BAD}[name]
    bad = tmp_path / "bad.json"
    write_case(bad, mutation)
    for args in (["import", bad], ["show", bad], ["compare", bad, bad]):
        r = osmeter(*args, db=store_with_a_run)
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and "\x1b" not in r.stdout + r.stderr
    assert [r["id"] for r in Store(store_with_a_run).list_runs()] == ["kept"]


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path, store_with_a_run):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(exchange.MAX_DOCUMENT_BYTES + 1)        # sparse: no disk used
    code, err = _main("--db", store_with_a_run, "import", big)
    assert code == 2 and "larger than 128 MiB" in err and err.count("\n") == 1


def test_a_gzipped_document_is_read_and_a_broken_one_refused(tmp_path, store_with_a_run):
    """examples/ keeps its large runs gzipped: import, show and compare read them as they
    are; a truncated one gets one line, and nothing is stored."""
    import gzip
    plain, packed, broken = (tmp_path / n for n in ("new.json", "new.json.gz", "cut.json.gz"))
    exchange.write_run_file(make_run("new", "new"), plain)
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    broken.write_bytes(packed.read_bytes()[:200])
    code, err = _main("--db", store_with_a_run, "import", broken)
    assert code == 2 and "not a readable gzip file" in err and err.count("\n") == 1, err
    assert [r["id"] for r in Store(store_with_a_run).list_runs()] == ["kept"]
    assert _main("--db", store_with_a_run, "import", packed)[0] == 0
    assert exchange.read_run_file(packed).results == exchange.read_run_file(plain).results


def test_several_files_are_all_checked_before_any_is_stored(tmp_path, store_with_a_run):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    exchange.write_run_file(make_run("new", "new"), good)
    write_case(bad, put(["run", "sysinfo"], []))
    code, err = _main("--db", store_with_a_run, "import", good, bad)
    assert code == 2 and "bad.json: run.sysinfo" in err
    assert [r["id"] for r in Store(store_with_a_run).list_runs()] == ["kept"]


# ---- the published schema and the interpreter ------------------------------------------

def test_the_published_schema_is_the_one_osmeter_reads_and_is_valid():
    published = REPO / "docs" / "results.schema.json"
    assert published.read_bytes() == exchange.SCHEMA_FILE.read_bytes()
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$id"] == exchange.schema_id()
    assert exchange.run_to_document(make_run("r", None))["$schema"] == SCHEMA["$id"]


def test_the_schema_and_its_documentation_name_the_same_fields():
    doc = (REPO / "docs" / "results-schema.md").read_text()
    defs = SCHEMA["$defs"]
    names = set(SCHEMA["properties"]) | set(defs["run"]["properties"]) | \
        set(defs["result"]["properties"]) | set(defs["summary"]["properties"]) | \
        set(defs["environment"]["properties"]) | set(defs["redacted"]["properties"])
    missing = sorted(n for n in names if '"%s"' % n not in doc)
    assert not missing, "docs/results-schema.md does not mention %s" % missing


def test_an_interpreter_refuses_a_schema_keyword_it_would_not_check():
    with pytest.raises(ValueError, match="uniqueItems"):
        schema.Schema({"type": "array", "uniqueItems": True})
    with pytest.raises(ValueError, match="patternProperties"):
        schema.Schema({"$defs": {"a": {"patternProperties": {}}}})


def _palette(rng):
    return rng.choice([0, -1, 1, 2 ** 62, 0.5, -2.5, 1e300, -1e300, 1e-300, "", "x",
                       "ünïcødé ☃", "a" * 1500, "tab\there", "line\nbreak", "\x1b[31m",
                       [], {}, None, True, False, [1, "a"], {"k": "v"}, {"k": [1, {"j": None}]},
                       [[1, 2], [3, 4]], "2026-11-22T08:15:48+00:00", "lower", "sweep", "ok"])


def _same_kind(rng, value):
    """An extreme value of the same JSON type: valid for the schema more often than not."""
    if isinstance(value, bool) or value is None:
        return rng.choice([True, False, None])
    if isinstance(value, (int, float)):
        return rng.choice([0, -1, 1, 2 ** 62, -2 ** 62, 0.5, 1e300, -1e300, 1e-300, 3.0])
    if isinstance(value, str):
        return rng.choice(["", "x", "ünïcødé ☃ 漢字", "a" * 1000, "tab\there", "line\nbreak",
                           "<b>&amp;</b>", "%s %d {0}", "r1", value[::-1]])
    if isinstance(value, list):
        return rng.choice([[], value[:1], value * 2])
    return rng.choice([{}, dict(list(value.items())[:1])])


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            yield from _paths(v, path + (i,))


def mutated_documents(seed: int, count: int):
    """Documents one to three random changes away from a valid one (fixed seed)."""
    rng = random.Random(seed)
    base = base_doc()
    for r in base["results"]:      # fewer samples: quicker, and just as many paths
        r["samples"] = r["samples"][:4] + r["samples"][-4:]
    paths = [p for p in _paths(base) if p]
    for _ in range(count):
        doc = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(paths)
            node = doc
            try:
                for key in path[:-1]:
                    node = node[key]
                roll = rng.random()
                if roll < 0.1 and isinstance(node, dict):
                    del node[path[-1]]
                elif roll < 0.8:
                    node[path[-1]] = _same_kind(rng, node[path[-1]])
                else:
                    node[path[-1]] = _palette(rng)
            except (KeyError, IndexError, TypeError):
                continue
        yield doc


def test_the_interpreter_agrees_with_jsonschema_on_random_documents():
    mine = exchange.results_schema()
    theirs = jsonschema.Draft202012Validator(SCHEMA)
    accepted = refused = 0
    for doc in mutated_documents(seed=17, count=250):
        try:
            mine.validate(doc)
            ok = True
        except schema.SchemaError:
            ok = False
        assert ok == theirs.is_valid(doc), json.dumps(doc)[:300]
        accepted += ok
        refused += not ok
    assert accepted > 50 and refused > 50      # both sides are exercised


@pytest.mark.parametrize("count", [60, pytest.param(200, marks=pytest.mark.long)])
def test_every_document_the_check_accepts_is_read_by_every_command(count):
    """60 mutated documents in the default run (13 of them accepted; about 40 s on a busy
    2-vCPU VM), 200 with --long (57 accepted)."""
    other = make_run("other", "other", seed=9)
    accepted = 0
    for doc in mutated_documents(seed=23, count=count):
        try:
            run = exchange.document_to_run(exchange.parse_document(json.dumps(doc)))
        except exchange.ExchangeError as e:
            assert "\n" not in str(e) and str(e).isprintable()
            continue
        accepted += 1
        read_everywhere(run, other)
    assert accepted > count // 5     # the check accepts about a quarter: both sides run


# ---- storing ------------------------------------------------------------------------------

def test_exactly_one_of_two_simultaneous_imports_stores_a_run(tmp_path):
    db = tmp_path / "db.sqlite"
    doc = tmp_path / "run.json"
    exchange.write_run_file(make_run("twice", "twice"), doc)
    first, second = Store(db), Store(db)
    assert first.list_runs() == second.list_runs() == []   # both saw no such run
    first.save_run(exchange.read_run_file(doc), replace=False)
    with pytest.raises(AlreadyStored, match="already stored"):
        second.save_run(exchange.read_run_file(doc), replace=False)
    env = dict(os.environ, OSMETER_DB=str(tmp_path / "race.sqlite"),
               PYTHONPATH=str(REPO))
    Store(tmp_path / "race.sqlite").close()
    for _ in range(3):
        procs = [subprocess.Popen([sys.executable, "-m", "osmeter", "import", str(doc)],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
        codes = sorted(p.returncode for p in procs)
        said = sorted("imported" if "imported run twice" in o else
                      "already" if "already stored" in e else o + e for o, e in outs)
        assert said == ["already", "imported"] and codes == [0, 2], outs
        Store(tmp_path / "race.sqlite").delete_run("twice")


def test_optional_run_fields_may_be_absent_and_one_repetition_has_no_interval():
    """What the schema lets out (a label; the interval of a one-repetition result) is
    read back, not a traceback."""
    doc = base_doc()
    del doc["run"]["label"]
    for r in doc["results"]:
        if r.get("summary"):
            r["summary"].pop("ci_low", None)
            r["summary"].pop("ci_high", None)
            r["summary"].pop("ci_level", None)
    run = exchange.document_to_run(json.loads(json.dumps(doc)))
    assert run.label is None and run.name == run.id
    display.results_table(run.results, condense_sweeps=True)
    half = base_doc()
    half["results"][0]["summary"].pop("ci_high")
    with pytest.raises(exchange.ExchangeError, match=r"results\[0\]\.summary"):
        exchange.document_to_run(half)


# ---- the eight documents of issue 31, through the command line ------------------------------

def _values_to(doc, value_of):
    """Every sample of results[0] (a point) set from value_of(old), its summary to match."""
    r = doc["results"][0]
    for s in r["samples"]:
        s[2] = value_of(s[2])
    values = sorted(s[2] for s in r["samples"])
    r["summary"].update(median=values[len(values) // 2], ci_low=values[0], ci_high=values[-1],
                        mean=sum(values) / len(values), min=values[0], max=values[-1])
    return doc


ISSUE_31_REFUSED = [
    ("started in year 1", put(["run", "started"], "0001-01-01T00:00:00+05:00"), "run.started"),
    ("started in year 9999", put(["run", "started"], "9999-12-31T23:59:59-05:00"), "run.started"),
    ("n 2^63-1", put(["results", 0, "summary", "n"], 2 ** 63 - 1), "results[0].summary.n"),
    ("ok without samples", put(["results", 0, "samples"], []), "results[0].samples"),
    ("samples of 1e308", lambda d: put(["results", 0, "summary", "median"], 1e308)(
        put(["results", 0, "samples", 0, 2], 1e308)(d)), "results[0].summary.median"),
    ("fs_type an object", put(["results", 0, "notes", "fs_type"], {"a": 1}),
     "results[0].notes.fs_type"),
]
ISSUE_31_ACCEPTED = [
    ("zero samples", lambda d: _values_to(d, lambda v: 0.0)),
    ("negative samples", lambda d: _values_to(d, lambda v: -v)),
    ("some zero samples", lambda d: _values_to(d, lambda v: 0.0 if v < 55 else v)),
]


@pytest.mark.parametrize("name, mutation, field", ISSUE_31_REFUSED,
                         ids=[c[0] for c in ISSUE_31_REFUSED])
def test_the_documents_of_issue_31_that_readers_cannot_use_are_refused(
        tmp_path, store_with_a_run, name, mutation, field):
    bad = tmp_path / "bad.json"
    write_case(bad, mutation)
    r = osmeter("import", bad, db=store_with_a_run)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "%s: %s: " % (bad, field) in r.stderr, r.stderr
    assert [x["id"] for x in Store(store_with_a_run).list_runs()] == ["kept"]


@pytest.mark.parametrize("name, mutation", ISSUE_31_ACCEPTED,
                         ids=[c[0] for c in ISSUE_31_ACCEPTED])
def test_the_documents_of_issue_31_with_zero_or_negative_values_are_read_everywhere(
        tmp_path, store_with_a_run, name, mutation):
    """Zero and negative values are measured (a loss of 0%, a CPU time below resolution,
    an overhead-corrected time): accepted, and every command reads them."""
    doc = tmp_path / "doc.json"
    write_case(doc, lambda d: put(["run", "id"], "odd")(put(["run", "label"], "odd")(
        mutation(d))))
    osmeter("import", doc, db=store_with_a_run, check=0)
    commands = [["show", "odd"], ["runs", "--where", "since=2026-01-01"],
                ["runs", "--where", "until=2026-12-31"], ["compare", "kept", "odd"],
                ["compare", "odd", "kept", "--md"],
                ["compare", "kept", "odd", "--fail-on-slower", "5"],
                ["report", "kept", "odd", "-o", tmp_path / "r.html"]] + \
        [["export", "odd", "--format", f] for f in formats()]
    crashes = []
    for args in commands:
        r = osmeter(*args, db=store_with_a_run)
        if "Traceback" in r.stderr:
            crashes.append("%s: %s" % (" ".join(map(str, args)), r.stderr.splitlines()[-1]))
        elif r.returncode not in (0, 1, 3):     # 1, 3: the gate's verdict
            # or one line: a format that holds none of these results says so
            assert r.returncode == 2 and r.stderr.count("osmeter: error: ") == 1 \
                and "nothing to export" in r.stderr, (args, r.stderr)
    assert not crashes, crashes


def test_a_summary_that_disagrees_with_its_samples_is_recomputed_and_said():
    """Issue 40: an all-zero metric was shown as 12.2 ns, ratio x1.000, beside "12.19 vs
    0: no ratio" (the summary said one thing, the samples another)."""
    doc = base_doc()
    i = next(k for k, r in enumerate(doc["results"]) if r.get("samples")
             and (r.get("summary") or {}).get("median") and r.get("status", "ok") == "ok")
    for s in doc["results"][i]["samples"]:
        s[2] = 0.0
    run = exchange.document_to_run(json.loads(json.dumps(doc)))
    assert run.results[i].summary["median"] == 0.0
    assert any("recomputed" in w and run.results[i].bench in w
               for w in run.environment["warnings"])
    # A summary that agrees is left as it was, and nothing is said.
    run = exchange.document_to_run(base_doc())
    assert not any("recomputed" in w for w in run.environment.get("warnings") or [])


def test_a_summary_recomputed_from_samples_must_itself_be_storable():
    """The samples' own summary replaces a stated one that disagrees: when that summary
    is one no results file may hold (a mean of 1e-31), the import is refused in one line,
    not accepted and refused later by every reader (found by test_properties)."""
    doc = {"$schema": exchange.schema_id(), "format": "osmeter.run", "schema_version": 1,
           "run": {"id": "p-0", "label": None, "started": "2026-01-01T00:00:00Z",
                   "status": "complete", "sysinfo": {}, "environment": {}},
           "results": [{"bench": "syscall.getpid", "metric": "latency", "unit": "ns",
                        "better": "lower", "shape": "point", "status": "ok", "params": {},
                        "samples": [[0, None, 0.0]] * 5 + [[0, None, 1e-30]],
                        "summary": {"n": 0, "median": 0.0}}]}
    with pytest.raises(exchange.ExchangeError, match="summary cannot be stored"):
        exchange.document_to_run(exchange.parse_document(json.dumps(doc)))
    doc["results"][0]["samples"] = [[0, None, 5.0]] * 6
    run = exchange.document_to_run(exchange.parse_document(json.dumps(doc)))
    assert run.results[0].summary["median"] == 5.0          # recomputed, and said
    assert any("recomputed" in w for w in run.environment["warnings"])
