/*
 * Running a whole program and timing it (wall clock, CPU time, peak memory), shared by
 * the user-command benchmark (cmd.c) and the application tests (app.c).  Implemented in
 * cmd.c.
 *
 * The program runs in its own process group with stdin from /dev/null and its output
 * sent to /dev/null or appended to a file, so that neither its output nor a terminal
 * takes part in the measurement.  A timeout, Ctrl-C or SIGTERM kills the whole group:
 * the program and every child it started (unless a child left the group with setsid).
 */
#ifndef OSMETER_BENCH_CMD_H
#define OSMETER_BENCH_CMD_H

#include <stddef.h>

struct cmd_spec {
    char *const *argv;     /* argv[0] is looked up in PATH before anything is timed */
    const char *out_path;  /* NULL or "": /dev/null; else stdout+stderr appended here */
    double timeout_s;      /* > 0 */
};

struct cmd_result {
    int exec_errno;       /* non-zero: the program could not be executed */
    int timed_out;        /* killed (with its process group) at the timeout */
    int status;           /* wait status of the program (valid when exec_errno == 0) */
    double wall_ns;       /* fork until the program has exited */
    double user_ns, sys_ns; /* CPU time of the program and the children it waited for */
    double max_rss_bytes; /* peak resident set of the program or its largest child */
};

/* Full path of an executable program (PATH search for names without '/'), or NULL. */
const char *cmd_find_program(const char *name, char *buf, size_t len);
/* Runs spec once and fills res.  Returns 0, or -1 (errno set) when fork/pipe/open failed. */
int cmd_run_once(const struct cmd_spec *spec, struct cmd_result *res);
/* True when the run ended normally with exit status 0. */
int cmd_succeeded(const struct cmd_result *res);
/* What went wrong, in words: "exited with status 3", "killed by signal 9",
 * "timed out after 5 s (killed with its children)", "cannot execute: ...". */
void cmd_describe_failure(const struct cmd_result *res, double timeout_s, char *buf,
                          size_t len);
/* Runs `/bin/sh -c script` untimed; 0, or -1 with the reason in why. */
int cmd_run_shell(const char *script, const char *out_path, double timeout_s, char *why,
                  size_t len);
/* Runs argv with its output captured into buf (NUL-terminated, truncated to len-1).
 * For probing a program ("convert -version").  Returns 0 when it exited with 0. */
int cmd_capture(char *const *argv, char *buf, size_t len, double timeout_s);

#endif
