/*
 * Event notification and HTTP (von Leitner 2003): with N idle keep-alive connections
 * open to a server, how long until the server notices a new connection and accepts it
 * (net.http_connect), and how long it takes to answer a request on an established
 * connection (net.http_request), one point per N as N grows into the thousands.  The
 * server is osmeter's own (core/servers/httpd.c) in a child process, with a selectable event
 * mechanism; the client is this process, with blocking sockets and no event mechanism
 * of its own, so that only the server's notification can grow with N.
 *
 * "Notice and accept" is timed across the two processes: the client reads the cycle
 * counter just before connect(), the server reads it just after accept() returns and
 * puts the reading in shared memory; the difference is the handshake plus the
 * server's wake-up, its event wait returning and accept() — nothing the client does
 * afterwards (it blocks on a pipe that the server writes after its time stamp, so on
 * one CPU the server runs at once).  Before each timed point the client waits until
 * the server has accepted every earlier connection and is back in its event wait.
 *
 * The request is timed on the newest connection, after one untimed request on it
 * (so the server has registered it): send() of a GET until the last byte of the
 * response, with N idle connections and this one open.
 *
 * net.http_throughput: requests and bytes per second for a small and a large file,
 * many keep-alive connections driven by event-loop client processes.
 *
 * Per mechanism, one id each (net.http_connect.poll, .select; the base id uses the
 * best mechanism the system has: epoll, kqueue, else poll), so a plain suite run puts
 * epoll (or kqueue) beside poll and select on the same kernel.
 *
 * One file, though long: the curves and the throughput share the server child and the
 * HTTP client, which no other family needs; the server is core/servers/httpd.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../harness.h"
#include "../lib/ev.h"
#include "../servers/httpd.h"
#include "../lib/atomics.h"

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

#define READY_TIMEOUT_NS 10000000000ULL /* server start, and each quiet wait: 10 s */

/* ---- the server child ------------------------------------------------------------ */

struct server_child {
    pid_t pid;
    struct httpd_probe *probe; /* shared with the child */
    int notify_rd;             /* accept notifications, or -1 */
    struct sockaddr_storage addr;
    socklen_t addrlen;
    const char *mech;
};

