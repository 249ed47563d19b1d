/*
 * CPU placement: the one place where osmeter binds processes and threads to CPUs.
 *
 * Every family follows the rule of the "pin" parameter (see harness.h).  The system's
 * binding call sits behind bind_cpu() and allowed_cpus(), with one backend per system:
 *   Linux, DragonFly   sched_setaffinity / sched_getaffinity (cpu_set_t, <sched.h>)
 *   FreeBSD            cpuset_setaffinity / cpuset_getaffinity (<sys/cpuset.h>)
 *   NetBSD             sched_setaffinity_np / sched_getaffinity_np (cpuset_create())
 *   OpenBSD, macOS     none: macOS has only an advisory affinity tag, OpenBSD nothing
 * Where there is no backend (or the build says -DOM_NO_AFFINITY, which tests this path
 * on Linux) or the system refuses the binding, the benchmark runs unpinned and the
 * placement note says so: a comparison then shows the difference instead of losing
 * the row.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(OM_NO_AFFINITY)
#define BIND_NONE 1
#elif defined(__linux__) || defined(__DragonFly__)
#include <sched.h>
#define BIND_SCHED 1
#elif defined(__FreeBSD__)
#include <sys/param.h>
#include <sys/cpuset.h>
#define BIND_CPUSET 1
#elif defined(__NetBSD__)
#include <sched.h>
#define BIND_NETBSD 1
#else
#define BIND_NONE 1
#endif

#define MAX_CPUS 1024

static const char *system_name(void)
{
#if defined(__linux__)
    return "Linux";
#elif defined(__FreeBSD__)
    return "FreeBSD";
#elif defined(__NetBSD__)
    return "NetBSD";
#elif defined(__OpenBSD__)
    return "OpenBSD";
#elif defined(__DragonFly__)
    return "DragonFly";
#elif defined(__APPLE__)
    return "macOS";
#else
    return "this system";
#endif
}

/* Bind the calling process, and the threads and processes it creates afterwards, to
 * one CPU.  Returns 0 or an errno value (never a stale one). */
static int bind_cpu(int cpu)
{
#if defined(BIND_SCHED)
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno;
#elif defined(BIND_CPUSET)
    cpuset_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    /* CPU_WHICH_PID, -1: every thread of this process */
    return cpuset_setaffinity(CPU_LEVEL_WHICH, CPU_WHICH_PID, -1, sizeof set, &set) == 0
               ? 0 : errno;
#elif defined(BIND_NETBSD)
    cpuset_t *set = cpuset_create();
    if (!set)
        return ENOMEM;
    cpuset_zero(set);
    int rc = cpuset_set((cpuid_t)cpu, set) == 0 &&
                     sched_setaffinity_np(getpid(), cpuset_size(set), set) == 0
                 ? 0 : errno ? errno : EINVAL;
    cpuset_destroy(set);
    return rc;
#else
    (void)cpu;
    return ENOSYS;
#endif
}

/* The CPUs this process may run on, ascending; returns how many. */
static int allowed_cpus(int *cpus, int max)
{
    int n = 0;
#if defined(BIND_SCHED)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int i = 0; i < CPU_SETSIZE && n < max; i++)
            if (CPU_ISSET(i, &set))
                cpus[n++] = i;
        return n;
    }
#elif defined(BIND_CPUSET)
    cpuset_t set;
    if (cpuset_getaffinity(CPU_LEVEL_WHICH, CPU_WHICH_PID, -1, sizeof set, &set) == 0) {
        for (int i = 0; i < CPU_SETSIZE && n < max; i++)
            if (CPU_ISSET(i, &set))
                cpus[n++] = i;
        return n;
    }
#elif defined(BIND_NETBSD)
    /* An unbound process reads back an empty set: then every online CPU is allowed. */
    cpuset_t *set = cpuset_create();
    if (set) {
        cpuset_zero(set);
        if (sched_getaffinity_np(getpid(), cpuset_size(set), set) == 0)
            for (int i = 0; i < MAX_CPUS && n < max; i++)
                if (cpuset_isset((cpuid_t)i, set) > 0)
                    cpus[n++] = i;
        cpuset_destroy(set);
        if (n > 0)
            return n;
    }
#endif
    for (n = 0; n < om_ncpus() && n < max; n++)
        cpus[n] = n;
    return n;
}

/* The placement as data beside the prose of note "placement": the CPUs bound to, "1" or
 * "0,1", or "none" when unpinned (note "placement_cpus", osmeter/data/note_keys.py). */
static int note_cpus(struct om_ctx *ctx, int near, int far)
{
    if (near < 0)
        om_note(ctx, "placement_cpus", "none");
    else if (far >= 0 && far != near)
        om_note(ctx, "placement_cpus", "%d,%d", near, far);
    else
        om_note(ctx, "placement_cpus", "%d", near);
    return OM_OK;
}

int om_place(struct om_ctx *ctx, int far_is_remote, struct om_placement *pl)
{
    const char *pin = om_str(ctx, "pin");
    int split = strcmp(pin, "split") == 0;
    pl->near_cpu = pl->far_cpu = -1;
    if (strcmp(pin, "none") == 0) {
        om_note(ctx, "placement", "unpinned (scheduler's choice of CPUs)");
        return note_cpus(ctx, -1, -1);
    }
    int cpus[MAX_CPUS];
    int n = allowed_cpus(cpus, MAX_CPUS);
    if (split && n < 2 && !far_is_remote)
        return om_skip(ctx, "pin=split needs two CPUs and this process may use %d", n);
#ifdef BIND_NONE
    (void)cpus;
#ifdef OM_NO_AFFINITY
    om_note(ctx, "placement", "unpinned: this build for %s has no CPU binding (OM_NO_AFFINITY); "
                              "pin=%s asked for %s", system_name(), pin, split ? "two CPUs" : "one CPU");
#else
    om_note(ctx, "placement", "unpinned: %s has no CPU binding; pin=%s asked for %s",
            system_name(), pin, split ? "two CPUs" : "one CPU");
#endif
    return note_cpus(ctx, -1, -1);
#else
    /* same: the last allowed CPU, usually the least disturbed by interrupts; split puts
     * the far end there and this process (the near end) on the CPU before it. */
    int last = cpus[n - 1];
    int near = split && !far_is_remote ? cpus[n - 2] : last;
    int err = bind_cpu(near);
    if (err) {
        om_note(ctx, "placement", "unpinned: %s refused binding to CPU %d (%s)", system_name(),
                near, strerror(err));
        return note_cpus(ctx, -1, -1);
    }
    pl->near_cpu = near;
    pl->far_cpu = far_is_remote ? -1 : last;
    if (far_is_remote)
        om_note(ctx, "placement", "near end on CPU %d; far end on the peer, placed by its own "
                                  "scheduler", near);
    else if (split)
        om_note(ctx, "placement", "near end on CPU %d, far end on CPU %d", near, last);
    else
        om_note(ctx, "placement", "all processes pinned to CPU %d", near);
    return note_cpus(ctx, pl->near_cpu, pl->far_cpu);
#endif
}

int om_place_far(const struct om_placement *pl)
{
    if (pl->far_cpu < 0 || pl->far_cpu == pl->near_cpu)
        return 0; /* inherited from the parent already */
    int err = bind_cpu(pl->far_cpu);
    errno = err;
    return err ? -1 : 0;
}

int om_apply_placement(struct om_ctx *ctx)
{
    struct om_placement pl;
    return om_place(ctx, 0, &pl);
}
