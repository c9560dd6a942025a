/*
 * bench_release.h: one release benched by hand (bisectctl bench) or as a
 * daemon job: fetched if needed, the weights pinned, the matrix run on
 * this machine through measure/bench.h, every run stored.
 */
#ifndef BISECTD_BENCH_RELEASE_H
#define BISECTD_BENCH_RELEASE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bisectd/acquire/acquire.h"
#include "bisectd/measure/bench.h"

struct conf;
struct conf_engine;
struct err;
struct store;

/* One release benched by hand or as a daemon job: what to run, and what
 * was stored. */
struct bench_job {
	const int *prompts;	/* in: these prefill cells ... */
	size_t nprompts;
	const int *gens;	/* ... and these decode cells, on the
				 * engine's first content kind only; both
				 * NULL: the engine's whole matrix */
	size_t ngens;
	int reps;		/* in: runs per cell; 0: the engine's */
	void (*progress)(void *arg, const struct bench_progress *p);
	void *progress_arg;
	void (*download)(void *arg, uint64_t now, uint64_t total);
	void *download_arg;
	const atomic_int *stop;

	int64_t release_id;	/* out */
	char weights_sha256[65];
	char hw_key[65];
	struct bench_cell *cells;	/* out: the cells run; owned */
	size_t ncells;
	struct bench_tally tally;
};

/*
 * Fetch version if needed, pin the weights, and run the matrix on it
 * (the caller holds the benchmark lock).  Failed runs are counted in
 * j->tally, not errors.  Returns 0, or -1 with e set when it could not
 * run.  Free with bench_job_release().
 */
int bench_release(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *version, struct bench_job *j,
    struct err *e);
void bench_job_release(struct bench_job *j);

/*
 * A release made ready to measure: fetched and unpacked, the weights
 * pinned, the cells made, what to run it under; what bench_release()
 * runs, and what a comparison of engines interleaves (bisectctl
 * compare).  The context and target point into it: it stays where it
 * was filled until bench_prep_release().
 */
struct bench_prep {
	struct bench_ctx ctx;
	struct bench_target t;
	struct acquired got;
	struct pinned_weights w;
};

/*
 * bench_release() up to the runs: j's in fields are read, its
 * release_id, weights_sha256, hw_key and cells filled (free with
 * bench_job_release()); version is kept, not copied.  Returns 0, or -1
 * with e set (*p released then).
 */
int bench_prepare(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *version, struct bench_job *j,
    struct bench_prep *p, struct err *e);
void bench_prep_release(struct bench_prep *p);

/*
 * Zero ctx and point it at conf, eng and the store s, the pinned
 * weights w and this machine (machine_id, hw_key); its progress and
 * stop are the caller's to set.  ctx keeps the pointers, not copies.
 */
void bench_ctx_pinned(struct bench_ctx *ctx, const struct conf *conf,
    const struct conf_engine *eng, struct store *s,
    const struct pinned_weights *w, int64_t machine_id, const char *hw_key);

#endif
