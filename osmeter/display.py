"""Terminal output: plain-text tables of runs, results and benchmark lists, and the
progress line of a run."""
from __future__ import annotations

import math
import sys
import time

from . import stats
from .model import Result, Run

_NS_STEPS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1, "ns"))


def fmt_number(v: float) -> str:
    if v == 0 or not math.isfinite(v):
        return "%g" % v
    mag = abs(v)
    if mag >= 1e6:
        return "{:,.0f}".format(v)
    digits = max(0, 3 - int(math.floor(math.log10(mag))) - 1)
    return "{:,.{d}f}".format(v, d=min(digits, 4))


def scale_for(value: float, unit: str) -> tuple[float, str]:
    """(divisor, unit) so that a time reads naturally: 1,234,567 ns -> 1.23 ms."""
    if unit == "ns":
        for div, name in _NS_STEPS:
            if abs(value) >= div:
                return div, name
    return 1.0, unit


def fmt_value(value: float, unit: str) -> str:
    div, name = scale_for(value, unit)
    return "%s %s" % (fmt_number(value / div), name)


def fmt_bytes(n: float) -> str:
    for div, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= div:
            return "%s %s" % (fmt_number(n / div), name)
    return "%d B" % n


def table(rows: list[list[str]], header: list[str], right: set[int] = frozenset()) -> str:
    widths = [len(h) for h in header]
    for r in rows:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))
    def line(cells):
        return "  ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i])
                         for i, c in enumerate(cells)).rstrip()
    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def result_row(r: Result) -> list[str]:
    if r.status != "ok":
        return [r.label, r.status, "", "", r.reason or ""]
    s = r.summary
    if r.shape == "scatter":
        curve = r.extra.get("curve") or {}
        desc = curve.get("description") or curve.get("class") or ""
        if curve.get("agree") is False:
            desc += "; repetitions disagree: %s" % "; ".join(curve.get("disagreements") or [])
        if r.notes.get("stopped_by"):
            stops = r.notes["stopped_by"]
            desc += "; stopped by %s" % (stops if isinstance(stops, str) else "; ".join(stops))
        return [r.label, "%s points" % s.get("n", 0),
                "median %s" % fmt_value(s["median"], r.unit), "", desc]
    div, unit = scale_for(s["median"], r.unit)
    interval = interval_text(s, div)
    flag = "UNRELIABLE: " + "; ".join(r.warnings) if r.warnings else ""
    return [r.label, "%s %s" % (fmt_number(s["median"] / div), unit), interval,
            "%.1f%%" % (100 * s.get("cv", 0.0)), flag]


RESULT_HEADER = ["benchmark", "median", "95% interval", "CV", "notes"]


def interval_text(summary: dict, div: float = 1.0) -> str:
    """'[a, b]', with its level where below 95% ('[a, b] 93.8% with 5 repetitions'),
    'bootstrap' for old runs, or why there is none."""
    iv = stats.interval_of(summary)
    if iv is None:
        reps = summary.get("repetitions", 0)
        return "none (%d repetition)" % reps if reps == 1 else "none"
    lo, hi, level, method = iv
    note = stats.level_note(level, method, summary.get("repetitions"))
    return "[%s, %s]%s" % (fmt_number(lo / div), fmt_number(hi / div),
                           " " + note if note else "")


def interval_advice(results: list[Result]) -> str:
    """One line when some interval falls short of 95%: how many repetitions reach it."""
    short = {r.summary.get("repetitions") for r in results
             if r.status == "ok" and r.shape != "scatter" and r.summary.get("repetitions")
             and (r.summary.get("ci_level") is None
                  or r.summary["ci_level"] < stats.LEVEL)
             and r.summary.get("ci_method") != stats.BOOTSTRAP}
    if not short:
        return ""
    need = stats.repetitions_for(stats.LEVEL)
    have = ", ".join("%d repetition%s %s" % (
        n, " gives" if n == 1 else "s give",
        "no interval" if n == 1 else "%s%%" % stats.fmt_percent(
            stats.order_statistic_level(n, 1))) for n in sorted(short))
    return ("Intervals of the median: %s; a 95%% interval needs at least %d repetitions "
            "(--runs %d)." % (have, need, need))


