#!/usr/bin/env python3
"""Boot the NetBSD or the Linux guest under qemu on this machine and run osmeter's core there.

    python3 scripts/guest-vm.py --guest netbsd|linux [--image IMG] [--cache DIR]
                                [--port N] [--suite S[,S...] | --smoke] [--label L]
                                [--stages boot,install,run,stop] [-- ARGS]

Both guests run on the same virtual machine (scripts/guest_hardware.py: machine, CPU
model, memory, vCPUs, virtio disk and network), one at a time.  Stages, each timed:

  boot     boot the guest's image from a copy-on-write overlay (the image itself is never
           written), its ssh port forwarded to 127.0.0.1:PORT only, its serial console on a
           unix socket in CACHE, its user network restricted (restrict=on: the guest reaches
           nothing but what is forwarded)
  install  copy the core to /opt/osmeter in the guest (ssh as root with the guests' key):
           for NetBSD the core built by scripts/netbsd-build.py with the NetBSD tree's own
           compiler and libc, for Linux the core built here (core/build; the guest is
           Debian 12, as this machine)
  run      osmeter run --core 'ssh ... /opt/osmeter/osmeter-core' for each suite (or the
           benchmark ids given after --), stored in the usual results store under LABEL
           (LABEL-SUITE when several suites are given)
  stop     power the guest off (qemu is killed if it does not go), remove the overlay

The images: scripts/netbsd-build.py makes /var/cache/osmeter-netbsd/netbsd.img and
scripts/linux-guest-build.py /var/cache/osmeter-linux-guest/linux.img; both let root in
with the key /var/cache/osmeter-bsd/id.  Nothing is written into the repository.

Exit status: 0 when every stage asked for ran, 1 when one failed, 2 when one could not run
here (no image, no KVM, no qemu, no core): the message says which.
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
sys.path.insert(0, HERE)
from guest_hardware import accelerator, ensure_key, qemu_command  # noqa: E402

STAGES = ("boot", "install", "run", "stop")
KEY_DIR = "/var/cache/osmeter-bsd"

# Per guest: its image, how qemu loads its kernel, and the core that runs on it.
GUESTS = {
    "netbsd": {"image": "/var/cache/osmeter-netbsd/netbsd.img",
               "core": "/var/cache/osmeter-netbsd/core",
               "power_off": "/sbin/shutdown -p now"},
    "linux": {"image": "/var/cache/osmeter-linux-guest/linux.img",
              "core": os.path.join(REPO, "core", "build"),
              "power_off": "systemctl poweroff"},
}
CORE_FILES = ("osmeter-core", "osmeter-core-static", "osmeter-helper-dynamic",
              "osmeter-helper-static")


class CannotHere(Exception):
    """A stage this machine cannot run; the reason."""


def log(msg: str) -> None:
    print("guest-vm: " + msg, flush=True)


def ssh_words(a) -> list[str]:
    return ["ssh", "-F", "/dev/null", "-i", os.path.join(a.key_dir, "id"), "-p", str(a.port),
            "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
            "-o", "ConnectTimeout=5", "root@127.0.0.1"]


def qemu_pid(a) -> int | None:
    try:
        pid = int(open(os.path.join(a.cache, "qemu.pid")).read().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    try:
        with open("/proc/%d/stat" % pid) as f:     # exited, not yet reaped: gone
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return None
    except (OSError, IndexError):
        pass                                       # no /proc to tell: it runs
    return pid


def ssh_answers(a) -> bool:
    try:
        return subprocess.run(ssh_words(a) + ["true"], capture_output=True,
                              timeout=30).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def image_format(path: str) -> str:
    with open(path, "rb") as f:
        return "qcow2" if f.read(4) == b"QFI\xfb" else "raw"


def stage_boot(a) -> str:
    if qemu_pid(a) and ssh_answers(a):
        return "already running (pid %d)" % qemu_pid(a)
    if not os.path.isfile(a.image):
        build = "netbsd-build.py" if a.guest == "netbsd" else "linux-guest-build.py"
        raise CannotHere("no %s image at %s: scripts/%s makes it" % (a.guest, a.image, build))
    if not shutil.which("qemu-system-x86_64") or not shutil.which("qemu-img"):
        raise CannotHere("qemu is not installed (apt-get install qemu-system-x86 qemu-utils)")
    if qemu_pid(a):
        raise RuntimeError("a guest started from %s runs but does not answer ssh (stop it "
                           "with --stages stop)" % a.cache)
    if port_open(a.port):
        raise CannotHere("127.0.0.1:%d is taken by another program (give --port)" % a.port)
    overlay = os.path.join(a.cache, "overlay.qcow2")
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", image_format(a.image),
                    "-b", os.path.abspath(a.image), overlay], check=True)
    console = os.path.join(a.cache, "console.sock")
    kernel = None
    if a.guest == "linux":
        d = os.path.dirname(a.image)
        kernel = (os.path.join(d, "vmlinuz"), os.path.join(d, "initrd.img"),
                  " ".join(["root=/dev/vda rw console=ttyS0 quiet"] + a.kernel_args))
    cmd = qemu_command(overlay, "qcow2", a.port, console, os.path.join(a.cache, "qemu.pid"),
                       kernel)
    with open(os.path.join(a.cache, "qemu.log"), "w") as out:
        subprocess.run(cmd, check=True, stdout=out, stderr=subprocess.STDOUT)
    console_reader(console, os.path.join(a.cache, "console.log"))
    deadline = time.monotonic() + a.boot_timeout
    t0 = time.monotonic()
    while time.monotonic() < deadline:
        if port_open(a.port) and ssh_answers(a):
            accel, why = accelerator()
            return "booted in %.0f s under %s (%s; ssh on 127.0.0.1:%d, console log %s)" % (
                time.monotonic() - t0, accel, why, a.port, os.path.join(a.cache, "console.log"))
        if not qemu_pid(a):
            raise RuntimeError("qemu exited while booting (see %s and console.log)"
                               % os.path.join(a.cache, "qemu.log"))
        time.sleep(3)
    raise RuntimeError("the guest did not answer ssh on 127.0.0.1:%d within %d s (its "
                       "console: %s)" % (a.port, a.boot_timeout,
                                         os.path.join(a.cache, "console.log")))


def console_reader(sock_path: str, log_path: str):
    """Copy the serial console into LOG_PATH from a process of its own, which ends when
    qemu closes the socket."""
    for _ in range(50):
        if os.path.exists(sock_path):
            break
        time.sleep(0.1)
    return subprocess.Popen([sys.executable, "-c", (
        "import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
        "f=open(sys.argv[2],'ab')\n"
        "while True:\n"
        "    b=s.recv(4096)\n"
        "    if not b: break\n"
        "    f.write(b); f.flush()\n"), sock_path, log_path],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def stage_install(a) -> str:
    missing = [f for f in CORE_FILES[:1] if not os.path.exists(os.path.join(a.core, f))]
    if missing:
        how = ("python3 scripts/netbsd-build.py --stages core" if a.guest == "netbsd"
               else "make -C core")
        raise CannotHere("no core for the %s guest in %s (%s builds it)" % (a.guest, a.core, how))
    files = [f for f in CORE_FILES if os.path.exists(os.path.join(a.core, f))]
    # One tar stream through ssh: the guests have no rsync or scp server to count on.
    tar = subprocess.Popen(["tar", "-C", a.core, "-cf", "-", *files], stdout=subprocess.PIPE)
    r = subprocess.run(ssh_words(a) + ["mkdir -p /opt/osmeter && cd /opt/osmeter && "
                                       "tar -xf - && uname -sr"],
                       stdin=tar.stdout, capture_output=True, text=True, timeout=300)
    tar.wait()
    if r.returncode != 0:
        raise RuntimeError("copying the core: " + r.stderr.strip())
    return "installed %s on %s" % (", ".join(files), r.stdout.strip())


def stage_run(a) -> str:
    core_cmd = shlex.join(ssh_words(a) + ["/opt/osmeter/osmeter-core"])
    said = []
    # Benchmark ids after -- are run instead of the suites.
    ids = any(not w.startswith("-") and "." in w for w in a.rest)
    suites = [None] if a.smoke or ids else a.suite.split(",")
    for suite in suites:
        label = a.label if len(suites) == 1 else "%s-%s" % (a.label, suite)
        cmd = [sys.executable, "-m", "osmeter", "run", "--core", core_cmd, "--label", label]
        if a.smoke:
            cmd += ["--smoke", "--runs", "1"]
        elif suite:
            cmd += ["--suite", suite]
        # qemu runs the guest: its CPU time is the benchmark's, not another process's.
        env = dict(os.environ, PYTHONPATH=REPO, OSMETER_CORE_PIDS=str(qemu_pid(a) or ""))
        r = subprocess.run(cmd + a.rest, cwd=REPO, env=env)
        if r.returncode not in (0, 1):     # 1: some results failed, and they are stored
            raise RuntimeError("osmeter run exited %d" % r.returncode)
        said.append("'%s'%s" % (label, "" if r.returncode == 0 else " (some results failed)"))
    return "stored " + ", ".join(said)


def stage_stop(a) -> str:
    pid = qemu_pid(a)
    said = "stopped"
    if pid:
        t0 = time.monotonic()
        command = GUESTS[a.guest]["power_off"]
        try:
            r = subprocess.run(ssh_words(a) + [command], capture_output=True, text=True,
                               timeout=30)
            # 255: the connection closed under it as the guest went down
            answer = r.stderr.strip() if r.returncode not in (0, 255) else ""
        except subprocess.TimeoutExpired:
            answer = "no answer in 30 s"
        for _ in range(600):
            if not qemu_pid(a):
                break
            time.sleep(0.1)
        if qemu_pid(a):
            os.kill(pid, signal.SIGKILL)
            for _ in range(50):
                if not qemu_pid(a):
                    break
                time.sleep(0.1)
            said = "'%s' did not power it off in 60 s%s: qemu killed" % (
                command, " (%s)" % answer if answer else "")
        else:
            said = "powered off by '%s' in %.0f s" % (command, time.monotonic() - t0)
    for name in ("overlay.qcow2", "qemu.pid", "console.sock"):
        try:
            os.unlink(os.path.join(a.cache, name))
        except FileNotFoundError:
            pass
    return said if pid else "nothing was running"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--guest", choices=sorted(GUESTS), required=True)
    p.add_argument("--image", help="the guest's disk image (default: where its build puts it)")
    p.add_argument("--core", help="the directory of the core to install (default: the "
                                  "guest's own build)")
    p.add_argument("--cache", help="where the overlay, pid, console and logs go (default "
                                   "/var/cache/osmeter-vm-GUEST)")
    p.add_argument("--key-dir", default=KEY_DIR)
    p.add_argument("--port", type=int, default=2222)
    p.add_argument("--suite", default="quick", help="one suite or several, comma-separated")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--label", help="default: GUEST-guest")
    p.add_argument("--boot-timeout", type=int, default=300)
    p.add_argument("--kernel-arg", dest="kernel_args", action="append", default=[],
                   help="one more argument for the Linux guest's kernel (e.g. "
                        "mitigations=off, to measure without Meltdown/Spectre defences)")
    p.add_argument("--stages", default=",".join(STAGES))
    p.add_argument("rest", nargs="*", help="more arguments for osmeter run (after --)")
    a = p.parse_args(argv)
    stages = a.stages.split(",")
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        p.error("unknown stage(s): %s (stages: %s)" % (", ".join(unknown), ", ".join(STAGES)))
    a.image = a.image or GUESTS[a.guest]["image"]
    a.core = a.core or GUESTS[a.guest]["core"]
    a.cache = a.cache or "/var/cache/osmeter-vm-" + a.guest
    a.label = a.label or a.guest + "-guest"
    os.makedirs(a.cache, exist_ok=True)
    ensure_key(a.key_dir)
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
        if status:
            if "stop" in stages and name != "stop":
                stage_stop(a)
            break
    return status


if __name__ == "__main__":
    sys.exit(main())
