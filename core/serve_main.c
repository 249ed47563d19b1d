/*
 * The command lines of the two servers, beside main.c: `osmeter-core serve` (the far end
 * of the network benchmarks on another host: servers/peer*.c) and `osmeter-core httpd`
 * (the HTTP server on its own: servers/httpd.c).  Arguments, bounds, the one JSON line
 * that says where the server listens; the servers themselves do the rest.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal.h"
#include "lib/ev.h"
#include "lib/sha256.h"
#include "servers/httpd.h"
#include "servers/peer.h"

#ifndef SOCK_CLOEXEC /* macOS */
#define SOCK_CLOEXEC 0
#endif

/* ==== osmeter-core serve ================================================================= */

static int serve_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "osmeter-core serve: %s%s\n"
                    "usage: osmeter-core serve [--listen ADDR:PORT] [--max-seconds N] "
                    "[--max-bytes N] | serve --self-test\n"
                    "  the shared secret comes from $%s\n",
            msg, arg ? arg : "", OM_PEER_SECRET_ENV);
    return OM_BADPARAM;
}

int om_serve_main(int argc, char **argv)
{
    const char *listen_at = "127.0.0.1";
    struct om_peer_limits lim = om_peer_default_limits;
    for (int i = 1; i < argc; i++) {
        long long v;
        if (strcmp(argv[i], "--self-test") == 0) {
            int rc = om_sha256_self_test(1);
            printf("{\"type\":\"self_test\",\"status\":\"%s\"}\n", rc ? "failed" : "ok");
            return rc ? OM_FAILED : 0;
        } else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
            listen_at = argv[++i];
        } else if (strcmp(argv[i], "--max-seconds") == 0 && i + 1 < argc) {
            if (om_parse_int(argv[++i], &v) || v < 1 || v > 86400)
                return serve_usage("--max-seconds wants 1..86400, got ", argv[i]);
            lim.max_seconds = (long)v;
        } else if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) {
            if (om_parse_int(argv[++i], &v) || v < 1)
                return serve_usage("--max-bytes wants a positive size, got ", argv[i]);
            lim.max_bytes = v;
        } else {
            return serve_usage("unknown or incomplete argument ", argv[i]);
        }
    }
    const char *secret = getenv(OM_PEER_SECRET_ENV);
    if (!secret || strlen(secret) < 8)
        return serve_usage("refusing to start: set a shared secret of at least 8 characters "
                           "in $" OM_PEER_SECRET_ENV, NULL);
    if (om_sha256_self_test(0))
        return fprintf(stderr, "osmeter-core serve: SHA-256 self-test failed\n"), OM_FAILED;

    char host[256];
    int port;
    if (om_peer_parse_address(listen_at, host, sizeof host, &port))
        return serve_usage("cannot parse --listen ", listen_at);
    struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    int gai = getaddrinfo(host, portstr, &hints, &ai);
    if (gai)
        return fprintf(stderr, "osmeter-core serve: cannot resolve %s: %s\n", host,
                       gai_strerror(gai)), OM_BADPARAM;
    int lfd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
    int one = 1, off = 0;
    if (lfd >= 0) {
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ai->ai_family == AF_INET6) /* [::] serves IPv4 too */
            setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    }
    if (lfd < 0 || bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 16)) {
        fprintf(stderr, "osmeter-core serve: cannot listen on %s: %s\n", listen_at,
                strerror(errno));
        freeaddrinfo(ai);
        return OM_FAILED;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage bound;
    socklen_t bl = sizeof bound;
    getsockname(lfd, (struct sockaddr *)&bound, &bl);
    char where[80];
    om_sock_format(&bound, where, sizeof where);
    printf("{\"type\":\"listening\",\"address\":");
    om_json_string(stdout, where);
    printf(",\"port\":%d,\"max_session_seconds\":%ld,\"max_session_bytes\":%lld}\n",
           om_sock_port(&bound), lim.max_seconds, lim.max_bytes);
    fflush(stdout);
    om_peer_log("listening on %s; one session at a time, each at most %ld s and %lld bytes",
                where, lim.max_seconds, lim.max_bytes);
    int rc = om_peer_listen(lfd, secret, &lim);
    close(lfd);
    return rc;
}

/* ==== osmeter-core httpd ================================================================= */

#define HTTPD_USAGE                                                                        \
    "osmeter-core httpd [mech=" EV_MECHS "] [addr=127.0.0.1] [port=0] "                 \
    "[files=100,1k,1m] [max_conns=10000] [max_request=8k] [idle_timeout=60] "               \
    "[request_timeout=10] [duration=0]"

/* Bad input: one line, exit status 2. */
static int httpd_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "osmeter-core httpd: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (osmeter-core httpd help)\n");
    return OM_BADPARAM;
}

static int int_arg(const char *v, long long lo, long long hi, long long *out)
{
    return om_parse_int(v, out) == 0 && *out >= lo && *out <= hi ? 0 : -1;
}

struct announce {
    const char *mech, *host;
    int port, ipv6;
    const char *dir;
    long long max_conns, max_request, idle, request, duration;
};

