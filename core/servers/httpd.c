/*
 * A small HTTP/1.1 server (see httpd.h): GET and HEAD of the files it generated,
 * keep-alive and pipelining, one event loop over a selectable mechanism (lib/ev.c).
 *
 * Safety, because it may be left running: it binds loopback unless told otherwise;
 * a request names one file of the table it generated (http_parse.c), opened with
 * O_NOFOLLOW relative to its own directory and checked to be the regular file of the
 * size it wrote; malformed or oversized requests get an error status and the
 * connection is closed (after a short lingering drain); idle, slow and stuck
 * connections time out; connections beyond the bound get 503.
 *
 * Timeouts cost O(1) per event: a connection sits in one list per state, each list
 * has a single timeout, so appending on every state change keeps each list sorted by
 * deadline and the next expiry is at one of three heads.  Nothing scans all
 * connections, so the event mechanism is the only thing that can grow with N.
 */
#define _GNU_SOURCE
#include "httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/sendfile.h>
#endif
/* sendfile: Linux, FreeBSD, DragonFly and macOS, each with its own signature (see
 * send_file_part); NetBSD and OpenBSD have none and send with pread + send, as does a
 * build with -DOM_NO_SENDFILE (which tests that path on Linux). */
#if (defined(__linux__) || defined(__FreeBSD__) || defined(__DragonFly__) ||                \
     defined(__APPLE__)) && !defined(OM_NO_SENDFILE)
#define HAVE_SENDFILE 1
#endif

#include "../harness.h"
#include "../lib/ev.h"
#include "http_internal.h"
#include "../lib/atomics.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* SIGPIPE is ignored by the harness anyway */
#endif
#ifndef MSG_MORE
#define MSG_MORE 0
#endif

/* ---- the listening socket ------------------------------------------------------------ */

