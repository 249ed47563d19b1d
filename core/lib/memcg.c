/* A memory-limited cgroup: see memcg.h. */
#define _GNU_SOURCE
#include "memcg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __linux__
/* Whether a comma-separated list ("rw,memory") has the word "memory". */
static int names_memory(const char *list)
{
    for (const char *p = list; (p = strstr(p, "memory")); p += 6)
        if ((p == list || p[-1] == ',') && (p[6] == 0 || p[6] == ','))
            return 1;
    return 0;
}

/* The first line of a file for which fn(line, v2, out, len) says yes; 0 or -1. */
static int find_line(const char *path, int (*fn)(char *, int, char *, size_t), int v2,
                     char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        found = fn(line, v2, out, len);
    }
    fclose(f);
    return found ? 0 : -1;
}

/* A /proc/self/mountinfo line of the cgroup v1 hierarchy with the memory controller
 * (v2 = 0) or of the cgroup v2 hierarchy (v2 = 1): its mount point into out. */
static int cgroup_mount_line(char *line, int v2, char *out, size_t len)
{
    char mnt[PATH_MAX], type[64], opts[1024] = "";
    char *dash = strstr(line, " - ");
    if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
        sscanf(dash + 3, "%63s %*s %1023s", type, opts) < 1)
        return 0;
    if (!(v2 ? strcmp(type, "cgroup2") == 0 : strcmp(type, "cgroup") == 0 && names_memory(opts)))
        return 0;
    snprintf(out, len, "%s", mnt);
    return 1;
}

/* A /proc/self/cgroup line ("id:controllers:path") of that hierarchy: its path. */
static int own_cgroup_line(char *line, int v2, char *out, size_t len)
{
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
        return 0;
    *c2 = 0;
    if (!(v2 ? strncmp(line, "0:", 2) == 0 && !c1[1] : names_memory(c1 + 1)))
        return 0;
    snprintf(out, len, "%s", c2 + 1);
    return 1;
}

static int cgroup_mount(int v2, char *out, size_t len)
{
    return find_line("/proc/self/mountinfo", cgroup_mount_line, v2, out, len);
}

static int own_cgroup(int v2, char *out, size_t len)
{
    return find_line("/proc/self/cgroup", own_cgroup_line, v2, out, len);
}

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -1;
    int bad = om_write_full(fd, text, strlen(text));
    return close(fd) != 0 || bad ? -1 : 0;
}
#endif

int memcg_make(struct om_ctx *ctx, long long limit, struct memcg *cg)
{
#ifdef __linux__
    char mnt[PATH_MAX], own[PATH_MAX], parent[PATH_MAX], check[2 * PATH_MAX + 64], text[64];
    int v2 = cgroup_mount(0, mnt, sizeof mnt) != 0;
    if (v2 && cgroup_mount(1, mnt, sizeof mnt) != 0)
        return om_skip(ctx, "no cgroup hierarchy with the memory controller is mounted "
                            "(mem_limit=0 runs without a limit)");
    if (own_cgroup(v2, own, sizeof own) != 0)
        return om_skip(ctx, "cannot tell this process's cgroup from /proc/self/cgroup");
    snprintf(parent, sizeof parent, "%s", own);
    if (v2) {
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent)
            *slash = 0;
        else
            snprintf(parent, sizeof parent, "/");
        snprintf(check, sizeof check, "%s%s/cgroup.subtree_control", mnt, parent);
        FILE *f = fopen(check, "r");
        char ctrl[512] = "";
        if (f) {
            if (!fgets(ctrl, sizeof ctrl, f))
                ctrl[0] = 0;
            fclose(f);
        }
        if (!strstr(ctrl, "memory"))
            return om_skip(ctx, "the memory controller is not enabled for child cgroups in "
                                "%s%s (cgroup.subtree_control)", mnt, parent);
    }
    if (snprintf(cg->dir, sizeof cg->dir, "%s%s%sosmeter-bonnie.%d", mnt, parent,
                 strcmp(parent, "/") == 0 ? "" : "/", (int)getpid()) >= (int)sizeof cg->dir)
        return om_skip(ctx, "the cgroup path %s%s is too long", mnt, parent);
    if (mkdir(cg->dir, 0755) != 0)
        return om_skip(ctx, "cannot create the cgroup %s: %s (needs root or a delegated "
                            "cgroup; mem_limit=0 runs without a limit)", cg->dir, strerror(errno));
    om_remove_at_exit(cg->dir);
    snprintf(check, sizeof check, "%s/%s", cg->dir, v2 ? "memory.max" : "memory.limit_in_bytes");
    snprintf(text, sizeof text, "%lld", limit);
    if (write_text(check, text) != 0) {
        int e = errno;
        rmdir(cg->dir);
        return om_fail(ctx, "setting %s to %s: %s", check, text, strerror(e));
    }
    if (v2) { /* no swapping out of the limit either (where swap is accounted) */
        snprintf(check, sizeof check, "%s/memory.swap.max", cg->dir);
        if (access(check, W_OK) == 0)
            write_text(check, "0");
    }
    snprintf(cg->procs, sizeof cg->procs, "%s/cgroup.procs", cg->dir);
    om_note(ctx, "memory_limit", "%lld bytes: cgroup %s %s (file pages are charged to it "
            "and reclaimed at the limit)", limit, v2 ? "v2" : "v1", cg->dir);
    return OM_OK;
#else
    (void)limit, (void)cg;
    return om_skip(ctx, "memory-limited cgroups are Linux-only (mem_limit=0 runs without a "
                        "limit: the whole page cache)");
#endif
}

int memcg_join(const struct memcg *cg)
{
#ifdef __linux__
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    return write_text(cg->procs, pid);
#else
    (void)cg;
    return -1;
#endif
}

#ifdef __linux__
/* The "oom_kill N" line of memory.events (v2) or memory.oom_control (v1): N into out. */
static int oom_kill_line(char *line, int v2, char *out, size_t len)
{
    (void)v2;
    long long n;
    if (sscanf(line, "oom_kill %lld", &n) != 1)
        return 0;
    snprintf(out, len, "%lld", n);
    return 1;
}
#endif

long long memcg_oom_kills(const struct memcg *cg)
{
#ifdef __linux__
    char path[PATH_MAX + 32], n[32];
    for (int v2 = 1; v2 >= 0; v2--) {
        snprintf(path, sizeof path, "%s/%s", cg->dir, v2 ? "memory.events" : "memory.oom_control");
        if (find_line(path, oom_kill_line, v2, n, sizeof n) == 0)
            return atoll(n);
    }
#else
    (void)cg;
#endif
    return -1;
}
