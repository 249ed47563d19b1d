"""The five studies against real runs: every study's suite at its smoke size, every
published number accounted for, each study laid out in the paper's order (text, JSON and
HTML in headless Chromium).

The suites run once for the module (about half a minute); the published data is
osmeter/data/seed-results.toml, the mapping osmeter/studies/.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from osmeter.analysis import matching
from osmeter.data import references as refs
from osmeter.analysis import compare
from osmeter import studies
from osmeter.studies import view as sv
from osmeter.data.store import Store
from clirun import osmeter

try:
    from cdp import Browser, find_chromium
except ImportError:                 # pragma: no cover
    Browser = find_chromium = None

CHROMIUM = find_chromium() if find_chromium else None


@pytest.fixture(scope="module")
def study_runs(tmp_path_factory):
    """{study id: the stored run of its suite at smoke size} in a private store."""
    db = tmp_path_factory.mktemp("studies") / "runs.sqlite"
    for sid in studies.IDS:
        osmeter("run", "--suite", sid, "--smoke", "--runs", "1", "--label", sid + "-smoke",
                "--quiet", db=db, check=0, timeout=600)
    store = Store(str(db))
    runs = {sid: store.load_run(sid + "-smoke") for sid in studies.IDS}
    store.close()
    return db, runs


# ---- every published number ----------------------------------------------------------------

def test_every_published_number_is_set_beside_ours_or_listed_with_its_reason():
    kinds = {refs.RefValue: "compared", refs.Derived: "compared", refs.GraphRef: "compared",
             refs.NotComparable: "not comparable"}
    unaccounted, both = [], []
    for p, items in studies.coverage():
        how = {kinds[type(i)] for i in items}
        if not how:
            unaccounted.append(p.key)
        elif len(how) > 1:
            both.append(p.key)
    assert not unaccounted, "published numbers neither mapped nor listed:\n" + "\n".join(
        unaccounted)
    assert not both, "both compared and called not comparable:\n" + "\n".join(both)
    counts = {k: sum(1 for _, items in studies.coverage() for i in items if isinstance(i, k))
              for k in kinds}
    # The data file's whole content: hundreds of numbers, most of them set beside ours.
    assert counts[refs.RefValue] > 300 and counts[refs.GraphRef] > 40
    for rule in studies.not_comparable():
        assert len(rule.reason) > 20, rule


def test_a_new_number_in_the_data_file_is_caught(monkeypatch):
    data = json.loads(json.dumps(refs.load()))
    data["stated"].append({"report": "laibaker1996", "section": "6.1 Memory Read",
                           "bench": "mem.read", "quantity": "a number nobody mapped yet",
                           "value": 42, "unit": "megabytes/second"})
    data["table"][1]["rows"].append({"label": "DS5000 Ultrix 4.0", "values": [20, 0.4],
                                     "raw": ["20", "0.4"]})
    monkeypatch.setattr(refs, "load", lambda: data)
    refs.published_numbers.cache_clear()
    try:
        missing = sorted(p.key for p, items in studies.coverage() if not items)
    finally:
        refs.published_numbers.cache_clear()
    # The new table row's time is mapped by its column (a new system of Table 2); its
    # printed MIPS-relative speed is recomputed for ours; the new prose number is neither.
    assert missing == ["laibaker1996 | 6.1 Memory Read | a number nobody mapped yet | "]


# ---- each suite finds its rows ---------------------------------------------------------------

@pytest.mark.parametrize("sid", studies.IDS)
def test_every_reference_of_a_benchmark_that_ran_finds_its_row(study_runs, sid):
    _, runs = study_runs
    run = runs[sid]
    ran = {r.bench for r in run.results if r.status == "ok"}
    assert ran, "the %s suite measured nothing" % sid
    wrong = []
    for ref in studies.references():
        if ref.bench not in ran:
            continue
        m = matching.measured(run, ref)
        if m.value is not None:
            continue
        # What may stay empty after a smoke run on a local disk: remote configurations
        # (no network file system here) and the L2 plateau of a 2-point memory curve.
        fine = m.why == "not here" and ref.remote is True or \
            m.why == "not found" and ".plateau." in ref.metric
        if m.why == "not measured" or not fine:
            wrong.append("%s %s %s -> %s: %s" % (ref.study, ref.source, ref.system, m.why,
                                                m.detail))
    assert not wrong, "\n".join(wrong)
    # ... and the references output never calls a benchmark that ran "not measured".
    text = osmeter("compare", sid + "-smoke", "--references", db=study_runs[0], check=0).stdout
    line = next((l for l in text.splitlines() if l.startswith("not measured here")), "")
    assert not [b for b in ran if b in line.split(": ", 1)[-1].split(", ")], line


def test_tables_6_and_7_get_our_rows(study_runs):
    _, runs = study_runs
    rows = studies.against([runs["o90"]])
    t6 = [r for r in rows if r.ref.source == "Table 6"]
    assert t6 and all(r.ours[0] is not None and r.ref.x == 16384 for r in t6)
    local = [r for r in rows if r.ref.source == "Table 7" and r.ref.remote is False]
    assert local and all(r.ours[0] is not None for r in local)
    remote_rows = [r for r in rows if r.ref.source == "Table 7" and r.ref.remote is True]
    assert remote_rows and all(r.ours[0] is None and r.why[0] == "not here"
                               for r in remote_rows)


# ---- the study views ----------------------------------------------------------------------------

@pytest.mark.parametrize("sid", studies.IDS)
def test_study_view_as_text_and_json(study_runs, sid):
    db, runs = study_runs
    view = studies.build(sid, compare.compare([runs[sid]]))
    text = osmeter("compare", sid + "-smoke", "--study", sid, db=db, check=0).stdout
    flat = " ".join(text.split())       # long lines are wrapped to the terminal's width
    for sec in view.sections:
        assert " ".join(sec.title.split()) in flat
    assert "Conclusions, with today's verdict" in text
    for c in view.conclusions:
        assert c.verdict in (sv.HOLDS, sv.DOES_NOT_HOLD, sv.BORDERLINE, sv.NOT_JUDGED,
                             sv.NOT_MEASURED) or c.verdict.startswith("behaves like ")
        # A conclusion whose benchmarks ran is judged, or says why it cannot be.
        assert c.evidence
    d = json.loads(osmeter("compare", sid + "-smoke", "--study", sid, "--json", db=db,
                           check=0).stdout)
    assert d[0]["study"] == sid and len(d[0]["sections"]) == len(view.sections)
    md = osmeter("compare", sid + "-smoke", "--study", sid, "--md", db=db, check=0).stdout
    assert md.startswith("# ") and "| " in md


def test_study_csv_is_refused_with_one_line(study_runs):
    db, _ = study_runs
    r = osmeter("compare", "o90-smoke", "--study", "o90", "--csv", db=db, check=2)
    assert r.stderr.strip().splitlines() == ["osmeter: error: --study has no CSV form (use "
                                             "the text, --md or --json)"]


def test_o90_derived_rows_are_recomputed(study_runs):
    _, runs = study_runs
    run = runs["o90"]
    view = studies.build("o90", compare.compare([run]))
    t2 = next(s for s in view.sections if getattr(s, "id", "") == "Table 2")
    ours = next(r for r in t2.rows if r.kind == "ours")
    getpid_us, mrel = ours.cells
    cpu = compare.cpu_speed(run)
    # (T_sun3 / T_ours) / (MIPS_ours / MIPS_sun3), with cpu.integer as MIPS.
    assert mrel == pytest.approx((108 / getpid_us) / (cpu / 1.8))
    t5 = next(s for s in view.sections if getattr(s, "id", "") == "Table 5")
    cached, uncached, bpi = next(r for r in t5.rows if r.kind == "ours").cells
    assert bpi == pytest.approx(uncached / cpu)


# ---- in a browser ----------------------------------------------------------------------------

@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y "
                                             "chromium)")
def test_every_study_view_renders_in_chromium(study_runs, tmp_path):
    db, runs = study_runs
    out = tmp_path / "studies.html"
    args = ["report", *[sid + "-smoke" for sid in studies.IDS], "-o", out, "--references"]
    for sid in studies.IDS:
        args += ["--study", sid]
    osmeter(*args, db=db, check=0)
    cmp = compare.compare(list(runs.values()))
    views = [studies.build(sid, cmp) for sid in studies.IDS]
    with Browser(CHROMIUM) as b:
        b.open(out.as_uri(), 1366, 900)
        assert b.errors() == []
        for v in views:
            tables = [s for s in v.sections if hasattr(s, "rows")]
            figures = [s for s in v.sections if not hasattr(s, "rows")]
            sel = "#study-%s ~ h3.study-table" % v.id
            got = b.evaluate("Array.from(document.querySelectorAll('h3[id^=\"study-%s-\"]'))"
                             ".map(h => h.className)" % v.id)
            assert got.count("study-table") == len(tables), (v.id, sel)
            assert got.count("study-figure") == len(figures), v.id
            # Every figure with a curve of ours is drawn, with a non-zero size.
            drawn = [f for f in figures if f.series]
            sizes = b.evaluate("Array.from(document.querySelectorAll('figure[id^=\"fig-%s_\"] "
                               "svg.chart')).map(s => s.getBoundingClientRect().width)" % v.id)
            assert len(sizes) == len(drawn) and all(w > 200 for w in sizes), (v.id, sizes)
            verdicts = b.evaluate("document.querySelectorAll('#study-%s ~ div table."
                                  "conclusions').length" % v.id)
            assert verdicts >= 1
        assert b.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert not os.path.exists(b.profile)


def test_report_study_needs_a_known_id(study_runs, tmp_path):
    db, _ = study_runs
    r = osmeter("report", "o90-smoke", "--study", "x99", "-o", tmp_path / "r.html", db=db)
    assert r.returncode == 2 and "invalid choice" in r.stderr
    assert not (tmp_path / "r.html").exists()


def test_smoke_runs_are_said_to_be_smoke_against_the_references(study_runs):
    db, _ = study_runs
    text = osmeter("compare", "mg05-smoke", "--references", db=db, check=0).stdout
    assert "smoke runs: their sizes are not the studies'" in text
    assert "Not comparable:" in text and "Curve verdicts" in text


def test_views_of_a_run_without_the_suite_say_what_to_run(study_runs):
    _, runs = study_runs
    empty = replace(runs["mg05"], results=[r for r in runs["mg05"].results
                                           if not r.bench.startswith(("proc.", "scale."))])
    view = studies.build("mg05", compare.compare([empty]))
    static = view.conclusions[0]
    assert static.verdict == "not measured" and "osmeter run --suite mg05" in static.evidence


# ---- units -----------------------------------------------------------------------------------

def test_a_cache_level_is_found_in_a_plateau_that_spans_it():
    spans = matching._spans_level
    assert spans("bandwidth.plateau.L1-L2", "bandwidth.plateau.L2")
    assert spans("bandwidth.plateau.L1-L3#2", "bandwidth.plateau.L2")
    assert not spans("bandwidth.plateau.L3", "bandwidth.plateau.L2")
    assert not spans("latency.plateau.L1-L2", "bandwidth.plateau.L2")


def test_where_a_result_ran():
    from osmeter.analysis import remote
    from osmeter.data.model import Result, Run
    local = Result("fs.crtdel", "sequence", "ms", "lower", "sweep", notes={"fs_type": "ext4"})
    fuse = Result("mab.remote", "total", "s", "lower", "point", notes={"fs_type": "fuse"},
                  params={"dir": "/mnt/far"})
    plain = Result("syscall.getpid", "latency", "ns", "lower", "point")
    run = Run("r", None, "2026-01-01T00:00:00")
    assert remote.where(run, local) == "local" and remote.where(run, fuse) == "remote"
    assert remote.where(run, plain) is None
    # What fsinfo saw of the --dir beats the core's coarse type name.
    run.sysinfo = {"variant": {"dir": "/mnt/far", "filesystem": {"fs_type": "fuse.gvfsd-fuse",
                                                                 "remote": False}}}
    assert remote.where(run, fuse) == "local"
