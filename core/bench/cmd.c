/*
 * The user's own command as a benchmark: `cmd.run` times any program as a whole process
 * (wall clock, user and system CPU time and peak memory from wait4's rusage), with
 * warm-up runs, optional setup/cleanup commands outside the timing, an optional cold
 * page cache, and a timeout that kills the command together with its children.
 *
 * The command arrives as a JSON array of strings (argv=["prog","arg 1"]), so any argument
 * survives the trip through the front-end untouched; no shell is involved unless the
 * user asks for one (shell=yes).  The process machinery here (cmd.h) is also what the
 * application tests (app.c) use.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"
#include "cmd.h"

/* POSIX has the program declare it; only glibc's <unistd.h> does (with _GNU_SOURCE). */
extern char **environ;

/* ---- killing the command's process group on timeout and on our own death ---------- */

static volatile sig_atomic_t timed_out;
static volatile pid_t running_group; /* process group of the running command, 0 if none */
static struct sigaction old_int, old_term, old_hup;

static void on_alarm(int sig)
{
    (void)sig;
    timed_out = 1;
    if (running_group > 0)
        kill(-running_group, SIGKILL);
}

/* Ctrl-C / SIGTERM / SIGHUP: kill the command's group, then let the harness clean up. */
static void on_fatal(int sig)
{
    if (running_group > 0)
        kill(-running_group, SIGKILL);
    sigaction(sig, sig == SIGINT ? &old_int : sig == SIGTERM ? &old_term : &old_hup, NULL);
    raise(sig); /* delivered to the harness's handler when this one returns */
}

static void install_handlers(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_alarm; /* no SA_RESTART: the wait below sees EINTR */
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_fatal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
}

static void set_timer(double seconds)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)seconds;
    it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    setitimer(ITIMER_REAL, &it, NULL);
}

/* ---- running one program ------------------------------------------------------------ */

const char *cmd_find_program(const char *name, char *buf, size_t len)
{
    if (!name || !*name)
        return NULL;
    if (strchr(name, '/')) {
        struct stat st;
        if (stat(name, &st) || !S_ISREG(st.st_mode) || access(name, X_OK))
            return NULL;
        snprintf(buf, len, "%s", name);
        return buf;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(buf, len, "%.*s/%s", (int)(n ? n : 1), n ? path : ".", name);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return buf;
        path += n + (path[n] == ':');
    }
    return NULL;
}

static double tv_ns(struct timeval tv) { return (double)tv.tv_sec * 1e9 + (double)tv.tv_usec * 1e3; }

/*
 * Start `path` with out_fd as stdout and stderr, in a new process group, with default
 * signal handling.  posix_spawn, as hyperfine does: glibc and the BSDs implement it
 * without copying the core's page tables (vfork-style), so launching costs the same
 * however large the launcher is, and it reports exec failures as its return value.
 */
static int run_fd(const char *path, char *const *argv, int out_fd, double timeout_s,
                  struct cmd_result *res)
{
    memset(res, 0, sizeof *res);
    install_handlers();
    int in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in_fd < 0)
        return -1;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 2);
    posix_spawnattr_init(&attr);
    /* The program gets default signal handling, not the core's (SIGPIPE is ignored
     * there, and an ignored signal would stay ignored across exec), and no mask. */
    sigset_t defaults, none;
    sigemptyset(&defaults);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGALRM, SIGCHLD, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&defaults, sigs[i]);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETSIGMASK);
    timed_out = 0;
    set_timer(timeout_s);
    pid_t pid;
    uint64_t t0 = om_now_ns();
    int spawn_err = posix_spawn(&pid, path, &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(in_fd);
    if (spawn_err) {
        set_timer(0);
        res->exec_errno = spawn_err;
        return 0;
    }
    running_group = pid;
    setpgid(pid, pid); /* also here, so the group exists whichever process runs first */
    om_child_track(pid);
    if (timed_out)     /* the timer fired before running_group was set */
        kill(-pid, SIGKILL);

    /* Wait for the program's end without reaping it yet: while it is a zombie its pid
     * (= the group id) cannot be reused, so killing the group below is safe. */
    siginfo_t si;
    int wait_errno = 0;
    for (;;) {
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0)
            break;
        if (errno != EINTR) {
            wait_errno = errno;
            break;
        }
        if (timed_out)
            kill(-pid, SIGKILL);
    }
    uint64_t t1 = om_now_ns();
    set_timer(0);
    kill(-pid, SIGKILL); /* children it left running (sleep &) must not outlive the run */
    running_group = 0;

    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    pid_t got;
    while ((got = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR)
        ;
    if (got < 0 && !wait_errno)
        wait_errno = errno;
    om_child_untrack(pid);
    if (wait_errno) { /* never report a run whose end we did not see */
        errno = wait_errno;
        return -1;
    }
    res->timed_out = timed_out;
    res->status = status;
    res->wall_ns = (double)(t1 - t0);
    res->user_ns = tv_ns(ru.ru_utime);
    res->sys_ns = tv_ns(ru.ru_stime);
#ifdef __APPLE__
    res->max_rss_bytes = (double)ru.ru_maxrss; /* bytes on macOS */
#else
    res->max_rss_bytes = (double)ru.ru_maxrss * 1024.0; /* KiB on Linux and the BSDs */
#endif
    return 0;
}

