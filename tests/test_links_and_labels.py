"""Nothing lost through a link, nothing injected through a label (issue 43), through the
real command line, on real files, real signals and a real full file system (a small
tmpfs mounted here and unmounted afterwards):

* a file written through a symlink on a full disk keeps its old content; a replaced
  file keeps its mode and owner; a FIFO with no reader is an error, not a wait;
* one rule for names at every entry (run --label, a suite file's label, noise --name,
  import), and no control character reaches standard output even from an older store;
* CSV cells never start a formula; compare --md renders labels as text;
* Ctrl-C while the finished run waits to be stored is honoured and said;
* dates: days of the calendar only, the years up to 9998 with any offset under a day;
* --label names the run with one --dir;
* the smaller items: report's figures before its page, --smoke with another preset,
  show '', show without an end, compare X X, early interrupts, the history page's names.
"""
from __future__ import annotations

import csv
import ctypes
import io
import json
import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fsimages
from clirun import REPO, osmeter
from osmeter.data import exchange
from osmeter.data.store import Store
from synth import make_run
from test_bad_input import (BANNER, _kept_file, _measuring_done, fill, ids, integrity_ok,
                            mounted_or_skip, started_run)

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
FORMULA = ("=", "+", "-", "@", "\t", "\r")
ESC_LABEL = "a\x1b[31m"


def store_with(db: Path, *runs) -> Path:
    with Store(db) as st:
        for run in runs:
            st.save_run(run)
    return db


@pytest.fixture
def db(tmp_path) -> Path:
    """Two synthetic runs, 'a' and 'b', in a store of this test."""
    return store_with(tmp_path / "results.sqlite",
                      make_run("20261122-080100-0001", label="a", seed=1),
                      make_run("20261122-080200-0002", label="b", seed=2))


# ---- 1, 2: through a link on a full disk; mode and owner; a FIFO without reader ----------

@pytest.mark.root
@pytest.mark.parametrize("command", [["export", "a", "-o"], ["report", "a", "b", "-o"]])
def test_a_full_disk_behind_a_link_leaves_the_target_as_it_was(db, tmp_path, command):
    with mounted_or_skip(fsimages.mounted, "tmpfs", size_mb=1) as mnt:
        target = mnt / "target.out"
        old = b"the old content\n" * 1000
        target.write_bytes(old)
        fill(mnt)
        link = tmp_path / "link"
        link.symlink_to(target)
        r = osmeter(*command, link, db=db)
        assert "Traceback" not in r.stderr and r.returncode == 1, (r.returncode, r.stderr)
        assert "No space left on device" in r.stderr
        assert target.read_bytes() == old
        assert link.is_symlink() and sorted(os.listdir(mnt)) == ["filler", "target.out"]
        os.unlink(mnt / "filler")       # with room again, the link's target is replaced
        osmeter(*command, link, db=db, check=0)
        assert link.is_symlink() and target.read_bytes() != old and target.stat().st_size > 0


@pytest.mark.parametrize("command", [["export", "a", "-o"], ["report", "a", "b", "-o"],
                                     ["compare", "a", "b", "--csv", "-o"]])
def test_a_replaced_file_keeps_its_mode_and_owner(db, tmp_path, command):
    out = tmp_path / "out"
    out.write_text("old")
    out.chmod(0o600)
    owner = (os.getuid(), os.getgid())
    if os.geteuid() == 0:       # root can give it away: someone else's file stays theirs
        owner = (4321, 4322)
        os.chown(out, *owner)
    linked = tmp_path / "linked"
    linked.symlink_to(out)
    for path in (out, linked):
        osmeter(*command, path, db=db, check=0)
        st = os.stat(out)
        assert out.read_text() != "old" and stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
        assert (st.st_uid, st.st_gid) == owner
    assert linked.is_symlink()


def _without_chown():
    """In the child: drop root's power to give a file away (CAP_CHOWN, from the bounding
    set, so that the exec'd program has it no more)."""
    if ctypes.CDLL(None, use_errno=True).prctl(24, 0, 0, 0, 0) != 0:
        os._exit(111)


@pytest.mark.root
def test_a_file_whose_owner_cannot_be_kept_is_left_as_it_was(db, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    theirs = tmp_path / "theirs"
    theirs.write_text("theirs")
    os.chown(theirs, 4321, 4322)
    r = osmeter("export", "a", "-o", theirs, db=db, preexec_fn=_without_chown)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "belongs to user 4321, group 4322" in r.stderr
    assert theirs.read_text() == "theirs" and os.stat(theirs).st_uid == 4321
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".osmeter-")]


