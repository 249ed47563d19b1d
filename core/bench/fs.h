/*
 * Shared by the file-system families (fs.c, mab.c): the `dir` parameter, the private
 * working directory, cold caches, running a system program.  Defined in fs.c.
 */
#ifndef OSMETER_BENCH_FS_H
#define OSMETER_BENCH_FS_H

#include <stddef.h>
#include "../harness.h"

#define FS_DIR_PARAM                                                                      \
    {"dir", OM_STR, "", NULL, NULL, 0, 0, NULL,                                           \
     "directory to work in (a private subdirectory is made and removed); '' = scratch"}

/*
 * Validate `dir` (exists, is a directory, is writable, has need_bytes free) before
 * creating anything, then make a private directory in it (or in the scratch directory
 * when dir is "") that is removed at exit and on signals.  Notes the directory and its
 * file-system type.  Returns OM_OK, or the code of om_bad_param/om_fail.
 */
int fs_workdir(struct om_ctx *ctx, long long need_bytes, char *out, size_t len);

/* Name of the file-system type holding path ("ext4", "tmpfs", ...) or "unknown". */
const char *fs_type_name(const char *path);

/* Remove a tree (no symlinks followed); 0 or -1. */
int fs_remove_tree(const char *path);

/* Run argv (searched in PATH) in directory cwd with stdout to /dev/null; returns its
 * exit status (0 = success), or -1 when it could not be started or was killed.  The
 * wall time from fork to reaped is stored in *elapsed_ns. */
int fs_run_program(char *const argv[], const char *cwd, uint64_t *elapsed_ns);

/* Full path of an executable found in PATH, or NULL. */
const char *fs_which(const char *name, char *out, size_t len);

/* Flush the file system holding path to disk (syncfs on Linux, sync elsewhere), so
 * that earlier untimed writes do not write back during a timed phase. */
void fs_sync_fs(const char *path);

#endif
