#!/usr/bin/env python3
"""Cross-check osmeter against lmbench 3, pair by pair, in one alternating run.

    python3 bench/lmbench_crosscheck.py LMBENCH_BIN_DIR [--only NAME,...] [--dir DIR] [--cpu N]
                                        [--tolerance F] [--max-rounds N] [--pair-minutes M]
                                        [--rounds N] [--visits N] [--json FILE]

LMBENCH_BIN_DIR is the directory of lmbench's built programs (bin/<os>/ of an lmbench 3
tree).  osmeter does not ship lmbench (GPL 2 with its own terms: read its COPYING-2
before publishing its figures).  To get and build it (Debian 12):

    git clone https://github.com/intel/lmbench && cd lmbench/src
    apt-get install libtirpc-dev
    sed -i 's/^LDLIBS=-lm$/LDLIBS="-lm -ltirpc"/' ../scripts/build
    make CC="gcc -I/usr/include/tirpc"      # 'get: not found' at the end is harmless
    python3 bench/lmbench_crosscheck.py /path/to/lmbench/bin/x86_64-linux-gnu

Each round runs the lmbench program, then osmeter's counterpart (ABAB...), both under
`taskset -c CPU` (CPU = the last one, or --cpu) unless the pair is "split" (lmbench's
LMBENCH_SCHED=UNIQUE, osmeter's pin=split).  osmeter runs through its core directly
(core/build/osmeter-core run ID key=value: JSON lines).  lmbench's timing calibration is
fixed by ENOUGH (--enough-us, lmbench's own environment variable; its `enough` program
asks for 1 s per measurement on a loaded machine) with TIMING_O=0 and LOOP_O=0 (its
loop_o measured 1.4 ns here: below the noise).

Rounds come in two stages.  Every pair first takes 6, the fewest whose ratio has a 95%
interval.  Where that interval reaches further than --tolerance (3%) from the ratio, the
pair takes as many rounds in all as should narrow it to that (its width shrinks as
1/sqrt(rounds)), up to --max-rounds (40); the table gives the interval of all of them.
Deciding once, not after every round, keeps the interval at its level (stopping at the
first narrow one would not: tests/test_lmbench_crosscheck.py simulates both on rounds
resampled from real runs).  No round begins that would end past --pair-minutes (10) of its
pair at the pace so far, so a pair as slow as lmbench's lat_connect on one CPU (minutes a
round, waiting out dropped SYNs) may end before 6 rounds, without an interval; the script
says so under its row.  --rounds N takes N rounds of every pair, however long.

A pair's rounds are taken in --visits (10) visits: the run goes over every pair 10 times,
the first visit taking the first stage and the others sharing the rest, so that a pair's
rounds sample the whole run, not the few minutes one sitting would take (the table comes
after the last visit).  On this VM the split-CPU pairs' ratio moves with the host for
minutes at a time: 48 rounds in 12 visits over 28 minutes varied by 3.1-3.4% (SD) from
visit to visit beyond the 8.5% from round to round within a visit, and at that two runs of
40 rounds back to back would differ by more than 5% in 31-36% of cases, two runs of 40
rounds in 10 visits in 7-9% (a normal model of the two parts; one experiment, in which the
visit-to-visit part alone is not significant: F = 1.5-1.6, p = 0.13-0.17).  With --only
one pair, its visits follow each other and spread nothing.  --json FILE keeps every round
of both tools, with the time it ended.  Across two CPUs osmeter times 15 transfers a
round, not 5, so that a run of three slow ones cannot move its median.  --compare RUN1
RUN2 runs nothing: it sets two such files side by side, a Markdown table of every pair's
ratio in both runs and how far it moved.

The lat_fs pairs work in --dir (default: the scratch directory under $TMPDIR), whose file
system the script names first.  lat_pagefault runs on two 8 MB files, one written in one
write() and one in 4 KB writes, and under each the script counts the minor faults of its
own pass over the file in lmbench's pattern: the kernel may map many pages per fault,
which lmbench's per-page figure does not show.

The table gives each tool's median, the ratio osmeter/lmbench (the median of the rounds'
ratios: a round holds one figure of each, seconds apart, so a drift of the machine that
moves both cancels) with its distribution-free 95% interval (order statistics of the
rounds' ratios; 6 rounds or more), each tool's spread over its rounds ((max - min) /
median), and for a like-for-like pair a verdict on the ratio (within +-10%); every other
pair says why it is not like for like, and the column "why" says what explains a ratio
outside +-10% (the evidence, strace / perf / disassembly, is in the note of issue 30 and,
for select, in --explain).
"""
from __future__ import annotations

import argparse
import json
import math
import mmap
import os
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
from osmeter import api  # noqa: E402
# The core's process group and the monitor's snapshots, as the runner uses them: internal.
from osmeter.running import coreproc  # noqa: E402
from osmeter.analysis import monitor  # noqa: E402
from osmeter import stats  # noqa: E402
CORE = os.path.join(ROOT, "core", "build", "osmeter-core")
TARGET = 0.10
US = 1000.0  # lmbench prints microseconds; osmeter's latencies are ns
FIRST_ROUNDS = stats.repetitions_for()  # 6: the fewest whose ratio has a 95% interval

