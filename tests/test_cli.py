"""The command line end to end: run, show, runs, export, import, list, sysinfo, bad input."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

import proctree
from clirun import REPO, osmeter
from osmeter.data.store import Store


@pytest.fixture
def db(tmp_path):
    return tmp_path / "results.sqlite"


def test_run_stores_every_sample_and_prints_a_summary(db, tmp_path):
    out = tmp_path / "run.json"
    r = osmeter("run", "syscall.getpid", "ctx.pipe_ring", "--smoke", "--runs", "3",
                "--label", "first", "--json", out, "--quiet", db=db, check=0)
    assert "syscall.getpid" in r.stdout and "95% interval" in r.stdout
    run = Store(db).load_run("first")
    assert run.smoke and run.status == "complete" and run.label == "first"
    getpid = [x for x in run.results if x.bench == "syscall.getpid"][0]
    assert getpid.unit == "ns" and getpid.better == "lower"
    assert getpid.summary["n"] == 6 and len(getpid.samples) == 6     # 3 runs x 2 samples
    assert {s.rep for s in getpid.samples} == {0, 1, 2}
    assert getpid.params == {"samples": "2", "batch_ms": "2"}
    for key in ("median", "ci_low", "ci_high", "cv"):
        assert key in getpid.summary
    ring = [x for x in run.results if x.bench == "ctx.pipe_ring"]
    assert sorted(x.x for x in ring) == [2, 4] and ring[0].x_name == "processes"
    assert ring[0].notes["placement"].startswith("all processes pinned")
    doc = json.loads(out.read_text())
    assert doc["format"] == "osmeter.run" and doc["schema_version"] == 1
    assert doc["run"]["sysinfo"]["kernel"]["release"] == os.uname().release
    assert len(doc["results"]) == len(run.results)


def test_show_runs_export_import_round_trip(db, tmp_path):
    osmeter("run", "syscall.getppid", "--smoke", "--runs", "2", "--label", "a", "--quiet",
            db=db, check=0)
    r = osmeter("runs", db=db, check=0)
    assert " a " in r.stdout
    assert "syscall.getppid" in osmeter("show", "a", db=db, check=0).stdout
    assert "syscall.getppid" in osmeter("show", db=db, check=0).stdout   # latest
    exported = tmp_path / "a.json"
    osmeter("export", "a", "-o", exported, db=db, check=0)
    other = tmp_path / "other.sqlite"
    osmeter("import", exported, db=other, check=0)
    assert Store(other).load_run("a").results[0].samples == Store(db).load_run("a").results[0].samples
    r = osmeter("import", exported, db=other, check=2)
    assert "already stored" in r.stderr
    assert "syscall.getppid" in osmeter("show", exported, db=db, check=0).stdout


def test_list_and_sysinfo(db):
    r = osmeter("list", "--json", db=db, check=0)
    benches = {b["id"]: b for b in json.loads(r.stdout)}
    for bid in ("syscall.getpid", "fs.openclose", "ctx.pipe_pingpong", "ctx.pipe_ring",
                "ctx.pipe_chain_lifo", "ctx.pipe_self", "proc.fork.dynamic", "proc.exec.static",
                "proc.exit.static", "lat.signal", "syscall.select", "syscall.epoll"):
        assert bid in benches
        assert benches[bid]["source"] and benches[bid]["metrics"]
    assert "ctx.pipe_ring" in osmeter("list", "--suite", "lb96", db=db, check=0).stdout
    info = json.loads(osmeter("sysinfo", "--json", db=db, check=0).stdout)
    for key in ("hostname", "os", "kernel", "arch", "cpu", "memory_bytes", "libc", "core"):
        assert key in info
    assert info["core"]["compiler"]


@pytest.mark.parametrize("args, message", [
    (["run", "no.such.bench"], "unknown benchmark 'no.such.bench'"),
    (["run", "syscall.getpid", "--param", "syscall.getpid.samples=0"], "out of range"),
    (["run", "syscall.getpid", "--param", "syscall.getpid.samples=lots"], "not an integer"),
    (["run", "syscall.getpid", "--param", "syscall.getpid.colour=red"], "no parameter 'colour'"),
    (["run", "syscall.getpid", "--param", "nonsense"], "expected ID.KEY=VALUE"),
    (["run", "--suite", "nope"], "invalid choice"),
    (["show", "nope"], "no run 'nope'"),
    (["import", "/nonexistent/file.json"], "cannot read"),
])
def test_bad_input_is_one_clear_line(db, args, message):
    r = osmeter(*args, db=db)
    assert r.returncode != 0
    assert message in r.stderr
    errors = [l for l in r.stderr.splitlines() if "error" in l]
    assert len(errors) == 1, r.stderr


def test_corrupt_results_file_is_refused(db, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "osmeter.run", "schema_version": 1, "run": {"id": ')
    r = osmeter("import", bad, db=db, check=2)
    assert "not valid JSON" in r.stderr
    bad.write_text(json.dumps({"format": "something else"}))
    assert "not an osmeter results document" in osmeter("import", bad, db=db, check=2).stderr
    assert not db.exists() or Store(db).list_runs() == []


def test_unwritable_and_corrupt_database_fail_before_running(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    start = time.monotonic()
    r = osmeter("run", "syscall.getpid", "--smoke", db=blocker / "db.sqlite", check=2)
    assert "cannot create" in r.stderr and time.monotonic() - start < 20
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"garbage" * 1000)
    r = osmeter("run", "syscall.getpid", "--smoke", db=corrupt, check=2)
    assert "not an SQLite database" in r.stderr
    assert corrupt.read_bytes() == b"garbage" * 1000


def test_ctrl_c_stops_cleanly_and_keeps_the_store(db, tmp_path):
    osmeter("run", "syscall.getpid", "--smoke", "--runs", "2", "--label", "before", "--quiet",
            db=db, check=0)
    env = dict(os.environ, OSMETER_DB=str(db), PYTHONPATH=str(REPO))
    # A ring of 64 processes with long batches: plenty of children to leak if we were careless.
    p = subprocess.Popen([sys.executable, "-m", "osmeter", "run", "syscall.getppid",
                          "ctx.pipe_ring", "--param", "ctx.pipe_ring.n=64",
                          "--param", "ctx.pipe_ring.batch_ms=3000", "--runs", "3", "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # Only this run's own processes count (another osmeter may be running beside us).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if len(proctree.descendants(p.pid)) > 10:
            break
        time.sleep(0.1)
    else:
        proctree.kill_tree(p.pid)  # the front-end, its core and the core's workload
        p.communicate()
        pytest.fail("the ring never started")
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "interrupted" in err
    store = Store(db)
    runs = store.list_runs()
    assert [r["status"] for r in runs] == ["complete", "interrupted"]
    assert store.load_run("before").results[0].summary["n"] == 4
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    # no_leaks (autouse) checks processes and temporary files after this test.


def test_preset_chooses_sizes_for_named_ids(db):
    osmeter("run", "ctx.pipe_ring", "--preset", "quick", "--runs", "2", "--label", "q",
            "--quiet", "--param", "ctx.pipe_ring.batch_ms=1", db=db, check=0)
    run = Store(db).load_run("q")
    assert sorted({r.x for r in run.results}) == [2, 8, 32, 128] and not run.smoke
    osmeter("run", "syscall.getpid", "--preset", "smoke", "--runs", "2", "--label", "s",
            "--quiet", db=db, check=0)
    assert Store(db).load_run("s").smoke


def test_private_dir_of_a_killed_core_is_removed(tmp_path):
    from osmeter.running import coreproc
    left = tmp_path / "osmeter-fs.abc123"
    (left / "tree").mkdir(parents=True)
    foreign = tmp_path / "users-own-dir"
    foreign.mkdir()
    inv = coreproc.Invocation(bench="fs.crtdel", notes={"directory": [str(left), str(foreign)]})
    coreproc._remove_private_dirs(inv, {"dir": str(tmp_path)})
    assert not left.exists() and foreign.exists()    # only what osmeter made


def test_run_writes_the_report_of_the_run_it_made(db, tmp_path):
    osmeter("run", "syscall.getpid", "--smoke", "--label", "other", "--quiet", db=db, check=0)
    report = tmp_path / "r.html"
    r = osmeter("run", "ctx.pipe_self", "--smoke", "--quiet", "--report", report, db=db, check=0)
    html = report.read_text()
    assert "report: " in r.stdout and "ctx.pipe_self" in html and "syscall.getpid" not in html
    r = osmeter("run", "ctx.pipe_self", "--smoke", "--quiet", "--report", tmp_path / "no" / "r.html",
                db=db, check=2)
    assert "results stored, but the report could not be written" in r.stderr


def test_compare_of_one_run_named_twice_says_they_are_the_same_run(tmp_path):
    """Issue 44: `compare latest latest` said "needs two runs or more"."""
    from clirun import osmeter
    from osmeter.data.store import Store
    from synth import make_run
    db = tmp_path / "one.sqlite"
    with Store(db) as store:
        store.save_run(make_run("20261122-080100-0001", label="only", seed=1))
    for names in (["latest", "latest"], ["latest", "only"]):
        r = osmeter("compare", *names, db=db, check=2)
        assert r.stderr.count("\n") == 1 and "are the same run (20261122-080100-0001, only)" \
            in r.stderr and "compare needs two different runs" in r.stderr, r.stderr
    r = osmeter("compare", "only", db=db, check=2)
    assert "needs two runs or more" in r.stderr


@pytest.mark.parametrize("args, said", [
    (["compar", "a", "b"], "unknown command 'compar' (did you mean 'compare'?)"),
    (["runz"], "unknown command 'runz' (did you mean 'run' or 'runs'?)"),
    (["xyzzy"], "unknown command 'xyzzy'; see osmeter --help"),
    (["run", "--suite", "quik"], "invalid choice: 'quik' (did you mean 'quick'?)"),
    (["run", "syscall.getpdi"], "unknown benchmark 'syscall.getpdi' (did you mean "
                                "'syscall.getpid' or 'syscall.getppid'?)"),
    (["run", "sycall"], "unknown benchmark 'sycall' (did you mean 'syscall'"),
    (["list", "--suite", "mg5"], "(did you mean 'mg05'?)"),
])
def test_a_typo_of_a_command_suite_or_benchmark_gets_did_you_mean(args, said, tmp_path):
    """Issue 44: no 'did you mean' for typos."""
    from clirun import osmeter
    r = osmeter(*args, db=tmp_path / "db.sqlite", check=2)
    assert r.stderr.count("\n") == 1 and said in r.stderr, r.stderr


def _complete(script: str, words: list[str]) -> list[str]:
    """What the bash completion script offers for the command line `words` (the last one
    being completed)."""
    import shutil
    import subprocess
    if not shutil.which("bash"):
        pytest.skip("bash is not installed")
    line = " ".join("'%s'" % w for w in words)
    r = subprocess.run(["bash", "-c", script + "\nCOMP_WORDS=(%s); COMP_CWORD=%d\n"
                        "_osmeter_complete; printf '%%s\\n' \"${COMPREPLY[@]}\"\n"
                        % (line, len(words) - 1)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_completion_script_is_generated_from_the_parser(tmp_path):
    from clirun import osmeter
    script = osmeter("completion", "bash", check=0).stdout
    assert script.rstrip().endswith("complete -o default -F _osmeter_complete osmeter")
    assert _complete(script, ["osmeter", "compa"]) == ["compare"]
    assert _complete(script, ["osmeter", "run", "--su"]) == ["--suite", "--suite-file"]
    assert _complete(script, ["osmeter", "run", "--suite", "q"]) == ["quick"]
    assert _complete(script, ["osmeter", "export", "a", "--format", "git"]) == [
        "github-smaller", "github-bigger"]
    assert "syscall.getpid" in _complete(script, ["osmeter", "run", "syscall.getp"])
    assert _complete(script, ["osmeter", "history", "--ch"]) == ["--changed"]
    zsh = osmeter("completion", "zsh", check=0).stdout
    assert zsh.startswith("autoload -U +X bashcompinit && bashcompinit\n") and script in zsh


def test_help_topic_prints_a_commands_help_or_names_the_page(tmp_path):
    from clirun import osmeter
    from osmeter.commands import help as help_command
    assert osmeter("help", "compare", check=0).stdout.startswith("usage: osmeter compare")
    assert osmeter("help", check=0).stdout.startswith("usage: osmeter ")
    for topic, page in help_command.TOPICS.items():
        assert "\n%s: " % topic in "\n" + osmeter("help", topic, check=0).stdout
        assert (REPO / page.split()[0].rstrip(",")).exists(), page
    r = osmeter("help", "flgs", check=2)
    assert r.stderr.count("\n") == 1 and "(did you mean 'flags'?)" in r.stderr
