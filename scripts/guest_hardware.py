"""The one virtual machine both guests run on: the same qemu machine, CPU model, memory,
vCPUs, disk, network device and accelerator for NetBSD and for Linux, so that a comparison
of the two is one of operating systems on identical (virtual) hardware, as Lai & Baker
used one Pentium for three systems.  Only how the kernel is loaded differs: NetBSD boots from its
disk through its own boot blocks, Linux is handed its kernel and initrd by qemu (-kernel),
which changes nothing once the kernel runs.
"""
from __future__ import annotations

import os
import subprocess

MACHINE = "pc"               # i440FX: a chipset NetBSD 6.99 (2013) and Linux both know
# A CPU model both guests get, whichever accelerator runs them: Nehalem (2008; SSE4.2,
# no AVX) is older than NetBSD 6.99 and emulated whole by qemu's TCG.
CPU = "Nehalem"
VCPUS = 2
MEMORY_MB = 2048
DISK_MB = 4096
DISK_DEVICE = "virtio-blk-pci"     # NetBSD: ld0 (ld at virtio); Linux: vda
NET_DEVICE = "virtio-net-pci"      # NetBSD: vioif0; Linux: virtio_net
GUEST_ADDRESS = "10.0.2.15"        # qemu's user network gives its guest this address


def accelerator() -> tuple[str, str]:
    """("kvm" or "tcg", why).  KVM only where the CPU has hardware virtualisation (vmx or
    svm): some machines offer /dev/kvm without it, through PVM (the kvm_pvm module), which
    runs only kernels made for it at speed and emulates any other kernel one instruction
    at a time (here Debian's kernel decompressed ~30,000 bytes a second and did not boot in
    minutes).  qemu's TCG translates the guest's code instead: slower than hardware, the
    same for both guests."""
    try:
        flags = set(open("/proc/cpuinfo").read().split())
    except OSError:
        flags = set()
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg", "no usable /dev/kvm"
    if not flags & {"vmx", "svm"}:
        pvm = os.path.isdir("/sys/module/kvm_pvm")
        return "tcg", ("/dev/kvm is PVM (kvm_pvm), which emulates kernels not made for it"
                       if pvm else "the CPU has no vmx or svm")
    return "kvm", "hardware virtualisation"


def qemu_command(disk: str, disk_format: str, ssh_port: int, console: str, pidfile: str,
                 kernel: tuple[str, str, str] | None = None) -> list[str]:
    """The qemu command line of a guest with DISK, its ssh forwarded to 127.0.0.1:SSH_PORT
    only and its network restricted (it reaches nothing but what is forwarded); the serial
    console on the unix socket CONSOLE; KVM where it runs any kernel, else TCG.  KERNEL is (kernel, initrd, arguments) for a guest
    that qemu loads directly."""
    cmd = ["qemu-system-x86_64", "-machine", MACHINE + ",accel=" + accelerator()[0],
           "-cpu", CPU,
           "-smp", str(VCPUS), "-m", str(MEMORY_MB),
           "-drive", "file=%s,if=none,id=d0,format=%s,cache=none,aio=native"
                     % (disk, disk_format),
           "-device", DISK_DEVICE + ",drive=d0",
           "-netdev", "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:%d-:22" % ssh_port,
           "-device", NET_DEVICE + ",netdev=n0",
           "-display", "none", "-vga", "none", "-nodefaults",
           "-serial", "unix:%s,server=on,wait=off" % console,
           "-pidfile", pidfile, "-daemonize"]
    if kernel:
        cmd += ["-kernel", kernel[0], "-initrd", kernel[1], "-append", kernel[2]]
    return cmd


def ensure_key(directory: str) -> str:
    """The ssh key both guests let root in with: DIRECTORY/id (made if missing).  ECDSA:
    NetBSD 6.99's OpenSSH predates ed25519 keys (OpenSSH 6.5), and today's client no
    longer signs with ssh-rsa's SHA-1."""
    os.makedirs(directory, exist_ok=True)
    key = os.path.join(directory, "id")
    if not os.path.exists(key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "256", "-N", "", "-C",
                        "osmeter-guest", "-f", key], check=True)
    return key