# name, kind, lmbench argv, parse(lmbench output) -> osmeter's unit, osmeter id, params,
# metric, x, placement, like-for-like reason (None = like for like), why (outside +-10%)
MICRO = r"([\d.]+) microseconds"
SPLIT_BW = {"pin": "split", "samples": "15"}
PAGEFAULT = ("lmbench: per page touched of a cached file, in random order, where one fault "
             "may map many pages (fault-around, large folios); osmeter: the first touch of "
             "a fresh mapping among n, one fault each")


def micro(text):
    return float(re.search(MICRO, text).group(1)) * US


def mbps(text):
    return float(re.search(r"([\d.]+) MB/sec", text).group(1))


def bw_mem(text):  # "0.016384 69224.33": size in MB, MB/s (1 MB = 10^6 bytes, lib_timing.c)
    return float(text.split()[-1])


def lat_ctx_with_pipe(n):
    def parse(text):  # "size=0k ovr=1.24" then "2 2.97": lmbench subtracted ovr per switch
        ovr = float(re.search(r"ovr=([\d.]+)", text).group(1))
        return (float(re.search(r"^%d ([\d.]+)" % n, text, re.M).group(1)) + ovr) * US
    return parse


def lat_mem_rd_at(mb):
    def parse(text):
        rows = [ln.split() for ln in text.splitlines() if re.match(r"^[\d.]+ [\d.]+$", ln)]
        return float(next(v for s, v in rows if abs(float(s) - mb) < 1e-6))
    return parse


def lat_fs_0k(text):  # "0k\t<files>\t<creates/s>\t<deletes/s>": ns per create + delete
    w = re.search(r"^0k\s+\d+\s+([\d.]+)\s+([\d.]+)", text, re.M)
    return 1e9 / float(w.group(1)) + 1e9 / float(w.group(2))


def lat_fs_per_file(kb, column):  # column 1: creates/s, 2: deletes/s -> ns per file
    def parse(text):
        w = re.search(r"^%dk\s+\d+\s+([\d.]+)\s+([\d.]+)" % kb, text, re.M)
        return 1e9 / float(w.group(column))
    return parse


# Measured on an ext4 without a journal (perf record of fs.crtdel.batch: 91% of its time);
# see the note of issue 30 (issue-30-b.md).  Said only where --dir is such an ext4.
EXT4_CREATE = ("ext4 without a journal skips, in every create, each inode deleted in the "
               "last minute (find_inode_bit -> recently_deleted): the time grows with the "
               "files anyone deleted just before")
# lat_fs deletes as many files per timed pass as ENOUGH allows: tens of thousands (0.1 s
# at 3-6 us).  A delete costs more the more files a pass deletes (the dentries and inodes
# it walks stop fitting the caches): osmeter's default of 1000 files gave 0.76 and 0.87 of
# lmbench's figures on ext4, 20000 gave 1.01 and 1.00 (and on tmpfs 1.5 us at 100 files,
# 3.0 at 40000, against lmbench's 2.9).
DELETE_FILES = "20000"
DELETE_COUNT = "osmeter deletes 20000 files per pass, as many as lmbench's calibration"

