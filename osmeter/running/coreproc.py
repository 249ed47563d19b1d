"""Driving the C measurement core (core/, the osmeter-core program) from Python: find it,
list its benchmarks, check parameters, run one invocation.

The core speaks JSON Lines (docs/protocol.md).  One call of `invoke()` is one process,
one repetition; the runner calls it repeatedly.

Inside `through(COMMAND)` (osmeter run --core) every one of them runs through a command
instead of the local core: `ssh -p 2222 root@127.0.0.1 /opt/osmeter/osmeter-core`, a
serial-console wrapper, `ip netns exec NS /path/osmeter-core`; the core's arguments are
appended to it.  The target needs nothing but the core: no Python.
"""
from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..base import text

PACKAGE_DIR = Path(__file__).resolve().parent.parent      # osmeter/ (its bin/ when installed)
# The core echoes paths and arguments, which need not be UTF-8: their bytes are kept
# through JSON parsing (surrogateescape) and then shown as \xNN (text.shown).
DECODE = {"encoding": "utf-8", "errors": "surrogateescape"}
REPO_CORE_BUILD = PACKAGE_DIR.parent / "core" / "build"
# The peer's shared secret reaches the core through this variable, never its command line
# (OM_PEER_SECRET_ENV in core/servers/peer.h): `osmeter serve` and `osmeter run --peer`.
SECRET_ENV = "OSMETER_PEER_SECRET"


class CoreError(Exception):
    """The core could not be found or did not speak the protocol."""


def core_dir() -> Path:
    """Where osmeter-core lives: $OSMETER_CORE_DIR, the installed package, or the repo."""
    candidates = []
    if os.environ.get("OSMETER_CORE_DIR"):
        candidates.append(Path(os.environ["OSMETER_CORE_DIR"]))
    candidates += [PACKAGE_DIR / "bin", REPO_CORE_BUILD]
    for d in candidates:
        if (d / "osmeter-core").is_file() and os.access(d / "osmeter-core", os.X_OK):
            return d
    raise CoreError(
        "osmeter-core not found (looked in %s); build it with 'make -C core' or reinstall "
        "with 'pip install .'" % ", ".join(str(c) for c in candidates))


def core_path() -> Path:
    return core_dir() / "osmeter-core"


# The command the core is run through (a list of words), or None for the local core.
_through: list[str] | None = None
_far_sysinfo: dict | None = None     # the far core's sysinfo, within one `through` block


def parse_core_command(command: str) -> list[str]:
    """The words of a --core command, or CoreError saying why it cannot be one."""
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise CoreError("--core %r: %s" % (command, e)) from None
    if not words:
        raise CoreError("--core needs a command that runs osmeter-core")
    if not shutil.which(words[0]):
        raise CoreError("--core: %s is not an executable command here" % words[0])
    return words


@contextlib.contextmanager
def through(command: str | None):
    """Inside the block every core command runs through `command` (None: the local
    core).  The command is checked first; CoreError when it is not one."""
    global _through, _far_sysinfo
    saved = _through, _far_sysinfo
    _through = parse_core_command(command) if command is not None else None
    _far_sysinfo = None
    try:
        yield
    finally:
        _through, _far_sysinfo = saved


def core_command() -> str | None:
    """The --core command in force, as typed (None: the local core)."""
    return shlex.join(_through) if _through else None


def core_args(words: list[str]) -> list[str]:
    """The command line that runs the core with these arguments: the local core, or the
    --core command with them appended.  ssh hands its words to the remote shell, which
    splits them again, so for ssh each is quoted for that shell."""
    if not _through:
        return [str(core_path())] + words
    if os.path.basename(_through[0]) == "ssh":
        words = [shlex.quote(w) for w in words]
    return _through + words


def _where() -> str:
    return " (through %s)" % core_command() if _through else ""


def _run_core(words: list[str]) -> subprocess.CompletedProcess:
    """One short command of the core (version, list, check, sysinfo), or CoreError saying
    why not."""
    try:
        return subprocess.run(core_args(words), capture_output=True, timeout=30, **DECODE)
    except OSError as e:    # e.g. no file descriptor or process left (rlimits)
        raise CoreError("cannot run osmeter-core: %s" % (e.strerror or e)) from None
    except subprocess.TimeoutExpired:
        raise CoreError("osmeter-core %s%s did not answer within 30 s" % (words[0], _where())) from None


