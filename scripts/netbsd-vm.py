#!/usr/bin/env python3
"""Run osmeter's core on NetBSD booted under KVM on this machine, driven from here.

    python3 scripts/netbsd-vm.py [--image IMG] [--cache DIR] [--port N] [--suite quick |
                                  --smoke] [--stages core,boot,install,run,stop] [-- ARGS]

Stages, each timed and each skipped when its output is newer than its inputs:

  core     cross-build the core for NetBSD 11 amd64 with zig (scripts/cross-build.py's
           target x86_64-netbsd.11.0-none) into CACHE/core
  boot     boot IMG under qemu-system-x86_64 -enable-kvm from a copy-on-write overlay
           (IMG itself is never written), its ssh port forwarded to 127.0.0.1:PORT
           only, the serial console on a unix socket in CACHE, the user network
           restricted (restrict=on: the guest reaches nothing but what is forwarded)
  install  copy the core to /opt/osmeter in the guest (ssh as root with CACHE/id)
  run      osmeter run --core 'ssh ... /opt/osmeter/osmeter-core' with the suite
  stop     power the guest off (and kill qemu if it does not go), remove the overlay

IMG is a NetBSD amd64 disk image whose sshd lets root in with the key CACHE/id.pub (the
script makes the key and prints what to put where).  No such image comes from a package
registry, and NetBSD's source tree is beyond what this machine can fetch: the script
does not build one, and says so.  Nothing is written into the repository; the cache
(default /var/cache/osmeter-bsd) holds the key, the core, the overlay and the logs.

Exit status: 0 when every stage asked for ran (or was up to date), 1 when one failed,
2 when one could not run here (no image, no KVM, no qemu): the message says which.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TARGET = "x86_64-netbsd.11.0-none"
STAGES = ("core", "boot", "install", "run", "stop")


class CannotHere(Exception):
    """A stage this machine cannot run; the reason."""


def log(msg: str) -> None:
    print("netbsd-vm: " + msg, flush=True)


def newer(output: str, inputs: list[str]) -> bool:
    """The output exists and is newer than every input."""
    if not os.path.exists(output):
        return False
    t = os.path.getmtime(output)
    return all(os.path.getmtime(i) <= t for i in inputs if os.path.exists(i))


def core_sources() -> list[str]:
    return [os.path.join(d, f) for d, _, files in os.walk(os.path.join(REPO, "core"))
            if "/build" not in d for f in files if f.endswith((".c", ".h", "Makefile"))]


def stage_core(a) -> str:
    out = os.path.join(a.cache, "core", TARGET, "osmeter-core")
    if newer(out, core_sources()):
        return "up to date"
    r = subprocess.run([sys.executable, os.path.join(HERE, "cross-build.py"), "--keep",
                        os.path.join(a.cache, "core"), TARGET], capture_output=True, text=True)
    if r.returncode == 2:
        raise CannotHere(r.stderr.strip())
    if r.returncode != 0:
        raise RuntimeError("cross-build failed:\n" + r.stdout[-2000:])
    return "built " + out


def ssh_words(a) -> list[str]:
    return ["ssh", "-F", "/dev/null", "-i", os.path.join(a.cache, "id"), "-p", str(a.port),
            "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
            "-o", "ConnectTimeout=5", "root@127.0.0.1"]


def ensure_key(a) -> None:
    key = os.path.join(a.cache, "id")
    if not os.path.exists(key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True)


def qemu_pid(a) -> int | None:
    try:
        pid = int(open(os.path.join(a.cache, "qemu.pid")).read().strip())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def ssh_answers(a) -> bool:
    return subprocess.run(ssh_words(a) + ["true"], capture_output=True,
                          timeout=30).returncode == 0


def stage_boot(a) -> str:
    if qemu_pid(a) and ssh_answers(a):
        return "already running (pid %d)" % qemu_pid(a)
    if not a.image or not os.path.isfile(a.image):
        raise CannotHere("no NetBSD image (--image or $OSMETER_NETBSD_IMAGE): none comes "
                         "from a package registry and NetBSD's source tree is beyond what "
                         "this machine can fetch, so none was built here; give a NetBSD "
                         "amd64 disk image whose sshd lets root in with %s.pub"
                         % os.path.join(a.cache, "id"))
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        raise CannotHere("no usable /dev/kvm")
    qemu = shutil.which("qemu-system-x86_64")
    if not qemu or not shutil.which("qemu-img"):
        raise CannotHere("qemu is not installed (apt-get install qemu-system-x86 qemu-utils)")
    overlay = os.path.join(a.cache, "overlay.qcow2")
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", image_format(a.image),
                    "-b", os.path.abspath(a.image), overlay], check=True)
    console = os.path.join(a.cache, "console.sock")
    cmd = [qemu, "-enable-kvm", "-cpu", "host", "-smp", "2", "-m", "2048",
           "-drive", "file=%s,if=virtio,format=qcow2" % overlay,
           "-netdev", "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:%d-:22" % a.port,
           "-device", "virtio-net-pci,netdev=n0", "-display", "none",
           "-serial", "unix:%s,server=on,wait=off" % console,
           "-pidfile", os.path.join(a.cache, "qemu.pid"), "-daemonize"]
    subprocess.run(cmd, check=True, stdout=open(os.path.join(a.cache, "qemu.log"), "w"),
                   stderr=subprocess.STDOUT)
    deadline = time.monotonic() + a.boot_timeout
    while time.monotonic() < deadline:
        if port_open(a.port) and ssh_answers(a):
            return "booted (ssh on 127.0.0.1:%d, console %s)" % (a.port, console)
        time.sleep(3)
    raise RuntimeError("the guest did not answer ssh on 127.0.0.1:%d within %d s (its "
                       "console: %s)" % (a.port, a.boot_timeout, console))


def image_format(path: str) -> str:
    with open(path, "rb") as f:
        return "qcow2" if f.read(4) == b"QFI\xfb" else "raw"


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def stage_install(a) -> str:
    core = os.path.join(a.cache, "core", TARGET, "osmeter-core")
    if not os.path.exists(core):
        raise RuntimeError("no NetBSD core yet: run the core stage")
    with open(core, "rb") as f:
        r = subprocess.run(ssh_words(a) + ["mkdir -p /opt/osmeter && cat > "
                                           "/opt/osmeter/osmeter-core && chmod 755 "
                                           "/opt/osmeter/osmeter-core && uname -sr"],
                           stdin=f, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("copying the core: " + r.stderr.strip())
    return "installed on " + r.stdout.strip()


def stage_run(a) -> str:
    core_cmd = shlex.join(ssh_words(a) + ["/opt/osmeter/osmeter-core"])
    cmd = [sys.executable, "-m", "osmeter", "run", "--core", core_cmd, "--label",
           a.label] + (["--smoke", "--runs", "1"] if a.smoke else ["--suite", a.suite]) + a.rest
    r = subprocess.run(cmd, cwd=REPO, env=dict(os.environ, PYTHONPATH=REPO))
    if r.returncode not in (0, 1):     # 1: some results failed, and they are stored
        raise RuntimeError("osmeter run exited %d" % r.returncode)
    return "stored as '%s'%s" % (a.label, "" if r.returncode == 0 else ", some results failed")


def stage_stop(a) -> str:
    pid = qemu_pid(a)
    if pid:
        subprocess.run(ssh_words(a) + ["shutdown -p now"], capture_output=True, timeout=30)
        for _ in range(60):
            if not qemu_pid(a):
                break
            time.sleep(1)
        if qemu_pid(a):
            os.kill(pid, signal.SIGKILL)
    for name in ("overlay.qcow2", "qemu.pid", "console.sock"):
        try:
            os.unlink(os.path.join(a.cache, name))
        except FileNotFoundError:
            pass
    return "stopped" if pid else "nothing was running"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--image", default=os.environ.get("OSMETER_NETBSD_IMAGE"))
    p.add_argument("--cache", default="/var/cache/osmeter-bsd")
    p.add_argument("--port", type=int, default=2222)
    p.add_argument("--suite", default="quick")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--label", default="netbsd-kvm")
    p.add_argument("--boot-timeout", type=int, default=300)
    p.add_argument("--stages", default=",".join(STAGES))
    p.add_argument("rest", nargs="*", help="more arguments for osmeter run (after --)")
    a = p.parse_args(argv)
    stages = a.stages.split(",")
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        p.error("unknown stage(s): %s (stages: %s)" % (", ".join(unknown), ", ".join(STAGES)))
    os.makedirs(a.cache, exist_ok=True)
    ensure_key(a)
    status = 0
    for name in stages:
        t0 = time.monotonic()
        try:
            what = globals()["stage_" + name](a)
            log("%-8s %7.1f s  %s" % (name, time.monotonic() - t0, what))
        except CannotHere as e:
            log("%-8s %7.1f s  could not run here: %s" % (name, time.monotonic() - t0, e))
            status = 2
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            log("%-8s %7.1f s  FAILED: %s" % (name, time.monotonic() - t0, e))
            status = 1
        if status and name != "stop":
            if "stop" in stages and name not in ("core",):
                stage_stop(a)
            break
    return status


if __name__ == "__main__":
    sys.exit(main())
