/*
 * System-call family: kernel entry/exit (getpid, as Ousterhout, Lai & Baker and McGarry
 * measured it), a few cheap real calls beside it, readiness checks with a zero timeout
 * (select, poll, epoll, kqueue: Ousterhout's Table 4), and open/close of a one- and a
 * four-component path (Ousterhout's Table 9: fs.openclose, here because it shares the
 * path-building and the per-call loop of syscall.stat).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness.h"
#include "../lib/ev.h"
#include "../lib/workdir.h"
#ifdef EV_HAVE_EPOLL
#include <sys/epoll.h>
#endif
#ifdef EV_HAVE_KQUEUE
#include <sys/types.h>
#include <sys/event.h>
#endif

static uint64_t loop_getpid(void *arg, uint64_t n)
{
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc += (uint64_t)getpid();
    return acc;
}

static uint64_t loop_getppid(void *arg, uint64_t n)
{
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc += (uint64_t)getppid();
    return acc;
}

struct fd_arg {
    int fd;
    const char *path;
};

static uint64_t loop_read1(void *arg, uint64_t n)
{
    int fd = ((struct fd_arg *)arg)->fd;
    char c;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc += (uint64_t)read(fd, &c, 1);
    return acc;
}

static uint64_t loop_write1(void *arg, uint64_t n)
{
    int fd = ((struct fd_arg *)arg)->fd;
    char c = 0;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc += (uint64_t)write(fd, &c, 1);
    return acc;
}

static uint64_t loop_stat(void *arg, uint64_t n)
{
    const char *path = ((struct fd_arg *)arg)->path;
    struct stat st;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc += (uint64_t)stat(path, &st) + (uint64_t)st.st_size;
    return acc;
}

static uint64_t loop_fstat(void *arg, uint64_t n)
{
    int fd = ((struct fd_arg *)arg)->fd;
    struct stat st;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc += (uint64_t)fstat(fd, &st) + (uint64_t)st.st_size;
    return acc;
}

static uint64_t loop_openclose(void *arg, uint64_t n)
{
    const char *path = ((struct fd_arg *)arg)->path;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++) {
        int fd = open(path, O_RDONLY);
        acc += (uint64_t)fd;
        close(fd);
    }
    return acc;
}

static int run_getpid(struct om_ctx *ctx) { return om_measure(ctx, "latency", loop_getpid, NULL, 1); }

static int run_getppid(struct om_ctx *ctx)
{
    return om_measure(ctx, "latency", loop_getppid, NULL, 1);
}

/* Check once, outside the timed loop, that the call does what we claim to time. */
static int run_on_device(struct om_ctx *ctx, const char *dev, int flags, om_batch_fn fn)
{
    struct fd_arg a = {.fd = open(dev, flags), .path = dev};
    if (a.fd < 0)
        return om_skip(ctx, "cannot open %s: %s", dev, strerror(errno));
    if (fn(&a, 1) != 1) {
        close(a.fd);
        return om_fail(ctx, "one-byte transfer on %s did not move one byte", dev);
    }
    int rc = om_measure(ctx, "latency", fn, &a, 1);
    close(a.fd);
    return rc;
}

static int run_read(struct om_ctx *ctx) { return run_on_device(ctx, "/dev/zero", O_RDONLY, loop_read1); }
static int run_write(struct om_ctx *ctx)
{
    return run_on_device(ctx, "/dev/null", O_WRONLY, loop_write1);
}
static int run_fstat(struct om_ctx *ctx)
{
    struct fd_arg a = {.fd = open("/dev/null", O_RDONLY)};
    if (a.fd < 0)
        return om_skip(ctx, "cannot open /dev/null: %s", strerror(errno));
    int rc = om_measure(ctx, "latency", loop_fstat, &a, 1);
    close(a.fd);
    return rc;
}

/* A regular file below dir, so stat and open walk a real file system. */
static int make_path(struct om_ctx *ctx, const char *dir, char *out, size_t len,
                     const char *rel)
{
    char sub[4096];
    snprintf(sub, sizeof sub, "%s", rel);
    for (char *p = sub; (p = strchr(p, '/')); p++) { /* mkdir -p of the parents */
        *p = 0;
        char d[8192 + 16];
        snprintf(d, sizeof d, "%s/%s", dir, sub);
        if (mkdir(d, 0700) && errno != EEXIST)
            return om_fail(ctx, "mkdir %s: %s", d, strerror(errno));
        *p = '/';
    }
    snprintf(out, len, "%s/%s", dir, rel);
    int fd = open(out, O_CREAT | O_WRONLY, 0600);
    if (fd < 0)
        return om_fail(ctx, "create %s: %s", out, strerror(errno));
    close(fd);
    return OM_OK;
}

