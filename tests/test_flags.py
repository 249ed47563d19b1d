"""Disturbed and imprecise, kept apart (issue 22): what the monitor's counts make of a
result, the thresholds per kind of benchmark (and, by simulation with fixed seeds, that
they flag a result as precise as its kind in at most 5% of runs whatever the number of
repetitions), phases too short to time alone, old runs' plain warnings, the run's count
line, and compare and the gate saying when a verdict rests on a disturbed row."""
from __future__ import annotations

import json
import math
import random
import statistics
from pathlib import Path

import pytest

from osmeter.analysis import compare, flags, gate, monitor, precision, results
from osmeter.report import display
from osmeter import stats
from osmeter.running.coreproc import Invocation
from osmeter.data.model import Result, Sample
from osmeter.analysis.monitor import Interference
from osmeter.report import gate_words, tables
from synth import make_run


def window(wall=0.5, own=0.5, busy=None, steal=None, total_per_cpu=None, freqs=None,
           throttled=None):
    """One repetition's interference on a 2-CPU Linux machine: busy CPU seconds (anyone,
    ours included) and (steal, total) ticks per CPU."""
    busy = busy or {0: 0.0, 1: own}
    total = total_per_cpu or int(wall * 100)
    steal = steal or {0: 0, 1: 0}
    return Interference(wall_s=wall, own_cpu_s=own, tick_s=0.01,
                        other_cpu_s=max(0.0, sum(busy.values()) - own),
                        steal_ticks=sum(steal.values()), total_ticks=2 * total,
                        cpu_busy_s=dict(busy), cpu_ticks={c: (steal[c], total) for c in busy},
                        cpu_freqs=freqs or {}, throttled=throttled or {})


def reasons(found):
    return [(f.kind, f.reason) for f in found]


# ---- disturbed ---------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def two_cpus(monkeypatch):
    """The synthetic windows are of a 2-CPU machine, whatever this one has."""
    monkeypatch.setattr(monitor, "allowed_cpus", lambda: [0, 1])


def test_a_hog_on_the_benchmarks_cpu_disturbs_it_and_says_where():
    # Pinned to CPU 1, which another process had half of: up to twice as slow.
    parts = [window(own=0.25, busy={0: 0.0, 1: 0.5}) for _ in range(5)]
    [f] = monitor.judge(parts, cpus=[1])
    assert (f.kind, f.reason, f.cpus) == (flags.DISTURBED, flags.OTHER_PROCESSES, [1])
    assert f.magnitude > 0.8 and "CPU 1" in f.text and f.advice
    # The same hog on the other CPU does not touch a benchmark pinned to CPU 1 ...
    parts = [window(own=0.5, busy={0: 0.5, 1: 0.5}) for _ in range(5)]
    assert monitor.judge(parts, cpus=[1]) == []
    # ... but an unpinned one shares the machine with it: where it ran is not known.
    [f] = monitor.judge(parts, cpus=None)
    assert (f.reason, f.cpus) == (flags.OTHER_PROCESSES, None)
    assert "the 2 CPUs it may use" in f.text


def test_a_disturbance_counts_only_when_it_could_change_a_verdict():
    # Others took 5% of CPU 1: enough to move a result whose spread is 1% by a verdict's
    # 2%, not one whose own spread (8%) is larger than that.
    parts = [window(wall=1.0, own=0.95, busy={0: 0.0, 1: 1.0}) for _ in range(5)]
    [f] = monitor.judge(parts, cpus=[1], floor=0.02)
    assert f.reason == flags.OTHER_PROCESSES and f.magnitude == pytest.approx(0.05 / 0.95, abs=1e-3)
    assert f.threshold == 0.02 and "2% would change a verdict" in f.text
    assert monitor.judge(parts, cpus=[1], floor=0.08) == []


def test_tick_rounding_of_a_short_window_is_no_evidence():
    # 7 ms repetitions: a 10 ms tick of someone else in one or two of them is how ticks
    # are counted, not a hog (it would be 14% of the CPU time if taken at face value).
    parts = [window(wall=0.007, own=0.006, busy={0: 0.01 if i < 2 else 0.0, 1: 0.006})
             for i in range(5)]
    assert monitor.judge(parts, cpus=None) == []
    # A hog that really took the CPU shows in every window, and counts.
    parts = [window(wall=0.05, own=0.025, busy={0: 0.0, 1: 0.05}) for _ in range(5)]
    assert reasons(monitor.judge(parts, cpus=[1])) == [(flags.DISTURBED,
                                                        flags.OTHER_PROCESSES)]


