"""The README's "A first comparison: two machines", run as written: each line of its
recipe in the directory of the machine its comment names, each machine with a results
store of its own (OSMETER_DB), `osmeter` an executable on PATH, and `scp b.json
machine-a:` a copy into machine A's directory.  So that the default test run stays short,
`osmeter run` there measures three benchmarks instead of the quick suite; with --long
(CI's second step) the recipe runs unchanged, quick suite and all."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MARKER = "<!-- recipe: these lines are run by tests/test_two_machines.py -->"
SMALL_RUN = "syscall.getpid syscall.read cpu.integer --runs 3"


def readme_recipe() -> list[tuple[str, str]]:
    """[(machine, command)] of the README's recipe, in order, comments dropped."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines, machine = [], None
    for line in text.split(MARKER, 1)[1].lstrip("\n").splitlines():
        if line and not line.startswith("    "):
            break
        head = re.match(r"\s*# on machine (\w+)$", line)
        if head:
            machine = head.group(1)
            continue
        command = line.split("  #", 1)[0].strip()
        if command:
            lines.append((machine, command))
    return lines


def test_the_recipe_is_where_the_test_reads_it():
    recipe = readme_recipe()
    assert [m for m, _ in recipe] == ["B"] * 3 + ["A"] * 4, recipe
    assert recipe[2] == ("B", "scp b.json machine-a:")
    assert recipe[-2][1].startswith("osmeter compare a b")


def machines(tmp_path: Path, run_args: str) -> tuple[dict, dict]:
    """({machine: directory}, env): PATH with `osmeter` (this tree, running `run` with
    run_args first when given) and an `scp` that copies to machine A's directory."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    dirs = {m: tmp_path / ("machine-" + m.lower()) for m in "AB"}
    for d in dirs.values():
        d.mkdir()
    (bin_dir / "osmeter").write_text(
        '#!/bin/sh\nif [ "$1" = run ] && [ -n "%s" ]; then shift; set -- run %s "$@"; fi\n'
        'exec "%s" -m osmeter "$@"\n' % (run_args, run_args, sys.executable))
    (bin_dir / "scp").write_text(
        '#!/bin/sh\n[ "$2" = machine-a: ] || { echo "scp: only to machine-a:" >&2; exit 1; }\n'
        'exec cp "$1" "%s/"\n' % dirs["A"])
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = dict(os.environ, PATH=str(bin_dir) + os.pathsep + os.environ["PATH"],
               PYTHONPATH=str(REPO), COLUMNS="100")
    return dirs, env


def run_recipe(tmp_path: Path, run_args: str) -> dict:
    dirs, env = machines(tmp_path, run_args)
    out = {}
    for machine, command in readme_recipe():
        e = dict(env, OSMETER_DB=str(dirs[machine] / "results.sqlite"))
        r = subprocess.run(["sh", "-c", command], cwd=dirs[machine], env=e,
                           capture_output=True, text=True, timeout=1800)
        assert r.returncode == 0, "%s on %s\n%s\n%s" % (command, machine, r.stdout, r.stderr)
        out[command.split()[1]] = r.stdout
    assert (dirs["A"] / "b.json").exists() and (dirs["A"] / "a-vs-b.html").exists()
    assert re.search(r"imported run \S+ \(b\)", out["import"]), out["import"]
    return out


def test_the_readme_recipe_compares_two_machines_as_written(tmp_path):
    out = run_recipe(tmp_path, SMALL_RUN)
    assert re.match(r"osmeter comparison: a \(\S+, \S+\), b \(", out["compare"]), out["compare"]
    assert "What differs between the systems" in out["compare"]


@pytest.mark.long
def test_the_readme_recipe_with_the_quick_suite(tmp_path):
    out = run_recipe(tmp_path, "")
    assert "osmeter comparison: a (" in out["compare"]
