"""A minimal headless-Chromium driver over the DevTools protocol (stdlib only).

Used by tests/test_report_browser.py to open the HTML report in a real browser, collect
console errors and exceptions, measure the page and take screenshots.  Chromium runs in
its own process group with a private profile directory; `close()` kills the group and
removes the directory, also when a test fails.
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser",
                       "/usr/bin/google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--remote-debugging-port=0", "--remote-allow-origins=*"]


def find_chromium() -> str | None:
    for c in CHROMIUM_CANDIDATES:
        if os.access(c, os.X_OK):
            return c
    return None


class WebSocket:
    """Just enough RFC 6455 for the DevTools protocol: text frames, client masking."""

    def __init__(self, url: str, timeout: float = 30.0):
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        if not m:
            raise ValueError("bad websocket url %r" % url)
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, host, port, key))
        self.sock.sendall(req.encode())
        resp = b""
        while b"\r\n\r\n" not in resp:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            resp += chunk
        head, self.buf = resp.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError("websocket handshake refused: %r" % head[:200])

    def send(self, text: str) -> None:
        data = text.encode()
        hdr = bytearray([0x81])
        n = len(data)
        if n < 126:
            hdr.append(0x80 | n)
        elif n < 65536:
            hdr.append(0x80 | 126)
            hdr += struct.pack(">H", n)
        else:
            hdr.append(0x80 | 127)
            hdr += struct.pack(">Q", n)
        mask = os.urandom(4)
        hdr += mask
        self.sock.sendall(bytes(hdr) + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self) -> str:
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            op = b0 & 0x0F
            if op == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if op in (0x9, 0xA):        # ping/pong: ignore
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class Browser:
    def __init__(self, binary: str, timeout: float = 60.0):
        # A short path: Chromium's singleton socket lives in it and Unix socket paths are
        # limited to 108 bytes.  Its own temporary files go there too, removed with it.
        self.profile = tempfile.mkdtemp(prefix="om-chr-", dir="/tmp")
        self.log_path = os.path.join(self.profile, "chromium.log")
        env = dict(os.environ, TMPDIR=self.profile)
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [binary] + FLAGS + ["--user-data-dir=" + self.profile, "about:blank"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                env=env)
        self.ws = None
        self.next_id = 0
        self.events: list[dict] = []
        try:
            port = self._devtools_port(timeout)
            page = self._page_target(port, timeout)
            self.ws = WebSocket(page["webSocketDebuggerUrl"], timeout)
            for domain in ("Runtime", "Log", "Page"):
                self.call(domain + ".enable")
        except BaseException:
            self.close()
            raise

    def _log_tail(self) -> str:
        try:
            with open(self.log_path) as f:
                lines = [l.strip() for l in f if "dbus" not in l]
        except OSError:
            return ""
        return " | ".join(lines[-4:])

    def _devtools_port(self, timeout: float) -> int:
        """Chromium writes the port it chose into DevToolsActivePort in the profile."""
        path = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with open(path) as f:
                    first = f.readline().strip()
                if first.isdigit():
                    return int(first)
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError("chromium exited with status %s: %s"
                                   % (self.proc.returncode, self._log_tail()))
            time.sleep(0.05)
        raise TimeoutError("chromium did not open its DevTools port: " + self._log_tail())

    def _page_target(self, port: int, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10) as r:
                pages = [t for t in json.load(r) if t.get("type") == "page"]
            if pages:
                return pages[0]
            time.sleep(0.1)
        raise TimeoutError("chromium has no page target")

    def call(self, method: str, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method: str, timeout: float = 30.0) -> dict:
        for e in self.events:
            if e["method"] == method:
                return e
        deadline = time.monotonic() + timeout
        self.ws.sock.settimeout(timeout)
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == method:
                    return msg
        raise TimeoutError("no %s within %.0f s" % (method, timeout))

    def open(self, url: str, width: int = 1366, height: int = 768) -> None:
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate failed: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors seen so far."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p.get("args", []))))
            elif e["method"] == "Runtime.exceptionThrown":
                out.append("exception: %s" % p.get("exceptionDetails", {}).get("text"))
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: %s" % p["entry"].get("text"))
        return out

    def screenshot(self, path: str, full_page: bool = False, clip: dict | None = None) -> None:
        params = {"format": "png"}
        if full_page or clip:
            params["captureBeyondViewport"] = True
        if clip:
            params["clip"] = dict(clip, scale=1)
        elif full_page:
            w = self.evaluate("document.documentElement.scrollWidth")
            h = self.evaluate("document.documentElement.scrollHeight")
            params["clip"] = {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}
        data = self.call("Page.captureScreenshot", **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)   # helpers (zygote, renderers) too
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        # Helpers orphaned to us (when we are a child subreaper, as under pytest) are
        # reaped here so that none lingers as a zombie.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-self.proc.pid, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                time.sleep(0.05)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
