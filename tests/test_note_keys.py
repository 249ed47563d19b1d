"""The note-key registry (osmeter/data/note_keys.py) held against the core's C sources and the
front-end's readers, and placement read as data (note placement_cpus) with the words of
older runs still understood."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from osmeter.data import note_keys
from osmeter.analysis import results

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
KEY = re.compile(r"[a-z][a-z0-9_]*\Z")
# The one call whose key is not a literal: om_measure_batches notes the batch size under
# the struct's .note (a literal where it is set), iterations_per_batch when it is NULL.
INDIRECT = "m->note ? m->note :"


def _args(text: str, start: int) -> tuple[list[str], int]:
    """The top-level arguments of the call whose '(' is at text[start]."""
    depth, args, cur, i = 0, [], [], start
    while i < len(text):
        c = text[i]
        if c == '"':
            end = STRING.match(text, i).end()
            cur.append(text[i:end])
            i = end
            continue
        if c == "(":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args, i
        elif c == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    raise AssertionError("unclosed call at %d" % start)


def core_notes(root: Path = CORE) -> dict[str, list[tuple[str, str]]]:
    """key -> [(file:line, format), ...] for every note the core writes."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(root.rglob("*.c")):
        if "build" in path.relative_to(root).parts:
            continue
        text = path.read_text(errors="replace")
        name = path.relative_to(root.parent)
        where = lambda i: "%s:%d" % (name, text.count("\n", 0, i) + 1)
        for m in re.finditer(r"\bom_note\s*\(", text):
            if re.search(r"void\s+$", text[max(0, m.start() - 8):m.start()]):
                continue                                 # the definition
            args, _ = _args(text, m.end() - 1)
            key_arg, fmt = args[1], args[2] if len(args) > 2 else ""
            literals = STRING.findall(key_arg)
            rest = STRING.sub("", key_arg).replace(INDIRECT, "").strip()
            assert not rest, "%s: om_note's key is not a literal (%s): name it as one, " \
                "or teach this test the indirection" % (where(m.start()), key_arg)
            for k in literals:
                found.setdefault(k, []).append((where(m.start()), fmt))
        for m in re.finditer(r'\.note\s*=\s*"([^"]+)"', text):   # om_measure's .note
            found.setdefault(m.group(1), []).append((where(m.start()), '"%llu"'))
    return found


def test_the_scan_sees_the_core_write_its_notes():
    notes = core_notes()
    assert len(notes) > 50
    assert {"placement", "placement_cpus", "iterations_per_batch", "loops_per_batch",
            "stopped_by", "fs_type"} <= set(notes)


def test_every_key_the_core_writes_is_in_the_registry():
    missing = {k: [w for w, _ in v] for k, v in core_notes().items() if k not in note_keys.KEYS}
    assert not missing, "note keys the core writes that osmeter/data/note_keys.py lacks " \
        "(add each with its type, unit and meaning): %s" % missing


def test_every_core_key_of_the_registry_is_written_by_the_core():
    written = core_notes()
    stale = [k.name for k in note_keys.KEYS.values() if k.writer == "core" and k.name not in written]
    assert not stale, "registered but written by no om_note in core/: %s" % stale


def test_the_registry_is_well_formed():
    for k in note_keys.KEYS.values():
        assert KEY.match(k.name) and k.type in note_keys.TYPES and k.meaning, k
        assert k.writer in ("core", "front-end"), k


def test_a_note_registered_as_a_number_is_written_as_one():
    """type int: the core's format is one integer conversion and nothing else, so the
    value reads with int()."""
    for key, uses in core_notes().items():
        if note_keys.KEYS.get(key) and note_keys.KEYS[key].type == "int":
            for where, fmt in uses:
                assert re.fullmatch(r'"%(lld|ld|d|zu|llu)"', fmt), (key, where, fmt)


def test_the_front_end_reads_only_registered_keys():
    read = re.compile(r"""notes(?:\.get\(|\[)\s*["']([a-z][a-z0-9_]*)["']""")
    unknown = []
    for folder in ("osmeter", "bench", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for m in read.finditer(path.read_text()):
                if m.group(1) not in note_keys.KEYS:
                    unknown.append("%s: %s" % (path.relative_to(ROOT), m.group(1)))
    assert not unknown, unknown


def test_the_scan_fails_on_a_key_the_registry_lacks(tmp_path):
    """The check itself can fail: a copy of a C file that writes one more key."""
    src = (CORE / "bench" / "cpu.c").read_text()
    assert 'om_note(ctx, "ops_per_iteration"' in src
    (tmp_path / "cpu.c").write_text(src.replace(
        'om_note(ctx, "ops_per_iteration"', 'om_note(ctx, "loop_unrolled", "4");\n'
        '    om_note(ctx, "ops_per_iteration"'))
    new = set(core_notes(tmp_path)) - set(note_keys.KEYS)
    assert new == {"loop_unrolled"}


# ---- placement as data ------------------------------------------------------------------

def test_placement_is_read_from_the_structured_note():
    assert note_keys.placement_cpus({"placement_cpus": "3"}) == [3]
    assert note_keys.placement_cpus({"placement_cpus": "0,1", "placement": "garbled"}) == [0, 1]
    assert note_keys.placement_cpus({"placement_cpus": ["1", "0,1"]}) == [0, 1]
    assert note_keys.placement_cpus({"placement_cpus": "none"}) is None
    assert note_keys.placement_cpus({"placement_cpus": ["1", "none"]}) is None


def test_older_runs_placement_is_read_from_its_words():
    assert note_keys.placement_cpus({"placement": "all processes pinned to CPU 3"}) == [3]
    assert note_keys.placement_cpus({"placement": "near end on CPU 0, far end on CPU 1"}) \
        == [0, 1]
    assert note_keys.placement_cpus({"placement": "unpinned (scheduler's choice of CPUs)"}) \
        is None
    assert note_keys.placement_cpus({}) is None


ALLOWED = sorted(os.sched_getaffinity(0))


@pytest.mark.parametrize("params, want", [
    ({}, [ALLOWED[-1]]),
    ({"pin": "none"}, None),
    pytest.param({"pin": "split"}, ALLOWED[-2:], marks=pytest.mark.skipif(
        len(ALLOWED) < 2, reason="pin=split needs two CPUs; this process has one")),
])
def test_the_core_writes_placement_as_data_that_agrees_with_its_words(smoke, params, want):
    bench = "net.pipe_bw" if params.get("pin") == "split" else "ctx.pipe_pingpong"
    inv = smoke(bench, **params)
    merged = results.merge_notes([inv.notes])
    assert note_keys.placement_cpus(merged) == want
    assert note_keys.cpus_of_placement(merged["placement"]) == want


def test_the_results_schema_names_only_registered_keys():
    import json
    schema = json.loads((ROOT / "osmeter" / "data" / "results.schema.json").read_text())
    named = set(schema["$defs"]["notes"]["properties"])
    assert named and named <= set(note_keys.KEYS), named - set(note_keys.KEYS)