def test_a_fifo_without_a_reader_is_an_error_not_a_wait(db, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    r = osmeter("export", "a", "-o", fifo, db=db, timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "a FIFO that no process read within" in r.stderr and time.monotonic() - t0 < 30
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# ---- 3: one rule for names; nothing uncontrolled reaches standard output ---------------------

def _one_refusal(r, *words):
    assert "Traceback" not in r.stderr and r.returncode == 2, (r.returncode, r.stderr)
    assert "\x1b" not in r.stderr and "\x1b" not in r.stdout
    for w in words:
        assert w in r.stderr, (w, r.stderr)


def test_a_label_with_an_escape_is_refused_at_every_entry(db, tmp_path):
    before = ids(db)
    r = osmeter("run", "syscall.getpid", "--smoke", "--runs", "1", "--quiet",
                "--label", ESC_LABEL, db=db)
    _one_refusal(r, "--label contains a control character")
    assert BANNER not in r.stderr               # refused before anything ran
    suite = tmp_path / "suite.toml"
    suite.write_text('[suite]\nlabel = "a\\u001b[31m"\n[[bench]]\nid = "syscall.getpid"\n')
    _one_refusal(osmeter("run", "--suite-file", suite, "--smoke", "--runs", "1", "--quiet",
                         db=db), "control character")
    _one_refusal(osmeter("noise", "a", "b", "--name", ESC_LABEL, db=db),
                 "--name contains a control character")
    doc = exchange.run_to_document(make_run("20261122-080300-0003", label=ESC_LABEL))
    (tmp_path / "esc.json").write_text(json.dumps(doc))
    _one_refusal(osmeter("import", tmp_path / "esc.json", db=db), "control character")
    assert ids(db) == before


def test_an_escape_an_older_osmeter_stored_never_reaches_standard_output(db, tmp_path):
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE runs SET label = ? WHERE label = 'a'", ("x\x1b]0;owned\x07\x9b2J",))
    con.close()
    for args in (["runs"], ["show", "20261122-080100-0001"],
                 ["compare", "20261122-080100-0001", "b"],
                 ["compare", "20261122-080100-0001", "b", "--md"],
                 ["compare", "20261122-080100-0001", "b", "--csv"],
                 ["export", "20261122-080100-0001", "--format", "long"]):
        r = osmeter(*args, db=db)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr)
        assert not CONTROL.search(r.stdout), (args, CONTROL.search(r.stdout))
        assert "\\x1b" in r.stdout and "owned" in r.stdout, args     # shown, escaped
    r = osmeter("export", "20261122-080100-0001", db=db)   # JSON: the same label again
    assert json.loads(r.stdout)["run"]["label"] == "x\x1b]0;owned\x07\x9b2J"


# ---- 4, 5: CSV and Markdown ------------------------------------------------------------------

HOSTILE = ['=cmd|"/c calc"!A1,x', "@SUM(1+1)", "+1+2", "-2+3", '<script>alert("x")</script>',
           "[l](javascript:alert(1))", "![i](http://x/i.png)", "`code` *em* _u_ <b>&amp;"]


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def formula_cells(text: str) -> list[str]:
    """The CSV's cells a spreadsheet would run: starting with = + - @ (or a tab or carriage
    return), and not a number."""
    def number(cell):
        try:
            float(cell)
            return True
        except ValueError:
            return False
    return [c for c in _cells(text) if c.startswith(FORMULA) and not number(c)]


@pytest.fixture
def hostile_db(tmp_path) -> Path:
    return store_with(tmp_path / "hostile.sqlite", *[
        make_run("20261122-0801%02d-00%02d" % (i, i), label=label, seed=i)
        for i, label in enumerate(HOSTILE[:4] + ["plain"], start=1)])


def test_csv_cells_never_start_a_formula(hostile_db):
    runs = ids(hostile_db)
    for args in (["compare", *runs, "--csv"], ["export", *runs, "--format", "long"]):
        r = osmeter(*args, db=hostile_db, check=0)
        assert formula_cells(r.stdout) == [], (args, formula_cells(r.stdout)[:5])
        for label in HOSTILE[:4]:           # each label is there, behind its quote
            assert "'" + label in _cells(r.stdout), (args, label)


def markdown_html(text: str) -> str:
    markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py (test extra)")
    return markdown_it.MarkdownIt("commonmark").enable("table").render(text)


ALLOWED_TAGS = {"h1", "h2", "p", "ul", "li", "strong", "code", "em", "table", "thead", "tbody",
                "tr", "th", "td", "blockquote", "pre", "hr"}


