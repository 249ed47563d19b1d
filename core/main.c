/* osmeter-core: `list`, `run ID [key=value ...]`, `check`, `version`; `serve` and `httpd`
 * are in serve_main.c.  See docs/protocol.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__GLIBC__) && !defined(__UCLIBC__)
#include <gnu/libc-version.h>
#endif
#if defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) || defined(__DragonFly__)
#include <sys/param.h>
#endif
#ifdef __APPLE__
#include <AvailabilityMacros.h>
#endif

#include "internal.h"
#include "buildinfo.h"

static const struct om_bench *find_bench(const char *id)
{
    for (int f = 0; om_families[f]; f++)
        for (const struct om_bench *b = om_families[f]; b->id; b++)
            if (strcmp(b->id, id) == 0)
                return b;
    return NULL;
}

static void print_nullable(const char *key, const char *v)
{
    printf(",\"%s\":", key);
    if (v)
        om_json_string(stdout, v);
    else
        fputs("null", stdout);
}

static const char *kind_name(enum om_kind k)
{
    switch (k) {
    case OM_INT: return "int";
    case OM_LIST: return "list";
    case OM_CHOICE: return "choice";
    case OM_STR: return "str";
    }
    return "?";
}

static void print_metrics(const struct om_bench *b)
{
    printf(",\"metrics\":[");
    for (int i = 0; i < OM_MAX_METRICS && b->metrics[i].name; i++) {
        const struct om_metric *m = &b->metrics[i];
        printf("%s{\"name\":", i ? "," : "");
        om_json_string(stdout, m->name);
        print_nullable("unit", m->unit);
        print_nullable("better", m->better);
        print_nullable("shape", m->shape);
        print_nullable("x_name", m->x_name);
        print_nullable("help", m->help);
        printf("}");
    }
    printf("]");
}

static void print_bench(const struct om_bench *b)
{
    printf("{\"type\":\"bench\",\"id\":");
    om_json_string(stdout, b->id);
    print_nullable("help", b->help);
    print_nullable("source", b->source);
    print_nullable("suites", b->suites);
    printf(",\"est_seconds\":%g,\"est_seconds_by_preset\":{\"default\":%g,\"quick\":%g,"
           "\"smoke\":%g}", b->est.def, b->est.def, b->est.quick, b->est.smoke);
    printf(",\"params\":[");
    for (int i = 0; i < OM_MAX_PARAMS && b->params[i].name; i++) {
        const struct om_param *p = &b->params[i];
        printf("%s{\"name\":", i ? "," : "");
        om_json_string(stdout, p->name);
        printf(",\"kind\":\"%s\"", kind_name(p->kind));
        print_nullable("default", p->def);
        print_nullable("quick", p->quick ? p->quick : p->def);
        print_nullable("smoke", p->smoke ? p->smoke : p->quick ? p->quick : p->def);
        if (p->kind == OM_INT || p->kind == OM_LIST)
            printf(",\"min\":%lld,\"max\":%lld", p->min, p->max);
        print_nullable("choices", p->choices);
        print_nullable("help", p->help);
        printf("}");
    }
    printf("]");
    print_metrics(b);
    printf("}\n");
}

/* The C library this core was built against (and, for glibc, runs with): what is
 * measured is the system's libc as much as its kernel.  Version NULL where the library
 * does not say (musl keeps its version to itself on purpose). */
static const char *c_library(char *version, size_t len)
{
    *version = 0;
#if defined(__GLIBC__) && !defined(__UCLIBC__)
    snprintf(version, len, "%s", gnu_get_libc_version());
    return "glibc";
#elif defined(__UCLIBC__)
    snprintf(version, len, "%d.%d.%d", __UCLIBC_MAJOR__, __UCLIBC_MINOR__, __UCLIBC_SUBLEVEL__);
    return "uClibc";
#elif defined(__BIONIC__)
    return "bionic";
#elif defined(__linux__)
    return "musl"; /* no macro of its own: the Linux C library that is none of the above */
#elif defined(__FreeBSD__)
    snprintf(version, len, "%d", __FreeBSD_version);
    return "FreeBSD libc";
#elif defined(__NetBSD__)
    snprintf(version, len, "%d.%d", __NetBSD_Version__ / 100000000,
             __NetBSD_Version__ / 1000000 % 100);
    return "NetBSD libc";
#elif defined(__OpenBSD__)
    snprintf(version, len, "%d", OpenBSD);
    return "OpenBSD libc";
#elif defined(__DragonFly__)
    snprintf(version, len, "%d", __DragonFly_version);
    return "DragonFly libc";
#elif defined(__APPLE__)
    /* MMmmpp since macOS 10.10 */
    snprintf(version, len, "macOS %d.%d (deployment target)",
             MAC_OS_X_VERSION_MIN_REQUIRED / 10000, MAC_OS_X_VERSION_MIN_REQUIRED / 100 % 100);
    return "Apple libSystem";
#else
    return "unknown";
#endif
}

