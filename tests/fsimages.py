"""Real file systems for the file-system tests and bench/fs_compare.py.

`mounted(kind)` makes a file system of the kind (ext4, xfs, btrfs on a loop device with
direct I/O over an image file, or tmpfs) in a fresh temporary directory, yields its mount point and, in a
`finally`, unmounts it and deletes the image, whatever happened inside.  Every path has
'osmeter' in it so that a leftover is recognisable: the image directory is
$TMPDIR/osmeter-fsimg-XXXX, the mount point .../osmeter-mnt-KIND.

Needs root (mount) and, for the image kinds, mkfs.KIND (apt: e2fsprogs, xfsprogs,
btrfs-progs); otherwise `Unavailable` is raised with the reason.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time

try:
    import sshhosts
except ImportError:     # imported as tests.fsimages (bench/fs_compare.py)
    from tests import sshhosts

KINDS = ("ext4", "xfs", "btrfs", "tmpfs")
# Sparse images: only what is written takes space.  xfs refuses less than 300 MB.
DEFAULT_SIZE_MB = 320
MKFS_ARGS = {"ext4": ["-q", "-F"], "xfs": ["-q", "-f"], "btrfs": ["-q", "-f"]}


class Unavailable(Exception):
    """This file system cannot be made here (not root, no mkfs tool); the reason."""


_run = sshhosts.run     # a command that must succeed, or RuntimeError with its words


def is_mounted(path: str) -> bool:
    real = os.path.realpath(path)
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == real for line in f)


def unmount(path: str) -> None:
    """Unmount, retrying while the mount is busy; lazily as the last resort."""
    for attempt in range(20):
        if not is_mounted(path):
            return
        if subprocess.run(["umount", path], capture_output=True).returncode == 0:
            return
        time.sleep(0.1 * (attempt + 1))
    subprocess.run(["umount", "-l", path], capture_output=True)


def check_available(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError("unknown file-system kind %r (one of %s)" % (kind, ", ".join(KINDS)))
    if os.geteuid() != 0:
        raise Unavailable("mounting %s needs root" % kind)
    if kind != "tmpfs" and not shutil.which("mkfs." + kind):
        raise Unavailable("mkfs.%s is not installed" % kind)


@contextlib.contextmanager
def mounted(kind: str, size_mb: int = DEFAULT_SIZE_MB, options: str = ""):
    """Yield the mount point of a fresh file system of this kind; always cleaned up."""
    check_available(kind)
    base = tempfile.mkdtemp(prefix="osmeter-fsimg-")
    mnt = os.path.join(base, "osmeter-mnt-" + kind)
    image = os.path.join(base, "osmeter-%s.img" % kind)
    try:
        os.mkdir(mnt)
        opts = ["-o", options] if options else []
        if kind == "tmpfs":
            opts = ["-o", "size=%dm" % size_mb + ("," + options if options else "")]
            _run(["mount", "-t", "tmpfs"] + opts + ["osmeter-tmpfs", mnt])
        else:
            with open(image, "wb") as f:
                f.truncate(size_mb * 2 ** 20)
            _run(["mkfs." + kind] + MKFS_ARGS[kind] + [image])
            # direct-io: the loop device reads the image with O_DIRECT, so a read that
            # is cold in this file system is not served from the image's page cache.
            r = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", image],
                               capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                raise RuntimeError("losetup %s failed: %s" % (image, r.stderr.strip()))
            _run(["mount"] + opts + [r.stdout.strip(), mnt])
        yield mnt
    finally:
        unmount(mnt)
        problem = "could not unmount %s" % mnt if is_mounted(mnt) else None
        try:
            detach_loops(image)
        except RuntimeError as e:
            problem = str(e)
        if not is_mounted(mnt):   # never delete through a live mount
            shutil.rmtree(base, ignore_errors=True)
        if problem:
            raise RuntimeError(problem)


@contextlib.contextmanager
def read_only_bind(path: str):
    """Yield a read-only bind mount of path (root cannot be kept out by chmod)."""
    if os.geteuid() != 0:
        raise Unavailable("a read-only bind mount needs root")
    base = tempfile.mkdtemp(prefix="osmeter-robind-")
    mnt = os.path.join(base, "osmeter-ro")
    try:
        os.mkdir(mnt)
        _run(["mount", "--bind", path, mnt])
        _run(["mount", "-o", "remount,bind,ro", mnt])
        yield mnt
    finally:
        unmount(mnt)
        if is_mounted(mnt):
            raise RuntimeError("could not unmount %s" % mnt)
        shutil.rmtree(base, ignore_errors=True)


def detach_loops(image: str) -> None:
    """Detach the loop devices of image; the kernel may finish a detach asynchronously
    (after the last unmount), so wait for it."""
    if not os.path.exists(image):
        return
    for attempt in range(50):
        devices = loop_devices_of(image)
        if not devices:
            return
        for dev in devices:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        time.sleep(0.1)
    raise RuntimeError("could not detach the loop device of %s: %s" % (image, devices))


def loop_devices_of(image: str) -> list[str]:
    """Loop devices still attached to image (none once mounted() has cleaned up)."""
    r = subprocess.run(["losetup", "-j", image], capture_output=True, text=True)
    return [line.split(":")[0] for line in r.stdout.splitlines() if line.strip()]


@contextlib.contextmanager
def sshfs_mounted(delay_ms: float = 0.0):
    """Yield the mount point of an sshfs ("remote") file system: sshd runs in a network
    namespace of its own, ssh in another, joined by a veth pair (optionally with a netem
    delay); the FUSE mount itself is in this mount namespace, so the benchmark sees it.
    The exported directory is on this machine's disk.  Everything (mount, sshd, both
    namespaces, keys) is removed afterwards.  Needs root, sshd, sshfs, ip (iproute2);
    the sshd and keys are made as for the other ssh hosts of the tests (sshhosts.py)."""
    try:
        sshhosts.sshd_path()
    except sshhosts.Unavailable as e:
        raise Unavailable(str(e)) from None
    if not shutil.which("sshfs"):
        raise Unavailable("sshfs is not installed (apt: sshfs)")
    tag = "%d" % os.getpid()
    srv_ns, cli_ns = "osmeter-sshfs-srv-" + tag, "osmeter-sshfs-cli-" + tag
    srv_if, cli_if = "osm%ss" % tag[-7:], "osm%sc" % tag[-7:]
    base = tempfile.mkdtemp(prefix="osmeter-sshfs-")
    export, mnt = os.path.join(base, "export"), os.path.join(base, "osmeter-mnt-sshfs")
    daemon = None
    namespaces = []
    try:
        os.mkdir(export)
        os.mkdir(mnt)
        key = sshhosts.keypair(os.path.join(base, "id"))
        hostkey = sshhosts.keypair(os.path.join(base, "hostkey"))
        shutil.copy(key + ".pub", os.path.join(base, "authorized_keys"))
        for ns in (srv_ns, cli_ns):
            _run(["ip", "netns", "add", ns])
            namespaces.append(ns)
        _run(["ip", "link", "add", cli_if, "netns", cli_ns, "type", "veth", "peer", "name",
              srv_if, "netns", srv_ns])
        for ns, ifname, addr in ((srv_ns, srv_if, "10.213.0.2/24"),
                                 (cli_ns, cli_if, "10.213.0.1/24")):
            _run(["ip", "-n", ns, "addr", "add", addr, "dev", ifname])
            _run(["ip", "-n", ns, "link", "set", ifname, "up"])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
        if delay_ms:
            r = subprocess.run(["ip", "netns", "exec", srv_ns, "tc", "qdisc", "add", "dev",
                                srv_if, "root", "netem", "delay", "%gms" % delay_ms],
                               capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                raise Unavailable("netem delay on the link: %s (no sch_netem in this kernel?)"
                                  % (r.stderr or r.stdout).strip())
        daemon = sshhosts.start_sshd(srv_ns, "10.213.0.2", hostkey,
                                     os.path.join(base, "authorized_keys"))
        ssh_cmd = ("ip netns exec %s ssh -F /dev/null -i %s -o StrictHostKeyChecking=no "
                   "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR" % (cli_ns, key))
        r = subprocess.run(["sshfs", "root@10.213.0.2:" + export, mnt,
                            "-o", "ssh_command=" + ssh_cmd], capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("sshfs mount failed: %s" % r.stderr.strip())
        yield mnt
    finally:
        if is_mounted(mnt):
            subprocess.run(["fusermount", "-u", mnt], capture_output=True)
            unmount(mnt)
        if daemon is not None:
            sshhosts.stop(daemon)
        for ns in namespaces:   # deleting a namespace deletes its end of the veth pair
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        if is_mounted(mnt):
            raise RuntimeError("could not unmount %s" % mnt)
        shutil.rmtree(base, ignore_errors=True)
