/*
 * release_runs.c: the runs of many releases read for the analysis in
 * one pass (see store_release_runs_read() in store.h).  One statement,
 * prepared once, reads every comparable run and sample of a release, all
 * its cells at once, inside one read transaction for the whole list; the
 * measurement definitions are read once beforehand instead of joined on
 * every row.  A report over a thousand releases costs a thousand
 * executions instead of ten thousand statements prepared one per cell.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "release_runs.h"
#include "store_int.h"

/*
 * Every run of a release measured with the weights hash ?2 on a machine
 * of hardware identity ?3, with its samples, in no particular order:
 * read_cells() groups the rows by cell and orders each cell's as
 * store_cell_points() does, in memory, cheaper than SQLite's sorter.
 * The LEFT JOIN keeps runs without a sample: store_cell_outcomes()
 * counts them.  The release set is points.c's CELL_WHERE's.  The IN
 * terms let the run_cell index select the runs, without a join on each.
 */
#define RUNS_SQL \
	"SELECT r.kind, r.prompt_tokens, r.gen_tokens, r.content," \
	" r.definition_id, r.id, r.warmup, r.failure IS NOT NULL," \
	" r.confirm, r.busy, x.engine_ns, x.wall_ns, x.idx, r.throttled," \
	" r.gpu_sm_mhz, r.gpu_mem_peak, r.gpu_energy_j, r.max_rss_kb" \
	" FROM run r LEFT JOIN sample x ON x.run_id = r.id" \
	" WHERE r.release_id IN (SELECT ?1 UNION SELECT t.id FROM release t" \
	" JOIN release o ON o.engine_id = t.engine_id" \
	" AND o.archive_sha256 = t.archive_sha256 WHERE o.id = ?1)" \
	" AND r.weights_id IN (SELECT id FROM weights WHERE sha256 = ?2)" \
	" AND r.machine_id IN (SELECT id FROM machine WHERE hw_key = ?3)" \
	" AND r.definition_id IS NOT NULL"

/* As store_run_list() lists them, the failed ones alone. */
#define FAILED_SQL \
	"SELECT id, failure, failure_detail FROM run WHERE release_id = ?1" \
	" AND failure IS NOT NULL ORDER BY id"

enum clock { CLOCK_ENGINE, CLOCK_WALL, CLOCK_TTFT };

struct definition {
	int64_t id;
	char key[65];
	enum clock clock;
};

struct definitions {
	struct definition *v;	/* by id; malloced */
	size_t n;
};

/* One row of RUNS_SQL: a sample of a run, or a run without one. */
struct row {
	int64_t run_id;
	int64_t idx;		/* the sample's; -1 without one */
	int64_t time_ns;
	unsigned char has_time, warmup, failed, confirm, busy, lower_bound;
	unsigned char throttled;
	double gpu_sm_mhz, gpu_energy_j;	/* as struct store_point */
	int64_t gpu_mem_peak, max_rss_kb;
};

struct rows {
	struct row *v;
	size_t n, alloc;
};

static int
definition_row(sqlite3_stmt *st, void *elem)
{
	const char *key = (const char *)sqlite3_column_text(st, 1);
	const char *clock = (const char *)sqlite3_column_text(st, 2);
	struct definition *x = elem;

	x->id = sqlite3_column_int64(st, 0);
	snprintf(x->key, sizeof(x->key), "%s", key ? key : "");
	/* points.c's CELL_TIME: the engine's figure for 'engine', the
	 * runner's otherwise. */
	x->clock = clock && strcmp(clock, "engine") == 0 ? CLOCK_ENGINE :
	    clock && strcmp(clock, "ttft") == 0 ? CLOCK_TTFT : CLOCK_WALL;
	return 0;
}

static int
read_definitions(struct store *s, struct definitions *d, struct err *e)
{
	sqlite3_stmt *st;

	memset(d, 0, sizeof(*d));
	if ((st = store_query(s, e, "SELECT id, key, clock FROM definition"
	    " ORDER BY id", "")) == NULL)
		return -1;
	if (store_rows(s, st, (void **)&d->v, &d->n, sizeof(*d->v),
	    definition_row, "read the measurement definitions", e) < 0) {
		free(d->v);
		d->v = NULL;
		return -1;
	}
	return 0;
}

static const struct definition *
find_definition(const struct definitions *d, int64_t id)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->v[mid].id == id)
			return &d->v[mid];
		if (d->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int
row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->run_id != y->run_id)
		return x->run_id < y->run_id ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int
is_cell(sqlite3_stmt *st, const struct definition *def,
    const struct store_cell_runs *c)
{
	const char *kind = (const char *)sqlite3_column_text(st, 0);
	const char *content = (const char *)sqlite3_column_text(st, 3);

	return c->prompt_tokens == sqlite3_column_int(st, 1) &&
	    c->gen_tokens == sqlite3_column_int(st, 2) &&
	    strcmp(c->definition, def->key) == 0 &&
	    strcmp(c->kind, kind ? kind : "") == 0 &&
	    strcmp(c->content, content ? content : "") == 0;
}

