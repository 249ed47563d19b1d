/*
 * Timing: the monotonic clock and its overhead, the one routine that runs every family's
 * timed loops (calibrated batches, warm-up, samples, what to emit), and the cycle counter
 * for single operations.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "internal.h"

static volatile uint64_t sink;
static double timer_overhead_ns;

void om_consume(uint64_t v) { sink += v; }

uint64_t om_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double om_timer_overhead_ns(void) { return timer_overhead_ns; }

/* The cost of one clock read: the smallest of several averaged runs, because the
 * machine can only make it look slower, never faster. */
void om_measure_timer_overhead(void)
{
    double best = 1e30;
    for (int rep = 0; rep < 20; rep++) {
        uint64_t t0 = om_now_ns(), t = 0;
        for (int i = 0; i < 1000; i++)
            t += om_now_ns();
        uint64_t t1 = om_now_ns();
        om_consume(t);
        double per = (double)(t1 - t0) / 1001.0;
        if (per < best)
            best = per;
    }
    timer_overhead_ns = best;
}

/* ---- one batch, calibration ----------------------------------------------------------- */

/* Runs one batch of `iters` operations.  Returns the time per operation that a sample
 * reports; *batch_ns is the batch's duration as calibration sees it.  A plain batch is
 * timed here, with the timer overhead subtracted; a self-timed one (fn times the part of
 * each operation that counts and returns the sum) is calibrated on its wall time. */
static double time_batch(om_batch_fn fn, void *arg, uint64_t iters, int self_timed,
                         double *batch_ns)
{
    uint64_t t0 = om_now_ns();
    uint64_t r = fn(arg, iters);
    uint64_t t1 = om_now_ns();
    om_consume(r);
    if (self_timed) {
        *batch_ns = (double)(t1 - t0);
        return (double)r / (double)iters;
    }
    double elapsed = (double)(t1 - t0) - timer_overhead_ns;
    if (elapsed < 0)
        elapsed = 0;
    double per = elapsed / (double)iters;
    *batch_ns = per * (double)iters;
    return per;
}

double om_time_batch(om_batch_fn fn, void *arg, uint64_t iters)
{
    double batch_ns;
    return time_batch(fn, arg, iters, 0, &batch_ns);
}

/* Double the count until one batch takes at least a tenth of batch_ms, then scale once:
 * calibration stays within about two batches whatever the operation costs.  It stops
 * early when the loop has recorded a failure (the caller reports it). */
static uint64_t calibrate(om_batch_fn fn, void *arg, double batch_ms, int self_timed,
                          const struct om_fault *fault)
{
    double target = batch_ms * 1e6;
    uint64_t iters = 1;
    for (;;) {
        double elapsed;
        time_batch(fn, arg, iters, self_timed, &elapsed);
        if (elapsed >= target / 10 || iters >= (1ULL << 40) || (fault && om_faulted(fault))) {
            if (elapsed <= 0)
                return iters;
            double scaled = (double)iters * target / elapsed;
            return scaled < 1 ? 1 : (uint64_t)scaled;
        }
        iters *= 2;
    }
}

uint64_t om_calibrate(struct om_ctx *ctx, om_batch_fn fn, void *arg, double batch_ms)
{
    (void)ctx;
    return calibrate(fn, arg, batch_ms, 0, NULL);
}

/* ---- the measure routine ----------------------------------------------------------------- */

void om_record_fault(struct om_fault *f, int err, const char *what)
{
    if (om_faulted(f))
        return; /* the first failure is the one that explains the others */
    f->err = err;
    f->what = what ? what : "";
}

/* "<m->what>: <fault's what>: <strerror>", each part where there is one. */
static int fail_with_fault(struct om_ctx *ctx, const struct om_measure *m)
{
    const struct om_fault *f = m->fault;
    const char *what = m->what ? m->what : "an operation in the timed loop failed";
    return om_fail(ctx, "%s%s%s%s%s", what, *f->what ? ": " : "", f->what, f->err ? ": " : "",
                   f->err ? strerror(f->err) : "");
}

static int faulted(const struct om_measure *m) { return m->fault && om_faulted(m->fault); }

/* A point metric has no x, whatever the description says (0 is an x of a sweep). */
static long long x_of(struct om_ctx *ctx, const char *name, long long x)
{
    const struct om_metric *metric = om_find_metric(ctx->bench, name);
    return metric && strcmp(metric->shape, OM_POINT) == 0 ? OM_NO_X : x;
}

