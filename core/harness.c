/*
 * The harness: parameters, JSON Lines output, the scratch directory, and cleaning up
 * at exit, on signals and when the front-end dies.  Timing is measure.c, children and
 * osmeter's own programs children.c, raising limits limits.c, CPU placement placement.c.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__FreeBSD__) || defined(__DragonFly__) || defined(__NetBSD__)
#include <sys/sysctl.h>
#endif
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "internal.h"

/* ---- output --------------------------------------------------------------------- */

void om_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* JSON has no NaN/Inf: a value that is not finite is a failure, never a number. */
static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

const struct om_metric *om_find_metric(const struct om_bench *b, const char *name)
{
    for (int i = 0; i < OM_MAX_METRICS && b->metrics[i].name; i++)
        if (strcmp(b->metrics[i].name, name) == 0)
            return &b->metrics[i];
    return NULL;
}

void om_sample(struct om_ctx *ctx, const char *metric, long long x, double value)
{
    if (!om_find_metric(ctx->bench, metric)) {
        /* A programming error in the family: refuse loudly rather than emit junk. */
        fprintf(stderr, "osmeter-core: %s: undeclared metric '%s'\n", ctx->bench->id, metric);
        om_exit(OM_FAILED);
    }
    if (!isfinite(value)) {
        om_fail(ctx, "%s: measured value is not a finite number", metric);
        om_exit(OM_FAILED);
    }
    printf("{\"type\":\"sample\",\"metric\":");
    om_json_string(stdout, metric);
    if (x == OM_NO_X)
        printf(",\"x\":null");
    else
        printf(",\"x\":%lld", x);
    printf(",\"value\":");
    json_number(stdout, value);
    printf("}\n");
    ctx->n_samples++;
}

static void vline(const char *type, const char *keyname, const char *key, const char *fmt,
                  va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    printf("{\"type\":\"%s\"", type);
    if (keyname) {
        printf(",\"%s\":", keyname);
        om_json_string(stdout, key);
    }
    printf(",\"%s\":", strcmp(type, "note") == 0 ? "value" : "reason");
    om_json_string(stdout, msg);
    printf("}\n");
    fflush(stdout);
    if (strcmp(type, "note") != 0)
        fprintf(stderr, "osmeter-core: %s: %s\n", type, msg);
}

void om_note(struct om_ctx *ctx, const char *key, const char *fmt, ...)
{
    (void)ctx;
    va_list ap;
    va_start(ap, fmt);
    vline("note", "key", key, fmt, ap);
    va_end(ap);
}

/* The body of om_skip, om_fail and om_bad_param: one line of `type`, then `status` (a
 * variadic function cannot hand its arguments on, so the three share it as a macro). */
#define LINE_THEN_RETURN(type, status)                                                   \
    do {                                                                                 \
        (void)ctx;                                                                       \
        va_list ap;                                                                      \
        va_start(ap, fmt);                                                               \
        vline(type, NULL, NULL, fmt, ap);                                                \
        va_end(ap);                                                                      \
        return status;                                                                   \
    } while (0)

int om_skip(struct om_ctx *ctx, const char *fmt, ...)
{
    LINE_THEN_RETURN("skip", OM_SKIPPED);
}

int om_fail(struct om_ctx *ctx, const char *fmt, ...)
{
    LINE_THEN_RETURN("error", OM_FAILED);
}

int om_bad_param(struct om_ctx *ctx, const char *fmt, ...)
{
    LINE_THEN_RETURN("error", OM_BADPARAM);
}

/* ---- parameters ----------------------------------------------------------------- */

static const struct om_param *find_param(const struct om_bench *b, const char *name, int *idx)
{
    for (int i = 0; i < OM_MAX_PARAMS && b->params[i].name; i++)
        if (strcmp(b->params[i].name, name) == 0) {
            if (idx)
                *idx = i;
            return &b->params[i];
        }
    return NULL;
}

