"""Reading never crashes on what reading accepted (issue 31): Hypothesis builds results
documents the way the published schema (osmeter/data/results.schema.json) describes
them -- with the values at and near its bounds: timestamps in the years 1000 and 9998
with offsets, counts up to 2^53, numbers of 0, 1e-30, 1e30 and negative ones, notes of
every JSON type -- imports each through osmeter's own check, and runs every reader on
what it accepts: the store (save, load, list, --where since/until), show, runs,
compare (both ways, and against itself), every table and the HTML report, the gate and
its JUnit file, and every export format (redacted too).  Any exception but a one-line
refusal fails the test.

Bounded for CI: MAX_EXAMPLES documents (OSMETER_HYPOTHESIS_EXAMPLES overrides) from a
fixed seed (OSMETER_HYPOTHESIS_SEED overrides), no deadline per example; the number of
examples, how many were accepted, and the seed are printed.
"""
from __future__ import annotations

import datetime as dt
import json
import os

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis (test extra) is not installed")
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from osmeter.data import exchange  # noqa: E402
from readers import read_everywhere  # noqa: E402
from synth import make_run  # noqa: E402

MAX_EXAMPLES = int(os.environ.get("OSMETER_HYPOTHESIS_EXAMPLES", "150"))
SEED = int(os.environ.get("OSMETER_HYPOTHESIS_SEED", "31"))
TWO_53 = 2 ** 53

# ---- the strategies: the schema's shapes, with its bounds and just inside them ---------------

SAFE_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cf")), max_size=12)
NAMES = st.one_of(st.sampled_from(["a", "web1", "x y", "ü", "名前", "fast*", "[x]"]), SAFE_TEXT)
BENCHES = st.sampled_from(["syscall.getpid", "syscall.read", "fs.openclose", "mem.read",
                           "scale.fork", "ub.syscall", "ub.dhry2reg", "net.tcp_peer",
                           "mab.local", "mab.remote", "ctx.pipe_ring", "proc.fork.dynamic",
                           "cmd.mine"])
METRICS = st.sampled_from(["latency", "bandwidth", "lps", "index", "rate", "per_component",
                           "user", "sys", "loss", "throughput", "round_trip"])
UNITS = st.sampled_from(["ns", "us", "ms", "s", "MB/s", "GB/s", "bytes", "KiB", "%",
                         "ops/s", "lps", "index", "Mops/s", "calls/s", "frames"])


def measured() -> st.SearchStrategy:
    """What the schema's measuredRange accepts, its bounds included."""
    return st.one_of(st.just(0.0), st.just(0), st.sampled_from([1e-30, 1e30, -1e30, -1e-30]),
                     st.floats(1e-30, 1e30), st.floats(-1e30, -1e-30),
                     st.integers(-10 ** 6, 10 ** 6), st.floats(0.5, 2e4))


def coordinates() -> st.SearchStrategy:
    """x: a size or a count, 0 or more (now and then a negative one, which is refused)."""
    return st.one_of(measured().map(abs), measured())


COUNTS = st.one_of(st.integers(0, 12), st.sampled_from([TWO_53, TWO_53 - 1, 10 ** 9]))


@st.composite
def timestamps(draw) -> str:
    year = draw(st.one_of(st.sampled_from([1000, 1970, 2026, 9998]), st.integers(1000, 9998)))
    month, day = draw(st.integers(1, 12)), draw(st.integers(1, 31))
    text = "%04d-%02d-%02dT%02d:%02d" % (year, month, day, draw(st.integers(0, 23)),
                                         draw(st.integers(0, 59)))
    if draw(st.booleans()):
        text += ":%02d" % draw(st.integers(0, 59))
        if draw(st.booleans()):
            text += "." + "7" * draw(st.integers(1, 9))
    zone = draw(st.sampled_from(["", "Z", "+00:00", "+05:30", "-05:00", "+23:59", "-2359",
                                 "+0100"]))
    return text + zone


def json_values(depth: int = 2) -> st.SearchStrategy:
    leaf = st.one_of(st.none(), st.booleans(), measured(), SAFE_TEXT)
    return st.recursive(leaf, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(NAMES, inner, max_size=3)),
        max_leaves=6)


@st.composite
def flags(draw):
    if draw(st.integers(0, 4)) == 0:
        return draw(SAFE_TEXT)      # a plain sentence, as stored before issue 22
    flag = {"kind": draw(st.sampled_from(["disturbed", "imprecise", "incomplete",
                                          "unreliable"])),
            "reason": draw(st.sampled_from(["other processes", "spread", "steal",
                                            "failed repetitions", "throttled"])),
            "text": draw(SAFE_TEXT)}
    for key in ("magnitude", "threshold"):
        if draw(st.booleans()):
            flag[key] = draw(measured())
    if draw(st.booleans()):
        flag["advice"] = draw(SAFE_TEXT)
    return flag


@st.composite
def summaries(draw, values: list) -> dict:
    pick = (lambda: draw(st.sampled_from(values))) if values and draw(st.booleans()) \
        else (lambda: draw(measured()))
    summary = {"n": draw(COUNTS), "median": pick()}
    if draw(st.booleans()):
        low, high = sorted([pick(), pick()])
        summary.update(ci_low=low, ci_high=high,
                       ci_level=draw(st.floats(0, 1)), ci_method="order statistics")
    for key in ("mean", "min", "max", "cv", "cv_within"):
        if draw(st.booleans()):
            summary[key] = pick()
    if draw(st.booleans()):
        summary["stdev"] = abs(draw(measured()))
    if draw(st.booleans()):
        summary["repetitions"] = draw(COUNTS)
    return summary


