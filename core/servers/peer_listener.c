/*
 * `osmeter-core serve`'s listener: it only accepts and forks; each connection runs in a
 * process of its own (peer.c).  A connection must authenticate within a few seconds;
 * several may be authenticating at once (a bounded number, the oldest dropped to make
 * room), so a silent one cannot keep a real client out.  Only an authenticated client
 * takes the one session; while it runs, others are told BUSY at once and disconnected.
 */
#define _GNU_SOURCE
#include "peer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness.h"
#include "../lib/atomics.h"

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

static volatile sig_atomic_t serve_stop;
static void on_serve_signal(int sig) { serve_stop = sig; }

/* The listener makes room for a new connection: one still authenticating leaves; one
 * that has just taken the session stays (so the race between the two is harmless).
 * Installed by the listener before it forks, so it holds from a connection's start. */
static pid_t listener_pid;
static pid_t *evict_owner; /* the session slot, shared with every connection */
static void on_evict(int sig)
{
    (void)sig;
    if (getpid() == listener_pid)
        return;
    if (!evict_owner || om_load(evict_owner) != getpid())
        _exit(4);
}

/* The listener's connections: each in a process of its own, authenticating (at most
 * OM_PEER_MAX_PENDING of them) or, once authenticated, the one session. */
struct listener {
    struct {
        pid_t pid;
        uint64_t started;
    } conn[OM_PEER_MAX_PENDING + 1];
    int n;
    pid_t *owner; /* the session slot: its pid, or 0 */
    const struct om_peer_limits *lim;
};

static int session_running(const struct listener *l)
{
    return om_load(l->owner) != 0;
}

static int pending(const struct listener *l)
{
    pid_t owner = om_load(l->owner);
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += l->conn[i].pid != owner;
    return n;
}

/* Its process is gone: free its place, and the session slot if it held it. */
static void forget_connection(struct listener *l, int i)
{
    pid_t expected = l->conn[i].pid;
    om_cas(l->owner, &expected, 0);
    om_child_untrack(l->conn[i].pid); /* reaped already, or killed */
    l->conn[i] = l->conn[--l->n];
}

static void reap_connections(struct listener *l)
{
    uint64_t limit = (uint64_t)(l->lim->max_seconds + 5) * 1000000000ULL;
    for (int i = 0; i < l->n;) {
        int status;
        pid_t pid = l->conn[i].pid;
        if (om_child_exited(pid, &status)) {
            if (status != -1 && WIFSIGNALED(status)) /* a bug in the server, not the client's */
                om_peer_log("connection %ld died of signal %d", (long)pid, WTERMSIG(status));
            forget_connection(l, i);
        } else if (om_now_ns() - l->conn[i].started > limit) {
            om_peer_log("connection %ld outlived its time limit: killed", (long)pid);
            om_child_kill(pid);
            forget_connection(l, i);
        } else {
            i++;
        }
    }
}

/* Every place for an unauthenticated connection is taken: the one that has waited
 * longest leaves, so silent clients cannot keep a real one out. */
static void evict_oldest(struct listener *l)
{
    pid_t owner = om_load(l->owner);
    int oldest = -1;
    for (int i = 0; i < l->n; i++)
        if (l->conn[i].pid != owner && (oldest < 0 || l->conn[i].started < l->conn[oldest].started))
            oldest = i;
    if (oldest < 0)
        return;
    pid_t pid = l->conn[oldest].pid;
    om_peer_log("too many connections authenticating: dropped the oldest (%ld)", (long)pid);
    kill(pid, OM_PEER_EVICT_SIGNAL);
    for (int ms = 0; ms < 1000; ms++) {
        if (om_child_exited(pid, NULL)) {
            forget_connection(l, oldest);
            return;
        }
        if (om_load(l->owner) == pid)
            return; /* it authenticated meanwhile and is the session now */
        usleep(1000);
    }
    om_child_kill(pid);
    forget_connection(l, oldest);
}

int om_peer_listen(int lfd, const char *secret, struct om_peer_limits *limits)
{
    struct om_peer_limits lim = *limits;
    /* Stop cleanly on a signal: the poll below returns EINTR, the session is ended. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_serve_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    listener_pid = getpid();
    sa.sa_handler = on_evict;
    sigaction(OM_PEER_EVICT_SIGNAL, &sa, NULL);

    /* The session slot lives in memory shared with every connection's process. */
    pid_t *owner = mmap(NULL, sizeof *owner, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (owner == MAP_FAILED) {
        fprintf(stderr, "osmeter-core serve: mmap: %s\n", strerror(errno));
        return OM_FAILED;
    }
    *owner = 0;
    evict_owner = owner;
    lim.session_owner = owner;
    struct listener l = {.owner = owner, .lim = &lim};
    while (!serve_stop) {
        reap_connections(&l);
        struct pollfd p = {lfd, POLLIN, 0};
        if (poll(&p, 1, 200) <= 0)
            continue;
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        int fd = accept(lfd, (struct sockaddr *)&from, &fl);
        if (fd < 0)
            continue;
        char who[80];
        om_sock_format(&from, who, sizeof who);
        reap_connections(&l);
        if (!session_running(&l) && pending(&l) >= OM_PEER_MAX_PENDING)
            evict_oldest(&l);
        if (session_running(&l) || l.n == OM_PEER_MAX_PENDING + 1) {
            om_peer_log("turned away %s: a session is running", who);
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
            om_peer_send_line(fd, "BUSY %s", om_peer_busy_reason);
            close(fd);
            continue;
        }
        pid_t pid = om_fork();
        if (pid < 0) {
            om_peer_log("fork failed: %s", strerror(errno));
            close(fd);
            continue;
        }
        if (pid == 0) {
            close(lfd);
            _exit(om_peer_session(fd, secret, &lim));
        }
        close(fd);
        l.conn[l.n].pid = pid;
        l.conn[l.n++].started = om_now_ns();
    }
    while (l.n > 0) {
        om_child_kill(l.conn[0].pid);
        forget_connection(&l, 0);
    }
    munmap(owner, sizeof *owner);
    om_peer_log("stopped (signal %d)", (int)serve_stop);
    return 0;
}
