/*
 * Memory and file-cache bandwidth family: Lai & Baker's read/write/copy curves over buffer
 * size (hand-written loops against the C library's memcpy/memmove/memset, with software
 * prefetch and non-temporal stores where the CPU has them), Ousterhout's bcopy (Table 5)
 * and cached-file read (Table 6), and a random pointer chase for load latency.
 *
 * Bandwidth is MB/s with 1 MB = 10^6 bytes; a copy counts the bytes copied once (as Lai &
 * Baker and perf bench do: "160 MB/s copy = 320 MB/s total bandwidth").
 *
 * The hand-written loops access memory through volatile word pointers: that keeps the
 * compiler from vectorising them or recognising them as memcpy/memset (with gcc and clang
 * alike), so they are what their source says: two 8-byte words per iteration, 16 bytes,
 * then a byte-wise tail.  The C library is called through volatile function pointers, so
 * the calls are real calls into the library that the compiler can neither inline nor drop.
 *
 * One file, though long: every benchmark sizes itself by the same cache sizes and the
 * same sizes parameter, and runs the same loop kernels over the same buffers (the
 * page-cache reads fs.cache_read* too: their file is sized by the caches and read with
 * mem's kernels, so they measure memory bandwidth out of the page cache).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* _mm_stream_si64 came with GCC 4.6 (NetBSD 6's compiler is GCC 4.5): mem.*.nt skip
 * without it. */
#if defined(__x86_64__) && defined(__SSE2__) &&                                             \
    (defined(__clang__) || __GNUC__ > 4 || (__GNUC__ == 4 && __GNUC_MINOR__ >= 6))
#include <emmintrin.h>
#define HAVE_NT_STORES 1
#endif

#include "../harness.h"
#include "../lib/pagecache.h"

#define DEFAULT_LLC (64LL << 20) /* when the system does not say */
#define LINE 64                  /* cache-line size assumed by the prefetching loops */
#define PREFETCH_AHEAD 512       /* bytes ahead of the current line that they prefetch */
#define SLACK 4096               /* extra bytes after each buffer (memmove's overlap) */
#define MEMMOVE_SHIFT 64         /* memmove's destination lies this far above its source */

/* ---- cache sizes ------------------------------------------------------------------ */

struct caches {
    long long level[4]; /* data or unified cache size per level 1..3, 0 = unknown */
    long long llc;      /* last-level cache size used for the sweep */
    const char *source;
};

#ifdef __linux__
static long long sys_cache_value(int index, const char *what, char *text, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index, what);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(text, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    text[strcspn(text, "\n")] = 0;
    char *end;
    long long v = strtoll(text, &end, 10);
    if (*end == 'K')
        v <<= 10;
    else if (*end == 'M')
        v <<= 20;
    return v;
}
#endif

/* /sys first: glibc's sysconf() derives the sizes from CPUID and can be wrong under a
 * hypervisor (on the machine this was written on it says 320 MB of L3 where the kernel
 * says 32 MB). */
static void read_caches(struct om_ctx *ctx, struct caches *c)
{
    memset(c, 0, sizeof *c);
#ifdef __linux__
    for (int i = 0; i < 16; i++) {
        char type[64];
        long long level = sys_cache_value(i, "level", type, sizeof type);
        if (level < 0)
            break;
        if (sys_cache_value(i, "type", type, sizeof type) == -1 || strcmp(type, "Instruction") == 0)
            continue;
        long long size = sys_cache_value(i, "size", type, sizeof type);
        if (level >= 1 && level <= 3 && size > 0)
            c->level[level] = size;
    }
    if (c->level[1] || c->level[2] || c->level[3])
        c->source = "/sys/devices/system/cpu/cpu0/cache";
#endif
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
    long long sc[4] = {0, sysconf(_SC_LEVEL1_DCACHE_SIZE), sysconf(_SC_LEVEL2_CACHE_SIZE),
                       sysconf(_SC_LEVEL3_CACHE_SIZE)};
    for (int l = 1; l <= 3; l++) {
        if (!c->source && sc[l] > 0)
            c->level[l] = sc[l];
        else if (c->source && sc[l] > 0 && sc[l] != c->level[l])
            om_note(ctx, "cache_disagreement", "sysconf says L%d = %lld bytes, %s says %lld; using the latter",
                    l, sc[l], c->source, c->level[l]);
    }
    if (!c->source && (c->level[1] || c->level[2] || c->level[3]))
        c->source = "sysconf";
#endif
    for (int l = 1; l <= 3; l++)
        if (c->level[l])
            c->llc = c->level[l];
    if (!c->llc) {
        c->llc = DEFAULT_LLC;
        c->source = "unknown";
        om_note(ctx, "cache_sizes", "the system does not report its cache sizes; assuming a "
                "%lld-byte last-level cache", DEFAULT_LLC);
    } else {
        om_note(ctx, "cache_sizes", "L1d %lld, L2 %lld, L3 %lld bytes (from %s; 0 = none)",
                c->level[1], c->level[2], c->level[3], c->source);
    }
}

/* The largest single buffer we allow: a sixteenth of physical memory, so that even the
 * two buffers of a copy stay far from exhausting a shared machine. */