@st.composite
def results(draw) -> dict:
    shape = draw(st.sampled_from(["point", "sweep", "scatter", "derived"]))
    status = draw(st.sampled_from(["ok", "ok", "ok", "skipped", "failed"]))
    r = {"bench": draw(BENCHES), "metric": draw(METRICS), "unit": draw(UNITS),
         "better": draw(st.sampled_from(["lower", "higher"])), "shape": shape,
         "status": status, "params": draw(st.dictionaries(
             st.sampled_from(["samples", "dir", "n", "pin", "peer"]),
             st.one_of(SAFE_TEXT, measured(), st.none(), st.booleans()), max_size=3))}
    if shape == "sweep" or draw(st.integers(0, 5)) == 0:
        r["x"] = draw(coordinates())
        r["x_name"] = draw(st.sampled_from(["bytes", "processes", None]))
    if status != "ok":
        r["reason"] = draw(SAFE_TEXT)
        return r
    n = draw(st.integers(0 if shape == "derived" else 1, 12))
    values = [draw(measured()) for _ in range(n)]
    r["samples"] = [[draw(st.one_of(st.integers(0, 4), st.just(TWO_53))),
                     draw(coordinates()) if shape == "scatter" else r.get("x"), v]
                    for v in values]
    r["summary"] = draw(summaries(values))
    r["warnings"] = draw(st.lists(flags(), max_size=2))
    notes = draw(st.dictionaries(NAMES, json_values(), max_size=2))
    if draw(st.booleans()):
        notes["fs_type"] = draw(st.one_of(st.none(), st.sampled_from(["nfs", "ext4", "fuse"]),
                                          st.lists(st.sampled_from(["nfs", "ext4"]),
                                                   max_size=3)))
    if draw(st.booleans()):
        notes["stopped_by"] = draw(st.one_of(SAFE_TEXT, st.lists(SAFE_TEXT, max_size=2)))
    if draw(st.booleans()):
        notes["iterations_per_batch"] = draw(st.one_of(
            SAFE_TEXT, st.lists(st.sampled_from(["1", "0", "18785", "x"]), max_size=4)))
    r["notes"] = notes
    extra = {}
    if draw(st.booleans()):
        points = draw(st.lists(st.tuples(measured(), measured()).map(list), max_size=5))
        extra["curve"] = {"class": draw(st.sampled_from(["O(1)", "O(n)", None])),
                          "agree": draw(st.sampled_from([True, False, None])),
                          "disagreements": [draw(SAFE_TEXT)], "points": points,
                          "fit_points": points, "slope": draw(measured()),
                          "intercept": draw(measured())}
    if draw(st.booleans()):
        extra["plateau"] = draw(st.sampled_from(["L1", "L2", "RAM", None]))
    r["extra"] = extra
    return r


@st.composite
def documents(draw) -> dict:
    run = {"id": "p-" + draw(st.from_regex(r"[A-Za-z0-9]{1,10}", fullmatch=True)),
           "label": draw(st.one_of(st.none(), NAMES)), "started": draw(timestamps()),
           "finished": draw(st.one_of(st.none(), timestamps())),
           "status": draw(st.sampled_from(["complete", "interrupted", "failed"])),
           "suite": draw(st.one_of(st.none(), st.sampled_from(["quick", "full", "mg05"]))),
           "smoke": draw(st.booleans()),
           "sysinfo": {"hostname": draw(st.one_of(st.none(), NAMES)),
                       "kernel": {"release": draw(st.one_of(st.none(), NAMES))},
                       "cpu": {"model": draw(st.one_of(st.none(), NAMES)),
                               "cores": draw(st.one_of(st.none(), COUNTS))},
                       "memory_bytes": draw(st.one_of(st.none(), COUNTS))},
           "environment": {"load_before": draw(st.one_of(st.none(), st.lists(
               st.floats(0, 100), max_size=3))), "warnings": draw(st.lists(SAFE_TEXT,
                                                                          max_size=2))}}
    rs = draw(st.lists(results(), max_size=6))
    seen, unique = set(), []
    for r in rs:                # two results for one bench, metric and x are refused
        key = (r["bench"], r["metric"], r.get("x"))
        if key not in seen:
            seen.add(key)
            unique.append(r)
    return {"$schema": exchange.schema_id(), "format": "osmeter.run", "schema_version": 1,
            "run": run, "results": unique}


STATS = {"examples": 0, "accepted": 0}


@settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@seed(SEED)
@given(documents())
def check_a_document(doc):
    STATS["examples"] += 1
    try:
        run = exchange.document_to_run(exchange.parse_document(json.dumps(doc)))
    except exchange.ExchangeError as e:
        assert "\n" not in str(e) and str(e).isprintable()
        return
    STATS["accepted"] += 1
    read_everywhere(run, OTHER)


OTHER = make_run("other", "other", seed=9)


def test_every_document_the_schema_accepts_is_read_by_every_reader(capsys):
    STATS.update(examples=0, accepted=0)
    t0 = dt.datetime.now()
    check_a_document()
    took = (dt.datetime.now() - t0).total_seconds()
    with capsys.disabled():
        print("\nhypothesis: %d examples (%d accepted by the import check), seed %d, %.0f s"
              % (STATS["examples"], STATS["accepted"], SEED, took))
    assert STATS["accepted"] >= STATS["examples"] // 3
