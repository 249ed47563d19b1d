/*
 * UnixBench-style items (Camacho 2006, Test 3, used UnixBench 4.1.0): loops per second of
 * the five loops that UnixBench's index takes from the operating system, written after
 * UnixBench's own programs (src/syscall.c, pipe.c, context1.c, spawn.c, execl.c):
 *
 *   ub.syscall  close(dup(0)); getpid(); getuid(); umask(022);   (4.1.0's loop; 5.x calls
 *               getppid() instead, because old glibc cached getpid)
 *   ub.pipe     write 512 bytes into a pipe and read them back, in one process
 *   ub.ctx      two processes passing an increasing integer back and forth over two pipes,
 *               each checking it (one loop = one round trip)
 *   ub.spawn    fork; the child exits at once; the parent waits
 *   ub.execl    a chain of execs: a program that execs itself (one loop = one exec)
 *
 * UnixBench counts loops for a fixed time (10 s x 10 samples, 30 s x 3 for spawn and
 * execl); here a calibrated batch of loops is timed on the monotonic clock, which gives
 * the same rate, as many samples of half the time (5 s, 15 s: the "duration" note;
 * bench/duration_cv.py compares the run-to-run CV).  UnixBench does not pin its
 * processes, so pin=none is the default here.
 * The front-end (osmeter/analysis/families/ub.py) turns loops per second into UnixBench's
 * index, 10 x measured / baseline of the SPARCstation 20-61 "George".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"

struct ub_arg {
    int fd;             /* ub.syscall: the descriptor dup'ed */
    int p[2], q[2];     /* pipes */
    unsigned long iter; /* ub.ctx: the integer passed around */
    const char *helper; /* ub.execl */
    struct om_fault fault;
};

/* Calibrated batches reported as loops per second.  The batches are shorter than
 * UnixBench's samples (`unixbench`, e.g. "10 x 10 s"): a rate needs no 10 s to settle
 * once the batch dwarfs the clock and the loop's start-up, and the full suite would
 * spend ten minutes here; the note says what was run beside what UnixBench runs
 * (batch_ms=10000 or 30000 gives UnixBench's own durations). */
static int measure_lps(struct om_ctx *ctx, om_batch_fn fn, struct ub_arg *a,
                       const char *unixbench)
{
    om_note(ctx, "duration", "%lld x %.3g s (UnixBench 4.1.0: %s)", om_int(ctx, "samples"),
            (double)om_int(ctx, "batch_ms") / 1000, unixbench);
    /* No warm-up batch (a whole sample's time): calibration has run the loop for a tenth
     * of one already, and UnixBench counts from its first loop. */
    struct om_measure m = {.metric = "lps", .rate = 1e9, .fault = &a->fault, .warmed_up = 1,
                           .what = "a system call in the loop failed", .note = "loops_per_batch"};
    return om_measure_batches(ctx, fn, a, &m);
}

/* ---- system-call overhead -------------------------------------------------------- */

static uint64_t loop_syscall(void *arg, uint64_t n)
{
    struct ub_arg *a = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++) {
        int d = dup(a->fd);
        if (d < 0 || close(d))
            om_record_fault(&a->fault, errno, d < 0 ? "dup" : "close");
        acc += (uint64_t)getpid();
        acc += (uint64_t)getuid();
        acc += (uint64_t)umask(022);
    }
    return acc;
}

static int run_syscall(struct om_ctx *ctx)
{
    /* UnixBench dups descriptor 0; ours may be closed, so dup /dev/null instead. */
    struct ub_arg a = {.fd = open("/dev/null", O_RDONLY | O_CLOEXEC)};
    if (a.fd < 0)
        return om_fail(ctx, "open /dev/null: %s", strerror(errno));
    mode_t old = umask(022);
    int rc = measure_lps(ctx, loop_syscall, &a, "10 x 10 s");
    umask(old);
    close(a.fd);
    return rc;
}

/* ---- pipe throughput ------------------------------------------------------------- */