static int open_output(const char *out_path)
{
    if (out_path && *out_path)
        return open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    return open("/dev/null", O_WRONLY | O_CLOEXEC);
}

int cmd_run_once(const struct cmd_spec *spec, struct cmd_result *res)
{
    char path[4096];
    memset(res, 0, sizeof *res);
    if (!cmd_find_program(spec->argv[0], path, sizeof path)) {
        res->exec_errno = ENOENT;
        return 0;
    }
    int out = open_output(spec->out_path);
    if (out < 0)
        return -1;
    int rc = run_fd(path, spec->argv, out, spec->timeout_s, res);
    int e = errno;
    close(out);
    errno = e;
    return rc;
}

int cmd_succeeded(const struct cmd_result *res)
{
    return !res->exec_errno && !res->timed_out && WIFEXITED(res->status) &&
           WEXITSTATUS(res->status) == 0;
}

void cmd_describe_failure(const struct cmd_result *res, double timeout_s, char *buf,
                          size_t len)
{
    if (res->exec_errno)
        snprintf(buf, len, "cannot execute: %s", strerror(res->exec_errno));
    else if (res->timed_out)
        snprintf(buf, len, "timed out after %g s (killed with its children)", timeout_s);
    else if (WIFSIGNALED(res->status))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(res->status),
                 strsignal(WTERMSIG(res->status)));
    else if (WIFEXITED(res->status))
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(res->status));
    else
        snprintf(buf, len, "ended with wait status 0x%x", res->status);
}

int cmd_run_shell(const char *script, const char *out_path, double timeout_s, char *why,
                  size_t len)
{
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    struct cmd_spec spec = {argv, out_path, timeout_s};
    struct cmd_result res;
    if (cmd_run_once(&spec, &res)) {
        snprintf(why, len, "cannot run /bin/sh: %s", strerror(errno));
        return -1;
    }
    if (!cmd_succeeded(&res)) {
        cmd_describe_failure(&res, timeout_s, why, len);
        return -1;
    }
    return 0;
}

int cmd_capture(char *const *argv, char *buf, size_t len, double timeout_s)
{
    char path[4096], out_path[4096];
    buf[0] = 0;
    const char *dir = om_scratch_dir();
    if (!dir || !cmd_find_program(argv[0], path, sizeof path))
        return -1;
    snprintf(out_path, sizeof out_path, "%s/capture.%ld", dir, (long)getpid());
    int out = open(out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0)
        return -1;
    struct cmd_result res;
    int rc = run_fd(path, argv, out, timeout_s, &res);
    ssize_t n = pread(out, buf, len - 1, 0);
    buf[n > 0 ? n : 0] = 0;
    close(out);
    unlink(out_path);
    return rc == 0 && cmd_succeeded(&res) ? 0 : -1;
}

/* ---- argv as a JSON array of strings --------------------------------------------- */

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static long read_u4(const char **p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)(*p)[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    *p += 4;
    return v;
}

