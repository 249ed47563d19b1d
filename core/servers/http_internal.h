/*
 * Between the HTTP server's own files (httpd.c, http_parse.c, http_files.c); nothing
 * else includes this.
 */
#ifndef OSMETER_SERVERS_HTTP_INTERNAL_H
#define OSMETER_SERVERS_HTTP_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

/* ---- the generated files (http_files.c) ---------------------------------------------- */
/* Index of the file served under this name, or -1. */
int http_file_find(const char *name);
/* Its size as written. */
off_t http_file_size(int i);

/* ---- requests and error responses (http_parse.c) ----------------------------------- */
struct http_req {
    int status;     /* 200, or the error to answer */
    int head;       /* HEAD: no body */
    int keep_alive; /* the client wants the connection kept */
    int must_close; /* framing is uncertain: close after the answer */
    int file;       /* index of the file asked for (http_file_find) */
};
/* Parse request line and headers in p[0..len), which ends with the empty line. */
void http_parse_request(const char *p, size_t len, struct http_req *r);
/* A complete error response into buf; returns its length. */
int http_error_response(char *buf, size_t len, int status, int head, int keep_alive);

#endif