static void print_libc(void)
{
    char version[64];
    const char *name = c_library(version, sizeof version);
    printf(",\"libc\":{\"name\":");
    om_json_string(stdout, name);
    print_nullable("version", *version ? version : NULL);
    printf("}");
}

/* A usage error: one line on stderr, one JSON line on stdout for the front-end. */
static int usage_error(const char *fmt, const char *a, const char *b)
{
    char msg[1024];
    snprintf(msg, sizeof msg, fmt, a, b);
    printf("{\"type\":\"error\",\"reason\":");
    om_json_string(stdout, msg);
    printf("}\n");
    fflush(stdout);
    fprintf(stderr, "osmeter-core: %s\n", msg);
    return OM_BADPARAM;
}

/* Benchmarks of a statically linked program run in the static build of the core: exec
 * it with the same arguments.  Returns only where it could not: 0 when there is no
 * static build, else the errno of the exec. */
static int exec_static_core(int argc, char **argv)
{
    const char *stat = om_sibling_path("osmeter-core-static");
    if (!stat)
        return 0;
    char *args[OM_MAX_PARAMS + 8];
    int n = 0;
    args[n++] = (char *)stat;
    args[n++] = "run";
    for (int i = 0; i < argc && n < OM_MAX_PARAMS + 6; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    fflush(stdout);
    om_exec_own(stat, args);
    return errno;
}

/* ctx->values from the preset's values and the key=value arguments, each checked;
 * 0, or the exit status of a usage error. */
static int set_params(struct om_ctx *ctx, int argc, char **argv, const char **preset_out)
{
    const struct om_bench *b = ctx->bench;
    const char *preset = "default";
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--preset=", 9) == 0)
            preset = argv[i] + 9;
    if (strcmp(preset, "default") && strcmp(preset, "quick") && strcmp(preset, "smoke"))
        return usage_error("unknown preset '%s'%s (default, quick or smoke)", preset, "");
    *preset_out = preset;
    for (int i = 0; i < OM_MAX_PARAMS && b->params[i].name; i++) {
        const struct om_param *p = &b->params[i];
        const char *quick = p->quick ? p->quick : p->def;
        const char *smoke = p->smoke ? p->smoke : quick;
        ctx->values[i] = strcmp(preset, "smoke") == 0   ? smoke
                         : strcmp(preset, "quick") == 0 ? quick
                                                        : p->def;
    }
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--preset=", 9) == 0)
            continue;
        char *eq = strchr(argv[i], '=');
        if (!eq)
            return usage_error("expected key=value, got '%s'%s", argv[i], "");
        *eq = 0;
        int found = -1;
        for (int j = 0; j < OM_MAX_PARAMS && b->params[j].name; j++)
            if (strcmp(b->params[j].name, argv[i]) == 0)
                found = j;
        if (found < 0)
            return usage_error("unknown parameter '%s' for %s", argv[i], b->id);
        ctx->values[found] = eq + 1;
    }
    for (int i = 0; i < OM_MAX_PARAMS && b->params[i].name; i++) {
        char err[512];
        if (om_check_value(&b->params[i], ctx->values[i], err, sizeof err))
            return usage_error("%s: %s", b->id, err);
    }
    return 0;
}

static void print_header(const struct om_ctx *ctx, const char *preset)
{
    const struct om_bench *b = ctx->bench;
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    printf("{\"type\":\"header\",\"bench\":");
    om_json_string(stdout, b->id);
    printf(",\"core_version\":\"%s\",\"static\":%s,\"preset\":\"%s\",\"pid\":%ld,\"ncpus\":%d",
           OM_CORE_VERSION, om_is_static() ? "true" : "false", preset, (long)getpid(),
           om_ncpus());
    printf(",\"clock\":\"CLOCK_MONOTONIC\",\"clock_resolution_ns\":%ld,"
           "\"timer_overhead_ns\":%.2f",
           (long)(res.tv_nsec + res.tv_sec * 1000000000L), om_timer_overhead_ns());
    print_nullable("compiler", OM_BUILD_CC);
    print_nullable("cflags", OM_BUILD_CFLAGS);
    print_libc();
    printf(",\"params\":{");
    for (int i = 0; i < OM_MAX_PARAMS && b->params[i].name; i++) {
        printf("%s", i ? "," : "");
        om_json_string(stdout, b->params[i].name);
        printf(":");
        om_json_string(stdout, ctx->values[i]);
    }
    printf("}");
    print_metrics(b);
    printf("}\n");
    fflush(stdout);
}

