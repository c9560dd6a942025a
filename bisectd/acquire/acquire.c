/*
 * acquire.c: the path from a release name to a verified, unpacked tree
 * and pinned weights, with each step recorded in the store (see
 * acquire.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "acquire.h"
#include "common/buf.h"
#include "fetch/cache.h"
#include "config/conf.h"
#include "fetch/download.h"
#include "fetch/prefetch.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "fetch/sha256.h"
#include "fetch/source.h"
#include "store/store.h"
#include "fetch/unpack.h"
#include "fetch/version.h"
#include "fetch/weights.h"

int
acquire_init(struct acquire *a, const struct conf *conf,
    const struct conf_engine *eng, struct store *s, struct err *e)
{
	memset(a, 0, sizeof(*a));
	a->conf = conf;
	a->eng = eng;
	a->store = s;
	return store_engine_ensure(s, eng->name, eng->source_spec,
	    &a->engine_id, e);
}

int
acquire_refresh(struct acquire *a, int *listed, int *added, struct err *e)
{
	struct release_list l = RELEASE_LIST_INIT;
	struct source_state st = { NULL, 0 };
	int nadded = 0, nrefused = 0, rc = -1;

	if (store_engine_etag(a->store, a->engine_id, &st.etag, e) < 0)
		return -1;
	if (source_list(a->eng, &st, &l, e) < 0) {
		err_prefix(e, "cannot list releases of %s", a->eng->name);
		goto done;
	}
	if (store_begin(a->store, e) < 0)
		goto done;
	for (size_t i = 0; i < l.n; i++) {
		struct store_release r, old;
		int known;

		if (l.v[i].refused != NULL) {
			if (a->refused != NULL)
				a->refused(a->refused_arg, l.v[i].version,
				    l.v[i].refused);
			nrefused++;
			continue;
		}
		memset(&r, 0, sizeof(r));
		r.engine_id = a->engine_id;
		r.version = l.v[i].version;
		r.order_key = version_key(l.v[i].version);
		r.url = l.v[i].url;
		r.asset = l.v[i].asset;
		r.expected_sha256 = l.v[i].sha256;
		r.sha256_origin = l.v[i].sha256_origin;
		known = store_release_get(a->store, a->engine_id, r.version,
		    &old, e);
		if (known == 0)
			store_release_release(&old);
		if (known < 0 || r.order_key == NULL ||
		    store_release_upsert(a->store, &r, e) < 0) {
			if (r.order_key == NULL)
				err_set(e, "out of memory");
			free(r.order_key);
			store_rollback(a->store);
			goto done;
		}
		free(r.order_key);
		nadded += known == 1;
	}
	if (!st.not_modified && store_engine_set_etag(a->store, a->engine_id,
	    st.etag, e) < 0) {
		store_rollback(a->store);
		goto done;
	}
	if (store_commit(a->store, e) < 0)
		goto done;
	if (listed)
		*listed = (int)l.n - nrefused;
	if (added)
		*added = nadded;
	rc = 0;
done:
	free(st.etag);
	release_list_release(&l);
	return rc;
}

int
acquire_newest(struct acquire *a, int refresh, char **version,
    struct err *e)
{
	struct store_release_list l = { NULL, 0 };

	if ((refresh && acquire_refresh(a, NULL, NULL, e) < 0) ||
	    store_release_list(a->store, a->engine_id, &l, e) < 0)
		return -1;
	if (l.n == 0 && !refresh) {
		store_release_list_release(&l);
		return acquire_newest(a, 1, version, e);
	}
	if (l.n == 0) {
		store_release_list_release(&l);
		return err_set(e, "%s: the source lists no releases",
		    a->eng->name);
	}
	*version = strdup(l.v[l.n - 1].version);
	store_release_list_release(&l);
	return *version ? 0 : err_set(e, "out of memory");
}

void
acquired_release(struct acquired *r)
{
	free(r->url);
	free(r->dir);
	memset(r, 0, sizeof(*r));
}

/* The store's view of version, asking the source once if it is unknown. */
static int
find_release(struct acquire *a, const char *version, struct store_release *r,
    struct err *e)
{
	int rc = store_release_get(a->store, a->engine_id, version, r, e);

	if (rc != 1)
		return rc;
	if (acquire_refresh(a, NULL, NULL, e) < 0)
		return -1;
	rc = store_release_get(a->store, a->engine_id, version, r, e);
	if (rc == 1)
		return err_usage(e, "%s has no release '%s' (source %s)",
		    a->eng->name, version, a->eng->source_spec);
	return rc;
}

/* Record an archive hash seen under a version that had another one. */
static void
alert_archive_changed(struct acquire *a, const char *version,
    const char *was, const char *now)
{
	char key[256], summary[512];
	json_t *o = json_object();
	char *body;

	snprintf(key, sizeof(key), "archive-changed:%s:%s:%s", a->eng->name,
	    version, now);
	snprintf(summary, sizeof(summary), "%s %s: release archive changed "
	    "under the same version (was sha256 %s, now %s)", a->eng->name,
	    version, was, now);
	json_object_set_new(o, "kind", json_string("archive-changed"));
	json_object_set_new(o, "text", json_string(summary));
	json_object_set_new(o, "engine", json_string(a->eng->name));
	json_object_set_new(o, "version", json_string(version));
	json_object_set_new(o, "pinned_sha256", json_string(was));
	json_object_set_new(o, "seen_sha256", json_string(now));
	body = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	/* Best effort: the refusal itself is what protects the numbers. */
	store_alert_record(a->store, "archive-changed", a->eng->name, key,
	    summary, body ? body : "{}", NULL);
	free(body);
}

