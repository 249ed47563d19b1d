/*
 * Network family: pipe and UNIX-domain stream bandwidth (Lai & Baker's bw_pipe: 50 MB in
 * 64 KB chunks), UDP bandwidth over packet sizes ttcp-style (4 MB per iteration, what was
 * sent and what arrived), TCP bandwidth as Lai & Baker ran lmbench's bw_tcp (3 MB per
 * iteration through a 48 KB buffer: their setting; lmbench 3's default is one 64 KB message
 * per iteration, bw_tcp.c XFERSIZE) and swept over the buffer, and the round-trip and connection latencies
 * lmbench users expect.  Each UDP/TCP benchmark also exists with an ".ipv6" suffix.
 *
 * The far end of the UDP/TCP benchmarks is peer.c: with peer="" it is a forked child on
 * loopback, with peer=HOST:PORT it is `osmeter-core serve` on another host.  Both speak
 * the same authenticated protocol, so the local runs exercise the remote code path.
 *
 * Bandwidth: every transfer is timed from the first write until the far end confirms
 * (one byte back) that it has read every byte, so nothing still sitting in socket
 * buffers is counted as delivered.  Units: Mbit/s = 10^6 bits per second throughout, so
 * pipes, UNIX sockets, TCP and UDP compare directly with each other and with iperf3.
 *
 * One file, though long: the UDP and TCP benchmarks share the far end (a local child or
 * a peer, set up, called and closed the same way), and all of them the transfer and
 * round-trip loops; the protocol itself is servers/peer_protocol.c.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"
#include "../servers/peer.h"

#define MBIT(bytes, ns) ((double)(bytes) * 8.0 * 1e3 / (double)(ns)) /* 10^6 bit/s */
#define IO_TIMEOUT_MS 30000   /* a stream that stalls this long has failed */
#define DGRAM_TIMEOUT_MS 2000 /* an echo that takes this long was lost */

#ifndef SOCK_CLOEXEC /* macOS */
#define SOCK_CLOEXEC 0
#endif

/* ---- placement --------------------------------------------------------------------- */
/* pin=same (the default): both ends on one CPU, as on the studies' uniprocessors; the
 * two ends then take turns, so a bandwidth is the cost of copying in and out plus the
 * switches.  split: one CPU each, so they overlap (the two-CPU figure), but every wake-up
 * crosses CPUs, which on a VM can cost more than it saves.  none: the scheduler decides
 * (least repeatable).  The harness places them (om_place); a remote far end is placed
 * by its own scheduler. */

static char *alloc_buffer(size_t size)
{
    char *buf = malloc(size);
    if (buf)
        memset(buf, 'o', size); /* touched now, so no page faults inside the timing */
    return buf;
}

/* ---- timing helpers ----------------------------------------------------------------- */

/* A transfer of total bytes in chunk-sized writes; returns 0 and the elapsed ns. */
typedef int (*xfer_fn)(void *arg, long long total, size_t chunk, uint64_t *ns);

struct transfers {
    xfer_fn xfer;
    void *arg;
    long long total;
    size_t chunk;
    struct om_fault fault;
};

/* Self-timed batch of transfers: the sum of their times. */
static uint64_t timed_transfers(void *arg, uint64_t n)
{
    struct transfers *t = arg;
    uint64_t sum = 0, ns;
    for (uint64_t i = 0; i < n && !om_faulted(&t->fault); i++) {
        if (t->xfer(t->arg, t->total, t->chunk, &ns))
            om_record_fault(&t->fault, errno, NULL);
        else
            sum += ns;
    }
    return sum;
}

/* One warm-up transfer, then `samples` timed ones, each one sample in Mbit/s. */
static int bandwidth(struct om_ctx *ctx, const char *metric, long long x, xfer_fn xfer,
                     void *arg, long long total, size_t chunk)
{
    struct transfers t = {xfer, arg, total, chunk, {0, NULL}};
    char what[128];
    snprintf(what, sizeof what, "transfer of %lld bytes in %zu-byte writes failed", total, chunk);
    struct om_measure m = {.metric = metric, .x = x, .iters = 1, .self_timed = 1,
                           .rate = MBIT(total, 1), .fault = &t.fault, .what = what, .note = ""};
    return om_measure_batches(ctx, timed_transfers, &t, &m);
}

/* Round trips of one message; the batch function records a failed one, so nothing is
 * reported from a broken loop. */
struct round_trip {
    int fd;
    size_t size;
    char *buf;
    struct om_fault fault;
};

static void round_trip_failed(struct round_trip *rt, int err)
{
    if (err == EAGAIN || err == EWOULDBLOCK) /* the receive timeout */
        om_record_fault(&rt->fault, 0, "no answer in time (a datagram lost?)");
    else
        om_record_fault(&rt->fault, err, NULL);
}

static uint64_t rt_stream(void *arg, uint64_t n)
{
    struct round_trip *rt = arg;
    for (uint64_t i = 0; i < n; i++)
        if (om_write_full(rt->fd, rt->buf, rt->size) || om_read_full(rt->fd, rt->buf, rt->size)) {
            round_trip_failed(rt, errno ? errno : ECONNRESET);
            return i;
        }
    return n;
}

static uint64_t rt_dgram(void *arg, uint64_t n)
{
    struct round_trip *rt = arg;
    for (uint64_t i = 0; i < n; i++) {
        ssize_t s = send(rt->fd, rt->buf, rt->size, 0);
        ssize_t r = s == (ssize_t)rt->size ? recv(rt->fd, rt->buf, rt->size, 0) : -1;
        if (r != (ssize_t)rt->size) {
            round_trip_failed(rt, r < 0 ? errno : EMSGSIZE);
            return i;
        }
    }
    return n;
}

