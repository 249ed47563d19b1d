/*
 * Signals (Camacho 2006 "signal latency"; lmbench lat_sig): installing a handler, and
 * delivering a signal to a handler in the same process.
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
 * full delivery: entry, frame set-up, handler, sigreturn. */
static uint64_t loop_catch(void *arg, uint64_t n)
{
    pid_t me = getpid();
    for (uint64_t i = 0; i < n; i++)
        kill(me, SIGUSR1);
    return (uint64_t)caught;
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
    int rc = om_measure(ctx, "install", loop_install, NULL, 1);
    if (rc == OM_OK)
        rc = om_measure(ctx, "catch", loop_catch, NULL, 1);
    signal(SIGUSR1, SIG_DFL);
    return rc;
}

const struct om_bench om_family_signal[] = {
    {"lat.signal", "signal handler installation (sigaction) and delivery to a handler",
     "CC06 T4; lmbench lat_sig", "quick,full,cc06", {0.48, 0.064, 0.036},
     run_signal, {OM_BATCH_PARAMS},
     {{"install", "ns", "lower", OM_POINT, NULL, "one sigaction() call"},
      {"catch", "ns", "lower", OM_POINT, NULL,
       "kill() to self until the handler has run and returned"}}},
    {0},
};
