/*
 * bench_release.c: fetch, pin and measure one release (see
 * bench_release.h): the orchestration around measure/bench.c's cell loop.
 */
#include <stdlib.h>
#include <string.h>

#include "acquire.h"
#include "bench_release.h"
#include "common/err.h"
#include "config/conf.h"

void
bench_ctx_pinned(struct bench_ctx *ctx, const struct conf *conf,
    const struct conf_engine *eng, struct store *s,
    const struct pinned_weights *w, int64_t machine_id, const char *hw_key)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->conf = conf;
	ctx->eng = eng;
	ctx->store = s;
	ctx->weights_id = w->weights_id;
	ctx->weights_path = w->path;
	ctx->weights_sha256 = w->sha256;
	ctx->machine_id = machine_id;
	ctx->hw_key = hw_key;
}

int
bench_prepare(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *version, struct bench_job *j,
    struct bench_prep *p, struct err *e)
{
	struct acquire a;
	int64_t machine_id;

	memset(p, 0, sizeof(*p));
	memset(&j->tally, 0, sizeof(j->tally));
	if (acquire_init(&a, conf, eng, s, e) < 0)
		return -1;
	a.progress = j->download;
	a.progress_arg = j->download_arg;
	a.stop = j->stop;
	if (acquire_release(&a, version, &p->got, e) < 0 ||
	    acquire_weights(&a, &p->w, e) < 0 ||
	    bench_machine(s, &machine_id, j->hw_key, e) < 0 ||
	    (j->prompts == NULL && j->gens == NULL ? bench_cells(conf, eng,
	    eng->prompts, eng->nprompts, eng->gen, eng->ngen, 0, &j->cells,
	    &j->ncells, e) : bench_cells(conf, eng, j->prompts, j->nprompts,
	    j->gens, j->ngens, 1, &j->cells, &j->ncells, e)) < 0) {
		bench_prep_release(p);
		return -1;
	}
	bench_ctx_pinned(&p->ctx, conf, eng, s, &p->w, machine_id, j->hw_key);
	p->ctx.progress = j->progress;
	p->ctx.progress_arg = j->progress_arg;
	p->ctx.stop = j->stop;
	p->t.release_id = p->got.release_id;
	p->t.version = version;
	p->t.dir = p->got.dir;
	j->release_id = p->got.release_id;
	memcpy(j->weights_sha256, p->w.sha256, sizeof(j->weights_sha256));
	return 0;
}

void
bench_prep_release(struct bench_prep *p)
{
	pinned_weights_release(&p->w);
	acquired_release(&p->got);
	memset(p, 0, sizeof(*p));
}

int
bench_release(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *version, struct bench_job *j,
    struct err *e)
{
	struct bench_prep p;
	int *reps, rc = -1;

	if (bench_prepare(conf, eng, s, version, j, &p, e) < 0)
		return -1;
	if ((reps = malloc((j->ncells + 1) * sizeof(*reps))) == NULL)
		err_set(e, "out of memory");
	else {
		for (size_t i = 0; i < j->ncells; i++)
			reps[i] = j->reps > 0 ? j->reps : eng->reps;
		rc = bench_run(&p.ctx, &p.t, 1, j->cells, j->ncells, reps,
		    eng->warmup, 0, &j->tally, e);
	}
	free(reps);
	bench_prep_release(&p);
	return rc;
}

void
bench_job_release(struct bench_job *j)
{
	if (j->cells)
		bench_cells_free(j->cells, j->ncells);
	j->cells = NULL;
	j->ncells = 0;
}
