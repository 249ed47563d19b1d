"""`osmeter help [COMMAND]`: a command's --help (osmeter's own without one), and where
to read on about a topic of the docs/ pages."""
from __future__ import annotations

from ..base import suggest
from .common import UsageError, subcommands

# Topic -> the page that explains it (docs/ in the source tree and on the project's site).
TOPICS = {
    "flags": "docs/measurement.md (disturbed and imprecise: what sets them, what to do)",
    "intervals": "docs/statistics.md (the interval of a median and its level)",
    "verdicts": "docs/statistics.md (better, worse, same, cannot tell)",
    "gate": "docs/ci.md and docs/statistics.md (the regression gate)",
    "noise": "docs/statistics.md (between-run noise, osmeter noise)",
    "formats": "docs/formats.md (export formats)",
    "suite-files": "docs/suite-files.md (your own suite)",
    "portability": "docs/portability.md (systems, --core, building elsewhere)",
    "figures": "README.md, Measured figures (how long a suite takes, and more)",
}


def register(subparsers) -> None:
    s = subparsers.add_parser("help", help="a command's help, or where a topic is explained",
                              description="Print a command's help (osmeter help compare), "
                              "or name the page that explains a topic: %s."
                              % ", ".join(TOPICS))
    s.add_argument("topic", nargs="?", metavar="COMMAND|TOPIC")
    s.set_defaults(func=handle)


def handle(args) -> int:
    parser = args.make_parser()
    if not args.topic:
        parser.print_help()
        return 0
    commands = subcommands(parser)
    if args.topic not in commands and args.topic not in TOPICS:
        raise UsageError("no command or topic '%s'%s (commands: osmeter --help; topics: %s)"
                         % (args.topic, suggest.did_you_mean(args.topic, list(commands)
                                                             + list(TOPICS)),
                            ", ".join(TOPICS)))
    if args.topic in commands:           # a command that is a topic too: both
        commands[args.topic].print_help()
    if args.topic in TOPICS:
        print("%s: %s" % (args.topic, TOPICS[args.topic]))
    return 0