def test_steal_is_judged_against_this_machines_steal_at_rest():
    # 3% steal on a VM that always has 3%: a note, not a disturbance ...
    parts = [window(wall=1.0, own=1.0, busy={0: 0.0, 1: 1.0}, steal={0: 3, 1: 3},
                    total_per_cpu=100) for _ in range(10)]
    assert monitor.judge(parts, cpus=[1], at_rest={"steal": 0.03}) == []
    # ... but 3% above a machine that steals nothing at rest could move a result by a
    # verdict's 2% ...
    assert reasons(monitor.judge(parts, cpus=[1], at_rest={"steal": 0.0})) == [
        (flags.DISTURBED, flags.STEAL)]
    # ... and much more than usual is a disturbance on any VM.
    parts = [window(wall=1.0, own=1.0, busy={0: 0.0, 1: 1.0}, steal={0: 20, 1: 20},
                    total_per_cpu=100) for _ in range(10)]
    [f] = monitor.judge(parts, cpus=[1], at_rest={"steal": 0.03})
    assert f.reason == flags.STEAL and "3.0% at rest" in f.text


def test_clock_changes_and_throttling_disturb():
    parts = [window(freqs={1: (2_000_000, 3_000_000)})]
    assert reasons(monitor.judge(parts, cpus=[1])) == [(flags.DISTURBED, flags.CLOCK)]
    assert monitor.judge([window(freqs={0: (2_000_000, 3_000_000)})], cpus=[1]) == []
    parts = [window(throttled={1: 2})]
    [f] = monitor.judge(parts, cpus=[1])
    assert f.reason == flags.THROTTLING and "2 times" in f.text


def test_the_per_cpu_counts_of_proc_stat_are_read():
    every, per_cpu = monitor._proc_stat()
    if every is None:
        pytest.skip("no /proc/stat here")
    assert set(per_cpu) <= set(range(4096)) and per_cpu
    assert every[2] >= max(t for _, _, t in per_cpu.values())


# ---- imprecise ---------------------------------------------------------------------------

def summary_with(cv, reps=5, median=100.0):
    return {"n": reps, "repetitions": reps, "median": median, "cv": cv}


def test_kinds_of_benchmark():
    assert precision.kind_of("syscall.getpid").name == "system call"
    assert precision.kind_of("fs.openclose").name == "system call"
    assert precision.kind_of("fs.cache_read").name == "memory"
    assert precision.kind_of("app.start.sh").name == "program start-up"
    assert precision.kind_of("proc.exec.dynamic").name == "process creation"
    assert precision.kind_of("mab.local").name == "file system"
    assert precision.kind_of("scale.fork.dynamic", "scatter").name == precision.SCATTER
    assert precision.kind_of("thread.create", "scatter").name == precision.SCATTER
    assert precision.kind_of("my-own-command").name == "application"
    # Every kind says what its spread rests on; one not measured judges nothing.
    for kind in precision.KINDS:
        assert kind.basis, kind
        if kind.spread is None:
            assert precision.limit(kind, 5) is None
            bench = kind.ids[0] if kind.ids else "scale.mmap"
            shape = "scatter" if kind.name == precision.SCATTER else "point"
            metric = kind.metrics[0] if kind.metrics else None
            assert precision.judge(summary_with(0.9), bench, shape, metric) == []
        else:
            assert 0 < kind.spread < 0.5, kind


MEASURED = tuple(precision.Kind(k.name, k.ids, s, "simulated", k.metrics)
                 for k, s in zip(precision.KINDS, (0.04, 0.01, 0.01, 0.03, 0.02, 0.04,
                                                   0.05, 0.08, 0.05, 0.05)))


@pytest.fixture
def measured(monkeypatch):
    """Kinds with spreads (as bench/precision.py would measure them), for what follows
    from them whatever they are."""
    monkeypatch.setattr(precision, "KINDS", MEASURED)


