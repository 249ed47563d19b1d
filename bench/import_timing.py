#!/usr/bin/env python3
"""How long reading a large results document takes, phase by phase (CPU seconds).

A synthetic run with one scatter result of N samples (default 500,000, about what a full
suite's scalability curves give over 5 repetitions) is written as osmeter's JSON, then
read back: plain json.loads for comparison, osmeter's parse with its checks (NaN,
infinities, 64-bit integers, duplicate keys, depth), the JSON Schema check, and
building the Run.  Usage: python3 bench/import_timing.py [N]
"""
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from osmeter.data import exchange  # noqa: E402
from osmeter.api import Result, Sample  # noqa: E402
from synth import make_run  # noqa: E402


def cpu(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500_000
    run = make_run("big", "big")
    scatter = next(r for r in run.results if r.shape == "scatter")
    rng = random.Random(1)
    reps = 5
    scatter.samples = [Sample(rep, i, 20000.0 * rng.gauss(1, 0.05))
                       for rep in range(reps) for i in range(n // reps)]
    text = exchange.document_text(run)
    print("document: %.1f MB, %d samples" % (len(text) / 1e6, n))
    _, plain = cpu(lambda: json.loads(text))
    doc, parse = cpu(lambda: exchange.parse_document(text))
    _, check = cpu(lambda: exchange.check_document(doc))
    _, build = cpu(lambda: [Result.from_dict(d) for d in doc["results"]])
    print("json.loads alone %.2f s; osmeter parse and value checks %.2f s; schema %.2f s; "
          "building the run %.2f s (CPU)" % (plain, parse, check, build))


if __name__ == "__main__":
    main()
