"""`osmeter sysinfo [--json]`: what is recorded about this system with every run."""
from __future__ import annotations

import json
import sys

from ..report.width import fit_table
from ..running import coreproc
from ..system import sysinfo


def register(subparsers) -> None:
    s = subparsers.add_parser("sysinfo", help="describe this system (recorded with every run)")
    s.add_argument("--json", action="store_true",
                   help="the description as JSON (the sysinfo object every run stores)")
    s.set_defaults(func=handle)


def handle(args) -> int:
    try:
        build = coreproc.core_version()
    except coreproc.CoreError:
        build = None
    info = sysinfo.collect(build)
    if args.json:
        json.dump(info, sys.stdout, indent=1)
        print()
        return 0
    rows = []

    def walk(prefix, obj):
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk("%s.%s" % (prefix, k) if prefix else k, v)
        else:
            rows.append([prefix, str(obj)])
    walk("", info)
    print("\n".join(fit_table([["key", "value"]] + rows)))
    return 0
