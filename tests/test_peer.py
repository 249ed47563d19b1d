"""The far end (`osmeter-core serve`, `osmeter serve`): authentication, bad clients,
limits, and that it keeps serving.  The protocol is spoken here from Python (hmac,
hashlib), which also checks the core's own SHA-256/HMAC against an independent one."""
from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

import proctree
import sanitizer
from osmeter.running import coreproc

SECRET = "peer-test-secret-%d" % os.getpid()
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start(*extra: str, secret: str | None = SECRET, binary=None,
          stderr=subprocess.PIPE) -> tuple[subprocess.Popen, int]:
    env = dict(os.environ, **sanitizer.ENV)
    env.pop("OSMETER_PEER_SECRET", None)
    if secret is not None:
        env["OSMETER_PEER_SECRET"] = secret
    proc = subprocess.Popen([str(binary or coreproc.core_path()), "serve", "--listen",
                             "127.0.0.1:0", *extra], stdout=subprocess.PIPE, stderr=stderr,
                            text=True, env=env)
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=10)
        return proc, 0
    return proc, json.loads(line)["port"]


@pytest.fixture
def server():
    """A running `osmeter-core serve`; stopped with SIGINT (must exit 0) afterwards."""
    procs = []

    def make(*extra):
        proc, port = start(*extra)
        assert port, proc.stderr.read()
        procs.append(proc)
        return proc, port
    yield make
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=10) == 0, proc.stderr.read()


def readline(sock: socket.socket, timeout: float = 5.0) -> str:
    sock.settimeout(timeout)
    buf = b""
    while not buf.endswith(b"\n"):
        c = sock.recv(1)
        if not c:
            return buf.decode() + "<EOF>"
        buf += c
    return buf.decode().rstrip("\n")


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def authenticate(sock: socket.socket, secret: str = SECRET, challenge: str | None = None) -> str:
    line = challenge or readline(sock)
    assert line.startswith("OSMETER-PEER 1 CHALLENGE "), line
    sn, cn = line.split()[-1], os.urandom(16).hex()
    mac = hmac.new(secret.encode(), ("osmeter-peer-1 client %s %s" % (sn, cn)).encode(),
                   hashlib.sha256).hexdigest()
    sock.sendall(("AUTH %s %s\n" % (cn, mac)).encode())
    reply = readline(sock)
    if reply.startswith("OK "):  # the server proves it knows the secret too
        proof = hmac.new(secret.encode(), ("osmeter-peer-1 server %s %s" % (sn, cn)).encode(),
                         hashlib.sha256).hexdigest()
        assert reply == "OK " + proof
    return reply


def closed(sock: socket.socket) -> bool:
    sock.settimeout(5)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True


def still_serves(port: int) -> None:
    """A real benchmark against the server works.  The server serves one client at a time
    and may still be ending the last one's session (a vanished client's or a killed
    benchmark's, until a read or the time limit tells it): as the message says, try again
    when it ends.  A session that ends by QUIT or a refused request frees its slot before
    it answers (test_a_session_right_after_the_last_one_quit_is_not_told_busy)."""
    deadline = time.monotonic() + 10
    while True:
        inv = coreproc.invoke("net.tcp_lat", params={"peer": "127.0.0.1:%d" % port},
                              preset="smoke", env={"OSMETER_PEER_SECRET": SECRET}, timeout=60)
        if "peer is busy" not in (inv.reason or "") or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert inv.status == "ok", (inv.reason, inv.stderr)
    assert inv.notes["far_end"] == "peer 127.0.0.1:%d" % port


