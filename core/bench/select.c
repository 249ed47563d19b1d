/*
 * Readiness checks with a zero timeout (Ousterhout 1990, Table 4): 1 empty pipe, 10 empty
 * pipes, 10 pipes holding data; with select, poll, and the scalable mechanisms epoll
 * (Linux) and kqueue (BSD, macOS) where the system has them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/epoll.h>
#endif
#if defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) || defined(__APPLE__) || \
    defined(__DragonFly__)
#define HAVE_KQUEUE 1
#include <sys/event.h>
#endif

#include "../harness.h"

#define MAX_PIPES 10

struct pipeset {
    int r[MAX_PIPES], w[MAX_PIPES];
    int n;       /* pipes watched */
    int full;    /* each holds a byte */
    int maxfd;
    int mech_fd; /* epoll / kqueue descriptor */
};

static int open_pipes(struct om_ctx *ctx, struct pipeset *p, int n, int full)
{
    memset(p, 0, sizeof *p);
    p->mech_fd = -1;
    for (int i = 0; i < n; i++) {
        int fds[2];
        if (pipe(fds))
            return om_fail(ctx, "pipe: %s", strerror(errno));
        p->r[i] = fds[0];
        p->w[i] = fds[1];
        p->n = i + 1;
        if (fds[0] > p->maxfd)
            p->maxfd = fds[0];
        if (full && write(fds[1], "x", 1) != 1)
            return om_fail(ctx, "write: %s", strerror(errno));
    }
    p->full = full;
    return OM_OK;
}

static void close_pipes(struct pipeset *p)
{
    for (int i = 0; i < p->n; i++) {
        close(p->r[i]);
        close(p->w[i]);
    }
    if (p->mech_fd >= 0)
        close(p->mech_fd);
}

/* select must be handed a fresh set each call, as every real caller does. */
static uint64_t loop_select(void *arg, uint64_t iters)
{
    struct pipeset *p = arg;
    uint64_t ready = 0;
    for (uint64_t i = 0; i < iters; i++) {
        fd_set set;
        FD_ZERO(&set);
        for (int k = 0; k < p->n; k++)
            FD_SET(p->r[k], &set);
        struct timeval zero = {0, 0};
        ready += (uint64_t)select(p->maxfd + 1, &set, NULL, NULL, &zero);
    }
    return ready;
}

static uint64_t loop_poll(void *arg, uint64_t iters)
{
    struct pipeset *p = arg;
    struct pollfd fds[MAX_PIPES];
    uint64_t ready = 0;
    for (uint64_t i = 0; i < iters; i++) {
        for (int k = 0; k < p->n; k++) {
            fds[k].fd = p->r[k];
            fds[k].events = POLLIN;
            fds[k].revents = 0;
        }
        ready += (uint64_t)poll(fds, (nfds_t)p->n, 0);
    }
    return ready;
}

#ifdef __linux__
static uint64_t loop_epoll(void *arg, uint64_t iters)
{
    struct pipeset *p = arg;
    struct epoll_event ev[MAX_PIPES];
    uint64_t ready = 0;
    for (uint64_t i = 0; i < iters; i++)
        ready += (uint64_t)epoll_wait(p->mech_fd, ev, MAX_PIPES, 0);
    return ready;
}

static int setup_epoll(struct om_ctx *ctx, struct pipeset *p)
{
    p->mech_fd = epoll_create1(0);
    if (p->mech_fd < 0)
        return om_fail(ctx, "epoll_create1: %s", strerror(errno));
    for (int k = 0; k < p->n; k++) {
        /* Level-triggered, so a full pipe is reported on every call, like select. */
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = p->r[k]};
        if (epoll_ctl(p->mech_fd, EPOLL_CTL_ADD, p->r[k], &ev))
            return om_fail(ctx, "epoll_ctl: %s", strerror(errno));
    }
    return OM_OK;
}
#endif

#ifdef HAVE_KQUEUE
static uint64_t loop_kqueue(void *arg, uint64_t iters)
{
    struct pipeset *p = arg;
    struct kevent ev[MAX_PIPES];
    struct timespec zero = {0, 0};
    uint64_t ready = 0;
    for (uint64_t i = 0; i < iters; i++)
        ready += (uint64_t)kevent(p->mech_fd, NULL, 0, ev, MAX_PIPES, &zero);
    return ready;
}

