"""NetBSD under KVM (scripts/netbsd-vm.py): the core cross-built for NetBSD 11, booted
in a guest reached only through a port forwarded on 127.0.0.1, its smoke set run there
through `osmeter run --core 'ssh ...'`, and the guest stopped with nothing left behind.

The boot test needs a NetBSD amd64 image ($OSMETER_NETBSD_IMAGE; none is built or
fetched here) and /dev/kvm: without them it is skipped, saying which is missing."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from clirun import osmeter

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "netbsd-vm.py"
IMAGE = os.environ.get("OSMETER_NETBSD_IMAGE")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def script(*args, cache, timeout=1800):
    return subprocess.run([sys.executable, str(SCRIPT), "--cache", str(cache), *args],
                          capture_output=True, text=True, timeout=timeout)


def qemu_running(cache: Path) -> bool:
    try:
        os.kill(int((cache / "qemu.pid").read_text()), 0)
        return True
    except (OSError, ValueError):
        return False


def test_without_an_image_the_script_says_so_and_leaves_nothing_running(tmp_path):
    r = script("--image", str(tmp_path / "no-such.img"), "--stages", "boot,stop",
               cache=tmp_path, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "boot" in r.stdout and "could not run here: no NetBSD image" in r.stdout
    assert not qemu_running(tmp_path) and not (tmp_path / "overlay.qcow2").exists()


def test_the_core_stage_builds_once_then_is_up_to_date(tmp_path):
    pytest.importorskip("ziglang", reason="zig's C compiler is missing (pip install ziglang)")
    first = script("--stages", "core", cache=tmp_path, timeout=1200)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "core" in first.stdout and "built" in first.stdout
    core = tmp_path / "core" / "x86_64-netbsd.11.0-none" / "osmeter-core"
    assert core.read_bytes()[:4] == b"\x7fELF"
    again = script("--stages", "core", cache=tmp_path, timeout=120)
    assert again.returncode == 0 and "up to date" in again.stdout, again.stdout
    # each stage says how long it took
    assert re.search(r"core +\d+\.\d s  up to date", again.stdout), again.stdout


def test_an_unknown_stage_is_one_clear_line(tmp_path):
    r = script("--stages", "core,build", cache=tmp_path, timeout=60)
    assert r.returncode == 2 and "unknown stage(s): build" in r.stderr


@pytest.mark.skipif(not IMAGE or not os.path.isfile(IMAGE),
                    reason="no NetBSD image: set OSMETER_NETBSD_IMAGE to a NetBSD amd64 disk "
                           "image whose sshd admits root with the script's key")
@pytest.mark.skipif(not os.access("/dev/kvm", os.R_OK | os.W_OK), reason="no usable /dev/kvm")
def test_the_core_runs_its_smoke_set_on_netbsd_under_kvm(tmp_path):
    db = tmp_path / "r.db"
    env = dict(os.environ, OSMETER_DB=str(db))
    cache = tmp_path / "cache"
    cache.mkdir()
    try:
        r = subprocess.run([sys.executable, str(SCRIPT), "--cache", str(cache), "--image",
                            IMAGE, "--port", str(free_port()), "--smoke", "--label",
                            "netbsd-smoke"], capture_output=True, text=True, timeout=3600,
                           env=env)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        script("--stages", "stop", cache=cache, timeout=120)
    assert not qemu_running(cache) and not (cache / "overlay.qcow2").exists()
    shown = osmeter("show", "netbsd-smoke", "--json", db=db, check=0)
    run = json.loads(shown.stdout)
    info = run["run"]["sysinfo"] if "run" in run else run["sysinfo"]
    assert info["kernel"]["name"] == "NetBSD"
    results = run["results"]
    assert results and all(r["status"] in ("ok", "skipped") for r in results)
    assert all(r["reason"] for r in results if r["status"] == "skipped")
