/*
 * run.c: the store's queries over weights, machines, measurement
 * definitions, benchmark runs with their samples, and recorded alerts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/strv.h"
#include "db.h"
#include "run.h"
#include "alert_log.h"
#include "store_int.h"

int
store_weights_ensure(struct store *s, const char *name, const char *sha256,
    int64_t size, int64_t *id, struct err *e)
{
	/* Insert-or-find by a unique key: the INSERT is a no-op on
	 * conflict. */
	if (store_exec(s, e, "record weights", "INSERT INTO weights (name,"
	    " sha256, size) VALUES (?1, ?2, ?3) ON CONFLICT (name, sha256)"
	    " DO NOTHING", "ttI", name, sha256, size) < 0)
		return -1;
	return store_one(s, e, "look up weights", "SELECT id FROM weights"
	    " WHERE name = ?1 AND sha256 = ?2", "tt", "I", name, sha256, id);
}

int
store_machine_ensure(struct store *s, const struct store_machine *m,
    int64_t *id, struct err *e)
{
	if (store_exec(s, e, "record the machine", "INSERT INTO machine"
	    " (hw_key, cpu_model, cores, mem_bytes, arch, kernel, os, hostname)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
	    " ON CONFLICT (hw_key, kernel, os, hostname) DO NOTHING",
	    "ttiItttt", m->hw_key, m->cpu_model, m->cores, m->mem_bytes,
	    m->arch, m->kernel, m->os, m->hostname) < 0 ||
	    store_one(s, e, "look up the machine", "SELECT id FROM machine"
	    " WHERE hw_key = ?1 AND kernel = ?2 AND os = ?3 AND hostname = ?4",
	    "tttt", "I", m->hw_key, m->kernel, m->os, m->hostname, id) < 0)
		return -1;
	for (size_t i = 0; i < m->ngpus; i++) {
		const struct store_gpu *g = &m->gpus[i];

		if (store_exec(s, e, "record the machine's GPU", "INSERT INTO"
		    " machine_gpu (machine_id, slot, idx, model, uuid, driver,"
		    " cuda, vbios, power_limit_mw, persistence, mig, ecc,"
		    " app_sm_mhz, app_mem_mhz, default_sm_mhz, default_mem_mhz,"
		    " clocks_locked) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
		    " ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
		    " ON CONFLICT DO NOTHING", "Iiitttttooooooooo", *id, (int)i,
		    g->index, g->model, g->uuid, g->driver, g->cuda, g->vbios,
		    g->power_limit_mw, (int64_t)g->persistence,
		    (int64_t)g->mig, (int64_t)g->ecc, (int64_t)g->app_sm_mhz,
		    (int64_t)g->app_mem_mhz, (int64_t)g->default_sm_mhz,
		    (int64_t)g->default_mem_mhz, (int64_t)g->clocks_locked) < 0)
			return -1;
	}
	return 0;
}

/* A column that may be NULL: its int, or -1. */
static int
opt_col(sqlite3_stmt *st, int i)
{
	return (int)store_column_opt_int(st, i);
}

static void
copy_col(sqlite3_stmt *st, int i, char *out, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(out, len, "%s", t ? (const char *)t : "");
}

int
store_machine_gpus(struct store *s, int64_t machine_id, struct store_gpu *out,
    size_t max, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	*n = 0;
	if ((st = store_query(s, e, "SELECT slot, idx, model, uuid, driver,"
	    " cuda, vbios, power_limit_mw, persistence, mig, ecc, app_sm_mhz,"
	    " app_mem_mhz, default_sm_mhz, default_mem_mhz, clocks_locked"
	    " FROM machine_gpu WHERE machine_id = ?1 ORDER BY slot", "I",
	    machine_id)) == NULL)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n < max) {
		struct store_gpu *g = &out[(*n)++];

		g->slot = sqlite3_column_int(st, 0);
		g->index = sqlite3_column_int(st, 1);
		copy_col(st, 2, g->model, sizeof(g->model));
		copy_col(st, 3, g->uuid, sizeof(g->uuid));
		copy_col(st, 4, g->driver, sizeof(g->driver));
		copy_col(st, 5, g->cuda, sizeof(g->cuda));
		copy_col(st, 6, g->vbios, sizeof(g->vbios));
		g->power_limit_mw = store_column_opt_int(st, 7);
		g->persistence = opt_col(st, 8);
		g->mig = opt_col(st, 9);
		g->ecc = opt_col(st, 10);
		g->app_sm_mhz = opt_col(st, 11);
		g->app_mem_mhz = opt_col(st, 12);
		g->default_sm_mhz = opt_col(st, 13);
		g->default_mem_mhz = opt_col(st, 14);
		g->clocks_locked = opt_col(st, 15);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(s, e, "read a machine's GPUs");
	return 0;
}