/* Get the archive into the cache (or hash a local one); sets sha and path. */
static int
fetch_archive(struct acquire *a, const struct store_release *r,
    char sha[65], char **path, int *downloaded, struct err *e)
{
	const char *pinned = r->archive_sha256;

	*downloaded = 0;
	*path = NULL;
	if (r->url == NULL)
		return err_set(e, "%s %s: the source gave no archive URL",
		    a->eng->name, r->version);
	if (r->url[0] == '/') {
		/* dir: sources: the archive is already on this machine. */
		if (sha256_file(r->url, sha, e) < 0)
			return -1;
		if (r->expected_sha256 && strcasecmp(r->expected_sha256,
		    sha) != 0)
			return err_set(e, "%s %s: archive '%s' has sha256 %s, "
			    "expected %s (%s)", a->eng->name, r->version,
			    r->url, sha, r->expected_sha256,
			    r->sha256_origin ? r->sha256_origin : "config");
		if ((*path = strdup(r->url)) == NULL)
			return err_set(e, "out of memory");
	} else if (prefetch_take(a->prefetch, r->version, sha, path) == 1) {
		/* Downloaded ahead and checked against the same hashes;
		 * the pin is checked below as for any download. */
		*downloaded = 1;
	} else {
		struct download_opts o = DOWNLOAD_OPTS_INIT;
		struct download_result res = DOWNLOAD_RESULT_INIT;

		o.cache = a->conf->cache;
		o.expected_sha256 = r->expected_sha256;
		o.expected_origin = r->sha256_origin;
		o.pinned_sha256 = pinned;
		o.allow_http = a->eng->allow_http;
		o.progress = a->progress;
		o.progress_arg = a->progress_arg;
		o.deadline_ms = (long)a->eng->download_deadline_ms;
		o.stop = a->stop;
		if (fetch_download(r->url, &o, &res, e) < 0) {
			download_result_release(&res);
			return err_prefix(e, "%s %s", a->eng->name, r->version);
		}
		memcpy(sha, res.sha256, 65);
		*path = res.path;
		res.path = NULL;
		*downloaded = !res.cached;
		download_result_release(&res);
	}
	if (download_check_pinned(pinned, sha) == PIN_CHANGED) {
		alert_archive_changed(a, r->version, pinned, sha);
		err_set(e, "%s %s: release archive changed under the same "
		    "version: sha256 %s was recorded, %s was served; refusing "
		    "it (an alert was recorded)", a->eng->name, r->version,
		    pinned, sha);
		free(*path);
		*path = NULL;
		return -1;
	}
	return 0;
}

/* Refuse a version no release may have, whatever the store holds. */
static int
check_version(struct acquire *a, const char *version, struct err *e)
{
	const char *why = release_version_refusal(version, strlen(version));
	char *shown;

	if (why == NULL)
		return 0;
	shown = release_version_escape(version, strlen(version));
	err_set(e, "%s: release '%s' refused: %s", a->eng->name,
	    shown ? shown : "", why);
	free(shown);
	return -1;
}

int
acquire_release_dir(const struct conf *conf, const struct conf_engine *eng,
    const char *version, char **dir, struct err *e)
{
	char name[CACHE_DIRNAME_MAX], rel[CACHE_DIRNAME_MAX + 512];

	*dir = NULL;
	if (cache_release_dirname(version, name) < 0)
		return err_set(e, "%s %s: cannot name its cache folder",
		    eng->name, version);
	snprintf(rel, sizeof(rel), "releases/%s/%s", eng->name, name);
	if ((*dir = fs_join(conf->cache, rel)) == NULL)
		return err_set(e, "out of memory");
	return 0;
}

char *
acquire_weights_path(const struct conf *conf, const struct conf_weights *w,
    const char *sha256)
{
	char rel[128];

	if (w->path)
		return strdup(w->path);
	if (sha256 == NULL)
		return NULL;
	/* weights_fetch() keeps a download content-addressed. */
	snprintf(rel, sizeof(rel), "archives/%s", sha256);
	return fs_join(conf->cache, rel);
}

