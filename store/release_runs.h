/*
 * release_runs.h: the runs of many releases, read in one pass.
 */
#ifndef STORE_RELEASE_RUNS_H
#define STORE_RELEASE_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "points.h"

struct err;
struct store;
struct store_cell_query;
struct store_points;

/* --- the runs of many releases, read in one pass --- */
/* One cell of a release under one definition: what store_cell_points()
 * and store_cell_outcomes() give for a query that names it. */
struct store_cell_runs {
	char kind[3];			/* "pp" or "tg" */
	int prompt_tokens, gen_tokens;
	char *content;			/* "" for none; malloced */
	char definition[65];		/* the definition's key */
	struct store_points points;	/* analysed samples, oldest first */
	int ok, bad;			/* the outcomes of its runs */
	/* Runs that would be analysed but during which the GPU throttled:
	 * counted in ok, their samples not in points (another clock is
	 * another machine). */
	int throttled;
};

struct store_failed_run {
	int64_t run_id;
	char *failure;			/* malloced */
	char *detail;			/* malloced; NULL when none */
};

struct store_release_runs {
	/* Every cell with runs comparable under one weights hash and one
	 * hardware identity (the release's and those of the releases with
	 * its archive), whatever the definition. */
	struct store_cell_runs *cells;	/* malloced */
	size_t ncells;
	/* The release's own failed runs, whatever their weights, machine
	 * or definition, oldest first, as store_run_list() has them. */
	struct store_failed_run *failed;	/* malloced */
	size_t nfailed;
};

/*
 * Read the runs of n releases into out[0..n-1] (free each with
 * store_release_runs_release()), from one snapshot of the store: what a
 * report or a verdict over a long range reads, one statement per
 * release instead of one per cell.  Returns 0, or -1 with e set and
 * nothing to free.
 */
int store_release_runs_read(struct store *s, const char *weights_sha256,
    const char *hw_key, const int64_t *release_ids, size_t n,
    struct store_release_runs *out, struct err *e);
void store_release_runs_release(struct store_release_runs *rr);

/* The cell of rr that q names (q's release, weights and machine are
 * taken to be rr's), or NULL when it has no runs. */
const struct store_cell_runs *store_release_runs_cell(
    const struct store_release_runs *rr, const struct store_cell_query *q);

#endif
