"""Exports in other tools' formats, read back by those tools (issue 17): pyperf's loader
and compare_to, hyperfine's JSON as hyperfine itself writes it and its scripts read it,
the documented shapes of BMF and github-action-benchmark, the long CSV, JUnit from the
regression gate, and --redact."""
import csv
import io
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from clirun import osmeter
from osmeter.analysis import compare, gate
from osmeter.data import exchange, redact
from osmeter import stats
from osmeter.formats import formats, junit
from osmeter.data.store import Store
from synth import make_run

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (test extra) is not installed")
SCHEMA = json.loads(exchange.SCHEMA_FILE.read_text())


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """A small real run (points, a sweep with plateaus, a scatter, whole-process timings,
    UnixBench indices) and a run of the user's own command, stored and exported."""
    d = tmp_path_factory.mktemp("real")
    db = d / "db.sqlite"
    osmeter("run", "syscall.getpid", "ctx.pipe_ring", "mem.read", "scale.fork.dynamic",
            "app.start.sh", "ub.syscall", "--smoke", "--runs", "3", "--label", "real",
            "--quiet", db=db, check=0, timeout=600)
    osmeter("run", "cmd", "--name", "true", "--smoke", "--runs", "3", "--label", "cmd",
            "--quiet", "--", "true", db=db, check=0, timeout=600)
    return db, d


def export(db, *args, check=0):
    r = osmeter("export", *args, db=db, check=check)
    return r


def synth_files(tmp_path, slowdown=1.3):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    exchange.write_run_file(make_run("ra", "A", seed=1), a)
    exchange.write_run_file(make_run("rb", "B", seed=2, speed=1 / slowdown), b)
    return a, b


# ---- osmeter's own document ------------------------------------------------------------

def test_every_exported_document_follows_the_published_schema(real, tmp_path):
    db, _ = real
    docs = [json.loads(export(db, "real").stdout), json.loads(export(db, "cmd").stdout),
            json.loads(export(db, "real", "--redact").stdout),
            json.loads(osmeter("show", "real", "--json", db=db, check=0).stdout),
            exchange.run_to_document(make_run("s", "synthetic"))]
    for doc in docs:
        jsonschema.validate(doc, SCHEMA)
        assert doc["$schema"] == SCHEMA["$id"]
        exchange.check_document(doc)
    shapes = {r["shape"] for r in docs[0]["results"]}
    assert shapes == {"point", "sweep", "scatter", "derived"}


# ---- pyperf -----------------------------------------------------------------------------

def test_pyperf_reads_every_exported_file_as_repetitions_of_values(real, tmp_path):
    pyperf = pytest.importorskip("pyperf", reason="pyperf (test extra) is not installed")
    db, _ = real
    checked = with_loops = with_bytes = 0
    for ref in ("real", "cmd"):
        out = tmp_path / ("%s.json" % ref)
        export(db, ref, "--format", "pyperf", "-o", out)
        suite = pyperf.BenchmarkSuite.load(str(out))
        run = Store(db).load_run(ref)
        by_name = {b.get_name(): b for b in suite.get_benchmarks()}
        assert by_name
        for r in run.results:
            b = by_name.get(r.label)
            if b is None:
                assert r.unit not in ("ns", "ms", "s", "bytes") or r.shape == "scatter" or \
                    r.status != "ok" or any(s.value <= 0 for s in r.samples), r.label
                continue
            assert b.get_nrun() == len({s.rep for s in r.samples})
            scale, unit = {"ns": (1e-9, "second"), "ms": (1e-3, "second"),
                           "s": (1.0, "second"), "bytes": (1, "byte")}[r.unit]
            assert b.get_unit() == unit
            assert sorted(b.get_values()) == pytest.approx(
                sorted(s.value * scale for s in r.samples), rel=1e-12)
            pruns = b.get_runs()
            # each repetition's date and wall time; loops where the core counted them
            assert all(p.get_metadata()["date"] == run.started for p in pruns)
            assert all(p.get_metadata()["duration"] > 0 for p in pruns)
            noted = r.notes.get("iterations_per_batch")
            if noted is not None:
                if r.x is None:
                    loops = [int(n) for n in noted]
                else:       # a sweep: 'n=X: COUNT' per size, in each repetition
                    loops = [int(next(e.split(":")[1] for e in per_rep
                                      if float(e.split("=")[1].split(":")[0]) == r.x))
                             for per_rep in noted]
                assert [p.get_metadata()["loops"] for p in pruns] == loops
                with_loops += 1
            if r.metric == "max_rss":
                with_bytes += 1
            checked += 1
    assert with_loops >= 2 and with_bytes >= 1
    assert checked >= 5