def test_imprecise_when_the_spread_is_above_its_kinds(measured):
    syscall = precision.kind_of("syscall.getpid")
    start = precision.kind_of("app.start.sh")
    assert start.spread > syscall.spread        # starting a program varies more
    cv = (syscall.spread + start.spread) / 2 * 1.6
    [f] = precision.judge(summary_with(cv), "syscall.getpid")
    assert (f.kind, f.reason) == (flags.IMPRECISE, flags.SPREAD) and "system call" in f.text
    assert "--repetitions" in f.advice and f.magnitude == pytest.approx(cv, abs=1e-4)
    cv = start.spread * 1.2       # within what n=5 repetitions show by chance
    assert precision.judge(summary_with(cv), "app.start.sh") == []
    # One repetition has no run-to-run spread to judge.
    assert precision.judge(summary_with(1.0, reps=1), "syscall.getpid") == []


def test_a_share_at_a_bound_is_not_judged_by_its_cv(measured):
    # net.udp_ttcp's loss: 0, 0, 18.4, 8.2, 0 % (issue 25) has a CV of 137%, which says
    # nothing about its precision; the datagrams per second beside it are judged.
    loss = [0.0, 0.0, 18.4, 8.2, 0.0]
    summary = stats.summarize([Sample(i, 1024, v) for i, v in enumerate(loss)])
    assert summary["cv"] > 1.0
    assert precision.judge(summary, "net.udp_ttcp", "sweep", "loss") == []
    assert precision.judge(summary, "net.udp_ttcp.ipv6", "sweep", "loss") == []
    assert precision.judge(summary, "net.udp_ttcp", "sweep", "received") != []


@pytest.mark.parametrize("shape", ["normal", pytest.param("lognormal", marks=pytest.mark.long)])
def test_a_result_as_precise_as_its_kind_is_flagged_in_at_most_5_percent(shape, measured):
    """The claim behind the limit, by simulation (fixed seed): repetition medians whose
    true CV is the kind's spread exceed limit(kind, n) in about 5% of runs for every n
    (normal: within sampling error of 5%; lognormal, skewed: not much more)."""
    rng = random.Random(22)
    kind = precision.kind_of("ctx.pipe_self")
    sigma = kind.spread
    trials = 4000
    for n in (2, 3, 5, 10, 20):
        flagged = 0
        for _ in range(trials):
            if shape == "normal":
                reps = [100.0 * rng.gauss(1.0, sigma) for _ in range(n)]
            else:
                s = math.sqrt(math.log(1 + sigma ** 2))
                reps = [100.0 * rng.lognormvariate(-s * s / 2, s) for _ in range(n)]
            summary = stats.summarize([Sample(i, None, v) for i, v in enumerate(reps)])
            flagged += bool(precision.judge(summary, "ctx.pipe_self"))
        rate = flagged / trials
        assert rate <= (0.062 if shape == "normal" else 0.08), (n, rate)
        assert rate >= 0.035, (n, rate)        # and the limit is not needlessly lax


def flagged_share_at_rest(seed: int, measured_share: float = 1.0, noisier: float = 1.0) -> float:
    """One simulated machine (fixed seed): a kind of 150 results whose spreads at rest
    vary a hundredfold (log-normal, sd 1) with a rare excursion in 1 of 20 repetitions;
    its spread measured as bench/precision.py measures it (each result's CV pooled over
    10 quiet runs of 5 repetitions, the 90th percentile over the results measured), on
    the first `measured_share` of them, the others `noisier` times noisier.  Returns the
    share of a fresh quiet run's results flagged imprecise."""
    rng = random.Random(seed)
    n = 150
    measured = int(measured_share * n)
    spreads = [0.03 * math.exp(rng.gauss(0, 1.0)) * (1 if i < measured else noisier)
               for i in range(n)]

    def one_run():
        out = []
        for s in spreads:
            reps = [math.exp(rng.gauss(0, s)) * (1 + abs(rng.gauss(0, 4 * s))
                                                 if rng.random() < 0.05 else 1)
                    for _ in range(5)]
            out.append(stats.summarize([Sample(i, None, v) for i, v in enumerate(reps)]))
        return out
    basis = [one_run() for _ in range(10)]
    pooled = [math.sqrt(sum(b[i]["cv"] ** 2 for b in basis) / len(basis))
              for i in range(measured)]
    p90 = statistics.quantiles(pooled, n=10, method="inclusive")[8]
    kind = precision.Kind("simulated", ("sim.*",), p90, "simulated")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(precision, "KINDS", (kind,))
        return sum(bool(precision.judge(s, "sim.x")) for s in one_run()) / n