PAIRS = [
    ("null syscall", "lat", ["lat_syscall", "null"], micro, "syscall.getppid", {}, "latency",
     None, "same", None, ""),
    ("read 1 B", "lat", ["lat_syscall", "read"], micro, "syscall.read", {}, "latency", None,
     "same", None, ""),
    ("write 1 B", "lat", ["lat_syscall", "write"], micro, "syscall.write", {}, "latency", None,
     "same", None, ""),
    # osmeter stats <tmp>/osmeter-core.X/foo: the same three components
    ("stat", "lat", ["lat_syscall", "stat", "{scratch}/foo"], micro, "syscall.stat", {},
     "latency", None, "same", None, ""),
    ("fstat", "lat", ["lat_syscall", "fstat", "foo"], micro, "syscall.fstat", {}, "latency",
     None, "same", None, ""),
    ("open+close", "lat", ["lat_syscall", "open", "foo"], micro, "fs.openclose", {}, "foo", None,
     "same", None, ""),
    ("signal install", "lat", ["lat_sig", "install"], micro, "lat.signal", {}, "install", None,
     "same", None, ""),
    ("signal catch", "lat", ["lat_sig", "catch"], micro, "lat.signal", {}, "catch", None, "same",
     "lmbench subtracts kill(pid,0) (lat_sig.c); osmeter's catch includes the kill()", ""),
    ("signal catch-kill0", "lat", ["lat_sig", "catch"], micro, "lat.signal", {},
     "catch_minus_kill0", None, "same", None, ""),
    ("fork+exit", "lat", ["lat_proc", "fork"], micro, "proc.fork_exit", {}, "latency", None,
     "same", None, ""),
    ("fork+exec", "lat", ["lat_proc", "exec"], micro, "proc.fork_exec_exit", {}, "latency", None,
     "same", None, ""),
    ("fork+sh -c", "lat", ["lat_proc", "shell"], micro, "proc.shell", {}, "latency", None, "same",
     None, ""),
    ("lat_ctx 2p/0K +pipe", "lat", ["lat_ctx", "-s", "0", "2"], lat_ctx_with_pipe(2),
     "ctx.pipe_ring", {"n": "2"}, "per_switch", 2, "same", None, ""),
    ("lat_ctx 8p/0K +pipe", "lat", ["lat_ctx", "-s", "0", "8"], lat_ctx_with_pipe(8),
     "ctx.pipe_ring", {"n": "8"}, "per_switch", 8, "same", None, ""),
    # -s KB: each process sums its own array of that size while it holds the token; lmbench
    # prints the hop minus its overhead (the same pipe + sum in one process), added back
    ("lat_ctx 2p/16K +ovr", "lat", ["lat_ctx", "-s", "16", "2"], lat_ctx_with_pipe(2),
     "ctx.pipe_ring", {"n": "2", "size": "16k"}, "per_switch", 2, "same", None, ""),
    ("lat_ctx 8p/16K +ovr", "lat", ["lat_ctx", "-s", "16", "8"], lat_ctx_with_pipe(8),
     "ctx.pipe_ring", {"n": "8", "size": "16k"}, "per_switch", 8, "same", None, ""),
    ("lat_ctx 2p/64K +ovr", "lat", ["lat_ctx", "-s", "64", "2"], lat_ctx_with_pipe(2),
     "ctx.pipe_ring", {"n": "2", "size": "64k"}, "per_switch", 2, "same", None, ""),
    ("lat_ctx 8p/64K +ovr", "lat", ["lat_ctx", "-s", "64", "8"], lat_ctx_with_pipe(8),
     "ctx.pipe_ring", {"n": "8", "size": "64k"}, "per_switch", 8, "same", None, ""),
    ("lat_pipe", "lat", ["lat_pipe"], micro, "ctx.pipe_pingpong", {}, "round_trip", None, "same",
     None, ""),
    ("lat_unix", "lat", ["lat_unix"], micro, "net.unix_lat", {}, "round_trip", None, "same",
     None, ""),
    ("lat_tcp", "lat", ["lat_tcp", "127.0.0.1"], micro, "net.tcp_lat", {}, "round_trip", None,
     "same", None, ""),
    ("lat_udp", "lat", ["lat_udp", "127.0.0.1"], micro, "net.udp_lat", {}, "round_trip", None,
     "same", None, ""),
    ("lat_connect", "lat", ["lat_connect", "127.0.0.1"], micro, "net.tcp_connect", {},
     "connect", None, "same",
     "lmbench times socket()+connect()+close() against a one-threaded accept loop",
     "backlog 100 overflows on one CPU: SYN retransmits (the overflows are counted below it)"),
    ("select 10 files", "lat", ["lat_select", "-n", "10", "file"], micro, "syscall.select.files",
     {"n": "10", "nfds": "n"}, "latency", None, "same",
     "both pass nfds=10, but lmbench's 10 dups start above its own descriptors: 2 are below "
     "10 (strace -f: pselect6(10, NULL, [6 8], ...) = 2), osmeter's 6 (its note)", ""),
    ("select 10 files/pipes", "lat", ["lat_select", "-n", "10", "file"], micro, "syscall.select",
     {}, "10_full", None, "same",
     "lmbench: select(nfds=10, writefds) on files, so only fds 3/4-9 of its 10 are looked at; "
     "osmeter: readfds on 10 pipes", ""),
    # the same 8 MB written in one write() and in 4 KB writes: the page cache may hold the
    # first in large folios, which one fault maps whole (the faults are counted below)
    ("lat_pagefault", "lat", ["lat_pagefault", "big"], micro, "scale.mmap_touch",
     {"n": "2560"}, "touch", None, "same", PAGEFAULT, ""),
    ("lat_pagefault 4K-written", "lat", ["lat_pagefault", "big4k"], micro, "scale.mmap_touch",
     {"n": "2560"}, "touch", None, "same", PAGEFAULT, ""),
    ("lat_fs 0K create+delete", "lat", ["lat_fs", "-s", "0", "{fsdir}"], lat_fs_0k, "fs.crtdel",
     {"sizes": "0", "fsync": "without", "dir": "{fsdir}"}, "sequence", 0, "same",
     "lmbench creates 1000s of files then deletes them all; osmeter one create+write+close"
     "+unlink cycle", ""),
    # lat_fs calibrates its number of files to ENOUGH; osmeter creates `files` of them
    ("lat_fs 0K create", "lat", ["lat_fs", "-s", "0", "{fsdir}"], lat_fs_per_file(0, 1),
     "fs.crtdel.batch", {"sizes": "0", "dir": "{fsdir}"}, "create", 0, "same", None,
     EXT4_CREATE),
    ("lat_fs 0K delete", "lat", ["lat_fs", "-s", "0", "{fsdir}"], lat_fs_per_file(0, 2),
     "fs.crtdel.batch", {"sizes": "0", "files": DELETE_FILES, "dir": "{fsdir}"}, "delete", 0,
     "same", None, DELETE_COUNT),
    ("lat_fs 10K create", "lat", ["lat_fs", "-s", "10k", "{fsdir}"], lat_fs_per_file(10, 1),
     "fs.crtdel.batch", {"sizes": "10k", "dir": "{fsdir}"}, "create", 10240, "same", None,
     EXT4_CREATE),
    ("lat_fs 10K delete", "lat", ["lat_fs", "-s", "10k", "{fsdir}"], lat_fs_per_file(10, 2),
     "fs.crtdel.batch", {"sizes": "10k", "files": DELETE_FILES, "dir": "{fsdir}"}, "delete",
     10240, "same", None, DELETE_COUNT),
    # lmbench walks every size from 512 bytes to 8 MB: with -N 5 a round took 47 s and only
    # 12 fit in --pair-minutes; one walk a round (-N 1) takes 10 s, and the rounds'
    # median stands in for lmbench's median of 5
    ("lat_mem_rd 8 MB -t", "lat", ["lat_mem_rd", "-N", "1", "-t", "8", "64"],
     lat_mem_rd_at(8.0),
     "mem.latency", {"sizes": "8m"}, "latency", 8 * 2 ** 20, "same", None, ""),
    ("bw_pipe", "bw", ["bw_pipe"], mbps, "net.pipe_bw", {}, "bandwidth", None, "same", None, ""),
    # Across two CPUs both tools swing from round to round here (SD 5-10%), likely with how
    # soon the host wakes an idle vCPU (single 50 MB transfers: 628-2649 MB/s in one
    # process, once three slow in a row): osmeter takes 15 a round, whose median such a
    # run cannot move (5 samples' can); 100 a round spread no less than 15, so these pairs
    # narrow their interval with more rounds (the second stage), not more transfers
    ("bw_pipe split", "bw", ["bw_pipe"], mbps, "net.pipe_bw", SPLIT_BW, "bandwidth", None,
     "split", None, ""),
    ("bw_unix", "bw", ["bw_unix"], mbps, "net.unix_bw", {}, "bandwidth", None, "same", None, ""),
    ("bw_unix split", "bw", ["bw_unix"], mbps, "net.unix_bw", SPLIT_BW, "bandwidth", None,
     "split", None, ""),
    # osmeter has no socket-buffer parameter; each connection autotunes its own
    ("bw_tcp 48K/3M", "bw", ["bw_tcp", "-m", "48k", "-M", "3m", "127.0.0.1"], mbps,
     "net.tcp_bw", {}, "bandwidth", None, "same",
     "lmbench fixes both socket buffers at 1 MB (bench.h SOCKBUF, lib_tcp.c sock_optimize); "
     "osmeter leaves them to the system's autotuning", "its median moved 3121-4021 MB/s "
     "between 6 connections of 200 transfers, lmbench's 3235-3270"),
    ("bw_mem 16K bcopy", "bw", ["bw_mem", "16k", "bcopy"], bw_mem, "mem.memcpy",
     {"sizes": "16k"}, "bandwidth", 16384, "same", None, ""),
    ("bw_mem 256M bzero", "bw", ["bw_mem", "256m", "bzero"], bw_mem, "mem.memset",
     {"sizes": "256m", "total": "256m"}, "bandwidth", 256 * 2 ** 20, "same", None, ""),
    ("bw_mem 8M rd", "bw", ["bw_mem", "8m", "rd"], bw_mem, "mem.read", {"sizes": "8m"},
     "bandwidth", 8 * 2 ** 20, "same",
     "lmbench's rd loop loads 4 bytes of every 16 (bw_mem.c: p[0]+p[4]+...+p[124] over ints)",
     ""),
    ("bw_mem 8M wr", "bw", ["bw_mem", "8m", "wr"], bw_mem, "mem.write", {"sizes": "8m"},
     "bandwidth", 8 * 2 ** 20, "same",
     "lmbench's wr loop stores 4 bytes of every 16 (bw_mem.c)", ""),
    ("bw_mem 8M cp", "bw", ["bw_mem", "8m", "cp"], bw_mem, "mem.copy", {"sizes": "8m"},
     "bandwidth", 8 * 2 ** 20, "same",
     "lmbench's cp loop copies 4 bytes of every 16 (bw_mem.c)", ""),
]
SERVERS = {"lat_tcp", "lat_udp", "lat_connect", "bw_tcp"}  # "-s" daemon, "-S host" stops it
# osmeter's unit -> lmbench's (ns for latencies, MB/s = 10^6 B/s for bandwidths)
UNITS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "MB/s": 1.0, "Mbit/s": 1 / 8}


