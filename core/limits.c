/*
 * Raising a soft resource limit to the hard one: the descriptor and process limits that
 * end the curves of ctx.c, http.c and scale.c and size the HTTP server's table.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <sys/resource.h>

/* Where the hard limit is "unlimited" the kernel may still refuse an unlimited soft
 * limit (Linux caps descriptors at fs.nr_open, macOS at kern.maxfilesperproc): then this
 * many is asked for instead. */
#define LARGE_SOFT_LIMIT 1048576

long long om_raise_limit(int resource)
{
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0)
        return OM_UNLIMITED; /* nothing to read (cannot happen for a valid resource) */
    if (rl.rlim_cur != rl.rlim_max) {
        struct rlimit want = rl;
        want.rlim_cur = rl.rlim_max;
        if (setrlimit(resource, &want) == 0) {
            rl = want;
        } else if (rl.rlim_max == RLIM_INFINITY && rl.rlim_cur < LARGE_SOFT_LIMIT) {
            want.rlim_cur = LARGE_SOFT_LIMIT;
            if (setrlimit(resource, &want) == 0)
                rl = want;
        }
    }
    return rl.rlim_cur == RLIM_INFINITY ? OM_UNLIMITED : (long long)rl.rlim_cur;
}
