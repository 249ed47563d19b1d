"""Selecting stored runs by what they are: `--where KEY=GLOB` wherever a command takes runs.

    osmeter compare --where 'host=web*' --where 'since=2026-11-01' --baseline 'host=ref1'

A condition is KEY=GLOB (shell-style: * ? [...], case-sensitive) or KEY!=GLOB (every run
that does not match).  Conditions on different keys must all hold; several on the same
key are alternatives (`--where host=web1 --where host=web2`: either host).  `since` and
`until` take a date or time in UTC (2026-11-01, 2026-11-01T08:00) or an age (7d, 12h);
`until` with a date alone includes that whole day.  A baseline is named the same way,
with the conditions joined by commas (`--baseline 'host=ref1,kernel=6.1*'`); of several
runs it matches, the latest is the baseline (as a label names its latest run).

The keys come from what every run records: its label, suite and status, and its system
description (host name, kernel release, OS name, architecture, CPU model).
"""
from __future__ import annotations

import datetime as dt
import fnmatch
import re
from dataclasses import dataclass

# key -> what it is matched against, for --help and errors
KEYS = {
    "label": "the run's label",
    "host": "host name",
    "kernel": "kernel release (uname -r)",
    "os": "operating system name (e.g. 'Debian GNU/Linux 12 (bookworm)', 'FreeBSD')",
    "arch": "architecture (uname -m)",
    "cpu": "CPU model",
    "suite": "suite run (quick, full, lb96, ...)",
    "status": "complete, interrupted or failed",
    "smoke": "yes for smoke runs, no for real ones",
    "id": "run id",
    "since": "started at or after this date/time (UTC) or age (7d, 12h)",
    "until": "started at or before this date/time (UTC; a date includes its whole day)",
}
TIME_KEYS = ("since", "until")

HELP = ("select stored runs by what they are: KEY=GLOB or KEY!=GLOB, with KEY one of %s; "
        "repeat for more conditions (different keys: all hold; the same key: any of them), "
        "e.g. --where 'host=web*' --where since=2026-11-01" % ", ".join(KEYS))


class SelectionError(Exception):
    """A condition that cannot be understood, or a selection that matches nothing."""


@dataclass(frozen=True)
class Condition:
    key: str
    pattern: str
    negate: bool = False
    moment: dt.datetime | None = None   # since/until, as an aware UTC time

    def holds(self, run: dict) -> bool:
        if self.key in TIME_KEYS:
            started = parse_time(run.get("started") or "")
            if started is None:
                return False
            return started >= self.moment if self.key == "since" else started <= self.moment
        value = run.get(self.key)
        if self.key == "smoke":
            value = "yes" if value else "no"
        return fnmatch.fnmatchcase("" if value is None else str(value), self.pattern)

    def __str__(self) -> str:
        return "%s%s%s" % (self.key, "!=" if self.negate else "=", self.pattern)


@dataclass(frozen=True)
class Selection:
    conditions: tuple[Condition, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.conditions)

    def __str__(self) -> str:
        return ", ".join(str(c) for c in self.conditions)

    def matches(self, run: dict) -> bool:
        """Whether a run (a dict of Store.list_runs) is selected."""
        by_key: dict[str, list[Condition]] = {}
        for c in self.conditions:
            by_key.setdefault(c.key, []).append(c)
        for conditions in by_key.values():
            wanted = [c for c in conditions if not c.negate]
            if wanted and not any(c.holds(run) for c in wanted):
                return False
            if any(c.holds(run) for c in conditions if c.negate):
                return False
        return True

    def runs(self, store) -> list[dict]:
        """The stored runs it selects, oldest first."""
        return [r for r in store.list_runs() if self.matches(r)]


def is_condition(word: str) -> bool:
    """Whether a word reads as KEY=GLOB with a known key (else it is a run's name: a
    label may contain '=' too)."""
    m = re.match(r"([A-Za-z_]+)\s*!?=", word)
    return m is not None and m.group(1).lower() in KEYS


def parse(specs: list[str] | None, now: dt.datetime | None = None) -> Selection:
    """The conditions of --where options (and of comma-joined ones, for --baseline)."""
    conditions = []
    for spec in specs or []:
        m = re.fullmatch(r"([A-Za-z_]+)\s*(!?=)(.*)", spec, re.S)
        if not m:
            raise SelectionError("'%s' is not a condition: give KEY=GLOB (e.g. host=web*)"
                                 % spec)
        key, op, pattern = m.group(1).lower(), m.group(2), m.group(3).strip()
        if key not in KEYS:
            raise SelectionError("'%s': no key '%s' (one of %s)"
                                 % (spec, key, ", ".join(KEYS)))
        moment = None
        if key in TIME_KEYS:
            if op == "!=":
                raise SelectionError("'%s': %s takes '=' (since and until bound a date "
                                     "range)" % (spec, key))
            moment = parse_bound(pattern, key, now)
            if moment is None:
                raise SelectionError("'%s': not a date or an age (YYYY-MM-DD, "
                                     "YYYY-MM-DDTHH:MM[:SS] in UTC, or Nd / Nh ago)" % spec)
        conditions.append(Condition(key, pattern, op == "!=", moment))
    return Selection(tuple(conditions))


def parse_baseline(word: str) -> Selection:
    """--baseline's conditions, joined by commas: 'host=ref1,kernel=6.1*'."""
    return parse([part for part in word.split(",") if part.strip()])


def parse_time(text: str) -> dt.datetime | None:
    """An ISO 8601 time as an aware UTC datetime (no zone = UTC), or None."""
    try:
        t = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        if t.tzinfo is None:
            t = t.replace(tzinfo=dt.timezone.utc)
        return t.astimezone(dt.timezone.utc)
    except (ValueError, OverflowError):     # not a time, or one beyond year 1..9999 in UTC
        return None


def parse_bound(text: str, key: str, now: dt.datetime | None = None) -> dt.datetime | None:
    """since/until's value: an age (7d, 12h, 30m) or a date/time; `until` with a date
    alone is the end of that day."""
    age = re.fullmatch(r"(\d+)\s*([dhm])", text)
    if age:
        unit = {"d": "days", "h": "hours", "m": "minutes"}[age.group(2)]
        now = now or dt.datetime.now(dt.timezone.utc)
        try:
            return now - dt.timedelta(**{unit: int(age.group(1))})
        except (OverflowError, ValueError):     # before year 1 (or too many digits)
            raise SelectionError("'%s=%s': an age beyond the calendar (before year 1)"
                                 % (key, text)) from None
    moment = parse_time(text)
    if moment is not None and key == "until" and re.fullmatch(r"\d{4}-\d{2}-\d{2}",
                                                              text.strip()):
        try:
            moment += dt.timedelta(days=1) - dt.timedelta(microseconds=1)
        except OverflowError:       # until the last day of year 9999: its end
            moment = dt.datetime.max.replace(tzinfo=dt.timezone.utc)
    return moment