static long long max_buffer(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 256LL << 20;
    return (long long)pages * page / 16;
}

/* ---- the sizes parameter ------------------------------------------------------------- */

static int parse_size(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno)
        return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    }
    if (*end || v <= 0)
        return -1;
    *out = v;
    return 0;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static int sort_unique(long long *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_ll);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || v[i] != v[m - 1])
            v[m++] = v[i];
    return m;
}

#define MAX_SIZES 128

/*
 * "auto": 512 bytes to 4 x the last-level cache in steps of sqrt(2) (powers of two and
 * 1.5 times them), plus a few sizes 15 bytes past a power of two, where Lai & Baker's
 * byte-wise tail is longest.  "pow2": the powers of two of that range (the quick suite's
 * sweep).  "levels": two sizes well inside each cache level (1/8 and
 * 1/4 of it) and two beyond the last (2 and 4 times).
 * Otherwise a comma list of sizes (k/m/g suffixes).  Returns the count, or -1 after
 * reporting a bad parameter.
 */
static int resolve_sizes(struct om_ctx *ctx, const struct caches *c, int with_odd,
                         long long min_size, long long *out)
{
    const char *spec = om_str(ctx, "sizes");
    long long limit = max_buffer();
    int n = 0;
    if (strcmp(spec, "auto") == 0 || strcmp(spec, "pow2") == 0 || strcmp(spec, "levels") == 0) {
        long long top = 4 * c->llc;
        if (top > limit) {
            om_note(ctx, "sweep_limited", "4 x LLC = %lld bytes exceeds 1/16 of physical "
                    "memory; the sweep stops at %lld", top, limit);
            top = limit;
        }
        if (spec[0] == 'a' || spec[0] == 'p') {
            for (long long s = 512; s <= top && n < MAX_SIZES - 6; s *= 2) {
                out[n++] = s;
                if (spec[0] == 'a' && s * 3 / 2 <= top)
                    out[n++] = s * 3 / 2;
            }
            static const long long odd[] = {512 + 15, 1024 + 15, 4096 + 15, 65536 + 15};
            for (int i = 0; with_odd && spec[0] == 'a' && i < 4; i++)
                if (odd[i] <= top)
                    out[n++] = odd[i];
        } else {
            for (int l = 1; l <= 3; l++)
                if (c->level[l]) {
                    out[n++] = c->level[l] / 8;
                    out[n++] = c->level[l] / 4;
                }
            out[n++] = top / 2;
            out[n++] = top;
        }
    } else {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", spec);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            if (n >= MAX_SIZES)
                return om_bad_param(ctx, "sizes: more than %d sizes", MAX_SIZES), -1;
            if (parse_size(tok, &out[n]))
                return om_bad_param(ctx, "sizes: '%s' is not a size (use auto, levels or a "
                                    "comma list like 4k,64k,1m)", tok), -1;
            if (out[n] < min_size || out[n] > limit)
                return om_bad_param(ctx, "sizes: %lld is outside [%lld, %lld] (1/16 of "
                                    "physical memory)", out[n], min_size, limit), -1;
            n++;
        }
        if (n == 0)
            return om_bad_param(ctx, "sizes: empty list"), -1;
    }
    for (int i = 0; i < n; i++)
        if (out[i] < min_size)
            out[i] = min_size;
    n = sort_unique(out, n);
    char list[2048];
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof list - 24; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%lld", i ? "," : "", out[i]);
    om_note(ctx, "sizes", "%s", list);
    return n;
}

/* ---- buffers ------------------------------------------------------------------------ */

/* A buffer whose pages are all present and hold non-zero data, so that no page fault or
 * shared zero page is ever timed.  Returns OM_OK with *out to free(), or the result of
 * om_skip() when memory or a limit (RLIMIT_AS, RLIMIT_DATA) refuses it. */
static int alloc_buffer(struct om_ctx *ctx, size_t size, char **out)
{
    void *p = NULL;
    int err = posix_memalign(&p, 4096, size + SLACK);
    if (err)
        return om_skip(ctx, "cannot allocate %zu bytes: %s (lower the sizes)", size + SLACK,
                       strerror(err));
    memset(p, 0x5a, size + SLACK);
    *out = p;
    return OM_OK;
}

/* Two buffers of `size`, or one used twice when `two` is 0. */
static int alloc_pair(struct om_ctx *ctx, size_t size, int two, char **src, char **dst)
{
    int rc = alloc_buffer(ctx, size, src);
    if (rc)
        return rc;
    *dst = *src;
    if (two && (rc = alloc_buffer(ctx, size, dst)))
        free(*src);
    return rc;
}

/* ---- the loops ------------------------------------------------------------------------ */

/* One pass of a kernel over n bytes; returns something derived from what it did. */
typedef uint64_t (*kernel_fn)(char *dst, char *src, size_t n);

#define PATTERN 0x0123456789abcdefULL

/* The read loop the caches limit, not the loop itself: 128 bytes per iteration into eight
 * independent 16-byte sums (lmbench's rd unrolls likewise), so no load waits for an add
 * and every byte is read.  GCC and clang map the vector type to SSE2, NEON, ... or plain
 * words where a CPU has no vectors. */