def test_sha256_and_hmac_pass_the_fips_and_rfc4231_vectors():
    out = subprocess.run([str(coreproc.core_path()), "serve", "--self-test"], capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0 and json.loads(out.stdout)["status"] == "ok"
    assert out.stderr.count(": ok") == 7 and "FAILED" not in out.stderr


def test_refuses_to_start_without_a_secret():
    for secret in (None, "", "short"):
        proc, port = start(secret=secret)
        assert proc.wait(timeout=10) == 2 and port == 0
        assert "OSMETER_PEER_SECRET" in proc.stderr.read()


def test_bad_arguments_are_one_clear_line():
    proc, port = start("--listen", "nonsense:99999")
    assert proc.wait(timeout=10) == 2 and "cannot parse --listen" in proc.stderr.read()


def test_right_secret_authenticates_and_serves(server):
    _, port = server()
    with connect(port) as s:
        assert authenticate(s).startswith("OK ")
        s.sendall(b"QUIT\n")
        assert readline(s) == "OK bye"
    still_serves(port)


def test_a_session_right_after_the_last_one_quit_is_not_told_busy():
    # the session frees its slot before it answers "OK bye", not when the listener reaps
    # its process, so a client that connects again at once is served every time (freed at
    # the reaping, 300 such sessions were told busy in 9 of 10 tries on one CPU)
    proc, port = start(stderr=subprocess.DEVNULL)  # their log would fill an unread pipe
    try:
        for _ in range(int(os.environ.get("OSMETER_TEST_SESSIONS", 500))):
            with connect(port) as s:
                assert authenticate(s).startswith("OK ")
                s.sendall(b"QUIT\n")
                assert readline(s) == "OK bye"
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0


def test_wrong_secret_is_refused_and_server_goes_on(server):
    _, port = server()
    with connect(port) as s:
        assert authenticate(s, secret="not-the-secret") == "ERR authentication failed"
        assert closed(s)
    inv = coreproc.invoke("net.udp_lat", params={"peer": "127.0.0.1:%d" % port}, preset="smoke",
                          env={"OSMETER_PEER_SECRET": "also-wrong"})
    assert inv.status == "failed" and "authentication failed" in inv.reason
    still_serves(port)


@pytest.mark.parametrize("garbage", [
    b"\x00\xff" * 200,                      # binary, no newline, longer than a line
    b"GET / HTTP/1.0\r\n\r\n",              # someone else's protocol
    b"AUTH zz " + b"0" * 64 + b"\n",        # the right shape, not hex
    b"\n",
])
def test_garbage_before_authentication_is_dropped(server, garbage):
    _, port = server()
    with connect(port) as s:
        assert readline(s).startswith("OSMETER-PEER 1 CHALLENGE")
        s.sendall(garbage)
        assert closed(s)
    still_serves(port)


@pytest.mark.parametrize("request_line,answer", [
    (b"RUN /bin/sh\n", "ERR unknown request"),          # nothing a client names is run
    (b"TCP_SINK abc 1 1\n", "ERR TCP_SINK wants"),
    (b"TCP_SINK 1 1 1 1\n", "ERR TCP_SINK wants"),
    (b"UDP_SINK 70000 10\n", "ERR UDP_SINK wants"),
    (b"TCP_ECHO -5\n", "ERR TCP_ECHO wants"),
    (b"TCP_SINK 64k 1 1\n", "ERR TCP_SINK wants"),      # no suffixes on the wire
])
def test_malformed_request_after_authentication(server, request_line, answer):
    _, port = server()
    refused_after_authentication(port, request_line, answer)


def refused_after_authentication(port: int, request_line: bytes, answer: str) -> None:
    """The request is answered with `answer`, the session ends, the server goes on."""
    with connect(port) as s:
        assert authenticate(s).startswith("OK ")
        s.sendall(request_line)
        assert readline(s).startswith(answer)
        assert closed(s)
    still_serves(port)


def test_client_vanishing_mid_transfer(server):
    _, port = server()
    with connect(port) as s:
        assert authenticate(s).startswith("OK ")
        s.sendall(b"TCP_SINK 65536 104857600 1\n")
        reply = readline(s)
        assert reply.startswith("PORT ")
        data = socket.create_connection(("127.0.0.1", int(reply.split()[1])), timeout=5)
        data.sendall(b"x" * (1 << 20))
        data.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        data.close()  # reset in the middle of a 100 MB transfer
    still_serves(port)


def test_benchmark_killed_mid_transfer(server):
    _, port = server()
    proc = subprocess.Popen([str(coreproc.core_path()), "run", "net.tcp_bw",
                             "peer=127.0.0.1:%d" % port, "total=1g", "samples=2"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, OSMETER_PEER_SECRET=SECRET))
    assert b"header" in proc.stdout.readline()
    time.sleep(0.3)  # 3 GB to move: well inside the transfer
    assert proc.poll() is None
    proc.kill()
    proc.wait()
    proc.stdout.close()
    still_serves(port)


def test_words_on_the_control_connection_before_the_data_connection_end_the_request(server):
    """The control connection is silent while data flows: a second line sent with the
    request closes the data port at once, and the answer says so (not "within 10 s")."""
    _, port = server()
    with connect(port) as s:
        assert authenticate(s).startswith("OK ")
        s.sendall(b"TCP_ECHO 64\nSYNC\n")
        assert readline(s).startswith("PORT ")
        assert readline(s) == ("ERR no data connection: the client closed the control "
                               "connection or sent on it first")
    still_serves(port)


@pytest.mark.parametrize("request_line", [b"TCP_ECHO 64\n", b"TCP_SINK 1 1 1\n",
                                          b"UDP_SINK 64 10\n"])
def test_client_gone_before_its_data_connection_frees_the_session(server, request_line):
    """The far end waits for the data connection or first datagram, but not for a
    client that has closed its control connection meanwhile."""
    _, port = server()
    with connect(port) as s:
        assert authenticate(s).startswith("OK ")
        s.sendall(request_line)
        assert readline(s).startswith("PORT ")
    t0 = time.monotonic()
    deadline = t0 + 5
    while True:  # the session ends at once, not after the 10 s wait
        with connect(port) as probe:
            if readline(probe).startswith("OSMETER-PEER"):
                break
        assert time.monotonic() < deadline, "the session still holds the peer"
        time.sleep(0.05)
    assert time.monotonic() - t0 < 3
    still_serves(port)


def test_second_client_while_one_runs_is_told_busy(server):
    _, port = server()
    with connect(port) as first:
        assert authenticate(first).startswith("OK ")
        t0 = time.monotonic()
        with connect(port) as second:
            line = readline(second)
            assert line.startswith("BUSY ") and "one client at a time" in line
            assert closed(second)
        assert time.monotonic() - t0 < 3  # an answer, not a hang
        inv = coreproc.invoke("net.tcp_bw", params={"peer": "127.0.0.1:%d" % port},
                              preset="smoke", env={"OSMETER_PEER_SECRET": SECRET})
        assert inv.status == "failed" and "busy" in inv.reason
        first.sendall(b"QUIT\n")
        assert readline(first) == "OK bye"
    time.sleep(0.5)  # the listener reaps the ended session
    still_serves(port)


def test_session_byte_limit(server):
    _, port = server("--max-bytes", "1m")
    inv = coreproc.invoke("net.tcp_bw", params={"peer": "127.0.0.1:%d" % port, "total": "3m"},
                          preset="smoke", env={"OSMETER_PEER_SECRET": SECRET})
    assert inv.status == "failed" and "byte limit" in inv.reason
    still_serves(port)


def test_a_loop_that_fails_half_way_reports_no_sample(server):
    """The far end's byte limit ends the echo after the calibration and warm-up (about 3
    ms of round trips of 2 x 1000 bytes: under 8 MB unless one takes under 1 us; here 9
    us) and while the 10000 timed batches run, whatever the machine's speed (each batch
    is at least one round trip: 20 MB in all; with 1-byte messages a loaded machine once
    finished under the limit): the benchmark fails and emits not one sample (the harness
    keeps them until every batch succeeded)."""
    _, port = server("--max-bytes", "8m")
    inv = coreproc.invoke("net.tcp_lat", params={"peer": "127.0.0.1:%d" % port,
                                                 "samples": "10000", "batch_ms": "1",
                                                 "size": "1000"},
                          preset="smoke", env={"OSMETER_PEER_SECRET": SECRET}, timeout=120)
    assert inv.status == "failed" and "round trip failed" in inv.reason, inv.reason
    assert int(inv.notes["iterations_per_batch"]) >= 1   # calibration went through
    assert not inv.samples
    still_serves(port)


def test_session_time_limit(server):
    _, port = server("--max-seconds", "1")
    with connect(port) as s:
        assert authenticate(s).startswith("OK ")
        assert readline(s, timeout=5) == "ERR session time limit (1 s) reached"
        assert closed(s)
    still_serves(port)


# ---- osmeter serve (the front-end command) ------------------------------------------------

def test_cmd_serve_registers_a_subcommand():
    from osmeter.commands import serve as cmd_serve
    parser = argparse.ArgumentParser(prog="osmeter")
    cmd_serve.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["serve", "--listen", "[::]:7000", "--secret-file", "/x"])
    assert args.func is cmd_serve.handle and args.listen == "[::]:7000"
    assert parser.parse_args(["serve"]).listen == "127.0.0.1:7227"


