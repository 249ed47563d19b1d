/*
 * The far end of the network benchmarks: one session on an authenticated control
 * connection (see peer.h for the protocol), in a process of its own: `osmeter-core
 * serve` forks one per connection (peer_listener.c), a benchmark with peer="" forks one
 * on loopback (bench/net.c).
 *
 * Safety model: everything a client sends is parsed here, in a per-connection process
 * that alarm() ends after max_seconds and that stops after max_bytes of data.  A client
 * that crashes, vanishes or sends garbage ends only its own connection.  The endpoints
 * are a fixed, bounded set; nothing a client names is run.
 */
#define _GNU_SOURCE
#include "peer.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../harness.h"
#include "../lib/sha256.h"
#include "../lib/atomics.h"

#ifndef SOCK_CLOEXEC /* macOS */
#define SOCK_CLOEXEC 0
#endif

const struct om_peer_limits om_peer_default_limits = {300, 4LL << 30, 0, NULL};

/* ---- the session (far end) ----------------------------------------------------------- */

static int session_ctl = -1;
static char session_timeout_msg[96];
static long long session_left; /* data bytes this session may still move */
static int session_quiet;
static struct sockaddr_storage session_client;

void om_peer_log(const char *fmt, ...)
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

/* An answer on the session's control connection. */
static int reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int reply(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = om_peer_vsend_line(session_ctl, fmt, ap);
    va_end(ap);
    return rc;
}

/* Traffic on a data socket is accepted only from the authenticated client's address. */
static int from_client(const struct sockaddr_storage *a)
{
    return om_sock_same_host(a, &session_client);
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
    *port = om_sock_port(&local);
    return fd;
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
        return reply("ERR cannot open a data socket: %s", strerror(errno)), -1;
    reply("PORT %d", port);
    int fd = accept_client(lfd, 10000), gone = fd < 0 && errno == ECONNABORTED;
    close(lfd);
    if (fd < 0) /* the control connection is silent while data flows (wait_for_data) */
        return reply(gone ? "ERR no data connection: the client closed the control "
                            "connection or sent on it first"
                          : "ERR no data connection within 10 s"), -1;
    return fd;
}

static int ep_tcp_sink(const char *line)
{
    long long a[3];
    if (parse_args(line, ARGS(a), 1, 1LL << 30) || a[0] > (16 << 20) || a[2] > 1000000)
        return reply("ERR TCP_SINK wants <buf 1..16M> <total 1..1G> "
                     "<count 1..1000000>"), -1;
    long long buf = a[0], total = a[1], count = a[2];
    if (total > session_left / count)
        return reply("ERR TCP_SINK would pass this session's byte limit "
                     "(%lld bytes left)", session_left), -1;
    char *mem = session_buffer((size_t)buf);
    if (!mem)
        return reply("ERR out of memory for the data buffer"), -1;
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
        return reply("ERR data connection lost after %lld of %lld transfers",
                     done, count), -1;
    return reply("OK %lld", done * total);
}

static int ep_tcp_echo(const char *line)
{
    long long a[1];
    if (parse_args(line, ARGS(a), 1, 1 << 20))
        return reply("ERR TCP_ECHO wants <size 1..1M>"), -1;
    char *mem = session_buffer((size_t)a[0]);
    if (!mem)
        return reply("ERR out of memory for the data buffer"), -1;
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
            return reply("ERR session byte limit reached"), -1;
        }
    }
    close(fd);
    return reply("OK %lld", echoed);
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
        return reply("ERR TCP_ACCEPT takes no arguments"), -1;
    int port, lfd = data_socket(SOCK_STREAM, &port);
    if (lfd < 0)
        return reply("ERR cannot open a data socket: %s", strerror(errno)), -1;
    fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
    reply("PORT %d", port);
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
                return reply("ERR expected SYNC or END"), -1;
            }
            reply("OK %lld", accepted);
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
        reply("ERR cannot open a data socket: %s", strerror(errno));
    return fd;
}

static int ep_udp_sink(const char *line)
{
    long long a[2];
    if (parse_args(line, ARGS(a), 1, 100000000) || a[0] > 65535)
        return reply("ERR UDP_SINK wants <size 1..65535> <count 1..1e8>"), -1;
    if (a[1] > session_left / a[0])
        return reply("ERR UDP_SINK would pass this session's byte limit "
                     "(%lld bytes left)", session_left), -1;
    int port, fd = udp_socket_for_client(&port);
    char *mem = session_buffer(65536);
    if (fd < 0 || !mem)
        return -1;
    int sndbuf = 0, rcvbuf = 0; /* the BSDs' defaults hold no 64 KB datagram */
    om_sock_fit_datagram(fd, a[0], &sndbuf, &rcvbuf);
    reply("PORT %d %d", port, rcvbuf);
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
    return reply("OK %lld %lld %llu", got, bytes,
                 (unsigned long long)(last - first));
}

