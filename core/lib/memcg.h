#ifndef OSMETER_LIB_MEMCG_H
#define OSMETER_LIB_MEMCG_H

#include <limits.h>
#include "../harness.h"

/*
 * A memory-limited cgroup: the page cache of a small machine (Linux), for fs.bonnie.warm.
 *
 * Lai & Baker's machine had 32 MB and cached bonnie's file "for sizes up to 20 megabytes";
 * today's page cache is gigabytes.  A child process in a cgroup whose memory is limited
 * sees a page cache of that size: its file pages are charged to the cgroup and reclaimed
 * at the limit.  Cgroup v1's memory controller where it is mounted (a child of our own
 * cgroup there), else cgroup v2 (a sibling of our cgroup: v2 allows no processes in a
 * cgroup that has children).  Needs root or a delegated cgroup; the directory is removed
 * at the end and, when the core is killed, by the harness's exit clean-up.
 */
struct memcg {
    char dir[PATH_MAX];
    char procs[PATH_MAX + 16];
};

/* Make the cgroup and limit its memory to `limit` bytes; OM_OK or om_skip/om_fail. */
int memcg_make(struct om_ctx *ctx, long long limit, struct memcg *cg);
/* Move the calling process into the cgroup; 0 or -1. */
int memcg_join(const struct memcg *cg);
/* How many processes the cgroup's OOM killer has killed (memory.events, or v1's
 * memory.oom_control); -1 when the kernel does not say. */
long long memcg_oom_kills(const struct memcg *cg);

#endif
