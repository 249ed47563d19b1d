"""The studies as a reviewer reads them (issue 32): every mapping says what it is, every
verdict its rule and margin, and a verdict that would change between two runs of the
same machine reads "borderline".

Runs are drawn from tests/data/study-run.json.gz (one real quick-suite run of a test
machine, reduced by tests/make_study_fixture.py) with the spread its repetitions had,
so nothing here runs the core.
"""
from __future__ import annotations

import gzip
import json
import math
import random
import statistics
from pathlib import Path

import pytest

from osmeter.analysis import compare, curves
from osmeter import studies
from osmeter.data import references as refs
from osmeter.data.model import Result, Run, Sample
from osmeter.report import study as study_report
from osmeter.stats import summarize
from osmeter.studies import common, view as sv

FIXTURE = Path(__file__).resolve().parent / "data" / "study-run.json.gz"


def _fixture() -> dict:
    with gzip.open(FIXTURE, "rt") as f:
        return json.load(f)


def drawn_run(seed: int, name: str = None, scale: dict = None) -> Run:
    """A run of the fixture's machine: each repetition drawn from the fixture's
    repetitions (resampled, with the spread between them); scatters' curves re-classified
    from their drawn points.  scale = {(bench, metric): factor} moves a result."""
    rng = random.Random(seed)
    data = _fixture()
    results = []
    for d in data["results"]:
        f = (scale or {}).get((d["bench"], d["metric"]), 1.0)
        r = Result(d["bench"], d["metric"], d["unit"], d["better"], d["shape"], d["x"],
                   d["x_name"], d["params"], d["status"], d["reason"],
                   warnings=list(d["warnings"]), extra=json.loads(json.dumps(d["extra"])))
        reps = d["reps"]
        if d["shape"] == "scatter" and reps:
            for rep in range(len(reps)):
                pts = rng.choice(reps)
                r.samples += [Sample(rep, x, y * f * math.exp(rng.gauss(0.0, 0.03)))
                              for x, y in pts]
            r.summary = summarize(r.samples)
            c = curves.classify([(s.x, s.value) for s in r.samples], detect_bands=False)
            r.extra["curve"] = {"all": c}
        elif reps:
            spread = statistics.pstdev(reps) / statistics.mean(reps) if len(reps) > 1 \
                and statistics.mean(reps) else 0.0
            for rep in range(len(reps)):
                v = rng.choice(reps) * f * math.exp(rng.gauss(0.0, spread / 2))
                r.samples.append(Sample(rep, d["x"], v))
            r.summary = summarize(r.samples)
        else:
            r.summary = dict(d["summary"] or {})
            if r.summary.get("median") is not None:
                jitter = rng.gauss(1.0, 0.05) * f
                for k in ("median", "ci_low", "ci_high"):
                    if r.summary.get(k) is not None:
                        r.summary[k] *= jitter
        results.append(r)
    return Run(id=name or "drawn-%d" % seed, label=name or "drawn-%d" % seed,
               started="2026-11-25T22:%02d:00Z" % (seed % 60), status="complete",
               suite="quick", smoke=False, osmeter_version="0.1.0", sysinfo=data["sysinfo"],
               environment={"load": [1.0, 1.0], "warnings": []}, results=results)


def views(*runs):
    cmp = compare.compare(list(runs))
    return {sid: studies.build(sid, cmp) for sid in studies.IDS}


def conclusion(view, words: str):
    return next(c for c in view.conclusions if words in c.claim)


# ---- D1, D3: per switch, said so; the size a number was set against --------------------------

def test_lai_baker_and_mcgarry_set_the_context_switch_per_switch_and_say_so():
    lb, mg = (studies.get(s) for s in ("lb96", "mg05"))
    for ref in [r for r in lb.references() + mg.references() if r.bench == "ctx.pipe_pingpong"
                and "without the pipe" not in r.quantity]:
        assert ref.metric == "per_switch", ref.quantity       # the old: round_trip
        assert "per switch" in ref.mapping_words()
    v = views(drawn_run(1))
    ctx = next(s for s in v["lb96"].sections if getattr(s, "id", "") == "§5")
    assert any("per switch" in n for n in ctx.notes)
    t1 = next(s for s in v["mg05"].sections if getattr(s, "id", "") == "Table 1")
    assert any("per switch" in n for n in t1.notes)
    # the value beside McGarry's is half the round trip
    run = drawn_run(1)
    rt = next(r for r in run.results if r.bench == "ctx.pipe_pingpong" and r.metric == "round_trip")
    ps = next(r for r in run.results if r.bench == "ctx.pipe_pingpong" and r.metric == "per_switch")
    row = next(r for r in t1.rows if "ontext" in r.label)
    assert row.cells[-1] == pytest.approx(ps.median / 1e3)
    assert row.cells[-1] != pytest.approx(rt.median / 1e3)


