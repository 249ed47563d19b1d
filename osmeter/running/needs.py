"""What a plan's benchmarks need from this machine, known before the run starts.

A benchmark whose program is not installed (ffmpeg, ImageMagick, bonnie++, vim...), or
that needs what this system lacks (kqueue off the BSDs, a --dir on a network file
system), is skipped by the core with the reason.  The run says so before it starts,
with the one apt-get line that installs what is missing, and the ETA leaves those
benchmarks out instead of counting their estimates (minutes for the video players) as
time to come.

The checks mirror the core's own (core/bench/app.c, mab.c, syscall.c, thread.c);
tests/test_needs.py runs the core without each program and checks that it skips with
the reason given here, and that every "not installed" skip of the core is listed.
"""
from __future__ import annotations

import fnmatch
import os
import platform
import shutil
import subprocess
import textwrap
from dataclasses import dataclass

BSD_OR_MAC = ("FreeBSD", "NetBSD", "OpenBSD", "DragonFly", "Darwin")
SBIN = ("/usr/sbin", "/usr/local/sbin", "/usr/pkg/sbin")   # bonnie++ lives there


@dataclass(frozen=True)
class Skip:
    bench: str          # the result id that will skip
    reason: str         # why, in the core's words where it has them
    package: str = ""   # the Debian/Ubuntu package that removes the reason, if any


def _which(program: str, extra_dirs=()) -> str | None:
    found = shutil.which(program)
    if found:
        return found
    for d in extra_dirs:
        p = os.path.join(d, program)
        if os.access(p, os.X_OK):
            return p
    return None


def _imagemagick() -> bool:
    """A `convert` or `magick` whose -version says ImageMagick (a stand-in of that name
    may come first in PATH, as the core knows)."""
    for d in os.environ.get("PATH", "").split(os.pathsep):
        for name in ("convert", "magick"):
            p = os.path.join(d or ".", name)
            if not os.access(p, os.X_OK) or os.path.isdir(p):
                continue
            try:
                out = subprocess.run([p, "-version"], capture_output=True, text=True,
                                     timeout=30, errors="replace").stdout
            except (OSError, subprocess.TimeoutExpired):
                continue
            if "ImageMagick" in out:
                return True
    return False


# (benchmark globs, check(params) -> reason or None, Debian package)
def _program(name: str, package: str):
    def check(params):
        return None if _which(name) else "%s not installed" % name
    return check, package


def _cc(params):
    cc = params.get("cc") or "cc"
    return None if _which(cc) else "no C compiler '%s' in PATH for the compile phase" % cc


def _compress(params):
    c = params.get("compress") or "auto"
    if c in ("bzip2", "gzip") and not _which(c):
        return "compress=%s: %s is not installed" % (c, c), c
    return None


def _remote_dir(params):
    return None if params.get("dir") else ("mab.remote needs dir=PATH on a network file "
                                           "system (osmeter run --dir PATH)")


RULES = [
    (("app.start.bash",), *_program("bash", "bash")),
    (("app.start.python3",), *_program("python3", "python3")),
    (("app.start.perl",), *_program("perl", "perl")),
    (("app.start.vim", "app.vim_open"), *_program("vim", "vim")),
    (("app.convert.avi_mpeg", "app.cpu.avi_play", "app.cpu.audio_play"),
     *_program("ffmpeg", "ffmpeg")),
    (("app.convert.jpeg_png",),
     lambda p: None if _imagemagick() else "ImageMagick not installed", "imagemagick"),
    (("fs.bonniepp",), lambda p: None if _which("bonnie++", SBIN) else
     "bonnie++ is not installed (Debian: apt-get install bonnie++)", "bonnie++"),
    (("mab.remote",), _remote_dir, ""),              # the core asks this first
    (("mab.local", "mab.remote"), _cc, "build-essential"),
    (("fs.tar.create", "fs.tar.extract"),
     lambda p: None if _which("tar") else "no tar in PATH", "tar"),
    (("fs.tar.create", "fs.tar.extract"), _compress, ""),
    (("syscall.kqueue",), lambda p: None if platform.system() in BSD_OR_MAC else
     "kqueue is not available on this system (BSD and macOS only)", ""),
    (("syscall.epoll",), lambda p: None if platform.system() == "Linux" else
     "epoll is Linux-only", ""),
    (("thread.futex.wake",), lambda p: None if platform.system() == "Linux" else
     "futexes are a Linux facility; this system has none", ""),
]


def skips(checks: list[tuple[str, str, dict]]) -> list[Skip]:
    """The benchmarks that will skip, of (result id, benchmark id, parameters) to run;
    one Skip per result id (its first reason)."""
    out, seen = [], set()
    for result_id, bench, params in checks:
        for globs, check, package in RULES:
            if result_id in seen or not any(fnmatch.fnmatchcase(bench, g) for g in globs):
                continue
            reason = check(params)
            if isinstance(reason, tuple):       # the package depends on the parameters
                reason, package = reason
            if reason:
                out.append(Skip(result_id, reason, package))
                seen.add(result_id)
    return out


def apt_line(found: list[Skip]) -> str:
    """The one command that installs what the skipped benchmarks need, or ''."""
    packages = sorted({s.package for s in found if s.package})
    return "sudo apt-get install %s" % " ".join(packages) if packages else ""


def summary_lines(found: list[Skip], width: int = 100) -> list[str]:
    """Before the run: what will skip and why, grouped by reason, and the apt line."""
    by_reason: dict[str, list[str]] = {}
    for s in found:
        by_reason.setdefault(s.reason, []).append(s.bench)
    lines = ["osmeter: %d benchmark%s will skip on this machine (left out of the ETA):"
             % (len(found), "" if len(found) == 1 else "s")]
    for reason, benches in by_reason.items():
        lines += textwrap.wrap("%s: %s" % (", ".join(benches), reason), width,
                               initial_indent="  ", subsequent_indent="      ")
    apt = apt_line(found)
    if apt:
        lines += textwrap.wrap("to run them (Debian, Ubuntu): %s" % apt, width, initial_indent="  ",
                               subsequent_indent="      ")
    return lines
