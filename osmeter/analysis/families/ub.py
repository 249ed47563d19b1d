"""UnixBench index of the ub.* items: 10 x measured loops per second / baseline.

The baseline is UnixBench's reference machine, "George", a SPARCstation 20-61, whose
scores define an index of 10.0.  Source: UnixBench's pgms/index.base ("Scores from
'George', a SPARCstation 20-61"), the same values in the %BASELINE table of UnixBench
5.1.3's Run script, and the INDEX VALUES table that UnixBench 4.1.0 prints (checked in
4.1.0 reports posted to linux-kernel in 2002-2003, BASELINE column):

    System Call Overhead          15000.0 lps   4.1.0 and 5.x
    Pipe Throughput               12440.0 lps   4.1.0 and 5.x
    Process Creation                126.0 lps   4.1.0 and 5.x
    Execl Throughput                 43.0 lps   4.1.0 and 5.x
    Pipe-based Context Switching   4000.0 lps   5.x index.base only

4.1.0's printed index does not include the context switch; the 4000 lps baseline is
the one UnixBench 5 uses for it.  Camacho (2006) reports a 4.1.0 "pipe-based context
switch" index without saying which baseline produced it, so ub.ctx's index is on the
UnixBench 5 scale.

The interval: every sample (loops per second) is scaled to an index, so the derived
result's median and 95% interval are the measured ones on the index scale, computed the
usual way (over per-repetition medians; see osmeter/stats/__init__.py).
"""
from __future__ import annotations

from ...data.model import Result, Sample
from ... import stats

BASELINE_SOURCE = ("UnixBench pgms/index.base: scores of 'George', a SPARCstation 20-61 "
                   "(index 10.0)")
LPS_METRIC = "lps"   # what every ub.* item measures: loops per second
BASELINES = {   # bench id -> (UnixBench test, baseline loops per second, versions)
    "ub.syscall": ("syscall", 15000.0, "4.1.0, 5.x"),
    "ub.pipe": ("pipe", 12440.0, "4.1.0, 5.x"),
    "ub.ctx": ("context1", 4000.0, "5.x (not in 4.1.0's index)"),
    "ub.spawn": ("spawn", 126.0, "4.1.0, 5.x"),
    "ub.execl": ("execl", 43.0, "4.1.0, 5.x"),
}


def index_of(bench: str, lps: float) -> float:
    return 10.0 * lps / BASELINES[bench][1]


def derive(bench_id, results, sysinfo):
    if bench_id not in BASELINES:
        return []
    test, baseline, versions = BASELINES[bench_id]
    out = []
    for r in results:
        if r.metric != LPS_METRIC or r.shape == "derived":
            continue
        extra = {"baseline_lps": baseline, "unixbench_test": test,
                 "baseline_versions": versions, "baseline_source": BASELINE_SOURCE,
                 "formula": "10 x lps / %g" % baseline}
        if r.status != "ok" or not r.samples:
            out.append(Result(bench=r.bench, metric="index", unit="index", better="higher",
                              shape="derived", params=r.params, status=r.status,
                              reason=r.reason, extra=extra))
            continue
        samples = [Sample(s.rep, s.x, index_of(bench_id, s.value)) for s in r.samples]
        summary = stats.summarize(samples)
        r.extra["unixbench_index"] = summary["median"]
        out.append(Result(bench=r.bench, metric="index", unit="index", better="higher",
                          shape="derived", params=r.params, samples=samples,
                          summary=summary, warnings=list(r.warnings), notes=r.notes,
                          extra=extra))
    return out