static int cmd_run(int argc, char **argv, int check_only)
{
    if (argc < 1)
        return usage_error("run needs a benchmark id (osmeter-core list shows them)%s%s", "",
                           "");
    const struct om_bench *b = find_bench(argv[0]);
    if (!b)
        return usage_error("unknown benchmark '%s'%s (osmeter-core list shows them)", argv[0],
                           "");

    /* Where the static build cannot be started (errno kept), the run is skipped below:
     * the run function of a static benchmark cannot run in this dynamic build. */
    int static_exec_errno = 0;
    if (b->static_core && !om_is_static() && !check_only)
        static_exec_errno = exec_static_core(argc, argv);

    struct om_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.bench = b;
    const char *preset = "default";
    int bad = set_params(&ctx, argc, argv, &preset);
    if (bad)
        return bad;

    if (check_only) { /* the front-end validates a whole plan before running any of it */
        printf("{\"type\":\"ok\"}\n");
        return 0;
    }

    print_header(&ctx, preset);
    if (om_exec_wrapper())
        om_note(&ctx, "exec_wrapper", "osmeter's own programs (exec helpers, the static core) "
                                      "started through '%s' (OSMETER_EXEC_WRAPPER)",
                om_exec_wrapper());

    uint64_t t0 = om_now_ns();
    int rc;
    if (b->static_core && !om_is_static())
        rc = static_exec_errno
                 ? om_skip(&ctx, "cannot start osmeter-core-static: %s%s",
                           strerror(static_exec_errno),
                           static_exec_errno == ENOEXEC
                               ? " (a build for another architecture needs an emulator: "
                                 "OSMETER_EXEC_WRAPPER)"
                               : "")
                 : om_skip(&ctx, "no statically linked build of osmeter-core (static linking "
                                 "is not available with this system's C library)");
    else
        rc = b->run(&ctx);
    double elapsed = (double)(om_now_ns() - t0) / 1e9;
    if (rc == OM_OK && ctx.n_samples == 0)
        rc = om_fail(&ctx, "benchmark finished without producing a sample");
    const char *status = rc == OM_OK ? "ok" : rc == OM_SKIPPED ? "skipped" : "failed";
    printf("{\"type\":\"trailer\",\"status\":\"%s\",\"samples\":%ld,\"elapsed_s\":%.6f}\n",
           status, ctx.n_samples, elapsed);
    fflush(stdout);
    return rc == OM_SKIPPED ? 0 : rc;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    om_harness_init(argv[0]);
    if (argc >= 2 && strcmp(argv[1], "list") == 0) {
        for (int f = 0; om_families[f]; f++)
            for (const struct om_bench *b = om_families[f]; b->id; b++)
                print_bench(b);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "run") == 0)
        return cmd_run(argc - 2, argv + 2, 0);
    if (argc >= 2 && strcmp(argv[1], "check") == 0)
        return cmd_run(argc - 2, argv + 2, 1);
    if (argc >= 2 && strcmp(argv[1], "serve") == 0) /* the far end of the net benchmarks */
        return om_serve_main(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "httpd") == 0) /* the HTTP server on its own */
        return om_httpd_main(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "sysinfo") == 0) /* the target, for osmeter run --core */
        return om_sysinfo_main();
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("{\"core_version\":\"%s\",\"static\":%s", OM_CORE_VERSION,
               om_is_static() ? "true" : "false");
        print_nullable("compiler", OM_BUILD_CC);
        print_nullable("cflags", OM_BUILD_CFLAGS);
        print_libc();
        printf("}\n");
        return 0;
    }
    fprintf(stderr, "usage: osmeter-core list | run ID [key=value ...] [--preset=smoke|quick] | "
                    "check ID [key=value ...] | version | sysinfo | serve [--listen ADDR:PORT] | "
                    "httpd [key=value ...]\n");
    return OM_BADPARAM;
}
