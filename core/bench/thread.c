/*
 * Thread family: McGarry's (2005) thread tables with the system's own pthread functions
 * -- thread lifecycle, uncontested mutex, condition-variable wake-up (Table 2) and the
 * ping-pong games (Table 3) -- and beside them what is asked of threads today: a thread
 * context switch through pipes (the counterpart of ctx.pipe_pingpong), futex wake-up
 * latency (Linux), and a contended mutex and reader-writer lock from 1 to 2 x cores
 * threads.  (Creation as the number of live threads grows is thread.create, in the
 * scalability family.)
 *
 * Every thread a benchmark starts is joined before it returns, also when something
 * fails half-way: threads wait at a start gate until all their peers exist, so an
 * abort can always release and join the ones already made.
 *
 * One file, though long: every benchmark here leans on the same machinery (the start
 * gate, creating and joining all or none, the limit that stopped a creation, the check
 * that no thread outlives its benchmark), which belongs to no other family.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
/* Futexes: each system's own call to sleep on a word and wake its sleeper. */
#ifdef __linux__
#include <sys/syscall.h>
#if defined(__has_include)
#if __has_include(<linux/futex.h>)
#define HAVE_LINUX_FUTEX_H 1
#endif
#endif
#ifdef HAVE_LINUX_FUTEX_H
#include <linux/futex.h>
#else /* a C library without the kernel's headers (Alpine without linux-headers) */
#define FUTEX_WAIT_PRIVATE 128 /* FUTEX_WAIT | FUTEX_PRIVATE_FLAG: the kernel's ABI, futex(2) */
#define FUTEX_WAKE_PRIVATE 129 /* FUTEX_WAKE | FUTEX_PRIVATE_FLAG */
#endif
#if defined(SYS_futex)
#define HAVE_FUTEX "futex(2) FUTEX_WAIT_PRIVATE / FUTEX_WAKE_PRIVATE"
#endif
#elif defined(__NetBSD__)
#include <sys/param.h> /* __NetBSD_Version__ */
#if __NetBSD_Version__ >= 1000000000
#include <sys/futex.h> /* NetBSD 10+: Linux's operations, called through __futex */
#include <sys/syscall.h>
#ifdef SYS___futex
#define HAVE_FUTEX "__futex(2) FUTEX_WAIT / FUTEX_WAKE, private"
#endif
#endif
#elif defined(__OpenBSD__)
#include <sys/futex.h>
#define HAVE_FUTEX "futex(2) FUTEX_WAIT_PRIVATE / FUTEX_WAKE_PRIVATE"
#elif defined(__FreeBSD__)
#include <sys/types.h>
#include <sys/umtx.h>
#define HAVE_FUTEX "_umtx_op(2) UMTX_OP_WAIT_UINT_PRIVATE / UMTX_OP_WAKE_PRIVATE"
#endif

#include "../harness.h"
#include "../lib/atomics.h"

/* ---- shared machinery ----------------------------------------------------------- */
/* Placement: om_apply_placement() binds this process for pin=same before any thread
 * exists, and every thread created afterwards inherits the binding, so all of a
 * benchmark's threads share the CPU. */

/* pthread_create's resource errors: a limit of this system, not a bug. */
static int is_limit(int rc) { return rc == EAGAIN || rc == ENOMEM; }

/* A limit for a message: its soft value, "unlimited", or "none" where the system has no
 * such limit (RLIMIT_AS on OpenBSD). */
static const char *limit_text(char *buf, size_t len, int resource)
{
    struct rlimit rl;
    if (resource < 0)
        snprintf(buf, len, "none");
    else if (getrlimit(resource, &rl) != 0)
        snprintf(buf, len, "unknown");
    else if (rl.rlim_cur == RLIM_INFINITY)
        snprintf(buf, len, "unlimited");
    else
        snprintf(buf, len, "%lld", (long long)rl.rlim_cur);
    return buf;
}

/* Names the limits a failed pthread_create may have run into. */
static void describe_limit(char *buf, size_t len, int rc, long made, long wanted)
{
    char nproc[32], as[32];
    limit_text(nproc, sizeof nproc, RLIMIT_NPROC);
#ifdef RLIMIT_AS
    limit_text(as, sizeof as, RLIMIT_AS);
#else
    limit_text(as, sizeof as, -1);
#endif
    char threads_max[64] = "unknown";
#ifdef __linux__
    FILE *f = fopen("/proc/sys/kernel/threads-max", "r");
    if (f) {
        if (!fgets(threads_max, sizeof threads_max, f))
            snprintf(threads_max, sizeof threads_max, "unknown");
        threads_max[strcspn(threads_max, "\n")] = 0;
        fclose(f);
    }
#endif
    snprintf(buf, len,
             "cannot create %ld threads here: pthread_create failed after %ld with %s "
             "(limits: RLIMIT_NPROC %s, RLIMIT_AS %s, kernel.threads-max %s, memory "
             "for thread stacks)",
             wanted, made, strerror(rc), nproc, as, threads_max);
}

/* A failed pthread_create: a skip naming the limit, or a failure when it was no limit. */
static int create_failed(struct om_ctx *ctx, int rc, long made, long wanted)
{
    if (!is_limit(rc))
        return om_fail(ctx, "pthread_create failed after %ld of %ld threads: %s", made, wanted,
                       strerror(rc));
    char msg[512];
    describe_limit(msg, sizeof msg, rc, made, wanted);
    return om_skip(ctx, "%s", msg);
}

/* A start gate: threads wait until every peer exists (open) or the start failed (abort). */
struct gate {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int open, abort;
};

static int gate_init(struct gate *g)
{
    g->open = g->abort = 0;
    int rc = pthread_mutex_init(&g->m, NULL);
    if (rc)
        return rc;
    if ((rc = pthread_cond_init(&g->cv, NULL)))
        pthread_mutex_destroy(&g->m);
    return rc;
}

static void gate_destroy(struct gate *g)
{
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->m);
}

