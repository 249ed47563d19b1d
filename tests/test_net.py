"""Network family at smoke size: on loopback, and across two network namespaces.

Checks units and plausibility only (the machine is shared); speed targets live in
bench/net_crosscheck.py.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import pytest

from osmeter.analysis import monitor
from osmeter.running import coreproc

LOCAL_ONLY = ["net.pipe_bw", "net.pipe_bw_sweep", "net.unix_bw", "net.unix_lat"]
FAR_END = ["net.udp_ttcp", "net.udp_lat", "net.tcp_bw", "net.tcp_bw_sweep", "net.tcp_lat",
           "net.tcp_connect"]
ALL_FAR_END = FAR_END + [b + ".ipv6" for b in FAR_END]
SECRET = "test-secret-%d" % os.getpid()

MAX_MBIT = 10_000_000  # 10 Tbit/s: far beyond any memory bus, so a bug, not a result


def check_plausible(inv: coreproc.Invocation) -> None:
    """Every sample has the declared unit's plausible range; sweeps cover their x values."""
    metrics = {m["name"]: m for m in inv.header["metrics"]}
    assert inv.samples, inv
    for metric, x, value in inv.samples:
        unit = metrics[metric]["unit"]
        if unit == "Mbit/s":
            assert 0 <= value < MAX_MBIT, (metric, x, value)
        elif unit == "ns":
            # a round trip or a connect costs more than a function call and, even on a
            # busy shared machine, less than a second
            assert 100 < value < 1e9, (metric, x, value)
        elif unit == "%":
            assert 0 <= value <= 100, (metric, x, value)
        else:
            pytest.fail("unexpected unit %s" % unit)
        assert (x is None) == (metrics[metric]["shape"] == "point"), (metric, x)


def is_ipv6_skip(inv: coreproc.Invocation) -> bool:
    return inv.status == "skipped" and "IPv6" in (inv.reason or "")


@pytest.mark.parametrize("bench", LOCAL_ONLY + ALL_FAR_END)
def test_every_benchmark_on_loopback(bench):
    inv = coreproc.invoke(bench, preset="smoke", timeout=120)
    if bench.endswith(".ipv6") and is_ipv6_skip(inv):
        pytest.skip(inv.reason)
    assert inv.status == "ok", (inv.status, inv.reason, inv.stderr)
    check_plausible(inv)
    # the harness's one rule: both ends on the last CPU this process may use
    assert inv.notes["placement"] == "all processes pinned to CPU %d" % max(os.sched_getaffinity(0))
    if bench not in LOCAL_ONLY:
        assert "local child" in inv.notes["far_end"]
        assert "peer" in inv.header["params"]
    else:
        assert "peer" not in inv.header["params"]  # pipes and UNIX sockets are one-host only


def test_bandwidth_is_positive_and_units_are_declared(smoke):
    inv = smoke("net.tcp_bw")
    (metric,) = inv.header["metrics"]
    assert metric["unit"] == "Mbit/s" and "10^6" in metric["help"]
    assert len(inv.values("bandwidth")) == 2 and min(inv.values("bandwidth")) > 0


def test_udp_reports_sent_received_and_loss_per_size(smoke):
    inv = smoke("net.udp_ttcp", sizes="64,1k,64k")
    # 64k is more than an IPv4 datagram can carry: sent as the largest one, and said so
    assert "65507" in inv.notes["clamped"]
    for metric in ("sent", "received", "loss"):
        assert sorted({x for m, x, _ in inv.samples if m == metric}) == [64, 1024, 65507]
    for x in (64, 1024, 65507):
        sent, received, loss = (inv.values(m, x)[0] for m in ("sent", "received", "loss"))
        assert sent > 0 and received >= 0 and 0 <= loss <= 100
        if loss == 100:
            assert received == 0


def test_sweeps_report_each_size(smoke):
    inv = smoke("net.tcp_bw_sweep", buffers="1k,16k,128k")
    assert sorted({x for _, x, _ in inv.samples}) == [1024, 16384, 131072]
    inv = smoke("net.pipe_bw_sweep", chunks="512,8k")
    assert sorted({x for _, x, _ in inv.samples}) == [512, 8192]


