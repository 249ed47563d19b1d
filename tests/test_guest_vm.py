"""The two guests on one virtual machine (scripts/guest-vm.py, scripts/guest_hardware.py,
scripts/netbsd-build.py, scripts/linux-guest-build.py): what they say without an image,
and, where a guest's image has been built on this machine, a boot of it with a few
benchmarks run there through `osmeter run --core 'ssh ...'`, the guest stopped after with
nothing left behind.  Without the image the boot test is skipped, saying how to make it
(the NetBSD build takes hours; it never runs in the test suite).  The boot test is
marked long: ./run-tests skips it, CI's long run runs it."""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from clirun import osmeter

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"
VM = SCRIPTS / "guest-vm.py"
BUILD = SCRIPTS / "netbsd-build.py"
IMAGES = {"netbsd": Path("/var/cache/osmeter-netbsd/netbsd.img"),
          "linux": Path("/var/cache/osmeter-linux-guest/linux.img")}
CORES = {"netbsd": Path("/var/cache/osmeter-netbsd/core/osmeter-core"),
         "linux": REPO / "core" / "build" / "osmeter-core"}
KERNELS = {"netbsd": "NetBSD", "linux": "Linux"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(script, *args, timeout=120, env=None):
    return subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env)


def qemu_running(cache: Path) -> bool:
    try:
        os.kill(int((cache / "qemu.pid").read_text()), 0)
        return True
    except (OSError, ValueError):
        return False


@pytest.mark.parametrize("guest", ["netbsd", "linux"])
def test_without_an_image_the_script_says_so_and_leaves_nothing_running(tmp_path, guest):
    r = run(VM, "--guest", guest, "--image", tmp_path / "no-such.img", "--cache", tmp_path,
            "--key-dir", tmp_path, "--stages", "boot,stop")
    assert r.returncode == 2, r.stdout + r.stderr
    assert re.search(r"boot .* could not run here: no %s image at .*no-such.img" % guest,
                     r.stdout), r.stdout
    assert not qemu_running(tmp_path) and not (tmp_path / "overlay.qcow2").exists()


def test_an_unknown_stage_is_one_clear_line(tmp_path):
    r = run(VM, "--guest", "linux", "--stages", "boot,build", "--cache", tmp_path)
    assert r.returncode == 2 and "unknown stage(s): build" in r.stderr
    r = run(BUILD, "--stages", "tools,bake", "--cache", tmp_path)
    assert r.returncode == 2 and "unknown stage bake" in r.stderr


def test_the_netbsd_build_without_its_tree_says_how_to_fetch_it(tmp_path):
    r = run(BUILD, "--git", tmp_path / "none", "--cache", tmp_path, "--stages", "extract")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "fetch github:fallen/NetBSD6" in r.stdout
    assert not (tmp_path / "stamps" / "extract").exists()
    status = run(BUILD, "--status", "--cache", tmp_path)
    assert status.returncode == 0 and re.search(r"^extract +-$", status.stdout, re.M)


def test_every_patch_to_the_netbsd_tree_says_why():
    patches = sorted((SCRIPTS / "netbsd-patches").glob("*.patch"))
    assert patches
    for p in patches:
        head = p.read_text(errors="replace").split("\n--- a/", 1)[0]
        assert head.startswith("Why: ") and len(head.split()) > 8, p.name


def test_both_guests_are_given_the_same_virtual_machine():
    sys.path.insert(0, str(SCRIPTS))
    from guest_hardware import qemu_command
    disk = qemu_command("n.qcow2", "qcow2", 1, "c.sock", "p")
    linux = qemu_command("l.qcow2", "qcow2", 1, "c.sock", "p", ("k", "i", "root=/dev/vda"))
    assert linux[:len(disk)] == [w.replace("n.qcow2", "l.qcow2") for w in disk]
    assert linux[len(disk):] == ["-kernel", "k", "-initrd", "i", "-append", "root=/dev/vda"]
    assert "restrict=on" in " ".join(disk) and "127.0.0.1:1-:22" in " ".join(disk)


@pytest.mark.long                 # a boot under TCG takes a minute or more
@pytest.mark.parametrize("guest", ["netbsd", "linux"])
def test_a_guest_boots_and_runs_benchmarks_through_the_core_over_ssh(tmp_path, guest):
    if not IMAGES[guest].exists():
        how = ("python3 scripts/netbsd-build.py (hours)" if guest == "netbsd"
               else "python3 scripts/linux-guest-build.py (minutes)")
        pytest.skip("no %s guest image at %s: %s makes it" % (guest, IMAGES[guest], how))
    if not shutil.which("qemu-system-x86_64"):
        pytest.skip("qemu is not installed (apt-get install qemu-system-x86 qemu-utils)")
    if not CORES[guest].exists():
        pytest.skip("no core for the %s guest at %s" % (guest, CORES[guest]))
    db = tmp_path / "r.db"
    env = dict(os.environ, OSMETER_DB=str(db))
    cache = tmp_path / "cache"
    args = ["--guest", guest, "--cache", cache, "--port", free_port(), "--label", guest + "-t"]
    try:
        r = run(VM, *args, "--stages", "boot,install,run", "--", "syscall.getpid",
                "proc.fork.dynamic", "--runs", "1", timeout=1500, env=env)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        stop = run(VM, *args, "--stages", "stop", timeout=180)
    assert "powered off by" in stop.stdout, stop.stdout      # the guest shut itself down
    assert not qemu_running(cache) and not (cache / "overlay.qcow2").exists()
    shown = json.loads(osmeter("show", guest + "-t", "--json", db=db, check=0).stdout)
    run_ = shown.get("run", shown)
    assert run_["sysinfo"]["kernel"]["name"] == KERNELS[guest]
    getpid = [r for r in shown["results"] if r["bench"] == "syscall.getpid"]
    assert getpid and all(r["status"] == "ok" for r in getpid), getpid
    assert all(r["reason"] for r in shown["results"] if r["status"] == "skipped")


def test_the_base_stage_accepts_only_a_checkflist_that_the_left_out_files_explain(tmp_path):
    """build.sh distribution ends with checkflist: files the sets' lists name but the
    build left out (SQLite, Objective-C) are expected; any other difference fails."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("netbsd_build", BUILD)
    nb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(nb)

    def log(missing, extra, failed_at="checkflist"):
        text = ("checkflist ===> distrib/sets\n=======  %d extra files in DESTDIR  =========\n"
                "Files in DESTDIR but missing from flist.\n-------------------------------\n"
                "%s=========  end of %d extra files  ===========\n"
                "======  %d missing files in DESTDIR  ========\nFiles in flist but missing\n"
                "------------------------------------------\n%s"
                "========  end of %d missing files  ==========\n*** [%s] Error code 1\n"
                % (len(extra), "".join(f + "\n" for f in extra), len(extra), len(missing),
                   "".join(f + "\n" for f in missing), len(missing), failed_at))
        p = tmp_path / "base.log"
        p.write_text(text)
        return str(p)
    found = nb.checkflist_differences(log(["./usr/lib/libsqlite3.so", "./usr/lib/libobjc.so"],
                                          ["./usr/lib/libgcc.a"]))
    assert found == (["./usr/lib/libsqlite3.so", "./usr/lib/libobjc.so"], ["./usr/lib/libgcc.a"])
    assert all(nb.LEFT_OUT.search(f) for f in found[0])
    assert all(nb.EXTRA_OK.search(f) for f in found[1])
    assert not nb.LEFT_OUT.search("./usr/bin/ssh")          # a real loss is not explained
    assert nb.checkflist_differences(log(["./usr/bin/ssh"], [], failed_at="dependall")) is None
