/*
 * Signals (Camacho 2006 "signal latency"; lmbench lat_sig): installing a handler, and
 * delivering a signal to a handler in the same process.  lmbench's catch figure is the
 * delivery minus kill(pid, 0), the send without a signal (lat_sig.c bench_catch); osmeter
 * times that call right after each catch batch and reports both, and the difference.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"

static volatile sig_atomic_t caught;

static void on_usr1(int sig) { caught++; }

static uint64_t loop_install(void *arg, uint64_t n)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc += (uint64_t)sigaction(SIGUSR1, &sa, &old);
    return acc;
}

/* kill() to ourselves: the kernel delivers before kill returns, so each iteration is one
 * full delivery: entry, frame set-up, handler, sigreturn.  (arg: with_kill0's state.) */
static uint64_t loop_catch(void *arg, uint64_t n)
{
    pid_t me = getpid();
    for (uint64_t i = 0; i < n; i++)
        kill(me, SIGUSR1);
    return (uint64_t)caught;
}

/* kill(pid, 0): the permission check and process lookup of a send, no signal. */
static uint64_t loop_kill0(void *arg, uint64_t n)
{
    pid_t me = getpid();
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc += (uint64_t)kill(me, 0);
    return acc;
}

struct kill0 {
    uint64_t iters; /* per batch, calibrated to batch_ms like the catch batches */
};

/* Timed right after each catch batch, so both see the same machine state. */
static void with_kill0(void *arg, double catch_ns, uint64_t iters, double *values)
{
    struct kill0 *k = arg;
    (void)iters;
    double kill0 = om_time_batch(loop_kill0, NULL, k->iters);
    values[0] = kill0;
    values[1] = catch_ns - kill0;
}

static int run_signal(struct om_ctx *ctx)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL))
        return om_fail(ctx, "sigaction: %s", strerror(errno));
    caught = 0;
    loop_catch(NULL, 10);
    if (caught != 10)
        return om_fail(ctx, "10 signals sent, %d caught", (int)caught);
    if (loop_kill0(NULL, 1) != 0)
        return om_fail(ctx, "kill(getpid(), 0): %s", strerror(errno));
    int rc = om_measure(ctx, "install", loop_install, NULL, 1);
    struct kill0 k = {om_calibrate(ctx, loop_kill0, NULL, (double)om_int(ctx, "batch_ms"))};
    struct om_measure m = {.metric = "catch", .also = {"kill0", "catch_minus_kill0"},
                           .also_fn = with_kill0};
    if (rc == OM_OK)
        rc = om_measure_batches(ctx, loop_catch, &k, &m);
    signal(SIGUSR1, SIG_DFL);
    return rc;
}

const struct om_bench om_family_signal[] = {
    {"lat.signal", "signal handler installation (sigaction) and delivery to a handler",
     "CC06 T4; lmbench lat_sig", "quick,full,cc06", {0.65, 0.18, 0.023},
     run_signal, {OM_BATCH_PARAMS},
     {{"install", "ns", "lower", OM_POINT, NULL, "one sigaction() call"},
      {"catch", "ns", "lower", OM_POINT, NULL,
       "kill() to self until the handler has run and returned"},
      {"kill0", "ns", "lower", OM_POINT, NULL,
       "kill(getpid(), 0): a send without a signal, timed after each catch batch"},
      {"catch_minus_kill0", "ns", "lower", OM_POINT, NULL,
       "catch - kill0: lmbench lat_sig's catch figure (it subtracts the send)"}}},
    {0},
};
