"""Write tests/data/study-run.json.gz: one real quick-suite run of this project's test
machine reduced to what the study views read -- each result's per-repetition medians
(scatters: per repetition, the medians of 20 bins of x) with its unit, shape, flags and
extra -- so tests can draw runs with the spread a real run has (tests/test_replication.py).

    python3 tests/make_study_fixture.py STORE RUN
"""
from __future__ import annotations

import gzip
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from osmeter.data.store import Store  # noqa: E402

OUT = Path(__file__).resolve().parent / "data" / "study-run.json.gz"


def reduce(r) -> dict:
    by_rep: dict = {}
    for s in r.samples:
        by_rep.setdefault(s.rep, []).append(s)
    reps = []
    for rep, smp in sorted(by_rep.items()):
        if r.shape == "scatter":
            smp = sorted(smp, key=lambda s: s.x)
            k = max(1, len(smp) // 20)
            reps.append([[statistics.median(s.x for s in smp[i:i + k]),
                          statistics.median(s.value for s in smp[i:i + k])]
                         for i in range(0, len(smp), k)])
        else:
            reps.append(statistics.median(s.value for s in smp))
    return {"bench": r.bench, "metric": r.metric, "unit": r.unit, "better": r.better,
            "shape": r.shape, "x": r.x, "x_name": r.x_name, "params": r.params,
            "status": r.status, "reason": r.reason, "warnings": r.warnings,
            "extra": r.extra, "summary": r.summary, "reps": reps}


def main(store: str, ref: str) -> None:
    st = Store(store)
    run = st.load_run(ref)
    st.close()
    data = {"sysinfo": run.sysinfo, "results": [reduce(r) for r in run.results]}
    with gzip.open(OUT, "wt") as f:
        json.dump(data, f, default=str)
    print(OUT, OUT.stat().st_size, "bytes,", len(data["results"]), "results")


if __name__ == "__main__":
    main(*sys.argv[1:3])
