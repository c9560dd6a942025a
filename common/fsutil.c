/* fsutil.c: careful file-system helpers (see fsutil.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "fsutil.h"

int
fs_mkdirs(const char *path, mode_t mode, struct err *e)
{
	char tmp[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(tmp))
		return err_set(e, "cannot create directory '%s': bad path", path);
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return err_errno(e, "cannot create directory '%s'", tmp);
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return err_errno(e, "cannot create directory '%s'", tmp);
	return 0;
}

char *
fs_join(const char *dir, const char *name)
{
	size_t dl, nl;
	char *p;

	if (name[0] == '/' || dir == NULL || dir[0] == '\0')
		return strdup(name);
	dl = strlen(dir);
	nl = strlen(name);
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if ((p = malloc(dl + nl + 2)) == NULL)
		return NULL;
	memcpy(p, dir, dl);
	p[dl] = '/';
	memcpy(p + dl + 1, name, nl + 1);
	return p;
}

int
fs_sync_parent(const char *path, struct err *e)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;

	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else {
		size_t len = (size_t)(slash - path);

		if (len >= sizeof(dir))
			return err_set(e, "path too long: '%s'", path);
		memcpy(dir, path, len);
		dir[len] = '\0';
	}
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return err_errno(e, "cannot open directory '%s'", dir);
	if (fsync(fd) < 0 && errno != EINVAL) {
		close(fd);
		return err_errno(e, "cannot sync directory '%s'", dir);
	}
	close(fd);
	return 0;
}

/* fs_write_atomic(), or with no_clobber fs_write_new(): the temporary
 * linked to path, which fails when path exists. */
static int
write_whole(const char *path, const void *data, size_t len, mode_t mode,
    int no_clobber, struct err *e)
{
	static atomic_ulong seq;	/* calls of this process */
	char tmp[PATH_MAX];
	const char *p = data;
	int fd;

	/* A temporary of this call's own: two threads writing one path at
	 * once must not share it, nor one left by a dead process with the
	 * same pid be reused. */
	do {
		if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%lu", path,
		    (long)getpid(), atomic_fetch_add(&seq, 1)) >=
		    (int)sizeof(tmp))
			return err_set(e, "path too long: '%s'", path);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	} while (fd < 0 && errno == EEXIST);
	if (fd < 0)
		return err_errno(e, "cannot create '%s'", tmp);
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err_errno(e, "cannot write '%s'", tmp);
			goto fail;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0) {
		err_errno(e, "cannot sync '%s'", tmp);
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		err_errno(e, "cannot close '%s'", tmp);
		goto fail;
	}
	fd = -1;
	if (no_clobber) {
		int rc = link(tmp, path);

		if (rc < 0 && errno == EEXIST)
			err_set(e, "'%s' exists: not overwritten", path);
		else if (rc < 0)
			err_errno(e, "cannot create '%s'", path);
		unlink(tmp);
		return rc < 0 ? -1 : fs_sync_parent(path, e);
	}
	if (rename(tmp, path) < 0) {
		err_errno(e, "cannot rename '%s' to '%s'", tmp, path);
		goto fail;
	}
	return fs_sync_parent(path, e);
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return -1;
}

int
fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
    struct err *e)
{
	return write_whole(path, data, len, mode, 0, e);
}

int
fs_write_new(const char *path, const void *data, size_t len, mode_t mode,
    struct err *e)
{
	return write_whole(path, data, len, mode, 1, e);
}

int
fs_read_chunks(int fd, const char *path,
    int (*chunk)(void *arg, const void *data, size_t len, struct err *e),
    void *arg, struct err *e)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_errno(e, "cannot read '%s'", path);
		if (n == 0)
			return 0;
		if (chunk(arg, buf, (size_t)n, e) < 0)
			return -1;
	}
}

/* What add_chunk() appends to, and the file's name for its messages. */
struct read_into {
	struct buf *out;
	const char *path;
};

static int
add_chunk(void *arg, const void *data, size_t len, struct err *e)
{
	struct read_into *r = arg;

	if (buf_add(r->out, data, len) == 0)
		return 0;
	if (errno == E2BIG)
		return err_set(e, "'%s' is larger than %zu bytes", r->path,
		    r->out->limit);
	return err_errno(e, "cannot read '%s'", r->path);
}

int
fs_read_file(const char *path, struct buf *out, struct err *e)
{
	struct read_into r = { out, path };
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return err_errno(e, "cannot open '%s'", path);
	rc = fs_read_chunks(fd, path, add_chunk, &r, e);
	close(fd);
	return rc;
}

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int
fs_remove_tree(const char *path, struct err *e)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : err_errno(e, "cannot stat '%s'", path);
	if (nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS) < 0)
		return err_errno(e, "cannot remove '%s'", path);
	return 0;
}