def _cmd_serve(*argv, env):
    script = textwrap.dedent("""
        import argparse, sys
        sys.path.insert(0, %r)
        from osmeter.commands import serve as cmd_serve
        p = argparse.ArgumentParser(prog="osmeter")
        cmd_serve.register(p.add_subparsers())
        args = p.parse_args(sys.argv[1:])
        sys.exit(args.func(args))
    """ % REPO)
    return subprocess.Popen([sys.executable, "-c", script, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_cmd_serve_needs_a_secret():
    env = dict(os.environ)
    env.pop("OSMETER_PEER_SECRET", None)
    proc = _cmd_serve("serve", "--listen", "127.0.0.1:0", env=env)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "secret" in err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cmd_serve_runs_the_core_and_stops_on_a_signal(tmp_path, sig):
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n")
    env = dict(os.environ)
    env.pop("OSMETER_PEER_SECRET", None)
    proc = _cmd_serve("serve", "--listen", "127.0.0.1:0", "--secret-file", str(secret_file),
                      env=env)
    try:
        port = json.loads(proc.stdout.readline())["port"]
        still_serves(port)  # the secret from the file reached the core
        proc.send_signal(sig)  # to the front-end only; it must stop the core
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_cmd_serve_killed_takes_its_core_with_it(tmp_path):
    """SIGKILL of `osmeter serve` leaves no core listening: the core watches the pipe the
    front-end holds (not only Linux's parent-death signal), so this holds on the BSDs too."""
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n")
    env = dict(os.environ)
    env.pop("OSMETER_PEER_SECRET", None)
    proc = _cmd_serve("serve", "--listen", "127.0.0.1:0", "--secret-file", str(secret_file),
                      env=env)
    try:
        port = json.loads(proc.stdout.readline())["port"]
        cores = proctree.descendants(proc.pid)
        assert cores, "osmeter serve started no core"
        core = min(cores)
        if os.path.exists("/proc/%d/environ" % core):   # Linux: the watch is really set up
            environ = open("/proc/%d/environ" % core, "rb").read().split(b"\0")
            fd = next(e.split(b"=", 1)[1] for e in environ if e.startswith(b"OSMETER_PARENT_FD="))
            assert os.readlink("/proc/%d/fd/%s" % (core, fd.decode())).startswith("pipe:")
        proc.kill()
        proc.wait(timeout=15)
        assert not proctree.wait_gone(pids=cores, timeout=5.0), "the core outlived its front-end"
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


# ---- hostile clients on the sanitizer build ------------------------------------------------

@pytest.fixture
def sanitized_server(sanitized_core, tmp_path):
    """`serve` of the sanitizer build, its log in a file; afterwards it must stop cleanly
    on SIGINT with no sanitizer report and no connection that died of a signal."""
    procs = []

    def make(*extra):
        log = open(tmp_path / ("serve-%d.log" % len(procs)), "w+")
        proc, port = start(*extra, binary=sanitized_core, stderr=log)
        assert port, log.read()
        procs.append((proc, log))
        return proc, port
    yield make
    for proc, log in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=30)
        proc.stdout.close()
        log.seek(0)
        text = log.read()
        log.close()
        assert not sanitizer.reports(text), text[-4000:]
        assert "died of signal" not in text, text[-4000:]
        assert rc == 0, text[-2000:]


@pytest.mark.parametrize("request_line,answer", [
    (b"TCP_ECHO 1 1 1 1\n", "ERR TCP_ECHO wants"),   # 3 numbers past a 1-number array
    (b"TCP_ECHO 64 " + b"7 " * 100 + b"\n", "ERR TCP_ECHO wants"),
    (b"UDP_ECHO 1 1 1 1 1\n", "ERR UDP_ECHO wants"),
    (b"UDP_SINK 1 1 1\n", "ERR UDP_SINK wants"),
    (b"TCP_SINK 1 1 1 1\n", "ERR TCP_SINK wants"),
    (b"TCP_ACCEPT 1\n", "ERR TCP_ACCEPT takes no arguments"),
])
def test_extra_arguments_are_refused_without_a_memory_error(sanitized_server, request_line,
                                                            answer):
    """Each endpoint parses exactly the numbers its array holds; more are refused before
    anything is written (the sanitizer build aborts on a write past the array)."""
    _, port = sanitized_server()
    refused_after_authentication(port, request_line, answer)


def test_a_silent_connection_does_not_keep_a_real_client_out(server):
    """One connection that never answers the challenge and one that keeps reconnecting
    (each just before its authentication time would run out) do not stop a benchmark."""
    _, port = server()
    silent = connect(port)
    assert readline(silent).startswith("OSMETER-PEER 1 CHALLENGE")
    again = [connect(port)]
    t0 = time.monotonic()
    still_serves(port)
    again.append(connect(port))
    still_serves(port)
    assert time.monotonic() - t0 < 20
    for s in [silent] + again:
        s.close()


def test_unauthenticated_connections_are_bounded_and_the_oldest_make_room(server):
    """More silent connections than may wait: the oldest are dropped, a real client is
    served, and a silent connection is dropped within the authentication timeout."""
    _, port = server()
    silent = []
    for _ in range(40):
        silent.append(connect(port))
        assert readline(silent[-1]).startswith("OSMETER-PEER 1 CHALLENGE")
    still_serves(port)
    for s in silent[:40 - 16]:  # each connection past the 16th dropped the oldest
        assert closed(s)
    t0 = time.monotonic()
    assert closed(silent[-1])                 # the newest waits out its 5 s, no more
    assert time.monotonic() - t0 < 7
    for s in silent:
        s.close()


def test_authenticating_while_a_session_runs_is_told_busy(server):
    """A client that connected before another one authenticated learns, once it has
    authenticated itself, that the session is taken."""
    _, port = server()
    with connect(port) as late, connect(port) as first:
        challenge = readline(late)
        assert authenticate(first).startswith("OK ")
        line = authenticate(late, challenge=challenge)
        assert line.startswith("BUSY ") and "one client at a time" in line
        assert closed(late)
        first.sendall(b"QUIT\n")
        assert readline(first) == "OK bye"
    time.sleep(0.5)
    still_serves(port)


def test_the_near_end_reports_busy_after_authentication():
    """The benchmark's side of the handshake: BUSY in answer to its AUTH is "busy", not a
    refusal blamed on the secret.  (A scripted far end: this race is hard to time.)"""
    import threading
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def far_end():
        conn, _ = listener.accept()
        with conn:
            conn.sendall(b"OSMETER-PEER 1 CHALLENGE " + b"ab" * 16 + b"\n")
            readline(conn)
            conn.sendall(b"BUSY another client's session is running\n")
    t = threading.Thread(target=far_end)
    t.start()
    try:
        inv = coreproc.invoke("net.tcp_lat", params={"peer": "127.0.0.1:%d" % port},
                          preset="smoke", env={"OSMETER_PEER_SECRET": SECRET}, timeout=60)
    finally:
        t.join(timeout=10)
        listener.close()
    assert inv.status == "failed"
    assert "peer is busy: another client" in inv.reason, inv.reason
