"""Sharing a run without the machine's identity: `osmeter export --redact`.

Left out: the host name, the kernel command line (root device, network addresses, boot
secrets), the names of other processes seen busy around the run (also in the run's
warnings), the sources of network file systems ("server:/export", "//server/share"),
and disk serial numbers and WWNs.  Replaced in every string of the run: host names (this
run's, the --peer hosts it measured against, and, exported together, every other run's),
user names (from home directories in every layout: /home, /usr/home (FreeBSD),
/var/home (Fedora Atomic), /export/home (illumos), /Users (macOS), and the exporting
user's), device names that carry a serial or a UUID (/dev/disk/by-id/..., by-uuid,
by-partuuid, by-label, luks-<UUID>) and every UUID, IP addresses other than loopback, MAC
and e-mail addresses.  What a
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

# /root is root's: not a person's name
HOME_PATH = re.compile(r"(?<![\w.-])(/(?:usr/home|var/home|export/home|home|Users)/)"
                       r"([^/\s:;,'\"()\[\]=<>]+)")
DISK_NAME = re.compile(r"(/dev/disk/by-(?:id|uuid|partuuid|label|partlabel)/)"
                       r"([^/\s:;,'\"()\[\]=<>]+)")
UUID = re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-"
                  r"[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Fa-f])")
SERIAL_KEYS = ("serial", "serial_number", "wwn", "wwid")
PEER_OPTION = re.compile(r"--peer[= ]+([^\s,;'\"]+)")
SHORT_NAME = 3      # shorter host names only where they stand alone, in their own case
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


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def _word(name: str) -> re.Pattern:
    """The name where it is not part of a longer word ('on-host7' yes, 'host77' no); a
    name shorter than SHORT_NAME ('h7') only in its own case and not beside a dot
    (so that 'db' leaves 'results.db' alone)."""
    if len(name) < SHORT_NAME:
        return re.compile(r"(?<![A-Za-z0-9_.])%s(?![A-Za-z0-9_.])" % re.escape(name))
    return re.compile(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(name), re.I)


def host_of(address: str) -> str | None:
    """The host part of 'HOST', 'HOST:PORT' or '[V6]:PORT'."""
    address = address.strip()
    if address.startswith("["):
        return address[1:].split("]")[0] or None
    if address.count(":") == 1:
        address = address.split(":")[0]
    return address or None


def peer_hosts(doc: dict) -> set[str]:
    """The hosts a run measured against: every 'peer' parameter or note, and --peer in
    its command line."""
    found = set()

    def visit(value):
        if isinstance(value, dict):
            for k, v in value.items():
                if k == "peer" and isinstance(v, str):
                    found.add(host_of(v))
                visit(v)
        elif isinstance(value, list):
            for v in value:
                visit(v)
        elif isinstance(value, str):
            found.update(host_of(m.group(1)) for m in PEER_OPTION.finditer(value))
    visit(doc)
    return {h for h in found if h}


class Redactor:
    def __init__(self, hosts: set[str], users: set[str]):
        self.counts: dict[str, int] = {}
        self.rules = [("e-mail addresses", EMAIL, lambda m: "<e-mail>"),
                      ("device names", DISK_NAME, lambda m: m.group(1) + "<device>"),
                      ("UUIDs", UUID, lambda m: "<uuid>"),
                      ("MAC addresses", MAC, lambda m: "<mac>"),
                      ("IP addresses", IPV6, _address), ("IP addresses", IPV4, _address),
                      ("user names", HOME_PATH, lambda m: m.group(1) + "<user>")]
        names = {n for host in hosts for n in (host, host.split(".")[0]) if n}
        for name in sorted(names, key=len, reverse=True):     # web1.example before web1
            if not _is_address(name):
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


def _serials(obj, path: str, removed: list[str]) -> None:
    """Remove disks' serial numbers and WWNs wherever sysinfo records them."""
    if isinstance(obj, dict):
        for key in [k for k in obj if k in SERIAL_KEYS]:
            del obj[key]
            removed.append("%s.%s" % (path, key))
        for k, v in obj.items():
            _serials(v, "%s.%s" % (path, k), removed)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _serials(v, "%s[%d]" % (path, i), removed)


def redact_all(runs: list[Run]) -> list[Run]:
    """Each run redacted, every run's host name replaced in all of them (a label or a
    note of one run may name another run's host)."""
    hosts = {h for r in runs for h in [r.sysinfo.get("hostname")] if isinstance(h, str) and h}
    return [redact(r, hosts) for r in runs]


def redact(run: Run, other_hosts: set[str] = frozenset()) -> Run:
    """A copy of the run fit to share, with sysinfo.redacted saying what was done;
    other_hosts are replaced too."""
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
    _serials(si, "run.sysinfo", removed)
    r["sysinfo"], r["environment"] = si, env
    users = {m.group(2) for s in _strings(doc) for m in HOME_PATH.finditer(s)}
    try:
        me = getpass.getuser()
    except (KeyError, OSError):
        me = None
    if me and me != "root":
        users.add(me)
    hosts = set(other_hosts) | peer_hosts(doc) | ({host} if isinstance(host, str) else set())
    redactor = Redactor({h for h in hosts if h and h not in ("localhost",)}, users)
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
