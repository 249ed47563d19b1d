/*
 * Running a whole program and timing it (wall clock, user and system CPU time, peak
 * memory): the core's one program runner, for the user's command (cmd.run), the
 * application tests (app.c), and the compiler, tar, rm and bonnie++ runs (mab.c).
 *
 * The program is looked up in PATH (a regular, executable file), started with
 * posix_spawn in a process group of its own, with stdin from /dev/null and stdout and
 * stderr sent to /dev/null or appended to a file, so that neither its output nor a
 * terminal takes part in the measurement.  A timeout, Ctrl-C or SIGTERM kills the whole
 * group: the program and every child it started (unless a child left the group with
 * setsid); so does its end, for children it left running.  System programs only:
 * osmeter's own programs are started with om_exec_own() (harness.h).
 */
#ifndef OSMETER_LIB_PROGRAM_H
#define OSMETER_LIB_PROGRAM_H

#include <stddef.h>

struct prog_spec {
    char *const *argv;    /* argv[0] is looked up in PATH before anything is timed */
    const char *cwd;      /* directory it runs in; NULL: the core's own */
    const char *out_path; /* NULL or "": /dev/null; else stdout+stderr appended here */
    double timeout_s;     /* > 0: killed with its group after this long; 0: no limit */
};

struct prog_result {
    int exec_errno;         /* non-zero: the program could not be executed */
    int timed_out;          /* killed (with its process group) at the timeout */
    int status;             /* wait status of the program (valid when exec_errno == 0) */
    double wall_ns;         /* start until the program has exited */
    double user_ns, sys_ns; /* CPU time of the program and the children it waited for */
    double max_rss_bytes;   /* peak resident set of the program or its largest child */
};

/* Full path of an executable program (PATH search for names without '/'; the default
 * PATH is /usr/local/bin:/usr/bin:/bin), or NULL. */
const char *prog_find(const char *name, char *buf, size_t len);
/* Runs spec once and fills res.  Returns 0, or -1 (errno set) when it could not be
 * started for a reason of ours (fork, pipe, open, chdir); a program that is not found
 * or cannot be executed is res->exec_errno. */
int prog_run(const struct prog_spec *spec, struct prog_result *res);
/* True when the run ended normally with exit status 0. */
int prog_succeeded(const struct prog_result *res);
/* What went wrong, in words: "exited with status 3", "killed by signal 9",
 * "timed out after 5 s (killed with its children)", "cannot execute: ...". */
void prog_describe_failure(const struct prog_result *res, double timeout_s, char *buf,
                           size_t len);
/* Runs `/bin/sh -c script` untimed; 0, or -1 with the reason in why. */
int prog_run_shell(const char *script, const char *out_path, double timeout_s, char *why,
                   size_t len);
/* Runs argv with its output captured into buf (NUL-terminated, truncated to len-1).
 * For probing a program ("convert -version").  Returns 0 when it exited with 0. */
int prog_capture(char *const *argv, char *buf, size_t len, double timeout_s);
/* The last line of a program's output file that is not blank (what explains a failure),
 * without its newline; "" when there is none. */
void prog_last_line(const char *path, char *out, size_t len);

#endif