static int measure_round_trips(struct om_ctx *ctx, om_batch_fn fn, struct round_trip *rt)
{
    char what[64];
    snprintf(what, sizeof what, "a %zu-byte round trip failed", rt->size);
    struct om_measure m = {.metric = "round_trip", .fault = &rt->fault, .what = what};
    return om_measure_batches(ctx, fn, rt, &m);
}

/* ---- pipes and UNIX-domain sockets (always local) ----------------------------------- */

struct local_pair {
    int wr, ack; /* near end writes to wr, reads acknowledgements/echoes from ack */
    pid_t child;
};

/* The far end of a local bandwidth test: for each header {total, chunk} read total
 * bytes in chunk-sized reads and answer one byte; a zero total ends it. */
static void sink_child(int rd, int ack)
{
    long long h[2];
    char *buf = NULL;
    long long cap = 0;
    while (om_read_full(rd, h, sizeof h) == 0 && h[0] > 0) {
        if (h[1] > cap) {
            free(buf);
            if (!(buf = malloc((size_t)h[1])))
                _exit(1);
            cap = h[1];
        }
        if (om_sink_transfer(rd, ack, h[0], (size_t)h[1], buf))
            _exit(1);
    }
    _exit(0);
}

static void echo_child(int fd, size_t size)
{
    char *buf = malloc(size);
    while (buf && om_read_full(fd, buf, size) == 0 && om_write_full(fd, buf, size) == 0)
        ;
    _exit(0);
}

enum local_kind { LOCAL_PIPE, LOCAL_UNIX };

/* Fork the far end: echo > 0 makes it echo messages of that size, else it is a sink. */
static int local_open(struct om_ctx *ctx, enum local_kind kind, size_t echo,
                      const struct om_placement *pl, struct local_pair *lp)
{
    int a[2], b[2] = {-1, -1};
    if (kind == LOCAL_PIPE ? pipe(a) || pipe(b) : socketpair(AF_UNIX, SOCK_STREAM, 0, a))
        return om_fail(ctx, "%s: %s", kind == LOCAL_PIPE ? "pipe" : "socketpair",
                       strerror(errno));
    lp->child = om_fork();
    if (lp->child < 0)
        return om_fail(ctx, "fork: %s", strerror(errno));
    if (lp->child == 0) {
        if (om_place_far(pl))
            _exit(1);
        if (kind == LOCAL_UNIX) {
            close(a[0]);
            if (echo)
                echo_child(a[1], echo);
            sink_child(a[1], a[1]);
        }
        close(a[1]);
        close(b[0]);
        sink_child(a[0], b[1]);
    }
    if (kind == LOCAL_UNIX) {
        close(a[1]);
        lp->wr = lp->ack = a[0];
    } else {
        close(a[0]);
        close(b[1]);
        lp->wr = a[1];
        lp->ack = b[0];
    }
    return OM_OK;
}

static void local_close(struct local_pair *lp)
{
    long long end[2] = {0, 0};
    om_write_full(lp->wr, end, sizeof end);
    close(lp->wr);
    if (lp->ack != lp->wr)
        close(lp->ack);
    om_child_reap(lp->child, 2000, NULL);
}

struct local_xfer {
    struct local_pair *lp;
    char *buf;
};

static int local_transfer(void *arg, long long total, size_t chunk, uint64_t *ns)
{
    struct local_xfer *x = arg;
    long long h[2] = {total, (long long)chunk};
    if (om_write_full(x->lp->wr, h, sizeof h)) /* untimed: tells the reader what comes */
        return -1;
    uint64_t t0 = om_now_ns();
    int rc = om_send_transfer(x->lp->wr, x->lp->ack, total, chunk, x->buf);
    *ns = om_now_ns() - t0;
    return rc;
}

/* Bandwidth over a pipe or UNIX socket for each chunk size in `sizes`. */
static int local_bandwidth(struct om_ctx *ctx, enum local_kind kind, const long long *sizes,
                           int nsizes, int sweep)
{
    struct om_placement pl;
    int rc = om_place(ctx, 0, &pl);
    if (rc)
        return rc;
    long long total = om_int(ctx, "total"), maxchunk = 0;
    for (int i = 0; i < nsizes; i++)
        maxchunk = sizes[i] > maxchunk ? sizes[i] : maxchunk;
    struct local_pair lp;
    struct local_xfer x = {&lp, alloc_buffer((size_t)maxchunk)};
    if (!x.buf)
        return om_fail(ctx, "cannot allocate a %lld-byte buffer", maxchunk);
    if ((rc = local_open(ctx, kind, 0, &pl, &lp)) == OM_OK) {
        for (int i = 0; i < nsizes && rc == OM_OK; i++)
            rc = bandwidth(ctx, "bandwidth", sweep ? sizes[i] : OM_NO_X, local_transfer, &x,
                           total, (size_t)sizes[i]);
        local_close(&lp);
    }
    free(x.buf);
    return rc;
}

static int run_pipe_bw(struct om_ctx *ctx)
{
    long long chunk = om_int(ctx, "chunk");
    return local_bandwidth(ctx, LOCAL_PIPE, &chunk, 1, 0);
}

static int run_pipe_bw_sweep(struct om_ctx *ctx)
{
    long long chunks[OM_MAX_LIST];
    int n = om_list(ctx, "chunks", chunks);
    return local_bandwidth(ctx, LOCAL_PIPE, chunks, n, 1);
}

static int run_unix_bw(struct om_ctx *ctx)
{
    long long chunk = om_int(ctx, "chunk");
    return local_bandwidth(ctx, LOCAL_UNIX, &chunk, 1, 0);
}