def run_group(cmd, **kw):
    """Run cmd in a session of its own and return (stdout, stderr).  If the script stops
    meanwhile (Ctrl-C, SIGTERM, the 600 s timeout), the whole session is stopped: lmbench's
    timed processes are its grandchildren, and osmeter's core cleans up on SIGTERM."""
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True, **kw) as proc:
        try:
            return proc.communicate(timeout=600)
        except BaseException:
            coreproc._kill_group(proc)  # SIGTERM (the core cleans up), then SIGKILL
            raise


class Lmbench:
    def __init__(self, bindir, cpu, enough_us, reps, scratch, fsdir):
        self.bindir, self.cpu, self.scratch, self.reps = bindir, cpu, scratch, reps
        self.fsdir = fsdir
        self.outputs = {}  # (argv, placement, round) -> its output, read by one pair or more
        self.env = dict(os.environ, ENOUGH=str(enough_us), TIMING_O="0", LOOP_O="0")

    def cmd(self, argv, placement):
        exe = [os.path.join(self.bindir, argv[0])] + [
            a.format(scratch=self.scratch, fsdir=self.fsdir) for a in argv[1:]]
        if not (argv[0] in SERVERS and argv[1][:2] in ("-s", "-S")) and "-N" not in argv:
            exe[1:1] = ["-N", str(self.reps)]  # lmbench's repetitions (its default: 11)
        return exe if placement == "split" else ["taskset", "-c", self.cpu] + exe

    def run(self, argv, placement, parse, round_):
        """Round `round_` of lmbench's `argv`; pairs that read different lines of the same
        program's output (lat_fs: creates and deletes) share its run of that round."""
        key = (tuple(argv), placement, round_)
        if key not in self.outputs:
            env = dict(self.env, LMBENCH_SCHED="UNIQUE") if placement == "split" else self.env
            out, err = run_group(self.cmd(argv, placement), cwd=self.scratch, env=env)
            self.outputs[key] = out + err
        text = self.outputs[key]
        try:
            return parse(text)
        except (AttributeError, ValueError, StopIteration):
            raise SystemExit("could not read %s's output:\n%s" % (" ".join(argv), text))

    def server(self, prog, start):
        arg = ["-s"] if start else ["-S", "127.0.0.1"]
        subprocess.run(self.cmd([prog] + arg, "same"), cwd=self.scratch, env=self.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)


