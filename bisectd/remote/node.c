/*
 * node.c: the node's side of a remote measurement: node-run reads
 * one request, measures it without the daemon's database and leaves its
 * result file in the spool (see remote.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bisectd/acquire/acquire.h"
#include "bisectd/acquire/bench_release.h"
#include "bisectd/measure/bench.h"
#include "bisectd/measure/benchlock.h"
#include "bisectd/measure/hygiene.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "config/conf.h"
#include "remote.h"
#include "store/store.h"
#include "wire.h"

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

/*
 * The node as Slurm names it, which --nodelist takes: the job's
 * SLURMD_NODENAME, or the short host name where it is not set or is not
 * a name.  Two nodes may share a host (NodeHostname), and a node's name
 * need not be its host's.
 */
static void
short_host(const char *hostname, char *out, size_t len)
{
	const char *s = getenv("SLURMD_NODENAME");

	if (s && s[0] && s[0] != '-' && strlen(s) < len &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == strlen(s)) {
		snprintf(out, len, "%s", s);
		return;
	}
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

/* The request's cells, from the engine's, in the request's order. */
static int
node_cells(struct node_run *n, struct err *e)
{
	const json_t *cells = json_object_get(n->req, "cells");
	int prompts[CONF_MAX_LENGTHS], gens[CONF_MAX_LENGTHS];
	size_t np, ng, nall = 0;
	struct bench_cell *all = NULL;
	int rc = -1, bad;

	if (remote_cells_lengths(cells, prompts, &np, gens, &ng) < 0)
		return err_set(e, "request %s: no cells", n->id);
	if (bench_cells(n->conf, n->eng, prompts, np, gens, ng, 0, &all, &nall,
	    e) < 0)
		return -1;
	n->cells = calloc(json_array_size(cells), sizeof(*n->cells));
	if (n->cells == NULL) {
		err_set(e, "out of memory");
		goto done;
	}
	if ((bad = remote_cells_pick(cells, all, nall, n->cells,
	    &n->ncells)) != 0) {
		if (bad < 0)
			err_set(e, "out of memory");
		else
			err_set(e, "request %s: cell %d is not one of engine "
			    "%s's in this configuration", n->id, bad,
			    n->eng->name);
		goto done;
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
	sm.gpus = NULL;
	sm.ngpus = 0;
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
	bench_ctx_pinned(&ctx, n->conf, n->eng, n->scratch, &n->w, machine_id,
	    n->node_key);
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
	char *dir = NULL, *slash, name[REMOTE_ID_LEN + 8], what[128];
	int rc = -1;

	memset(&n, 0, sizeof(n));
	n.conf = conf;
	/* Another user who could write the request could make this node
	 * fetch and run another archive: the spool and the request must be
	 * this user's alone. */
	if ((dir = strdup(request_path)) == NULL)
		return err_set(e, "out of memory");
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	rc = remote_trusted(slash ? (dir[0] ? dir : "/") : ".", 1, e);
	free(dir);
	dir = NULL;
	if (rc < 0 || remote_trusted(request_path, 0, e) < 0)
		return err_prefix(e, "measurement request");
	rc = -1;
	if (fs_read_file(request_path, &text, e) < 0)
		return err_prefix(e, "measurement request");
	rc = remote_request_parse(text.data ? text.data : "", text.len,
	    request_path, &n.req, e);
	buf_release(&text);
	if (rc < 0)
		return -1;
	rc = -1;
	n.id = jstr(n.req, "id");
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
