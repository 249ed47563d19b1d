"""The user's own command as a benchmark.

    osmeter run cmd --name NAME [--setup CMD] [--cleanup CMD] [--cold-cache] [--warmup N]
                    [--samples N] [--shell] [--cmd-timeout S] [--cmd-output FILE]
                    -- COMMAND [ARGS...]

The core's `cmd.run` times the command as a whole process (wall, user and system time,
peak memory); each repetition (--repetitions) is a separate core process that runs it
`samples` times after `warmup` untimed runs.  Results are stored under the bench id
`cmd.NAME`, so runs of the same named command compare like every other result.  The
command's argv travels to the core as a JSON array: no shell unless --shell.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys

from .catalog import CatalogError
from .plan import PlanItem

CORE_BENCH = "cmd.run"
CLI_WORD = "cmd"          # `osmeter run cmd ...`
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


class CommandError(CatalogError):
    """A one-line problem with a user command (shown as `osmeter: error: ...`); `key`
    names the suite-file key it concerns."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


def split_argv(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """Split `osmeter ... run ... -- COMMAND ARGS` at the first '--' after 'run'."""
    if "run" in argv and "--" in argv and argv.index("run") < argv.index("--"):
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, None


def add_arguments(run_parser) -> None:
    g = run_parser.add_argument_group(
        "your own command",
        "osmeter run cmd --name NAME [options] -- COMMAND [ARGS...] times COMMAND as a whole "
        "process (wall, user and system time, peak memory); its output is discarded")
    g.add_argument("--name", help="name the results are stored under (as cmd.NAME)")
    g.add_argument("--setup", metavar="SHELL-CMD",
                   help="run with /bin/sh before every run of the command, not timed")
    g.add_argument("--cleanup", metavar="SHELL-CMD",
                   help="run with /bin/sh after every run of the command, not timed")
    g.add_argument("--cold-cache", action="store_true",
                   help="sync and drop the page cache before every run (Linux, root)")
    g.add_argument("--warmup", type=int, metavar="N", help="untimed runs first (default 1)")
    g.add_argument("--samples", type=int, metavar="N",
                   help="timed runs in each repetition (default 10; 2 with --smoke)")
    g.add_argument("--shell", action="store_true",
                   help="run COMMAND with /bin/sh -c (its words joined by spaces)")
    g.add_argument("--cmd-timeout", type=int, metavar="S",
                   help="seconds one run may take before the command and its children are "
                   "killed (default 600)")
    g.add_argument("--cmd-output", metavar="FILE",
                   help="append the command's output to FILE instead of discarding it")


_CMD_OPTIONS = ("name", "setup", "cleanup", "cold_cache", "warmup", "samples", "shell",
                "cmd_timeout", "cmd_output")


def plan_items(args) -> list[PlanItem]:
    """The PlanItem for `osmeter run cmd ... -- COMMAND`, or [] when none was asked for."""
    command = getattr(args, "user_command", None)
    wants = CLI_WORD in (args.ids or [])
    if not wants and command is None:
        used = [o for o in _CMD_OPTIONS if getattr(args, o, None) not in (None, False)]
        if used:
            raise CommandError("--%s is for your own command: osmeter run cmd --name NAME "
                               "[options] -- COMMAND ARGS..." % used[0].replace("_", "-"))
        return []
    if not wants:
        raise CommandError("a command after '--' needs the word 'cmd': osmeter run cmd "
                           "--name NAME -- %s" % " ".join(command))
    if not command:
        raise CommandError("osmeter run cmd needs the command after '--': osmeter run cmd "
                           "--name NAME -- COMMAND ARGS...")
    if not args.name:
        raise CommandError("osmeter run cmd needs --name NAME (results are stored as cmd.NAME)")
    return [command_item(args.name, command, shell=args.shell, setup=args.setup,
                         cleanup=args.cleanup, cold_cache=args.cold_cache, warmup=args.warmup,
                         samples=args.samples, timeout=args.cmd_timeout,
                         output=args.cmd_output,
                         preset="smoke" if getattr(args, "smoke", False) else "default")]


def command_item(name: str, command, shell: bool = False, setup: str | None = None,
                 cleanup: str | None = None, cold_cache: bool = False,
                 warmup: int | None = None, samples: int | None = None,
                 timeout: int | None = None, output: str | None = None,
                 preset: str = "default") -> PlanItem:
    """A checked PlanItem for one user command (used by the CLI and by suite files).

    command: a list of words (run directly) or, with shell=True, a string or words that
    /bin/sh -c runs.  Raises CommandError with a one-line reason.
    """
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise CommandError("name %r: use letters, digits and . _ + - (it becomes the "
                           "benchmark id cmd.NAME)" % (name,), "name")
    if "cmd." + name == CORE_BENCH:
        raise CommandError("name 'run' is taken by the core benchmark cmd.run; choose another",
                           "name")
    if isinstance(command, str):
        if not shell:
            raise CommandError("a single string needs shell (it is run by /bin/sh -c); or "
                               "give the words as a list", "run")
        words = [command]
    else:
        words = list(command)
    if not words or not all(isinstance(w, str) for w in words) or not words[0]:
        raise CommandError("the command is empty or not a list of strings", "run")
    if any("\0" in w for w in words):
        raise CommandError("an argument contains a NUL character", "run")
    if shell:
        words = [" ".join(words)]
    elif not find_program(words[0]):
        raise CommandError("command not found: %s" % words[0], "run")
    params = {"argv": json.dumps(words, ensure_ascii=False), "name": name,
              "shell": "yes" if shell else "no"}
    for key, value in (("setup", setup), ("cleanup", cleanup)):
        if value:
            params[key] = value
    if cold_cache:
        problem = cold_cache_problem()
        if problem:
            raise CommandError(problem, "cold_cache")
        params["cold_cache"] = "yes"
    for key, value, low in (("warmup", warmup, 0), ("samples", samples, 1),
                            ("timeout", timeout, 1)):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise CommandError("%s must be an integer >= %d" % (key, low), key)
            params["timeout_s" if key == "timeout" else key] = str(value)
    if output:
        path = os.path.abspath(output)
        if not os.access(os.path.dirname(path), os.W_OK):
            raise CommandError("cannot write output file %s (directory not writable)"
                               % output, "output")
        params["output"] = path
    return PlanItem(bench=CORE_BENCH, params=params, preset=preset, name="cmd." + name)


def find_program(word: str) -> str | None:
    if "/" in word:
        return word if os.path.isfile(word) and os.access(word, os.X_OK) else None
    return shutil.which(word)


def cold_cache_problem() -> str | None:
    """Why --cold-cache cannot work here, or None."""
    if not sys.platform.startswith("linux"):
        return "--cold-cache is only implemented on Linux (/proc/sys/vm/drop_caches)"
    if os.geteuid() != 0:
        return ("--cold-cache needs root: dropping the page cache means writing "
                "/proc/sys/vm/drop_caches")
    return None


def repetition_timeout(catalog, items: list[PlanItem], given: float) -> float:
    """A repetition of a user command runs it warmup + samples times, each bounded by its
    own timeout (and setup/cleanup by the same): never kill the core before that."""
    needed = given
    for item in items:
        if item.bench != CORE_BENCH:
            continue
        def value(key):
            if key in item.params:
                return int(item.params[key])
            p = catalog.param(CORE_BENCH, key)
            return int(p[item.preset if item.preset in ("quick", "smoke") else "default"])
        runs = value("warmup") + value("samples")
        needed = max(needed, runs * 3 * value("timeout_s") + 60)
    return needed
