"""Synthetic runs with known differences, for the comparison and report tests; a tiny
catalogue of two benchmarks for the runner's and the results' units.

Values are drawn from a seeded generator; `speed` scales every benchmark (2.0 = twice as
fast: half the time, twice the bandwidth), so the expected verdicts are known.
"""
from __future__ import annotations

import random

from osmeter.running.catalog import Catalog
from osmeter.data.model import Result, Run, Sample
from osmeter.stats import summarize


def fake_catalog() -> Catalog:
    """Benchmarks "a" and "b" (10 and 20 s per repetition), one latency metric each."""
    def bench(bid, est):
        return {"id": bid, "est_seconds": est, "params": [], "suites": [],
                "metrics": [{"name": "latency", "unit": "ns", "better": "lower",
                             "shape": "point", "x_name": None}]}
    return Catalog([bench("a", 10), bench("b", 20)])


def _result(bench, metric, unit, better, shape, values_by_rep, x=None, x_name=None,
            points=None, params=None):
    samples = []
    if points is not None:                      # scatter: (rep, x, value)
        samples = [Sample(r, px, v) for r, px, v in points]
    else:
        for rep, vals in enumerate(values_by_rep):
            samples += [Sample(rep, x, v) for v in vals]
    return Result(bench=bench, metric=metric, unit=unit, better=better, shape=shape, x=x,
                  x_name=x_name, params=dict(params or {"samples": "5"}), samples=samples,
                  summary=summarize(samples))


def make_run(run_id: str, label: str | None = None, speed: float = 1.0, seed: int = 1,
             reps: int = 5, per_rep: int = 5, noise: float = 0.01, smoke: bool = False,
             kernel: str = "6.1.0-18-amd64", cpu_rate: float = 8000.0,
             curve_class: str = "O(1)", slope: float = 0.0, host: str | None = None,
             cpu_model: str = "Synthetic CPU", started: str | None = None) -> Run:
    rng = random.Random(seed)

    def draw(base: float, better: str) -> list[list[float]]:
        centre = base / speed if better == "lower" else base * speed
        out = []
        for _ in range(reps):
            rep_shift = rng.gauss(1.0, noise)
            out.append([centre * rep_shift * rng.gauss(1.0, noise / 2) for _ in range(per_rep)])
        return out

    results = [
        _result("syscall.getpid", "latency", "ns", "lower", "point", draw(55.0, "lower")),
        _result("syscall.read", "latency", "ns", "lower", "point", draw(120.0, "lower")),
        _result("ctx.pipe_pingpong", "round_trip", "ns", "lower", "point",
                draw(7000.0, "lower")),
        _result("fs.openclose", "foo", "ns", "lower", "point", draw(900.0, "lower")),
        _result("fs.openclose", "a/b/c/foo", "ns", "lower", "point", draw(1500.0, "lower")),
        _result("cpu.integer", "rate", "Mops/s", "higher", "point",
                [[cpu_rate * rng.gauss(1.0, noise / 4) for _ in range(per_rep)]
                 for _ in range(reps)]),
    ]
    for size, bw in ((4096, 40000.0), (65536, 30000.0), (1 << 20, 15000.0),
                     (1 << 24, 8000.0)):
        results.append(_result("mem.read", "bandwidth", "MB/s", "higher", "sweep",
                               draw(bw, "higher"), x=size, x_name="bytes",
                               params={"sizes": "4k-16m"}))
    pts = []
    for rep in range(3):
        for n in range(0, 2000, 20):
            base = (20000.0 + slope * n) / speed
            pts.append((rep, n, base * rng.gauss(1.0, 0.05)))
    scat = _result("scale.fork", "latency", "ns", "lower", "scatter", None,
                   x_name="processes", points=pts)
    scat.extra["curve"] = {"class": curve_class, "slope_ns_per_object": slope / speed,
                           "intercept_ns": 20000.0 / speed, "r2": 0.9, "disagree": False}
    results.append(scat)
    derived = Result(bench="fs.openclose", metric="per_component", unit="ns", better="lower",
                     shape="derived", summary={"n": 1, "median": 200.0 / speed,
                                               "ci_low": 200.0 / speed, "ci_high": 200.0 / speed})
    results.append(derived)
    sysinfo = {"os": {"name": "Debian GNU/Linux", "version": "12"},
               "kernel": {"name": "Linux", "release": kernel},
               "cpu": {"model": cpu_model, "cores": 2, "threads": 2,
                       "caches": [{"level": 1, "size": "32K"}, {"level": 2, "size": "1M"}]},
               "libc": {"name": "glibc", "version": "2.36"}, "uptime_s": rng.random() * 1000,
               "mitigations": {"spectre_v2": "Mitigation: Retpolines"}}
    if host is not None:
        sysinfo["hostname"] = host
    return Run(id=run_id, label=label, started=started or "2026-11-22T08:%02d:00Z" % seed,
               status="complete",
               suite="quick", smoke=smoke, osmeter_version="0.1.0", sysinfo=sysinfo,
               environment={"load": [0.1, 0.1], "warnings": []}, results=results)
