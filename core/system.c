/*
 * Asking the system for room: raising a soft resource limit to the hard one, and
 * dropping the page cache.  Both are shared by families that would otherwise write them
 * each their own way.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

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

int om_drop_caches(void)
{
#ifdef __linux__
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = write(fd, "3", 1) == 1 ? 0 : -1;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
#else
    errno = ENOSYS;
    return -1;
#endif
}
