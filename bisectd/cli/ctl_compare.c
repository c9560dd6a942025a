/*
 * ctl_compare.c: bisectctl compare: engines measured side by side on
 * this machine, their runs interleaved, ranked (report/league.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisectd/acquire/bench_release.h"
#include "bisectd/measure/benchlock.h"
#include "bisectd/report/league.h"
#include "common/err.h"
#include "ctl.h"
#include "ctl_local.h"
#include "store/store.h"

/* One ENGINE[@VERSION] operand, resolved. */
struct entrant {
	const struct conf_engine *eng;
	char *version;		/* malloced */
	struct bench_job j;
	struct bench_prep p;
	int prepared;
};

/* The engine of operand arg and its version: the one after '@', or its
 * newest stored (else listed) release.  0, or the exit code, said. */
static int
resolve(struct ctl *c, struct store *s, const char *arg, struct entrant *x)
{
	const char *at = strchr(arg, '@');
	char name[256];
	struct acquire a;
	struct err e = ERR_INIT;

	snprintf(name, sizeof(name), "%.*s", at ? (int)(at - arg) :
	    (int)strlen(arg), arg);
	if ((x->eng = ctl_engine(c, name)) == NULL)
		return EXIT_USAGE;
	if (at && at[1] == '\0')
		return ctl_usage_error("'%s': no version after '@'", arg);
	if (at)
		x->version = strdup(at + 1);
	else if (acquire_init(&a, c->conf, x->eng, s, &e) < 0 ||
	    acquire_newest(&a, 0, &x->version, &e) < 0)
		return ctl_failed(&e);
	return x->version ? 0 : ctl_error("out of memory");
}

/*
 * The cells every entrant runs, each once: a cell two engines share is
 * run A B C ... in turn, so that no engine gets the quiet half of the
 * night.  reps[t * n + u]: entrant t's runs of cell u, 0 where its
 * matrix lacks it.  The cells point into the entrants' own.
 */
static int
union_cells(struct entrant *x, size_t nx, int reps_given,
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
run_all(struct ctl *c, struct entrant *x, size_t nx, struct bench_tally *tl,
    struct err *e)
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
	if (union_cells(x, nx, c->reps, &cells, &ncells, &reps) < 0)
		rc = err_set(e, "out of memory");
	else
		rc = bench_run(&x[0].p.ctx, t, nx, cells, ncells, reps, warmup,
		    0, tl, e);
	free(cells);
	free(reps);
	return rc;
}

int
cmd_compare(struct ctl *c)
{
	struct entrant x[BENCH_MAX_TARGETS];
	struct benchlock lock = BENCHLOCK_INIT;
	struct bench_tally tally;
	struct league l;
	struct store *s;
	struct err e = ERR_INIT;
	size_t nx = (size_t)c->argc;
	int rc = EXIT_OK;

	if (nx > BENCH_MAX_TARGETS)
		return ctl_usage_error("at most %d engines at once",
		    BENCH_MAX_TARGETS);
	memset(x, 0, sizeof(x));
	memset(&l, 0, sizeof(l));
	memset(&tally, 0, sizeof(tally));
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	for (size_t i = 0; i < nx && rc == EXIT_OK; i++)
		rc = resolve(c, s, c->argv[i], &x[i]);
	if (rc != EXIT_OK)
		goto done;
	if (ctl_local_begin(c, s, &lock, "bisectctl compare (%zu engines)",
	    nx) != 0) {
		s = NULL;
		rc = EXIT_FAIL;
		goto done;
	}
	for (size_t i = 0; i < nx && rc == EXIT_OK; i++) {
		x[i].j.reps = c->reps;
		x[i].j.progress = ctl_on_progress;
		x[i].j.download = ctl_on_download;
		x[i].j.stop = &ctl_stop;
		if (bench_prepare(c->conf, x[i].eng, s, x[i].version, &x[i].j,
		    &x[i].p, &e) < 0) {
			ctl_end_line();
			rc = ctl_failed(&e);
		} else
			x[i].prepared = 1;
	}
	if (rc == EXIT_OK && run_all(c, x, nx, &tally, &e) < 0)
		rc = ctl_error("%s", e.msg);
	ctl_end_line();
	benchlock_release(&lock);
	if (rc != EXIT_OK)
		goto done;
	if ((l.v = calloc(nx, sizeof(*l.v))) == NULL) {
		rc = ctl_error("out of memory");
		goto done;
	}
	for (size_t i = 0; i < nx && rc == EXIT_OK; i++, l.n++)
		if (league_entry(&l, i, s, x[i].eng, x[i].version,
		    x[i].j.release_id, x[i].j.weights_sha256, x[i].j.hw_key,
		    &e) < 0)
			rc = ctl_error("%s", e.msg);
	if (rc != EXIT_OK)
		goto done;
	league_rank(&l);
	league_print(&l, ctl_report_format(c), stdout);
	if (tally.failed > 0)
		rc = ctl_error("%d of %d runs failed; the last: %s (see "
		    "'bisectctl runs ENGINE VERSION')", tally.failed, tally.runs,
		    tally.last_failure);
	else if (tally.busy > 0)
		fprintf(stderr, "bisectctl: %d runs started on a busy machine "
		    "and are flagged busy\n", tally.busy);
done:
	league_free(&l);
	for (size_t i = 0; i < nx; i++) {
		if (x[i].prepared)
			bench_prep_release(&x[i].p);
		bench_job_release(&x[i].j);
		free(x[i].version);
	}
	if (s)
		store_close(s);
	return rc;
}
