/*
 * osmeter measurement core: the contract between benchmark families and the harness.
 *
 * A benchmark family is one file in core/bench/ that defines
 *     const struct om_bench om_family_<file>[] = { {...}, {...}, { 0 } };
 * The Makefile finds every file in bench/ and generates the table of families, so a
 * new family needs no edit anywhere else.
 *
 * A benchmark's run function reads its parameters with om_int()/om_str()/om_list(),
 * measures, and reports each measured value with om_sample().  It returns 0 when it
 * measured, or the value of om_skip()/om_fail().  Everything it creates (children,
 * files in om_scratch_dir()) is removed by the harness on exit and on SIGINT/SIGTERM.
 *
 * Output is JSON Lines on stdout (see docs/protocol.md):
 *   {"type":"header",...} {"type":"note",...}* {"type":"sample",...}* {"type":"trailer",...}
 */
#ifndef OSMETER_HARNESS_H
#define OSMETER_HARNESS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define OM_CORE_VERSION "0.1.0"
#define OM_MAX_PARAMS 16
#define OM_MAX_METRICS 8
#define OM_MAX_LIST 256

/* Parameter kinds.  Integers accept k/m/g suffixes (powers of 1024). */
enum om_kind {
    OM_INT = 1,  /* one integer within [min, max] */
    OM_LIST,     /* comma-separated integers, each within [min, max] */
    OM_CHOICE,   /* one of the '|'-separated words in .choices */
    OM_STR,      /* free text (a path, say); validated by the benchmark */
};

struct om_param {
    const char *name;
    enum om_kind kind;
    const char *def;     /* the study's default (what a full run uses) */
    const char *quick;   /* value for the quick suite; NULL = def */
    const char *smoke;   /* smallest size, for --smoke and the tests; NULL = quick */
    long long min, max;  /* bounds for OM_INT / OM_LIST */
    const char *choices; /* for OM_CHOICE: "same|none" */
    const char *help;
};

/* How a metric's samples are shaped, so the front-end knows how to summarise them. */
#define OM_POINT "point"     /* one value per sample; x is null */
#define OM_SWEEP "sweep"     /* a value per x (buffer size, N processes); summarise per x */
#define OM_SCATTER "scatter" /* every single operation at a growing x; fit, don't summarise */

struct om_metric {
    const char *name;   /* e.g. "round_trip" */
    const char *unit;   /* "ns", "MB/s", "Mbit/s", "s", "ops/s", "%" */
    const char *better; /* "lower" or "higher" */
    const char *shape;  /* OM_POINT, OM_SWEEP or OM_SCATTER */
    const char *x_name; /* name of x for sweeps/scatters, e.g. "processes"; NULL for points */
    const char *help;
};

struct om_ctx;
typedef int (*om_run_fn)(struct om_ctx *ctx);

/* How long one repetition takes at each preset, in seconds: the first ETA of a run comes
 * from these (the front-end corrects it with what it measures as the run goes).  Measured
 * on the reference machine (2-core VM) with bench/eta_estimates.py; a smoke repetition
 * takes a hundredth of a default one, so one number cannot serve all three. */
struct om_estimate {
    double def, quick, smoke;
};

struct om_bench {
    const char *id;     /* "family.experiment", e.g. "ctx.pipe_pingpong"; the family names
                           the file (exceptions: docs/adding-a-benchmark.md) */
    const char *help;   /* one line: what it measures */
    const char *source; /* where it comes from: "O90 T3; LB96 §5; MG05 T1", or "osmeter" */
    const char *suites; /* comma list of suites it belongs to: "quick,full,o90,lb96,mg05";
                           each one a suite of SUITES in osmeter/running/catalog.py */
    struct om_estimate est; /* seconds one repetition takes, per preset, for the ETA */
    om_run_fn run;
    struct om_param params[OM_MAX_PARAMS];
    struct om_metric metrics[OM_MAX_METRICS];
    int static_core;    /* 1: runs in the statically linked twin of the core
                           (osmeter-core-static), to measure a static program; its id ends
                           in ".static" by convention.  Set with OM_STATIC_CORE. */
};
/* Last in an entry: `{"proc.fork.static", ..., {metrics}, OM_STATIC_CORE}`. */
#define OM_STATIC_CORE 1