/* The index in out->cells of the row's cell, added when new (with its
 * rows in *raw); -1 when memory runs out.  last is the previous row's:
 * a run's rows come together, so it is nearly always the one. */
static long
find_cell(sqlite3_stmt *st, const struct definition *def,
    struct store_release_runs *out, size_t *alloc, struct rows **raw,
    size_t *raw_alloc, long last)
{
	const char *kind = (const char *)sqlite3_column_text(st, 0);
	const char *content = (const char *)sqlite3_column_text(st, 3);
	struct store_cell_runs *c;

	if (last >= 0 && is_cell(st, def, &out->cells[last]))
		return last;
	for (size_t i = 0; i < out->ncells; i++)
		if (is_cell(st, def, &out->cells[i]))
			return (long)i;
	if (store_grow((void **)&out->cells, alloc, out->ncells,
	    sizeof(*out->cells)) < 0 || store_grow((void **)raw, raw_alloc,
	    out->ncells, sizeof(**raw)) < 0)
		return -1;
	c = &out->cells[out->ncells];
	if ((c->content = strdup(content ? content : "")) == NULL)
		return -1;
	/* The schema allows "pp" and "tg" alone. */
	snprintf(c->kind, sizeof(c->kind), "%s", kind ? kind : "");
	c->prompt_tokens = sqlite3_column_int(st, 1);
	c->gen_tokens = sqlite3_column_int(st, 2);
	memcpy(c->definition, def->key, sizeof(c->definition));
	return (long)out->ncells++;
}

/* A run's outcome, as store_cell_outcomes() counts it. */
static void
count_run(struct store_cell_runs *c, const struct row *r, int has_time)
{
	if (!r->warmup && !r->failed && has_time)
		c->ok++;
	if (r->failed || (!r->warmup && !has_time))
		c->bad++;
}

/* A cell's points and outcomes from its rows, which it sorts. */
static int
finish_cell(struct store_cell_runs *c, struct rows *raw)
{
	size_t i, k, n = 0;

	for (i = 1; i < raw->n; i++)
		if (row_cmp(&raw->v[i - 1], &raw->v[i]) > 0)
			break;
	if (i < raw->n)
		qsort(raw->v, raw->n, sizeof(*raw->v), row_cmp);
	if ((c->points.v = malloc((raw->n ? raw->n : 1) *
	    sizeof(*c->points.v))) == NULL)
		return -1;
	for (i = 0; i < raw->n; i = k) {
		int has_time = 0;

		for (k = i; k < raw->n && raw->v[k].run_id == raw->v[i].run_id;
		    k++) {
			const struct row *r = &raw->v[k];
			struct store_point *p;

			if (!r->has_time)
				continue;
			has_time = 1;
			if (r->warmup || r->failed || r->throttled)
				continue;
			p = &c->points.v[n++];
			p->time_ns = r->time_ns;
			p->run_id = r->run_id;
			p->confirm = r->confirm;
			p->busy = r->busy;
			p->lower_bound = r->lower_bound;
			p->idx = (int)r->idx;
			p->gpu_sm_mhz = r->gpu_sm_mhz;
			p->gpu_energy_j = r->gpu_energy_j;
			p->gpu_mem_peak = r->gpu_mem_peak;
			p->max_rss_kb = r->max_rss_kb;
		}
		count_run(c, &raw->v[i], has_time);
		if (has_time && raw->v[i].throttled && !raw->v[i].warmup &&
		    !raw->v[i].failed)
			c->throttled++;
	}
	c->points.n = n;
	return 0;
}

static int
read_cells(sqlite3_stmt *st, const struct definitions *defs,
    struct store_release_runs *out)
{
	struct rows *raw = NULL;
	size_t alloc = 0, raw_alloc = 0;
	long cell = -1;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct definition *def = find_definition(defs,
		    sqlite3_column_int64(st, 4));
		int time_col;
		struct row *r;
		struct rows *cr;

