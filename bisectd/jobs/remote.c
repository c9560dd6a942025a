/*
 * remote.c: measurement requests, the node's run of one, and the
 * daemon's ingest of its result file (see remote.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <jansson.h>

#include "acquire.h"
#include "bisectd/measure/bench.h"
#include "bisectd/measure/benchlock.h"
#include "bisectd/measure/hygiene.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "config/conf.h"
#include "fetch/sha256.h"
#include "remote.h"
#include "store/store.h"

#define REQUEST_MAX ((size_t)1 << 20)
#define RESULT_FORMAT "bisectd-result"
#define REQUEST_FORMAT "bisectd-request"
#define TRAILER "sha256 "

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

static int
valid_id(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (n != REMOTE_ID_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strchr("0123456789abcdef", id[i]) == NULL)
			return 0;
	return 1;
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

static json_t *
opt_str(const char *s)
{
	return s ? json_string(s) : json_null();
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
		rc = fs_write_atomic(path, text, strlen(text), 0644, e);
	free(text);
	free(path);
	return rc;
}

/* --- the node's side --- */

/* Everything one node-run carries, so failures can be written out. */
struct node_run {
	const struct conf *conf;
	const struct conf_engine *eng;
	json_t *req;			/* the request */
	const char *id;			/* in req */
	char *result_path;
	struct store *scratch;
	char *scratch_path;
	struct acquire acq;
	struct pinned_weights w;
	struct machine m;
	char node_key[65];
	struct acquired got[2];
	char *fetch_error[2];		/* or NULL */
	int64_t release_id[2];
	size_t ntargets;
	struct bench_cell *cells;	/* in the request's order */
	size_t ncells;
};

/* The short host name: the node as Slurm names it. */
static void
short_host(const char *hostname, char *out, size_t len)
{
	snprintf(out, len, "%.*s", (int)strcspn(hostname, "."), hostname);
}

/*
 * The comparability key of runs on this node: its hardware identity and
 * its name, since two nodes of the same hardware still differ (their
 * cooling, their neighbours, their firmware), and the bisect's anchor
 * when it is not the first: a node back from a failure or a drain is
 * compared with none of its runs from before.
 */
static int
node_key(const struct machine *m, int64_t anchor, char key[65],
    struct err *e)
{
	char host[256], text[512];
	int n;

	short_host(m->hostname, host, sizeof(host));
	n = snprintf(text, sizeof(text), "bisectd-node\n%s\n%s\n", m->hw_key,
	    host);
	if (anchor > 0 && n > 0 && (size_t)n < sizeof(text))
		snprintf(text + n, sizeof(text) - (size_t)n, "anchor %lld\n",
		    (long long)anchor);
	if (sha256_buf(text, strlen(text), key) < 0)
		return err_set(e, "cannot hash the node's identity");
	return 0;
}

static json_t *
machine_json(const struct node_run *n)
{
	json_t *o = json_object();
	char host[256];

	short_host(n->m.hostname, host, sizeof(host));
	json_object_set_new(o, "node", json_string(host));
	json_object_set_new(o, "hw_key", json_string(n->node_key));
	json_object_set_new(o, "machine_hw_key", json_string(n->m.hw_key));
	json_object_set_new(o, "cpu_model", json_string(n->m.cpu_model));
	json_object_set_new(o, "cores", json_integer(n->m.cores));
	json_object_set_new(o, "mem_bytes",
	    json_integer((json_int_t)n->m.mem_kb * 1024));
	json_object_set_new(o, "arch", json_string(n->m.arch));
	json_object_set_new(o, "kernel", json_string(n->m.kernel));
	json_object_set_new(o, "os", json_string(n->m.os));
	json_object_set_new(o, "hostname", json_string(n->m.hostname));
	return o;
}

static json_t *
blob_json(const char *p, size_t len)
{
	return p ? json_stringn_nocheck(p, len) : json_null();
}

