"""Hosts made on this machine for tests that reach them over ssh (sshfs, Ansible).

A host is a network namespace with an address of its own, its own sshd (root logs in
with a key made for the test) and, for `hosts()`, its own host name (a UTS namespace)
and working directory.  `hosts()` joins each to this namespace by a veth pair, so a
program here (ssh, ansible-playbook) reaches it at its address; `make_unreachable`
takes that link down.  Everything (sshd, namespaces and with them the veth pairs, keys,
directories, routes) is removed afterwards, whatever happened.  Addresses are numeric, in a
10.x range chosen from the test's pid, so no name is ever looked up.

Needs root, sshd, ssh, ssh-keygen and ip (apt: openssh-server iproute2); otherwise
`Unavailable` says which is missing.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass


class Unavailable(Exception):
    """Hosts cannot be made here (not root, a tool missing); the reason."""


def run(args: list[str]) -> None:
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(args), r.returncode,
                                                    (r.stderr or r.stdout).strip()))


def sshd_path() -> str:
    """sshd, or Unavailable naming what is missing for ssh between namespaces."""
    if os.geteuid() != 0:
        raise Unavailable("ssh hosts in network namespaces need root")
    sshd = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd")
                                     else None)
    for tool, path in (("sshd", sshd), ("ssh", shutil.which("ssh")),
                       ("ssh-keygen", shutil.which("ssh-keygen")), ("ip", shutil.which("ip"))):
        if not path:
            raise Unavailable("%s is not installed (apt: openssh-server iproute2)" % tool)
    return sshd


def keypair(path: str) -> str:
    """A fresh ed25519 key without a passphrase at path (and path.pub); path."""
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path])
    return path


def start_sshd(netns: str, address: str, hostkey: str, authorized_keys: str,
               hostname: str | None = None) -> subprocess.Popen:
    """sshd in the network namespace, listening on address:22 for root with the keys in
    authorized_keys; in a UTS namespace of its own named hostname when given.  Returns
    once it accepts connections (the Popen is sshd itself: stop it with stop())."""
    sshd = sshd_path()
    os.makedirs("/run/sshd", exist_ok=True)     # sshd's privilege-separation directory
    command = [sshd, "-D", "-e", "-f", "/dev/null", "-h", hostkey,
               "-o", "ListenAddress=" + address, "-o", "Port=22",
               "-o", "PermitRootLogin=prohibit-password", "-o", "StrictModes=no",
               "-o", "AuthorizedKeysFile=" + authorized_keys,
               "-o", "PasswordAuthentication=no", "-o", "Subsystem=sftp internal-sftp",
               "-o", "PidFile=none"]
    if hostname:    # unshare and sh exec, so the process started is sshd in the end
        command = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
                   hostname] + command
    daemon = subprocess.Popen(["ip", "netns", "exec", netns] + command,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while True:     # until it listens
        if _listening(netns, address):
            return daemon
        if daemon.poll() is not None:
            raise RuntimeError("sshd exited: %s" % daemon.stderr.read().decode().strip())
        if time.monotonic() > deadline:
            stop(daemon)
            raise RuntimeError("sshd did not listen on %s within 20 s" % address)
        time.sleep(0.05)


def _listening(netns: str, address: str) -> bool:
    r = subprocess.run(["ip", "netns", "exec", netns, "ss", "-Hltn", "src", address,
                        "sport", "= :22"], capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.strip() != ""


def stop(daemon: subprocess.Popen) -> None:
    daemon.terminate()
    try:
        daemon.wait(timeout=10)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()
    if daemon.stderr:
        daemon.stderr.close()


@dataclass
class Host:
    name: str           # its host name (and the inventory's)
    address: str        # where it is reached from this namespace
    netns: str
    link: str           # this namespace's end of its veth pair
    workdir: str        # a directory of its own (the file system is shared)
    daemon: subprocess.Popen

    unreachable: bool = False

    def make_unreachable(self) -> None:
        """From now on nothing reaches it: an 'unreachable' route for its address in this
        namespace (no packet is sent at all; taking the link down instead would let the
        default route carry them off the machine)."""
        run(["ip", "route", "add", "unreachable", self.address + "/32"])
        self.unreachable = True


def _subnet_base() -> int:
    """A second octet of 10.x.y.z for this test process (100..199), so that two test
    runs at once do not put the same address in this namespace."""
    return 100 + os.getpid() % 100


@contextlib.contextmanager
def hosts(names: list[str]):
    """Yield (hosts, private key): a Host per name, reachable from here by ssh as root
    with the key.  Everything is removed afterwards."""
    sshd_path()
    if not shutil.which("unshare") or not shutil.which("ss"):
        raise Unavailable("unshare and ss are needed (apt: util-linux iproute2)")
    tag = "%05d" % (os.getpid() % 100000)
    base = tempfile.mkdtemp(prefix="osmeter-hosts-", dir="/tmp")
    os.chmod(base, 0o755)
    made: list[Host] = []
    namespaces: list[str] = []
    try:
        key = keypair(os.path.join(base, "id"))
        hostkey = keypair(os.path.join(base, "hostkey"))
        authorized = os.path.join(base, "authorized_keys")
        shutil.copy(key + ".pub", authorized)
        for i, name in enumerate(names):
            netns, link, peer = ("osmeter-host-%s-%d" % (tag, i), "ofl%sr%d" % (tag, i),
                                 "ofl%sh%d" % (tag, i))
            subnet = "10.%d.%d" % (_subnet_base(), i + 1)
            run(["ip", "netns", "add", netns])
            namespaces.append(netns)
            run(["ip", "link", "add", link, "type", "veth", "peer", "name", peer,
                 "netns", netns])
            run(["ip", "addr", "add", subnet + ".1/30", "dev", link])
            run(["ip", "link", "set", link, "up"])
            run(["ip", "-n", netns, "addr", "add", subnet + ".2/30", "dev", peer])
            run(["ip", "-n", netns, "link", "set", peer, "up"])
            run(["ip", "-n", netns, "link", "set", "lo", "up"])
            workdir = os.path.join(base, name)
            os.mkdir(workdir)
            daemon = start_sshd(netns, subnet + ".2", hostkey, authorized, hostname=name)
            made.append(Host(name, subnet + ".2", netns, link, workdir, daemon))
        yield made, key
    finally:
        for host in made:
            stop(host.daemon)
            if host.unreachable:
                subprocess.run(["ip", "route", "del", "unreachable", host.address + "/32"],
                               capture_output=True)
        for netns in namespaces:    # deleting a namespace deletes its veth pair
            subprocess.run(["ip", "netns", "del", netns], capture_output=True)
        _wait_links_gone([host.link for host in made])
        shutil.rmtree(base, ignore_errors=True)


def _wait_links_gone(links: list[str], timeout: float = 10.0) -> None:
    """The kernel removes a deleted namespace's devices a moment later."""
    deadline = time.monotonic() + timeout
    while links and time.monotonic() < deadline:
        links = [link for link in links if subprocess.run(
            ["ip", "link", "show", link], capture_output=True).returncode == 0]
        time.sleep(0.05)


def namespaces() -> list[str]:
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