typedef uint64_t vec2 __attribute__((vector_size(16), may_alias));
typedef uint64_t word __attribute__((may_alias));

static uint64_t k_read(char *dst, char *src, size_t n)
{
    const vec2 *p = (const vec2 *)src; /* buffers are page-aligned */
    vec2 s0 = {0, 0}, s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    for (size_t i = 0; i < n / 128; i++, p += 8) {
        s0 += p[0], s1 += p[1], s2 += p[2], s3 += p[3];
        s4 += p[4], s5 += p[5], s6 += p[6], s7 += p[7];
    }
    vec2 s = (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7);
    uint64_t lanes[2]; /* not s[0] + s[1]: subscripting a vector needs GCC 4.6 */
    memcpy(lanes, &s, sizeof lanes);
    uint64_t acc = lanes[0] + lanes[1];
    const word *w = (const word *)(src + n / 128 * 128);
    for (size_t i = 0; i < n % 128 / 8; i++)
        acc += w[i];
    for (size_t i = n / 8 * 8; i < n; i++)
        acc += (unsigned char)src[i];
    return acc;
}

/* Lai & Baker's read loop (§6.4): two 8-byte words, 16 bytes per iteration, then a
 * byte-wise tail for the last 0-15 bytes.  On a 1995 Pentium the caches limited it; on
 * today's CPUs the loop does (it is flat from L1 to L2), so it is kept as mem.read.lb96. */
static uint64_t k_read_lb96(char *dst, char *src, size_t n)
{
    const volatile uint64_t *p = (const volatile uint64_t *)src;
    size_t words = n / 16 * 2;
    uint64_t a = 0, b = 0; /* two sums so the adds don't serialise the loads */
    for (size_t i = 0; i < words; i += 2) {
        a += p[i];
        b += p[i + 1];
    }
    const volatile unsigned char *t = (const volatile unsigned char *)src + words * 8;
    for (size_t i = 0; i < n % 16; i++)
        a += t[i];
    return a + b;
}

static uint64_t tail_write(char *dst, size_t n)
{
    volatile unsigned char *t = (volatile unsigned char *)dst + n / 16 * 16;
    for (size_t i = 0; i < n % 16; i++)
        t[i] = (unsigned char)i;
    return n;
}

static uint64_t tail_copy(char *dst, const char *src, size_t n)
{
    volatile unsigned char *t = (volatile unsigned char *)dst + n / 16 * 16;
    const volatile unsigned char *s = (const volatile unsigned char *)src + n / 16 * 16;
    for (size_t i = 0; i < n % 16; i++)
        t[i] = s[i];
    return n;
}

static uint64_t k_write(char *dst, char *src, size_t n)
{
    volatile uint64_t *q = (volatile uint64_t *)dst;
    size_t words = n / 16 * 2;
    for (size_t i = 0; i < words; i += 2) {
        q[i] = PATTERN;
        q[i + 1] = PATTERN;
    }
    return tail_write(dst, n);
}

/* Prefetch the line PREFETCH_AHEAD bytes ahead, once per line, then write the line in
 * four 16-byte steps.  (Lai & Baker's Pentium had no write-allocate: the prefetch brought
 * the line in before the writes.  Prefetches past the end of the buffer cannot fault.) */
static uint64_t k_write_prefetch(char *dst, char *src, size_t n)
{
    volatile uint64_t *q = (volatile uint64_t *)dst;
    size_t lines = n / LINE;
    for (size_t l = 0; l < lines; l++, q += LINE / 8) {
        __builtin_prefetch(dst + l * LINE + PREFETCH_AHEAD, 1);
        for (int i = 0; i < LINE / 8; i += 2) {
            q[i] = PATTERN;
            q[i + 1] = PATTERN;
        }
    }
    for (size_t i = 0; i < (n - lines * LINE) / 16 * 2; i += 2) {
        q[i] = PATTERN;
        q[i + 1] = PATTERN;
    }
    return tail_write(dst, n);
}

static uint64_t k_copy(char *dst, char *src, size_t n)
{
    volatile uint64_t *q = (volatile uint64_t *)dst;
    const volatile uint64_t *p = (const volatile uint64_t *)src;
    size_t words = n / 16 * 2;
    for (size_t i = 0; i < words; i += 2) {
        q[i] = p[i];
        q[i + 1] = p[i + 1];
    }
    return tail_copy(dst, src, n);
}

static uint64_t k_copy_prefetch(char *dst, char *src, size_t n)
{
    volatile uint64_t *q = (volatile uint64_t *)dst;
    const volatile uint64_t *p = (const volatile uint64_t *)src;
    size_t lines = n / LINE;
    for (size_t l = 0; l < lines; l++, q += LINE / 8, p += LINE / 8) {
        __builtin_prefetch(src + l * LINE + PREFETCH_AHEAD, 0);
        __builtin_prefetch(dst + l * LINE + PREFETCH_AHEAD, 1);
        for (int i = 0; i < LINE / 8; i += 2) {
            q[i] = p[i];
            q[i + 1] = p[i + 1];
        }
    }
    for (size_t i = 0; i < (n - lines * LINE) / 16 * 2; i += 2) {
        q[i] = p[i];
        q[i + 1] = p[i + 1];
    }
    return tail_copy(dst, src, n);
}

