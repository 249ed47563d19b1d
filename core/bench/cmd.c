/*
 * The user's own command as a benchmark: `cmd.run` times any program as a whole process
 * (wall clock, user and system CPU time and peak memory from wait4's rusage), with
 * warm-up runs, optional setup/cleanup commands outside the timing, an optional cold
 * page cache, and a timeout that kills the command together with its children.
 *
 * The command arrives as a JSON array of strings (argv=["prog","arg 1"]), so any argument
 * survives the trip through the front-end untouched; no shell is involved unless the
 * user asks for one (shell=yes).  The program runner is core/lib/program.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "../lib/pagecache.h"
#include "../lib/program.h"

/* ---- argv as a JSON array of strings --------------------------------------------- */

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static long read_u4(const char **p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)(*p)[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    *p += 4;
    return v;
}

static char *put_utf8(char *o, long cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

#define MAX_ARGS 1024

/* Parses ["a","b\n",...] into argv (strings stored in `store`, which must be at least as
 * long as the input).  Returns the count, or -1 with a message in err. */
static int parse_argv(const char *s, char *store, char **argv, char *err, size_t errlen)
{
    const char *p = s;
    char *o = store;
    int n = 0;
    while (*p == ' ')
        p++;
    if (*p++ != '[') {
        snprintf(err, errlen, "argv must be a JSON array of strings, e.g. [\"ls\",\"-l\"]");
        return -1;
    }
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p == ']' && n == 0) {
            p++;
            break;
        }
        if (*p++ != '"') {
            snprintf(err, errlen, "argv: expected a string at offset %ld", (long)(p - s - 1));
            return -1;
        }
        if (n >= MAX_ARGS - 1) {
            snprintf(err, errlen, "argv: more than %d arguments", MAX_ARGS - 1);
            return -1;
        }
        argv[n++] = o;
        for (;;) {
            unsigned char c = (unsigned char)*p++;
            if (c == 0) {
                snprintf(err, errlen, "argv: unterminated string");
                return -1;
            }
            if (c == '"')
                break;
            if (c != '\\') {
                *o++ = (char)c;
                continue;
            }
            c = (unsigned char)*p++;
            long cp;
            switch (c) {
            case '"': case '\\': case '/': *o++ = (char)c; break;
            case 'b': *o++ = '\b'; break;
            case 'f': *o++ = '\f'; break;
            case 'n': *o++ = '\n'; break;
            case 'r': *o++ = '\r'; break;
            case 't': *o++ = '\t'; break;
            case 'u':
                cp = read_u4(&p);
                if (cp >= 0xD800 && cp < 0xDC00 && p[0] == '\\' && p[1] == 'u') {
                    p += 2;
                    long lo = read_u4(&p);
                    if (lo < 0xDC00 || lo > 0xDFFF)
                        cp = -1;
                    else
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                if (cp <= 0) { /* malformed, or NUL, which no argument can hold */
                    snprintf(err, errlen, "argv: bad \\u escape");
                    return -1;
                }
                o = put_utf8(o, cp);
                break;
            default:
                snprintf(err, errlen, "argv: bad escape \\%c", c);
                return -1;
            }
        }
        *o++ = 0;
        while (*p == ' ')
            p++;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p++ == ']')
            break;
        snprintf(err, errlen, "argv: expected ',' or ']' at offset %ld", (long)(p - s - 1));
        return -1;
    }
    while (*p == ' ')
        p++;
    if (*p) {
        snprintf(err, errlen, "argv: unexpected text after the array");
        return -1;
    }
    argv[n] = NULL;
    return n;
}

/* ---- cmd.run -------------------------------------------------------------------- */

/* sync, then drop the page cache, dentries and inodes (Linux, root only). */
static int drop_caches(char *why, size_t len)
{
    if (pagecache_drop_all() == 0)
        return 0;
    if (errno == ENOSYS)
        snprintf(why, len, "cold_cache=yes is only implemented on Linux (drop_caches)");
    else
        snprintf(why, len, "cold_cache=yes needs root: cannot write /proc/sys/vm/drop_caches "
                           "(%s)", strerror(errno));
    return -1;
}

/* One run: setup, (drop caches,) the command, cleanup.  Returns 0, or om_fail's value. */
static int one_run(struct om_ctx *ctx, const struct prog_spec *spec, const char *label,
                   struct prog_result *res)
{
    const char *setup = om_str(ctx, "setup"), *cleanup = om_str(ctx, "cleanup");
    int cold = strcmp(om_str(ctx, "cold_cache"), "yes") == 0;
    char why[512];
    if (*setup && prog_run_shell(setup, spec->out_path, spec->timeout_s, why, sizeof why))
        return om_fail(ctx, "setup command failed before %s: %s", label, why);
    if (cold && drop_caches(why, sizeof why))
        return om_fail(ctx, "%s", why);
    if (prog_run(spec, res))
        return om_fail(ctx, "cannot start the command: %s", strerror(errno));
    if (!prog_succeeded(res)) {
        prog_describe_failure(res, spec->timeout_s, why, sizeof why);
        int rc = om_fail(ctx, "the command %s in %s", why, label);
        if (*cleanup) /* still clean up after a failed run */
            prog_run_shell(cleanup, spec->out_path, spec->timeout_s, why, sizeof why);
        return rc;
    }
    if (*cleanup && prog_run_shell(cleanup, spec->out_path, spec->timeout_s, why, sizeof why))
        return om_fail(ctx, "cleanup command failed after %s: %s", label, why);
    return OM_OK;
}