def osmeter(cpu, bench, params, metric, x, placement, fsdir):
    args = [CORE, "run", bench] + ["%s=%s" % (k, v.format(fsdir=fsdir))
                                   for k, v in params.items()]
    if placement == "same":
        args = ["taskset", "-c", cpu] + args
    stdout, stderr = run_group(args)
    values, unit = [], None
    for line in stdout.splitlines():
        rec = json.loads(line)
        if rec["type"] == "header":
            unit = next((m["unit"] for m in rec.get("metrics", []) if m["name"] == metric), None)
        elif rec["type"] == "sample" and rec["metric"] == metric and (x is None or rec["x"] == x):
            values.append(rec["value"])
        elif rec["type"] == "trailer" and rec["status"] != "ok":
            raise SystemExit("%s: %s" % (bench, line))
    if not values:
        raise SystemExit("%s: no %s samples:\n%s%s" % (bench, metric, stdout, stderr))
    return statistics.median(values) * UNITS[unit]


def listen_overflows():
    """Connections the kernel dropped for a full listen queue so far (TcpExt
    ListenOverflows in /proc/net/netstat; Linux), or None where it cannot be read."""
    try:
        with open("/proc/net/netstat") as f:
            names, values = [ln.split() for ln in f if ln.startswith("TcpExt:")][:2]
        return int(dict(zip(names, values))["ListenOverflows"])
    except (OSError, ValueError, KeyError):
        return None


def faults_per_touch(path):
    """lat_pagefault's access pattern on `path` (a fresh shared mapping, every page read
    once in random order) with the minor faults counted (getrusage): how many pages the
    kernel mapped per fault, which lmbench's per-page figure hides.  The median of 3."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        pages = [i * mmap.PAGESIZE for i in range(size // mmap.PAGESIZE)]
        random.Random(size).shuffle(pages)
        faults = []
        for _ in range(3):
            with mmap.mmap(fd, size, prot=mmap.PROT_READ) as m:
                before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                for off in pages:
                    m[off]
                faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    finally:
        os.close(fd)
    return statistics.median(faults), len(pages)


def load():
    return "load average %s (1, 5, 15 min; %d CPUs)" % (
        " ".join("%.2f" % v for v in os.getloadavg()), os.cpu_count())


def others_now() -> str:
    """Whether other processes are busy, as osmeter's monitor judges it before a run
    (their CPU time over one second, not the load average, which trails by minutes)."""
    env = monitor.before_run()
    if not env["others_before"] and not env["busy_before"]:
        return "others quiet (monitor: no other process busy in the second before)"
    return "others busy: %s -- not quiet-machine figures" % "; ".join(env["warnings"])


def file_system(path):
    """The file system `path` is on, as the lat_fs pairs depend on it: its type and, for
    ext4, whether it has a journal (Linux: findmnt and /proc/fs/jbd2)."""
    if not shutil.which("findmnt"):
        return "unknown", False
    out = subprocess.run(["findmnt", "-n", "-o", "FSTYPE,SOURCE", "--target", path],
                         capture_output=True, text=True).stdout.split()
    if len(out) < 2:
        return "unknown", False
    fstype, source = out[0], out[1]
    if fstype != "ext4":
        return fstype, False
    journal = os.path.isdir("/proc/fs/jbd2/%s-8" % os.path.basename(source))
    return "ext4 %s a journal" % ("with" if journal else "without"), not journal


def spread(values):
    """Each tool's spread over the rounds, (max - min) / median: a ratio that moves
    between runs by less than this moves with the tools' own noise."""
    return (max(values) - min(values)) / statistics.median(values)


def median_interval(values):
    """The 95% interval osmeter gives a median (osmeter.stats: order statistics), as (low,
    high), or None where the rounds are too few to reach 95% (fewer than 6)."""
    interval = api.median_interval(values)
    return interval[:2] if interval and interval[2] >= stats.LEVEL else None


def planned_rounds(ratios, tolerance, most):
    """The second stage: how many rounds in all a pair takes after its first ones.  Where
    their 95% interval reaches further than `tolerance` (a fraction) from the ratio, as
    many as should narrow it to that -- an order-statistic interval narrows as
    1/sqrt(rounds), like the median's standard error -- but no more than `most`."""
    ratio = statistics.median(ratios)
    low, high = median_interval(ratios)
    reach = max(ratio - low, high - ratio) / ratio
    if reach <= tolerance:
        return len(ratios)
    return max(len(ratios), min(most, math.ceil(len(ratios) * (reach / tolerance) ** 2)))


