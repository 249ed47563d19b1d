/*
 * Scalability family: how the cost of one kernel operation grows with the number of
 * objects that already exist (von Leitner 2003; McGarry 2005 Figs 1-9).
 *
 * Each benchmark grows a population one object at a time and times every single
 * operation with the cycle counter.  The timings go into an array allocated and touched
 * before the timed phase, and are emitted only afterwards, so the bookkeeping costs the
 * same at the first and the last point and cannot bend the curve.  x of every sample is
 * the number of objects that existed when the operation began (for teardown: the number
 * still alive, including the one being removed).
 *
 * Before growing, each benchmark reads the limits that could stop it, raises soft
 * rlimits to the hard limit, and caps the population at half of what is free (its own
 * descriptors: all but a reserve), so the machine stays usable.  A curve that a limit
 * ends early says so in the note "stopped_by".
 *
 * One file, though long: every curve, thread.create's too, grows its population under
 * the same budget of limits, times single operations the same way and stops early the
 * same way; apart, each would carry a copy of that.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"

/* ---- sizing the experiment to the machine ---------------------------------------- */

struct budget {
    long long requested, n; /* asked for; what the limits allow */
    char why[512];          /* the limit that set n, when n < requested */
};

static void budget_init(struct budget *b, long long requested)
{
    b->requested = b->n = requested;
    b->why[0] = 0;
}

static void budget_cap(struct budget *b, long long cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void budget_cap(struct budget *b, long long cap, const char *fmt, ...)
{
    if (cap < 0)
        cap = 0;
    if (cap >= b->n)
        return;
    b->n = cap;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->why, sizeof b->why, fmt, ap);
    va_end(ap);
}

/* Record what the limits allow; skip when they allow too little for a curve. */
static int budget_settle(struct om_ctx *ctx, struct budget *b, const char *objects)
{
    if (b->n < b->requested)
        om_note(ctx, "stopped_by", "%s: %lld of %lld %s", b->why, b->n, b->requested, objects);
    if (b->n < 2)
        return om_skip(ctx, "limits allow only %lld %s (%s)", b->n, objects, b->why);
    return OM_OK;
}

/* Up to `max` integers from a small text file (/proc, /sys); returns how many. */
static int read_ints(const char *path, long long *v, int max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int n = 0;
    while (n < max && fscanf(f, "%lld", &v[n]) == 1)
        n++;
    fclose(f);
    return n;
}