/* Returns 0 to go on, non-zero when the start was aborted (or the gate broke). */
static int gate_wait(struct gate *g)
{
    if (pthread_mutex_lock(&g->m))
        return 1;
    int rc = 0;
    while (!g->open && !g->abort && rc == 0)
        rc = pthread_cond_wait(&g->cv, &g->m);
    int stop = g->abort || rc;
    pthread_mutex_unlock(&g->m);
    return stop;
}

static int gate_release(struct gate *g, int abort)
{
    int rc = pthread_mutex_lock(&g->m);
    if (rc)
        return rc;
    if (abort)
        g->abort = 1;
    else
        g->open = 1;
    rc = pthread_cond_broadcast(&g->cv);
    int rc2 = pthread_mutex_unlock(&g->m);
    return rc ? rc : rc2;
}

/* Joins threads[0..n); returns the first error (every thread is joined regardless). */
static int join_all(pthread_t *threads, long n)
{
    int first = 0;
    for (long i = 0; i < n; i++) {
        int rc = pthread_join(threads[i], NULL);
        if (rc && !first)
            first = rc;
    }
    return first;
}

/* Creates n threads running fn(args + i*size).  On failure it calls stop(stop_arg) so
 * that the threads already made leave their start gate, joins them, and returns the
 * error with *made set. */
static int create_all(pthread_t *threads, long n, const pthread_attr_t *attr,
                      void *(*fn)(void *), void *args, size_t size, void (*stop)(void *),
                      void *stop_arg, long *made)
{
    for (*made = 0; *made < n; (*made)++) {
        int rc = pthread_create(&threads[*made], attr, fn, (char *)args + (size_t)*made * size);
        if (rc) {
            stop(stop_arg);
            join_all(threads, *made);
            return rc;
        }
    }
    return 0;
}

static void gate_abort(void *g) { gate_release(g, 1); }

/* Batches of an operation that can fail in the timed loop (the loop records the first
 * error in *fault); `half`, when given, gets half of each value (per switch of a round
 * trip). */
static void half_of(void *arg, double ns_per_op, uint64_t iters, double *values)
{
    (void)arg, (void)iters;
    values[0] = ns_per_op / 2;
}

static int measure_checked(struct om_ctx *ctx, const char *metric, const char *half,
                           om_batch_fn fn, void *arg, struct om_fault *fault, const char *what)
{
    struct om_measure m = {.metric = metric, .fault = fault, .what = what,
                           .also = {half}, .also_fn = half ? half_of : NULL};
    return om_measure_batches(ctx, fn, arg, &m);
}

/* A thread that exists and does nothing: blocked on the gate until released. */
static void *idle_thread(void *arg)
{
    gate_wait(arg);
    return NULL;
}

/* ---- thread.lifecycle: create, run an empty function, join ---------------------- */

struct lifecycle_arg {
    struct om_fault fault;
};

static void *empty_thread(void *arg) { return arg; }

static uint64_t loop_lifecycle(void *arg, uint64_t n)
{
    struct lifecycle_arg *a = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n && !a->fault.err; i++) {
        pthread_t t;
        void *ret = NULL;
        int rc = pthread_create(&t, NULL, empty_thread, a);
        if (rc) {
            om_record_fault(&a->fault, rc, NULL);
            break;
        }
        if ((rc = pthread_join(t, &ret)) || ret != a)
            om_record_fault(&a->fault, rc ? rc : EPROTO, NULL);
        acc += (uintptr_t)ret;
    }
    return acc;
}

static int run_lifecycle(struct om_ctx *ctx)
{
    int rc = om_apply_placement(ctx);
    if (rc)
        return rc;
    struct lifecycle_arg a = {{0}};
    return measure_checked(ctx, "latency", NULL, loop_lifecycle, &a, &a.fault,
                           "pthread_create/pthread_join");
}

/* ---- thread.mutex: uncontested lock + unlock ------------------------------------ */

struct mutex_arg {
    pthread_mutex_t m;
    struct om_fault fault;
    uint64_t counter;
};

static uint64_t loop_mutex(void *arg, uint64_t n)
{
    struct mutex_arg *a = arg;
    for (uint64_t i = 0; i < n; i++) {
        int rc = pthread_mutex_lock(&a->m);
        if (rc || (a->counter++, rc = pthread_mutex_unlock(&a->m))) {
            om_record_fault(&a->fault, rc, NULL);
            break;
        }
    }
    return a->counter;
}

static int run_mutex(struct om_ctx *ctx)
{
    struct mutex_arg a = {.counter = 0};
    int rc = pthread_mutex_init(&a.m, NULL);
    if (rc)
        return om_fail(ctx, "pthread_mutex_init: %s", strerror(rc));
    /* One more thread exists (blocked, never touching the mutex), so the library cannot
     * take a single-threaded shortcut: this is the lock path of a threaded program. */
    struct gate g;
    pthread_t idle;
    if ((rc = gate_init(&g))) {
        pthread_mutex_destroy(&a.m);
        return om_fail(ctx, "gate: %s", strerror(rc));
    }
    if ((rc = pthread_create(&idle, NULL, idle_thread, &g))) {
        gate_destroy(&g);
        pthread_mutex_destroy(&a.m);
        return create_failed(ctx, rc, 0, 1);
    }
    om_note(ctx, "threads", "2 (the measuring thread and one idle thread blocked elsewhere)");
    int res = measure_checked(ctx, "latency", NULL, loop_mutex, &a, &a.fault,
                              "pthread_mutex_lock/unlock");
    int rc1 = gate_release(&g, 1), rc2 = pthread_join(idle, NULL);
    gate_destroy(&g);
    pthread_mutex_destroy(&a.m);
    if (res == OM_OK && (rc1 || rc2))
        return om_fail(ctx, "stopping the idle thread: %s", strerror(rc1 ? rc1 : rc2));
    return res;
}

/* ---- thread.condvar: ten workers and a master ----------------------------------- */
/*
 * McGarry: workers wait on a variable the master sets; when it is set, a broadcast wakes
 * the workers; the woken worker clears it, signals the master to set it again, and waits
 * again.  One hand-off = set + broadcast .. a worker clears and signals .. master awake.
 */