static json_t *
opt_int_json(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

/* The runs of release_id in the scratch store, with their samples. */
static int
runs_json(struct node_run *n, size_t target, json_t *runs, struct err *e)
{
	struct store_run_rows rows;

	if (store_run_list(n->scratch, n->release_id[target], &rows, e) < 0)
		return -1;
	for (size_t i = 0; i < rows.n; i++) {
		const struct store_run_row *r = &rows.v[i];
		struct store_sample *smp;
		size_t nsmp;
		json_t *o = json_object(), *sa = json_array();

		if (store_run_samples(n->scratch, r->id, &smp, &nsmp, e) < 0) {
			json_decref(o);
			json_decref(sa);
			store_run_rows_release(&rows);
			return -1;
		}
		for (size_t k = 0; k < nsmp; k++)
			json_array_append_new(sa, json_pack("[iiIIIII]",
			    smp[k].prompt_tokens, smp[k].gen_tokens,
			    (json_int_t)smp[k].wall_ns,
			    (json_int_t)smp[k].engine_ns,
			    (json_int_t)smp[k].user_ns,
			    (json_int_t)smp[k].sys_ns,
			    (json_int_t)smp[k].max_rss_kb));
		free(smp);
		json_object_set_new(o, "target", json_integer((json_int_t)
		    target));
		json_object_set_new(o, "kind", json_string(r->kind));
		json_object_set_new(o, "prompt", json_integer(r->prompt_tokens));
		json_object_set_new(o, "gen", json_integer(r->gen_tokens));
		json_object_set_new(o, "content", json_string(r->content ?
		    r->content : ""));
		json_object_set_new(o, "rep", json_integer(r->rep));
		json_object_set_new(o, "warmup", json_integer(r->warmup));
		json_object_set_new(o, "confirm", json_integer(r->confirm));
		json_object_set_new(o, "busy", json_integer(r->busy));
		json_object_set_new(o, "mode", json_string(r->mode));
		json_object_set_new(o, "parser", json_string(r->parser));
		json_object_set_new(o, "started", json_integer(r->started));
		json_object_set_new(o, "wall_ns", opt_int_json(r->wall_ns));
		json_object_set_new(o, "user_ns", opt_int_json(r->user_ns));
		json_object_set_new(o, "sys_ns", opt_int_json(r->sys_ns));
		json_object_set_new(o, "max_rss_kb",
		    opt_int_json(r->max_rss_kb));
		json_object_set_new(o, "exit_code", opt_int_json(r->exit_code));
		json_object_set_new(o, "signal", json_integer(r->signal));
		json_object_set_new(o, "failure", opt_str(r->failure));
		json_object_set_new(o, "failure_detail",
		    opt_str(r->failure_detail));
		json_object_set_new(o, "stdout", blob_json(r->out, r->out_len));
		json_object_set_new(o, "stdout_truncated",
		    json_integer(r->out_truncated));
		json_object_set_new(o, "stderr_tail", blob_json(r->err_tail,
		    r->err_len));
		json_object_set_new(o, "busy_share", r->busy_share >= 0 ?
		    json_real(r->busy_share) : json_null());
		json_object_set_new(o, "loadavg", r->loadavg >= 0 ?
		    json_real(r->loadavg) : json_null());
		json_object_set_new(o, "info", opt_str(r->info));
		json_object_set_new(o, "definition", opt_str(r->definition));
		json_object_set_new(o, "definition_text",
		    opt_str(r->definition_text));
		json_object_set_new(o, "clock", opt_str(r->clock));
		json_object_set_new(o, "samples", sa);
		json_array_append_new(runs, o);
	}
	store_run_rows_release(&rows);
	return 0;
}

/*
 * Write the result: the body, then a line with the sha256 of the body,
 * to a temporary name renamed into place, so a reader sees all of it or
 * nothing, and a file cut short or edited fails its check.
 */
static int
result_write(struct node_run *n, const char *error, struct err *e)
{
	json_t *o = json_object(), *releases = json_array(),
	    *runs = json_array();
	struct buf out = BUF_INIT(REMOTE_RESULT_MAX);
	struct err re = ERR_INIT;
	char *body = NULL, hash[65];
	int rc = -1;

	json_object_set_new(o, "format", json_string(RESULT_FORMAT));
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "request", json_string(n->id));
	json_object_set_new(o, "plan", json_object_get(n->req, "plan") ?
	    json_incref(json_object_get(n->req, "plan")) : json_null());
	if (n->m.hostname[0])
		json_object_set_new(o, "machine", machine_json(n));
	json_object_set_new(o, "weights_sha256", n->w.path ?
	    json_string(n->w.sha256) : json_null());
	for (size_t t = 0; t < n->ntargets && error == NULL; t++) {
		json_t *x = json_object();
		struct store_release now;

		json_object_set_new(x, "version", json_string(json_string_value(
		    json_object_get(json_array_get(json_object_get(n->req,
		    "targets"), t), "version"))));
		json_object_set_new(x, "archive_sha256", n->got[t].dir ?
		    json_string(n->got[t].sha256) : json_null());
		json_object_set_new(x, "failure", opt_str(n->fetch_error[t]));
		if (n->release_id[t] && store_release_get(n->scratch,
		    n->acq.engine_id, json_string_value(json_object_get(x,
		    "version")), &now, &re) == 0) {
			json_object_set_new(x, "state", json_string(
			    store_release_state_name(now.state)));
			store_release_release(&now);
		}
		json_array_append_new(releases, x);
		if (n->got[t].dir && runs_json(n, t, runs, &re) < 0)
			error = re.msg;
	}
	json_object_set_new(o, "releases", releases);
	json_object_set_new(o, "runs", error ? json_array() : runs);
	if (error)
		json_decref(runs);
	json_object_set_new(o, "error", opt_str(error));
	body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (body == NULL || sha256_buf(body, strlen(body), hash) < 0 ||
	    buf_addstr(&out, body) < 0 ||
	    buf_printf(&out, "\n" TRAILER "%s\n", hash) < 0) {
		err_set(e, "cannot form the result of request %s: out of "
		    "memory or over %zu MiB", n->id, REMOTE_RESULT_MAX >> 20);
		goto done;
	}
	rc = fs_write_atomic(n->result_path, out.data, out.len, 0644, e);
done:
	free(body);
	buf_release(&out);
	return rc;
}