@pytest.mark.parametrize("pin,placement", [("none", "unpinned"), ("split", "far end on CPU")])
def test_placement_is_noted(smoke, pin, placement):
    if pin == "split" and len(os.sched_getaffinity(0)) < 2:
        inv = smoke("net.pipe_bw", expect="skipped", pin=pin)
        assert "two CPUs" in inv.reason
        return
    for bench in ("net.pipe_bw", "net.tcp_lat"):
        inv = smoke(bench, pin=pin)
        assert placement in inv.notes["placement"]


def test_latency_round_trip_carries_the_message(smoke):
    inv = smoke("net.tcp_lat", size="4k")
    assert inv.header["params"]["size"] == "4k"
    inv = coreproc.invoke("net.udp_lat", params={"size": "65508"}, preset="smoke")
    assert inv.status == "failed" and "larger than a UDP datagram" in inv.reason
    assert inv.returncode == 2


def test_bad_peer_fails_cleanly():
    inv = coreproc.invoke("net.tcp_lat", params={"peer": "host:notaport"}, preset="smoke")
    assert inv.status == "failed" and "HOST:PORT" in inv.reason and inv.returncode == 2
    env = {"OSMETER_PEER_SECRET": ""}
    inv = coreproc.invoke("net.tcp_lat", params={"peer": "127.0.0.1:9"}, preset="smoke", env=env)
    assert inv.status == "failed" and "OSMETER_PEER_SECRET" in inv.reason
    env = {"OSMETER_PEER_SECRET": SECRET}
    inv = coreproc.invoke("net.tcp_lat", params={"peer": "127.0.0.1:9"}, preset="smoke", env=env)
    assert inv.status == "failed" and "cannot reach peer" in inv.reason
    inv = coreproc.invoke("net.tcp_lat.ipv6", params={"peer": "127.0.0.1:9"}, preset="smoke",
                          env=env)
    assert inv.status == "skipped" and "no IPv6 address" in inv.reason


# ---- two hosts: network namespaces joined by a veth pair ---------------------------------

def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check,
                          timeout=20)


@pytest.fixture
def two_hosts():
    """Namespaces omc<pid> (client) and oms<pid> (server) on a veth pair, addresses in
    10.231.N.0/24 and fd00:231:N::/64 that exist only inside them; always removed."""
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    if not shutil.which("ip"):
        pytest.skip("the ip command (iproute2) is not installed")
    pid = os.getpid()
    client, server = "omc%d" % pid, "oms%d" % pid
    n = pid % 250 + 1
    made = []
    try:
        for ns in (client, server):
            r = _ip("netns", "add", ns, check=False)
            if r.returncode:
                pytest.skip("cannot create a network namespace: %s" % r.stderr.strip())
            made.append(ns)
        va, vb = "omva%d" % pid, "omvb%d" % pid
        r = _ip("link", "add", va, "netns", client, "type", "veth", "peer", "name", vb,
                "netns", server, check=False)
        if r.returncode:
            pytest.skip("cannot create a veth pair: %s" % r.stderr.strip())
        for ns, dev, host in ((client, va, 1), (server, vb, 2)):
            _ip("-n", ns, "addr", "add", "10.231.%d.%d/24" % (n, host), "dev", dev)
            _ip("-n", ns, "-6", "addr", "add", "fd00:231:%d::%d/64" % (n, host), "dev", dev,
                "nodad")
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield {"client": client, "server": server, "v4": "10.231.%d.2" % n,
               "v6": "fd00:231:%d::2" % n}
    finally:
        for ns in made:
            _ip("netns", "del", ns, check=False)
        assert not [ns for ns in made if ns in _ip("netns", "list").stdout]


def start_server(ns: str, listen: str, *extra: str) -> tuple[subprocess.Popen, int]:
    import json
    proc = subprocess.Popen(["ip", "netns", "exec", ns, str(coreproc.core_path()), "serve",
                             "--listen", listen, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, OSMETER_PEER_SECRET=SECRET))
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=10)
        pytest.fail("serve did not start: %s" % proc.stderr.read())
    return proc, json.loads(line)["port"]