struct condvar_shared {
    pthread_mutex_t m;
    pthread_cond_t work_cv, master_cv;
    int flag, stop;
    struct om_fault fault;
    struct gate gate;
};

static void *condvar_worker(void *arg)
{
    struct condvar_shared *s = arg;
    if (gate_wait(&s->gate))
        return NULL;
    int rc = pthread_mutex_lock(&s->m);
    while (rc == 0 && !s->stop) {
        while (rc == 0 && !s->flag && !s->stop)
            rc = pthread_cond_wait(&s->work_cv, &s->m);
        if (rc || s->stop)
            break;
        s->flag = 0;
        /* Notify after unlocking (here and in the master), so the woken thread does not
         * run only to block on the mutex the notifier still holds. */
        if ((rc = pthread_mutex_unlock(&s->m)))
            break;
        if ((rc = pthread_cond_signal(&s->master_cv)) || (rc = pthread_mutex_lock(&s->m)))
            break;
    }
    if (rc) { /* the lock state is unknown: flag the master without it */
        om_record_fault(&s->fault, rc, NULL);
        s->stop = 1;
        pthread_cond_broadcast(&s->master_cv);
    } else {
        pthread_mutex_unlock(&s->m);
    }
    return NULL;
}

static uint64_t loop_condvar(void *arg, uint64_t n)
{
    struct condvar_shared *s = arg;
    uint64_t done = 0;
    int rc = pthread_mutex_lock(&s->m);
    for (; rc == 0 && done < n && !s->stop; done++) {
        s->flag = 1;
        if ((rc = pthread_mutex_unlock(&s->m)))
            break;
        if ((rc = pthread_cond_broadcast(&s->work_cv)) || (rc = pthread_mutex_lock(&s->m)))
            break;
        while (rc == 0 && s->flag && !s->stop)
            rc = pthread_cond_wait(&s->master_cv, &s->m);
    }
    if (rc == 0)
        pthread_mutex_unlock(&s->m);
    if (rc)
        om_record_fault(&s->fault, rc, NULL);
    if (s->stop)
        om_record_fault(&s->fault, EPROTO, NULL);
    return done;
}

static int run_condvar(struct om_ctx *ctx)
{
    int rc = om_apply_placement(ctx);
    if (rc)
        return rc;
    long workers = om_int(ctx, "workers");
    struct condvar_shared s = {.flag = 0};
    if ((rc = pthread_mutex_init(&s.m, NULL)) || (rc = pthread_cond_init(&s.work_cv, NULL)) ||
        (rc = pthread_cond_init(&s.master_cv, NULL)) || (rc = gate_init(&s.gate)))
        return om_fail(ctx, "initialising mutex/condition variables: %s", strerror(rc));
    pthread_t *threads = calloc((size_t)workers, sizeof *threads);
    if (!threads)
        return om_fail(ctx, "out of memory");
    long made; /* every worker gets &s: an argument stride of 0 */
    if ((rc = create_all(threads, workers, NULL, condvar_worker, &s, 0, gate_abort, &s.gate,
                         &made))) {
        free(threads);
        return create_failed(ctx, rc, made, workers);
    }
    om_note(ctx, "threads", "%ld workers + 1 master", workers);
    int res;
    if ((rc = gate_release(&s.gate, 0)))
        res = om_fail(ctx, "gate: %s", strerror(rc));
    else
        res = measure_checked(ctx, "latency", NULL, loop_condvar, &s, &s.fault,
                              "condvar hand-off");
    /* Stop the workers: they leave their wait on `stop`. */
    if (pthread_mutex_lock(&s.m) == 0) {
        s.stop = 1;
        pthread_cond_broadcast(&s.work_cv);
        pthread_mutex_unlock(&s.m);
    } else {
        s.stop = 1; /* cannot happen with a default mutex; workers still see it */
    }
    gate_release(&s.gate, 1);
    rc = join_all(threads, workers);
    free(threads);
    gate_destroy(&s.gate);
    pthread_cond_destroy(&s.master_cv);
    pthread_cond_destroy(&s.work_cv);
    pthread_mutex_destroy(&s.m);
    if (res == OM_OK && rc)
        return om_fail(ctx, "pthread_join: %s", strerror(rc));
    return res;
}

/* ---- thread.pingpong.e1/e2/e3: Sun's ping-pong games ---------------------------- */
/*
 * Sun's source is not at hand; the games follow McGarry's description, with the POSIX
 * primitives a program would use: one mutex and one condition variable per game.
 * A game is two players in lock-step: each iteration a player waits until it is its
 * turn (blocked), then gives the turn to its partner (unblocks it).  Each player plays
 * `iterations` turns, so a game makes 2 x iterations hand-offs.  All games are played
 * at once in this process.  Every player is created first (timed: thread creation time)
 * and waits for the first turn; then the master serves in every game and all games run
 * until every player is joined (timed: game completion time).
 */
struct game {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int turn; /* -1 before the serve, then the side whose turn it is */
    int abort, err;
    long iterations, handoffs; /* handoffs: counted, and checked against 2 x iterations */
};

struct player {
    struct game *game;
    int side; /* 0 serves first */
};

static void *player(void *arg)
{
    struct player *p = arg;
    struct game *g = p->game;
    int rc = pthread_mutex_lock(&g->m);
    for (long i = 0; rc == 0 && i < g->iterations && !g->abort; i++) {
        while (rc == 0 && g->turn != p->side && !g->abort)
            rc = pthread_cond_wait(&g->cv, &g->m);
        if (rc || g->abort)
            break;
        g->turn = !p->side;
        g->handoffs++;
        /* Signal after unlocking, so the partner does not wake only to block on the mutex
         * (that would be two context switches per hand-off instead of one). */
        if ((rc = pthread_mutex_unlock(&g->m)))
            break;
        if ((rc = pthread_cond_signal(&g->cv)) || (rc = pthread_mutex_lock(&g->m)))
            break;
    }
    if (rc) {
        g->err = rc;
        g->abort = 1; /* the partner must not wait for a turn that never comes */
        pthread_cond_broadcast(&g->cv);
    } else {
        pthread_mutex_unlock(&g->m);
    }
    return NULL;
}