def test_crtdel_row_shows_the_size_it_was_set_against():
    v = views(drawn_run(1))
    t = next(s for s in v["lb96"].sections if getattr(s, "id", "") == "§7.2")
    assert "10 KB" in t.rows[0].label
    assert any("set against 10 KB" in n for n in t.notes)


# ---- D2: a stand-in is not like for like ------------------------------------------------------

def test_ousterhout_mab_is_related_and_mips_a_stand_in():
    o90 = studies.get("o90")
    mab = [r for r in o90.references() if r.bench == "mab.local"]
    assert len(mab) >= 24 and all(r.mapping == "related" for r in mab)   # the old: like for like
    assert all("SPUR" in r.note for r in mab)
    mips = [r for r in o90.references() if r.bench == "cpu.integer"]
    assert mips and all(r.mapping == "stand-in" and r.stands_for for r in mips)
    v = views(drawn_run(1))
    t8 = next(s for s in v["o90"].sections if getattr(s, "id", "") == "Table 8")
    assert any("related, not like for like" in n for n in t8.notes)
    t7 = next(s for s in v["o90"].sections if getattr(s, "id", "") == "Table 7")
    assert any("related" in n for n in t7.notes)


# ---- D5: a verdict on the edge reads borderline, with its threshold and margin ---------------

def test_against_reads_borderline_within_the_interval_and_states_the_margin():
    assert sv.against(1.2, 1.1, 1.3, 1.0, True)[0] is False
    assert sv.against(1.2, 0.9, 1.3, 1.0, True)[0] == sv.BORDERLINE
    assert sv.against(1.2, None, None, 1.0, True, slack=10)[0] == sv.BORDERLINE
    assert sv.against(0.05, None, None, 1.0, True, slack=10)[0] is True
    o, m = sv.against(8.1, 3.0, 20.0, 10.0, False, "×")
    assert o == sv.BORDERLINE and "19.0% below" in m and "10" in m


def test_bytes_per_instruction_on_the_stand_in_is_borderline_not_reproduced():
    # 1.2 bytes per integer operation against a threshold of 1.0 on a stand-in right to
    # within 3×: the old verdict was "not reproduced".
    run = drawn_run(1)
    cpu = next(r for r in run.results if r.bench == "cpu.integer")
    bcopy = next(r for r in run.results if r.bench == "mem.bcopy" and r.metric == "uncached")
    f = 1.2 * cpu.median / bcopy.median
    c = conclusion(views(drawn_run(1, scale={("mem.bcopy", "uncached"): f}))["o90"],
                   "Memory bandwidth")
    assert c.verdict == sv.BORDERLINE
    assert "1.0" in c.rule and "within 3×" in c.rule and "above" in c.margin


def test_every_judged_conclusion_states_its_rule():
    for sid, v in views(drawn_run(1)).items():
        for c in v.conclusions:
            if c.verdict != sv.NOT_MEASURED:
                assert c.rule, (sid, c.claim)


# ---- D7: contrasts, classes, steps --------------------------------------------------------

def test_two_system_contrast_names_the_side_it_behaves_like():
    v = views(drawn_run(1))
    c = conclusion(v["mg05"], "Process creation and termination")
    assert c.verdict.startswith("behaves like") or c.verdict == sv.BORDERLINE
    assert c.verdict != sv.HOLDS
    t = conclusion(v["mg05"], "Thread creation")
    assert t.verdict != sv.HOLDS


def test_grows_linearly_does_not_accept_constant():
    ctx = sv.Ctx(compare.compare([drawn_run(1)]))
    assert common._class_check({"class": curves.CONSTANT, "growth": 1.0},
                               {curves.LINEAR}) is False
    c = conclusion(studies.build("mg05", ctx.cmp), "Socket creation and bind grow linearly")
    socket = ctx.curve(0, "scale.socket", "socket")
    if socket["class"] == curves.CONSTANT and 0.8 < socket["growth"] < 1.25:
        assert c.verdict == sv.DOES_NOT_HOLD                # the old: reproduced


def test_read_steps_need_l1_and_l2_apart():
    run = drawn_run(1)
    # Join L1 and L2 into one plateau, as the plateau-finder does where it cannot tell them
    for r in run.results:
        if r.bench == "mem.read" and r.metric == "bandwidth.plateau.L2":
            r.metric = "bandwidth.plateau.L1-L2"
    run.results = [r for r in run.results if not (r.bench == "mem.read" and
                                                   r.metric == "bandwidth.plateau.L1")]
    c = conclusion(views(run)["lb96"], "Read bandwidth falls in steps")
    assert c.verdict == sv.DOES_NOT_HOLD and "L1 and L2 are not two plateaus" in c.evidence