def test_pyperf_compare_to_sees_a_30_percent_slowdown(tmp_path):
    pytest.importorskip("pyperf", reason="pyperf (test extra) is not installed")
    a, b = synth_files(tmp_path, slowdown=1.3)
    pa, pb = tmp_path / "a.pyperf.json", tmp_path / "b.pyperf.json"
    osmeter("export", a, "--format", "pyperf", "-o", pa, check=0)
    osmeter("export", b, "--format", "pyperf", "-o", pb, check=0)
    for first, second, word in ((pa, pb, "slower"), (pb, pa, "faster")):
        r = subprocess.run([sys.executable, "-m", "pyperf", "compare_to", str(first),
                            str(second)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        factors = [float(f) for f in re.findall(r"([\d.]+)x %s" % word, r.stdout)]
        assert len(factors) >= 6, r.stdout      # five benchmarks and the geometric mean
        assert all(1.25 < f < 1.35 for f in factors), r.stdout
        other = "faster" if word == "slower" else "slower"
        assert "x %s" % other not in r.stdout


# ---- hyperfine --------------------------------------------------------------------------

def _json_type(v):
    return "number" if isinstance(v, (int, float)) and not isinstance(v, bool) else \
        type(v).__name__


def hyperfine_exports(db) -> list[dict]:
    return json.loads(export(db, "cmd", "--format", "hyperfine").stdout)["results"] + \
        json.loads(export(db, "real", "--format", "hyperfine").stdout)["results"]


def test_hyperfine_file_has_every_field_hyperfine_writes(real, tmp_path):
    if not shutil.which("hyperfine"):
        pytest.skip("hyperfine is not installed (Debian package hyperfine)")
    db, _ = real
    ref = tmp_path / "hyperfine.json"
    subprocess.run(["hyperfine", "--runs", "3", "--export-json", str(ref), "true"],
                   capture_output=True, check=True, timeout=120)
    theirs = json.loads(ref.read_text())["results"][0]
    for entry in hyperfine_exports(db):      # every field, with the same JSON type
        for key, value in theirs.items():
            assert key in entry, key
            if entry[key] is not None and value is not None:
                assert _json_type(entry[key]) == _json_type(value), key


def test_hyperfine_file_holds_the_wall_times_as_its_scripts_read_them(real):
    db, _ = real
    ours = hyperfine_exports(db)
    assert [r["command"] for r in ours] == ["true", "app.start.sh"]
    cmd_run = Store(db).load_run("cmd")
    wall = sorted(s.value * 1e-9 for r in cmd_run.results if r.metric == "wall"
                  for s in r.samples)
    for entry in ours:
        # What hyperfine's scripts read: command, times, mean, stddev, median, parameters.
        times = entry["times"]
        assert entry["mean"] == pytest.approx(statistics.fmean(times))
        assert entry["median"] == pytest.approx(statistics.median(times))
        assert entry["stddev"] == pytest.approx(statistics.stdev(times))
        assert entry["min"] == min(times) and entry["max"] == max(times)
        assert len(entry["exit_codes"]) == len(times) == 6      # 3 repetitions x 2 runs
        assert entry["user"] >= 0 and entry["system"] >= 0
        assert isinstance(entry.get("parameters", {}), dict)
    assert sorted(ours[0]["times"]) == pytest.approx(wall)


def test_hyperfine_export_of_a_run_without_whole_process_timings_is_refused(tmp_path):
    a, _ = synth_files(tmp_path)
    r = osmeter("export", a, "--format", "hyperfine", check=2)
    assert "nothing to export" in r.stderr and r.stdout == ""


# ---- BMF and github-action-benchmark ------------------------------------------------------

# Bencher's documented shape (bencher.dev/docs/reference/bencher-metric-format): benchmark
# name -> measure -> {value, lower_value?, upper_value?}, numbers; measure at most 64 chars.
BMF_SHAPE = {
    "type": "object",
    "additionalProperties": {
        "type": "object", "minProperties": 1,
        "propertyNames": {"maxLength": 64, "minLength": 1},
        "additionalProperties": {
            "type": "object", "required": ["value"], "additionalProperties": False,
            "properties": {"value": {"type": "number"}, "lower_value": {"type": "number"},
                           "upper_value": {"type": "number"}}}}}

# github-action-benchmark's custom tools (src/extract.ts: name, value, unit required;
# range and extra optional strings).
GAB_SHAPE = {
    "type": "array", "minItems": 1,
    "items": {"type": "object", "required": ["name", "unit", "value"],
              "additionalProperties": False,
              "properties": {"name": {"type": "string", "minLength": 1},
                             "unit": {"type": "string"}, "value": {"type": "number"},
                             "range": {"type": "string"}, "extra": {"type": "string"}}}}


BMF_MEASURES = {"latency", "throughput", "bandwidth", "size", "percent-lower",
                "percent-higher", "index"}


def test_bmf_holds_median_and_interval_of_every_measured_result(real):
    db, _ = real
    report = json.loads(export(db, "real", "--format", "bmf").stdout)
    jsonschema.validate(report, BMF_SHAPE)
    run = Store(db).load_run("real")
    measured = [r for r in run.results if r.status == "ok"]
    # one measure per benchmark (the metric is in the benchmark's name), a handful in all
    assert all(len(m) == 1 for m in report.values()) and len(report) == len(measured)
    assert {m for b in report.values() for m in b} <= BMF_MEASURES
    getpid = report["syscall.getpid"]["latency"]
    s = next(r for r in measured if r.bench == "syscall.getpid").summary
    assert (getpid["value"], getpid["lower_value"], getpid["upper_value"]) == \
        (s["median"], s["ci_low"], s["ci_high"])
    assert any(name.startswith("ctx.pipe_ring per_switch [processes=") for name in report)
    wall = next(r for r in measured if r.bench == "app.start.sh" and r.metric == "wall")
    factor = {"ns": 1, "ms": 1e6, "s": 1e9}[wall.unit]
    assert report[wall.label]["latency"]["value"] == pytest.approx(wall.median * factor)


def gab_entries(db, ref, fmt):
    r = export(db, ref, "--format", fmt)
    return json.loads(r.stdout), r.stderr


def test_github_action_benchmark_files_split_by_direction(real):
    db, _ = real
    smaller, said = gab_entries(db, "real", "github-smaller")
    bigger, _ = gab_entries(db, "real", "github-bigger")
    run = Store(db).load_run("real")
    ok = {r.label: r for r in run.results if r.status == "ok"}
    for entries in (smaller, bigger):
        jsonschema.validate(entries, GAB_SHAPE)
        names = [e["name"] for e in entries]
        assert len(set(names)) == len(names)
        for e in entries:
            m = re.match(r"(\+-|±)\s*(\d.*)", e["range"])   # the action's extractRangeInfo
            assert m and math.isfinite(float(m.group(2))) and float(m.group(2)) >= 0
            assert e["value"] != 0
            # the interval's own level: 75% with 3 repetitions, not "95%"
            level = ok[e["name"]].summary["ci_level"]
            assert "%s%% interval" % stats.fmt_percent(level) in e["extra"]
    zeros = sum(1 for r in ok.values() if r.better == "lower" and r.median == 0)
    assert len(smaller) == sum(1 for r in ok.values() if r.better == "lower") - zeros
    assert len(bigger) == sum(1 for r in ok.values() if r.better == "higher")
    if zeros:
        assert "%d result(s) with a median of 0" % zeros in said


GAB_DIR = os.environ.get("OSMETER_GAB_DIR", "/var/tmp/osmeter-history/gab")
GAB_SCRIPT = """
const fs = require('fs');
const [dir, tool, prevFile, curFile] = process.argv.slice(2);
const extract = require(dir + '/dist/src/extract.js');
const write = require(dir + '/dist/src/write.js');
const load = (f) => extract.BenchmarkResults.parse(JSON.parse(fs.readFileSync(f, 'utf8')));
const suite = (id, benches) => ({commit: {id, url: 'https://example.invalid/' + id,
  message: 'm', timestamp: '2026-11-25T00:00:00Z', author: {name: 'a'},
  committer: {name: 'a'}}, date: 0, tool, benches});
console.log(write.buildComment('osmeter', suite('b', load(curFile)), suite('a', load(prevFile))));
"""


@pytest.mark.skipif(shutil.which("node") is None or
                    not os.path.exists(os.path.join(GAB_DIR, "dist", "src", "write.js")),
                    reason="github-action-benchmark's released dist/ (with its node_modules; "
                    "not on npm: a checkout of its tag v1.22.0) is not in $OSMETER_GAB_DIR, "
                    "or node is missing")
def test_github_action_benchmark_reads_both_files_and_finds_no_infinite_ratio(real, tmp_path):
    """The action's own parser (zod schema) and its comparison table, run under Node on
    two real runs' files, one with zero medians: no ratio from 0."""
    db, _ = real
    script = tmp_path / "gab.js"
    script.write_text(GAB_SCRIPT)
    zero_run = tmp_path / "zero.json"
    run = Store(db).load_run("real")
    zeroed = next(r for r in run.results if r.status == "ok" and r.better == "lower")
    zeroed.summary["median"] = 0.0          # as a CPU time below resolution reads
    exchange.write_run_file(run, zero_run)
    for fmt, tool in (("github-smaller", "customSmallerIsBetter"),
                      ("github-bigger", "customBiggerIsBetter")):
        prev, cur = tmp_path / ("prev-" + fmt), tmp_path / ("cur-" + fmt)
        prev.write_text(export(db, zero_run, "--format", fmt).stdout)
        cur.write_text(export(db, "cmd" if False else "real", "--format", fmt).stdout)
        r = subprocess.run(["node", str(script), GAB_DIR, tool, str(prev), str(cur)],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, GITHUB_REPOSITORY="owner/repo"))
        assert r.returncode == 0, r.stderr
        assert "| `" in r.stdout and "∞" not in r.stdout and "NaN" not in r.stdout


# ---- the long format --------------------------------------------------------------------

def test_long_csv_has_one_row_per_sample_of_every_run(real):
    db, _ = real
    r = export(db, "real", "cmd", "--format", "long")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    runs = [Store(db).load_run(ref) for ref in ("real", "cmd")]
    assert len(rows) == sum(len(res.samples) for run in runs for res in run.results)
    assert list(rows[0]) == ["run", "label", "host", "kernel", "os", "cpu", "started",
                             "benchmark", "metric", "unit", "better", "parameters", "x_name",
                             "x", "repetition", "value"]
    first = runs[0].results[0]
    mine = [row for row in rows if row["run"] == runs[0].id and
            row["benchmark"] == first.bench and row["metric"] == first.metric]
    assert [float(row["value"]) for row in mine] == [s.value for s in first.samples]
    assert json.loads(mine[0]["parameters"]) == first.params
    assert {row["kernel"] for row in rows} == {runs[0].sysinfo["kernel"]["release"]}
    assert {row["started"] for row in rows} == {run.started for run in runs}
    assert {row["os"] for row in rows} == {runs[0].sysinfo["os"]["name"]}
    scatter = [row for row in rows if row["benchmark"] == "scale.fork.dynamic"]
    assert scatter and all(row["x"] for row in scatter)


def test_one_run_formats_refuse_several_runs(real):
    db, _ = real
    r = export(db, "real", "cmd", "--format", "pyperf", check=2)
    assert r.stderr.count("\n") == 1 and "holds one run" in r.stderr


# ---- JUnit from the regression gate ---------------------------------------------------------

def test_junit_from_the_gate_has_a_case_per_row_and_a_failure_per_regression(tmp_path):
    a, b = synth_files(tmp_path, slowdown=1.3)
    out = tmp_path / "gate.xml"
    r = osmeter("compare", a, b, "--fail-on-slower", "10", "--junit", out, "--csv",
                db=tmp_path / "db.sqlite")
    assert "Traceback" not in r.stderr
    cmp = compare.compare([exchange.read_run_file(a), exchange.read_run_file(b)])
    g = gate.evaluate(cmp, 10)
    assert r.returncode == g.exit_code == gate.EXIT_FAIL, r.stderr
    assert "osmeter: regression:" in r.stderr
    root = ET.parse(out).getroot()
    cases = root.findall(".//testcase")
    failures = root.findall(".//testcase/failure")
    skipped = root.findall(".//testcase/skipped")
    assert len(cases) == len(g.rows) == int(root.get("tests")) == 10
    assert len(failures) == len(g.having(gate.FAIL)) == int(root.get("failures")) >= 1
    undecided = g.having(gate.UNDECIDED) + g.having(gate.NOT_JUDGED) + g.having(gate.NOT_GATED)
    assert len(skipped) == len(undecided) == int(root.find("testsuite").get("skipped"))
    assert len(failures) + len(skipped) + len(g.having(gate.PASS)) == len(cases)
    assert root.find(".//property[@name='outcome']").get("value") == "fail"
    for f in failures:
        est = float(re.search(r"slowdown_pct: ([\d.]+)", f.text).group(1))
        assert est > 10                      # worse, and estimated beyond the threshold
        assert "q: " in f.text and "threshold_pct: 10" in f.text
        # both medians with their intervals, as docs/formats.md and docs/ci.md promise
        assert re.search(r"median_A: [\d.e+]+ \S+ \[[\d.e+]+, [\d.e+]+\]", f.text)
        assert re.search(r"median_B: [\d.e+]+ \S+ \[", f.text)
    for case in cases:
        family = case.get("name").split(".")[0]
        assert case.get("classname") == "osmeter gate"      # no file, no family twice
        assert (case.get("classname") + "." + case.get("name")).count(family + ".") == 1
    for s in skipped:
        assert "repetitions" in (s.text or "") or s.get("message")
    junit_xsd_valid(out)
    junitparser = pytest.importorskip("junitparser", reason="junitparser (test extra) is "
                                      "not installed")
    suites = junitparser.JUnitXml.fromfile(str(out))
    seen = {"failure": 0, "skipped": 0, "pass": 0}
    for suite in suites:
        for case in suite:
            kinds = [type(res).__name__.lower() for res in case.result]
            seen[kinds[0] if kinds else "pass"] += 1
            if kinds == ["failure"]:
                assert "median_A:" in case.result[0].text
    assert seen == {"failure": len(failures), "skipped": len(skipped),
                    "pass": len(g.having(gate.PASS))}
    # The same system again, no slowdown: nothing fails.
    same = tmp_path / "same.json"
    exchange.write_run_file(make_run("rc", "C", seed=3), same)
    r = osmeter("compare", a, same, "--fail-on-slower", "10", "--junit", out,
                db=tmp_path / "db.sqlite")
    assert r.returncode in (gate.EXIT_PASS, gate.EXIT_UNDECIDED), r.stderr
    root = ET.parse(out).getroot()
    assert root.get("failures") == "0" and int(root.get("tests")) == 10


def junit_xsd_valid(path) -> None:
    """The file against the Jenkins xunit plugin's junit-10.xsd (tests/junit-10.xsd, as
    published in jenkinsci/xunit-plugin)."""
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema (test extra) is not "
                                    "installed")
    schema = xmlschema.XMLSchema(str(Path(__file__).parent / "junit-10.xsd"))
    schema.validate(str(path))