static void *shared_alloc(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Is the server still running?  Reaps it if not (and forgets its pid, which is free
 * for reuse from then on). */
static int server_alive(struct server_child *sc)
{
    if (sc->pid > 0 && !om_child_exited(sc->pid, NULL))
        return 1;
    sc->pid = -1;
    return 0;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Generate the files, listen on loopback and fork the server; waits until it serves. */
static int start_server(struct om_ctx *ctx, struct server_child *sc, const char *mech,
                        const char *loopback, const long long *sizes, int nsizes,
                        int max_conns, int idle_s, const struct om_placement *pl,
                        int want_notify)
{
    char err[512], dir[PATH_MAX];
    memset(sc, 0, sizeof *sc);
    sc->pid = -1;
    sc->notify_rd = -1;
    sc->mech = mech;
    const char *scratch = om_scratch_dir(); /* before the fork: the parent owns it */
    if (!scratch)
        return om_fail(ctx, "cannot create a scratch directory: %s", strerror(errno));
    snprintf(dir, sizeof dir, "%s/www", scratch);
    if (httpd_make_files(dir, sizes, nsizes, err, sizeof err))
        return om_fail(ctx, "%s", err);
    int lfd = httpd_listen(loopback, 0, err, sizeof err);
    if (lfd < 0)
        return om_skip(ctx, "no TCP on loopback %s: %s%s", loopback, err,
                       strchr(loopback, ':') ? " (try ip=4)" : "");
    sc->addrlen = sizeof sc->addr;
    int pfd[2] = {-1, -1};
    if (getsockname(lfd, (struct sockaddr *)&sc->addr, &sc->addrlen) ||
        !(sc->probe = shared_alloc(sizeof *sc->probe)) || (want_notify && pipe(pfd))) {
        int e = errno;
        close(lfd);
        return om_fail(ctx, "server set-up: %s", strerror(e));
    }
    sc->pid = om_fork();
    if (sc->pid < 0) {
        int e = errno;
        close(lfd);
        if (pfd[0] >= 0) {
            close(pfd[0]);
            close(pfd[1]);
        }
        return om_fail(ctx, "fork: %s", strerror(e));
    }
    if (sc->pid == 0) {
        if (om_place_far(pl)) /* the server is the far end; the clients stay near */
            _exit(1);
        if (pfd[0] >= 0)
            close(pfd[0]);
        struct httpd_config cfg = {
            .mech = mech,
            .listen_fd = lfd,
            .dir = dir,
            .max_conns = max_conns,
            .max_request = 8192,
            .idle_timeout_ms = idle_s * 1000,
            .request_timeout_ms = 10000,
            .write_timeout_ms = 10000,
            .duration_s = 0,
            .probe = sc->probe,
            .notify_fd = pfd[1],
        };
        int rc = httpd_serve(&cfg, err, sizeof err);
        if (rc)
            fprintf(stderr, "osmeter-core: http server: %s\n", err);
        _exit(rc ? 1 : 0);
    }
    close(lfd);
    if (pfd[1] >= 0)
        close(pfd[1]);
    sc->notify_rd = pfd[0];
    uint64_t t0 = om_now_ns();
    while (!om_load(&sc->probe->ready)) {
        if (!server_alive(sc) || om_now_ns() - t0 > READY_TIMEOUT_NS)
            return om_fail(ctx, "the %s server did not start (see stderr)", mech);
        sleep_us(1000);
    }
    return OM_OK;
}

static void stop_server(struct server_child *sc)
{
    if (sc->pid > 0)
        om_child_kill(sc->pid); /* first, so the server side keeps the TIME_WAITs */
    sc->pid = -1;
    if (sc->notify_rd >= 0)
        close(sc->notify_rd);
    sc->notify_rd = -1;
    if (sc->probe)
        munmap(sc->probe, sizeof *sc->probe);
    sc->probe = NULL;
}

/* ---- a blocking HTTP client ---------------------------------------------------------- */

/* A blocking TCP socket with its options set, so that nothing but connect() runs
 * between the timed points; a receive timeout turns a server that stopped answering
 * into an error. */
static int client_socket(int family)
{
    int fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    struct timeval tv = {10, 0};
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static int connect_or_close(int fd, const struct sockaddr_storage *a, socklen_t len)
{
    if (connect(fd, (const struct sockaddr *)a, len) == 0)
        return fd;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

static int connect_to(const struct sockaddr_storage *a, socklen_t len)
{
    int fd = client_socket(a->ss_family);
    return fd < 0 ? -1 : connect_or_close(fd, a, len);
}

/* Find the end of a response head in buf[0..len); parse status and Content-Length. */
static size_t response_head(const char *buf, size_t len, int *status, long long *clen)
{
    const char *end = NULL;
    for (size_t i = 3; i < len; i++)
        if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r') {
            end = buf + i + 1;
            break;
        }
    if (!end)
        return 0;
    *status = 0;
    *clen = -1;
    if (len >= 12 && memcmp(buf, "HTTP/1.", 7) == 0)
        *status = atoi(buf + 9);
    for (const char *p = buf; p < end; p++) {
        if (*p != '\n')
            continue;
        if ((size_t)(end - p) > 16 && strncasecmp(p + 1, "content-length:", 15) == 0)
            *clen = atoll(p + 16);
    }
    return (size_t)(end - buf);
}

/* Send one request and read its complete response; returns the body length (-1: error,
 * errno or *status tells). */
static long long exchange(int fd, const char *req, size_t rlen, char *buf, size_t cap,
                          int *status)
{
    *status = 0;
    if (om_write_full(fd, req, rlen))
        return -1;
    size_t have = 0, head = 0;
    long long clen = -1;
    while (!head) {
        if (have == cap) {
            errno = EMSGSIZE;
            return -1;
        }
        ssize_t n = recv(fd, buf + have, cap - have, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            if (n == 0)
                errno = ECONNRESET;
            return -1;
        }
        have += (size_t)n;
        head = response_head(buf, have, status, &clen);
    }
    if (clen < 0) {
        errno = EPROTO;
        return -1;
    }
    long long left = clen - (long long)(have - head);
    while (left > 0) {
        ssize_t n = recv(fd, buf, cap, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            if (n == 0)
                errno = ECONNRESET;
            return -1;
        }
        left -= n;
    }
    return left == 0 ? clen : -1;
}

/* ---- the idle-connection curves -------------------------------------------------------- */

/* Until the server has accepted `expect` connections and waits in its event loop. */
static int wait_quiet(struct om_ctx *ctx, struct server_child *sc, uint64_t expect)
{
    uint64_t t0 = om_now_ns();
    for (int spins = 0;; spins++) {
        uint64_t acc = om_load(&sc->probe->accepted);
        if (om_load_relaxed(&sc->probe->refused))
            return om_fail(ctx, "the server refused a connection (capacity %d)",
                           sc->probe->capacity);
        if (acc == expect && om_load(&sc->probe->waiting))
            return OM_OK;
        if (acc > expect)
            return om_fail(ctx, "the server accepted %llu connections, %llu expected",
                           (unsigned long long)acc, (unsigned long long)expect);
        if ((spins & 255) == 255 && (!server_alive(sc) || om_now_ns() - t0 > READY_TIMEOUT_NS))
            return om_fail(ctx, "the server stopped accepting (%llu of %llu connections)",
                           (unsigned long long)acc, (unsigned long long)expect);
        if (spins > 50)
            sleep_us(20); /* give a server on this CPU the processor */
    }
}

/* What the points of run_curve share: the server, the request and its buffer, the open
 * connections, and why the curve stopped before its last point (stopped: NULL if not;
 * ended: a connection the system refused ends it now). */
struct curve {
    struct server_child sc;
    char req[128];
    size_t rlen;
    long long size;
    char *buf;
    size_t bufcap;
    int *fds;
    long long nidle;
    uint64_t base; /* connections accepted before the curve */
    char stopbuf[256];
    const char *stopped;
    int ended;
};

static void curve_refused(struct curve *c, const char *call)
{
    snprintf(c->stopbuf, sizeof c->stopbuf, "%s: %s at %lld connections", call,
             strerror(errno), c->nidle);
    c->stopped = c->stopbuf;
    c->ended = 1;
}

/* How far the curve can go: max, or less where the descriptor limit or the server's
 * capacity says so (c->stopped then says which). */
static long long curve_cap(struct curve *c, long long max, long long nofile, const char *mech)
{
    long long cap = max, limit_by_fds = nofile - 16 - 1;
    if (cap > limit_by_fds) {
        cap = limit_by_fds;
        snprintf(c->stopbuf, sizeof c->stopbuf, "RLIMIT_NOFILE: %lld descriptors (%s) "
                 "allow %lld idle connections", nofile, om_limit_bound(RLIMIT_NOFILE), cap);
        c->stopped = c->stopbuf;
    }
    /* System-wide: the client and the server hold a descriptor each per connection
     * (NetBSD's default kern.maxfiles, 3404 with 2 GiB, ends a 2,000-connection curve). */
    char how[96];
    long long free_slots = om_free_file_slots(how, sizeof how);
    if (free_slots >= 0 && cap > free_slots / 2 - 32) {
        cap = free_slots / 2 - 32 > 0 ? free_slots / 2 - 32 : 0;
        snprintf(c->stopbuf, sizeof c->stopbuf, "%s: the system's free file slots allow "
                 "%lld idle connections (client and server hold one each)", how, cap);
        c->stopped = c->stopbuf;
    }
    if (cap > c->sc.probe->capacity - 1) {
        cap = c->sc.probe->capacity - 1;
        if (strcmp(mech, "select") == 0)
            snprintf(c->stopbuf, sizeof c->stopbuf, "select: FD_SETSIZE = %d descriptors, so "
                     "the server holds at most %d connections", FD_SETSIZE,
                     c->sc.probe->capacity);
        else
            snprintf(c->stopbuf, sizeof c->stopbuf, "server capacity: %d connections "
                     "(descriptor limit)", c->sc.probe->capacity);
        c->stopped = c->stopbuf;
    }
    return cap;
}

/* The idle population grown to x connections, untimed, and the server idle again. */
static int grow_idle(struct om_ctx *ctx, struct curve *c, long long x)
{
    int rc;
    while (c->nidle < x) {
        int fd = connect_to(&c->sc.addr, c->sc.addrlen);
        if (fd < 0) {
            curve_refused(c, "connect");
            return OM_OK;
        }
        c->fds[c->nidle++] = fd;
        /* Let a server on this CPU drain its accept queue before the queue fills
         * and the kernel starts dropping handshakes. */
        if (c->nidle % 512 == 0 && (rc = wait_quiet(ctx, &c->sc, c->base + (uint64_t)c->nidle)))
            return rc;
    }
    return wait_quiet(ctx, &c->sc, c->base + (uint64_t)c->nidle);
}

/* One point: a new connection timed from connect() until the server's accept() returned,
 * or (time_request) its second request timed; the cycles in *sample. */
static int timed_point(struct om_ctx *ctx, struct curve *c, int time_request, uint64_t *sample)
{
    int status, rc;
    int fd = client_socket(c->sc.addr.ss_family);
    if (fd < 0) {
        curve_refused(c, "socket");
        return OM_OK;
    }
    om_store(&c->sc.probe->armed, 1);
    uint64_t t0 = om_cycles();
    fd = connect_or_close(fd, &c->sc.addr, c->sc.addrlen);
    if (fd < 0) {
        curve_refused(c, "connect");
        return OM_OK;
    }
    c->fds[c->nidle++] = fd;
    char byte;
    if (read(c->sc.notify_rd, &byte, 1) != 1)
        return om_fail(ctx, "the server did not report the accept (it died?)");
    uint64_t acc = om_load(&c->sc.probe->accepted);
    uint64_t stamp = om_load_relaxed(&c->sc.probe->accept_cycles);
    if (acc != c->base + (uint64_t)c->nidle)
        return om_fail(ctx, "accept count %llu, expected %llu", (unsigned long long)acc,
                       (unsigned long long)(c->base + (uint64_t)c->nidle));
    /* One untimed request: the connection is registered and has been used. */
    long long got = exchange(fd, c->req, c->rlen, c->buf, c->bufcap, &status);
    if (got != c->size || status != 200)
        return om_fail(ctx, "request on connection %lld: status %d, %lld bytes (%s)", c->nidle,
                       status, got, got < 0 ? strerror(errno) : "wrong length");
    if (!time_request) {
        if (stamp < t0)
            return om_fail(ctx, "the server's accept time stamp precedes connect(): the "
                                "CPUs' cycle counters disagree; try pin=same");
        *sample = stamp - t0;
        return OM_OK;
    }
    if ((rc = wait_quiet(ctx, &c->sc, c->base + (uint64_t)c->nidle)))
        return rc;
    uint64_t t1 = om_cycles();
    got = exchange(fd, c->req, c->rlen, c->buf, c->bufcap, &status);
    uint64_t t2 = om_cycles();
    if (got != c->size || status != 200)
        return om_fail(ctx, "timed request: status %d, %lld bytes", status, got);
    *sample = t2 - t1;
    return OM_OK;
}

static int run_curve(struct om_ctx *ctx, int time_request)
{
    char why[256];
    const char *mech = ev_resolve(om_str(ctx, "mech"), why, sizeof why);
    if (!mech)
        return om_skip(ctx, "%s", why);
    struct curve c = {.size = om_int(ctx, "size"), .bufcap = 65536, .base = 1};
    long long max = om_int(ctx, "max"), step = om_int(ctx, "step");
    int idle_s = (int)om_int(ctx, "idle_timeout");
    om_cycles_init(ctx);

    /* This process holds every connection, the server one descriptor per connection:
     * both need the soft descriptor limit raised; a few stay spare for stdio and pipes. */
    long long nofile = om_raise_limit(RLIMIT_NOFILE);
    struct om_placement pl;
    int rc = om_place(ctx, 0, &pl);
    if (rc)
        return rc;
    rc = start_server(ctx, &c.sc, mech, om_str(ctx, "ip")[0] == '6' ? "::1" : "127.0.0.1",
                      &c.size, 1, (int)(max + 1), idle_s, &pl, 1);
    if (rc) {
        stop_server(&c.sc);
        return rc;
    }
    om_note(ctx, "mech", "%s", mech);
    om_note(ctx, "file_io", "%s", httpd_file_io());
    om_note(ctx, "server_capacity", "%d connections", c.sc.probe->capacity);
    om_note(ctx, "timed", "%s", time_request
            ? "send() of a GET to the last byte of its response, on the newest connection "
              "after one untimed request on it; the server idle in its event wait"
            : "the client's cycle counter just before connect() to the server's just after "
              "accept() returned (shared memory): handshake, wake-up, event wait, accept");
    long long cap = curve_cap(&c, max, nofile, mech);
    long long npoints = cap / step + 1;
    c.fds = malloc((size_t)(cap + 1) * sizeof *c.fds);
    uint64_t *cycles = malloc((size_t)npoints * sizeof *cycles);
    c.buf = malloc(c.bufcap);
    if (!c.fds || !cycles || !c.buf) {
        free(c.fds);
        free(cycles);
        free(c.buf);
        stop_server(&c.sc);
        return om_fail(ctx, "out of memory for %lld connections", cap);
    }
    c.rlen = (size_t)snprintf(c.req, sizeof c.req, "GET /file-%lld HTTP/1.1\r\nHost: "
                              "127.0.0.1\r\n\r\n", c.size);
    long long np = 0;
    uint64_t start = om_now_ns();
    /* Warm-up: one connection and request through every path, then closed. */
    int status, warm = connect_to(&c.sc.addr, c.sc.addrlen);
    long long got = warm < 0 ? -1 : exchange(warm, c.req, c.rlen, c.buf, c.bufcap, &status);
    if (warm >= 0)
        close(warm);
    if (got != c.size || status != 200) {
        stop_server(&c.sc);
        free(c.fds);
        free(cycles);
        free(c.buf);
        return om_fail(ctx, "warm-up request failed: status %d, %lld bytes", status, got);
    }
    sleep_us(10000); /* the server sees the close and waits again */
    for (long long x = 0; x <= cap; x += step) {
        if ((rc = grow_idle(ctx, &c, x)) || c.ended)
            break;
        if ((rc = timed_point(ctx, &c, time_request, &cycles[np])) || c.ended)
            break;
        np++;
    }
    if (rc == OM_OK && (om_now_ns() - start) / 1000000000ULL >= (uint64_t)idle_s)
        rc = om_fail(ctx, "the run outlasted the server's idle timeout (%d s): raise "
                          "idle_timeout", idle_s);
    stop_server(&c.sc);
    for (long long i = 0; i < c.nidle; i++)
        close(c.fds[i]);
    if (c.stopped && rc == OM_OK)
        om_note(ctx, "stopped_by", "%s", c.stopped);
    if (rc == OM_OK && np == 0)
        rc = om_fail(ctx, "no point measured (%s)", c.stopped ? c.stopped : "?");
    for (long long i = 0; rc == OM_OK && i < np; i++)
        om_sample(ctx, time_request ? "request" : "accept", i * step, om_cycles_to_ns(cycles[i]));
    free(c.fds);
    free(cycles);
    free(c.buf);
    return rc;
}

static int run_connect(struct om_ctx *ctx) { return run_curve(ctx, 0); }
static int run_request(struct om_ctx *ctx) { return run_curve(ctx, 1); }

/* ---- throughput ------------------------------------------------------------------------ */

#define MAX_CLIENTS 64
struct tp_shared {
    int stop;
    int connected; /* client processes with all their connections open */
    struct {
        uint64_t responses, bytes;
        char pad[48]; /* one cache line per client */
    } slot[MAX_CLIENTS];
    char error[256];
};

struct tconn {
    int fd, in_body;
    size_t head_len;
    long long body_left;
    char head[1024];
};

static void tp_error(struct tp_shared *sh, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void tp_error(struct tp_shared *sh, const char *fmt, ...)
{
    if (sh->error[0])
        return; /* the first error is the interesting one */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sh->error, sizeof sh->error, fmt, ap);
    va_end(ap);
}

/* One client process: `n` keep-alive connections, one outstanding request each. */
static int tp_client(struct tp_shared *sh, int me, const struct sockaddr_storage *addr,
                     socklen_t alen, int n, const char *req, long long expect)
{
    char err[256];
    size_t rlen = strlen(req);
    long long nofile = om_raise_limit(RLIMIT_NOFILE);
    struct ev *ev = ev_open(ev_best(), (int)(nofile < n + 64 ? nofile : n + 64), err, sizeof err);
    struct tconn *c = calloc((size_t)n, sizeof *c);
    int *index = ev ? malloc((size_t)ev_limit(ev) * sizeof *index) : NULL;
    char *buf = malloc(65536);
    if (!ev || !c || !index || !buf) {
        tp_error(sh, "client: %s", ev ? "out of memory" : err);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        c[i].fd = connect_to(addr, alen);
        if (c[i].fd < 0 || c[i].fd >= ev_limit(ev) || om_write_full(c[i].fd, req, rlen) ||
            fcntl(c[i].fd, F_SETFL, O_NONBLOCK) || ev_set(ev, c[i].fd, 1, 0, 1)) {
            tp_error(sh, "client connection %d: %s", i, strerror(errno));
            return 1;
        }
        index[c[i].fd] = i;
    }
    om_add(&sh->connected, 1);
    uint64_t responses = 0, bytes = 0;
    struct ev_event evs[256];
    while (!om_load(&sh->stop)) {
        int ne = ev_wait(ev, evs, 256, 50);
        if (ne < 0) {
            tp_error(sh, "client event wait: %s", strerror(errno));
            return 1;
        }
        for (int e = 0; e < ne; e++) {
            struct tconn *t = &c[index[evs[e].fd]];
            for (;;) {
                ssize_t got = recv(t->fd, buf, 65536, 0);
                if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                    break;
                if (got < 0 && errno == EINTR)
                    continue;
                if (got <= 0) {
                    tp_error(sh, "the server closed a connection after %lld responses (%s)",
                             (long long)responses, got ? strerror(errno) : "EOF");
                    return 1;
                }
                for (size_t off = 0; off < (size_t)got;) {
                    if (!t->in_body) { /* collect the head, then check it */
                        size_t take = (size_t)got - off;
                        if (take > sizeof t->head - t->head_len)
                            take = sizeof t->head - t->head_len;
                        memcpy(t->head + t->head_len, buf + off, take);
                        int status;
                        long long clen;
                        size_t h = response_head(t->head, t->head_len + take, &status, &clen);
                        if (!h) {
                            t->head_len += take;
                            off += take;
                            if (t->head_len == sizeof t->head) {
                                tp_error(sh, "response head over %zu bytes", sizeof t->head);
                                return 1;
                            }
                            continue;
                        }
                        if (status != 200 || clen != expect) {
                            tp_error(sh, "response status %d, length %lld (expected 200, %lld)",
                                     status, clen, expect);
                            return 1;
                        }
                        off += h - t->head_len;
                        t->head_len = 0;
                        t->in_body = 1;
                        t->body_left = clen;
                    }
                    long long take = (long long)((size_t)got - off);
                    if (take > t->body_left)
                        take = t->body_left;
                    t->body_left -= take;
                    off += (size_t)take;
                    bytes += (uint64_t)take;
                    if (t->body_left == 0) {
                        t->in_body = 0;
                        responses++;
                        if (off != (size_t)got) {
                            tp_error(sh, "%zu unexpected bytes after a response",
                                     (size_t)got - off);
                            return 1;
                        }
                        /* An empty send buffer takes a 60-byte request whole. */
                        if (send(t->fd, req, rlen, MSG_NOSIGNAL) != (ssize_t)rlen) {
                            tp_error(sh, "request: %s", strerror(errno));
                            return 1;
                        }
                    }
                }
            }
        }
        om_store_relaxed(&sh->slot[me].responses, responses);
        om_store_relaxed(&sh->slot[me].bytes, bytes);
    }
    return 0;
}

static void tp_totals(struct tp_shared *sh, int k, uint64_t *resp, uint64_t *bytes)
{
    *resp = *bytes = 0;
    for (int i = 0; i < k; i++) {
        *resp += om_load_relaxed(&sh->slot[i].responses);
        *bytes += om_load_relaxed(&sh->slot[i].bytes);
    }
}

/* Drive one file for warm-up + samples intervals; fills rates[] and bws[]. */
static int tp_phase(struct om_ctx *ctx, const struct sockaddr_storage *addr, socklen_t alen,
                    long long size, int clients, int conns, int samples,
                    long long interval_ms, double *rates, double *bws)
{
    struct tp_shared *sh = shared_alloc(sizeof *sh);
    if (!sh)
        return om_fail(ctx, "mmap: %s", strerror(errno));
    char req[128];
    snprintf(req, sizeof req, "GET /file-%lld HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", size);
    pid_t pids[MAX_CLIENTS];
    int started = 0, rc = OM_OK;
    for (; started < clients; started++) {
        int n = conns / clients + (started < conns % clients);
        pids[started] = om_fork();
        if (pids[started] < 0) {
            rc = om_fail(ctx, "fork: %s", strerror(errno));
            break;
        }
        if (pids[started] == 0) /* placed where this process is */
            _exit(tp_client(sh, started, addr, alen, n, req, size));
    }
    uint64_t t0 = om_now_ns();
    while (rc == OM_OK && om_load(&sh->connected) < clients) {
        if (sh->error[0] || om_now_ns() - t0 > READY_TIMEOUT_NS)
            rc = om_fail(ctx, "clients could not connect: %s",
                         sh->error[0] ? sh->error : "timeout");
        sleep_us(1000);
    }
    struct timespec iv = {interval_ms / 1000, (interval_ms % 1000) * 1000000L};
    if (rc == OM_OK)
        nanosleep(&iv, NULL); /* warm-up */
    for (int i = 0; rc == OM_OK && i < samples; i++) {
        uint64_t r0, b0, r1, b1;
        tp_totals(sh, clients, &r0, &b0);
        uint64_t a = om_now_ns();
        nanosleep(&iv, NULL);
        tp_totals(sh, clients, &r1, &b1);
        uint64_t b = om_now_ns();
        if (sh->error[0])
            rc = om_fail(ctx, "%s", sh->error);
        rates[i] = (double)(r1 - r0) * 1e9 / (double)(b - a);
        bws[i] = (double)(b1 - b0) * 1e3 / (double)(b - a); /* bytes/ns * 1e3 = MB/s */
    }
    /* An interval without a response is a measurement (the machine was busy); a phase
     * without any is a failure. */
    double total = 0;
    for (int i = 0; rc == OM_OK && i < samples; i++)
        total += rates[i];
    if (rc == OM_OK && total == 0)
        rc = om_fail(ctx, "no response completed in %d intervals of %lld ms", samples,
                     interval_ms);
    om_store(&sh->stop, 1);
    for (int i = 0; i < started; i++) {
        int st, killed = om_child_reap(pids[i], 5000, &st);
        if (rc == OM_OK && (killed || !WIFEXITED(st) || WEXITSTATUS(st)))
            rc = om_fail(ctx, "client process failed: %s", sh->error[0] ? sh->error : "?");
    }
    munmap(sh, sizeof *sh);
    return rc;
}

/* "127.0.0.1:8080" or "[::1]:8080", loopback only: this is not a load generator for
 * other machines. */
static int parse_target(const char *t, struct sockaddr_storage *ss, socklen_t *len)
{
    char host[64];
    const char *colon = t[0] == '[' ? strstr(t, "]:") : strrchr(t, ':');
    if (!colon)
        return -1;
    size_t hl = (size_t)(colon - t) - (t[0] == '[');
    if (hl >= sizeof host)
        return -1;
    memcpy(host, t + (t[0] == '['), hl);
    host[hl] = 0;
    char *end;
    long port = strtol(colon + (t[0] == '[' ? 2 : 1), &end, 10);
    if (*end || port < 1 || port > 65535)
        return -1;
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        if ((ntohl(a4->sin_addr.s_addr) >> 24) != 127)
            return -1;
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *len = sizeof *a4;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1 && IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr)) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *len = sizeof *a6;
        return 0;
    }
    return -1;
}