def test_a_spread_measured_on_the_results_it_judges_flags_at_most_10_percent_at_rest():
    """Issue 25's target holds by construction once each kind's spread is measured on the
    results a run judges, however unequal they are (20 simulated machines)."""
    shares = [flagged_share_at_rest(seed) for seed in range(20)]
    assert max(shares) <= 0.10 and statistics.fmean(shares) <= 0.07, shares
    # Measured on a third of them while the rest are twice as noisy (the quick suite
    # against bench/precision.py's 43 representatives, which covered 37% of a quick run's
    # results): that is how quick runs came to have 16-33% flagged.
    shares = [flagged_share_at_rest(seed, 0.37, 2.0) for seed in range(20)]
    assert statistics.fmean(shares) > 0.10, shares


# ---- results: flags stored, short phases, no per-row few-repetitions note -----------------

def fake_meta(bench="ctx.pipe_self", metrics=(("latency", "ns"),)):
    return {"id": bench, "metrics": [{"name": n, "unit": u, "better": "lower",
                                      "shape": "point", "x_name": None} for n, u in metrics]}


def invocation(values, placement="all processes pinned to CPU 1", metric="latency"):
    return Invocation("x", status="ok", samples=[(metric, None, v) for v in values],
                      notes={"placement": placement})


def test_results_store_structured_flags_and_the_interference_on_their_cpus():
    hog = window(own=0.25, busy={0: 0.0, 1: 0.5})
    reps = [(i, invocation([100.0, 101.0]), hog) for i in range(5)]
    [r] = results.results_for_bench(fake_meta(), reps)
    [w] = r.warnings
    assert isinstance(w, dict) and w["kind"] == "disturbed" and w["cpus"] == [1]
    assert flags.standing(r) == flags.DISTURBED
    seen = r.notes["interference"][0]["benchmark_cpus"]
    assert seen["cpus"] == [1] and seen["other_cpu_s"] == pytest.approx(0.25)
    json.dumps(r.to_dict())


def test_a_disturbance_is_put_only_on_what_it_can_move():
    """Others busy on the benchmark's CPU slow its wall time, not its peak memory nor its
    own CPU time (which counts only while it ran); a slower clock shows in CPU time."""
    meta = fake_meta("app.start.sh", (("wall", "ms"), ("user", "ms"), ("max_rss", "bytes")))
    hog = window(own=0.25, busy={0: 0.0, 1: 0.5})
    reps = [(i, Invocation("x", status="ok", samples=[
        ("wall", None, 1.0), ("user", None, 0.4), ("max_rss", None, 2e6)],
        notes={"placement": "all processes pinned to CPU 1"}), hog) for i in range(5)]
    got = {r.metric: flags.standing(r) for r in results.results_for_bench(meta, reps)}
    assert got == {"wall": flags.DISTURBED, "user": None, "max_rss": None}
    assert results.can_move(flags.CLOCK, "user", "ms")
    assert not results.can_move(flags.CLOCK, "max_rss", "bytes")


def test_two_repetitions_are_said_once_for_the_run_not_on_every_row():
    quiet = window(own=0.5)
    reps = [(i, invocation([100.0, 100.0]), quiet) for i in range(2)]
    [r] = results.results_for_bench(fake_meta(), reps)
    assert r.warnings == []
    text = display.results_table([r], width=100)
    assert "50% ([min, max] of 2 repetitions)" in text and "few-reps" not in text


