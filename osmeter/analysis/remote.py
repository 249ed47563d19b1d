"""Local and remote file systems: where a result ran, and Ousterhout's remote penalty.

Ousterhout (1990) and Lai & Baker (1996) ran the file-system experiments on a local disk
and on a network file system.  A file-system benchmark notes the type of the file system
it worked in (`fs_type`), and a run made with `--dir` records what fsinfo saw of that
directory (`sysinfo.variant.filesystem`, with `remote`).  `where(run, result)` reads
them; `penalties(runs)` pairs every local result with every remote result of the same
experiment (mab.remote is mab.local on a network file system) and computes O90 Table 8's
remote penalty, the percentage slow-down with a remote disk instead of a local one:

    remote_penalty_pct = 100 * (T_remote - T_local) / T_local
"""
from __future__ import annotations

from dataclasses import dataclass

# Experiments that run the same in a local and a remote directory (O90 Tables 7-10).
SAME_EXPERIMENT = {"mab.remote": "mab.local"}
TIME_UNITS = ("ns", "us", "ms", "s")


def penalty_pct(t_local: float, t_remote: float) -> float:
    """Ousterhout's remote penalty (O90 Table 8): 100 * (T_remote - T_local) / T_local."""
    return 100.0 * (t_remote - t_local) / t_local


def where(run, result) -> str | None:
    """"remote" or "local" for a result that worked in a directory, else None."""
    from ..system import fsinfo
    notes = result.notes or {}
    fs_type = notes.get("fs_type")
    if fs_type is None:
        return None
    variant = (run.sysinfo or {}).get("variant") or {}
    fs = variant.get("filesystem") or {}
    if variant.get("dir") and (result.params or {}).get("dir") == variant["dir"] \
            and "remote" in fs:
        return "remote" if fs["remote"] else "local"
    if isinstance(fs_type, list):          # repetitions disagree: say nothing
        return None
    return "remote" if fsinfo.is_remote(fs_type) else "local"


@dataclass
class Penalty:
    bench: str           # the local experiment's id (mab.local for mab.remote)
    metric: str
    x: float | None
    unit: str
    local_run: int       # index into the runs
    remote_run: int
    local: float         # medians
    remote: float
    pct: float

    @property
    def label(self) -> str:
        s = "%s %s" % (self.bench, self.metric)
        return s if self.x is None else "%s [%g]" % (s, self.x)


def penalties(runs: list) -> list[Penalty]:
    """The remote penalty of every remote result against every local result of the same
    experiment (time metrics), across the runs and within each run."""
    local, far = [], []
    for i, run in enumerate(runs):
        for r in run.results:
            if r.status != "ok" or r.unit not in TIME_UNITS or r.better != "lower":
                continue
            v = r.median
            w = where(run, r)
            if v is None or v <= 0 or w is None:
                continue
            key = (SAME_EXPERIMENT.get(r.bench, r.bench), r.metric, r.x)
            (far if w == "remote" else local).append((key, i, v, r.unit))
    out = []
    for key, i, t_local, unit in local:
        for rkey, j, t_remote, runit in far:
            if rkey == key and runit == unit:
                out.append(Penalty(key[0], key[1], key[2], unit, i, j, t_local, t_remote,
                                   penalty_pct(t_local, t_remote)))
    return out