int httpd_listen(const char *addr, int port, char *err, size_t errlen)
{
    /* Numeric addresses only (inet_pton, not getaddrinfo): no name service, and the
     * static build needs no shared NSS libraries. */
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        len = sizeof *a4;
    } else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        len = sizeof *a6;
    } else {
        snprintf(err, errlen, "address '%s' is not a numeric IPv4 or IPv6 address", addr);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(fd, (struct sockaddr *)&ss, len) || listen(fd, SOMAXCONN) ||
        fcntl(fd, F_SETFL, O_NONBLOCK) || fcntl(fd, F_SETFD, FD_CLOEXEC)) {
        snprintf(err, errlen, "listen on %s port %d: %s", addr, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* ---- connections ----------------------------------------------------------------------- */

enum { C_IDLE, C_READING, C_WRITING, C_LINGER, C_NSTATES };
#define LINGER_MS 2000

struct conn {
    int fd, state, want_write;
    int linked;               /* in the list of its state (not yet, when just accepted) */
    struct conn *prev, *next;
    uint64_t deadline;
    char *in; /* request bytes, allocated while a request is under way */
    size_t in_len, scanned, consumed;
    char out[400]; /* response header (and the whole body of an error response) */
    size_t out_len, out_off;
    int file;
    off_t file_off, file_left;
    int keep_alive;
    int refused; /* accepted over capacity: lingers after its 503 */
};

struct list {
    struct conn *head, *tail;
};

struct server {
    const struct httpd_config *cfg;
    struct ev *ev;
    int dirfd, lfd, spare;
    struct conn **conns; /* by descriptor */
    int table, nconns, capacity;
    int refusing; /* of nconns: refused connections lingering after their 503 */
    struct list list[C_NSTATES];
    uint64_t timeout_ns[C_NSTATES];
    struct httpd_probe *probe;
};

static void list_unlink(struct server *s, struct conn *c)
{
    struct list *l = &s->list[c->state];
    if (!c->linked)
        return;
    c->linked = 0;
    if (c->prev)
        c->prev->next = c->next;
    else
        l->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->tail = c->prev;
    c->prev = c->next = NULL;
}

/* Enter a state (or renew it): to the tail of its list with a fresh deadline. */
static void set_state(struct server *s, struct conn *c, int state, uint64_t now)
{
    list_unlink(s, c);
    c->state = state;
    c->deadline = now + s->timeout_ns[state];
    struct list *l = &s->list[state];
    c->prev = l->tail;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
    c->linked = 1;
}

static void watch(struct server *s, struct conn *c, int want_write)
{
    if (c->want_write != want_write && ev_set(s->ev, c->fd, !want_write, want_write, 0) == 0)
        c->want_write = want_write;
}

static void close_conn(struct server *s, struct conn *c)
{
    list_unlink(s, c);
    ev_del(s->ev, c->fd);
    close(c->fd);
    if (c->file >= 0)
        close(c->file);
    s->conns[c->fd] = NULL;
    s->nconns--;
    s->refusing -= c->refused;
    free(c->in);
    free(c);
}

static void drain_and_close(int fd)
{
    char buf[4096];
    shutdown(fd, SHUT_WR);
    for (int i = 0; i < 16 && recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0; i++)
        ;
    close(fd);
}

/* ---- responses ------------------------------------------------------------------------ */

/* Stop answering: send nothing more, drain what the client still sends for a moment
 * (so the error response is not destroyed by a reset), then close. */
static void linger(struct server *s, struct conn *c, uint64_t now)
{
    shutdown(c->fd, SHUT_WR);
    free(c->in);
    c->in = NULL;
    c->in_len = 0;
    watch(s, c, 0);
    set_state(s, c, C_LINGER, now);
}

/* Over capacity: 503.  While spare descriptors last, the refused connection lingers like
 * an error response (so its client can read the 503 whatever it sends meanwhile);
 * otherwise, or when the descriptors themselves ran out, it is drained once and closed. */
#define MAX_REFUSING 64
static void refuse(struct server *s, int fd, int may_linger, uint64_t now)
{
    char buf[400];
    int n = http_error_response(buf, sizeof buf, 503, 0, 0);
    if (send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        /* best effort: the connection is being refused anyway */
    }
    if (s->probe)
        om_add_relaxed(&s->probe->refused, 1);
    struct conn *c = NULL;
    if (may_linger && s->refusing < MAX_REFUSING && fd < s->table &&
        fcntl(fd, F_SETFL, O_NONBLOCK) == 0 && (c = calloc(1, sizeof *c)) &&
        ev_set(s->ev, fd, 1, 0, 1) == 0) {
        c->fd = fd;
        c->file = -1;
        c->refused = 1;
        s->conns[fd] = c;
        s->nconns++;
        s->refusing++;
        linger(s, c, now);
        return;
    }
    free(c);
    drain_and_close(fd);
}

/* The response is out: close, or make ready for the next request on this connection
 * (serve_input answers pipelined ones already read, in its loop). */
static void finish_response(struct server *s, struct conn *c, uint64_t now)
{
    if (c->file >= 0) {
        close(c->file);
        c->file = -1;
    }
    if (s->probe)
        om_add_relaxed(&s->probe->responses, 1);
    if (!c->keep_alive) {
        linger(s, c, now);
        return;
    }
    watch(s, c, 0);
    c->in_len -= c->consumed;
    if (c->in_len > 0) { /* pipelined requests */
        memmove(c->in, c->in + c->consumed, c->in_len);
        c->scanned = 0;
        c->consumed = 0;
        set_state(s, c, C_READING, now);
        return;
    }
    free(c->in); /* an idle connection holds no buffer */
    c->in = NULL;
    c->scanned = c->consumed = 0;
    set_state(s, c, C_IDLE, now);
}

const char *httpd_file_io(void)
{
#ifdef HAVE_SENDFILE
    return "sendfile";
#else
    return "pread+send";
#endif
}

/* Send the next part of the response's file: bytes sent (file_off advanced), 0 when
 * the file ended early, or -1 with errno (EAGAIN: the socket is full). */
static ssize_t send_file_part(struct conn *c)
{
#if defined(HAVE_SENDFILE) && defined(__linux__)
    size_t want = c->file_left > (1 << 20) ? (1 << 20) : (size_t)c->file_left;
    return sendfile(c->fd, c->file, &c->file_off, want);
#elif defined(HAVE_SENDFILE)
    /* The BSDs' and macOS's sendfile report a partial send (EAGAIN on a non-blocking
     * socket) through the count, not the return value. */
    off_t want = c->file_left > (1 << 20) ? (1 << 20) : c->file_left, sent = 0;
#if defined(__APPLE__)
    sent = want;
    int rc = sendfile(c->file, c->fd, c->file_off, &sent, NULL, 0);
#else
    int rc = sendfile(c->file, c->fd, c->file_off, (size_t)want, NULL, &sent, 0);
#endif
    if (sent > 0) {
        c->file_off += sent;
        return (ssize_t)sent;
    }
    return rc == 0 ? 0 : -1;
#else
    char buf[65536];
    size_t want = c->file_left > (off_t)sizeof buf ? sizeof buf : (size_t)c->file_left;
    ssize_t n = pread(c->file, buf, want, c->file_off);
    if (n > 0)
        n = send(c->fd, buf, (size_t)n, MSG_NOSIGNAL);
    if (n > 0)
        c->file_off += n;
    return n;
#endif
}

/* Send as much as the socket takes; returns 0 when the connection was closed. */
static int pump(struct server *s, struct conn *c, uint64_t now)
{
    for (;;) {
        ssize_t n;
        if (c->out_off < c->out_len) {
            n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                     MSG_NOSIGNAL | (c->file_left > 0 ? MSG_MORE : 0));
            if (n > 0)
                c->out_off += (size_t)n;
        } else if (c->file_left > 0) {
            n = send_file_part(c);
            if (n > 0)
                c->file_left -= n;
            else if (n == 0) { /* the file shrank under us */
                close_conn(s, c);
                return 0;
            }
        } else {
            finish_response(s, c, now);
            return 1;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                set_state(s, c, C_WRITING, now); /* also renews the deadline on progress */
                watch(s, c, 1);
                return 1;
            }
            close_conn(s, c); /* the client vanished */
            return 0;
        }
    }
}

