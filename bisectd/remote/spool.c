/*
 * spool.c: measurement requests in the spool: their ids, the paths of
 * their request and result files, a plan's JSON and its written request
 * (see remote.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/random.h>

#include <jansson.h>

#include "bisectd/measure/bench.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "config/conf.h"
#include "fetch/sha256.h"
#include "remote.h"
#include "store/store.h"
#include "wire.h"

int
remote_new_id(char id[REMOTE_ID_LEN + 1], struct err *e)
{
	unsigned char r[REMOTE_ID_LEN / 2];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return err_errno(e, "cannot read random bytes for a request id");
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(id + 2 * i, 3, "%02x", r[i]);
	return 0;
}
static char *
spool_file(const char *spool, const char *id, const char *ext)
{
	char name[REMOTE_ID_LEN + 16];

	snprintf(name, sizeof(name), "%s.%s", id, ext);
	return fs_join(spool, name);
}

char *
remote_request_path(const char *spool, const char *id)
{
	return spool_file(spool, id, "request");
}

char *
remote_result_path(const char *spool, const char *id)
{
	return spool_file(spool, id, "result");
}

int
remote_plan_json(const struct conf *conf, const struct remote_plan *p,
    char **json, char plan[65], struct err *e)
{
	json_t *o = json_object(), *targets = json_array(), *cells =
	    json_array(), *reps = json_array(), *stored = json_array();

	(void)conf;
	for (size_t t = 0; t < p->nrel; t++) {
		const struct store_release *r = p->rel[t];
		json_t *x = json_object();

		json_object_set_new(x, "version", json_string(r->version));
		json_object_set_new(x, "url", opt_str(r->url));
		json_object_set_new(x, "asset", opt_str(r->asset));
		json_object_set_new(x, "expected_sha256",
		    opt_str(r->expected_sha256));
		json_object_set_new(x, "archive_sha256",
		    opt_str(r->archive_sha256));
		json_array_append_new(targets, x);
		for (size_t c = 0; c < p->ncells; c++) {
			json_array_append_new(reps, json_integer(
			    p->reps[t * p->ncells + c]));
			json_array_append_new(stored, json_integer(p->stored ?
			    p->stored[t * p->ncells + c] : 0));
		}
	}
	for (size_t c = 0; c < p->ncells; c++) {
		json_t *x = json_object();

		json_object_set_new(x, "kind", json_string(p->cells[c].kind));
		json_object_set_new(x, "prompt",
		    json_integer(p->cells[c].prompt));
		json_object_set_new(x, "gen", json_integer(p->cells[c].gen));
		json_object_set_new(x, "content",
		    json_string(p->cells[c].content));
		json_array_append_new(cells, x);
	}
	json_object_set_new(o, "format", json_string(REQUEST_FORMAT));
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "engine", json_string(p->eng->name));
	json_object_set_new(o, "weights_sha256",
	    json_string(p->weights_sha256));
	json_object_set_new(o, "targets", targets);
	json_object_set_new(o, "cells", cells);
	json_object_set_new(o, "reps", reps);
	json_object_set_new(o, "stored", stored);
	json_object_set_new(o, "warmup", json_integer(p->warmup));
	json_object_set_new(o, "confirm", json_boolean(p->confirm));
	*json = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (*json == NULL)
		return err_set(e, "out of memory");
	if (sha256_buf(*json, strlen(*json), plan) < 0) {
		free(*json);
		*json = NULL;
		return err_set(e, "cannot hash a measurement request");
	}
	return 0;
}

int
remote_request_write(const char *spool, const char *id,
    const char *plan_json, int anchor, struct err *e)
{
	json_t *o = json_loads(plan_json, 0, NULL);
	char *text, *path;
	int rc;

	if (o == NULL)
		return err_set(e, "out of memory");
	json_object_set_new(o, "id", json_string(id));
	if (anchor > 0)
		json_object_set_new(o, "anchor", json_integer(anchor));
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	path = remote_request_path(spool, id);
	if (text == NULL || path == NULL) {
		free(text);
		free(path);
		return err_set(e, "out of memory");
	}
	rc = fs_mkdirs(spool, 0755, e);
	if (rc == 0)
		rc = remote_trusted(spool, 1, e);
	if (rc == 0)
		rc = fs_write_atomic(path, text, strlen(text), 0644, e);
	free(text);
	free(path);
	return rc;
}

int
remote_trusted(const char *path, int dir, struct err *e)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return err_errno(e, "'%s'", path);
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
		return err_set(e, "'%s' refused: not a %s", path, dir ?
		    "folder" : "regular file");
	if (st.st_uid != geteuid())
		return err_set(e, "'%s' refused: owned by uid %ld, not by this "
		    "user (uid %ld), who alone may write the spool", path,
		    (long)st.st_uid, (long)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return err_set(e, "'%s' refused: writable by %s (mode %04o); "
		    "the spool and its files must be writable by their owner "
		    "alone", path, st.st_mode & S_IWOTH ? "everyone" :
		    "its group", (unsigned)(st.st_mode & 07777));
	return 0;
}
