"""Comparison: the significance test, verdicts, indices, metadata diff, exports, the CLI,
and the reference data from the seed studies."""
import csv
import io
import json
import math
import random

import pytest

from osmeter import cli
from osmeter.analysis import compare, gate
from osmeter.data import exchange
from osmeter.data import references as refs
from osmeter import studies
from osmeter.stats import significance as sig
from osmeter.report import gate_words, tables
from osmeter.studies import o90
from synth import _result, make_run
from osmeter.data.model import Run


def run_with(run_id: str, label: str, reps_by_bench: dict, better: str = "lower") -> Run:
    """A run of point results, one sample per repetition: {bench: [value per rep]}."""
    return Run(id=run_id, label=label, started="2026-11-22T08:00:00Z", status="complete",
               suite="quick", results=[
                   _result(b, "latency", "ns", better, "point", [[v] for v in vals])
                   for b, vals in reps_by_bench.items()])


# ---- Mann-Whitney U ---------------------------------------------------------------------

def _brute_force_p(x, y, alternative):
    """The permutation p-value of the rank sum by listing every split of the values."""
    import itertools
    both = list(x) + list(y)
    ranks, _ = sig._ranks(both)
    observed = sum(ranks[:len(x)])
    sums = [sum(ranks[i] for i in pick)
            for pick in itertools.combinations(range(len(both)), len(x))]
    le = sum(1 for s in sums if s <= observed + 1e-9) / len(sums)
    ge = sum(1 for s in sums if s >= observed - 1e-9) / len(sums)
    return {"less": le, "greater": ge, "two-sided": min(1.0, 2 * min(le, ge))}[alternative]


def test_exact_tied_test_equals_brute_force_enumeration():
    rng = random.Random(11)
    checked = 0
    for _ in range(150):
        m, n = rng.randint(1, 7), rng.randint(1, 7)
        x = [rng.randint(0, 3) for _ in range(m)]       # coarse values: many ties
        y = [rng.randint(0, 4) for _ in range(n)]
        for alternative in ("less", "greater", "two-sided"):
            _, p = sig.mann_whitney_u(x, y, alternative)
            assert p == pytest.approx(_brute_force_p(x, y, alternative), abs=1e-12)
            checked += 1
    assert checked == 450


def test_normal_approximation_was_too_lenient_on_small_tied_samples(monkeypatch):
    # The finding: tied 6-vs-6 cases the normal approximation called
    # significant although the exact permutation test does not.
    rng = random.Random(4)
    cases = [([rng.randint(0, 3) for _ in range(6)], [rng.randint(1, 4) for _ in range(6)])
             for _ in range(400)]
    exact = [sig.mann_whitney_u(x, y)[1] for x, y in cases]
    for (x, y), p in zip(cases[:100], exact):
        assert p == pytest.approx(_brute_force_p(x, y, "two-sided"))
    monkeypatch.setattr(sig, "EXACT_TIES_LIMIT", 0)
    approx = [sig.mann_whitney_u(x, y)[1] for x, y in cases]
    assert sum(a < 0.05 <= e for a, e in zip(approx, exact)) > 0


def test_mann_whitney_exact_matches_the_counting_argument():
    # Complete separation: only 2 of C(m+n, m) arrangements are as extreme.
    u, p = sig.mann_whitney_u([1, 2, 3], [4, 5, 6])
    assert u == 0 and p == pytest.approx(2 / math.comb(6, 3))
    u, p = sig.mann_whitney_u(list(range(10, 20)), list(range(10)))
    assert u == 100 and p == pytest.approx(2 / math.comb(20, 10))
    # One-sided: x larger.
    _, p = sig.mann_whitney_u([4, 5, 6], [1, 2, 3], "greater")
    assert p == pytest.approx(1 / 20)
    _, p = sig.mann_whitney_u([4, 5, 6], [1, 2, 3], "less")
    assert p == 1.0


def test_mann_whitney_textbook_value():
    # U of the first sample = 3 for these two samples (hand count: 3 pairs where x > y).
    x, y = [1.1, 2.2, 3.3, 7.7], [4.4, 5.5, 6.6, 8.8, 9.9]
    u, p = sig.mann_whitney_u(x, y)
    assert u == 3
    counts = sig._u_counts(4, 5)
    assert sum(counts) == math.comb(9, 4)
    assert p == pytest.approx(2 * sum(counts[:4]) / sum(counts))


def test_normal_approximation_agrees_with_exact(monkeypatch):
    rng = random.Random(7)
    x = [rng.gauss(0, 1) for _ in range(25)]
    y = [rng.gauss(0.6, 1) for _ in range(25)]
    _, exact = sig.mann_whitney_u(x, y)
    monkeypatch.setattr(sig, "EXACT_LIMIT", 0)
    _, approx = sig.mann_whitney_u(x, y)
    assert 0 < exact < 0.2
    assert approx == pytest.approx(exact, rel=0.1)


