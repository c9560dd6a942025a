/*
 * points.h: the samples an analysis reads, per cell, and the bisects.
 */
#ifndef STORE_POINTS_H
#define STORE_POINTS_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct store;

/* --- samples for analysis --- */
/* Which runs' samples to read: comparability (the README's) is the same
 * release, the same weights hash and the same hardware identity, and
 * the same measurement definition (which names those two and the cell
 * again, with the command, parser, mode, env and timing method). */
struct store_cell_query {
	int64_t release_id;
	const char *weights_sha256;
	const char *hw_key;
	const char *kind;	/* "pp" or "tg" */
	int prompt_tokens, gen_tokens;
	const char *content;	/* "" for none */
	char definition[65];	/* the definition's key; "" matches nothing */
};

struct store_point {
	int64_t time_ns;	/* the definition's clock: the engine's own
				 * figure, the wall time, or the TTFT */
	int64_t run_id;
	int confirm;		/* the run confirmed a boundary */
	int busy;		/* the machine was busy before the run */
	int lower_bound;	/* server mode: time to first token */
	int idx;		/* the sample's place in its run: a serve
				 * run's figure (enum conf_serve_figure) */
	/* Its run's GPU figures (store_release_runs_read() alone): the
	 * median SM clock, 0 when not read; the peak memory above the
	 * baseline and the energy, -1 when not read. */
	double gpu_sm_mhz, gpu_energy_j;
	int64_t gpu_mem_peak;
	int64_t max_rss_kb;	/* its run's peak resident set (the same
				 * reader alone), -1 when not read */
};

struct store_points {
	struct store_point *v;	/* malloced */
	size_t n;
};

/*
 * The analysed samples of one cell (warm-ups, failed runs and runs
 * during which the GPU throttled excluded), oldest first.
 */
int store_cell_points(struct store *s, const struct store_cell_query *q,
    struct store_points *out, struct err *e);
void store_points_release(struct store_points *p);

/* Failed runs of a cell (for skip decisions and reports). */
int store_cell_failures(struct store *s, const struct store_cell_query *q,
    int *count, struct err *e);

/*
 * The outcomes of a cell's runs: *ok counts analysed runs that gave
 * samples, *bad the runs that failed (warm-ups included) and analysed
 * runs that gave none.  Every measured run adds to one of the two.
 */
int store_cell_outcomes(struct store *s, const struct store_cell_query *q,
    int *ok, int *bad, struct err *e);

/* --- bisects --- */
struct store_bisect {
	int64_t id;
	int64_t job_id;		/* 0: none */
	int64_t engine_id;
	const char *good, *bad, *metric;
	double threshold;
	int all;
	int64_t weights_id, machine_id;
};

/*
 * The running bisect with the same engine, range, metric, threshold and
 * mode, to resume; or a new one.  *resumed says which.
 */
int store_bisect_open(struct store *s, struct store_bisect *b, int *resumed,
    struct err *e);

/* Append the next probe (seq = count so far). */
int store_probe_add(struct store *s, int64_t bisect_id, const char *action,
    int64_t release_id, int64_t other_id, int reps, struct err *e);

/* How many probes the bisect has stored. */
int store_probe_count(struct store *s, int64_t bisect_id, int *n,
    struct err *e);

/* The releases the bisect marked skipped (*ids malloced). */
int store_probe_skipped(struct store *s, int64_t bisect_id, int64_t **ids,
    size_t *n, struct err *e);

int store_bisect_finish(struct store *s, int64_t bisect_id, const char *state,
    const char *status, const char *verdict_json, struct err *e);

/* The verdict JSON of the newest finished bisect over the range, or NULL
 * (*json malloced). */
int store_bisect_latest(struct store *s, int64_t engine_id, const char *good,
    const char *bad, const char *metric, char **json, struct err *e);

/* A finished bisect as the status page lists it. */
struct store_bisect_row {
	int64_t id;
	char *good, *bad, *metric, *status;	/* malloced */
	char *verdict;		/* its verdict JSON; malloced */
	int64_t finished;	/* Unix time */
};

struct store_bisect_rows {
	struct store_bisect_row *v;	/* newest first; malloced */
	size_t n;
};

/*
 * The engine's newest limit finished bisects with a verdict, newest
 * first, one per range and metric (its newest): what the status page
 * links a report for.  The first is the engine's latest verdict.
 */
int store_bisect_recent(struct store *s, int64_t engine_id, int limit,
    struct store_bisect_rows *out, struct err *e);
void store_bisect_rows_release(struct store_bisect_rows *r);

#endif
