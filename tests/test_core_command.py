"""osmeter run --core COMMAND: the core run through a command (a wrapper, another network
namespace, ssh to a host whose only osmeter part is the core), with the system described
by the core there and the run marked with the command."""
from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess

import pytest

import sshhosts
from clirun import osmeter
from osmeter.running import coreproc


def run_through(tmp_path, command, *ids, check=0):
    """`osmeter run --core command ids --smoke --runs 1`; the results file, and the run."""
    out = tmp_path / "run.json"
    r = osmeter("run", "--core", command, *ids, "--smoke", "--runs", "1", "--quiet",
                "--json", out, db=tmp_path / "r.db")
    assert r.returncode == check, r.stderr
    doc = json.loads(out.read_text())
    return dict(doc["run"], results=doc["results"]), r


def test_ssh_words_are_quoted_for_the_remote_shell_and_others_are_not():
    with coreproc.through("ssh -p 2222 root@127.0.0.1 /opt/osmeter/osmeter-core"):
        assert coreproc.core_args(["run", "fs.crtdel", "dir=/a b"])[-3:] == [
            "run", "fs.crtdel", "'dir=/a b'"]
        assert coreproc.core_command() == "ssh -p 2222 root@127.0.0.1 /opt/osmeter/osmeter-core"
    with coreproc.through("env X=1 /bin/true"):
        assert coreproc.core_args(["run", "dir=/a b"]) == ["env", "X=1", "/bin/true", "run",
                                                           "dir=/a b"]
    assert coreproc.core_command() is None      # outside the block: the local core


def test_every_core_command_goes_through_the_wrapper(tmp_path):
    """A wrapper that logs what it is asked and then runs the core: the catalogue, the
    checks, the system description and the measurement all came through it."""
    log = tmp_path / "calls"
    wrapper = tmp_path / "wrapper"
    wrapper.write_text('#!/bin/sh\necho "$1" >> %s\nexec env OSMETER_VIA=wrapper %s "$@"\n'
                       % (shlex.quote(str(log)), shlex.quote(str(coreproc.core_path()))))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    run, _ = run_through(tmp_path, str(wrapper), "syscall.getpid")
    assert set(log.read_text().split()) >= {"version", "list", "check", "sysinfo", "run"}
    assert run["environment"]["core_command"] == str(wrapper)
    info = run["sysinfo"]
    assert info["gathered_by"] == "osmeter-core sysinfo through: %s" % wrapper
    assert info["kernel"]["release"] == os.uname().release
    assert info["hostname"] == os.uname().nodename
    assert info["cpu"]["threads"] == os.cpu_count() and info["memory_bytes"] > 0
    assert info["core"]["core_version"] and info["libc"]["name"]
    [result] = run["results"]
    assert result["status"] == "ok"


def test_a_local_run_is_not_marked(tmp_path):
    out = tmp_path / "local.json"
    osmeter("run", "syscall.getpid", "--smoke", "--runs", "1", "--quiet", "--json", out,
            db=tmp_path / "r.db", check=0)
    run = json.loads(out.read_text())["run"]
    assert "core_command" not in run["environment"] and "gathered_by" not in run["sysinfo"]


@pytest.mark.root
def test_through_ip_netns_exec_the_core_measures_in_that_namespace(tmp_path):
    """A namespace whose loopback is down: the system call is measured there, the UDP
    round trip cannot be (nothing listens on a loopback that is down), unlike here."""
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    ns = "osmeter-core-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        command = "ip netns exec %s %s" % (ns, coreproc.core_path())
        run, _ = run_through(tmp_path, command, "syscall.getpid", "net.udp_lat", check=1)
        status = {r["bench"]: r for r in run["results"]}
        assert status["syscall.getpid"]["status"] == "ok"
        assert status["net.udp_lat"]["status"] != "ok", status["net.udp_lat"]
        assert run["environment"]["core_command"] == command
        assert run["sysinfo"]["kernel"]["release"] == os.uname().release
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=True)
    assert ns not in sshhosts.namespaces()


@pytest.mark.root
def test_through_ssh_the_target_describes_itself(tmp_path):
    """A host reached only by ssh, with a host name of its own: the run's system is that
    host's, as its core told it."""
    try:
        with sshhosts.hosts(["coretarget"]) as (made, key):
            [host] = made
            command = ("ssh -F /dev/null -i %s -o BatchMode=yes -o StrictHostKeyChecking=no "
                       "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR root@%s %s"
                       % (key, host.address, coreproc.core_path()))
            run, _ = run_through(tmp_path, command, "syscall.getpid", "ctx.pipe_pingpong")
    except sshhosts.Unavailable as e:
        pytest.skip(str(e))
    assert run["sysinfo"]["hostname"] == "coretarget"
    assert run["environment"]["core_command"] == command
    assert {r["status"] for r in run["results"]} == {"ok"}


@pytest.mark.parametrize("command, words", [
    ("", "--core needs a command"),
    ("no-such-program-here /x", "no-such-program-here is not an executable command here"),
    ("'open", "No closing quotation"),
    ("false", "osmeter-core list (through false) failed: exit status 1"),
    ("echo", "did not answer in JSON"),
])
def test_a_command_that_cannot_run_the_core_is_one_clear_line(tmp_path, command, words):
    r = osmeter("run", "--core", command, "syscall.getpid", "--smoke", db=tmp_path / "r.db")
    assert r.returncode == 2 and words in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r.db").exists()


def test_a_netbsd_core_s_description_is_read_as_netbsd():
    """What `osmeter-core sysinfo` prints on NetBSD (sysctls, no Linux files) becomes the
    same description collect() gives on a BSD: model, memory, clock from the sysctls."""
    from osmeter.system import sysinfo
    raw = {"uname": {"sysname": "NetBSD", "nodename": "guest", "release": "11.0",
                     "version": "NetBSD 11.0 (GENERIC) #0", "machine": "amd64"},
           "ncpu_online": 2, "page_size": 4096, "phys_pages": 524288,
           "sysctl": {"hw.model": "Intel(R) Xeon(R) Processor", "hw.ncpu": 2,
                      "hw.physmem64": 2147483648, "hw.physmem": 2147483647,
                      "kern.timecounter.hardware": "clockinterrupt", "kern.maxproc": 1044,
                      "kern.maxfiles": 3404},
           "files": {}, "rlimits": {"RLIMIT_NOFILE": [1024, 3404], "RLIMIT_AS": [None, None]}}
    build = {"core_version": "0.1.0", "libc": {"name": "NetBSD libc", "version": "11.0"}}
    info = sysinfo.from_core(raw, build, "ssh -p 2222 root@127.0.0.1 /opt/osmeter/osmeter-core")
    assert info["os"] == {"name": "NetBSD 11.0", "id": "netbsd", "version": "11.0"}
    assert info["kernel"]["name"] == "NetBSD" and info["arch"] == "amd64"
    assert info["cpu"] == {"threads": 2, "model": "Intel(R) Xeon(R) Processor"}
    assert info["memory_bytes"] == 2147483648           # physmem64, not the 32-bit physmem
    assert info["clocksource"] == "clockinterrupt" and info["hostname"] == "guest"
    assert info["limits"]["kern.maxproc"] == "1044" and info["limits"]["RLIMIT_NOFILE"] == [
        1024, 3404]
    assert info["limits"]["RLIMIT_AS"] == [None, None]      # unlimited
    assert info["libc"]["name"] == "NetBSD libc" and info["core"] is build