def rounds_in_visits(take_round, tolerance, most, budget, fixed=0, visits=1):
    """A pair's rounds, as a generator that yields between its visits and returns (the
    ratios, the rounds wanted): take_round() takes one round and returns its ratio.

    The first visit takes FIRST_ROUNDS and plans the rest (planned_rounds), or takes
    `fixed` / `visits` of `fixed` rounds; the others share the rest evenly.  No round
    begins that would end past `budget` seconds spent in the pair's rounds, at the pace so
    far: the cap depends on time, not on the ratios, so the interval holds."""
    ratios, spent = [], 0.0

    def take_up_to(rounds):
        nonlocal spent
        while len(ratios) < rounds:
            if ratios and spent + spent / len(ratios) > budget:
                return
            started = time.monotonic()
            ratios.append(take_round())
            spent += time.monotonic() - started
    wanted = fixed or FIRST_ROUNDS
    take_up_to(math.ceil(fixed / visits) if fixed else FIRST_ROUNDS)
    if not fixed and len(ratios) == FIRST_ROUNDS:
        wanted = planned_rounds(ratios, tolerance, most)
    first = len(ratios)
    for visit in range(1, visits):
        yield
        take_up_to(first + math.ceil((wanted - first) * visit / (visits - 1)))
    take_up_to(wanted)
    return ratios, wanted


def next_visit(rounds):
    """Takes the next visit of a rounds_in_visits generator: its result (the ratios, the
    rounds wanted) after the last visit, else None."""
    try:
        next(rounds)
    except StopIteration as done:
        return done.value
    return None


def two_stage_rounds(take_round, tolerance, most, budget, fixed=0):
    """rounds_in_visits in one visit: (the ratios, the rounds wanted)."""
    return next_visit(rounds_in_visits(take_round, tolerance, most, budget, fixed))


def ratio_digits(ratio):  # lat_connect's 0.00297 keeps three digits
    return "%.3f" if ratio >= 0.1 else "%.3g"


def print_row(name, kind, theirs, ours, seconds, unlike, why):
    unit = "ns" if kind == "lat" else "MB/s"
    a, b = statistics.median(theirs), statistics.median(ours)
    ratios = [y / x for x, y in zip(theirs, ours)]
    ratio, interval = statistics.median(ratios), median_interval(ratios)
    if unlike:
        verdict, text = "n/a", "no: " + unlike + ("; " + why if why else "")
    else:
        verdict = "yes" if abs(ratio - 1) <= TARGET else "NO"
        text = "yes" + ("; " + why if why else "")
    digits = ratio_digits(ratio)
    print("%-24s %9.1f %-4s %7.1f %-4s %6s %-13s %6d %5.0f %4.0f%% %4.0f%%  %-4s  %s" % (
        name, a, unit, b, unit, digits % ratio,
        "[%s, %s]" % (digits % interval[0], digits % interval[1]) if interval else "-",
        len(ratios), seconds, 100 * spread(theirs), 100 * spread(ours), verdict, text),
        flush=True)


def read_runs(path):
    """A --json file's pairs: name -> (lmbench's rounds, osmeter's, seconds).  A file
    appended to by more than one run keeps each pair's last line."""
    runs = {}
    try:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                try:
                    rec = json.loads(line)
                    runs[rec["pair"]] = (rec["lmbench"], rec["osmeter"], rec["seconds"])
                except (ValueError, KeyError, TypeError):
                    raise SystemExit("%s, line %d: not a line of --json" % (path, number))
    except OSError as e:
        raise SystemExit("--compare %s: %s" % (path, e.strerror))
    return runs


def figure(value, unit):  # 42.3 ns, 1,044 ns, 6,855 MB/s
    return ("%.1f" % value if value < 100 else "{:,.0f}".format(value)) + " " + unit


def ratio_text(ratios):
    ratio, interval = statistics.median(ratios), median_interval(ratios)
    digits = ratio_digits(ratio)
    return digits % ratio + (" [%s, %s]" % (digits % interval[0], digits % interval[1])
                             if interval else " (no interval)")


def compare_runs(first, second, moved=0.05):
    """Two --json runs side by side, a Markdown table: each pair's ratio and interval in
    both, how far the ratio moved, and whether a like-for-like pair was within +-10% in
    both.  Returns the table's lines and a summary line."""
    runs = read_runs(first), read_runs(second)
    lines = ["| pair (lmbench → osmeter) | lmbench | osmeter | ratio [95%], run 1 | "
             "ratio [95%], run 2 | run 2 / run 1 | rounds (s), run 1; run 2 | ±10% |",
             "|---|---|---|---|---|---|---|---|"]
    both = stable = alike = alike_within = 0
    alone = sorted(set(runs[0]) ^ set(runs[1]))
    for name, kind, *_, unlike, _why in PAIRS:
        if name not in runs[0] or name not in runs[1]:
            continue
        unit = "ns" if kind == "lat" else "MB/s"
        (lm1, os1, s1), (lm2, os2, s2) = runs[0][name], runs[1][name]
        r1 = [y / x for x, y in zip(lm1, os1)]
        r2 = [y / x for x, y in zip(lm2, os2)]
        move = statistics.median(r2) / statistics.median(r1) - 1
        both += 1
        stable += abs(move) < moved
        if unlike:
            verdict = "n/a (not like for like)"
        else:
            within = all(abs(statistics.median(r) - 1) <= TARGET for r in (r1, r2))
            alike, alike_within = alike + 1, alike_within + within
            verdict = "yes" if within else "NO"
        lines.append("| %s | %s | %s | %s | %s | %+.1f%% | %d (%.0f); %d (%.0f) | %s |" % (
            name, figure(statistics.median(lm1), unit), figure(statistics.median(os1), unit),
            ratio_text(r1), ratio_text(r2), 100 * move, len(r1), s1, len(r2), s2, verdict))
    summary = ("%d of %d pairs in both runs moved by less than %.0f%%; %d of %d like-for-like "
               "pairs were within ±10%% in both" % (stable, both, 100 * moved, alike_within,
                                                     alike))
    if alone:
        summary += "; in one run only: " + ", ".join(alone)
    return lines, summary


