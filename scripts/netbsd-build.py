#!/usr/bin/env python3
"""Build NetBSD 6.99.16 amd64 from source on this Linux machine: tools, kernel, base, image.

    python3 scripts/netbsd-build.py [--git DIR] [--cache DIR] [--jobs N] [--stages LIST]
    python3 scripts/netbsd-build.py --status

The source is the tree that `fetch github:fallen/NetBSD6` brings (279 MB packed, about
1.9 GB unpacked: NetBSD-current of February 2013 with build.sh, GCC 4.5.4 and binutils;
NetBSD's own files from its first commit, the host toolchain's fixes from its newest:
TOOLCHAIN below).
Stages, each timed, logged to CACHE/logs/STAGE.log, and skipped once its stamp
CACHE/stamps/STAGE exists (a stage that fails leaves no stamp; run again to resume; a
build.sh stage resumes where make stopped, since build.sh is run with -u):

  extract   the tree's files into CACHE/src, one blob at a time: the fetch left out files
            of 4 MiB or more, and `git archive` stops at the first one missing.  The ones
            missing are listed in CACHE/missing.txt (MISSING_OK below says why the build
            does without each).
  patch     scripts/netbsd-patches/*.patch, applied in order, each saying why (run every
            time: a patch applied before is left as it is, a new one is applied)
  tools     build.sh tools: the cross toolchain (nbmake, GCC 4.5.4, binutils, nbmakefs ...)
            built with this machine's compiler
  kernel    build.sh kernel=GENERIC
  base      build.sh distribution with the MK* options of BASE_OPTIONS (no X11, no
            compiler or toolchain in the image, no profiled or 32-bit libraries)
  image     a bootable disk image (MBR, disklabel, FFSv1 root, bootxx and /boot) made
            with the tree's own nbmakefs, nbdisklabel, nbfdisk and nbinstallboot:
            CACHE/netbsd.img, with sshd on and root let in by key (CACHE/id.pub)
  core      osmeter's core built with the tree's cross-compiler (x86_64--netbsd-gcc)
            against the tree's own libc in DESTDIR: CACHE/core/osmeter-core

Nothing is written into the repository.  scripts/guest-vm.py --guest netbsd boots the
image and runs a suite on it.  The build takes hours on 2 cores: run it in the background
(nohup), never in CI.  Exit status: 0 when every stage asked for is done, 1 when one
failed (its log says why), 2 when it cannot start here (no tree, no compiler).
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PATCHES = os.path.join(HERE, "netbsd-patches")
DEFAULT_GIT = "/work/.mirror/fallen+NetBSD6/repo/.git"
STAGES = ("extract", "patch", "tools", "kernel", "base", "image", "core")

# The files the fetch leaves out (4 MiB or more) and why the build does without them.
MISSING_OK = {
    "external/public-domain/sqlite/dist/sqlite3.c":
        "the SQLite amalgamation: libsqlite3 and its users (makemandb, apropos) are "
        "left out of the build by a patch",
    "external/gpl3/gcc/dist/libgcc/config/libbid/bid_binarydecimal.c":
        "decimal floating point in libgcc: not built (no decimal float)",
    "external/gpl3/binutils/dist/opcodes/m32c-desc.c":
        "an opcode table of the Renesas M32C: not used for amd64",
    "external/gpl3/gdb/dist/opcodes/m32c-desc.c":
        "an opcode table of the Renesas M32C: gdb is not built",
    "external/gpl3/gcc/dist/MD5SUMS":
        "GCC's list of checksums: only for gcc's own release checks",
}


class CannotHere(Exception):
    """A stage this machine cannot run; the reason."""


def log(msg: str) -> None:
    print(time.strftime("%H:%M:%S ") + "netbsd-build: " + msg, flush=True)


# --- extract ---------------------------------------------------------------------

def stage_extract(a) -> str:
    if not os.path.isdir(a.git):
        raise CannotHere("no NetBSD tree at %s: bring it with the session tool "
                         "`fetch github:fallen/NetBSD6` (or give --git)" % a.git)
    src = os.path.join(a.cache, "src")
    entries = tree_entries(a.git)
    # Every file gets the commit's time: a checkout's times are the order it was written
    # in, and make would then regenerate files the tree ships generated (gcc's
    # gengtype-lex.c from its .l, with a flex this machine need not have).
    when = int(subprocess.run(["git", "--git-dir", a.git, "log", "-1", "--format=%ct", "HEAD"],
                              capture_output=True, text=True, check=True).stdout)
    missing = []
    cat = subprocess.Popen(["git", "--git-dir", a.git, "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    # Feed the names from a thread of its own: cat-file answers while it reads.
    feeder = threading.Thread(target=lambda: (cat.stdin.write(
        b"".join(sha.encode() + b"\n" for _, sha, _ in entries)), cat.stdin.close()))
    feeder.start()
    for mode, sha, path in entries:
        header = cat.stdout.readline().split()
        if header[1:2] == [b"missing"]:
            missing.append(path)
            continue
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)                       # the newline after each object
        dest = os.path.join(src, path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if os.path.lexists(dest):
            os.unlink(dest)
        if mode == "120000":
            os.symlink(data, dest)
        else:
            with open(dest, "wb") as f:
                f.write(data)
            if mode == "100755":
                os.chmod(dest, 0o755)
        os.utime(dest, (when, when), follow_symlinks=False)
    feeder.join()
    cat.wait()
    with open(os.path.join(a.cache, "missing.txt"), "w") as f:
        for path in missing:
            f.write("%s\t%s\n" % (path, MISSING_OK.get(path, "NOT EXPECTED")))
    unexpected = [p for p in missing if p not in MISSING_OK]
    if unexpected:
        raise RuntimeError("files missing from the fetched tree that the build needs: "
                           + ", ".join(unexpected))
    return "%d files, %d left out by the fetch (missing.txt)" % (len(entries) - len(missing),
                                                                 len(missing))


# The fetched repository is NetBSD-current of 17 February 2013 as its first commit
# ("Initial import of NetBSD code base"), then a port to the LatticeMico32 CPU, which also
# changed NetBSD's own kernel and libc (uvm, init_main, pool, jemalloc) and fixed the
# toolchain for newer hosts.  The system built here is NetBSD's own: every file from the
# first commit, except the host's toolchain (GCC, binutils, GMP/MPFR, GNU make, tools/gcc),
# taken with those fixes from the newest commit (cross-compiler for C only).
TOOLCHAIN = ("external/gpl3/gcc/", "external/gpl3/binutils/", "external/lgpl3/",
             "gnu/dist/", "tools/gcc/")


def tree_entries(git: str) -> list[tuple[str, str, str]]:
    """(mode, blob, path) of every file to extract: NetBSD's own from the first commit,
    the toolchain from the newest."""
    def listing(commit):
        out = subprocess.run(["git", "--git-dir", git, "ls-tree", "-r", "-z", commit],
                             capture_output=True, check=True).stdout.split(b"\0")
        for line in out:
            if line:
                meta, path = line.split(b"\t", 1)
                mode, kind, sha = meta.split()
                if kind == b"blob":
                    yield mode.decode(), sha.decode(), path.decode("utf-8", "surrogateescape")
    first = subprocess.run(["git", "--git-dir", git, "rev-list", "--max-parents=0", "HEAD"],
                           capture_output=True, text=True, check=True).stdout.split()[0]
    return ([e for e in listing(first) if not e[2].startswith(TOOLCHAIN)]
            + [e for e in listing("HEAD") if e[2].startswith(TOOLCHAIN)])


# --- patch -----------------------------------------------------------------------

def stage_patch(a) -> str:
    src = os.path.join(a.cache, "src")
    done = []
    for patch in sorted(glob.glob(os.path.join(PATCHES, "*.patch"))):
        with open(patch, "rb") as f:
            r = subprocess.run(["patch", "-p1", "--forward", "--batch", "-d", src],
                               stdin=f, capture_output=True, text=True)
        if r.returncode == 0:
            done.append(os.path.basename(patch))
        elif "Reversed (or previously applied)" not in r.stdout:
            raise RuntimeError("%s does not apply:\n%s" % (patch, r.stdout[-2000:]))
    return "applied " + (", ".join(done) or "nothing new")


# --- build.sh stages ---------------------------------------------------------------

# Options for the base system: what the image needs to boot, run sshd and run the core.
# MKMAKEMANDB=no and MKPOSTFIX=no also leave out the users of SQLite, whose amalgamation
# the fetch could not bring (patch 02).  MKCXX=no: nothing left in the base needs C++.
BASE_OPTIONS = ["MKX11=no", "MKGCCCMDS=no", "MKBINUTILS=no", "MKGDB=no", "MKLINT=no",
                "MKPROFILE=no", "MKDEBUGLIB=no", "MKDEBUG=no", "MKCOMPAT=no", "MKMAN=no",
                "MKDOC=no", "MKINFO=no", "MKHTML=no", "MKCATPAGES=no", "MKATF=no",
                "MKKMOD=no", "MKCVS=no", "MKPOSTFIX=no", "MKBIND=no", "MKLDAP=no",
                "MKKERBEROS=no", "MKHESIOD=no", "MKSKEY=no", "MKYP=no", "MKZFS=no",
                "MKGROFF=no", "MKLLVM=no", "MKPCC=no", "MKCTF=no", "MKSHARE=yes",
                "MKRUMP=no", "MKMANDOC=no", "MKPAM=yes", "MKCRYPTO=yes", "MKINET6=yes",
                "MKNLS=no", "MKTEXINFO=no", "MKMAKEMANDB=no", "MKCXX=no"]

# This machine's compiler is GCC 12; the 2013 tree's host code (tools) predates its
# defaults: -fno-common (GCC 10) and C17 inline semantics.  build.sh hands HOST_CFLAGS
# to every host tool it builds.
HOST_CFLAGS = "-O2 -fcommon -std=gnu89 -w"
HOST_CXXFLAGS = "-O2 -fcommon -std=gnu++98 -w"


def build_sh(a, *ops: str) -> list[str]:
    obj = os.path.join(a.cache, "obj")
    words = ["./build.sh", "-U", "-u", "-m", "amd64", "-j", str(a.jobs), "-N", "1",
             "-O", obj, "-T", os.path.join(a.cache, "tools"),
             "-D", os.path.join(a.cache, "destdir"), "-R", os.path.join(a.cache, "release")]
    for opt in BASE_OPTIONS:
        words += ["-V", opt]
    words += ["-V", "HOST_CFLAGS=" + HOST_CFLAGS, "-V", "HOST_CXXFLAGS=" + HOST_CXXFLAGS]
    return words + list(ops)


def run_logged(a, stage: str, cmd: list[str], cwd: str, env=None) -> None:
    logf = os.path.join(a.cache, "logs", stage + ".log")
    with open(logf, "a") as out:
        out.write("\n==== %s %s\n" % (time.strftime("%Y-%m-%d %H:%M:%S"), " ".join(cmd)))
        out.flush()
        r = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env,
                           stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        with open(logf, errors="replace") as f:
            tail = f.readlines()[-25:]
        raise RuntimeError("%s exited %d; the end of %s:\n%s"
                           % (cmd[0], r.returncode, logf, "".join(tail)))


def host_env() -> dict:
    # build.sh looks for the host compiler as cc; HOST_CC is what it builds tools with.
    env = dict(os.environ, HOST_CC="gcc", HOST_CXX="g++", LC_ALL="C")
    env.pop("MAKEFLAGS", None)
    return env


def stage_tools(a) -> str:
    if not shutil.which("gcc") or not shutil.which("g++"):
        raise CannotHere("no host C and C++ compiler (apt-get install build-essential)")
    run_logged(a, "tools", build_sh(a, "tools"), os.path.join(a.cache, "src"), host_env())
    return "tools in " + os.path.join(a.cache, "tools")


def stage_kernel(a) -> str:
    run_logged(a, "kernel", build_sh(a, "kernel=GENERIC"), os.path.join(a.cache, "src"),
               host_env())
    return "kernel in " + kernel_path(a)


def kernel_path(a) -> str:
    return os.path.join(a.cache, "obj", "sys", "arch", "amd64", "compile", "GENERIC", "netbsd")


# build.sh distribution ends by checking DESTDIR against the sets' lists (checkflist).
# What it may find, since BASE_OPTIONS and the patches leave these out (the lists do not
# follow every option): missing from DESTDIR, and extra in it.
LEFT_OUT = re.compile(r"sqlite|objc|mudflap|mf-runtime|/gdb(tui)?$")
EXTRA_OK = re.compile(r"/objc/|/libgcc(_eh)?\.a$|/libgcov\.a$")


def checkflist_differences(log: str) -> tuple[list[str], list[str]] | None:
    """(missing, extra) of the last checkflist in LOG, when the build failed there and
    nowhere else; None otherwise."""
    text = open(log, errors="replace").read()
    last = text.rfind("checkflist ===> distrib/sets")
    if last < 0 or "*** [checkflist] Error code" not in text[last:]:
        return None
    tail = text[last:]

    def listed(kind):
        m = re.search(r"=+\s+\d+ %s files? in DESTDIR\s+=+\n.*?-{10,}\n(.*?)=+\s+end of" % kind,
                      tail, re.S)
        return m.group(1).split() if m else []
    return listed("missing"), listed("extra")


def stage_base(a) -> str:
    said = base_system(a)
    # The compiler's own headers (cpuid.h, emmintrin.h, ...), which every NetBSD has in
    # /usr/include/gcc-4.5 and MKGCCCMDS=no leaves out with the compiler: the core is
    # built against them (stage core).
    run_logged(a, "base", [os.path.join(a.cache, "tools", "bin", "nbmake-amd64"), "includes"],
               os.path.join(a.cache, "src", "external", "gpl3", "gcc", "usr.bin", "include"))
    return said


def base_system(a) -> str:
    try:
        run_logged(a, "base", build_sh(a, "distribution"), os.path.join(a.cache, "src"),
                   host_env())
        return "base system in " + os.path.join(a.cache, "destdir")
    except RuntimeError:
        found = checkflist_differences(os.path.join(a.cache, "logs", "base.log"))
        if found is None:
            raise
        missing, extra = found
        unexplained = ([f for f in missing if not LEFT_OUT.search(f)]
                       + [f for f in extra if not EXTRA_OK.search(f)])
        if unexplained:
            raise RuntimeError("checkflist found files nothing explains: "
                               + ", ".join(unexplained))
        return ("base system in %s; the sets' lists name %d files left out (SQLite, "
                "Objective-C, mudflap, gdb) and miss %d built (libgcc's archives, an objc "
                "header), as expected" % (os.path.join(a.cache, "destdir"), len(missing),
                                          len(extra)))


# --- image -----------------------------------------------------------------------

# The image's layout, as the tree's own distrib/common/bootimage/Makefile.bootimage
# makes its emulator images (USE_MBR, no swap): an MBR with one NetBSD partition from
# sector 2048, a disklabel in it, and the FFSv1 root as partition a.  The root is ld0a:
# the disk is virtio (scripts/guest_hardware.py).
LABEL_SECTORS = 2048
HEADS, SECTORS = 64, 32
MBR_HEADS, MBR_SECTORS = 255, 63
BOOT_DISK = "ld0"

FSTAB = """/dev/%sa / ffs rw,log 1 1
ptyfs /dev/pts ptyfs rw 0 0
kernfs /kern kernfs rw 0 0
procfs /proc procfs rw 0 0
""" % BOOT_DISK

# What the image adds to the base system's /etc/rc.conf: sshd, a fixed address on qemu's
# user network (no DHCP server to wait for), and nothing that writes while it measures.
RC_CONF = """
# osmeter's guest (scripts/netbsd-build.py)
rc_configured=YES
hostname=netbsd-guest
ifconfig_vioif0="inet 10.0.2.15 netmask 255.255.255.0"
defaultroute=10.0.2.2
sshd=YES
cron=NO
postfix=NO
savecore=NO
"""

SSHD_CONFIG = """
# osmeter's guest: root by key only, no DNS look-ups (the guest's network reaches nothing);
# no PAM: its sshd stack names pam_skey, which MKSKEY=no leaves out ("PAM: initialisation
# failed"), and a key needs none of it
PermitRootLogin without-password
PasswordAuthentication no
UseDNS no
UsePAM no
"""

# The boot loader's menu: straight to the kernel, its console on the serial port (read
# from the host through qemu's socket).
BOOT_CFG = """banner=osmeter's NetBSD guest
consdev=com0
timeout=1
default=1
menu=Boot NetBSD:boot netbsd
"""

EXTRA_SPEC = """./netbsd type=file mode=0755 uname=root gname=wheel
./kern type=dir mode=0755 uname=root gname=wheel
./proc type=dir mode=0755 uname=root gname=wheel
./boot type=file mode=0444 uname=root gname=wheel
./boot.cfg type=file mode=0644 uname=root gname=wheel
./root/.ssh type=dir mode=0700 uname=root gname=wheel
./root/.ssh/authorized_keys type=file mode=0600 uname=root gname=wheel
"""


def tool(a, name: str) -> str:
    """A host tool the tools stage made, by the name the tree's makefiles give it."""
    named = {"fdisk": "x86_64--netbsd-fdisk", "disklabel": "nbdisklabel-amd64"}
    return os.path.join(a.cache, "tools", "bin", named.get(name, "nb" + name))


