/*
 * The page cache: how much of a file it holds, and making a file or the whole cache
 * cold.  Shared by the file-system benchmarks (fs.c), the page-cache read (mem.c) and
 * the user's command with a cold cache (cmd.c).
 */
#ifndef OSMETER_LIB_PAGECACHE_H
#define OSMETER_LIB_PAGECACHE_H

#include <fcntl.h>

/* Evicting one file needs posix_fadvise(POSIX_FADV_DONTNEED): not on OpenBSD, macOS. */
#ifdef POSIX_FADV_DONTNEED
#define PAGECACHE_CAN_EVICT 1
#else
#define PAGECACHE_CAN_EVICT 0
#endif

/* Fraction (0..1) of the first `size` bytes' pages in the page cache (mincore), or -1
 * where the system cannot tell (OpenBSD has no mincore) or the check failed. */
double pagecache_resident(int fd, long long size);
/* The same for the whole file at path. */
double pagecache_resident_path(const char *path);
/* fsync the file, then drop its pages (posix_fadvise DONTNEED).  0, or -1 with errno
 * (ENOSYS where the system cannot evict one file). */
int pagecache_evict(const char *path);
/* sync, then drop the page cache, dentries and inodes of the whole machine (Linux, as
 * root).  0, or -1 with errno (ENOSYS where there is no such knob). */
int pagecache_drop_all(void);

#endif
