/*
 * `osmeter-core sysinfo`: the system the core runs on, as one JSON object, so that the
 * front-end can describe a target it reaches only through a command (ssh, a serial
 * console, a container) where no Python runs (osmeter run --core).  Raw facts only:
 * uname, the processor count and page size, the resource limits, the sysctls the BSDs
 * and macOS describe themselves with, and the Linux files the front-end reads locally
 * (/proc, /sys, /etc/os-release).  The front-end interprets them (osmeter/system/sysinfo.py).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"
#include "lib/sysctl.h"

/* What the BSDs and macOS say of themselves (absent names are left out). */
static const char *const sysctl_strings[] = {
    "kern.ostype", "kern.osrelease", "kern.version", "hw.model", "hw.machine",
    "machdep.cpu.brand_string", "kern.timecounter.hardware", "kern.vm_guest",
};
static const char *const sysctl_numbers[] = {
    "hw.ncpu", "hw.ncpuonline", "hw.smt", "hw.physicalcpu", "kern.smp.cores", "hw.memsize",
    "hw.physmem", "hw.physmem64", "kern.maxproc", "kern.maxfiles", "kern.maxfilesperproc",
};
/* What Linux says of itself, read as osmeter/system/sysinfo.py reads it locally. */
static const char *const files[] = {
    "/etc/os-release", "/proc/cpuinfo", "/proc/meminfo", "/proc/cmdline",
    "/sys/devices/system/clocksource/clocksource0/current_clocksource",
    "/sys/kernel/mm/transparent_hugepage/enabled", "/proc/sys/kernel/pid_max",
    "/proc/sys/vm/max_map_count", "/proc/sys/net/ipv4/ip_local_port_range",
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver",
    "/sys/class/dmi/id/product_name",
};

#define COUNT(a) (sizeof a / sizeof a[0])

static void key(const char *sep, const char *name)
{
    fputs(sep, stdout);
    om_json_string(stdout, name);
    putchar(':');
}

static void print_file(const char *path, const char **sep)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    static char buf[256 * 1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    key(*sep, path);
    om_json_string(stdout, buf);
    *sep = ",";
}

static void print_rlimit(const char *name, int resource, const char *sep)
{
    struct rlimit rl;
    key(sep, name);
    if (getrlimit(resource, &rl) != 0) {
        fputs("null", stdout);
        return;
    }
    if (rl.rlim_cur == RLIM_INFINITY)
        fputs("[null,", stdout);
    else
        printf("[%llu,", (unsigned long long)rl.rlim_cur);
    if (rl.rlim_max == RLIM_INFINITY)
        fputs("null]", stdout);
    else
        printf("%llu]", (unsigned long long)rl.rlim_max);
}

int om_sysinfo_main(void)
{
    struct utsname u;
    if (uname(&u) != 0) {
        fprintf(stderr, "osmeter-core: uname failed\n");
        return 1;
    }
    printf("{\"uname\":{");
    key("", "sysname"), om_json_string(stdout, u.sysname);
    key(",", "nodename"), om_json_string(stdout, u.nodename);
    key(",", "release"), om_json_string(stdout, u.release);
    key(",", "version"), om_json_string(stdout, u.version);
    key(",", "machine"), om_json_string(stdout, u.machine);
    printf("},\"ncpu_online\":%ld,\"page_size\":%ld,\"phys_pages\":%ld",
           sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_PAGESIZE), sysconf(_SC_PHYS_PAGES));
    printf(",\"sysctl\":{");
    const char *sep = "";
    char text[1024];
    for (size_t i = 0; i < COUNT(sysctl_strings); i++)
        if (om_sysctl_string(sysctl_strings[i], text, sizeof text) == 0) {
            key(sep, sysctl_strings[i]), om_json_string(stdout, text);
            sep = ",";
        }
    long long v;
    for (size_t i = 0; i < COUNT(sysctl_numbers); i++)
        if (om_sysctl_number(sysctl_numbers[i], &v) == 0) {
            key(sep, sysctl_numbers[i]), printf("%lld", v);
            sep = ",";
        }
    printf("},\"files\":{");
    sep = "";
    for (size_t i = 0; i < COUNT(files); i++)
        print_file(files[i], &sep);
    printf("},\"rlimits\":{");
    print_rlimit("RLIMIT_NOFILE", RLIMIT_NOFILE, "");
#ifdef RLIMIT_NPROC
    print_rlimit("RLIMIT_NPROC", RLIMIT_NPROC, ",");
#endif
#ifdef RLIMIT_AS /* not on OpenBSD */
    print_rlimit("RLIMIT_AS", RLIMIT_AS, ",");
#endif
#ifdef RLIMIT_MEMLOCK
    print_rlimit("RLIMIT_MEMLOCK", RLIMIT_MEMLOCK, ",");
#endif
    printf("}}\n");
    return fflush(stdout) == 0 ? 0 : 1;
}
