"""Command-line interface: builds the parser from the subcommands and dispatches.

Each subcommand is a module in osmeter/commands/ with `register(subparsers)`, which adds
its parser and `set_defaults(func=handle)`; what they share is commands/common.py.
"""
from __future__ import annotations

import argparse
import errno
import sys

from . import __version__
from .running import coreproc, user_command
from .data import exchange, selection, writes
from .base import suggest, text
from .running.catalog import CatalogError
from .commands import (check, compare, completion, delete, export_import, fleet, help,
                       history, list_benchmarks, noise, replicate, report, run, runs, serve,
                       show, sysinfo)
from .commands.common import EXIT_INTERRUPTED, UsageError, fail, printable
from .data.store import StoreError, default_location

# Running out of file descriptors, processes or memory is the environment's doing, not a bug.
OUT_OF_RESOURCES = (errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.ENOMEM)

# In the order `osmeter --help` lists them.
COMMANDS = (list_benchmarks, check, run, runs, show, export_import, delete, sysinfo, compare,
            noise, report, replicate, fleet, history, serve, completion, help)


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error told in one line (the usage is one --help away)."""

    def error(self, message):
        self.exit(2, "osmeter: error: %s; see %s --help\n"
                  % (printable(suggest.invalid_choice(message)), self.prog))


def make_parser() -> argparse.ArgumentParser:
    p = Parser(prog="osmeter", description="Portable operating-system "
               "benchmarks, after the classic OS comparison studies.")
    p.add_argument("--version", action="version", version="osmeter " + __version__)
    p.add_argument("--db", default=None, metavar="FILE|URL",
                   help="results database: an SQLite file or postgresql://user@host[:port]/db "
                   "(default $OSMETER_DB or %s)" % default_location())
    # A command that runs another (replicate runs `osmeter run`) calls it through main,
    # never by importing its module.
    p.set_defaults(main=main, make_parser=make_parser)   # completion reads the parser
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return p


def main(argv=None) -> int:
    # A name that is not UTF-8 (or not in the terminal's encoding) is printed \xNN-escaped.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors=text.ERRORS)
    parser = make_parser()
    argv, command_words = user_command.split_argv(sys.argv[1:] if argv is None else list(argv))
    args = parser.parse_args(argv)
    args.user_command = command_words
    if not getattr(args, "func", None):
        parser.print_usage(sys.stderr)
        print("osmeter: error: name a command (osmeter --help lists them)", file=sys.stderr)
        return 2
    stdout = sys.stdout
    sys.stdout = writes.checked_stdout()    # a full disk behind stdout is an error
    try:
        code = args.func(args)
        sys.stdout.flush()
        return code
    except writes.WriteError as e:
        return fail(str(e), 1)
    except (UsageError, CatalogError, StoreError, exchange.ExchangeError,
            coreproc.CoreError, selection.SelectionError) as e:
        return fail(str(e))
    except KeyboardInterrupt:
        return fail("interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        return 0
    except OSError as e:
        if e.errno not in OUT_OF_RESOURCES:
            raise
        return fail("%s: a limit of this process or of the system (ulimit -n, -u, -v)"
                    % (e.strerror or e), 1)
    except MemoryError:
        return fail("out of memory: a limit of this process or of the system (ulimit -v)", 1)
    finally:
        sys.stdout = stdout

if __name__ == "__main__":
    sys.exit(main())