int om_measure_batches(struct om_ctx *ctx, om_batch_fn fn, void *arg, const struct om_measure *m)
{
    int also = 0;
    while (also < OM_MEASURE_ALSO && m->also[also])
        also++;
    long long samples = om_int(ctx, "samples");
    uint64_t iters = m->iters ? m->iters
                              : calibrate(fn, arg, (double)om_int(ctx, "batch_ms"), m->self_timed,
                                          m->fault);
    if (faulted(m))
        return fail_with_fault(ctx, m);
    if (!m->note || *m->note)
        om_note(ctx, m->note ? m->note : "iterations_per_batch", "%s%s%llu",
                m->label ? m->label : "", m->label ? ": " : "", (unsigned long long)iters);
    double batch_ns;
    if (!m->warmed_up) /* caches, TLB, branch predictors, page faults */
        time_batch(fn, arg, iters, m->self_timed, &batch_ns);
    /* Every value is kept until every batch has succeeded: a loop that failed half-way
     * reports nothing, and nothing is written to the front-end between batches. */
    size_t per_sample = 1 + (size_t)also;
    double *values = malloc(sizeof *values * per_sample * (size_t)samples);
    if (!values)
        return om_fail(ctx, "out of memory for %lld samples", samples);
    for (long long s = 0; s < samples; s++) {
        if (m->before)
            m->before(arg);
        double per_op = time_batch(fn, arg, iters, m->self_timed, &batch_ns);
        if (faulted(m) || !(per_op > 0)) {
            free(values);
            if (faulted(m))
                return fail_with_fault(ctx, m);
            return om_fail(ctx, "%s: a batch of %llu operations took no measurable time",
                           m->metric, (unsigned long long)iters);
        }
        double *v = &values[(size_t)s * per_sample];
        v[0] = m->rate ? m->rate / per_op : per_op * (m->scale ? m->scale : 1);
        if (also)
            m->also_fn(arg, per_op, iters, v + 1);
    }
    for (long long s = 0; s < samples; s++)
        for (int k = 0; k <= also; k++) {
            const char *name = k ? m->also[k - 1] : m->metric;
            om_sample(ctx, name, x_of(ctx, name, m->x), values[(size_t)s * per_sample + k]);
        }
    free(values);
    return OM_OK;
}

int om_measure(struct om_ctx *ctx, const char *metric, om_batch_fn fn, void *arg, double scale)
{
    struct om_measure m = {.metric = metric, .scale = scale};
    return om_measure_batches(ctx, fn, arg, &m);
}

/* ---- cycle counter -------------------------------------------------------------- */

static double cycles_per_ns = 0; /* 0: counter unusable, om_cycles() returns ns */

static int have_invariant_counter(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000007) {
        __get_cpuid(0x80000007, &a, &b, &c, &d);
        return (d >> 8) & 1; /* invariant TSC: constant rate, runs in all C-states */
    }
    return 0;
#elif defined(__aarch64__)
    return 1; /* the generic timer's virtual count is architecturally constant-rate */
#else
    return 0;
#endif
}

static uint64_t raw_counter(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_lfence(); /* keep earlier instructions from drifting past the read */
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
#elif defined(__aarch64__)
    uint64_t t;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(t));
    return t;
#else
    return om_now_ns();
#endif
}

void om_cycles_init(struct om_ctx *ctx)
{
    if (!have_invariant_counter()) {
        cycles_per_ns = 0;
        om_note(ctx, "cycle_counter", "none (no invariant counter); single operations timed "
                                      "with CLOCK_MONOTONIC, resolution %.0f ns",
                timer_overhead_ns);
        return;
    }
    /* Calibrate over 3 × 20 ms and keep the median rate. */
    double rates[3];
    for (int i = 0; i < 3; i++) {
        uint64_t n0 = om_now_ns(), c0 = raw_counter();
        while (om_now_ns() - n0 < 20000000ULL)
            ;
        uint64_t n1 = om_now_ns(), c1 = raw_counter();
        rates[i] = (double)(c1 - c0) / (double)(n1 - n0);
    }
    double lo = fmin(rates[0], fmin(rates[1], rates[2]));
    double hi = fmax(rates[0], fmax(rates[1], rates[2]));
    cycles_per_ns = rates[0] + rates[1] + rates[2] - lo - hi;
    om_note(ctx, "cycle_counter", "%s at %.6f GHz (calibrated against CLOCK_MONOTONIC)",
#if defined(__x86_64__) || defined(__i386__)
            "rdtsc",
#else
            "cntvct",
#endif
            cycles_per_ns);
}

uint64_t om_cycles(void) { return cycles_per_ns > 0 ? raw_counter() : om_now_ns(); }

double om_cycles_to_ns(uint64_t cycles)
{
    return cycles_per_ns > 0 ? (double)cycles / cycles_per_ns : (double)cycles;
}
