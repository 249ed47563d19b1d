/*
 * Portable event notification: one interface over epoll (Linux), kqueue (the BSDs,
 * macOS), poll and select, for the HTTP server (servers/httpd.c) and the event-loop
 * clients of net.http_throughput (bench/http.c).  The mechanism is chosen by name, so a
 * benchmark can put each one beside the others on the same kernel.
 */
#ifndef OSMETER_LIB_EV_H
#define OSMETER_LIB_EV_H

#include <stddef.h>

/* Which scalable mechanisms this system has (also for syscall.epoll/.kqueue). */
#if defined(__linux__)
#define EV_HAVE_EPOLL 1
#endif
#if defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) ||                 \
    defined(__DragonFly__) || defined(__APPLE__)
#define EV_HAVE_KQUEUE 1
#endif

/* The choices of a benchmark's "mech" parameter. */
#define EV_MECHS "best|epoll|kqueue|poll|select"

struct ev;
struct ev_event {
    int fd;
    int readable; /* also set on hang-up and error: the next read tells which */
    int writable; /* also set on hang-up and error: the next write tells which */
};
/* At most this many events are returned by one ev_wait(). */
#define EV_BATCH 256

/* The best mechanism this system offers: epoll (Linux), kqueue (BSD, macOS), else poll. */
const char *ev_best(void);
/* "best" resolved; NULL (and a reason in why) when the mechanism is not available. */
const char *ev_resolve(const char *mech, char *why, size_t whylen);
/* Descriptors registered must be below `limit` (select caps it at FD_SETSIZE). */
struct ev *ev_open(const char *mech, int limit, char *err, size_t errlen);
int ev_limit(const struct ev *ev);
int ev_set(struct ev *ev, int fd, int want_read, int want_write, int is_new);
int ev_del(struct ev *ev, int fd);
/* Fills up to max events; returns their number, 0 on timeout or EINTR, -1 on error. */
int ev_wait(struct ev *ev, struct ev_event *out, int max, int timeout_ms);
void ev_close(struct ev *ev);

#endif