static uint64_t loop_pipe(void *arg, uint64_t n)
{
    struct ub_arg *a = arg;
    char buf[512];
    memset(buf, 0, sizeof buf);
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++) {
        ssize_t w = write(a->p[1], buf, sizeof buf);
        ssize_t r = w == (ssize_t)sizeof buf ? read(a->p[0], buf, sizeof buf) : 0;
        if (r != (ssize_t)sizeof buf)
            om_record_fault(&a->fault, w < 0 || r < 0 ? errno : 0,
                            w == (ssize_t)sizeof buf ? "read of 512 bytes"
                                                     : "write of 512 bytes");
        acc += (uint64_t)buf[i % sizeof buf];
    }
    return acc;
}

static int run_pipe(struct om_ctx *ctx)
{
    struct ub_arg a = {0};
    if (pipe(a.p))
        return om_fail(ctx, "pipe: %s", strerror(errno));
    int rc = measure_lps(ctx, loop_pipe, &a, "10 x 10 s");
    close(a.p[0]);
    close(a.p[1]);
    return rc;
}

/* ---- pipe-based context switch ----------------------------------------------------- */

static uint64_t loop_ctx(void *arg, uint64_t n)
{
    struct ub_arg *a = arg;
    for (uint64_t i = 0; i < n && !om_faulted(&a->fault); i++) {
        unsigned long check;
        if (om_write_full(a->p[1], &a->iter, sizeof a->iter) ||
            om_read_full(a->q[0], &check, sizeof check) || check != a->iter)
            om_record_fault(&a->fault, 0, "the integer did not come back in sequence");
        a->iter++;
    }
    return a->iter;
}

/* The other process: read the integer, check it is the next one, send it back. */
static void ctx_child(int in, int out)
{
    unsigned long expect = 0, got;
    while (om_read_full(in, &got, sizeof got) == 0) {
        if (got != expect || om_write_full(out, &got, sizeof got))
            _exit(2);
        expect++;
    }
    _exit(0); /* end of stream: the parent is done */
}

static int run_ctx(struct om_ctx *ctx)
{
    int rc = om_apply_placement(ctx);
    if (rc)
        return rc;
    struct ub_arg a = {0};
    if (pipe(a.p))
        return om_fail(ctx, "pipe: %s", strerror(errno));
    if (pipe(a.q)) {
        close(a.p[0]);
        close(a.p[1]);
        return om_fail(ctx, "pipe: %s", strerror(errno));
    }
    pid_t pid = om_fork();
    if (pid == 0) {
        close(a.p[1]);
        close(a.q[0]);
        ctx_child(a.p[0], a.q[1]);
    }
    close(a.p[0]);
    close(a.q[1]);
    if (pid < 0) {
        close(a.p[1]);
        close(a.q[0]);
        return om_fail(ctx, "fork: %s", strerror(errno));
    }
    rc = measure_lps(ctx, loop_ctx, &a, "10 x 10 s");
    close(a.p[1]); /* the child sees end of stream and exits */
    close(a.q[0]);
    int status, killed = om_child_reap(pid, 2000, &status);
    if (rc == OM_OK && (killed || !(WIFEXITED(status) && WEXITSTATUS(status) == 0)))
        return om_fail(ctx, "the partner process failed (integer out of sequence?)");
    return rc;
}

/* ---- process creation ------------------------------------------------------------- */

/* Plain fork (tracked in the parent) so the child does nothing but exit, as in spawn.c. */
static int fork_wait(struct ub_arg *a, const char *helper, uint64_t chain, int fd)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (helper) {
            char n[24], f[16];
            snprintf(n, sizeof n, "%llu", (unsigned long long)chain);
            snprintf(f, sizeof f, "%d", fd);
            char *argv[] = {(char *)helper, "chain", n, f, NULL};
            om_exec_own(helper, argv);
            _exit(127);
        }
        _exit(0);
    }
    if (pid < 0) {
        om_record_fault(&a->fault, errno, "fork");
        if (helper)
            close(fd);
        return -1;
    }
    om_child_track(pid);
    if (helper) { /* the end of the chain writes one byte */
        char c;
        close(fd);
        if (om_read_full(a->q[0], &c, 1))
            om_record_fault(&a->fault, 0, "no byte from the end of the exec chain");
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            om_record_fault(&a->fault, errno, "waitpid");
            break;
        }
    om_child_untrack(pid);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        om_record_fault(&a->fault, 0, "a child did not exit with status 0");
    return om_faulted(&a->fault) ? -1 : 0;
}