def inert_html(page: str) -> list[str]:
    """What the Markdown made active: tags beyond its own few, links, images, entities."""
    bad = [t for t in re.findall(r"<\s*/?\s*([A-Za-z][A-Za-z0-9]*)", page)
           if t.lower() not in ALLOWED_TAGS]
    return bad + re.findall(r"\b(?:href|src)\s*=", page)


def test_compare_md_renders_labels_as_text(tmp_path):
    labels = HOSTILE[4:]
    db = store_with(tmp_path / "md.sqlite", *[
        make_run("20261122-0802%02d-00%02d" % (i, i), label=label, seed=i)
        for i, label in enumerate(labels, start=1)])
    r = osmeter("compare", *labels, "--md", db=db, check=0)
    page = markdown_html(r.stdout)
    assert inert_html(page) == [], inert_html(page)
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "[l](javascript:alert(1))" in page and "&lt;b&gt;&amp;amp;" in page


# ---- 6: Ctrl-C after the last repetition -----------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs /proc")
def test_ctrl_c_while_the_finished_run_waits_for_the_store_is_honoured_and_said(tmp_path):
    """The moment after measuring made to last: another writer holds the store; a
    SIGINT then ends the command at once with 130 and says so, the run kept as a file
    (as SIGTERM keeps it), never stored as complete with exit 0."""
    db = store_with(tmp_path / "results.sqlite", make_run("20261122-080100-0001", label="a"))
    before = ids(db)
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        with started_run(db, "syscall.getpid", "--smoke", "--runs", "1", "--quiet",
                         cwd=tmp_path) as p:
            holder.execute("BEGIN IMMEDIATE")
            _measuring_done(p.pid, "syscall.getpid")
            time.sleep(1.0)                     # in the wait for the write lock
            p.send_signal(signal.SIGINT)
            time.sleep(2.0)
            holder.execute("ROLLBACK")          # the store is free again
            out, err = p.communicate(timeout=60)
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
    assert "Traceback" not in err and p.returncode == 130, (p.returncode, err)
    assert "interrupted (SIGINT) before run" in err and "stored as run" not in err, err
    kept = _kept_file(next(l for l in err.splitlines() if "kept in" in l))
    assert ids(db) == before and integrity_ok(db)
    osmeter("import", kept, db=db, check=0)


# ---- 7: dates ---------------------------------------------------------------------------------

def _import_started(tmp_path, db, started: str):
    doc = exchange.run_to_document(make_run("20261122-080900-0009", label="dated"))
    doc["run"]["started"] = doc["run"]["finished"] = started
    path = tmp_path / "dated.json"
    path.write_text(json.dumps(doc))
    return osmeter("import", path, db=db)


@pytest.mark.parametrize("started", ["2026-02-31T00:00:00Z", "2025-02-29T12:00:00+01:00",
                                     "2026-04-31T08:00"])
def test_a_day_that_is_not_in_the_calendar_is_refused(db, tmp_path, started):
    r = _import_started(tmp_path, db, started)
    _one_refusal(r, "run.started", "not a date of the calendar")
    assert ids(db) == ["20261122-080100-0001", "20261122-080200-0002"]


@pytest.mark.parametrize("started,day", [("9998-12-31T23:59:59-23:59", "9999-01-01"),
                                         ("9950-06-01T00:00:00+23:59", "9950-05-31"),
                                         ("2024-02-29T23:30:00-0030", "2024-03-01")])
def test_a_late_year_and_any_offset_under_a_day_are_imported_and_found(db, tmp_path, started,
                                                                      day):
    """Found on its day in UTC by --where since/until (the same date rule)."""
    r = _import_started(tmp_path, db, started)
    assert r.returncode == 0, r.stderr
    r = osmeter("runs", "--where", "since=" + day, "--where", "until=" + day, "--json",
                db=db, check=0)
    assert [x["id"] for x in json.loads(r.stdout)] == ["20261122-080900-0009"]


# ---- 8: --label with one --dir ----------------------------------------------------------------

def test_the_label_names_the_run_with_one_dir_and_tells_several_apart(tmp_path):
    db = tmp_path / "results.sqlite"
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    common = ["fs.crtdel", "--smoke", "--runs", "1", "--quiet"]
    osmeter("run", *common, "--dir", one, "--label", "L", db=db, check=0)
    r = osmeter("show", "L", "--json", db=db, check=0)
    assert json.loads(r.stdout)["run"]["label"] == "L"
    osmeter("run", *common, "--dir", one, "--dir", two, "--label", "M", db=db, check=0)
    labels = [x["label"] for x in json.loads(osmeter("runs", "--json", db=db, check=0).stdout)]
    assert labels[0] == "L" and sorted(labels[1:]) == sorted(
        "M:dir=%s" % d for d in (one, two)), labels


