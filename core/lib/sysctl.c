/* Reading a sysctl by name: see sysctl.h. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#if defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) || \
    defined(__APPLE__) || defined(__DragonFly__)
#define HAVE_SYSCTL 1
#include <sys/sysctl.h>
#endif
#ifdef __OpenBSD__
#include <sys/socket.h>
#include <netinet/in.h>
#endif

#include "sysctl.h"

#ifdef __OpenBSD__
/* The names osmeter reads, with OpenBSD's MIBs (sys/sysctl.h, netinet/in.h). */
static const struct {
    const char *name;
    int mib[4];
    unsigned len;
} openbsd_mibs[] = {
    {"hw.model", {CTL_HW, HW_MODEL}, 2},
    {"hw.ncpu", {CTL_HW, HW_NCPU}, 2},
    {"hw.ncpuonline", {CTL_HW, HW_NCPUONLINE}, 2},
    {"hw.smt", {CTL_HW, HW_SMT}, 2},
    {"hw.physmem64", {CTL_HW, HW_PHYSMEM64}, 2},
    {"kern.ostype", {CTL_KERN, KERN_OSTYPE}, 2},
    {"kern.osrelease", {CTL_KERN, KERN_OSRELEASE}, 2},
    {"kern.version", {CTL_KERN, KERN_VERSION}, 2},
    {"kern.maxproc", {CTL_KERN, KERN_MAXPROC}, 2},
    {"kern.nprocs", {CTL_KERN, KERN_NPROCS}, 2},
    {"kern.maxthread", {CTL_KERN, KERN_MAXTHREAD}, 2},
    {"kern.nthreads", {CTL_KERN, KERN_NTHREADS}, 2},
    {"kern.maxfiles", {CTL_KERN, KERN_MAXFILES}, 2},
    {"kern.nfiles", {CTL_KERN, KERN_NFILES}, 2},
    {"kern.timecounter.hardware", {CTL_KERN, KERN_TIMECOUNTER, KERN_TIMECOUNTER_HARDWARE}, 3},
    {"net.inet.ip.porthifirst", {CTL_NET, PF_INET, IPPROTO_IP, IPCTL_IPPORT_HIFIRSTAUTO}, 4},
    {"net.inet.ip.porthilast", {CTL_NET, PF_INET, IPPROTO_IP, IPCTL_IPPORT_HILASTAUTO}, 4},
};
#endif

int om_sysctl_raw(const char *name, void *buf, size_t *len)
{
#if defined(__OpenBSD__)
    for (size_t i = 0; i < sizeof openbsd_mibs / sizeof openbsd_mibs[0]; i++)
        if (strcmp(openbsd_mibs[i].name, name) == 0)
            return sysctl(openbsd_mibs[i].mib, openbsd_mibs[i].len, buf, len, NULL, 0);
    return -1;
#elif defined(HAVE_SYSCTL)
    return sysctlbyname(name, buf, len, NULL, 0);
#else
    (void)name, (void)buf, (void)len;
    return -1;
#endif
}

int om_sysctl_number(const char *name, long long *out)
{
    union {
        int32_t i32;
        int64_t i64;
        char bytes[16];
    } v;
    size_t len = sizeof v;
    if (om_sysctl_raw(name, &v, &len) != 0)
        return -1;
    if (len == sizeof v.i32) /* unsigned counters (v_free_count) stay below 2^31 pages */
        *out = (long long)(uint32_t)v.i32;
    else if (len == sizeof v.i64)
        *out = (long long)v.i64;
    else
        return -1;
    return 0;
}

int om_sysctl_string(const char *name, char *buf, size_t len)
{
    if (len == 0)
        return -1;
    size_t have = len - 1;
    if (om_sysctl_raw(name, buf, &have) != 0)
        return -1;
    buf[have < len ? have : len - 1] = 0;
    return 0;
}