def test_junit_of_an_undecided_gate_is_valid_and_says_its_numbers(tmp_path):
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    exchange.write_run_file(make_run("ra", "A", seed=1, reps=3), a)
    exchange.write_run_file(make_run("rb", "B", seed=2, reps=3), b)
    out = tmp_path / "gate.xml"
    osmeter("compare", a, b, "--fail-on-slower", "10", "--junit", out,
            db=tmp_path / "db.sqlite")
    junit_xsd_valid(out)
    root = ET.parse(out).getroot()
    assert root.get("skipped") is None and root.find("testsuite").get("skipped") is not None


def test_junit_writer_counts_outcomes_and_keeps_the_xml_well_formed():
    cases = [junit.GateCase("a", "pass", "fine", {"x": 1.5}),
             junit.GateCase("b\x1b[31m", "fail", "slower \x00by 30%", {"slower_pct": 30.0}),
             junit.GateCase("c", "undecided", "too few repetitions")]
    root = ET.fromstring(junit.render(cases, "suite", {"baseline": "main"}).encode())
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("3", "1", None)
    assert root.find("testsuite").get("skipped") == "1"
    assert root.find(".//property").get("value") == "main"
    assert root.find(".//failure").get("message") == "slower ?by 30%"
    with pytest.raises(ValueError):
        junit.render([junit.GateCase("d", "flaky", "")], "suite")


