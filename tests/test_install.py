"""The README's install commands, run as written on a copy of the source tree with a
fresh home directory: `pipx install .` (Debian's pipx, or pipx from PyPI) and a fresh
virtual environment.  Both must give a working `osmeter` that finds its core; a stock
Debian Python refuses plain `pip install .` (PEP 668), which is why the README offers
these two."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MARKER = "<!-- install: these lines are run by tests/test_install.py -->"
SKIP_DIRS = {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache"}


def readme_install_lines() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    after = text.split(MARKER, 1)[1].lstrip("\n").splitlines()
    lines = []
    for line in after:
        if not line.startswith("    "):
            break
        lines.append(line.strip().split("  #", 1)[0].strip())
    return lines


def _copy_tree(dest: Path) -> None:
    def ignore(d, names):
        rel = os.path.relpath(d, REPO)
        return [n for n in names if n in SKIP_DIRS or n.endswith(".egg-info")
                or (rel == "core" and n.startswith("build"))]
    shutil.copytree(REPO, dest, ignore=ignore)


@pytest.fixture
def home(tmp_path):
    src = tmp_path / "osmeter-src"
    _copy_tree(src)
    h = tmp_path / "home"
    h.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPX_", "VIRTUAL_ENV",
                                                                     "PYTHONPATH"))}
    env.update(HOME=str(h), PATH=str(h / ".local" / "bin") + os.pathsep + env["PATH"],
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    return src, h, env


def _run(command: str, src: Path, env: dict) -> subprocess.CompletedProcess:
    r = subprocess.run(["sh", "-c", command], cwd=src, env=env, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, "%s\n%s\n%s" % (command, r.stdout[-2000:], r.stderr[-2000:])
    return r


def _works(osmeter: Path, env: dict) -> None:
    r = subprocess.run([str(osmeter), "list", "--json"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert '"syscall.getpid"' in r.stdout     # the installed core answered


def test_the_readme_gives_both_installs():
    lines = readme_install_lines()
    assert any(l.startswith("pipx install .") for l in lines)
    assert any("python3 -m venv" in l and "pip install ." in l for l in lines)
    assert any("git+$URL" in l for l in lines) and any(" wheel " in l for l in lines)


@pytest.mark.long      # pip builds the core: 30 s on a busy VM (CI's long run keeps it)
def test_readme_install_in_a_fresh_venv(home):
    src, h, env = home
    line = next(l for l in readme_install_lines() if "python3 -m venv" in l and "git+" not in l)
    _run(line, src, env)
    _works(h / ".local" / "share" / "osmeter-venv" / "bin" / "osmeter", env)


@pytest.mark.long      # pipx builds the core: 54 s on a busy VM (CI's long run keeps it)
@pytest.mark.skipif(shutil.which("pipx") is None,
                    reason="pipx is not installed (apt-get install pipx; CI installs it)")
def test_readme_install_with_pipx(home):
    src, h, env = home
    line = next(l for l in readme_install_lines() if l.startswith("pipx install"))
    _run(line, src, env)
    _works(h / ".local" / "bin" / "osmeter", env)


@pytest.mark.long      # pip builds the core twice: over a minute on a busy VM
@pytest.mark.skipif(shutil.which("pipx") is None or shutil.which("git") is None,
                    reason="pipx or git is not installed (apt-get install pipx git)")
def test_readme_install_from_a_git_url_and_from_a_wheel(home, tmp_path):
    """pip from a repository's URL, no checkout (a file:// clone stands in for the public
    one), and the wheel line's wheel installed with pipx where no source tree is."""
    src, h, env = home
    for cmd in ("git init -q -b main", "git add -A",
                "git -c user.name=t -c user.email=t@localhost commit -qm tree"):
        _run(cmd, src, env)
    lines = readme_install_lines()
    _run(next(l for l in lines if "git+$URL" in l), tmp_path,
         dict(env, URL="file://%s" % src))
    _works(h / ".local" / "share" / "osmeter-venv" / "bin" / "osmeter", env)
    _run(next(l for l in lines if " wheel " in l), src, env)
    wheel = next((src / "dist").glob("osmeter-*.whl"))
    _run("pipx install %s" % wheel, tmp_path, env)
    _works(h / ".local" / "bin" / "osmeter", env)