static long long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long long n = 0;
    int c;
    while ((c = getc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Soft limit raised to the hard limit where allowed, and noted; returns the soft limit
 * in force, or -1 for none. */
static long long raise_rlimit(struct om_ctx *ctx, int resource, const char *name)
{
    long long soft = om_raise_limit(resource);
    struct rlimit rl;
    if (soft == OM_UNLIMITED) {
        om_note(ctx, "limit", "%s unlimited", name);
        return -1;
    }
    om_note(ctx, "limit", "%s %lld (hard %lld; bounded by %s)", name, soft,
            getrlimit(resource, &rl) || rl.rlim_max == RLIM_INFINITY ? -1LL
                                                                      : (long long)rl.rlim_max,
            om_limit_bound(resource));
    return soft;
}

/* Descriptors: our own limit (all but a reserve) and the system-wide table (half free). */
static void limit_descriptors(struct om_ctx *ctx, struct budget *b, long long per_object)
{
    long long nofile = raise_rlimit(ctx, RLIMIT_NOFILE, "RLIMIT_NOFILE");
    long long lowest_free = open("/dev/null", O_RDONLY); /* the lowest free descriptor */
    if (lowest_free >= 0)
        close((int)lowest_free);
    else
        lowest_free = 64;
    if (nofile > 0)
        budget_cap(b, (nofile - lowest_free - 64) / per_object,
                   "RLIMIT_NOFILE at %lld descriptors (%s)", nofile,
                   om_limit_bound(RLIMIT_NOFILE));
    char how[96];
    long long free_slots = om_free_file_slots(how, sizeof how);
    if (free_slots >= 0) {
        om_note(ctx, "limit", "%s", how);
        budget_cap(b, free_slots / 2 / per_object, "%s (half of the free file slots)", how);
    }
}

/* The BSDs' and macOS's process and thread caps: half of what is free of each. */
static void limit_tasks_sysctl(struct om_ctx *ctx, struct budget *b, int threads)
{
    long long maxproc = om_system_cap("kern.maxproc");
    long long nprocs = om_system_cap("kern.nprocs"); /* OpenBSD tells; others do not */
    if (maxproc > 0) {
        om_note(ctx, "limit", "kern.maxproc %lld", maxproc);
        budget_cap(b, (maxproc - (nprocs > 0 ? nprocs : 0)) / 2,
                   "kern.maxproc %lld (half of the free process slots)", maxproc);
    }
    long long per_uid = om_system_cap("kern.maxprocperuid"); /* FreeBSD, macOS */
    if (per_uid > 0 && geteuid() != 0) {
        om_note(ctx, "limit", "kern.maxprocperuid %lld", per_uid);
        budget_cap(b, per_uid / 2, "kern.maxprocperuid %lld (half)", per_uid);
    }
    /* Every process is a thread too: OpenBSD kern.maxthread and NetBSD kern.maxlwp count
     * all; FreeBSD's bounds the threads of one process. */
    static const char *const thread_caps[] = {"kern.maxthread", "kern.maxlwp",
                                              "kern.threads.max_threads_per_proc"};
    for (int i = 0; i < 3; i++) {
        long long cap = om_system_cap(thread_caps[i]);
        if (cap <= 0 || (i == 2 && !threads))
            continue;
        om_note(ctx, "limit", "%s %lld", thread_caps[i], cap);
        budget_cap(b, cap / 2, "%s %lld (half)", thread_caps[i], cap);
    }
}

/* Tasks (processes and threads share the pid space): half of what is free. */
static void limit_tasks(struct om_ctx *ctx, struct budget *b, int threads)
{
    long long tasks = -1, pid_max, threads_max;
    FILE *f = fopen("/proc/loadavg", "r"); /* 4th field: running/total tasks */
    if (f) {
        if (fscanf(f, "%*s %*s %*s %*d/%lld", &tasks) != 1)
            tasks = -1;
        fclose(f);
    }
    if (tasks >= 0)
        om_note(ctx, "limit", "%lld tasks exist at the start", tasks);
    long long used = tasks >= 0 ? tasks : 0;
    if (read_ints("/proc/sys/kernel/pid_max", &pid_max, 1) == 1) {
        om_note(ctx, "limit", "kernel.pid_max %lld", pid_max);
        budget_cap(b, (pid_max - used) / 2, "pid_max %lld (half of the %lld free pids)",
                   pid_max, pid_max - used);
    }
    if (read_ints("/proc/sys/kernel/threads-max", &threads_max, 1) == 1) {
        om_note(ctx, "limit", "kernel.threads-max %lld", threads_max);
        budget_cap(b, (threads_max - used) / 2, "threads-max %lld (half of the free tasks)",
                   threads_max);
    }
    limit_tasks_sysctl(ctx, b, threads);
    long long nproc = raise_rlimit(ctx, RLIMIT_NPROC, "RLIMIT_NPROC");
    /* Root is exempt; for others every task of the user counts, which the system-wide
     * count bounds from above. */
    if (nproc > 0 && geteuid() != 0)
        budget_cap(b, (nproc - used) / 2, "RLIMIT_NPROC %lld (half of what is free)", nproc);
}

/* Memory the machine (and our cgroup, where it has a limit) can spare; -1 if unknown. */
static long long memory_available(struct om_ctx *ctx)
{
    long long avail = -1;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %lld kB", &avail) == 1) {
                avail *= 1024;
                break;
            }
        fclose(f);
    }
#ifdef _SC_AVPHYS_PAGES /* not on FreeBSD, NetBSD, macOS */
    if (avail < 0) {
        long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        if (pages > 0 && size > 0)
            avail = (long long)pages * size;
    }
#endif
    if (avail < 0) {
        char how[128];
        if ((avail = om_system_free_memory(how, sizeof how)) >= 0)
            om_note(ctx, "limit", "free memory from %s", how);
    }
    /* A memory cgroup may be tighter than the machine: v2 memory.max, v1 limit_in_bytes. */
    f = fopen("/proc/self/cgroup", "r");
    if (f) {
        char line[1024], path[1400];
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = 0;
            const char *limit_file = NULL, *usage_file = NULL, *rel = NULL;
            if (strncmp(line, "0::", 3) == 0) {
                rel = line + 3, limit_file = "memory.max", usage_file = "memory.current";
                snprintf(path, sizeof path, "/sys/fs/cgroup%s/", rel);
            } else if ((rel = strstr(line, ":memory:"))) {
                rel += 8, limit_file = "memory.limit_in_bytes";
                usage_file = "memory.usage_in_bytes";
                snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/", rel);
            } else
                continue;
            char lp[1500], up[1500];
            long long limit, usage;
            snprintf(lp, sizeof lp, "%s%s", path, limit_file);
            snprintf(up, sizeof up, "%s%s", path, usage_file);
            if (read_ints(lp, &limit, 1) == 1 && read_ints(up, &usage, 1) == 1 &&
                limit < (1LL << 60)) {
                om_note(ctx, "limit", "memory cgroup %s: %lld of %lld bytes used", rel, usage,
                        limit);
                if (avail < 0 || limit - usage < avail)
                    avail = limit - usage;
            }
        }
        fclose(f);
    }
    if (avail >= 0)
        om_note(ctx, "limit", "%lld MB of memory available", avail >> 20);
    return avail;
}

static void limit_memory(struct om_ctx *ctx, struct budget *b, long long bytes_per_object,
                         const char *assumption)
{
    long long avail = memory_available(ctx);
    if (avail >= 0)
        budget_cap(b, avail / 2 / bytes_per_object,
                   "memory (half of %lld MB available, %s)", avail >> 20, assumption);
}

/* Memory mappings of this process: half of what vm.max_map_count leaves free. */
static void limit_mappings(struct om_ctx *ctx, struct budget *b, long long per_object)
{
    long long max_maps;
    if (read_ints("/proc/sys/vm/max_map_count", &max_maps, 1) != 1)
        return;
    long long now = count_lines("/proc/self/maps");
    if (now < 0)
        now = 0;
    om_note(ctx, "limit", "vm.max_map_count %lld (%lld mappings in use)", max_maps, now);
    budget_cap(b, (max_maps - now) / 2 / per_object,
               "vm.max_map_count %lld (half of the free mappings)", max_maps);
}

/* Distinct local TCP ports in [lo, hi] held by sockets in /proc/net/tcp{,6} (in any
 * state: a port in TIME_WAIT cannot be bound either); -1 where there is no such file. */
