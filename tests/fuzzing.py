"""Hostile input for the servers' tests: byte-level mangling with a seeded generator,
numbers a parser must survive, sending in pieces, and dropping a connection."""
from __future__ import annotations

import random
import socket
import struct
import time


def number(rnd: random.Random) -> str:
    """A number as a client might write it: in range or not, huge, negative, signed,
    empty, suffixed, hexadecimal, a float, a non-ASCII digit."""
    return rnd.choice([
        "0", "1", "-1", "7", "64", "1400", "65535", "65536", "65508", "1048576", "1048577",
        "16777216", "16777217", "1073741824", "1073741825", "100000000", "100000001",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "1" + "0" * rnd.randint(19, 300), "0" * 40 + "1", "+5",
        "0x10", "64k", "1e6", "1.5", "", "\t3", "٣", str(rnd.randint(-10**9, 10**9)),
        str(rnd.randint(1, 100)), str(rnd.randint(1, 100))])


def mangle(rnd: random.Random, data: bytes, faults: int) -> bytes:
    """Bytes deleted, inserted (NULs, line ends, anything, long runs), replaced, cut off."""
    b = bytearray(data)
    for _ in range(faults):
        pos = rnd.randrange(len(b) + 1)
        op = rnd.random()
        if op < 0.25:
            del b[pos:pos + rnd.randint(1, 5)]
        elif op < 0.45:
            b[pos:pos] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 8)))
        elif op < 0.6:
            b[pos:pos] = rnd.choice([b"\x00", b"\r", b"\n", b"\r\n", b" ", b"\t", b"\xff",
                                     b"%00", b"%", b"/.."])
        elif op < 0.8 and b:
            b[min(pos, len(b) - 1)] = rnd.randrange(256)
        elif op < 0.9:
            b[pos:pos] = bytes([rnd.randrange(32, 127)]) * rnd.randint(200, 9000)
        else:
            del b[pos:]
    return bytes(b)


def send_in_pieces(rnd: random.Random, sock: socket.socket, data: bytes) -> None:
    """All at once, or cut at random places with short pauses (partial lines)."""
    if len(data) < 2 or rnd.random() < 0.7:
        sock.sendall(data)
        return
    cuts = sorted(rnd.sample(range(1, len(data)), min(len(data) - 1, rnd.randint(1, 4))))
    for a, b in zip([0] + cuts, cuts + [len(data)]):
        sock.sendall(data[a:b])
        time.sleep(rnd.choice([0, 0, 0.001, 0.01]))


def reset(sock: socket.socket) -> None:
    """Drop the connection with a reset instead of an orderly close."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
