/*
 * perf.c: carrying out the bisection's actions against the store, the
 * fetcher and the bench runner (see perf.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/acquire/acquire.h"
#include "bisectd/acquire/bench_release.h"
#include "bisectd/acquire/build.h"
#include "bisectd/measure/bench.h"
#include "bisectd/process/template.h"
#include "common/buf.h"
#include "common/strv.h"
#include "fetch/cache.h"
#include "fetch/prefetch.h"
#include "fetch/unpack.h"
#include "commits.h"
#include "perf.h"
#include "common/err.h"
#include "range.h"
#include "bisectd/remote/remote.h"
#include "bisectd/remote/slurm.h"
#include "verdict.h"

/* Everything one bisect carries between actions. */
struct bisect_run {
	const struct conf *conf;
	const struct conf_engine *eng;
	struct store *s;
	const struct perf_opts *o;
	struct acquire acq;
	struct pinned_weights w;
	int64_t machine_id;
	char hw_key[65];
	struct range r;
	struct bisect_params p;
	int64_t bisect_id;
	int *noted;			/* per release: its failure was logged */
	int *fetch_failed;		/* per release: fetched in vain here */
	struct acquired *got;		/* per release, fetched lazily */
	struct bench_cell *cells;	/* the parameters' cells */
	size_t ncells;
	struct bench_cell *matrix;	/* every cell of the engine's matrix */
	size_t nmatrix;
	int matrix_done;		/* measure_matrix() ran on the verdict */
	unsigned char *warm;		/* per release and matrix cell: warmed
					 * up by this bisect already */
	char last_failure[512];		/* of the last runs that failed */
	int slurm;			/* the engine's runner is a slurm one:
					 * releases are fetched and measured
					 * on its nodes, and hw_key is the
					 * pinned node's ("" before one) */
	struct prefetch *pf;		/* archives fetched ahead, or NULL */
};

