#!/usr/bin/env python3
"""Cross-check osmeter's HTTP client and server against nginx and wrk (Debian packages).

In one run, on loopback, interleaved round by round so that load drifting on the
machine hits every configuration alike:

  1. wrk              -> nginx        the reference
  2. osmeter's client -> nginx        (net.http_throughput target=...): the client must
                                      not be the bottleneck: at least 0.9x wrk
                                      (issue 21); above 1.2x wrk is the limit
  3. wrk              -> osmeter-core httpd: osmeter's server against nginx, printed

for a small (1 KiB) and a large (1 MiB) file with the same keep-alive concurrency.
nginx runs with a configuration in a temporary directory on a free loopback port (never
the system service) with one worker, as osmeter's server has one process; osmeter's
client runs one process per wrk thread (two by default: one wrk thread cannot keep up
with 1 MiB responses, its reads are 8 KiB); nginx is stopped afterwards, whatever
happens.

    apt-get install -y nginx-light wrk     # or nginx
    python3 bench/http_crosscheck.py [--duration 3] [--rounds 5] [--conns 64] [--threads 2]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORE = REPO / "core" / "build" / "osmeter-core"
SIZES = {"small": 1024, "large": 1024 * 1024}
CLIENT_TARGET = 0.9   # osmeter client / wrk: keeps up with wrk (above 1.2, wrk is the limit)
PATTERN = b"0123456789abcdefghijklmnopqrstuvwxyz\n"  # what osmeter's server writes


def die(msg: str) -> None:
    print("http_crosscheck: " + msg, file=sys.stderr)
    sys.exit(1)


def content(size: int) -> bytes:
    return (PATTERN * (size // len(PATTERN) + 1))[:size]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            die("%s exited with status %s" % (what, proc.returncode))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    die("%s does not listen on port %d" % (what, port))


def check_serves(port: int, name: str, size: int, what: str) -> None:
    url = "http://127.0.0.1:%d/%s" % (port, name)
    with urllib.request.urlopen(url, timeout=10) as r:
        body = r.read()
    if r.status != 200 or body != content(size):
        die("%s: GET %s gave status %d and %d bytes, not the expected file" %
            (what, url, r.status, len(body)))


def stop(proc: subprocess.Popen | None, sig: int) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass


def wrk(port: int, name: str, conns: int, duration: int, threads: int) -> float:
    out = subprocess.run(["wrk", "-t%d" % threads, "-c%d" % conns, "-d%ds" % duration,
                          "http://127.0.0.1:%d/%s" % (port, name)],
                         capture_output=True, text=True, timeout=duration + 60)
    m = re.search(r"Requests/sec:\s+([\d.]+)", out.stdout)
    if out.returncode or not m:
        die("wrk failed:\n" + out.stdout + out.stderr)
    if re.search(r"Non-2xx or 3xx responses|Socket errors", out.stdout):
        die("wrk saw errors:\n" + out.stdout)
    return float(m.group(1))


def osmeter_client(port: int, conns: int, duration: int, threads: int) -> dict[str, float]:
    args = [str(CORE), "run", "net.http_throughput", "target=127.0.0.1:%d" % port,
            "conns=%d" % conns, "clients=%d" % threads, "pin=none", "samples=%d" % duration,
            "interval_ms=1000", "small=%d" % SIZES["small"], "large=%d" % SIZES["large"]]
    out = subprocess.run(args, capture_output=True, text=True, timeout=4 * duration + 60)
    samples: dict[str, list[float]] = {}
    for line in out.stdout.splitlines():
        obj = json.loads(line)
        if obj["type"] == "sample":
            samples.setdefault(obj["metric"], []).append(obj["value"])
        elif obj["type"] in ("error", "skip"):
            die("osmeter client: %s" % obj["reason"])
    if out.returncode:
        die("osmeter-core failed (%d): %s" % (out.returncode, out.stderr.strip()))
    return {k: statistics.mean(samples[k + "_requests"]) for k in SIZES}


NGINX_CONF = """
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 100000000;
    default_type application/octet-stream;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {www};
    }}
}}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=int, default=3, help="seconds per measurement")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median kept)")
    ap.add_argument("--conns", type=int, default=64, help="keep-alive connections")
    ap.add_argument("--threads", type=int, default=2,
                    help="wrk threads = osmeter client processes (one wrk thread cannot keep "
                         "up with 1 MiB responses: its reads are 8 KiB)")
    opts = ap.parse_args()
    for tool in ("nginx", "wrk"):
        if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
            die("%s not found: apt-get install -y nginx-light wrk" % tool)
    nginx_bin = shutil.which("nginx") or "/usr/sbin/nginx"
    if not CORE.exists():
        r = subprocess.run(["make", "-s", "-C", str(REPO / "core")], capture_output=True,
                           text=True)
        if r.returncode:
            die("building the core failed:\n" + r.stdout + r.stderr)

    tmp = Path(tempfile.mkdtemp(prefix="osmeter-http-xcheck-"))
    nginx = httpd = None
    try:
        # nginx's workers run as an unprivileged user when started by root.
        os.chmod(tmp, 0o755)
        www = tmp / "www"
        www.mkdir(mode=0o755)
        for size in SIZES.values():
            (www / ("file-%d" % size)).write_bytes(content(size))
            os.chmod(www / ("file-%d" % size), 0o644)
        nport = free_port()
        conf = tmp / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=tmp, port=nport, www=www))
        nginx = subprocess.Popen([nginx_bin, "-p", str(tmp), "-c", str(conf),
                                  "-e", str(tmp / "error.log")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 start_new_session=True)
        wait_listening(nport, nginx, "nginx")

        env = dict(os.environ, TMPDIR=str(tmp))
        httpd = subprocess.Popen([str(CORE), "httpd", "port=0", "files=%d,%d" %
                                  (SIZES["small"], SIZES["large"]),
                                  "max_conns=%d" % (opts.conns + 64)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=env, start_new_session=True)
        info = json.loads(httpd.stdout.readline() or "{}")
        if info.get("type") != "httpd":
            die("osmeter-core httpd did not start: %s" % httpd.stderr.read())
        oport = info["port"]
        for size in SIZES.values():
            check_serves(nport, "file-%d" % size, size, "nginx")
            check_serves(oport, "file-%d" % size, size, "osmeter-core httpd")

        print("nginx %s (1 worker), wrk (%d threads), osmeter client (%d processes, %s), "
              "osmeter server (%s); %d keep-alive connections, %d s per measurement, %d rounds"
              % (subprocess.run([nginx_bin, "-v"], capture_output=True, text=True)
                 .stderr.strip().split("/")[-1], opts.threads, opts.threads,
                 "epoll" if sys.platform.startswith("linux") else "kqueue/poll", info["mech"],
                 opts.conns, opts.duration, opts.rounds))
        res: dict[str, dict[str, list[float]]] = {
            k: {s: [] for s in SIZES} for k in ("wrk_nginx", "osm_nginx", "wrk_osm")}
        for rnd in range(opts.rounds):
            for s, size in SIZES.items():
                res["wrk_nginx"][s].append(wrk(nport, "file-%d" % size, opts.conns,
                                               opts.duration, opts.threads))
                res["wrk_osm"][s].append(wrk(oport, "file-%d" % size, opts.conns,
                                             opts.duration, opts.threads))
            for s, v in osmeter_client(nport, opts.conns, opts.duration, opts.threads).items():
                res["osm_nginx"][s].append(v)
            print("  round %d: %s" % (rnd + 1, "  ".join(
                "%s %s %.0f" % (k, s, res[k][s][-1]) for k in res for s in SIZES)))

        ok = True
        print("\nrequests/s (median of rounds)     small (1 KiB)   large (1 MiB)")
        med = {k: {s: statistics.median(v) for s, v in d.items()} for k, d in res.items()}
        for k, label in (("wrk_nginx", "wrk -> nginx"), ("osm_nginx", "osmeter client -> nginx"),
                         ("wrk_osm", "wrk -> osmeter server")):
            print("  %-30s %14.0f %15.0f" % (label, med[k]["small"], med[k]["large"]))
        print("\nratios")
        for s in SIZES:
            r = med["osm_nginx"][s] / med["wrk_nginx"][s]
            within = r >= CLIENT_TARGET
            ok &= within
            print("  client %s: osmeter client / wrk, both driving nginx = %.3f  (target "
                  ">= %.2f: %s)%s" % (s, r, CLIENT_TARGET, "within" if within else "OUTSIDE",
                                         "  [faster than wrk: wrk, not nginx, may be the "
                                         "limit here]" if r > 1.2 else ""))
        for s in SIZES:
            r = med["wrk_osm"][s] / med["wrk_nginx"][s]
            print("  server %s: wrk -> osmeter server / wrk -> nginx = %.3f  (comparison, "
                  "no target)" % (s, r))
        print("\nclient within target: %s" % ("yes" if ok else "NO"))
        sys.exit(0 if ok else 1)
    finally:
        stop(httpd, signal.SIGTERM)
        stop(nginx, signal.SIGQUIT)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