def test_a_phase_too_short_to_time_alone_is_no_row_of_its_own():
    meta = fake_meta("mab.local", (("mkdir", "s"), ("total", "s")))
    reps = []
    for i in range(5):
        inv = Invocation("mab.local", status="ok", samples=[
            ("mkdir", None, 0.0001 * (1 + 0.2 * (i % 2))), ("total", None, 0.4 + 0.001 * i)])
        reps.append((i, inv, window(own=0.5)))
    mkdir, total = results.results_for_bench(meta, reps)
    # Measured and kept (a study may compare it), not judged, no row of its own.
    assert results.too_short(mkdir) and mkdir.warnings == [] and len(mkdir.samples) == 5
    assert mkdir.extra["once_per_repetition_s"] == pytest.approx(0.0001)
    assert mkdir.extra["too_short"].startswith(results.TOO_SHORT)
    assert flags.counted([mkdir, total]) == [total]
    assert total.status == "ok" and total.summary["median"] == pytest.approx(0.402)
    text = display.results_table([mkdir, total], width=100)
    assert "mkdir: too short to time alone" in text and "0.0001" not in text
    # Timed in batches (several samples per repetition): however short, a result.
    reps = [(i, invocation([1e-7, 1.1e-7], metric="latency"), window()) for i in range(3)]
    assert results.results_for_bench(fake_meta(), reps)[0].status == "ok"
    # Once per repetition but computed from a long timing (a 0.26 s game / hand-offs).
    meta = fake_meta("thread.pingpong.e1", (("per_handoff", "ns"),))
    reps = [(i, invocation([1300.0 + i], metric="per_handoff"), window()) for i in range(3)]
    assert results.results_for_bench(meta, reps)[0].status == "ok"


# ---- shown and counted -------------------------------------------------------------------

def flagged(result, *found):
    result.warnings = [f.to_dict() for f in found]
    return result


HOG = flags.Flag(flags.DISTURBED, flags.OTHER_PROCESSES, "other processes took 50% of CPU 1",
                 monitor.QUIET_ADVICE, 1.0, 0.02, [1])
WIDE = flags.Flag(flags.IMPRECISE, flags.SPREAD, "run-to-run variation 9.0% is above ...",
                  precision.ADVICE, 0.09, 0.03)


def test_the_summary_marks_both_kinds_and_its_last_line_counts_them():
    run = make_run("a")
    by_bench = {r.bench: r for r in run.results}
    flagged(by_bench["ctx.pipe_pingpong"], HOG)
    flagged(by_bench["syscall.read"], WIDE)
    text = display.results_table(run.results, width=100)
    lines = text.splitlines()
    assert next(l for l in lines if "ctx.pipe_pingpong" in l).startswith("!")
    assert next(l for l in lines if "syscall.read" in l).startswith("~")
    assert next(l for l in lines if "syscall.getpid" in l).startswith(" ")
    flat = " ".join(text.split())
    assert "busy = other processes took CPU time" in flat and "imprecise = " in flat
    measured = len(flags.counted(run.results))
    assert lines[-1] == ("1 of %d results disturbed (other processes on CPU 1 during "
                         "ctx.pipe_pingpong), 1 imprecise." % measured)


def test_count_line_names_families_and_benchmarks():
    rs = [Result("ctx.a", "m", "ns", "lower", "point", summary={"median": 1.0}),
          Result("ctx.b", "m", "ns", "lower", "point", summary={"median": 1.0}),
          Result("proc.x", "m", "ns", "lower", "point", summary={"median": 1.0}),
          Result("proc.y", "m", "ns", "lower", "point", summary={"median": 1.0})]
    for r in rs[:3]:
        flagged(r, HOG)
    assert flags.count_line(rs) == ("3 of 4 results disturbed (other processes on CPU 1 "
                                    "during ctx.*, proc.x), 0 imprecise.")
    assert flags.count_line(rs[3:]) == "1 result: none disturbed, none imprecise."


def test_old_runs_plain_warnings_are_shown_as_they_were():
    run = make_run("a")
    old = run.results[0]
    old.warnings = ["noisy: run-to-run variation 7.3% exceeds 5%"]
    assert flags.read(old.warnings[0]).kind == flags.UNRELIABLE
    text = display.results_table(run.results, width=100)
    row = next(l for l in text.splitlines() if old.bench in l)
    assert row.startswith("!") and "noisy" in row
    assert "noisy = run-to-run variation above 5%" in " ".join(text.split())
    assert " ".join(text.split()).endswith(
        "1 of %d results marked unreliable by an older osmeter (which did not tell disturbed "
        "from imprecise)." % len(flags.counted(run.results)))
    notes = display.full_notes(run.results)
    assert "noisy: run-to-run variation 7.3% exceeds 5%" in notes


def test_full_notes_say_the_kind_and_what_to_do():
    run = make_run("a")
    flagged(run.results[0], HOG)
    notes = display.full_notes(run.results)
    assert "disturbed: other processes took 50% of CPU 1" in notes
    assert "What to do:" in notes and "quiet the machine" in notes


# ---- compare and the gate ----------------------------------------------------------------

