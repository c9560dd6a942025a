/*
 * cache.c: least-recently-used trimming of unpacked releases (see
 * cache.h).  Owns the CACHE_LAST_USED stamp and the ".gc-" directories a
 * removal goes through.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "sha256.h"

struct release {
	char *path;		/* malloced */
	char *engine_dir;	/* malloced */
	char *version;		/* malloced */
	int64_t last_used_ns;
	uint64_t bytes;
	dev_t dev;
	ino_t ino;
};

struct rlist {
	struct release *v;	/* owned */
	size_t n, alloc;
};

static void
rlist_release(struct rlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].engine_dir);
		free(l->v[i].version);
	}
	free(l->v);
}

static int
dirname_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' ||
	    c == '-';
}

int
cache_release_dirname(const char *version, char out[CACHE_DIRNAME_MAX])
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (size_t i = 0; version[i] != '\0'; i++) {
		unsigned char c = (unsigned char)version[i];

		if (o + 4 > CACHE_DIRNAME_MAX - 8) {
			memcpy(out, "%~", 2);
			return sha256_buf(version, strlen(version), out + 2);
		}
		if (dirname_char(c) && !(c == '.' && i == 0))
			out[o++] = (char)c;
		else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	/* Empty is the only name left that is not a folder of its own. */
	return o == 0 ? -1 : 0;
}

int
cache_touch(const char *release_dir, struct err *e)
{
	char *path = fs_join(release_dir, CACHE_LAST_USED);
	int fd;

	if (path == NULL)
		return err_errno(e, "cannot mark '%s' used", release_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || futimens(fd, NULL) < 0) {
		err_errno(e, "cannot mark '%s' used", release_dir);
		if (fd >= 0)
			close(fd);
		free(path);
		return -1;
	}
	close(fd);
	free(path);
	return 0;
}

/*
 * The size of a tree as du(1) counts it.  nftw() gives no user argument,
 * so the sum and the inodes already counted live here; cache_gc() runs
 * one measurement at a time.
 */
static struct {
	uint64_t bytes;
	struct { dev_t dev; ino_t ino; } *seen;	/* multi-link inodes */
	size_t nseen, alloc;
	int failed;
} du;

static int
du_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)path;
	(void)f;
	if (flag == FTW_NS || flag == FTW_DNR) {
		du.failed = 1;
		return 0;
	}
	if (!S_ISDIR(st->st_mode) && st->st_nlink > 1) {
		for (size_t i = 0; i < du.nseen; i++)
			if (du.seen[i].dev == st->st_dev &&
			    du.seen[i].ino == st->st_ino)
				return 0;
		if (du.nseen == du.alloc) {
			size_t alloc = du.alloc ? 2 * du.alloc : 64;
			void *p = realloc(du.seen, alloc * sizeof(*du.seen));

			if (p == NULL)
				return -1;
			du.seen = p;
			du.alloc = alloc;
		}
		du.seen[du.nseen].dev = st->st_dev;
		du.seen[du.nseen].ino = st->st_ino;
		du.nseen++;
	}
	du.bytes += (uint64_t)st->st_blocks * 512;
	return 0;
}

static int
tree_bytes(const char *path, uint64_t *bytes, struct err *e)
{
	int rc;

	du.bytes = 0;
	du.nseen = 0;
	du.failed = 0;
	rc = nftw(path, du_one, 16, FTW_PHYS);
	free(du.seen);
	du.seen = NULL;
	du.alloc = 0;
	if (rc != 0 || du.failed)
		return err_errno(e, "cannot measure '%s'", path);
	*bytes = du.bytes;
	return 0;
}

static int64_t
ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* The process id in a work directory's name ("...-PID-SUFFIX"), or 0. */
static pid_t
name_pid(const char *name)
{
	const char *last = strrchr(name, '-'), *p;
	long pid = 0;

	if (last == NULL || last == name)
		return 0;
	for (p = last - 1; p > name && *p >= '0' && *p <= '9'; p--)
		;
	if (*p != '-' || p + 1 == last)
		return 0;
	for (p++; p < last && pid < 1L << 30; p++)
		pid = pid * 10 + (*p - '0');
	return p == last ? (pid_t)pid : 0;
}

