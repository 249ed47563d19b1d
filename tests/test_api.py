"""The declared public API (osmeter/api.py): what it names exists and works, and the
scripts in bench/ reach osmeter through it, but for the internals each one measures
(named below, with why)."""
from __future__ import annotations

import ast
from pathlib import Path

from osmeter import api
from synth import make_run

ROOT = Path(__file__).resolve().parent.parent

# A bench script may import an internal module only when that module is what it
# measures, calibrates or replays (its numbers are the module's constants or claims).
INTERNAL = {
    "aa_gate.py": {"osmeter.analysis.monitor"},                # others' CPU time meanwhile
    "disturbed_runs.py": {"osmeter.analysis.flags",            # the flags on real runs,
                          "osmeter.analysis.monitor"},         # others' CPU time
    "fleet_outliers.py": {"osmeter.analysis.fleet"},           # the outlier cutoffs
    "fs_compare.py": {"osmeter.system.fsinfo", "osmeter.analysis.remote"},
    "fs_crosscheck.py": {"osmeter.system.fsinfo"},
    "history_claims.py": {"osmeter.analysis.history"},         # the change-point claims
    "import_timing.py": {"osmeter.data.exchange"},             # times the reader's steps
    "lmbench_crosscheck.py": {"osmeter.running.coreproc", "osmeter.analysis.monitor",
                              "osmeter.stats"},                # drives the core as the runner
    "mem_crosscheck.py": {"osmeter.analysis.families.mem"},    # the cache-level analysis
    "precision.py": {"osmeter.analysis.flags", "osmeter.analysis.monitor",
                     "osmeter.analysis.precision",             # the kinds' spreads
                     "osmeter.analysis.families.mem"},
    "scale_timing.py": {"osmeter.analysis.curves"},            # times the curve fits
    "stats_claims.py": {"osmeter.analysis.adaptive",           # the stopping rules
                        "osmeter.analysis.noise",
                        "osmeter.stats.significance"},         # the repetitions promised
    "suite_timing.py": {"osmeter.running.eta", "osmeter.running.plan"},    # the ETA replayed
}


def osmeter_imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("osmeter")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("osmeter"):
            for a in node.names:        # a module imported from its package, or a name
                sub = ROOT.joinpath(*node.module.split("."), a.name)
                is_module = sub.with_suffix(".py").exists() or (sub / "__init__.py").exists()
                out.add(node.module + "." + a.name if is_module else node.module)
    return out


def test_every_declared_name_exists():
    assert len(set(api.__all__)) == len(api.__all__)
    missing = [n for n in api.__all__ if not hasattr(api, n)]
    assert missing == []


def test_bench_scripts_use_the_api_and_only_the_internals_they_measure():
    found = {}
    for path in sorted((ROOT / "bench").glob("*.py")):
        beyond = osmeter_imports(path) - {"osmeter.api"} - INTERNAL.get(path.name, set())
        if beyond:
            found[path.name] = sorted(beyond)
    assert found == {}, "use osmeter.api (add the name there if it is missing)"
    stale = {n: sorted(m - osmeter_imports(ROOT / "bench" / n)) for n, m in INTERNAL.items()
             if m - osmeter_imports(ROOT / "bench" / n)}
    assert stale == {}, "INTERNAL names what a script no longer imports"


def test_compare_gate_and_words_through_the_api():
    a = make_run("ra", "A", seed=1, noise=0.002)
    b = make_run("rb", "B", speed=1 / 1.15, seed=2, noise=0.002)     # 15% slower
    cmp = api.compare([a, b])
    outcome = api.gate(cmp, 5)
    assert outcome.outcome == "fail" and outcome.exit_code == 1
    assert "Regression gate" in api.comparison_text(cmp, gate=outcome, width=100)
    assert api.gate_text(outcome, cmp)[0].startswith("Regression gate")
    assert '"regression_gate"' in api.comparison_text(cmp, gate=outcome, form="json")
    assert api.comparison_text(cmp, form="csv").startswith("category")


def test_measure_a_plan_and_store_it(tmp_path):
    p = api.plan(["syscall.getpid"], smoke=True)
    with api.open_store(tmp_path / "s.sqlite") as store:
        [run] = api.measure(p, repetitions=2, label="api", store=store)
        again = store.load_run("api")
    assert run.id == again.id and run.smoke
    assert any(r.bench == "syscall.getpid" and r.status == "ok" for r in again.results)
    api.write_run_file(again, tmp_path / "r.json")
    assert api.read_run_file(tmp_path / "r.json").id == run.id
