"""`osmeter noise RUN RUN ... --name NAME`: record how much runs of one system differ.

Several runs of the same system (e.g. `osmeter run --label nightly` made on different
days or after reboots; a label given here stands for every run with that label) give
the between-run variation of every benchmark.  It is stored under NAME (and written to
a file with -o, e.g. for CI) and used by `osmeter compare --noise NAME`.
"""
from __future__ import annotations

import json
import math
import sys

from ..report.width import fit_lines
from ..report import display
from ..analysis import noise
from ..data import exchange, writes
from .common import RunSource, add_where, fail, load_run_ref, open_store


def register(subparsers) -> None:
    s = subparsers.add_parser(
        "noise", help="estimate between-run noise from repeated runs of one system",
        description="Estimate how much repeated runs of one system differ, per benchmark, "
                    "store it as a noise profile and use it with compare --noise NAME.  "
                    "Give five or more runs made at different times (a label names every "
                    "run with that label).")
    s.add_argument("runs", nargs="*", metavar="RUN", help="runs of one system (ids, labels, "
                   "files); at least two")
    add_where(s)
    s.add_argument("--name", help="store the profile under this name (default: the runs' "
                   "common label)")
    s.add_argument("-o", "--output", metavar="FILE", help="also write the profile to FILE "
                   "(compare --noise FILE reads it)")
    s.add_argument("--list", action="store_true", help="list stored noise profiles")
    s.add_argument("--show", metavar="NAME|FILE", help="print a stored profile")
    s.add_argument("--json", action="store_true", help="print the profile as JSON")
    s.set_defaults(func=handle)


def expand(refs: list[str], store) -> list[str]:
    """Run references with every label that several runs share expanded to all of them."""
    out = []
    for ref in refs:
        ids = store.runs_labelled(ref)
        out += ids if len(ids) > 1 else [ref]
    return out


def handle(args) -> int:
    store = open_store(args, readonly=args.list or args.show is not None)
    if args.list:
        if args.runs or args.show or args.where:
            return fail("--list takes no runs")
        profiles = store.list_noise()
        if not profiles:
            print("no noise profiles stored in %s (record one: osmeter noise RUN RUN ...)"
                  % store.location)
        rows = [[p["name"], p["created"], str(len(p["runs"])), ", ".join(p.get("hosts") or []),
                 "smoke" if p.get("smoke") else ""] for p in profiles]
        if rows:
            print(display.table(rows, ["name", "created", "runs", "hosts", ""]))
        return 0
    try:
        if args.show:
            if args.runs or args.where:
                return fail("--show takes no runs")
            profile = noise.load(args.show, args.db)
        else:
            refs = expand(args.runs, store)
            if args.where:
                with RunSource(args.db) as source:
                    refs += [i for i in source.selected_ids(args.where) if i not in refs]
            if len(refs) < 2:
                return fail("give at least two runs of the same system (or a label that "
                            "several runs share); five or more give a usable estimate")
            runs = [load_run_ref(r, args.db) for r in refs]
            name = exchange.check_name(args.name, "--name") or _common_label(runs)
            if not name:
                return fail("the runs have different labels: name the profile with --name")
            profile = noise.estimate(runs, name)
            store.save_noise(profile.name, profile.created, profile.to_dict())
            if args.output:
                writes.write_file(args.output, json.dumps(profile.to_dict(), indent=1) + "\n")
    except noise.NoiseError as e:
        return fail(str(e))
    if args.json:
        json.dump(profile.to_dict(), sys.stdout, indent=1)
        print()
    else:
        print(describe(profile))
    if not args.show:
        print("stored as noise profile %r in %s; use it: osmeter compare A B --noise %s"
              % (profile.name, store.location, profile.name), file=sys.stderr)
    return 0


def _common_label(runs) -> str | None:
    labels = {r.label for r in runs}
    return labels.pop() if len(labels) == 1 and None not in labels else None


def describe(profile) -> str:
    """The profile as a table: between-run against within-run variation per benchmark."""
    lines = ["noise profile %s: %d runs (%s), hosts %s, created %s" % (
        profile.name, len(profile.runs), ", ".join(profile.runs), ", ".join(profile.hosts),
        profile.created)]
    if len(set(profile.hosts)) > 1:
        lines.append("warning: the runs come from several hosts: the profile mixes "
                     "machines")
    if len(profile.runs) < 5:
        lines.append("note: %d runs give a rough estimate (%d degrees of freedom); "
                     "intervals that use it are wide accordingly" % (
                         len(profile.runs), len(profile.runs) - 1))
    rows = []
    for key, c in sorted(profile.components.items()):
        kind, _, what = key.partition(":")
        if kind == "metric":
            continue
        label = what.replace("|", " ").strip() if kind == "row" else "index " + what
        rows.append([label, "%.2f%%" % (100 * math.sqrt(c.tau2)),
                     "%.2f%%" % (100 * c.within) if kind == "row" else "",
                     "between dominates" if kind == "row" and c.tau2 > c.within ** 2 else ""])
    lines.append(display.table(rows, ["benchmark", "between runs", "within a run", ""],
                               right={1, 2}))
    lines.append("between runs: standard deviation of a run's mean log value beyond what "
                 "its repetitions explain; within a run: of one repetition's median (both "
                 "relative).")
    return "\n".join(fit_lines("\n".join(lines).split("\n")))
