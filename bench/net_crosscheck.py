#!/usr/bin/env python3
"""Cross-check osmeter's TCP and UDP bandwidth against iperf3 on the same path (loopback).

    python3 bench/net_crosscheck.py [--rounds 5] [--mbytes 256]

Needs iperf3 (apt-get install -y iperf3).  osmeter and iperf3 runs alternate, round by
round, so a noisy neighbour hits both alike; each side's median over the rounds is
compared.  Like-for-like settings: the same bytes per test, the same write size, the same
CPU placement (osmeter pin=same / pin=split = iperf3 -A c0,c0 / -A c0,c1).  Target: the
ratio osmeter/iperf3 within ±20%.  Exit status 1 when a like-for-like ratio is outside.

Why the two can still differ (printed at the end as well):
* What is timed.  osmeter times one transfer from its first write until the far end
  confirms it read every byte; iperf3 reports bytes over the test's wall time on each
  side.  For a long transfer the two converge; for lmbench's 3 MB (net.tcp_bw's default),
  much of the transfer can sit in loopback's autotuned socket buffers (up to several MB),
  so the sender hardly waits for the reader: that number is "copy into the kernel and out again",
  not a steady stream, and is shown for information only.
* UDP "received".  osmeter's far end times from the first to the last arrival (ttcp's
  receiver); iperf3's receiver divides by the whole test time.  With heavy loss (pin=same:
  the receiver only runs when the sender is preempted) both depend on the scheduler and
  on the receive buffer (212992 bytes by default), so loss and "received" vary a lot
  between runs of either tool; "sent" is the more stable comparison.
* The receivers differ.  iperf3's server makes two system calls per datagram (strace:
  one pselect6() and one read() each) and keeps sequence-number statistics; osmeter's far
  end makes one blocking recvfrom().  A slower receiver drops more when the receive
  buffer overflows, so iperf3 tends to show more loss and a lower "received" with
  pin=same; received ~= sent x (1 - loss) holds for both.  iperf3 also puts a sequence
  header in each datagram (its -l is the whole payload, as ours is).
* Socket buffers are the system defaults on both sides (neither sets SO_SNDBUF/RCVBUF).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from osmeter import api  # noqa: E402

TARGET = 0.20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def osmeter(bench: str, **params) -> api.Invocation:
    inv = api.invoke(bench, params=params, timeout=600)
    if inv.status != "ok":
        sys.exit("osmeter %s failed: %s" % (bench, inv.reason))
    return inv


def iperf3(port: int, args: list[str]) -> dict:
    for attempt in range(5):  # the server takes one test at a time; retry if it is busy
        out = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-J", *args],
                             capture_output=True, text=True, timeout=300)
        try:
            result = json.loads(out.stdout)
        except json.JSONDecodeError:
            result = {"error": out.stderr.strip() or "no output"}
        if "error" not in result:
            return result["end"]
        time.sleep(0.5)
    sys.exit("iperf3 %s failed: %s" % (" ".join(args), result["error"]))


def verdict(ratio: float) -> str:
    return "yes" if abs(ratio - 1) <= TARGET else "NO"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mbytes", type=int, default=256, help="MB per TCP test (default 256)")
    ap.add_argument("--udp-mbytes", type=int, default=64, help="MB per UDP test (default 64)")
    ap.add_argument("--udp-sizes", default="1024,8192,32768")
    opts = ap.parse_args()
    if not shutil.which("iperf3"):
        sys.exit("iperf3 is not installed (apt-get install -y iperf3)")
    cpus = sorted(os.sched_getaffinity(0))
    placements = [("same", "%d,%d" % (cpus[0], cpus[0]))]
    if len(cpus) > 1:
        placements.append(("split", "%d,%d" % (cpus[0], cpus[1])))

    port = free_port()
    server = subprocess.Popen(["iperf3", "-s", "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    rows, failed = [], False
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit("iperf3 server did not start")
                time.sleep(0.1)
        time.sleep(0.2)

        total = "%dm" % opts.mbytes
        for pin, affinity in placements:
            ours, theirs, default3m = [], [], []
            for _ in range(opts.rounds):
                inv = osmeter("net.tcp_bw", pin=pin, total=total, buffer="48k", samples=3)
                ours.append(statistics.median(inv.values("bandwidth")))
                end = iperf3(port, ["-n", total, "-l", "48K", "-A", affinity])
                theirs.append(end["sum_received"]["bits_per_second"] / 1e6)
                inv = osmeter("net.tcp_bw", pin=pin, samples=10)  # the study's 3 MB
                default3m.append(statistics.median(inv.values("bandwidth")))
            o, t = statistics.median(ours), statistics.median(theirs)
            rows.append(("TCP %s, 48 KB writes, pin=%s" % (total.upper(), pin), o, t, True))
            rows.append(("TCP 3 MB (bw_tcp default), pin=%s [info]" % pin,
                         statistics.median(default3m), t, False))

        for size in [int(s) for s in opts.udp_sizes.split(",")]:
            for pin, affinity in placements:
                sent, recv, loss, isent, irecv, iloss = [], [], [], [], [], []
                for _ in range(opts.rounds):
                    inv = osmeter("net.udp_ttcp", pin=pin, sizes=str(size),
                                  total="%dm" % opts.udp_mbytes, samples=1)
                    sent.append(inv.values("sent", size)[0])
                    recv.append(inv.values("received", size)[0])
                    loss.append(inv.values("loss", size)[0])
                    end = iperf3(port, ["-u", "-b", "0", "-l", str(size), "-n",
                                        "%dM" % opts.udp_mbytes, "-A", affinity])
                    isent.append(end["sum_sent"]["bits_per_second"] / 1e6)
                    irecv.append(end["sum_received"]["bits_per_second"] / 1e6)
                    iloss.append(end["sum_received"]["lost_percent"])
                label = "UDP %d B, pin=%s" % (size, pin)
                rows.append((label + " sent", statistics.median(sent), statistics.median(isent),
                             True))
                rows.append((label + " received", statistics.median(recv),
                             statistics.median(irecv), True))
                rows.append((label + " loss %% (osmeter %.1f, iperf3 %.1f) [info]"
                             % (statistics.median(loss), statistics.median(iloss)),
                             None, None, False))
    finally:
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()

    print("osmeter vs iperf3 %s on loopback, medians of %d alternating rounds "
          "(Mbit/s = 10^6 bit/s)" % (subprocess.run(["iperf3", "--version"],
                                                     capture_output=True, text=True)
                                      .stdout.split("\n")[0], opts.rounds))
    print("%-52s %12s %12s %7s  %s" % ("", "osmeter", "iperf3", "ratio", "within ±20%"))
    for label, o, t, judged in rows:
        if o is None:
            print("  " + label)
            continue
        ratio = o / t if t else float("inf")
        mark = verdict(ratio) if judged else "(not like-for-like)"
        failed |= judged and mark == "NO"
        print("%-52s %12.0f %12.0f %7.2f  %s" % (label, o, t, ratio, mark))
    print("\nload average at the end: %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    print(__doc__[__doc__.index("Why the two"):].rstrip())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