static int run_throughput(struct om_ctx *ctx)
{
    char why[256];
    const char *target = om_str(ctx, "target");
    const char *mech = ev_resolve(om_str(ctx, "mech"), why, sizeof why);
    if (!mech)
        return om_skip(ctx, "%s", why);
    long long sizes[2] = {om_int(ctx, "small"), om_int(ctx, "large")};
    int conns = (int)om_int(ctx, "conns"), clients = (int)om_int(ctx, "clients");
    int samples = (int)om_int(ctx, "samples");
    long long interval_ms = om_int(ctx, "interval_ms");
    if (clients > conns)
        return om_bad_param(ctx, "clients (%d) must not exceed conns (%d)", clients, conns);
    long long nofile = om_raise_limit(RLIMIT_NOFILE);
    if (conns / clients + 16 > nofile || conns + 80 > nofile)
        return om_skip(ctx, "RLIMIT_NOFILE (%lld) is too low for %d connections", nofile, conns);
    struct server_child sc;
    memset(&sc, 0, sizeof sc);
    sc.pid = -1;
    sc.notify_rd = -1;
    struct om_placement pl;
    int rc = om_place(ctx, *target != 0, &pl); /* an external server places itself */
    if (rc)
        return rc;
    if (*target) {
        if (parse_target(target, &sc.addr, &sc.addrlen))
            return om_bad_param(ctx, "target '%s': give a loopback address and port, e.g. "
                                     "127.0.0.1:8080 or [::1]:8080", target);
        om_note(ctx, "target", "%s (an external server; mech does not apply)", target);
    } else {
        rc = start_server(ctx, &sc, mech, om_str(ctx, "ip")[0] == '6' ? "::1" : "127.0.0.1",
                          sizes, 2, conns + 16, 600, &pl, 0);
        if (rc) {
            stop_server(&sc);
            return rc;
        }
        om_note(ctx, "mech", "%s", mech);
        om_note(ctx, "file_io", "%s", httpd_file_io());
    }
    om_note(ctx, "client", "%d process%s, %s, %d keep-alive connections, one request "
                           "outstanding on each", clients, clients > 1 ? "es" : "", ev_best(),
            conns);
    double rates[2][100], bws[2][100];
    for (int f = 0; f < 2 && rc == OM_OK; f++)
        rc = tp_phase(ctx, &sc.addr, sc.addrlen, sizes[f], clients, conns, samples,
                      interval_ms, rates[f], bws[f]);
    stop_server(&sc);
    static const char *names[2][2] = {{"small_requests", "small_bandwidth"},
                                      {"large_requests", "large_bandwidth"}};
    for (int f = 0; f < 2 && rc == OM_OK; f++)
        for (int i = 0; i < samples; i++) {
            om_sample(ctx, names[f][0], OM_NO_X, rates[f][i]);
            om_sample(ctx, names[f][1], OM_NO_X, bws[f][i]);
        }
    return rc;
}

