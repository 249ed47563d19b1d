/* The page cache: see pagecache.h. */
#define _GNU_SOURCE
#include "pagecache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

double pagecache_resident(int fd, long long size)
{
#ifdef __OpenBSD__
    (void)fd, (void)size;
    return -1;
#else
    if (size <= 0)
        return -1;
    size_t len = (size_t)size, page = (size_t)sysconf(_SC_PAGESIZE);
    size_t pages = (len + page - 1) / page;
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return -1;
    unsigned char *vec = malloc(pages);
    double frac = -1;
    if (vec && mincore(map, len, (void *)vec) == 0) { /* char * on the BSDs and macOS */
        size_t in = 0;
        for (size_t i = 0; i < pages; i++)
            in += vec[i] & 1;
        frac = (double)in / (double)pages;
    }
    free(vec);
    munmap(map, len);
    return frac;
#endif
}

double pagecache_resident_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    double frac = fstat(fd, &st) == 0 ? pagecache_resident(fd, (long long)st.st_size) : -1;
    close(fd);
    return frac;
}

int pagecache_evict(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd) == 0 ? 0 : errno;
#if PAGECACHE_CAN_EVICT
    if (rc == 0)
        rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* returns the error, no errno */
#else
    if (rc == 0)
        rc = ENOSYS;
#endif
    close(fd);
    errno = rc;
    return rc ? -1 : 0;
}

int pagecache_drop_all(void)
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