#ifdef HAVE_NT_STORES
/* Streaming (non-temporal) 8-byte stores: they bypass the caches and need no
 * read-for-ownership; the sfence makes them globally visible before the pass ends. */
static uint64_t k_write_nt(char *dst, char *src, size_t n)
{
    long long *q = (long long *)dst;
    size_t words = n / 16 * 2;
    for (size_t i = 0; i < words; i += 2) {
        _mm_stream_si64(q + i, (long long)PATTERN);
        _mm_stream_si64(q + i + 1, (long long)PATTERN);
    }
    _mm_sfence();
    return tail_write(dst, n);
}

static uint64_t k_copy_nt(char *dst, char *src, size_t n)
{
    long long *q = (long long *)dst;
    const volatile long long *p = (const volatile long long *)src;
    size_t words = n / 16 * 2;
    for (size_t i = 0; i < words; i += 2) {
        _mm_stream_si64(q + i, p[i]);
        _mm_stream_si64(q + i + 1, p[i + 1]);
    }
    _mm_sfence();
    return tail_copy(dst, src, n);
}
#endif

/* The C library's own routines, through pointers the compiler cannot see through. */
static void *(*volatile libc_memcpy)(void *, const void *, size_t) = memcpy;
static void *(*volatile libc_memmove)(void *, const void *, size_t) = memmove;
static void *(*volatile libc_memset)(void *, int, size_t) = memset;

static uint64_t k_memcpy(char *dst, char *src, size_t n)
{
    libc_memcpy(dst, src, n);
    return (unsigned char)dst[n - 1];
}

/* Overlapping, destination above source: the backward path that only memmove has. */
static uint64_t k_memmove(char *dst, char *src, size_t n)
{
    libc_memmove(src + MEMMOVE_SHIFT, src, n);
    return (unsigned char)src[n - 1];
}

/* The byte memset writes: 0x3c by default; byte=0 is lmbench's bzero, which some machines
 * write much faster (zeros at 58-67 GB/s, other bytes at 26-28 GB/s on the VM of issue
 * 30), so the two are not compared with each other. */
static int memset_byte = 0x3c;

static uint64_t k_memset(char *dst, char *src, size_t n)
{
    libc_memset(dst, memset_byte, n);
    return (unsigned char)dst[n - 1];
}

/* bcopy is the 4.2BSD routine Ousterhout timed; gone from POSIX 2008 but still in every C
 * library we know of (strings.h).  Called as the program would call it. */
static void (*volatile libc_bcopy)(const void *, void *, size_t) = bcopy;

static uint64_t k_bcopy(char *dst, char *src, size_t n)
{
    libc_bcopy(src, dst, n);
    return (unsigned char)dst[n - 1];
}

/* ---- bandwidth sweep --------------------------------------------------------------- */

struct pass_arg {
    kernel_fn kernel;
    char *dst, *src;
    size_t n;
};

static uint64_t run_passes(void *arg, uint64_t passes)
{
    struct pass_arg *a = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < passes; i++)
        acc += a->kernel(a->dst, a->src, a->n);
    return acc;
}

/* Time `samples` batches of passes over n bytes, each batch moving at least `total` bytes
 * (Lai & Baker moved 8 MB per size), after one untimed batch; emits MB/s at x. */
static int measure_bandwidth(struct om_ctx *ctx, const char *metric, long long x,
                             struct pass_arg *a, long long total)
{
    struct om_measure m = {.metric = metric, .x = x, .rate = (double)a->n * 1e3, .note = "",
                           .iters = (uint64_t)((total + (long long)a->n - 1) / (long long)a->n)};
    return om_measure_batches(ctx, run_passes, a, &m);
}

/* nbuf: 1 = one buffer (read, write, memset, memmove), 2 = a source and a destination. */
static int run_sweep(struct om_ctx *ctx, kernel_fn kernel, int nbuf)
{
    struct caches c;
    read_caches(ctx, &c);
    long long sizes[MAX_SIZES];
    int n = resolve_sizes(ctx, &c, 1, 16, sizes);
    if (n < 0)
        return OM_BADPARAM;
    long long total = om_int(ctx, "total");
    size_t cap = (size_t)sizes[n - 1];
    char *src, *dst;
    int rc = alloc_pair(ctx, cap, nbuf > 1, &src, &dst);
    if (rc)
        return rc;
    om_note(ctx, "method", "each sample times passes over the buffer until >= %lld bytes "
            "have moved, after one untimed batch", total);
    for (int i = 0; i < n && rc == OM_OK; i++) {
        struct pass_arg a = {kernel, dst, src, (size_t)sizes[i]};
        rc = measure_bandwidth(ctx, "bandwidth", sizes[i], &a, total);
    }
    if (dst != src)
        free(dst);
    free(src);
    return rc;
}

