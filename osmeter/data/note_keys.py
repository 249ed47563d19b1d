"""Every note key that crosses from the core to the front-end, in one registry: its name,
the type of its value, the unit, and what it means.

The core writes a note as {"type":"note","key":KEY,"value":TEXT} (om_note in
core/harness.c); the front-end keeps them per result under "notes", one value where the
repetitions agree, the list of values where they differ (results.merge_notes).  Every
value arrives as text; `type` says how to read it:

    text    prose for a person (the key is what a program may look at, not the words)
    int     a whole number written with %lld/%d, nothing else
    labelled an int, after "LABEL: " when the note belongs to one point of a sweep
    cpus    "none" (unpinned) or the CPU numbers, comma-separated ("1", "0,1")
    record  written by the front-end, not the core: a JSON object (see `meaning`)

tests/test_note_keys.py reads the core's C sources and fails on a key the core writes
that is not here (and on a key here that nothing writes), and on a key the front-end
reads (`notes.get("...")`, `notes["..."]`) that is not here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class NoteKey:
    name: str
    type: str            # text | int | labelled | cpus | record
    unit: str            # "" when the value has none (or its prose says it)
    meaning: str
    writer: str = "core"  # core | front-end


_KEYS = (
    # -- the harness, for every benchmark --
    NoteKey("placement", "text", "", "where the benchmark's processes ran, in words "
            "('all processes pinned to CPU 1', 'unpinned: ...'); read placement_cpus"),
    NoteKey("placement_cpus", "cpus", "", "the CPUs the benchmark was bound to, or 'none' "
            "(runs stored before the core wrote it: read from the words of 'placement')"),
    NoteKey("iterations_per_batch", "labelled", "iterations",
            "the calibrated batch size: how many operations one sample times"),
    NoteKey("loops_per_batch", "labelled", "loops", "the same for a UnixBench loop (ub.*)"),
    NoteKey("cycle_counter", "text", "", "the timer of single operations: the cycle "
            "counter and its calibrated rate, or none"),
    NoteKey("exec_wrapper", "text", "", "the program osmeter's own programs are started "
            "through (OSMETER_EXEC_WRAPPER, qemu-user)"),
    NoteKey("memory_limit", "text", "", "the memory cgroup the benchmark ran in, or none"),
    NoteKey("directory", "text", "", "the private working directory the core made"),
    NoteKey("fs_type", "text", "", "the file system type of that directory (statfs)"),
    NoteKey("space_needed_bytes", "int", "bytes", "the free space the benchmark asked for"),
    NoteKey("warning", "text", "", "something the benchmark noticed that does not fail it"),
    NoteKey("duration", "text", "", "how long one sample runs, and why"),
    NoteKey("linkage", "text", "", "static or dynamic: how the measured program is linked"),
    NoteKey("method", "text", "", "how one sample is timed"),
    NoteKey("timing", "text", "", "what each timed pass includes"),
    NoteKey("timed", "text", "", "exactly what the timer starts and stops on"),
    # -- limits and sweeps --
    NoteKey("limit", "text", "", "a system limit in force before a scalability curve "
            "(rlimits, sysctls, free memory or disk)"),
    NoteKey("stopped_by", "text", "", "what ended a scalability curve early"),
    NoteKey("byte", "text", "", "mem.memset: the byte written (0x00 is lmbench's bzero, "
            "which some machines write faster)"),
    NoteKey("descriptors", "text", "", "syscall.select.files: how many descriptors are set, "
            "the lowest and highest, and the nfds passed (what select looks at)"),
    NoteKey("send_buffer", "text", "", "per datagram size: the UDP send buffer used (the "
            "system's default, or one datagram where that is less: the BSDs' 9216 bytes)"),
    NoteKey("call", "text", "", "the system call a benchmark times where systems differ "
            "(thread.futex.wake: futex, __futex, _umtx_op)"),
    NoteKey("curve_end", "text", "", "what ended a context-switch curve early"),
    NoteKey("sweep_limited", "text", "", "why a memory sweep stops before its planned top"),
    NoteKey("sizes", "text", "bytes", "the sizes a memory sweep visits, comma-separated"),
    NoteKey("timer_pair_overhead_ns", "text", "ns", "the timer's own cost, subtracted "
            "from every sample (a number, then why)"),
    NoteKey("between_operations_ns", "text", "ns", "median gap between operations in the "
            "first and the last tenth of a curve"),
    # -- families --
    NoteKey("threads", "text", "", "how many threads took part"),
    NoteKey("threads_before", "int", "threads", "threads of the core before the benchmark"),
    NoteKey("threads_after", "int", "threads", "threads of the core after it (more: a leak)"),
    NoteKey("critical_section", "text", "", "what a lock benchmark's critical section does"),
    NoteKey("context_switches", "text", "", "voluntary switches per hand-off (getrusage)"),
    NoteKey("stack_bytes", "text", "bytes", "each thread's stack size, and who set it"),
    NoteKey("games", "text", "", "the hot-potato games played"),
    NoteKey("attributes", "text", "", "the thread attributes of a scalability curve"),
    NoteKey("address", "text", "", "the address a socket curve binds"),
    NoteKey("file", "text", "", "the file a benchmark maps or reads"),
    NoteKey("files", "text", "", "the files a file-system curve creates"),
    NoteKey("cache", "text", "", "how the page cache was treated (cold, warm, direct)"),
    NoteKey("fsync", "text", "", "where fsync is called"),
    NoteKey("extents", "text", "", "the extents of the files read (FIEMAP), or why not counted"),
    NoteKey("resident", "text", "%", "the share of a file in the page cache"),
    NoteKey("resident_after_drop_pct", "text", "%", "after dropping it from the cache: "
            "the file's size, then the percentage still resident"),
    NoteKey("cache_sizes", "text", "bytes", "the cache sizes the memory sweep is built on"),
    NoteKey("cache_disagreement", "text", "", "two sources of the cache sizes disagree"),
    NoteKey("blocks", "text", "bytes", "the cached and uncached block sizes"),
    NoteKey("ops_per_iteration", "int", "operations", "integer operations in one loop "
            "iteration of cpu.integer"),
    # -- network --
    NoteKey("far_end", "text", "", "where the far end ran: a local child or the peer"),
    NoteKey("socket_buffers", "text", "", "the socket buffer sizes and Nagle"),
    NoteKey("tcp_nodelay", "text", "", "whether TCP_NODELAY is set"),
    NoteKey("connections", "text", "", "connections made and accepted"),
    NoteKey("far_receive_buffer", "text", "bytes", "the far end's receive buffer"),
    NoteKey("clamped", "text", "", "datagrams larger than UDP allows, sent smaller"),
    NoteKey("nothing_arrived", "text", "", "a datagram size of which none arrived"),
    NoteKey("mech", "text", "", "the HTTP server's event mechanism"),
    NoteKey("file_io", "text", "", "how the HTTP server sends files"),
    NoteKey("server_capacity", "text", "", "the connections the HTTP server holds"),
    NoteKey("client", "text", "", "the HTTP load generator: processes and connections"),
    NoteKey("target", "text", "", "an external HTTP server measured instead of ours"),
    # -- programs (applications, the modified Andrew benchmark, the user's command) --
    NoteKey("program", "text", "", "the path of the program run"),
    NoteKey("version", "text", "", "its first line of version output"),
    NoteKey("input", "text", "", "the input it was given"),
    NoteKey("file_bytes", "int", "bytes", "the size of the file it loads"),
    NoteKey("command", "text", "", "the command line timed"),
    NoteKey("name", "text", "", "the user's name for their command"),
    NoteKey("output", "text", "", "where the command's output went"),
    NoteKey("tree", "text", "", "the source tree copied, compiled or archived"),
    NoteKey("compiler", "text", "", "the compiler and its flags"),
    NoteKey("source", "text", "", "where the generated source lives"),
    NoteKey("compression", "text", "", "the compressor used"),
    NoteKey("archive_bytes", "int", "bytes", "the size of the archive made"),
    # -- written by the front-end --
    NoteKey("interference", "record", "", "per repetition, what else used the CPUs "
            "meanwhile (monitor.Interference.to_dict)", writer="front-end"),
)

KEYS: dict[str, NoteKey] = {k.name: k for k in _KEYS}
TYPES = ("text", "int", "labelled", "cpus", "record")


def cpus_of_placement(note) -> list[int] | None:
    """The CPUs a placement note names in words ('all processes pinned to CPU 1', 'near
    end on CPU 0, far end on CPU 1'; a list when repetitions differ); None when unpinned.
    For runs stored before the core wrote placement_cpus."""
    notes = note if isinstance(note, list) else [note]
    cpus = set()
    for n in notes:
        if not isinstance(n, str) or n.startswith("unpinned"):
            return None
        cpus |= {int(c) for c in re.findall(r"CPU (\d+)", n)}
    return sorted(cpus) or None


def placement_cpus(notes: dict) -> list[int] | None:
    """The CPUs a result's benchmark was bound to (over all its repetitions), or None when
    it ran unpinned: note placement_cpus, else, for older runs, the words of placement."""
    data = notes.get("placement_cpus")
    if data is None:
        return cpus_of_placement(notes.get("placement"))
    cpus = set()
    for value in data if isinstance(data, list) else [data]:
        if not isinstance(value, str) or value == "none":
            return None
        cpus |= {int(c) for c in value.split(",")}
    return sorted(cpus) or None
