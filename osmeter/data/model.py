"""The data a run produces, shared by the runner, the store, analysis and reports."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

SCHEMA_VERSION = 1          # of the exported JSON document and the SQLite schema
EXPORT_FORMAT = "osmeter.run"


@dataclass
class Sample:
    rep: int            # which repetition (separate process) produced it, from 0
    x: float | None     # coordinate (buffer size, population) or None
    value: float


@dataclass
class Result:
    """One metric of one benchmark, at one x for sweeps (x None for points and scatters)."""
    bench: str
    metric: str
    unit: str
    better: str                     # "lower" or "higher"
    shape: str                      # point | sweep | scatter | derived
    x: float | None = None
    x_name: str | None = None
    params: dict = field(default_factory=dict)
    status: str = "ok"              # ok | skipped | failed
    reason: str | None = None
    samples: list[Sample] = field(default_factory=list)
    summary: dict = field(default_factory=dict)   # n, median, ci_low, ci_high, cv, ...
    warnings: list[str] = field(default_factory=list)
    notes: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)     # fits, plateaus, derived facts

    @property
    def key(self) -> tuple:
        return (self.bench, self.metric, self.x)

    @property
    def median(self) -> float | None:
        """The summary's median, or the samples' where there is no summary."""
        m = (self.summary or {}).get("median")
        if m is None and self.samples:
            m = statistics.median(s.value for s in self.samples)
        return m

    @property
    def label(self) -> str:
        # "scale.socket", not "scale.socket socket": the metric only when it adds something.
        plain = self.metric in ("latency", "value") or self.bench.split(".")[-1] == self.metric
        s = self.bench if plain else "%s %s" % (self.bench, self.metric)
        if self.x is not None:
            s += " [%s=%s]" % (self.x_name or "x", _fmt_x(self.x))
        return s

    def to_dict(self, with_samples: bool = True) -> dict:
        d = {k: getattr(self, k) for k in (
            "bench", "metric", "x", "x_name", "unit", "better", "shape", "params",
            "status", "reason", "summary", "warnings", "notes", "extra")}
        if with_samples:
            d["samples"] = [[s.rep, s.x, s.value] for s in self.samples]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Result":
        samples = [Sample(int(r), x, float(v)) for r, x, v in d.get("samples", [])]
        return cls(bench=d["bench"], metric=d["metric"], unit=d["unit"], better=d["better"],
                   shape=d["shape"], x=d.get("x"), x_name=d.get("x_name"),
                   params=d.get("params") or {}, status=d.get("status", "ok"),
                   reason=d.get("reason"), samples=samples, summary=d.get("summary") or {},
                   warnings=d.get("warnings") or [], notes=d.get("notes") or {},
                   extra=d.get("extra") or {})


def system_keys(sysinfo: dict) -> dict:
    """What names a run's system in lists, selections and fleet reports: host, kernel
    (release), os (name), arch, cpu (model); None where the run did not record it."""
    def part(key, sub):
        value = sysinfo.get(key)
        return value.get(sub) if isinstance(value, dict) else None
    return {"host": sysinfo.get("hostname"), "kernel": part("kernel", "release"),
            "os": part("os", "name"), "arch": sysinfo.get("arch"), "cpu": part("cpu", "model")}


def _fmt_x(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else "%g" % x


@dataclass
class Run:
    id: str                          # short unique id, e.g. "r20261122-081500-3f2a"
    label: str | None
    started: str                     # ISO 8601 UTC
    finished: str | None = None
    status: str = "running"          # complete | interrupted | failed
    suite: str | None = None
    smoke: bool = False
    command: str = ""
    osmeter_version: str = ""
    sysinfo: dict = field(default_factory=dict)
    environment: dict = field(default_factory=dict)   # monitor: load, steal, busy processes
    results: list[Result] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.label or self.id