/* Parse "64k" / "3m" / "1g" / "123".  Returns 0 on success. */
int om_parse_int(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno)
        return -1;
    long long mul = 1;
    if (*end) {
        switch (*end) {
        case 'k': case 'K': mul = 1024LL; break;
        case 'm': case 'M': mul = 1024LL * 1024; break;
        case 'g': case 'G': mul = 1024LL * 1024 * 1024; break;
        default: return -1;
        }
        if (end[1])
            return -1;
    }
    if (v > LLONG_MAX / mul || v < LLONG_MIN / mul)
        return -1;
    *out = v * mul;
    return 0;
}

static int choice_ok(const char *choices, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = choices; p && *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0)
            return 1;
        p = bar ? bar + 1 : NULL;
    }
    return 0;
}

/* Check one value against its declaration; writes a one-line reason into err. */
int om_check_value(const struct om_param *p, const char *v, char *err, size_t errlen)
{
    long long x;
    switch (p->kind) {
    case OM_INT:
        if (om_parse_int(v, &x)) {
            snprintf(err, errlen, "parameter %s: '%s' is not an integer", p->name, v);
            return -1;
        }
        if (x < p->min || x > p->max) {
            snprintf(err, errlen, "parameter %s: %lld is out of range [%lld, %lld]", p->name, x,
                     p->min, p->max);
            return -1;
        }
        return 0;
    case OM_LIST: {
        char buf[4096];
        int n = 0;
        if (strlen(v) >= sizeof buf) {
            snprintf(err, errlen, "parameter %s: list too long", p->name);
            return -1;
        }
        strcpy(buf, v);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            if (om_parse_int(tok, &x)) {
                snprintf(err, errlen, "parameter %s: '%s' is not an integer", p->name, tok);
                return -1;
            }
            if (x < p->min || x > p->max) {
                snprintf(err, errlen, "parameter %s: %lld is out of range [%lld, %lld]",
                         p->name, x, p->min, p->max);
                return -1;
            }
            if (++n > OM_MAX_LIST) {
                snprintf(err, errlen, "parameter %s: more than %d values", p->name,
                         OM_MAX_LIST);
                return -1;
            }
        }
        if (n == 0) {
            snprintf(err, errlen, "parameter %s: empty list", p->name);
            return -1;
        }
        return 0;
    }
    case OM_CHOICE:
        if (!choice_ok(p->choices, v)) {
            snprintf(err, errlen, "parameter %s: '%s' is not one of %s", p->name, v,
                     p->choices);
            return -1;
        }
        return 0;
    case OM_STR:
        return 0;
    }
    snprintf(err, errlen, "parameter %s: unknown kind", p->name);
    return -1;
}

static const char *param_value(struct om_ctx *ctx, const char *name, const struct om_param **pp)
{
    int idx;
    const struct om_param *p = find_param(ctx->bench, name, &idx);
    if (!p) {
        fprintf(stderr, "osmeter-core: %s: undeclared parameter '%s'\n", ctx->bench->id, name);
        om_exit(OM_FAILED);
    }
    *pp = p;
    return ctx->values[idx];
}

long long om_int(struct om_ctx *ctx, const char *name)
{
    const struct om_param *p;
    const char *v = param_value(ctx, name, &p);
    long long x = 0;
    if (p->kind != OM_INT || om_parse_int(v, &x)) {
        fprintf(stderr, "osmeter-core: %s: parameter '%s' is not an int\n", ctx->bench->id, name);
        om_exit(OM_FAILED);
    }
    return x;
}

const char *om_str(struct om_ctx *ctx, const char *name)
{
    const struct om_param *p;
    return param_value(ctx, name, &p);
}

int om_list(struct om_ctx *ctx, const char *name, long long *out)
{
    const struct om_param *p;
    const char *v = param_value(ctx, name, &p);
    char buf[4096];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && n < OM_MAX_LIST;
         tok = strtok_r(NULL, ",", &save))
        if (om_parse_int(tok, &out[n]) == 0)
            n++;
    return n;
}
/* ---- scratch directory, cleanup ------------------------------------------------------ */

static pid_t owner_pid;
static char scratch[PATH_MAX];
static int scratch_ours; /* we created it (not the front-end) and must remove it */

int om_ncpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