def results_table(results: list[Result], condense_sweeps: bool = False) -> str:
    rows = []
    done_sweeps = set()
    not_run = set()
    for r in results:
        if r.status != "ok":        # a benchmark that did not run: one row, not one per metric
            if (r.bench, r.status) not in not_run:
                not_run.add((r.bench, r.status))
                rows.append([r.bench, r.status, "", "", r.reason or ""])
            continue
        if condense_sweeps and r.shape == "sweep" and r.status == "ok":
            key = (r.bench, r.metric)
            if key in done_sweeps:
                continue
            done_sweeps.add(key)
            pts = [p for p in results if (p.bench, p.metric) == key and p.status == "ok"]
            meds = [p.summary["median"] for p in pts]
            xs = [p.x for p in pts]
            noisy = sum(1 for p in pts if p.warnings)
            rows.append(["%s %s" % (r.bench, r.metric) if r.metric not in ("latency",) else r.bench,
                         "%d points" % len(pts),
                         "%s=%s..%s" % (r.x_name or "x", fmt_number(min(xs)), fmt_number(max(xs))),
                         "", "%s .. %s%s" % (fmt_value(min(meds), r.unit), fmt_value(max(meds), r.unit),
                                             "; %d noisy points" % noisy if noisy else "")])
            continue
        rows.append(result_row(r))
    advice = interval_advice(results)
    return table(rows, RESULT_HEADER, right={1}) + ("\n" + advice if advice else "")


def run_header(run: Run) -> str:
    si = run.sysinfo
    lines = ["run %s%s  (%s, %s%s)" % (run.id, "  label %s" % run.label if run.label else "",
                                       run.status, run.suite or "custom",
                                       ", SMOKE: sizes too small to compare" if run.smoke else ""),
             "  host %s: %s, kernel %s, %s, %s" % (
                 si.get("hostname"), (si.get("os") or {}).get("name"),
                 (si.get("kernel") or {}).get("release"), (si.get("cpu") or {}).get("model"),
                 " ".join(str(v) for v in ((si.get("libc") or {}).get("name"),
                                           (si.get("libc") or {}).get("version")) if v)),
             "  started %s, finished %s" % (run.started, run.finished)]
    variant = si.get("variant")
    if variant:
        lines.append("  variant: %s" % ", ".join("%s=%s" % kv for kv in variant.items()
                                                 if not isinstance(kv[1], dict)))
    for w in (run.environment or {}).get("warnings", []):
        lines.append("  warning: %s" % w)
    return "\n".join(lines)


class Progress:
    """One line on a terminal (bar, current benchmark, ETA); sparse lines otherwise."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done = total, 0
        self.enabled = enabled
        self.tty = enabled and sys.stderr.isatty()
        self.last_line = 0.0
        self.start = time.monotonic()

    def show(self, what: str, remaining_s: float):
        if not self.enabled:
            return
        eta = _fmt_duration(remaining_s)
        if self.tty:
            width = 24
            filled = int(width * self.done / max(1, self.total))
            line = "[%s%s] %d/%d %-34s ETA %s" % ("#" * filled, "-" * (width - filled),
                                                  self.done, self.total, what[:34], eta)
            self._write("\r" + line[:120])
        elif time.monotonic() - self.last_line > 15 or self.done == 0:
            self._write("progress: %d/%d %s, ETA %s\n" % (self.done, self.total, what, eta))
            self.last_line = time.monotonic()

    def finish(self):
        if self.tty:
            self._write("\r" + " " * 120 + "\r")

    def _write(self, text: str):
        """A terminal that hung up (EIO) ends the progress display, not the run."""
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except OSError:
            self.enabled = self.tty = False


def _fmt_duration(s: float) -> str:
    s = max(0, int(s))
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%ds" % s
