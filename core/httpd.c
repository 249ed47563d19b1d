/*
 * A small HTTP/1.1 server (see httpd.h): GET and HEAD of the files it generated,
 * keep-alive and pipelining, one event loop over a selectable mechanism.
 *
 * Safety, because it may be left running: it binds loopback unless told otherwise;
 * a request names one file of the table it generated (percent-decoding first, then
 * refusing '/', '\\', NUL, control bytes and names starting with '.'), opened with
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
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/sendfile.h>
#endif
/* sendfile: Linux, FreeBSD, DragonFly and macOS, each with its own signature (see
 * send_file_part); NetBSD and OpenBSD have none and send with pread + send, as does a
 * build with -DOM_NO_SENDFILE (which tests that path on Linux). */
#if (defined(__linux__) || defined(__FreeBSD__) || defined(__DragonFly__) ||                \
     defined(__APPLE__)) && !defined(OM_NO_SENDFILE)
#define HAVE_SENDFILE 1
#endif
#if defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) ||                 \
    defined(__DragonFly__) || defined(__APPLE__)
#define HAVE_KQUEUE 1
#include <sys/event.h>
#endif

#include "harness.h"
#include "internal.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* SIGPIPE is ignored by the harness anyway */
#endif
#ifndef MSG_MORE
#define MSG_MORE 0
#endif

/* ==== event layer ==================================================================== */

enum { MECH_EPOLL, MECH_KQUEUE, MECH_POLL, MECH_SELECT };
#define EV_BATCH 256

struct ev {
    int mech;
    int limit; /* registered descriptors are below this */
    int fd;    /* epoll or kqueue descriptor */
#ifdef __linux__
    struct epoll_event ebuf[EV_BATCH];
#endif
#ifdef HAVE_KQUEUE
    struct kevent kbuf[EV_BATCH];
#endif
    struct pollfd *pfd; /* poll: the array handed to poll(), dense */
    int npfd;
    int *slot; /* poll: slot[fd] = index in pfd, or -1 */
    fd_set rd, wr; /* select: the interest sets */
    int maxfd;
};

const char *ev_best(void)
{
#if defined(__linux__)
    return "epoll";
#elif defined(HAVE_KQUEUE)
    return "kqueue";
#else
    return "poll";
#endif
}

const char *ev_resolve(const char *mech, char *why, size_t whylen)
{
    if (strcmp(mech, "best") == 0)
        return ev_best();
    if (strcmp(mech, "poll") == 0)
        return "poll";
    if (strcmp(mech, "select") == 0)
        return "select";
    if (strcmp(mech, "epoll") == 0) {
#ifdef __linux__
        return "epoll";
#else
        snprintf(why, whylen, "epoll is Linux-only; this system offers %s", ev_best());
        return NULL;
#endif
    }
    if (strcmp(mech, "kqueue") == 0) {
#ifdef HAVE_KQUEUE
        return "kqueue";
#else
        snprintf(why, whylen, "kqueue is not available on this system (it offers %s)",
                 ev_best());
        return NULL;
#endif
    }
    snprintf(why, whylen, "unknown event mechanism '%s' (%s)", mech, HTTPD_MECHS);
    return NULL;
}

struct ev *ev_open(const char *mech, int limit, char *err, size_t errlen)
{
    struct ev *ev = calloc(1, sizeof *ev);
    if (!ev) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    ev->fd = -1;
    ev->limit = limit;
    if (strcmp(mech, "epoll") == 0) {
        ev->mech = MECH_EPOLL;
#ifdef __linux__
        ev->fd = epoll_create1(EPOLL_CLOEXEC);
#endif
    } else if (strcmp(mech, "kqueue") == 0) {
        ev->mech = MECH_KQUEUE;
#ifdef HAVE_KQUEUE
        ev->fd = kqueue();
#endif
    } else if (strcmp(mech, "poll") == 0) {
        ev->mech = MECH_POLL;
        ev->pfd = calloc((size_t)limit, sizeof *ev->pfd);
        ev->slot = malloc((size_t)limit * sizeof *ev->slot);
        if (!ev->pfd || !ev->slot) {
            snprintf(err, errlen, "out of memory for %d poll slots", limit);
            ev_close(ev);
            return NULL;
        }
        for (int i = 0; i < limit; i++)
            ev->slot[i] = -1;
        return ev;
    } else if (strcmp(mech, "select") == 0) {
        ev->mech = MECH_SELECT;
        if (ev->limit > FD_SETSIZE)
            ev->limit = FD_SETSIZE;
        FD_ZERO(&ev->rd);
        FD_ZERO(&ev->wr);
        ev->maxfd = -1;
        return ev;
    } else {
        snprintf(err, errlen, "unknown event mechanism '%s'", mech);
        free(ev);
        return NULL;
    }
    if (ev->fd < 0) {
        snprintf(err, errlen, "%s: %s", mech, strerror(errno ? errno : ENOSYS));
        free(ev);
        return NULL;
    }
    return ev;
}

