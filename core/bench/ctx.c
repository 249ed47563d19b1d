/*
 * Context switches through pipes: Ousterhout's two-process "cswitch", Lai & Baker's ring
 * of N processes and their LIFO chain, and the same-process pipe overhead that must be
 * subtracted to estimate the switch itself.  The ring takes lmbench lat_ctx's working set
 * (-s): every member sums its own private array each time it holds the token.
 *
 * Children are tracked (om_fork) and leave when their input pipe reaches end of file,
 * which happens when the parent closes its ends; the harness kills any that don't.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"

/* ---- same-process pipe overhead (LB96 §5) --------------------------------------- */

static uint64_t loop_self(void *arg, uint64_t n)
{
    int *fds = arg;
    char c = 'x';
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++) {
        acc += (uint64_t)write(fds[1], &c, 1);
        acc += (uint64_t)read(fds[0], &c, 1);
    }
    return acc;
}

static int run_self(struct om_ctx *ctx)
{
    int fds[2];
    if (pipe(fds))
        return om_fail(ctx, "pipe: %s", strerror(errno));
    if (loop_self(fds, 1) != 2)
        return om_fail(ctx, "a byte did not come back through the pipe");
    int rc = om_measure(ctx, "latency", loop_self, fds, 1);
    close(fds[0]);
    close(fds[1]);
    return rc;
}

/* ---- processes passing a token ----------------------------------------------------- */

/* Close every descriptor of `fds` (count n) except `keep_a` and `keep_b`. */
static void close_others(int *fds, int n, int keep_a, int keep_b)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0 && fds[i] != keep_a && fds[i] != keep_b)
            close(fds[i]);
}

/* Read every word of a process's working set, as lmbench's bread() does (lib_timing.c),
 * so that it is brought back into the caches after the other processes ran.  The same
 * shape as bread (one written-out sum per 128 words, then per 16, then per word), which
 * compiles to the same loads and adds: 360 ns for 16 KB and 1.44 us for 64 KB both,
 * measured side by side here (gcc 12 -O2). */
#define W8(p, k) (p[k] + p[k + 1] + p[k + 2] + p[k + 3] + p[k + 4] + p[k + 5] + p[k + 6] + p[k + 7])
#define W64(p, k)                                                                         \
    (W8(p, k) + W8(p, k + 8) + W8(p, k + 16) + W8(p, k + 24) + W8(p, k + 32) +            \
     W8(p, k + 40) + W8(p, k + 48) + W8(p, k + 56))
static uint64_t sum_words(const uint64_t *w, size_t bytes)
{
    size_t words = bytes / sizeof *w, i = 0;
    uint64_t sum = 0;
    for (; i + 128 <= words; i += 128)
        sum += W64(w, i) + W64(w, i + 64);
    for (; i + 16 <= words; i += 16)
        sum += W8(w, i) + W8(w, i + 8);
    for (; i < words; i++)
        sum += w[i];
    return sum;
}

/* A working set of `bytes`, written once so that its pages exist; NULL when bytes is 0.
 * Every process allocates its own after the fork: shared copy-on-write pages would be
 * cached once for all of them. */
static uint64_t *working_set(size_t bytes)
{
    uint64_t *w = bytes ? malloc(bytes) : NULL;
    if (w)
        memset(w, 1, bytes);
    return w;
}

/* Relay bytes from `in` to `out` until end of file, summing the working set of `bytes`
 * between receiving and passing on; the child's whole life. */
static void relay(int in, int out, size_t bytes)
{
    char c;
    /* volatile: the array is read each time, never summed once out of the loop */
    uint64_t *volatile w = working_set(bytes);
    uint64_t sum = 0;
    if (bytes && !w)
        _exit(1); /* the token does not come back: the parent says so */
    while (read(in, &c, 1) == 1) {
        if (w)
            sum += sum_words(w, bytes);
        if (write(out, &c, 1) != 1)
            break;
    }
    om_consume(sum);
    _exit(0);
}