def test_junit_needs_the_gate(tmp_path):
    a, b = synth_files(tmp_path)
    r = osmeter("compare", a, b, "--junit", tmp_path / "x.xml", db=tmp_path / "db.sqlite")
    assert r.returncode == 2 and "--fail-on-slower" in r.stderr
    assert not (tmp_path / "x.xml").exists()


def test_schema_version_written_as_1_0_is_read_as_the_schema_says(tmp_path):
    """The schema's "const": 1 accepts 1.0 (JSON numbers); so does the importer."""
    doc = exchange.run_to_document(make_run("rv", "v", seed=5))
    text = json.dumps(doc).replace('"schema_version": 1,', '"schema_version": 1.0,')
    assert '"schema_version": 1.0' in text
    jsonschema.validate(json.loads(text), SCHEMA)
    (tmp_path / "v.json").write_text(text)
    osmeter("import", tmp_path / "v.json", db=tmp_path / "db.sqlite", check=0)
    (tmp_path / "w.json").write_text(text.replace('"schema_version": 1.0,',
                                                  '"schema_version": 1.5,'))
    r = osmeter("import", tmp_path / "w.json", db=tmp_path / "db.sqlite", check=2)
    assert "unsupported schema_version 1.5" in r.stderr


# ---- sharing safely -------------------------------------------------------------------------

