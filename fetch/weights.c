/*
 * weights.c: hashing and pinning the weights (see weights.h).  Owns the
 * directory manifest's definition and the metadata stamp that spares a
 * multi-gigabyte re-hash before every job.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "config/conf.h"
#include "download.h"
#include "common/err.h"
#include "sha256.h"
#include "weights.h"

#define MAX_DEPTH	64
#define MAX_DOWNLOAD	(1ULL << 40)	/* 1 TiB */

struct wfile {
	char *rel;		/* path below the directory; malloced */
	char *abs;		/* path to open; malloced */
	struct stat st;
};

struct walk {
	struct wfile *v;	/* owned */
	size_t n, alloc;
	dev_t dev[MAX_DEPTH];	/* the directories being walked, for loops */
	ino_t ino[MAX_DEPTH];
	struct err *e;
};

static int64_t
ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static void
walk_release(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].rel);
		free(w->v[i].abs);
	}
	free(w->v);
	w->v = NULL;
	w->n = w->alloc = 0;
}

static int
walk_add(struct walk *w, const char *rel, const char *abs,
    const struct stat *st)
{
	struct wfile *f;

	if (w->n == WEIGHTS_MAX_FILES)
		return err_set(w->e, "weights directory has more than %d files",
		    WEIGHTS_MAX_FILES);
	if (w->n == w->alloc) {
		size_t alloc = w->alloc ? 2 * w->alloc : 64;
		struct wfile *v = realloc(w->v, alloc * sizeof(*v));

		if (v == NULL)
			return err_errno(w->e, "cannot list '%s'", abs);
		w->v = v;
		w->alloc = alloc;
	}
	f = &w->v[w->n];
	f->rel = strdup(rel);
	f->abs = strdup(abs);
	f->st = *st;
	if (f->rel == NULL || f->abs == NULL) {
		free(f->rel);
		free(f->abs);
		return err_errno(w->e, "cannot list '%s'", abs);
	}
	w->n++;
	return 0;
}

static char *
join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = malloc(la + lb + 2);

	if (p == NULL)
		return NULL;
	memcpy(p, a, la);
	p[la] = '/';
	memcpy(p + la + 1, b, lb + 1);
	return p;
}

/* Every regular file below abs (whose own path below the top is rel, ""
 * at the top), following symlinks, skipping dot names. */
static int
walk_dir(struct walk *w, const char *abs, const char *rel, int depth)
{
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (depth >= MAX_DEPTH)
		return err_set(w->e, "weights directory '%s' is nested too "
		    "deep", abs);
	if ((d = opendir(abs)) == NULL)
		return err_errno(w->e, "cannot open weights directory '%s'", abs);
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		char *child, *crel;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (strchr(de->d_name, '\n') != NULL) {
			rc = err_set(w->e, "weights file name with a newline "
			    "in '%s'", abs);
			break;
		}
		child = join(abs, de->d_name);
		crel = rel[0] ? join(rel, de->d_name) : strdup(de->d_name);
		if (child == NULL || crel == NULL)
			rc = err_errno(w->e, "cannot list '%s'", abs);
		else if (stat(child, &st) < 0)
			rc = err_errno(w->e, "cannot stat weights file '%s'",
			    child);
		else if (S_ISREG(st.st_mode))
			rc = walk_add(w, crel, child, &st);
		else if (S_ISDIR(st.st_mode)) {
			for (int i = 0; i < depth; i++)
				if (w->dev[i] == st.st_dev &&
				    w->ino[i] == st.st_ino)
					rc = err_set(w->e, "weights directory "
					    "'%s' loops back to itself", child);
			if (rc == 0) {
				w->dev[depth] = st.st_dev;
				w->ino[depth] = st.st_ino;
				rc = walk_dir(w, child, crel, depth + 1);
			}
		}
		free(child);
		free(crel);
	}
	if (rc == 0 && errno != 0)
		rc = err_errno(w->e, "cannot read weights directory '%s'", abs);
	closedir(d);
	return rc;
}

static int
cmp_rel(const void *a, const void *b)
{
	return strcmp(((const struct wfile *)a)->rel,
	    ((const struct wfile *)b)->rel);
}

/* The files of a weights directory, sorted by relative path. */
static int
walk_top(struct walk *w, const char *path, const struct stat *top)
{
	w->dev[0] = top->st_dev;
	w->ino[0] = top->st_ino;
	if (walk_dir(w, path, "", 1) < 0) {
		walk_release(w);
		return -1;
	}
	if (w->n == 0)
		return err_set(w->e, "weights directory '%s' holds no files",
		    path);
	if (w->n > 1)
		qsort(w->v, w->n, sizeof(w->v[0]), cmp_rel);
	return 0;
}