/* LIFO relay for a middle process of the chain: left -> right, then right -> left. */
static void relay_chain(int from_left, int to_right, int from_right, int to_left)
{
    char c;
    while (read(from_left, &c, 1) == 1) {
        if (to_right >= 0) {
            if (write(to_right, &c, 1) != 1 || read(from_right, &c, 1) != 1)
                break;
        }
        if (write(to_left, &c, 1) != 1)
            break;
    }
    _exit(0);
}

struct token_path {
    int out, in;   /* the parent's ends: where it sends the token and where it returns */
    int hops;      /* switches per round: 2 for ping-pong, N for a ring, 2(N-1) for a chain */
    pid_t *pids;
    int npids;
    int *fds;      /* every pipe descriptor, so the parent can close them */
    int nfds;
    uint64_t *set; /* the parent's working set (ring with size > 0), summed after each round */
    size_t set_bytes;
};

static uint64_t loop_token(void *arg, uint64_t n)
{
    struct token_path *t = arg;
    char c = 'x';
    uint64_t acc = 0, sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        acc += (uint64_t)write(t->out, &c, 1);
        acc += (uint64_t)read(t->in, &c, 1);
        if (t->set)
            sum += sum_words(t->set, t->set_bytes);
    }
    om_consume(sum);
    return acc; /* bytes moved: 2 per round when the token came back */
}

static void teardown(struct token_path *t)
{
    for (int i = 0; t->fds && i < t->nfds; i++)
        if (t->fds[i] >= 0)
            close(t->fds[i]);
    for (int i = 0; i < t->npids; i++) /* end of file has been sent: a moment, then insist */
        om_child_reap(t->pids[i], 1000, NULL);
    free(t->pids);
    free(t->fds);
    free(t->set);
}

/* Why a ring/chain of n processes does not fit the descriptor and process limits (the
 * parent holds fds_per_process x n pipe ends while it forks), or NULL when it fits. */
static const char *over_limit(long long n, int fds_per_process, char *why, size_t len)
{
    struct rlimit rl;
    long long fds = fds_per_process * n + 16;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)fds > rl.rlim_cur) {
        snprintf(why, len, "%lld processes need %lld descriptors; RLIMIT_NOFILE is %llu "
                 "(ulimit -n raises it)", n, fds, (unsigned long long)rl.rlim_cur);
        return why;
    }
#ifdef RLIMIT_NPROC
    if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)n > rl.rlim_cur / 2) {
        snprintf(why, len, "%lld processes exceed half of RLIMIT_NPROC (%llu)", n,
                 (unsigned long long)rl.rlim_cur);
        return why;
    }
#endif
    return NULL;
}

static int alloc_path(struct om_ctx *ctx, struct token_path *t, int nfds, int nprocs)
{
    memset(t, 0, sizeof *t);
    t->nfds = nfds;
    t->fds = malloc(sizeof(int) * (size_t)nfds);
    t->pids = malloc(sizeof(pid_t) * (size_t)nprocs);
    if (!t->fds || !t->pids)
        return om_fail(ctx, "out of memory");
    for (int i = 0; i < nfds; i++)
        t->fds[i] = -1;
    return OM_OK;
}

/* The parent keeps only its two ends (the others must close so that end of file can
 * travel), then checks that a token comes back. */
static int keep_parent_ends(struct om_ctx *ctx, struct token_path *t, const char *where)
{
    for (int i = 0; i < t->nfds; i++)
        if (t->fds[i] != t->out && t->fds[i] != t->in) {
            close(t->fds[i]);
            t->fds[i] = -1;
        }
    if (loop_token(t, 1) != 2)
        return om_fail(ctx, "the token did not come back %s", where);
    return OM_OK;
}

/* Ring of n processes: the parent is member 0; pipe i carries the token from member i to
 * member i+1 (mod n).  n = 2 is Ousterhout's ping-pong.  Each member sums a working set
 * of `bytes` of its own while it holds the token (0: none). */
