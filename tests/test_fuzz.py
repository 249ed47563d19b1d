"""Fuzzing the two servers that read from the network, on the sanitizer build of the core
(AddressSanitizer + UndefinedBehaviorSanitizer, `make -C core sanitize`): the far end of
the network benchmarks (`serve`), before and after authentication (this test knows the
secret), and the HTTP server (`httpd`).

What is sent, from a fixed seed: framing faults (partial lines, overlong lines, missing or
bare line ends, NUL and other bytes), numbers (huge, negative, signed, empty, suffixed,
too many or too few), commands out of order, valid requests that open data connections,
and connections dropped at any point (closed or reset).  Any sanitizer report, any
connection process that dies of a signal, a connection that is neither answered nor
closed in time, or a server that stops serving fails the test.

The default run is small (seconds).  `--long` (CI) sends at least 10,000 peer messages
and 10,000 HTTP requests and prints the counts.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import random
import re
import signal
import socket
import subprocess
import time

import pytest

import sanitizer
from fuzzing import mangle, number, reset, send_in_pieces
from osmeter.running import coreproc
from test_http import MECHS, content

SEED = 20
SECRET = "fuzz-secret-%d" % os.getpid()
SHORT = {"peer": 500, "http": 1500}
LONG = {"peer": 10_000, "http": 10_000}
TIMEOUT = 10.0  # a connection must be answered or closed within this


# ---- mangling ---------------------------------------------------------------------------

def read_until_closed(sock: socket.socket, timeout: float = TIMEOUT) -> bytes:
    """Everything until the server closes; fails if it neither answers nor closes."""
    sock.settimeout(timeout)
    data = b""
    deadline = time.monotonic() + timeout
    try:
        while chunk := sock.recv(65536):
            data += chunk
            assert time.monotonic() < deadline, "connection neither closed nor quiet"
    except ConnectionResetError:
        pass
    except socket.timeout:
        pytest.fail("the server neither answered nor closed within %.0f s (after %r)"
                    % (timeout, data[-200:]))
    return data


def check_log(path) -> None:
    text = open(path, errors="replace").read()
    assert not sanitizer.reports(text), text[-6000:]
    assert "died of signal" not in text, text[-6000:]


def report(capsys, what: str) -> None:
    with capsys.disabled():
        print("\n" + what)


# ---- the peer ---------------------------------------------------------------------------

ARITY = {"TCP_SINK": 3, "TCP_ECHO": 1, "TCP_ACCEPT": 0, "UDP_SINK": 2, "UDP_ECHO": 1}
OTHER_WORDS = ["QUIT", "SYNC", "END", "AUTH", "BUSY", "OK", "tcp_echo", "TCP_ECHOX", "TCP",
               "", "RUN", "OSMETER-PEER"]


class PeerFuzzer:
    def __init__(self, port: int, rnd: random.Random):
        self.port, self.rnd = port, rnd
        self.before_auth = 0   # messages sent on connections that had not authenticated
        self.after_auth = 0    # requests sent in authenticated sessions
        self.data_paths = 0    # data connections or datagrams driven after a PORT
        self.silent: list[socket.socket] = []

    @property
    def messages(self) -> int:
        return self.before_auth + self.after_auth

    def connect(self) -> tuple[socket.socket, str]:
        """A connection and its challenge; waits while the last session is ending."""
        deadline = time.monotonic() + 15
        while True:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT)
            line = readline(s)
            if line.startswith("OSMETER-PEER 1 CHALLENGE "):
                return s, line
            s.close()
            assert line.startswith("BUSY ") and time.monotonic() < deadline, line
            time.sleep(0.02)

    def auth_line(self, challenge: str, secret: str = SECRET) -> bytes:
        sn, cn = challenge.split()[-1], os.urandom(16).hex()
        mac = hmac.new(secret.encode(), ("osmeter-peer-1 client %s %s" % (sn, cn)).encode(),
                       hashlib.sha256).hexdigest()
        return ("AUTH %s %s\n" % (cn, mac)).encode()

    def one(self) -> None:
        rnd = self.rnd
        if rnd.random() < 0.04:  # a silent connection held while others come and go
            s = socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT)
            self.silent.append(s)
            if len(self.silent) > 20:
                self.silent.pop(0).close()
        s, challenge = self.connect()
        try:
            if rnd.random() < 0.4:
                self.unauthenticated(s, challenge)
            else:
                self.session(s, challenge)
        finally:
            s.close()

    def unauthenticated(self, s: socket.socket, challenge: str) -> None:
        rnd = self.rnd
        good = self.auth_line(challenge)
        data = rnd.choice([
            mangle(rnd, good, rnd.randint(1, 4)),                       # AUTH, mangled
            self.auth_line(challenge, secret="not-the-secret"),
            good.replace(b"\n", b"\r\n"), good[:-1], good[:50],         # framing
            good[:40] + b"\x00" + good[41:],
            bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 600))),
            b"A" * rnd.randint(250, 5000) + b"\n",
            self.request(), b"\n", b"QUIT\n", b"SYNC\n"])               # out of order
        if not data:
            reset(s) if rnd.random() < 0.5 else None
            return
        self.before_auth += 1
        try:
            send_in_pieces(rnd, s, data)
        except OSError:
            return  # the server refused a first piece and closed
        if data.startswith(good):  # the mangling left it valid: a session, not this case
            return
        if rnd.random() < 0.15:  # gone before the answer
            reset(s)
        elif data.endswith(b"\n"):
            answer = read_until_closed(s)
            assert not answer.startswith(b"OK "), (data, answer)  # never without the secret
        # else: a partial line left waiting; closing it is the drop

    def session(self, s: socket.socket, challenge: str) -> None:
        rnd = self.rnd
        send_in_pieces(rnd, s, self.auth_line(challenge))
        self.before_auth += 1
        reply = readline(s)
        if reply.startswith("BUSY "):  # a session that was still ending took the slot
            return
        assert reply.startswith("OK "), reply
        for _ in range(rnd.randint(1, 6)):
            data = self.request()
            try:
                send_in_pieces(rnd, s, data)
            except OSError:
                return  # the server ended the session on an earlier request
            self.after_auth += 1
            if not data.endswith(b"\n") or rnd.random() < 0.05:
                return reset(s) if rnd.random() < 0.5 else None  # dropped mid-line
            line = readline(s)
            if line.startswith("PORT "):
                line = self.data_path(s, data, line)
                if line is None:
                    return  # the client dropped the connection in the middle
            if not line.startswith("OK ") or data.startswith(b"QUIT"):
                read_until_closed(s)
                return

    def request(self) -> bytes:
        rnd = self.rnd
        if rnd.random() < 0.35:  # a valid request, small enough to run through
            name = rnd.choice(list(ARITY))
            args = {"TCP_SINK": [rnd.randint(1, 4096), rnd.randint(1, 65536), rnd.randint(1, 3)],
                    "TCP_ECHO": [rnd.randint(1, 4096)], "TCP_ACCEPT": [],
                    "UDP_SINK": [rnd.randint(1, 1400), rnd.randint(1, 5)],
                    "UDP_ECHO": [rnd.randint(1, 1400)]}[name]
            line = " ".join([name] + [str(a) for a in args]) + "\n"
            return line.encode()
        name = rnd.choice(list(ARITY) + OTHER_WORDS)
        count = max(0, ARITY.get(name, 0) + rnd.choice([0, 0, 0, -1, 1, 2, rnd.randint(3, 60)]))
        line = (" ".join([name] + [number(rnd) for _ in range(count)]) + "\n").encode()
        return mangle(rnd, line, rnd.randint(0, 3)) if rnd.random() < 0.5 else line

    def data_path(self, s: socket.socket, sent: bytes, port_line: str) -> str | None:
        """Drive the endpoint the server opened; its final line, or None when this
        client dropped the connection instead."""
        rnd = self.rnd
        self.data_paths += 1
        name = sent.split(b" ")[0].split(b"\n")[0].decode("latin-1")
        args = [int(a) for a in re.findall(rb"[-+]?\d+", sent[len(name):])]
        port = int(port_line.split()[1])
        drop = rnd.random() < 0.1
        if name.startswith("UDP"):
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.settimeout(2)
            size = min(args[0], 65507) if args else 1
            try:
                for _ in range(min(args[1], 3) if name == "UDP_SINK" and len(args) > 1 else 1):
                    u.sendto(b"u" * size, ("127.0.0.1", port))
                    if name == "UDP_ECHO":
                        u.recv(65536)
                if drop:
                    reset(s)
                    return None
                u.sendto(b"", ("127.0.0.1", port))  # the end marker
            except OSError:  # no echo in time, or a datagram too large to send
                u.sendto(b"", ("127.0.0.1", port))
            finally:
                u.close()
            return readline(s)
        # More than one line sent (a mangled line end): the server sees words on the
        # control connection while data should flow, takes that as a broken protocol
        # and closes the data port, so a refused or reset data connection is its answer.
        pipelined = b"\n" in sent[:-1]
        try:
            d = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
            try:
                return self.tcp_data_path(s, d, name, args, port, drop)
            finally:
                d.close()
        except (ConnectionRefusedError, ConnectionResetError, BrokenPipeError):
            if not pipelined:
                raise
            return readline(s)

    def tcp_data_path(self, s, d, name, args, port, drop) -> str | None:
        rnd = self.rnd
        if drop:
            reset(d)
            reset(s)
            return None
        if name == "TCP_ECHO" and args:
            for _ in range(rnd.randint(0, 3)):
                d.sendall(b"e" * args[0])
                got = b""
                while len(got) < args[0]:
                    got += d.recv(args[0] - len(got)) or pytest.fail("echo cut short")
        elif name == "TCP_SINK" and len(args) == 3:
            buf, total, count = args
            if total * count > 1 << 18 or rnd.random() < 0.2:
                d.sendall(b"s" * min(total, 1000))  # then gone: the transfer fails
            else:
                for _ in range(count):
                    d.sendall(b"s" * total)
                    assert d.recv(1) == b"a"
        elif name == "TCP_ACCEPT":
            d.close()
            for _ in range(rnd.randint(0, 3)):
                socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT).close()
            for word in rnd.choice([[b"SYNC\n", b"END\n"], [b"END\n"],
                                    [b"SYNC\n", b"SYNC\n", b"END\n"], [b"SYNX\n"],
                                    [b"SYNC"], [b"\x00END\n"]]):
                s.sendall(word)
                self.after_auth += 1
                if not word.endswith(b"\n"):
                    return None  # a partial line, then gone
                line = readline(s)
                if not line.startswith("OK ") or word == b"END\n":
                    return line
            return line
        d.close()
        return readline(s)


def readline(sock: socket.socket, timeout: float = TIMEOUT) -> str:
    sock.settimeout(timeout)
    buf = b""
    try:
        while not buf.endswith(b"\n"):
            c = sock.recv(1)
            if not c:
                return buf.decode("latin-1") + "<EOF>"
            buf += c
    except ConnectionResetError:
        return buf.decode("latin-1") + "<RESET>"
    except socket.timeout:
        pytest.fail("no line from the peer within %.0f s (got %r)" % (timeout, buf))
    return buf.decode("latin-1").rstrip("\n")


def fuzz_peer(sanitized_core, tmp_path, capsys, messages: int) -> None:
    log_path = tmp_path / "serve.log"
    log = open(log_path, "w")
    proc = subprocess.Popen([str(sanitized_core), "serve", "--listen", "127.0.0.1:0",
                             "--max-seconds", "30"], stdout=subprocess.PIPE, stderr=log,
                            text=True, env=dict(os.environ, OSMETER_PEER_SECRET=SECRET,
                                                **sanitizer.ENV))
    try:
        port = json.loads(proc.stdout.readline())["port"]
        fuzzer = PeerFuzzer(port, random.Random(SEED))
        t0 = time.monotonic()
        while fuzzer.messages < messages:
            fuzzer.one()
            assert proc.poll() is None, "the peer stopped"
        for s in fuzzer.silent:
            s.close()
        elapsed = time.monotonic() - t0
        fuzzer.connect()[0].close()  # the last session has ended
        inv = coreproc.invoke("net.tcp_lat", params={"peer": "127.0.0.1:%d" % port},
                          preset="smoke", env={"OSMETER_PEER_SECRET": SECRET}, timeout=60)
        assert inv.status == "ok", (inv.reason, inv.stderr)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=30)
        proc.stdout.close()
        log.close()
    check_log(log_path)
    assert rc == 0
    report(capsys, "peer fuzz (seed %d): %d messages, %d before and %d after authentication,"
           " %d data paths, %.1f s" % (SEED, fuzzer.messages, fuzzer.before_auth,
                                       fuzzer.after_auth, fuzzer.data_paths, elapsed))


def test_fuzz_peer(sanitized_core, tmp_path, capsys):
    fuzz_peer(sanitized_core, tmp_path, capsys, SHORT["peer"])


@pytest.mark.long
def test_fuzz_peer_long(sanitized_core, tmp_path, capsys):
    fuzz_peer(sanitized_core, tmp_path, capsys, LONG["peer"])


# ---- the HTTP server --------------------------------------------------------------------

def http_get(path: str, extra: str = "") -> bytes:
    return ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n" % (path, extra)).encode()


def http_request(rnd: random.Random) -> bytes:
    """One request, valid or broken in one of the ways a server must survive."""
    seeds = [http_get("/file-100"), http_get("/file-65536"), b"HEAD /file-100 HTTP/1.0\r\n\r\n",
             b"GET /file-100 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", http_get("/%2e%2e/x"),
             b"GET / HTTP/1.1\nHost:\n\n", b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
             http_get("/file-100", "Connection: close\r\n")]
    req = rnd.choice(seeds)
    form = rnd.random()
    if form < 0.3:
        return req
    if form < 0.6:
        return mangle(rnd, req, rnd.randint(1, 6))
    head, _, _ = req.partition(b"\r\n\r\n")
    extra = rnd.choice([
        b"Content-Length: " + number(rnd).encode(), b"Transfer-Encoding: chunked",
        b"Content-Length: 5\r\nContent-Length: 6", b"Host: a",
        b"".join(b"X-%d: %d\r\n" % (i, i) for i in range(rnd.randint(50, 150))).rstrip(),
        b"X-Long: " + b"v" * rnd.randint(1000, 12000), b" folded", b"X-Nul: a\x00b",
        b"Bad Header: x", b": empty", b"X-Cr: a\rb", b"Connection: close, keep-alive",
        b"Connection: " + b"keep-alive, " * 50])
    tail = rnd.choice([b"\r\n\r\n", b"\n\n", b"\r\n", b"", b"\r\n\r\n\r\n", b"\r\r\n\r\n"])
    body = rnd.choice([b"", b"", b"abcde", b"0\r\n\r\n"])
    blank = rnd.choice([b"", b"", b"\r\n", b"\n\n"])
    return blank + head + b"\r\n" + extra + tail + body


def fuzz_http(sanitized_core, tmp_path, capsys, requests: int) -> None:
    rnd = random.Random(SEED)
    counts = {"requests": 0, "connections": 0, "answered": 0, "dropped": 0}
    t0 = time.monotonic()
    for m, mech in enumerate(MECHS):
        log_path = tmp_path / ("httpd-%s.log" % mech)
        log = open(log_path, "w")
        proc = subprocess.Popen([str(sanitized_core), "httpd", "port=0", "mech=" + mech,
                                 "files=100,64k", "max_request=16k", "request_timeout=3",
                                 "idle_timeout=3"], stdout=subprocess.PIPE, stderr=log,
                                text=True, start_new_session=True,
                                env=dict(os.environ, **sanitizer.ENV))
        try:
            info = json.loads(proc.stdout.readline())
            share = requests * (m + 1) // len(MECHS)
            while counts["requests"] < share:
                fuzz_http_connection(rnd, info["port"], counts)
                assert proc.poll() is None, "httpd (%s) stopped" % mech
            with socket.create_connection(("127.0.0.1", info["port"]), timeout=5) as s:
                s.sendall(http_get("/file-100", "Connection: close\r\n"))
                assert read_until_closed(s).endswith(content(100)), "it stopped serving"
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
            rc = proc.wait(timeout=30)
            proc.stdout.close()
            log.close()
        check_log(log_path)
        assert rc == -signal.SIGTERM, rc
        assert not os.path.exists(info["dir"])
    assert counts["answered"] > counts["connections"] // 4, counts
    report(capsys, "HTTP fuzz (seed %d, %s): %d requests on %d connections, %d answered, "
           "%d dropped by the client, %.1f s" % (SEED, "/".join(MECHS), counts["requests"],
                                                 counts["connections"], counts["answered"],
                                                 counts["dropped"], time.monotonic() - t0))


def fuzz_http_connection(rnd: random.Random, port: int, counts: dict) -> None:
    n = rnd.choice([1, 1, 1, 2, 3, rnd.randint(4, 40)])  # several: pipelined
    data = b"".join(http_request(rnd) for _ in range(n))
    counts["requests"] += n
    counts["connections"] += 1
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
        try:
            send_in_pieces(rnd, s, data)
        except (BrokenPipeError, ConnectionResetError):
            return  # refused before it was all sent (a 4xx that closed)
        end = rnd.random()
        if end < 0.1:  # gone without reading anything
            counts["dropped"] += 1
            return reset(s) if end < 0.05 else None
        if end < 0.2:  # reads a little, then resets
            counts["dropped"] += 1
            s.settimeout(TIMEOUT)
            try:
                s.recv(100)
            except (ConnectionResetError, socket.timeout):
                pass
            return reset(s)
        s.shutdown(socket.SHUT_WR)
        counts["answered"] += read_until_closed(s).startswith(b"HTTP/1.1 ")


def test_fuzz_http(sanitized_core, tmp_path, capsys):
    fuzz_http(sanitized_core, tmp_path, capsys, SHORT["http"])


@pytest.mark.long
def test_fuzz_http_long(sanitized_core, tmp_path, capsys):
    fuzz_http(sanitized_core, tmp_path, capsys, LONG["http"])
