/*
 * ingest.c: the daemon's side of a remote measurement: a result file
 * read, checked against its request and stored in one transaction (see
 * remote.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bisectd/measure/bench.h"
#include "bisectd/measure/hygiene.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "config/conf.h"
#include "remote.h"
#include "store/store.h"
#include "wire.h"

/* Fill a store_run from a result's run object (strings point into it). */
static void
run_from_json(const json_t *o, struct store_run *r)
{
	const json_t *v;

	memset(r, 0, sizeof(*r));
	r->kind = jstr(o, "kind");
	r->prompt_tokens = (int)jint(o, "prompt", 0);
	r->gen_tokens = (int)jint(o, "gen", 0);
	r->content = jstr(o, "content");
	r->rep = (int)jint(o, "rep", 0);
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
	r->end.exit_code = (int)jint(o, "exit_code", -1);
	r->end.signal = (int)jint(o, "signal", 0);
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
}

/* The samples of a result's run (malloced). */
static int
samples_from_json(const json_t *o, struct store_sample **v, size_t *n,
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

/* Read, check and parse the result file: 0 with *out, or REFUSED/MISSING
 * with e set. */
static int
result_read(const char *path, const char *id, const char *plan,
    json_t **out, struct err *e)
{
	struct buf text = BUF_INIT(REMOTE_RESULT_MAX);
	int rc;

	*out = NULL;
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return err_set(e, "no result file '%s'", path), REMOTE_MISSING;
	if (remote_trusted(path, 0, e) < 0)
		return err_prefix(e, "result"), REMOTE_REFUSED;
	if (fs_read_file(path, &text, e) < 0)
		return err_prefix(e, "result"), REMOTE_REFUSED;
	rc = remote_result_parse(text.data ? text.data : "", text.len, path,
	    id, plan, out, e);
	buf_release(&text);
	return rc;
}

/* Check a run's definition is the one this configuration gives the cell
 * on that node: both ends of a comparison measured alike. */
static int
check_definition(const struct conf_engine *eng, const json_t *run,
    const char *weights_sha256, const char *hw_key, struct err *e)
{
	struct bench_definition d;
	const char *key = jstr(run, "definition");
	int rc;

	if (jstr(run, "kind") == NULL || key == NULL ||
	    jstr(run, "definition_text") == NULL || jstr(run, "clock") == NULL)
		return err_set(e, "a run without its cell or definition");
	if (bench_definition(eng, jstr(run, "kind"), (int)jint(run, "prompt",
	    0), (int)jint(run, "gen", 0), jstr(run, "content") ?
	    jstr(run, "content") : "", weights_sha256, hw_key, &d, e) < 0)
		return -1;
	rc = strcmp(d.key, key) == 0 ? 0 : err_set(e, "a run's measurement "
	    "definition %.12s is not this configuration's %.12s for %s "
	    "cell %d/%d (the node's configuration differs)", key, d.key,
	    jstr(run, "kind"), (int)jint(run, "prompt", 0),
	    (int)jint(run, "gen", 0));
	bench_definition_release(&d);
	return rc;
}

/* The store's writes of one result, inside the caller's transaction. */
static int
ingest_tx(struct store *s, int64_t engine_id, const struct store_slurm_job *row,
    const json_t *o, int64_t weights_id, const char *hw_key, struct err *e)
{
	const json_t *m = json_object_get(o, "machine"), *x;
	const json_t *releases = json_object_get(o, "releases");
	struct store_machine sm;
	int64_t machine_id, rel_ids[2] = { 0, 0 };
	size_t i;
	int rc;

	sm.hw_key = dup_or_null(hw_key);
	sm.cpu_model = jdup(m, "cpu_model", "unknown");
	sm.cores = (int)jint(m, "cores", 0);
	sm.mem_bytes = jint(m, "mem_bytes", 0);
	sm.arch = jdup(m, "arch", "unknown");
	sm.kernel = jdup(m, "kernel", "");
	sm.os = jdup(m, "os", "");
	sm.hostname = jdup(m, "hostname", "");
	rc = store_machine_ensure(s, &sm, &machine_id, e);
	store_machine_release(&sm);
	if (rc < 0)
		return -1;
	if (!json_is_array(releases) || json_array_size(releases) > 2)
		return err_set(e, "expected one or two releases");
	json_array_foreach(releases, i, x) {
		struct store_release r;
		const char *sha = jstr(x, "archive_sha256");

		if (jstr(x, "version") == NULL || store_release_get(s, engine_id,
		    jstr(x, "version"), &r, e) != 0)
			return err_set(e, "release '%s' is not %s's",
			    jstr(x, "version") ? jstr(x, "version") : "?",
			    row->engine);
		rel_ids[i] = r.id;
		rc = 0;
		if (sha && r.archive_sha256 && strcmp(sha, r.archive_sha256))
			rc = err_set(e, "%s: the node measured archive %s, the "
			    "store pinned %s", r.version, sha,
			    r.archive_sha256);
		else if (sha && r.archive_sha256 == NULL)
			rc = store_release_set_archive(s, r.id, sha, e);
		if (rc == 0 && jstr(x, "failure"))
			rc = store_release_set_state(s, r.id, RELEASE_FAILED,
			    jstr(x, "failure"), e);
		else if (rc == 0 && jstr(x, "state") &&
		    strcmp(jstr(x, "state"), "measured") == 0)
			rc = store_release_set_state(s, r.id,
			    RELEASE_MEASURED, NULL, e);
		else if (rc == 0 && sha && r.state != RELEASE_MEASURED)
			rc = store_release_set_state(s, r.id, RELEASE_FETCHED,
			    NULL, e);
		store_release_release(&r);
		if (rc < 0)
			return -1;
	}
	json_array_foreach(json_object_get(o, "runs"), i, x) {
		struct store_run run;
		struct store_sample *smp = NULL;
		size_t nsmp = 0;
		int64_t t = jint(x, "target", -1);

		if (t < 0 || t >= (int64_t)json_array_size(releases))
			return err_set(e, "a run of no release of the result");
		run_from_json(x, &run);
		run.release_id = rel_ids[t];
		run.weights_id = weights_id;
		run.machine_id = machine_id;
		if (run.mode == NULL || run.parser == NULL)
			return err_set(e, "a run without its mode or parser");
		if (store_definition_ensure(s, jstr(x, "definition"),
		    jstr(x, "definition_text"), jstr(x, "clock"),
		    &run.definition_id, e) < 0 ||
		    samples_from_json(x, &smp, &nsmp, e) < 0 ||
		    store_run_insert(s, &run, smp, nsmp, e) < 0) {
			free(smp);
			return -1;
		}
		free(smp);
	}
	rc = store_slurm_claim(s, row->id, jstr(m, "node"), hw_key, e);
	if (rc == 1)
		return err_set(e, "request %s was ingested before",
		    row->request);
	return rc;
}

int
remote_ingest(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spool, const char *id, int64_t weights_id,
    const char *weights_sha256, char hw_key[65], struct err *e)
{
	struct store_slurm_job row;
	json_t *o = NULL, *x;
	char *path = remote_result_path(spool, id);
	int64_t engine_id;
	size_t i;
	int rc;

	(void)conf;
	if (path == NULL)
		return err_set(e, "out of memory");
	if ((rc = store_slurm_get(s, id, &row, e)) != 0) {
		free(path);
		return rc < 0 ? -1 : (err_set(e, "result of request %s "
		    "refused: the store submitted no such request", id),
		    REMOTE_REFUSED);
	}
	if (row.ingested) {
		rc = (err_set(e, "result '%s' refused: request %s was ingested "
		    "before", path, id), REMOTE_REFUSED);
		goto done;
	}
	if ((rc = result_read(path, id, row.plan, &o, e)) != 0)
		goto done;
	if (jstr(o, "error")) {
		rc = (err_set(e, "%s", jstr(o, "error")), REMOTE_NODE_ERROR);
		goto done;
	}
	x = json_object_get(o, "machine");
	if (jstr(x, "hw_key") == NULL || !sha256_valid_hex(jstr(x, "hw_key")) ||
	    jstr(x, "node") == NULL || jstr(o, "weights_sha256") == NULL ||
	    strcmp(jstr(o, "weights_sha256"), weights_sha256) != 0) {
		rc = (err_set(e, "result '%s' refused: no node identity, or "
		    "weights other than %.12s", path, weights_sha256),
		    REMOTE_REFUSED);
		goto done;
	}
	snprintf(hw_key, 65, "%s", jstr(x, "hw_key"));
	json_array_foreach(json_object_get(o, "runs"), i, x)
		if (check_definition(eng, x, weights_sha256, hw_key, e) < 0) {
			err_prefix(e, "result '%s' refused", path);
			rc = REMOTE_REFUSED;
			goto done;
		}
	if ((rc = store_engine_find(s, eng->name, &engine_id, e)) != 0) {
		rc = rc < 0 ? -1 : err_set(e, "engine %s unknown to the store",
		    eng->name);
		goto done;
	}
	if (store_begin(s, e) < 0) {
		rc = -1;
		goto done;
	}
	if (ingest_tx(s, engine_id, &row, o, weights_id, hw_key, e) < 0) {
		store_rollback(s);
		err_prefix(e, "result '%s' refused", path);
		rc = REMOTE_REFUSED;
		goto done;
	}
	rc = store_commit(s, e) < 0 ? -1 : REMOTE_INGESTED;
done:
	json_decref(o);
	store_slurm_job_release(&row);
	free(path);
	return rc;
}