static int run_read(struct om_ctx *ctx) { return run_sweep(ctx, k_read, 1); }
static int run_read_lb96(struct om_ctx *ctx) { return run_sweep(ctx, k_read_lb96, 1); }
static int run_write(struct om_ctx *ctx) { return run_sweep(ctx, k_write, 1); }
static int run_write_prefetch(struct om_ctx *ctx) { return run_sweep(ctx, k_write_prefetch, 1); }
static int run_copy(struct om_ctx *ctx) { return run_sweep(ctx, k_copy, 2); }
static int run_copy_prefetch(struct om_ctx *ctx) { return run_sweep(ctx, k_copy_prefetch, 2); }
static int run_memcpy(struct om_ctx *ctx) { return run_sweep(ctx, k_memcpy, 2); }
static int run_memmove(struct om_ctx *ctx) { return run_sweep(ctx, k_memmove, 1); }
static int run_memset(struct om_ctx *ctx)
{
    memset_byte = (int)om_int(ctx, "byte");
    om_note(ctx, "byte", "0x%02x%s", memset_byte, memset_byte ? "" : " (lmbench's bzero)");
    return run_sweep(ctx, k_memset, 1);
}

static int run_write_nt(struct om_ctx *ctx)
{
#ifdef HAVE_NT_STORES
    return run_sweep(ctx, k_write_nt, 1);
#else
    return om_skip(ctx, "no non-temporal store instruction known for this CPU/compiler");
#endif
}

static int run_copy_nt(struct om_ctx *ctx)
{
#ifdef HAVE_NT_STORES
    return run_sweep(ctx, k_copy_nt, 2);
#else
    return om_skip(ctx, "no non-temporal store instruction known for this CPU/compiler");
#endif
}

/* ---- Ousterhout's bcopy, Table 5 ---------------------------------------------------- */

/* "auto" or a size; returns -1 after reporting a bad parameter. */
static long long size_param(struct om_ctx *ctx, const char *name, long long automatic)
{
    const char *v = om_str(ctx, name);
    long long s;
    if (strcmp(v, "auto") == 0)
        return automatic;
    if (parse_size(v, &s) || s < 16 || s > max_buffer())
        return om_bad_param(ctx, "%s: '%s' is not auto or a size in [16, %lld]", name, v,
                            max_buffer()), -1;
    return s;
}

static int run_bcopy(struct om_ctx *ctx)
{
    struct caches c;
    read_caches(ctx, &c);
    long long l1 = c.level[1] ? c.level[1] : 32768;
    long long cached = size_param(ctx, "cached_size", l1 / 4);
    if (cached < 0)
        return OM_BADPARAM;
    long long uncached = size_param(ctx, "uncached_size", 4 * c.llc < max_buffer() ? 4 * c.llc
                                                                                    : max_buffer());
    if (uncached < 0)
        return OM_BADPARAM;
    om_note(ctx, "blocks", "cached: %lld bytes, uncached: %lld bytes (L1d %lld, LLC %lld)",
            cached, uncached, c.level[1], c.llc);
    size_t cap = (size_t)(cached > uncached ? cached : uncached);
    char *src, *dst;
    int rc = alloc_pair(ctx, cap, 1, &src, &dst);
    if (rc)
        return rc;
    long long total = om_int(ctx, "total");
    struct pass_arg hot = {k_bcopy, dst, src, (size_t)cached};
    struct pass_arg cold = {k_bcopy, dst, src, (size_t)uncached};
    rc = measure_bandwidth(ctx, "cached", OM_NO_X, &hot, total);
    if (rc == OM_OK)
        rc = measure_bandwidth(ctx, "uncached", OM_NO_X, &cold, total);
    free(src);
    free(dst);
    return rc;
}

/* ---- load latency: a random pointer chase --------------------------------------------- */

struct chase {
    void **p; /* where the chase stands; kept across batches */
};

static uint64_t chase_loads(void *arg, uint64_t loads)
{
    struct chase *c = arg;
    void **p = c->p;
    for (uint64_t i = 0; i < loads; i++)
        p = (void **)*p;
    c->p = p;
    return (uint64_t)(uintptr_t)p;
}

static uint64_t next_random(uint64_t *s) /* xorshift64: fixed seed, same chain every run */
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Link one pointer per `stride` bytes of buf into a single cycle in random order, so each
 * load depends on the one before and no prefetcher can guess the next address. */
static int build_chain(char *buf, size_t elements, size_t stride, uint64_t *seed)
{
    size_t *order = malloc(elements * sizeof *order);
    if (!order)
        return -1;
    for (size_t i = 0; i < elements; i++)
        order[i] = i;
    for (size_t i = elements - 1; i > 0; i--) { /* Fisher-Yates */
        size_t j = (size_t)(next_random(seed) % (i + 1));
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < elements; i++)
        *(void **)(buf + order[i] * stride) = buf + order[(i + 1) % elements] * stride;
    free(order);
    return 0;
}