static char *put_utf8(char *o, long cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

#define MAX_ARGS 1024

/* Parses ["a","b\n",...] into argv (strings stored in `store`, which must be at least as
 * long as the input).  Returns the count, or -1 with a message in err. */
static int parse_argv(const char *s, char *store, char **argv, char *err, size_t errlen)
{
    const char *p = s;
    char *o = store;
    int n = 0;
    while (*p == ' ')
        p++;
    if (*p++ != '[') {
        snprintf(err, errlen, "argv must be a JSON array of strings, e.g. [\"ls\",\"-l\"]");
        return -1;
    }
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p == ']' && n == 0) {
            p++;
            break;
        }
        if (*p++ != '"') {
            snprintf(err, errlen, "argv: expected a string at offset %ld", (long)(p - s - 1));
            return -1;
        }
        if (n >= MAX_ARGS - 1) {
            snprintf(err, errlen, "argv: more than %d arguments", MAX_ARGS - 1);
            return -1;
        }
        argv[n++] = o;
        for (;;) {
            unsigned char c = (unsigned char)*p++;
            if (c == 0) {
                snprintf(err, errlen, "argv: unterminated string");
                return -1;
            }
            if (c == '"')
                break;
            if (c != '\\') {
                *o++ = (char)c;
                continue;
            }
            c = (unsigned char)*p++;
            long cp;
            switch (c) {
            case '"': case '\\': case '/': *o++ = (char)c; break;
            case 'b': *o++ = '\b'; break;
            case 'f': *o++ = '\f'; break;
            case 'n': *o++ = '\n'; break;
            case 'r': *o++ = '\r'; break;
            case 't': *o++ = '\t'; break;
            case 'u':
                cp = read_u4(&p);
                if (cp >= 0xD800 && cp < 0xDC00 && p[0] == '\\' && p[1] == 'u') {
                    p += 2;
                    long lo = read_u4(&p);
                    if (lo < 0xDC00 || lo > 0xDFFF)
                        cp = -1;
                    else
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                if (cp <= 0) { /* malformed, or NUL, which no argument can hold */
                    snprintf(err, errlen, "argv: bad \\u escape");
                    return -1;
                }
                o = put_utf8(o, cp);
                break;
            default:
                snprintf(err, errlen, "argv: bad escape \\%c", c);
                return -1;
            }
        }
        *o++ = 0;
        while (*p == ' ')
            p++;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p++ == ']')
            break;
        snprintf(err, errlen, "argv: expected ',' or ']' at offset %ld", (long)(p - s - 1));
        return -1;
    }
    while (*p == ' ')
        p++;
    if (*p) {
        snprintf(err, errlen, "argv: unexpected text after the array");
        return -1;
    }
    argv[n] = NULL;
    return n;
}

/* ---- cmd.run -------------------------------------------------------------------- */