static int build_ring(struct om_ctx *ctx, int n, size_t bytes, struct token_path *t)
{
    int rc = alloc_path(ctx, t, 2 * n, n);
    if (rc)
        return rc;
    t->set_bytes = bytes;
    if (bytes && !(t->set = working_set(bytes)))
        return om_fail(ctx, "out of memory for a %zu-byte working set", bytes);
    for (int i = 0; i < n; i++)
        if (pipe(&t->fds[2 * i]))
            return om_fail(ctx, "pipe: %s", strerror(errno));
    for (int m = 1; m < n; m++) {
        pid_t pid = om_fork();
        if (pid < 0)
            return om_fail(ctx, "fork of ring member %d: %s", m, strerror(errno));
        if (pid == 0) {
            int in = t->fds[2 * (m - 1)], out = t->fds[2 * m + 1];
            close_others(t->fds, t->nfds, in, out);
            free(t->set); /* the child's working set is its own */
            relay(in, out, bytes);
        }
        t->pids[t->npids++] = pid;
    }
    t->out = t->fds[1];
    t->in = t->fds[2 * (n - 1)];
    t->hops = n;
    return keep_parent_ends(ctx, t, "around the ring");
}

/* Chain of n processes (member 0 = the parent): the token goes down to member n-1 and
 * back up, last in first out.  down[i]: i -> i+1, up[i]: i+1 -> i. */
static int build_chain(struct om_ctx *ctx, int n, struct token_path *t)
{
    int links = n - 1;
    int rc = alloc_path(ctx, t, 4 * links, n);
    if (rc)
        return rc;
    for (int i = 0; i < links; i++)
        if (pipe(&t->fds[4 * i]) || pipe(&t->fds[4 * i + 2]))
            return om_fail(ctx, "pipe: %s", strerror(errno));
#define DOWN_R(i) t->fds[4 * (i)]
#define DOWN_W(i) t->fds[4 * (i) + 1]
#define UP_R(i) t->fds[4 * (i) + 2]
#define UP_W(i) t->fds[4 * (i) + 3]
    for (int m = 1; m < n; m++) {
        pid_t pid = om_fork();
        if (pid < 0)
            return om_fail(ctx, "fork of chain member %d: %s", m, strerror(errno));
        if (pid == 0) {
            int from_left = DOWN_R(m - 1), to_left = UP_W(m - 1);
            int to_right = m < links ? DOWN_W(m) : -1, from_right = m < links ? UP_R(m) : -1;
            for (int i = 0; i < t->nfds; i++)
                if (t->fds[i] != from_left && t->fds[i] != to_left && t->fds[i] != to_right &&
                    t->fds[i] != from_right)
                    close(t->fds[i]);
            relay_chain(from_left, to_right, from_right, to_left);
        }
        t->pids[t->npids++] = pid;
    }
    t->out = DOWN_W(0);
    t->in = UP_R(0);
    t->hops = 2 * links;
    return keep_parent_ends(ctx, t, "along the chain");
}

/* A token path and, timed right after each of its batches, the same work in one process:
 * the pipe (ping-pong), the pipe and the sum of the working set (ring with a size). */
struct path_and_self {
    struct token_path t;
    int self[2];
    uint64_t self_iters;
};

static uint64_t loop_path(void *arg, uint64_t n)
{
    return loop_token(&((struct path_and_self *)arg)->t, n);
}

static void with_pipe_self(void *arg, double round_trip, uint64_t iters, double *values)
{
    struct path_and_self *pp = arg;
    (void)iters;
    /* Interleaved with the ping-pong so both see the same machine state. */
    double pipe_self = om_time_batch(loop_self, pp->self, pp->self_iters);
    values[0] = round_trip / 2;
    values[1] = pipe_self;
    /* A round trip is 2 switches + 2 writes + 2 reads = 2 switches + 2 x pipe_self. */
    values[2] = (round_trip - 2 * pipe_self) / 2;
}

