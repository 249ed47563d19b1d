"""Sharing a run without the machine's identity: `osmeter export --redact`.

Left out: the host name, the kernel command line (root device, network addresses, boot
secrets), the names of other processes seen busy around the run (also in the run's
warnings), and the sources of network file systems ("server:/export", "//server/share").  Replaced in every string of
the run: the host name, user names (from /home/NAME and /Users/NAME paths, and the
exporting user's), IP addresses other than loopback, MAC and e-mail addresses.  What a
comparison needs stays: CPU, memory, OS and kernel release, C library, mitigations,
file system types and options, every parameter and sample.  What was done is recorded
in sysinfo.redacted (kept through an import) and said by the export.
"""
from __future__ import annotations

import getpass
import ipaddress
import re

from . import exchange
from .model import Run

HOME_PATH = re.compile(r"(?<![\w.-])(/(?:home|Users)/)([^/\s:;,'\"()\[\]=<>]+)")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
MAC = re.compile(r"(?<![\w:-])[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){4}(?![\w:-])")
IPV6 = re.compile(r"(?<![\w:.])[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*(?![\w:])")
IPV4 = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?!\w|\.\d)")


def _address(match: re.Match) -> str | None:
    try:
        addr = ipaddress.ip_address(match.group())
    except ValueError:
        return None
    return None if addr.is_loopback or addr.is_unspecified else "<address>"


def _word(name: str) -> re.Pattern:
    """The name where it is not part of a longer word ('on-host7' yes, 'host77' no)."""
    return re.compile(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(name), re.I)


class Redactor:
    def __init__(self, host: str | None, users: set[str]):
        self.counts: dict[str, int] = {}
        self.rules = [("e-mail addresses", EMAIL, lambda m: "<e-mail>"),
                      ("MAC addresses", MAC, lambda m: "<mac>"),
                      ("IP addresses", IPV6, _address), ("IP addresses", IPV4, _address),
                      ("user names", HOME_PATH, lambda m: m.group(1) + "<user>")]
        if host:
            for name in {host, host.split(".")[0]}:
                if len(name) >= 3:
                    self.rules.append(("host names", _word(name), lambda m: "<host>"))
        for user in users:
            if len(user) >= 3:
                self.rules.append(("user names", _word(user), lambda m: "<user>"))

    def text(self, s: str) -> str:
        for what, pattern, replace in self.rules:
            def sub(m, replace=replace, what=what):
                new = replace(m)
                if new is None:
                    return m.group()
                self.counts[what] = self.counts.get(what, 0) + 1
                return new
            s = pattern.sub(sub, s)
        return s

    def walk(self, value):
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.walk(v) for v in value]
        if isinstance(value, dict):
            return {k: self.walk(v) for k, v in value.items()}
        return value


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def _network_sources(obj, path: str, removed: list[str]) -> None:
    """Remove file-system 'device' entries that name another host."""
    if isinstance(obj, dict):
        device = obj.get("device")
        if isinstance(device, str) and (":" in device.split("/")[0] or device.startswith("//")):
            del obj["device"]
            removed.append(path + ".device")
        for k, v in obj.items():
            _network_sources(v, "%s.%s" % (path, k), removed)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _network_sources(v, "%s[%d]" % (path, i), removed)


# What names a run and its results stays as it is: a user called "mem" must not turn
# mem.read into <user>.read.
RUN_IDENTITY = ("id", "started", "finished", "status", "suite", "osmeter_version")
RESULT_IDENTITY = ("bench", "metric", "unit", "x_name", "better", "shape", "status")


def redact(run: Run) -> Run:
    """A copy of the run fit to share, with sysinfo.redacted saying what was done."""
    doc = exchange.run_to_document(run)
    r = doc["run"]
    si = dict(r.get("sysinfo") or {})
    env = dict(r.get("environment") or {})
    removed = []
    host = si.pop("hostname", None)
    if host:
        removed.append("run.sysinfo.hostname")
    if isinstance(si.get("kernel"), dict) and si["kernel"].get("cmdline"):
        si["kernel"] = {k: v for k, v in si["kernel"].items() if k != "cmdline"}
        removed.append("run.sysinfo.kernel.cmdline")
    processes = set()
    for key in ("busy_before", "busy_after"):
        busy = env.get(key)
        if isinstance(busy, list) and any("command" in p for p in busy):
            processes |= {p["command"] for p in busy if isinstance(p.get("command"), str)
                          and p["command"]}
            env[key] = [{k: v for k, v in p.items() if k != "command"} for p in busy]
            removed.append("run.environment.%s[].command" % key)
    if processes and isinstance(env.get("warnings"), list):
        for name in sorted(processes, key=len, reverse=True):
            env["warnings"] = [_word(name).sub("<process>", w) for w in env["warnings"]]
    si.pop("redacted", None)
    _network_sources(si, "run.sysinfo", removed)
    r["sysinfo"], r["environment"] = si, env
    users = {m.group(2) for s in _strings(doc) for m in HOME_PATH.finditer(s)}
    try:
        me = getpass.getuser()
    except (KeyError, OSError):
        me = None
    if me and me != "root":
        users.add(me)
    redactor = Redactor(host if isinstance(host, str) else None, users)
    doc["run"] = {k: v if k in RUN_IDENTITY else redactor.walk(v) for k, v in r.items()}
    doc["results"] = [{k: v if k in RESULT_IDENTITY else redactor.walk(v) for k, v in res.items()}
                      for res in doc["results"]]
    doc["run"]["sysinfo"]["redacted"] = {"removed": removed, "replaced": redactor.counts}
    return exchange.document_to_run(doc)


def summary(run: Run) -> str:
    """One line: what --redact left out and replaced."""
    red = run.sysinfo.get("redacted") or {}
    parts = []
    if red.get("removed"):
        parts.append("left out " + ", ".join(red["removed"]))
    if red.get("replaced"):
        parts.append("replaced " + ", ".join("%d %s" % (n, what) for what, n in
                                             sorted(red["replaced"].items())))
    return "; ".join(parts) or "nothing identifying found"
