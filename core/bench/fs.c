/*
 * File-system family: Ousterhout's and Lai & Baker's create-use-delete (crtdel), bonnie's
 * large-file I/O (Lai & Baker §7.1), and von Leitner's fragmentation and contention
 * experiment (fs.frag.*, osmeter's ids for the seed's net.download_frag: the same reads,
 * from the local disk instead of over HTTP).
 *
 * Every benchmark works in a private directory inside the `dir` parameter (see fs.h).
 * Cold caches: fsync + posix_fadvise(POSIX_FADV_DONTNEED) on the file (any user, and
 * only that file), or /proc/sys/vm/drop_caches (root, the whole machine), or O_DIRECT;
 * the `cache` parameter chooses, and a note says which was used and how many of the
 * file's pages were still resident afterwards (checked with mincore).
 *
 * One file, though long: bonnie and the fragmentation experiment share the cache modes,
 * and all three parts the working directory (lib/workdir.c) and the page cache
 * (lib/pagecache.c); what is shared with other families lives in those libraries.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#if __has_include(<linux/fiemap.h>) /* absent without the kernel's headers (Alpine) */
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#endif
#endif

#include "../harness.h"
#include "../lib/memcg.h"
#include "../lib/pagecache.h"
#include "../lib/workdir.h"

#define MB (1024.0 * 1024.0) /* bonnie: MB = 2^20 bytes (lmbench 2 and 3 use 10^6: lib_timing.c) */

/* ---- cold caches ------------------------------------------------------------------ */

enum cache_mode { CACHE_FADVISE, CACHE_DROP, CACHE_DIRECT, CACHE_WARM };

static enum cache_mode cache_mode(struct om_ctx *ctx)
{
    const char *c = om_str(ctx, "cache");
    return strcmp(c, "drop_caches") == 0 ? CACHE_DROP
           : strcmp(c, "direct") == 0    ? CACHE_DIRECT
           : strcmp(c, "warm") == 0      ? CACHE_WARM
                                         : CACHE_FADVISE;
}

/* Can this mode work here (uses_fadvise: the benchmark makes files cold with
 * posix_fadvise in this mode)?  Returns OM_OK or the om_skip code. */
static int cache_check(struct om_ctx *ctx, enum cache_mode mode, int uses_fadvise)
{
    if (mode == CACHE_DROP && geteuid() != 0)
        return om_skip(ctx, "cache=drop_caches needs root (use cache=fadvise)");
#ifndef __linux__
    if (mode == CACHE_DROP)
        return om_skip(ctx, "cache=drop_caches needs Linux's /proc/sys/vm/drop_caches");
#endif
#ifndef O_DIRECT
    if (mode == CACHE_DIRECT)
        return om_skip(ctx, "cache=direct: this system has no O_DIRECT");
#endif
    if (uses_fadvise && !PAGECACHE_CAN_EVICT)
        return om_skip(ctx, "cache=%s needs posix_fadvise(POSIX_FADV_DONTNEED) to make the "
                            "file cold, and this system has none (cache=warm measures the "
                            "page cache)", om_str(ctx, "cache"));
    return OM_OK;
}

/* Percentage of the file's pages in the page cache (mincore), or -1 if unknown. */
static double resident_pct(const char *path)
{
    double frac = pagecache_resident_path(path);
    return frac < 0 ? -1 : 100.0 * frac;
}

/* Push the file's data to disk and out of the page cache; returns the percentage of its
 * pages still resident afterwards (-1 unknown), or -2 when a call failed. */
static double drop_file_cache(enum cache_mode mode, const char *path)
{
    if (mode == CACHE_WARM)
        return resident_pct(path);
    if (pagecache_evict(path) || (mode == CACHE_DROP && pagecache_drop_all()))
        return -2;
    return resident_pct(path);
}

/* A file still in memory after it was made cold would time the page cache under a cold
 * label: FreeBSD's and NetBSD's posix_fadvise(DONTNEED) only deactivates its pages, and
 * tmpfs keeps them.  Over 5% resident: skip, saying so.  cache=warm keeps it in memory
 * on purpose. */
static int skip_if_still_cached(struct om_ctx *ctx, enum cache_mode mode, double pct,
                                const char *dir)
{
    if (pct <= 5 || mode == CACHE_WARM)
        return OM_OK;
    return om_skip(ctx, "cannot make the cache cold on %s: %.0f%% of the file stays in memory "
                        "after %s (try cache=direct)", fs_type_name(dir), pct,
                   mode == CACHE_DROP ? "drop_caches" : "fadvise(DONTNEED)");
}

/* ZFS keeps file data in its ARC, which posix_fadvise does not drop and mincore does not
 * see: a cold read there can neither be made nor checked this way. */
static int skip_on_zfs(struct om_ctx *ctx, const char *dir, int uses_fadvise)
{
    if (!uses_fadvise || strcmp(fs_type_name(dir), "zfs") != 0)
        return OM_OK;
    return om_skip(ctx, "cache=%s cannot make a file on ZFS cold: its ARC holds the data, "
                        "out of reach of posix_fadvise and unseen by mincore (cache=warm "
                        "measures the cache)", om_str(ctx, "cache"));
}

static const char *cache_how(enum cache_mode mode)
{
    switch (mode) {
    case CACHE_FADVISE: return "fadvise: fsync + posix_fadvise(DONTNEED) on the file before each timed pass";
    case CACHE_DROP: return "drop_caches: sync + echo 3 > /proc/sys/vm/drop_caches before each timed pass";
    case CACHE_DIRECT: return "direct: O_DIRECT for block I/O, fsync + fadvise(DONTNEED) before per-character passes";
    case CACHE_WARM: return "warm: page cache left alone (in-cache sizes measure memory, as LB96's small files did)";
    }
    return "?";
}

#define CACHE_PARAM(def)                                                                  \
    {"cache", OM_CHOICE, def, NULL, NULL, 0, 0, "fadvise|drop_caches|direct|warm",         \
     "how reads are made cold: fadvise (any user, this file only), drop_caches (root, "    \
     "whole machine), direct (O_DIRECT), warm (none)"}

/* ---- fs.crtdel ---------------------------------------------------------------------- */

