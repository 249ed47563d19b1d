#!/usr/bin/env python3
"""Cross-compile and link osmeter's C core for the systems the studies compared.

    python3 scripts/cross-build.py [--jobs N] [--keep DIR] [TARGET ...]

Uses zig's C compiler from PyPI (`pip install ziglang`), which carries the C libraries
and headers of FreeBSD, NetBSD, OpenBSD, macOS and Linux (glibc, musl).  Each target
is built with core/Makefile, the project's warning flags and a build directory of its
own (the native build is not touched): the core and the dynamic exec helper, and their
static twins where the target has a static C library (musl).  Prints a target -> result
table and exits 1 on any error or warning, 2 when zig is missing.

This proves that the core compiles and links for a system, not that it runs there:
README.md says which targets also run (natively, or under qemu-user).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
CORE = os.path.join(os.path.dirname(HERE), "core")

# NetBSD at 11.0: zig's NetBSD headers are 11's (kevent() is renamed __kevent100, which
# NetBSD 11's libc has and 10's has not: 10 has __kevent50), so the version its stubs
# link against must be 11 too for the check to be consistent.
TARGETS = [
    "x86_64-freebsd-none", "aarch64-freebsd-none", "x86_64-netbsd.11.0-none",
    "aarch64-netbsd.11.0-none", "x86_64-openbsd-none", "aarch64-openbsd-none",
    "x86_64-macos-none", "aarch64-macos-none", "x86_64-linux-musl", "aarch64-linux-gnu",
]
# zig links these statically from its own sources; for the BSDs, macOS and glibc it has
# only what dynamic linking needs.
STATIC_TARGETS = re.compile(r"-linux-musl")
DIAGNOSTIC = re.compile(r"\b(warning|error):", re.I)


ELF_MACHINES = {0x3E: "x86-64", 0xB7: "arm64", 0xF3: "riscv"}
MACHO_CPUS = {0x01000007: "x86-64", 0x0100000C: "arm64"}


def binary_kind(path: str) -> str:
    """What the linker made, from the file's header: "ELF x86-64", "Mach-O arm64"."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return "-"
    if head[:4] == b"\x7fELF":
        return "ELF " + ELF_MACHINES.get(int.from_bytes(head[18:20], "little"), "?")
    if head[:4] == b"\xcf\xfa\xed\xfe":
        return "Mach-O " + MACHO_CPUS.get(int.from_bytes(head[4:8], "little"), "?")
    return "unknown"


def zig_available() -> str | None:
    """Why zig's cc cannot be used, or None when it can."""
    try:
        import ziglang  # noqa: F401  (only its presence matters)
    except ImportError:
        return "zig's C compiler is missing: pip install ziglang"
    return None


def compiler_wrapper(workdir: str, target: str) -> str:
    """A one-line cc for make: `python -m ziglang cc -target TARGET "$@"`."""
    path = os.path.join(workdir, "cc-" + target)
    with open(path, "w") as f:
        # zig cc --version leaves an a.o in the current directory for some targets
        # (macOS, Linux): there it is the work directory, not core/.
        f.write('#!/bin/sh\n[ "$1" = --version ] && cd "%s"\nexec "%s" -m ziglang cc -target %s "$@"\n'
                % (workdir, sys.executable, target))
    os.chmod(path, 0o755)
    return path


def foreign_needed(path: str) -> list[str]:
    """The ELF's NEEDED entries that name a path rather than a library (a library of
    this machine's, which the target system could never load); [] where readelf is
    missing or the file is no ELF."""
    readelf = shutil.which("readelf")
    if not readelf or binary_kind(path).split()[0] != "ELF":
        return []
    out = subprocess.run([readelf, "-d", path], capture_output=True, text=True)
    return [n for n in re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", out.stdout)
            if "/" in n]


def make_goals(cc: str, build_dir: str, goals):
    make = shutil.which("gmake") or shutil.which("make") or "make"
    cmd = [make, "-s", "-C", CORE, "CC=" + cc, "BUILD=" + build_dir]
    cmd += [os.path.join(build_dir, g) for g in goals]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def build(workdir: str, target: str) -> dict:
    """Build one target; returns its row of the table."""
    started = time.monotonic()
    build_dir = os.path.join(workdir, target)
    static = bool(STATIC_TARGETS.search(target))
    goals = ["osmeter-core", "osmeter-helper-dynamic"]
    if static:
        goals += ["osmeter-core-static", "osmeter-helper-static"]
    cc = compiler_wrapper(workdir, target)
    out = make_goals(cc, build_dir, goals)
    text = out.stdout
    # The Makefile keeps the static links' output in logs of their own.
    for log in ("static.log", "helper-static.log"):
        try:
            with open(os.path.join(build_dir, log)) as f:
                text += f.read()
        except OSError:
            pass
    diagnostics = [line for line in text.splitlines() if DIAGNOSTIC.search(line)]
    missing = [g for g in goals if not os.path.isfile(os.path.join(build_dir, g))]
    foreign = [n for g in goals if g not in missing
               for n in foreign_needed(os.path.join(build_dir, g))]
    diagnostics += ["error: links a library by its path on this machine: %s" % n
                    for n in foreign]
    errors = out.returncode != 0 or missing or foreign
    warnings = [d for d in diagnostics if "warning" in d.lower()]
    return {
        "target": target,
        "core": "FAILED" if errors else "linked",
        "static": ("linked" if static and not missing else "FAILED" if static
                   else "n/a: zig has no libc.a"),
        "binary": binary_kind(os.path.join(build_dir, "osmeter-core")),
        "warnings": len(warnings),
        "seconds": time.monotonic() - started,
        "ok": not errors and not warnings,
        "diagnostics": diagnostics or ([text.strip()[-400:]] if errors else []),
        "missing": missing,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("targets", nargs="*", help="zig targets (default: %s)" % " ".join(TARGETS))
    p.add_argument("--jobs", type=int, default=2, help="targets built at once (default 2)")
    p.add_argument("--keep", metavar="DIR", help="build in DIR and keep it (default: a "
                   "temporary directory, removed at the end)")
    args = p.parse_args(argv)
    why = zig_available()
    if why:
        print("cross-build: " + why, file=sys.stderr)
        return 2
    targets = args.targets or TARGETS
    workdir = args.keep or tempfile.mkdtemp(prefix="osmeter-cross-")
    os.makedirs(workdir, exist_ok=True)
    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            rows = list(pool.map(lambda t: build(workdir, t), targets))
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print("%-24s %-8s %-13s %-22s %8s %8s" % ("target", "core", "binary", "static",
                                              "warnings", "seconds"))
    for r in rows:
        print("%-24s %-8s %-13s %-22s %8d %8.1f" % (r["target"], r["core"], r["binary"],
                                                     r["static"], r["warnings"], r["seconds"]))
    bad = [r for r in rows if not r["ok"]]
    for r in bad:
        print("\n%s:%s" % (r["target"], " missing " + ", ".join(r["missing"])
                           if r["missing"] else ""))
        for line in r["diagnostics"][:20]:
            print("  " + line)
    if bad:
        print("\ncross-build: %d of %d targets with errors or warnings"
              % (len(bad), len(rows)), file=sys.stderr)
        return 1
    print("\ncross-build: %d targets compiled and linked, no warnings" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
