/*
 * download.c: release archives into the content-addressed cache (see
 * download.h).  Owns CACHE/archives/ and its tmp/ folder of partial
 * downloads; the bytes travel through http_download().
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "download.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "http.h"
#include "sha256.h"

enum download_pin
download_check_pinned(const char *prev, const char *seen)
{
	if (prev == NULL || prev[0] == '\0')
		return PIN_FIRST;
	return strcasecmp(prev, seen) == 0 ? PIN_SAME : PIN_CHANGED;
}

void
download_result_release(struct download_result *r)
{
	free(r->path);
	r->path = NULL;
}

static void
lower_hex(char out[SHA256_HEX_LEN + 1], const char *in)
{
	for (int i = 0; i < SHA256_HEX_LEN; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[SHA256_HEX_LEN] = '\0';
}

/* Feed the first len bytes of fd into c. */
static int
hash_fd(int fd, uint64_t len, struct sha256_ctx *c, const char *path,
    struct err *e)
{
	char chunk[1 << 16];
	uint64_t off = 0;

	while (off < len) {
		size_t want = len - off < sizeof(chunk) ? (size_t)(len - off) :
		    sizeof(chunk);
		ssize_t n = pread(fd, chunk, want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_errno(e, "cannot read '%s'", path);
		if (n == 0)
			return err_set(e, "cannot read '%s': file shrank",
			    path);
		if (sha256_update(c, chunk, (size_t)n) < 0)
			return err_set(e, "cannot hash '%s': libcrypto failed",
			    path);
		off += (uint64_t)n;
	}
	return 0;
}

/* What the tap needs: the running hash, and where to note the ETag the
 * partial file's bytes came with. */
struct tap_state {
	struct sha256_ctx ctx;
	const struct http_download_ctl *ctl;
	const char *etag_path;	/* the sidecar file beside the .part */
	int etag_noted;		/* the sidecar matches the bytes */
	struct err err;		/* why the tap stopped the download */
};

/*
 * The tap: the streamed bytes go into the running hash; a truncation
 * starts it over.  Before the first bytes of a body are kept, its ETag is
 * noted beside the partial file, so a resume after a crash asks If-Range
 * and a file changed on the server comes whole instead of spliced.
 */
static int
hash_tap(void *arg, const char *data, size_t len)
{
	struct tap_state *t = arg;

	if (data == NULL) {
		t->etag_noted = 0;
		sha256_abort(&t->ctx);
		if (sha256_init(&t->ctx) < 0)
			return err_set(&t->err, "libcrypto failed");
		return 0;
	}
	if (!t->etag_noted) {
		const char *etag = t->ctl->etag;

		if (etag != NULL) {
			if (fs_write_atomic(t->etag_path, etag, strlen(etag),
			    0644, &t->err) < 0)
				return -1;
		} else
			unlink(t->etag_path);
		t->etag_noted = 1;
	}
	if (sha256_update(&t->ctx, data, len) < 0)
		return err_set(&t->err, "libcrypto failed");
	return 0;
}

/* The ETag noted for a partial file, malloced, or NULL. */
static char *
read_etag(const char *path)
{
	struct buf b = BUF_INIT(256);

	if (fs_read_file(path, &b, NULL) < 0) {
		buf_release(&b);
		return NULL;
	}
	return buf_take(&b);
}

static int
cached(const char *path, uint64_t *size)
{
	struct stat st;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	*size = (uint64_t)st.st_size;
	return 1;
}

int
fetch_download(const char *url, const struct download_opts *o,
    struct download_result *r, struct err *e)
{
	char expected[SHA256_HEX_LEN + 1] = "", pinned[SHA256_HEX_LEN + 1] = "";
	char urlhash[SHA256_HEX_LEN + 1], streamed[SHA256_HEX_LEN + 1];
	char name[SHA256_HEX_LEN + 8];
	struct http_opts ho = HTTP_OPTS_INIT;
	struct http_download_ctl ctl;
	struct tap_state tap;
	struct sha256_ctx *ctx = &tap.ctx;
	char *archives = NULL, *tmpdir = NULL, *part = NULL, *final = NULL;
	char *etag_path = NULL, *if_range = NULL;
	uint64_t have = 0, initial;
	struct stat st;
	int fd = -1, rc = -1, keep_part = 0;

	memset(r, 0, sizeof(*r));
	memset(&tap, 0, sizeof(tap));
	memset(&ctl, 0, sizeof(ctl));
	r->pin = PIN_FIRST;
	if (o->cache == NULL || o->cache[0] == '\0')
		return err_set(e, "cannot download '%s': no cache directory",
		    url);
	if (o->expected_sha256 != NULL) {
		if (!sha256_valid_hex(o->expected_sha256))
			return err_set(e, "cannot download '%s': expected "
			    "sha256 '%s' is not 64 hex digits", url,
			    o->expected_sha256);
		lower_hex(expected, o->expected_sha256);
	}
	if (o->pinned_sha256 != NULL && o->pinned_sha256[0] != '\0') {
		if (!sha256_valid_hex(o->pinned_sha256))
			return err_set(e, "cannot download '%s': pinned "
			    "sha256 '%s' is not 64 hex digits", url,
			    o->pinned_sha256);
		lower_hex(pinned, o->pinned_sha256);
	}
	if ((archives = fs_join(o->cache, "archives")) == NULL ||
	    (tmpdir = fs_join(archives, "tmp")) == NULL) {
		err_set(e, "cannot download '%s': out of memory", url);
		goto out;
	}
	if (fs_mkdirs(tmpdir, 0755, e) < 0)
		goto out;

