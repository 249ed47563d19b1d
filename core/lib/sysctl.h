/*
 * Reading a sysctl by its name on the BSDs and macOS: the system's own description and
 * limits where Linux has /proc.  OpenBSD has no sysctlbyname(): there the names osmeter
 * reads are looked up in a table of their numeric MIBs.  Elsewhere (Linux) every read
 * fails.
 */
#ifndef OSMETER_LIB_SYSCTL_H
#define OSMETER_LIB_SYSCTL_H

/* The raw value into buf (*len: its size in, the value's length out): 0, or -1. */
int om_sysctl_raw(const char *name, void *buf, size_t *len);
/* The value as a number (a 4- or 8-byte integer sysctl): 0, or -1 where the system has
 * no such sysctl (or it is not an integer). */
int om_sysctl_number(const char *name, long long *out);
/* The value as text (a string sysctl), NUL-terminated and cut to len: 0, or -1. */
int om_sysctl_string(const char *name, char *buf, size_t len);

#endif