static int run_latency(struct om_ctx *ctx)
{
    struct caches c;
    read_caches(ctx, &c);
    long long stride = om_int(ctx, "stride");
    long long sizes[MAX_SIZES];
    int n = resolve_sizes(ctx, &c, 0, 2 * stride, sizes);
    if (n < 0)
        return OM_BADPARAM;
    double batch_ms = (double)om_int(ctx, "batch_ms");
    char *buf;
    int rc = alloc_buffer(ctx, (size_t)sizes[n - 1], &buf);
    if (rc)
        return rc;
    om_note(ctx, "method", "one pointer per %lld bytes, linked in random order into one "
            "cycle; batches of dependent loads calibrated to >= %.0f ms", stride, batch_ms);
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < n && rc == OM_OK; i++) {
        size_t elements = (size_t)(sizes[i] / stride);
        if (build_chain(buf, elements, (size_t)stride, &seed)) {
            rc = om_skip(ctx, "cannot allocate the permutation of %zu elements", elements);
            break;
        }
        struct chase ch = {(void **)buf};
        /* Warm-up: a lap brings a chain that fits into the caches; beyond the last-level
         * cache, as many loads as it has lines reach the steady state of misses. */
        size_t llc_lines = (size_t)(c.llc / stride);
        chase_loads(&ch, elements < llc_lines ? elements : llc_lines);
        struct om_measure m = {.metric = "latency", .x = sizes[i], .note = "",
                               .warmed_up = 1 /* the lap above and the calibration */};
        rc = om_measure_batches(ctx, chase_loads, &ch, &m);
    }
    free(buf);
    return rc;
}

/* ---- reading a file from the page cache ------------------------------------------- */

/* Create the file under the scratch directory, write it, flush it to the disk so no
 * write-back runs while we time, and leave it open in *fd. */
