/*
 * slurm.h: measurements on Slurm: the jobs submitted and their results.
 */
#ifndef STORE_SLURM_H
#define STORE_SLURM_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct store;

/* --- measurements on Slurm --- */
/* One measurement request and the batch job carrying it out. */
struct store_slurm_job {
	int64_t id;
	char *request;		/* 32 hex digits, in its files */
	char *plan;		/* sha256 of what it measures */
	int64_t bisect_id;	/* 0: none */
	int64_t job_id;		/* the queue's job; 0: none */
	char *engine, *runner;
	int attempt;		/* 1, 2 ... for the same plan */
	int64_t slurm_id;	/* 0: not submitted yet */
	char *state;		/* Slurm's, or submitting, ingested, failed */
	char *node;		/* or NULL */
	char *pinned;		/* --nodelist, or NULL */
	char *hw_key;		/* ingested: the result's comparability key */
	char *failure, *detail;	/* or NULL */
	int64_t submitted, updated, ingested;	/* Unix times; 0: not yet */
};

struct store_slurm_jobs {
	struct store_slurm_job *v;	/* malloced */
	size_t n;
};

void store_slurm_job_release(struct store_slurm_job *j);
void store_slurm_jobs_release(struct store_slurm_jobs *l);

/* Record a request about to be submitted (state submitting), from j's
 * request, plan, bisect_id, job_id, engine, runner, attempt, pinned. */
int store_slurm_add(struct store *s, const struct store_slurm_job *j,
    int64_t *id, struct err *e);
/* sbatch gave it slurm_id: state PENDING. */
int store_slurm_submitted(struct store *s, int64_t id, int64_t slurm_id,
    struct err *e);
/* Slurm's state as last read, and the node (NULL: keep the one known);
 * an ingested or failed job is left as it is. */
int store_slurm_seen(struct store *s, int64_t id, const char *state,
    const char *node, struct err *e);
/* It ended without a result the store took: state failed. */
int store_slurm_fail(struct store *s, int64_t id, const char *failure,
    const char *detail, struct err *e);
/* The bisect's newest job with this plan still in flight: 0, 1, -1. */
int store_slurm_active(struct store *s, int64_t bisect_id, const char *plan,
    struct store_slurm_job *out, struct err *e);
/* The job of a request id: 0, 1 if none, -1. */
int store_slurm_get(struct store *s, const char *request,
    struct store_slurm_job *out, struct err *e);
/* How many jobs the bisect submitted for the plan, resubmissions too. */
int store_slurm_attempts(struct store *s, int64_t bisect_id, const char *plan,
    int *n, struct err *e);
/*
 * The bisect's pinned node: its newest ingested job (node, hw_key),
 * unless a later job of the bisect failed on that node with
 * slurm-node-fail.  0, 1 when nothing pins it, -1.
 */
int store_slurm_pin(struct store *s, int64_t bisect_id,
    struct store_slurm_job *out, struct err *e);
/*
 * Mark the job's result ingested, with its node and comparability key:
 * 0, or 1 when it was ingested already (the caller rolls back), -1.  Meant
 * inside the caller's transaction with the result's runs.
 */
int store_slurm_claim(struct store *s, int64_t id, const char *node,
    const char *hw_key, struct err *e);
/*
 * The comparability key of the node whose runs a report of engine's
 * good..bad shows: that of the newest ingested job of a bisect over the
 * range, else of the engine's newest.  0, 1 if the engine has none, -1.
 */
int store_slurm_range_key(struct store *s, const char *engine,
    const char *good, const char *bad, char hw_key[65], struct err *e);
/*
 * The bisect's anchor: how many of its jobs failed with
 * slurm-node-fail.  Each such failure starts a new one, whose runs are
 * compared with none of the earlier anchors' even on the same node (it
 * may come back repaired, changed).
 */
int store_slurm_anchor(struct store *s, int64_t bisect_id, int *n,
    struct err *e);
/* The jobs of the newest bisect of engine's good..bad, oldest first (none
 * when it has none). */
int store_slurm_range_jobs(struct store *s, const char *engine,
    const char *good, const char *bad, struct store_slurm_jobs *out,
    struct err *e);
/* Jobs of the queue's job_id (0: of every job), only those in flight
 * when active, oldest first. */
int store_slurm_list(struct store *s, int64_t job_id, int active,
    struct store_slurm_jobs *out, struct err *e);

#endif
