"""Suite files: what a valid file becomes, and one clear line for each kind of mistake."""
import json
import re
import textwrap

import pytest

from clirun import REPO, osmeter
from osmeter.running import suitefile
from osmeter.running.catalog import Catalog
from osmeter.data.store import Store


@pytest.fixture(scope="module")
def catalog():
    return Catalog()


def write(tmp_path, text, name="suite.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(p)


def error_of(path, catalog):
    with pytest.raises(suitefile.SuiteFileError) as e:
        suitefile.load(path, catalog)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_a_valid_file_becomes_a_plan(tmp_path, catalog):
    path = write(tmp_path, """
        [suite]
        label = "team"
        runs = 4
        preset = "quick"

        [[bench]]
        id = "ctx.pipe_ring"
        params = { n = [2, 16], pin = "none" }

        [[bench]]
        id = "ub.*"

        [[command]]
        name = "hello"
        run = ["echo", "hello world"]
        warmup = 0
        samples = 3
        timeout = 30

        [[command]]
        name = "piped"
        run = "echo a | wc -c"
    """)
    sf = suitefile.load(path, catalog)
    assert sf.label == "team" and sf.runs == 4
    ring = sf.items[0]
    assert ring.bench == "ctx.pipe_ring" and ring.preset == "quick"
    assert ring.params == {"n": "2,16", "pin": "none"}
    assert [i.bench for i in sf.items[1:6]] == ["ub.syscall", "ub.pipe", "ub.ctx", "ub.spawn",
                                                "ub.execl"]
    hello, piped = sf.items[6:]
    assert hello.result_id == "cmd.hello" and hello.bench == "cmd.run"
    assert json.loads(hello.params["argv"]) == ["echo", "hello world"]
    assert hello.params["shell"] == "no" and hello.params["samples"] == "3"
    assert hello.params["timeout_s"] == "30" and hello.params["warmup"] == "0"
    assert piped.params["shell"] == "yes" and piped.preset == "quick"   # default samples 5
    assert json.loads(piped.params["argv"]) == ["echo a | wc -c"]


def test_the_example_suite_file_is_valid(catalog):
    sf = suitefile.load(str(REPO / "examples" / "suite.toml"), catalog)
    assert any(i.result_id.startswith("cmd.") for i in sf.items)


def test_invalid_toml_names_file_line_and_column(tmp_path, catalog):
    path = write(tmp_path, """
        [[bench]]
        id = "syscall.getpid"
        params = { samples = 3
    """)
    msg = error_of(path, catalog)
    # tomllib finds the table unclosed at the end of line 3; newer tomli (TOML 1.1 lets
    # an inline table go on over lines) only at the end of the document, line 4
    assert re.match(re.escape(path) + r":(3:\d+|4:1): invalid TOML: Unclosed inline table$",
                    msg), msg


@pytest.mark.parametrize("text, line, words", [
    ("""
     [[bench]]
     id = "syscall.getpid"

     [[command]]
     name = "a"
     run = ["true"]

     [[command]]
     name = "b"
     run = ["true"]
     smaples = 3
     """, 11, ["[[command]] #2 (b)", "unknown key 'smaples'"]),
    ("""
     [[bench]]
     id = "syscall.getpid"
     [[bench]]
     id = "no.such.bench"
     """, 4, ["[[bench]] #2", "key 'id'", "unknown benchmark 'no.such.bench'"]),
    ("""
     [[bench]]
     id = "ctx.pipe_ring"
     params = { n = "2,99999" }
     """, 3, ["[[bench]] #1 (ctx.pipe_ring)", "out of range"]),
    ("""
     [[bench]]
     id = "syscall.getpid"
     params = { colour = 3 }
     """, 3, ["has no parameter 'colour'"]),
    ("""
     [[command]]
     name = "x"
     run = ["true"]
     samples = "ten"
     """, 4, ["[[command]] #1 (x) key 'samples'", "must be an integer"]),
    ("""
     [[command]]
     name = "x"
     run = ["osmeter-no-such-program", "-v"]
     """, 3, ["command not found: osmeter-no-such-program"]),
    ("""
     [[command]]
     name = "x"
     run = "echo hi"
     shell = false
     """, 3, ["needs shell"]),
    ("""
     [[command]]
     run = ["true"]
     """, 1, ["[[command]] #1", "missing key 'name'"]),
    ("""
     [[command]]
     name = "same"
     run = ["true"]
     [[command]]
     name = "same"
     run = ["true"]
     """, 4, ["'cmd.same' is already in the suite"]),
    ("""
     [suite]
     runs = 0
     [[bench]]
     id = "syscall.getpid"
     """, 2, ["[suite] key 'runs'", "at least 1"]),
    ("""
     [suite]
     preset = "huge"
     """, 2, ["[suite] key 'preset'"]),
    ("""
     [benches]
     id = "x"
     """, None, ["unknown table or key 'benches'"]),
])
def test_mistakes_are_one_line_with_their_place(tmp_path, catalog, text, line, words):
    path = write(tmp_path, text)
    msg = error_of(path, catalog)
    assert msg.startswith(path + (":%d:" % line if line else ":")), msg
    for w in words:
        assert w in msg, msg


def test_empty_and_missing_files(tmp_path, catalog):
    assert "names no benchmark" in error_of(write(tmp_path, "# nothing\n"), catalog)
    assert "cannot read suite file" in error_of(str(tmp_path / "absent.toml"), catalog)


def test_cli_reports_the_error_on_one_line_and_exits_2(tmp_path):
    path = write(tmp_path, """
        [[command]]
        name = "x"
        run = ["true"]
        samples = -1
    """)
    r = osmeter("run", "--suite-file", path, db=tmp_path / "db.sqlite", check=2)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("osmeter: error: %s:4:" % path)
    assert "samples must be an integer >= 1" in lines[0]


def test_cli_runs_a_suite_file(tmp_path):
    path = write(tmp_path, """
        [suite]
        label = "from-file"
        runs = 2

        [[bench]]
        id = "syscall.getppid"

        [[command]]
        name = "true"
        run = ["true"]
        samples = 2
    """)
    db = tmp_path / "db.sqlite"
    r = osmeter("run", "--suite-file", path, "--smoke", "--quiet", db=db, check=0)
    assert "cmd.true wall" in r.stdout and "syscall.getppid" in r.stdout
    run = Store(db).load_run("from-file")
    benches = {x.bench for x in run.results}
    assert benches == {"syscall.getppid", "cmd.true"}
    wall = [x for x in run.results if x.bench == "cmd.true" and x.metric == "wall"][0]
    assert wall.summary["repetitions"] == 2 and wall.summary["n"] == 4
    assert "given no ids" not in r.stderr
    r = osmeter("run", "syscall.getpid", "--suite-file", path, db=db, check=2)
    assert "--suite-file names its benchmarks itself" in r.stderr