static int run_unix_lat(struct om_ctx *ctx)
{
    struct om_placement pl;
    int rc = om_place(ctx, 0, &pl);
    if (rc)
        return rc;
    struct round_trip rt = {.size = (size_t)om_int(ctx, "size")};
    if (!(rt.buf = alloc_buffer(rt.size)))
        return om_fail(ctx, "cannot allocate %zu bytes", rt.size);
    struct local_pair lp;
    if ((rc = local_open(ctx, LOCAL_UNIX, rt.size, &pl, &lp)) == OM_OK) {
        rt.fd = lp.wr;
        om_sock_timeouts(rt.fd, IO_TIMEOUT_MS);
        rc = measure_round_trips(ctx, rt_stream, &rt);
        close(lp.wr); /* EOF ends the echo child */
        om_child_reap(lp.child, 2000, NULL);
    }
    free(rt.buf);
    return rc;
}

/* ---- the far end of UDP and TCP ---------------------------------------------------- */

struct far {
    int ctl;
    pid_t child;                  /* the local far end, or 0 for a peer */
    struct sockaddr_storage addr; /* the far end's address; data ports vary */
    socklen_t addrlen;
    char where[300];
};

static const char *family_name(int family) { return family == AF_INET6 ? "IPv6" : "IPv4"; }

static int connect_within(int fd, const struct sockaddr *sa, socklen_t len, int ms)
{
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = connect(fd, sa, len);
    if (rc && errno == EINPROGRESS) {
        struct pollfd p = {fd, POLLOUT, 0};
        int err = 0;
        socklen_t el = sizeof err;
        while ((rc = poll(&p, 1, ms)) < 0 && errno == EINTR)
            ;
        if (rc == 0) {
            errno = ETIMEDOUT;
            rc = -1;
        } else if (rc > 0) {
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
            errno = err;
            rc = err ? -1 : 0;
        }
    }
    int e = errno;
    fcntl(fd, F_SETFL, flags);
    errno = e;
    return rc;
}

/* A local far end: a child serving one session on a loopback listening socket. */
static int far_open_local(struct om_ctx *ctx, int family, const struct om_placement *pl,
                          struct far *f, char *secret)
{
    struct sockaddr_storage a;
    memset(&a, 0, sizeof a);
    a.ss_family = (sa_family_t)family;
    if (family == AF_INET6)
        ((struct sockaddr_in6 *)&a)->sin6_addr = in6addr_loopback;
    else
        ((struct sockaddr_in *)&a)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    int lfd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, len) || listen(lfd, 1) ||
        getsockname(lfd, (struct sockaddr *)&a, &len)) {
        int e = errno;
        if (lfd >= 0)
            close(lfd);
        if (family == AF_INET6)
            return om_skip(ctx, "no IPv6 loopback (%s [::1]: %s)", lfd < 0 ? "socket" : "bind",
                           strerror(e));
        return om_fail(ctx, "cannot listen on 127.0.0.1: %s", strerror(e));
    }
    if (om_peer_random_hex(secret, 32)) {
        close(lfd);
        return om_fail(ctx, "cannot read random bytes: %s", strerror(errno));
    }
    f->child = om_fork();
    if (f->child < 0) {
        close(lfd);
        return om_fail(ctx, "fork: %s", strerror(errno));
    }
    if (f->child == 0) {
        if (om_place_far(pl))
            _exit(1);
        struct pollfd p = {lfd, POLLIN, 0};
        int fd = poll(&p, 1, 10000) == 1 ? accept(lfd, NULL, NULL) : -1;
        close(lfd);
        if (fd < 0)
            _exit(1);
        struct om_peer_limits lim = {3600, 1LL << 50, 1}; /* the user runs both ends */
        _exit(om_peer_session(fd, secret, &lim));
    }
    f->ctl = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc = f->ctl < 0 ? -1 : connect_within(f->ctl, (struct sockaddr *)&a, len, 10000);
    int e = errno;
    close(lfd);
    if (rc)
        return om_fail(ctx, "cannot connect to the local far end: %s", strerror(e));
    f->addr = a;
    f->addrlen = len;
    snprintf(f->where, sizeof f->where, "a local child on %s loopback", family_name(family));
    return OM_OK;
}

static int far_open_peer(struct om_ctx *ctx, int family, const char *peer, struct far *f,
                         const char **secret)
{
    char host[256], port[16];
    int portnum;
    *secret = getenv(OM_PEER_SECRET_ENV);
    if (om_peer_parse_address(peer, host, sizeof host, &portnum) || portnum == 0)
        return om_bad_param(ctx, "peer '%s' is not HOST, HOST:PORT or [IPV6]:PORT", peer);
    if (!*secret || !**secret)
        return om_fail(ctx, "peer=%s needs the shared secret in $%s", peer, OM_PEER_SECRET_ENV);
    snprintf(port, sizeof port, "%d", portnum);
    struct addrinfo hints = {.ai_family = family, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV}, *ai;
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai) {
        struct addrinfo any = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *ai2;
        if (getaddrinfo(host, port, &any, &ai2) == 0) {
            freeaddrinfo(ai2);
            return om_skip(ctx, "peer %s has no %s address", host, family_name(family));
        }
        return om_fail(ctx, "cannot resolve peer %s: %s", host, gai_strerror(gai));
    }
    memcpy(&f->addr, ai->ai_addr, ai->ai_addrlen);
    f->addrlen = ai->ai_addrlen;
    freeaddrinfo(ai);
    f->ctl = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (f->ctl < 0 || connect_within(f->ctl, (struct sockaddr *)&f->addr, f->addrlen, 10000))
        return om_fail(ctx, "cannot reach peer %s over %s: %s", peer, family_name(family),
                       strerror(errno));
    snprintf(f->where, sizeof f->where, "peer %s", peer);
    return OM_OK;
}

