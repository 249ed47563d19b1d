/*
 * A small HTTP/1.1 server for the event-notification experiments (von Leitner 2003),
 * run by the net.http_* benchmarks in a child process and by `osmeter-core httpd`
 * on its own (its command line is in serve_main.c).  It serves only the files it
 * generated itself in a directory it owns, binds loopback unless told otherwise, and
 * bounds connections, request size and time.  Its pieces: httpd.c (the event loop and
 * the connections), http_parse.c (requests and error responses), http_files.c (the
 * generated files); the event layer is lib/ev.c.
 */
#ifndef OSMETER_SERVERS_HTTPD_H
#define OSMETER_SERVERS_HTTPD_H

#include <stddef.h>
#include <stdint.h>

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
    const char *mech;       /* resolved (ev_resolve): epoll, kqueue, poll, select */
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

#define HTTPD_MAX_FILES 16
/* Create file-<size> for each size in dir (and remember them: only these are served). */
int httpd_make_files(const char *dir, const long long *sizes, int n, char *err, size_t errlen);
/* The name of the i-th file served ("file-100"), or NULL past the last. */
const char *httpd_file_name(int i);
/* A listening TCP socket on a numeric address (port 0: any free port). */
int httpd_listen(const char *addr, int port, char *err, size_t errlen);
/* Serve until duration_s elapses (or forever); returns 0, or -1 with a reason in err. */
int httpd_serve(const struct httpd_config *cfg, char *err, size_t errlen);

#endif
