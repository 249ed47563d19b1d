"""Command-line interface: builds the parser from the subcommands and dispatches.

Each subcommand is a module in osmeter/commands/ with `register(subparsers)`, which adds
its parser and `set_defaults(func=handle)`; what they share is commands/common.py.
"""
from __future__ import annotations

import argparse
import sys

from . import __version__, coreproc, exchange, user_command
from .catalog import CatalogError
from .commands import (check, compare, delete, export_import, list_benchmarks, noise, report,
                       run, runs, serve, show, sysinfo)
from .commands.common import EXIT_INTERRUPTED, UsageError, fail
from .store import StoreError, default_db_path

# In the order `osmeter --help` lists them.
COMMANDS = (list_benchmarks, check, run, runs, show, export_import, delete, sysinfo, compare,
            noise, report, serve)


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="osmeter", description="Portable operating-system "
                                "benchmarks, after the classic OS comparison studies.")
    p.add_argument("--version", action="version", version="osmeter " + __version__)
    p.add_argument("--db", default=None, help="results database (default $OSMETER_DB or %s)"
                   % default_db_path())
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return p


def main(argv=None) -> int:
    parser = make_parser()
    argv, command_words = user_command.split_argv(sys.argv[1:] if argv is None else list(argv))
    args = parser.parse_args(argv)
    args.user_command = command_words
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (UsageError, CatalogError, StoreError, exchange.ExchangeError,
            coreproc.CoreError) as e:
        return fail(str(e))
    except KeyboardInterrupt:
        return fail("interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
