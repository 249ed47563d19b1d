"""Reading across a fleet (osmeter/analysis/fleet.py, report/fleet.py, report/fleet_table.py):
the outlier claim by simulation with fixed seeds and by example, grouping, the terminal
table, and the fleet report of 24 runs in headless Chromium."""
import math
import os
import random
import re

import pytest

import synth
from cdp import Browser, find_chromium
from clirun import osmeter
from osmeter.analysis import fleet
from osmeter.report import fleet as fleet_report
from osmeter.report import fleet_table
from osmeter.data.store import Store

SLOW, FAST = 5, 17      # the hosts made slower and faster than the others


def fleet_runs(n=24, smoke=False):
    return [synth.make_run("r%02d" % i, label="nov:web%02d" % i, seed=i + 1,
                           speed=0.7 if i == SLOW else 1.3 if i == FAST else 1.0,
                           host="web%02d" % i, smoke=smoke,
                           kernel="6.1.0-18-amd64" if i % 2 else "6.6.8-amd64",
                           cpu_model="EPYC 7763" if i < n // 2 else "Xeon 6338")
            for i in range(n)]


# ---- the claim: like hosts are named at most 5% of the time ---------------------------

@pytest.mark.parametrize("hosts, fleets", [(5, 8000), (9, 8000), (24, 8000), (60, 3000)])
def test_like_hosts_name_an_outlier_in_at_most_5_percent_of_fleets(hosts, fleets):
    rng = random.Random(2026 + hosts)     # not the seed the cutoffs were made with
    named = sum(bool(fleet.outliers_among([math.exp(rng.gauss(0.0, 0.05))
                                           for _ in range(hosts)]))
                for _ in range(fleets))
    assert named / fleets <= 0.05, named / fleets


def test_a_host_far_from_the_others_is_named():
    rng = random.Random(7)
    found = alone = 0
    for _ in range(500):
        values = [math.exp(rng.gauss(0.0, 0.02)) for _ in range(24)]
        values[3] *= 1.25
        named = fleet.outliers_among(values)
        found += 3 in named
        alone += named == [3]
    assert found / 500 >= 0.99 and alone / 500 >= 0.94    # another named: within the 5%


def test_a_difference_below_the_smallest_effect_is_not_named():
    values = [1.0 + 0.0001 * k for k in range(20)] + [1.015]   # z is huge, 1.5% is not
    assert fleet.outliers_among(values) == []
    assert fleet.outliers_among(values[:-1] + [1.05]) == [20]


def test_too_few_hosts_or_no_spread_name_nothing():
    assert fleet.cutoff_for(4) is None and fleet.outliers_among([1, 1, 1, 5]) == []
    assert fleet.outliers_among([1.0] * 10 + [2.0]) == []       # MAD 0: no scale
    assert fleet.cutoff_for(1001) is None
    assert fleet.cutoff_for(33) == max(fleet.OUTLIER_CUTOFF[30], fleet.OUTLIER_CUTOFF[35])


# ---- by example ---------------------------------------------------------------------------

def test_the_slow_and_the_fast_host_are_named_in_every_result():
    f = fleet.analyse(fleet_runs(), group_by="kernel")
    assert f.names[SLOW] == "nov:web05" and len(set(f.names)) == 24
    judged = [r for r in f.rows if r.cutoff is not None]
    assert judged and all(r.x is not None or r.bench != "mem.read" for r in judged)
    for row in judged:
        if row.bench == "cpu.integer":      # the synthetic CPU speed is the same for all
            assert row.outliers == []
            continue
        assert {v.run for v in row.outliers} == {SLOW, FAST}, row.label
        slow = next(v for v in row.values if v.run == SLOW)
        assert row.worse(slow)
    getpid = next(r for r in f.rows if r.bench == "syscall.getpid")
    assert [g for g, n, _ in getpid.groups] == ["6.1.0-18-amd64", "6.6.8-amd64"]
    assert sum(n for _, n, _ in getpid.groups) == 24
    assert any("scale.fork" in note for note in f.left_out)


def test_missing_results_are_listed_not_counted():
    runs = fleet_runs(10)
    runs[2].results = [r for r in runs[2].results if r.bench != "syscall.read"]
    runs[3].results[0].status, runs[3].results[0].reason = "skipped", "no such thing here"
    f = fleet.analyse(runs)
    first = next(r for r in f.rows if r.bench == runs[3].results[0].bench and
                 r.metric == runs[3].results[0].metric and r.x == runs[3].results[0].x)
    assert (3, "no such thing here") in first.missing and len(first.values) == 9
    read = next(r for r in f.rows if r.bench == "syscall.read")
    assert len(read.values) == 9


def test_a_fleet_refuses_smoke_mixed_with_real_and_an_unknown_key():
    runs = fleet_runs(6)
    runs[0].smoke = True
    with pytest.raises(fleet.FleetError, match="smoke runs mixed with real"):
        fleet.analyse(runs)
    with pytest.raises(fleet.FleetError, match="no run records 'nonsense'"):
        fleet.analyse(fleet_runs(6), group_by="nonsense")
    assert fleet.analyse(fleet_runs(6), group_by="libc.version").groups == ["2.36"] * 6


def test_terminal_table_has_a_row_per_run_and_fits_the_width():
    f = fleet.analyse(fleet_runs(), group_by="cpu")
    text = fleet_table.terminal(f, width=100)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100
    for i in range(24):
        assert sum(1 for line in lines if line.startswith("nov:web%02d " % i)) >= 2
    slow_rows = [line for line in lines if line.startswith("nov:web05 ")]
    assert all("!" in line for line in slow_rows if "cpu.integer" not in line)
    assert any(line.startswith("median of") and "Xeon 6338" in line for line in lines)
    assert "nov:web05: worse in" in text and "nov:web17: better in" in text
    assert "at most 5% chance" in text


def test_fleet_command_and_report_select_a_fleet(tmp_path):
    db = tmp_path / "db.sqlite"
    with Store(db) as store:
        for run in fleet_runs():
            store.save_run(run)
    r = osmeter("fleet", "--where", "label=nov:*", "--by", "kernel", db=db, check=0,
                env={"COLUMNS": "120"})
    assert "nov:web05" in r.stdout and "median of" in r.stdout
    out = tmp_path / "fleet.html"
    r = osmeter("report", "--where", "host=web*", "-o", out, db=db, check=0)
    assert "fleet report of 24 runs" in r.stderr
    assert out.read_text().count('data-kind="fleet"') >= 7
    r = osmeter("report", "--where", "host=web0[0-2]", "--fleet", "-o", out, db=db, check=0)
    assert "fleet report of 3 runs" in r.stderr
    r = osmeter("fleet", "--where", "host=web*", "--by", "nonsense", db=db, check=2)
    assert r.stderr.count("\n") == 1 and "no run records 'nonsense'" in r.stderr
    r = osmeter("fleet", db=db, check=2)
    assert "select them with --where" in r.stderr


# ---- the fleet report of 24 runs in a real browser -------------------------------------------

@pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed "
                    "(apt-get install -y chromium)")