struct crtdel {
    char path[PATH_MAX + 64];
    char *buf;
    size_t size;
    int fsync;
    struct om_fault fault;
};

static uint64_t loop_crtdel(void *arg, uint64_t n)
{
    struct crtdel *c = arg;
    struct om_fault *f = &c->fault;
    for (uint64_t i = 0; i < n && !om_faulted(f); i++) {
        int fd = open(c->path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
        if (fd < 0) { om_record_fault(f, errno, "create"); break; }
        if (c->size && om_write_full(fd, c->buf, c->size)) om_record_fault(f, errno, "write");
        if (c->fsync && fsync(fd)) om_record_fault(f, errno, "fsync");
        if (close(fd)) om_record_fault(f, errno, "close");
        if (om_faulted(f)) break;
        if ((fd = open(c->path, O_RDONLY)) < 0) { om_record_fault(f, errno, "reopen"); break; }
        if (c->size && om_read_full(fd, c->buf, c->size)) om_record_fault(f, errno, "read");
        close(fd);
        if (unlink(c->path)) om_record_fault(f, errno, "unlink");
    }
    return c->size;
}

static int run_crtdel(struct om_ctx *ctx)
{
    long long sizes[OM_MAX_LIST];
    int n = om_list(ctx, "sizes", sizes);
    long long biggest = 0;
    for (int i = 0; i < n; i++)
        biggest = sizes[i] > biggest ? sizes[i] : biggest;
    struct crtdel c;
    memset(&c, 0, sizeof c);
    char dir[PATH_MAX];
    int rc = fs_workdir(ctx, biggest, dir, sizeof dir);
    if (rc)
        return rc;
    snprintf(c.path, sizeof c.path, "%s/crtdel.tmp", dir);
    if (!(c.buf = malloc(biggest ? (size_t)biggest : 1)))
        return om_fail(ctx, "out of memory for a %lld-byte buffer", biggest);
    memset(c.buf, 'x', biggest ? (size_t)biggest : 1);
    const char *mode = om_str(ctx, "fsync");
    om_note(ctx, "fsync", "sequence_fsync calls fsync(fd) after writing, before the close");
    for (int with = 0; with <= 1 && rc == OM_OK; with++) {
        if ((with && strcmp(mode, "without") == 0) || (!with && strcmp(mode, "with") == 0))
            continue;
        const char *metric = with ? "sequence_fsync" : "sequence";
        c.fsync = with;
        for (int i = 0; i < n && rc == OM_OK; i++) {
            c.size = (size_t)sizes[i];
            char what[PATH_MAX + 128], label[64];
            snprintf(what, sizeof what, "crtdel of %s (%zu bytes)", c.path, c.size);
            snprintf(label, sizeof label, "%s %lld bytes", metric, sizes[i]);
            struct om_measure m = {.metric = metric, .x = sizes[i], .scale = 1e-6 /* ms */,
                                   .fault = &c.fault, .what = what, .label = label};
            rc = om_measure_batches(ctx, loop_crtdel, &c, &m);
        }
    }
    free(c.buf);
    return rc;
}

/* ---- fs.crtdel.batch: lmbench lat_fs ------------------------------------------------- */

/* lat_fs.c: create N files of a size (creat, write, close), then delete all N, each pass
 * timed per file; at most per_dir files in a directory (lmbench's -n, 100).  Every pass
 * works in new directories, made beforehand and removed afterwards, untimed: lmbench
 * makes a new tree for each timed interval, so no name was there before. */
struct crtdel_batch {
    char dir[PATH_MAX];
    char *buf;
    size_t size;
    long long files, per_dir;
    int pass;    /* the tree of this pass is dir/pass/ */
    int created; /* the files of this pass exist */
    struct om_fault fault;
};

static void batch_name(const struct crtdel_batch *b, long long i, char *out, size_t len)
{
    snprintf(out, len, "%s/%d/%lld/%lld", b->dir, b->pass, i / b->per_dir, i);
}

/* The pass's directory (d = -1) or its d-th subdirectory. */
static void batch_dir(const struct crtdel_batch *b, long long d, char *out, size_t len)
{
    if (d < 0)
        snprintf(out, len, "%s/%d", b->dir, b->pass);
    else
        snprintf(out, len, "%s/%d/%lld", b->dir, b->pass, d);
}

static void delete_all(struct crtdel_batch *b)
{
    char name[PATH_MAX + 64];
    for (long long i = 0; i < b->files; i++) {
        batch_name(b, i, name, sizeof name);
        if (unlink(name) && !om_faulted(&b->fault))
            om_record_fault(&b->fault, errno, "unlink");
    }
    b->created = 0;
}

/* The timed create pass (iters = files); a pass left over from the warm-up is deleted
 * first, untimed (before). */
static uint64_t loop_create_all(void *arg, uint64_t iters)
{
    struct crtdel_batch *b = arg;
    char name[PATH_MAX + 64];
    for (uint64_t i = 0; i < iters && !om_faulted(&b->fault); i++) {
        batch_name(b, (long long)i, name, sizeof name);
        int fd = open(name, O_CREAT | O_TRUNC | O_WRONLY, 0600);
        if (fd < 0) { om_record_fault(&b->fault, errno, "create"); break; }
        if (b->size && om_write_full(fd, b->buf, b->size)) om_record_fault(&b->fault, errno, "write");
        if (close(fd)) om_record_fault(&b->fault, errno, "close");
    }
    b->created = 1;
    return iters;
}

/* A new tree for the next pass (mkdir), or the last one removed (rmdir). */
static void batch_tree(struct crtdel_batch *b, int make)
{
    char name[PATH_MAX + 64];
    long long dirs = (b->files + b->per_dir - 1) / b->per_dir;
    for (long long d = make ? -1 : dirs - 1; make ? d < dirs : d >= -1; d += make ? 1 : -1) {
        batch_dir(b, d, name, sizeof name);
        if ((make ? mkdir(name, 0700) : rmdir(name)) && !om_faulted(&b->fault))
            om_record_fault(&b->fault, errno, make ? "mkdir" : "rmdir");
    }
}

static void next_pass(struct crtdel_batch *b)
{
    if (b->created)
        delete_all(b); /* the warm-up's files */
    batch_tree(b, 0);
    b->pass++;
    batch_tree(b, 1);
}

static void before_create(void *arg) { next_pass(arg); }

/* After each create pass: the delete pass, timed here, per file. */
static void with_delete_all(void *arg, double create_ns, uint64_t iters, double *values)
{
    struct crtdel_batch *b = arg;
    (void)create_ns;
    uint64_t t0 = om_now_ns();
    delete_all(b);
    values[0] = ((double)(om_now_ns() - t0) - om_timer_overhead_ns()) / (double)iters / 1e3;
}

static int run_crtdel_batch(struct om_ctx *ctx)
{
    long long sizes[OM_MAX_LIST];
    int n = om_list(ctx, "sizes", sizes);
    struct crtdel_batch b = {.files = om_int(ctx, "files"), .per_dir = om_int(ctx, "per_dir")};
    long long biggest = 0;
    for (int i = 0; i < n; i++)
        biggest = sizes[i] > biggest ? sizes[i] : biggest;
    int rc = fs_workdir(ctx, biggest * b.files, b.dir, sizeof b.dir);
    if (rc)
        return rc;
    if (!(b.buf = calloc(1, biggest ? (size_t)biggest : 1)))
        return om_fail(ctx, "out of memory for a %lld-byte buffer", biggest);
    om_note(ctx, "method", "%lld files, at most %lld to a directory (lmbench lat_fs -n), in "
            "new directories each pass; create = creat+write+close, delete = unlink, each "
            "pass timed per file",
            b.files, b.per_dir);
    for (int i = 0; i < n && rc == OM_OK; i++) {
        b.size = (size_t)sizes[i];
        char what[PATH_MAX + 128], label[64];
        snprintf(what, sizeof what, "%lld files of %zu bytes in %s", b.files, b.size, b.dir);
        snprintf(label, sizeof label, "create %lld bytes", sizes[i]);
        struct om_measure m = {.metric = "create", .x = sizes[i], .scale = 1e-3 /* us */,
                               .iters = (uint64_t)b.files, .fault = &b.fault, .what = what,
                               .label = label, .before = before_create,
                               .also = {"delete"}, .also_fn = with_delete_all};
        batch_tree(&b, 1);
        rc = om_measure_batches(ctx, loop_create_all, &b, &m);
        if (b.created)
            delete_all(&b);
        batch_tree(&b, 0);
        b.pass++;
    }
    free(b.buf);
    return rc;
}

/* ---- bonnie ------------------------------------------------------------------------- */

enum bonnie_phase { B_WRITE, B_REWRITE, B_READ, B_SEEK };

struct bonnie {
    struct om_ctx *ctx;
    enum cache_mode cache;
    char path[PATH_MAX + 64];
    const char *dir; /* the private directory path is in */
    long long size;  /* bytes, a multiple of block */
    size_t block;
    char *buf;       /* block bytes, page-aligned for O_DIRECT */
    long long seeks;
    int fsync;       /* end every writing pass with fsync (durable, not just cached) */
};

static int end_pass(struct bonnie *b, int fd) { return b->fsync ? fsync(fd) : 0; }

static int open_block(struct bonnie *b, int flags)
{
#ifdef O_DIRECT
    if (b->cache == CACHE_DIRECT)
        flags |= O_DIRECT;
#endif
    return open(b->path, flags, 0600);
}

static double mbps(long long bytes, uint64_t ns) { return (double)bytes / MB / ((double)ns / 1e9); }

/* The timed passes below return elapsed ns, or 0 with errno set when a call failed. */

static uint64_t write_per_char(struct bonnie *b)
{
    uint64_t t0 = om_now_ns();
    FILE *f = fopen(b->path, "w");
    if (!f)
        return 0;
    for (long long i = 0; i < b->size; i++)
        if (putc((int)(i & 0x7f), f) == EOF)
            break;
    int bad = ferror(f) || fflush(f) != 0 || end_pass(b, fileno(f)) != 0;
    if (fclose(f) != 0 || bad)
        return 0;
    return om_now_ns() - t0;
}

static uint64_t write_block(struct bonnie *b)
{
    uint64_t t0 = om_now_ns();
    int fd = open_block(b, O_CREAT | O_TRUNC | O_WRONLY);
    if (fd < 0)
        return 0;
    int bad = 0;
    for (long long off = 0; off < b->size && !bad; off += (long long)b->block)
        bad = om_write_full(fd, b->buf, b->block);
    bad = bad || end_pass(b, fd) != 0;
    if (close(fd) != 0 || bad)
        return 0;
    return om_now_ns() - t0;
}

/* bonnie's rewrite: read a block, change it, seek back, write it. */
static uint64_t rewrite(struct bonnie *b)
{
    uint64_t t0 = om_now_ns();
    int fd = open_block(b, O_RDWR);
    if (fd < 0)
        return 0;
    int bad = 0;
    for (long long off = 0; off < b->size && !bad; off += (long long)b->block) {
        bad = om_read_full(fd, b->buf, b->block);
        b->buf[0]++;
        bad = bad || lseek(fd, -(off_t)b->block, SEEK_CUR) < 0 ||
              om_write_full(fd, b->buf, b->block);
    }
    bad = bad || end_pass(b, fd) != 0;
    if (close(fd) != 0 || bad)
        return 0;
    return om_now_ns() - t0;
}

static uint64_t read_per_char(struct bonnie *b)
{
    uint64_t t0 = om_now_ns();
    FILE *f = fopen(b->path, "r");
    if (!f)
        return 0;
    long long n = 0;
    int c;
    while ((c = getc(f)) != EOF)
        n++;
    int bad = ferror(f);
    fclose(f);
    if (bad || n != b->size) {
        errno = bad ? errno : EIO;
        return 0;
    }
    return om_now_ns() - t0;
}

static uint64_t read_block(struct bonnie *b)
{
    uint64_t t0 = om_now_ns();
    int fd = open_block(b, O_RDONLY);
    if (fd < 0)
        return 0;
    int bad = 0;
    for (long long off = 0; off < b->size && !bad; off += (long long)b->block)
        bad = om_read_full(fd, b->buf, b->block);
    close(fd);
    return bad ? 0 : om_now_ns() - t0;
}

/* Random seeks: read a block at a random block boundary, change it, write it back. */
static uint64_t seek_rw(struct bonnie *b)
{
    uint64_t t0 = om_now_ns();
    int fd = open_block(b, O_RDWR);
    if (fd < 0)
        return 0;
    uint64_t x = 88172645463325252ULL; /* xorshift: the same seeks on every system */
    long long blocks = b->size / (long long)b->block;
    int bad = 0;
    for (long long i = 0; i < b->seeks && !bad; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        off_t off = (off_t)(x % (uint64_t)blocks) * (off_t)b->block;
        bad = pread(fd, b->buf, b->block, off) != (ssize_t)b->block;
        b->buf[1]++;
        bad = bad || pwrite(fd, b->buf, b->block, off) != (ssize_t)b->block;
    }
    bad = bad || end_pass(b, fd) != 0;
    if (close(fd) != 0 || bad)
        return 0;
    return om_now_ns() - t0;
}

/* Make the file cold (per the cache mode) and record how cold it got. */
static int make_cold(struct bonnie *b, int per_char)
{
    enum cache_mode mode = b->cache == CACHE_DIRECT && per_char ? CACHE_FADVISE : b->cache;
    if (b->cache == CACHE_DIRECT && !per_char)
        return OM_OK; /* O_DIRECT bypasses the cache */
    double pct = drop_file_cache(mode, b->path);
    if (pct == -2)
        return om_fail(b->ctx, "dropping %s from the page cache: %s", b->path, strerror(errno));
    if (pct >= 0)
        om_note(b->ctx, "resident_after_drop_pct", "%lld bytes: %.1f", b->size, pct);
    return skip_if_still_cached(b->ctx, mode, pct, b->dir);
}

static int bonnie_fail(struct bonnie *b, const char *what)
{
    return om_fail(b->ctx, "%s of %s (%lld bytes): %s", what, b->path, b->size, strerror(errno));
}

static int bonnie_one_size(struct bonnie *b, enum bonnie_phase phase)
{
    uint64_t ns;
    if (phase == B_WRITE) {
        if (!(ns = write_per_char(b)))
            return bonnie_fail(b, "per-character write");
        om_sample(b->ctx, "per_char", b->size, mbps(b->size, ns));
        if (!(ns = write_block(b)))
            return bonnie_fail(b, "block write");
        om_sample(b->ctx, "block", b->size, mbps(b->size, ns));
        return OM_OK;
    }
    /* The other phases need the file: write it untimed. */
    if (!write_block(b))
        return bonnie_fail(b, "writing the test file");
    int rc;
    switch (phase) {
    case B_REWRITE:
        if ((rc = make_cold(b, 0)))
            return rc;
        if (!(ns = rewrite(b)))
            return bonnie_fail(b, "rewrite");
        om_sample(b->ctx, "rewrite", b->size, mbps(b->size, ns));
        return OM_OK;
    case B_READ:
        if ((rc = make_cold(b, 1)))
            return rc;
        if (!(ns = read_per_char(b)))
            return bonnie_fail(b, "per-character read");
        om_sample(b->ctx, "per_char", b->size, mbps(b->size, ns));
        if ((rc = make_cold(b, 0)))
            return rc;
        if (!(ns = read_block(b)))
            return bonnie_fail(b, "block read");
        om_sample(b->ctx, "block", b->size, mbps(b->size, ns));
        return OM_OK;
    case B_SEEK:
        if ((rc = make_cold(b, 0)))
            return rc;
        if (!(ns = seek_rw(b)))
            return bonnie_fail(b, "random seek read/write");
        om_sample(b->ctx, "seeks", b->size, (double)b->seeks / ((double)ns / 1e9));
        return OM_OK;
    default:
        return OM_OK;
    }
}

/* The `sizes` parameter, each at least one block: the count and the biggest, or -1 after
 * reporting a bad parameter. */
static int bonnie_sizes(struct om_ctx *ctx, size_t block, long long *sizes, long long *biggest)
{
    int n = om_list(ctx, "sizes", sizes);
    *biggest = 0;
    for (int i = 0; i < n; i++)
        if (sizes[i] < (long long)block)
            return om_bad_param(ctx, "sizes: %lld is smaller than one %zu-byte block", sizes[i],
                                block), -1;
        else if (sizes[i] > *biggest)
            *biggest = sizes[i];
    return n;
}

static int run_bonnie(struct om_ctx *ctx, enum bonnie_phase phase)
{
    struct bonnie b = {.ctx = ctx, .cache = cache_mode(ctx), .block = (size_t)om_int(ctx, "block"),
                       .fsync = strcmp(om_str(ctx, "fsync"), "yes") == 0};
    /* cache=direct bypasses the cache, except for the per-character reads */
    int uses_fadvise = phase != B_WRITE && b.cache != CACHE_WARM &&
                       (b.cache != CACHE_DIRECT || phase == B_READ);
    int rc = cache_check(ctx, b.cache, uses_fadvise);
    if (rc)
        return rc;
    long long sizes[OM_MAX_LIST], biggest;
    int n = bonnie_sizes(ctx, b.block, sizes, &biggest);
    if (n < 0)
        return OM_BADPARAM;
    char dir[PATH_MAX];
    if ((rc = fs_workdir(ctx, biggest, dir, sizeof dir)) ||
        (rc = skip_on_zfs(ctx, dir, uses_fadvise)))
        return rc;
    b.dir = dir;
    snprintf(b.path, sizeof b.path, "%s/bonnie.dat", dir);
    if (posix_memalign((void **)&b.buf, 4096, b.block))
        return om_fail(ctx, "out of memory for a %zu-byte block", b.block);
    memset(b.buf, 'b', b.block);
    if (phase == B_SEEK)
        b.seeks = om_int(ctx, "seeks");
    om_note(ctx, "cache", "%s", cache_how(b.cache));
    om_note(ctx, "timing", "each pass is timed from open to close%s",
            b.fsync ? "; writing passes end with fsync" : " (no fsync: as the original bonnie)");
    if (b.cache == CACHE_DIRECT) { /* does the file system take O_DIRECT? */
        int fd = open_block(&b, O_CREAT | O_WRONLY);
        if (fd < 0) {
            int e = errno;
            unlink(b.path);
            free(b.buf);
            return om_skip(ctx, "%s does not allow O_DIRECT: %s", fs_type_name(dir), strerror(e));
        }
        close(fd);
    }
    for (int pass = 0; pass < om_int(ctx, "samples"); pass++)
        for (int i = 0; i < n; i++) {
            b.size = sizes[i] / (long long)b.block * (long long)b.block;
            if ((rc = bonnie_one_size(&b, phase))) {
                free(b.buf);
                return rc;
            }
            unlink(b.path);
        }
    free(b.buf);
    return OM_OK;
}

static int run_bonnie_write(struct om_ctx *ctx) { return run_bonnie(ctx, B_WRITE); }
static int run_bonnie_rewrite(struct om_ctx *ctx) { return run_bonnie(ctx, B_REWRITE); }
static int run_bonnie_read(struct om_ctx *ctx) { return run_bonnie(ctx, B_READ); }
static int run_bonnie_seek(struct om_ctx *ctx) { return run_bonnie(ctx, B_SEEK); }

/* ---- fs.bonnie.warm: bonnie with the page cache left warm -------------------------- */

/* What the measuring child reports for one file size. */
struct warm_record {
    long long size;
    uint64_t write_ns, read_ns;
    double resident_pct;
    char error[400]; /* "" when it worked */
};

/* The child: in the cgroup, for each pass and size write the file (timed, no fsync, as
 * the original bonnie), flush it (untimed), read it back (timed: whatever the page cache
 * kept is read from memory), note how much of it stayed resident. */
static void warm_child(struct bonnie *b, const struct memcg *cg, const long long *sizes, int n,
                       long long passes, int out)
{
    struct warm_record r;
    memset(&r, 0, sizeof r);
    if (cg && memcg_join(cg) != 0) {
        snprintf(r.error, sizeof r.error, "joining the cgroup %.300s: %s", cg->dir,
                 strerror(errno));
        om_write_full(out, &r, sizeof r);
        _exit(1);
    }
    for (long long pass = 0; pass < passes; pass++)
        for (int i = 0; i < n; i++) {
            memset(&r, 0, sizeof r);
            b->size = r.size = sizes[i] / (long long)b->block * (long long)b->block;
            int fd = -1;
            const char *what = !(r.write_ns = write_block(b)) ? "block write"
                               : (fd = open(b->path, O_RDONLY)) < 0 || fsync(fd) != 0 ? "fsync"
                               : !(r.read_ns = read_block(b)) ? "block read" : NULL;
            if (fd >= 0)
                close(fd);
            if (what)
                snprintf(r.error, sizeof r.error, "%s of %.300s (%lld bytes): %s", what,
                         b->path, r.size, strerror(errno));
            r.resident_pct = what ? -1 : resident_pct(b->path);
            unlink(b->path);
            if (om_write_full(out, &r, sizeof r) != 0 || what)
                _exit(1);
        }
    _exit(0);
}

static int run_bonnie_warm(struct om_ctx *ctx)
{
    struct bonnie b = {.ctx = ctx, .cache = CACHE_WARM, .block = (size_t)om_int(ctx, "block")};
    long long limit = om_int(ctx, "mem_limit"), sizes[OM_MAX_LIST], biggest;
    int n = bonnie_sizes(ctx, b.block, sizes, &biggest);
    if (n < 0)
        return OM_BADPARAM;
    char dir[PATH_MAX];
    int rc = fs_workdir(ctx, biggest, dir, sizeof dir);
    if (rc)
        return rc;
    const char *type = fs_type_name(dir);
    if (limit > 0 && (strcmp(type, "tmpfs") == 0 || strcmp(type, "ramfs") == 0))
        return om_skip(ctx, "%s keeps files in memory: a memory limit below the file size would "
                            "kill the writer (give dir= on a disk, or mem_limit=0)", type);
    struct memcg cg;
    if (limit > 0 && (rc = memcg_make(ctx, limit, &cg)))
        return rc;
    if (limit == 0)
        om_note(ctx, "memory_limit", "none: the whole page cache of the machine");
    om_note(ctx, "cache", "%s", cache_how(CACHE_WARM));
    om_note(ctx, "timing", "write: open to close, no fsync (as the original bonnie), then an "
            "untimed fsync; read: open to close, right after");
    snprintf(b.path, sizeof b.path, "%s/bonnie.dat", dir);
    if (posix_memalign((void **)&b.buf, 4096, b.block))
        return om_fail(ctx, "out of memory for a %zu-byte block", b.block);
    memset(b.buf, 'b', b.block);
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        free(b.buf);
        return om_fail(ctx, "pipe: %s", strerror(errno));
    }
    fflush(stdout); /* the child must not repeat what is buffered */
    pid_t pid = om_fork();
    if (pid == 0) {
        close(pipefd[0]);
        warm_child(&b, limit > 0 ? &cg : NULL, sizes, n, om_int(ctx, "samples"), pipefd[1]);
    }
    close(pipefd[1]);
    free(b.buf);
    if (pid < 0) {
        close(pipefd[0]);
        return om_fail(ctx, "fork: %s", strerror(errno));
    }
    struct warm_record r;
    const char *error = NULL;
    static char child_error[sizeof r.error];
    while (!error && om_read_full(pipefd[0], &r, sizeof r) == 0) {
        if (r.error[0]) {
            snprintf(child_error, sizeof child_error, "%s", r.error);
            error = child_error;
            break;
        }
        om_sample(ctx, "write", r.size, mbps(r.size, r.write_ns));
        om_sample(ctx, "read", r.size, mbps(r.size, r.read_ns));
        if (r.resident_pct >= 0)
            om_sample(ctx, "resident", r.size, r.resident_pct);
    }
    close(pipefd[0]);
    int status = 0;
    om_child_reap(pid, -1, &status);
    /* The limit the user gave (or the smoke preset's) can be too small for the measuring
     * process itself (an emulator such as qemu-user charges its own translations to it):
     * a limit of this set-up, not a result. */
    long long oom_kills = limit > 0 && WIFSIGNALED(status) ? memcg_oom_kills(&cg) : 0;
    if (limit > 0 && rmdir(cg.dir) != 0 && errno != ENOENT)
        om_note(ctx, "warning", "could not remove the cgroup %s: %s", cg.dir, strerror(errno));
    if (oom_kills > 0)
        return om_skip(ctx, "mem_limit=%lld bytes is too small for the measuring process here: "
                            "the cgroup's OOM killer ended it (give a larger mem_limit=)", limit);
    if (error)
        return om_fail(ctx, "%s", error);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return om_fail(ctx, "the measuring process %s%s",
                       WIFSIGNALED(status) ? "was killed by signal " : "exited with status ",
                       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "1");
    return OM_OK;
}