# ---- 10: the smaller items --------------------------------------------------------------------

def test_a_report_whose_figures_cannot_be_written_leaves_no_page(db, tmp_path):
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("mine")
    r = osmeter("report", "a", "-o", tmp_path / "fig.html", "--figures", not_a_dir, db=db)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "fig.html").exists() and not_a_dir.read_text() == "mine"


def test_smoke_with_another_preset_is_refused(db):
    r = osmeter("run", "syscall.getpid", "--smoke", "--preset", "quick", "--runs", "1",
                "--quiet", db=db)
    _one_refusal(r, "--smoke", "--preset quick")
    osmeter("run", "syscall.getpid", "--smoke", "--preset", "smoke", "--runs", "1", "--quiet",
            db=db, check=0)


def test_show_of_an_empty_name_is_an_error(db):
    for args in (["show", ""], ["export", ""], ["compare", "", "a"]):
        _one_refusal(osmeter(*args, db=db), "an empty name names no run")


def test_show_of_a_run_without_an_end_says_so(tmp_path):
    run = make_run("20261122-080100-0001", label="a", host="h1")
    run.finished = None
    db = store_with(tmp_path / "results.sqlite", run)
    r = osmeter("show", "a", db=db, check=0)
    assert "None" not in r.stdout and "no end recorded" in r.stdout, r.stdout


def test_compare_of_one_run_named_twice_says_so(db):
    r = osmeter("compare", "latest", "latest", "--noise", "x", db=db)
    _one_refusal(r, "'latest' and 'latest' are the same run")


def _core_after_a_pause(tmp_path) -> tuple[Path, Path]:
    """A --core COMMAND that says it started (a file) and pauses 30 s before it is the core:
    one process, which subprocess kills with its caller."""
    from osmeter.running import coreproc
    started = tmp_path / "started"
    wrapper = tmp_path / "slow-core"
    wrapper.write_text("#!%s\nimport os, sys, time\nopen(%r, 'w').close()\ntime.sleep(30)\n"
                       "os.execv(%r, [%r] + sys.argv[1:])\n"
                       % (sys.executable, str(started), str(coreproc.core_path()),
                          str(coreproc.core_path())))
    wrapper.chmod(0o755)
    return wrapper, started


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_an_early_interrupt_is_one_line_whichever_signal(tmp_path, sig):
    wrapper, started = _core_after_a_pause(tmp_path)
    env = dict(os.environ, OSMETER_DB=str(tmp_path / "db.sqlite"), PYTHONPATH=str(REPO))
    p = subprocess.Popen([sys.executable, "-m", "osmeter", "run", "syscall.getpid", "--smoke",
                          "--quiet", "--core", str(wrapper)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        t0 = time.monotonic()
        while not started.exists() and time.monotonic() - t0 < 60:
            time.sleep(0.05)
        assert started.exists()
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 130 and "Traceback" not in err, (p.returncode, err)
    assert err.splitlines() == [
        "osmeter: interrupted before anything was measured; nothing stored"], err


def test_the_history_page_names_runs_without_overlap(tmp_path):
    """From 8 runs on, the names under the x axis are thinned so that none overlaps the
    next: a name in the 10-pixel font is taken 6 pixels a character wide (wider than the
    average of a sans-serif face)."""
    runs = [make_run("2026112%d-080%d00-00%02d" % (i // 10, i % 10, i), seed=i,
                     label="nightly-run-%03d" % i, started="2026-11-%02dT08:00:00+00:00" % (i + 1))
            for i in range(12)]
    db = store_with(tmp_path / "results.sqlite", *runs)
    page = tmp_path / "history.html"
    osmeter("history", *[r.id for r in runs], "-o", page, db=db, check=0)
    text = page.read_text()
    svg = text[text.index("<svg"):text.index("</svg>")]
    names = [(float(x), name) for x, name in re.findall(
        r'<text x="([\d.]+)" y="[\d.]+" font-size="10"[^>]*>(nightly-run[^<]*)</text>', svg)]
    assert len(names) >= 2, svg[:2000]
    for (x1, a), (x2, b) in zip(names, names[1:]):
        assert x2 - x1 >= 6 * (len(a) + len(b)) / 2, (a, b, x2 - x1)
