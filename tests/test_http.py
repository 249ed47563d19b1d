"""HTTP family: the idle-connection curves at small N for each event mechanism, the
throughput benchmark, and the server on its own (osmeter-core httpd) under bad input:
malformed and oversized requests, path traversal, symlinks, slow, stuck and vanished
clients, the connection bound and the timeouts.  After each abuse the server must still
serve, and nothing may be left running."""
from __future__ import annotations

import json
import re
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sanitizer
from fuzzing import mangle
from osmeter.running import coreproc

LINUX = sys.platform.startswith("linux")
BSD = sys.platform.startswith(("freebsd", "netbsd", "openbsd", "dragonfly", "darwin"))
MECHS = ["poll", "select"] + (["epoll"] if LINUX else []) + (["kqueue"] if BSD else [])
PATTERN = b"0123456789abcdefghijklmnopqrstuvwxyz\n"
CURVES = [("net.http_connect", "accept"), ("net.http_connect.poll", "accept"),
          ("net.http_connect.select", "accept"), ("net.http_request", "request"),
          ("net.http_request.poll", "request"), ("net.http_request.select", "request")]


def content(size: int) -> bytes:
    return (PATTERN * (size // len(PATTERN) + 1))[:size]


# ---- the benchmarks ----------------------------------------------------------------------

@pytest.mark.parametrize("bench,metric", CURVES)
def test_curve_at_small_n(smoke, bench, metric):
    inv = smoke(bench)
    m = inv.header["metrics"][0]
    assert (m["name"], m["unit"], m["shape"]) == (metric, "ns", "scatter")
    xs = [x for mm, x, _ in inv.samples if mm == metric]
    assert xs == list(range(0, 41, 4))  # smoke: every 4th of 40 idle connections
    values = inv.values(metric)
    # A loopback round trip through two processes: microseconds, never below 1 µs here,
    # and far below a second at 40 connections.
    assert all(1_000 < v < 1e9 for v in values), values
    expected = {"poll": "poll", "select": "select"}.get(bench.rsplit(".", 1)[-1],
                                                         "epoll" if LINUX else None)
    if expected:
        assert inv.notes["mech"] == expected
    assert re.search(r"CPU \d|unpinned", inv.notes["placement"])


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback here")
@pytest.mark.parametrize("bench", ["net.http_connect", "net.http_request.poll",
                                   "net.http_throughput"])
def test_over_ipv6(smoke, bench):
    inv = smoke(bench, ip="6")
    assert inv.header["params"]["ip"] == "6" and inv.samples


def test_select_curve_stops_at_fd_setsize(smoke):
    inv = smoke("net.http_connect.select", max="1100", step="100")
    xs = [x for _, x, _ in inv.samples]
    assert xs and max(xs) < 1024 and xs == list(range(0, max(xs) + 1, 100))
    assert "FD_SETSIZE" in inv.notes["stopped_by"]


def test_descriptor_limit_ends_the_curve():
    """With RLIMIT_NOFILE at 200, 400 idle connections cannot be held: the curve stops
    honestly where the limit is, and says so."""
    args = [str(coreproc.core_path()), "run", "net.http_connect", "--preset=smoke", "max=400",
            "step=50"]
    out = subprocess.run(["sh", "-c", 'ulimit -n 200 && exec "$@"', "sh"] + args,
                         capture_output=True, text=True, timeout=60)
    inv = coreproc.parse_lines("net.http_connect", out.stdout.splitlines())
    assert inv.status == "ok", inv.reason
    assert "RLIMIT_NOFILE" in inv.notes["stopped_by"]
    xs = [x for _, x, _ in inv.samples]
    assert 100 <= max(xs) < 200


@pytest.mark.skipif(BSD, reason="kqueue is available here")
def test_missing_mechanism_is_skipped_with_reason(smoke):
    inv = smoke("net.http_request", expect="skipped", mech="kqueue")
    assert "kqueue" in inv.reason and inv.samples == []


def test_throughput_reports_requests_and_bytes(smoke):
    inv = smoke("net.http_throughput")
    for name in ("small_requests", "large_requests", "small_bandwidth", "large_bandwidth"):
        values = inv.values(name)
        # An interval may see nothing on a starved machine; the run as a whole may not.
        assert len(values) == 2 and min(values) >= 0 and sum(values) > 0, (name, values)
    # Bytes per response: the body size, within what responses in flight can skew.
    small = sum(inv.values("small_bandwidth")) * 1e6 / sum(inv.values("small_requests"))
    assert 0.5 * 1024 < small < 2 * 1024


def test_throughput_refuses_a_target_off_loopback():
    inv = coreproc.invoke("net.http_throughput", params={"target": "192.0.2.1:80"},
                          preset="smoke")
    assert inv.status == "failed" and inv.returncode == 2 and "loopback" in inv.reason


# ---- the server on its own -----------------------------------------------------------------

class Server:
    def __init__(self, nofile=None, stack_kb=None, binary=None, stderr=subprocess.PIPE,
                 **opts):
        args = [str(binary or coreproc.core_path()), "httpd", "port=0"] + [
            "%s=%s" % kv for kv in opts.items()]
        if nofile:  # under a lower descriptor limit (soft and hard)
            args = ["sh", "-c", 'ulimit -n %d && exec "$@"' % nofile, "sh"] + args
        if stack_kb:  # with a small stack, where deep recursion would overflow it
            args = ["sh", "-c", 'ulimit -s %d && exec "$@"' % stack_kb, "sh"] + args
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr,
                                     text=True, start_new_session=True,
                                     env=dict(os.environ, **sanitizer.ENV))
        line = self.proc.stdout.readline()
        assert line, "httpd did not start: " + self.proc.stderr.read()
        self.info = json.loads(line)
        self.port = self.info["port"]
        self.dir = Path(self.info["dir"])

    def connect(self, timeout=5.0) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=10)
        self.proc.stdout.close()
        if self.proc.stderr:
            self.proc.stderr.close()


