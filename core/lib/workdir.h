/*
 * The directory a file-system benchmark works in: the `dir` parameter checked before
 * anything is created, a private directory in it removed at exit, its file-system type,
 * flushing it, removing a tree.  Shared by fs.c, mab.c and syscall.c (fs.openclose).
 */
#ifndef OSMETER_LIB_WORKDIR_H
#define OSMETER_LIB_WORKDIR_H

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

/* Flush the file system holding path to disk (syncfs on Linux, sync elsewhere), so
 * that earlier untimed writes do not write back during a timed phase. */
void fs_sync_fs(const char *path);

#endif