static int respond(struct server *s, struct conn *c, struct http_req *r, uint64_t now)
{
    off_t size = 0;
    if (r->status == 200) {
        int fd = openat(s->dirfd, httpd_file_name(r->file), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            r->status = errno == ENOENT || errno == ELOOP ? 404 : 500;
        else if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size != http_file_size(r->file)) {
            r->status = 404; /* not the file we wrote: not ours to serve */
            close(fd);
        } else {
            size = st.st_size;
            if (r->head)
                close(fd);
            else
                c->file = fd;
        }
    }
    c->keep_alive = r->keep_alive && !r->must_close;
    if (r->status == 200)
        c->out_len = (size_t)snprintf(c->out, sizeof c->out,
                                      "HTTP/1.1 200 OK\r\nServer: osmeter\r\n"
                                      "Content-Type: application/octet-stream\r\n"
                                      "Content-Length: %lld\r\nConnection: %s\r\n\r\n",
                                      (long long)size, c->keep_alive ? "keep-alive" : "close");
    else
        c->out_len = (size_t)http_error_response(c->out, sizeof c->out, r->status, r->head,
                                                 c->keep_alive);
    c->out_off = 0;
    c->file_off = 0;
    c->file_left = c->file >= 0 ? size : 0;
    return pump(s, c, now);
}

/* End of the request head in c->in (the index after the empty line), or 0. */
static size_t head_end(struct conn *c)
{
    size_t i = c->scanned > 3 ? c->scanned - 3 : 0;
    for (; i < c->in_len; i++) {
        if (c->in[i] != '\n')
            continue;
        if (i >= 1 && c->in[i - 1] == '\n')
            return i + 1;
        if (i >= 2 && c->in[i - 1] == '\r' && c->in[i - 2] == '\n')
            return i + 1;
    }
    c->scanned = c->in_len;
    return 0;
}

/* RFC 9112 §2.2: empty lines before a request line are ignored. */
static void skip_empty_lines(struct conn *c)
{
    size_t i = 0;
    while (i < c->in_len && (c->in[i] == '\n' ||
                             (c->in[i] == '\r' && i + 1 < c->in_len && c->in[i + 1] == '\n')))
        i += c->in[i] == '\r' ? 2 : 1;
    if (i > 0) {
        memmove(c->in, c->in + i, c->in_len - i);
        c->in_len -= i;
        c->scanned = 0;
    }
}

/* Answer every complete request read so far, one after the other: a loop, not a
 * recursion, since a client may pipeline any number of them. */
static void serve_input(struct server *s, struct conn *c, uint64_t now)
{
    while (c->state == C_READING && c->in_len > 0) {
        skip_empty_lines(c);
        size_t end = head_end(c);
        struct http_req r;
        if (end == 0) {
            if (c->in_len < (size_t)s->cfg->max_request)
                return; /* wait for the rest */
            memset(&r, 0, sizeof r);
            r.status = memchr(c->in, '\n', c->in_len) ? 431 : 414;
            r.must_close = 1;
            c->consumed = c->in_len;
        } else {
            http_parse_request(c->in, end, &r);
            c->consumed = end;
        }
        if (!respond(s, c, &r, now))
            return; /* closed */
    }
}

