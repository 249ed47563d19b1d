"""The catalogue checks itself.

The core's registry (`osmeter-core list`) is the single source of truth for benchmark
ids, metrics, units and the suites a benchmark belongs to.  Every place on the Python
side or in the data files that names them again is checked against it here, so that a
typo fails a test instead of silently dropping a benchmark from a suite, a reference
number from a comparison or a family's analysis from a run.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from osmeter.analysis import compare
from osmeter.data import references
from osmeter import studies
from osmeter.running import suitefile, user_command
from osmeter.running.catalog import (DEFAULT_SUITE, MINUTE, PRESETS, STUDY_SUITES, SUITES, TIMING_PARAMS,
                                     Catalog, CatalogError)
from osmeter.commands import serve
from osmeter.analysis.families import mem, ub

REPO = Path(__file__).resolve().parent.parent

# Dotted names in the code and docs that look like benchmark ids but are not, and why.
NOT_IDS = {
    "cpu.model": "a system-description key (compare.py flattens sysinfo)",
    "app.start.firefox": "Camacho's Firefox start-up; docs/applications.md says why osmeter "
                         "does not run it",
    "net.inet.udp.maxdgram": "a BSD and macOS sysctl (the UDP send space), named in README",
}


@pytest.fixture(scope="module")
def catalog():
    return Catalog()


def id_like(text: str, catalog: Catalog) -> list[str]:
    """Tokens in text that start with a benchmark family ('ctx.', 'mem.', ...), not part
    of a longer dotted or path name, and not a file name (mem.c, ub.py)."""
    families = sorted({b.split(".")[0] for b in catalog.by_id}, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w./-])((?:%s)\.[\w.*?\[\]+-]*[\w*\]])" % "|".join(families))
    return [t for t in pattern.findall(text)
            if not re.search(r"\.(c|h|py|md|toml|sh|json)$", t)]


def unknown(token: str, catalog: Catalog, params_too: bool = False) -> bool:
    """Whether token names nothing: not an id, glob or family prefix that `osmeter run`
    accepts, not a user command's name (cmd.NAME), not a placeholder (ub.X) and not one
    of NOT_IDS; with params_too, ID.KEY of a declared parameter (--param) is fine too."""
    if token in NOT_IDS or token.startswith("cmd.") or token.split(".")[-1].isupper():
        return False
    if token in seed_ids():   # the data file's own ids (seed-experiments.md), mapped in studies/
        return False
    try:
        catalog.select([token])
        return False
    except CatalogError:
        pass
    bench, _, key = token.rpartition(".")
    return not (params_too and bench in catalog.by_id and catalog.declares(bench, key))


def seed_ids() -> set[str]:
    """The benchmark ids the published data uses (some are not osmeter's: lat.ctx)."""
    data = references.load()
    return {e["bench"] for kind in ("table", "stated", "graph", "missing_table")
            for e in data[kind] if e.get("bench")} | \
        {row["bench"] for t in data["table"] for row in t["rows"] if row.get("bench")}


def string_constants(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def metric(catalog: Catalog, bench: str, name: str) -> dict:
    assert bench in catalog.by_id, "%s is not a benchmark of the core" % bench
    declared = [m["name"] for m in catalog.by_id[bench]["metrics"]]
    assert name in declared, "%s has no metric %r (it has %s)" % (bench, name, declared)
    return catalog.metric(bench, name)


# ---- suites ---------------------------------------------------------------------------------

def test_every_suite_named_in_the_core_is_known_and_every_known_suite_is_used(catalog):
    used = set()
    for b in catalog.benches:
        for s in b["suites"]:
            assert s in SUITES, "%s: suite %r in its C table is not in catalog.SUITES (%s)" \
                % (b["id"], s, ", ".join(SUITES))
            used.add(s)
    # "studies" is the union of the five study suites (catalog.STUDY_SUITES) and "minute"
    # a list in catalog.py: the core's tables name neither.
    assert used | {"studies", "minute"} == set(SUITES), \
        "suites no benchmark belongs to: %s" % (set(SUITES) - used - {"studies", "minute"})
    assert set(catalog.suite("studies")) == {b["id"] for b in catalog.benches
                                            if set(b["suites"]) & set(STUDY_SUITES)}
    assert DEFAULT_SUITE in SUITES
    for name, (_, preset) in SUITES.items():
        assert preset in PRESETS, (name, preset)


def test_the_minute_suite_is_part_of_the_quick_suite_and_fits_its_minute(catalog):
    """Its rows compare with a quick run's (same benchmarks, same sizes), and the core's
    declared times at 5 repetitions stay within the minute."""
    minute = catalog.suite("minute")
    assert sorted(minute) == sorted(MINUTE), set(MINUTE) - set(minute)
    assert set(minute) <= set(catalog.suite("quick"))
    assert SUITES["minute"][1] == SUITES["quick"][1] == "quick"
    declared = 5 * sum(catalog.estimates(b)["quick"] for b in minute)
    assert declared <= 55, "%.1f s declared for 5 repetitions" % declared


def test_the_suites_the_docs_list_are_the_suites(catalog):
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for listed in re.findall(r"--suite ((?:\w+\|)+\w+)", path.read_text(encoding="utf-8")):
            assert set(listed.split("|")) == set(SUITES), (path.name, listed)


# ---- ids named anywhere ------------------------------------------------------------------------

@pytest.mark.parametrize("tree", ["osmeter", "bench"])
def test_every_id_named_in_the_python_code_exists(catalog, tree):
    bad = []
    for path in sorted((REPO / tree).rglob("*.py")):
        for line, text in string_constants(path):
            bad += ["%s:%d: %s" % (path.relative_to(REPO), line, t)
                    for t in id_like(text, catalog) if unknown(t, catalog)]
    assert not bad, "names that are not benchmarks of the core:\n" + "\n".join(bad)


def test_every_id_named_in_the_docs_and_examples_exists(catalog):
    # examples/: what people read and run (its runs and commands' outputs are osmeter's)
    paths = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
             *sorted(p for p in (REPO / "examples").rglob("*") if p.suffix in (".md", ".toml"))]
    bad = []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            bad += ["%s:%d: %s" % (path.relative_to(REPO), n, t)
                    for t in id_like(line, catalog) if unknown(t, catalog, params_too=True)]
    assert not bad, "names that are not benchmarks of the core:\n" + "\n".join(bad)


def test_the_example_suite_file_loads(catalog):
    sf = suitefile.load(str(REPO / "examples" / "suite.toml"), catalog)
    assert all(item.bench in catalog.by_id for item in sf.items)


def test_not_ids_are_really_not_ids(catalog):
    for name in NOT_IDS:
        assert name not in catalog.by_id, "%s is a benchmark now: drop it from NOT_IDS" % name


def test_every_benchmark_is_in_its_familys_file_or_listed_in_the_guide(catalog):
    """A newcomer finds a benchmark in core/bench/<family>.c, or the guide says where."""
    files: dict[str, set] = {}
    for path in sorted((REPO / "core").rglob("*.c")):
        for name in re.findall(r'"([\w.]+)"', path.read_text(encoding="utf-8")):
            if name in catalog.by_id:
                files.setdefault(name, set()).add(path.relative_to(REPO).as_posix())
    elsewhere = {}
    for bench in catalog.by_id:
        assert len(files.get(bench, ())) == 1, "%s is named in %s" % (bench, files.get(bench))
        (path,) = files[bench]
        if Path(path).stem != bench.split(".")[0]:
            elsewhere[bench] = path
    guide = (REPO / "docs" / "adding-a-benchmark.md").read_text(encoding="utf-8")
    listed = {}
    for path, names in re.findall(r"^\* `(core/[\w/]+\.c)`: (.*)$", guide, re.M):
        for pattern in re.findall(r"`([\w.*]+)`", names):
            matches = catalog.select([pattern])
            assert all(elsewhere.get(b) == path for b in matches), (pattern, path)
            listed.update(dict.fromkeys(matches, path))
    missing = {b: p for b, p in elsewhere.items() if b not in listed}
    assert not missing, "not in the guide's list of ids in files of another name: %s" % missing


# ---- the published numbers (osmeter/data/seed-results.toml, mapped in osmeter/studies/) --------

def test_every_reference_number_maps_to_a_metric_it_can_be_set_against(catalog):
    for ref in studies.references():
        where = "%s %s %s: %s %s" % (ref.study, ref.source, ref.system, ref.bench, ref.metric)
        assert ref.bench in catalog.by_id, where
        if ".plateau." in ref.metric:      # derived by analysis/families/mem.py from the sweep
            assert ref.bench.startswith("mem."), where
            m = metric(catalog, ref.bench, ref.metric.split(".plateau.")[0])
        elif ref.metric == "index":        # derived by osmeter/analysis/families/ub.py
            m = dict(metric(catalog, ref.bench, ub.LPS_METRIC), unit="index", better="higher")
        else:
            m = metric(catalog, ref.bench, ref.metric)
        assert references.convert(1.0, m["unit"], ref.unit) is not None, \
            "%s: %s cannot be converted to %s" % (where, m["unit"], ref.unit)
        inverse = m["unit"] in references.RATES and references.UNITS[ref.unit][0] == "time"
        assert (m["better"] == ref.better) != inverse, where
        if ref.x is not None:
            assert m["shape"] == "sweep", where


def test_every_curve_verdict_names_a_curve_of_ours(catalog):
    for g in studies.graph_refs():
        m = metric(catalog, g.bench, g.metric)
        assert m["shape"] in ("sweep", "scatter"), (g.figure, g.bench)


def test_every_mapping_entry_matches_the_data():
    """An entry of a study's mapping that matches nothing in the data is a typo."""
    from osmeter.studies import cc06, lb96, o90
    made = studies.references()
    for table, _, bench, metric_name, x, *_ in o90.COLUMNS:
        assert any(r.study == "O90" and r.source == table and r.bench == bench
                   and r.metric == metric_name and r.x == x for r in made), (table, bench)
    stated = {s["quantity"] for s in references.load()["stated"]
              if s["report"] == lb96.REPORT}
    assert set(lb96.PROSE) <= stated and set(lb96.DERIVED) <= stated
    rows = {(t, row["bench"], row.get("instances")) for t in (cc06.T1, cc06.T2, cc06.T3, cc06.T4)
            for row in references.table(cc06.REPORT, t)["rows"]}
    assert set(cc06.ROWS) <= rows, set(cc06.ROWS) - rows
    figures = {g["figure"] for g in references.load()["graph"]}
    for m in studies.modules():
        for name in getattr(m, "FIGURES", {}):
            assert name in figures, (m.ID, name)


def test_every_not_comparable_rule_matches_a_published_number():
    numbers = references.published_numbers()
    for rule in studies.not_comparable():
        assert any(rule.matches(p) for p in numbers), "matches nothing: %s" % rule


# ---- constants that repeat the core's knowledge ----------------------------------------------

def test_compare_names_the_cpu_stand_in_and_the_timing_parameters(catalog):
    m = metric(catalog, compare.CPU_BENCH, compare.CPU_METRIC)
    assert m["unit"] == "Mops/s"            # the unit the report prints next to it
    assert set(compare.TIMING_PARAMS) == set(TIMING_PARAMS)
    for name in TIMING_PARAMS:
        assert any(catalog.declares(b, name) for b in catalog.by_id), name


def test_every_parameter_has_a_value_per_preset(catalog):
    for b in catalog.benches:
        for p in b["params"]:
            assert all(k in p for k in PRESETS), (b["id"], p["name"])


def test_unixbench_baselines_are_the_ub_items(catalog):
    assert set(ub.BASELINES) == set(catalog.select(["ub"]))
    for bench in ub.BASELINES:
        assert metric(catalog, bench, ub.LPS_METRIC)["unit"] == "lps"


def test_memory_analysis_names_real_buffer_sweeps(catalog):
    sweeps = {b["id"] for b in catalog.benches if b["id"].startswith("mem.")
              and any(m["shape"] == "sweep" and m["x_name"] == mem.BUFFER_X
                      for m in b["metrics"])}
    assert sweeps, "no mem.* sweep over %s: the plateau analysis would never run" % mem.BUFFER_X
    assert mem.TWO_BUFFERS <= sweeps, mem.TWO_BUFFERS - sweeps


def test_user_commands_pass_only_parameters_cmd_run_declares(catalog):
    assert user_command.CORE_BENCH in catalog.by_id
    item = user_command.command_item("t", "true", shell=True, setup="true", cleanup="true",
                                     warmup=1, samples=1, timeout=5, output="/dev/null")
    for key in list(item.params) + ["cold_cache"]:
        assert catalog.declares(user_command.CORE_BENCH, key), key


def test_serve_uses_the_cores_default_port():
    defines = [m for h in sorted((REPO / "core").rglob("*.h"))
               for m in re.findall(r"#define\s+OM_PEER_DEFAULT_PORT\s+(\d+)", h.read_text())]
    assert defines == [str(serve.DEFAULT_PORT)]
