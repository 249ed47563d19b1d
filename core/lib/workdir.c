/* The directory a file-system benchmark works in: see workdir.h. */
#define _GNU_SOURCE
#include "workdir.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#elif !defined(__NetBSD__) /* the BSDs' and macOS's statfs; NetBSD has statvfs only */
#include <sys/mount.h>
#include <sys/param.h>
#endif

#define MB (1024.0 * 1024.0)

const char *fs_type_name(const char *path)
{
#ifdef __linux__
    static const struct {
        unsigned long magic;
        const char *name;
    } types[] = {
        {0xEF53, "ext4"},        {0x58465342, "xfs"},  {0x9123683E, "btrfs"},
        {0x01021994, "tmpfs"},   {0x6969, "nfs"},      {0x65735546, "fuse"},
        {0xFF534D42, "cifs"},    {0xFE534D42, "smb2"}, {0x01021997, "9p"},
        {0x794C7630, "overlay"}, {0x2FC12FC1, "zfs"},  {0xF2F52010, "f2fs"},
        {0x4d44, "vfat"},        {0x5346544e, "ntfs"}, {0x858458f6, "ramfs"},
        {0x00c36400, "ceph"},    {0x6B414653, "afs"},  {0x3153464a, "jfs"},
    };
    struct statfs sf;
    if (statfs(path, &sf) != 0)
        return "unknown";
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if ((unsigned long)sf.f_type == types[i].magic)
            return types[i].name;
    static char hex[32];
    snprintf(hex, sizeof hex, "magic 0x%lx", (unsigned long)sf.f_type);
    return hex;
#elif defined(__NetBSD__)
    static struct statvfs sv;
    if (statvfs(path, &sv) != 0)
        return "unknown";
    return sv.f_fstypename;
#else
    static struct statfs sf;
    if (statfs(path, &sf) != 0)
        return "unknown";
    return sf.f_fstypename;
#endif
}

int fs_workdir(struct om_ctx *ctx, long long need_bytes, char *out, size_t len)
{
    const char *dir = om_str(ctx, "dir");
    const char *base = dir;
    if (!*dir) {
        base = om_scratch_dir();
        if (!base)
            return om_fail(ctx, "cannot create a scratch directory: %s", strerror(errno));
    } else {
        struct stat st;
        if (stat(dir, &st) != 0)
            return om_bad_param(ctx, "dir %s: %s", dir, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return om_bad_param(ctx, "dir %s: not a directory", dir);
        if (access(dir, W_OK | X_OK) != 0)
            return om_bad_param(ctx, "dir %s: not writable: %s", dir, strerror(errno));
    }
    struct statvfs sv;
    if (statvfs(base, &sv) != 0)
        return om_bad_param(ctx, "dir %s: statvfs: %s", base, strerror(errno));
    if (sv.f_flag & ST_RDONLY)
        return om_bad_param(ctx, "dir %s: on a read-only file system", base);
    /* Room for the data plus a margin for metadata (and never the last bytes of a disk). */
    double need = (double)need_bytes * 1.1 + 256.0 * 1024.0;
    double avail = (double)sv.f_bavail * (double)sv.f_frsize;
    if (need > avail)
        return om_bad_param(ctx, "dir %s: needs %.1f MB free, has %.1f MB", base, need / MB,
                            avail / MB);
    snprintf(out, len, "%s/osmeter-fs.XXXXXX", base);
    if (!mkdtemp(out))
        return om_fail(ctx, "cannot create a directory in %s: %s", base, strerror(errno));
    om_remove_at_exit(out);
    om_note(ctx, "directory", "%s", out);
    om_note(ctx, "fs_type", "%s", fs_type_name(out));
    om_note(ctx, "space_needed_bytes", "%lld", need_bytes);
    return OM_OK;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int fs_remove_tree(const char *path)
{
    return nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
}

void fs_sync_fs(const char *path)
{
#ifdef __linux__
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        syncfs(fd);
        close(fd);
        return;
    }
#endif
    (void)path;
    sync();
}
