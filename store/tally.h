/*
 * tally.h: counts for the daemon's /metrics.
 */
#ifndef STORE_TALLY_H
#define STORE_TALLY_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct store;

/* --- counts for the daemon's /metrics --- */
struct store_tally_row {
	char *key[3];		/* malloced, or NULL */
	int64_t n, sum;
};

struct store_tally {
	struct store_tally_row *v;
	size_t n;
};

/* Runs by engine, outcome ("ok" or the failure reason) and kind
 * ("run", "warmup", "confirm"): n runs. */
int store_tally_runs(struct store *s, struct store_tally *out, struct err *e);
/* Jobs by kind and state: n jobs, sum of seconds from start to finish
 * (0 for those not finished). */
int store_tally_jobs(struct store *s, struct store_tally *out, struct err *e);
/* Each engine's newest finished bisect: engine, status, "GOOD..BAD"; n
 * is when it finished (Unix time), sum its number. */
int store_tally_verdicts(struct store *s, struct store_tally *out,
    struct err *e);
void store_tally_release(struct store_tally *t);

#endif
