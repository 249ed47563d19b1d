"""Every command's output fits a 100-column terminal: COLUMNS is honoured everywhere (and
a pipe gets 100 columns), wide tables are folded or wrapped as `run`'s is."""
import pytest

from clirun import osmeter

WIDTH = 100
BENCHES = ["syscall.getpid", "ctx.pipe_pingpong", "mem.read", "proc.fork.dynamic",
           "net.tcp_lat", "app.cpu.avi_play"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Two real smoke runs of a few benchmarks (one of which may skip)."""
    db = tmp_path_factory.mktemp("widths") / "db.sqlite"
    for label in ("first-system-with-a-long-label", "second"):
        osmeter("run", *BENCHES, "--smoke", "--runs", "3", "--label", label, db=db, check=0,
                timeout=600, env={"COLUMNS": str(WIDTH)})
    return db


COMMANDS = [
    ["list"], ["list", "--suite", "full"], ["check"], ["runs"], ["show", "latest"],
    ["sysinfo"],
    ["compare", "first-system-with-a-long-label", "second"],
    ["compare", "first-system-with-a-long-label", "second", "--all"],
    ["compare", "first-system-with-a-long-label", "second", "--references"],
    ["compare", "first-system-with-a-long-label", "second", "--study", "o90"],
    ["compare", "first-system-with-a-long-label", "second", "--fail-on-slower", "5"],
    ["noise", "first-system-with-a-long-label", "second", "--name", "both"],
    ["fleet", "--where", "label=*"],
    ["run", "syscall.getpid", "--smoke", "--runs", "2"],
    ["report", "first-system-with-a-long-label", "second", "-o", "r.html"],
    ["export", "second", "-o", "second.json"],
    ["--help"], ["run", "--help"], ["compare", "--help"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_every_command_fits_100_columns(store, args, tmp_path):
    r = osmeter(*args, db=store, timeout=600, env={"COLUMNS": str(WIDTH)}, cwd=tmp_path)
    assert r.returncode in (0, 1, 3), r.stderr
    for stream in (r.stdout, r.stderr):
        # A path is as long as it is; every other line fits.
        long = [l for l in stream.splitlines() if len(l) > WIDTH and str(store) not in l
                and str(tmp_path) not in l]
        assert not long, "%d lines over %d columns, the longest (%d):\n%s" % (
            len(long), WIDTH, len(max(long, key=len)), max(long, key=len))


@pytest.mark.parametrize("width", [40, 60, 100])
def test_a_wide_table_wraps_its_text_and_folds_what_cannot_fit(width):
    """Within the width, every word kept, numbers whole, the first column (the row's
    name) unbroken."""
    from osmeter.report.width import fit_table
    prose = "what this benchmark measures, said at length so that it cannot fit " * 2
    table = [["id", "median", "what it measures", "parameters"]] + [
        ["ctx.pipe_pingpong.%d" % i, "1,234.5 ns", prose, "n=1,2,4,8 size=64k warmup=2"]
        for i in range(3)]
    lines = fit_table(table, width, right={1})
    assert max(len(l) for l in lines) <= width, "\n".join(lines)
    text = " ".join(" ".join(lines).split())
    for word in set(" ".join(" ".join(r) for r in table).split()):
        assert word in text, word
    for i in range(3):
        assert any(l.startswith("ctx.pipe_pingpong.%d" % i) for l in lines)
    assert sum("1,234.5 ns" in l for l in lines) == 3
