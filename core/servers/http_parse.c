/*
 * HTTP/1.1 requests as the server reads them (RFC 9112): the request line and headers,
 * strictly, and the error responses for what it refuses.  A request names one generated
 * file (percent-decoding first, then refusing '/', '\\', NUL, control bytes and names
 * starting with '.'), or it is answered with an error status.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http_internal.h"

static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The request target names one generated file, or it is refused (400) or unknown (404). */
static int resolve_target(const char *t, size_t len, int *file)
{
    if (len > 1024)
        return 414;
    if (len == 0 || t[0] != '/')
        return 400; /* absolute-form, authority-form and '*' are not served here */
    char name[64];
    size_t n = 0;
    for (size_t i = 1; i < len; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c <= 0x20 || c >= 0x7f || c == '#')
            return 400;
        if (c == '?')
            break; /* a query string is ignored */
        if (c == '%') {
            int hi = i + 2 < len ? hexval((unsigned char)t[i + 1]) : -1;
            int lo = i + 2 < len ? hexval((unsigned char)t[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return 400;
            c = (unsigned char)(hi * 16 + lo);
            i += 2;
        }
        /* No directories here: a separator (plain or encoded) or a control byte is a
         * request for something this server does not have, and is refused as such. */
        if (c == '/' || c == '\\' || c < 0x20 || c >= 0x7f)
            return 400;
        if (n + 1 >= sizeof name)
            return 404;
        name[n++] = (char)c;
    }
    name[n] = 0;
    if (n > 0 && name[0] == '.')
        return 400; /* ".", "..", hidden names */
    *file = http_file_find(name);
    return *file >= 0 ? 200 : 404;
}

/* Does the comma-separated header value contain the token (case-insensitive)? */
static int has_token(const char *v, size_t len, const char *tok)
{
    size_t tl = strlen(tok);
    size_t i = 0;
    while (i < len) {
        while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t start = i;
        while (i < len && v[i] != ',')
            i++;
        size_t end = i;
        while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
            end--;
        if (end - start == tl && strncasecmp(v + start, tok, tl) == 0)
            return 1;
    }
    return 0;
}

static int name_is(const char *p, size_t len, const char *name)
{
    return strlen(name) == len && strncasecmp(p, name, len) == 0;
}

void http_parse_request(const char *p, size_t len, struct http_req *r)
{
    const char *end = p + len;
    memset(r, 0, sizeof *r);
    r->status = 400;
    r->must_close = 1;
    r->file = -1;

    const char *eol = memchr(p, '\n', len);
    const char *le = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
    const char *sp1 = memchr(p, ' ', (size_t)(le - p));
    if (!sp1 || sp1 == p)
        return;
    const char *target = sp1 + 1;
    const char *sp2 = memchr(target, ' ', (size_t)(le - target));
    if (!sp2)
        return;
    const char *version = sp2 + 1;
    size_t vlen = (size_t)(le - version);
    for (const char *m = p; m < sp1; m++)
        if (!is_tchar((unsigned char)*m))
            return;
    int minor;
    if (vlen == 8 && memcmp(version, "HTTP/1.", 7) == 0 && (version[7] == '0' || version[7] == '1'))
        minor = version[7] - '0';
    else if (vlen == 8 && memcmp(version, "HTTP/", 5) == 0 && version[5] >= '0' &&
             version[5] <= '9' && version[6] == '.' && version[7] >= '0' && version[7] <= '9') {
        r->status = 505;
        return;
    } else
        return;
    r->keep_alive = minor == 1;

    int hosts = 0, body = 0, headers = 0;
    for (const char *q = eol + 1; q < end;) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        if (!nl)
            return;
        const char *hl = nl > q && nl[-1] == '\r' ? nl - 1 : nl;
        if (hl == q)
            break; /* the empty line */
        if (*q == ' ' || *q == '\t')
            return; /* obsolete line folding */
        if (++headers > 100) {
            r->status = 431;
            return;
        }
        const char *colon = memchr(q, ':', (size_t)(hl - q));
        if (!colon || colon == q)
            return;
        for (const char *c = q; c < colon; c++)
            if (!is_tchar((unsigned char)*c))
                return;
        const char *v = colon + 1, *ve = hl;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        size_t nlen = (size_t)(colon - q), vl = (size_t)(ve - v);
        if (name_is(q, nlen, "host"))
            hosts++;
        else if (name_is(q, nlen, "content-length")) {
            if (vl == 0 || strspn(v, "0123456789") < vl)
                return;
            if (strspn(v, "0") < vl)
                body = 1;
        } else if (name_is(q, nlen, "transfer-encoding"))
            body = 1;
        else if (name_is(q, nlen, "connection")) {
            if (has_token(v, vl, "close"))
                r->keep_alive = 0;
            else if (has_token(v, vl, "keep-alive"))
                r->keep_alive = 1;
        }
        q = nl + 1;
    }
    if (hosts > 1 || (minor == 1 && hosts == 0))
        return; /* RFC 9112 §3.2: exactly one Host in HTTP/1.1 */
    size_t mlen = (size_t)(sp1 - p);
    if (mlen == 4 && memcmp(p, "HEAD", 4) == 0)
        r->head = 1;
    else if (!(mlen == 3 && memcmp(p, "GET", 3) == 0)) {
        r->status = 405;
        r->must_close = body; /* a body we will not read would break the framing */
        return;
    }
    if (body) {
        r->status = 413; /* GET and HEAD carry no content here */
        return;
    }
    r->status = resolve_target(target, (size_t)(sp2 - target), &r->file);
    r->must_close = r->status == 400 || r->status == 414;
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    }
    return "Error";
}

/* For the paths that answer and close at once. */
int http_error_response(char *buf, size_t len, int status, int head, int keep_alive)
{
    char body[64];
    int blen = snprintf(body, sizeof body, "%d %s\n", status, reason(status));
    return snprintf(buf, len,
                    "HTTP/1.1 %d %s\r\nServer: osmeter\r\nContent-Type: text/plain\r\n"
                    "Content-Length: %d\r\n%sConnection: %s\r\n\r\n%s",
                    status, reason(status), blen,
                    status == 405 ? "Allow: GET, HEAD\r\n" : "",
                    keep_alive ? "keep-alive" : "close", head ? "" : body);
}

/* Stop sending, read what the client has sent so far, close: a socket closed with
 * unread input sends a reset, which can destroy the answer before the client reads it. */
