/*
 * job_run.h: running one job of the queue (fetch, bench, bisect, watch)
 * under the machine's benchmark lock, from its stored arguments to its
 * exit code and result.  The daemon picks jobs (store_job_pick) and
 * records how they ended; this module only runs them.
 */
#ifndef BISECTD_JOB_RUN_H
#define BISECTD_JOB_RUN_H

#include <stdatomic.h>
#include <stdint.h>

struct bench_progress;
struct conf;
struct conf_runner;
struct err;
struct store;
struct store_job;

/* Log levels: syslog(3)'s numbers, as alert_sink.h and watch.h use. */
#define JOB_RUN_LOG_ERR		3
#define JOB_RUN_LOG_WARNING	4
#define JOB_RUN_LOG_INFO		6

struct job_run_opts {
	/* Set asynchronously to stop: the running engine is ended; never
	 * NULL. */
	const atomic_int *stop;
	void (*log)(void *arg, int level, const char *msg);	/* or NULL */
	void (*progress)(void *arg, const struct bench_progress *p);
	void *arg;
	const char *lock_path;	/* the benchmark lock file */
};

enum job_run_outcome {
	JOB_RUN_FINISHED,		/* ran to its end: *exit_code and *result */
	JOB_RUN_STOPPED		/* *stop was set before it ended */
};

/*
 * Run job with the configuration c and the store s.  Returns an enum
 * job_run_outcome; on JOB_RUN_FINISHED, *exit_code is the exit code the README documents
 * (1 when the job failed) and *result the verdict JSON of a bisect, a
 * short JSON summary of other kinds, or the error message (malloced,
 * caller frees).  Arguments that do not parse or an engine the
 * configuration no longer has end the job with exit code 1 too.
 */
int job_run(const struct conf *c, struct store *s,
    const struct store_job *job, const struct job_run_opts *o, int *exit_code,
    char **result);

/*
 * The Slurm runner a job measures on, or NULL when it runs on this
 * machine: a bisect of an engine whose runner is a slurm one (not an
 * output bisect, which runs the canary here, nor one over commits, which
 * builds here).  Such a job takes no benchmark lock of this machine; its
 * measurements run under the node's.
 */
const struct conf_runner *job_run_slurm(const struct conf *c,
    const struct store_job *job);

/*
 * The JSON text of a job's arguments for a watch of an engine, or of the
 * yardstick check (malloced).
 */
char *job_run_watch_args(int yardstick);
/* The same for the check of [compare "name"]. */
char *job_run_compare_args(const char *name);

#endif