int ev_limit(const struct ev *ev) { return ev->limit; }

int ev_set(struct ev *ev, int fd, int want_read, int want_write, int is_new)
{
    if (fd < 0 || fd >= ev->limit) {
        errno = EINVAL;
        return -1;
    }
    switch (ev->mech) {
#ifdef __linux__
    case MECH_EPOLL: {
        struct epoll_event e;
        memset(&e, 0, sizeof e);
        e.events = (want_read ? EPOLLIN : 0) | (want_write ? EPOLLOUT : 0);
        e.data.fd = fd;
        return epoll_ctl(ev->fd, is_new ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &e);
    }
#endif
#ifdef HAVE_KQUEUE
    case MECH_KQUEUE: {
        struct kevent ch[2];
        EV_SET(&ch[0], fd, EVFILT_READ, EV_ADD | (want_read ? EV_ENABLE : EV_DISABLE), 0, 0,
               NULL);
        EV_SET(&ch[1], fd, EVFILT_WRITE, EV_ADD | (want_write ? EV_ENABLE : EV_DISABLE), 0,
               0, NULL);
        return kevent(ev->fd, ch, 2, NULL, 0, NULL) < 0 ? -1 : 0;
    }
#endif
    case MECH_POLL: {
        short events = (short)((want_read ? POLLIN : 0) | (want_write ? POLLOUT : 0));
        if (ev->slot[fd] < 0) {
            ev->slot[fd] = ev->npfd;
            ev->pfd[ev->npfd].fd = fd;
            ev->pfd[ev->npfd].revents = 0;
            ev->npfd++;
        }
        ev->pfd[ev->slot[fd]].events = events;
        return 0;
    }
    case MECH_SELECT:
        if (want_read)
            FD_SET(fd, &ev->rd);
        else
            FD_CLR(fd, &ev->rd);
        if (want_write)
            FD_SET(fd, &ev->wr);
        else
            FD_CLR(fd, &ev->wr);
        if (fd > ev->maxfd)
            ev->maxfd = fd;
        return 0;
    }
    errno = ENOSYS;
    return -1;
}

int ev_del(struct ev *ev, int fd)
{
    if (fd < 0 || fd >= ev->limit) {
        errno = EINVAL;
        return -1;
    }
    switch (ev->mech) {
#ifdef __linux__
    case MECH_EPOLL: {
        struct epoll_event e; /* non-NULL for kernels before 2.6.9 */
        memset(&e, 0, sizeof e);
        return epoll_ctl(ev->fd, EPOLL_CTL_DEL, fd, &e);
    }
#endif
#ifdef HAVE_KQUEUE
    case MECH_KQUEUE: {
        struct kevent ch[2];
        EV_SET(&ch[0], fd, EVFILT_READ, EV_DELETE, 0, 0, NULL);
        EV_SET(&ch[1], fd, EVFILT_WRITE, EV_DELETE, 0, 0, NULL);
        kevent(ev->fd, ch, 2, NULL, 0, NULL); /* closing the descriptor removes them too */
        return 0;
    }
#endif
    case MECH_POLL: {
        int i = ev->slot[fd];
        if (i < 0)
            return 0;
        struct pollfd last = ev->pfd[--ev->npfd];
        ev->pfd[i] = last;
        ev->slot[last.fd] = i;
        ev->slot[fd] = -1;
        return 0;
    }
    case MECH_SELECT:
        FD_CLR(fd, &ev->rd);
        FD_CLR(fd, &ev->wr);
        while (ev->maxfd >= 0 && !FD_ISSET(ev->maxfd, &ev->rd) && !FD_ISSET(ev->maxfd, &ev->wr))
            ev->maxfd--;
        return 0;
    }
    errno = ENOSYS;
    return -1;
}