def test_a_verdict_on_a_disturbed_row_says_so():
    base, slow = make_run("a", "base"), make_run("b", "cand", speed=0.7, seed=2)
    flagged(next(r for r in slow.results if r.bench == "ctx.pipe_pingpong"), HOG)
    cmp = compare.compare([base, slow])
    row = next(r for r in cmp.rows if r.bench == "ctx.pipe_pingpong")
    cell = row.cells[1]
    assert cell.caveat == "disturbed in cand (other processes on CPU 1)"
    assert tables.verdict_text(cell).endswith(", DISTURBED")
    assert any(n.startswith("disturbed in cand: other processes") for n in row.notes)
    clean = next(r for r in cmp.rows if r.bench == "syscall.getpid")
    assert clean.cells[1].caveat == "" and "DISTURBED" not in tables.verdict_text(clean.cells[1])
    text = tables.terminal(cmp, show_all=True)
    assert "DISTURBED beside a verdict" in " ".join(text.split())
    cells = json.loads(tables.json_text(cmp))["rows"]
    assert any(c and c.get("verdict_caveat") for r in cells for c in r["cells"])
    g = gate.evaluate(cmp, 5.0)
    grow = next(r for r in g.rows if r.bench == "ctx.pipe_pingpong")
    assert grow.disturbed and gate_words.row_message(grow, 5.0).endswith(grow.disturbed)
    assert "disturbed" in gate_words.note(g)
    assert not next(r for r in g.rows if r.bench == "syscall.getpid").disturbed


def test_schema_takes_flags_and_old_strings_and_refuses_bad_kinds():
    from osmeter.data import exchange
    run = make_run("r1")
    flagged(run.results[0], HOG, WIDE)
    run.results[1].warnings = ["noisy: run-to-run variation 9.0% exceeds 5%"]
    doc = json.loads(exchange.document_text(run))
    exchange.check_document(doc)
    back = exchange.document_to_run(doc)
    assert [flags.read(w) for w in back.results[0].warnings] == [HOG, WIDE]
    assert back.results[1].warnings == ["noisy: run-to-run variation 9.0% exceeds 5%"]
    doc["results"][0]["warnings"][0]["kind"] = "spooky"
    with pytest.raises(Exception, match=r"results\[0\]\.warnings\[0\]\.kind"):
        exchange.check_document(doc)


def test_the_measurement_page_shows_the_thresholds_as_the_code_has_them():
    """docs/measurement.md carries precision.KINDS as a table: every kind with its
    spread, its limit at 5 repetitions and its measured basis, and SHORTEST_ALONE_S."""
    readme = (Path(__file__).resolve().parent.parent / "docs" / "measurement.md").read_text(
        encoding="utf-8")
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in readme.splitlines() if line.strip().startswith("|")}
    for kind in precision.KINDS:
        assert kind.name in rows, kind.name
        spread, at5, basis = rows[kind.name][:3]
        if kind.spread is None:
            assert (spread, at5) == ("not measured", "—"), kind.name
        else:
            assert spread == "%.1f%%" % (100 * kind.spread), kind.name
            assert at5 == "%.1f%%" % (100 * precision.limit(kind, 5)), kind.name
        assert basis == kind.basis, kind.name
    assert "%g ms" % (1000 * precision.SHORTEST_ALONE_S) in readme


def test_compare_and_the_report_show_a_too_short_phase_only_beside_its_whole():
    from osmeter.report import html
    runs = [make_run("a", "base"), make_run("b", "cand", speed=0.7, seed=2)]
    for run in runs:
        phase = next(r for r in run.results if r.metric == "foo")
        phase.extra = dict(phase.extra or {}, **{
            results.TOO_SHORT_KEY: 9e-7, "too_short": results.too_short_reason(9e-7, phase.bench)})
    cmp = compare.compare(runs)
    phase_row = next(r for r in cmp.rows if r.metric == "foo")
    whole_row = next(r for r in cmp.rows if r.metric == "a/b/c/foo")
    # 30% slower, yet no headline of its own; the same difference on a result is one.
    assert not tables.is_headline(phase_row) and tables.is_headline(whole_row)
    page = html.render(cmp)[0]
    fold = page.index("1 phase too short to time alone")
    assert page.index(phase_row.label, fold) > fold     # listed inside the fold only
    assert page.count(">%s</td>" % phase_row.label) == 1