# ---- D11, D4 -----------------------------------------------------------------------------------

def test_camacho_system_call_contrast_is_not_judged_on_one_machine():
    c = conclusion(views(drawn_run(1))["cc06"], "system call is an order of magnitude")
    assert c.verdict == sv.NOT_JUDGED and "nearer" in c.evidence


def test_verdicts_on_disturbed_results_say_so():
    run = drawn_run(1)
    for r in run.results:
        if r.bench.startswith("proc.") or r.bench == "thread.create":
            r.warnings = [{"kind": "disturbed", "reason": "cpu", "text": "other processes on CPU 1"}]
    v = views(run)["mg05"]
    for words in ("Statically linked", "Thread creation"):
        c = conclusion(v, words)
        if c.verdict != sv.NOT_MEASURED:
            assert "flagged disturbed" in c.evidence, words


# ---- D8: the caption's interval level ------------------------------------------------------

def test_figure_caption_states_the_results_interval_level():
    v = views(drawn_run(1))["lb96"]
    fig = next(s for s in v.sections if getattr(s, "series", None) and s.kind == "sweep")
    levels = {lv for s in fig.series for lv in s.levels}
    words = study_report.band_words(fig)
    assert "95%" not in words or levels == {0.95}
    assert all("%g%%" % (100 * lv) in words for lv in levels)


# ---- D6, weak reasons, §10, printed precision -------------------------------------------------

def test_von_leitner_competing_download_is_in_the_view_and_says_it_is_not_rate_limited():
    v = views(drawn_run(1))["vl03"]
    t = next(s for s in v.sections if getattr(s, "id", "") == "competing download")
    assert any("NOT rate-limited" in n for n in t.notes)
    assert [r.label for r in t.rows] == ["first reader alone", "first reader while a second "
                                         "reads", "second reader"]
    assert all(isinstance(r.cells[1], float) for r in t.rows)     # our run's MB/s
    c = conclusion(v, "as soon as a second one competes")
    assert c.verdict != sv.NOT_MEASURED and c.rule and c.margin


def test_lai_baker_ethernet_is_judged_and_nfs_mab_has_a_section():
    v = views(drawn_run(1))["lb96"]
    c = conclusion(v, "100 Mbit/s Ethernet")
    assert c.verdict == sv.DOES_NOT_HOLD and "100" in c.rule     # loopback moves Gbit/s
    nfs = next(s for s in v.sections if getattr(s, "id", "") == "§10")
    assert any("local file system" in n or "did not run" in n for n in nfs.notes)
    lb = studies.get("lb96")
    assert not any("Ethernet speed" in (n.label or "") for n in lb.NOT_COMPARABLE)


def test_published_numbers_appear_as_printed():
    text = study_report.text(views(drawn_run(1))["cc06"])
    assert "544.7" in text and " 545 " not in text
    assert study_report._cell(refs.Printed(0.9)) == "0.9"
    assert study_report._cell(refs.Printed(55)) == "55"


# ---- two runs of the same machine ----------------------------------------------------------

def test_a_verdict_that_differs_between_two_runs_of_one_machine_is_borderline():
    """Six pairs of runs drawn from one machine: a conclusion whose verdict differs
    between the two runs of a pair reads 'borderline' in one of them -- never a flip from
    one decided verdict to another (reproduced / not reproduced / behaves like X)."""
    flips, differ = [], 0
    for k in range(6):
        a, b = views(drawn_run(2 * k + 1)), views(drawn_run(2 * k + 2))
        for sid in studies.IDS:
            for ca, cb in zip(a[sid].conclusions, b[sid].conclusions):
                if ca.verdict != cb.verdict:
                    differ += 1
                    if sv.BORDERLINE not in (ca.verdict, cb.verdict) and \
                            sv.NOT_JUDGED not in (ca.verdict, cb.verdict):
                        flips.append((sid, ca.claim[:60], ca.verdict, cb.verdict))
    assert not flips, flips


# ---- one report of all five papers ----------------------------------------------------------

@pytest.fixture(scope="module")
def two_stored_runs(tmp_path_factory):
    from osmeter.data.store import Store
    db = tmp_path_factory.mktemp("replication") / "runs.sqlite"
    store = Store(str(db))
    for k in (1, 2):
        store.save_run(drawn_run(k, "machine-%d" % k))
    store.close()
    return db