@pytest.fixture
def httpd():
    started = []

    def start(**opts):
        s = Server(**opts)
        started.append(s)
        return s
    yield start
    for s in started:
        s.stop()
        assert not s.dir.exists(), "the server left its directory behind"


def read_response(sock: socket.socket, head_only=False, buf=b""):
    """(status, headers, body, rest) of one response; status 0 if the peer closed first."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return 0, {}, b"", buf
        buf += chunk
    head, _, buf = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    length = 0 if head_only else int(headers.get("content-length", "0"))
    while len(buf) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buf += chunk
    return status, headers, buf[:length], buf[length:]


def ask(server: Server, raw: bytes):
    """Send raw bytes on a fresh connection; the first response and whether the server
    then closed the connection."""
    with server.connect() as s:
        s.sendall(raw)
        status, headers, body, rest = read_response(s)
        s.settimeout(0.5)  # a closing server sends its FIN at once
        closed = False
        try:
            closed = rest == b"" and s.recv(1) == b""
        except (socket.timeout, ConnectionResetError):
            closed = not isinstance(sys.exc_info()[1], socket.timeout)
        return status, headers, body, closed


def get(path: str, extra: str = "") -> bytes:
    return ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n" % (path, extra)).encode()


def still_serves(server: Server):
    status, _, body, _ = ask(server, get("/file-100", "Connection: close\r\n"))
    assert server.alive() and status == 200 and body == content(100)


@pytest.mark.parametrize("mech", MECHS)
def test_serves_files_with_keep_alive_and_pipelining(httpd, mech):
    srv = httpd(mech=mech, files="100,1m")
    assert srv.info["mech"] == mech and srv.info["addr"] == "127.0.0.1"
    with srv.connect() as s:
        for path, size in (("/file-100", 100), ("/file-1048576", 1 << 20), ("/file-100", 100)):
            s.sendall(get(path))
            status, headers, body, rest = read_response(s)
            assert status == 200 and body == content(size) and rest == b""
            assert headers["connection"] == "keep-alive"
        s.sendall(get("/file-100") * 3)  # pipelined
        rest = b""
        for _ in range(3):
            status, _, body, rest = read_response(s, buf=rest)
            assert status == 200 and body == content(100)
        s.sendall(("HEAD /file-100 HTTP/1.1\r\nHost: x\r\n\r\n").encode())
        status, headers, body, rest = read_response(s, head_only=True)
        assert status == 200 and headers["content-length"] == "100" and rest == b""
    # HTTP/1.0 closes unless asked to keep the connection.
    status, _, body, closed = ask(srv, b"GET /file-100 HTTP/1.0\r\n\r\n")
    assert status == 200 and body == content(100) and closed


TRAVERSALS = ["/../../../../etc/passwd", "/..%2f..%2f..%2fetc%2fpasswd",
              "/%2e%2e/%2e%2e/etc/passwd", "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
              "//etc/passwd", "/etc/passwd", "/www/../www/file-100", "/./file-100",
              "/file-100/..", "/..\\..\\etc\\passwd", "/..%5c..%5cetc%5cpasswd",
              "/%2fetc%2fpasswd", "/file-100%00.html", "/%252e%252e/etc/passwd",
              "/.hidden", "/..", "http://127.0.0.1/../etc/passwd", "*", "/%", "/%zz",
              "/" + "a" * 200]


@pytest.mark.parametrize("mech", MECHS)
def test_path_traversal_is_refused(httpd, mech):
    srv = httpd(mech=mech)
    for target in TRAVERSALS:
        status, _, body, _ = ask(srv, get(target))
        assert status in (400, 404, 414), (target, status)
        assert b"root:" not in body
    still_serves(srv)


def test_only_its_own_regular_files_are_served(httpd):
    srv = httpd(files="100,200")
    # A symlink where a generated file was, a symlink and a foreign file beside them.
    (srv.dir / "file-200").unlink()
    (srv.dir / "file-200").symlink_to("/etc/passwd")
    (srv.dir / "file-7").symlink_to("/etc/passwd")
    (srv.dir / "extra").write_bytes(b"not generated")
    for path in ("/file-200", "/file-7", "/extra"):
        status, _, body, _ = ask(srv, get(path))
        assert status == 404 and b"root:" not in body, path
    # A generated file replaced by one of another size is not served either.
    (srv.dir / "file-100").write_bytes(b"short")
    assert ask(srv, get("/file-100"))[0] == 404


MALFORMED = [
    (b"GARBAGE\r\n\r\n", 400, True),
    (b"\x00\x01\x02\xff\xfe\r\n\r\n", 400, True),
    (b"GET /file-100 HTTP/9.9\r\nHost: x\r\n\r\n", 505, True),
    (b"GET /file-100 HTTP/1.1\r\n\r\n", 400, True),                      # no Host
    (b"GET /file-100 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, True),
    (b"GET /file-100 HTTP/1.1\r\nHost x\r\n\r\n", 400, True),            # no colon
    (b"GET /file-100 HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400, True),
    (b"GET  /file-100 HTTP/1.1\r\nHost: x\r\n\r\n", 400, True),
    (b"GET /file-100\r\nHost: x\r\n\r\n", 400, True),                     # HTTP/0.9 style
    (b"GET /file-100 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", 413, True),
    (b"GET /file-100 HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400, True),
    (b"GET /file-100 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
     413, True),
    (b"POST /file-100 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", 405, True),
    (b"DELETE /file-100 HTTP/1.1\r\nHost: x\r\n\r\n", 405, False),       # framing intact
    (b"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n", 404, False),
    (b"GET /file-100 HTTP/1.1\nHost: x\n\n", 200, False),                 # bare LF is allowed
]


@pytest.mark.parametrize("mech", MECHS)
def test_malformed_requests_get_an_error_and_the_server_goes_on(httpd, mech):
    srv = httpd(mech=mech)
    for raw, want, closes in MALFORMED:
        status, headers, _, closed = ask(srv, raw)
        assert status == want, (raw, status)
        assert closed == closes, (raw, closed)
        if want == 405:
            assert headers["allow"] == "GET, HEAD"
    still_serves(srv)


def test_empty_lines_before_a_request_are_ignored(httpd):
    """RFC 9112 §2.2: a server SHOULD ignore at least one empty line before a request
    line (clients have sent an extra CRLF after a request body for decades)."""
    srv = httpd()
    for prefix in (b"\r\n", b"\n", b"\r\n\r\n\n"):
        status, _, body, closed = ask(srv, prefix + get("/file-100"))
        assert (status, body, closed) == (200, content(100), False), prefix
    with srv.connect() as s:  # between pipelined requests, and sent on their own
        s.sendall(get("/file-100") + b"\r\n" + get("/file-100"))
        rest = b""
        for _ in range(2):
            status, _, body, rest = read_response(s, buf=rest)
            assert status == 200 and body == content(100)
        s.sendall(b"\r\n")
        time.sleep(0.1)
        s.sendall(get("/file-100"))
        status, _, body, _ = read_response(s, buf=rest)
        assert status == 200 and body == content(100)
    still_serves(srv)


def test_many_pipelined_requests_on_one_connection(httpd):
    """50,000 requests in one stream, answered one after another without a stack level
    each: with a 256 KB stack a recursion per request would overflow it."""
    srv = httpd(stack_kb=256, max_request="1m")
    n = 50_000
    with srv.connect(timeout=60) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        import threading
        sender = threading.Thread(target=s.sendall, args=(
            b"GET / HTTP/1.1\nHost:\n\n" * n + get("/file-100", "Connection: close\r\n"),))
        sender.start()
        data = bytearray()
        try:
            while chunk := s.recv(1 << 20):
                data += chunk
        except ConnectionResetError:
            pass
        sender.join(timeout=60)
    assert srv.alive(), "the server died (exit %s)" % srv.proc.returncode
    assert data.count(b"HTTP/1.1 404 ") == n and data.endswith(content(100))
    still_serves(srv)


def test_503_at_capacity_is_not_lost_to_a_reset(httpd):
    """A refused client that has sent its request (and sends more) still reads the 503:
    the server does not close with unread input, which would send a reset."""
    srv = httpd(max_conns=2)
    held = [srv.connect() for _ in range(2)]
    for s in held:
        s.sendall(get("/file-100"))
        assert read_response(s)[0] == 200
    for _ in range(20):
        with srv.connect() as extra:
            extra.sendall(get("/file-100"))
            time.sleep(0.01)  # the server has refused it by now
            extra.sendall(get("/file-100"))
            assert read_response(extra)[0] == 503
    for s in held:
        s.close()
    still_serves(srv)


def test_oversized_requests(httpd):
    srv = httpd(max_request="8k")
    status, _, _, closed = ask(srv, get("/file-100", "X-Big: " + "a" * 20000 + "\r\n"))
    assert status == 431 and closed
    status, _, _, closed = ask(srv, b"GET /" + b"a" * 20000)  # no end of line in sight
    assert status == 414 and closed
    many = "".join("X-%d: 1\r\n" % i for i in range(150))
    assert ask(srv, get("/file-100", many))[0] == 431
    status, _, _, _ = ask(srv, get("/" + "a" * 2000))
    assert status == 414
    still_serves(srv)


def test_slow_client_times_out_without_holding_up_others(httpd):
    srv = httpd(request_timeout=1)
    slow = srv.connect()
    slow.sendall(b"GET /file-100 HTTP/1.1\r\nHo")  # and then nothing
    t0 = time.monotonic()
    still_serves(srv)
    assert time.monotonic() - t0 < 0.9  # served while the slow request was pending
    slow.settimeout(5)
    status, _, _, rest = read_response(slow)
    waited = time.monotonic() - t0
    assert status == 408 and 0.8 < waited < 4, (status, waited)
    assert rest == b"" and slow.recv(1) == b""
    slow.close()


def test_idle_connections_time_out(httpd):
    srv = httpd(idle_timeout=1)
    conns = [srv.connect() for _ in range(3)]  # one after a request, two never used
    conns[0].sendall(get("/file-100"))
    assert read_response(conns[0])[0] == 200
    t0 = time.monotonic()
    for s in conns:
        s.settimeout(5)
        assert s.recv(1) == b""
        s.close()
    assert 0.8 < time.monotonic() - t0 < 4


def test_vanished_and_stuck_clients(httpd):
    srv = httpd(files="100,4m", request_timeout=2)
    # Clients that ask for a large file and disappear: some close, some reset.
    for i in range(40):
        s = srv.connect()
        s.sendall(get("/file-4194304"))
        if i % 2:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    # Connections that never say anything, and one half-sent request that vanishes.
    quiet = [srv.connect() for _ in range(20)]
    half = srv.connect()
    half.sendall(b"GET /file-100 HTT")
    half.close()
    # A client that does not read a large response does not stall the others.
    stuck = srv.connect()
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.sendall(get("/file-4194304"))
    t0 = time.monotonic()
    for _ in range(5):
        still_serves(srv)
    assert time.monotonic() - t0 < 2
    for s in quiet:
        s.close()
    stuck.close()
    still_serves(srv)


def test_connection_bound(httpd):
    srv = httpd(max_conns=3)
    held = [srv.connect() for _ in range(3)]
    for s in held:  # all three are accepted and served
        s.sendall(get("/file-100"))
        assert read_response(s)[0] == 200
    with srv.connect() as extra:
        status, _, _, _ = read_response(extra)
        assert status == 503
    held.pop().close()
    time.sleep(0.2)
    still_serves(srv)
    for s in held:
        s.close()


def test_descriptor_limit_bounds_connections(httpd):
    """With RLIMIT_NOFILE at 64 the server holds what fits, keeps a few descriptors in
    reserve, refuses the rest with 503, goes on serving, and can still clean up."""
    srv = httpd(nofile=64, max_conns=1000)
    cap = srv.info["max_conns"]
    assert 30 < cap < 64 - 8
    held = [srv.connect() for _ in range(cap)]
    for _ in range(5):
        with srv.connect() as extra:
            assert read_response(extra)[0] == 503
    held[0].settimeout(2)
    held[0].sendall(get("/file-100"))
    status, _, body, _ = read_response(held[0])
    assert status == 200 and body == content(100)
    for s in held:
        s.close()
    time.sleep(0.2)
    still_serves(srv)


def test_stops_on_sigterm_and_removes_its_files(httpd):
    srv = httpd()
    still_serves(srv)
    os.killpg(srv.proc.pid, signal.SIGTERM)
    srv.proc.wait(timeout=10)
    assert not srv.dir.exists()
    with pytest.raises(OSError):
        srv.connect(timeout=1).close()


@pytest.mark.parametrize("args,words", [
    (["mech=nope"], "unknown event mechanism"), (["port=99999"], "bad value"),
    (["colour=red"], "unknown option"), (["files=1k,huge"], "files"),
    (["max_conns=0"], "bad value"), (["addr=localhost"], "numeric"), (["oops"], "key=value"),
    (["mech=kqueue" if LINUX else "mech=epoll"], "not available" if LINUX else "Linux-only"),
])
def test_httpd_rejects_bad_options_in_one_line(args, words):
    out = subprocess.run([str(coreproc.core_path()), "httpd"] + args, capture_output=True,
                         text=True, timeout=10)
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, out.stderr
    assert words in out.stderr, out.stderr
    assert out.stdout == ""


def test_interrupted_benchmark_leaves_nothing_behind(tmp_path):
    """SIGTERM in the middle of a curve: the server child and the scratch files go too
    (no_leaks checks the processes, this test the scratch directory)."""
    proc = subprocess.Popen([str(coreproc.core_path()), "run", "net.http_connect.poll",
                             "max=20000", "step=1"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True,
                            env=dict(os.environ, TMPDIR=str(tmp_path)))
    assert proc.stdout.readline().startswith('{"type":"header"')
    time.sleep(0.5)
    assert proc.poll() is None, "finished before it could be interrupted"
    proc.terminate()
    proc.communicate(timeout=20)
    assert proc.returncode == -signal.SIGTERM
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("osmeter")] == []


@pytest.mark.parametrize("mech", MECHS)
def test_mangled_requests_never_hang_or_stop_the_server(httpd, mech):
    """Valid requests with bytes deleted, inserted, replaced and cut off (fixed seed),
    each followed by the client's end of stream: every connection ends promptly with an
    answer or a close, and the server serves as before."""
    import random
    srv = httpd(mech=mech, files="100,64k")
    rnd = random.Random(6)
    seeds = [get("/file-100"), b"HEAD /file-65536 HTTP/1.0\r\n\r\n",
             get("/%2e%2e/x", "Connection: close\r\n")]
    answered = 0
    for _ in range(300):
        b = mangle(rnd, rnd.choice(seeds) * rnd.randint(1, 3), rnd.randint(1, 6))
        with srv.connect(timeout=3) as s:
            s.sendall(b)
            s.shutdown(socket.SHUT_WR)
            data = b""
            try:
                while chunk := s.recv(65536):
                    data += chunk
            except ConnectionResetError:
                pass
            answered += data.startswith(b"HTTP/1.1 ")
    assert answered > 100, answered
    still_serves(srv)
