/*
 * slurm.h: measurements as Slurm batch jobs.  Slurm's own tools (sbatch,
 * scontrol, scancel) are run through the measure runner with argv
 * vectors: no shell ever sees a configured value.  The batch script is a
 * constant that execs `bisectctl node-run` with paths it finds in its
 * environment.  The state (which request became which job, how it
 * ended, whether its result is in) is kept in the store, so a daemon
 * restarted while jobs are in flight reattaches to them.
 */
#ifndef BISECTD_SLURM_H
#define BISECTD_SLURM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct conf;
struct conf_engine;
struct conf_runner;
struct err;
struct remote_plan;
struct store;
struct strv;

/* Submissions of one plan before a bisect gives up on it (the engine did
 * nothing wrong: an infrastructure failure is never a skipped release). */
#define SLURM_MAX_ATTEMPTS 3

/* Slurm's view of a job. */
struct slurm_state {
	char state[32];		/* JobState; "" when Slurm forgot the job */
	char node[256];		/* NodeList; "" before it has one */
	char reason[256];	/* Reason; "" for None */
};

/* Ask scontrol about a job.  0, or -1 with e set when it cannot say. */
int slurm_query(int64_t slurm_id, struct slurm_state *st, struct err *e);

/*
 * The same from one squeue of this user's jobs a poll (SLURM_POLL_MS),
 * shared by every thread that asks within it; a job squeue does not list
 * is asked of scontrol (slurm_query()).
 */
#define SLURM_POLL_MS 500
int slurm_poll(int64_t slurm_id, struct slurm_state *st, struct err *e);

/*
 * Whether a node is out of service (drained, draining, down, failing or
 * gone from the cluster): 1 with why set ("node N is IDLE+DRAIN:
 * REASON"), 0 when it takes jobs, -1 with e set when scontrol cannot say.
 */
int slurm_node_down(const char *node, char *why, size_t len, struct err *e);

/*
 * The readers of the tools' answers (slurm_parse.c), apart from the
 * tools so that a fuzzer reaches them.  What they keep of the answers
 * is text: a control byte, a C1 control or a byte that is not UTF-8 is
 * written as \xHH, and a field too long for its buffer is cut at a
 * character's end.
 *
 * The job id in out, what `sbatch --parsable` printed ("ID" or
 * "ID;CLUSTER", then a newline, the ID 1 to 18 digits and nothing
 * else): 0 with *id set, or -1 when out holds none.
 */
int slurm_parse_jobid(const char *out, int64_t *id);

/* The job's state, node and reason from what `scontrol show job -o`
 * printed; each field "" when absent, "(null)" or "None". */
void slurm_parse_job(const char *out, struct slurm_state *st);

/*
 * From the lines of `squeue --format="JobId=%i JobState=%T NodeList=%N
 * Reason=%r"` (SLURM_QUEUE_FORMAT), job id's state into *st as
 * slurm_parse_job() reads a line: 1 when a line names the job, 0 when
 * none does.
 */
#define SLURM_QUEUE_FORMAT "JobId=%i JobState=%T NodeList=%N Reason=%r"
int slurm_parse_queue(const char *out, int64_t id, struct slurm_state *st);

/*
 * From what `scontrol show node -o node` printed, whether the node is
 * out of service (its State holds DRAIN, DOWN or FAIL): 1 with why set
 * as slurm_node_down() says (len > 0), 0 when it takes jobs.
 */
int slurm_parse_node(const char *out, const char *node, char *why,
    size_t len);

/* scancel the job. */
int slurm_cancel(int64_t slurm_id, struct err *e);

/*
 * The typed failure of a job Slurm ended without our result:
 * slurm-timeout, slurm-node-fail, slurm-preempted, slurm-cancelled, or
 * slurm-failed; NULL for states that have not ended.
 */
const char *slurm_failure(const char *state);

struct slurm_measure_ctx {
	const struct conf *conf;
	const struct conf_engine *eng;	/* its runner is a slurm one */
	struct store *s;
	int64_t bisect_id;	/* 0: none */
	int64_t job_id;		/* the queue's job; 0: bisect --now */
	int64_t weights_id;
	const char *weights_sha256;
	const atomic_int *stop;	/* set: return, leaving the job to run */
	void (*note)(void *arg, const char *line);	/* or NULL */
	void *arg;
};

/*
 * The sbatch command line of request id on runner rn (pinned to a node,
 * or NULL), running script: every option the runner sets, none dropped.
 * Appended to argv; -1 when memory runs out.
 */
int slurm_sbatch_argv(const struct conf_runner *rn, const char *id,
    const char *pinned, const char *script, struct strv *argv);

/*
 * Carry out plan as one batch job and ingest its result: reattach to the
 * bisect's job in flight with the same plan, or submit one (pinned with
 * --nodelist to the bisect's node, when it has one); wait for it; take
 * its result into the store.  A job Slurm ends (timeout, node failure,
 * preemption, a cancel from outside) or whose result is refused is
 * recorded with its typed failure and resubmitted, up to
 * SLURM_MAX_ATTEMPTS.  On 0, hw_key holds the comparability key of the
 * node it ran on.  A stop leaves the job running (-1, "interrupted");
 * a cancel of the queue's job scancels it.
 */
int slurm_measure(const struct slurm_measure_ctx *c,
    const struct remote_plan *p, char hw_key[65], struct err *e);

/*
 * The bisect's pinned node and its comparability key, or "" for both
 * when no job of it was ingested (or its node failed since).
 */
int slurm_pinned(struct store *s, int64_t bisect_id, char node[256],
    char hw_key[65], struct err *e);

/* scancel every job of the queue's job still in flight; *n gets how many. */
int slurm_cancel_job(struct store *s, int64_t job_id, int *n,
    struct err *e);

#endif
