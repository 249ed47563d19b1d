/*
 * What both ends of the network benchmarks speak (see peer.h): lines on the control
 * connection, the handshake that proves both know the secret (HMAC-SHA256 over both
 * ends' nonces), the transfers, and socket addresses.  The far end's session is peer.c,
 * `serve`'s listener peer_listener.c, its command line serve_main.c.
 */
#define _GNU_SOURCE
#include "peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../harness.h"
#include "../lib/sha256.h"

/* ---- lines and the handshake ------------------------------------------------------- */

int om_peer_random_hex(char *out, size_t n)
{
    uint8_t raw[64];
    if (n > sizeof raw)
        return -1;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = om_read_full(fd, raw, n);
    close(fd);
    if (rc)
        return -1;
    om_hex_encode(raw, n, out);
    return 0;
}

int om_peer_read_line(int fd, char *line, size_t cap, int timeout_ms)
{
    uint64_t deadline = om_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
    size_t n = 0;
    for (;;) {
        uint64_t now = om_now_ns();
        if (now >= deadline)
            return -2;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)((deadline - now) / 1000000ULL) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return -2;
        char c;
        ssize_t got = read(fd, &c, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        if (c == '\n') {
            line[n] = 0;
            return (int)n;
        }
        if (n + 1 >= cap)
            return -3;
        line[n++] = c;
    }
}

int om_peer_vsend_line(int fd, const char *fmt, va_list ap)
{
    char buf[OM_PEER_LINE];
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    if (n < 0 || n >= (int)sizeof buf - 1)
        return -1;
    buf[n++] = '\n';
    return om_write_full(fd, buf, (size_t)n);
}

int om_peer_send_line(int fd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = om_peer_vsend_line(fd, fmt, ap);
    va_end(ap);
    return rc;
}

void om_peer_mac(const char *secret, const char *role, const char *sn, const char *cn,
                 char out[65])
{
    char msg[160];
    uint8_t mac[32];
    int n = snprintf(msg, sizeof msg, "osmeter-peer-1 %s %s %s", role, sn, cn);
    om_hmac_sha256(secret, strlen(secret), msg, (size_t)n, mac);
    om_hex_encode(mac, 32, out);
}

/* Compare without an early exit, so timing does not reveal how much of a MAC was right. */
int om_peer_same_mac(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned diff = (unsigned)(la ^ lb);
    for (size_t i = 0; i < la && i < lb; i++)
        diff |= (unsigned)(a[i] ^ b[i]);
    return diff == 0;
}

static int told_busy(const char *line, char *err, size_t errlen)
{
    if (strncmp(line, "BUSY", 4) != 0)
        return 0;
    snprintf(err, errlen, "peer is busy: %s", line + (line[4] ? 5 : 4));
    return 1;
}

int om_peer_handshake(int ctl, const char *secret, char *err, size_t errlen)
{
    char line[OM_PEER_LINE], cn[33], mine[65], theirs[65];
    int n = om_peer_read_line(ctl, line, sizeof line, 10000);
    if (n < 0) {
        snprintf(err, errlen, "%s", n == -2 ? "no greeting from the peer within 10 s"
                                            : "the peer closed the connection before greeting");
        return -1;
    }
    if (told_busy(line, err, errlen))
        return -1;
    const char *prefix = "OSMETER-PEER 1 CHALLENGE ";
    size_t pl = strlen(prefix);
    uint8_t raw[16];
    if (strncmp(line, prefix, pl) || om_hex_decode(line + pl, raw, 16)) {
        snprintf(err, errlen, "not an osmeter peer of protocol version 1 (it said '%.60s')",
                 line);
        return -1;
    }
    const char *sn = line + pl;
    if (om_peer_random_hex(cn, 16)) {
        snprintf(err, errlen, "cannot read random bytes: %s", strerror(errno));
        return -1;
    }
    om_peer_mac(secret, "client", sn, cn, mine);
    om_peer_mac(secret, "server", sn, cn, theirs);
    if (om_peer_send_line(ctl, "AUTH %s %s", cn, mine)) {
        snprintf(err, errlen, "cannot send to the peer: %s", strerror(errno));
        return -1;
    }
    n = om_peer_read_line(ctl, line, sizeof line, 10000);
    if (n < 0) {
        snprintf(err, errlen, "no answer to authentication from the peer");
        return -1;
    }
    if (told_busy(line, err, errlen)) /* another client authenticated first */
        return -1;
    if (strncmp(line, "OK ", 3) != 0) {
        snprintf(err, errlen, "peer refused: %.200s (is $%s the same on both hosts?)",
                 strncmp(line, "ERR ", 4) ? line : line + 4, OM_PEER_SECRET_ENV);
        return -1;
    }
    if (!om_peer_same_mac(line + 3, theirs)) {
        snprintf(err, errlen, "the peer does not know the secret (its proof is wrong)");
        return -1;
    }
    return 0;
}