def _failed(word: str, out: subprocess.CompletedProcess) -> str:
    return "osmeter-core %s%s failed: %s" % (
        word, _where(), text.shown(out.stderr.strip()) or "exit status %d" % out.returncode)


def _json_answer(words: list[str]):
    """The one JSON document a short core command prints, or CoreError."""
    out = _run_core(words)
    if out.returncode != 0:
        raise CoreError(_failed(words[0], out))
    try:
        return text.shown(json.loads(out.stdout))
    except json.JSONDecodeError:
        raise CoreError("osmeter-core %s%s did not answer in JSON: %r" % (
            words[0], _where(), text.shown(out.stdout.strip())[:200])) from None


def core_version() -> dict:
    return _json_answer(["version"])


def core_sysinfo() -> dict:
    """The raw description of the system the core runs on (`osmeter-core sysinfo`); a
    far core's is asked once inside its `through` block (the ETA and the run both need
    it, and each asking is a round trip)."""
    global _far_sysinfo
    if _through is None:
        return _json_answer(["sysinfo"])
    if _far_sysinfo is None:
        _far_sysinfo = _json_answer(["sysinfo"])
    return _far_sysinfo


def list_benchmarks() -> list[dict]:
    """Every benchmark the core knows, as the dicts of `osmeter-core list`."""
    out = _run_core(["list"])
    if out.returncode != 0:
        raise CoreError(_failed("list", out))
    benches = []
    for line in out.stdout.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            raise CoreError("osmeter-core list%s did not answer in JSON: %r"
                            % (_where(), text.shown(line)[:200])) from None
        obj["suites"] = [s for s in (obj.get("suites") or "").split(",") if s]
        benches.append(obj)
    return benches


def check(bench: str, params: dict) -> str | None:
    """Ask the core whether `bench` accepts these parameters (`osmeter-core check`):
    None, or its one-line reason why not."""
    out = _run_core(["check", bench] + ["%s=%s" % kv for kv in params.items()])
    if out.returncode == 0:
        return None
    err = text.shown(out.stderr.strip())
    return (err.splitlines()[-1] if err else "invalid").replace("osmeter-core: ", "")


@dataclass
class Invocation:
    """What one core process reported."""
    bench: str
    status: str = "failed"           # ok | skipped | failed
    reason: str | None = None        # why skipped / failed
    header: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    samples: list = field(default_factory=list)   # (metric, x, value)
    elapsed_s: float = 0.0
    returncode: int | None = None
    stderr: str = ""

    def values(self, metric: str, x=None) -> list[float]:
        return [v for m, xx, v in self.samples if m == metric and (x is None or xx == x)]