int ev_wait(struct ev *ev, struct ev_event *out, int max, int timeout_ms)
{
    int n = -1, k = 0;
    if (max > EV_BATCH)
        max = EV_BATCH;
    switch (ev->mech) {
#ifdef __linux__
    case MECH_EPOLL:
        n = epoll_wait(ev->fd, ev->ebuf, max, timeout_ms);
        for (int i = 0; i < n; i++) {
            uint32_t e = ev->ebuf[i].events;
            out[k].fd = ev->ebuf[i].data.fd;
            out[k].readable = (e & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0;
            out[k].writable = (e & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0;
            k++;
        }
        break;
#endif
#ifdef HAVE_KQUEUE
    case MECH_KQUEUE: {
        struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
        n = kevent(ev->fd, NULL, 0, ev->kbuf, max, timeout_ms < 0 ? NULL : &ts);
        for (int i = 0; i < n; i++) {
            struct kevent *e = &ev->kbuf[i];
            out[k].fd = (int)e->ident;
            out[k].readable = e->filter == EVFILT_READ || (e->flags & (EV_EOF | EV_ERROR));
            out[k].writable = e->filter == EVFILT_WRITE || (e->flags & EV_ERROR);
            k++;
        }
        break;
    }
#endif
    case MECH_POLL:
        n = poll(ev->pfd, (nfds_t)ev->npfd, timeout_ms);
        /* poll reports readiness in place: finding it is a scan of every slot. */
        for (int i = 0; i < ev->npfd && k < n && k < max; i++) {
            short r = ev->pfd[i].revents;
            if (!r)
                continue;
            out[k].fd = ev->pfd[i].fd;
            out[k].readable = (r & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) != 0;
            out[k].writable = (r & (POLLOUT | POLLHUP | POLLERR)) != 0;
            k++;
        }
        break;
    case MECH_SELECT: {
        fd_set r = ev->rd, w = ev->wr;
        struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
        n = select(ev->maxfd + 1, &r, &w, NULL, timeout_ms < 0 ? NULL : &tv);
        for (int fd = 0; fd <= ev->maxfd && k < n && k < max; fd++) {
            int rr = FD_ISSET(fd, &r), ww = FD_ISSET(fd, &w);
            if (!rr && !ww)
                continue;
            out[k].fd = fd;
            out[k].readable = rr != 0;
            out[k].writable = ww != 0;
            k++;
        }
        break;
    }
    default:
        errno = ENOSYS;
        return -1;
    }
    if (n < 0)
        return errno == EINTR ? 0 : -1;
    return k;
}

void ev_close(struct ev *ev)
{
    if (!ev)
        return;
    if (ev->fd >= 0)
        close(ev->fd);
    free(ev->pfd);
    free(ev->slot);
    free(ev);
}

/* ==== files, socket, limits ============================================================ */

#define MAX_SERVED 16
static struct {
    char name[48];
    off_t size;
} served[MAX_SERVED];
static int n_served;

/* Content that a reader can check: the byte at offset i is pattern[i % 37]. */
static const char pattern[] = "0123456789abcdefghijklmnopqrstuvwxyz\n";

int httpd_make_files(const char *dir, const long long *sizes, int n, char *err, size_t errlen)
{
    char buf[65536];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = pattern[i % 37];
    if (mkdir(dir, 0700) && errno != EEXIST) {
        snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
        return -1;
    }
    n_served = 0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0 || sizes[i] > 256LL * 1024 * 1024) {
            snprintf(err, errlen, "file size %lld outside [0, 256m]", sizes[i]);
            return -1;
        }
        int dup = 0;
        for (int j = 0; j < n_served; j++)
            dup |= served[j].size == (off_t)sizes[i];
        if (dup)
            continue;
        if (n_served == MAX_SERVED) {
            snprintf(err, errlen, "at most %d files", MAX_SERVED);
            return -1;
        }
        snprintf(served[n_served].name, sizeof served[n_served].name, "file-%lld", sizes[i]);
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, served[n_served].name);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            snprintf(err, errlen, "create %s: %s", path, strerror(errno));
            return -1;
        }
        /* Chunks of a multiple of 37 bytes keep the pattern continuous across writes. */
        long long left = sizes[i];
        size_t chunk = (sizeof buf / 37) * 37;
        while (left > 0) {
            size_t len = left < (long long)chunk ? (size_t)left : chunk;
            if (om_write_full(fd, buf, len)) {
                snprintf(err, errlen, "write %s: %s", path, strerror(errno));
                close(fd);
                return -1;
            }
            left -= (long long)len;
        }
        close(fd);
        served[n_served++].size = (off_t)sizes[i];
    }
    return 0;
}

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

