"""What will skip, known before a run: needs.py against the real core, which decides."""
import os
import platform

import pytest

from clirun import osmeter
from osmeter.running import coreproc, needs

# Benchmarks that skip when their program is not in PATH, and the program.
BY_PROGRAM = {"app.vim_open": "vim", "app.cpu.avi_play": "ffmpeg",
              "app.convert.jpeg_png": "ImageMagick", "app.start.perl": "perl"}


@pytest.mark.parametrize("bench", sorted(BY_PROGRAM))
def test_a_missing_program_is_known_before_the_core_skips(bench, tmp_path, monkeypatch):
    """With an empty PATH the pre-flight names the skip, and the real core skips with
    the same reason (a rule that drifted from the core fails here)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    found = needs.skips([(bench, bench, {})])
    assert [s.bench for s in found] == [bench]
    inv = coreproc.invoke(bench, preset="smoke", timeout=60, env={"PATH": str(empty)})
    assert inv.status == "skipped", (inv.status, inv.reason)
    assert inv.reason == found[0].reason
    assert found[0].package and found[0].package in needs.apt_line(found)


def test_what_is_installed_is_not_called_missing(monkeypatch):
    """sh is everywhere: app.start.sh never skips; syscall.kqueue skips off the BSDs
    and macOS, syscall.epoll off Linux, as the core's #ifdefs decide."""
    found = {s.bench: s for s in needs.skips([(b, b, {}) for b in (
        "app.start.sh", "syscall.kqueue", "syscall.epoll", "cpu.integer")])}
    assert "app.start.sh" not in found and "cpu.integer" not in found
    linux = platform.system() == "Linux"
    assert ("syscall.kqueue" in found) == linux and ("syscall.epoll" in found) != linux
    for bench in found:
        inv = coreproc.invoke(bench, preset="smoke", timeout=60)
        assert inv.status == "skipped" and inv.reason == found[bench].reason


def test_mab_remote_needs_a_directory_and_the_run_says_it_before_it_starts(tmp_path):
    """The run's first lines name what will skip, and the apt line to fix it."""
    empty = tmp_path / "bin"
    empty.mkdir()
    os.symlink("/bin/sh", empty / "sh")
    r = osmeter("run", "mab.remote", "app.cpu.audio_play", "--runs", "1", "--smoke",
                db=str(tmp_path / "db.sqlite"), env={"PATH": str(empty)})
    head = r.stderr.split("progress:")[0]
    assert "2 benchmarks will skip" in head, r.stderr
    assert "mab.remote: mab.remote needs dir=PATH on a network file system" in head
    assert "app.cpu.audio_play: ffmpeg not installed" in head
    assert "apt-get install ffmpeg" in head


def test_a_core_run_elsewhere_is_not_judged_by_this_host(tmp_path):
    """With --core the benchmarks run on another system (a NetBSD guest has kqueue where
    this Linux host has none): the host predicts no skip, and the core there decides."""
    r = osmeter("run", "syscall.kqueue", "--runs", "1", "--smoke",
                "--core", str(coreproc.core_path()), db=str(tmp_path / "db.sqlite"))
    head = r.stderr.split("progress:")[0]
    assert "will skip" not in head, r.stderr
    if platform.system() == "Linux":        # the core itself still skips it here
        assert "kqueue is not available on this system" in r.stdout + r.stderr
