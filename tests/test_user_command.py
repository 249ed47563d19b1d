"""The user-command runner (cmd.run and `osmeter run cmd`): exit codes, timeouts that
kill the command's children, missing commands, output kept out of the measurement,
setup/cleanup, and results stored under the command's name."""
import json
import os
import sys
import time

import pytest

from clirun import osmeter
from osmeter.running import coreproc, user_command
from osmeter.running.catalog import Catalog
from osmeter.data.store import Store

PY = sys.executable


def gone(pid, timeout=5.0):
    """True once pid has exited (a zombie counts: pytest, the subreaper, may inherit it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def run_cmd(argv, expect="ok", **params):
    params = {k: str(v) for k, v in params.items()}
    inv = coreproc.invoke("cmd.run", params=dict(params, argv=json.dumps(argv)), preset="smoke",
                          timeout=60)
    assert inv.status == expect, "%s (%s)\n%s" % (inv.status, inv.reason, inv.stderr)
    return inv


def test_times_a_command_as_a_whole_process():
    inv = run_cmd(["sleep", "0.05"], samples=3)
    walls = inv.values("wall")
    assert len(walls) == 3 and all(0.05e9 <= w < 5e9 for w in walls)
    for metric in ("user", "system"):
        assert len(inv.values(metric)) == 3 and all(v >= 0 for v in inv.values(metric))
    assert all(v > 100_000 for v in inv.values("max_rss"))      # bytes, not KiB
    assert inv.header["params"]["samples"] == "3" and inv.header["params"]["warmup"] == "0"


def test_cpu_time_and_peak_memory_are_the_commands():
    burn = "import time\nb = bytearray(60 << 20)\nt = time.process_time()\n" \
           "while time.process_time() - t < 0.15: pass"
    inv = run_cmd([PY, "-c", burn], samples=2)
    cpu = [u + s for u, s in zip(inv.values("user"), inv.values("system"))]
    assert len(cpu) == 2 and all(c >= 0.14e9 for c in cpu)
    assert all(m >= 60 << 20 for m in inv.values("max_rss"))
    assert all(w >= u for w, u in zip(inv.values("wall"), inv.values("user")))


def test_non_zero_exit_is_a_failure_with_the_status_never_a_number():
    inv = run_cmd(["sh", "-c", "exit 3"], expect="failed")
    assert "exited with status 3" in inv.reason


def test_killed_by_a_signal_is_reported_as_such():
    inv = run_cmd(["sh", "-c", "kill -SEGV $$"], expect="failed")
    assert "killed by signal 11" in inv.reason


def test_missing_command_is_a_clear_error(tmp_path):
    inv = run_cmd(["osmeter-no-such-program"], expect="failed")
    assert inv.reason == "command not found: osmeter-no-such-program"
    r = osmeter("run", "cmd", "--name", "x", "--", "osmeter-no-such-program",
                db=tmp_path / "db.sqlite", check=2)
    assert r.stderr.strip() == "osmeter: error: command not found: osmeter-no-such-program"


def test_hanging_command_is_killed_with_its_children_at_the_timeout(tmp_path):
    pidfile = tmp_path / "child.pid"
    script = "sleep 300 & echo $! > %s; wait" % pidfile
    t0 = time.monotonic()
    inv = run_cmd(["sh", "-c", script], expect="failed", timeout_s=1)
    assert time.monotonic() - t0 < 20
    assert "timed out after 1 s" in inv.reason
    child = int(pidfile.read_text())
    assert gone(child), "the command's child survived the timeout"


def test_children_left_running_do_not_outlive_the_run(tmp_path):
    pidfile = tmp_path / "child.pid"
    inv = run_cmd(["sh", "-c", "sleep 300 & echo $! > %s" % pidfile], samples=1)
    assert len(inv.values("wall")) == 1
    assert gone(int(pidfile.read_text()))


def test_output_is_kept_out_of_the_measurement(tmp_path):
    # A chatty command: its output goes to /dev/null, not into the core's JSON stream.
    inv = run_cmd(["sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line $i; "
                               "echo err >&2; i=$((i+1)); done"], samples=2)
    assert len(inv.values("wall")) == 2 and "line" not in inv.stderr
    log = tmp_path / "out.log"
    run_cmd(["sh", "-c", "echo hello; echo oops >&2"], samples=2, output=str(log))
    assert log.read_text().splitlines() == ["hello", "oops"] * 2


def test_arguments_arrive_untouched_without_a_shell(tmp_path):
    out = tmp_path / "arg"
    tricky = 'a "quoted" $HOME `x` ü \\ \n*'
    run_cmd(["sh", "-c", 'printf %s "$1" > "$2"', "sh", tricky, str(out)], samples=1)
    assert out.read_text() == tricky


def test_shell_mode_runs_one_string_with_sh(tmp_path):
    out = tmp_path / "n"
    run_cmd(["echo a b c | wc -w > %s" % out], shell="yes", samples=1)
    assert out.read_text().strip() == "3"
    inv = coreproc.invoke("cmd.run", params={"argv": '["a","b"]', "shell": "yes"}, preset="smoke")
    assert inv.status == "failed" and "one string" in inv.reason


def test_setup_and_cleanup_run_around_every_run_outside_the_timing(tmp_path):
    log = tmp_path / "log"
    inv = run_cmd(["sh", "-c", "test -f %s/flag && echo run >> %s" % (tmp_path, log)],
                  samples=3, warmup=2,
                  setup="touch %s/flag; echo setup >> %s; sleep 0.2" % (tmp_path, log),
                  cleanup="rm %s/flag; echo cleanup >> %s; sleep 0.2" % (tmp_path, log))
    assert log.read_text().split() == ["setup", "run", "cleanup"] * 5
    assert all(w < 0.2e9 for w in inv.values("wall"))        # the sleeps are not timed
    inv = run_cmd(["true"], expect="failed", setup="exit 7")
    assert "setup command failed" in inv.reason and "status 7" in inv.reason


def test_bad_argv_is_a_parameter_error():
    for bad in ("ls", '["ls"', '["ls", 3]', "[]"):
        inv = coreproc.invoke("cmd.run", params={"argv": bad}, preset="smoke")
        assert inv.status == "failed" and inv.returncode == 2 and "argv" in inv.reason


def test_no_command_is_skipped_not_measured():
    inv = coreproc.invoke("cmd.run", preset="smoke")
    assert inv.status == "skipped" and "no command" in inv.reason and not inv.samples


def test_cold_cache_needs_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(user_command.CommandError, match="needs root"):
        user_command.command_item("c", ["true"], cold_cache=True)


def test_cli_stores_results_under_the_commands_name(tmp_path):
    db = tmp_path / "db.sqlite"
    r = osmeter("run", "cmd", "--name", "hello", "--runs", "2", "--samples", "2", "--quiet",
                "--label", "mine", "--", "sh", "-c", "echo hi", db=db, check=0)
    assert "cmd.hello wall" in r.stdout and "hi\n" not in r.stdout
    run = Store(db).load_run("mine")
    wall = [x for x in run.results if x.bench == "cmd.hello" and x.metric == "wall"][0]
    assert wall.summary["n"] == 4 and {s.rep for s in wall.samples} == {0, 1}
    assert json.loads(wall.params["argv"]) == ["sh", "-c", "echo hi"]
    assert wall.params["name"] == "hello"


def test_cli_refuses_incomplete_requests(tmp_path):
    db = tmp_path / "db.sqlite"
    assert "needs --name" in osmeter("run", "cmd", "--", "true", db=db, check=2).stderr
    assert "after '--'" in osmeter("run", "cmd", "--name", "x", db=db, check=2).stderr
    assert "needs the word 'cmd'" in osmeter("run", "--name", "x", "--", "true", db=db,
                                             check=2).stderr
    assert "--warmup is for your own command" in osmeter("run", "syscall.getpid", "--warmup",
                                                         "2", db=db, check=2).stderr
    assert "name 'a b'" in osmeter("run", "cmd", "--name", "a b", "--", "true", db=db,
                                   check=2).stderr


def test_repetition_timeout_covers_every_run_of_a_command():
    catalog = Catalog()
    item = user_command.command_item("t", ["true"], timeout=100, samples=4, warmup=1)
    assert user_command.repetition_timeout(catalog, [item], 900) >= 5 * 100


def test_terminating_the_core_kills_the_command_and_its_children(tmp_path):
    import signal
    import subprocess
    pidfile = tmp_path / "child.pid"
    argv = json.dumps(["sh", "-c", "sleep 300 & echo $! > %s; wait" % pidfile])
    proc = subprocess.Popen([str(coreproc.core_path()), "run", "cmd.run", "argv=" + argv,
                             "warmup=0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while not (pidfile.exists() and pidfile.read_text().strip()):
            assert time.monotonic() < deadline, "the command did not start"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGTERM
    assert gone(int(pidfile.read_text())), "the command's child outlived the core"