@pytest.mark.long      # two installs: 58 s on a busy VM; ./run-tests' own start runs it
def test_bootstrap_skips_the_install_when_nothing_changed(home):
    src, h, env = home
    first = _run("sh scripts/bootstrap.sh", src, env)
    assert "up to date" not in first.stderr
    _works(src / ".venv" / "bin" / "osmeter", env)
    again = _run("sh scripts/bootstrap.sh", src, env)
    assert "osmeter in .venv is up to date" in again.stderr
    stamp = (src / ".venv" / ".osmeter-install-stamp").read_text()
    with open(src / "osmeter" / "__init__.py", "a") as f:     # a source changed
        f.write("\n")
    changed = subprocess.run(["sh", "-c", "sh scripts/bootstrap.sh"], cwd=src, env=env,
                             capture_output=True, text=True, timeout=900)
    assert changed.returncode == 0 and "up to date" not in changed.stderr
    assert (src / ".venv" / ".osmeter-install-stamp").read_text() != stamp


@pytest.mark.long      # an install and three checks: 31 s on a busy VM
def test_run_tests_and_run_benchmarks_share_one_install_in_either_order(home):
    """The two commands ask for different extras ([test], none): an install with more
    extras than asked for will do, and a missing extra installs its own packages, not
    osmeter again.  The set-up says what it does while it does it."""
    src, h, env = home
    pyproject = src / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        "[project.optional-dependencies]\n",
        "[project.optional-dependencies]\nempty = []\nnone = []\n"))
    first = _run("OSMETER_EXTRAS='[empty]' sh scripts/bootstrap.sh", src, env)
    assert re.search(r"bootstrap \[\d+ s\]: installing osmeter with \[empty\] into .venv",
                     first.stderr), first.stderr
    assert re.search(r"bootstrap \[\d+ s\]: osmeter installed in .venv", first.stderr)
    plain = _run("sh scripts/bootstrap.sh", src, env)        # ./run-benchmarks after
    assert "osmeter in .venv is up to date" in plain.stderr, plain.stderr
    other = _run("OSMETER_EXTRAS='[none]' sh scripts/bootstrap.sh", src, env)
    assert "installing the packages of the extra(s) none" in other.stderr, other.stderr
    assert "installing osmeter" not in other.stderr
    both = _run("OSMETER_EXTRAS='[empty]' sh scripts/bootstrap.sh", src, env)
    assert "up to date" in both.stderr
    assert (src / ".venv" / ".osmeter-install-stamp").read_text().split("\n")[1] == \
        "empty,none"


@pytest.mark.long      # a venv, pip install build, an sdist: over a minute on a busy VM
def test_an_sdist_carries_the_core_and_installs(home):
    """`pip install osmeter-X.tar.gz` builds the core from the sdist: every file of core/
    that git tracks is in it (MANIFEST.in), none of a build directory."""
    src, h, env = home
    _run("python3 -m venv %s/venv && %s/venv/bin/pip install -q build" % (h, h), src, env)
    _run("%s/venv/bin/python -m build -q --sdist -o %s/dist ." % (h, h), src, env)
    sdist = next((h / "dist").glob("osmeter-*.tar.gz"))
    import tarfile
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    tracked = subprocess.run(["git", "ls-files", "core"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split()
    assert tracked and not set(tracked) - names, set(tracked) - names
    assert not [n for n in names if n.startswith("core/build")]
    _run("%s/venv/bin/pip install -q %s" % (h, sdist), h, env)
    _works(h / "venv" / "bin" / "osmeter", env)
