#!/usr/bin/env python3
"""Build the Linux guest that runs beside the NetBSD one on the same virtual hardware.

    python3 scripts/linux-guest-build.py [--cache DIR] [--suite bookworm] [--force]

A minimal Debian root made from the apt registry with mmdebstrap: Debian's own kernel
(linux-image-amd64), systemd, sshd, and nothing osmeter's core does not need, so that
the guest is as bare as the NetBSD base system beside it.  It is written into an ext4
disk image of the same size as the NetBSD image (mkfs.ext4 -d: no loop mount), and the
kernel and initrd are copied out beside it, since qemu boots them directly (-kernel).
scripts/guest-vm.py boots it.  The guest takes the address qemu's user network gives
(10.0.2.15), and sshd lets root in only with the key CACHE/id.pub (made if missing,
shared with the NetBSD guest).

Output, in CACHE (default /var/cache/osmeter-linux-guest): linux.img, vmlinuz, initrd.img,
version.txt (the kernel's version), build.log.  Skipped when linux.img exists (--force
makes it again).  Takes a few minutes.  Exit status 0 built or up to date, 1 failed,
2 cannot run here (no mmdebstrap, not root).
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from guest_hardware import DISK_MB, ensure_key  # noqa: E402

# What the guest needs: a kernel and init, sshd for --core 'ssh ...', and the programs
# the core itself starts (sh for app.start.sh and the exec benchmarks).
PACKAGES = ["linux-image-amd64", "systemd-sysv", "udev", "openssh-server", "iproute2",
            "kmod", "procps"]

NETWORK = """[Match]
Name=en* eth*

[Network]
Address=10.0.2.15/24
Gateway=10.0.2.2
"""

SSHD = """PermitRootLogin prohibit-password
PasswordAuthentication no
UseDNS no
"""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", default="/var/cache/osmeter-linux-guest")
    p.add_argument("--key-dir", default="/var/cache/osmeter-bsd",
                   help="where the ssh key id/id.pub of both guests is kept")
    p.add_argument("--suite", default="bookworm")
    p.add_argument("--force", action="store_true")
    a = p.parse_args(argv)
    os.makedirs(a.cache, exist_ok=True)
    image = os.path.join(a.cache, "linux.img")
    if os.path.exists(image) and not a.force:
        print("linux-guest-build: up to date: %s (%s)"
              % (image, open(os.path.join(a.cache, "version.txt")).read().strip()))
        return 0
    if not shutil.which("mmdebstrap") or not shutil.which("mkfs.ext4"):
        print("linux-guest-build: cannot run here: needs mmdebstrap and mkfs.ext4 "
              "(apt-get install mmdebstrap e2fsprogs)", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("linux-guest-build: cannot run here: mmdebstrap's directory mode needs root",
              file=sys.stderr)
        return 2
    key = ensure_key(a.key_dir)
    t0 = time.monotonic()
    logf = open(os.path.join(a.cache, "build.log"), "w")
    with tempfile.TemporaryDirectory(dir=a.cache) as tmp:
        root = os.path.join(tmp, "root")
        cmd = ["mmdebstrap", "--variant=apt", "--include=" + ",".join(PACKAGES),
               "--dpkgopt=path-exclude=/usr/share/{doc,man,locale}/*",
               a.suite, root]
        logf.write("$ %s\n" % " ".join(cmd))
        logf.flush()
        r = subprocess.run(cmd, stdout=logf, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            print("linux-guest-build: mmdebstrap failed (%s)" % logf.name, file=sys.stderr)
            return 1
        configure(root, open(key + ".pub").read())
        kernels = sorted(glob.glob(os.path.join(root, "boot", "vmlinuz-*")))
        if not kernels:
            print("linux-guest-build: no kernel in the root", file=sys.stderr)
            return 1
        version = os.path.basename(kernels[-1])[len("vmlinuz-"):]
        shutil.copy(kernels[-1], os.path.join(a.cache, "vmlinuz"))
        shutil.copy(os.path.join(root, "boot", "initrd.img-" + version),
                    os.path.join(a.cache, "initrd.img"))
        tmpimg = image + ".part"
        r = subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "root", "-d", root, tmpimg,
                            "%dM" % DISK_MB], stdout=logf, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            print("linux-guest-build: mkfs.ext4 failed (%s)" % logf.name, file=sys.stderr)
            return 1
        os.replace(tmpimg, image)
    with open(os.path.join(a.cache, "version.txt"), "w") as f:
        f.write("Linux %s (Debian %s)\n" % (version, a.suite))
    print("linux-guest-build: %s: Linux %s, %.0f s" % (image, version, time.monotonic() - t0))
    return 0


def write(root: str, path: str, text: str, mode: int = 0o644) -> None:
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)
    os.chmod(full, mode)


def configure(root: str, pubkey: str) -> None:
    write(root, "/etc/hostname", "linux-guest\n")
    write(root, "/etc/hosts", "127.0.0.1 localhost\n127.0.1.1 linux-guest\n"
                              "::1 localhost\n")
    write(root, "/etc/fstab", "LABEL=root / ext4 rw,relatime 0 1\n")
    write(root, "/etc/systemd/network/10-qemu.network", NETWORK)
    write(root, "/etc/ssh/sshd_config.d/osmeter.conf", SSHD)
    write(root, "/root/.ssh/authorized_keys", pubkey, 0o600)
    os.chmod(os.path.join(root, "root", ".ssh"), 0o700)
    # systemd-networkd brings the address up; nothing waits for a network that has no
    # other host to answer.
    wants = os.path.join(root, "etc/systemd/system/multi-user.target.wants")
    os.makedirs(wants, exist_ok=True)
    link = os.path.join(wants, "systemd-networkd.service")
    if not os.path.lexists(link):
        os.symlink("/lib/systemd/system/systemd-networkd.service", link)
    # The serial console, as on the NetBSD guest: the boot log can be read from the host.
    getty = os.path.join(root, "etc/systemd/system/getty.target.wants")
    os.makedirs(getty, exist_ok=True)
    link = os.path.join(getty, "serial-getty@ttyS0.service")
    if not os.path.lexists(link):
        os.symlink("/lib/systemd/system/serial-getty@.service", link)


if __name__ == "__main__":
    sys.exit(main())