struct games {
    struct game *g;
    long n;
};

/* Serve (turn = 0) or abort every game; returns the first error. */
static int start_games(struct games *gs, int abort)
{
    int first = 0;
    for (long i = 0; i < gs->n; i++) {
        struct game *g = &gs->g[i];
        int rc = pthread_mutex_lock(&g->m);
        if (rc == 0) {
            if (abort)
                g->abort = 1;
            else
                g->turn = 0;
            rc = pthread_cond_broadcast(&g->cv); /* both players wait on it */
            int rc2 = pthread_mutex_unlock(&g->m);
            rc = rc ? rc : rc2;
        }
        if (rc && !first)
            first = rc;
    }
    return first;
}

static void abort_games(void *gs) { start_games(gs, 1); }

/* Context switches of the whole process so far (all threads, live and joined):
 * voluntary (a thread blocked) and involuntary (preempted), or -1s where unknown. */
static void process_switches(long sw[2])
{
    struct rusage ru;
    sw[0] = sw[1] = -1;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        sw[0] = ru.ru_nvcsw;
        sw[1] = ru.ru_nivcsw;
    }
}

/* One playing of all games: creation and completion times, or a failure. */
static int play_games(struct om_ctx *ctx, struct games *gs, struct player *p,
                      pthread_t *threads, const pthread_attr_t *attr, long iterations)
{
    long players = 2 * gs->n, made;
    uint64_t t0 = om_now_ns();
    int rc = create_all(threads, players, attr, player, p, sizeof *p, abort_games, gs, &made);
    uint64_t t1 = om_now_ns();
    if (rc)
        return create_failed(ctx, rc, made, players);
    long sw0[2], sw1[2];
    process_switches(sw0);
    uint64_t t2 = om_now_ns();
    int rc_go = start_games(gs, 0);
    if (rc_go) /* some game was not served: release every player instead */
        start_games(gs, 1);
    int err = join_all(threads, players);
    uint64_t t3 = om_now_ns();
    process_switches(sw1);
    err = rc_go ? rc_go : err;
    for (long i = 0; i < gs->n && !err; i++)
        err = gs->g[i].err ? gs->g[i].err : gs->g[i].abort ? EPROTO : 0;
    if (err)
        return om_fail(ctx, "ping-pong game: %s", strerror(err));
    for (long i = 0; i < gs->n; i++)
        if (gs->g[i].handoffs != 2 * iterations)
            return om_fail(ctx, "ping-pong game %ld made %ld hand-offs, not %ld", i,
                           gs->g[i].handoffs, 2 * iterations);
    double handoffs = 2.0 * (double)iterations * (double)gs->n;
    if (sw0[0] >= 0 && sw1[0] >= 0) /* McGarry: one switch per hand-off */
        om_note(ctx, "context_switches",
                "%.3f voluntary per hand-off (%ld voluntary, %ld involuntary during the games, "
                "getrusage)", (double)(sw1[0] - sw0[0]) / handoffs, sw1[0] - sw0[0],
                sw1[1] - sw0[1]);
    double completion = (double)(t3 - t2) - om_timer_overhead_ns();
    om_sample(ctx, "create", OM_NO_X, (double)(t1 - t0) - om_timer_overhead_ns());
    om_sample(ctx, "completion", OM_NO_X, completion);
    om_sample(ctx, "per_handoff", OM_NO_X, completion / handoffs);
    return OM_OK;
}

static int run_pingpong(struct om_ctx *ctx)
{
    int rc = om_apply_placement(ctx);
    if (rc)
        return rc;
    long games = om_int(ctx, "games"), iterations = om_int(ctx, "iterations");
    long long stack = om_int(ctx, "stack"), samples = om_int(ctx, "samples");
    long players = 2 * games;

    pthread_attr_t attr;
    if ((rc = pthread_attr_init(&attr)))
        return om_fail(ctx, "pthread_attr_init: %s", strerror(rc));
    if (stack > 0 && (rc = pthread_attr_setstacksize(&attr, (size_t)stack))) {
        pthread_attr_destroy(&attr);
        if (rc == EINVAL)
            return om_skip(ctx, "stack=%lld is below this system's minimum thread stack (%ld)",
                           stack, sysconf(_SC_THREAD_STACK_MIN));
        return om_fail(ctx, "pthread_attr_setstacksize(%lld): %s", stack, strerror(rc));
    }
    size_t actual = 0;
    if ((rc = pthread_attr_getstacksize(&attr, &actual))) {
        pthread_attr_destroy(&attr);
        return om_fail(ctx, "pthread_attr_getstacksize: %s", strerror(rc));
    }
    om_note(ctx, "stack_bytes", "%zu (%s)", actual,
            stack > 0 ? "set with pthread_attr_setstacksize" : "the library's default");
    om_note(ctx, "games", "%ld games, %ld players, %ld iterations each, %ld hand-offs per game",
            games, players, iterations, 2 * iterations);

    struct games gs = {calloc((size_t)games, sizeof *gs.g), games};
    struct player *p = calloc((size_t)players, sizeof *p);
    pthread_t *threads = calloc((size_t)players, sizeof *threads);
    int res = OM_OK;
    if (!gs.g || !p || !threads)
        res = om_fail(ctx, "out of memory for %ld players", players);
    for (long long s = 0; s < samples && res == OM_OK; s++) {
        long ready = 0;
        for (; ready < games; ready++) {
            struct game *g = &gs.g[ready];
            *g = (struct game){.turn = -1, .iterations = iterations};
            if ((rc = pthread_mutex_init(&g->m, NULL)))
                break;
            if ((rc = pthread_cond_init(&g->cv, NULL))) {
                pthread_mutex_destroy(&g->m);
                break;
            }
            p[2 * ready] = (struct player){g, 0};
            p[2 * ready + 1] = (struct player){g, 1};
        }
        if (rc)
            res = om_fail(ctx, "initialising game %ld: %s", ready, strerror(rc));
        else
            res = play_games(ctx, &gs, p, threads, &attr, iterations);
        for (long i = 0; i < ready; i++) {
            pthread_cond_destroy(&gs.g[i].cv);
            pthread_mutex_destroy(&gs.g[i].m);
        }
    }
    pthread_attr_destroy(&attr);
    free(gs.g);
    free(p);
    free(threads);
    return res;
}