def stage_image(a) -> str:
    sys.path.insert(0, HERE)
    from guest_hardware import DISK_MB, ensure_key
    destdir = os.path.join(a.cache, "destdir")
    if not os.path.exists(os.path.join(destdir, "METALOG")) or not os.path.exists(kernel_path(a)):
        raise RuntimeError("no base system or kernel yet: run the base and kernel stages")
    pubkey = open(ensure_key(a.key_dir) + ".pub").read()
    work = os.path.join(a.cache, "image")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    root = os.path.join(work, "root")
    logf = os.path.join(a.cache, "logs", "image.log")

    def run(cmd, **kw):
        with open(logf, "a") as out:
            out.write("$ %s\n" % " ".join(cmd))
            out.flush()
            r = subprocess.run(cmd, stderr=out, **kw)
        if r.returncode != 0:
            raise RuntimeError("%s exited %d (%s)" % (os.path.basename(cmd[0]), r.returncode, logf))
        return r

    run(["cp", "-a", destdir + "/.", root], stdout=subprocess.DEVNULL)
    os.unlink(os.path.join(root, "METALOG"))
    shutil.copy(kernel_path(a), os.path.join(root, "netbsd"))
    shutil.copy(os.path.join(root, "usr", "mdec", "boot"), os.path.join(root, "boot"))
    put(root, "boot.cfg", BOOT_CFG)
    put(root, "etc/fstab", FSTAB)
    put(root, "etc/rc.conf", RC_CONF, append=True)
    # sshd takes the first value of each keyword: ours go before the file's own.
    config = os.path.join(root, "etc", "ssh", "sshd_config")
    put(root, "etc/ssh/sshd_config", SSHD_CONFIG + open(config).read())
    put(root, "root/.ssh/authorized_keys", pubkey)
    for mountpoint in ("kern", "proc"):         # as the tree's bootimage spec.in has them
        os.makedirs(os.path.join(root, mountpoint), exist_ok=True)

    # The owners and modes of every file, as the unprivileged build recorded them.
    metalog = open(os.path.join(destdir, "METALOG")).read()
    spec = run([tool(a, "mtree"), "-C", "-k", "type,mode,uname,gname,link,flags",
                "-N", os.path.join(root, "etc")], input=metalog, stdout=subprocess.PIPE,
               text=True).stdout
    devices = run(["sh", os.path.join(root, "dev", "MAKEDEV"), "-s", "all"],
                  cwd=os.path.join(root, "dev"), stdout=subprocess.PIPE, text=True).stdout
    devices = "".join(line.replace(".", "./dev", 1) + "\n" for line in devices.splitlines()
                      if line.startswith(".") and not line.startswith(". type=dir"))
    with open(os.path.join(work, "spec"), "w") as f:
        f.write(spec + devices + EXTRA_SPEC)

    image_sectors = DISK_MB * 2048
    fs_sectors = image_sectors - LABEL_SECTORS
    rootfs = os.path.join(work, "root.fs")
    run([tool(a, "makefs"), "-t", "ffs", "-B", "le", "-M", str(fs_sectors * 512), "-m",
         str(fs_sectors * 512), "-F", os.path.join(work, "spec"), "-N",
         os.path.join(root, "etc"), "-o", "bsize=16384,fsize=2048,density=8192", rootfs,
         root], stdout=subprocess.DEVNULL)
    run([tool(a, "installboot"), "-v", "-m", "amd64", "-o", "console=com0", rootfs,
         os.path.join(root, "usr", "mdec", "bootxx_ffsv1")], stdout=subprocess.DEVNULL)
    mbr = os.path.join(work, "mbr")
    with open(mbr, "wb") as f:
        f.truncate(image_sectors * 512)
    run([tool(a, "fdisk"), "-f", "-i", "-u", "-b", "%d/%d/%d" % (
        image_sectors // (MBR_HEADS * MBR_SECTORS), MBR_HEADS, MBR_SECTORS),
        "-0", "-a", "-s", "169/%d/%d" % (LABEL_SECTORS, fs_sectors), "-F", mbr],
        stdout=subprocess.DEVNULL)
    run([tool(a, "fdisk"), "-f", "-i", "-c", os.path.join(root, "usr", "mdec", "mbr"),
         "-F", mbr], stdout=subprocess.DEVNULL)
    image = os.path.join(work, "netbsd.img")
    with open(image, "wb") as out:
        with open(mbr, "rb") as f:
            out.write(f.read(LABEL_SECTORS * 512))
        with open(rootfs, "rb") as f:
            shutil.copyfileobj(f, out, 1 << 20)
    proto = open(os.path.join(a.cache, "src", "distrib", "common", "bootimage",
                              "diskproto.noswap.mbr.in")).read()
    for key, value in {"SECTORS": SECTORS, "HEADS": HEADS, "SECPERCYLINDERS": HEADS * SECTORS,
                       "CYLINDERS": image_sectors // (HEADS * SECTORS),
                       "IMAGESECTORS": image_sectors, "FSSECTORS": fs_sectors,
                       "FSOFFSET": LABEL_SECTORS, "BSDPARTSECTORS": fs_sectors}.items():
        proto = proto.replace("@@%s@@" % key, str(value))
    with open(os.path.join(work, "diskproto"), "w") as f:
        f.write(proto)
    run([tool(a, "disklabel"), "-R", "-F", image, os.path.join(work, "diskproto")],
        stdout=subprocess.DEVNULL)
    final = os.path.join(a.cache, "netbsd.img")
    os.replace(image, final)
    shutil.rmtree(work)
    return "%s (%d MB)" % (final, DISK_MB)


def put(root: str, path: str, text: str, append: bool = False) -> None:
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "a" if append else "w") as f:
        f.write(text)


