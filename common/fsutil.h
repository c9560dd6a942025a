/*
 * fsutil.h: the few file-system operations several modules need done the
 * same careful way: directories made as needed, files replaced atomically
 * (temporary file, fsync, rename, fsync of the directory), bounded reads.
 */
#ifndef COMMON_FSUTIL_H
#define COMMON_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

struct err;
struct buf;

/* mkdir -p with the given mode for created directories. */
int fs_mkdirs(const char *path, mode_t mode, struct err *e);

/* Write len bytes to path atomically: a temporary of this call's own
 * (PATH.tmp.PID.N, created exclusively), fsync, rename, fsync of the
 * directory.  Threads writing one path at once each rename a whole file
 * into place.  On failure nothing is left under either name. */
int fs_write_atomic(const char *path, const void *data, size_t len,
    mode_t mode, struct err *e);

/* fs_write_atomic() for a file that must not exist yet: the whole file
 * appears under path (a link, not a rename), or -1 with e saying "'PATH'
 * exists: not overwritten" and path as it was. */
int fs_write_new(const char *path, const void *data, size_t len,
    mode_t mode, struct err *e);

/* Read a whole file into out (whose limit bounds what may be read). */
int fs_read_file(const char *path, struct buf *out, struct err *e);

/*
 * Read fd (the file path, named in messages) to its end, handing each
 * chunk read to chunk(), which returns 0 or -1 with e set to stop.
 * Leaves fd open.  Returns 0, or -1 with e set.
 */
int fs_read_chunks(int fd, const char *path,
    int (*chunk)(void *arg, const void *data, size_t len, struct err *e),
    void *arg, struct err *e);

/* fsync the directory holding path, so a rename into it is durable. */
int fs_sync_parent(const char *path, struct err *e);

/* Remove a tree (like rm -rf); a missing path is not an error. */
int fs_remove_tree(const char *path, struct err *e);

/* Join dir and name into a malloced path; name absolute is kept as is. */
char *fs_join(const char *dir, const char *name);

#endif