/* ---- thread.ctx.pipe: a 1-byte token between two threads over two pipes ---------- */

struct pipe_pair {
    int to_peer[2], from_peer[2];
    struct om_fault fault;
};

static void *pipe_echo(void *arg)
{
    struct pipe_pair *pp = arg;
    char c;
    for (;;) {
        ssize_t n = read(pp->to_peer[0], &c, 1);
        if (n == 0)
            return NULL; /* the measuring thread closed its end: done */
        if (n < 0 && errno == EINTR)
            continue;
        if (n != 1 || om_write_full(pp->from_peer[1], &c, 1)) {
            om_record_fault(&pp->fault, n < 0 ? errno : EPROTO, NULL);
            close(pp->from_peer[1]); /* the measuring thread sees EOF instead of hanging */
            pp->from_peer[1] = -1;
            return NULL;
        }
    }
}

static uint64_t loop_pipe(void *arg, uint64_t n)
{
    struct pipe_pair *pp = arg;
    char c = 'x';
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n && !pp->fault.err; i++) {
        if (om_write_full(pp->to_peer[1], &c, 1) || om_read_full(pp->from_peer[0], &c, 1)) {
            om_record_fault(&pp->fault, errno ? errno : EPROTO, NULL);
            break;
        }
        acc += (unsigned char)c;
    }
    return acc;
}

static int run_ctx_pipe(struct om_ctx *ctx)
{
    int rc = om_apply_placement(ctx);
    if (rc)
        return rc;
    struct pipe_pair pp = {.to_peer = {-1, -1}};
    if (pipe(pp.to_peer))
        return om_fail(ctx, "pipe: %s", strerror(errno));
    if (pipe(pp.from_peer)) {
        int e = errno;
        close(pp.to_peer[0]);
        close(pp.to_peer[1]);
        return om_fail(ctx, "pipe: %s", strerror(e));
    }
    pthread_t peer;
    if ((rc = pthread_create(&peer, NULL, pipe_echo, &pp))) {
        for (int i = 0; i < 2; i++) {
            close(pp.to_peer[i]);
            close(pp.from_peer[i]);
        }
        return create_failed(ctx, rc, 0, 1);
    }
    int res = measure_checked(ctx, "round_trip", "per_switch", loop_pipe, &pp, &pp.fault,
                              "pipe round trip between threads");
    close(pp.to_peer[1]); /* the echo thread reads EOF and returns */
    rc = pthread_join(peer, NULL);
    close(pp.to_peer[0]);
    close(pp.from_peer[0]);
    if (pp.from_peer[1] >= 0)
        close(pp.from_peer[1]);
    if (res == OM_OK && rc)
        return om_fail(ctx, "pthread_join: %s", strerror(rc));
    return res;
}

/* ---- thread.futex.wake: futex wake-up latency and round trip -------------------- */
#ifdef HAVE_FUTEX
/* word: 0 = the measuring thread's turn, 1 = the peer's turn, 2 = the peer must leave. */
struct futex_pair {
    int word;
    uint64_t stamp; /* cycle count just before FUTEX_WAKE */
    uint64_t wake_cycles;   /* sum over a batch: wake call -> peer running */
    struct om_fault fault;
};

/* Sleep while *addr == val (wait), or wake one sleeper: 0, or -1 with errno. */
static long futex_call(int *addr, int wait, int val)
{
#if defined(__linux__)
    return syscall(SYS_futex, (int *)addr, wait ? FUTEX_WAIT_PRIVATE : FUTEX_WAKE_PRIVATE,
                   wait ? val : 1, NULL, NULL, 0);
#elif defined(__NetBSD__)
    return syscall(SYS___futex, (int *)addr,
                   (wait ? FUTEX_WAIT : FUTEX_WAKE) | FUTEX_PRIVATE_FLAG, wait ? val : 1, NULL,
                   NULL, 0, 0);
#elif defined(__OpenBSD__)
    return futex((volatile uint32_t *)addr, wait ? FUTEX_WAIT_PRIVATE : FUTEX_WAKE_PRIVATE,
                 wait ? val : 1, NULL, NULL);
#elif defined(__FreeBSD__)
    return wait ? _umtx_op((void *)addr, UMTX_OP_WAIT_UINT_PRIVATE, (u_long)(unsigned)val,
                           NULL, NULL)
                : _umtx_op((void *)addr, UMTX_OP_WAKE_PRIVATE, 1, NULL, NULL);
#endif
}

/* Sleeps while *addr == val; a change before sleeping (EAGAIN) or a signal (EINTR, and
 * OpenBSD's ECANCELED) is fine. */
static int futex_wait(int *addr, int val)
{
    if (futex_call(addr, 1, val) < 0 && errno != EAGAIN && errno != EINTR && errno != ECANCELED)
        return errno;
    return 0;
}

static int futex_wake(int *addr)
{
    return futex_call(addr, 0, 0) < 0 ? errno : 0;
}

static void *futex_peer(void *arg)
{
    struct futex_pair *fp = arg;
    for (;;) {
        int w, rc = 0;
        while (rc == 0 && (w = om_load(&fp->word)) == 0)
            rc = futex_wait(&fp->word, 0);
        if (rc) {
            om_record_fault(&fp->fault, rc, NULL);
            om_store(&fp->word, 0);
            futex_wake(&fp->word);
            return NULL;
        }
        if (w == 2)
            return NULL;
        fp->wake_cycles += om_cycles() - om_load(&fp->stamp);
        om_store(&fp->word, 0);
        if ((rc = futex_wake(&fp->word))) {
            om_record_fault(&fp->fault, rc, NULL);
            return NULL;
        }
    }
}

