"""Memory family analysis: the cache levels of a bandwidth or latency curve.

A curve of bandwidth (or load latency) over buffer size is a staircase: flat while the
buffers fit in one cache level, a drop (rise) where they stop fitting, flat again.
`derive` reports one result per cache level the machine reports (sysinfo), named after
the level, not after what a detector found in one run's curve: `<metric>.plateau.L1`,
`.L2`, `.L3` (up to the last level) and `.memory`, the curve's value at the sizes well
inside that level (`level_windows`), so that two runs of one machine have the same rows.
`find_plateaus` cuts the curve into flat pieces, and each level result carries where the
curve breaks near that cache's size, next to the size the system reports.

Method: the curve is segmented in log space (log size, log value) by dynamic
programming: the segmentation that minimises the squared deviation of each point from
its segment's mean plus a penalty per segment (a BIC-like penalty scaled by the noise,
which is estimated from neighbouring differences).  Segments of a single point are
transitions (a point half-way down a step) or outliers; neighbouring segments whose
levels differ by less than `min_step` are one plateau.  A plateau's value is the median
of its points; it breaks where the curve crosses the geometric mean of its level and the
next one's (interpolated in log-log).
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path

from .. import flags, precision
from ... import stats
from ...data.model import Result, Sample

SYS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")

PENALTY = 5.0  # per segment, in units of noise variance x log(points)

BUFFER_X = "buffer_bytes"   # the x of the sweeps analysed here: the buffer size in bytes
# Benchmarks whose footprint is two buffers of the swept size (source and destination).
TWO_BUFFERS = {"mem.copy", "mem.copy_prefetch", "mem.copy_nt", "mem.memcpy"}


# ---- cache sizes ----------------------------------------------------------------------

def _parse_size(text: str) -> int:
    text = text.strip()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(text[:-1] if mult > 1 else text) * mult


def read_sys_caches(root: Path = SYS_CACHE) -> list[dict]:
    """The caches of cpu0 as [{"level", "type", "size"}] from Linux /sys; [] elsewhere."""
    caches = []
    for index in sorted(root.glob("index*")):
        try:
            caches.append({"level": int((index / "level").read_text()),
                           "type": (index / "type").read_text().strip(),
                           "size": _parse_size((index / "size").read_text())})
        except (OSError, ValueError):
            continue
    return caches


def data_caches(sysinfo: dict | None) -> list[dict]:
    """Data and unified caches, smallest level first: from sysinfo, else from /sys."""
    caches = ((sysinfo or {}).get("cpu") or {}).get("caches") or read_sys_caches()
    by_level = {}
    for c in caches:
        try:
            level, size = int(c["level"]), int(c["size"])
        except (KeyError, TypeError, ValueError):
            continue
        if c.get("type") != "Instruction" and size > 0:
            by_level[level] = {"level": level, "type": c.get("type"), "size": size}
    return [by_level[k] for k in sorted(by_level)]


# ---- segmentation ---------------------------------------------------------------------

def _noise(z: list[float]) -> float:
    """Robust standard deviation of one point, from the differences between neighbours
    (sqrt(2) sigma each): the smaller of two estimates, their median absolute deviation
    (efficient when steps are few among many points) and their lower quartile in
    absolute value (0.3186 sigma for a Gaussian; untouched even when every other
    difference is a step, as on a curve with two sizes per cache level)."""
    d = [b - a for a, b in zip(z, z[1:])]
    if len(d) < 2:
        return 0.0
    med = statistics.median(d)
    mad = 1.4826 * statistics.median(abs(x - med) for x in d)
    q1 = sorted(abs(x) for x in d)[(len(d) - 1) // 4] / 0.3186
    return min(mad, q1) / math.sqrt(2)


def _median3(z: list[float]) -> list[float]:
    """Running median of three (of the first and last three at the ends): removes a lone
    outlier, keeps a step where it is."""
    if len(z) < 3:
        return list(z)
    ends = [statistics.median(z[:3]), statistics.median(z[-3:])]
    return [ends[0]] + [statistics.median(z[i - 1:i + 2]) for i in range(1, len(z) - 1)] \
        + [ends[1]]


def _segment(z: list[float], penalty: float) -> list[tuple[int, int]]:
    """Optimal partition of z into [start, end) runs: min sum of SSE + penalty each."""
    n = len(z)
    s1 = [0.0] * (n + 1)
    s2 = [0.0] * (n + 1)
    for i, v in enumerate(z):
        s1[i + 1] = s1[i] + v
        s2[i + 1] = s2[i] + v * v

    def sse(i, j):
        m = j - i
        return max(0.0, s2[j] - s2[i] - (s1[j] - s1[i]) ** 2 / m)

    best = [0.0] + [math.inf] * n
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            c = best[i] + sse(i, j) + penalty
            if c < best[j]:
                best[j], cut[j] = c, i
    runs, j = [], n
    while j > 0:
        runs.append((cut[j], j))
        j = cut[j]
    return runs[::-1]


def find_plateaus(xs, ys, min_points: int = 2, min_step: float = 0.15,
                  noise_floor: float = 0.02) -> list[dict]:
    """Plateaus of the curve ys(xs) (xs > 0, ys > 0), smallest x first.

    Each is {"first_x", "last_x", "value", "n", "min", "max", "xs", "break_x"}, where
    `value` is the median of its points and `break_x` the size at which the curve leaves
    it for the next plateau (None for the last).  `min_step` is the smallest relative
    difference between two neighbouring plateaus; `noise_floor` the smallest relative
    noise assumed (so a perfectly clean curve is not cut at every point).
    """
    pts = sorted((float(x), float(y)) for x, y in zip(xs, ys) if x > 0 and y > 0)
    if len(pts) < 2 * min_points:
        return []
    lx = [math.log(x) for x, _ in pts]
    raw = [math.log(y) for _, y in pts]
    z = _median3(raw)
    sigma = max(_noise(raw), noise_floor)
    runs = _segment(z, penalty=PENALTY * sigma * sigma * math.log(len(z)))
    # On a dense curve (steps under a factor of 2) a short run between two others is
    # points on the way down a step, not a plateau; at either end of the curve there is
    # no step to be on, and on a sparse one a step leaves no points on the way.
    dense = statistics.median(b - a for a, b in zip(lx, lx[1:])) < math.log(1.9)
    runs = [r for r in runs
            if r[1] - r[0] >= min_points + (dense and 0 < r[0] and r[1] < len(z))]
    level = lambda r: statistics.median(z[r[0]:r[1]])  # noqa: E731
    # Neighbours at (nearly) the same level are one plateau cut by noise or an outlier.
    step = math.log1p(min_step)
    merged = True
    while merged and len(runs) > 1:
        merged = False
        gaps = [abs(level(a) - level(b)) for a, b in zip(runs, runs[1:])]
        k = min(range(len(gaps)), key=gaps.__getitem__)
        if gaps[k] < step:
            runs[k:k + 2] = [(runs[k][0], runs[k + 1][1])]
            merged = True
    plateaus = []
    for r in runs:
        vals = [y for _, y in pts[r[0]:r[1]]]
        plateaus.append({"first_x": pts[r[0]][0], "last_x": pts[r[1] - 1][0],
                         "value": statistics.median(vals), "n": len(vals),
                         "min": min(vals), "max": max(vals),
                         "xs": [x for x, _ in pts[r[0]:r[1]]], "break_x": None,
                         "_run": r})
    for a, b in zip(plateaus, plateaus[1:]):
        a["break_x"] = _crossing(lx, z, a["_run"], b["_run"],
                                 (math.log(a["value"]) + math.log(b["value"])) / 2)
    for p in plateaus:
        del p["_run"]
    return plateaus


def _crossing(lx, z, ra, rb, mid):
    """x where z first crosses `mid` going from run ra to run rb (log-log interpolation)."""
    up = z[rb[0]] > mid
    for i in range(ra[1] - 1, rb[0]):
        if (z[i + 1] > mid) == up and (z[i] > mid) != up:
            t = (mid - z[i]) / (z[i + 1] - z[i])
            return math.exp(lx[i] + t * (lx[i + 1] - lx[i]))
    return math.sqrt(math.exp(lx[ra[1] - 1]) * math.exp(lx[rb[0]]))  # noisy: halfway


# ---- naming plateaus after cache levels -----------------------------------------------

def label_plateaus(plateaus: list[dict], caches: list[dict], buffers: int = 1) -> None:
    """Add "label" (L1, L2, ..., memory) and, where it breaks, the reported cache nearest
    to the break.  `buffers` is how many buffers of the swept size the benchmark touches,
    so that a copy's plateau is matched by its footprint, not by its x.

    A plateau is named after the size range (0, L1], (L1, L2], ..., (LLC, inf) in which
    its inner half lies (on a log scale), "L1-L2" when that half straddles two; the last
    plateau of a curve that goes well past the last-level cache is memory.  The names
    are a reading aid; the break sizes next to the reported cache sizes are the finding.
    """
    bounds = [float(c["size"]) for c in caches]
    names = ["L%d" % c["level"] for c in caches] + ["memory"]
    where = lambda fp: names[sum(fp > b for b in bounds)]  # noqa: E731
    for i, p in enumerate(plateaus):
        lo, hi = p["first_x"] * buffers, p["last_x"] * buffers
        p["footprint_bytes"] = [lo, hi]
        if not caches:
            p["label"] = None
        elif i == len(plateaus) - 1 and hi >= 2 * bounds[-1]:
            p["label"] = "memory"
        else:
            a, b = where(lo ** 0.75 * hi ** 0.25), where(lo ** 0.25 * hi ** 0.75)
            p["label"] = a if a == b else "%s-%s" % (a, b)
        if p["break_x"] is not None and caches:
            fp = p["break_x"] * buffers
            near = min(caches, key=lambda c: abs(math.log(fp / c["size"])))
            p["break_footprint_bytes"] = fp
            p["nearest_cache"] = {"level": near["level"], "size": near["size"],
                                  "ratio": fp / near["size"]}
    seen = {}
    for p in plateaus:  # two plateaus in one level (a noisy step): keep both, numbered
        if p["label"] is not None:
            seen[p["label"]] = seen.get(p["label"], 0) + 1
            if seen[p["label"]] > 1:
                p["label"] += "#%d" % seen[p["label"]]


# ---- the front-end hook ---------------------------------------------------------------

def _centre(r: Result) -> float | None:
    if r.summary.get("median") is not None:
        return float(r.summary["median"])
    vals = [s.value for s in r.samples]
    return statistics.median(vals) if vals else None


# A footprint is well inside a cache level from 1/32 to 1/4 of its size, and at least
# twice the level below: nearer its size the curve already slides to the next level
# (associativity, page tables, the program's other data, and a cache shared with other
# cores or other guests: this project's VM reports its host's 260 MiB L3, and its read
# bandwidth falls to memory's from 64 MiB on), nearer the level below it still rides on
# that one, and the smallest buffers show the loop's own overhead.  Levels closer than
# that (L2 of 256 KiB over an L1 of 48 KiB) keep what lies between twice the level below
# and half their size.  Memory is from twice the last level's size on.  A level 16 times
# the one below or more (most) gets a window of a factor of two or more, which holds a
# power of two: the quick suite's sizes reach it.
INSIDE_FROM, INSIDE_TO, MEMORY_FROM = 1 / 32, 1 / 4, 2.0
MEMORY = "memory"


def level_windows(caches: list[dict]) -> list[tuple[str, float, float]]:
    """(label, smallest, largest footprint in bytes) well inside each data cache level,
    smallest level first, then memory ([] when the caches are not known)."""
    windows, below = [], 0.0
    for c in caches:
        size = float(c["size"])
        lo, hi = max(INSIDE_FROM * size, 2 * below), INSIDE_TO * size
        if lo > hi:
            lo, hi = 2 * below, size / 2
        if lo <= hi:
            windows.append(("L%d" % c["level"], lo, hi))
        below = size
    if caches:
        windows.append((MEMORY, MEMORY_FROM * below, math.inf))
    return windows


def derive(bench_id: str, results: list[Result], sysinfo: dict) -> list[Result]:
    """The cache levels of every buffer-size sweep of a mem.* benchmark.

    Returns one derived Result per cache level with a swept size well inside it: metric
    "<metric>.plateau.<level>" (L1, L2, ..., memory), in each repetition the median over
    those sizes, and in extra the sizes it used, the cache, and where the curve breaks
    near that cache's size (find_plateaus).  Marks each sweep point with
    extra["plateau"]: the level it counts in, or None.  No cache sizes known: none.
    """
    if not bench_id.startswith("mem."):
        return []
    caches = data_caches(sysinfo)
    buffers = 2 if bench_id in TWO_BUFFERS else 1
    by_metric: dict[str, list[Result]] = {}
    for r in results:
        if (r.bench == bench_id and r.shape == "sweep" and r.status == "ok"
                and r.x is not None and r.x_name == BUFFER_X):
            by_metric.setdefault(r.metric, []).append(r)
    derived = []
    for metric, points in by_metric.items():
        points = [p for p in points if _centre(p) is not None]
        # Sizes that are not multiples of 16 show the byte loop's cost, not a cache.
        aligned = [p for p in points if int(p.x) % 16 == 0]
        used = aligned if len(aligned) >= 4 else points
        plateaus = find_plateaus([p.x for p in used], [_centre(p) for p in used])
        label_plateaus(plateaus, caches, buffers)
        breaks = [p for p in plateaus if p.get("break_footprint_bytes")]
        for p in points:
            p.extra["plateau"] = None
        for label, lo, hi in level_windows(caches):
            mine = sorted((p for p in used if lo <= p.x * buffers <= hi), key=lambda p: p.x)
            if not mine:
                continue
            for p in mine:
                p.extra["plateau"] = label
            derived.append(_level_result(bench_id, metric, label, mine, caches, buffers,
                                         (lo, hi), breaks))
    return derived


def _level_result(bench_id, metric, label, mine, caches, buffers, window, breaks) -> Result:
    first = mine[0]
    extra = {"level": label, "first_x": mine[0].x, "last_x": mine[-1].x,
             "xs": [p.x for p in mine], "footprint_bytes": [mine[0].x * buffers,
                                                            mine[-1].x * buffers],
             "window_bytes": [window[0], window[1] if math.isfinite(window[1]) else None],
             "caches": caches, "buffers": buffers, "break_x": None}
    cache = next((c for c in caches if "L%d" % c["level"] == label), None)
    if cache:
        # Where the curve leaves this level: the detector's break nearest its size.
        near = [b for b in breaks if b["nearest_cache"]["level"] == cache["level"]]
        if near:
            b = min(near, key=lambda b: abs(math.log(b["nearest_cache"]["ratio"])))
            extra.update(break_x=b["break_x"], break_footprint_bytes=b["break_footprint_bytes"],
                         nearest_cache=b["nearest_cache"])
    samples = _plateau_samples(mine)
    summary = stats.summarize(samples)
    # Its points' disturbances are its own; its spread is judged anew.
    disturbed = {f.text: f for p in mine for f in flags.of(p) if f.kind != flags.IMPRECISE}
    return Result(bench=bench_id, metric="%s.plateau.%s" % (metric, label), unit=first.unit,
                  better=first.better, shape="derived", params=dict(first.params),
                  samples=samples, summary=summary,
                  warnings=[f.to_dict() for f in list(disturbed.values()) +
                            precision.judge(summary, bench_id, "derived", metric)],
                  extra=extra)


def _plateau_samples(points: list[Result]) -> list[Sample]:
    """The plateau's level in each repetition (the median over its sizes of that
    repetition's median), so that its interval shows what another run would see."""
    by_rep: dict[int, list[float]] = {}
    for p in points:
        per_rep: dict[int, list[float]] = {}
        for s in p.samples:
            per_rep.setdefault(s.rep, []).append(s.value)
        for rep, vals in per_rep.items():
            by_rep.setdefault(rep, []).append(statistics.median(vals))
    if not by_rep:  # summaries without samples: one value per size
        return [Sample(0, None, _centre(p)) for p in points]
    return [Sample(rep, None, statistics.median(v)) for rep, v in sorted(by_rep.items())]


def describe(plateaus: list[dict], unit: str) -> str:
    """One line per plateau, for reports and the cross-check script."""
    lines = []
    for p in plateaus:
        line = "%-8s %10.1f %s  %s..%s" % (p.get("label") or "?", p["value"], unit,
                                           _fmt_bytes(p["first_x"]), _fmt_bytes(p["last_x"]))
        if p["break_x"] is not None:
            line += ", breaks at %s" % _fmt_bytes(p["break_x"])
            near = p.get("nearest_cache")
            if near:
                line += " (footprint %.2f x L%d = %s)" % (near["ratio"], near["level"],
                                                        _fmt_bytes(near["size"]))
        lines.append(line)
    return "\n".join(lines)


def _fmt_bytes(n: float) -> str:
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size:
            return "%.3g%s" % (n / size, unit)
    return "%dB" % n