static int run_stat(struct om_ctx *ctx)
{
    char path[4096];
    const char *dir = om_scratch_dir();
    if (!dir)
        return om_fail(ctx, "cannot create a scratch directory: %s", strerror(errno));
    int rc = make_path(ctx, dir, path, sizeof path, "foo");
    if (rc)
        return rc;
    struct fd_arg a = {.path = path};
    return om_measure(ctx, "latency", loop_stat, &a, 1);
}

/* Ousterhout timed open+close of "foo" and "/a/b/c/foo", locally and on a remote file
 * system; both are relative to a private directory in `dir` (the scratch directory by
 * default) here, so the walk down to it is the same for both and the difference is the
 * three extra components. */
static int run_openclose(struct om_ctx *ctx)
{
    char work[4096], shallow[4096], deep[4096];
    int rc = fs_workdir(ctx, 0, work, sizeof work);
    if (rc || (rc = make_path(ctx, work, shallow, sizeof shallow, "foo")) ||
        (rc = make_path(ctx, work, deep, sizeof deep, "a/b/c/foo")))
        return rc;
    if (chdir(work))
        return om_fail(ctx, "chdir %s: %s", work, strerror(errno));
    struct fd_arg one = {.path = "foo"}, four = {.path = "a/b/c/foo"};
    if (access(one.path, R_OK) != 0 || access(four.path, R_OK) != 0) /* what the loop opens */
        return om_fail(ctx, "cannot open the files in %s: %s", work, strerror(errno));
    if ((rc = om_measure(ctx, "foo", loop_openclose, &one, 1)))
        return rc;
    return om_measure(ctx, "a/b/c/foo", loop_openclose, &four, 1);
}

/* ---- readiness checks with a zero timeout (O90 T4) ------------------------------ */
/* 1 empty pipe, 10 empty pipes, 10 pipes holding data; with select, poll, and the
 * scalable mechanisms epoll (Linux) and kqueue (BSD, macOS) where the system has them. */

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

#ifdef EV_HAVE_EPOLL
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

#ifdef EV_HAVE_KQUEUE
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
        EV_SET(&ev, p->r[k], EVFILT_READ, EV_ADD, 0, 0, 0);
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
/* lmbench's lat_select: n descriptors that are always ready for writing (dups of one
 * /dev/null descriptor: like lmbench's file, it has no poll method), a copy of the same
 * write set each call, and nfds = n as lmbench passes it (nfds=n), which covers only the
 * descriptors below n, or nfds = highest + 1 (nfds=all). */
#define SELECT_FILES_MAX 512
struct fileset {
    fd_set set;
    int nfds;
};

static uint64_t loop_select_files(void *arg, uint64_t iters)
{
    struct fileset *f = arg;
    uint64_t ready = 0;
    for (uint64_t i = 0; i < iters; i++) {
        fd_set copy = f->set;
        struct timeval zero = {0, 0};
        ready += (uint64_t)select(f->nfds, NULL, &copy, NULL, &zero);
    }
    return ready;
}

static int run_select_files(struct om_ctx *ctx)
{
    int n = (int)om_int(ctx, "n"), fds[SELECT_FILES_MAX], opened = 0, rc = OM_OK, maxfd = -1;
    struct fileset f;
    FD_ZERO(&f.set);
    int fid = open("/dev/null", O_WRONLY);
    if (fid < 0)
        return om_fail(ctx, "open /dev/null: %s", strerror(errno));
    for (; opened < n; opened++) {
        fds[opened] = dup(fid);
        if (fds[opened] < 0 || fds[opened] >= FD_SETSIZE) {
            rc = om_skip(ctx, "cannot have %d descriptors below FD_SETSIZE (%d)", n, FD_SETSIZE);
            if (fds[opened] >= 0)
                close(fds[opened]);
            break;
        }
        FD_SET(fds[opened], &f.set);
        if (fds[opened] > maxfd)
            maxfd = fds[opened];
    }
    close(fid);
    if (rc == OM_OK) {
        f.nfds = strcmp(om_str(ctx, "nfds"), "n") == 0 ? n : maxfd + 1;
        int watched = 0;
        for (int i = 0; i < n; i++)
            watched += fds[i] < f.nfds;
        om_note(ctx, "descriptors", "%d set, lowest %d, highest %d; nfds %d, so select looks at %d",
                n, fds[0], maxfd, f.nfds, watched);
        uint64_t ready = loop_select_files(&f, 1);
        if (ready != (uint64_t)watched)
            rc = om_fail(ctx, "%llu descriptors reported ready, expected %d",
                         (unsigned long long)ready, watched);
        else
            rc = om_measure(ctx, "latency", loop_select_files, &f, 1);
    }
    for (int i = 0; i < opened; i++)
        close(fds[i]);
    return rc;
}