static uint64_t loop_spawn(void *arg, uint64_t n)
{
    struct ub_arg *a = arg;
    uint64_t i = 0;
    for (; i < n && !om_faulted(&a->fault); i++)
        fork_wait(a, NULL, 0, -1);
    return i;
}

static int run_spawn(struct om_ctx *ctx)
{
    int rc = om_apply_placement(ctx);
    if (rc)
        return rc;
    struct ub_arg a = {0};
    return measure_lps(ctx, loop_spawn, &a, "3 x 30 s");
}

/* ---- execl throughput ------------------------------------------------------------- */

/* One batch = one fork whose child execs the helper n times in a chain. */
static uint64_t loop_execl(void *arg, uint64_t n)
{
    struct ub_arg *a = arg;
    if (om_faulted(&a->fault))
        return 0;
    int p[2];
    if (pipe(p)) {
        om_record_fault(&a->fault, errno, "pipe");
        return 0;
    }
    a->q[0] = p[0];
    fcntl(p[0], F_SETFD, FD_CLOEXEC); /* only the write end travels down the chain */
    fork_wait(a, a->helper, n, p[1]);
    close(p[0]);
    return n;
}

static int run_execl(struct om_ctx *ctx)
{
    int rc = om_apply_placement(ctx);
    if (rc)
        return rc;
    struct ub_arg a = {.helper = om_sibling_path("osmeter-helper-dynamic")};
    if (!a.helper) /* never time something else in its place */
        return om_fail(ctx, "osmeter-helper-dynamic not found next to osmeter-core; "
                            "rebuild with 'make -C core'");
    om_note(ctx, "program", "%s (dynamically linked; exec'd by itself in a chain)", a.helper);
    return measure_lps(ctx, loop_execl, &a, "3 x 30 s");
}

/* ---- the table ------------------------------------------------------------------- */

#define UB_PARAMS(s_def, ms_def, ms_ub)                                                   \
    {"samples", OM_INT, s_def, "3", "2", 1, 100000, NULL,                                  \
     "timed batches in each process (UnixBench: " s_def ")"},                             \
    {"batch_ms", OM_INT, ms_def, "300", "20", 1, 600000, NULL,                             \
     "duration of one timed batch, ms (UnixBench: " ms_ub " ms per sample)"}
#define UB_PIN                                                                            \
    {"pin", OM_CHOICE, "none", NULL, NULL, 0, 0, "same|none",                              \
     "none: scheduler's choice, as UnixBench; same: all processes on one CPU"}
#define LPS(what) {{"lps", "lps", "higher", OM_POINT, NULL, "loops per second: " what}}

const struct om_bench om_family_ub[] = {
    {"ub.syscall", "UnixBench system-call overhead: close(dup()), getpid, getuid, umask",
     "CC06 T3 (UnixBench 4.1.0 syscall)", "quick,full,cc06", {51, 0.98, 0.096}, run_syscall,
     {UB_PARAMS("10", "5000", "10000")}, LPS("one close(dup()) + getpid + getuid + umask")},
    {"ub.pipe", "UnixBench pipe throughput: 512-byte write + read in one process",
     "CC06 T3 (UnixBench 4.1.0 pipe)", "quick,full,cc06", {52, 0.99, 0.048}, run_pipe,
     {UB_PARAMS("10", "5000", "10000")}, LPS("one 512-byte write and read")},
    {"ub.ctx", "UnixBench pipe-based context switch: two processes pass an increasing integer",
     "CC06 T3 (UnixBench context1)", "quick,full,cc06", {44, 1.1, 0.072}, run_ctx,
     {UB_PARAMS("10", "5000", "10000"), UB_PIN}, LPS("one round trip of the integer")},
    {"ub.spawn", "UnixBench process creation: fork, the child exits, the parent waits",
     "CC06 T3 (UnixBench 4.1.0 spawn)", "quick,full,cc06", {50, 0.99, 0.096}, run_spawn,
     {UB_PARAMS("3", "15000", "30000"), UB_PIN}, LPS("one fork + exit + wait")},
    {"ub.execl", "UnixBench execl throughput: a program exec'ing itself in a chain",
     "CC06 T3 (UnixBench 4.1.0 execl)", "quick,full,cc06", {50, 0.96, 0.032}, run_execl,
     {UB_PARAMS("3", "15000", "30000"), UB_PIN}, LPS("one exec in the chain")},
    {0},
};
