/*
 * Process life cycle (McGarry 2005, Table 1; lmbench lat_proc): creation, termination and
 * program load, for a dynamically and a statically linked program.  Ids ending in
 * ".static" run in the statically linked build of the core (core/main.c), so the same
 * code measures both: fork copies the caller's own address space, which is what the
 * linkage changes.
 *
 * Each operation is timed on its own and the reaping of the child is left outside the
 * timed section, as the study describes.  The timed forks use plain fork() and track the
 * child in the parent, so the child's path holds nothing but the work being measured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"

struct proc_arg {
    int pipe_r, pipe_w;
    const char *helper;   /* program to exec */
    char fd_arg[16];      /* the pipe's write end, as the helper's argument */
    struct om_fault fault;
};

static pid_t tracked_fork(void)
{
    pid_t pid = fork();
    if (pid > 0)
        om_child_track(pid);
    return pid;
}

static int reap(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    om_child_untrack(pid);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/*
 * fork, and exec the helper when there is one; timed until the parent has read the byte
 * the child (or the program it became) writes.  A failed exec writes 'E' instead, so the
 * parent never waits for a byte that will not come.
 */
static uint64_t timed_until_report(void *arg, uint64_t n)
{
    struct proc_arg *a = arg;
    uint64_t total = 0;
    char c;
    for (uint64_t i = 0; i < n && !om_faulted(&a->fault); i++) {
        uint64_t t0 = om_now_ns();
        pid_t pid = tracked_fork();
        if (pid == 0) {
            if (a->helper) {
                char *argv[] = {(char *)a->helper, "report", a->fd_arg, NULL};
                om_exec_own(a->helper, argv);
            }
            c = a->helper ? 'E' : 'x';
            _exit(write(a->pipe_w, &c, 1) == 1 && c == 'x' ? 0 : 127);
        }
        if (pid < 0 || om_read_full(a->pipe_r, &c, 1) || c == 'E') {
            om_record_fault(&a->fault, pid < 0 ? errno : 0,
                            pid < 0      ? "fork"
                            : c == 'E'   ? "exec of the helper failed"
                                         : "no byte from the child");
            if (pid > 0)
                reap(pid);
            break;
        }
        total += om_now_ns() - t0;
        if (reap(pid))
            om_record_fault(&a->fault, 0, "the child did not exit with status 0");
    }
    return total;
}

/* A child that is alive and has said so; timed: SIGTERM + wait4 until it is gone. */
static uint64_t timed_exit(void *arg, uint64_t n)
{
    struct proc_arg *a = arg;
    uint64_t total = 0;
    char c;
    for (uint64_t i = 0; i < n && !om_faulted(&a->fault); i++) {
        pid_t pid = om_fork();
        if (pid == 0) {
            c = 'x';
            if (write(a->pipe_w, &c, 1) != 1)
                _exit(1);
            for (;;)
                pause();
        }
        if (pid < 0 || om_read_full(a->pipe_r, &c, 1)) {
            om_record_fault(&a->fault, pid < 0 ? errno : 0,
                            pid < 0 ? "fork" : "no byte from the child");
            break;
        }
        int status;
        struct rusage ru;
        uint64_t t0 = om_now_ns();
        kill(pid, SIGTERM);
        pid_t got;
        while ((got = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR)
            ;
        total += om_now_ns() - t0;
        om_child_untrack(pid);
        if (got != pid || !WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM)
            om_record_fault(&a->fault, 0, "the child did not die of SIGTERM");
    }
    return total;
}

/* The whole cycle, as lmbench and UnixBench time it: fork, (exec,) exit, wait. */
static uint64_t timed_fork_exit(void *arg, uint64_t n)
{
    struct proc_arg *a = arg;
    uint64_t total = 0;
    for (uint64_t i = 0; i < n && !om_faulted(&a->fault); i++) {
        uint64_t t0 = om_now_ns();
        pid_t pid = tracked_fork();
        if (pid == 0) {
            if (a->helper) {
                char *argv[] = {(char *)a->helper, "exit", NULL};
                om_exec_own(a->helper, argv);
            }
            _exit(a->helper ? 127 : 0);
        }
        if (pid < 0 || reap(pid)) {
            om_record_fault(&a->fault, pid < 0 ? errno : 0,
                            pid < 0 ? "fork"
                                    : "the child (or the helper it ran) did not exit 0");
            break;
        }
        total += om_now_ns() - t0;
    }
    return total;
}

/* /bin/sh -c running the helper: shell start-up, as lmbench's "lat_proc shell". */
static uint64_t timed_shell(void *arg, uint64_t n)
{
    struct proc_arg *a = arg;
    char cmd[8192];
    if (om_shell_own(cmd, sizeof cmd - 5, a->helper)) {
        om_record_fault(&a->fault, 0, "the helper's command line is too long for this buffer");
        return 0;
    }
    strcat(cmd, " exit");
    uint64_t total = 0;
    for (uint64_t i = 0; i < n && !om_faulted(&a->fault); i++) {
        uint64_t t0 = om_now_ns();
        pid_t pid = tracked_fork();
        if (pid == 0) {
            execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
            _exit(127);
        }
        if (pid < 0 || reap(pid)) {
            om_record_fault(&a->fault, pid < 0 ? errno : 0,
                            pid < 0 ? "fork" : "/bin/sh -c did not exit 0");
            break;
        }
        total += om_now_ns() - t0;
    }
    return total;
}

static int setup(struct om_ctx *ctx, struct proc_arg *a, const char *helper_name)
{
    memset(a, 0, sizeof *a);
    int fds[2];
    if (pipe(fds))
        return om_fail(ctx, "pipe: %s", strerror(errno));
    a->pipe_r = fds[0];
    a->pipe_w = fds[1];
    snprintf(a->fd_arg, sizeof a->fd_arg, "%d", fds[1]);
    if (helper_name) {
        a->helper = om_sibling_path(helper_name);
        if (!a->helper) {
            close(fds[0]);
            close(fds[1]);
            /* Never time something else in its place (lmbench's exec did, silently). */
            if (strstr(helper_name, "static"))
                return om_skip(ctx, "%s was not built (static linking unavailable here)",
                               helper_name);
            return om_fail(ctx, "%s not found next to osmeter-core; rebuild with make -C core",
                           helper_name);
        }
    }
    om_note(ctx, "linkage", "%s", om_is_static() ? "static" : "dynamic");
    return OM_OK;
}

/* fn times each operation itself (the reaping stays outside) and returns the sum. */
static int measure(struct om_ctx *ctx, om_batch_fn fn, const char *helper_name)
{
    struct proc_arg a;
    int rc = om_apply_placement(ctx);
    if (rc || (rc = setup(ctx, &a, helper_name)))
        return rc;
    char what[PATH_MAX + 64];
    snprintf(what, sizeof what, "a child process failed%s%s%s", a.helper ? " (helper " : "",
             a.helper ? a.helper : "", a.helper ? ")" : "");
    struct om_measure m = {.metric = "latency", .self_timed = 1, .fault = &a.fault, .what = what};
    rc = om_measure_batches(ctx, fn, &a, &m);
    close(a.pipe_r);
    close(a.pipe_w);
    return rc;
}

static int run_fork(struct om_ctx *ctx) { return measure(ctx, timed_until_report, NULL); }
static int run_exit(struct om_ctx *ctx) { return measure(ctx, timed_exit, NULL); }

static int run_exec_dynamic(struct om_ctx *ctx)
{
    return measure(ctx, timed_until_report, "osmeter-helper-dynamic");
}

static int run_exec_static(struct om_ctx *ctx)
{
    return measure(ctx, timed_until_report, "osmeter-helper-static");
}

static int run_fork_exit(struct om_ctx *ctx) { return measure(ctx, timed_fork_exit, NULL); }

static int run_fork_exec_exit(struct om_ctx *ctx)
{
    return measure(ctx, timed_fork_exit, "osmeter-helper-dynamic");
}

static int run_shell(struct om_ctx *ctx)
{
    if (access("/bin/sh", X_OK))
        return om_skip(ctx, "/bin/sh is not executable here");
    return measure(ctx, timed_shell, "osmeter-helper-dynamic");
}

#define PROC_PARAMS                                                                       \
    {{"samples", OM_INT, "10", "5", "2", 1, 100000, NULL,                                 \
      "batches timed in each process; each is one sample"},                               \
     {"batch_ms", OM_INT, "50", "20", "5", 1, 10000, NULL,                                \
      "minimum duration of one timed batch (calibrated), ms"},                            \
     OM_PIN_PARAM}
#define LAT(help) {{"latency", "ns", "lower", OM_POINT, NULL, help}}

const struct om_bench om_family_proc[] = {
    {"proc.fork.dynamic", "process creation by a dynamically linked program: fork until the "
     "child's byte arrives on a pipe", "MG05 T1", "quick,full,mg05,cc06", {0.57, 0.12, 0.014},
     run_fork,
     PROC_PARAMS, LAT("fork until the parent has read the child's byte (reap not timed)")},
    {"proc.fork.static", "process creation by a statically linked program", "MG05 T1",
     "quick,full,mg05", {0.59, 0.13, 0.021}, run_fork, PROC_PARAMS,
     LAT("fork until the parent has read the child's byte (reap not timed)"),
     OM_STATIC_CORE},
    {"proc.exit.dynamic", "process termination: SIGTERM + wait4 of a live child (dynamic)",
     "MG05 T1", "quick,full,mg05", {0.57, 0.1, 0.019}, run_exit, PROC_PARAMS,
     LAT("kill(SIGTERM) until wait4 returns (the child's creation not timed)")},
    {"proc.exit.static", "process termination: SIGTERM + wait4 of a live child (static)",
     "MG05 T1", "quick,full,mg05", {0.54, 0.13, 0.016}, run_exit, PROC_PARAMS,
     LAT("kill(SIGTERM) until wait4 returns (the child's creation not timed)"),
     OM_STATIC_CORE},
    {"proc.exec.dynamic", "program load: fork + exec of a dynamically linked helper until it "
     "reports", "MG05 T1", "quick,full,mg05,cc06", {0.44, 0.1, 0.015},
     run_exec_dynamic, PROC_PARAMS,
     LAT("fork+exec until the new program has written its byte (reap not timed)")},
    {"proc.exec.static", "program load: fork + exec of a statically linked helper until it "
     "reports", "MG05 T1", "quick,full,mg05", {0.57, 0.13, 0.018}, run_exec_static, PROC_PARAMS,
     LAT("fork+exec until the new program has written its byte (reap not timed)"),
     OM_STATIC_CORE},
    {"proc.fork_exit", "fork + child exit + wait (lmbench lat_proc fork)", "lmbench",
     "quick,full", {0.61, 0.13, 0.017}, run_fork_exit, PROC_PARAMS, LAT("the whole cycle")},
    {"proc.fork_exec_exit", "fork + exec of a helper that exits + wait (lmbench lat_proc exec)",
     "lmbench", "quick,full", {0.47, 0.11, 0.019},
     run_fork_exec_exit, PROC_PARAMS, LAT("the whole cycle")},
    {"proc.shell", "/bin/sh -c running a helper, until it has exited (lmbench lat_proc shell)",
     "lmbench", "quick,full", {0.54, 0.12, 0.017}, run_shell, PROC_PARAMS, LAT("the whole cycle")},
    {0},
};