static void
note(const struct bisect_run *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
note(const struct bisect_run *b, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (b->o->note == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	b->o->note(b->o->arg, line);
}

static const char *
version_of(const struct bisect_run *b, size_t i)
{
	return b->r.list.v[b->r.lo + i].version;
}

/*
 * Say that commit i is built now, for the probe the bisect is at (the
 * probes it stored so far, plus one), unless a finished build is cached.
 */
static int
build_progress(const struct bisect_run *b, size_t i, struct err *e)
{
	struct bench_progress p;
	struct store_commit_info c;
	int n = 0;

	if (b->o->progress == NULL || store_probe_count(b->s, b->bisect_id,
	    &n, e) < 0 || store_commit_get(b->s, b->r.list.v[b->r.lo + i].id,
	    &c, e) != 0)
		return e->msg[0] ? -1 : 0;
	memset(&p, 0, sizeof(p));
	p.building = c.id;
	p.subject = c.subject ? c.subject : "";
	p.probe = n + 1;
	p.eta_s = NAN;
	if (c.state != COMMIT_BUILD_DONE)
		b->o->progress(b->o->arg, &p);
	store_commit_info_release(&c);
	return 0;
}

/*
 * Fetch release i if it is not yet.  A failure is recorded in the store
 * (the release's state) by the fetcher; the judgement then skips it.
 */
static int
ensure_release(struct bisect_run *b, size_t i, struct err *e)
{
	struct err fe = ERR_INIT;
	int rc;

	if (b->got[i].dir || b->slurm)
		return 0;
	if (b->fetch_failed[i])
		return err_set(e, "cannot fetch %s %s a second time",
		    b->eng->name, version_of(b, i));
	if (b->o->req.commits && build_progress(b, i, e) < 0)
		return -1;
	if (b->o->req.commits)
		rc = commit_build(b->conf, b->eng, b->s,
		    b->r.list.v[b->r.lo + i].id, version_of(b, i), b->o->stop,
		    &b->got[i], &fe);
	else {
		struct prefetch_stats before, after;

		if (b->pf)
			prefetch_stats(b->pf, &before);
		rc = acquire_release(&b->acq, version_of(b, i), &b->got[i],
		    &fe);
		if (b->pf && rc == 0) {
			prefetch_stats(b->pf, &after);
			if (after.taken_done > before.taken_done)
				note(b, "%s: its archive was downloaded ahead",
				    version_of(b, i));
			else if (after.taken_stopped > before.taken_stopped)
				note(b, "%s: its archive was downloaded ahead "
				    "in part, the rest now", version_of(b, i));
		}
	}
	if (rc == 0)
		return 0;
	/* A stop is no failure of the release: it is fetched (or built)
	 * again when the bisect resumes. */
	if (b->o->stop && *b->o->stop)
		return err_set(e, "%s", fe.msg);
	b->fetch_failed[i] = 1;
	note(b, "skip %s: %s", version_of(b, i), fe.msg);
	b->noted[i] = 1;
	if (store_probe_add(b->s, b->bisect_id, "skip",
	    b->r.list.v[b->r.lo + i].id, 0, 0, e) < 0)
		return -1;
	return 1;
}

/*
 * Queue the archives of the releases the search measures next (the
 * hints of act) to download while this one is measured: those not here
 * yet that come over the network.  Unpacking stays with
 * ensure_release(), between runs.
 */
static void
prefetch_ahead(struct bisect_run *b, const struct bisect_action *act)
{
	for (int k = 0; b->pf && k < 2; k++) {
		size_t i = act->prefetch[k];
		const struct store_release *r;
		struct prefetch_item_spec sp;
		char *dir = NULL;
		struct err e = ERR_INIT;
		int unpacked;

		if (i > b->r.hi - b->r.lo || b->got[i].dir ||
		    b->fetch_failed[i])
			continue;
		r = &b->r.list.v[b->r.lo + i];
		if (r->url == NULL || r->url[0] == '/')
			continue;
		if (acquire_release_dir(b->conf, b->eng, r->version, &dir,
		    &e) < 0)
			continue;
		unpacked = r->archive_sha256 && fetch_unpack_complete(dir);
		free(dir);
		if (unpacked)
			continue;
		sp.version = r->version;
		sp.url = r->url;
		sp.expected_sha256 = r->expected_sha256;
		sp.expected_origin = r->sha256_origin;
		sp.pinned_sha256 = r->archive_sha256;
		if (prefetch_want(b->pf, &sp) == 1)
			note(b, "download %s ahead", r->version);
	}
}

/*
 * The search (or confirmation) runs release i has in cell c: runs, not
 * samples, since the ladder counts runs and an engine may print several
 * samples per run (the samples of a run are adjacent).
 */
static int
have(const struct range_data *d, size_t i, size_t c, int confirm)
{
	const struct bisect_cell *cell = &d->rel[i].cells[c];
	int n = 0;

	for (size_t k = 0; k < cell->n; k++)
		n += cell->samples[k].confirm == confirm && (k == 0 ||
		    cell->samples[k].run == 0 ||
		    cell->samples[k].run != cell->samples[k - 1].run);
	return n;
}

static void
slurm_note(void *arg, const char *line)
{
	note(arg, "%s", line);
}

/* The index of cell m among set[0..n-1], or SIZE_MAX. */
static size_t
cell_index(const struct bench_cell *set, size_t n, const struct bench_cell *m)
{
	for (size_t c = 0; c < n; c++)
		if (strcmp(set[c].kind, m->kind) == 0 &&
		    set[c].prompt == m->prompt && set[c].gen == m->gen &&
		    strcmp(set[c].content, m->content) == 0)
			return c;
	return SIZE_MAX;
}

/*
 * The warm-up runs an action takes: the engine's before each cell, but
 * none where every cell it runs of every release was warmed up by this
 * bisect already (with neither pre nor post command, which may undo
 * it).  A release run again, one run at a time as the sequential tests
 * ask, has its binary, its weights and whatever the engine caches on
 * disk warm from its first runs; a process starts afresh either way.
 * Marks the cells warm when mark is set.
 */
static int
warmups(struct bisect_run *b, const struct bench_cell *cells, size_t ncells,
    const size_t *idx, size_t n, const int *want, int mark)
{
	int cold = (b->eng->pre && *b->eng->pre) ||
	    (b->eng->post && *b->eng->post);

	for (size_t k = 0; k < n; k++)
		for (size_t c = 0; c < ncells; c++) {
			size_t m = cell_index(b->matrix, b->nmatrix, &cells[c]);
			unsigned char *w = m == SIZE_MAX ? NULL :
			    &b->warm[idx[k] * b->nmatrix + m];

			if (want[k * ncells + c] <= 0)
				continue;
			if (w == NULL || !*w)
				cold = 1;
			if (mark && w != NULL)
				*w = 1;
		}
	return cold ? b->eng->warmup : 0;
}

/*
 * Measure on the engine's Slurm runner: one batch job, its result
 * ingested.  The node it ran on becomes (or stays) the bisect's: when it
 * differs from the pinned one (the pinned node failed), the bisect is
 * re-anchored there, and the judgement, which compares only runs under
 * the new node's key, measures the ends again.
 */
static int
measure_slurm(struct bisect_run *b, const struct bench_cell *cells,
    size_t ncells, const size_t *idx, size_t n, const int *want,
    const int *stored, int confirm, struct err *e)
{
	struct slurm_measure_ctx c;
	struct remote_plan p;
	char hw_key[65];

	memset(&c, 0, sizeof(c));
	c.conf = b->conf;
	c.eng = b->eng;
	c.s = b->s;
	c.bisect_id = b->bisect_id;
	c.job_id = b->o->job_id;
	c.weights_id = b->w.weights_id;
	c.weights_sha256 = b->w.sha256;
	c.stop = b->o->stop;
	c.note = slurm_note;
	c.arg = b;
	memset(&p, 0, sizeof(p));
	p.eng = b->eng;
	for (size_t k = 0; k < n; k++)
		p.rel[k] = &b->r.list.v[b->r.lo + idx[k]];
	p.nrel = n;
	p.cells = cells;
	p.ncells = ncells;
	p.reps = want;
	p.stored = stored;
	p.warmup = b->eng->warmup;
	p.confirm = confirm;
	p.weights_sha256 = b->w.sha256;
	if (slurm_measure(&c, &p, hw_key, e) < 0)
		return -1;
	if (b->hw_key[0] && strcmp(b->hw_key, hw_key) != 0)
		note(b, "re-anchored on another node: its runs are not "
		    "compared with the earlier node's, so the ends are "
		    "measured again");
	memcpy(b->hw_key, hw_key, sizeof(b->hw_key));
	return 0;
}

/*
 * Measure releases idx[0..n-1] (interleaved) up to `reps` samples of the
 * given kind in every cell.  Runs that fail are stored like the others;
 * the next judgement decides whether the release is skipped.
 */
static int
measure_cells(struct bisect_run *b, const struct bench_cell *cells,
    size_t ncells, const size_t *idx, size_t n, const int *want,
    const int *stored, int confirm, struct err *e)
{
	struct bench_target t[2];
	struct bench_ctx ctx;
	struct bench_tally tally;
	int any = 0;

	for (size_t k = 0; k < n * ncells; k++)
		any |= want[k] > 0;
	if (!any)
		return 0;
	if (b->slurm)
		return measure_slurm(b, cells, ncells, idx, n, want, stored,
		    confirm, e);

	bench_ctx_pinned(&ctx, b->conf, b->eng, b->s, &b->w, b->machine_id,
	    b->hw_key);
	ctx.progress = b->o->progress;
	ctx.progress_arg = b->o->arg;
	ctx.stop = b->o->stop;
	for (size_t k = 0; k < n; k++) {
		memset(&t[k], 0, sizeof(t[k]));
		t[k].release_id = b->r.list.v[b->r.lo + idx[k]].id;
		t[k].version = version_of(b, idx[k]);
		t[k].dir = b->got[idx[k]].dir;
	}
	memset(&tally, 0, sizeof(tally));
	if (bench_run(&ctx, t, n, cells, ncells, want, warmups(b, cells,
	    ncells, idx, n, want, 0), confirm, &tally, e) < 0)
		return -1;
	(void)warmups(b, cells, ncells, idx, n, want, 1);
	if (tally.failed > 0)
		snprintf(b->last_failure, sizeof(b->last_failure), "%s",
		    tally.last_failure);
	return 0;
}

/*
 * Measure releases idx[0..n-1] (interleaved) up to the runs the action
 * asks of each searched cell (act->want[k] for idx[k]).
 */
static int
measure_interleaved(struct bisect_run *b, const struct range_data *d,
    const size_t *idx, size_t n, const struct bisect_action *act,
    int confirm, struct err *e)
{
	int want[2 * BISECT_MAX_CELLS], stored[2 * BISECT_MAX_CELLS];

	for (size_t k = 0; k < n; k++)
		for (size_t c = 0; c < b->ncells; c++) {
			int h = have(d, idx[k], c, confirm);
			int w = act->want[k][c] - h;

			stored[k * b->ncells + c] = h;
			want[k * b->ncells + c] = w > 0 ? w : 0;
		}
	return measure_cells(b, b->cells, b->ncells, idx, n, want, stored,
	    confirm, e);
}

/* ", prompt 512 to 5" for each searched cell the action asks fewer runs
 * of than its level (the most of its n releases), into buf. */
static const char *
fewer_runs(const struct bisect_run *b, const struct bisect_action *act,
    size_t nrel, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t c = 0; c < b->ncells && len < size; c++) {
		int n, most = act->want[0][c];

		if (nrel > 1 && act->want[1][c] > most)
			most = act->want[1][c];
		if (most >= act->reps)
			continue;
		n = snprintf(buf + len, size - len, ", prompt %d to %d",
		    b->cells[c].prompt, most);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	return buf;
}

/* How many process runs (not confirmations) release i has in each cell
 * of cells, under its current definition, into n[]: as a report reads
 * them, those of a release with the same archive included. */
static int
stored_runs(struct bisect_run *b, size_t i, const struct bench_cell *cells,
    size_t ncells, int *n, struct err *e)
{
	int64_t id = b->r.list.v[b->r.lo + i].id;
	struct store_release_runs rr;

	if (store_release_runs_read(b->s, b->w.sha256, b->hw_key, &id, 1, &rr,
	    e) < 0)
		return -1;
	for (size_t c = 0; c < ncells; c++) {
		const struct bench_cell *bc = &cells[c];
		const struct store_cell_runs *cell;
		struct store_cell_query q;

		n[c] = 0;
		if (bench_cell_query(b->eng, bc->kind, bc->prompt, bc->gen,
		    bc->content, id, b->w.sha256, b->hw_key, &q, e) < 0) {
			store_release_runs_release(&rr);
			return -1;
		}
		if ((cell = store_release_runs_cell(&rr, &q)) == NULL)
			continue;
		for (size_t k = 0; k < cell->points.n; k++)
			n[c] += !cell->points.v[k].confirm && (k == 0 ||
			    cell->points.v[k].run_id !=
			    cell->points.v[k - 1].run_id);
	}
	store_release_runs_release(&rr);
	return 0;
}

/*
 * The whole matrix where the verdict stands on it: every cell (each
 * prompt length, each decode cell and content) on the two ends and on
 * the boundary pair of each change point, to the most runs a searched
 * cell has there (a searched cell keeps its own), a pair interleaved.
 * The search probes the fit lengths alone; what else changed is told
 * from these (the field report's regression tripled prefill and moved
 * decode 3.6%: whoever watches one number misses the other).
 * Resumable: only what a cell lacks is run.
 */
static int
measure_matrix(struct bisect_run *b, const struct judgement *j,
    struct err *e)
{
	int *want, *stored, rc = 0;

	want = calloc(2 * b->nmatrix + 1, sizeof(*want));
	stored = calloc(2 * b->nmatrix + 1, sizeof(*stored));
	if (want == NULL || stored == NULL) {
		free(want);
		free(stored);
		return err_set(e, "out of memory");
	}
	/* Pair 0: the ends; then each change point's boundary. */
	for (size_t k = 0; k <= j->v.nchanges && rc == 0; k++) {
		size_t idx[2] = { 0, b->r.hi - b->r.lo };
		const char *sha[2];
		int any = 0, skip = 0;

		if (k > 0) {
			idx[0] = j->v.changes[k - 1].last_good;
			idx[1] = j->v.changes[k - 1].first_bad;
		}
		for (size_t t = 0; t < 2 && !skip && rc == 0; t++) {
			int reps = 0;

			if (j->failed[idx[t]] || b->fetch_failed[idx[t]]) {
				skip = 1;
				break;
			}
			for (size_t c = 0; c < b->ncells; c++) {
				int h = have(&j->data, idx[t], c, 0);

				reps = h > reps ? h : reps;
			}
			rc = stored_runs(b, idx[t], b->matrix, b->nmatrix,
			    stored + t * b->nmatrix, e);
			for (size_t c = 0; c < b->nmatrix && rc == 0; c++) {
				int h = stored[t * b->nmatrix + c];
				/* A searched cell has the runs the search
				 * wanted of it (a cheaper fit cell fewer). */
				int more = cell_index(b->cells, b->ncells,
				    &b->matrix[c]) != SIZE_MAX ? 0 : reps - h;

				want[t * b->nmatrix + c] = more > 0 ? more : 0;
				any |= more > 0;
			}
		}
		if (rc < 0 || skip || !any)
			continue;
		if ((rc = ensure_release(b, idx[0], e)) != 0 ||
		    (rc = ensure_release(b, idx[1], e)) != 0) {
			/* One that cannot be fetched is judged without. */
			rc = rc < 0 ? -1 : 0;
			continue;
		}
		/* One archive is one binary: its runs serve both. */
		for (size_t t = 0; t < 2; t++)
			sha[t] = b->got[idx[t]].sha256[0] ?
			    b->got[idx[t]].sha256 :
			    b->r.list.v[b->r.lo + idx[t]].archive_sha256;
		if (sha[0] && sha[1] && strcmp(sha[0], sha[1]) == 0) {
			note(b, "the whole matrix: %s (the archive of %s too), "
			    "every other cell to the searched cells' runs",
			    version_of(b, idx[0]), version_of(b, idx[1]));
			rc = measure_cells(b, b->matrix, b->nmatrix, idx, 1,
			    want, stored, 0, e);
			continue;
		}
		note(b, "the whole matrix: %s and %s, interleaved, every other "
		    "cell to the searched cells' runs", version_of(b, idx[0]),
		    version_of(b, idx[1]));
		rc = measure_cells(b, b->matrix, b->nmatrix, idx, 2, want,
		    stored, 0, e);
	}
	free(want);
	free(stored);
	return rc;
}

static int
bisect_setup(struct bisect_run *b, const char *spec, struct err *e)
{
	struct store_bisect sb;
	char metric[32];
	int resumed, rc;

	if (acquire_init(&b->acq, b->conf, b->eng, b->s, e) < 0)
		return -1;
	b->acq.stop = b->o->stop;
	if (b->o->req.commits) {
		if (commits_range(b->conf, b->eng, b->s, b->acq.engine_id,
		    spec, 1, &b->r, e) < 0)
			return -1;
	} else if (range_resolve(b->s, b->acq.engine_id, spec, &b->r, e) < 0) {
		/* Unknown versions: ask the source once, then try again. */
		struct err re = ERR_INIT;

		if (acquire_refresh(&b->acq, NULL, NULL, &re) < 0)
			return err_set(e, "%s", re.msg);
		if (range_resolve(b->s, b->acq.engine_id, spec, &b->r, e) < 0)
			return -1;
	}
	if (range_params(b->eng, &b->o->req,
	    &b->p, e) < 0)
		return -1;
	if (acquire_weights(&b->acq, &b->w, e) < 0)
		return -1;
	if (bench_machine(b->s, &b->machine_id, b->hw_key, e) < 0)
		return -1;
	b->slurm = b->eng->runner && b->eng->runner->kind == RUNNER_SLURM;
	if (b->eng->prefetch > 0 && !b->slurm && !b->o->req.commits) {
		struct prefetch_opts po = { b->conf->cache, b->eng->allow_http,
		    (long)b->eng->download_deadline_ms,
		    (int64_t)b->eng->prefetch_rate,
		    (size_t)b->eng->prefetch };
		struct err pe = ERR_INIT;

		/* Without it the bisect only waits for its downloads. */
		if (prefetch_new(&po, &b->pf, &pe) < 0)
			note(b, "no downloads ahead: %s", pe.msg);
		b->acq.prefetch = b->pf;
	}
	b->noted = calloc(b->r.hi - b->r.lo + 1, sizeof(int));
	b->fetch_failed = calloc(b->r.hi - b->r.lo + 1, sizeof(int));
	b->got = calloc(b->r.hi - b->r.lo + 1, sizeof(*b->got));
	if (b->noted == NULL || b->fetch_failed == NULL || b->got == NULL)
		return err_set(e, "out of memory");
	if (b->p.metric.kind == BISECT_METRIC_TG)
		rc = bench_cells(b->conf, b->eng, NULL, 0, b->p.lengths,
		    b->p.nlengths, 1, &b->cells, &b->ncells, e);
	else
		rc = bench_cells(b->conf, b->eng, b->p.lengths, b->p.nlengths,
		    NULL, 0, 1, &b->cells, &b->ncells, e);
	if (rc < 0 || bench_cells(b->conf, b->eng, b->eng->prompts,
	    b->eng->nprompts, b->eng->gen, b->eng->ngen, 0, &b->matrix,
	    &b->nmatrix, e) < 0)
		return -1;
	b->warm = calloc((b->r.hi - b->r.lo + 1) * (b->nmatrix + 1), 1);
	if (b->warm == NULL)
		return err_set(e, "out of memory");
	memset(&sb, 0, sizeof(sb));
	sb.job_id = b->o->job_id;
	sb.engine_id = b->acq.engine_id;
	sb.good = version_of(b, 0);
	sb.bad = version_of(b, b->r.hi - b->r.lo);
	sb.metric = conf_metric_name(b->o->req.metric.kind == (enum
	    conf_metric_kind)-1 ? &b->eng->metric : &b->o->req.metric, metric,
	    sizeof(metric));
	sb.threshold = b->p.threshold;
	sb.all = b->p.all;
	sb.weights_id = b->w.weights_id;
	sb.machine_id = b->machine_id;
	if (store_bisect_open(b->s, &sb, &resumed, e) < 0)
		return -1;
	b->bisect_id = sb.id;
	if (b->slurm) {
		char node[256];

		/* Compared are the runs of the bisect's node alone. */
		if (slurm_pinned(b->s, b->bisect_id, node, b->hw_key, e) < 0)
			return -1;
		if (node[0])
			note(b, "measuring on node %s", node);
	}
	if (resumed) {
		int64_t *ids = NULL;
		size_t nids = 0;

		/* Logs number jobs; the stored bisect's own id would read
		 * as another job's. */
		note(b, "resuming the bisect of %s..%s from its stored probes",
		    sb.good, sb.bad);
		/* Skips logged before are not logged again. */
		if (store_probe_skipped(b->s, sb.id, &ids, &nids, e) < 0)
			return -1;
		for (size_t k = 0; k < nids; k++)
			for (size_t i = 0; i <= b->r.hi - b->r.lo; i++)
				if (b->r.list.v[b->r.lo + i].id == ids[k])
					b->noted[i] = 1;
		free(ids);
	}
	/*
	 * An end whose fetch failed before is tried again: without both
	 * ends there is no bisect, and the failure may have been the
	 * network's.  Releases inside the range stay skipped.
	 */
	for (size_t k = 0; k < 2; k++) {
		size_t i = k ? b->r.hi - b->r.lo : 0;

		if (b->r.list.v[b->r.lo + i].state == RELEASE_FAILED &&
		    ensure_release(b, i, e) < 0)
			return -1;
	}
	return 0;
}

static void
bisect_teardown(struct bisect_run *b)
{
	prefetch_free(b->pf);
	b->pf = NULL;
	b->acq.prefetch = NULL;
	if (b->got)
		for (size_t i = 0; i <= b->r.hi - b->r.lo; i++)
			acquired_release(&b->got[i]);
	free(b->got);
	free(b->noted);
	free(b->fetch_failed);
	free(b->warm);
	if (b->cells)
		bench_cells_free(b->cells, b->ncells);
	if (b->matrix)
		bench_cells_free(b->matrix, b->nmatrix);
	pinned_weights_release(&b->w);
	range_release(&b->r);
}

/* The releases' states as the store has them now. */
static int
reload_states(struct bisect_run *b, struct err *e)
{
	for (size_t i = b->r.lo; i <= b->r.hi; i++)
		if (range_reload(b->s, b->acq.engine_id, &b->r.list.v[i], e) < 0)
			return -1;
	return 0;
}

/* Log each release the judgement newly finds failed, once, as a skip. */
static int
note_failed(struct bisect_run *b, const struct judgement *j, struct err *e)
{
	for (size_t i = 0; i <= b->r.hi - b->r.lo; i++) {
		if (!j->failed[i] || b->noted[i])
			continue;
		b->noted[i] = 1;
		if (b->r.list.v[b->r.lo + i].state == RELEASE_FAILED)
			note(b, "skip %s: %s", version_of(b, i),
			    b->r.list.v[b->r.lo + i].failure ?
			    b->r.list.v[b->r.lo + i].failure : "not fetched");
		else
			note(b, "skip %s: its runs fail%s%s%s",
			    version_of(b, i), b->last_failure[0] ? " (" : "",
			    b->last_failure, b->last_failure[0] ? ")" : "");
		if (store_probe_add(b->s, b->bisect_id, "skip",
		    b->r.list.v[b->r.lo + i].id, 0, 0, e) < 0)
			return -1;
	}
	return 0;
}

/*
 * A confirmed release regression of an engine that drills down goes on
 * into the commits between the boundary's tags, a commit bisect of its
 * own; its verdict joins the release verdict.  A drill-down that fails
 * leaves the release verdict standing, saying why; a stop is an error,
 * so that the job resumes both.
 */
static int
drill_down(struct bisect_run *b, json_t *v, struct err *e)
{
	struct perf_opts co = *b->o;
	struct err ce = ERR_INIT;
	enum bisect_status cst;
	json_t *cv = NULL;
	char spec[2 * RANGE_END_MAX + 4];

	if (!commits_drill_wanted(b->eng, v, spec, sizeof(spec)))
		return 0;
	note(b, "drill down into the commits %s", spec);
	co.req.commits = 1;
	if (perf_bisect(b->conf, b->eng, b->s, spec, &co, &cv, &cst,
	    &ce) < 0) {
		if (b->o->stop && *b->o->stop)
			return err_set(e, "%s", ce.msg);
		note(b, "drill-down %s failed: %s", spec, ce.msg);
	}
	commits_drill_attach(v, spec, cv, ce.msg);
	return 0;
}

int
perf_bisect(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct perf_opts *o,
    json_t **verdict, enum bisect_status *status, struct err *e)
{
	struct bisect_run b;
	int rc = -1;

	*verdict = NULL;
	memset(&b, 0, sizeof(b));
	b.conf = conf;
	b.eng = eng;
	b.s = s;
	b.o = o;
	if (bisect_setup(&b, spec, e) < 0)
		goto done;
	for (;;) {
		struct judgement j;
		size_t idx[2];
		char line[256];
		int rc2;

		if (o->stop && *o->stop) {
			err_set(e, "interrupted");
			goto done;
		}
		if (reload_states(&b, e) < 0 ||
		    judge_range(s, &b.r, &b.p, eng, b.w.sha256, b.hw_key, &j,
		    e) < 0)
			goto done;
		if (note_failed(&b, &j, e) < 0) {
			judgement_release(&j);
			goto done;
		}
		if (j.end_failed) {
			err_set(e, "%s", j.why);
			judgement_release(&j);
			goto done;
		}
		if (j.done && !b.matrix_done) {
			/* Before the verdict is told: what else changed is
			 * measured on the ends and the boundary pairs. */
			b.matrix_done = 1;
			rc2 = measure_matrix(&b, &j, e);
			judgement_release(&j);
			if (rc2 < 0)
				goto done;
			continue;
		}
		if (j.done) {
			json_t *v = judgement_json(&j, &b.r);
			char *text;

			if ((o->req.commits && commits_annotate(eng, s,
			    b.acq.engine_id, v, e) < 0) || (!o->req.commits &&
			    drill_down(&b, v, e) < 0)) {
				json_decref(v);
				judgement_release(&j);
				goto done;
			}
			text = json_dumps(v, JSON_COMPACT |
			    JSON_PRESERVE_ORDER);

			*status = j.v.status;
			judgement_release(&j);
			if (text == NULL || store_bisect_finish(s, b.bisect_id,
			    "done", bisect_status_name(*status), text,
			    e) < 0) {
				if (text == NULL)
					err_set(e, "out of memory");
				free(text);
				json_decref(v);
				goto done;
			}
			free(text);
			*verdict = v;
			rc = 0;
			goto done;
		}
		if (j.act.kind == BISECT_MEASURE) {
			int fresh;

			idx[0] = j.act.release;
			/* On Slurm the node fetches, and its result
			 * brings the archive's hash. */
			fresh = !b.slurm && b.got[idx[0]].dir == NULL;
			if ((rc2 = ensure_release(&b, idx[0], e)) != 0) {
				judgement_release(&j);
				if (rc2 < 0)
					goto done;
				continue;
			}
			if (fresh) {
				/* Its archive's hash is known now: a release
				 * with the same archive may have measured it
				 * already.  Judge again before running. */
				judgement_release(&j);
				continue;
			}
			prefetch_ahead(&b, &j.act);
			note(&b, "measure %s to %d runs per cell%s",
			    version_of(&b, idx[0]), j.act.reps,
			    fewer_runs(&b, &j.act, 1, line, sizeof(line)));
			rc2 = store_probe_add(s, b.bisect_id, "measure",
			    b.r.list.v[b.r.lo + idx[0]].id, 0, j.act.reps, e);
			if (rc2 == 0)
				rc2 = measure_interleaved(&b, &j.data, idx, 1,
				    &j.act, 0, e);
		} else {
			idx[0] = j.act.good;
			idx[1] = j.act.bad;
			if ((rc2 = ensure_release(&b, idx[0], e)) != 0 ||
			    (rc2 = ensure_release(&b, idx[1], e)) != 0) {
				judgement_release(&j);
				if (rc2 < 0)
					goto done;
				continue;
			}
			note(&b, "confirm %s against %s, interleaved, %d "
			    "runs per cell each%s", version_of(&b, idx[1]),
			    version_of(&b, idx[0]), j.act.reps,
			    fewer_runs(&b, &j.act, 2, line, sizeof(line)));
			rc2 = store_probe_add(s, b.bisect_id, "confirm",
			    b.r.list.v[b.r.lo + idx[1]].id,
			    b.r.list.v[b.r.lo + idx[0]].id, j.act.reps, e);
			if (rc2 == 0)
				rc2 = measure_interleaved(&b, &j.data, idx, 2,
				    &j.act, 1, e);
		}
		judgement_release(&j);
		if (rc2 < 0)
			goto done;
	}
done:
	bisect_teardown(&b);
	return rc;
}

/* One cell's command for a release unpacked (or built) in dir, as a
 * run executes it: bench_command_line()'s. */
static int
plan_command(const struct conf_engine *eng, const char *dir,
    const char *version, const char *weights, const struct bench_cell *c,
    char **line, struct err *e)
{
	struct tmpl_vals v = TMPL_VALS_INIT;
	struct buf out;

	v.bin = dir;
	v.version = version;
	v.weights = weights;
	v.content = c->content_path ? c->content_path : "";
	v.prompt = c->prompt;
	v.gen = c->gen;
	v.threads = eng->threads;
	buf_init(&out, TMPL_MAX_LEN * 2);
	if (bench_command_line(eng, &v, &out, e) < 0) {
		buf_release(&out);
		return err_prefix(e, "%s", version);
	}
	*line = buf_take(&out);
	return *line ? 0 : err_set(e, "out of memory");
}

/*
 * The folder an end of the range runs from: the unpacked release, or
 * for a commit the tree its build leaves, with the build lines it would
 * run into the plan's "builds" (nothing when a finished build is
 * cached).
 */
static int
plan_end(const struct conf *conf, const struct conf_engine *eng,
    const char *version, int commits, json_t *builds, char *dir,
    size_t len, struct err *e)
{
	char name[CACHE_DIRNAME_MAX];
	struct strv lines = STRV_INIT;
	char *bin;
	json_t *b;
	int rc;

	if (!commits) {
		if (cache_release_dirname(version, name) < 0)
			return err_set(e, "%s: version '%s' cannot name a "
			    "folder", eng->name, version);
		snprintf(dir, len, "%s/releases/%s/%s", conf->cache,
		    eng->name, name);
		return 0;
	}
	if ((rc = commit_build_plan(conf, eng, version, &lines, &bin,
	    e)) < 0) {
		strv_clear(&lines);
		free(bin);
		return -1;
	}
	snprintf(dir, len, "%s", bin);
	b = json_pack("{s:s,s:b,s:[]}", "commit", version, "cached", rc == 1,
	    "commands");
	for (size_t i = 0; i < lines.n; i++)
		json_array_append_new(json_object_get(b, "commands"),
		    json_string(lines.v[i]));
	json_array_append_new(builds, b);
	strv_clear(&lines);
	free(bin);
	return 0;
}

int
perf_plan(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct perf_opts *o,
    json_t **plan, struct err *e)
{
	struct acquire acq;
	struct range r;
	struct bisect_params p;
	struct bench_cell *cells = NULL;
	size_t ncells = 0;
	json_t *out = NULL, *rels, *cmds, *builds;
	char metric[32], dir[8192];
	const char *weights = eng->weights->path ? eng->weights->path :
	    "{weights}";
	int rc = -1;

	*plan = NULL;
	memset(&r, 0, sizeof(r));
	if (acquire_init(&acq, conf, eng, s, e) < 0)
		return -1;
	acq.stop = o->stop;
	if (o->req.commits) {
		/* The repository is cloned or fetched, as a listing is
		 * refreshed; nothing is built. */
		if (commits_range(conf, eng, s, acq.engine_id, spec, 1, &r,
		    e) < 0)
			return -1;
	} else if (range_resolve(s, acq.engine_id, spec, &r, e) < 0) {
		struct err re = ERR_INIT;

		if (acquire_refresh(&acq, NULL, NULL, &re) < 0)
			return err_set(e, "%s", re.msg);
		if (range_resolve(s, acq.engine_id, spec, &r, e) < 0)
			return -1;
	}
	if (range_params(eng, &o->req, &p, e) < 0)
		goto done;
	if (p.metric.kind == BISECT_METRIC_TG)
		rc = bench_cells(conf, eng, NULL, 0, p.lengths, p.nlengths, 1,
		    &cells, &ncells, e);
	else
		rc = bench_cells(conf, eng, p.lengths, p.nlengths, NULL, 0, 1,
		    &cells, &ncells, e);
	if (rc < 0)
		goto done;
	rc = -1;
	out = json_pack("{s:s,s:{s:s,s:s},s:s,s:f,s:b,s:i,s:i}", "engine",
	    eng->name, "range", "from", r.list.v[r.lo].version, "to",
	    r.list.v[r.hi].version, "metric", conf_metric_name(
	    (int)o->req.metric.kind >= 0 ? &o->req.metric : &eng->metric, metric,
	    sizeof(metric)), "threshold", p.threshold, "all", p.all, "reps",
	    eng->reps, "warmup", eng->warmup);
	rels = json_array();
	cmds = json_array();
	builds = json_array();
	json_object_set_new(out, "points", json_string(o->req.commits ?
	    "commits" : "releases"));
	json_object_set_new(out, "releases", rels);
	if (o->req.commits) {
		json_object_set_new(out, "first_parent",
		    json_boolean(eng->first_parent));
		json_object_set_new(out, "builds", builds);
	} else
		json_decref(builds);
	json_object_set_new(out, "commands", cmds);
	for (size_t i = r.lo; i <= r.hi; i++) {
		json_t *x = json_pack("{s:s,s:s}", "version",
		    r.list.v[i].version, "state", store_release_state_name(
		    r.list.v[i].state));
		json_t *c = o->req.commits ? commits_describe(eng, s,
		    acq.engine_id, r.list.v[i].version, e) : NULL;

		if (c != NULL) {
			json_object_set(x, "subject", json_object_get(c,
			    "subject"));
			json_object_set(x, "build", json_object_get(c,
			    "build"));
			json_decref(c);
		}
		json_array_append_new(rels, x);
	}
	for (int end = 0; end < 2; end++) {
		const char *version = r.list.v[end ? r.hi : r.lo].version;

		if (plan_end(conf, eng, version, o->req.commits, builds, dir,
		    sizeof(dir), e) < 0)
			goto done;
		for (size_t c = 0; c < ncells; c++) {
			char cell[64], *line;

			if (plan_command(eng, dir, version, weights, &cells[c],
			    &line, e) < 0)
				goto done;
			snprintf(cell, sizeof(cell), "%s%d%s%s", cells[c].kind,
			    strcmp(cells[c].kind, "pp") == 0 ? cells[c].prompt :
			    cells[c].gen, cells[c].content[0] ? "/" : "",
			    cells[c].content);
			json_array_append_new(cmds, json_pack("{s:s,s:s,s:s}",
			    "version", version, "cell", cell, "command", line));
			free(line);
		}
	}
	*plan = out;
	out = NULL;
	rc = 0;
done:
	json_decref(out);
	if (cells)
		bench_cells_free(cells, ncells);
	range_release(&r);
	return rc;
}