long long httpd_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl))
        return 256;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit want = rl;
        want.rlim_cur = rl.rlim_max == RLIM_INFINITY ? 1048576 : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &want) == 0)
            rl = want;
    }
    return rl.rlim_cur == RLIM_INFINITY ? 1048576 : (long long)rl.rlim_cur;
}

/* ==== the server ======================================================================= */

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

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    }
    return "Error";
}

/* A complete error response, for the paths that answer and close at once. */
static int error_response(char *buf, size_t len, int status, int head, int keep_alive)
{
    char body[64];
    int blen = snprintf(body, sizeof body, "%d %s\n", status, reason(status));
    return snprintf(buf, len,
                    "HTTP/1.1 %d %s\r\nServer: osmeter\r\nContent-Type: text/plain\r\n"
                    "Content-Length: %d\r\n%sConnection: %s\r\n\r\n%s",
                    status, reason(status), blen,
                    status == 405 ? "Allow: GET, HEAD\r\n" : "",
                    keep_alive ? "keep-alive" : "close", head ? "" : body);
}

/* Stop sending, read what the client has sent so far, close: a socket closed with
 * unread input sends a reset, which can destroy the answer before the client reads it. */
static void drain_and_close(int fd)
{
    char buf[4096];
    shutdown(fd, SHUT_WR);
    for (int i = 0; i < 16 && recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0; i++)
        ;
    close(fd);
}

/* ---- parsing -------------------------------------------------------------------------- */

struct req {
    int status;     /* 200, or the error to answer */
    int head;       /* HEAD: no body */
    int keep_alive; /* the client wants the connection kept */
    int must_close; /* framing is uncertain: close after the answer */
    int file;       /* index in served[] */
};

