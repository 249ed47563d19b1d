/*
 * The far end of the network benchmarks (`osmeter-core serve`), the control protocol of
 * both ends, and the SHA-256/HMAC that authenticates it.  See peer.h for the protocol.
 *
 * Safety model: the listening process only accepts and forks; everything a client sends
 * is parsed in a per-connection child that alarm() ends after max_seconds and that stops
 * after max_bytes of data.  A connection must authenticate within a few seconds; several
 * may be authenticating at once (a bounded number, the oldest dropped to make room), so
 * a silent one cannot keep a real client out.  Only an authenticated client takes the
 * one session; while it runs, others are told BUSY at once and disconnected.  A client
 * that crashes, vanishes or sends garbage ends only its own connection.  The endpoints
 * are a fixed, bounded set; nothing a client names is run.
 */
#define _GNU_SOURCE
#include "peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#ifndef SOCK_CLOEXEC /* macOS */
#define SOCK_CLOEXEC 0
#endif
#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

const struct om_peer_limits om_peer_default_limits = {300, 4LL << 30, 0, NULL};

/* ---- SHA-256 ------------------------------------------------------------------------ */

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(struct om_sha256 *s, const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) +
                      K256[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
    s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

void om_sha256_init(struct om_sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->length = 0;
    s->fill = 0;
}

void om_sha256_update(struct om_sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->length += len;
    while (len > 0) {
        size_t take = 64 - s->fill < len ? 64 - s->fill : len;
        memcpy(s->block + s->fill, p, take);
        s->fill += take;
        p += take;
        len -= take;
        if (s->fill == 64) {
            sha256_block(s, s->block);
            s->fill = 0;
        }
    }
}

void om_sha256_final(struct om_sha256 *s, uint8_t digest[32])
{
    uint64_t bits = s->length * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (s->fill < 56 ? 56 : 120) - s->fill;
    for (int i = 0; i < 8; i++)
        pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    om_sha256_update(s, pad, padlen + 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(s->h[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        digest[4 * i + 3] = (uint8_t)s->h[i];
    }
}

void om_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen,
                    uint8_t mac[32])
{
    uint8_t k[64] = {0}, ipad[64], opad[64], inner[32];
    struct om_sha256 s;
    if (keylen > 64) { /* long keys are hashed first (RFC 2104) */
        om_sha256_init(&s);
        om_sha256_update(&s, key, keylen);
        om_sha256_final(&s, k);
    } else {
        memcpy(k, key, keylen);
    }
    for (int i = 0; i < 64; i++) {
        ipad[i] = k[i] ^ 0x36;
        opad[i] = k[i] ^ 0x5c;
    }
    om_sha256_init(&s);
    om_sha256_update(&s, ipad, 64);
    om_sha256_update(&s, msg, msglen);
    om_sha256_final(&s, inner);
    om_sha256_init(&s);
    om_sha256_update(&s, opad, 64);
    om_sha256_update(&s, inner, 32);
    om_sha256_final(&s, mac);
}

static void to_hex(const uint8_t *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = 0;
}

static int from_hex(const char *hex, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < 2 * n; i++) {
        char c = hex[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return -1;
        out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | v : v << 4);
    }
    return hex[2 * n] == 0 ? 0 : -1;
}

int om_peer_self_test(int verbose)
{
    static const struct {
        const char *msg;
        long repeat;
        const char *digest;
    } sha[] = {
        /* FIPS 180-2 Appendix B */
        {"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
        {"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    };
    /* RFC 4231 test cases 1, 2, 6 (short key, "Jefe", key longer than a block) */
    uint8_t key1[20], key6[131];
    memset(key1, 0x0b, sizeof key1);
    memset(key6, 0xaa, sizeof key6);
    const struct {
        const void *key;
        size_t keylen;
        const char *msg;
        const char *mac;
    } hmac[] = {
        {key1, sizeof key1, "Hi There",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {"Jefe", 4, "what do ya want for nothing?",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {key6, sizeof key6, "Test Using Larger Than Block-Size Key - Hash Key First",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
    };
    int failures = 0;
    uint8_t d[32];
    char hex[65];
    for (size_t i = 0; i < sizeof sha / sizeof sha[0]; i++) {
        struct om_sha256 s;
        om_sha256_init(&s);
        for (long r = 0; r < sha[i].repeat; r++)
            om_sha256_update(&s, sha[i].msg, strlen(sha[i].msg));
        om_sha256_final(&s, d);
        to_hex(d, 32, hex);
        int ok = strcmp(hex, sha[i].digest) == 0;
        failures += !ok;
        if (verbose || !ok)
            fprintf(stderr, "sha256 vector %zu: %s\n", i + 1, ok ? "ok" : "FAILED");
    }
    for (size_t i = 0; i < sizeof hmac / sizeof hmac[0]; i++) {
        om_hmac_sha256(hmac[i].key, hmac[i].keylen, hmac[i].msg, strlen(hmac[i].msg), d);
        to_hex(d, 32, hex);
        int ok = strcmp(hex, hmac[i].mac) == 0;
        failures += !ok;
        if (verbose || !ok)
            fprintf(stderr, "hmac-sha256 vector %zu: %s\n", i + 1, ok ? "ok" : "FAILED");
    }
    return failures ? -1 : 0;
}

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
    to_hex(raw, n, out);
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

static int send_line(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int send_line(int fd, const char *fmt, ...)
{
    char buf[OM_PEER_LINE];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof buf - 1)
        return -1;
    buf[n++] = '\n';
    return om_write_full(fd, buf, (size_t)n);
}

static void auth_mac(const char *secret, const char *role, const char *sn, const char *cn,
                     char out[65])
{
    char msg[160];
    uint8_t mac[32];
    int n = snprintf(msg, sizeof msg, "osmeter-peer-1 %s %s %s", role, sn, cn);
    om_hmac_sha256(secret, strlen(secret), msg, (size_t)n, mac);
    to_hex(mac, 32, out);
}

/* Compare without an early exit, so timing does not reveal how much of a MAC was right. */
static int same_mac(const char *a, const char *b)
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
    if (strncmp(line, prefix, pl) || from_hex(line + pl, raw, 16)) {
        snprintf(err, errlen, "not an osmeter peer of protocol version 1 (it said '%.60s')",
                 line);
        return -1;
    }
    const char *sn = line + pl;
    if (om_peer_random_hex(cn, 16)) {
        snprintf(err, errlen, "cannot read random bytes: %s", strerror(errno));
        return -1;
    }
    auth_mac(secret, "client", sn, cn, mine);
    auth_mac(secret, "server", sn, cn, theirs);
    if (send_line(ctl, "AUTH %s %s", cn, mine)) {
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
    if (!same_mac(line + 3, theirs)) {
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

/* ---- the session (far end) ----------------------------------------------------------- */

static int session_ctl = -1;
static char session_timeout_msg[96];
static long long session_left; /* data bytes this session may still move */
static int session_quiet;
static struct sockaddr_storage session_client;

static void plog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void plog(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    if (session_quiet)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "osmeter-core serve[%ld]: %s\n", (long)getpid(), msg);
}

static void on_session_alarm(int sig)
{
    (void)sig;
    ssize_t r = write(session_ctl, session_timeout_msg, strlen(session_timeout_msg));
    (void)r;
    _exit(3);
}

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

/* Traffic on a data socket is accepted only from the authenticated client's address. */
static int from_client(const struct sockaddr_storage *a)
{
    size_t la, lb;
    const void *pa = ip_bytes(a, &la), *pb = ip_bytes(&session_client, &lb);
    return pa && la == lb && memcmp(pa, pb, la) == 0;
}

void om_sock_set_port(struct sockaddr_storage *a, int port)
{
    if (a->ss_family == AF_INET)
        ((struct sockaddr_in *)a)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)a)->sin6_port = htons((uint16_t)port);
}

static int get_port(const struct sockaddr_storage *a)
{
    return ntohs(a->ss_family == AF_INET ? ((const struct sockaddr_in *)a)->sin_port
                                         : ((const struct sockaddr_in6 *)a)->sin6_port);
}

static void format_addr(const struct sockaddr_storage *a, char *out, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    size_t n;
    const void *p = ip_bytes(a, &n);
    if (p)
        inet_ntop(a->ss_family, p, host, sizeof host);
    snprintf(out, len, a->ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", host, get_port(a));
}

/* A data socket on the control connection's local address, ephemeral port. */
static int data_socket(int type, int *port)
{
    struct sockaddr_storage local;
    socklen_t len = sizeof local;
    if (getsockname(session_ctl, (struct sockaddr *)&local, &len))
        return -1;
    om_sock_set_port(&local, 0);
    int fd = socket(local.ss_family, type | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (local.ss_family == AF_INET6) { /* a v4-mapped address needs a dual-stack socket */
        int off = 0;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    }
    if (bind(fd, (struct sockaddr *)&local, len) ||
        (type == SOCK_STREAM && listen(fd, 1024)) ||
        getsockname(fd, (struct sockaddr *)&local, &len)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *port = get_port(&local);
    return fd;
}

void om_sock_timeouts(int fd, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* Wait until fd is readable (1), the deadline passes (0, errno ETIMEDOUT) or the client
 * goes away (0, errno ECONNABORTED): its control connection is silent while data flows,
 * so anything on it means it closed or broke the protocol. */
static int wait_for_data(int fd, uint64_t deadline)
{
    for (;;) {
        uint64_t now = om_now_ns();
        if (now >= deadline) {
            errno = ETIMEDOUT;
            return 0;
        }
        struct pollfd p[2] = {{fd, POLLIN, 0}, {session_ctl, POLLIN, 0}};
        int r = poll(p, 2, (int)((deadline - now) / 1000000ULL) + 1);
        if (r > 0 && p[1].revents) {
            errno = ECONNABORTED;
            return 0;
        }
        if (r > 0 && p[0].revents)
            return 1;
    }
}

static uint64_t ms_from_now(int ms) { return om_now_ns() + (uint64_t)ms * 1000000ULL; }

/* Wait up to timeout_ms for the client to connect to lfd; others are turned away. */
static int accept_client(int lfd, int timeout_ms)
{
    uint64_t deadline = ms_from_now(timeout_ms);
    while (wait_for_data(lfd, deadline)) {
        struct sockaddr_storage from;
        socklen_t len = sizeof from;
        int fd = accept(lfd, (struct sockaddr *)&from, &len);
        if (fd < 0)
            continue;
        if (from_client(&from))
            return fd;
        close(fd);
    }
    return -1;
}

/* "NAME a b c": exactly `count` integers in [lo, hi] into v[0..count); 0, or -1 when
 * there are fewer or more, or one is not a plain integer in range.  Nothing is written
 * past v[count - 1], whatever the client sends. */
static int parse_args(const char *line, long long *v, size_t count, long long lo, long long hi)
{
    const char *p = strchr(line, ' ');
    size_t n = 0;
    while (p && *p == ' ') {
        p++;
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (n == count || end == p || errno || (*end && *end != ' ') || x < lo || x > hi)
            return -1;
        v[n++] = x;
        p = end;
    }
    return n == count ? 0 : -1;
}
/* The array and its length, so that the count can never disagree with the array. */
#define ARGS(a) (a), sizeof(a) / sizeof((a)[0])

static char *session_buffer(size_t size)
{
    static char *buf;
    static size_t cap;
    if (size > cap) {
        free(buf);
        buf = malloc(size);
        cap = buf ? size : 0;
    }
    if (buf)
        memset(buf, 'x', size);
    return buf;
}

/* Each endpoint returns 0 to go on with the session, -1 to end it. */

/* A TCP data connection for one endpoint: listen, tell the client the port, accept it.
 * Returns the connected socket, or -1 after telling the client what went wrong. */
static int tcp_data_connection(void)
{
    int port, lfd = data_socket(SOCK_STREAM, &port);
    if (lfd < 0)
        return send_line(session_ctl, "ERR cannot open a data socket: %s", strerror(errno)), -1;
    send_line(session_ctl, "PORT %d", port);
    int fd = accept_client(lfd, 10000), gone = fd < 0 && errno == ECONNABORTED;
    close(lfd);
    if (fd < 0)
        return send_line(session_ctl, "ERR no data connection within 10 s%s",
                         gone ? " (the control connection closed)" : ""), -1;
    return fd;
}

static int ep_tcp_sink(const char *line)
{
    long long a[3];
    if (parse_args(line, ARGS(a), 1, 1LL << 30) || a[0] > (16 << 20) || a[2] > 1000000)
        return send_line(session_ctl, "ERR TCP_SINK wants <buf 1..16M> <total 1..1G> "
                                      "<count 1..1000000>"), -1;
    long long buf = a[0], total = a[1], count = a[2];
    if (total > session_left / count)
        return send_line(session_ctl, "ERR TCP_SINK would pass this session's byte limit "
                                      "(%lld bytes left)", session_left), -1;
    char *mem = session_buffer((size_t)buf);
    if (!mem)
        return send_line(session_ctl, "ERR out of memory for the data buffer"), -1;
    int fd = tcp_data_connection();
    if (fd < 0)
        return -1;
    om_sock_timeouts(fd, 30000);
    long long done;
    for (done = 0; done < count; done++)
        if (om_sink_transfer(fd, fd, total, (size_t)buf, mem))
            break;
    close(fd);
    session_left -= done * total;
    if (done < count)
        return send_line(session_ctl, "ERR data connection lost after %lld of %lld transfers",
                         done, count), -1;
    return send_line(session_ctl, "OK %lld", done * total);
}

static int ep_tcp_echo(const char *line)
{
    long long a[1];
    if (parse_args(line, ARGS(a), 1, 1 << 20))
        return send_line(session_ctl, "ERR TCP_ECHO wants <size 1..1M>"), -1;
    char *mem = session_buffer((size_t)a[0]);
    if (!mem)
        return send_line(session_ctl, "ERR out of memory for the data buffer"), -1;
    int fd = tcp_data_connection();
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    om_sock_timeouts(fd, 30000);
    long long echoed = 0;
    /* Ends at EOF (the client is done) or any error; the byte limit ends the session. */
    while (om_read_full(fd, mem, (size_t)a[0]) == 0 && om_write_full(fd, mem, (size_t)a[0]) == 0) {
        echoed++;
        if ((session_left -= 2 * a[0]) < 0) {
            close(fd);
            return send_line(session_ctl, "ERR session byte limit reached"), -1;
        }
    }
    close(fd);
    return send_line(session_ctl, "OK %lld", echoed);
}

static int drain_accepts(int lfd, long long *accepted)
{
    for (;;) {
        struct sockaddr_storage from;
        socklen_t len = sizeof from;
        int fd = accept(lfd, (struct sockaddr *)&from, &len);
        if (fd < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED ? 0 : -1;
        *accepted += from_client(&from);
        close(fd);
    }
}

static int ep_tcp_accept(const char *line)
{
    if (strcmp(line, "TCP_ACCEPT") != 0)
        return send_line(session_ctl, "ERR TCP_ACCEPT takes no arguments"), -1;
    int port, lfd = data_socket(SOCK_STREAM, &port);
    if (lfd < 0)
        return send_line(session_ctl, "ERR cannot open a data socket: %s", strerror(errno)), -1;
    fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
    send_line(session_ctl, "PORT %d", port);
    long long accepted = 0;
    char req[OM_PEER_LINE];
    for (;;) {
        struct pollfd p[2] = {{lfd, POLLIN, 0}, {session_ctl, POLLIN, 0}};
        int r = poll(p, 2, 60000);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* a minute without a connection or a word: the client is gone */
        if ((p[0].revents & POLLIN) && drain_accepts(lfd, &accepted))
            break;
        if (p[1].revents) {
            if (om_peer_read_line(session_ctl, req, sizeof req, 10000) < 0)
                break;
            if (drain_accepts(lfd, &accepted))
                break;
            if (strcmp(req, "SYNC") && strcmp(req, "END")) {
                close(lfd);
                return send_line(session_ctl, "ERR expected SYNC or END"), -1;
            }
            send_line(session_ctl, "OK %lld", accepted);
            if (strcmp(req, "END") == 0) {
                close(lfd);
                return 0;
            }
        }
    }
    close(lfd);
    return -1;
}

static int udp_socket_for_client(int *port)
{
    int fd = data_socket(SOCK_DGRAM, port);
    if (fd < 0)
        send_line(session_ctl, "ERR cannot open a data socket: %s", strerror(errno));
    return fd;
}

static int ep_udp_sink(const char *line)
{
    long long a[2];
    if (parse_args(line, ARGS(a), 1, 100000000) || a[0] > 65535)
        return send_line(session_ctl, "ERR UDP_SINK wants <size 1..65535> <count 1..1e8>"), -1;
    if (a[1] > session_left / a[0])
        return send_line(session_ctl, "ERR UDP_SINK would pass this session's byte limit "
                                      "(%lld bytes left)", session_left), -1;
    int port, fd = udp_socket_for_client(&port);
    char *mem = session_buffer(65536);
    if (fd < 0 || !mem)
        return -1;
    int rcvbuf = 0;
    socklen_t sl = sizeof rcvbuf;
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &sl);
    send_line(session_ctl, "PORT %d %d", port, rcvbuf);
    /* The first datagram may take a moment; after it, 1 s of silence ends the stream
     * (every datagram still in flight has arrived or been lost by then). */
    int r = wait_for_data(fd, ms_from_now(10000));
    om_sock_timeouts(fd, 1000);
    long long got = 0, bytes = 0;
    uint64_t first = 0, last = 0;
    while (r > 0 && got < a[1]) {
        struct sockaddr_storage from;
        socklen_t len = sizeof from;
        ssize_t n = recvfrom(fd, mem, 65536, 0, (struct sockaddr *)&from, &len);
        uint64_t t = om_now_ns();
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || !from_client(&from)) {
            if (n < 0)
                break;
            continue;
        }
        if (n == 0)
            break; /* the sender's end marker */
        if (got++ == 0)
            first = t;
        last = t;
        bytes += n;
    }
    close(fd);
    session_left -= bytes;
    return send_line(session_ctl, "OK %lld %lld %llu", got, bytes,
                     (unsigned long long)(last - first));
}

static int ep_udp_echo(const char *line)
{
    long long a[1];
    if (parse_args(line, ARGS(a), 1, 65535))
        return send_line(session_ctl, "ERR UDP_ECHO wants <size 1..65535>"), -1;
    int port, fd = udp_socket_for_client(&port);
    char *mem = session_buffer(65536);
    if (fd < 0 || !mem)
        return -1;
    om_sock_timeouts(fd, 1000);
    send_line(session_ctl, "PORT %d", port);
    long long echoed = 0;
    int idle_s = 0;
    for (;;) {
        struct sockaddr_storage from;
        socklen_t len = sizeof from;
        ssize_t n = recvfrom(fd, mem, 65536, 0, (struct sockaddr *)&from, &len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            /* Quiet for a second: has the client gone away, or been silent too long? */
            struct pollfd p = {session_ctl, POLLIN, 0};
            if ((errno != EAGAIN && errno != EWOULDBLOCK) || poll(&p, 1, 0) != 0 ||
                ++idle_s >= 60) {
                close(fd);
                return send_line(session_ctl, "ERR echo ended without an end marker"), -1;
            }
            continue;
        }
        idle_s = 0;
        if (!from_client(&from))
            continue;
        if (n == 0)
            break;
        if (sendto(fd, mem, (size_t)n, 0, (struct sockaddr *)&from, len) < 0 && errno != ENOBUFS)
            break;
        echoed++;
        if ((session_left -= 2 * n) < 0) {
            close(fd);
            return send_line(session_ctl, "ERR session byte limit reached"), -1;
        }
    }
    close(fd);
    return send_line(session_ctl, "OK %lld", echoed);
}

static const struct {
    const char *name;
    int (*run)(const char *line);
} endpoints[] = {
    {"TCP_SINK", ep_tcp_sink}, {"TCP_ECHO", ep_tcp_echo}, {"TCP_ACCEPT", ep_tcp_accept},
    {"UDP_SINK", ep_udp_sink}, {"UDP_ECHO", ep_udp_echo},
};

/* Challenge the client and check its answer within timeout_ms.  0 with the server's
 * own proof in proof (not sent yet: the caller first takes the session), or -1 after
 * telling the client why. */
static int server_handshake(int ctl, const char *secret, int timeout_ms, char proof[65])
{
    char sn[33], line[OM_PEER_LINE], want[65];
    if (om_peer_random_hex(sn, 16) || send_line(ctl, "OSMETER-PEER 1 CHALLENGE %s", sn))
        return -1;
    int n = om_peer_read_line(ctl, line, sizeof line, timeout_ms);
    if (n < 0) {
        plog("no authentication within %d s (%s)", timeout_ms / 1000,
             n == -2 ? "timeout" : "closed or too long");
        return -1;
    }
    /* AUTH <32 hex> <64 hex> */
    uint8_t raw[32];
    char cn[33] = "", mac[65] = "";
    if (n != 4 + 1 + 32 + 1 + 64 || strncmp(line, "AUTH ", 5) || line[37] != ' ') {
        plog("malformed authentication line");
        send_line(ctl, "ERR malformed authentication");
        return -1;
    }
    memcpy(cn, line + 5, 32);
    memcpy(mac, line + 38, 64);
    if (from_hex(cn, raw, 16) || from_hex(mac, raw, 32)) {
        plog("malformed authentication line");
        send_line(ctl, "ERR malformed authentication");
        return -1;
    }
    auth_mac(secret, "client", sn, cn, want);
    if (!same_mac(mac, want)) {
        plog("authentication failed (wrong secret)");
        send_line(ctl, "ERR authentication failed");
        return -1;
    }
    auth_mac(secret, "server", sn, cn, proof);
    return 0;
}

static const char busy_reason[] = "another client's session is running (this peer serves "
                                  "one client at a time); try again when it ends";

/* The one session slot of `serve`, shared with the listener (NULL: the local far end,
 * whose connection is the only one).  A connection takes it only once authenticated. */
static pid_t *session_owner;

static int take_session(void)
{
    pid_t none = 0;
    return !session_owner ||
           __atomic_compare_exchange_n(session_owner, &none, getpid(), 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

/* The listener makes room for a new connection: one still authenticating leaves; one
 * that has just taken the session stays (so the race between the two is harmless).
 * Installed by the listener before it forks, so it holds from a connection's start. */
static pid_t listener_pid;
static void on_evict(int sig)
{
    (void)sig;
    if (getpid() == listener_pid)
        return;
    if (!session_owner || __atomic_load_n(session_owner, __ATOMIC_ACQUIRE) != getpid())
        _exit(4);
}

int om_peer_session(int ctl, const char *secret, const struct om_peer_limits *lim)
{
    session_ctl = ctl;
    session_left = lim->max_bytes;
    session_quiet = lim->quiet;
    session_owner = lim->session_owner;
    socklen_t len = sizeof session_client;
    if (getpeername(ctl, (struct sockaddr *)&session_client, &len))
        return 1;
    char who[80];
    format_addr(&session_client, who, sizeof who);
    snprintf(session_timeout_msg, sizeof session_timeout_msg,
             "ERR session time limit (%ld s) reached\n", lim->max_seconds);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_session_alarm;
    sigaction(SIGALRM, &sa, NULL);
    alarm((unsigned)lim->max_seconds);
    int one = 1;
    setsockopt(ctl, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

    char proof[65];
    if (server_handshake(ctl, secret, OM_PEER_AUTH_TIMEOUT_MS, proof)) {
        plog("session from %s refused", who);
        return 2;
    }
    if (!take_session()) {
        send_line(ctl, "BUSY %s", busy_reason);
        plog("turned away %s after authentication: a session is running", who);
        return 0;
    }
    if (send_line(ctl, "OK %s", proof))
        return 2;
    plog("session from %s authenticated", who);
    char line[OM_PEER_LINE];
    for (;;) {
        int n = om_peer_read_line(ctl, line, sizeof line, 120000);
        if (n < 0) {
            plog("session from %s ended (%s)", who,
                 n == -1 ? "client closed" : n == -2 ? "idle 120 s" : "line too long");
            return n == -1 ? 0 : 2;
        }
        if (strcmp(line, "QUIT") == 0) {
            send_line(ctl, "OK bye");
            plog("session from %s ended (QUIT)", who);
            return 0;
        }
        size_t i, count = sizeof endpoints / sizeof endpoints[0];
        for (i = 0; i < count; i++) {
            size_t l = strlen(endpoints[i].name);
            if (strncmp(line, endpoints[i].name, l) == 0 && (line[l] == ' ' || !line[l]))
                break;
        }
        if (i == count) {
            send_line(ctl, "ERR unknown request");
            plog("session from %s ended: unknown request", who);
            return 2;
        }
        if (endpoints[i].run(line)) {
            plog("session from %s ended after a failed %s", who, endpoints[i].name);
            return 2;
        }
    }
}

/* ---- osmeter-core serve ------------------------------------------------------------ */

static volatile sig_atomic_t serve_stop;
static void on_serve_signal(int sig) { serve_stop = sig; }

/* "ADDR:PORT", "[V6ADDR]:PORT", "ADDR" or "V6ADDR" -> host, port. */
static int split_host_port(const char *s, char *host, size_t hl, int *port)
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

int om_peer_parse_address(const char *s, char *host, size_t hl, int *port)
{
    return split_host_port(s, host, hl, port);
}

static int serve_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "osmeter-core serve: %s%s\n"
                    "usage: osmeter-core serve [--listen ADDR:PORT] [--max-seconds N] "
                    "[--max-bytes N] | serve --self-test\n"
                    "  the shared secret comes from $%s\n",
            msg, arg ? arg : "", OM_PEER_SECRET_ENV);
    return OM_BADPARAM;
}

/* The listener's connections: each in a process of its own, authenticating (at most
 * OM_PEER_MAX_PENDING of them) or, once authenticated, the one session. */
struct listener {
    struct {
        pid_t pid;
        uint64_t started;
    } conn[OM_PEER_MAX_PENDING + 1];
    int n;
    pid_t *owner; /* the session slot: its pid, or 0 */
    const struct om_peer_limits *lim;
};

static int session_running(const struct listener *l)
{
    return __atomic_load_n(l->owner, __ATOMIC_ACQUIRE) != 0;
}

static int pending(const struct listener *l)
{
    pid_t owner = __atomic_load_n(l->owner, __ATOMIC_ACQUIRE);
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += l->conn[i].pid != owner;
    return n;
}

/* Its process is gone: free its place, and the session slot if it held it. */
static void forget_connection(struct listener *l, int i)
{
    pid_t expected = l->conn[i].pid;
    __atomic_compare_exchange_n(l->owner, &expected, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    om_child_untrack(l->conn[i].pid);
    l->conn[i] = l->conn[--l->n];
}

static void reap_connections(struct listener *l)
{
    uint64_t limit = (uint64_t)(l->lim->max_seconds + 5) * 1000000000ULL;
    for (int i = 0; i < l->n;) {
        int status;
        pid_t pid = l->conn[i].pid;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            if (WIFSIGNALED(status)) /* a bug in the server, not the client's doing */
                plog("connection %ld died of signal %d", (long)pid, WTERMSIG(status));
            forget_connection(l, i);
        } else if (om_now_ns() - l->conn[i].started > limit) {
            plog("connection %ld outlived its time limit: killed", (long)pid);
            om_child_kill(pid);
            forget_connection(l, i);
        } else {
            i++;
        }
    }
}

/* Every place for an unauthenticated connection is taken: the one that has waited
 * longest leaves, so silent clients cannot keep a real one out. */
static void evict_oldest(struct listener *l)
{
    pid_t owner = __atomic_load_n(l->owner, __ATOMIC_ACQUIRE);
    int oldest = -1;
    for (int i = 0; i < l->n; i++)
        if (l->conn[i].pid != owner && (oldest < 0 || l->conn[i].started < l->conn[oldest].started))
            oldest = i;
    if (oldest < 0)
        return;
    pid_t pid = l->conn[oldest].pid;
    plog("too many connections authenticating: dropped the oldest (%ld)", (long)pid);
    kill(pid, OM_PEER_EVICT_SIGNAL);
    for (int ms = 0; ms < 1000; ms++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            forget_connection(l, oldest);
            return;
        }
        if (__atomic_load_n(l->owner, __ATOMIC_ACQUIRE) == pid)
            return; /* it authenticated meanwhile and is the session now */
        usleep(1000);
    }
    om_child_kill(pid);
    forget_connection(l, oldest);
}

int om_peer_main(int argc, char **argv)
{
    const char *listen_at = "127.0.0.1";
    struct om_peer_limits lim = om_peer_default_limits;
    for (int i = 1; i < argc; i++) {
        long long v;
        if (strcmp(argv[i], "--self-test") == 0) {
            int rc = om_peer_self_test(1);
            printf("{\"type\":\"self_test\",\"status\":\"%s\"}\n", rc ? "failed" : "ok");
            return rc ? OM_FAILED : 0;
        } else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
            listen_at = argv[++i];
        } else if (strcmp(argv[i], "--max-seconds") == 0 && i + 1 < argc) {
            if (om_parse_int(argv[++i], &v) || v < 1 || v > 86400)
                return serve_usage("--max-seconds wants 1..86400, got ", argv[i]);
            lim.max_seconds = (long)v;
        } else if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) {
            if (om_parse_int(argv[++i], &v) || v < 1)
                return serve_usage("--max-bytes wants a positive size, got ", argv[i]);
            lim.max_bytes = v;
        } else {
            return serve_usage("unknown or incomplete argument ", argv[i]);
        }
    }
    const char *secret = getenv(OM_PEER_SECRET_ENV);
    if (!secret || strlen(secret) < 8)
        return serve_usage("refusing to start: set a shared secret of at least 8 characters "
                           "in $" OM_PEER_SECRET_ENV, NULL);
    if (om_peer_self_test(0))
        return fprintf(stderr, "osmeter-core serve: SHA-256 self-test failed\n"), OM_FAILED;

    char host[256];
    int port;
    if (split_host_port(listen_at, host, sizeof host, &port))
        return serve_usage("cannot parse --listen ", listen_at);
    struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    int gai = getaddrinfo(host, portstr, &hints, &ai);
    if (gai)
        return fprintf(stderr, "osmeter-core serve: cannot resolve %s: %s\n", host,
                       gai_strerror(gai)), OM_BADPARAM;
    int lfd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
    int one = 1, off = 0;
    if (lfd >= 0) {
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ai->ai_family == AF_INET6) /* [::] serves IPv4 too */
            setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    }
    if (lfd < 0 || bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 16)) {
        fprintf(stderr, "osmeter-core serve: cannot listen on %s: %s\n", listen_at,
                strerror(errno));
        freeaddrinfo(ai);
        return OM_FAILED;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage bound;
    socklen_t bl = sizeof bound;
    getsockname(lfd, (struct sockaddr *)&bound, &bl);
    char where[80];
    format_addr(&bound, where, sizeof where);
    printf("{\"type\":\"listening\",\"address\":");
    om_json_string(stdout, where);
    printf(",\"port\":%d,\"max_session_seconds\":%ld,\"max_session_bytes\":%lld}\n",
           get_port(&bound), lim.max_seconds, lim.max_bytes);
    fflush(stdout);
    plog("listening on %s; one session at a time, each at most %ld s and %lld bytes", where,
         lim.max_seconds, lim.max_bytes);

    /* Stop cleanly on a signal: the poll below returns EINTR, the session is ended. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_serve_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    listener_pid = getpid();
    sa.sa_handler = on_evict;
    sigaction(OM_PEER_EVICT_SIGNAL, &sa, NULL);

    /* The session slot lives in memory shared with every connection's process. */
    pid_t *owner = mmap(NULL, sizeof *owner, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (owner == MAP_FAILED) {
        fprintf(stderr, "osmeter-core serve: mmap: %s\n", strerror(errno));
        close(lfd);
        return OM_FAILED;
    }
    *owner = 0;
    lim.session_owner = owner;
    struct listener l = {.owner = owner, .lim = &lim};
    while (!serve_stop) {
        reap_connections(&l);
        struct pollfd p = {lfd, POLLIN, 0};
        if (poll(&p, 1, 200) <= 0)
            continue;
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        int fd = accept(lfd, (struct sockaddr *)&from, &fl);
        if (fd < 0)
            continue;
        char who[80];
        format_addr(&from, who, sizeof who);
        reap_connections(&l);
        if (!session_running(&l) && pending(&l) >= OM_PEER_MAX_PENDING)
            evict_oldest(&l);
        if (session_running(&l) || l.n == OM_PEER_MAX_PENDING + 1) {
            plog("turned away %s: a session is running", who);
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
            send_line(fd, "BUSY %s", busy_reason);
            close(fd);
            continue;
        }
        pid_t pid = om_fork();
        if (pid < 0) {
            plog("fork failed: %s", strerror(errno));
            close(fd);
            continue;
        }
        if (pid == 0) {
            close(lfd);
            _exit(om_peer_session(fd, secret, &lim));
        }
        close(fd);
        l.conn[l.n].pid = pid;
        l.conn[l.n++].started = om_now_ns();
    }
    while (l.n > 0) {
        om_child_kill(l.conn[0].pid);
        forget_connection(&l, 0);
    }
    munmap(owner, sizeof *owner);
    close(lfd);
    plog("stopped (signal %d)", (int)serve_stop);
    return 0;
}