static int run_epoll(struct om_ctx *ctx)
{
#ifdef EV_HAVE_EPOLL
    return run_configs(ctx, loop_epoll, setup_epoll);
#else
    return om_skip(ctx, "epoll is Linux-only");
#endif
}

static int run_kqueue(struct om_ctx *ctx)
{
#ifdef EV_HAVE_KQUEUE
    return run_configs(ctx, loop_kqueue, setup_kqueue);
#else
    return om_skip(ctx, "kqueue is not available on this system (BSD and macOS only)");
#endif
}

#define CONFIG_METRICS                                                                    \
    {{"1_empty", "ns", "lower", OM_POINT, NULL, "1 pipe, empty"},                         \
     {"10_empty", "ns", "lower", OM_POINT, NULL, "10 pipes, all empty"},                  \
     {"10_full", "ns", "lower", OM_POINT, NULL, "10 pipes, each holding data"}}

#define LATENCY_METRIC {{"latency", "ns", "lower", OM_POINT, NULL, "time per call"}}

const struct om_bench om_family_syscall[] = {
    {"syscall.getpid", "null system call: getpid() in a loop (kernel entry and exit)",
     "O90 T2; LB96 §4; MG05 T1", "quick,full,o90,lb96,mg05,cc06", {0.23, 0.067, 0.029}, run_getpid,
     {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"syscall.getppid", "getppid() in a loop (the call perf bench syscall basic uses)",
     "osmeter", "quick,full", {0.23, 0.067, 0.01}, run_getppid, {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"syscall.read", "read() of 1 byte from /dev/zero", "lmbench lat_syscall read",
     "quick,full", {0.22, 0.066, 0.018}, run_read, {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"syscall.write", "write() of 1 byte to /dev/null", "lmbench lat_syscall write",
     "quick,full", {0.23, 0.065, 0.01}, run_write, {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"syscall.stat", "stat() of a file in the scratch directory", "lmbench lat_syscall stat",
     "quick,full", {0.23, 0.066, 0.015}, run_stat, {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"syscall.fstat", "fstat() of an open descriptor", "lmbench lat_syscall fstat",
     "quick,full", {0.23, 0.066, 0.015}, run_fstat, {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"fs.openclose", "open()+close() of 'foo' and of 'a/b/c/foo' (one vs four components)",
     "O90 T9", "quick,full,o90", {0.48, 0.13, 0.037}, run_openclose, {FS_DIR_PARAM, OM_BATCH_PARAMS},
     {{"foo", "ns", "lower", OM_POINT, NULL, "open+close of a one-component name"},
      {"a/b/c/foo", "ns", "lower", OM_POINT, NULL, "open+close of a four-component path"}}},
    {"syscall.select", "select() with a zero timeout on 1 / 10 empty / 10 full pipes",
     "O90 T4", "quick,full,o90", {0.68, 0.19, 0.053},
     run_select, {OM_BATCH_PARAMS}, CONFIG_METRICS},
    {"syscall.select.files", "select() for writing on n always-ready descriptors (lmbench lat_select file)",
     "lmbench lat_select", "", {0.3, 0.1, 0.03}, run_select_files,
     {OM_BATCH_PARAMS,
      {"n", OM_INT, "10", NULL, NULL, 1, SELECT_FILES_MAX, NULL, "descriptors in the write set"},
      {"nfds", OM_CHOICE, "n", NULL, NULL, 0, 0, "n|all",
       "n: select's nfds = n as lmbench passes it (only descriptors below n are looked at); "
       "all: highest + 1"}},
     {{"latency", "ns", "lower", OM_POINT, NULL, "one select() call"}}},
    {"syscall.poll", "poll() with a zero timeout on 1 / 10 empty / 10 full pipes",
     "osmeter (O90 T4 with poll)", "quick,full", {0.69, 0.19, 0.045}, run_poll, {OM_BATCH_PARAMS},
     CONFIG_METRICS},
    {"syscall.epoll", "epoll_wait() with a zero timeout on 1 / 10 empty / 10 full pipes "
     "(set registered once)", "osmeter (O90 T4 with epoll)", "quick,full", {0.68, 0.19, 0.044},
     run_epoll,
     {OM_BATCH_PARAMS}, CONFIG_METRICS},
    {"syscall.kqueue", "kevent() with a zero timeout on 1 / 10 empty / 10 full pipes (set "
     "registered once)", "osmeter (O90 T4 with kqueue)", "quick,full", {0.81, 0.21, 0.044},
     run_kqueue,
     {OM_BATCH_PARAMS}, CONFIG_METRICS},
    {0},
};