def stage_core(a) -> str:
    """osmeter's core as a NetBSD user would build it: the system's compiler (here the
    tree's cross-compiler, GCC 4.5.4) with its own headers and libc (DESTDIR)."""
    gcc = os.path.join(a.cache, "tools", "bin", "x86_64--netbsd-gcc")
    destdir = os.path.join(a.cache, "destdir")
    if not os.path.exists(gcc) or not os.path.exists(os.path.join(destdir, "usr", "lib", "libc.so")):
        raise RuntimeError("no cross-compiler or libc yet: run the tools and base stages")
    build = os.path.join(a.cache, "core")
    make = shutil.which("gmake") or "make"
    # GCC 4.5 predates -std=c11 (4.7): the core is C99 with GNU extensions underneath.
    run_logged(a, "core", [make, "-C", os.path.join(REPO, "core"),
                           "CC=%s --sysroot=%s" % (gcc, destdir), "BUILD=" + build,
                           "CSTD=-std=gnu99"], REPO)
    return "core in " + os.path.join(build, "osmeter-core")


# --- driver ----------------------------------------------------------------------

RUNNERS = {"extract": stage_extract, "patch": stage_patch, "tools": stage_tools,
           "kernel": stage_kernel, "base": stage_base, "image": stage_image,
           "core": stage_core}


