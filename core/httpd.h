/*
 * A small HTTP/1.1 server for the event-notification experiments (von Leitner 2003),
 * run by the net.http_* benchmarks in a child process and by `osmeter-core httpd`
 * on its own.  It serves only the files it generated itself in a directory it owns,
 * binds loopback unless told otherwise, and bounds connections, request size and time.
 *
 * The event layer (ev_*) is shared with the benchmark's throughput client.
 */
#ifndef OSMETER_HTTPD_H
#define OSMETER_HTTPD_H

#include <stddef.h>
#include <stdint.h>

/* ---- event notification: epoll | kqueue | poll | select ------------------------- */
#define HTTPD_MECHS "best|epoll|kqueue|poll|select"

struct ev;
struct ev_event {
    int fd;
    int readable; /* also set on hang-up and error: the next read tells which */
    int writable; /* also set on hang-up and error: the next write tells which */
};
/* The best mechanism this system offers: epoll (Linux), kqueue (BSD, macOS), else poll. */
const char *ev_best(void);
/* "best" resolved; NULL (and a reason in why) when the mechanism is not available. */
const char *ev_resolve(const char *mech, char *why, size_t whylen);
/* Descriptors registered must be below `limit` (select caps it at FD_SETSIZE). */
struct ev *ev_open(const char *mech, int limit, char *err, size_t errlen);
int ev_limit(const struct ev *ev);
int ev_set(struct ev *ev, int fd, int want_read, int want_write, int is_new);
int ev_del(struct ev *ev, int fd);
/* Fills up to max events; returns their number, 0 on timeout or EINTR, -1 on error. */
int ev_wait(struct ev *ev, struct ev_event *out, int max, int timeout_ms);
void ev_close(struct ev *ev);

/* ---- the server ------------------------------------------------------------------ */
/* How response bodies are sent: "sendfile", or "pread+send" where there is none. */
const char *httpd_file_io(void);
/* Shared memory between a benchmark and its server child (NULL when run alone). */
struct httpd_probe {
    uint64_t accept_cycles; /* om_cycles() right after the last accept() returned */
    uint64_t accepted;      /* connections accepted so far (refused ones included) */
    uint64_t refused;       /* accepted and closed at once: over capacity */
    uint64_t responses;     /* responses completely sent */
    int armed;              /* the client wants one byte on notify_fd after the next accept */
    int waiting;            /* the server is (about to be) blocked in the event wait */
    int ready;              /* the server is in its loop */
    int capacity;           /* connections it can hold at once */
};

struct httpd_config {
    const char *mech;       /* resolved: epoll, kqueue, poll, select */
    int listen_fd;          /* bound and listening */
    const char *dir;        /* directory with the generated files (httpd_make_files) */
    int max_conns;
    int max_request;        /* bytes of request line + headers */
    int idle_timeout_ms;    /* keep-alive connection without a request */
    int request_timeout_ms; /* from the first byte of a request to its end */
    int write_timeout_ms;   /* without progress sending a response */
    double duration_s;      /* stop after this long; 0 = until killed */
    struct httpd_probe *probe;
    int notify_fd;          /* -1, or a pipe for the probe's accept notification */
    /* Called once, when the server is about to serve, with the connections it can hold
     * (max_conns, or fewer where descriptors or FD_SETSIZE bound it); may be NULL. */
    void (*on_ready)(int capacity, void *arg);
    void *on_ready_arg;
};

/* Create file-<size> for each size in dir (and remember them: only these are served). */
int httpd_make_files(const char *dir, const long long *sizes, int n, char *err, size_t errlen);
/* A listening TCP socket on a numeric address (port 0: any free port). */
int httpd_listen(const char *addr, int port, char *err, size_t errlen);
/* Raise the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force. */
long long httpd_raise_nofile(void);
/* Serve until duration_s elapses (or forever); returns 0, or -1 with a reason in err. */
int httpd_serve(const struct httpd_config *cfg, char *err, size_t errlen);
/* `osmeter-core httpd key=value ...` */
int httpd_main(int argc, char **argv);

#endif
