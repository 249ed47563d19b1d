/*
 * Harness internals: shared by the harness's own files (harness.c, measure.c,
 * children.c) and the command lines (main.c, serve_main.c).  Benchmark families,
 * servers and libraries use harness.h only.
 */
#ifndef OSMETER_INTERNAL_H
#define OSMETER_INTERNAL_H

#include <stdio.h>
#include "harness.h"

struct om_ctx {
    const struct om_bench *bench;
    const char *values[OM_MAX_PARAMS]; /* resolved value of each declared parameter */
    long n_samples;
};

extern const struct om_bench *const om_families[]; /* generated: build/families.c */

void om_harness_init(char *argv0);
void om_exit(int code) __attribute__((noreturn));
void om_json_string(FILE *f, const char *s);
int om_parse_int(const char *s, long long *out);
int om_check_value(const struct om_param *p, const char *v, char *err, size_t errlen);
const struct om_metric *om_find_metric(const struct om_bench *b, const char *name);

/* The servers' command lines (serve_main.c): argv[0] is "serve"; httpd's has no argv[0]. */
int om_serve_main(int argc, char **argv);
int om_httpd_main(int argc, char **argv);
/* The system the core runs on, as JSON (sysinfo_main.c): osmeter run --core. */
int om_sysinfo_main(void);

/* Start-up and clean-up steps of om_harness_init() and the exit handler. */
void om_measure_timer_overhead(void);
void om_exec_wrapper_init(void);
void om_children_kill_all(void);

#endif
