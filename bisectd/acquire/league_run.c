/*
 * league_run.c: engines measured side by side (league_run.h).
 */
#include <stdlib.h>
#include <string.h>

#include "bisectd/measure/bench.h"
#include "common/err.h"
#include "config/conf.h"
#include "league_run.h"

/*
 * The cells every entrant runs, each once: a cell two engines share is
 * run A B C ... in turn, so that no engine gets the quiet half of the
 * night.  reps[t * n + u]: entrant t's runs of cell u, 0 where its
 * matrix lacks it.  The cells point into the entrants' own.
 */
static int
union_cells(struct league_entrant *x, size_t nx, int reps_given,
    struct bench_cell **cells, size_t *ncells, int **reps)
{
	size_t total = 0, n = 0;

	for (size_t t = 0; t < nx; t++)
		total += x[t].j.ncells;
	if ((*cells = calloc(total + 1, sizeof(**cells))) == NULL ||
	    (*reps = calloc(nx * total + 1, sizeof(**reps))) == NULL)
		return -1;
	for (size_t t = 0; t < nx; t++)
		for (size_t k = 0; k < x[t].j.ncells; k++) {
			const struct bench_cell *b = &x[t].j.cells[k];
			size_t u;

			for (u = 0; u < n; u++)
				if (strcmp((*cells)[u].kind, b->kind) == 0 &&
				    (*cells)[u].prompt == b->prompt &&
				    (*cells)[u].gen == b->gen &&
				    strcmp((*cells)[u].content, b->content) == 0)
					break;
			if (u == n)
				(*cells)[n++] = *b;
			(*reps)[t * total + u] = reps_given > 0 ? reps_given :
			    x[t].eng->reps;
		}
	/* Close up the rows from total to n columns. */
	for (size_t t = 0; t < nx; t++)
		memmove(*reps + t * n, *reps + t * total, n * sizeof(**reps));
	*ncells = n;
	return 0;
}

/* Every entrant's cells, interleaved, every run stored. */
static int
run_all(struct league_entrant *x, size_t nx, int reps_given,
    struct bench_tally *tl, struct err *e)
{
	struct bench_target t[BENCH_MAX_TARGETS];
	struct bench_cell *cells = NULL;
	size_t ncells;
	int *reps = NULL, warmup = 0, rc;

	for (size_t i = 0; i < nx; i++) {
		t[i] = x[i].p.t;
		t[i].eng = x[i].eng;
		t[i].weights_id = x[i].p.w.weights_id;
		t[i].weights_path = x[i].p.w.path;
		t[i].weights_sha256 = x[i].p.w.sha256;
		if (x[i].eng->warmup > warmup)
			warmup = x[i].eng->warmup;
	}
	if (union_cells(x, nx, reps_given, &cells, &ncells, &reps) < 0)
		rc = err_set(e, "out of memory");
	else
		rc = bench_run(&x[0].p.ctx, t, nx, cells, ncells, reps, warmup,
		    0, tl, e);
	free(cells);
	free(reps);
	return rc;
}

int
league_measure(const struct conf *c, struct store *s,
    struct league_entrant *x, size_t n, int reps, struct bench_tally *tl,
    struct err *e)
{
	if (n > BENCH_MAX_TARGETS)
		return err_set(e, "at most %d engines at once",
		    BENCH_MAX_TARGETS);
	for (size_t i = 0; i < n; i++) {
		x[i].j.reps = reps;
		if (bench_prepare(c, x[i].eng, s, x[i].version, &x[i].j,
		    &x[i].p, e) < 0)
			return -1;
		x[i].prepared = 1;
	}
	return run_all(x, n, reps, tl, e);
}

void
league_entrant_release(struct league_entrant *x)
{
	if (x->prepared)
		bench_prep_release(&x->p);
	bench_job_release(&x->j);
	free(x->version);
	memset(x, 0, sizeof(*x));
}