static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The request target names one generated file, or it is refused (400) or unknown (404). */
static int resolve_target(const char *t, size_t len, int *file)
{
    if (len > 1024)
        return 414;
    if (len == 0 || t[0] != '/')
        return 400; /* absolute-form, authority-form and '*' are not served here */
    char name[64];
    size_t n = 0;
    for (size_t i = 1; i < len; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c <= 0x20 || c >= 0x7f || c == '#')
            return 400;
        if (c == '?')
            break; /* a query string is ignored */
        if (c == '%') {
            int hi = i + 2 < len ? hexval((unsigned char)t[i + 1]) : -1;
            int lo = i + 2 < len ? hexval((unsigned char)t[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return 400;
            c = (unsigned char)(hi * 16 + lo);
            i += 2;
        }
        /* No directories here: a separator (plain or encoded) or a control byte is a
         * request for something this server does not have, and is refused as such. */
        if (c == '/' || c == '\\' || c < 0x20 || c >= 0x7f)
            return 400;
        if (n + 1 >= sizeof name)
            return 404;
        name[n++] = (char)c;
    }
    name[n] = 0;
    if (n > 0 && name[0] == '.')
        return 400; /* ".", "..", hidden names */
    for (int i = 0; i < n_served; i++)
        if (strcmp(name, served[i].name) == 0) {
            *file = i;
            return 200;
        }
    return 404;
}

/* Does the comma-separated header value contain the token (case-insensitive)? */
static int has_token(const char *v, size_t len, const char *tok)
{
    size_t tl = strlen(tok);
    size_t i = 0;
    while (i < len) {
        while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t start = i;
        while (i < len && v[i] != ',')
            i++;
        size_t end = i;
        while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
            end--;
        if (end - start == tl && strncasecmp(v + start, tok, tl) == 0)
            return 1;
    }
    return 0;
}

static int name_is(const char *p, size_t len, const char *name)
{
    return strlen(name) == len && strncasecmp(p, name, len) == 0;
}

/* Parse request line and headers in p[0..len), which ends with the empty line. */
static void parse_request(const char *p, size_t len, struct req *r)
{
    const char *end = p + len;
    memset(r, 0, sizeof *r);
    r->status = 400;
    r->must_close = 1;
    r->file = -1;

    const char *eol = memchr(p, '\n', len);
    const char *le = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
    const char *sp1 = memchr(p, ' ', (size_t)(le - p));
    if (!sp1 || sp1 == p)
        return;
    const char *target = sp1 + 1;
    const char *sp2 = memchr(target, ' ', (size_t)(le - target));
    if (!sp2)
        return;
    const char *version = sp2 + 1;
    size_t vlen = (size_t)(le - version);
    for (const char *m = p; m < sp1; m++)
        if (!is_tchar((unsigned char)*m))
            return;
    int minor;
    if (vlen == 8 && memcmp(version, "HTTP/1.", 7) == 0 && (version[7] == '0' || version[7] == '1'))
        minor = version[7] - '0';
    else if (vlen == 8 && memcmp(version, "HTTP/", 5) == 0 && version[5] >= '0' &&
             version[5] <= '9' && version[6] == '.' && version[7] >= '0' && version[7] <= '9') {
        r->status = 505;
        return;
    } else
        return;
    r->keep_alive = minor == 1;

    int hosts = 0, body = 0, headers = 0;
    for (const char *q = eol + 1; q < end;) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        if (!nl)
            return;
        const char *hl = nl > q && nl[-1] == '\r' ? nl - 1 : nl;
        if (hl == q)
            break; /* the empty line */
        if (*q == ' ' || *q == '\t')
            return; /* obsolete line folding */
        if (++headers > 100) {
            r->status = 431;
            return;
        }
        const char *colon = memchr(q, ':', (size_t)(hl - q));
        if (!colon || colon == q)
            return;
        for (const char *c = q; c < colon; c++)
            if (!is_tchar((unsigned char)*c))
                return;
        const char *v = colon + 1, *ve = hl;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        size_t nlen = (size_t)(colon - q), vl = (size_t)(ve - v);
        if (name_is(q, nlen, "host"))
            hosts++;
        else if (name_is(q, nlen, "content-length")) {
            if (vl == 0 || strspn(v, "0123456789") < vl)
                return;
            if (strspn(v, "0") < vl)
                body = 1;
        } else if (name_is(q, nlen, "transfer-encoding"))
            body = 1;
        else if (name_is(q, nlen, "connection")) {
            if (has_token(v, vl, "close"))
                r->keep_alive = 0;
            else if (has_token(v, vl, "keep-alive"))
                r->keep_alive = 1;
        }
        q = nl + 1;
    }
    if (hosts > 1 || (minor == 1 && hosts == 0))
        return; /* RFC 9112 §3.2: exactly one Host in HTTP/1.1 */
    size_t mlen = (size_t)(sp1 - p);
    if (mlen == 4 && memcmp(p, "HEAD", 4) == 0)
        r->head = 1;
    else if (!(mlen == 3 && memcmp(p, "GET", 3) == 0)) {
        r->status = 405;
        r->must_close = body; /* a body we will not read would break the framing */
        return;
    }
    if (body) {
        r->status = 413; /* GET and HEAD carry no content here */
        return;
    }
    r->status = resolve_target(target, (size_t)(sp2 - target), &r->file);
    r->must_close = r->status == 400 || r->status == 414;
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
    int n = error_response(buf, sizeof buf, 503, 0, 0);
    if (send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        /* best effort: the connection is being refused anyway */
    }
    if (s->probe)
        __atomic_add_fetch(&s->probe->refused, 1, __ATOMIC_RELAXED);
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
        __atomic_add_fetch(&s->probe->responses, 1, __ATOMIC_RELAXED);
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

static int respond(struct server *s, struct conn *c, struct req *r, uint64_t now)
{
    off_t size = 0;
    if (r->status == 200) {
        int fd = openat(s->dirfd, served[r->file].name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            r->status = errno == ENOENT || errno == ELOOP ? 404 : 500;
        else if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size != served[r->file].size) {
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
        c->out_len = (size_t)error_response(c->out, sizeof c->out, r->status, r->head,
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
        struct req r;
        if (end == 0) {
            if (c->in_len < (size_t)s->cfg->max_request)
                return; /* wait for the rest */
            memset(&r, 0, sizeof r);
            r.status = memchr(c->in, '\n', c->in_len) ? 431 : 414;
            r.must_close = 1;
            c->consumed = c->in_len;
        } else {
            parse_request(c->in, end, &r);
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
            __atomic_store_n(&p->accept_cycles, om_cycles(), __ATOMIC_RELAXED);
            __atomic_add_fetch(&p->accepted, 1, __ATOMIC_RELEASE);
            if (__atomic_exchange_n(&p->armed, 0, __ATOMIC_ACQ_REL) && s->cfg->notify_fd >= 0)
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
                        __atomic_add_fetch(&s->probe->accepted, 1, __ATOMIC_RELEASE);
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
                int n = error_response(buf, sizeof buf, 408, 0, 0);
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
    long long nofile = httpd_raise_nofile() - 8;
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
        __atomic_store_n(&s.probe->ready, 1, __ATOMIC_RELEASE);
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
            __atomic_store_n(&s.probe->waiting, 1, __ATOMIC_RELEASE);
        int n = ev_wait(s.ev, evs, EV_BATCH, timeout);
        if (s.probe)
            __atomic_store_n(&s.probe->waiting, 0, __ATOMIC_RELEASE);
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

/* ==== osmeter-core httpd ================================================================= */

#define HTTPD_USAGE                                                                        \
    "osmeter-core httpd [mech=" HTTPD_MECHS "] [addr=127.0.0.1] [port=0] "                 \
    "[files=100,1k,1m] [max_conns=10000] [max_request=8k] [idle_timeout=60] "               \
    "[request_timeout=10] [duration=0]"

/* Bad input: one line, exit status 2. */
static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "osmeter-core httpd: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (osmeter-core httpd help)\n");
    return OM_BADPARAM;
}

static int int_arg(const char *v, long long lo, long long hi, long long *out)
{
    return om_parse_int(v, out) == 0 && *out >= lo && *out <= hi ? 0 : -1;
}

struct announce {
    const char *mech, *host;
    int port, ipv6;
    const char *dir;
    long long max_conns, max_request, idle, request, duration;
};

/* The first line on stdout, once the server serves: where, what, and its bounds. */
static void announce(int capacity, void *arg)
{
    struct announce *a = arg;
    printf("{\"type\":\"httpd\",\"pid\":%ld,\"mech\":\"%s\",\"file_io\":\"%s\",\"addr\":",
           (long)getpid(), a->mech, httpd_file_io());
    om_json_string(stdout, a->host);
    printf(",\"port\":%d,\"url\":\"http://%s%s%s:%d/\",\"dir\":", a->port, a->ipv6 ? "[" : "",
           a->host, a->ipv6 ? "]" : "", a->port);
    om_json_string(stdout, a->dir);
    printf(",\"files\":[");
    for (int i = 0; i < n_served; i++)
        printf("%s\"/%s\"", i ? "," : "", served[i].name);
    printf("],\"max_conns\":%d,\"max_request\":%lld,\"idle_timeout_s\":%lld,"
           "\"request_timeout_s\":%lld,\"duration_s\":%lld}\n",
           capacity, a->max_request, a->idle, a->request, a->duration);
    fflush(stdout);
    if (capacity < a->max_conns)
        fprintf(stderr, "osmeter-core httpd: note: holds at most %d connections (%s), "
                        "not %lld\n", capacity,
                strcmp(a->mech, "select") == 0 ? "select: FD_SETSIZE" : "descriptor limit",
                a->max_conns);
}

int httpd_main(int argc, char **argv)
{
    const char *mech = "best", *addr = "127.0.0.1", *files = "100,1k,1m";
    long long port = 0, max_conns = 10000, max_request = 8192, idle = 60, request = 10,
              duration = 0;
    if (argc == 1 && (strcmp(argv[0], "help") == 0 || strcmp(argv[0], "--help") == 0)) {
        printf("usage: %s\n"
               "Serves the files it generates (file-<size> for each size in files) from a "
               "directory it owns\nand removes on exit; prints one JSON line with its address "
               "once it serves.\n", HTTPD_USAGE);
        return 0;
    }
    for (int i = 0; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq)
            return usage("expected key=value, got '%s'", argv[i]);
        *eq = 0;
        const char *k = argv[i], *v = eq + 1;
        int bad = 0;
        if (strcmp(k, "mech") == 0)
            mech = v;
        else if (strcmp(k, "addr") == 0)
            addr = v;
        else if (strcmp(k, "files") == 0)
            files = v;
        else if (strcmp(k, "port") == 0)
            bad = int_arg(v, 0, 65535, &port);
        else if (strcmp(k, "max_conns") == 0)
            bad = int_arg(v, 1, 1000000, &max_conns);
        else if (strcmp(k, "max_request") == 0)
            bad = int_arg(v, 256, 1024 * 1024, &max_request);
        else if (strcmp(k, "idle_timeout") == 0)
            bad = int_arg(v, 1, 86400, &idle);
        else if (strcmp(k, "request_timeout") == 0)
            bad = int_arg(v, 1, 3600, &request);
        else if (strcmp(k, "duration") == 0)
            bad = int_arg(v, 0, 30LL * 86400, &duration);
        else
            return usage("unknown option '%s'", k);
        if (bad) {
            *eq = '=';
            return usage("bad value in '%s'", argv[i]);
        }
    }
    unsigned char probe_addr[sizeof(struct in6_addr)];
    if (inet_pton(AF_INET, addr, probe_addr) != 1 && inet_pton(AF_INET6, addr, probe_addr) != 1)
        return usage("addr: '%s' is not a numeric IPv4 or IPv6 address", addr);
    char err[512];
    const char *resolved = ev_resolve(mech, err, sizeof err);
    if (!resolved)
        return usage("%s", err);
    long long sizes[MAX_SERVED];
    int nsizes = 0;
    char list[1024];
    snprintf(list, sizeof list, "%s", files);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (nsizes == MAX_SERVED || om_parse_int(tok, &sizes[nsizes]) || sizes[nsizes] < 0 ||
            sizes[nsizes] > 256LL * 1024 * 1024)
            return usage("files: '%s' is not a list of up to 16 sizes in [0, 256m]", files);
        nsizes++;
    }
    if (nsizes == 0)
        return usage("files: empty list%s", "");

    const char *scratch = om_scratch_dir();
    if (!scratch) {
        fprintf(stderr, "osmeter-core httpd: cannot create a scratch directory: %s\n",
                strerror(errno));
        return OM_FAILED;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/www", scratch);
    if (httpd_make_files(dir, sizes, nsizes, err, sizeof err)) {
        fprintf(stderr, "osmeter-core httpd: %s\n", err);
        return OM_FAILED;
    }
    int lfd = httpd_listen(addr, (int)port, err, sizeof err);
    if (lfd < 0) {
        fprintf(stderr, "osmeter-core httpd: %s\n", err);
        return OM_FAILED;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "?";
    int bound = -1;
    if (getsockname(lfd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
            bound = ntohs(a->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
            bound = ntohs(a->sin6_port);
        }
    }
    if (strncmp(host, "127.", 4) != 0 && strcmp(host, "::1") != 0)
        fprintf(stderr, "osmeter-core httpd: note: listening on %s, not loopback\n", host);
    struct announce a = {resolved, host, bound, ss.ss_family == AF_INET6, dir, max_conns,
                         max_request, idle, request, duration};
    struct httpd_config cfg = {
        .mech = resolved,
        .listen_fd = lfd,
        .dir = dir,
        .max_conns = (int)max_conns,
        .max_request = (int)max_request,
        .idle_timeout_ms = (int)(idle * 1000),
        .request_timeout_ms = (int)(request * 1000),
        .write_timeout_ms = (int)(request * 1000),
        .duration_s = (double)duration,
        .probe = NULL,
        .notify_fd = -1,
        .on_ready = announce,
        .on_ready_arg = &a,
    };
    int rc = httpd_serve(&cfg, err, sizeof err);
    close(lfd);
    if (rc) {
        fprintf(stderr, "osmeter-core httpd: %s\n", err);
        return OM_FAILED;
    }
    return 0;
}