/* The first line on stdout, once the server serves: where, what, and its bounds. */
static void announce(int capacity, void *arg)
{
    struct announce *a = arg;
    printf("{\"type\":\"httpd\",\"pid\":%ld,\"mech\":\"%s\",\"file_io\":\"%s\",\"addr\":",
           (long)getpid(), a->mech, httpd_file_io());
    om_json_string(stdout, a->host);
    printf(",\"port\":%d,\"url\":\"http://%s%s%s:%d/\",\"dir\":", a->port, a->ipv6 ? "[" : "",
           a->host, a->ipv6 ? "]" : "", a->port);
    om_json_string(stdout, a->dir);
    printf(",\"files\":[");
    for (int i = 0; httpd_file_name(i); i++)
        printf("%s\"/%s\"", i ? "," : "", httpd_file_name(i));
    printf("],\"max_conns\":%d,\"max_request\":%lld,\"idle_timeout_s\":%lld,"
           "\"request_timeout_s\":%lld,\"duration_s\":%lld}\n",
           capacity, a->max_request, a->idle, a->request, a->duration);
    fflush(stdout);
    if (capacity < a->max_conns)
        fprintf(stderr, "osmeter-core httpd: note: holds at most %d connections (%s), "
                        "not %lld\n", capacity,
                strcmp(a->mech, "select") == 0 ? "select: FD_SETSIZE" : "descriptor limit",
                a->max_conns);
}

int om_httpd_main(int argc, char **argv)
{
    const char *mech = "best", *addr = "127.0.0.1", *files = "100,1k,1m";
    long long port = 0, max_conns = 10000, max_request = 8192, idle = 60, request = 10,
              duration = 0;
    if (argc == 1 && (strcmp(argv[0], "help") == 0 || strcmp(argv[0], "--help") == 0)) {
        printf("usage: %s\n"
               "Serves the files it generates (file-<size> for each size in files) from a "
               "directory it owns\nand removes on exit; prints one JSON line with its address "
               "once it serves.\n", HTTPD_USAGE);
        return 0;
    }
    for (int i = 0; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq)
            return httpd_usage("expected key=value, got '%s'", argv[i]);
        *eq = 0;
        const char *k = argv[i], *v = eq + 1;
        int bad = 0;
        if (strcmp(k, "mech") == 0)
            mech = v;
        else if (strcmp(k, "addr") == 0)
            addr = v;
        else if (strcmp(k, "files") == 0)
            files = v;
        else if (strcmp(k, "port") == 0)
            bad = int_arg(v, 0, 65535, &port);
        else if (strcmp(k, "max_conns") == 0)
            bad = int_arg(v, 1, 1000000, &max_conns);
        else if (strcmp(k, "max_request") == 0)
            bad = int_arg(v, 256, 1024 * 1024, &max_request);
        else if (strcmp(k, "idle_timeout") == 0)
            bad = int_arg(v, 1, 86400, &idle);
        else if (strcmp(k, "request_timeout") == 0)
            bad = int_arg(v, 1, 3600, &request);
        else if (strcmp(k, "duration") == 0)
            bad = int_arg(v, 0, 30LL * 86400, &duration);
        else
            return httpd_usage("unknown option '%s'", k);
        if (bad) {
            *eq = '=';
            return httpd_usage("bad value in '%s'", argv[i]);
        }
    }
    unsigned char probe_addr[sizeof(struct in6_addr)];
    if (inet_pton(AF_INET, addr, probe_addr) != 1 && inet_pton(AF_INET6, addr, probe_addr) != 1)
        return httpd_usage("addr: '%s' is not a numeric IPv4 or IPv6 address", addr);
    char err[512];
    const char *resolved = ev_resolve(mech, err, sizeof err);
    if (!resolved)
        return httpd_usage("%s", err);
    long long sizes[HTTPD_MAX_FILES];
    int nsizes = 0;
    char list[1024];
    snprintf(list, sizeof list, "%s", files);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (nsizes == HTTPD_MAX_FILES || om_parse_int(tok, &sizes[nsizes]) || sizes[nsizes] < 0 ||
            sizes[nsizes] > 256LL * 1024 * 1024)
            return httpd_usage("files: '%s' is not a list of up to 16 sizes in [0, 256m]", files);
        nsizes++;
    }
    if (nsizes == 0)
        return httpd_usage("files: empty list%s", "");

    const char *scratch = om_scratch_dir();
    if (!scratch) {
        fprintf(stderr, "osmeter-core httpd: cannot create a scratch directory: %s\n",
                strerror(errno));
        return OM_FAILED;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/www", scratch);
    if (httpd_make_files(dir, sizes, nsizes, err, sizeof err)) {
        fprintf(stderr, "osmeter-core httpd: %s\n", err);
        return OM_FAILED;
    }
    int lfd = httpd_listen(addr, (int)port, err, sizeof err);
    if (lfd < 0) {
        fprintf(stderr, "osmeter-core httpd: %s\n", err);
        return OM_FAILED;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "?";
    int bound = -1;
    if (getsockname(lfd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
            bound = ntohs(a->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
            bound = ntohs(a->sin6_port);
        }
    }
    if (strncmp(host, "127.", 4) != 0 && strcmp(host, "::1") != 0)
        fprintf(stderr, "osmeter-core httpd: note: listening on %s, not loopback\n", host);
    struct announce a = {resolved, host, bound, ss.ss_family == AF_INET6, dir, max_conns,
                         max_request, idle, request, duration};
    struct httpd_config cfg = {
        .mech = resolved,
        .listen_fd = lfd,
        .dir = dir,
        .max_conns = (int)max_conns,
        .max_request = (int)max_request,
        .idle_timeout_ms = (int)(idle * 1000),
        .request_timeout_ms = (int)(request * 1000),
        .write_timeout_ms = (int)(request * 1000),
        .duration_s = (double)duration,
        .probe = NULL,
        .notify_fd = -1,
        .on_ready = announce,
        .on_ready_arg = &a,
    };
    int rc = httpd_serve(&cfg, err, sizeof err);
    close(lfd);
    if (rc) {
        fprintf(stderr, "osmeter-core httpd: %s\n", err);
        return OM_FAILED;
    }
    return 0;
}