/* ---- parameters ---------------------------------------------------------------- */
long long om_int(struct om_ctx *ctx, const char *name);
const char *om_str(struct om_ctx *ctx, const char *name);
/* Fills out[] (capacity OM_MAX_LIST) and returns the count. */
int om_list(struct om_ctx *ctx, const char *name, long long *out);

/* ---- reporting ----------------------------------------------------------------- */
#define OM_NO_X (-1LL) /* x of a point metric */
void om_sample(struct om_ctx *ctx, const char *metric, long long x, double value);
/* Free-form facts about this run that the front-end stores with the result:
 * which CPU it was pinned to, which limit ended a curve, ... */
void om_note(struct om_ctx *ctx, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The benchmark cannot run here: say why.  `return om_skip(ctx, "...")` */
int om_skip(struct om_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Something that should have worked did not: say what.  `return om_fail(ctx, "...")` */
int om_fail(struct om_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A bad parameter combination that only the benchmark can detect (exit code 2). */
int om_bad_param(struct om_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Return codes of run functions. */
#define OM_OK 0
#define OM_SKIPPED 10
#define OM_FAILED 1
#define OM_BADPARAM 2

/* ---- timing -------------------------------------------------------------------- */
uint64_t om_now_ns(void);          /* CLOCK_MONOTONIC */
double om_timer_overhead_ns(void); /* cost of one om_now_ns() pair, measured at start-up */

/*
 * Timed loops.  A batch function fn(arg, iters) performs `iters` operations and returns
 * any value derived from their results (it is folded into a sink the compiler cannot
 * see through).  Every family's timed loops run through om_measure_batches(), which
 * calibrates the batch size (doubling until a batch takes a tenth of the batch_ms
 * parameter, then scaling once, bounded in time), warms up with one batch, times the
 * `samples` parameter's batches with the timer overhead subtracted, and emits what the
 * description asks for.  A benchmark using it declares the int parameters "samples" and
 * "batch_ms" (OM_BATCH_PARAMS does; batch_ms not when .iters is fixed).
 */
typedef uint64_t (*om_batch_fn)(void *arg, uint64_t iters);

/* Where a batch function records that an operation failed, with om_record_fault(f,
 * errno, "what failed") (err 0 where no errno applies); the first failure counts. */
struct om_fault {
    int err;          /* errno value of the failed call, or 0 */
    const char *what; /* the operation that failed ("fork", "create"), NULL: none */
};
void om_record_fault(struct om_fault *f, int err, const char *what);
#define om_faulted(f) ((f)->err != 0 || (f)->what != NULL)

#define OM_MEASURE_ALSO 3
/* What to emit from each timed batch; zeroed fields take the defaults. */
struct om_measure {
    const char *metric; /* gets ns per operation x scale, or rate / ns per operation */
    long long x;        /* the x of a sweep metric (ignored for point metrics) */
    double scale;       /* 0: 1 */
    double rate;        /* non-zero: emit rate / (ns per operation), e.g. 1e9 for
                           operations per second */
    uint64_t iters;     /* operations per batch; 0: calibrated to batch_ms */
    int warmed_up;      /* no warm-up batch: the caller has warmed up (calibration does) */
    int self_timed;     /* fn times the part of each operation that counts (om_now_ns()
                           around it, clean-up outside) and returns the summed ns;
                           calibration then uses the wall time of the whole call */
    struct om_fault *fault; /* the loop's failure record: nothing is emitted and the
                               routine fails with "what: fault" once it is set */
    const char *what;   /* what the loop does, for that message */
    const char *note;   /* key of the note with the batch size; NULL: iterations_per_batch,
                           "": none */
    const char *label;  /* prefix of that note's value for a sweep ("n=4"), or NULL */
    void (*before)(void *arg); /* untimed, before each timed batch: reset per-batch state */
    /* Further metrics from the same batch, worked out (untimed) after it: also_fn fills
     * values[i] for also[i] from the batch's ns per operation (or its own state). */
    const char *also[OM_MEASURE_ALSO];
    void (*also_fn)(void *arg, double ns_per_op, uint64_t iters, double *values);
};
/* Calibrate, warm up, time `samples` batches and emit them as described.  No sample is
 * emitted unless every batch succeeded; a batch that took no measurable time fails. */
int om_measure_batches(struct om_ctx *ctx, om_batch_fn fn, void *arg, const struct om_measure *m);
/* The usual case: ns per operation x scale under `metric`. */
int om_measure(struct om_ctx *ctx, const char *metric, om_batch_fn fn, void *arg, double scale);
#define OM_BATCH_PARAMS                                                                   \
    {"samples", OM_INT, "10", "5", "2", 1, 100000, NULL,                                  \
     "batches timed in each process; each is one sample"},                                \
    {"batch_ms", OM_INT, "20", "10", "2", 1, 10000, NULL,                                 \
     "minimum duration of one timed batch (calibrated), ms"}
/* The pieces, for a loop timed beside another one (ctx.pipe_pingpong): the batch size
 * for batch_ms, and one batch's ns per operation with the timer overhead subtracted. */
uint64_t om_calibrate(struct om_ctx *ctx, om_batch_fn fn, void *arg, double batch_ms);
double om_time_batch(om_batch_fn fn, void *arg, uint64_t iters);

void om_consume(uint64_t v); /* keep a result alive */

/* Cycle counter for timing single operations (scalability curves).  om_cycles_init()
 * calibrates it against CLOCK_MONOTONIC and records the rate in a note; where the CPU
 * has no usable counter it falls back to the monotonic clock in ns. */
void om_cycles_init(struct om_ctx *ctx);
uint64_t om_cycles(void);
double om_cycles_to_ns(uint64_t cycles);

/* ---- processes, placement, cleanup -------------------------------------------- */
/* Children the harness kills and reaps on exit, SIGINT, SIGTERM and SIGHUP. */
void om_child_track(pid_t pid);
void om_child_untrack(pid_t pid);
/* fork() that tracks the child and, on Linux, has it die with the core. */
pid_t om_fork(void);
/* Kill (SIGKILL) and reap one tracked child. */
void om_child_kill(pid_t pid);
/* Has this tracked child exited?  1 (reaped and untracked; *status, may be NULL, gets
 * its wait status), or 0 while it runs. */
int om_child_exited(pid_t pid, int *status);
/* Reap a child that should be ending: wait up to ms milliseconds (ms < 0: as long as it
 * takes), then kill it.  0 when it exited by itself (*status as above), -1 when it had
 * to be killed or could not be waited for.  Untracked either way. */
int om_child_reap(pid_t pid, int ms, int *status);
/*
 * Placement: which CPUs a benchmark's processes and threads run on, one rule for every
 * family, from the benchmark's "pin" parameter (OM_PIN_PARAM, or same|split|none):
 *   same   every process and thread on one CPU, as on the studies' uniprocessors: the
 *          last CPU this process may use (usually the least disturbed by interrupts);
 *   split  the far end (a server, sink or echo forked afterwards) on that CPU, and this
 *          process, the near end, with the clients and threads it creates, on the one
 *          before it;
 *   none   the scheduler decides.
 * om_place() binds the calling process, so call it before creating threads or
 * processes: they inherit the binding (Linux, FreeBSD, DragonFly, NetBSD).  It records
 * the placement as note "placement" and returns OM_OK, or om_skip() for pin=split on
 * one CPU.  Where the system has no CPU binding (OpenBSD, macOS; any system in a build
 * with -DOM_NO_AFFINITY) or refuses it (NetBSD binds for root only), the benchmark
 * runs unpinned and the note says so ("unpinned: OpenBSD has no CPU binding ...").
 * far_is_remote: the far end runs on another host (only this process is placed).
 */
struct om_placement {
    int near_cpu; /* this process; -1: unpinned */
    int far_cpu;  /* the far end forked afterwards; -1: unpinned or on another host */
};
int om_place(struct om_ctx *ctx, int far_is_remote, struct om_placement *pl);
/* In the far end's child right after the fork: move it to its CPU.  0, or -1 (errno). */
int om_place_far(const struct om_placement *pl);
/* om_place() for benchmarks without a far end (pin=same|none). */
int om_apply_placement(struct om_ctx *ctx);
#define OM_PIN_PARAM                                                                      \
    {"pin", OM_CHOICE, "same", NULL, NULL, 0, 0, "same|none",                            \
     "same: all processes on one CPU, as on the studies' uniprocessors; none: unpinned"}
int om_ncpus(void);
/* A private directory for this invocation, created on first use, removed at exit.
 * The front-end passes OSMETER_SCRATCH (a directory it also removes). */
const char *om_scratch_dir(void);
/* Remove this directory tree at exit and on SIGINT/SIGTERM/SIGHUP, like the scratch
 * directory: for a private directory a benchmark makes inside a user-named one. */
void om_remove_at_exit(const char *path);
/* Absolute path of a sibling executable installed next to osmeter-core, or NULL. */
const char *om_sibling_path(const char *name);
/*
 * Starting osmeter's own programs (the exec helpers, the static build of the core).
 * OSMETER_EXEC_WRAPPER, words separated by spaces (e.g. "qemu-aarch64-static"), is put
 * in front of each of them: a build for another architecture can then run under an
 * emulator on a machine without binfmt_misc.  The core records it as note
 * "exec_wrapper".  System programs (/bin/sh, the user's commands) are started as they
 * are.  om_exec_own() replaces this process (argv[0] is path); it returns -1 (errno)
 * only when the exec failed.  om_shell_own() writes path as /bin/sh words (quoted,
 * after the wrapper's); returns 0, or -1 when it does not fit.
 */
const char *om_exec_wrapper(void);
int om_exec_own(const char *path, char *const argv[]);
int om_shell_own(char *buf, size_t len, const char *path);

/* ---- limits --------------------------------------------------------------------- */
/* Raise the soft limit of `resource` (RLIMIT_NOFILE, RLIMIT_NPROC, ...) to the hard
 * limit where allowed; returns the soft limit now in force, OM_UNLIMITED for none. */
#define OM_UNLIMITED LLONG_MAX
long long om_raise_limit(int resource);
/* What bounds that soft limit, for notes: "the hard limit", "kern.maxfilesperproc N",
 * "OPEN_MAX N", "the soft limit (setrlimit refused more)". */
const char *om_limit_bound(int resource);
/* A system-wide cap by its sysctl name (kern.maxproc, kern.maxfiles, ...), or -1 where
 * the system has no such sysctl (Linux: its caps are in /proc). */
long long om_system_cap(const char *name);
/* File slots free system-wide (Linux fs.file-max less those allocated; the BSDs and macOS
 * kern.maxfiles less those open, where told), or -1 where unknown; *how says from what. */
long long om_free_file_slots(char *how, size_t len);
/* Free memory in bytes from sysctl (FreeBSD, macOS, NetBSD), or physical memory where
 * free is not told; -1 where neither is (Linux: /proc/meminfo).  *how names the source. */
long long om_system_free_memory(char *how, size_t len);

/* Full read/write that retry on EINTR and short transfers; return 0 or -1. */
int om_read_full(int fd, void *buf, size_t len);
int om_write_full(int fd, const void *buf, size_t len);

/* True when this binary is statically linked (built with -DOM_STATIC). */
int om_is_static(void);

#endif