/* ---- the table --------------------------------------------------------------------------- */

#define MECH_HELP                                                                          \
    "the server's event mechanism; best = epoll on Linux, kqueue on the BSDs and macOS, "  \
    "else poll"
#define IP_PARAM                                                                           \
    {"ip", OM_CHOICE, "6", "4", "4", 0, 0, "4|6",                                          \
     "loopback over IPv6 (::1, as von Leitner ran everything) or IPv4 (127.0.0.1; the "    \
     "quick suite's, available everywhere)"}
#define CURVE_PARAMS(mech, choices)                                                        \
    {"mech", OM_CHOICE, mech, NULL, NULL, 0, 0, choices, MECH_HELP},                       \
    {"max", OM_INT, "10000", "2000", "40", 1, 1000000, NULL,                               \
     "idle connections at the last point (RLIMIT_NOFILE and the mechanism may end the "    \
     "curve earlier: see the stopped_by note)"},                                           \
    {"step", OM_INT, "10", "20", "4", 1, 100000, NULL,                                     \
     "one timed point at every step-th idle connection: 0, step, 2*step, ..."},           \
    {"size", OM_INT, "100", NULL, NULL, 0, 1048576, NULL, "size of the file requested, bytes"}, \
    {"pin", OM_CHOICE, "same", NULL, NULL, 0, 0, "same|split|none",                        \
     "same: server and client on one CPU (the studies' uniprocessors); split: server and " \
     "client on two CPUs; none: the scheduler decides"},                                   \
    {"idle_timeout", OM_INT, "900", NULL, NULL, 10, 86400, NULL,                           \
     "the server's keep-alive idle timeout, s (the run must end before it)"},              \
    IP_PARAM