static long long ports_in_use(long long lo, long long hi)
{
    static const char *tables[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    static unsigned char seen[65536 / 8];
    long long used = -1;
    memset(seen, 0, sizeof seen);
    for (int t = 0; t < 2; t++) {
        FILE *f = fopen(tables[t], "r");
        if (!f)
            continue;
        char line[512];
        unsigned port;
        used = used < 0 ? 0 : used;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, " %*d: %*[0-9A-Fa-f]:%x", &port) == 1 && port >= lo &&
                port <= hi && port < 65536 && !(seen[port / 8] & (1 << (port % 8)))) {
                seen[port / 8] |= (unsigned char)(1 << (port % 8));
                used++;
            }
        fclose(f);
    }
    return used;
}

/* The BSDs' and macOS's ephemeral range (which ports are in use they do not say in a
 * file): half of it. */
static void limit_ports_sysctl(struct om_ctx *ctx, struct budget *b)
{
    static const char *const ranges[][2] = {
        {"net.inet.ip.portrange.first", "net.inet.ip.portrange.last"}, /* FreeBSD, macOS */
        {"net.inet.ip.anonportmin", "net.inet.ip.anonportmax"},        /* NetBSD */
        {"net.inet.ip.porthifirst", "net.inet.ip.porthilast"},         /* OpenBSD */
    };
    for (int i = 0; i < 3; i++) {
        long long lo = om_system_cap(ranges[i][0]), hi = om_system_cap(ranges[i][1]);
        if (lo <= 0 || hi < lo)
            continue;
        om_note(ctx, "limit", "%s-%s %lld-%lld (ports in use unknown)", ranges[i][0],
                ranges[i][1], lo, hi);
        budget_cap(b, (hi - lo + 1) / 2, "%s %lld-%lld (half of the range)", ranges[i][0], lo,
                   hi);
        return;
    }
}

/* TCP ports for bind(port 0): half of the ephemeral range not already in use. */
static void limit_ports(struct om_ctx *ctx, struct budget *b)
{
    long long range[2];
    if (read_ints("/proc/sys/net/ipv4/ip_local_port_range", range, 2) != 2) {
        limit_ports_sysctl(ctx, b);
        return;
    }
    long long used = ports_in_use(range[0], range[1]);
    if (used < 0)
        used = 0;
    long long size = range[1] - range[0] + 1;
    om_note(ctx, "limit", "net.ipv4.ip_local_port_range %lld-%lld (%lld of its ports in use)",
            range[0], range[1], used);
    budget_cap(b, (size - used) / 2, "ip_local_port_range %lld-%lld (half of the %lld free ports)",
               range[0], range[1], size - used);
}

/* Disk space and inodes under the scratch directory: half of what is free. */
static void limit_disk(struct om_ctx *ctx, struct budget *b, const char *dir,
                       long long bytes_per_object, long long inodes_per_object)
{
    struct statvfs vfs;
    if (statvfs(dir, &vfs) != 0)
        return;
    long long bytes = (long long)vfs.f_bavail * (long long)vfs.f_frsize;
    om_note(ctx, "limit", "%lld MB and %lld inodes free in %s", bytes >> 20,
            (long long)vfs.f_favail, dir);
    budget_cap(b, bytes / 2 / bytes_per_object, "disk space (half of %lld MB free)",
               bytes >> 20);
    if (inodes_per_object > 0 && vfs.f_files > 0)
        budget_cap(b, (long long)vfs.f_favail / 2 / inodes_per_object,
                   "inodes (half of %lld free)", (long long)vfs.f_favail);
}

/* A failure while growing: a limit we did not foresee ends the curve cleanly (and is
 * recorded); anything else is an error. */
static int stopped_early(struct om_ctx *ctx, const char *call, int err, long long count,
                         const char *objects)
{
    switch (err) {
    case EMFILE: case ENFILE: case EAGAIN: case ENOMEM: case ENOBUFS: case EADDRINUSE:
    case EADDRNOTAVAIL: case ENOSPC: case EDQUOT:
        om_note(ctx, "stopped_by", "%s failed with %s at %lld %s", call, strerror(err), count,
                objects);
        return OM_OK;
    }
    return om_fail(ctx, "%s failed at %lld %s: %s", call, count, objects, strerror(err));
}

/* ---- timing and output ----------------------------------------------------------- */

/* malloc'd and written page by page, so the timed phase takes no page faults for it. */
static void *alloc_touched(size_t count, size_t size)
{
    size_t bytes = count * size > 0 ? count * size : 1;
    char *p = malloc(bytes);
    if (!p)
        return NULL;
    for (size_t i = 0; i < bytes; i += 4096)
        ((volatile char *)p)[i] = 0;
    memset(p, 0, bytes);
    return p;
}

/* Calibrate the cycle counter and measure the cost of one om_cycles() pair (the least
 * of many: the machine can only make it look slower), which each sample excludes. */
static double timing_begin(struct om_ctx *ctx)
{
    om_cycles_init(ctx);
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 10000; i++) {
        uint64_t t0 = om_cycles(), t1 = om_cycles();
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    double overhead = om_cycles_to_ns(best);
    om_note(ctx, "timer_pair_overhead_ns", "%.2f (subtracted from every sample)", overhead);
    return overhead;
}

/* The start and end of operation i, in cycles, as two stores into a preallocated array:
 * the same cost at every point of the curve. */
