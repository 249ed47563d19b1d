"""`osmeter check`: what on this machine makes results vary, and what to change.

Advice only: nothing is changed.  Exit 0 whatever is found (it is not a gate).
"""
from __future__ import annotations

import json
import sys
import textwrap

from ..running import preflight
from ..report.width import terminal_width


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "check", help="pre-flight check of this machine: what makes results vary",
        description="Reads the CPU frequency governor, turbo/boost, SMT, ASLR, transparent "
                    "huge pages, isolated CPUs, load, power source and hypervisor steal, and "
                    "says what each does to results and what to change.  It never changes "
                    "the system.")
    s.add_argument("--json", action="store_true", help="the findings as JSON")
    s.set_defaults(func=handle)


def handle(args) -> int:
    findings = preflight.check()
    if args.json:
        json.dump([f.to_dict() for f in findings], sys.stdout, indent=1)
        print()
        return 0
    columns = terminal_width()
    print(textwrap.fill("osmeter check: what on this machine makes results vary (advice "
                        "only; nothing is changed)", columns) + "\n")
    topic_w = max(len(f.topic) for f in findings)
    for f in findings:
        head = "%-8s %-*s  " % (f.verdict.upper() if f.verdict != "ok" else "ok", topic_w,
                                f.topic)
        print(textwrap.fill(f.state, columns, initial_indent=head,
                            subsequent_indent=" " * len(head)))
        for label, text in (("effect", f.effect if f.verdict != "ok" else ""),
                            ("change", f.change)):
            if text:
                print(textwrap.fill(text, columns, initial_indent=" " * 9 + label + ": ",
                                    subsequent_indent=" " * 17))
    advice = sum(1 for f in findings if f.verdict == preflight.ADVICE)
    unknown = sum(1 for f in findings if f.verdict == preflight.UNKNOWN)
    print("\n" + textwrap.fill(
        "%d of %d checks give advice, %d cannot be read here.  Whatever is left, osmeter's "
        "intervals and between-run noise (osmeter noise) show what it costs."
        % (advice, len(findings), unknown), columns))
    return 0