/* Two processes: round trip, per switch, and the switch with the pipe overhead removed. */
static int run_pingpong(struct om_ctx *ctx)
{
    int rc = om_apply_placement(ctx);
    if (rc)
        return rc;
    struct path_and_self pp;
    if ((rc = build_ring(ctx, 2, 0, &pp.t))) {
        teardown(&pp.t);
        return rc;
    }
    if (pipe(pp.self)) {
        teardown(&pp.t);
        return om_fail(ctx, "pipe: %s", strerror(errno));
    }
    pp.self_iters = om_calibrate(ctx, loop_self, pp.self, (double)om_int(ctx, "batch_ms"));
    struct om_measure m = {.metric = "round_trip",
                           .also = {"per_switch", "pipe_self", "switch_minus_pipe"},
                           .also_fn = with_pipe_self};
    rc = om_measure_batches(ctx, loop_path, &pp, &m);
    close(pp.self[0]);
    close(pp.self[1]);
    teardown(&pp.t);
    return rc;
}

/* lmbench's overhead for a ring with a working set (lat_ctx.c benchmark_overhead): a
 * byte through a pipe and back in one process, then one sum of the parent's working set,
 * which stays in the caches there. */
static uint64_t loop_sum_self(void *arg, uint64_t n)
{
    struct path_and_self *r = arg;
    char c = 'x';
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++) {
        acc += (uint64_t)write(r->self[1], &c, 1);
        acc += (uint64_t)read(r->self[0], &c, 1);
        acc += sum_words(r->t.set, r->t.set_bytes);
    }
    return acc;
}

static void with_sum_self(void *arg, double round, uint64_t iters, double *values)
{
    struct path_and_self *r = arg;
    (void)iters;
    double self = om_time_batch(loop_sum_self, r, r->self_iters);
    values[0] = self;
    values[1] = round / r->t.hops - self; /* what lmbench's lat_ctx prints */
}

/* Sweep over the number of processes for a ring or a chain.  The limits end the curve:
 * sizes that do not fit are left out and a note says which limit stopped it. */
static int run_sweep(struct om_ctx *ctx, int chain)
{
    int rc = om_apply_placement(ctx);
    if (rc)
        return rc;
    long long ns[OM_MAX_LIST];
    int count = om_list(ctx, "n", ns);
    char why[256];
    size_t bytes = chain ? 0 : (size_t)om_int(ctx, "size");
    struct path_and_self r = {.self = {-1, -1}};
    if (bytes) {
        if (pipe(r.self))
            return om_fail(ctx, "pipe: %s", strerror(errno));
        om_note(ctx, "timing", "every process sums its own %zu bytes while it holds the "
                "token; sum_self: the same in one process, measured after each batch", bytes);
    }
    om_raise_limit(RLIMIT_NOFILE); /* the curve ends at the hard limits, not the soft ones */
#ifdef RLIMIT_NPROC
    om_raise_limit(RLIMIT_NPROC);
#endif
    for (int k = 0; k < count; k++) {
        if (over_limit(ns[k], chain ? 4 : 2, why, sizeof why)) {
            if (k == 0)
                return om_skip(ctx, "%s", why);
            om_note(ctx, "curve_end", "stopped before n=%lld: %s", ns[k], why);
            break;
        }
        struct token_path *t = &r.t;
        rc = chain ? build_chain(ctx, (int)ns[k], t) : build_ring(ctx, (int)ns[k], bytes, t);
        if (rc == OM_OK) {
            char label[32];
            snprintf(label, sizeof label, "n=%lld", ns[k]);
            struct om_measure m = {.metric = "per_switch", .x = ns[k], .scale = 1.0 / t->hops,
                                   .label = label};
            if (bytes) {
                r.self_iters = om_calibrate(ctx, loop_sum_self, &r,
                                            (double)om_int(ctx, "batch_ms"));
                m.also[0] = "sum_self";
                m.also[1] = "switch_minus_self";
                m.also_fn = with_sum_self;
            }
            rc = om_measure_batches(ctx, loop_path, &r, &m);
        }
        teardown(t);
        if (rc)
            break;
    }
    if (bytes) {
        close(r.self[0]);
        close(r.self[1]);
    }
    return rc;
}