def status(a) -> int:
    for stage in STAGES:
        stamp = os.path.join(a.cache, "stamps", stage)
        if os.path.exists(stamp):
            print("%-8s done   %s" % (stage, open(stamp).read().strip()))
        else:
            print("%-8s -" % stage)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--git", default=DEFAULT_GIT, help="the fetched tree's git directory")
    p.add_argument("--cache", default="/var/cache/osmeter-netbsd")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--stages", default=",".join(STAGES))
    p.add_argument("--key-dir", default="/var/cache/osmeter-bsd",
                   help="where the ssh key id/id.pub of both guests is kept")
    p.add_argument("--status", action="store_true", help="say which stages are done")
    a = p.parse_args(argv)
    for d in ("logs", "stamps"):
        os.makedirs(os.path.join(a.cache, d), exist_ok=True)
    if a.status:
        return status(a)
    stages = [s for s in a.stages.split(",") if s]
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        p.error("unknown stage %s (the stages: %s)" % (", ".join(unknown), ", ".join(STAGES)))
    for stage in STAGES:
        if stage not in stages:
            continue
        stamp = os.path.join(a.cache, "stamps", stage)
        if os.path.exists(stamp) and stage != "patch":
            log("%s: done before (%s)" % (stage, open(stamp).read().strip()))
            continue
        log(stage + ": started")
        t0 = time.monotonic()
        try:
            said = RUNNERS[stage](a)
        except CannotHere as e:
            log("%s: cannot run here: %s" % (stage, e))
            return 2
        except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
            log("%s: failed after %.0f s: %s" % (stage, time.monotonic() - t0, e))
            return 1
        took = time.monotonic() - t0
        with open(stamp, "w") as f:
            f.write("%s; took %.0f s; finished %s\n"
                    % (said, took, time.strftime("%Y-%m-%d %H:%M:%S")))
        log("%s: %s (%.0f s)" % (stage, said, took))
    return 0


if __name__ == "__main__":
    sys.exit(main())