static const char *
jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* A copy of a string field, or NULL for none; aborts on no memory as the
 * config does, since a few bytes cannot be saved for. */
static char *
dup_or_null(const char *s)
{
	char *p;

	if (s == NULL)
		return NULL;
	if ((p = strdup(s)) == NULL)
		abort();
	return p;
}

/* A string of a result, or dflt, as a copy. */
static char *
jdup(const json_t *o, const char *key, const char *dflt)
{
	return dup_or_null(jstr(o, key) ? jstr(o, key) : dflt);
}

static int64_t
jint(const json_t *o, const char *key, int64_t dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

/* The request's cells, from the engine's, in the request's order. */
static int
node_cells(struct node_run *n, struct err *e)
{
	const json_t *cells = json_object_get(n->req, "cells");
	int prompts[CONF_MAX_LENGTHS], gens[CONF_MAX_LENGTHS];
	size_t np = 0, ng = 0, nall = 0;
	struct bench_cell *all = NULL;
	int rc = -1;

	if (!json_is_array(cells) || json_array_size(cells) == 0 ||
	    json_array_size(cells) > 2 * CONF_MAX_LENGTHS)
		return err_set(e, "request %s: no cells", n->id);
	for (size_t i = 0; i < json_array_size(cells); i++) {
		const json_t *c = json_array_get(cells, i);
		const char *kind = jstr(c, "kind");

		if (kind && strcmp(kind, "pp") == 0 && np < CONF_MAX_LENGTHS)
			prompts[np++] = (int)jint(c, "prompt", 0);
		else if (kind && strcmp(kind, "tg") == 0 &&
		    ng < CONF_MAX_LENGTHS)
			gens[ng++] = (int)jint(c, "gen", 0);
	}
	if (bench_cells(n->conf, n->eng, prompts, np, gens, ng, 0, &all, &nall,
	    e) < 0)
		return -1;
	n->cells = calloc(json_array_size(cells), sizeof(*n->cells));
	if (n->cells == NULL) {
		err_set(e, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < json_array_size(cells); i++) {
		const json_t *c = json_array_get(cells, i);
		const char *kind = jstr(c, "kind"), *content = jstr(c,
		    "content");
		size_t k;

		for (k = 0; k < nall; k++)
			if (kind && content && strcmp(all[k].kind, kind) == 0 &&
			    all[k].prompt == jint(c, "prompt", -1) &&
			    all[k].gen == jint(c, "gen", -1) &&
			    strcmp(all[k].content, content) == 0)
				break;
		if (k == nall) {
			err_set(e, "request %s: cell %zu is not one of engine "
			    "%s's in this configuration", n->id, i + 1,
			    n->eng->name);
			goto done;
		}
		n->cells[i] = all[k];
		all[k].content_path = NULL;
		n->ncells++;
	}
	rc = 0;
done:
	bench_cells_free(all, nall);
	return rc;
}

/* Record the request's releases in the scratch store as the daemon
 * knows them, and fetch each (a failure is the release's, not ours). */
static int
node_fetch(struct node_run *n, struct err *e)
{
	const json_t *targets = json_object_get(n->req, "targets");

	if (!json_is_array(targets) || json_array_size(targets) == 0 ||
	    json_array_size(targets) > 2)
		return err_set(e, "request %s: expected one or two releases",
		    n->id);
	n->ntargets = json_array_size(targets);
	for (size_t t = 0; t < n->ntargets; t++) {
		const json_t *x = json_array_get(targets, t);
		struct store_release r;
		struct err fe = ERR_INIT;

		memset(&r, 0, sizeof(r));
		r.engine_id = n->acq.engine_id;
		if (jstr(x, "version") == NULL)
			return err_set(e, "request %s: a release without a "
			    "version", n->id);
		r.version = dup_or_null(jstr(x, "version"));
		r.url = dup_or_null(jstr(x, "url"));
		r.asset = dup_or_null(jstr(x, "asset"));
		r.expected_sha256 = dup_or_null(jstr(x, "expected_sha256"));
		if (store_release_upsert(n->scratch, &r, e) < 0 ||
		    /* The archive the daemon pinned is the only one taken. */
		    (jstr(x, "archive_sha256") && store_release_set_archive(
		    n->scratch, r.id, jstr(x, "archive_sha256"), e) < 0)) {
			store_release_release(&r);
			return -1;
		}
		n->release_id[t] = r.id;
		if (acquire_release(&n->acq, r.version, &n->got[t], &fe) < 0 &&
		    (n->fetch_error[t] = strdup(fe.msg)) == NULL) {
			store_release_release(&r);
			return err_set(e, "out of memory");
		}
		store_release_release(&r);
	}
	return 0;
}

/* Everything after the request is read: the result's error or none. */
static int
node_measure(struct node_run *n, struct err *e)
{
	const json_t *jreps = json_object_get(n->req, "reps");
	struct bench_target t[2];
	struct bench_ctx ctx;
	struct bench_tally tally;
	struct store_machine sm;
	int reps[2 * 2 * CONF_MAX_LENGTHS];
	size_t nt = 0;
	int64_t machine_id;
	const char *want_w = jstr(n->req, "weights_sha256");

	if ((n->eng = conf_engine(n->conf, jstr(n->req, "engine") ?
	    jstr(n->req, "engine") : "")) == NULL)
		return err_set(e, "request %s: no engine '%s' in %s", n->id,
		    jstr(n->req, "engine") ? jstr(n->req, "engine") : "",
		    n->conf->path);
	if (hygiene_machine(NULL, &n->m, e) < 0 ||
	    node_key(&n->m, jint(n->req, "anchor", 0), n->node_key, e) < 0)
		return -1;
	if (acquire_init(&n->acq, n->conf, n->eng, n->scratch, e) < 0 ||
	    acquire_weights(&n->acq, &n->w, e) < 0)
		return -1;
	if (want_w && strcmp(want_w, n->w.sha256) != 0)
		return err_set(e, "weights %s on node %s have sha256 %s, the "
		    "request asks for %s", n->eng->weights->name,
		    n->m.hostname, n->w.sha256, want_w);
	if (node_cells(n, e) < 0 || node_fetch(n, e) < 0)
		return -1;
	if (!json_is_array(jreps) ||
	    json_array_size(jreps) != n->ntargets * n->ncells)
		return err_set(e, "request %s: expected %zu run counts",
		    n->id, n->ntargets * n->ncells);
	sm.hw_key = n->node_key;
	sm.cpu_model = n->m.cpu_model;
	sm.cores = n->m.cores;
	sm.mem_bytes = (int64_t)n->m.mem_kb * 1024;
	sm.arch = n->m.arch;
	sm.kernel = n->m.kernel;
	sm.os = n->m.os;
	sm.hostname = n->m.hostname;
	if (store_machine_ensure(n->scratch, &sm, &machine_id, e) < 0)
		return -1;
	memset(t, 0, sizeof(t));
	/* Only the releases that fetched are run; the others carry their
	 * failure to the daemon, which skips them as it would here. */
	for (size_t i = 0; i < n->ntargets; i++) {
		if (n->got[i].dir == NULL)
			continue;
		t[nt].release_id = n->release_id[i];
		t[nt].version = jstr(json_array_get(json_object_get(n->req,
		    "targets"), i), "version");
		t[nt].dir = n->got[i].dir;
		for (size_t c = 0; c < n->ncells; c++) {
			json_int_t r = json_integer_value(json_array_get(jreps,
			    i * n->ncells + c));

			reps[nt * n->ncells + c] = r > 0 && r <= 100000 ?
			    (int)r : 0;
		}
		nt++;
	}
	if (nt == 0)
		return 0;
	memset(&ctx, 0, sizeof(ctx));
	ctx.conf = n->conf;
	ctx.eng = n->eng;
	ctx.store = n->scratch;
	ctx.weights_id = n->w.weights_id;
	ctx.weights_path = n->w.path;
	ctx.weights_sha256 = n->w.sha256;
	ctx.machine_id = machine_id;
	ctx.hw_key = n->node_key;
	memset(&tally, 0, sizeof(tally));
	return bench_run(&ctx, t, nt, n->cells, n->ncells, reps,
	    (int)jint(n->req, "warmup", n->eng->warmup),
	    json_is_true(json_object_get(n->req, "confirm")), &tally, e);
}

static void
node_run_release(struct node_run *n)
{
	for (size_t t = 0; t < 2; t++) {
		acquired_release(&n->got[t]);
		free(n->fetch_error[t]);
	}
	if (n->cells)
		bench_cells_free(n->cells, n->ncells);
	pinned_weights_release(&n->w);
	if (n->scratch)
		store_close(n->scratch);
	if (n->scratch_path) {
		char side[4200];

		unlink(n->scratch_path);
		snprintf(side, sizeof(side), "%s-wal", n->scratch_path);
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", n->scratch_path);
		unlink(side);
	}
	free(n->scratch_path);
	free(n->result_path);
	json_decref(n->req);
}

int
remote_node_run(const struct conf *conf, const char *request_path,
    struct err *e)
{
	struct node_run n;
	struct buf text = BUF_INIT(REQUEST_MAX);
	struct benchlock lock = BENCHLOCK_INIT;
	struct err me = ERR_INIT;
	json_error_t je;
	char *dir = NULL, *slash, name[REMOTE_ID_LEN + 8], what[128];
	int rc = -1;

	memset(&n, 0, sizeof(n));
	n.conf = conf;
	if (fs_read_file(request_path, &text, e) < 0)
		return err_prefix(e, "measurement request");
	n.req = json_loadb(text.data ? text.data : "", text.len, 0, &je);
	buf_release(&text);
	if (n.req == NULL)
		return err_set(e, "measurement request '%s': line %d: %s",
		    request_path, je.line, je.text);
	n.id = jstr(n.req, "id");
	if (!valid_id(n.id) || jstr(n.req, "format") == NULL ||
	    strcmp(jstr(n.req, "format"), REQUEST_FORMAT) != 0) {
		json_decref(n.req);
		return err_set(e, "'%s' is not a measurement request",
		    request_path);
	}
	/* The plan the daemon will match: the request without its id. */
	{
		json_t *copy = json_deep_copy(n.req);
		char *plan_text, plan[65];

		json_object_del(copy, "id");
		json_object_del(copy, "anchor");
		plan_text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(copy);
		if (plan_text == NULL || sha256_buf(plan_text,
		    strlen(plan_text), plan) < 0) {
			free(plan_text);
			json_decref(n.req);
			return err_set(e, "out of memory");
		}
		free(plan_text);
		json_object_set_new(n.req, "plan", json_string(plan));
	}
	if ((dir = strdup(request_path)) == NULL) {
		json_decref(n.req);
		return err_set(e, "out of memory");
	}
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	n.result_path = remote_result_path(slash ? dir : ".", n.id);
	free(dir);
	snprintf(name, sizeof(name), "node/%s.db", n.id);
	n.scratch_path = fs_join(conf->cache, name);
	{
		char *nodedir = fs_join(conf->cache, "node");
		char *lockpath = fs_join(conf->cache, "node.bench-lock");

		snprintf(what, sizeof(what), "bisectctl node-run %s", n.id);
		if (nodedir == NULL || lockpath == NULL || n.result_path ==
		    NULL || n.scratch_path == NULL)
			rc = err_set(&me, "out of memory");
		else if ((rc = fs_mkdirs(nodedir, 0700, &me)) == 0)
			rc = benchlock_acquire(&lock, lockpath, what, NULL,
			    NULL, &me) == 0 ? 0 : -1;
		free(nodedir);
		free(lockpath);
	}
	if (rc == 0) {
		unlink(n.scratch_path);
		rc = store_open(n.scratch_path, &n.scratch, &me);
	}
	if (rc == 0)
		rc = node_measure(&n, &me);
	benchlock_release(&lock);
	if (n.result_path == NULL)
		rc = err_set(e, "out of memory");
	else
		rc = result_write(&n, rc < 0 ? me.msg : NULL, e);
	node_run_release(&n);
	return rc;
}

/* --- the daemon's side --- */

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
	const char *trailer = NULL;
	char hash[65];
	json_error_t je;
	json_t *o;

	*out = NULL;
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return err_set(e, "no result file '%s'", path), REMOTE_MISSING;
	if (fs_read_file(path, &text, e) < 0)
		return err_prefix(e, "result"), REMOTE_REFUSED;
	/* BODY "\n" "sha256 " HEX "\n", and nothing after. */
	if (text.len >= 1 + strlen(TRAILER) + 64 + 1) {
		trailer = text.data + text.len - (strlen(TRAILER) + 64 + 1);
		if (trailer[-1] != '\n' || strncmp(trailer, TRAILER,
		    strlen(TRAILER)) != 0 || text.data[text.len - 1] != '\n')
			trailer = NULL;
	}
	if (trailer == NULL) {
		buf_release(&text);
		return err_set(e, "result '%s' refused: truncated (no checksum "
		    "line at its end)", path), REMOTE_REFUSED;
	}
	if (sha256_buf(text.data, (size_t)(trailer - 1 - text.data), hash) < 0 ||
	    strncmp(hash, trailer + strlen(TRAILER), 64) != 0) {
		buf_release(&text);
		return err_set(e, "result '%s' refused: its sha256 does not "
		    "match its checksum line (cut short or altered)", path),
		    REMOTE_REFUSED;
	}
	o = json_loadb(text.data, (size_t)(trailer - 1 - text.data), 0, &je);
	buf_release(&text);
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