static uint64_t loop_futex(void *arg, uint64_t n)
{
    struct futex_pair *fp = arg;
    int rc = 0;
    for (uint64_t i = 0; i < n && rc == 0 && !fp->fault.err; i++) {
        om_store(&fp->stamp, om_cycles());
        om_store(&fp->word, 1);
        rc = futex_wake(&fp->word);
        while (rc == 0 && om_load(&fp->word) == 1 && !fp->fault.err)
            rc = futex_wait(&fp->word, 1);
    }
    if (rc)
        om_record_fault(&fp->fault, rc, NULL);
    return n;
}

static void futex_batch_start(void *arg) { ((struct futex_pair *)arg)->wake_cycles = 0; }

static void futex_wake_latency(void *arg, double ns_per_op, uint64_t iters, double *values)
{
    (void)ns_per_op;
    values[0] = om_cycles_to_ns(((struct futex_pair *)arg)->wake_cycles) / (double)iters;
}

static int run_futex_wake(struct om_ctx *ctx)
{
    int rc = om_apply_placement(ctx);
    if (rc)
        return rc;
    om_note(ctx, "call", "%s", HAVE_FUTEX);
    om_cycles_init(ctx);
    struct futex_pair fp = {.wake_cycles = 0};
    pthread_t peer;
    if ((rc = pthread_create(&peer, NULL, futex_peer, &fp)))
        return create_failed(ctx, rc, 0, 1);
    struct om_measure m = {.metric = "round_trip", .fault = &fp.fault, .what = "futex ping-pong",
                           .before = futex_batch_start, .also = {"wake_latency"},
                           .also_fn = futex_wake_latency};
    int res = om_measure_batches(ctx, loop_futex, &fp, &m);
    om_store(&fp.word, 2);
    futex_wake(&fp.word);
    rc = pthread_join(peer, NULL);
    if (res == OM_OK && rc)
        return om_fail(ctx, "pthread_join: %s", strerror(rc));
    return res;
}
#else
static int run_futex_wake(struct om_ctx *ctx)
{
#if defined(__linux__)
    return om_skip(ctx, "this C library has no SYS_futex (only a 64-bit-time futex call)");
#elif defined(__NetBSD__)
    return om_skip(ctx, "this NetBSD has no __futex system call (NetBSD 10 added it)");
#elif defined(__APPLE__)
    return om_skip(ctx, "not implemented here: macOS 14.4+ has os_sync_wait_on_address and "
                        "os_sync_wake_by_address_any, which osmeter does not call yet");
#else
    return om_skip(ctx, "not implemented here: osmeter knows no futex call of this system");
#endif
}
#endif

/* ---- thread.mutex_contended, thread.rwlock: 1 .. 2 x cores threads --------------- */
/*
 * Every thread runs the same short critical section (increment or read a shared counter)
 * as fast as it can for batch_ms; the result is the wall time per operation of all
 * threads together: (last thread's end - first thread's start) / all operations.
 */
struct contend_shared {
    pthread_mutex_t mutex;
    pthread_rwlock_t rwlock;
    uint64_t counter;
    long write_every; /* rwlock: every write_every-th operation writes; 0 = never */
    int stop;
    long started; /* threads past the gate; the batch_ms sleep waits for all */
    struct gate gate;
    int (*op)(struct contend_shared *s, uint64_t i);
};

struct contender {
    struct contend_shared *s;
    uint64_t ops, start, end;
    int err;
};

static int op_mutex(struct contend_shared *s, uint64_t i)
{
    (void)i;
    int rc = pthread_mutex_lock(&s->mutex);
    if (rc)
        return rc;
    s->counter++;
    return pthread_mutex_unlock(&s->mutex);
}

static int op_rwlock(struct contend_shared *s, uint64_t i)
{
    int rc;
    if (s->write_every && i % (uint64_t)s->write_every == 0) {
        if ((rc = pthread_rwlock_wrlock(&s->rwlock)))
            return rc;
        s->counter++;
    } else {
        if ((rc = pthread_rwlock_rdlock(&s->rwlock)))
            return rc;
        (void)*(volatile uint64_t *)&s->counter; /* a read the compiler must keep */
    }
    return pthread_rwlock_unlock(&s->rwlock);
}

static void *contender(void *arg)
{
    struct contender *c = arg;
    struct contend_shared *s = c->s;
    if (gate_wait(&s->gate))
        return NULL;
    c->start = om_now_ns();
    om_add(&s->started, 1);
    uint64_t i = 0;
    do { /* at least one operation each, however late this thread was scheduled */
        if ((c->err = s->op(s, i)))
            break;
        i++;
    } while (!om_load_relaxed(&s->stop));
    c->end = om_now_ns();
    c->ops = i;
    return NULL;
}

/* 1, 2, 3, 4, then doubling, up to max and always ending at max. */
static int thread_counts(long max, long *out)
{
    int n = 0;
    for (long t = 1; t <= max; t = t < 4 ? t + 1 : t * 2)
        out[n++] = t;
    if (out[n - 1] != max)
        out[n++] = max;
    return n;
}