static inline void stamp(uint64_t *cycles, long long i, uint64_t t0, uint64_t t1)
{
    cycles[2 * i] = t0;
    cycles[2 * i + 1] = t1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Median time from the end of one operation to the start of the next over [from, to):
 * the tool's own work between operations (and whatever else ran then). */
static double median_gap_ns(const uint64_t *cycles, long long from, long long to)
{
    long long k = to - from - 1;
    if (k < 1)
        return 0;
    uint64_t *gaps = malloc((size_t)k * sizeof *gaps);
    if (!gaps)
        return -1;
    for (long long i = 0; i < k; i++)
        gaps[i] = cycles[2 * (from + i + 1)] - cycles[2 * (from + i) + 1];
    qsort(gaps, (size_t)k, sizeof *gaps, cmp_u64);
    double median = om_cycles_to_ns(gaps[k / 2]);
    free(gaps);
    return median;
}

/* One sample per timed operation: operation i happened at x = x0 + i*dx.  Also notes the
 * time between operations early and late in the curve: bookkeeping that grew with the
 * population would show here (bench/scale_timing.py checks it). */
static void emit(struct om_ctx *ctx, const char *metric, const uint64_t *cycles, long long count,
                 long long x0, long long dx, double overhead_ns)
{
    long long tenth = count / 10 > 1 ? count / 10 : count;
    om_note(ctx, "between_operations_ns", "first tenth %.1f, last tenth %.1f (medians)",
            median_gap_ns(cycles, 0, tenth), median_gap_ns(cycles, count - tenth, count));
    for (long long i = 0; i < count; i++) {
        double ns = om_cycles_to_ns(cycles[2 * i + 1] - cycles[2 * i]) - overhead_ns;
        om_sample(ctx, metric, x0 + i * dx, ns > 0 ? ns : 0);
    }
}

/* ---- socket() and bind(port 0) as descriptors grow -------------------------------- */

static int run_sockets(struct om_ctx *ctx, int time_bind)
{
    struct budget b;
    budget_init(&b, om_int(ctx, "n"));
    limit_descriptors(ctx, &b, 1);
    limit_memory(ctx, &b, 16384, "assuming 16 KB per socket");
    if (time_bind)
        limit_ports(ctx, &b);
    int rc = budget_settle(ctx, &b, "sockets");
    if (rc)
        return rc;
    long long n = b.n, made = 0, bound = 0;
    int *fds = alloc_touched((size_t)n, sizeof *fds);
    uint64_t *cycles = alloc_touched((size_t)n, 2 * sizeof *cycles);
    if (!fds || !cycles) {
        free(fds), free(cycles);
        return om_fail(ctx, "cannot allocate bookkeeping for %lld sockets", n);
    }
    double overhead = timing_begin(ctx);

    /* socket(): a socket structure plus the lowest unused descriptor (VL03). */
    for (; made < n; made++) {
        uint64_t t0 = om_cycles();
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        uint64_t t1 = om_cycles();
        if (fd < 0) {
            rc = stopped_early(ctx, "socket()", errno, made, "sockets");
            break;
        }
        fds[made] = fd;
        stamp(cycles, made, t0, t1);
    }
    if (!time_bind && rc == OM_OK)
        emit(ctx, "socket", cycles, made, 0, 1, overhead);

    /* bind(127.0.0.1:0) on each: the kernel looks for an unused port (VL03, MG05 Fig 8). */
    if (time_bind && rc == OM_OK) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        om_note(ctx, "address", "127.0.0.1, port 0, TCP, no SO_REUSEADDR");
        for (; bound < made; bound++) {
            uint64_t t0 = om_cycles();
            int r = bind(fds[bound], (struct sockaddr *)&sa, sizeof sa);
            uint64_t t1 = om_cycles();
            if (r != 0) {
                rc = stopped_early(ctx, "bind(port 0)", errno, bound, "bound sockets");
                break;
            }
            stamp(cycles, bound, t0, t1);
        }
        /* Every bind gave the socket a real port (checked after the timed phase). */
        for (long long i = 0; i < bound && rc == OM_OK; i++) {
            struct sockaddr_in got;
            socklen_t len = sizeof got;
            if (getsockname(fds[i], (struct sockaddr *)&got, &len) != 0 || got.sin_port == 0)
                rc = om_fail(ctx, "socket %lld has no port after bind(port 0)", i);
        }
        if (rc == OM_OK)
            emit(ctx, "bind", cycles, bound, 0, 1, overhead);
    }
    for (long long i = 0; i < made; i++)
        close(fds[i]);
    free(fds), free(cycles);
    return rc;
}

static int run_socket(struct om_ctx *ctx) { return run_sockets(ctx, 0); }
static int run_bind(struct om_ctx *ctx) { return run_sockets(ctx, 1); }

/* ---- fork and teardown as processes grow and shrink ------------------------------- */

/* A child announces itself with one byte and waits to be killed (VL03). */
static void child_wait(int announce_fd)
{
    char c = 'x';
    if (write(announce_fd, &c, 1) != 1)
        _exit(1);
    for (;;)
        pause();
}

/* What a curve of processes or threads keeps while it grows to the budget's n: a slot
 * per object (`size` bytes each), two timestamps per object, and a pipe (a child
 * announces itself on it; a thread waits on it until its write end closes). */
struct population {
    void *slots;
    uint64_t *cycles;
    int pipe[2];
};

