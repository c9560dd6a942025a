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
	sm.gpus = NULL;	/* the node's GPUs are in its hw_key, not sent */
	sm.ngpus = 0;
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
		if (remote_run_from_json(x, &run, e) < 0)
			return -1;
		run.release_id = rel_ids[t];
		run.weights_id = weights_id;
		run.machine_id = machine_id;
		if (run.mode == NULL || run.parser == NULL)
			return err_set(e, "a run without its mode or parser");
		if (store_definition_ensure(s, jstr(x, "definition"),
		    jstr(x, "definition_text"), jstr(x, "clock"),
		    &run.definition_id, e) < 0 ||
		    remote_samples_from_json(x, &smp, &nsmp, e) < 0 ||
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
