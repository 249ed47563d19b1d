/* Portable event notification: see ev.h. */
#define _GNU_SOURCE
#include "ev.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#ifdef EV_HAVE_EPOLL
#include <sys/epoll.h>
#endif
#ifdef EV_HAVE_KQUEUE
#include <sys/types.h>
#include <sys/event.h>
#endif

enum { MECH_EPOLL, MECH_KQUEUE, MECH_POLL, MECH_SELECT };

struct ev {
    int mech;
    int limit; /* registered descriptors are below this */
    int fd;    /* epoll or kqueue descriptor */
#ifdef EV_HAVE_EPOLL
    struct epoll_event ebuf[EV_BATCH];
#endif
#ifdef EV_HAVE_KQUEUE
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
#if defined(EV_HAVE_EPOLL)
    return "epoll";
#elif defined(EV_HAVE_KQUEUE)
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
#ifdef EV_HAVE_EPOLL
        return "epoll";
#else
        snprintf(why, whylen, "epoll is Linux-only; this system offers %s", ev_best());
        return NULL;
#endif
    }
    if (strcmp(mech, "kqueue") == 0) {
#ifdef EV_HAVE_KQUEUE
        return "kqueue";
#else
        snprintf(why, whylen, "kqueue is not available on this system (it offers %s)",
                 ev_best());
        return NULL;
#endif
    }
    snprintf(why, whylen, "unknown event mechanism '%s' (%s)", mech, EV_MECHS);
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
#ifdef EV_HAVE_EPOLL
        ev->fd = epoll_create1(EPOLL_CLOEXEC);
#endif
    } else if (strcmp(mech, "kqueue") == 0) {
        ev->mech = MECH_KQUEUE;
#ifdef EV_HAVE_KQUEUE
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

/* A descriptor the set can hold (poll's slot table and select's fd_set end at limit). */
static int in_range(const struct ev *ev, int fd)
{
    if (fd >= 0 && fd < ev->limit)
        return 1;
    errno = EINVAL;
    return 0;
}

int ev_set(struct ev *ev, int fd, int want_read, int want_write, int is_new)
{
    if (!in_range(ev, fd))
        return -1;
    switch (ev->mech) {
#ifdef EV_HAVE_EPOLL
    case MECH_EPOLL: {
        struct epoll_event e;
        memset(&e, 0, sizeof e);
        e.events = (want_read ? EPOLLIN : 0) | (want_write ? EPOLLOUT : 0);
        e.data.fd = fd;
        return epoll_ctl(ev->fd, is_new ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &e);
    }
#endif
#ifdef EV_HAVE_KQUEUE
    case MECH_KQUEUE: {
        struct kevent ch[2];
        /* udata 0, not NULL: an intptr_t before NetBSD 10, a pointer elsewhere */
        EV_SET(&ch[0], fd, EVFILT_READ, EV_ADD | (want_read ? EV_ENABLE : EV_DISABLE), 0, 0,
               0);
        EV_SET(&ch[1], fd, EVFILT_WRITE, EV_ADD | (want_write ? EV_ENABLE : EV_DISABLE), 0,
               0, 0);
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
    if (!in_range(ev, fd))
        return -1;
    switch (ev->mech) {
#ifdef EV_HAVE_EPOLL
    case MECH_EPOLL: {
        struct epoll_event e; /* non-NULL for kernels before 2.6.9 */
        memset(&e, 0, sizeof e);
        return epoll_ctl(ev->fd, EPOLL_CTL_DEL, fd, &e);
    }
#endif
#ifdef EV_HAVE_KQUEUE
    case MECH_KQUEUE: {
        struct kevent ch[2];
        EV_SET(&ch[0], fd, EVFILT_READ, EV_DELETE, 0, 0, 0);
        EV_SET(&ch[1], fd, EVFILT_WRITE, EV_DELETE, 0, 0, 0);
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
#ifdef EV_HAVE_EPOLL
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
#ifdef EV_HAVE_KQUEUE
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