static int population_begin(struct om_ctx *ctx, struct population *p, struct budget *b,
                            size_t size, const char *objects)
{
    int rc = budget_settle(ctx, b, objects);
    if (rc || (rc = om_apply_placement(ctx)))
        return rc;
    long long n = b->n;
    p->slots = alloc_touched((size_t)n, size);
    p->cycles = alloc_touched((size_t)n, 2 * sizeof *p->cycles);
    if (!p->slots || !p->cycles) {
        free(p->slots), free(p->cycles);
        return om_fail(ctx, "cannot allocate bookkeeping for %lld %s", n, objects);
    }
    if (pipe(p->pipe) != 0) {
        free(p->slots), free(p->cycles);
        return om_fail(ctx, "pipe: %s", strerror(errno));
    }
    return OM_OK;
}

static void population_close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void population_end(struct population *p)
{
    population_close(&p->pipe[0]), population_close(&p->pipe[1]);
    free(p->slots), free(p->cycles);
}

static int run_processes(struct om_ctx *ctx, int time_exit)
{
    struct budget b;
    budget_init(&b, om_int(ctx, "n"));
    limit_tasks(ctx, &b, 0);
    /* Kernel stack, page tables, task structures and the pages a child writes: well
     * under 1 MB per process on current systems; the estimate errs on the safe side. */
    limit_memory(ctx, &b, 1 << 20, "assuming 1 MB per process");
    /* The harness tracks (and kills on a signal) at most 65536 children. */
    budget_cap(&b, 60000, "the harness's table of children");
    struct population pop;
    int rc = population_begin(ctx, &pop, &b, sizeof(pid_t), "processes");
    if (rc)
        return rc;
    long long n = b.n, alive = 0;
    pid_t *pids = pop.slots;
    uint64_t *cycles = pop.cycles;
    int *announce = pop.pipe;
    om_note(ctx, "linkage", "%s", om_is_static() ? "static" : "dynamic");
    double overhead = timing_begin(ctx);

    /* Grow: time from fork() until the parent has read the new child's byte. */
    for (; alive < n; alive++) {
        char c;
        uint64_t t0 = om_cycles();
        pid_t pid = om_fork();
        if (pid == 0)
            child_wait(announce[1]);
        if (pid < 0) {
            rc = stopped_early(ctx, "fork()", errno, alive, "processes");
            break;
        }
        if (om_read_full(announce[0], &c, 1) != 0) {
            om_child_kill(pid);
            rc = om_fail(ctx, "child %ld did not announce itself", (long)pid);
            break;
        }
        uint64_t t1 = om_cycles();
        pids[alive] = pid;
        stamp(cycles, alive, t0, t1);
    }
    if (!time_exit && rc == OM_OK)
        emit(ctx, "fork", cycles, alive, 0, 1, overhead);

    /* Shrink: SIGTERM and wait4() one child after another, newest first (VL03, MG05);
     * newest first also keeps the harness's untracking O(1). */
    long long total = alive, reaped = 0;
    for (; reaped < total; reaped++) {
        pid_t pid = pids[total - 1 - reaped];
        int status = 0;
        uint64_t t0 = om_cycles();
        int k = kill(pid, SIGTERM);
        pid_t w;
        while ((w = wait4(pid, &status, 0, NULL)) < 0 && errno == EINTR)
            ;
        uint64_t t1 = om_cycles();
        om_child_untrack(pid);
        stamp(cycles, reaped, t0, t1);
        if ((k != 0 || w != pid || !WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) &&
            rc == OM_OK)
            rc = om_fail(ctx, "child %ld did not end by SIGTERM (kill %d, wait4 %ld, status "
                              "%#x)", (long)pid, k, (long)w, status);
    }
    if (time_exit && rc == OM_OK)
        emit(ctx, "exit", cycles, total, total, -1, overhead);
    population_end(&pop);
    return rc;
}

static int run_fork(struct om_ctx *ctx) { return run_processes(ctx, 0); }
static int run_exit(struct om_ctx *ctx) { return run_processes(ctx, 1); }

/* ---- mmap of many 4 KB windows of one large file ---------------------------------- */

static unsigned char pattern(long long i) { return (unsigned char)(i % 251 + 1); }