static int far_open(struct om_ctx *ctx, int family, const struct om_placement *pl, struct far *f)
{
    const char *peer = om_str(ctx, "peer");
    char local_secret[65];
    const char *secret = local_secret;
    memset(f, 0, sizeof *f);
    f->ctl = -1;
    int rc = *peer ? far_open_peer(ctx, family, peer, f, &secret)
                   : far_open_local(ctx, family, pl, f, local_secret);
    if (rc)
        return rc;
    int one = 1;
    setsockopt(f->ctl, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char err[300];
    if (om_peer_handshake(f->ctl, secret, err, sizeof err))
        return om_fail(ctx, "%s: %s", f->where, err);
    om_note(ctx, "far_end", "%s", f->where);
    return OM_OK;
}

/* Send one request line and read the answer; an ERR answer fails the benchmark. */
static int far_call(struct om_ctx *ctx, struct far *f, char *reply, size_t len, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));
static int far_call(struct om_ctx *ctx, struct far *f, char *reply, size_t len, const char *fmt,
                    ...)
{
    if (fmt) {
        char line[OM_PEER_LINE];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(line, sizeof line - 1, fmt, ap);
        va_end(ap);
        line[n++] = '\n';
        if (om_write_full(f->ctl, line, (size_t)n))
            return om_fail(ctx, "%s: cannot send a request: %s", f->where, strerror(errno));
    }
    int n = om_peer_read_line(f->ctl, reply, len, IO_TIMEOUT_MS);
    if (n < 0)
        return om_fail(ctx, "%s: %s", f->where,
                       n == -2 ? "no answer within 30 s" : "the far end closed the connection");
    if (strncmp(reply, "ERR", 3) == 0)
        return om_fail(ctx, "%s: %s", f->where, reply + (reply[3] ? 4 : 3));
    return OM_OK;
}

/* A data socket connected to the port the far end opened. */
static int far_connect(struct om_ctx *ctx, struct far *f, int type, const char *port_reply,
                       int *fd)
{
    int port;
    if (sscanf(port_reply, "PORT %d", &port) != 1 || port <= 0 || port > 65535)
        return om_fail(ctx, "%s: unexpected answer '%s'", f->where, port_reply);
    struct sockaddr_storage a = f->addr;
    om_sock_set_port(&a, port);
    *fd = socket(a.ss_family, type | SOCK_CLOEXEC, 0);
    if (*fd < 0 || connect_within(*fd, (struct sockaddr *)&a, f->addrlen, 10000))
        return om_fail(ctx, "%s: data connection to port %d: %s", f->where, port,
                       strerror(errno));
    /* a lost datagram should fail a latency run soon, not after the stream timeout */
    om_sock_timeouts(*fd, type == SOCK_DGRAM ? DGRAM_TIMEOUT_MS : IO_TIMEOUT_MS);
    return OM_OK;
}

static void far_close(struct far *f)
{
    char reply[OM_PEER_LINE];
    if (f->ctl >= 0) {
        if (om_write_full(f->ctl, "QUIT\n", 5) == 0)
            om_peer_read_line(f->ctl, reply, sizeof reply, 5000);
        close(f->ctl);
    }
    if (f->child > 0)
        om_child_reap(f->child, 2000, NULL);
}

/* Placement and the far end, for every UDP/TCP benchmark. */
static int far_setup(struct om_ctx *ctx, int family, struct far *f)
{
    struct om_placement pl;
    int rc = om_place(ctx, *om_str(ctx, "peer") != 0, &pl);
    if (rc)
        return rc;
    rc = far_open(ctx, family, &pl, f);
    if (rc)
        far_close(f);
    return rc;
}

/* ---- TCP ----------------------------------------------------------------------------- */

struct tcp_xfer {
    int fd;
    char *buf;
};

/* Nagle stays on while the data is written (system defaults, as bw_tcp and iperf3 run),
 * but the tail is pushed with TCP_NODELAY before waiting for the answer: otherwise the
 * last partial segment waits for the receiver's delayed ACK (40 ms on Linux), which is
 * an artefact of ending a finite transfer, not bandwidth. */
