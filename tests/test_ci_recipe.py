"""docs/ci.md works as written: the GitHub Actions workflow passes actionlint (skipped
when actionlint is not installed: `go install github.com/rhysd/actionlint/cmd/actionlint@latest`),
and every step of its benchmark job that calls osmeter runs, as its shell script, on real
runs: once as on main (the baseline kept), once as on a pull request (the gate), and the
gate step's exit codes (pass and undecided go on, a regression fails the job)."""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from osmeter.data import exchange

from clirun import REPO, osmeter
from synth import make_run

DOC = REPO / "docs" / "ci.md"
SMALL = "syscall.getpid ctx.pipe_self cpu.integer"   # instead of --suite quick: seconds


def workflow_text() -> str:
    text = DOC.read_text()
    section = text[text.index("## GitHub Actions"):text.index("## GitLab CI")]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


def workflow() -> dict:
    return yaml.safe_load(workflow_text())


def find_actionlint() -> str | None:
    for candidate in (shutil.which("actionlint"),
                      os.path.expanduser("~/go/bin/actionlint"),
                      "/var/tmp/osmeter-history/go/bin/actionlint"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.mark.skipif(find_actionlint() is None, reason="actionlint is not installed (go "
                    "install github.com/rhysd/actionlint/cmd/actionlint@latest)")
def test_the_workflow_passes_actionlint(tmp_path):
    wf = tmp_path / ".github" / "workflows" / "osmeter.yml"
    wf.parent.mkdir(parents=True)
    wf.write_text(workflow_text())
    # the runner's own label, declared as docs/ci.md says
    config = tmp_path / ".github" / "actionlint.yaml"
    config.write_text("self-hosted-runner:\n  labels: [bench]\n")
    r = subprocess.run([find_actionlint(), "-no-color", "-config-file", str(config), str(wf)],
                       capture_output=True,
                       text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_trackers_run_apart_with_their_permissions_and_one_series_per_file():
    wf = workflow()
    jobs = wf["jobs"]
    assert wf["permissions"] == {"contents": "read"}
    for name in ("bencher", "github-pages"):
        assert jobs[name]["needs"] == "bench"
        assert "github.event_name != 'pull_request'" in jobs[name]["if"]
    assert jobs["github-pages"]["permissions"]["contents"] == "write"
    gab = [s["with"] for s in jobs["github-pages"]["steps"]
           if "github-action-benchmark" in s.get("uses", "")]
    assert len(gab) == 2 and gab[0]["name"] != gab[1]["name"]
    assert {g["output-file-path"] for g in gab} == {"smaller.json", "bigger.json"}
    bencher = next(s["run"] for s in jobs["bencher"]["steps"] if "bencher run" in s.get("run", ""))
    assert "--threshold-measure latency" in bencher and "--err" in bencher
    install = " ".join(s.get("run", "") for s in jobs["bench"]["steps"])
    assert "pip\" install -q ./osmeter-src" in install


def osmeter_wrapper(bin_dir: Path) -> None:
    """`osmeter` on PATH: this checkout's osmeter, as the Install step would give."""
    bin_dir.mkdir()
    exe = bin_dir / "osmeter"
    exe.write_text('#!/bin/sh\nPYTHONPATH="%s" exec "%s" -m osmeter "$@"\n'
                   % (REPO, sys.executable))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)


def run_steps(tmp_path: Path, work: Path, event: str, only=None) -> dict:
    """Run the bench job's shell steps but the install (their `run:` scripts in bash -e, as GitHub
    runs them) for `event`; {step name: exit code}."""
    env = dict(os.environ)
    env.update(PATH="%s:%s" % (tmp_path / "bin", env["PATH"]), GITHUB_SHA="0123456789abcdef",
               RUNNER_TEMP=str(tmp_path / "runner"), GITHUB_STEP_SUMMARY=str(work / "summary"),
               GITHUB_PATH=str(work / "path"))
    (tmp_path / "runner").mkdir(exist_ok=True)
    codes = {}
    for step in workflow()["jobs"]["bench"]["steps"]:
        script, name = step.get("run"), step.get("name", "")
        if not script or name == "Install osmeter":
            continue
        cond = step.get("if", "")
        if event == "pull_request" and "!= 'pull_request'" in cond:
            continue
        if event == "push" and "== 'pull_request'" in cond:
            continue
        if only and name not in only:
            continue
        script = script.replace("--suite quick", SMALL)
        r = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=env, text=True,
                           capture_output=True, timeout=600)
        codes[name] = (r.returncode, r.stdout + r.stderr)
    return codes