int
store_machine_find(struct store *s, const char *hw_key,
    struct store_machine *m, struct err *e)
{
	memset(m, 0, sizeof(*m));
	return store_first(s, e, "read a machine", "SELECT hw_key, cpu_model,"
	    " cores, mem_bytes, arch, kernel, os, hostname FROM machine"
	    " WHERE hw_key = ?1 ORDER BY id DESC LIMIT 1", "t", "ttiItttt",
	    hw_key, &m->hw_key, &m->cpu_model, &m->cores, &m->mem_bytes,
	    &m->arch, &m->kernel, &m->os, &m->hostname);
}

void
store_machine_release(struct store_machine *m)
{
	char *owned[] = { m->hw_key, m->cpu_model, m->arch, m->kernel, m->os,
	    m->hostname };

	strs_free(owned, sizeof(owned) / sizeof(owned[0]));
	memset(m, 0, sizeof(*m));
}

int
store_weights_latest(struct store *s, const char *name, char **sha,
    struct err *e)
{
	*sha = NULL;
	return store_first(s, e, "read weights", "SELECT sha256 FROM weights"
	    " WHERE name = ?1 ORDER BY id DESC LIMIT 1", "t", "t", name, sha);
}

int
store_definition_ensure(struct store *s, const char *key, const char *text,
    const char *clock, int64_t *id, struct err *e)
{
	if (store_exec(s, e, "record a measurement definition", "INSERT INTO"
	    " definition (key, text, clock, created) VALUES (?1, ?2, ?3, ?4)"
	    " ON CONFLICT (key) DO NOTHING", "tttI", key, text, clock,
	    store_now()) < 0)
		return -1;
	return store_one(s, e, "look up a measurement definition", "SELECT id"
	    " FROM definition WHERE key = ?1", "t", "I", key, id);
}

