/*
 * System-call family: kernel entry/exit (getpid, as Ousterhout, Lai & Baker and McGarry
 * measured it), a few cheap real calls beside it, and open/close of a one- and a
 * four-component path (Ousterhout's Table 9).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness.h"
#include "../lib/workdir.h"

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

#define LATENCY_METRIC {{"latency", "ns", "lower", OM_POINT, NULL, "time per call"}}

const struct om_bench om_family_syscall[] = {
    {"syscall.getpid", "null system call: getpid() in a loop (kernel entry and exit)",
     "O90 T2; LB96 §4; MG05 T1", "quick,full,o90,lb96,mg05,cc06", {0.25, 0.085, 0.029}, run_getpid,
     {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"syscall.getppid", "getppid() in a loop (the call perf bench syscall basic uses)",
     "osmeter", "quick,full", {0.22, 0.073, 0.01}, run_getppid, {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"syscall.read", "read() of 1 byte from /dev/zero", "lmbench lat_syscall read",
     "quick,full", {0.093, 0.086, 0.018}, run_read, {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"syscall.write", "write() of 1 byte to /dev/null", "lmbench lat_syscall write",
     "quick,full", {0.29, 0.069, 0.01}, run_write, {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"syscall.stat", "stat() of a file in the scratch directory", "lmbench lat_syscall stat",
     "quick,full", {0.3, 0.064, 0.015}, run_stat, {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"syscall.fstat", "fstat() of an open descriptor", "lmbench lat_syscall fstat",
     "quick,full", {0.23, 0.081, 0.015}, run_fstat, {OM_BATCH_PARAMS}, LATENCY_METRIC},
    {"fs.openclose", "open()+close() of 'foo' and of 'a/b/c/foo' (one vs four components)",
     "O90 T9", "quick,full,o90", {1.0, 0.2, 0.037}, run_openclose, {FS_DIR_PARAM, OM_BATCH_PARAMS},
     {{"foo", "ns", "lower", OM_POINT, NULL, "open+close of a one-component name"},
      {"a/b/c/foo", "ns", "lower", OM_POINT, NULL, "open+close of a four-component path"}}},
    {0},
};