static int tcp_transfer(void *arg, long long total, size_t chunk, uint64_t *ns)
{
    struct tcp_xfer *x = arg;
    int on = 1, off = 0;
    char ack;
    uint64_t t0 = om_now_ns();
    int rc = om_send_data(x->fd, total, chunk, x->buf);
    if (rc == 0)
        rc = setsockopt(x->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    if (rc == 0)
        rc = om_read_full(x->fd, &ack, 1);
    *ns = om_now_ns() - t0;
    if (rc == 0)
        rc = setsockopt(x->fd, IPPROTO_TCP, TCP_NODELAY, &off, sizeof off);
    return rc;
}

static int tcp_bandwidth(struct om_ctx *ctx, int family, const long long *bufs, int n, int sweep)
{
    struct far f;
    int rc = far_setup(ctx, family, &f);
    if (rc)
        return rc;
    long long total = om_int(ctx, "total"), samples = om_int(ctx, "samples"), maxbuf = 0;
    for (int i = 0; i < n; i++)
        maxbuf = bufs[i] > maxbuf ? bufs[i] : maxbuf;
    struct tcp_xfer x = {-1, alloc_buffer((size_t)maxbuf)};
    if (!x.buf)
        rc = om_fail(ctx, "cannot allocate a %lld-byte buffer", maxbuf);
    om_note(ctx, "socket_buffers", "system defaults (autotuned); buffer = bytes per "
                                   "write()/read() call; Nagle on, tail pushed with TCP_NODELAY");
    char reply[OM_PEER_LINE];
    for (int i = 0; i < n && rc == OM_OK; i++) {
        /* One connection per buffer size: warm-up + samples transfers of total bytes. */
        rc = far_call(ctx, &f, reply, sizeof reply, "TCP_SINK %lld %lld %lld", bufs[i], total,
                      samples + 1);
        if (rc == OM_OK)
            rc = far_connect(ctx, &f, SOCK_STREAM, reply, &x.fd);
        if (rc == OM_OK) {
            rc = bandwidth(ctx, "bandwidth", sweep ? bufs[i] : OM_NO_X, tcp_transfer, &x, total,
                           (size_t)bufs[i]);
            close(x.fd);
            if (rc == OM_OK)
                rc = far_call(ctx, &f, reply, sizeof reply, NULL);
        }
    }
    free(x.buf);
    far_close(&f);
    return rc;
}

static int tcp_bw(struct om_ctx *ctx, int family)
{
    long long buf = om_int(ctx, "buffer");
    return tcp_bandwidth(ctx, family, &buf, 1, 0);
}

static int tcp_bw_sweep(struct om_ctx *ctx, int family)
{
    long long bufs[OM_MAX_LIST];
    int n = om_list(ctx, "buffers", bufs);
    return tcp_bandwidth(ctx, family, bufs, n, 1);
}

static int tcp_lat(struct om_ctx *ctx, int family)
{
    struct far f;
    int rc = far_setup(ctx, family, &f);
    if (rc)
        return rc;
    struct round_trip rt = {.fd = -1, .size = (size_t)om_int(ctx, "size")};
    char reply[OM_PEER_LINE];
    if (!(rt.buf = alloc_buffer(rt.size)))
        rc = om_fail(ctx, "cannot allocate %zu bytes", rt.size);
    if (rc == OM_OK)
        rc = far_call(ctx, &f, reply, sizeof reply, "TCP_ECHO %zu", rt.size);
    if (rc == OM_OK && (rc = far_connect(ctx, &f, SOCK_STREAM, reply, &rt.fd)) == OM_OK) {
        int one = 1;
        setsockopt(rt.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        om_note(ctx, "tcp_nodelay", "set on both ends");
        rc = measure_round_trips(ctx, rt_stream, &rt);
        close(rt.fd); /* EOF ends the echo */
        if (rc == OM_OK)
            rc = far_call(ctx, &f, reply, sizeof reply, NULL);
    }
    free(rt.buf);
    far_close(&f);
    return rc;
}

/* Time connect() of fresh sockets to a port where the far end accepts and closes.  The
 * near end closes with an RST (SO_LINGER 0), untimed, so no TIME_WAIT state piles up
 * and the ephemeral port range is not exhausted; every 100 connections it waits until
 * the far end has drained its accept queue, so the queue never overflows (an overflow
 * would cost a 1 s SYN retransmission, not a connection set-up). */
static int tcp_connect(struct om_ctx *ctx, int family)
{
    struct far f;
    int rc = far_setup(ctx, family, &f);
    if (rc)
        return rc;
    char reply[OM_PEER_LINE];
    rc = far_call(ctx, &f, reply, sizeof reply, "TCP_ACCEPT");
    int port;
    if (rc == OM_OK && sscanf(reply, "PORT %d", &port) != 1)
        rc = om_fail(ctx, "%s: unexpected answer '%s'", f.where, reply);
    struct sockaddr_storage a = f.addr;
    if (rc == OM_OK)
        om_sock_set_port(&a, port);
    long long per = om_int(ctx, "connections"), samples = om_int(ctx, "samples"), made = 0;
    double overhead = om_timer_overhead_ns();
    struct linger rst = {1, 0};
    for (long long s = -1; s < samples && rc == OM_OK; s++) { /* s = -1: warm-up */
        double sum = 0;
        for (long long i = 0; i < per && rc == OM_OK; i++) {
            int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fd < 0) {
                rc = om_fail(ctx, "socket: %s", strerror(errno));
                break;
            }
            uint64_t t0 = om_now_ns();
            int c = connect(fd, (struct sockaddr *)&a, f.addrlen);
            uint64_t t1 = om_now_ns();
            int e = errno;
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof rst);
            close(fd);
            if (c)
                rc = om_fail(ctx, "connect to %s port %d: %s", f.where, port, strerror(e));
            sum += (double)(t1 - t0) - overhead;
            if (++made % 100 == 0 && rc == OM_OK)
                rc = far_call(ctx, &f, reply, sizeof reply, "SYNC");
        }
        if (rc == OM_OK && sum <= 0)
            rc = om_fail(ctx, "%lld connections took no measurable time", per);
        if (rc == OM_OK && s >= 0)
            om_sample(ctx, "connect", OM_NO_X, sum / (double)per);
    }
    if (rc == OM_OK && (rc = far_call(ctx, &f, reply, sizeof reply, "END")) == OM_OK)
        om_note(ctx, "connections", "%lld made, far end accepted %s", made, reply + 3);
    far_close(&f);
    return rc;
}

/* ---- UDP ----------------------------------------------------------------------------- */

static long long max_udp_payload(int family) { return family == AF_INET6 ? 65527 : 65507; }

struct udp_result {
    long long sent, received;
    double sent_mbit, received_mbit, loss_pct;
};

/* One ttcp-style transfer: `count` datagrams of `size` bytes as fast as send() takes
 * them, then zero-length end markers (repeated, since a full receive buffer drops them
 * too) until the far end reports what arrived.  The far end times from the first to the
 * last arrival, so "received" is the rate at which data actually arrived. */
