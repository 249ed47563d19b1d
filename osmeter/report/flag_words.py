"""The words and marks of a flag: what a result's warning is called in a table (its tag),
what the tag means with what to do, and the one-character mark of a row.  The vocabulary
every renderer shares (display.py's terminal summary, report/'s tables and HTML); what
the flags are and when a result gets one is flags.py."""
from __future__ import annotations

import re

from ..analysis import flags

DISTURBED_MARK = "!"
IMPRECISE_MARK = "~"
FAILED_MARK = "x"
UNRELIABLE_MARK = DISTURBED_MARK     # results of older versions: "unreliable", one mark

# How a flag is shown in a table: its tag by reason, and the tag's meaning with what to
# do.  The full text stays in `osmeter show` and the report.
FLAG_TAGS = {
    flags.OTHER_PROCESSES: ("busy", "other processes took CPU time from the benchmark: "
                            "quiet the machine and run again"),
    flags.STEAL: ("steal", "the hypervisor stole more CPU time than this machine's at "
                  "rest: run again later, or on dedicated vCPUs"),
    flags.CLOCK: ("clock", "the CPU clock changed: fix the governor, turn turbo off "
                  "(osmeter check)"),
    flags.THROTTLING: ("throttled", "the CPU was throttled for heat: let it cool"),
    flags.SPREAD: ("imprecise", "its run-to-run spread is above what its kind of "
                   "benchmark reaches at rest: more repetitions (--repetitions 10) or a longer "
                   "preset"),
    flags.FAILED_REPETITIONS: ("incomplete", "some repetitions failed; the rest were used"),
}
MARKS = {flags.DISTURBED: DISTURBED_MARK, flags.IMPRECISE: IMPRECISE_MARK,
         flags.INCOMPLETE: DISTURBED_MARK, flags.UNRELIABLE: UNRELIABLE_MARK}

# Warnings stored as plain strings by older versions: (pattern at its start, tag, meaning).
LEGACY_TAGS = (
    (r"noisy:", "noisy", "run-to-run variation above 5% (the CV column)"),
    (r"only \d+ repetitions?", "few-reps", "fewer than 3 repetitions: the interval is weak "
     "or missing"),
    (r"\d+ of \d+ repetitions did not complete", "incomplete",
     "some repetitions failed; the rest were used"),
    (r"other processes used", "busy", "other processes used the CPUs meanwhile"),
    (r"the hypervisor stole", "steal", "the hypervisor took CPU time meanwhile"),
    (r"the CPU clock varied", "clock", "the CPU clock frequency changed meanwhile"),
)
CURVE_TAGS = {
    "disagree": "the repetitions' curves differ",
    "limit": "the curve stopped at a system limit before its last size",
}


def tag_of(warning) -> tuple[str, str]:
    """(tag, meaning) of one stored warning: a flag by its reason, an old plain string by
    its words."""
    f = flags.read(warning)
    if not f.legacy and f.reason in FLAG_TAGS:
        return FLAG_TAGS[f.reason]
    for pattern, tag, meaning in LEGACY_TAGS:
        if re.match(pattern, f.text):
            return tag, meaning
    head = f.text.split(":", 1)[0]
    head = head if len(head) <= 16 else " ".join(f.text.split()[:2])
    return head.replace(" ", "-"), f.text


def mark_of(results) -> str:
    """The row's mark: disturbed (or unreliable, old runs) before imprecise."""
    standings = {flags.standing(r) for r in results}
    for kind in (flags.DISTURBED, flags.INCOMPLETE, flags.UNRELIABLE, flags.IMPRECISE):
        if kind in standings:
            return MARKS[kind]
    return " "


MARK_WORDS = {
    flags.DISTURBED: "disturbed: something outside the benchmark interfered enough to "
                     "change a verdict",
    flags.IMPRECISE: "imprecise: its own spread is too large for the precision it claims",
    flags.INCOMPLETE: "some repetitions failed",
    flags.UNRELIABLE: "unreliable (an older osmeter's judgement)",
}
