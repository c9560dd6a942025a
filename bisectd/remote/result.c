/*
 * result.c: a result file's text judged (see remote.h): its checksum
 * line, its format, and the request it answers; and its runs read into
 * the store's structs.  Pure, so a fuzzer reaches it without a spool or
 * a store.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/err.h"
#include "fetch/sha256.h"
#include "remote.h"
#include "store/run.h"
#include "wire.h"

int
remote_result_parse(const char *text, size_t len, const char *path,
    const char *id, const char *plan, json_t **out, struct err *e)
{
	const char *trailer = NULL;
	char hash[65];
	json_error_t je;
	json_t *o;

	*out = NULL;
	/* BODY "\n" "sha256 " HEX "\n", and nothing after. */
	if (len >= 1 + strlen(TRAILER) + 64 + 1) {
		trailer = text + len - (strlen(TRAILER) + 64 + 1);
		if (trailer[-1] != '\n' || strncmp(trailer, TRAILER,
		    strlen(TRAILER)) != 0 || text[len - 1] != '\n')
			trailer = NULL;
	}
	if (trailer == NULL)
		return err_set(e, "result '%s' refused: truncated (no checksum "
		    "line at its end)", path), REMOTE_REFUSED;
	if (sha256_buf(text, (size_t)(trailer - 1 - text), hash) < 0 ||
	    strncmp(hash, trailer + strlen(TRAILER), 64) != 0)
		return err_set(e, "result '%s' refused: its sha256 does not "
		    "match its checksum line (cut short or altered)", path),
		    REMOTE_REFUSED;
	o = json_loadb(text, (size_t)(trailer - 1 - text), 0, &je);
	if (o == NULL)
		return err_set(e, "result '%s' refused: %s", path, je.text),
		    REMOTE_REFUSED;
	if (jstr(o, "format") == NULL || strcmp(jstr(o, "format"),
	    RESULT_FORMAT) != 0 || jint(o, "version", 0) != 1) {
		json_decref(o);
		return err_set(e, "result '%s' refused: not a version 1 "
		    "result", path), REMOTE_REFUSED;
	}
	if (jstr(o, "request") == NULL || strcmp(jstr(o, "request"), id) != 0 ||
	    jstr(o, "plan") == NULL || strcmp(jstr(o, "plan"), plan) != 0) {
		err_set(e, "result '%s' refused: it answers request %s (plan "
		    "%.12s), not %s (plan %.12s)", path, jstr(o, "request") ?
		    jstr(o, "request") : "?", jstr(o, "plan") ? jstr(o, "plan") :
		    "?", id, plan);
		json_decref(o);
		return REMOTE_REFUSED;
	}
	*out = o;
	return 0;
}

/* o[key] (dflt when missing) as an int from lo to INT_MAX; -1 with e set
 * naming the key when it is out of that range: a run of 4294967424
 * tokens is refused, never stored as 128. */
static int
int_field(const json_t *o, const char *key, int dflt, int lo, int *out,
    struct err *e)
{
	int64_t v = jint(o, key, dflt);

	if (v < lo || v > INT_MAX)
		return err_set(e, "a run's %s of %lld is out of range", key,
		    (long long)v);
	*out = (int)v;
	return 0;
}

int
remote_run_from_json(const json_t *o, struct store_run *r, struct err *e)
{
	const json_t *v;

	memset(r, 0, sizeof(*r));
	if (int_field(o, "prompt", 0, 0, &r->prompt_tokens, e) < 0 ||
	    int_field(o, "gen", 0, 0, &r->gen_tokens, e) < 0 ||
	    int_field(o, "rep", 0, 0, &r->rep, e) < 0 ||
	    int_field(o, "exit_code", -1, -1, &r->end.exit_code, e) < 0 ||
	    int_field(o, "signal", 0, 0, &r->end.signal, e) < 0)
		return -1;
	r->kind = jstr(o, "kind");
	r->content = jstr(o, "content");
	r->warmup = jint(o, "warmup", 0) != 0;
	r->confirm = jint(o, "confirm", 0) != 0;
	r->busy = jint(o, "busy", 0) != 0;
	r->mode = jstr(o, "mode");
	r->parser = jstr(o, "parser");
	r->started = jint(o, "started", 0);
	r->end.wall_ns = jint(o, "wall_ns", -1);
	r->user_ns = jint(o, "user_ns", -1);
	r->sys_ns = jint(o, "sys_ns", -1);
	r->max_rss_kb = jint(o, "max_rss_kb", -1);
	r->end.failure = jstr(o, "failure");
	r->end.failure_detail = jstr(o, "failure_detail");
	if ((v = json_object_get(o, "stdout")) && json_is_string(v)) {
		r->out = json_string_value(v);
		r->out_len = json_string_length(v);
	}
	r->out_truncated = jint(o, "stdout_truncated", 0) != 0;
	if ((v = json_object_get(o, "stderr_tail")) && json_is_string(v)) {
		r->end.err_tail = json_string_value(v);
		r->end.err_len = json_string_length(v);
	}
	v = json_object_get(o, "busy_share");
	r->busy_share = json_is_number(v) ? json_number_value(v) : -1;
	v = json_object_get(o, "loadavg");
	r->loadavg = json_is_number(v) ? json_number_value(v) : -1;
	r->info = jstr(o, "info");
	return 0;
}

int
remote_samples_from_json(const json_t *o, struct store_sample **v, size_t *n,
    struct err *e)
{
	const json_t *a = json_object_get(o, "samples");

	*n = json_array_size(a);
	*v = calloc(*n ? *n : 1, sizeof(**v));
	if (*v == NULL)
		return err_set(e, "out of memory");
	for (size_t i = 0; i < *n; i++) {
		json_int_t x[7];

		if (json_unpack(json_array_get(a, i), "[IIIIIII]", &x[0], &x[1],
		    &x[2], &x[3], &x[4], &x[5], &x[6]) < 0)
			return err_set(e, "a sample is not 7 integers");
		/* Cut to an int, 4294967424 tokens would be stored as 128. */
		if (x[0] < 0 || x[0] > INT_MAX || x[1] < 0 || x[1] > INT_MAX)
			return err_set(e, "a sample of %lld and %lld tokens",
			    (long long)x[0], (long long)x[1]);
		(*v)[i].prompt_tokens = (int)x[0];
		(*v)[i].gen_tokens = (int)x[1];
		(*v)[i].wall_ns = x[2];
		(*v)[i].engine_ns = x[3];
		(*v)[i].user_ns = x[4];
		(*v)[i].sys_ns = x[5];
		(*v)[i].max_rss_kb = x[6];
	}
	return 0;
}