static int ep_udp_echo(const char *line)
{
    long long a[1];
    if (parse_args(line, ARGS(a), 1, 65535))
        return reply("ERR UDP_ECHO wants <size 1..65535>"), -1;
    int port, fd = udp_socket_for_client(&port);
    char *mem = session_buffer(65536);
    if (fd < 0 || !mem)
        return -1;
    om_sock_timeouts(fd, 1000);
    int sndbuf = 0, rcvbuf = 0; /* the BSDs' defaults hold no 64 KB datagram */
    om_sock_fit_datagram(fd, a[0], &sndbuf, &rcvbuf);
    reply("PORT %d", port);
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
                return reply("ERR echo ended without an end marker"), -1;
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
            return reply("ERR session byte limit reached"), -1;
        }
    }
    close(fd);
    return reply("OK %lld", echoed);
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
    if (om_peer_random_hex(sn, 16) || om_peer_send_line(ctl, "OSMETER-PEER 1 CHALLENGE %s", sn))
        return -1;
    int n = om_peer_read_line(ctl, line, sizeof line, timeout_ms);
    if (n < 0) {
        om_peer_log("no authentication within %d s (%s)", timeout_ms / 1000,
                    n == -2 ? "timeout" : "closed or too long");
        return -1;
    }
    /* AUTH <32 hex> <64 hex> */
    uint8_t raw[32];
    char cn[33] = "", mac[65] = "";
    if (n != 4 + 1 + 32 + 1 + 64 || strncmp(line, "AUTH ", 5) || line[37] != ' ') {
        om_peer_log("malformed authentication line");
        om_peer_send_line(ctl, "ERR malformed authentication");
        return -1;
    }
    memcpy(cn, line + 5, 32);
    memcpy(mac, line + 38, 64);
    if (om_hex_decode(cn, raw, 16) || om_hex_decode(mac, raw, 32)) {
        om_peer_log("malformed authentication line");
        om_peer_send_line(ctl, "ERR malformed authentication");
        return -1;
    }
    om_peer_mac(secret, "client", sn, cn, want);
    if (!om_peer_same_mac(mac, want)) {
        om_peer_log("authentication failed (wrong secret)");
        om_peer_send_line(ctl, "ERR authentication failed");
        return -1;
    }
    om_peer_mac(secret, "server", sn, cn, proof);
    return 0;
}

const char om_peer_busy_reason[] = "another client's session is running (this peer serves "
                                  "one client at a time); try again when it ends";

/* The one session slot of `serve`, shared with the listener (NULL: the local far end,
 * whose connection is the only one).  A connection takes it only once authenticated. */
static pid_t *session_owner;

static int take_session(void)
{
    pid_t none = 0;
    return !session_owner ||
           om_cas(session_owner, &none, getpid());
}

/* Free the slot, if this connection holds it, before the session's last answer: a client
 * that connects again as soon as it has read "OK bye" must not be told busy because the
 * listener has not yet reaped this process. */
static void end_session(void)
{
    pid_t me = getpid();
    if (session_owner)
        om_cas(session_owner, &me, 0);
}

static int serve_session(int ctl, const char *secret, const struct om_peer_limits *lim);

int om_peer_session(int ctl, const char *secret, const struct om_peer_limits *lim)
{
    int rc = serve_session(ctl, secret, lim);
    end_session(); /* before exit closes the connection: a client that waits for EOF is safe */
    return rc;
}

static int serve_session(int ctl, const char *secret, const struct om_peer_limits *lim)
{
    session_ctl = ctl;
    session_left = lim->max_bytes;
    session_quiet = lim->quiet;
    session_owner = lim->session_owner;
    socklen_t len = sizeof session_client;
    if (getpeername(ctl, (struct sockaddr *)&session_client, &len))
        return 1;
    char who[80];
    om_sock_format(&session_client, who, sizeof who);
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
        om_peer_log("session from %s refused", who);
        return 2;
    }
    if (!take_session()) {
        om_peer_send_line(ctl, "BUSY %s", om_peer_busy_reason);
        om_peer_log("turned away %s after authentication: a session is running", who);
        return 0;
    }
    if (om_peer_send_line(ctl, "OK %s", proof))
        return 2;
    om_peer_log("session from %s authenticated", who);
    char line[OM_PEER_LINE];
    for (;;) {
        int n = om_peer_read_line(ctl, line, sizeof line, 120000);
        if (n < 0) {
            om_peer_log("session from %s ended (%s)", who,
                        n == -1 ? "client closed" : n == -2 ? "idle 120 s" : "line too long");
            return n == -1 ? 0 : 2;
        }
        if (strcmp(line, "QUIT") == 0) {
            end_session();
            om_peer_send_line(ctl, "OK bye");
            om_peer_log("session from %s ended (QUIT)", who);
            return 0;
        }
        size_t i, count = sizeof endpoints / sizeof endpoints[0];
        for (i = 0; i < count; i++) {
            size_t l = strlen(endpoints[i].name);
            if (strncmp(line, endpoints[i].name, l) == 0 && (line[l] == ' ' || !line[l]))
                break;
        }
        if (i == count) {
            end_session();
            om_peer_send_line(ctl, "ERR unknown request");
            om_peer_log("session from %s ended: unknown request", who);
            return 2;
        }
        if (endpoints[i].run(line)) {
            om_peer_log("session from %s ended after a failed %s", who, endpoints[i].name);
            return 2;
        }
    }
}