def stop_server(proc: subprocess.Popen) -> None:
    proc.send_signal(2)
    try:
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def run_in(ns: str, bench: str, **params) -> coreproc.Invocation:
    args = ["ip", "netns", "exec", ns, str(coreproc.core_path()), "run", bench, "--preset=smoke"]
    args += ["%s=%s" % kv for kv in params.items()]
    out = subprocess.run(args, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, OSMETER_PEER_SECRET=SECRET))
    inv = coreproc.parse_lines(bench, out.stdout.splitlines())
    inv.returncode, inv.stderr = out.returncode, out.stderr
    return inv


def test_every_far_end_benchmark_across_two_namespaces(two_hosts):
    proc, port = start_server(two_hosts["server"], "[::]:0")  # dual stack: v4 and v6
    try:
        for bench in ALL_FAR_END:
            host = two_hosts["v6"] if bench.endswith(".ipv6") else two_hosts["v4"]
            peer = ("[%s]:%d" if ":" in host else "%s:%d") % (host, port)
            inv = run_in(two_hosts["client"], bench, peer=peer)
            assert inv.status == "ok", (bench, inv.reason, inv.stderr)
            check_plausible(inv)
            assert inv.notes["far_end"] == "peer " + peer
            assert "far end on the peer" in inv.notes["placement"]
    finally:
        stop_server(proc)


def test_peer_listening_on_ipv4_only_skips_ipv6_cleanly(two_hosts):
    proc, port = start_server(two_hosts["server"], "%s:0" % two_hosts["v4"])
    try:
        inv = run_in(two_hosts["client"], "net.tcp_lat.ipv6",
                     peer="%s:%d" % (two_hosts["v4"], port))
        assert inv.status == "skipped" and "no IPv6 address" in inv.reason
        inv = run_in(two_hosts["client"], "net.tcp_lat", peer="%s:%d" % (two_hosts["v4"], port))
        assert inv.status == "ok", inv.reason
        # the server's namespace is not reachable on loopback from the client's
        inv = run_in(two_hosts["client"], "net.tcp_lat", peer="127.0.0.1:%d" % port)
        assert inv.status == "failed" and "cannot reach peer" in inv.reason
    finally:
        stop_server(proc)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the far end is found in /proc")
@pytest.mark.parametrize("bench", ["net.udp_ttcp", "net.pipe_bw"])
def test_interrupted_run_leaves_no_far_end_behind(bench):
    """SIGTERM to the core mid-run: its far-end child goes too (no_leaks checks, since
    pytest is the subreaper that would inherit an orphan).  Mid-run is when the far end
    is alive, seen in /proc, not when a sample is read: the core writes its samples to a
    pipe in one block at the end, so a sample read meant the run was ending, and the
    signal then came during the exit's cleanup (a hang or exit 0, issue 44)."""
    proc = subprocess.Popen([str(coreproc.core_path()), "run", bench, "samples=1000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not [p for p, _, f in monitor.processes() if int(f[1]) == proc.pid]:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        proc.terminate()
        assert proc.wait(timeout=10) == -signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture
def namespace_without_ipv6():
    """A namespace whose loopback has IPv6 disabled (removed afterwards)."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        pytest.skip("network namespaces need root and iproute2")
    ns = "omn%d" % os.getpid()
    r = _ip("netns", "add", ns, check=False)
    if r.returncode:
        pytest.skip("cannot create a network namespace: %s" % r.stderr.strip())
    try:
        _ip("-n", ns, "link", "set", "lo", "up")
        for key in ("all", "default", "lo"):
            subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w",
                            "net.ipv6.conf.%s.disable_ipv6=1" % key], check=True, timeout=20)
        yield ns
    finally:
        _ip("netns", "del", ns, check=False)


def test_missing_ipv6_is_a_clean_per_benchmark_skip(namespace_without_ipv6):
    for bench in ALL_FAR_END:
        inv = run_in(namespace_without_ipv6, bench)
        if bench.endswith(".ipv6"):
            assert inv.status == "skipped" and inv.reason.startswith("no IPv6 loopback"), \
                (bench, inv.reason)
            assert inv.returncode == 0 and not inv.samples
        else:
            assert inv.status == "ok", (bench, inv.reason)