/* The metadata stamp of path, without reading any file's content. */
static int
take_stamp(const char *path, struct weights_stamp *s, struct err *e)
{
	struct stat st;
	struct walk w;
	struct sha256_ctx c;

	memset(s, 0, sizeof(*s));
	if (stat(path, &st) < 0)
		return err_errno(e, "cannot open weights '%s'", path);
	s->inode = (uint64_t)st.st_ino;
	s->dev = (uint64_t)st.st_dev;
	if (S_ISREG(st.st_mode)) {
		s->size = (uint64_t)st.st_size;
		s->mtime_ns = ns(&st.st_mtim);
		s->ctime_ns = ns(&st.st_ctim);
		s->nfiles = 1;
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return err_set(e, "weights '%s' are not a file or a directory",
		    path);
	memset(&w, 0, sizeof(w));
	w.e = e;
	if (walk_top(&w, path, &st) < 0)
		return -1;
	if (sha256_init(&c) < 0) {
		walk_release(&w);
		return err_set(e, "cannot hash '%s': libcrypto failed", path);
	}
	for (size_t i = 0; i < w.n; i++) {
		const struct stat *f = &w.v[i].st;
		char line[128];
		int n = snprintf(line, sizeof(line), " %jd %jd %jd %ju %ju\n",
		    (intmax_t)f->st_size, (intmax_t)ns(&f->st_mtim),
		    (intmax_t)ns(&f->st_ctim), (uintmax_t)f->st_ino,
		    (uintmax_t)f->st_dev);

		sha256_update(&c, w.v[i].rel, strlen(w.v[i].rel));
		sha256_update(&c, line, (size_t)n);
		s->size += (uint64_t)f->st_size;
		if (ns(&f->st_mtim) > s->mtime_ns)
			s->mtime_ns = ns(&f->st_mtim);
		if (ns(&f->st_ctim) > s->ctime_ns)
			s->ctime_ns = ns(&f->st_ctim);
	}
	s->nfiles = w.n;
	walk_release(&w);
	if (sha256_final(&c, s->meta) < 0)
		return err_set(e, "cannot hash '%s': libcrypto failed", path);
	return 0;
}

static int
hash_dir(const char *path, const struct stat *top, char hex[65],
    struct err *e)
{
	struct walk w;
	struct sha256_ctx c;
	int rc = 0;

	memset(&w, 0, sizeof(w));
	w.e = e;
	if (walk_top(&w, path, top) < 0)
		return -1;
	if (sha256_init(&c) < 0) {
		walk_release(&w);
		return err_set(e, "cannot hash '%s': libcrypto failed", path);
	}
	for (size_t i = 0; rc == 0 && i < w.n; i++) {
		char fhex[65], tail[128];
		int n;

		if (sha256_file(w.v[i].abs, fhex, e) < 0) {
			rc = -1;
			break;
		}
		n = snprintf(tail, sizeof(tail), " %jd %s\n",
		    (intmax_t)w.v[i].st.st_size, fhex);
		sha256_update(&c, w.v[i].rel, strlen(w.v[i].rel));
		sha256_update(&c, tail, (size_t)n);
	}
	walk_release(&w);
	if (rc < 0) {
		sha256_abort(&c);
		return -1;
	}
	if (sha256_final(&c, hex) < 0)
		return err_set(e, "cannot hash '%s': libcrypto failed", path);
	return 0;
}

int
weights_hash(const char *path, char hex_out[65], struct err *e)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return err_errno(e, "cannot open weights '%s'", path);
	if (S_ISDIR(st.st_mode))
		return hash_dir(path, &st, hex_out, e);
	return sha256_file(path, hex_out, e);
}

static int
same_stamp(const struct weights_stamp *a, const struct weights_stamp *b)
{
	return a->size == b->size && a->mtime_ns == b->mtime_ns &&
	    a->ctime_ns == b->ctime_ns && a->inode == b->inode &&
	    a->dev == b->dev && a->nfiles == b->nfiles &&
	    strcmp(a->meta, b->meta) == 0;
}

int
weights_verify_path(const char *path, const char *expected,
    struct weights_stamp *cached, char hex_out[65], struct err *e)
{
	struct weights_stamp now, after;
	const char *pinned = cached && cached->sha256[0] ? cached->sha256 :
	    NULL;
	int hashed = 0;