def parse_lines(bench: str, lines) -> Invocation:
    inv = Invocation(bench=bench)
    saw_trailer = False
    for raw in lines:
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = text.shown(json.loads(raw))
        except json.JSONDecodeError:
            inv.status, inv.reason = "failed", "core printed a line that is not JSON: %r" % raw[:200]
            return inv
        kind = obj.get("type")
        if kind == "header":
            inv.header = obj
        elif kind == "sample":
            inv.samples.append((obj["metric"], obj["x"], obj["value"]))
        elif kind == "note":
            key = obj["key"]
            # A repeated key (one per sweep point, say) keeps every value.
            if key in inv.notes:
                prev = inv.notes[key]
                inv.notes[key] = (prev if isinstance(prev, list) else [prev]) + [obj["value"]]
            else:
                inv.notes[key] = obj["value"]
        elif kind == "skip":
            inv.status, inv.reason = "skipped", obj.get("reason")
        elif kind == "error":
            inv.status, inv.reason = "failed", obj.get("reason")
        elif kind == "trailer":
            saw_trailer = True
            inv.elapsed_s = obj.get("elapsed_s", 0.0)
            if obj.get("status") == "ok" and inv.reason is None:
                inv.status = "ok"
            elif obj.get("status") == "skipped":
                inv.status = "skipped"
            elif inv.reason is None:
                inv.status, inv.reason = "failed", "core reported failure without a reason"
    if not saw_trailer and inv.reason is None:
        inv.status, inv.reason = "failed", "core ended without a trailer (crashed or killed)"
    return inv


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGTERM the core's process group (it cleans up), then SIGKILL whatever is left."""
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            # The leader is gone; sweep stragglers of the group too.
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def invoke(bench: str, params: dict | None = None, preset: str | None = None,
           timeout: float = 600.0, scratch_parent: str | None = None,
           env: dict | None = None) -> Invocation:
    """Run `osmeter-core run bench k=v...` once in its own process group and scratch dir.

    Whatever happens (timeout, Ctrl-C, crash) the group is killed and the scratch
    directory removed before this returns or raises.  Through a --core command that
    leaves this machine (ssh), the scratch directory and these variables do not reach
    the core: it makes its own scratch directory there and removes it when it ends.  Should we die without a chance to
    do so (SIGKILL), the core notices that the pipe named in OSMETER_PARENT_FD, whose
    write end only we hold, has closed, and does both itself (docs/protocol.md).
    """
    words = ["run", bench]
    if preset:
        words.append("--preset=" + preset)
    words += ["%s=%s" % (k, v) for k, v in (params or {}).items()]
    args = core_args(words)
    scratch = tempfile.mkdtemp(prefix="osmeter-scratch-", dir=scratch_parent)
    try:
        watch_r, watch_w = os.pipe()
    except OSError as e:
        shutil.rmtree(scratch, ignore_errors=True)
        return _not_started(bench, e)
    run_env = dict(os.environ, OSMETER_SCRATCH=scratch, OSMETER_PARENT_FD=str(watch_r))
    if env:
        run_env.update(env)
    try:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **DECODE,
                                env=run_env, start_new_session=True, pass_fds=(watch_r,))
    except BaseException as e:
        os.close(watch_w)
        shutil.rmtree(scratch, ignore_errors=True)
        if isinstance(e, OSError):
            return _not_started(bench, e)
        raise
    finally:
        os.close(watch_r)
    try:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            inv = parse_lines(bench, out.splitlines())
            inv.status, inv.reason = "failed", "timed out after %.0f s" % timeout
            inv.stderr = text.shown(err)
            _remove_private_dirs(inv, params or {})
            return inv
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    finally:
        if proc.poll() is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # children that outlived the core
            except (ProcessLookupError, PermissionError):
                pass
        os.close(watch_w)
        shutil.rmtree(scratch, ignore_errors=True)
    inv = parse_lines(bench, out.splitlines())
    inv.returncode, inv.stderr = proc.returncode, text.shown(err)
    _remove_private_dirs(inv, params or {})
    if proc.returncode not in (0,) and inv.status == "ok":
        inv.status, inv.reason = "failed", "core exited with status %d" % proc.returncode
    if proc.returncode and proc.returncode < 0 and inv.reason and "trailer" in inv.reason:
        inv.reason = "core killed by signal %d" % -proc.returncode
    return inv


def _not_started(bench: str, e: OSError) -> Invocation:
    """No descriptor or process left (rlimits): a failed repetition, not a lost run."""
    return Invocation(bench=bench, reason="cannot start osmeter-core: %s" % (e.strerror or e))


def _remove_private_dirs(inv: Invocation, params: dict) -> None:
    """A core killed with SIGKILL cannot remove the private directory it made inside a
    user-named dir= (it says where in its "directory" note); remove it for it."""
    if not params.get("dir"):
        return
    parent = params["dir"]
    noted = inv.notes.get("directory")
    for d in noted if isinstance(noted, list) else [noted]:
        # The note is text (text.shown) naming a directory the core made inside parent.
        if not d or os.path.dirname(d).rstrip("/") != text.shown(parent).rstrip("/"):
            continue
        d = os.path.join(parent, os.path.basename(d))
        if (os.path.basename(d).startswith("osmeter-") and os.path.isdir(d)
                and not os.path.islink(d)):
            shutil.rmtree(d, ignore_errors=True)

