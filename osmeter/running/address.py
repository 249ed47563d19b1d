"""HOST[:PORT] as the core reads it (--peer, serve --listen), checked before anything runs.

The forms are the core's (om_peer_parse_address in core/servers/peer_protocol.c): HOST,
HOST:PORT, [IPV6]:PORT, [IPV6] and a bare IPv6 address.  HOST is a numeric address or a well-formed host name;
nothing is resolved here: the core does that when it connects or listens.
"""
from __future__ import annotations

import ipaddress
import re

from ..base import text

# RFC 1123 host names: dot-separated labels of letters, digits and inner hyphens.
HOST_NAME = re.compile(r"^(?=.{1,253}\.?$)(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
                       r"(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*\.?$")


def problem(spec: str, lowest_port: int = 1) -> str | None:
    """Why spec is no HOST[:PORT] (one line), or None.  lowest_port 0 lets the system
    choose the port (serve --listen)."""
    host, port = spec, None
    if spec.startswith("["):
        host, sep, rest = spec[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            return "expected [IPV6]:PORT"
        if not _is(host, ipaddress.IPv6Address):
            return "'%s' is not an IPv6 address" % text.shown(host)
        port = rest[1:] if rest else None
    elif spec.count(":") == 1:
        host, port = spec.split(":")
    elif spec.count(":") > 1 and not _is(spec, ipaddress.IPv6Address):
        return "'%s' is not an IPv6 address (with a port: [IPV6]:PORT)" % text.shown(spec)
    if not host:
        return "the host is empty (expected HOST[:PORT])"
    if port is not None and not (port.isascii() and port.isdigit()
                                 and lowest_port <= int(port) <= 65535):
        return "the port must be a number from %d to 65535, not '%s'" % (lowest_port,
                                                                         text.shown(port))
    if ":" in host or _is(host, ipaddress.IPv4Address):
        return None
    if host.replace(".", "").isdigit():     # the resolver would take 1.2.3 as 1.2.0.3
        return "'%s' is not an IPv4 address" % host
    if HOST_NAME.match(host):
        return None
    return "'%s' is neither a numeric address nor a host name" % text.shown(host)


def _is(word: str, kind) -> bool:
    try:
        kind(word)
        return True
    except ValueError:
        return False