def test_redact_leaves_out_what_identifies_the_machine_in_every_format(tmp_path):
    run = make_run("rr", "on-buildhost7", seed=4)
    run.sysinfo.update(hostname="buildhost7.corp.example",
                       kernel={"name": "Linux", "release": "6.1.0",
                               "cmdline": "root=UUID=1234 ip=10.20.30.40 secret=hunter2"},
                       nic={"mac": "52:54:00:12:34:56", "addr6": "fe80::5054:ff:fe12:3456"},
                       variant={"dir": "/home/alice/bench", "peer": "192.168.7.9:7000",
                                "filesystem": {"fs_type": "nfs", "device": "nas1:/export",
                                               "mount_options": "addr=192.168.7.9"}},
                       owner="mail alice@example.org")
    run.command = "osmeter run --dir /home/alice/bench --peer 192.168.7.9:7000"
    run.environment.update(busy_before=[{"pid": 7, "command": "firefox", "cpu_share": 0.9}],
                           warnings=["busy before the run: firefox (pid 7, 90% CPU)"])
    run.results[0].notes["directory"] = "/home/alice/bench/osmeter-fs.x"
    src = tmp_path / "run.json"
    exchange.write_run_file(run, src)
    secrets = ["buildhost7", "hunter2", "10.20.30.40", "52:54:00:12:34:56", "fe80::",
               "alice", "192.168.7.9", "nas1", "firefox"]
    for fmt in formats():
        r = osmeter("export", src, "--format", fmt, "--redact", db=tmp_path / "db.sqlite")
        if r.returncode == 2 and "nothing to export" in r.stderr:
            continue
        assert r.returncode == 0, r.stderr
        assert not [s for s in secrets if s in r.stdout], (fmt, r.stdout[:500])
        assert "--redact left out run.sysinfo.hostname" in r.stderr
    doc = json.loads(osmeter("export", src, "--redact", db=tmp_path / "db.sqlite",
                             check=0).stdout)
    jsonschema.validate(doc, SCHEMA)
    red = doc["run"]["sysinfo"]["redacted"]
    assert "run.sysinfo.kernel.cmdline" in red["removed"]
    assert "run.sysinfo.variant.filesystem.device" in red["removed"]
    assert red["replaced"]["user names"] >= 3 and red["replaced"]["IP addresses"] >= 2
    assert doc["run"]["sysinfo"]["cpu"] == run.sysinfo["cpu"]       # what comparing needs
    assert doc["run"]["sysinfo"]["kernel"]["release"] == "6.1.0"
    assert "127.0.0.1" in redact.Redactor(set(), set()).text("peer 127.0.0.1")   # loopback stays
    shared = tmp_path / "shared.json"
    shared.write_text(json.dumps(doc))
    osmeter("import", shared, db=tmp_path / "db.sqlite", check=0)
    assert Store(tmp_path / "db.sqlite").load_run("rr").sysinfo["redacted"] == red
