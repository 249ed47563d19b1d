/*
 * Raising a soft resource limit to the hard one: the descriptor and process limits that
 * end the curves of ctx.c, http.c and scale.c and size the HTTP server's table.  Also
 * the system-wide caps the scalability benchmarks respect, from sysctl where there is
 * no /proc (the BSDs, macOS), and the free file slots scale.c and http.c stay within.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lib/sysctl.h"

/* Where the hard limit is "unlimited" the kernel may still refuse an unlimited soft
 * limit (Linux caps descriptors at fs.nr_open): then this many is asked for instead. */
#define LARGE_SOFT_LIMIT 1048576

/* What bounds the soft limit after om_raise_limit, per resource (for notes). */
static char bound_by[16][96];

/* The per-process maximum the system enforces beyond the hard limit, or -1: macOS
 * refuses a descriptor limit above kern.maxfilesperproc (EINVAL, even with an unlimited
 * hard limit), FreeBSD quietly cuts it there. */
static long long system_maximum(int resource, char *name, size_t len)
{
    long long v = -1;
    if (resource == RLIMIT_NOFILE && om_sysctl_number("kern.maxfilesperproc", &v) == 0) {
        snprintf(name, len, "kern.maxfilesperproc %lld", v);
        return v;
    }
#if defined(__APPLE__) && defined(OPEN_MAX)
    if (resource == RLIMIT_NOFILE) { /* setrlimit(2): "use min(OPEN_MAX, rlim_max)" */
        snprintf(name, len, "OPEN_MAX %d", OPEN_MAX);
        return OPEN_MAX;
    }
#endif
    return -1;
}

long long om_raise_limit(int resource)
{
    struct rlimit rl;
    char *by = resource >= 0 && resource < 16 ? bound_by[resource] : NULL, sysname[96];
    if (getrlimit(resource, &rl) != 0)
        return OM_UNLIMITED; /* nothing to read (cannot happen for a valid resource) */
    rlim_t target = rl.rlim_max;
    long long sys = system_maximum(resource, sysname, sizeof sysname);
    int by_system = sys > 0 && (target == RLIM_INFINITY || (rlim_t)sys < target);
    if (by_system)
        target = (rlim_t)sys;
    if (by)
        snprintf(by, sizeof bound_by[0], "%s", by_system ? sysname : "the hard limit");
    if (rl.rlim_cur < target) {
        struct rlimit want = rl;
        want.rlim_cur = target;
        if (setrlimit(resource, &want) == 0) {
            rl = want;
        } else if (target == RLIM_INFINITY && rl.rlim_cur < LARGE_SOFT_LIMIT) {
            want.rlim_cur = LARGE_SOFT_LIMIT;
            if (setrlimit(resource, &want) == 0)
                rl = want;
            else if (by)
                snprintf(by, sizeof bound_by[0], "the soft limit (setrlimit refused more)");
        } else if (by) {
            snprintf(by, sizeof bound_by[0], "the soft limit (setrlimit refused more)");
        }
    }
    return rl.rlim_cur == RLIM_INFINITY ? OM_UNLIMITED : (long long)rl.rlim_cur;
}

const char *om_limit_bound(int resource)
{
    return resource >= 0 && resource < 16 && bound_by[resource][0] ? bound_by[resource]
                                                                    : "the hard limit";
}

long long om_system_free_memory(char *how, size_t len)
{
    long long pages = -1, page = sysconf(_SC_PAGESIZE), v;
    if (om_sysctl_number("vm.stats.vm.v_free_count", &v) == 0) { /* FreeBSD */
        pages = v;
        snprintf(how, len, "vm.stats.vm.v_free_count");
    } else if (om_sysctl_number("vm.page_free_count", &v) == 0) { /* macOS */
        pages = v;
        snprintf(how, len, "vm.page_free_count");
    } else {
        /* NetBSD's struct uvmexp_sysctl begins pagesize, pagemask, pageshift, npages,
         * free (int64_t each; later releases only append) */
        int64_t uvm[5];
        size_t ulen = sizeof uvm;
        if (om_sysctl_raw("vm.uvmexp2", uvm, &ulen) == 0 && ulen == sizeof uvm) {
            pages = uvm[4], page = uvm[0];
            snprintf(how, len, "vm.uvmexp2 free pages");
        }
    }
    if (pages >= 0 && page > 0)
        return pages * page;
    /* Free memory unknown: physical memory bounds it from above. */
    static const char *const physical[] = {"hw.memsize", "hw.physmem64", "hw.physmem"};
    for (size_t i = 0; i < sizeof physical / sizeof physical[0]; i++)
        if (om_sysctl_number(physical[i], &v) == 0 && v > 0) {
            snprintf(how, len, "%s (physical memory: how much is free is unknown)",
                     physical[i]);
            return v;
        }
    return -1;
}

long long om_system_cap(const char *name)
{
    long long v;
    return om_sysctl_number(name, &v) == 0 ? v : -1;
}

long long om_free_file_slots(char *how, size_t len)
{
    /* Linux: allocated, unused (0 since 2.6) and maximum file handles. */
    long long nr[3];
    FILE *f = fopen("/proc/sys/fs/file-nr", "r");
    if (f) {
        int n = fscanf(f, "%lld %lld %lld", &nr[0], &nr[1], &nr[2]);
        fclose(f);
        if (n == 3) {
            snprintf(how, len, "fs.file-max %lld, %lld allocated", nr[2], nr[0]);
            return nr[2] - nr[0];
        }
    }
    /* The BSDs and macOS: kern.maxfiles less what is open, where the system says (FreeBSD
     * kern.openfiles, macOS kern.num_files, OpenBSD kern.nfiles; NetBSD does not). */
    long long maxfiles = om_system_cap("kern.maxfiles"), open_now = -1;
    if (maxfiles <= 0)
        return -1;
    static const char *const open_counts[] = {"kern.openfiles", "kern.num_files", "kern.nfiles"};
    for (size_t i = 0; i < sizeof open_counts / sizeof open_counts[0] && open_now < 0; i++)
        open_now = om_system_cap(open_counts[i]);
    if (open_now >= 0)
        snprintf(how, len, "kern.maxfiles %lld, %lld open", maxfiles, open_now);
    else
        snprintf(how, len, "kern.maxfiles %lld", maxfiles);
    return maxfiles - (open_now > 0 ? open_now : 0);
}