static int make_cached_file(struct om_ctx *ctx, long long size, char *path, size_t pathlen,
                            int *fd_out)
{
    const char *dir = om_scratch_dir();
    if (!dir)
        return om_fail(ctx, "cannot create a scratch directory: %s", strerror(errno));
    struct statvfs vfs;
    if (statvfs(dir, &vfs) == 0 && (long long)vfs.f_bavail * (long long)vfs.f_frsize < 4 * size)
        return om_skip(ctx, "less than 4 x %lld bytes free in %s", size, dir);
    snprintf(path, pathlen, "%s/cache_read.dat", dir);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    if (fd < 0)
        return om_fail(ctx, "create %s: %s", path, strerror(errno));
    char block[65536];
    memset(block, 0x5a, sizeof block);
    for (long long done = 0; done < size; done += (long long)sizeof block) {
        size_t len = size - done < (long long)sizeof block ? (size_t)(size - done) : sizeof block;
        if (om_write_full(fd, block, len)) {
            int rc = om_fail(ctx, "write %s: %s", path, strerror(errno));
            close(fd);
            return rc;
        }
    }
    if (fsync(fd)) {
        int rc = om_fail(ctx, "fsync %s: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    om_note(ctx, "file", "%s, %lld bytes", path, size);
    *fd_out = fd;
    return OM_OK;
}

struct file_arg {
    int fd;
    long long size;  /* of the file */
    size_t block;    /* bytes per read() or per mapping */
    char *buf;       /* the user buffer read() fills, reused (stays in the CPU cache) */
    struct om_fault fault;
};

/* One pass: read the whole file in blocks of a->block bytes. */
static uint64_t read_file_pass(void *arg, uint64_t passes)
{
    struct file_arg *a = arg;
    uint64_t acc = 0;
    for (uint64_t p = 0; p < passes; p++)
        for (long long off = 0; off < a->size; off += (long long)a->block) {
            size_t len = a->size - off < (long long)a->block ? (size_t)(a->size - off) : a->block;
            ssize_t got = pread(a->fd, a->buf, len, (off_t)off);
            if (got != (ssize_t)len) {
                om_record_fault(&a->fault, got < 0 ? errno : 0, got < 0 ? "pread" : "short read");
                return acc;
            }
            acc += (unsigned char)a->buf[0];
        }
    return acc;
}

/* One pass: map the file a->block bytes at a time, read every word, unmap. */
static uint64_t mmap_file_pass(void *arg, uint64_t passes)
{
    struct file_arg *a = arg;
    uint64_t acc = 0;
    for (uint64_t p = 0; p < passes; p++)
        for (long long off = 0; off < a->size; off += (long long)a->block) {
            size_t len = a->size - off < (long long)a->block ? (size_t)(a->size - off) : a->block;
            char *m = mmap(NULL, len, PROT_READ, MAP_SHARED, a->fd, (off_t)off);
            if (m == MAP_FAILED) {
                om_record_fault(&a->fault, errno, "mmap");
                return acc;
            }
            acc += k_read(NULL, m, len);
            munmap(m, len);
        }
    return acc;
}

static int run_file_read(struct om_ctx *ctx, om_batch_fn pass, int page_multiple)
{
    struct caches c;
    read_caches(ctx, &c);
    long long size = size_param(ctx, "file_size", 2 * c.llc);
    if (size < 0)
        return OM_BADPARAM;
    long long blocks[OM_MAX_LIST];
    int nb = om_list(ctx, "blocks", blocks);
    long page = sysconf(_SC_PAGESIZE);
    long long largest = 0;
    for (int i = 0; i < nb; i++) {
        if (page_multiple && blocks[i] % page)
            return om_bad_param(ctx, "blocks: %lld is not a multiple of the page size (%ld)",
                                blocks[i], page);
        if (blocks[i] > size)
            return om_bad_param(ctx, "blocks: %lld is larger than file_size %lld", blocks[i],
                                size);
        if (blocks[i] > largest)
            largest = blocks[i];
    }
    char path[4096];
    int fd = -1, made = make_cached_file(ctx, size, path, sizeof path, &fd);
    if (made != OM_OK)
        return made;
    struct file_arg a = {fd, size, 0, malloc((size_t)largest), {0, NULL}};
    int rc = a.buf ? OM_OK : om_fail(ctx, "cannot allocate a %lld-byte buffer", largest);
    if (rc == OM_OK) {
        a.block = (size_t)largest;
        read_file_pass(&a, 1); /* bring every page into the page cache */
        double frac = pagecache_resident(fd, size);
        if (frac >= 0)
            om_note(ctx, "resident", "%.1f%% of the file in the page cache", 100 * frac);
        if (frac >= 0 && frac < 0.99)
            rc = om_skip(ctx, "only %.0f%% of the %lld-byte file stays in the page cache "
                         "(memory pressure?)", 100 * frac, size);
    }
    for (int i = 0; i < nb && rc == OM_OK; i++) {
        a.block = (size_t)blocks[i];
        char what[4200];
        snprintf(what, sizeof what, "reading %s in %lld-byte blocks", path, blocks[i]);
        struct om_measure m = {.metric = "bandwidth", .x = blocks[i], .iters = 1, .note = "",
                               .rate = (double)size * 1e3, .fault = &a.fault, .what = what};
        rc = om_measure_batches(ctx, pass, &a, &m);
    }
    free(a.buf);
    close(fd);
    if (unlink(path) && rc == OM_OK)
        rc = om_fail(ctx, "unlink %s: %s", path, strerror(errno));
    return rc;
}

static int run_cache_read(struct om_ctx *ctx) { return run_file_read(ctx, read_file_pass, 0); }
static int run_cache_read_mmap(struct om_ctx *ctx) { return run_file_read(ctx, mmap_file_pass, 1); }

/* ---- the table ------------------------------------------------------------------------ */

#define SIZES_PARAM                                                                        \
    {"sizes", OM_STR, "auto", "pow2", "4k,64k", 0, 0, NULL,                               \
     "buffer sizes: auto = 512 B to 4 x LLC in sqrt(2) steps plus 527,1039,4111,65551; "   \
     "pow2 = the powers of 2 of that range; levels = 1/8 and 1/4 of each cache, 2 and "    \
     "4 x LLC; or a list like 4k,64k,1m"}
#define SWEEP_PARAMS                                                                       \
    SIZES_PARAM,                                                                           \
    {"total", OM_INT, "8m", "8m", "2m", 4096, 1LL << 34, NULL,                             \
     "bytes moved per sample at each size, as LB96 (at least one pass; short batches "     \
     "dodge preemption on a busy machine, the median of the samples does the rest)"},     \
    {"samples", OM_INT, "7", "3", "2", 1, 1000, NULL, "timed samples per size"}
#define BANDWIDTH_METRIC(what)                                                             \
    {{"bandwidth", "MB/s", "higher", OM_SWEEP, "buffer_bytes",                           \
      what " per buffer size, MB/s (1 MB = 10^6 bytes)"}}
#define COPY_METRIC                                                                        \
    BANDWIDTH_METRIC("bytes copied (counted once, not read + write)")

const struct om_bench om_family_mem[] = {
    {"mem.read", "read bandwidth: sum every word, 128 bytes per iteration into 8 vector sums "
     "(the caches limit it, as lmbench's rd)",
     "LB96 §6.1 Fig 2; CC06 T2", "quick,full,lb96,cc06", {2.8, 1.2, 0.0086}, run_read,
     {SWEEP_PARAMS}, BANDWIDTH_METRIC("bytes read")},
    {"mem.read.lb96", "Lai & Baker's read loop: sum 8-byte words, 16 bytes per iteration, "
     "byte tail (today the loop, not the cache, limits it)",
     "LB96 §6.1 Fig 2, §6.4", "full,lb96", {3.6, 0.15, 0.012}, run_read_lb96,
     {SWEEP_PARAMS}, BANDWIDTH_METRIC("bytes read")},
    {"mem.write", "write bandwidth: store 8-byte words, 16 bytes per iteration, byte tail",
     "LB96 §6.2 Fig 4; CC06 T2", "quick,full,lb96,cc06", {3.7, 1.5, 0.015}, run_write,
     {SWEEP_PARAMS}, BANDWIDTH_METRIC("bytes written")},
    {"mem.write_prefetch", "write loop that prefetches each line 512 bytes ahead",
     "LB96 §6.2 Fig 5", "quick,full,lb96", {3.3, 1.4, 0.015}, run_write_prefetch,
     {SWEEP_PARAMS}, BANDWIDTH_METRIC("bytes written")},
    {"mem.write_nt", "write loop with non-temporal (streaming) stores, x86-64 only",
     "osmeter", "full", {2, 0.18, 0.011},
     run_write_nt, {SWEEP_PARAMS}, BANDWIDTH_METRIC("bytes written")},
    {"mem.copy", "copy loop: 8-byte words, 16 bytes per iteration, byte tail",
     "LB96 §6.3 Fig 7", "quick,full,lb96", {7.1, 3, 0.012},
     run_copy, {SWEEP_PARAMS}, COPY_METRIC},
    {"mem.copy_prefetch", "copy loop that prefetches source and destination 512 bytes ahead",
     "LB96 §6.3 Fig 8", "quick,full,lb96", {5.1, 2.2, 0.013}, run_copy_prefetch, {SWEEP_PARAMS},
     COPY_METRIC},
    {"mem.copy_nt", "copy loop with non-temporal (streaming) stores, x86-64 only",
     "osmeter", "full", {5.2, 0.3, 0.014}, run_copy_nt, {SWEEP_PARAMS}, COPY_METRIC},
    {"mem.memcpy", "the C library's memcpy between two buffers", "LB96 §6.3 Fig 6",
     "quick,full,lb96", {3.5, 1.8, 0.012}, run_memcpy, {SWEEP_PARAMS}, COPY_METRIC},
    {"mem.memmove", "the C library's memmove within one buffer, destination 64 bytes above "
     "the source (overlapping: the backward path)",
     "osmeter", "full", {2.6, 0.15, 0.0094}, run_memmove, {SWEEP_PARAMS}, COPY_METRIC},
    {"mem.memset", "the C library's memset", "LB96 §6.2 Fig 3", "quick,full,lb96", {2.8, 1.2, 0.013},
     run_memset, {SWEEP_PARAMS, {"byte", OM_INT, "60", NULL, NULL, 0, 255, NULL,
                                 "the byte written (0: lmbench's bzero; default 60 = 0x3c)"}},
     BANDWIDTH_METRIC("bytes set")},
    {"mem.bcopy", "library bcopy of blocks that fit in the cache and of blocks that don't",
     "O90 §7 T5", "quick,full,o90", {3, 2, 0.011}, run_bcopy,
     {{"cached_size", OM_STR, "auto", NULL, "4k", 0, 0, NULL,
       "block size that fits in the cache; auto = L1d/4 (source + destination = half L1d)"},
      {"uncached_size", OM_STR, "auto", NULL, "1m", 0, 0, NULL,
       "block size far beyond the caches; auto = 4 x LLC"},
      {"total", OM_INT, "256m", "128m", "1m", 4096, 1LL << 34, NULL,
       "bytes copied per sample (at least one pass)"},
      {"samples", OM_INT, "5", "3", "2", 1, 1000, NULL, "timed samples per block size"}},
     {{"cached", "MB/s", "higher", OM_POINT, NULL,
       "bcopy of blocks that fit in L1d, MB/s (1 MB = 10^6 bytes, bytes copied)"},
      {"uncached", "MB/s", "higher", OM_POINT, NULL,
       "bcopy of blocks 4 x LLC, MB/s (1 MB = 10^6 bytes, bytes copied)"}}},
    {"mem.latency", "load latency: dependent pointer chase in random order over a buffer "
     "(auto sizes without the odd ones)",
     "lmbench lat_mem_rd", "quick,full", {8.4, 4.8, 0.02}, run_latency,
     {SIZES_PARAM,
      {"stride", OM_INT, "64", NULL, NULL, 8, 4096, NULL,
       "bytes between pointers (one per cache line)"},
      {"samples", OM_INT, "5", "3", "2", 1, 1000, NULL, "timed batches per size"},
      {"batch_ms", OM_INT, "5", "5", "1", 1, 10000, NULL,
       "minimum duration of one timed batch of loads (calibrated), ms"}},
     {{"latency", "ns", "lower", OM_SWEEP, "buffer_bytes", "time per dependent load, ns"}}},
    {"fs.cache_read", "read() a page-cached file in blocks into one reused buffer",
     "O90 §8 T6", "quick,full,o90", {5.1, 1.3, 0.016}, run_cache_read,
     {{"file_size", OM_STR, "auto", NULL, "1m", 0, 0, NULL,
       "file size; auto = 2 x LLC (in the page cache, beyond the CPU caches)"},
      {"blocks", OM_LIST, "512,1k,4k,16k,64k,256k,1m", "4k,16k,64k", "16k", 1, 1LL << 30, NULL,
       "bytes per read() (O90: 16 KB)"},
      {"samples", OM_INT, "5", "3", "2", 1, 1000, NULL, "timed passes over the file per block size"}},
     {{"bandwidth", "MB/s", "higher", OM_SWEEP, "block_bytes",
       "file bytes read per second, MB/s (1 MB = 10^6 bytes)"}}},
    {"fs.cache_read_mmap", "mmap() a page-cached file a block at a time, read every word, munmap",
     "osmeter (O90 T6 via mmap)", "quick,full", {7.2, 1.7, 0.019}, run_cache_read_mmap,
     {{"file_size", OM_STR, "auto", NULL, "1m", 0, 0, NULL,
       "file size; auto = 2 x LLC (in the page cache, beyond the CPU caches)"},
      {"blocks", OM_LIST, "4k,16k,64k,256k,1m,4m", "16k,1m", "16k", 1, 1LL << 30, NULL,
       "bytes mapped at a time (multiples of the page size)"},
      {"samples", OM_INT, "5", "3", "2", 1, 1000, NULL, "timed passes over the file per block size"}},
     {{"bandwidth", "MB/s", "higher", OM_SWEEP, "block_bytes",
       "file bytes read per second, MB/s (1 MB = 10^6 bytes)"}}},
    {0},
};
