"""The lists kept beside a registry are held to it, and the front-end's floors to their
order (docs/architecture.md): an export format is registered by its module alone and
README, docs/formats.md and the CLI name exactly the registered ones; the studies'
ids likewise; every module lies in a folder whose floor is known (FLOORS), no import
runs in a circle or from a lower floor up to a higher one, and no command imports
another command."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from osmeter import cli, studies
from osmeter.formats import formats

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "osmeter"
README = (ROOT / "README.md").read_text()


# ---- export formats ---------------------------------------------------------------------

def test_every_format_module_is_registered():
    names = set(formats())
    assert {"osmeter", "bmf", "pyperf", "hyperfine", "github-smaller", "github-bigger",
            "long"} <= names
    assert next(iter(formats())) == "osmeter"        # the default, listed first


def test_readme_lists_the_registered_formats():
    m = re.search(r"osmeter export RUN \[--format ([a-z|-]+)\]", README)
    assert m, "README's usage line of osmeter export is gone"
    assert set(m.group(1).split("|")) == set(formats())


def test_docs_formats_table_has_a_row_per_registered_format():
    text = (ROOT / "docs" / "formats.md").read_text()
    firsts = [line.split("|")[1] for line in text.splitlines()
              if line.startswith("| `") and not line.startswith("| `--")]
    named = {n for cell in firsts for n in re.findall(r"`([a-z-]+)`", cell)}
    assert named == set(formats())


def _choices(command: str, option: str) -> list:
    parser = cli.make_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return next(a for a in sub._actions if option in a.option_strings).choices


def test_the_cli_offers_the_registered_formats():
    assert list(_choices("export", "--format")) == list(formats())


def test_readme_and_cli_name_the_studies():
    for m in re.finditer(r"--study ([a-z0-9|]+)\]", README):
        assert tuple(m.group(1).split("|")) == studies.IDS
    assert tuple(_choices("report", "--study")) == (*studies.IDS, "all")
    assert tuple(_choices("compare", "--study")) == studies.IDS


# ---- the floors -------------------------------------------------------------------------

def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in sorted(PKG.rglob("*.py"))}


def imports(name: str) -> set[str]:
    """The osmeter modules one module imports, at its top or inside a function."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rsplit(".", 1)[0]
            base = (base + "." + node.module if node.module else base) if node.level \
                else node.module
            for a in node.names:
                sub = base + "." + a.name
                out.add(sub if sub in MODULES else base)
    return {m for m in out if m in MODULES and m != name}


GRAPH = {name: imports(name) for name in MODULES}

# The one circle allowed: the store's factory (store/base.py opens the back-end a
# location names, and each back-end is a Store).
STORE_FACTORY = {"osmeter.data.store.base", "osmeter.data.store.sqlite",
                 "osmeter.data.store.postgres"}


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_but_the_store_factory():
    assert [c for c in circles(GRAPH) if c != STORE_FACTORY] == []


# The floors, top down, each a list of the package's folders (a folder's modules and its
# subfolders'); the modules at the package's top are placed by name.  A module's floor is
# its folder's: a new module is placed by where it is put, and a new folder must be
# added here (test_every_module_lies_on_a_floor).
FLOORS = (
    ("commands",),                  # the command line: parse, then call
    ("running",),                   # making a run: plan, catalogue, core process, runner
    ("report", "formats"),          # every word: for people, for other tools
    ("studies",),                   # the published studies, each in the paper's order
    ("analysis",),                  # what results mean: compare, gate, noise, history...
    ("stats", "data", "system"),    # statistics; what is kept; what this machine is
    ("base",),                      # numbers and text, used by every floor
)
TOP = {"osmeter.cli": "commands", "osmeter.__main__": "commands", "osmeter.api": "commands",
       "osmeter": "base"}


def folder(name: str) -> str | None:
    """The folder of osmeter a module lies in (its floor's name), or None."""
    if name in TOP:
        return TOP[name]
    parts = name.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (PKG / parts[1]).is_dir()) \
        else None


def floor(name: str) -> int:
    """0 for the lowest floor (base), up to the command line."""
    f = folder(name)
    return next(len(FLOORS) - 1 - i for i, fs in enumerate(FLOORS) if f in fs)


def test_every_module_lies_on_a_floor():
    named = {f for fs in FLOORS for f in fs}
    unplaced = sorted(m for m in MODULES if folder(m) not in named)
    assert unplaced == [], "put each in a folder of FLOORS (docs/architecture.md)"
    folders = sorted(p.name for p in PKG.iterdir() if p.is_dir() and p.name != "__pycache__"
                     and (p / "__init__.py").exists())
    assert sorted(named) == folders


def test_no_import_runs_back_up_a_floor():
    up = sorted("%s -> %s" % (a, b) for a, bs in GRAPH.items() for b in bs
                if floor(b) > floor(a))
    assert up == []


def test_no_command_imports_another():
    """What two commands share lies in commands/common.py or on a floor below."""
    shared = {"osmeter.commands", "osmeter.commands.common"}
    across = sorted("%s -> %s" % (a, b) for a, bs in GRAPH.items() for b in bs
                    if a.startswith("osmeter.commands.") and b.startswith("osmeter.commands")
                    and b not in shared and a not in shared)
    assert across == []


def test_the_floor_checks_can_fail():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert floor("osmeter.base.numbers") < floor("osmeter.data.references") \
        < floor("osmeter.analysis.compare") < floor("osmeter.studies.o90") \
        < floor("osmeter.report.tables") < floor("osmeter.running.runner") \
        < floor("osmeter.commands.run") == floor("osmeter.cli")
    assert folder("osmeter.somewhere") is None


# ---- names the core and the front-end share -----------------------------------------------

def test_the_peer_secret_variable_is_one_name_in_the_core_and_the_front_end():
    from osmeter.running import coreproc     # the core reads it; serve and run pass it
    header = (ROOT / "core" / "servers" / "peer.h").read_text()
    m = re.search(r'#define OM_PEER_SECRET_ENV "([A-Z_]+)"', header)
    assert m and m.group(1) == coreproc.SECRET_ENV
    spelled = [str(p.relative_to(ROOT)) for folder in ("core", "osmeter")
               for p in sorted((ROOT / folder).rglob("*"))
               if "build" not in p.parts and p.suffix in (".c", ".h", ".py")
               and coreproc.SECRET_ENV in p.read_text()]
    assert spelled == ["core/servers/peer.h", "osmeter/running/coreproc.py"], spelled