	hex_out[0] = '\0';
	if (expected != NULL && !sha256_valid_hex(expected))
		return err_set(e, "weights '%s': configured sha256 '%s' is not "
		    "64 hex digits", path, expected);
	if (take_stamp(path, &now, e) < 0)
		return -1;
	if (pinned && same_stamp(&now, cached)) {
		memcpy(hex_out, pinned, 65);
	} else {
		if (weights_hash(path, hex_out, e) < 0)
			return -1;
		if (take_stamp(path, &after, e) < 0)
			return -1;
		if (!same_stamp(&now, &after))
			return err_set(e, "weights '%s' changed while they were "
			    "hashed; try again once they are complete", path);
		hashed = 1;
	}
	if (expected != NULL && strcasecmp(hex_out, expected) != 0)
		return err_set(e, "weights '%s' do not match: sha256 is %s, "
		    "the configured sha256 is %s", path, hex_out, expected);
	if (expected == NULL && pinned && strcmp(hex_out, pinned) != 0)
		return err_set(e, "weights '%s' changed since they were pinned: "
		    "sha256 is %s, pinned %s; measurements would not be "
		    "comparable", path, hex_out, pinned);
	if (cached) {
		memcpy(now.sha256, hex_out, 65);
		*cached = now;
	}
	return hashed;
}

int
weights_verify(const struct conf_weights *w, struct weights_stamp *cached,
    char hex_out[65], struct err *e)
{
	int rc;

	hex_out[0] = '\0';
	if (w->path == NULL)
		return err_set(e, "weights '%s' come from a url: download them "
		    "first, then verify the downloaded file", w->name);
	rc = weights_verify_path(w->path, w->sha256, cached, hex_out, e);
	if (rc < 0)
		return err_prefix(e, "[weights \"%s\"]", w->name);
	return rc;
}

int
weights_fetch(const struct conf_weights *w,
    const struct weights_fetch_opts *o, struct weights_stamp *cached,
    char hex_out[65], char **path_out, struct err *e)
{
	struct download_opts d = DOWNLOAD_OPTS_INIT;
	struct download_result r = DOWNLOAD_RESULT_INIT;
	int rc;

	hex_out[0] = '\0';
	*path_out = NULL;
	if (w->url == NULL)
		return err_set(e, "[weights \"%s\"]: no url to fetch", w->name);
	d.cache = o->cache;
	d.expected_sha256 = w->sha256;
	d.expected_origin = "config";
	d.pinned_sha256 = cached && cached->sha256[0] ? cached->sha256 : NULL;
	d.max_bytes = MAX_DOWNLOAD;
	d.allow_http = o->allow_http;
	d.progress = o->progress;
	d.progress_arg = o->progress_arg;
	d.deadline_ms = o->deadline_ms;
	d.stop = o->stop;
	if (fetch_download(w->url, &d, &r, e) < 0)
		return err_prefix(e, "[weights \"%s\"]", w->name);
	rc = weights_verify_path(r.path, w->sha256, cached, hex_out, e);
	if (rc < 0) {
		download_result_release(&r);
		return err_prefix(e, "[weights \"%s\"]", w->name);
	}
	*path_out = r.path;	/* handed over */
	return rc;
}

void
weights_stamp_format(const struct weights_stamp *s, char *buf, size_t len)
{
	snprintf(buf, len, "v1 %" PRIu64 " %" PRId64 " %" PRId64 " %" PRIu64
	    " %" PRIu64 " %" PRIu64 " %s %s", s->size, s->mtime_ns,
	    s->ctime_ns, s->inode, s->dev, s->nfiles,
	    s->meta[0] ? s->meta : "-", s->sha256[0] ? s->sha256 : "-");
}

int
weights_stamp_parse(const char *text, struct weights_stamp *s)
{
	char meta[65], sha[65];
	int used = 0;

	memset(s, 0, sizeof(*s));
	if (sscanf(text, "v1 %" SCNu64 " %" SCNd64 " %" SCNd64 " %" SCNu64
	    " %" SCNu64 " %" SCNu64 " %64s %64s%n", &s->size, &s->mtime_ns,
	    &s->ctime_ns, &s->inode, &s->dev, &s->nfiles, meta, sha,
	    &used) != 8 || text[used] != '\0' ||
	    (strcmp(meta, "-") != 0 && !sha256_valid_hex(meta)) ||
	    (strcmp(sha, "-") != 0 && !sha256_valid_hex(sha))) {
		memset(s, 0, sizeof(*s));
		return -1;
	}
	if (strcmp(meta, "-") != 0)
		memcpy(s->meta, meta, 65);
	if (strcmp(sha, "-") != 0)
		memcpy(s->sha256, sha, 65);
	return 0;
}