	/* Content-addressed: a known hash already in the cache is done. */
	if (expected[0] || pinned[0]) {
		const char *want = expected[0] ? expected : pinned;

		if ((final = fs_join(archives, want)) == NULL) {
			err_set(e, "cannot download '%s': out of memory", url);
			goto out;
		}
		if (cached(final, &r->size)) {
			memcpy(r->sha256, want, sizeof(r->sha256));
			r->cached = 1;
			r->pin = download_check_pinned(pinned, want);
			r->path = final;
			final = NULL;
			rc = 0;
			goto out;
		}
		free(final);
		final = NULL;
	}

	/* The partial file is named after the URL so a later call resumes
	 * it; the lock keeps two processes from writing it at once. */
	if (sha256_buf(url, strlen(url), urlhash) < 0) {
		err_set(e, "cannot hash '%s': libcrypto failed", url);
		goto out;
	}
	snprintf(name, sizeof(name), "%s.part", urlhash);
	part = fs_join(tmpdir, name);
	snprintf(name, sizeof(name), "%s.etag", urlhash);
	etag_path = fs_join(tmpdir, name);
	if (part == NULL || etag_path == NULL) {
		err_set(e, "cannot download '%s': out of memory", url);
		goto out;
	}
	if ((fd = open(part, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		err_errno(e, "cannot create '%s'", part);
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			err_set(e, "cannot download '%s': another process is "
			    "downloading it into '%s'", url, part);
		else
			err_errno(e, "cannot lock '%s'", part);
		close(fd);
		fd = -1;
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		err_errno(e, "cannot stat '%s'", part);
		goto out;
	}
	initial = have = (uint64_t)st.st_size;
	if (sha256_init(ctx) < 0) {
		err_set(e, "cannot hash '%s': libcrypto failed", part);
		goto out;
	}
	if (have > 0 && hash_fd(fd, have, ctx, part, e) < 0)
		goto out;
	if (have > 0) {
		if_range = read_etag(etag_path);
		tap.etag_noted = 1;
	}

	if (o->http != NULL)
		ho = *o->http;
	else
		ho.allow_http = o->allow_http;
	if (o->max_bytes > 0)
		ho.max_bytes = o->max_bytes;
	if (o->deadline_ms > 0)
		ho.deadline_ms = o->deadline_ms;
	if (o->stop != NULL)
		ho.stop = o->stop;
	if (o->max_speed > 0)
		ho.max_recv_speed = o->max_speed;
	ctl.tap = hash_tap;
	ctl.tap_arg = &tap;
	ctl.if_range = if_range;
	ctl.progress = o->progress;
	ctl.progress_arg = o->progress_arg;
	tap.ctl = &ctl;
	tap.etag_path = etag_path;
	if (http_download(url, &ho, fd, &have, &ctl, e) < 0) {
		if (tap.err.msg[0] != '\0') {
			err_set(e, "cannot download '%s': %s", url,
			    tap.err.msg);
			goto out;
		}
		keep_part = ctl.keep_partial && have > 0;
		goto out;
	}
	if (fsync(fd) < 0) {
		err_errno(e, "cannot sync '%s'", part);
		goto out;
	}
	if (sha256_final(ctx, streamed) < 0) {
		err_set(e, "cannot hash '%s': libcrypto failed", part);
		goto out;
	}
	memcpy(r->sha256, streamed, sizeof(r->sha256));
	r->resumed = initial > 0 || ctl.resumed > 0;
	if (r->resumed) {
		/* Pieces written by different requests: what counts is the
		 * file as it lies on disk, hashed in one pass. */
		if (sha256_init(ctx) < 0) {
			err_set(e, "cannot hash '%s': libcrypto failed", part);
			goto out;
		}
		if (hash_fd(fd, have, ctx, part, e) < 0)
			goto out;
		if (sha256_final(ctx, r->sha256) < 0) {
			err_set(e, "cannot hash '%s': libcrypto failed", part);
			goto out;
		}
		if (strcmp(r->sha256, streamed) != 0) {
			err_set(e, "download of '%s' is inconsistent: streamed "
			    "sha256 %s, file on disk %s; the file was deleted",
			    url, streamed, r->sha256);
			goto out;
		}
	}
	if (expected[0] && strcmp(r->sha256, expected) != 0) {
		err_set(e, "sha256 mismatch for '%s': expected %s (%s), got "
		    "%s; the file was deleted", url, expected,
		    o->expected_origin ? o->expected_origin : "given",
		    r->sha256);
		goto out;
	}
	r->pin = download_check_pinned(pinned, r->sha256);
	if (!expected[0] && r->pin == PIN_CHANGED) {
		err_set(e, "release archive changed under the same version: "
		    "'%s' was %s when first downloaded and is now %s; refused",
		    url, pinned, r->sha256);
		goto out;
	}
	if ((final = fs_join(archives, r->sha256)) == NULL) {
		err_set(e, "cannot download '%s': out of memory", url);
		goto out;
	}
	if (rename(part, final) < 0) {
		err_errno(e, "cannot rename '%s' to '%s'", part, final);
		goto out;
	}
	if (fs_sync_parent(final, e) < 0) {
		/* The archive is complete and named; only its durability
		 * is in doubt, which a later call repairs. */
		goto out_renamed;
	}
	r->size = have;
	r->path = final;
	final = NULL;
	rc = 0;
	goto out_renamed;
out:
	if (fd >= 0 && !keep_part)
		unlink(part);
out_renamed:
	if (fd >= 0 && !keep_part)
		unlink(etag_path);
	if (ctx->md != NULL)
		sha256_abort(ctx);
	if (fd >= 0)
		close(fd);
	free(ctl.etag);
	free(if_range);
	free(etag_path);
	free(archives);
	free(tmpdir);
	free(part);
	free(final);
	return rc;
}
