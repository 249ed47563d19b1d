"""From invocations to results: merging notes, failed repetitions counted."""
from osmeter.analysis import flags, results
from osmeter.running.coreproc import Invocation
from osmeter.analysis.monitor import Interference
from synth import fake_catalog


def test_notes_merge_to_one_value_or_the_list():
    assert results.merge_notes([{"p": "cpu 1", "i": "5"}, {"p": "cpu 1", "i": "7"}]) == \
        {"p": "cpu 1", "i": ["5", "7"]}


def test_failed_repetitions_are_counted_not_hidden():
    c = fake_catalog()
    ok = Invocation("a", status="ok", samples=[("latency", None, 10.0), ("latency", None, 11.0)])
    bad = Invocation("a", status="failed", reason="core killed by signal 9")
    reps = [(0, ok, Interference()), (1, bad, Interference())]
    [res] = results.results_for_bench(c.by_id["a"], reps)
    assert res.status == "ok" and res.summary["n"] == 2
    assert any("1 of 2 repetitions did not complete: core killed by signal 9" in w
               for w in flags.texts(res))
    assert flags.standing(res) == flags.INCOMPLETE
    [res] = results.results_for_bench(c.by_id["a"], [(0, bad, Interference())])
    assert res.status == "failed" and res.reason == "core killed by signal 9" and not res.samples