int
acquire_release(struct acquire *a, const char *version, struct acquired *out,
    struct err *e)
{
	struct unpack_limits lim = UNPACK_LIMITS_INIT;
	struct store_release r;
	char *dir = NULL, *archive = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (check_version(a, version, e) < 0)
		return -1;
	if ((rc = find_release(a, version, &r, e)) != 0)
		return -1;
	out->release_id = r.id;
	if (acquire_release_dir(a->conf, a->eng, version, &dir, e) < 0) {
		store_release_release(&r);
		return -1;
	}
	/*
	 * The unpacked tree stands for the archive hash the store recorded:
	 * a different archive under the same version is refused, so both
	 * stay in step.  A tree without the mark of a finished unpack (a
	 * full disk, a crash) is unpacked again.
	 */
	if (r.archive_sha256 && fetch_unpack_complete(dir)) {
		snprintf(out->sha256, sizeof(out->sha256), "%s",
		    r.archive_sha256);
		out->url = r.url ? strdup(r.url) : NULL;
		out->dir = dir;
		cache_touch(dir, NULL);
		store_release_release(&r);
		return 0;
	}
	if (fetch_archive(a, &r, out->sha256, &archive, &out->downloaded,
	    e) < 0)
		goto fail;
	{
		struct err ge = ERR_INIT;
		char parent[4096];

		snprintf(parent, sizeof(parent), "%s/releases/%s",
		    a->conf->cache, a->eng->name);
		if (fs_mkdirs(parent, 0755, e) < 0)
			goto fail;
		/* A tree left by an older archive hash, or by an unpack that
		 * did not finish, is replaced. */
		if (fs_remove_tree(dir, &ge) < 0) {
			err_set(e, "%s", ge.msg);
			goto fail;
		}
	}
	lim.max_bytes = a->eng->unpack_max;
	if (fetch_unpack(archive, dir, &lim, e) < 0) {
		err_prefix(e, "%s %s", a->eng->name, version);
		/*
		 * An archive nobody vouched for (no published hash, none
		 * pinned) that does not unpack is not the release: a
		 * captive portal's page, say.  It is neither pinned nor
		 * kept, so the next attempt downloads again.
		 */
		if (r.expected_sha256 == NULL && r.archive_sha256 == NULL &&
		    r.url != NULL && r.url[0] != '/')
			unlink(archive);
		goto fail;
	}
	/* Pinned only now: what is pinned is an archive that unpacks. */
	if (store_release_set_archive(a->store, r.id, out->sha256, e) < 0)
		goto fail;
	out->unpacked = 1;
	cache_touch(dir, NULL);
	if (r.state == RELEASE_LISTED || r.state == RELEASE_FAILED)
		store_release_set_state(a->store, r.id, RELEASE_FETCHED, NULL,
		    NULL);
	{
		/* Keep the unpacked cache under its cap; never this one. */
		struct cache_gc_stats gs;

		cache_gc(a->conf->cache, a->conf->cache_max, dir, NULL, NULL,
		    &gs, NULL);
	}
	out->url = r.url ? strdup(r.url) : NULL;
	out->dir = dir;
	free(archive);
	store_release_release(&r);
	return 0;
fail:
	store_release_set_state(a->store, r.id, RELEASE_FAILED, e->msg, NULL);
	free(archive);
	free(dir);
	store_release_release(&r);
	return -1;
}

void
pinned_weights_release(struct pinned_weights *w)
{
	free(w->path);
	memset(w, 0, sizeof(*w));
}

int
acquire_weights(struct acquire *a, struct pinned_weights *out, struct err *e)
{
	const struct conf_weights *w = a->eng->weights;
	struct weights_stamp stamp = WEIGHTS_STAMP_INIT;
	struct buf text = BUF_INIT(WEIGHTS_STAMP_TEXT_MAX);
	struct err ignore = ERR_INIT;
	char name[512], *stamp_path, line[WEIGHTS_STAMP_TEXT_MAX];
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(name, sizeof(name), "weights/%s.stamp", w->name);
	if ((stamp_path = fs_join(a->conf->cache, name)) == NULL)
		return err_set(e, "out of memory");
	if (fs_read_file(stamp_path, &text, &ignore) == 0 && text.data)
		weights_stamp_parse(strtok(text.data, "\n"), &stamp);
	buf_release(&text);
	if (w->url) {
		struct weights_fetch_opts fo = WEIGHTS_FETCH_OPTS_INIT;

		fo.cache = a->conf->cache;
		fo.allow_http = a->eng->allow_http;
		fo.progress = a->progress;
		fo.progress_arg = a->progress_arg;
		fo.deadline_ms = (long)a->eng->download_deadline_ms;
		fo.stop = a->stop;
		rc = weights_fetch(w, &fo, &stamp, out->sha256, &out->path, e);
	} else
		rc = weights_verify(w, &stamp, out->sha256, e);
	if (rc < 0) {
		/* Its messages name the section already. */
		free(stamp_path);
		return -1;
	}
	if (rc == 1) {
		char dir[4096];

		snprintf(dir, sizeof(dir), "%s/weights", a->conf->cache);
		weights_stamp_format(&stamp, line, sizeof(line));
		strcat(line, "\n");
		if (fs_mkdirs(dir, 0755, e) < 0 || fs_write_atomic(stamp_path,
		    line, strlen(line), 0644, e) < 0) {
			free(stamp_path);
			return -1;
		}
	}
	free(stamp_path);
	out->size = stamp.size;
	if (out->path == NULL && (out->path = strdup(w->path)) == NULL)
		return err_set(e, "out of memory");
	return store_weights_ensure(a->store, w->name, out->sha256,
	    (int64_t)out->size, &out->weights_id, e);
}