def test_ties_use_the_exact_conditional_distribution():
    _, p = sig.mann_whitney_u([1, 1, 2, 2, 3], [1, 2, 2, 3, 3])
    assert 0.3 < p <= 1.0
    _, p = sig.mann_whitney_u([5, 5, 5], [5, 5, 5])
    assert p == 1.0
    # Coarse timer, 6 vs 6, separated but for one tie: as extreme as it gets here.
    x, y = [1, 1, 1, 1, 1, 2], [2, 3, 3, 3, 3, 3]
    _, exact = sig.mann_whitney_u(x, y, "less")
    assert exact == pytest.approx(_brute_force_p(x, y, "less"))
    # Only the five 1's with either of the two tied 2's have so low a rank sum: 2 of the
    # C(12, 6) = 924 splits.  (The normal approximation says 0.0016.)
    assert exact == pytest.approx(2 / 924)


def test_false_positive_rate_is_about_alpha_when_there_is_no_difference():
    rng = random.Random(1)
    trials, hits = 400, 0
    for _ in range(trials):
        a = [rng.lognormvariate(0, 0.1) for _ in range(8)]
        b = [rng.lognormvariate(0, 0.1) for _ in range(8)]
        hits += sig.compare_values(a, b, "lower", min_effect=0).significant
    assert 0.01 < hits / trials < 0.09, hits


def test_known_difference_is_found_in_the_right_direction():
    rng = random.Random(2)
    base = [100 * rng.gauss(1, 0.02) for _ in range(5)]
    slower = [110 * rng.gauss(1, 0.02) for _ in range(5)]
    v = sig.compare_values(base, slower, "lower")
    assert v.significant and v.word == "worse" and v.ratio < 0.95 and v.p < 0.05
    v = sig.compare_values(base, slower, "higher")          # bandwidth: more is better
    assert v.significant and v.word == "better" and v.ratio > 1.05


def test_too_few_repetitions_is_said_not_hidden():
    v = sig.compare_values([100], [200], "lower")
    assert not v.significant and v.word == "too few repetitions"
    assert "one repetition on each side" in v.detail


def test_five_against_five_separated_repetitions_get_a_verdict():
    # The rank test's floor (p >= 0.0079 with 5 vs 5) made this 'no clear difference'
    # whatever the data; Welch's t on the logs decides it.
    base = [100.0, 101.0, 99.5, 100.5, 100.2]
    v = sig.compare_values(base, [x * 1.5 for x in base], "lower")
    assert v.significant and v.word == "worse" and v.p < 1e-6
    assert v.ratio == pytest.approx(1 / 1.5) and v.ratio_low < v.ratio < v.ratio_high


def test_small_consistent_difference_below_min_effect_is_the_same_within_the_margin():
    base = [100.0, 100.1, 100.2, 100.3, 100.4]
    other = [v * 1.005 for v in base]                         # 0.5% slower, always
    v = sig.compare_values(base, [o + 0.45 for o in other], "lower")
    assert v.word == "same" and v.detail == "within +-5%"
    assert not v.significant


def test_a_noisy_row_cannot_tell_and_says_how_many_repetitions_would():
    rng = random.Random(5)
    base = [100 * math.exp(rng.gauss(0, 0.15)) for _ in range(5)]
    other = [100 * math.exp(rng.gauss(0, 0.15)) for _ in range(5)]
    a, b = run_with("ra", "A", {"syscall.getpid": base}), run_with("rb", "B", {
        "syscall.getpid": other})
    v = compare.compare([a, b]).rows[0].cells[1].verdict
    assert v.word == "cannot tell" and "noisier than" in v.detail
    assert v.repetitions_needed > 5


def test_zeros_are_compared_by_rank_and_said_in_words():
    v = sig.compare_values([0, 0, 18.4, 8.2, 0], [0, 0, 0, 1.0, 0], "lower")
    assert v.ratio is None and v.method == sig.RANK_METHOD and v.word == "cannot tell"
    assert v.detail == "0 vs 0: no ratio"
    v = sig.compare_values([0, 0, 0], [0, 0, 0], "lower")
    assert v.word == "same" and "every repetition 0" in v.detail


def test_regression_gate_threshold():
    rng = random.Random(3)
    base = [100 * rng.gauss(1, 0.01) for _ in range(6)]
    slower = [115 * rng.gauss(1, 0.01) for _ in range(6)]
    v = sig.compare_values(base, slower, "lower")
    s = sig.slowdown(v, 5, 0.05)
    assert v.word == "worse" and s.p_not_slower > 0.5 and 12 < s.estimate_pct < 18
    s = sig.slowdown(v, 25, 0.05)
    assert s.p_not_slower <= 0.05 and s.high_pct < 25
    assert s.low_pct < s.estimate_pct < s.high_pct and s.level == pytest.approx(0.9)
    # For a rate the same slowdown is a lower value.
    v = sig.compare_values(base, [100 * 100 / x for x in slower], "higher")
    assert v.word == "worse" and 12 < sig.slowdown(v, 5, 0.05).estimate_pct < 18
    same = sig.slowdown(sig.compare_values(base, base, "lower"), 0, 0.05)
    assert same.p_not_slower > 0.05 and same.estimate_pct == 0