#define ACCEPT_METRIC                                                                      \
    {{"accept", "ns", "lower", OM_SCATTER, "idle_connections",                            \
      "from the client's connect() until the server's accept() returned (server time "    \
      "stamp): handshake, event notification, accept"}}
#define REQUEST_METRIC                                                                     \
    {{"request", "ns", "lower", OM_SCATTER, "idle_connections",                           \
      "GET of a small file on an established keep-alive connection, send() to the last "  \
      "byte of the response"}}

const struct om_bench om_family_http[] = {
    {"net.http_connect",
     "HTTP connect latency (server notices and accepts) vs idle keep-alive connections, "
     "best event mechanism",
     "VL03", "quick,full,vl03", {0.43, 0.14, 0.092}, run_connect,
     {CURVE_PARAMS("best", EV_MECHS)}, ACCEPT_METRIC},
    {"net.http_connect.poll", "net.http_connect with a poll() server", "VL03 (NetBSD 1.6.1)",
     "quick,full,vl03", {5.7, 0.21, 0.096},
     run_connect, {CURVE_PARAMS("poll", "poll")}, ACCEPT_METRIC},
    {"net.http_connect.select", "net.http_connect with a select() server (up to FD_SETSIZE)",
     "osmeter (after VL03)", "quick,full,vl03", {0.13, 0.12, 0.079}, run_connect,
     {CURVE_PARAMS("select", "select")}, ACCEPT_METRIC},
    {"net.http_request",
     "HTTP request latency on an established connection vs idle keep-alive connections, "
     "best event mechanism",
     "VL03", "quick,full,vl03", {0.48, 0.14, 0.078}, run_request,
     {CURVE_PARAMS("best", EV_MECHS)}, REQUEST_METRIC},
    {"net.http_request.poll", "net.http_request with a poll() server", "VL03 (NetBSD 1.6.1)",
     "quick,full,vl03", {8.6, 0.26, 0.079},
     run_request, {CURVE_PARAMS("poll", "poll")}, REQUEST_METRIC},
    {"net.http_request.select", "net.http_request with a select() server (up to FD_SETSIZE)",
     "osmeter (after VL03)", "quick,full,vl03", {0.15, 0.12, 0.078}, run_request,
     {CURVE_PARAMS("select", "select")}, REQUEST_METRIC},
    {"net.http_throughput",
     "HTTP requests/s and MB/s for a small and a large file, many keep-alive connections",
     "osmeter", "quick,full", {12, 2.4, 0.61}, run_throughput,
     {{"mech", OM_CHOICE, "best", NULL, NULL, 0, 0, EV_MECHS, MECH_HELP},
      {"small", OM_INT, "1k", NULL, NULL, 0, 64 * 1024 * 1024, NULL, "small file, bytes"},
      {"large", OM_INT, "1m", "256k", "64k", 0, 64 * 1024 * 1024, NULL, "large file, bytes"},
      {"conns", OM_INT, "64", "32", "8", 1, 10000, NULL, "concurrent keep-alive connections"},
      {"clients", OM_INT, "2", NULL, NULL, 1, MAX_CLIENTS, NULL,
       "client processes, each an event loop over its share of the connections (two keep "
       "up with wrk -t2 driving nginx: bench/http_crosscheck.py)"},
      {"samples", OM_INT, "5", "3", "2", 1, 100, NULL, "intervals timed per file"},
      {"interval_ms", OM_INT, "1000", "300", "100", 10, 60000, NULL,
       "length of one interval (one more before them warms up)"},
      {"pin", OM_CHOICE, "none", NULL, NULL, 0, 0, "same|split|none",
       "same: all on one CPU; split: server on one CPU, clients on another; none: unpinned"},
      {"ip", OM_CHOICE, "4", NULL, NULL, 0, 0, "4|6", "loopback over IPv4 or IPv6"},
      {"target", OM_STR, "", NULL, NULL, 0, 0, NULL,
       "drive an external server on loopback (host:port) with files /file-<small> and "
       "/file-<large> instead of osmeter's own (for cross-checks)"}},
     {{"small_requests", "ops/s", "higher", OM_POINT, NULL, "responses per second, small file"},
      {"small_bandwidth", "MB/s", "higher", OM_POINT, NULL,
       "file bytes per second (10^6), small file"},
      {"large_requests", "ops/s", "higher", OM_POINT, NULL, "responses per second, large file"},
      {"large_bandwidth", "MB/s", "higher", OM_POINT, NULL,
       "file bytes per second (10^6), large file"}}},
    {0},
};