static int run_contended(struct om_ctx *ctx, struct contend_shared *s, const char *what)
{
    int rc = om_apply_placement(ctx);
    if (rc)
        return rc;
    long max = om_int(ctx, "max_threads");
    if (max == 0)
        max = 2L * om_ncpus();
    long long samples = om_int(ctx, "samples"), batch_ms = om_int(ctx, "batch_ms");
    om_note(ctx, "threads", "1 .. %ld (%d CPUs online)", max, om_ncpus());
    long counts[64];
    int ncounts = thread_counts(max, counts);
    pthread_t *threads = calloc((size_t)max, sizeof *threads);
    struct contender *c = calloc((size_t)max, sizeof *c);
    double *values = malloc(sizeof *values * (size_t)(samples * ncounts));
    int res = OM_OK;
    if (!threads || !c || !values)
        res = om_fail(ctx, "out of memory for %ld threads", max);
    for (int k = 0; k < ncounts && res == OM_OK; k++) {
        long n = counts[k];
        for (long long smp = 0; smp < samples && res == OM_OK; smp++) {
            if ((rc = gate_init(&s->gate))) {
                res = om_fail(ctx, "gate: %s", strerror(rc));
                break;
            }
            om_store(&s->stop, 0);
            om_store(&s->started, 0);
            for (long i = 0; i < n; i++)
                c[i] = (struct contender){.s = s};
            long made;
            if ((rc = create_all(threads, n, NULL, contender, c, sizeof *c, gate_abort, &s->gate,
                                  &made))) {
                gate_destroy(&s->gate);
                if (k > 0 && is_limit(rc)) { /* a limit ends the curve: keep what it has */
                    char msg[512];
                    describe_limit(msg, sizeof msg, rc, made, n);
                    om_note(ctx, "limit", "sweep ended before %ld threads: %s", n, msg);
                    ncounts = k;
                } else {
                    res = create_failed(ctx, rc, made, n);
                }
                break;
            }
            int rc_go = gate_release(&s->gate, 0);
            if (rc_go)
                gate_release(&s->gate, 1);
            else {
                /* On a loaded machine the threads may take a while to leave the gate. */
                while (om_load(&s->started) < n)
                    sched_yield();
                struct timespec batch = {batch_ms / 1000, batch_ms % 1000 * 1000000};
                while (nanosleep(&batch, &batch) && errno == EINTR)
                    ;
            }
            om_store(&s->stop, 1);
            int rc_join = join_all(threads, n);
            gate_destroy(&s->gate);
            uint64_t first = UINT64_MAX, last = 0, ops = 0;
            int err = rc_go ? rc_go : rc_join;
            for (long i = 0; i < n; i++) {
                if (!err)
                    err = c[i].err;
                first = c[i].start < first ? c[i].start : first;
                last = c[i].end > last ? c[i].end : last;
                ops += c[i].ops;
            }
            if (err)
                res = om_fail(ctx, "%s with %ld threads: %s", what, n, strerror(err));
            else if (ops == 0)
                res = om_fail(ctx, "%s with %ld threads: no operation completed in the batch",
                              what, n);
            else
                values[k * samples + smp] = (double)(last - first) / (double)ops;
        }
    }
    if (res == OM_OK)
        for (int k = 0; k < ncounts; k++)
            for (long long smp = 0; smp < samples; smp++)
                om_sample(ctx, "per_op", counts[k], values[k * samples + smp]);
    free(threads);
    free(c);
    free(values);
    return res;
}

static int run_mutex_contended(struct om_ctx *ctx)
{
    struct contend_shared s = {.op = op_mutex};
    int rc = pthread_mutex_init(&s.mutex, NULL);
    if (rc)
        return om_fail(ctx, "pthread_mutex_init: %s", strerror(rc));
    om_note(ctx, "critical_section", "increment one shared counter");
    int res = run_contended(ctx, &s, "pthread_mutex_lock/unlock");
    pthread_mutex_destroy(&s.mutex);
    return res;
}

static int run_rwlock(struct om_ctx *ctx)
{
    struct contend_shared s = {.op = op_rwlock, .write_every = om_int(ctx, "write_every")};
    int rc = pthread_rwlock_init(&s.rwlock, NULL);
    if (rc)
        return om_fail(ctx, "pthread_rwlock_init: %s", strerror(rc));
    if (s.write_every)
        om_note(ctx, "critical_section", "every %ld-th operation writes (increments a shared "
                "counter), the others read it", s.write_every);
    else
        om_note(ctx, "critical_section", "read a shared counter (readers only)");
    int res = run_contended(ctx, &s, "pthread_rwlock");
    pthread_rwlock_destroy(&s.rwlock);
    return res;
}

/* ---- every benchmark ends with the threads it started with ------------------------ */

/* Threads of this process now (Linux: /proc/self/task), or -1 where unknown. */
static long threads_running(void)
{
#ifdef __linux__
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    long n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
#else
    return -1;
#endif
}

/* A benchmark that left a thread running has a bug: say so instead of reporting.  The
 * count is compared with the one at the start, not with 1: an emulator (qemu-user) or
 * a preloaded library may run threads of its own.  A joined thread can stay visible
 * for a moment while the kernel (or qemu) finishes it, so a surplus is looked at again
 * for up to a second; a leaked thread is still there then. */
static int check_threads_left(struct om_ctx *ctx, long at_start, int res)
{
    long n = threads_running();
    for (int waited_ms = 0; n > at_start && at_start >= 0 && waited_ms < 1000; waited_ms += 10) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        n = threads_running();
    }
    if (n < 0 || at_start < 0)
        return res;
    om_note(ctx, "threads_before", "%ld", at_start);
    om_note(ctx, "threads_after", "%ld", n);
    if (n > at_start && res != OM_BADPARAM)
        return om_fail(ctx, "%ld threads still running after the benchmark (%ld at the start)",
                       n, at_start);
    return res;
}

#define CHECKED(fn)                                                                        \
    static int fn##_checked(struct om_ctx *ctx)                                            \
    {                                                                                      \
        long at_start = threads_running();                                                 \
        return check_threads_left(ctx, at_start, fn(ctx));                                 \
    }
CHECKED(run_lifecycle)
CHECKED(run_mutex)
CHECKED(run_condvar)
CHECKED(run_pingpong)
CHECKED(run_ctx_pipe)
CHECKED(run_futex_wake)
CHECKED(run_mutex_contended)
CHECKED(run_rwlock)

/* ---- the table ------------------------------------------------------------------ */

#define PIN(def, why)                                                                      \
    {"pin", OM_CHOICE, def, NULL, NULL, 0, 0, "same|none",                                 \
     "same: all threads on one CPU (as the studies' uniprocessors); none: scheduler's "    \
     "choice" why}