static int udp_transfer(struct om_ctx *ctx, struct far *f, long long size, long long count,
                        char *buf, struct udp_result *res)
{
    char reply[OM_PEER_LINE];
    int fd, rcvbuf = 0, rc = far_call(ctx, f, reply, sizeof reply, "UDP_SINK %lld %lld", size,
                                      count);
    if (rc || (rc = far_connect(ctx, f, SOCK_DGRAM, reply, &fd)))
        return rc;
    static long long noted_size;
    int sndbuf = 0, own_rcvbuf = 0;
    om_sock_fit_datagram(fd, size, &sndbuf, &own_rcvbuf);
    if (noted_size != size) { /* once per datagram size */
        noted_size = size;
        if (sscanf(reply, "PORT %*d %d", &rcvbuf) == 1)
            om_note(ctx, "far_receive_buffer", "%lld-byte datagrams: %d bytes (the far end's "
                    "default, or two datagrams where that is less)", size, rcvbuf);
        om_note(ctx, "send_buffer", "%lld-byte datagrams: %d bytes (the system's default, or "
                "one datagram where that is less)", size, sndbuf);
    }
    long long sent = 0, retries = 0;
    uint64_t t0 = om_now_ns();
    while (sent < count) {
        ssize_t n = send(fd, buf, (size_t)size, 0);
        if (n == size) {
            sent++;
        } else if (n < 0 && (errno == ENOBUFS || errno == EAGAIN || errno == EINTR)) {
            /* the interface queue is full (BSD): try again, as ttcp does */
            if (++retries % 1024 == 0 && om_now_ns() - t0 > 60000000000ULL) {
                close(fd);
                return om_fail(ctx, "send: %s for 60 s", strerror(errno));
            }
            sched_yield();
        } else {
            int e = n < 0 ? errno : EMSGSIZE;
            close(fd);
            return om_fail(ctx, "send of a %lld-byte datagram: %s (send buffer %d bytes)", size,
                           strerror(e), sndbuf);
        }
    }
    uint64_t t1 = om_now_ns();
    for (int i = 0; i < 500; i++) {
        if (send(fd, buf, 0, 0) < 0 && errno == ECONNREFUSED)
            break; /* the far end closed its socket: it has finished */
        struct pollfd p = {f->ctl, POLLIN, 0};
        if (poll(&p, 1, 10) != 0)
            break;
    }
    close(fd);
    long long got, bytes;
    unsigned long long span;
    if ((rc = far_call(ctx, f, reply, sizeof reply, NULL)))
        return rc;
    if (sscanf(reply, "OK %lld %lld %llu", &got, &bytes, &span) != 3)
        return om_fail(ctx, "%s: unexpected answer '%s'", f->where, reply);
    res->sent = sent;
    res->received = got;
    res->sent_mbit = MBIT(sent * size, t1 - t0 ? t1 - t0 : 1);
    /* got datagrams arrived over span ns: the first one opens the interval. */
    res->received_mbit = got >= 2 && span > 0 ? MBIT((double)bytes * (double)(got - 1) / (double)got, span)
                         : got == 1          ? MBIT(bytes, t1 - t0 ? t1 - t0 : 1)
                                             : 0.0;
    res->loss_pct = 100.0 * (double)(sent - got) / (double)sent;
    return OM_OK;
}

static int udp_ttcp(struct om_ctx *ctx, int family)
{
    long long sizes[OM_MAX_LIST];
    int n = om_list(ctx, "sizes", sizes);
    long long total = om_int(ctx, "total"), samples = om_int(ctx, "samples");
    long long maxp = max_udp_payload(family);
    for (int i = 0; i < n; i++)
        if (sizes[i] > maxp) {
            om_note(ctx, "clamped", "%lld-byte datagrams sent as %lld, the largest UDP "
                                    "payload over %s", sizes[i], maxp, family_name(family));
            sizes[i] = maxp;
        }
    struct far f;
    int rc = far_setup(ctx, family, &f);
    if (rc)
        return rc;
    char *buf = alloc_buffer(65536);
    if (!buf)
        rc = om_fail(ctx, "cannot allocate 64 KB");
    struct udp_result r = {0};
    for (int i = 0; i < n && rc == OM_OK; i++) {
        if (i > 0 && sizes[i] == sizes[i - 1])
            continue;
        long long count = (total + sizes[i] - 1) / sizes[i];
        for (long long s = i == 0 ? -1 : 0; s < samples && rc == OM_OK; s++) {
            rc = udp_transfer(ctx, &f, sizes[i], count, buf, &r);
            if (rc == OM_OK && s >= 0) {
                om_sample(ctx, "sent", sizes[i], r.sent_mbit);
                om_sample(ctx, "received", sizes[i], r.received_mbit);
                om_sample(ctx, "loss", sizes[i], r.loss_pct);
                if (r.received == 0)
                    om_note(ctx, "nothing_arrived", "%lld-byte datagrams: none of %lld arrived "
                            "(a firewall, or a far end that never ran)", sizes[i], r.sent);
            }
        }
    }
    free(buf);
    far_close(&f);
    return rc;
}

static int udp_lat(struct om_ctx *ctx, int family)
{
    struct round_trip rt = {.fd = -1, .size = (size_t)om_int(ctx, "size")};
    if ((long long)rt.size > max_udp_payload(family))
        return om_bad_param(ctx, "size %zu is larger than a UDP datagram over %s can be",
                            rt.size, family_name(family));
    struct far f;
    int rc = far_setup(ctx, family, &f);
    if (rc)
        return rc;
    char reply[OM_PEER_LINE];
    if (!(rt.buf = alloc_buffer(rt.size)))
        rc = om_fail(ctx, "cannot allocate %zu bytes", rt.size);
    if (rc == OM_OK)
        rc = far_call(ctx, &f, reply, sizeof reply, "UDP_ECHO %zu", rt.size);
    if (rc == OM_OK && (rc = far_connect(ctx, &f, SOCK_DGRAM, reply, &rt.fd)) == OM_OK) {
        int sndbuf = 0, rcvbuf = 0;
        om_sock_fit_datagram(rt.fd, (long long)rt.size, &sndbuf, &rcvbuf);
        om_note(ctx, "socket_buffers", "send %d, receive %d bytes (the system's defaults, or "
                "what a %zu-byte datagram needs where they are less)", sndbuf, rcvbuf, rt.size);
        rc = measure_round_trips(ctx, rt_dgram, &rt);
        for (int i = 0; i < 500; i++) { /* end markers until the far end answers */
            if (send(rt.fd, rt.buf, 0, 0) < 0 && errno == ECONNREFUSED)
                break;
            struct pollfd p = {f.ctl, POLLIN, 0};
            if (poll(&p, 1, 10) != 0)
                break;
        }
        close(rt.fd);
        int end = far_call(ctx, &f, reply, sizeof reply, NULL);
        rc = rc ? rc : end;
    }
    free(rt.buf);
    far_close(&f);
    return rc;
}