def test_geometric_mean():
    assert sig.geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    assert sig.geometric_mean([]) is None


# ---- comparisons of runs ------------------------------------------------------------------

def test_twice_as_fast_run_has_index_two_and_wins_everywhere():
    a = make_run("ra", "A", seed=1, noise=0.002)
    b = make_run("rb", "B", speed=2.0, seed=2, noise=0.002, cpu_rate=16000.0)
    cmp = compare.compare([a, b])
    assert cmp.overall[0] == pytest.approx(1.0)
    assert cmp.overall[1] == pytest.approx(2.0, rel=0.02)
    for cat in ("syscall", "ctx", "fs", "mem"):
        assert cmp.index[cat][1] == pytest.approx(2.0, rel=0.02)
    # A sweep counts once in its category, whatever its number of points.
    assert cmp.index_counts["mem"] == 1 and cmp.index_counts["fs"] == 2
    # cpu.integer is the yardstick, not part of the index.
    assert "cpu" not in cmp.index
    for row in cmp.rows:
        if row.shape == "point" and row.bench != "cpu.integer":
            assert row.winner == 1 and row.loser == 0, row.label
            assert row.cells[1].verdict.word == "better"
            # Twice as fast on a CPU twice as fast: the OS kept pace.
            assert row.cells[1].mips_relative == pytest.approx(1.0, rel=0.03)


def test_equal_runs_have_no_winner():
    a = make_run("ra", "A", seed=1)
    b = make_run("rb", "B", seed=2)
    cmp = compare.compare([a, b])
    significant = [r for r in cmp.rows if r.winner is not None or r.loser is not None]
    # Two draws from one distribution: a false verdict is possible but rare.
    assert len(significant) <= 2, [r.label for r in significant]
    assert cmp.overall[1] == pytest.approx(1.0, abs=0.03)


def test_three_runs_winner_and_loser_need_significance():
    a = make_run("ra", "A", seed=1, noise=0.002)
    b = make_run("rb", "B", speed=1.5, seed=2, noise=0.002)
    c = make_run("rc", "C", speed=0.5, seed=3, noise=0.002)
    cmp = compare.compare([a, b, c], baseline=0)
    row = next(r for r in cmp.rows if r.bench == "syscall.getpid")
    assert (row.winner, row.loser) == (1, 2)
    assert row.cells[2].ratio == pytest.approx(0.5, rel=0.02)


def test_baseline_choice_orients_ratios():
    a = make_run("ra", "A", seed=1, noise=0.002)
    b = make_run("rb", "B", speed=2.0, seed=2, noise=0.002)
    cmp = compare.compare([a, b], baseline=1)
    row = next(r for r in cmp.rows if r.bench == "syscall.getpid")
    assert row.cells[1].ratio == 1.0 and row.cells[0].ratio == pytest.approx(0.5, rel=0.02)
    mem = next(r for r in cmp.rows if r.bench == "mem.read")     # higher is better
    assert mem.cells[0].ratio == pytest.approx(0.5, rel=0.02)


def test_regressions_listed_only_beyond_threshold():
    a = make_run("ra", "A", seed=1, noise=0.002)
    b = make_run("rb", "B", speed=1 / 1.15, seed=2, noise=0.002)     # 15% slower
    g = gate.evaluate(compare.compare([a, b]), 5)
    assert g.outcome == "fail" and g.exit_code == gate.EXIT_FAIL
    assert g.having("fail")
    assert all(10 < r.slowdown_pct < 20 for r in g.having("fail"))
    g = gate.evaluate(compare.compare([a, b]), 30)
    assert g.outcome == "pass" and not g.having("fail") and g.exit_code == 0


def test_the_gate_is_data_and_every_presenter_says_it_in_the_same_words():
    """analysis/gate.py holds numbers and outcomes; report/gate_words.py writes them, once,
    for the terminal, Markdown, JSON, JUnit and the stderr summary alike."""
    from osmeter.formats import junit
    a = make_run("ra", "A", seed=1, noise=0.002)
    b = make_run("rb", "B", speed=1 / 1.15, seed=2, noise=0.002)     # 15% slower
    cmp = compare.compare([a, b])
    g = gate.evaluate(cmp, 5)
    assert not hasattr(cmp, "gate")                 # the comparison is left as it was
    assert not {"message", "note"} & set(gate.GateRow.__dataclass_fields__) \
        and "note" not in gate.Gate.__dataclass_fields__
    failed = g.having(gate.FAIL)
    assert failed
    said = [gate_words.row_message(r, 5) for r in failed]
    md = tables.markdown(cmp, gate=g)
    assert all(m in md for m in said) and gate_words.note(g) in md
    assert "Regression gate" in tables.terminal(cmp, gate=g)
    assert "Regression gate" not in tables.terminal(cmp) + tables.markdown(cmp)
    rows = json.loads(tables.json_text(cmp, gate=g))["regression_gate"]["rows"]
    assert [r["message"] for r in rows] == [gate_words.row_message(r, 5) for r in g.rows]
    cases = junit.cases_from_gate(g, "A")
    assert [c.message for c in cases] == [gate_words.row_message(r, 5) for r in g.rows]
    log = gate_words.log_lines(g)
    assert all(any(m in line for line in log) for m in said)
    assert log[-1].startswith("osmeter: gate FAIL at 5%")