def test_replicate_without_running_writes_one_report_and_prints_its_summary(two_stored_runs,
                                                                             tmp_path):
    from clirun import osmeter
    out = tmp_path / "replication.html"
    r = osmeter("replicate", "--no-run", "--with", "machine-1", "--with", "machine-2",
                "-o", out, db=two_stored_runs, check=0)
    assert r.stdout.startswith("What still holds after 20–36 years (machine-1, machine-2)")
    page = out.read_text()
    assert page.index('id="summary"') < page.index('id="study-o90"')
    for sid in studies.IDS:
        assert 'id="study-%s"' % sid in page
    for v in views(drawn_run(1, "machine-1"), drawn_run(2, "machine-2")).values():
        for c in v.conclusions:
            assert c.claim[:40] in r.stdout.replace("\n", " ") or c.claim[:40] in page
    # the same from `osmeter report --study all`
    out2 = tmp_path / "report.html"
    r2 = osmeter("report", "machine-1", "machine-2", "--study", "all", "-o", out2,
                 db=two_stored_runs, check=0)
    assert r2.stdout == r.stdout
    # nothing stored: the store still holds the two runs only
    listed = osmeter("runs", db=two_stored_runs, check=0).stdout.splitlines()
    assert sum(1 for line in listed if line.startswith("machine-")) == 2


def test_replicate_rejects_bad_input_in_one_line(two_stored_runs, tmp_path):
    from clirun import osmeter
    r = osmeter("replicate", "--no-run", "--with", "no-such-run", "-o", tmp_path / "x.html",
                db=two_stored_runs)
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.html").exists()
    r = osmeter("replicate", "--runs", "0", db=two_stored_runs)
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1


try:
    from cdp import Browser, find_chromium
    CHROMIUM = find_chromium()
except ImportError:                 # pragma: no cover
    CHROMIUM = None


@pytest.mark.skipif(not CHROMIUM, reason="no chromium")
def test_replication_report_in_chromium(two_stored_runs, tmp_path):
    from clirun import osmeter
    out = tmp_path / "replication.html"
    osmeter("replicate", "--no-run", "--with", "machine-1", "--with", "machine-2", "-o", out,
            db=two_stored_runs, check=0)
    with Browser(CHROMIUM) as b:
        for width in (1366, 390):
            b.open(out.as_uri(), width=width)
            assert b.errors() == []
            assert b.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert b.evaluate("document.querySelectorAll('#summary ~ div table.conclusions')"
                          ".length") >= 5


def test_replicate_runs_the_studies_suite_stores_it_and_writes_the_report(tmp_path):
    """The whole path at smoke size (about 20 s): one run of the 'studies' suite."""
    from clirun import osmeter
    db, out = tmp_path / "runs.sqlite", tmp_path / "replication.html"
    r = osmeter("replicate", "--smoke", "--runs", "1", "--quiet", "--label", "today", "-o", out,
                db=db, check=0, timeout=900)
    assert "What still holds after 20–36 years (today)" in r.stdout
    page = out.read_text()
    assert all('id="study-%s"' % sid in page for sid in studies.IDS)
    listed = osmeter("runs", db=db, check=0).stdout
    assert "today" in listed
    from osmeter.data.store import Store
    store = Store(str(db))
    run = store.load_run("today")
    store.close()
    from osmeter.running.catalog import Catalog
    assert run.suite == "studies"
    assert {r.bench for r in run.results} == set(Catalog().suite("studies"))


def test_lai_baker_restated_peaks_are_recomputed_not_set_aside():
    lb = studies.get("lb96")
    assert not any((n.label or "").startswith(("time per word", "equivalent total"))
                   for n in lb.NOT_COMPARABLE)
    run = drawn_run(1)
    t = next(s for s in views(run)["lb96"].sections if getattr(s, "id", "") == "§6 restated")
    peak = max(r.median for r in run.results if r.bench == "mem.read"
               and r.metric == "bandwidth")
    assert t.rows[0].cells[0].text == "13" and t.rows[0].cells[1] == pytest.approx(4e3 / peak)


# ---- issue 41: the docs list every conclusion the studies judge ----------------------------

def test_docs_list_every_conclusion_of_each_paper():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "replication.md").read_text()
    listed = doc[doc.index("## The conclusions, paper by paper"):]
    sections = {}
    for part in listed.split("\n### ")[1:]:
        sid = part.split("(", 1)[1].split(")", 1)[0]
        sections[sid] = [line[2:] for line in part.splitlines() if line.startswith("* ")]
    v = views(drawn_run(1))
    assert sorted(sections) == sorted(studies.IDS)
    for sid, view in v.items():
        claims = [c.claim for c in view.conclusions]
        assert len(sections[sid]) == len(claims), sid
        for claim, line in zip(claims, sections[sid]):
            assert line.startswith(claim), (sid, claim)


