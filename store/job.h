/*
 * job.h: the job queue: bisectctl's side and the daemon's.
 */
#ifndef STORE_JOB_H
#define STORE_JOB_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct store;

/* --- the job queue --- */
struct store_job {
	int64_t id;
	char *kind;		/* "fetch", "bench", "bisect", "watch" */
	char *engine;
	char *args;		/* JSON */
	int priority;
	char *state;		/* "queued", "running", "done", "failed",
				 * "cancelled" */
	int64_t created, started, finished;	/* 0: not yet; started is
					 * the first start, kept when the
					 * job is taken up again */
	int exit_code;		/* -1: none yet */
	char *result;		/* or NULL */
};

/* Queue a job; *id gets its number. */
int store_job_enqueue(struct store *s, const char *kind, const char *engine,
    const char *args, int priority, int64_t *id, struct err *e);

struct store_jobs {
	struct store_job *v;
	size_t n;
};

/* Jobs not finished (queued or running) in the order they run, then the
 * `recent` most recently finished. */
int store_job_list(struct store *s, int recent, struct store_jobs *out,
    struct err *e);
void store_jobs_release(struct store_jobs *j);

/*
 * The newest `limit` jobs (all when limit < 0), newest first; *total
 * gets how many jobs the store holds.
 */
int store_job_recent(struct store *s, int64_t limit, struct store_jobs *out,
    int64_t *total, struct err *e);

/*
 * Delete the jobs that ended (done, failed, cancelled) before `before`
 * (epoch seconds), in one transaction; their bisects and probes stay,
 * no longer tied to a job.  *n gets how many were deleted.
 */
int store_job_prune(struct store *s, int64_t before, int64_t *n,
    struct err *e);

/* --- the daemon's side of the queue --- */
/*
 * Take the next queued job (highest priority, then oldest) and mark it
 * running, in one statement: two pickers never get the same job.
 * 0 with *out filled (free with store_job_release), 1 when the queue is
 * empty, -1 on error.
 */
int store_job_pick(struct store *s, struct store_job *out, struct err *e);
/* Take the queued job id and mark it running, as store_job_pick: 0 with
 * *out, 1 when it is no longer queued, -1. */
int store_job_claim(struct store *s, int64_t id, struct store_job *out,
    struct err *e);

/* One job by number: 0, 1 if there is none, -1. */
int store_job_get(struct store *s, int64_t id, struct store_job *out,
    struct err *e);
void store_job_release(struct store_job *j);

/*
 * End a running job: state "done", "failed" or "cancelled", with the
 * exit code and result (the verdict JSON, or the error message; may be
 * NULL).
 */
int store_job_finish(struct store *s, int64_t id, const char *state,
    int exit_code, const char *result, struct err *e);

/* Put a running job back in the queue (a clean stop: it resumes). */
int store_job_requeue(struct store *s, int64_t id, struct err *e);

/*
 * At start-up: every job left running by a daemon that died goes back
 * to the queue (those whose cancel was asked end cancelled); *n gets how
 * many were requeued.
 */
int store_job_recover(struct store *s, int *n, struct err *e);

enum store_cancel {
	STORE_CANCEL_DONE,	/* it was queued and is now cancelled */
	STORE_CANCEL_RUNNING,	/* it is running: the cancel is recorded,
				 * its runner must stop it */
	STORE_CANCEL_FINISHED,	/* it had ended already */
	STORE_CANCEL_NONE	/* no such job */
};

/* Cancel a job: returns an enum store_cancel, or -1 on error. */
int store_job_cancel(struct store *s, int64_t id, struct err *e);

/* Whether a cancel was asked for the job: 0 and *yes, -1. */
int store_job_cancel_requested(struct store *s, int64_t id, int *yes,
    struct err *e);

/* The last time schedule name fired: 0 and *when, 1 if never, -1. */
int store_schedule_last(struct store *s, const char *name, int64_t *when,
    struct err *e);
int store_schedule_set(struct store *s, const char *name, int64_t when,
    struct err *e);

#endif