static void remove_scratch(void)
{
    if (scratch_ours && scratch[0] && getpid() == owner_pid) {
        nftw(scratch, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        scratch[0] = 0;
    }
}

#define MAX_EXTRA_DIRS 8
static char extra_dirs[MAX_EXTRA_DIRS][PATH_MAX];

void om_remove_at_exit(const char *path)
{
    for (int i = 0; i < MAX_EXTRA_DIRS; i++)
        if (!extra_dirs[i][0]) {
            snprintf(extra_dirs[i], sizeof extra_dirs[i], "%s", path);
            return;
        }
    fprintf(stderr, "osmeter-core: too many directories to remove at exit: %s\n", path);
    om_exit(OM_FAILED);
}

static void remove_extra_dirs(void)
{
    for (int i = 0; i < MAX_EXTRA_DIRS; i++)
        if (extra_dirs[i][0]) {
            nftw(extra_dirs[i], rm_entry, 16, FTW_DEPTH | FTW_PHYS);
            extra_dirs[i][0] = 0;
        }
}

const char *om_scratch_dir(void)
{
    if (scratch[0])
        return scratch;
    const char *given = getenv("OSMETER_SCRATCH");
    if (given && *given) {
        /* The front-end owns this directory and removes it, whatever happens to us. */
        snprintf(scratch, sizeof scratch, "%s", given);
        mkdir(scratch, 0700);
        return scratch;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/osmeter-core.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch)) {
        scratch[0] = 0;
        return NULL;
    }
    scratch_ours = 1;
    return scratch;
}

static char *saved_argv0;

/* This program's path where the system does not say (OpenBSD): argv[0] as given, or
 * found on PATH as a shell finds it.  0, or -1. */
static int self_from_argv0(char self[PATH_MAX])
{
    if (!saved_argv0 || !*saved_argv0)
        return -1;
    if (strchr(saved_argv0, '/'))
        return realpath(saved_argv0, self) ? 0 : -1;
    const char *dirs = getenv("PATH");
    char candidate[PATH_MAX];
    for (const char *d = dirs ? dirs : ""; *d;) {
        size_t len = strcspn(d, ":");
        if (snprintf(candidate, sizeof candidate, "%.*s/%s", (int)len, len ? d : ".",
                     saved_argv0) < (int)sizeof candidate &&
            access(candidate, X_OK) == 0 && realpath(candidate, self))
            return 0;
        d += len + (d[len] == ':');
    }
    return -1;
}

/* This program's path as the kernel knows it: Linux /proc/self/exe, FreeBSD's and
 * NetBSD's KERN_PROC_PATHNAME (before NetBSD 7 procfs's /proc/curproc/exe), macOS's
 * _NSGetExecutablePath; -1 where the system does not say (OpenBSD) or the call failed. */
static int self_from_system(char self[PATH_MAX])
{
#if defined(__linux__)
    ssize_t n = readlink("/proc/self/exe", self, PATH_MAX - 1);
    if (n <= 0)
        return -1;
    self[n] = 0;
    return 0;
#elif defined(__NetBSD__) && !defined(KERN_PROC_PATHNAME)
    /* NetBSD before 7 has no KERN_PROC_PATHNAME; procfs (where mounted) links it */
    ssize_t n = readlink("/proc/curproc/exe", self, PATH_MAX - 1);
    if (n <= 0)
        return -1;
    self[n] = 0;
    return 0;
#elif defined(__FreeBSD__) || defined(__DragonFly__) || defined(__NetBSD__)
#ifdef __NetBSD__
    int mib[4] = {CTL_KERN, KERN_PROC_ARGS, -1, KERN_PROC_PATHNAME};
#else
    int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_PATHNAME, -1};
#endif
    size_t len = PATH_MAX;
    return sysctl(mib, 4, self, &len, NULL, 0) == 0 && len > 1 ? 0 : -1;
#elif defined(__APPLE__)
    char given[PATH_MAX];
    uint32_t len = sizeof given;
    /* "a path", not necessarily a real one (symbolic links, ..): resolve it */
    return _NSGetExecutablePath(given, &len) == 0 && realpath(given, self) ? 0 : -1;