static int run_mmap_windows(struct om_ctx *ctx, int time_touch)
{
    long long page = sysconf(_SC_PAGESIZE);
    const char *dir = om_scratch_dir();
    if (page <= 0 || !dir)
        return om_fail(ctx, "no page size or scratch directory: %s", strerror(errno));
    struct budget b;
    budget_init(&b, om_int(ctx, "n"));
    limit_mappings(ctx, &b, 1);
    /* The file (two pages per window) sits in the page cache and on disk. */
    limit_memory(ctx, &b, 2 * page + 512, "the file in the page cache");
    limit_disk(ctx, &b, dir, 2 * page, 0);
    int rc = budget_settle(ctx, &b, "mappings");
    if (rc)
        return rc;
    long long n = b.n, pages = 2 * n, mapped = 0, touched = 0;
    om_note(ctx, "file", "%lld MB, every other %lld-byte page mapped, MAP_SHARED PROT_READ",
            (pages * page) >> 20, page);

    char path[4200];
    snprintf(path, sizeof path, "%s/scale-mmap.bin", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return om_fail(ctx, "create %s: %s", path, strerror(errno));
    unlink(path); /* gone with the descriptor, whatever ends this process */
    unsigned char *buf = malloc((size_t)page);
    char **addr = alloc_touched((size_t)n, sizeof *addr);
    uint64_t *cycles = alloc_touched((size_t)n, 2 * sizeof *cycles);
    unsigned char *seen = alloc_touched((size_t)n, 1);
    if (!buf || !addr || !cycles || !seen) {
        rc = om_fail(ctx, "cannot allocate bookkeeping for %lld mappings", n);
        goto out;
    }
    for (long long p = 0; p < pages; p++) {
        memset(buf, pattern(p), (size_t)page);
        if (om_write_full(fd, buf, (size_t)page) != 0) {
            rc = errno == ENOSPC ? om_skip(ctx, "scratch file system full at %lld MB",
                                          (p * page) >> 20)
                                 : om_fail(ctx, "write %s: %s", path, strerror(errno));
            goto out;
        }
    }
    /* Read every page to be mapped once, so the curve measures mappings, not the disk. */
    for (long long i = 0; i < n; i++)
        if (pread(fd, buf, (size_t)page, (off_t)(2 * i * page)) != page || buf[0] != pattern(2 * i)) {
            rc = om_fail(ctx, "reading back page %lld of the file failed", 2 * i);
            goto out;
        }
    double overhead = timing_begin(ctx);

    for (; mapped < n; mapped++) {
        uint64_t t0 = om_cycles();
        void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, (off_t)(2 * mapped * page));
        uint64_t t1 = om_cycles();
        if (p == MAP_FAILED) {
            rc = stopped_early(ctx, "mmap()", errno, mapped, "mappings");
            break;
        }
        addr[mapped] = p;
        stamp(cycles, mapped, t0, t1);
    }
    if (!time_touch && rc == OM_OK)
        emit(ctx, "mmap", cycles, mapped, 0, 1, overhead);
    if (time_touch && rc == OM_OK) {
        /* First read of each window: the page fault that maps it. */
        for (; touched < mapped; touched++) {
            uint64_t t0 = om_cycles();
            unsigned char v = *(volatile unsigned char *)addr[touched];
            uint64_t t1 = om_cycles();
            seen[touched] = v;
            stamp(cycles, touched, t0, t1);
        }
        for (long long i = 0; i < touched && rc == OM_OK; i++)
            if (seen[i] != pattern(2 * i))
                rc = om_fail(ctx, "window %lld shows the wrong page of the file", i);
        if (rc == OM_OK)
            emit(ctx, "touch", cycles, touched, 0, 1, overhead);
    }
out:
    for (long long i = 0; i < mapped; i++)
        munmap(addr[i], (size_t)page);
    close(fd);
    free(buf), free(addr), free(cycles), free(seen);
    return rc;
}

static int run_mmap(struct om_ctx *ctx) { return run_mmap_windows(ctx, 0); }
static int run_mmap_touch(struct om_ctx *ctx) { return run_mmap_windows(ctx, 1); }

/* ---- many small files: open, mmap and touch each ---------------------------------- */

enum manymap_phase { PHASE_OPEN, PHASE_MMAP, PHASE_TOUCH };
#define SMALL_FILE_BYTES 150

/* Remove the tree (files first); the harness also removes the scratch directory. */
static void remove_small_files(const char *root, long long files, long long per_dir)
{
    char path[4300];
    for (long long i = 0; i < files; i++) {
        snprintf(path, sizeof path, "%s/%03lld/%03lld", root, i / per_dir, i % per_dir);
        unlink(path);
    }
    for (long long d = 0; d * per_dir < files; d++) {
        snprintf(path, sizeof path, "%s/%03lld", root, d);
        rmdir(path);
    }
    rmdir(root);
}