def test_metadata_diff_shows_what_differs_and_skips_volatile_keys():
    a = make_run("ra", "A", seed=1, kernel="6.1.0")
    b = make_run("rb", "B", seed=2, kernel="6.6.0")
    b.sysinfo["libc"] = {"name": "musl", "version": "1.2.4"}
    diff, same = compare.metadata_diff([a, b])
    keys = dict(diff)
    assert keys["kernel.release"] == ["6.1.0", "6.6.0"]
    assert keys["libc.name"] == ["glibc", "musl"]
    assert "uptime_s" not in keys and "run.started" not in keys
    assert "cpu.model" not in keys and same > 5
    assert compare.flatten({"cpu": {"caches": [{"level": 1}, {"level": 2}]}, "x": [1, 2]}) == {
        "cpu.caches.0.level": "1", "cpu.caches.1.level": "2", "x": "1, 2"}


def test_smoke_runs_are_never_compared_with_real_ones():
    real = make_run("ra", "A", seed=1)
    smoke = make_run("rs", "S", seed=2, smoke=True)
    with pytest.raises(compare.CompareError, match="smoke"):
        compare.compare([real, smoke])
    compare.compare([smoke, make_run("rt", "T", seed=3, smoke=True)])   # smoke vs smoke: fine


def test_differing_parameters_are_flagged():
    a = make_run("ra", "A", seed=1)
    b = make_run("rb", "B", seed=2)
    next(r for r in b.results if r.bench == "syscall.getpid").params["size"] = "64"
    cmp = compare.compare([a, b])
    row = next(r for r in cmp.rows if r.bench == "syscall.getpid")
    assert any("size" in n for n in row.notes)


# ---- exports ------------------------------------------------------------------------------

@pytest.fixture
def three():
    cmp = compare.compare([make_run("ra", "A", seed=1), make_run("rb", "B", speed=1.3, seed=2),
                           make_run("rc", "C", seed=3)])
    return cmp


def test_terminal_export(three):
    text = tables.terminal(three, references=True, show_all=True)
    for cat in three.categories:
        assert "== %s ==" % cat in text
    assert "> 1 = better" in text and "Welch t" in text and "questions asked" in text
    assert "Indices" in text and "overall" in text
    assert "DECstation 3100" in text and "MIPS-relative" in text


def test_terminal_shows_what_a_reader_looks_for_by_default():
    """Rows with a verdict or a large difference; the rest counted; rows not run in one
    run collapsed into one line per category; every row with --all."""
    a = make_run("ra", "A", seed=1)
    b = make_run("rb", "B", seed=2)
    slow = next(r for r in b.results if r.bench == "syscall.read")
    for smp in slow.samples:
        smp.value *= 2.0                          # B's read is twice as slow
    slow.summary = compare.stats.summarize(slow.samples)
    b.results = [r for r in b.results if r.bench != "ctx.pipe_pingpong"]   # not run in B
    cmp = compare.compare([a, b])
    text = tables.terminal(cmp, width=100)
    read = [l for l in text.splitlines() if l.startswith("syscall.read")]
    assert len(read) == 1 and "×0.5" in read[0]
    assert not any(l.startswith("syscall.getpid ") for l in text.splitlines())
    assert "1 of 2 rows shown" in text
    assert "not run in B: ctx.pipe_pingpong" in text
    assert not any(l.startswith("ctx.pipe_pingpong") for l in text.splitlines())
    assert "No verdict and no difference of 20% or more in:" in text
    assert "Indices" in text
    every = tables.terminal(cmp, show_all=True, width=100)
    assert any(l.startswith("syscall.getpid ") for l in every.splitlines())
    assert any(l.startswith("ctx.pipe_pingpong") for l in every.splitlines())
    # The machine formats have every row whatever the terminal shows.
    assert "syscall.getpid" in tables.markdown(cmp) and "ctx.pipe_pingpong" in tables.csv_text(cmp)


def test_markdown_export(three):
    md = tables.markdown(three)
    assert md.startswith("# osmeter comparison")
    header = next(l for l in md.splitlines() if l.startswith("| benchmark"))
    sep = md.splitlines()[md.splitlines().index(header) + 1]
    assert sep.count("---") == header.count("|") - 1
    assert "## Indices" in md


def test_csv_export(three):
    rows = list(csv.DictReader(io.StringIO(tables.csv_text(three))))
    assert set(rows[0]) == set(tables.CSV_FIELDS)
    assert len(rows) == sum(1 for r in three.rows for c in r.cells if c is not None)
    getpid = [r for r in rows if r["bench"] == "syscall.getpid"]
    assert [r["baseline"] for r in getpid] == ["1", "0", "0"]
    assert float(getpid[1]["ratio"]) > 1.2 and getpid[1]["verdict"] == "better"
    assert getpid[1]["winner"] == "1"