/* Sun's ping-pong: one entry per experiment of McGarry's Table 3. */
#define PINGPONG(id, help, games, iters, quick_iters, smoke_games, smoke_iters, stack,     \
                 est_def, est_quick, est_smoke)                                            \
    {id, help, "MG05 T3", "quick,full,mg05", {est_def, est_quick, est_smoke},              \
     run_pingpong_checked,                                                                 \
     {{"games", OM_INT, games, NULL, smoke_games, 1, 2000, NULL,                           \
       "concurrent games (2 player threads each)"},                                        \
      {"iterations", OM_INT, iters, quick_iters, smoke_iters, 1, 100000000, NULL,          \
       "turns each player plays (a game makes 2 x iterations hand-offs)"},                 \
      {"stack", OM_INT, stack, NULL, NULL, 0, 1LL << 30, NULL,                             \
       "thread stack size in bytes; 0 = the library's default"},                           \
      {"samples", OM_INT, "1", NULL, NULL, 1, 1000, NULL,                                  \
       "times the whole experiment is played in this process; each is one sample"},        \
      PIN("same", "")},                                                                    \
     {{"create", "ns", "lower", OM_POINT, NULL,                                            \
       "time to create all player threads (they wait for the serve)"},                    \
      {"completion", "ns", "lower", OM_POINT, NULL,                                        \
       "time from the start of all games until every player is joined"},                   \
      {"per_handoff", "ns", "lower", OM_POINT, NULL,                                       \
       "completion / (2 x iterations x games): time per hand-off, all games counted"}}}

#define CONTEND_PARAMS                                                                     \
    {"max_threads", OM_INT, "0", NULL, "2", 0, 1024, NULL,                                 \
     "threads go 1, 2, 3, 4, 8, ... up to this; 0 = 2 x online CPUs"},                     \
    {"samples", OM_INT, "5", "3", "1", 1, 1000, NULL, "batches per thread count"},         \
    {"batch_ms", OM_INT, "50", "20", "5", 1, 10000, NULL,                                  \
     "how long all threads run per batch, ms"},                                            \
    PIN("none", "; same shows contention only through preemption")

const struct om_bench om_family_thread[] = {
    {"thread.lifecycle", "create a thread that runs an empty function, and join it",
     "MG05 T2", "quick,full,mg05", {0.26, 0.072, 0.0087},
     run_lifecycle_checked, {OM_BATCH_PARAMS, PIN("same", "")},
     {{"latency", "ns", "lower", OM_POINT, NULL, "pthread_create + pthread_join"}}},
    {"thread.mutex", "uncontested pthread mutex: lock + unlock, no other thread interested",
     "MG05 T2", "quick,full,mg05", {0.12, 0.068, 0.013}, run_mutex_checked, {OM_BATCH_PARAMS},
     {{"latency", "ns", "lower", OM_POINT, NULL, "pthread_mutex_lock + pthread_mutex_unlock"}}},
    {"thread.condvar",
     "condition-variable wake-up: workers wait for a variable the master sets and "
     "broadcasts; the woken worker clears it and signals the master",
     "MG05 T2", "quick,full,mg05", {0.23, 0.067, 0.023}, run_condvar_checked,
     {OM_BATCH_PARAMS,
      {"workers", OM_INT, "10", NULL, NULL, 1, 1000, NULL, "worker threads (plus the master)"},
      PIN("same", "")},
     {{"latency", "ns", "lower", OM_POINT, NULL,
       "one hand-off: master sets + broadcasts until a worker has cleared it and signalled"}}},
    PINGPONG("thread.pingpong.e1",
             "Sun's ping-pong, experiment 1: 1 game, 2 players, 1000000 iterations, "
             "default stack", "1", "1000000", "100000", "1", "1000", "0", 2.4, 0.24, 0.012),
    PINGPONG("thread.pingpong.e2",
             "Sun's ping-pong, experiment 2: 4 games, 8 players, 1000000 iterations, "
             "default stack", "4", "1000000", "25000", "4", "250", "0", 14.0, 0.37, 0.016),
    PINGPONG("thread.pingpong.e3",
             "Sun's ping-pong, experiment 3: 500 games, 1000 players, 100 iterations, "
             "32 KB stacks", "500", "100", "100", "500", "5", "32768", 0.32, 0.33, 0.1),
    {"thread.ctx.pipe",
     "1-byte token between 2 threads over pipes (thread counterpart of ctx.pipe_pingpong)",
     "osmeter", "quick,full", {0.22, 0.067, 0.025},
     run_ctx_pipe_checked, {OM_BATCH_PARAMS, PIN("same", "")},
     {{"round_trip", "ns", "lower", OM_POINT, NULL,
       "write + read of the token by each thread: two thread switches"},
      {"per_switch", "ns", "lower", OM_POINT, NULL, "round trip / 2, pipe cost included"}}},
    {"thread.futex.wake",
     "futex ping-pong between 2 threads: wake-up latency and round trip",
     "osmeter", "quick,full", {0.28, 0.13, 0.071},
     run_futex_wake_checked, {OM_BATCH_PARAMS, PIN("same", "")},
     {{"round_trip", "ns", "lower", OM_POINT, NULL,
       "FUTEX_WAKE + FUTEX_WAIT each way: two thread switches"},
      {"wake_latency", "ns", "lower", OM_POINT, NULL,
       "from just before FUTEX_WAKE until the woken thread runs (batch mean)"}}},
    {"thread.mutex_contended",
     "pthread mutex shared by 1 .. 2 x cores threads, each incrementing a counter",
     "osmeter", "quick,full", {1, 0.28, 0.028}, run_mutex_contended_checked, {CONTEND_PARAMS},
     {{"per_op", "ns", "lower", OM_SWEEP, "threads",
       "wall time per lock + unlock, all threads together"}}},
    {"thread.rwlock",
     "pthread reader-writer lock shared by 1 .. 2 x cores threads, mostly readers",
     "osmeter", "quick,full", {1, 0.26, 0.016}, run_rwlock_checked,
     {CONTEND_PARAMS,
      {"write_every", OM_INT, "10", NULL, NULL, 0, 1000000, NULL,
       "every n-th operation of each thread takes the lock for writing; 0 = readers only"}},
     {{"per_op", "ns", "lower", OM_SWEEP, "threads",
       "wall time per lock + unlock, all threads together"}}},
    {0},
};