static int run_manymap(struct om_ctx *ctx, enum manymap_phase timed)
{
    const char *dir = om_scratch_dir();
    long long page = sysconf(_SC_PAGESIZE), per_dir = om_int(ctx, "per_dir");
    if (!dir || page <= 0)
        return om_fail(ctx, "no scratch directory or page size: %s", strerror(errno));
    struct budget b;
    budget_init(&b, om_int(ctx, "n"));
    limit_descriptors(ctx, &b, 1);
    limit_mappings(ctx, &b, 1);
    limit_disk(ctx, &b, dir, 4096 + 512, 1 + 1);
    limit_memory(ctx, &b, page + 4096, "one cached page and an inode per file");
    int rc = budget_settle(ctx, &b, "files");
    if (rc)
        return rc;
    if (b.n / per_dir + 1 > 1000)
        return om_bad_param(ctx, "n/per_dir must stay below 1000 directories");
    long long n = b.n, created = 0, opened = 0, mapped = 0, touched = 0;
    char root[4200];
    snprintf(root, sizeof root, "%s/manymap", dir);
    om_note(ctx, "files", "%lld files of %d bytes, %lld per directory, in %s", n,
            SMALL_FILE_BYTES, per_dir, root);
    char (*names)[32] = alloc_touched((size_t)n, 32); /* relative: "ddd/fff" */
    int *fds = alloc_touched((size_t)n, sizeof *fds);
    char **addr = alloc_touched((size_t)n, sizeof *addr);
    uint64_t *cycles = alloc_touched((size_t)n, 2 * sizeof *cycles);
    unsigned char *seen = alloc_touched((size_t)n, 1);
    int cwd = open(".", O_RDONLY | O_DIRECTORY);
    if (!names || !fds || !addr || !cycles || !seen) {
        rc = om_fail(ctx, "cannot allocate bookkeeping for %lld files", n);
        goto out;
    }
    if (mkdir(root, 0700) != 0) {
        rc = om_fail(ctx, "mkdir %s: %s", root, strerror(errno));
        goto out;
    }
    if (chdir(root) != 0) {
        rc = om_fail(ctx, "chdir %s: %s", root, strerror(errno));
        goto out;
    }
    char content[SMALL_FILE_BYTES];
    for (; created < n; created++) {
        snprintf(names[created], 32, "%03d/%03d", (int)(created / per_dir), (int)(created % per_dir));
        if (created % per_dir == 0) {
            char sub[16];
            snprintf(sub, sizeof sub, "%03d", (int)(created / per_dir));
            if (mkdir(sub, 0700) != 0) {
                rc = om_fail(ctx, "mkdir %s/%s: %s", root, sub, strerror(errno));
                goto out;
            }
        }
        int fd = open(names[created], O_WRONLY | O_CREAT | O_EXCL, 0400);
        memset(content, pattern(created), sizeof content);
        if (fd < 0 || om_write_full(fd, content, sizeof content) != 0) {
            int err = errno;
            if (fd >= 0)
                close(fd);
            rc = om_fail(ctx, "create %s/%s: %s", root, names[created], strerror(err));
            goto out;
        }
        close(fd);
    }
    double overhead = timing_begin(ctx);

    for (; opened < n; opened++) {
        uint64_t t0 = om_cycles();
        int fd = open(names[opened], O_RDONLY);
        uint64_t t1 = om_cycles();
        if (fd < 0) {
            rc = stopped_early(ctx, "open()", errno, opened, "files");
            break;
        }
        fds[opened] = fd;
        stamp(cycles, opened, t0, t1);
    }
    if (timed == PHASE_OPEN && rc == OM_OK)
        emit(ctx, "open", cycles, opened, 0, 1, overhead);
    if (timed == PHASE_OPEN || rc != OM_OK)
        goto out;
    for (; mapped < opened; mapped++) {
        uint64_t t0 = om_cycles();
        void *p = mmap(NULL, SMALL_FILE_BYTES, PROT_READ, MAP_SHARED, fds[mapped], 0);
        uint64_t t1 = om_cycles();
        if (p == MAP_FAILED) {
            rc = stopped_early(ctx, "mmap()", errno, mapped, "files");
            break;
        }
        addr[mapped] = p;
        stamp(cycles, mapped, t0, t1);
    }
    if (timed == PHASE_MMAP && rc == OM_OK)
        emit(ctx, "mmap", cycles, mapped, 0, 1, overhead);
    if (timed == PHASE_MMAP || rc != OM_OK)
        goto out;
    for (; touched < mapped; touched++) {
        uint64_t t0 = om_cycles();
        unsigned char v = *(volatile unsigned char *)addr[touched];
        uint64_t t1 = om_cycles();
        seen[touched] = v;
        stamp(cycles, touched, t0, t1);
    }
    for (long long i = 0; i < touched && rc == OM_OK; i++)
        if (seen[i] != pattern(i))
            rc = om_fail(ctx, "file %lld mapped with the wrong content", i);
    if (rc == OM_OK)
        emit(ctx, "touch", cycles, touched, 0, 1, overhead);
out:
    for (long long i = 0; i < mapped; i++)
        munmap(addr[i], SMALL_FILE_BYTES);
    for (long long i = 0; i < opened; i++)
        close(fds[i]);
    if (cwd >= 0) {
        if (fchdir(cwd) != 0 && rc == OM_OK)
            rc = om_fail(ctx, "cannot return to the working directory: %s", strerror(errno));
        close(cwd);
    }
    remove_small_files(root, created, per_dir);
    free(names), free(fds), free(addr), free(cycles), free(seen);
    return rc;
}

static int run_manymap_open(struct om_ctx *ctx) { return run_manymap(ctx, PHASE_OPEN); }
static int run_manymap_mmap(struct om_ctx *ctx) { return run_manymap(ctx, PHASE_MMAP); }
static int run_manymap_touch(struct om_ctx *ctx) { return run_manymap(ctx, PHASE_TOUCH); }

/* ---- pthread_create as threads grow (MG05 Fig 9) ---------------------------------- */

