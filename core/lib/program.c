/* The core's one program runner: see program.h. */
#define _GNU_SOURCE
#include "program.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/* waitid(WNOWAIT) sees a program's end without reaping it; NetBSD has it from 7.99.27
 * (2016): before that the program is reaped at once (see run_program). */
#if defined(__NetBSD__)
#include <sys/param.h>
#if __NetBSD_Version__ < 799002700
#define OM_NO_WAITID 1
#endif
#endif

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

const char *prog_find(const char *name, char *buf, size_t len)
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

/* posix_spawn has no portable "run in this directory" (addchdir_np is not everywhere),
 * so the core steps into cwd around the spawn and back: it is single-threaded whenever
 * it runs a program.  Returns the descriptor of the directory to return to, -2 without
 * a cwd, or -1 (errno) when cwd cannot be entered. */
static int enter_dir(const char *cwd)
{
    if (!cwd)
        return -2;
    int back = open(".", O_RDONLY | O_CLOEXEC);
    if (back < 0)
        return -1;
    if (chdir(cwd)) {
        int e = errno;
        close(back);
        errno = e;
        return -1;
    }
    return back;
}

static void leave_dir(int back)
{
    if (back >= 0) {
        if (fchdir(back))
            fprintf(stderr, "osmeter-core: cannot return to the working directory: %s\n",
                    strerror(errno));
        close(back);
    }
}

/*
 * Start `path` in cwd with out_fd as stdout and stderr, in a new process group, with
 * default signal handling.  posix_spawn, as hyperfine does: glibc and the BSDs implement
 * it without copying the core's page tables (vfork-style), so launching costs the same
 * however large the launcher is, and it reports exec failures as its return value.
 */
static int run_fd(const char *path, char *const *argv, const char *cwd, int out_fd,
                  double timeout_s, struct prog_result *res)
{
    memset(res, 0, sizeof *res);
    install_handlers();
    int in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in_fd < 0)
        return -1;
    int back = enter_dir(cwd);
    if (back == -1) {
        int e = errno;
        close(in_fd);
        errno = e;
        return -1;
    }
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
    leave_dir(back);
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
    int wait_errno = 0;
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    pid_t got = 0;
#ifndef OM_NO_WAITID
    siginfo_t si;
    for (;;) {
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0)
            break;
#else /* reaped here: its group is killed right after, before a new process could take
       * the number */
    for (;;) {
        if ((got = wait4(pid, &status, 0, &ru)) == pid)
            break;
#endif
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

#ifndef OM_NO_WAITID
    while ((got = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR)
        ;
#endif
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

int prog_run(const struct prog_spec *spec, struct prog_result *res)
{
    char found[4096], path[PATH_MAX];
    memset(res, 0, sizeof *res);
    if (!prog_find(spec->argv[0], found, sizeof found)) {
        res->exec_errno = ENOENT;
        return 0;
    }
    /* A path relative to our directory (PATH=.:...) must still name it from cwd. */
    if (spec->cwd && found[0] != '/' && !realpath(found, path)) {
        res->exec_errno = errno;
        return 0;
    }
    int out = open_output(spec->out_path);
    if (out < 0)
        return -1;
    int rc = run_fd(spec->cwd && found[0] != '/' ? path : found, spec->argv, spec->cwd, out,
                    spec->timeout_s, res);
    int e = errno;
    close(out);
    errno = e;
    return rc;
}

int prog_succeeded(const struct prog_result *res)
{
    return !res->exec_errno && !res->timed_out && WIFEXITED(res->status) &&
           WEXITSTATUS(res->status) == 0;
}

void prog_describe_failure(const struct prog_result *res, double timeout_s, char *buf,
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

int prog_run_shell(const char *script, const char *out_path, double timeout_s, char *why,
                   size_t len)
{
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    struct prog_spec spec = {.argv = argv, .out_path = out_path, .timeout_s = timeout_s};
    struct prog_result res;
    if (prog_run(&spec, &res)) {
        snprintf(why, len, "cannot run /bin/sh: %s", strerror(errno));
        return -1;
    }
    if (!prog_succeeded(&res)) {
        prog_describe_failure(&res, timeout_s, why, len);
        return -1;
    }
    return 0;
}

int prog_capture(char *const *argv, char *buf, size_t len, double timeout_s)
{
    char path[4096], out_path[4096];
    buf[0] = 0;
    const char *dir = om_scratch_dir();
    if (!dir || !prog_find(argv[0], path, sizeof path))
        return -1;
    snprintf(out_path, sizeof out_path, "%s/capture.%ld", dir, (long)getpid());
    int out = open(out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0)
        return -1;
    struct prog_result res;
    int rc = run_fd(path, argv, NULL, out, timeout_s, &res);
    ssize_t n = pread(out, buf, len - 1, 0);
    buf[n > 0 ? n : 0] = 0;
    close(out);
    unlink(out_path);
    return rc == 0 && prog_succeeded(&res) ? 0 : -1;
}


void prog_last_line(const char *path, char *out, size_t len)
{
    char line[1024];
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (line[strspn(line, " \t\r\n")])
            snprintf(out, len, "%.*s", (int)strcspn(line, "\n"), line);
    fclose(f);
}