/* One run function per id and family. */
#define BOTH_FAMILIES(fn)                                                                  \
    static int run_##fn(struct om_ctx *ctx) { return fn(ctx, AF_INET); }                   \
    static int run_##fn##_v6(struct om_ctx *ctx) { return fn(ctx, AF_INET6); }
BOTH_FAMILIES(tcp_bw)
BOTH_FAMILIES(tcp_bw_sweep)
BOTH_FAMILIES(tcp_lat)
BOTH_FAMILIES(tcp_connect)
BOTH_FAMILIES(udp_ttcp)
BOTH_FAMILIES(udp_lat)

/* ---- the table ----------------------------------------------------------------------- */

#define PIN_PARAM                                                                          \
    {"pin", OM_CHOICE, "same", NULL, NULL, 0, 0, "same|split|none",                        \
     "same: both ends on one CPU (the studies' uniprocessors); split: one CPU each; "      \
     "none: the scheduler decides"}
#define PEER_PARAM                                                                         \
    {"peer", OM_STR, "", NULL, NULL, 0, 0, NULL,                                           \
     "far end: '' = a local child on loopback, or HOST:PORT of 'osmeter serve' (secret in " \
     "$" OM_PEER_SECRET_ENV ")"}
#define BW_SAMPLES(def, quick, smoke)                                                      \
    {"samples", OM_INT, def, quick, smoke, 1, 1000, NULL,                                  \
     "timed transfers (each one sample), after one untimed warm-up transfer"}
#define BW_METRIC(help)                                                                    \
    {{"bandwidth", "Mbit/s", "higher", OM_POINT, NULL, help " (Mbit/s = 10^6 bit/s)"}}
#define BW_SWEEP(xname, help)                                                              \
    {{"bandwidth", "Mbit/s", "higher", OM_SWEEP, xname, help " (Mbit/s = 10^6 bit/s)"}}
#define RT_METRIC(help) {{"round_trip", "ns", "lower", OM_POINT, NULL, help}}

#define TCP_BW(id, fn, suites, est_def, est_quick, est_smoke)                              \
    {id, "TCP bandwidth: 3 MB per transfer through a 48 KB buffer (Lai & Baker's bw_tcp)", \
     "LB96 §9.3 T5; lmbench bw_tcp", suites, {est_def, est_quick, est_smoke}, fn,          \
     {{"total", OM_INT, "3m", NULL, "256k", 1, 1LL << 30, NULL, "bytes per transfer"},     \
      {"buffer", OM_INT, "48k", NULL, NULL, 1, 16LL << 20, NULL,                           \
       "bytes per write()/read() call; socket buffers are the system's defaults"},        \
      BW_SAMPLES("10", "5", "2"), PIN_PARAM, PEER_PARAM},                                  \
     BW_METRIC("from the first write until the far end confirms it read every byte")}
#define TCP_BW_SWEEP(id, fn, est_def, est_quick, est_smoke)                                \
    {id, "TCP bandwidth swept over the write()/read() buffer size", "osmeter; LB96 §9.3",  \
     "full", {est_def, est_quick, est_smoke}, fn,                                          \
     {{"total", OM_INT, "3m", "1m", "64k", 1, 1LL << 30, NULL, "bytes per transfer"},      \
      {"buffers", OM_LIST, "1k,4k,16k,48k,64k,256k,1m", "4k,48k,256k", "4k,64k", 1,        \
       16LL << 20, NULL, "bytes per write()/read() call"},                                 \
      BW_SAMPLES("5", "3", "1"), PIN_PARAM, PEER_PARAM},                                   \
     BW_SWEEP("buffer_bytes", "TCP bandwidth per buffer size")}
#define TCP_LAT(id, fn, suites, est_def, est_quick, est_smoke)                             \
    {id, "TCP round trip of a 1-byte message on a connected socket (lmbench lat_tcp)",     \
     "lmbench lat_tcp", suites, {est_def, est_quick, est_smoke}, fn,                       \
     {OM_BATCH_PARAMS, {"size", OM_INT, "1", NULL, NULL, 1, 1 << 20, NULL, "message bytes"}, \
      PIN_PARAM, PEER_PARAM},                                                              \
     RT_METRIC("one message there and back (TCP_NODELAY)")}
#define TCP_CONNECT(id, fn, suites, est_def, est_quick, est_smoke)                         \
    {id, "TCP connection set-up: connect() of a fresh socket (lmbench lat_connect)",       \
     "lmbench lat_connect", suites, {est_def, est_quick, est_smoke}, fn,                   \
     {{"connections", OM_INT, "500", "200", "20", 1, 100000, NULL,                         \
       "connections per sample (the sample is their mean)"},                               \
      BW_SAMPLES("10", "5", "2"), PIN_PARAM, PEER_PARAM},                                  \
     {{"connect", "ns", "lower", OM_POINT, NULL,                                           \
       "time for connect() to return (three-way handshake); socket() and close() untimed"}}}