@pytest.mark.parametrize("group_by", [None, "cpu"])
def test_fleet_report_of_24_runs_in_chromium(tmp_path, group_by):
    runs = fleet_runs()
    f = fleet.analyse(runs, group_by=group_by)
    path = tmp_path / "fleet.html"
    figures = fleet_report.write(f, str(path), "fleet of 24")
    with Browser(find_chromium()) as b:
        b.open("file://%s" % path, width=1366, height=768)
        assert b.errors() == []
        plots = b.evaluate("""Array.from(document.querySelectorAll('svg[data-kind=fleet]'))
          .map(svg => {
            const r = svg.getBoundingClientRect();
            const runs = Array.from(svg.querySelectorAll('g.run')).map(g => {
              const t = g.querySelector('text.name').getBoundingClientRect();
              const d = g.querySelector('.dot').getBoundingClientRect();
              return [g.dataset.run, g.querySelector('text.name').textContent,
                      t.top, t.bottom, d.width, d.height];
            });
            return [r.width, r.height, runs];
          })""")
        widths = b.evaluate("[document.documentElement.scrollWidth, document.body.scrollWidth,"
                            " window.innerWidth]")
        b.screenshot(str(tmp_path / "shot.png"))
    assert len(plots) == len(figures) >= 7
    for width, height, marks in plots:
        assert width > 300 and height > 24 * 10
        # every run, once, named beside its own mark: 24 distinct names on 24 lines
        assert sorted(m[0] for m in marks) == sorted(r.id for r in runs)
        assert len({m[1] for m in marks}) == 24
        tops = sorted((m[2], m[3]) for m in marks)
        assert all(a[1] <= b[0] + 0.5 for a, b in zip(tops, tops[1:])), "labels overlap"
        assert all(m[4] > 0 and m[5] > 0 for m in marks)
    assert widths[0] <= widths[2] and widths[1] <= widths[2], widths
    page = path.read_text()
    assert page.count('class="dot outlier"') >= 2 * 6
    assert re.search(r"<b>nov:web05</b>: worse in", page)
    if os.environ.get("OSMETER_REPORT_SHOTS"):
        import shutil
        shutil.copy(tmp_path / "shot.png", os.path.join(os.environ["OSMETER_REPORT_SHOTS"],
                                                         "fleet-%s.png" % group_by))