def test_replicate_systems_judges_runs_against_each_other(two_stored_runs, tmp_path):
    from clirun import osmeter
    out = tmp_path / "systems.html"
    r = osmeter("replicate", "--systems", "machine-1,machine-2", "-o", out,
                db=two_stored_runs, check=0)
    page = out.read_text()
    # both kernels are Linux: the first run plays Linux, the other roles go by order
    assert "as FreeBSD 2.0.5R (by order)" in page and "as NetBSD 2.0 (by order)" in page
    assert "no longer holds" not in page and ">reproduced<" not in page
    listed = osmeter("runs", db=two_stored_runs, check=0).stdout.splitlines()
    assert sum(1 for line in listed if line.startswith("machine-")) == 2   # nothing ran
    r = osmeter("replicate", "--systems", "machine-1", db=two_stored_runs)
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1


def test_one_system_leaves_the_cross_system_claims_undecided_and_says_what_they_need():
    v = views(drawn_run(1))
    for sid, words in (("mg05", "surpassed FreeBSD"), ("lb96", "No one system dominates"),
                       ("cc06", "Overall: Linux 2.6")):
        c = conclusion(v[sid], words)
        assert c.verdict == sv.NOT_JUDGED and "--systems" in c.evidence


def _with_reps(run, n):
    for r in run.results:
        r.samples = [s for s in r.samples if s.rep < n]
        if r.samples:
            r.summary = summarize(r.samples)
    return run


def test_the_report_warns_at_its_top_below_five_repetitions():
    from osmeter.report import replication
    for n, warned in ((3, True), (5, False)):
        run = _with_reps(drawn_run(1), n)
        cmp = compare.compare([run])
        vs = [studies.build(sid, cmp) for sid in studies.IDS]
        lines = replication.summary_lines(vs, cmp.runs)
        assert any(line.startswith("Warning: these verdicts rest on as few as 3")
                   for line in lines[:2]) == warned
        page, _ = replication.render(vs, cmp.runs)
        assert (page.index("Warning:") < page.index('id="summary"')) if warned \
            else "Warning:" not in page
        judged = [c for v in vs for c in v.conclusions if c.rests_on]
        assert judged and all(("%d repetition" % n) in c.basis for c in judged)
        assert all(("below the 5" in c.basis) == warned for c in judged
                   if c.verdict != sv.NOT_MEASURED)


def test_pairings_say_related_where_their_note_says_so_and_units_are_right():
    cc, mg, lb = (studies.get(s) for s in ("cc06", "mg05", "lb96"))
    assert all(r.mapping == "related" for r in cc.references() if r.bench == "ub.ctx")
    assert all(r.mapping == "related" for r in mg.references()
               if r.bench == "ctx.pipe_pingpong")
    assert all(r.mapping == "related" and "non-prefetching" in r.note
               for r in lb.references() if r.bench == "mem.memcpy")
    xmms = [r for r in cc.references() if r.bench == "app.cpu.audio_play"]
    assert xmms and all("instances" in r.size_words() and "bytes" not in r.size_words()
                        for r in xmms)
    run = drawn_run(1)
    for r in run.results:
        if r.bench == "thread.pingpong.e1" and r.metric == "create":
            r.extra["once_per_repetition_s"] = 1e-4
            r.extra["too_short"] = "too short to time alone: about 107 µs"
    t3 = next(s for s in views(run)["mg05"].sections if getattr(s, "id", "") == "Table 3")
    text = study_report.text(views(run)["mg05"])
    assert "954 660" in text and "3 139 256" in text
    row = next(r for r in t3.rows if r.label == "1 thread creation time")
    assert isinstance(row.cells[-1], str) and common.SHORT_MARK in row.cells[-1]
    assert any(n.startswith(common.SHORT_MARK) and "too short" in n for n in t3.notes)


def test_every_conclusion_on_disturbed_results_says_so():
    run = drawn_run(1)
    for r in run.results:
        r.warnings = [{"kind": "disturbed", "reason": "cpu", "text": "other processes"}]
    said = 0
    for sid, v in views(run).items():
        for c in v.conclusions:
            if [r for r in c.rests_on if r is not None]:
                assert "flagged disturbed" in c.evidence, (sid, c.claim)
                said += 1
            elif c.verdict not in (sv.NOT_MEASURED, sv.NOT_JUDGED):
                raise AssertionError("judged on nothing: %s %s" % (sid, c.claim))
    assert said >= 20