def test_json_export(three):
    d = json.loads(tables.json_text(three, references=True, gate=gate.evaluate(three, 5)))
    assert d["format"] == "osmeter.comparison" and d["baseline"] == "ra"
    assert "Welch t" in d["test"] and d["verdicts"]["questions"] >= 1
    assert d["overall_index"][1] > 1.2
    assert len(d["rows"]) == len(three.rows)
    assert d["regression_gate"]["threshold_pct"] == 5
    assert d["regression_gate"]["outcome"] in ("pass", "fail", "undecided")
    o90 = [t for t in d["ousterhout_mips_relative"] if t["table"] == "Table 2"][0]
    assert len(o90["this_machine"]) == 3 and "cpu.integer" in o90["mips_stand_in"]


# ---- the command line ---------------------------------------------------------------------

def _files(tmp_path, *runs):
    paths = []
    for run in runs:
        p = tmp_path / ("%s.json" % run.id)
        exchange.write_run_file(run, p)
        paths.append(str(p))
    return paths


def test_cli_compare_formats_and_gate(tmp_path, capsys):
    a, b = _files(tmp_path, make_run("ra", "A", seed=1, noise=0.002),
                  make_run("rb", "B", speed=1 / 1.2, seed=2, noise=0.002))
    db = str(tmp_path / "db.sqlite")
    assert cli.main(["--db", db, "compare", a, b, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][1]["id"] == "rb"
    assert cli.main(["--db", db, "compare", a, b, "--csv", "-o", str(tmp_path / "c.csv")]) == 0
    assert (tmp_path / "c.csv").read_text().startswith("category,bench")
    # 20% slower: the gate at 10% fails and lists the slowdowns on stderr.
    assert cli.main(["--db", db, "compare", "--baseline", a, b, "--fail-on-slower", "10"]) == 1
    captured = capsys.readouterr()
    assert "regression: syscall.getpid" in captured.err and "SLOWER" in captured.out
    assert "gate FAIL" in captured.err
    assert cli.main(["--db", db, "compare", a, b, "--fail-on-slower", "40"]) == 0
    assert "gate PASS" in capsys.readouterr().err
    # Rows noisier than the threshold are listed, not gated: the gate passes unless
    # they are named (--gate-on: exit 3) or every row must be decided (exit 1).
    n1, n2 = _files(tmp_path, make_run("na", "NA", seed=3, noise=0.15),
                    make_run("nb", "NB", seed=4, noise=0.15))
    assert cli.main(["--db", db, "compare", n1, n2, "--fail-on-slower", "5"]) == 0
    captured = capsys.readouterr()
    assert "not gated: noisier than 5%" in captured.out and "gate PASS" in captured.err
    assert cli.main(["--db", db, "compare", n1, n2, "--fail-on-slower", "5",
                     "--gate-on", "syscall.*"]) == 3
    captured = capsys.readouterr()
    assert "undecided: syscall.getpid" in captured.err and "UNDECIDED" in captured.out
    assert "undecided: fs.openclose" not in captured.err
    assert cli.main(["--db", db, "compare", n1, n2, "--fail-on-slower", "5",
                     "--undecided-fails"]) == 1
    assert cli.main(["--db", db, "compare", a, b, "--undecided-fails"]) == 2
    assert "needs --fail-on-slower" in capsys.readouterr().err
    assert cli.main(["--db", db, "compare", a, b, "--gate-on", "x*"]) == 2
    # The gate as data, for CI tools: one row per result with outcome and numbers.
    assert cli.main(["--db", db, "compare", a, b, "--fail-on-slower", "10", "--json"]) == 1
    g = json.loads(capsys.readouterr().out)["regression_gate"]
    assert g["outcome"] == "fail" and g["exit_code"] == 1
    row = next(r for r in g["rows"] if r["bench"] == "syscall.getpid")
    assert row["outcome"] == "fail" and 15 < row["slowdown_pct"] < 25
    assert row["q_slower"] <= 0.05 and row["p_slower"] <= row["q_slower"]
    assert row["verdict"] == "worse" and row["repetitions"] == [5, 5]


def test_cli_compare_refuses_bad_input(tmp_path, capsys):
    a, s = _files(tmp_path, make_run("ra", "A", seed=1), make_run("rs", "S", seed=2, smoke=True))
    db = str(tmp_path / "db.sqlite")
    assert cli.main(["--db", db, "compare", a, s]) == 2
    assert "smoke" in capsys.readouterr().err
    assert cli.main(["--db", db, "compare", a]) == 2
    assert "two runs" in capsys.readouterr().err
    assert cli.main(["--db", db, "compare", a, "no-such-run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("osmeter: error:") and len(err.strip().splitlines()) == 1
    assert cli.main(["--db", db, "compare", a, a, "--alpha", "2"]) == 2
    # One run against the studies is fine.
    assert cli.main(["--db", db, "compare", a, "--references"]) == 0
    assert "Pentium" in capsys.readouterr().out


def test_cli_compare_from_the_store(tmp_path, capsys):
    from osmeter.data.store import Store
    db = str(tmp_path / "db.sqlite")
    store = Store(db)
    store.save_run(make_run("20261122-080000-aaaa", "before", seed=1))
    store.save_run(make_run("20261122-090000-bbbb", "after", seed=2))
    store.close()
    assert cli.main(["--db", db, "compare", "before", "after", "--md"]) == 0
    assert "| syscall.getpid" in capsys.readouterr().out


def test_real_aa_smoke_runs_give_the_gate_one_of_its_three_outcomes(tmp_path):
    """Two smoke runs of this machine, one after the other: the gate passes, says it
    cannot tell, or fails naming its rows, and its exit says which.  Which of the three
    depends on the machine (a VM's host can move one run and not the other, which the
    guest cannot see): how often A/A pairs fail is bench/aa_gate.py's count, not a test's
    claim (issue 44)."""
    from clirun import osmeter
    db = tmp_path / "aa.sqlite"
    for label in ("first", "second"):
        osmeter("run", "syscall.getpid", "syscall.getppid", "ctx.pipe_pingpong", "--smoke",
                "--runs", "3", "--label", label, "--quiet", db=db, check=0)
    for pct in ("0", "5", "20"):
        r = osmeter("compare", "first", "second", "--fail-on-slower", pct, db=db)
        failed = [x for x in r.stderr.splitlines() if x.startswith("osmeter: regression:")]
        assert r.returncode in (0, 1, 3), r.stdout + r.stderr
        assert bool(failed) == (r.returncode == 1), r.stderr
        assert "Regression gate" in r.stdout and "gate " in r.stderr


# ---- references ---------------------------------------------------------------------------

def test_reference_data_is_the_published_tables():
    by = {(r.study, r.source, r.system, r.bench): r for r in studies.references()}
    ds = by[("O90", "Table 2", "DS3100 Ultrix 3.1", "syscall.getpid")]
    assert (ds.value, ds.unit, ds.machine) == (25, "us", "DECstation 3100")
    assert by[("MG05", "Table 1", "NetBSD 2.0", "syscall.getpid")].value == 0.368
    lb = by[("LB96", "§5 (prose)", "Linux 1.2.8", "ctx.pipe_pingpong")]
    assert lb.value == 55 and "Pentium" in lb.machine
    # Remote configurations are set beside results on a network file system only.
    assert all(r.remote is True for r in studies.references() if r.system.endswith("Remote"))
    assert all(r.remote is False for r in studies.references() if r.system.endswith("Local"))
    t6 = by[("O90", "Table 6", "Sun3 SunOS 3.5", "fs.cache_read")]
    assert (t6.metric, t6.x) == ("bandwidth", 16384)      # the 16 KB point of the sweep
    assert refs.o90_mips()["Sun3"] == 1.8


def test_mips_relative_formula_reproduces_ousterhout():
    mips = refs.o90_mips()
    checked = 0
    from osmeter.studies import o90
    for table in o90.MIPS_TABLES:
        rows = [r for r in studies.references() if r.source == table and r.mips_relative is not None]
        ref_unix = next(r for r in rows if r.system == "Sun3 SunOS 3.5")
        ref_sprite = next(r for r in rows if r.system == "Sun3 Sprite")
        for r in rows:
            if table == "Table 2" and r.system.startswith("MVAX2"):
                continue        # printed 0.9; the formula gives 1.04 (a known misprint)
            ref = ref_sprite if "Sprite" in r.system else ref_unix
            got = refs.mips_relative(ref.value, r.value, r.better, mips[r.system.split()[0]],
                                     mips["Sun3"])
            assert got == pytest.approx(r.mips_relative, abs=0.0151), (table, r.system)
            checked += 1
    assert checked >= 30


def test_run_against_references_and_units():
    run = make_run("ra", "A", seed=1, noise=0.0001)
    rows = studies.against([run])
    ds = next(rr for rr in rows if rr.ref.source == "Table 2"
              and rr.ref.system == "DS3100 Ultrix 3.1")
    assert ds.ours[0] == pytest.approx(0.055, rel=0.01)          # 55 ns in µs
    assert ds.speedups[0] == pytest.approx(25 / 0.055, rel=0.01)
    foo = next(rr for rr in rows if rr.ref.source == "Table 9" and rr.ref.metric == "foo"
               and rr.ref.system.startswith("DS3100 Ultrix"))
    assert foo.ours[0] == pytest.approx(0.0009, rel=0.02)          # 900 ns in ms
    assert refs.convert(1, "Mbit/s", "MB/s") == pytest.approx(0.125)
    assert refs.convert(1, "ns", "MB/s") is None
    t2 = next(t for t in o90.mips_tables([run], [8000.0]) if t.table == "Table 2")
    name, speed, value, mrel = t2.ours[0]
    assert mrel == pytest.approx((108 / value) / (8000.0 / 1.8))


# ---- the raw-speed measure ------------------------------------------------------------------

def test_cpu_integer_reports_a_plausible_rate(smoke):
    inv = smoke("cpu.integer")
    values = inv.values("rate")
    assert len(values) == 2
    # Millions of integer operations per second: far above a 1990 workstation's few
    # MIPS on anything that runs this, far below a million-fold.
    assert all(50 < v < 1_000_000 for v in values), values
    assert inv.header["metrics"][0]["unit"] == "Mops/s"
    assert inv.header["metrics"][0]["better"] == "higher"
    assert inv.notes["ops_per_iteration"] == "12"
    assert int(inv.notes["iterations_per_batch"]) > 1000


def test_missing_skipped_and_failed_results_are_shown_not_counted():
    a = make_run("ra", "A", seed=1, noise=0.002)
    b = make_run("rb", "B", speed=2.0, seed=2, noise=0.002)
    b.results = [r for r in b.results if r.bench != "syscall.read"]          # not run in B
    getpid = next(r for r in b.results if r.bench == "syscall.getpid")
    getpid.status, getpid.reason, getpid.samples, getpid.summary = "skipped", "no getpid", [], {}
    cmp = compare.compare([a, b])
    read = next(r for r in cmp.rows if r.bench == "syscall.read")
    assert read.cells[1] is None and read.winner is None
    row = next(r for r in cmp.rows if r.bench == "syscall.getpid")
    assert row.cells[1].status == "skipped" and row.cells[1].ratio is None
    assert any("no getpid" in n for n in row.notes)
    assert "syscall" not in cmp.index          # nothing both runs measured in that category
    text = tables.terminal(cmp)
    assert "not run" in text and "skipped" in text
    json.loads(tables.json_text(cmp))
    from osmeter.report import html
    assert "skipped" in html.render(cmp)[0]


def test_reliability_warnings_reach_the_comparison():
    a, b = make_run("a"), make_run("b", seed=2)
    b.results[0].warnings = ["noisy: run-to-run variation 9.0% exceeds 5%"]
    key = b.results[0].key
    row = next(r for r in compare.compare([a, b]).rows if (r.bench, r.metric, r.x) == key)
    assert row.notes == ["unreliable in b: noisy: run-to-run variation 9.0% exceeds 5%"]
    clean = next(r for r in compare.compare([a, b]).rows if (r.bench, r.metric, r.x) != key)
    assert not any("unreliable" in n for n in clean.notes)


def test_notes_once_per_row_not_per_run():
    runs = [make_run("a", "A"), make_run("b", "B", seed=2), make_run("c", "C", seed=3)]
    for run in runs:
        run.results[0].warnings = ["only 2 repetitions: the interval of the median is 50%"]
    runs[2].results[1].warnings = ["noisy: run-to-run variation 9.0% exceeds 5%"]
    runs[1].results[1].warnings = ["only 2 repetitions: the interval of the median is 50%"]
    rows = {r.key if hasattr(r, "key") else (r.bench, r.metric, r.x): r
            for r in compare.compare(runs).rows}
    first = rows[runs[0].results[0].key]
    assert first.notes == ["unreliable in every run: only 2 repetitions: the interval of "
                           "the median is 50%"]
    second = rows[runs[0].results[1].key]
    assert len(second.notes) == 1 and "B: only 2" in second.notes[0] \
        and "C: noisy" in second.notes[0]


def _with_zeros(run, values):
    run.results.append(_result("net.udp_ttcp", "loss", "%", "lower", "sweep",
                               [[v] for v in values], x=65507.0, x_name="bytes"))
    run.results.append(_result("app.start.sh", "system", "s", "lower", "point",
                               [[0.0] for _ in values]))
    return run


def test_zeros_in_some_repetitions_never_crash_compare_report_gate_or_exports(tmp_path,
                                                                               capsys):
    # The crash: net.udp_ttcp loss 0, 0, 18.4, 8.2, 0 (and CPU time below the
    # timer's resolution) made compare and report raise ZeroDivisionError.
    a, b = _files(tmp_path, _with_zeros(make_run("ra", "A", seed=1), [0, 0, 18.4, 8.2, 0]),
                  _with_zeros(make_run("rb", "B", seed=2), [0, 3.1, 0, 0, 0]))
    db = str(tmp_path / "db.sqlite")
    for fmt in ([], ["--md"], ["--csv"], ["--json"], ["--all"]):
        assert cli.main(["--db", db, "compare", a, b, "--fail-on-slower", "10",
                         "--junit", str(tmp_path / "g.xml")] + fmt) in (0, 1, 3)
        out = capsys.readouterr().out
        if not fmt:
            assert "no ratio" in out or "every repetition 0" in out
    cmp = compare.compare([exchange.read_run_file(a), exchange.read_run_file(b)])
    loss = next(r for r in cmp.rows if r.metric == "loss").cells[1].verdict
    assert loss.ratio is None and loss.detail == "0 vs 0: no ratio"
    assert "net.udp_ttcp loss" in cmp.index_left_out and "app.start.sh system" in cmp.index_left_out
    g = gate.evaluate(cmp, 10)
    row = next(r for r in g.rows if r.metric == "loss")
    assert row.outcome == "not judged" and "no ratio" in gate_words.row_message(row, 10)
    assert cli.main(["--db", db, "report", a, b, "-o", str(tmp_path / "r.html")]) == 0
    assert cli.main(["--db", db, "import", a]) == 0
    for fmt in ("osmeter", "bmf", "pyperf", "github-smaller", "github-bigger", "long"):
        assert cli.main(["--db", db, "export", a, "--format", fmt, "-o",
                         str(tmp_path / ("e." + fmt))]) == 0, fmt
    # hyperfine holds whole-process timings (wall, user, system) only: none here.
    assert cli.main(["--db", db, "export", a, "--format", "hyperfine", "-o",
                     str(tmp_path / "e.h")]) == 2
    assert "nothing to export" in capsys.readouterr().err


def test_benjamini_bogomolov_counts_a_benchmark_as_one_question():
    assert sig.simes([0.01, 0.04, 0.5]) == pytest.approx(0.03)
    # One strong benchmark among four: selected (R = 1 of m = 4); inside it BH at
    # alpha x 1/4, so its second row (p = 0.02 > 0.05 x 2/2 x 1/4) stays undecided.
    fams = [[0.0001, 0.02], [0.5], [0.7, 0.9], [0.3]]
    adj, selected = sig.benjamini_bogomolov(fams, 0.05)
    assert selected == 1
    assert adj[0][0] <= 0.05 < adj[0][1]
    assert all(x > 0.05 for f in adj[1:] for x in f)
    # A 19-point curve with one weak point is one question, not 19 chances.
    assert sig.benjamini_bogomolov([[0.03] + [0.9] * 18], 0.05)[1] == 0
    assert sig.benjamini_bogomolov([], 0.05) == ([], 0)


def test_one_odd_repetition_does_not_swing_the_ratio():
    # The issue: fs.crtdel medians 18.4 and 18.6 us shown as x0.769 [0.070-8.486]
    # because of one 835 us repetition (a ratio of geometric means).
    base = [18.4, 18.5, 18.3, 18.6, 18.4]
    other = [18.6, 18.7, 835.0, 18.5, 18.6]
    for between in (None, sig.Between(0.001, 5)):
        v = sig.compare_values(base, other, "lower", between=between)
        assert v.ratio == pytest.approx(18.4 / 18.6, rel=0.01)
        assert v.word == "cannot tell" and v.ratio_low < v.ratio < v.ratio_high


# ---- rows whose runs timed different programs (issue 44) --------------------------------

def _with_python(run: Run, program: str, ms: float) -> Run:
    res = _result("app.start.python3", "wall", "ns", "lower", "point",
                  [[ms * 1e6 * (1 + 0.001 * i)] for i in range(5)])
    res.notes["program"] = program
    run.results.append(res)
    return run


def test_a_row_that_timed_different_programs_is_named_and_left_out_of_verdicts():
    """The issue's self-comparison: the same machine twice, but PATH found a pyenv shim
    python3 in one run and .venv's in the other (212 ms vs 18.6 ms): the row says so and
    has no ratio or verdict, the indices leave it out, the gate does not judge it, and
    "What differs" names the programs."""
    shim, venv = "/home/u/.pyenv/shims/python3", "/home/u/osmeter/.venv/bin/python3"
    a = _with_python(make_run("ra", "A", seed=1), shim, 212.0)
    b = _with_python(make_run("rb", "B", seed=2), venv, 18.6)
    cmp = compare.compare([a, b])
    row = next(r for r in cmp.rows if r.bench == "app.start.python3")
    assert row.unlike == "timed different programs: A %s, B %s" % (shim, venv)
    assert row.cells[1].ratio is None and row.cells[1].verdict is None and not row.tests
    assert "app" not in cmp.index and cmp.overall[1] == pytest.approx(1.0, rel=0.05)
    assert ("app.start.python3: program", [shim, venv]) in cmp.meta_diff
    g = gate.evaluate(cmp, 10)
    assert [r.not_judged for r in g.rows if r.bench == "app.start.python3"][0] is not None
    text = tables.terminal(cmp, width=200)
    assert "timed different programs: A %s, B %s" % (shim, venv) in text
    assert "app.start.python3: program" in text.split("What differs")[1]
    md = tables.markdown(cmp)
    assert "timed different programs" in md and "app.start.python3: program" in md
    from osmeter.report import html
    page, _ = html.render(cmp)
    assert "timed different programs" in page and "app.start.python3: program" in page
    # The same program in both runs: like for like, a verdict and an index as ever.
    b = _with_python(make_run("rb", "B", seed=2), shim, 18.6)
    cmp = compare.compare([a, b])
    row = next(r for r in cmp.rows if r.bench == "app.start.python3")
    assert not row.unlike and row.cells[1].verdict.word == "better" and "app" in cmp.index