def test_every_osmeter_step_runs_on_real_runs(tmp_path):
    osmeter_wrapper(tmp_path / "bin")
    main, pr = tmp_path / "main", tmp_path / "pr"
    main.mkdir()
    pr.mkdir()
    codes = run_steps(tmp_path, main, "push")
    assert {k: v[0] for k, v in codes.items()} == {
        "Run the suite": 0, "Exports for the trackers": 0,
        "Keep main's run as the baseline": 0}, codes
    for name in ("run.json", "run.bmf.json", "smaller.json", "bigger.json",
                 "baseline/run.json", "run.redacted.json"):
        assert (main / name).stat().st_size > 0, name
    # the artifact holds only redacted files: no host name, no kernel command line
    full = json.loads((main / "run.json").read_text())["run"]["sysinfo"]
    secrets = {full["hostname"], (full.get("kernel") or {}).get("cmdline")} - {None, ""}
    assert secrets
    for name in uploaded():
        assert not secrets & strings(json.loads((main / name).read_text())), name
    # the pull request: main's run restored from the cache, then the gate
    (pr / "baseline").mkdir()
    shutil.copy(main / "baseline" / "run.json", pr / "baseline" / "run.json")
    codes = run_steps(tmp_path, pr, "pull_request", only={"Run the suite", "Gate"})
    gate_rc, out = codes["Gate"]
    # two runs of the same system: a pass or undecided, never a failed job
    assert gate_rc == 0, out
    assert "gate: pass" in out or "gate undecided" in out
    assert (pr / "gate.xml").stat().st_size > 0 and "| " in (pr / "summary").read_text()


def strings(value) -> set:
    """Every string of a JSON value, keys and values."""
    if isinstance(value, dict):
        return set(value) | {s for v in value.values() for s in strings(v)}
    if isinstance(value, list):
        return {s for v in value for s in strings(v)}
    return {value} if isinstance(value, str) else set()


def uploaded() -> list[str]:
    """The files the bench job uploads as its artifact."""
    return [line.strip() for step in workflow()["jobs"]["bench"]["steps"]
            if "upload-artifact" in step.get("uses", "")
            for line in step["with"]["path"].splitlines() if line.strip()]


def test_the_gate_step_exits_2_on_a_corrupt_run_file_with_nothing_left_behind(tmp_path):
    """A fresh workspace (no comparison.md of an earlier call): osmeter's 2 is the step's."""
    osmeter_wrapper(tmp_path / "bin")
    work = tmp_path / "w"
    (work / "baseline").mkdir(parents=True)
    exchange.write_run_file(make_run("20261122-080100-0001", seed=1), work / "baseline" / "run.json")
    (work / "run.json").write_text("{not json")
    rc, out = run_steps(tmp_path, work, "pull_request", only={"Gate"})["Gate"]
    assert rc == 2 and "No such file" not in out, (rc, out)
    assert not (work / "comparison.md").exists()


def test_the_gate_step_fails_on_a_regression_and_on_bad_input(tmp_path):
    osmeter_wrapper(tmp_path / "bin")
    work = tmp_path / "w"
    (work / "baseline").mkdir(parents=True)
    exchange.write_run_file(make_run("20261122-080100-0001", seed=1), work / "baseline" / "run.json")
    exchange.write_run_file(make_run("20261122-080200-0002", seed=2, speed=0.5), work / "run.json")
    rc, out = run_steps(tmp_path, work, "pull_request", only={"Gate"})["Gate"]
    assert rc == 1, out
    (work / "run.json").write_text("{not json")
    rc, out = run_steps(tmp_path, work, "pull_request", only={"Gate"})["Gate"]
    assert rc == 2, out