static int
process_gone(pid_t pid)
{
	return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

/*
 * Remove a leftover work directory: a ".gc-" one once the process that
 * was removing it is gone; a ".tmp-" one once its process is gone or it
 * has not changed for CACHE_STALE_SECONDS (its process id may have been
 * reused since).
 */
static int
remove_if_stale(const char *path, const char *name, const struct stat *st,
    struct cache_gc_stats *stats, struct err *e)
{
	pid_t pid = name_pid(name);
	int stale;

	if (name[1] == 'g')
		stale = process_gone(pid);
	else
		stale = process_gone(pid) ||
		    (int64_t)time(NULL) - st->st_mtim.tv_sec >=
		    CACHE_STALE_SECONDS;
	if (!stale || pid == getpid())
		return 0;
	if (fs_remove_tree(path, e) < 0)
		return -1;
	stats->stale_removed++;
	return 0;
}

static int
add_release(struct rlist *l, const char *engine_dir, const char *version,
    const char *path, const struct stat *st, struct err *e)
{
	struct release *r;
	struct stat used;
	char *stamp;

	if (l->n == l->alloc) {
		size_t alloc = l->alloc ? 2 * l->alloc : 32;
		struct release *v = realloc(l->v, alloc * sizeof(*v));

		if (v == NULL)
			return err_errno(e, "cannot list '%s'", engine_dir);
		l->v = v;
		l->alloc = alloc;
	}
	r = &l->v[l->n];
	memset(r, 0, sizeof(*r));
	r->dev = st->st_dev;
	r->ino = st->st_ino;
	r->last_used_ns = ns(&st->st_mtim);
	if ((stamp = fs_join(path, CACHE_LAST_USED)) != NULL &&
	    lstat(stamp, &used) == 0)
		r->last_used_ns = ns(&used.st_mtim);
	free(stamp);
	r->path = strdup(path);
	r->engine_dir = strdup(engine_dir);
	r->version = strdup(version);
	if (r->path == NULL || r->engine_dir == NULL || r->version == NULL) {
		free(r->path);
		free(r->engine_dir);
		free(r->version);
		return err_errno(e, "cannot list '%s'", engine_dir);
	}
	l->n++;
	if (tree_bytes(path, &r->bytes, e) < 0)
		return -1;
	return 0;
}

struct scan {
	struct rlist *l;
	struct cache_gc_stats *stats;
	struct err *e;
};

typedef int (*subdir_fn)(struct scan *s, const char *dir, const char *name,
    const char *path, const struct stat *st);

/* Call fn for each directory (not symlink) in dir. */
static int
each_subdir(struct scan *s, const char *dir, subdir_fn fn)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (d == NULL)
		return err_errno(s->e, "cannot open '%s'", dir);
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		char *path;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if ((path = fs_join(dir, de->d_name)) == NULL) {
			rc = err_errno(s->e, "cannot list '%s'", dir);
			break;
		}
		if (lstat(path, &st) < 0)
			rc = err_errno(s->e, "cannot stat '%s'", path);
		else if (S_ISDIR(st.st_mode))
			rc = fn(s, dir, de->d_name, path, &st);
		free(path);
	}
	if (rc == 0 && errno != 0)
		rc = err_errno(s->e, "cannot read '%s'", dir);
	closedir(d);
	return rc;
}

/* In an engine's directory: a release, or a work directory. */
static int
scan_release(struct scan *s, const char *engine_dir, const char *name,
    const char *path, const struct stat *st)
{
	if (strncmp(name, ".tmp-", 5) == 0 || strncmp(name, ".gc-", 4) == 0)
		return remove_if_stale(path, name, st, s->stats, s->e);
	if (name[0] == '.')
		return 0;
	return add_release(s->l, engine_dir, name, path, st, s->e);
}

/* In CACHE/releases: an engine's directory. */
static int
scan_engine(struct scan *s, const char *releases, const char *name,
    const char *path, const struct stat *st)
{
	(void)releases;
	(void)st;
	return name[0] == '.' ? 0 : each_subdir(s, path, scan_release);
}

static int
by_last_use(const void *a, const void *b)
{
	const struct release *x = a, *y = b;

	if (x->last_used_ns != y->last_used_ns)
		return x->last_used_ns < y->last_used_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Rename out of the way, then delete. */
static int
remove_release(const struct release *r, struct err *e)
{
	static unsigned counter;
	size_t len = strlen(r->engine_dir) + strlen(r->version) + 64;
	char *gc = malloc(len);
	int rc;

	if (gc == NULL)
		return err_errno(e, "cannot remove '%s'", r->path);
	snprintf(gc, len, "%s/.gc-%s-%ld-%u", r->engine_dir, r->version,
	    (long)getpid(), counter++);
	if (rename(r->path, gc) < 0) {
		err_errno(e, "cannot rename '%s' to '%s'", r->path, gc);
		free(gc);
		return -1;
	}
	rc = fs_remove_tree(gc, e);
	free(gc);
	return rc;
}

int
cache_gc(const char *cache_dir, uint64_t max_bytes, const char *keep_path,
    cache_report_fn report, void *arg, struct cache_gc_stats *stats,
    struct err *e)
{
	struct cache_gc_stats local;
	struct rlist l = { NULL, 0, 0 };
	struct scan scan = { &l, NULL, e };
	struct stat keep;
	char *releases = fs_join(cache_dir, "releases");
	uint64_t total = 0;
	int have_keep = keep_path && stat(keep_path, &keep) == 0;
	int rc = 0;

	if (stats == NULL)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	scan.stats = stats;
	if (releases == NULL)
		return err_errno(e, "cannot trim '%s'", cache_dir);
	if (access(releases, F_OK) == 0 &&
	    each_subdir(&scan, releases, scan_engine) < 0) {
		rc = -1;
		goto out;
	}
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(l.v[0]), by_last_use);
	for (size_t i = 0; i < l.n; i++)
		total += l.v[i].bytes;
	stats->releases = l.n;
	for (size_t i = 0; i < l.n && total > max_bytes; i++) {
		const struct release *r = &l.v[i];

		if (have_keep && r->dev == keep.st_dev && r->ino == keep.st_ino)
			continue;
		if (remove_release(r, e) < 0) {
			rc = -1;
			break;
		}
		total -= r->bytes;
		stats->removed++;
		stats->removed_bytes += r->bytes;
		if (report)
			report(arg, r->path, r->bytes);
	}
	stats->kept_bytes = total;
out:
	rlist_release(&l);
	free(releases);
	return rc;
}