static int run_ring(struct om_ctx *ctx) { return run_sweep(ctx, 0); }
static int run_chain(struct om_ctx *ctx) { return run_sweep(ctx, 1); }

/* Lai & Baker's Figure 1 goes beyond 64 processes; the step where the processes stop
 * fitting in the caches comes later on today's machines (here between 128 and 256). */
#define STUDY_NS "2,4,8,16,24,32,48,64,96,128,192,256,384,512,768,1024"
#define N_PARAM(def, quick, smoke)                                                        \
    {"n", OM_LIST, def, quick, smoke, 2, 4096, NULL,                                      \
     "numbers of processes (the parent is one of them)"}

const struct om_bench om_family_ctx[] = {
    {"ctx.pipe_pingpong", "1-byte token between 2 processes over pipes (context switch)",
     "O90 T3; LB96 §5; MG05 T1", "quick,full,o90,lb96,mg05,cc06", {0.42, 0.12, 0.027}, run_pingpong,
     {OM_BATCH_PARAMS, OM_PIN_PARAM},
     {{"round_trip", "ns", "lower", OM_POINT, NULL,
       "write+read there and back: 2 switches, 2 writes, 2 reads"},
      {"per_switch", "ns", "lower", OM_POINT, NULL, "round trip / 2, pipe cost included"},
      {"pipe_self", "ns", "lower", OM_POINT, NULL,
       "write+read of a byte through a pipe in one process, measured alongside"},
      {"switch_minus_pipe", "ns", "lower", OM_POINT, NULL,
       "estimated switch alone: (round trip - 2 x pipe_self) / 2"}}},
    {"ctx.pipe_self", "a byte through a pipe back to the same process (pipe overhead)",
     "LB96 §5", "quick,full,lb96", {0.25, 0.067, 0.01}, run_self, {OM_BATCH_PARAMS},
     {{"latency", "ns", "lower", OM_POINT, NULL, "write+read of one byte"}}},
    {"ctx.pipe_ring", "token round-robin through a ring of N processes, per switch",
     "LB96 §5 Fig 1; lmbench lat_ctx", "quick,full,lb96", {4.6, 0.3, 0.064}, run_ring,
     {OM_BATCH_PARAMS, OM_PIN_PARAM, N_PARAM(STUDY_NS, "2,8,32,128", "2,4"),
      {"size", OM_INT, "0", NULL, NULL, 0, 1 << 20, NULL,
       "bytes of a private array each process (the parent too) sums while it holds the "
       "token: lmbench lat_ctx -s (in KB there); 0 = none"}},
     {{"per_switch", "ns", "lower", OM_SWEEP, "processes", "time per token hop (pipe cost "
                                                           "included; the sum too)"},
      {"sum_self", "ns", "lower", OM_SWEEP, "processes",
       "size > 0: a byte through a pipe and back plus one sum, in one process (lmbench's "
       "overhead), after each batch"},
      {"switch_minus_self", "ns", "lower", OM_SWEEP, "processes",
       "size > 0: per_switch - sum_self, the figure lmbench lat_ctx prints"}}},
    {"ctx.pipe_chain_lifo", "token passed LIFO back and forth along a chain of N processes",
     "LB96 §5 Fig 1", "full,lb96", {5.4, 0.26, 0.038}, run_chain,
     {OM_BATCH_PARAMS, OM_PIN_PARAM, N_PARAM(STUDY_NS, "2,8,32,128", "2,4")},
     {{"per_switch", "ns", "lower", OM_SWEEP, "processes", "time per token hop (pipe cost "
                                                           "included)"}}},
    {0},
};