/* ---- fs.frag.*: fragmentation and contention (von Leitner) ---------------------------- */

/* Number of extents of a file (FIEMAP), or -1 where unknown. */
#if defined(__linux__) && defined(FS_IOC_FIEMAP)
#define HAVE_FIEMAP 1
static long file_extents(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    struct fiemap fm = {.fm_start = 0, .fm_length = ~0ULL, .fm_flags = FIEMAP_FLAG_SYNC,
                        .fm_extent_count = 0};
    long n = ioctl(fd, FS_IOC_FIEMAP, &fm) == 0 ? (long)fm.fm_mapped_extents : -1;
    close(fd);
    return n;
}
#endif

/*
 * Write `size` bytes to each of the files in chunks.  Alone (one file, in order, one
 * fsync at the end) the file system can lay the file out in one piece.  Interleaved (two
 * files, as a BitTorrent client writes two downloads: pieces arriving in random order,
 * each forced to disk before the next, so delayed allocation cannot tidy them up) the
 * files' pieces are allocated alternately and out of order.
 */
static int write_files(const char *paths[], int nfiles, long long size, size_t chunk, char *buf,
                       int interleaved)
{
    int fds[2];
    long long nchunks = size / (long long)chunk;
    long long *order = malloc((size_t)nchunks * sizeof *order);
    if (!order)
        return -1;
    for (int f = 0; f < nfiles; f++)
        if ((fds[f] = open(paths[f], O_CREAT | O_TRUNC | O_WRONLY, 0600)) < 0) {
            while (f-- > 0)
                close(fds[f]);
            free(order);
            return -1;
        }
    for (long long i = 0; i < nchunks; i++)
        order[i] = i;
    uint64_t x = 88172645463325252ULL; /* the same piece order on every system */
    for (long long i = nchunks - 1; interleaved && i > 0; i--) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        long long j = (long long)(x % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    int bad = 0;
    for (long long i = 0; i < nchunks && !bad; i++)
        for (int f = 0; f < nfiles && !bad; f++) {
            off_t off = (off_t)order[i] * (off_t)chunk;
            bad = pwrite(fds[f], buf, chunk, off) != (ssize_t)chunk ||
                  (interleaved && fsync(fds[f]) != 0);
        }
    for (int f = 0; f < nfiles; f++)
        bad |= fsync(fds[f]) != 0 || close(fds[f]) != 0;
    free(order);
    return bad ? -1 : 0;
}

struct reader {
    const char *path;
    size_t chunk;
    long long bytes;
    uint64_t ns;
    int failed;
};

static void *read_file(void *arg)
{
    struct reader *r = arg;
    char *buf = malloc(r->chunk);
    int fd = open(r->path, O_RDONLY);
    uint64_t t0 = om_now_ns();
    r->bytes = 0;
    ssize_t got = -1;
    while (buf && fd >= 0 && (got = read(fd, buf, r->chunk)) > 0)
        r->bytes += got;
    r->ns = om_now_ns() - t0;
    r->failed = !buf || fd < 0 || got < 0;
    if (fd >= 0)
        close(fd);
    free(buf);
    return NULL;
}

/* Drop the files from the cache; skip (rather than time the page cache) if they stay. */
static int frag_cold(struct om_ctx *ctx, enum cache_mode mode, const char *paths[], int n,
                     const char *dir)
{
    for (int i = 0; i < n; i++) {
        double pct = drop_file_cache(mode, paths[i]);
        if (pct == -2)
            return om_fail(ctx, "dropping %s from the page cache: %s", paths[i], strerror(errno));
        int rc = skip_if_still_cached(ctx, mode, pct, dir);
        if (rc)
            return rc;
    }
    return OM_OK;
}

/* Time readers of the files at once; sample each reader's throughput (MB/s). */
static int frag_read(struct om_ctx *ctx, const char *paths[], int n, size_t chunk,
                     long long size, double mbps_out[])
{
    struct reader r[2];
    pthread_t th[2];
    for (int i = 0; i < n; i++) {
        r[i] = (struct reader){.path = paths[i], .chunk = chunk};
        if (pthread_create(&th[i], NULL, read_file, &r[i]) != 0) {
            for (int j = 0; j < i; j++)
                pthread_join(th[j], NULL);
            return om_fail(ctx, "pthread_create failed");
        }
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++) {
        if (r[i].failed || r[i].bytes != size)
            return om_fail(ctx, "reading %s: got %lld of %lld bytes", paths[i], r[i].bytes, size);
        mbps_out[i] = mbps(size, r[i].ns);
    }
    return OM_OK;
}

static int frag_setup(struct om_ctx *ctx, int nfiles, char dir[], long long *size,
                      size_t *chunk, char **buf, enum cache_mode *mode)
{
    *mode = cache_mode(ctx);
    if (*mode != CACHE_FADVISE && *mode != CACHE_DROP)
        return om_bad_param(ctx, "cache: fs.frag.* needs fadvise or drop_caches");
    int rc = cache_check(ctx, *mode, 1);
    if (rc)
        return rc;
    *chunk = (size_t)om_int(ctx, "chunk");
    *size = om_int(ctx, "size") / (long long)*chunk * (long long)*chunk;
    if (*size == 0)
        return om_bad_param(ctx, "size must be at least one chunk (%zu bytes)", *chunk);
    if ((rc = fs_workdir(ctx, nfiles * *size, dir, PATH_MAX)) ||
        (rc = skip_on_zfs(ctx, dir, 1)))
        return rc;
    if (!(*buf = malloc(*chunk)))
        return om_fail(ctx, "out of memory");
    memset(*buf, 'f', *chunk);
    om_note(ctx, "cache", "%s", cache_how(*mode));
    return OM_OK;
}

static int run_frag_layout(struct om_ctx *ctx)
{
    char dir[PATH_MAX], a[PATH_MAX + 64], b[PATH_MAX + 64], c[PATH_MAX + 64];
    long long size;
    size_t chunk;
    char *buf = NULL;
    enum cache_mode mode;
    int rc = frag_setup(ctx, 3, dir, &size, &chunk, &buf, &mode);
    if (rc)
        return rc;
    snprintf(a, sizeof a, "%s/contiguous", dir);
    snprintf(b, sizeof b, "%s/interleaved", dir);
    snprintf(c, sizeof c, "%s/interleaved-other", dir);
    const char *contig[] = {a}, *inter[] = {b, c};
    if (write_files(contig, 1, size, chunk, buf, 0) || write_files(inter, 2, size, chunk, buf, 1)) {
        free(buf);
        return om_fail(ctx, "writing the test files in %s: %s", dir, strerror(errno));
    }
    unlink(c); /* only its pieces' place between the other file's mattered */
    free(buf);
#ifdef HAVE_FIEMAP
    om_note(ctx, "extents", "contiguous file: %ld, interleaved file: %ld (FIEMAP; -1 = unknown)",
            file_extents(a), file_extents(b));
#elif defined(__linux__)
    om_note(ctx, "extents", "not counted: this build has no FIEMAP (<linux/fiemap.h>)");
#else
    om_note(ctx, "extents", "not counted: FIEMAP is a Linux facility");
#endif
    size_t rchunk = (size_t)om_int(ctx, "read_block");
    for (long long s = 0; s < om_int(ctx, "samples"); s++) {
        double v;
        if ((rc = frag_cold(ctx, mode, contig, 1, dir)) ||
            (rc = frag_read(ctx, contig, 1, rchunk, size, &v)))
            return rc;
        om_sample(ctx, "contiguous", OM_NO_X, v);
        const char *one[] = {b};
        if ((rc = frag_cold(ctx, mode, one, 1, dir)) ||
            (rc = frag_read(ctx, one, 1, rchunk, size, &v)))
            return rc;
        om_sample(ctx, "interleaved", OM_NO_X, v);
    }
    return OM_OK;
}

static int run_frag_contention(struct om_ctx *ctx)
{
    char dir[PATH_MAX], a[PATH_MAX + 64], b[PATH_MAX + 64];
    long long size;
    size_t chunk;
    char *buf = NULL;
    enum cache_mode mode;
    int rc = frag_setup(ctx, 2, dir, &size, &chunk, &buf, &mode);
    if (rc)
        return rc;
    snprintf(a, sizeof a, "%s/first", dir);
    snprintf(b, sizeof b, "%s/second", dir);
    const char *first[] = {a}, *second[] = {b}, *both[] = {a, b};
    /* Each file written alone (contiguous), one after the other. */
    rc = write_files(first, 1, size, chunk, buf, 0) || write_files(second, 1, size, chunk, buf, 0);
    free(buf);
    if (rc)
        return om_fail(ctx, "writing the test files in %s: %s", dir, strerror(errno));
    size_t rchunk = (size_t)om_int(ctx, "read_block");
    for (long long s = 0; s < om_int(ctx, "samples"); s++) {
        double v[2];
        if ((rc = frag_cold(ctx, mode, first, 1, dir)) ||
            (rc = frag_read(ctx, first, 1, rchunk, size, v)))
            return rc;
        om_sample(ctx, "alone", OM_NO_X, v[0]);
        if ((rc = frag_cold(ctx, mode, both, 2, dir)) ||
            (rc = frag_read(ctx, both, 2, rchunk, size, v)))
            return rc;
        om_sample(ctx, "with_second_reader", OM_NO_X, v[0]);
        om_sample(ctx, "second_reader", OM_NO_X, v[1]);
    }
    return OM_OK;
}

/* ---- the table ---------------------------------------------------------------------- */

#define BONNIE_PARAMS                                                                     \
    FS_DIR_PARAM,                                                                         \
    {"sizes", OM_LIST, "2m,10m,20m,50m,100m,1g", "4m,32m", "1m", 8192, 64LL << 30, NULL,  \
     "file sizes, bytes (LB96: 2-100 MB around a 32 MB cache)"},                          \
    {"block", OM_INT, "8k", NULL, NULL, 512, 16 << 20, NULL, "block size of block I/O"},  \
    {"samples", OM_INT, "1", NULL, NULL, 1, 1000, NULL,                                   \
     "passes over all sizes in one process (bonnie: one per invocation)"},                \
    {"fsync", OM_CHOICE, "yes", NULL, NULL, 0, 0, "yes|no",                                \
     "end writing passes with fsync (no = the original bonnie: writes may stay cached)"},  \
    CACHE_PARAM("fadvise")

#define BONNIE_BW(name, what)                                                             \
    {name, "MB/s", "higher", OM_SWEEP, "file_bytes", what " (MB = 2^20 bytes)"}

#define FRAG_PARAMS                                                                       \
    FS_DIR_PARAM,                                                                         \
    {"size", OM_INT, "650m", "32m", "2m", 64 << 10, 64LL << 30, NULL,                    \
     "bytes per file (VL03: a CD image)"},                                               \
    {"chunk", OM_INT, "256k", NULL, "64k", 4096, 64 << 20, NULL,                          \
     "bytes per piece written (a BitTorrent piece)"},                                      \
    {"read_block", OM_INT, "128k", NULL, NULL, 4096, 64 << 20, NULL, "bytes per read()"}, \
    {"samples", OM_INT, "3", "1", "1", 1, 1000, NULL, "cold reads of each kind"},          \
    CACHE_PARAM("fadvise")

const struct om_bench om_family_fs[] = {
    {"fs.crtdel", "create, write N bytes, close, reopen, read, close, delete a file",
     "O90 T10; LB96 §7.2 Fig 12", "quick,full,o90,lb96", {5.3, 0.41, 0.038}, run_crtdel,
     {FS_DIR_PARAM,
      {"sizes", OM_LIST, "0,1k,10k,100k,1m", NULL, "0,10k,100k", 0, 64 << 20, NULL,
       "bytes written and read back"},
      {"fsync", OM_CHOICE, "both", NULL, NULL, 0, 0, "both|without|with",
       "time the sequence without fsync, with fsync before close, or both"},
      {"samples", OM_INT, "10", "3", "2", 1, 100000, NULL, "batches timed; each is one sample"},
      {"batch_ms", OM_INT, "50", "10", "2", 1, 10000, NULL,
       "minimum duration of one timed batch (calibrated), ms"}},
     {{"sequence", "ms", "lower", OM_SWEEP, "bytes", "one create-use-delete sequence"},
      {"sequence_fsync", "ms", "lower", OM_SWEEP, "bytes",
       "the same with fsync() before the first close (durable data)"}}},
    {"fs.crtdel.batch", "create N files of a size, then delete them all (lmbench lat_fs)",
     "lmbench lat_fs", "full", {0.45, 3.1, 0.18}, run_crtdel_batch,
     {FS_DIR_PARAM,
      {"sizes", OM_LIST, "0,1k,4k,10k", NULL, "0,10k", 0, 1 << 20, NULL,
       "bytes written to each file (lmbench lat_fs: 0, 1, 4 and 10 KB)"},
      {"files", OM_INT, "1000", NULL, "100", 1, 1000000, NULL,
       "files created in each pass, then deleted (lmbench calibrates its count to time)"},
      {"per_dir", OM_INT, "100", NULL, NULL, 1, 1000000, NULL,
       "files to a directory, the directories made beforehand (lmbench lat_fs -n: 100)"},
      {"samples", OM_INT, "5", "3", "2", 1, 1000, NULL,
       "create and delete passes timed; each is one sample"}},
     {{"create", "us", "lower", OM_SWEEP, "bytes", "creat+write+close of one of N new files"},
      {"delete", "us", "lower", OM_SWEEP, "bytes", "unlink of one of the N, after all were "
                                                   "created"}}},
    {"fs.bonnie.write", "bonnie sequential write: per character (putc) and by block",
     "LB96 §7.1 Fig 10", "quick,full,lb96", {6.2, 0.2, 0.047}, run_bonnie_write, {BONNIE_PARAMS},
     {BONNIE_BW("per_char", "putc() of every byte"), BONNIE_BW("block", "write() of blocks")}},
    {"fs.bonnie.rewrite", "bonnie rewrite: read a block, change it, seek back, write it",
     "LB96 §7.1 (bonnie)", "quick,full,lb96", {4.6, 0.13, 0.013},
     run_bonnie_rewrite, {BONNIE_PARAMS},
     {BONNIE_BW("rewrite", "read+rewrite of every block")}},
    {"fs.bonnie.read", "bonnie sequential read, cold: per character (getc) and by block",
     "LB96 §7.1 Fig 9", "quick,full,lb96", {6.1, 0.19, 0.036}, run_bonnie_read, {BONNIE_PARAMS},
     {BONNIE_BW("per_char", "getc() of every byte"), BONNIE_BW("block", "read() of blocks")}},
    {"fs.bonnie.seek", "bonnie random seeks, cold: read a block at a random offset, write it back",
     "LB96 §7.1 Fig 11", "quick,full,lb96", {2.3, 0.1, 0.039}, run_bonnie_seek,
     {BONNIE_PARAMS, {"seeks", OM_INT, "4000", "500", "100", 1, 100000000, NULL,
                      "seeks per pass (bonnie: 4000)"}},
     {{"seeks", "seeks/s", "higher", OM_SWEEP, "file_bytes", "random block read+write-backs per second"}}},
    {"fs.bonnie.warm", "bonnie write and read with the page cache left warm, in a cgroup whose "
     "memory limit plays the machine's RAM (LB96's 'cached up to 20 MB of 32 MB')",
     "LB96 §7.1 Figs 9-10", "full,lb96", {0.64, 0.64, 0.14}, run_bonnie_warm,
     {FS_DIR_PARAM,
      {"sizes", OM_LIST, "2m,4m,8m,12m,16m,20m,24m,28m,32m,40m,50m,64m,100m", "4m,16m,32m,64m",
       "2m,16m", 8192, 64LL << 30, NULL, "file sizes, bytes: below and beyond mem_limit"},
      {"mem_limit", OM_INT, "32m", NULL, "8m", 0, 1LL << 40, NULL,
       "memory of the cgroup the measurement runs in (LB96: a 32 MB machine); 0 = no "
       "cgroup, the machine's whole page cache"},
      {"block", OM_INT, "8k", NULL, NULL, 512, 16 << 20, NULL, "block size of block I/O"},
      {"samples", OM_INT, "1", NULL, NULL, 1, 1000, NULL,
       "passes over all sizes in one process (bonnie: one per invocation)"}},
     {BONNIE_BW("write", "write() of blocks, no fsync"),
      BONNIE_BW("read", "read() of blocks right after the write"),
      {"resident", "%", "higher", OM_SWEEP, "file_bytes",
       "share of the file in the page cache after the read (mincore)"}}},
    {"fs.frag.layout", "cold sequential read of a file written alone vs one written as BitTorrent does",
     "VL03 (net.download_frag, local disk)", "quick,full,vl03", {7, 0.19, 0.64}, run_frag_layout,
     {FRAG_PARAMS},
     {{"contiguous", "MB/s", "higher", OM_POINT, NULL, "file written alone"},
      {"interleaved", "MB/s", "higher", OM_POINT, NULL,
       "file written piece by piece in random order, alternating with another file"}}},
    {"fs.frag.contention", "cold sequential read alone vs while a second reader reads another file",
     "VL03 (net.download_frag, local disk)", "quick,full,vl03", {4.3, 0.12, 0.05},
     run_frag_contention,
     {FRAG_PARAMS},
     {{"alone", "MB/s", "higher", OM_POINT, NULL, "the first reader alone"},
      {"with_second_reader", "MB/s", "higher", OM_POINT, NULL,
       "the first reader while a second reads another file"},
      {"second_reader", "MB/s", "higher", OM_POINT, NULL, "the second reader meanwhile"}}},
    {0},
};