static void on_readable(struct server *s, struct conn *c, uint64_t now)
{
    if (c->state == C_LINGER) {
        char buf[4096];
        ssize_t n = recv(c->fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            close_conn(s, c);
        return;
    }
    if (c->state == C_WRITING)
        return; /* one request at a time: the rest waits in the socket */
    size_t cap = (size_t)s->cfg->max_request;
    if (!c->in && !(c->in = malloc(cap))) {
        close_conn(s, c);
        return;
    }
    ssize_t n = recv(c->fd, c->in + c->in_len, cap - c->in_len, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        close_conn(s, c); /* the client went away */
        return;
    }
    if (n < 0)
        return;
    c->in_len += (size_t)n;
    if (c->state == C_IDLE)
        set_state(s, c, C_READING, now); /* the request timeout runs from its first byte */
    serve_input(s, c, now);
}

static void on_accept(struct server *s, uint64_t now)
{
    for (;;) {
#ifdef __linux__
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
#else
        int fd = accept(s->lfd, NULL, NULL);
#endif
        if (fd >= 0 && s->probe) {
            struct httpd_probe *p = s->probe;
            om_store_relaxed(&p->accept_cycles, om_cycles());
            om_add(&p->accepted, 1);
            if (om_exchange(&p->armed, 0) && s->cfg->notify_fd >= 0)
                if (write(s->cfg->notify_fd, "a", 1) != 1) {
                    /* the benchmark sees no byte and fails with its own reason */
                }
        }
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if ((errno == EMFILE || errno == ENFILE) && s->spare >= 0) {
                /* Out of descriptors (reported even when the queue is empty): use the
                 * spare to take a connection off the queue and refuse it, so that the
                 * listening socket does not stay ready forever. */
                close(s->spare);
                int x = accept(s->lfd, NULL, NULL);
                if (x >= 0) {
                    if (s->probe)
                        om_add(&s->probe->accepted, 1);
                    refuse(s, x, 0, now); /* no lingering: the spare must come back */
                }
                s->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (x < 0)
                    return; /* the queue is empty */
                continue;
            }
            return; /* EAGAIN: the queue is empty */
        }
        struct conn *c = NULL;
        int one = 1;
        if (s->nconns - s->refusing >= s->capacity || fd >= s->table ||
#ifndef __linux__
            fcntl(fd, F_SETFL, O_NONBLOCK) || fcntl(fd, F_SETFD, FD_CLOEXEC) ||
#endif
            !(c = calloc(1, sizeof *c)) || ev_set(s->ev, fd, 1, 0, 1)) {
            free(c);
            refuse(s, fd, 1, now);
            continue;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->fd = fd;
        c->file = -1;
        c->state = C_IDLE;
        s->conns[fd] = c;
        s->nconns++;
        set_state(s, c, C_IDLE, now);
    }
}

/* Close what has run out of time; returns ms until the next deadline (-1: none). */
static int expire(struct server *s, uint64_t now)
{
    uint64_t next = UINT64_MAX;
    for (int st = 0; st < C_NSTATES; st++) {
        struct conn *c;
        while ((c = s->list[st].head) && c->deadline <= now) {
            if (st == C_READING) {
                char buf[400];
                int n = http_error_response(buf, sizeof buf, 408, 0, 0);
                if (send(c->fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
                    /* best effort: the client is not keeping up anyway */
                }
            }
            close_conn(s, c);
        }
        if (c && c->deadline < next)
            next = c->deadline;
    }
    if (next == UINT64_MAX)
        return -1;
    uint64_t ms = (next - now + 999999) / 1000000;
    return ms > 60000 ? 60000 : (int)ms;
}

int httpd_serve(const struct httpd_config *cfg, char *err, size_t errlen)
{
    struct server s;
    memset(&s, 0, sizeof s);
    s.cfg = cfg;
    s.lfd = cfg->listen_fd;
    s.probe = cfg->probe;
    s.timeout_ns[C_IDLE] = (uint64_t)cfg->idle_timeout_ms * 1000000ULL;
    s.timeout_ns[C_READING] = (uint64_t)cfg->request_timeout_ms * 1000000ULL;
    s.timeout_ns[C_WRITING] = (uint64_t)cfg->write_timeout_ms * 1000000ULL;
    s.timeout_ns[C_LINGER] = LINGER_MS * 1000000ULL;
    s.dirfd = open(cfg->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s.dirfd < 0) {
        snprintf(err, errlen, "open %s: %s", cfg->dir, strerror(errno));
        return -1;
    }
    s.spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
    /* A few descriptors stay free below the limit: refusing a connection with 503 and
     * cleaning up at exit (removing the directory) need them. */
    long long nofile = om_raise_limit(RLIMIT_NOFILE) - 8;
    s.table = (int)(nofile < (long long)cfg->max_conns + 64 ? nofile : cfg->max_conns + 64);
    s.ev = ev_open(cfg->mech, s.table, err, errlen);
    s.conns = calloc((size_t)s.table, sizeof *s.conns);
    int first_free = dup(s.lfd); /* the lowest descriptor a connection can get */
    if (first_free >= 0)
        close(first_free);
    if (!s.ev || !s.conns || first_free < 0) {
        if (s.ev && !s.conns)
            snprintf(err, errlen, "out of memory for %d connections", s.table);
        else if (s.ev)
            snprintf(err, errlen, "dup: %s", strerror(errno));
        ev_close(s.ev);
        free(s.conns);
        close(s.dirfd);
        return -1;
    }
    /* Connections get the free descriptors from first_free up: the mechanism's limit
     * (FD_SETSIZE for select) and the table bound how many fit; descriptors inherited
     * from whoever started us take some of them. */
    s.table = ev_limit(s.ev) < s.table ? ev_limit(s.ev) : s.table;
    s.capacity = 0;
    for (int fd = first_free; fd < s.table; fd++)
        s.capacity += fcntl(fd, F_GETFD) < 0;
    if (s.capacity > cfg->max_conns)
        s.capacity = cfg->max_conns;
    if (s.capacity < 1 || ev_set(s.ev, s.lfd, 1, 0, 1)) {
        snprintf(err, errlen, "cannot watch the listening socket (%s, %d slots): %s",
                 cfg->mech, s.table, strerror(errno));
        ev_close(s.ev);
        free(s.conns);
        close(s.dirfd);
        return -1;
    }
    if (s.probe) {
        s.probe->capacity = s.capacity;
        om_store(&s.probe->ready, 1);
    }
    if (cfg->on_ready)
        cfg->on_ready(s.capacity, cfg->on_ready_arg);
    uint64_t stop = cfg->duration_s > 0 ? om_now_ns() + (uint64_t)(cfg->duration_s * 1e9) : 0;
    struct ev_event evs[EV_BATCH];
    int rc = 0;
    for (;;) {
        uint64_t now = om_now_ns();
        int timeout = expire(&s, now);
        if (stop) {
            if (now >= stop)
                break;
            int left = (int)((stop - now + 999999) / 1000000);
            if (timeout < 0 || left < timeout)
                timeout = left;
        }
        if (s.probe)
            om_store(&s.probe->waiting, 1);
        int n = ev_wait(s.ev, evs, EV_BATCH, timeout);
        if (s.probe)
            om_store(&s.probe->waiting, 0);
        if (n < 0) {
            snprintf(err, errlen, "%s wait: %s", cfg->mech, strerror(errno));
            rc = -1;
            break;
        }
        now = om_now_ns();
        for (int i = 0; i < n; i++) {
            int fd = evs[i].fd;
            if (fd == s.lfd) {
                on_accept(&s, now);
                continue;
            }
            struct conn *c = fd >= 0 && fd < s.table ? s.conns[fd] : NULL;
            if (!c)
                continue; /* closed earlier in this batch */
            if (evs[i].writable && c->state == C_WRITING) {
                if (!pump(&s, c, now))
                    continue;
                serve_input(&s, c, now); /* requests pipelined behind this response */
                c = s.conns[fd];         /* NULL when that closed it */
            }
            if (c && evs[i].readable && c->state != C_WRITING)
                on_readable(&s, c, now);
        }
    }
    for (int fd = 0; fd < s.table; fd++)
        if (s.conns[fd])
            close_conn(&s, s.conns[fd]);
    ev_close(s.ev);
    free(s.conns);
    close(s.dirfd);
    if (s.spare >= 0)
        close(s.spare);
    return rc;
}