/* sync, then drop the page cache, dentries and inodes (Linux, root only). */
static int drop_caches(char *why, size_t len)
{
#ifdef __linux__
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "3\n", 2) != 2) {
        snprintf(why, len, "cold_cache=yes needs root: cannot write /proc/sys/vm/drop_caches "
                           "(%s)", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
#else
    snprintf(why, len, "cold_cache=yes is only implemented on Linux (drop_caches)");
    return -1;
#endif
}

/* One run: setup, (drop caches,) the command, cleanup.  Returns 0, or om_fail's value. */
static int one_run(struct om_ctx *ctx, const struct cmd_spec *spec, const char *label,
                   struct cmd_result *res)
{
    const char *setup = om_str(ctx, "setup"), *cleanup = om_str(ctx, "cleanup");
    int cold = strcmp(om_str(ctx, "cold_cache"), "yes") == 0;
    char why[512];
    if (*setup && cmd_run_shell(setup, spec->out_path, spec->timeout_s, why, sizeof why))
        return om_fail(ctx, "setup command failed before %s: %s", label, why);
    if (cold && drop_caches(why, sizeof why))
        return om_fail(ctx, "%s", why);
    if (cmd_run_once(spec, res))
        return om_fail(ctx, "cannot start the command: %s", strerror(errno));
    if (!cmd_succeeded(res)) {
        cmd_describe_failure(res, spec->timeout_s, why, sizeof why);
        int rc = om_fail(ctx, "the command %s in %s", why, label);
        if (*cleanup) /* still clean up after a failed run */
            cmd_run_shell(cleanup, spec->out_path, spec->timeout_s, why, sizeof why);
        return rc;
    }
    if (*cleanup && cmd_run_shell(cleanup, spec->out_path, spec->timeout_s, why, sizeof why))
        return om_fail(ctx, "cleanup command failed after %s: %s", label, why);
    return OM_OK;
}

static int run_cmd(struct om_ctx *ctx)
{
    const char *json = om_str(ctx, "argv");
    if (!*json)
        return om_skip(ctx, "no command given (osmeter run cmd --name NAME -- COMMAND ARGS...)");
    size_t len = strlen(json) + 1;
    char *store = malloc(len);
    char **argv = malloc(sizeof(char *) * MAX_ARGS);
    char err[256];
    if (!store || !argv) {
        free(store);
        free(argv);
        return om_fail(ctx, "out of memory");
    }
    int rc = OM_OK;
    int n = parse_argv(json, store, argv, err, sizeof err);
    if (n < 0) {
        rc = om_bad_param(ctx, "%s", err);
        goto out;
    }
    if (n == 0) {
        rc = om_bad_param(ctx, "argv: the command is empty");
        goto out;
    }
    char *shell_argv[] = {"/bin/sh", "-c", argv[0], NULL};
    int shell = strcmp(om_str(ctx, "shell"), "yes") == 0;
    if (shell && n != 1) {
        rc = om_bad_param(ctx, "shell=yes takes the whole command line as one string");
        goto out;
    }
    char path[4096];
    if (!shell && !cmd_find_program(argv[0], path, sizeof path)) {
        rc = om_fail(ctx, "command not found: %s", argv[0]);
        goto out;
    }
    struct cmd_spec spec = {shell ? shell_argv : argv, om_str(ctx, "output"),
                            (double)om_int(ctx, "timeout_s")};
    if (*spec.out_path) { /* fail on an unwritable output file before running anything */
        int fd = open(spec.out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
            rc = om_fail(ctx, "cannot write output file %s: %s", spec.out_path, strerror(errno));
            goto out;
        }
        close(fd);
    }
    const char *name = om_str(ctx, "name");
    om_note(ctx, "command", "%s", shell ? argv[0] : json);
    if (*name)
        om_note(ctx, "name", "%s", name);
    om_note(ctx, "output", "%s", *spec.out_path ? spec.out_path : "/dev/null");

    long long warmup = om_int(ctx, "warmup"), samples = om_int(ctx, "samples");
    struct cmd_result res;
    char label[64];
    for (long long i = 0; i < warmup && rc == OM_OK; i++) {
        snprintf(label, sizeof label, "warm-up run %lld", i + 1);
        rc = one_run(ctx, &spec, label, &res);
    }
    for (long long i = 0; i < samples && rc == OM_OK; i++) {
        snprintf(label, sizeof label, "timed run %lld of %lld", i + 1, samples);
        if ((rc = one_run(ctx, &spec, label, &res)))
            break;
        om_sample(ctx, "wall", OM_NO_X, res.wall_ns);
        om_sample(ctx, "user", OM_NO_X, res.user_ns);
        om_sample(ctx, "system", OM_NO_X, res.sys_ns);
        om_sample(ctx, "max_rss", OM_NO_X, res.max_rss_bytes);
    }
out:
    free(store);
    free(argv);
    return rc;
}

const struct om_bench om_family_cmd[] = {
    {"cmd.run", "the user's own command, timed as a whole process (osmeter run cmd --name "
     "NAME -- COMMAND ...)", "osmeter (CC06 T1 style)", "", {2.0, 2.0, 2.0}, run_cmd,
     {{"argv", OM_STR, "", NULL, NULL, 0, 0, NULL,
       "the command as a JSON array of strings, e.g. [\"vim\",\"-es\",\"big.txt\"]"},
      {"shell", OM_CHOICE, "no", NULL, NULL, 0, 0, "no|yes",
       "yes: argv holds one string run by /bin/sh -c"},
      {"name", OM_STR, "", NULL, NULL, 0, 0, NULL, "the user's name for the command"},
      {"samples", OM_INT, "10", "5", "2", 1, 100000, NULL,
       "timed runs in each repetition (process)"},
      {"warmup", OM_INT, "1", "1", "0", 0, 1000, NULL, "untimed runs before the timed ones"},
      {"setup", OM_STR, "", NULL, NULL, 0, 0, NULL,
       "shell command run before every run, outside the timing"},
      {"cleanup", OM_STR, "", NULL, NULL, 0, 0, NULL,
       "shell command run after every run, outside the timing"},
      {"cold_cache", OM_CHOICE, "no", NULL, NULL, 0, 0, "no|yes",
       "yes: sync and drop the page cache before every run (Linux, root)"},
      {"timeout_s", OM_INT, "600", NULL, NULL, 1, 86400, NULL,
       "seconds one run may take; then it is killed with its children"},
      {"output", OM_STR, "", NULL, NULL, 0, 0, NULL,
       "file that receives the command's output (appended); empty: /dev/null"}},
     {{"wall", "ns", "lower", OM_POINT, NULL, "elapsed time from fork to exit"},
      {"user", "ns", "lower", OM_POINT, NULL, "user CPU time (with waited-for children)"},
      {"system", "ns", "lower", OM_POINT, NULL, "system CPU time (with waited-for children)"},
      {"max_rss", "bytes", "lower", OM_POINT, NULL, "peak resident memory"}}},
    {0},
};