#define UDP_TTCP(id, fn, suites, est_def, est_quick, est_smoke)                            \
    {id, "UDP bandwidth ttcp-style over datagram sizes: sent, received and lost",          \
     "LB96 §9.2 Fig 13 (ttcp)", suites, {est_def, est_quick, est_smoke}, fn,               \
     {{"sizes", OM_LIST, "64,128,256,512,1k,2k,4k,8k,16k,32k,64k", "64,1k,8k,64k", "64,8k", \
       1, 65536, NULL, "UDP payload bytes per datagram (64k = the largest datagram)"},     \
      {"total", OM_INT, "4m", "1m", "64k", 1, 1LL << 30, NULL,                             \
       "bytes sent per transfer (rounded up to whole datagrams)"},                         \
      BW_SAMPLES("5", "2", "1"), PIN_PARAM, PEER_PARAM},                                   \
     {{"sent", "Mbit/s", "higher", OM_SWEEP, "datagram_bytes",                             \
       "payload handed to send() per second of sending (Mbit/s = 10^6 bit/s)"},            \
      {"received", "Mbit/s", "higher", OM_SWEEP, "datagram_bytes",                         \
       "payload that arrived, over the far end's first-to-last arrival time"},             \
      {"loss", "%", "lower", OM_SWEEP, "datagram_bytes", "datagrams sent that never arrived"}}}
#define UDP_LAT(id, fn, suites, est_def, est_quick, est_smoke)                             \
    {id, "UDP round trip of a 1-byte datagram (lmbench lat_udp)", "lmbench lat_udp",       \
     suites, {est_def, est_quick, est_smoke}, fn,                                          \
     {OM_BATCH_PARAMS, {"size", OM_INT, "1", NULL, NULL, 1, 65527, NULL, "datagram bytes"}, \
      PIN_PARAM, PEER_PARAM},                                                              \
     RT_METRIC("one datagram there and back")}

const struct om_bench om_family_net[] = {
    {"net.pipe_bw", "pipe bandwidth: 50 MB in 64 KB chunks to a child (lmbench bw_pipe)",
     "LB96 §9.1 T4; lmbench bw_pipe", "quick,full,lb96", {0.05, 0.015, 0.0057}, run_pipe_bw,
     {{"total", OM_INT, "50m", "16m", "1m", 1, 1LL << 32, NULL, "bytes per transfer"},
      {"chunk", OM_INT, "64k", NULL, NULL, 1, 16LL << 20, NULL, "bytes per write()/read()"},
      BW_SAMPLES("5", "3", "2"), PIN_PARAM},
     BW_METRIC("from the first write until the reader confirms it read every byte")},
    {"net.pipe_bw_sweep", "pipe bandwidth swept over the write()/read() chunk size",
     "osmeter; LB96 §9.1", "full", {0.5, 0.048, 0.011}, run_pipe_bw_sweep,
     {{"total", OM_INT, "16m", "4m", "256k", 1, 1LL << 32, NULL, "bytes per transfer"},
      {"chunks", OM_LIST, "64,512,4k,16k,64k,256k,1m", "512,4k,64k,1m", "4k,64k", 1,
       16LL << 20, NULL, "bytes per write()/read() call"},
      BW_SAMPLES("3", "2", "1"), PIN_PARAM},
     BW_SWEEP("chunk_bytes", "pipe bandwidth per chunk size")},
    {"net.unix_bw", "UNIX-domain stream socket bandwidth: 50 MB in 64 KB chunks (bw_unix)",
     "lmbench bw_unix", "quick,full", {0.039, 0.013, 0.016}, run_unix_bw,
     {{"total", OM_INT, "50m", "16m", "1m", 1, 1LL << 32, NULL, "bytes per transfer"},
      {"chunk", OM_INT, "64k", NULL, NULL, 1, 16LL << 20, NULL, "bytes per write()/read()"},
      BW_SAMPLES("5", "3", "2"), PIN_PARAM},
     BW_METRIC("from the first write until the reader confirms it read every byte")},
    {"net.unix_lat", "UNIX-domain stream socket round trip of a 1-byte message (lat_unix)",
     "lmbench lat_unix", "quick,full", {0.23, 0.067, 0.008}, run_unix_lat,
     {OM_BATCH_PARAMS, {"size", OM_INT, "1", NULL, NULL, 1, 1 << 20, NULL, "message bytes"},
      PIN_PARAM},
     RT_METRIC("one message there and back")},
    UDP_TTCP("net.udp_ttcp", run_udp_ttcp, "quick,full,lb96", 3.8, 0.28, 0.033),
    UDP_TTCP("net.udp_ttcp.ipv6", run_udp_ttcp_v6, "full", 4.5, 0.29, 0.045),
    UDP_LAT("net.udp_lat", run_udp_lat, "quick,full", 0.31, 0.063, 0.014),
    UDP_LAT("net.udp_lat.ipv6", run_udp_lat_v6, "full", 0.32, 0.043, 0.026),
    TCP_BW("net.tcp_bw", run_tcp_bw, "quick,full,lb96", 0.036, 0.016, 0.05),
    TCP_BW("net.tcp_bw.ipv6", run_tcp_bw_v6, "full", 0.027, 0.027, 0.0087),
    TCP_BW_SWEEP("net.tcp_bw_sweep", run_tcp_bw_sweep, 0.093, 0.016, 0.015),
    TCP_BW_SWEEP("net.tcp_bw_sweep.ipv6", run_tcp_bw_sweep_v6, 0.13, 0.019, 0.0077),
    TCP_LAT("net.tcp_lat", run_tcp_lat, "quick,full", 0.095, 0.026, 0.032),
    TCP_LAT("net.tcp_lat.ipv6", run_tcp_lat_v6, "full", 0.11, 0.065, 0.031),
    TCP_CONNECT("net.tcp_connect", run_tcp_connect, "quick,full", 0.18, 0.039, 0.013),
    TCP_CONNECT("net.tcp_connect.ipv6", run_tcp_connect_v6, "full", 0.19, 0.084, 0.0068),
    {0},
};
