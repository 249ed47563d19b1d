/*
 * The core's children: every process a benchmark forks is tracked, so that the harness
 * kills and reaps it on exit and on signals; reaping a child that should be ending, with
 * a bound; and starting osmeter's own programs (the exec helpers, the static core)
 * through OSMETER_EXEC_WRAPPER.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "internal.h"

#define MAX_CHILDREN 65536
static pid_t children[MAX_CHILDREN];
static int n_children;

/* O(1) when no slot is free, so that om_fork() costs the same with 10 or 10,000 children
 * tracked: the scalability curves time fork() including this bookkeeping. */
static int n_free_slots; /* zeroed entries below n_children */

void om_child_track(pid_t pid)
{
    if (n_free_slots > 0)
        for (int i = 0; i < n_children; i++)
            if (children[i] == 0) {
                children[i] = pid;
                n_free_slots--;
                return;
            }
    if (n_children < MAX_CHILDREN)
        children[n_children++] = pid;
}

void om_child_untrack(pid_t pid)
{
    for (int i = n_children - 1; i >= 0; i--) /* newest first: LIFO teardown is O(1) */
        if (children[i] == pid) {
            children[i] = 0;
            n_free_slots++;
            break;
        }
    while (n_children > 0 && children[n_children - 1] == 0) {
        n_children--;
        n_free_slots--;
    }
}

void om_child_kill(pid_t pid)
{
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    om_child_untrack(pid);
}

void om_children_kill_all(void)
{
    for (int i = 0; i < n_children; i++)
        if (children[i] > 0)
            kill(children[i], SIGKILL);
    for (int i = 0; i < n_children; i++)
        if (children[i] > 0)
            while (waitpid(children[i], NULL, 0) < 0 && errno == EINTR)
                ;
    n_children = 0;
    n_free_slots = 0;
}

static void restore_default_signals(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
}

pid_t om_fork(void)
{
    fflush(stdout);
    fflush(stderr);
#ifdef __linux__
    pid_t parent = getpid();
#endif
    pid_t pid = fork();
    if (pid == 0) {
        /* The child owns none of the parent's children or scratch directory. */
        n_children = 0;
        n_free_slots = 0;
        restore_default_signals();
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) /* the parent died before prctl: PDEATHSIG won't fire */
            _exit(1);
#endif
    } else if (pid > 0) {
        om_child_track(pid);
    }
    return pid;
}

int om_child_exited(pid_t pid, int *status)
{
    int st = 0;
    pid_t got;
    while ((got = waitpid(pid, &st, WNOHANG)) < 0 && errno == EINTR)
        ;
    if (got == 0)
        return 0;
    /* Gone (or never ours: ECHILD): either way nothing is left to wait for. */
    om_child_untrack(pid);
    if (status)
        *status = got == pid ? st : -1;
    return 1;
}

int om_child_reap(pid_t pid, int ms, int *status)
{
    struct timespec pause = {0, 1000000}; /* 1 ms */
    if (ms < 0) { /* as long as it takes */
        int st;
        pid_t got;
        while ((got = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
            ;
        om_child_untrack(pid);
        if (status)
            *status = got == pid ? st : -1;
        return got == pid ? 0 : -1;
    }
    for (int waited = 0;; waited++) {
        if (om_child_exited(pid, status))
            return 0;
        if (waited >= ms)
            break;
        nanosleep(&pause, NULL);
    }
    om_child_kill(pid);
    if (status)
        *status = -1;
    return -1;
}
/* ---- osmeter's own programs, through OSMETER_EXEC_WRAPPER ------------------------ */

#define MAX_WRAPPER_WORDS 16
#define MAX_OWN_ARGS 64
static char wrapper_text[1024];
static char *wrapper_words[MAX_WRAPPER_WORDS + 1];
static int n_wrapper_words;

/* Split once at start-up, so that a timed fork+exec does no parsing. */
void om_exec_wrapper_init(void)
{
    const char *w = getenv("OSMETER_EXEC_WRAPPER");
    if (!w || !*w)
        return;
    if (strlen(w) >= sizeof wrapper_text) {
        fprintf(stderr, "osmeter-core: OSMETER_EXEC_WRAPPER is longer than %zu characters\n",
                sizeof wrapper_text - 1);
        om_exit(OM_BADPARAM);
    }
    strcpy(wrapper_text, w);
    char *save = NULL;
    for (char *tok = strtok_r(wrapper_text, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (n_wrapper_words == MAX_WRAPPER_WORDS) {
            fprintf(stderr, "osmeter-core: OSMETER_EXEC_WRAPPER has more than %d words\n",
                    MAX_WRAPPER_WORDS);
            om_exit(OM_BADPARAM);
        }
        wrapper_words[n_wrapper_words++] = tok;
    }
}

const char *om_exec_wrapper(void) { return n_wrapper_words ? getenv("OSMETER_EXEC_WRAPPER") : NULL; }

int om_exec_own(const char *path, char *const argv[])
{
    if (!n_wrapper_words)
        return execv(path, argv);
    char *args[MAX_WRAPPER_WORDS + MAX_OWN_ARGS + 2];
    int n = 0;
    for (int i = 0; i < n_wrapper_words; i++)
        args[n++] = wrapper_words[i];
    args[n++] = (char *)path;
    for (int i = 1; argv[0] && argv[i] && i < MAX_OWN_ARGS; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    return execvp(args[0], args);
}

/* Appends s to buf as one /bin/sh word in single quotes; 0, or -1 when it does not fit. */
static int shell_word(char *buf, size_t len, const char *s)
{
    size_t at = strlen(buf);
    if (at + 3 >= len)
        return -1;
    if (at)
        buf[at++] = ' ';
    buf[at++] = '\'';
    for (; *s; s++) {
        const char *piece = *s == '\'' ? "'\\''" : NULL; /* ' becomes '\'' */
        size_t plen = piece ? 4 : 1;
        if (at + plen + 2 >= len)
            return -1;
        if (piece)
            memcpy(buf + at, piece, plen);
        else
            buf[at] = *s;
        at += plen;
    }
    buf[at++] = '\'';
    buf[at] = 0;
    return 0;
}

int om_shell_own(char *buf, size_t len, const char *path)
{
    if (len == 0)
        return -1;
    buf[0] = 0;
    for (int i = 0; i < n_wrapper_words; i++)
        if (shell_word(buf, len, wrapper_words[i]))
            return -1;
    return shell_word(buf, len, path);
}