		/* A run naming no definition row is in no cell, as the
		 * join of points.c has it. */
		if (def == NULL)
			continue;
		if ((cell = find_cell(st, def, out, &alloc, &raw, &raw_alloc,
		    cell)) < 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		cr = &raw[cell];
		if (store_grow((void **)&cr->v, &cr->alloc, cr->n,
		    sizeof(*cr->v)) < 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		time_col = def->clock == CLOCK_ENGINE ? 10 : 11;
		r = &cr->v[cr->n++];
		r->run_id = sqlite3_column_int64(st, 5);
		r->warmup = sqlite3_column_int(st, 6) != 0;
		r->failed = sqlite3_column_int(st, 7) != 0;
		r->confirm = sqlite3_column_int(st, 8) != 0;
		r->busy = sqlite3_column_int(st, 9) != 0;
		r->lower_bound = def->clock == CLOCK_TTFT;
		r->has_time = sqlite3_column_type(st, time_col) !=
		    SQLITE_NULL;
		r->time_ns = sqlite3_column_int64(st, time_col);
		r->idx = sqlite3_column_type(st, 12) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(st, 12);
		r->throttled = sqlite3_column_int(st, 13) != 0;
		r->gpu_sm_mhz = sqlite3_column_type(st, 14) == SQLITE_NULL ?
		    0 : sqlite3_column_double(st, 14);
		r->gpu_mem_peak = sqlite3_column_type(st, 15) == SQLITE_NULL ?
		    -1 : sqlite3_column_int64(st, 15);
		r->gpu_energy_j = sqlite3_column_type(st, 16) == SQLITE_NULL ?
		    -1 : sqlite3_column_double(st, 16);
		r->max_rss_kb = sqlite3_column_type(st, 17) == SQLITE_NULL ?
		    -1 : sqlite3_column_int64(st, 17);
	}
	for (size_t i = 0; i < out->ncells; i++) {
		if (rc == SQLITE_DONE && finish_cell(&out->cells[i],
		    &raw[i]) < 0)
			rc = SQLITE_NOMEM;
		free(raw[i].v);
	}
	free(raw);
	return rc;
}

static int
read_failed(sqlite3_stmt *st, struct store_release_runs *out)
{
	size_t alloc = 0;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_failed_run *f;

		if (store_grow((void **)&out->failed, &alloc, out->nfailed,
		    sizeof(*out->failed)) < 0)
			return SQLITE_NOMEM;
		f = &out->failed[out->nfailed++];
		f->run_id = sqlite3_column_int64(st, 0);
		f->failure = store_column_dup(st, 1);
		f->detail = store_column_dup(st, 2);
		if (f->failure == NULL || (f->detail == NULL &&
		    sqlite3_column_type(st, 2) != SQLITE_NULL))
			return SQLITE_NOMEM;
	}
	return rc;
}

int
store_release_runs_read(struct store *s, const char *weights_sha256,
    const char *hw_key, const int64_t *release_ids, size_t n,
    struct store_release_runs *out, struct err *e)
{
	sqlite3_stmt *runs = NULL, *failed = NULL;
	struct definitions defs = { NULL, 0 };
	int own = sqlite3_get_autocommit(s->db), rc = SQLITE_DONE;
	size_t i;

	memset(out, 0, n * sizeof(*out));
	/* One snapshot: a bisect storing runs meanwhile changes no release
	 * after another was read. */
	if (own && sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) !=
	    SQLITE_OK)
		return store_fail(s, e, "begin reading runs");
	if (read_definitions(s, &defs, e) < 0 ||
	    store_prepare(s, RUNS_SQL, &runs, e) < 0 ||
	    store_prepare(s, FAILED_SQL, &failed, e) < 0) {
		rc = -1;
		goto done;
	}
	store_bind_text(runs, 2, weights_sha256);
	store_bind_text(runs, 3, hw_key);
	for (i = 0; i < n && rc == SQLITE_DONE; i++) {
		sqlite3_reset(runs);
		sqlite3_reset(failed);
		sqlite3_bind_int64(runs, 1, release_ids[i]);
		sqlite3_bind_int64(failed, 1, release_ids[i]);
		rc = read_cells(runs, &defs, &out[i]);
		if (rc == SQLITE_DONE)
			rc = read_failed(failed, &out[i]);
	}
	if (rc == SQLITE_NOMEM)
		err_set(e, "out of memory");
	else if (rc != SQLITE_DONE)
		store_fail(s, e, "read a release's runs");
done:
	sqlite3_finalize(runs);
	sqlite3_finalize(failed);
	free(defs.v);
	if (own)
		sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc == SQLITE_DONE)
		return 0;
	for (i = 0; i < n; i++)
		store_release_runs_release(&out[i]);
	return -1;
}

void
store_release_runs_release(struct store_release_runs *rr)
{
	for (size_t i = 0; i < rr->ncells; i++) {
		free(rr->cells[i].content);
		store_points_release(&rr->cells[i].points);
	}
	for (size_t i = 0; i < rr->nfailed; i++) {
		free(rr->failed[i].failure);
		free(rr->failed[i].detail);
	}
	free(rr->cells);
	free(rr->failed);
	memset(rr, 0, sizeof(*rr));
}

const struct store_cell_runs *
store_release_runs_cell(const struct store_release_runs *rr,
    const struct store_cell_query *q)
{
	const char *content = q->content ? q->content : "";

	for (size_t i = 0; i < rr->ncells; i++) {
		const struct store_cell_runs *c = &rr->cells[i];

		if (strcmp(c->kind, q->kind) == 0 &&
		    c->prompt_tokens == q->prompt_tokens &&
		    c->gen_tokens == q->gen_tokens &&
		    strcmp(c->content, content) == 0 &&
		    strcmp(c->definition, q->definition) == 0)
			return c;
	}
	return NULL;
}
