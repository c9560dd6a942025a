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

int
bench_release(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *version, struct bench_job *j,
    struct err *e)
{
	struct acquire a;
	struct acquired got;
	struct pinned_weights w;
	struct bench_target t;
	struct bench_ctx ctx;
	int64_t machine_id;
	int *reps = NULL, rc = -1;

	memset(&got, 0, sizeof(got));
	memset(&w, 0, sizeof(w));
	memset(&j->tally, 0, sizeof(j->tally));
	if (acquire_init(&a, conf, eng, s, e) < 0)
		return -1;
	a.progress = j->download;
	a.progress_arg = j->download_arg;
	a.stop = j->stop;
	if (acquire_release(&a, version, &got, e) < 0 ||
	    acquire_weights(&a, &w, e) < 0 ||
	    bench_machine(s, &machine_id, j->hw_key, e) < 0 ||
	    (j->prompts == NULL && j->gens == NULL ? bench_cells(conf, eng,
	    eng->prompts, eng->nprompts, eng->gen, eng->ngen, 0, &j->cells,
	    &j->ncells, e) : bench_cells(conf, eng, j->prompts, j->nprompts,
	    j->gens, j->ngens, 1, &j->cells, &j->ncells, e)) < 0)
		goto done;
	if ((reps = malloc((j->ncells + 1) * sizeof(*reps))) == NULL) {
		err_set(e, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < j->ncells; i++)
		reps[i] = j->reps > 0 ? j->reps : eng->reps;
	memset(&ctx, 0, sizeof(ctx));
	ctx.conf = conf;
	ctx.eng = eng;
	ctx.store = s;
	ctx.weights_id = w.weights_id;
	ctx.weights_path = w.path;
	ctx.weights_sha256 = w.sha256;
	ctx.machine_id = machine_id;
	ctx.hw_key = j->hw_key;
	ctx.progress = j->progress;
	ctx.progress_arg = j->progress_arg;
	ctx.stop = j->stop;
	memset(&t, 0, sizeof(t));
	t.release_id = got.release_id;
	t.version = version;
	t.dir = got.dir;
	j->release_id = got.release_id;
	memcpy(j->weights_sha256, w.sha256, sizeof(j->weights_sha256));
	rc = bench_run(&ctx, &t, 1, j->cells, j->ncells, reps, eng->warmup, 0,
	    &j->tally, e);
done:
	free(reps);
	pinned_weights_release(&w);
	acquired_release(&got);
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