/* Each thread blocks until the write end of the pipe closes: then read() returns 0. */
static void *thread_wait(void *arg)
{
    char c;
    while (read(*(int *)arg, &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static int run_thread_create(struct om_ctx *ctx)
{
    struct budget b;
    budget_init(&b, om_int(ctx, "n"));
    limit_tasks(ctx, &b, 1);
    limit_mappings(ctx, &b, 2); /* stack and guard page */
    limit_memory(ctx, &b, 256 << 10, "assuming 256 KB resident per thread");
    struct population pop;
    int rc = population_begin(ctx, &pop, &b, sizeof(pthread_t), "threads");
    if (rc)
        return rc;
    long long n = b.n, created = 0;
    pthread_t *threads = pop.slots;
    uint64_t *cycles = pop.cycles;
    int *hold = pop.pipe;
    om_note(ctx, "attributes", "default (the system's default stack size)");
    double overhead = timing_begin(ctx);
    for (; created < n; created++) {
        uint64_t t0 = om_cycles();
        int err = pthread_create(&threads[created], NULL, thread_wait, &hold[0]);
        uint64_t t1 = om_cycles();
        if (err) {
            rc = stopped_early(ctx, "pthread_create()", err, created, "threads");
            break;
        }
        stamp(cycles, created, t0, t1);
    }
    population_close(&hold[1]); /* every thread's read() returns 0 now */
    for (long long i = 0; i < created; i++) {
        int err = pthread_join(threads[i], NULL);
        if (err && rc == OM_OK)
            rc = om_fail(ctx, "pthread_join: %s", strerror(err));
    }
    if (rc == OM_OK)
        emit(ctx, "create", cycles, created, 0, 1, overhead);
    population_end(&pop);
    return rc;
}

/* ---- the table -------------------------------------------------------------------- */

#define N_PARAM(def, quick, smoke, what)                                                  \
    {"n", OM_INT, def, quick, smoke, 2, 1000000, NULL,                                    \
     "population to grow to (" what "); capped by the machine's limits"}
#define CURVE(metric, x_name, help) {{metric, "ns", "lower", OM_SCATTER, x_name, help}}
#define PER_DIR_PARAM                                                                     \
    {"per_dir", OM_INT, "100", NULL, NULL, 1, 1000, NULL, "files per directory"}

const struct om_bench om_family_scale[] = {
    {"scale.socket", "socket() latency as open sockets grow", "VL03; MG05 Fig 7",
     "quick,full,vl03,mg05", {0.16, 0.082, 0.095},
     run_socket, {N_PARAM("10000", "2000", "200", "sockets")},
     CURVE("socket", "sockets", "one socket(AF_INET, SOCK_STREAM) call")},
    {"scale.bind", "bind(127.0.0.1, port 0) latency as bound sockets grow",
     "VL03; MG05 Fig 8", "quick,full,vl03,mg05", {0.18, 0.1, 0.2}, run_bind,
     {N_PARAM("10000", "2000", "200", "sockets")},
     CURVE("bind", "bound sockets", "one bind() to port 0: the kernel picks a free port")},
    {"scale.fork.dynamic", "fork latency as live processes grow (dynamically linked)",
     "VL03; MG05 Fig 1", "quick,full,vl03,mg05", {0.59, 0.11, 0.12}, run_fork,
     {N_PARAM("3000", "300", "100", "processes"), OM_PIN_PARAM},
     CURVE("fork", "processes", "fork() until the parent has read the child's byte")},
    {"scale.fork.static", "fork latency as live processes grow (statically linked)",
     "VL03; MG05 Fig 3", "full,vl03,mg05", {0.43, 0.15, 0.11}, run_fork,
     {N_PARAM("3000", "300", "100", "processes"), OM_PIN_PARAM},
     CURVE("fork", "processes", "fork() until the parent has read the child's byte"),
     OM_STATIC_CORE},
    {"scale.exit.dynamic", "kill+wait4 latency as live processes shrink (dynamically linked)",
     "VL03 (Oct 23); MG05 Fig 2", "quick,full,vl03,mg05", {0.6, 0.11, 0.12}, run_exit,
     {N_PARAM("3000", "300", "100", "processes"), OM_PIN_PARAM},
     CURVE("exit", "processes", "kill(SIGTERM) and wait4() of one child")},
    {"scale.exit.static", "kill+wait4 latency as live processes shrink (statically linked)",
     "MG05 Fig 4", "full,vl03,mg05", {0.43, 0.1, 0.082}, run_exit,
     {N_PARAM("3000", "300", "100", "processes"), OM_PIN_PARAM},
     CURVE("exit", "processes", "kill(SIGTERM) and wait4() of one child"),
     OM_STATIC_CORE},
    {"scale.mmap", "mmap() of one 4 KB window of a 200 MB file as mappings grow",
     "VL03; MG05 Fig 5", "quick,full,vl03,mg05", {0.41, 0.1, 0.076}, run_mmap,
     {N_PARAM("25600", "2560", "256", "windows; the file is twice as many pages")},
     CURVE("mmap", "mappings", "one mmap() of a page of a file in the page cache")},
    {"scale.mmap_touch", "first touch of a mapped 4 KB window as touched mappings grow",
     "VL03; MG05 Fig 6", "quick,full,vl03,mg05", {0.49, 0.11, 0.084}, run_mmap_touch,
     {N_PARAM("25600", "2560", "256", "windows; the file is twice as many pages")},
     CURVE("touch", "mappings", "first read of a mapped page: the page fault")},
    {"scale.manymap.open", "open() of many small files (100 per directory) as files grow",
     "VL03 (Oct 23)", "quick,full,vl03", {0.36, 0.17, 0.1}, run_manymap_open,
     {N_PARAM("10000", "1000", "200", "files"), PER_DIR_PARAM},
     CURVE("open", "files", "one open() of a cached 150-byte file")},
    {"scale.manymap.mmap", "mmap() of whole small files as mapped files grow",
     "VL03 (Oct 23)", "quick,full,vl03", {0.87, 0.17, 0.17}, run_manymap_mmap,
     {N_PARAM("10000", "1000", "200", "files"), PER_DIR_PARAM},
     CURVE("mmap", "files", "one mmap() of a whole 150-byte file")},
    {"scale.manymap.touch", "first touch of mapped small files as touched files grow",
     "VL03 (Oct 23)", "quick,full,vl03", {1.2, 0.19, 0.1}, run_manymap_touch,
     {N_PARAM("10000", "1000", "200", "files"), PER_DIR_PARAM},
     CURVE("touch", "files", "first read of a mapped small file: the page fault")},
    {"thread.create", "pthread_create() latency as live threads grow", "MG05 Fig 9",
     "quick,full,mg05", {0.1, 0.071, 0.07}, run_thread_create,
     {N_PARAM("1000", "200", "100", "threads"), OM_PIN_PARAM},
     CURVE("create", "threads", "one pthread_create() with default attributes")},
    {0},
};