static int run_cmd(struct om_ctx *ctx)
{
    const char *json = om_str(ctx, "argv");
    if (!*json)
        return om_skip(ctx, "no command given (osmeter run cmd --name NAME -- COMMAND ARGS...)");
    size_t len = strlen(json) + 1;
    char *store = malloc(len);
    char **argv = malloc(sizeof(char *) * MAX_ARGS);
    char err[256];
    if (!store || !argv) {
        free(store);
        free(argv);
        return om_fail(ctx, "out of memory");
    }
    int rc = OM_OK;
    int n = parse_argv(json, store, argv, err, sizeof err);
    if (n < 0) {
        rc = om_bad_param(ctx, "%s", err);
        goto out;
    }
    if (n == 0) {
        rc = om_bad_param(ctx, "argv: the command is empty");
        goto out;
    }
    char *shell_argv[] = {"/bin/sh", "-c", argv[0], NULL};
    int shell = strcmp(om_str(ctx, "shell"), "yes") == 0;
    if (shell && n != 1) {
        rc = om_bad_param(ctx, "shell=yes takes the whole command line as one string");
        goto out;
    }
    char path[4096];
    if (!shell && !prog_find(argv[0], path, sizeof path)) {
        rc = om_fail(ctx, "command not found: %s", argv[0]);
        goto out;
    }
    struct prog_spec spec = {.argv = shell ? shell_argv : argv, .out_path = om_str(ctx, "output"),
                             .timeout_s = (double)om_int(ctx, "timeout_s")};
    if (*spec.out_path) { /* fail on an unwritable output file before running anything */
        int fd = open(spec.out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
            rc = om_fail(ctx, "cannot write output file %s: %s", spec.out_path, strerror(errno));
            goto out;
        }
        close(fd);
    }
    const char *name = om_str(ctx, "name");
    om_note(ctx, "command", "%s", shell ? argv[0] : json);
    if (*name)
        om_note(ctx, "name", "%s", name);
    om_note(ctx, "output", "%s", *spec.out_path ? spec.out_path : "/dev/null");

    long long warmup = om_int(ctx, "warmup"), samples = om_int(ctx, "samples");
    struct prog_result res;
    char label[64];
    for (long long i = 0; i < warmup && rc == OM_OK; i++) {
        snprintf(label, sizeof label, "warm-up run %lld", i + 1);
        rc = one_run(ctx, &spec, label, &res);
    }
    for (long long i = 0; i < samples && rc == OM_OK; i++) {
        snprintf(label, sizeof label, "timed run %lld of %lld", i + 1, samples);
        if ((rc = one_run(ctx, &spec, label, &res)))
            break;
        om_sample(ctx, "wall", OM_NO_X, res.wall_ns);
        om_sample(ctx, "user", OM_NO_X, res.user_ns);
        om_sample(ctx, "system", OM_NO_X, res.sys_ns);
        om_sample(ctx, "max_rss", OM_NO_X, res.max_rss_bytes);
    }
out:
    free(store);
    free(argv);
    return rc;
}

const struct om_bench om_family_cmd[] = {
    {"cmd.run", "the user's own command, timed as a whole process (osmeter run cmd --name "
     "NAME -- COMMAND ...)", "osmeter (CC06 T1 style)", "", {2.0, 2.0, 2.0}, run_cmd,
     {{"argv", OM_STR, "", NULL, NULL, 0, 0, NULL,
       "the command as a JSON array of strings, e.g. [\"vim\",\"-es\",\"big.txt\"]"},
      {"shell", OM_CHOICE, "no", NULL, NULL, 0, 0, "no|yes",
       "yes: argv holds one string run by /bin/sh -c"},
      {"name", OM_STR, "", NULL, NULL, 0, 0, NULL, "the user's name for the command"},
      {"samples", OM_INT, "10", "5", "2", 1, 100000, NULL,
       "timed runs in each repetition (process)"},
      {"warmup", OM_INT, "1", "1", "0", 0, 1000, NULL, "untimed runs before the timed ones"},
      {"setup", OM_STR, "", NULL, NULL, 0, 0, NULL,
       "shell command run before every run, outside the timing"},
      {"cleanup", OM_STR, "", NULL, NULL, 0, 0, NULL,
       "shell command run after every run, outside the timing"},
      {"cold_cache", OM_CHOICE, "no", NULL, NULL, 0, 0, "no|yes",
       "yes: sync and drop the page cache before every run (Linux, root)"},
      {"timeout_s", OM_INT, "600", NULL, NULL, 1, 86400, NULL,
       "seconds one run may take; then it is killed with its children"},
      {"output", OM_STR, "", NULL, NULL, 0, 0, NULL,
       "file that receives the command's output (appended); empty: /dev/null"}},
     {{"wall", "ns", "lower", OM_POINT, NULL, "elapsed time from fork to exit"},
      {"user", "ns", "lower", OM_POINT, NULL, "user CPU time (with waited-for children)"},
      {"system", "ns", "lower", OM_POINT, NULL, "system CPU time (with waited-for children)"},
      {"max_rss", "bytes", "lower", OM_POINT, NULL, "peak resident memory"}}},
    {0},
};