/* ---- transfers ------------------------------------------------------------------- */

int om_send_data(int fd, long long total, size_t chunk, const char *buf)
{
    while (total > 0) {
        size_t n = total < (long long)chunk ? (size_t)total : chunk;
        if (om_write_full(fd, buf, n))
            return -1;
        total -= (long long)n;
    }
    return 0;
}

int om_send_transfer(int fd, int ackfd, long long total, size_t chunk, char *buf)
{
    char ack;
    return om_send_data(fd, total, chunk, buf) ? -1 : om_read_full(ackfd, &ack, 1);
}

int om_sink_transfer(int fd, int ackfd, long long total, size_t chunk, char *buf)
{
    while (total > 0) {
        size_t want = total < (long long)chunk ? (size_t)total : chunk;
        ssize_t n = read(fd, buf, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ECONNRESET;
            return -1;
        }
        total -= n;
    }
    char ack = 'a';
    return om_write_full(ackfd, &ack, 1);
}

/* ---- addresses --------------------------------------------------------------------- */

static const void *ip_bytes(const struct sockaddr_storage *a, size_t *len)
{
    if (a->ss_family == AF_INET) {
        *len = 4;
        return &((const struct sockaddr_in *)a)->sin_addr;
    }
    if (a->ss_family == AF_INET6) {
        *len = 16;
        return &((const struct sockaddr_in6 *)a)->sin6_addr;
    }
    *len = 0;
    return NULL;
}

int om_sock_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    size_t la, lb;
    const void *pa = ip_bytes(a, &la), *pb = ip_bytes(b, &lb);
    return pa && la == lb && memcmp(pa, pb, la) == 0;
}

void om_sock_set_port(struct sockaddr_storage *a, int port)
{
    if (a->ss_family == AF_INET)
        ((struct sockaddr_in *)a)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)a)->sin6_port = htons((uint16_t)port);
}

int om_sock_port(const struct sockaddr_storage *a)
{
    return ntohs(a->ss_family == AF_INET ? ((const struct sockaddr_in *)a)->sin_port
                                         : ((const struct sockaddr_in6 *)a)->sin6_port);
}

void om_sock_format(const struct sockaddr_storage *a, char *out, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    size_t n;
    const void *p = ip_bytes(a, &n);
    if (p)
        inet_ntop(a->ss_family, p, host, sizeof host);
    snprintf(out, len, a->ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", host, om_sock_port(a));
}

void om_sock_timeouts(int fd, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* One buffer raised to at least `want` bytes; what is in force goes to *have. */
static int fit_buffer(int fd, int option, int want, int *have)
{
    socklen_t sl = sizeof *have;
    if (getsockopt(fd, SOL_SOCKET, option, have, &sl) != 0)
        return -1;
    if (*have >= want)
        return 0;
    int rc = setsockopt(fd, SOL_SOCKET, option, &want, sizeof want);
    sl = sizeof *have;
    getsockopt(fd, SOL_SOCKET, option, have, &sl);
    return rc;
}

int om_sock_fit_datagram(int fd, long long size, int *sndbuf, int *rcvbuf)
{
    /* headroom for the address and the kernel's own bookkeeping of a datagram */
    int one = (int)size + 1024;
    int a = fit_buffer(fd, SO_SNDBUF, one, sndbuf), b = fit_buffer(fd, SO_RCVBUF, 2 * one, rcvbuf);
    return a || b ? -1 : 0;
}


/* "ADDR:PORT", "[V6ADDR]:PORT", "ADDR" or "V6ADDR" -> host, port. */
int om_peer_parse_address(const char *s, char *host, size_t hl, int *port)
{
    const char *colon = NULL;
    *port = OM_PEER_DEFAULT_PORT;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || (size_t)(close - s - 1) >= hl)
            return -1;
        snprintf(host, hl, "%.*s", (int)(close - s - 1), s + 1);
        if (close[1] == ':')
            colon = close + 1;
        else if (close[1])
            return -1;
    } else {
        colon = strchr(s, ':');
        if (colon && strchr(colon + 1, ':'))
            colon = NULL; /* a bare IPv6 address */
        size_t n = colon ? (size_t)(colon - s) : strlen(s);
        if (n == 0 || n >= hl)
            return -1;
        snprintf(host, hl, "%.*s", (int)n, s);
    }
    if (colon) {
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || p < 0 || p > 65535)
            return -1;
        *port = (int)p;
    }
    return 0;
}