static int setup_kqueue(struct om_ctx *ctx, struct pipeset *p)
{
    p->mech_fd = kqueue();
    if (p->mech_fd < 0)
        return om_fail(ctx, "kqueue: %s", strerror(errno));
    for (int k = 0; k < p->n; k++) {
        struct kevent ev;
        EV_SET(&ev, p->r[k], EVFILT_READ, EV_ADD, 0, 0, NULL);
        if (kevent(p->mech_fd, &ev, 1, NULL, 0, NULL))
            return om_fail(ctx, "kevent: %s", strerror(errno));
    }
    return OM_OK;
}
#endif

typedef int (*setup_fn)(struct om_ctx *, struct pipeset *);

/* The three configurations of Table 4, each checked once before it is timed. */
static int run_configs(struct om_ctx *ctx, om_batch_fn loop, setup_fn setup)
{
    static const struct { const char *metric; int n, full; } configs[] = {
        {"1_empty", 1, 0}, {"10_empty", 10, 0}, {"10_full", 10, 1}};
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        struct pipeset p;
        int rc = open_pipes(ctx, &p, configs[c].n, configs[c].full);
        if (rc == OM_OK && setup)
            rc = setup(ctx, &p);
        if (rc == OM_OK) {
            uint64_t ready = loop(&p, 1), expect = configs[c].full ? (uint64_t)configs[c].n : 0;
            if (ready != expect)
                rc = om_fail(ctx, "%s: %llu descriptors reported ready, expected %llu",
                             configs[c].metric, (unsigned long long)ready,
                             (unsigned long long)expect);
        }
        if (rc == OM_OK)
            rc = om_measure(ctx, configs[c].metric, loop, &p, 1);
        close_pipes(&p);
        if (rc)
            return rc;
    }
    return OM_OK;
}

static int run_select(struct om_ctx *ctx) { return run_configs(ctx, loop_select, NULL); }
static int run_poll(struct om_ctx *ctx) { return run_configs(ctx, loop_poll, NULL); }

static int run_epoll(struct om_ctx *ctx)
{
#ifdef __linux__
    return run_configs(ctx, loop_epoll, setup_epoll);
#else
    return om_skip(ctx, "epoll is Linux-only");
#endif
}

static int run_kqueue(struct om_ctx *ctx)
{
#ifdef HAVE_KQUEUE
    return run_configs(ctx, loop_kqueue, setup_kqueue);
#else
    return om_skip(ctx, "kqueue is not available on this system (BSD and macOS only)");
#endif
}

#define CONFIG_METRICS                                                                    \
    {{"1_empty", "ns", "lower", OM_POINT, NULL, "1 pipe, empty"},                         \
     {"10_empty", "ns", "lower", OM_POINT, NULL, "10 pipes, all empty"},                  \
     {"10_full", "ns", "lower", OM_POINT, NULL, "10 pipes, each holding data"}}

const struct om_bench om_family_select[] = {
    {"syscall.select", "select() with a zero timeout on 1 / 10 empty / 10 full pipes",
     "O90 T4", "quick,full,o90", {0.69, 0.24, 0.053},
     run_select, {OM_BATCH_PARAMS}, CONFIG_METRICS},
    {"syscall.poll", "poll() with a zero timeout on 1 / 10 empty / 10 full pipes",
     "osmeter (O90 T4 with poll)", "quick,full", {0.57, 0.18, 0.045}, run_poll, {OM_BATCH_PARAMS},
     CONFIG_METRICS},
    {"syscall.epoll", "epoll_wait() with a zero timeout on 1 / 10 empty / 10 full pipes "
     "(set registered once)", "osmeter (O90 T4 with epoll)", "quick,full", {0.81, 0.21, 0.044},
     run_epoll,
     {OM_BATCH_PARAMS}, CONFIG_METRICS},
    {"syscall.kqueue", "kevent() with a zero timeout on 1 / 10 empty / 10 full pipes (set "
     "registered once)", "osmeter (O90 T4 with kqueue)", "quick,full", {0.81, 0.21, 0.044},
     run_kqueue,
     {OM_BATCH_PARAMS}, CONFIG_METRICS},
    {0},
};
