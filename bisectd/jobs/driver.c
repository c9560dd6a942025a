/*
 * driver.c: carrying out the bisection's actions against the store, the
 * fetcher and the bench runner (see driver.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "acquire.h"
#include "bisectd/measure/bench.h"
#include "driver.h"
#include "common/err.h"
#include "range.h"
#include "bisectd/output/verdict_json.h"

int
driver_exit_code(enum bisect_status s)
{
	switch (s) {
	case BISECT_REGRESSION:
		return 3;
	case BISECT_UNKNOWN:
		return 4;
	case BISECT_NO_REGRESSION:
	default:
		return 0;
	}
}

/* Everything one bisect carries between actions. */
struct bisect_run {
	const struct conf *conf;
	const struct conf_engine *eng;
	struct store *s;
	const struct driver_opts *o;
	struct acquire acq;
	struct pinned_weights w;
	int64_t machine_id;
	char hw_key[65];
	struct range r;
	struct bisect_params p;
	int64_t bisect_id;
	int *skipped;			/* per release of the range */
	struct acquired *got;		/* per release, fetched lazily */
	struct bench_cell *cells;	/* the parameters' cells */
	size_t ncells;
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

/* Fetch release i if it is not yet; a failure marks it skipped. */
static int
ensure_release(struct bisect_run *b, size_t i, struct err *e)
{
	struct err fe = ERR_INIT;

	if (b->got[i].dir)
		return 0;
	if (acquire_release(&b->acq, version_of(b, i), &b->got[i], &fe) == 0)
		return 0;
	note(b, "skip %s: %s", version_of(b, i), fe.msg);
	b->skipped[i] = 1;
	if (store_probe_add(b->s, b->bisect_id, "skip",
	    b->r.list.v[b->r.lo + i].id, 0, 0, e) < 0)
		return -1;
	return 1;
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

/*
 * Measure releases idx[0..n-1] (interleaved) up to `reps` samples of the
 * given kind in every cell.  A release that produces no new sample in a
 * cell, or fails more runs than it was asked for, is skipped.
 */
static int
measure_interleaved(struct bisect_run *b, const struct range_data *d,
    const size_t *idx,
    size_t n, int reps, int confirm, struct err *e)
{
	struct bench_target t[2];
	int want[2 * BISECT_MAX_CELLS], before[2 * BISECT_MAX_CELLS];
	struct bench_ctx ctx;
	struct bench_tally tally;
	struct range_data after;
	int any = 0;

	memset(&ctx, 0, sizeof(ctx));
	ctx.conf = b->conf;
	ctx.eng = b->eng;
	ctx.store = b->s;
	ctx.weights_id = b->w.weights_id;
	ctx.weights_path = b->w.path;
	ctx.machine_id = b->machine_id;
	ctx.progress = b->o->progress;
	ctx.progress_arg = b->o->arg;
	ctx.stop = b->o->stop;
	for (size_t k = 0; k < n; k++) {
		t[k].release_id = b->r.list.v[b->r.lo + idx[k]].id;
		t[k].version = version_of(b, idx[k]);
		t[k].dir = b->got[idx[k]].dir;
		for (size_t c = 0; c < b->ncells; c++) {
			before[k * b->ncells + c] = have(d, idx[k], c, confirm);
			want[k * b->ncells + c] = reps -
			    before[k * b->ncells + c];
			if (want[k * b->ncells + c] < 0)
				want[k * b->ncells + c] = 0;
			any |= want[k * b->ncells + c] > 0;
		}
	}
	if (!any)
		return 0;
	memset(&tally, 0, sizeof(tally));
	if (bench_run(&ctx, t, n, b->cells, b->ncells, want, b->eng->warmup,
	    confirm, &tally, e) < 0)
		return -1;
	if (tally.failed == 0)
		return 0;
	/* Some runs failed: skip a release that cannot produce samples. */
	if (range_load_engine(b->s, &b->r, &b->p, b->eng, b->w.sha256,
	    b->hw_key, b->skipped, &after, e) < 0)
		return -1;
	for (size_t k = 0; k < n; k++)
		for (size_t c = 0; c < b->ncells; c++) {
			int gained = have(&after, idx[k], c, confirm) -
			    before[k * b->ncells + c];
			int fails = 0;
			struct store_cell_query q;

			range_cell_query(&b->p, c, b->eng,
			    b->r.list.v[b->r.lo + idx[k]].id, b->w.sha256,
			    b->hw_key, &q);
			store_cell_failures(b->s, &q, &fails, NULL);
			if (want[k * b->ncells + c] > 0 && (gained == 0 ||
			    fails > reps) && !b->skipped[idx[k]]) {
				note(b, "skip %s: its runs fail (%s)",
				    version_of(b, idx[k]), tally.last_failure);
				b->skipped[idx[k]] = 1;
				if (store_probe_add(b->s, b->bisect_id, "skip",
				    t[k].release_id, 0, 0, e) < 0) {
					range_data_release(&after);
					return -1;
				}
			}
		}
	range_data_release(&after);
	return 0;
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
	if (range_resolve(b->s, b->acq.engine_id, spec, &b->r, e) < 0) {
		/* Unknown versions: ask the source once, then try again. */
		struct err re = ERR_INIT;

		if (acquire_refresh(&b->acq, NULL, NULL, &re) < 0)
			return err_set(e, "%s", re.msg);
		if (range_resolve(b->s, b->acq.engine_id, spec, &b->r, e) < 0)
			return -1;
	}
	if (range_params(b->eng, &b->o->metric, b->o->threshold, b->o->all,
	    &b->p, e) < 0)
		return -1;
	if (acquire_weights(&b->acq, &b->w, e) < 0)
		return -1;
	if (bench_machine(b->s, &b->machine_id, b->hw_key, e) < 0)
		return -1;
	b->skipped = calloc(b->r.hi - b->r.lo + 1, sizeof(int));
	b->got = calloc(b->r.hi - b->r.lo + 1, sizeof(*b->got));
	if (b->skipped == NULL || b->got == NULL)
		return err_set(e, "out of memory");
	if (b->p.metric.kind == BISECT_METRIC_TG)
		rc = bench_cells(b->conf, b->eng, NULL, 0, b->p.lengths,
		    b->p.nlengths, 1, &b->cells, &b->ncells, e);
	else
		rc = bench_cells(b->conf, b->eng, b->p.lengths, b->p.nlengths,
		    NULL, 0, 1, &b->cells, &b->ncells, e);
	if (rc < 0)
		return -1;
	memset(&sb, 0, sizeof(sb));
	sb.job_id = b->o->job_id;
	sb.engine_id = b->acq.engine_id;
	sb.good = version_of(b, 0);
	sb.bad = version_of(b, b->r.hi - b->r.lo);
	sb.metric = conf_metric_name(b->o->metric.kind == (enum
	    conf_metric_kind)-1 ? &b->eng->metric : &b->o->metric, metric,
	    sizeof(metric));
	sb.threshold = b->p.threshold;
	sb.all = b->p.all;
	sb.weights_id = b->w.weights_id;
	sb.machine_id = b->machine_id;
	if (store_bisect_open(b->s, &sb, &resumed, e) < 0)
		return -1;
	b->bisect_id = sb.id;
	if (resumed) {
		int64_t *ids = NULL;
		size_t nids = 0;

		note(b, "resuming bisect %lld from its stored probes",
		    (long long)sb.id);
		if (store_probe_skipped(b->s, sb.id, &ids, &nids, e) < 0)
			return -1;
		for (size_t k = 0; k < nids; k++)
			for (size_t i = 0; i <= b->r.hi - b->r.lo; i++)
				if (b->r.list.v[b->r.lo + i].id == ids[k])
					b->skipped[i] = 1;
		free(ids);
	}
	return 0;
}

static void
bisect_teardown(struct bisect_run *b)
{
	if (b->got)
		for (size_t i = 0; i <= b->r.hi - b->r.lo; i++)
			acquired_release(&b->got[i]);
	free(b->got);
	free(b->skipped);
	if (b->cells)
		bench_cells_free(b->cells, b->ncells);
	pinned_weights_release(&b->w);
	range_release(&b->r);
}

int
driver_bisect(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct driver_opts *o,
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
		struct range_data d;
		struct bisect_action act;
		struct bisect_verdict v;
		size_t idx[2];

		if (o->stop && *o->stop) {
			err_set(e, "interrupted; the bisect resumes where it "
			    "stopped when run again");
			goto done;
		}
		if (range_load_engine(s, &b.r, &b.p, eng, b.w.sha256,
		    b.hw_key, b.skipped, &d, e) < 0)
			goto done;
		memset(&v, 0, sizeof(v));
		if (bisect_next(d.rel, d.n, &b.p, &act, &v) < 0) {
			const char *why = act.error ? act.error : "failed";

			range_data_release(&d);
			bisect_verdict_release(&v);
			if (b.skipped[0] || b.skipped[b.r.hi - b.r.lo])
				err_set(e, "cannot measure the range's %s end "
				    "%s; see 'bisectctl runs %s %s'",
				    b.skipped[0] ? "good" : "bad",
				    version_of(&b, b.skipped[0] ? 0 :
				    b.r.hi - b.r.lo), eng->name,
				    version_of(&b, b.skipped[0] ? 0 :
				    b.r.hi - b.r.lo));
			else
				err_set(e, "bisect: %s", why);
			goto done;
		}
		if (act.kind == BISECT_DONE) {
			json_t *j = verdict_json(&v, &b.r.list.v[b.r.lo]);
			char *text = json_dumps(j, JSON_COMPACT |
			    JSON_PRESERVE_ORDER);

			*status = v.status;
			if (store_bisect_finish(s, b.bisect_id, "done",
			    bisect_status_name(v.status), text, e) < 0) {
				free(text);
				json_decref(j);
				range_data_release(&d);
				bisect_verdict_release(&v);
				goto done;
			}
			free(text);
			*verdict = j;
			range_data_release(&d);
			bisect_verdict_release(&v);
			rc = 0;
			goto done;
		}
		if (act.kind == BISECT_MEASURE) {
			idx[0] = act.release;
			switch (ensure_release(&b, idx[0], e)) {
			case -1:
				range_data_release(&d);
				goto done;
			case 1:
				range_data_release(&d);
				continue;
			}
			note(&b, "measure %s to %d runs per cell",
			    version_of(&b, idx[0]), act.reps);
			if (store_probe_add(s, b.bisect_id, "measure",
			    b.r.list.v[b.r.lo + idx[0]].id, 0, act.reps,
			    e) < 0 ||
			    measure_interleaved(&b, &d, idx, 1, act.reps, 0,
			    e) < 0) {
				range_data_release(&d);
				goto done;
			}
		} else {
			idx[0] = act.good;
			idx[1] = act.bad;
			if (ensure_release(&b, idx[0], e) != 0 ||
			    ensure_release(&b, idx[1], e) != 0) {
				range_data_release(&d);
				if (e->msg[0])
					goto done;
				continue;
			}
			note(&b, "confirm %s against %s, interleaved, %d "
			    "runs per cell each", version_of(&b, idx[1]),
			    version_of(&b, idx[0]), act.reps);
			if (store_probe_add(s, b.bisect_id, "confirm",
			    b.r.list.v[b.r.lo + idx[1]].id,
			    b.r.list.v[b.r.lo + idx[0]].id, act.reps, e) < 0 ||
			    measure_interleaved(&b, &d, idx, 2, act.reps, 1,
			    e) < 0) {
				range_data_release(&d);
				goto done;
			}
		}
		range_data_release(&d);
	}
done:
	bisect_teardown(&b);
	return rc;
}
