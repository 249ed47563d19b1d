"""docs/architecture.md is the tree: its drawing of the floors is FLOORS
(tests/test_registries.py), its folders come in the floors' order, and each folder's
table names exactly the modules in it.  And what it says of stats/ and analysis/ holds:
they print nothing."""
from __future__ import annotations

import re
from pathlib import Path

from test_registries import FLOORS, PKG

DOC = (Path(__file__).resolve().parent.parent / "docs" / "architecture.md").read_text()


def drawn_floors() -> dict[int, set[str]]:
    """The drawing's folders per floor number (the indented block's numbered lines)."""
    block = next(b for b in DOC.split("\n\n") if b.startswith("    ") and "cli.py" in b)
    floors: dict[int, set[str]] = {}
    current = None
    for line in block.splitlines():
        m = re.match(r"^ {4}(\d) ", line)
        if m:
            current = int(m.group(1))
        if current is not None:
            floors.setdefault(current, set()).update(re.findall(r"\b([a-z]+)/", line))
    return floors


def sections() -> list[tuple[str, set[str]]]:
    """(folder, the modules its table names) for each '### folder/' of the tree."""
    out = []
    parts = re.split(r"^### ([\w]+)/\s*$", DOC, flags=re.M)
    for name, body in zip(parts[1::2], parts[2::2]):
        out.append((name, set(re.findall(r"^\| `([\w/]+\.py)` \|", body, flags=re.M))))
    return out


def test_the_drawing_is_the_floors():
    want = {len(FLOORS) - i: set(folders) for i, folders in enumerate(FLOORS)}
    assert drawn_floors() == want


def test_the_folders_come_top_floor_first():
    order = [name for name, _ in sections()]
    assert order[0] == "osmeter"
    floor = {f: i for i, folders in enumerate(FLOORS) for f in folders}
    assert sorted(order[1:]) == sorted(floor)
    assert [floor[f] for f in order[1:]] == sorted(floor[f] for f in order[1:])


def test_every_module_is_named_in_its_folders_table():
    for name, named in sections():
        if name == "osmeter":
            there = {p.name for p in PKG.glob("*.py")}
        else:
            there = {p.relative_to(PKG / name).as_posix() for p in (PKG / name).rglob("*.py")}
        assert named == there, (name, sorted(there - named), sorted(named - there))


def test_statistics_and_analysis_print_nothing():
    """What a number is, is decided in stats/ and analysis/; what a reader sees, above."""
    import ast
    said = []
    for folder in ("stats", "analysis"):
        for path in sorted((PKG / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
                    said.append("%s:%d print" % (path.relative_to(PKG), node.lineno))
                if isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr") \
                        and getattr(node.value, "id", None) == "sys":
                    said.append("%s:%d sys.%s" % (path.relative_to(PKG), node.lineno,
                                                  node.attr))
    assert said == []