#else
    (void)self;
    return -1;
#endif
}

const char *om_sibling_path(const char *name)
{
    static char path[PATH_MAX + 256];
    char self[PATH_MAX];
    if (self_from_system(self) && self_from_argv0(self))
        return NULL;
    char *slash = strrchr(self, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    snprintf(path, sizeof path, "%s/%s", self, name);
    return access(path, X_OK) == 0 ? path : NULL;
}
int om_read_full(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int om_write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int om_is_static(void)
{
#ifdef OM_STATIC
    return 1;
#else
    return 0;
#endif
}

/* At exit and in the signal handler.  The signals are blocked first: one arriving while
 * exit() runs this would otherwise run it again inside itself (nftw() inside nftw(), a
 * malloc() lock taken twice: a hang, issue 44).  In the handler the mask is restored
 * when it returns, and the signal it raised again is delivered then. */
static void cleanup(void)
{
    if (getpid() != owner_pid)
        return;
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, NULL);
    om_children_kill_all();
    remove_extra_dirs();
    remove_scratch();
}

/* ---- dying with the front-end ------------------------------------------------------ */
/* The front-end runs the core in a session of its own, so no terminal hang-up reaches
 * it.  When the launcher names the read end of a pipe in $OSMETER_PARENT_FD (it keeps
 * the write end and never writes), the core dies with it, however it died (SIGKILL
 * too): the pipe's end of file raises SIGIO (O_ASYNC, on Linux, the BSDs and macOS), and
 * on Linux PR_SET_PDEATHSIG sends SIGHUP as well.  Either way SIGHUP's handlers run (a
 * running command's group is killed, then the harness's cleanup), and the scratch
 * directory the front-end made is removed too: nobody else is left to remove it. */
static pid_t launcher;      /* our parent when we started */
static int launcher_fd = -1; /* the pipe from it, or -1 */
static char given_scratch[PATH_MAX];

static int launcher_gone(void)
{
    if (launcher_fd < 0)
        return 0;
    struct pollfd p = {launcher_fd, POLLIN, 0};
    return getppid() != launcher || poll(&p, 1, 0) > 0; /* it never writes: EOF */
}

static void on_launcher_pipe(int sig)
{
    (void)sig;
    if (launcher_gone())
        raise(SIGHUP);
}

static void watch_launcher(void)
{
    const char *v = getenv("OSMETER_PARENT_FD");
    if (!v)
        return;
    char *end;
    long fd = strtol(v, &end, 10);
    struct stat st;
    if (!*v || *end || fd < 0 || fd > INT_MAX || fstat((int)fd, &st) || !S_ISFIFO(st.st_mode)) {
        fprintf(stderr, "osmeter-core: ignoring OSMETER_PARENT_FD=%s: not an open pipe\n", v);
        return;
    }
    launcher = getppid();
    launcher_fd = (int)fd;
    const char *given = getenv("OSMETER_SCRATCH");
    if (given && strlen(given) < sizeof given_scratch)
        strcpy(given_scratch, given);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGHUP);
#endif
#if defined(O_ASYNC) && defined(SIGIO)
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_launcher_pipe;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGIO, &sa, NULL);
    fcntl(launcher_fd, F_SETOWN, getpid());
    fcntl(launcher_fd, F_SETFL, fcntl(launcher_fd, F_GETFL) | O_ASYNC | O_NONBLOCK);
#endif
    if (launcher_gone()) /* before we watched */
        raise(SIGHUP);
}

static void on_signal(int sig)
{
    if (launcher_gone() && given_scratch[0] && !scratch_ours) {
        memcpy(scratch, given_scratch, sizeof scratch);
        scratch_ours = 1;
    }
    cleanup();
    signal(sig, SIG_DFL);
    raise(sig);
}

void om_harness_init(char *argv0)
{
    saved_argv0 = argv0;
    owner_pid = getpid();
    atexit(cleanup);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a vanished peer is an error return, not a death */
    om_exec_wrapper_init();
    watch_launcher();
    om_measure_timer_overhead();
}

void om_exit(int code)
{
    fflush(stdout);
    exit(code);
}