static void
bind_blob(sqlite3_stmt *st, int i, const char *p, size_t len)
{
	if (p)
		sqlite3_bind_blob64(st, i, p, len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void
bind_opt_double(sqlite3_stmt *st, int i, double v)
{
	if (v >= 0)
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* A run's GPU figures from column i on: NULLs without readings. */
static void
bind_gpu(sqlite3_stmt *st, int i, const struct store_run_gpu *g)
{
	int none = g->samples <= 0;

	store_bind_opt_int(st, i, none ? -1 : g->samples);
	bind_opt_double(st, i + 1, none ? -1 : g->sm_mhz);
	bind_opt_double(st, i + 2, none ? -1 : g->mem_mhz);
	store_bind_opt_int(st, i + 3, none ? -1 : g->temp_max_c);
	bind_opt_double(st, i + 4, none ? -1 : g->power_w);
	bind_opt_double(st, i + 5, none ? -1 : g->util_pct);
	store_bind_opt_int(st, i + 6, none ? -1 : g->throttle);
	store_bind_opt_int(st, i + 7, none ? -1 : g->mem_peak);
	bind_opt_double(st, i + 8, none ? -1 : g->energy_j);
	sqlite3_bind_int(st, i + 9, !none && g->throttled);
}

static int
insert_run(struct store *s, struct store_run *r, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	if (store_prepare(s, "INSERT INTO run (release_id, weights_id,"
	    " machine_id, kind, prompt_tokens, gen_tokens, content, rep, warmup,"
	    " mode, parser, started, wall_ns, user_ns, sys_ns, max_rss_kb,"
	    " exit_code, signal, failure, failure_detail, stdout,"
	    " stdout_truncated, stderr_tail, busy_share, loadavg, busy, info,"
	    " confirm, definition_id, gpu_samples, gpu_sm_mhz, gpu_mem_mhz,"
	    " gpu_temp_max_c, gpu_power_w, gpu_util_pct, gpu_throttle,"
	    " gpu_mem_peak, gpu_energy_j, throttled)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
	    " ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26,"
	    " ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39)"
	    " RETURNING id", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, r->release_id);
	sqlite3_bind_int64(st, 2, r->weights_id);
	sqlite3_bind_int64(st, 3, r->machine_id);
	store_bind_text(st, 4, r->kind);
	sqlite3_bind_int(st, 5, r->prompt_tokens);
	sqlite3_bind_int(st, 6, r->gen_tokens);
	store_bind_text(st, 7, r->content ? r->content : "");
	sqlite3_bind_int(st, 8, r->rep);
	sqlite3_bind_int(st, 9, r->warmup);
	store_bind_text(st, 10, r->mode ? r->mode : "bench");
	store_bind_text(st, 11, r->parser);
	sqlite3_bind_int64(st, 12, r->started);
	store_bind_opt_int(st, 13, r->end.wall_ns);
	store_bind_opt_int(st, 14, r->user_ns);
	store_bind_opt_int(st, 15, r->sys_ns);
	store_bind_opt_int(st, 16, r->max_rss_kb);
	store_bind_opt_int(st, 17, r->end.exit_code);
	if (r->end.signal > 0)
		sqlite3_bind_int(st, 18, r->end.signal);
	else
		sqlite3_bind_null(st, 18);
	store_bind_text(st, 19, r->end.failure);
	store_bind_text(st, 20, r->end.failure_detail);
	bind_blob(st, 21, r->out, r->out_len);
	sqlite3_bind_int(st, 22, r->out_truncated);
	bind_blob(st, 23, r->end.err_tail, r->end.err_len);
	if (r->busy_share >= 0)
		sqlite3_bind_double(st, 24, r->busy_share);
	else
		sqlite3_bind_null(st, 24);
	if (r->loadavg >= 0)
		sqlite3_bind_double(st, 25, r->loadavg);
	else
		sqlite3_bind_null(st, 25);
	sqlite3_bind_int(st, 26, r->busy);
	store_bind_text(st, 27, r->info);
	sqlite3_bind_int(st, 28, r->confirm);
	store_bind_opt_int(st, 29, r->definition_id > 0 ? r->definition_id :
	    -1);
	bind_gpu(st, 30, &r->gpu);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		r->id = sqlite3_column_int64(st, 0);
	else
		store_fail(s, e, "store a run");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

int
store_run_insert(struct store *s, struct store_run *r,
    const struct store_sample *samples, size_t nsamples, struct err *e)
{
	int outer = !sqlite3_get_autocommit(s->db);

	if (!outer && store_begin(s, e) < 0)
		return -1;
	if (insert_run(s, r, e) < 0 ||
	    store_samples_add(s, r->id, samples, nsamples, e) < 0 ||
	    (r->ablation_id > 0 && store_exec(s, e, "tag a run with its"
	    " ablation", "INSERT INTO ablation_run (run_id, ablation_id,"
	    " variant) VALUES (?1, ?2, ?3)", "IIt", r->id, r->ablation_id,
	    r->variant ? r->variant : "") < 0)) {
		if (!outer)
			store_rollback(s);
		return -1;
	}
	return outer ? 0 : store_commit(s, e);
}

int
store_samples_add(struct store *s, int64_t run_id,
    const struct store_sample *v, size_t n, struct err *e)
{
	sqlite3_stmt *st;

	if (n == 0)
		return 0;
	if (store_prepare(s, "INSERT INTO sample (run_id, idx, prompt_tokens,"
	    " gen_tokens, wall_ns, engine_ns, user_ns, sys_ns, max_rss_kb)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", &st, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		sqlite3_bind_int(st, 3, v[i].prompt_tokens);
		sqlite3_bind_int(st, 4, v[i].gen_tokens);
		sqlite3_bind_int64(st, 5, v[i].wall_ns);
		store_bind_opt_int(st, 6, v[i].engine_ns);
		store_bind_opt_int(st, 7, v[i].user_ns);
		store_bind_opt_int(st, 8, v[i].sys_ns);
		store_bind_opt_int(st, 9, v[i].max_rss_kb);
		if (sqlite3_step(st) != SQLITE_DONE) {
			store_fail(s, e, "store a sample");
			sqlite3_finalize(st);
			return -1;
		}
	}
	sqlite3_finalize(st);
	return 0;
}

int
store_alert_record(struct store *s, const char *kind, const char *engine,
    const char *dedup_key, const char *summary, const char *body,
    struct err *e)
{
	if (store_exec(s, e, "record an alert", "INSERT INTO alert (created,"
	    " kind, engine, dedup_key, summary, body) VALUES (?1, ?2, ?3, ?4,"
	    " ?5, ?6) ON CONFLICT (dedup_key) DO NOTHING", "Ittttt",
	    store_now(), kind, engine, dedup_key, summary, body) < 0)
		return -1;
	return sqlite3_changes(s->db) > 0 ? 0 : 1;
}

int
store_release_info(struct store *s, int64_t release_id, char **info,
    struct err *e)
{
	*info = NULL;
	return store_first(s, e, "read a release's engine info", "SELECT info"
	    " FROM run WHERE release_id = ?1 AND info IS NOT NULL AND failure"
	    " IS NULL ORDER BY id DESC LIMIT 1", "I", "t", release_id,
	    info) < 0 ? -1 : 0;
}