def explain_select(bindir, scratch):
    """What lmbench's select is given: nfds and the set, from strace."""
    if not shutil.which("strace"):
        print("  (strace not installed)")
        return
    with tempfile.NamedTemporaryFile(suffix=".strace") as f:
        subprocess.run(["strace", "-f", "-o", f.name, "-e", "trace=select,pselect6",
                        os.path.join(bindir, "lat_select"), "-N", "1", "-n", "10", "file"],
                       cwd=scratch, env=dict(os.environ, ENOUGH="10000", TIMING_O="0",
                                             LOOP_O="0"), capture_output=True, text=True)
        calls = [ln.split(None, 1)[1] for ln in open(f.name) if "select6(10," in ln]
    print("  lmbench lat_select -n 10 file, one of its %d calls: %s"
          % (len(calls), calls[-1] if calls else "none seen"))


def pair_visits(pair, lm, cpu, fsdir, scratch, ext4_skips_deleted, args):
    """One pair's rounds in args.visits visits, as a generator that yields between them
    (rounds_in_visits); it prints the pair's row after its last visit."""
    name, kind, argv, parse, bench, params, metric, x, placement, unlike, why = pair
    if why == EXT4_CREATE and not ext4_skips_deleted:
        why = ""
    theirs, ours, at = [], [], []
    # lat_connect's evidence: listen-queue overflows during each tool's rounds
    watch = argv[0] == "lat_connect" and listen_overflows() is not None
    overflows = [0, 0]

    def take_round():
        before = listen_overflows() if watch else 0
        theirs.append(lm.run(argv, placement, parse, len(theirs)))
        middle = listen_overflows() if watch else 0
        ours.append(osmeter(cpu, bench, params, metric, x, placement, fsdir))
        if watch:
            overflows[0] += middle - before
            overflows[1] += listen_overflows() - middle
        at.append(round(time.time(), 1))
        return ours[-1] / theirs[-1]
    budget = float("inf") if args.rounds else args.pair_minutes * 60
    rounds = rounds_in_visits(take_round, args.tolerance, args.max_rounds, budget,
                              args.rounds, args.visits)
    spent, done = 0.0, None
    while done is None:
        if argv[0] in SERVERS:
            lm.server(argv[0], True)
        started = time.monotonic()
        try:
            done = next_visit(rounds)
        finally:
            if argv[0] in SERVERS:
                lm.server(argv[0], False)
            spent += time.monotonic() - started
        if done is None:
            yield
    wanted = done[1]
    print_row(name, kind, theirs, ours, spent, unlike, why)
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps({"pair": name, "lmbench": theirs, "osmeter": ours,
                                "ended": at, "seconds": round(spent, 1)}) + "\n")
    if len(theirs) < wanted:
        print("  %d rounds, not the %d asked for: %.0f s a round, --pair-minutes %g"
              % (len(theirs), wanted, spent / len(theirs), args.pair_minutes))
    if argv[0] == "lat_pagefault":
        faults, pages = faults_per_touch(os.path.join(scratch, argv[1]))
        print("  %s touched as lat_pagefault does: %d minor faults for %d pages "
              "(getrusage), %.0f pages mapped per fault"
              % (argv[1], faults, pages, pages / max(faults, 1)))
    if watch:
        print("  listen-queue overflows (TcpExt ListenOverflows) in %d rounds: "
              "%d during lmbench's, %d during osmeter's" % (len(theirs), *overflows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bindir", nargs="?",
                    help="lmbench's bin/<os>/ directory (built programs)")
    ap.add_argument("--compare", nargs=2, metavar=("RUN1", "RUN2"),
                    help="run nothing: set two --json files side by side (a Markdown table "
                         "of each pair's ratio in both, and how far it moved)")
    ap.add_argument("--rounds", type=int, default=0,
                    help="alternations per pair, the same for all (default: two stages, "
                         "6 then as many as --tolerance asks)")
    ap.add_argument("--tolerance", type=float, default=0.03,
                    help="how far (a fraction of the ratio) its 95%% interval may reach "
                         "before a pair takes more rounds (default 0.03)")
    ap.add_argument("--max-rounds", type=int, default=40,
                    help="the most rounds a pair takes in the second stage (default 40)")
    ap.add_argument("--pair-minutes", type=float, default=10,
                    help="no round begins that would end past this many minutes of its "
                         "pair, at the pace so far (default 10)")
    ap.add_argument("--visits", type=int, default=10,
                    help="take each pair's rounds in this many visits, the run going over "
                         "every pair once per visit (default 10; 1: all of a pair's rounds "
                         "at once)")
    ap.add_argument("--enough-us", type=int, default=100000,
                    help="lmbench's ENOUGH: microseconds per timed interval (default 0.1 s)")
    ap.add_argument("--reps", type=int, default=5,
                    help="lmbench's -N: repetitions per run, it reports their median (default 5)")
    ap.add_argument("--only", default="", help="comma-separated pair names (default all)")
    ap.add_argument("--skip", default="", help="comma-separated pair names to leave out")
    ap.add_argument("--json", default=None,
                    help="append every pair's rounds to this file, a JSON line a pair: "
                         "both tools' figures and when each round ended (Unix time)")
    ap.add_argument("--explain", action="store_true", help="also strace lmbench's select")
    ap.add_argument("--dir", default=None,
                    help="where the lat_fs pairs create and delete their files (default: "
                         "the scratch directory under $TMPDIR)")
    ap.add_argument("--cpu", type=int, default=None,
                    help="the CPU both tools are pinned to (default: the last one allowed)")
    args = ap.parse_args()
    if args.compare:
        lines, summary = compare_runs(*args.compare)
        print("\n".join(lines) + "\n\n" + summary)
        return
    if not args.bindir:
        ap.error("give lmbench's bin/<os>/ directory (or --compare RUN1 RUN2)")
    bindir = os.path.abspath(args.bindir)
    missing = [p[2][0] for p in PAIRS if not os.access(os.path.join(bindir, p[2][0]), os.X_OK)]
    if missing:
        raise SystemExit("%s lacks lmbench programs: %s (see --help to build lmbench)"
                         % (bindir, ", ".join(sorted(set(missing)))))
    if not os.access(CORE, os.X_OK):
        raise SystemExit("%s is not built: run make -C core" % CORE)
    if not shutil.which("taskset"):
        raise SystemExit("taskset is not installed (util-linux)")
    if args.rounds < 0 or args.reps < 1 or args.enough_us < 1 or args.visits < 1:
        ap.error("--rounds, --reps, --enough-us and --visits must be positive")
    if not 0 < args.tolerance < 1 or args.max_rounds < FIRST_ROUNDS or args.pair_minutes <= 0:
        ap.error("--tolerance must lie between 0 and 1, --max-rounds be at least %d and "
                 "--pair-minutes be positive" % FIRST_ROUNDS)
    only = set(filter(None, args.only.split(",")))
    skip = set(filter(None, args.skip.split(",")))
    unknown = (only | skip) - {p[0] for p in PAIRS}
    if unknown:
        ap.error("unknown pair(s): %s" % ", ".join(sorted(unknown)))
    if args.json:
        try:
            open(args.json, "a").close()
        except OSError as e:
            ap.error("--json %s: %s" % (args.json, e.strerror))
    if args.dir is not None and not (os.path.isdir(args.dir) and os.access(args.dir, os.W_OK)):
        ap.error("--dir %s is not a writable directory" % args.dir)
    pairs = [p for p in PAIRS if (not only or p[0] in only) and p[0] not in skip]
    allowed = os.sched_getaffinity(0)
    if args.cpu is not None and args.cpu not in allowed:
        ap.error("--cpu %d is not one of the CPUs allowed here (%s)"
                 % (args.cpu, ",".join(map(str, sorted(allowed)))))
    cpu = str(max(allowed) if args.cpu is None else args.cpu)
    # a kill still removes the scratch directory and /tmp/hello (the finally blocks)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped by SIGTERM"))
    placed_hello = False
    with tempfile.TemporaryDirectory(prefix="osmeter-lmbench.") as scratch:
        open(os.path.join(scratch, "foo"), "w").close()
        data = os.urandom(8 << 20)  # lat_pagefault's files: one write() and 4 KB writes
        with open(os.path.join(scratch, "big"), "wb") as f:
            f.write(data)
        with open(os.path.join(scratch, "big4k"), "wb", buffering=0) as f:
            for off in range(0, len(data), 4096):
                f.write(data[off:off + 4096])
        if not os.path.exists("/tmp/hello"):  # lat_proc exec/shell run /tmp/hello
            shutil.copy(os.path.join(bindir, "hello"), "/tmp/hello")
            placed_hello = True
        fsdir = os.path.abspath(args.dir) if args.dir else scratch
        fstype, ext4_skips_deleted = file_system(fsdir)
        lm = Lmbench(bindir, cpu, args.enough_us, args.reps, scratch, fsdir)
        print("before: %s; %s" % (load(), others_now()))
        print("lat_fs pairs in %s: %s" % (fsdir, fstype))
        print("%-24s %12s %12s %6s %-13s %6s %5s %12s  %-4s  %s" % (
            "pair (lmbench)", "lmbench", "osmeter", "ratio", "95% interval", "rounds", "s",
            "spread lm os", "±10%", "like for like? / why"))
        try:
            runs = [pair_visits(pair, lm, cpu, fsdir, scratch, ext4_skips_deleted, args)
                    for pair in pairs]
            for visit in range(1, args.visits + 1):
                for run in runs:
                    next(run, None)
                if visit < args.visits:
                    print("visit %d of %d to every pair done at %s" % (
                        visit, args.visits, time.strftime("%H:%M:%S")), flush=True)
        finally:
            if placed_hello:
                os.unlink("/tmp/hello")
        print("after: " + load())
        if args.explain:
            explain_select(bindir, scratch)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # lmbench's and osmeter's processes are stopped already
        sys.exit("interrupted")
