/*
 * league_run.h: several engines measured side by side on this machine
 * (bisectctl compare, and a [compare] section's scheduled check): each
 * release prepared as bench does, then the cells of all of them run in
 * one loop, A B C A B C, every run stored under its own engine's
 * definition and weights.  Ranking them is report/league.h's.
 */
#ifndef BISECTD_LEAGUE_RUN_H
#define BISECTD_LEAGUE_RUN_H

#include <stddef.h>

#include "bisectd/acquire/bench_release.h"

struct conf;
struct conf_engine;
struct err;
struct store;

/* One engine and release of the table. */
struct league_entrant {
	const struct conf_engine *eng;	/* in */
	char *version;		/* in, malloced: freed by the release */
	struct bench_job j;	/* its callbacks and stop in; its release,
				 * weights, machine and cells out */
	struct bench_prep p;
	int prepared;
};

/*
 * Prepare each of x[0..n-1] (n at most BENCH_MAX_TARGETS) and run their
 * cells interleaved, reps runs a cell (0: each engine's reps), into *tl.
 * Returns 0 (failed runs counted in *tl), or -1 with e set.  The caller
 * holds the benchmark lock.
 */
int league_measure(const struct conf *c, struct store *s,
    struct league_entrant *x, size_t n, int reps, struct bench_tally *tl,
    struct err *e);

void league_entrant_release(struct league_entrant *x);

#endif
