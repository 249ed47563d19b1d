"""What file system a directory is on, and whether a benchmark may work in it.

`describe(path)` is recorded with every run that names a directory (`--dir`): the file
system type, its mount point and options, the device behind it, the space on it, and
whether its data lives on another machine (`remote`: NFS, SMB, sshfs, ...).
On Linux it reads /proc/self/mountinfo; elsewhere (BSD, macOS) it parses `df -P` and
`mount`.  `check_dir(path, need_bytes)` is what the front-end asks before a run starts;
the core makes the same checks itself before it creates anything.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys


# File-system types whose data lives on another machine: mount-table names, and the names
# the core notes (from statfs magic numbers, where every FUSE file system is "fuse").
NETWORK_FS = {"nfs", "nfs4", "cifs", "smb2", "smb3", "smbfs", "9p", "ceph", "afs",
              "glusterfs", "lustre", "davfs", "fuse", "fuse.sshfs", "sshfs",
              "fuse.glusterfs", "fuse.rclone", "fuse.s3fs"}


def is_remote(fs_type: str | None) -> bool:
    """Whether a file system of this type keeps its data on another machine."""
    return fs_type in NETWORK_FS


def _unescape(s: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)


def _mountinfo(text: str) -> list[dict]:
    """Parse /proc/self/mountinfo (proc(5)) into one dict per mount, in mount order."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        f = left.split()
        r = right.split()
        if len(f) < 6 or len(r) < 2:
            continue
        mounts.append({
            "mount_id": int(f[0]),
            "dev": f[2],                                   # major:minor
            "root": _unescape(f[3]),
            "mount_point": _unescape(f[4]),
            "mount_options": f[5],
            "fs_type": r[0],
            "device": _unescape(r[1]),
            "super_options": r[2] if len(r) > 2 else "",
        })
    return mounts


def _contains(mount_point: str, path: str) -> bool:
    return mount_point == "/" or path == mount_point or path.startswith(mount_point + "/")


def _loop_backing_file(device: str) -> str | None:
    """The image file behind a loop device (/sys/block/loopN/loop/backing_file)."""
    m = re.fullmatch(r"/dev/(loop\d+)", device)
    if not m:
        return None
    try:
        with open("/sys/block/%s/loop/backing_file" % m.group(1)) as f:
            return f.read().strip() or None
    except OSError:
        return None


def _linux(path: str) -> dict | None:
    try:
        with open("/proc/self/mountinfo") as f:
            mounts = _mountinfo(f.read())
    except OSError:
        return None
    st = os.stat(path)
    dev = "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
    # The innermost mount containing the path; a later mount on the same point hides
    # an earlier one, so among equals the last wins.  Prefer those whose device number
    # matches the path's (it tells bind mounts and over-mounts apart).
    best = None
    for m in mounts:
        if not _contains(m["mount_point"], path):
            continue
        key = (m["dev"] == dev, len(m["mount_point"]))
        if best is None or key >= best[0]:
            best = (key, m)
    if best is None:
        return None
    m = best[1]
    info = {k: m[k] for k in ("fs_type", "mount_point", "mount_options", "device",
                              "super_options", "root")}
    # Per-mount options, then the file system's own (duplicates dropped).
    opts = (m["mount_options"] + "," + m["super_options"]).split(",")
    info["mount_options"] = ",".join(dict.fromkeys(o for o in opts if o))
    info["device_number"] = m["dev"]
    backing = _loop_backing_file(m["device"])
    if backing:
        info["backing_file"] = backing
    return info


_DF_LINE = re.compile(r"^(?P<device>.+?)\s+\d+\s+\d+\s+-?\d+\s+(?:\d+%|-)\s+(?P<mount>/.*)$")


def _parse_df(text: str) -> dict:
    """`df -P PATH`: the device and mount point.  Both may contain spaces ("map
    auto_home", "/Volumes/My Disk"); the four number columns between them never do."""
    lines = text.splitlines()
    m = _DF_LINE.match(lines[1]) if len(lines) >= 2 else None
    return {"device": m.group("device"), "mount_point": m.group("mount")} if m else {}


def _parse_mount(text: str, mount_point: str) -> dict:
    """`mount`: the type and options of mount_point.  Linux prints
    "dev on /mnt type ext4 (rw,relatime)", the BSDs and macOS "dev on /mnt (ufs, local)"
    (FreeBSD's FUSE mounts: "fusefs.sshfs").  The mount point is matched whole, so
    that one with spaces in it is found."""
    info: dict = {}
    linux, bsd = " on %s type " % mount_point, " on %s (" % mount_point
    for line in text.splitlines():
        if not line.endswith(")"):
            continue
        if linux in line:     # TYPE (OPTIONS)
            fs_type, _, opts = line.split(linux, 1)[1][:-1].partition(" (")
        elif bsd in line:     # TYPE, OPTION, OPTION
            fs_type, _, opts = line.split(bsd, 1)[1][:-1].partition(", ")
        else:
            continue
        # the last one wins: it hides the others
        info = {"fs_type": fs_type, "mount_options": opts.replace(", ", ",")}
    return info


def _output(args: list[str]) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _portable(path: str) -> dict:
    """BSD/macOS: `df -P` names the device and mount point, `mount` the type and options."""
    info = _parse_df(_output(["df", "-P", path]))
    if "mount_point" in info:
        info.update(_parse_mount(_output(["mount"]), info["mount_point"]))
    return info


def describe(path: str) -> dict:
    """The file system holding path: type, mount point and options, device, space.

    Raises OSError when path does not exist (call check_dir first)."""
    real = os.path.realpath(path)
    info = (_linux(real) if sys.platform.startswith("linux") else None) or _portable(real)
    info["path"] = real
    try:
        sv = os.statvfs(real)
        info["total_bytes"] = sv.f_blocks * sv.f_frsize
        info["free_bytes"] = sv.f_bavail * sv.f_frsize
        info["read_only"] = bool(sv.f_flag & os.ST_RDONLY)
    except OSError:
        pass
    for key in ("fs_type", "mount_point", "mount_options", "device"):
        info.setdefault(key, None)
    info["remote"] = is_remote(info["fs_type"])
    return info


def check_dir(path: str, need_bytes: int = 0) -> str | None:
    """Why a benchmark may not work in path (one line), or None when it may."""
    if not os.path.exists(path):
        return "%s: no such directory" % path
    if not os.path.isdir(path):
        return "%s: not a directory" % path
    try:
        sv = os.statvfs(path)
    except OSError as e:
        return "%s: %s" % (path, e.strerror)
    if sv.f_flag & os.ST_RDONLY:
        return "%s: on a read-only file system" % path
    if not os.access(path, os.W_OK | os.X_OK):
        return "%s: not writable" % path
    # The same margin as the core (core/lib/workdir.c: fs_workdir).
    need = need_bytes * 1.1 + 256 * 1024
    free = sv.f_bavail * sv.f_frsize
    if need > free:
        return "%s: needs %.1f MB free, has %.1f MB" % (path, need / 2 ** 20, free / 2 ** 20)
    return None
