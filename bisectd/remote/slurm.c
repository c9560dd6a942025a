/*
 * slurm.c: submitting measurement requests as Slurm batch jobs, following
 * them to their end and ingesting their results (see slurm.h).
 */
#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bisectd/process/runner.h"
#include "common/err.h"
#include "common/strv.h"
#include "common/fsutil.h"
#include "config/conf.h"
#include "remote.h"
#include "slurm.h"
#include "store/store.h"

/* A Slurm tool gets this long before it counts as hung. */
#define SLURM_TOOL_TIMEOUT_MS (60 * 1000)

/*
 * The batch script: a constant.  What it runs comes from the job's
 * environment, which sbatch copies from its own (--export=ALL, Slurm's
 * default), so no configured text is ever read by a shell.
 */
static const char batch_script[] =
    "#!/bin/sh\n"
    "# Written by bisectd: runs one measurement request on this node.\n"
    "exec \"$BISECTD_CTL\" -c \"$BISECTD_CONFIG\" node-run "
    "\"$BISECTD_REQUEST\"\n";

/*
 * Run a Slurm tool: argv through the runner, with our SLURM_CONF (a
 * cluster configured elsewhere than /etc/slurm) and the extra
 * NAME=VALUE entries.  0 with *r filled (release it), -1 if it could
 * not be started.
 */
static int
tool(const char *const *argv, const char *const *extra, struct run_result *r,
    struct err *e)
{
	struct child_spec spec = CHILD_SPEC_INIT;
	const char *env[8];
	char conf[PATH_MAX + 16];
	size_t n = 0;

	if (getenv("SLURM_CONF")) {
		snprintf(conf, sizeof(conf), "SLURM_CONF=%s", getenv("SLURM_CONF"));
		env[n++] = conf;
	}
	for (size_t i = 0; extra && extra[i]; i++) {
		assert(n < sizeof(env) / sizeof(env[0]) - 1);
		env[n++] = extra[i];
	}
	env[n] = NULL;
	spec.argv = argv;
	spec.env = env;
	spec.timeout_ms = SLURM_TOOL_TIMEOUT_MS;
	if (run_child(&spec, r, e) < 0)
		return -1;
	if (r->reason == RUN_SPAWN) {
		err_set(e, "%s", r->detail);
		run_result_release(r);
		return -1;
	}
	return 0;
}

/* "sbatch: exited with status 1: <its stderr's last line>" into e. */
static int
tool_failed(const char *name, const struct run_result *r, struct err *e)
{
	char d[256];
	const char *tail = r->errtail.data ? r->errtail.data : "";
	size_t len = r->errtail.len;

	while (len > 0 && (tail[len - 1] == '\n' || tail[len - 1] == ' '))
		len--;
	return err_set(e, "%s %s%s%.*s", name, run_describe(r, d, sizeof(d)),
	    len ? ": " : "", (int)(len > 300 ? 300 : len), tail);
}

int
slurm_query(int64_t slurm_id, struct slurm_state *st, struct err *e)
{
	char id[32];
	const char *argv[] = { "scontrol", "show", "job", "-o", id, NULL };
	struct run_result r;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	snprintf(id, sizeof(id), "%lld", (long long)slurm_id);
	if (tool(argv, NULL, &r, e) < 0)
		return -1;
	if (r.reason != RUN_OK) {
		/* Past MinJobAge Slurm forgets a job: not an error. */
		if (r.errtail.data && strstr(r.errtail.data, "Invalid job id"))
			rc = 0;
		else
			rc = tool_failed("scontrol", &r, e);
		run_result_release(&r);
		return rc;
	}
	slurm_parse_job(r.out.data ? r.out.data : "", st);
	if (st->state[0] == '\0')
		rc = err_set(e, "scontrol said nothing of job %s's state", id);
	run_result_release(&r);
	return rc;
}

/*
 * A tool's answer shared by every bisect of the process waiting on one:
 * one call a poll, however many wait (a fleet's matrix would otherwise
 * ask once per job every poll).  Held with mu locked.
 */
struct shared_answer {
	pthread_mutex_t mu;
	char *out;		/* the last answer, or NULL when it failed */
	int64_t at_ms;		/* when it was read; 0: never */
};

/* What squeue said of this user's jobs.  A job it does not list (not
 * yet, or no longer known) is asked of scontrol alone. */
static struct shared_answer queue = { PTHREAD_MUTEX_INITIALIZER, NULL, 0 };
/* What scontrol said of every node, for the pinned jobs that wait. */
static struct shared_answer nodes = { PTHREAD_MUTEX_INITIALIZER, NULL, 0 };

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * a's answer read again when it is a poll old, with mu taken (the
 * caller unlocks).  An answer cut short is not kept: it would leave
 * jobs or nodes out that are there.
 */
static void
shared_refresh(struct shared_answer *a, const char *const *argv)
{
	int64_t now = mono_ms();

	pthread_mutex_lock(&a->mu);
	/* A little under the poll: waiters woken together share one. */
	if (a->at_ms == 0 || now - a->at_ms >= SLURM_POLL_MS * 9 / 10) {
		struct run_result r;
		struct err ie = ERR_INIT;

		free(a->out);
		a->out = NULL;
		if (tool(argv, NULL, &r, &ie) == 0) {
			if (r.reason == RUN_OK && !r.out_truncated)
				a->out = strdup(r.out.data ? r.out.data : "");
			run_result_release(&r);
		}
		a->at_ms = now;
	}
}

int
slurm_poll(int64_t slurm_id, struct slurm_state *st, struct err *e)
{
	const char *argv[] = { "squeue", "--me", "--states=all", "--noheader",
	    "--format=" SLURM_QUEUE_FORMAT, NULL };
	int found = 0;

	shared_refresh(&queue, argv);
	if (queue.out != NULL)
		found = slurm_parse_queue(queue.out, slurm_id, st);
	pthread_mutex_unlock(&queue.mu);
	return found && st->state[0] ? 0 : slurm_query(slurm_id, st, e);
}

int
slurm_cancel(int64_t slurm_id, struct err *e)
{
	char id[32];
	const char *argv[] = { "scancel", id, NULL };
	struct run_result r;
	int rc;

	snprintf(id, sizeof(id), "%lld", (long long)slurm_id);
	if (tool(argv, NULL, &r, e) < 0)
		return -1;
	rc = r.reason == RUN_OK ? 0 : tool_failed("scancel", &r, e);
	run_result_release(&r);
	return rc;
}

/* Node's line of every node's "scontrol show node -o", into buf: 1, or
 * 0 when the answer is not to be had (the caller asks of the node). */
static int
node_line(const char *node, char *buf, size_t len, int *listed)
{
	const char *argv[] = { "scontrol", "show", "node", "-o", NULL };
	size_t n = strlen(node);
	int ok = 0;

	shared_refresh(&nodes, argv);
	*listed = 0;
	if (nodes.out != NULL) {
		ok = 1;
		for (const char *p = nodes.out; *p; ) {
			size_t l = strcspn(p, "\n");

			if (strncmp(p, "NodeName=", 9) == 0 &&
			    strncmp(p + 9, node, n) == 0 && p[9 + n] == ' ') {
				snprintf(buf, len, "%.*s\n", (int)l, p);
				*listed = 1;
				break;
			}
			p += l + (p[l] == '\n');
		}
	}
	pthread_mutex_unlock(&nodes.mu);
	return ok;
}

int
slurm_node_down(const char *node, char *why, size_t len, struct err *e)
{
	const char *argv[] = { "scontrol", "show", "node", "-o", node, NULL };
	struct run_result r;
	char line[4096];
	int rc, listed;

	if (node_line(node, line, sizeof(line), &listed)) {
		if (listed)
			return slurm_parse_node(line, node, why, len);
		snprintf(why, len, "node %s is no longer in the cluster", node);
		return 1;
	}
	if (tool(argv, NULL, &r, e) < 0)
		return -1;
	if (r.reason != RUN_OK) {
		/* A node taken out of the configuration is gone too. */
		rc = r.errtail.data && strstr(r.errtail.data, "not found") ?
		    (snprintf(why, len, "node %s is no longer in the cluster",
		    node), 1) : tool_failed("scontrol", &r, e);
		run_result_release(&r);
		return rc;
	}
	rc = slurm_parse_node(r.out.data ? r.out.data : "", node, why, len);
	run_result_release(&r);
	return rc;
}

const char *
slurm_failure(const char *state)
{
	static const struct {
		const char *state, *failure;
	} map[] = {
		{ "TIMEOUT", "slurm-timeout" },
		{ "DEADLINE", "slurm-timeout" },
		{ "NODE_FAIL", "slurm-node-fail" },
		{ "BOOT_FAIL", "slurm-node-fail" },
		{ "PREEMPTED", "slurm-preempted" },
		{ "CANCELLED", "slurm-cancelled" },
		{ "FAILED", "slurm-failed" },
		{ "OUT_OF_MEMORY", "slurm-failed" },
		{ "REVOKED", "slurm-failed" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(*map); i++)
		if (strcmp(state, map[i].state) == 0)
			return map[i].failure;
	return NULL;
}

/* The bisectctl beside this program: the node runs the same build. */
static int
node_ctl(char *out, size_t len, struct err *e)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n < 0)
		return err_errno(e, "cannot find this program's path");
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	if ((size_t)snprintf(out, len, "%s/bisectctl", self) >= len)
		return err_set(e, "this program's path is too long");
	if (access(out, X_OK) < 0)
		return err_errno(e, "cannot run '%s' on the nodes", out);
	return 0;
}

/* Push the printf of fmt onto v; -1 when memory runs out. */
static int
pushf(struct strv *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
pushf(struct strv *v, const char *fmt, ...)
{
	char *s;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -1;
	rc = strv_push(v, s);
	free(s);
	return rc;
}

int
slurm_sbatch_argv(const struct conf_runner *rn, const char *id,
    const char *pinned, const char *script, struct strv *argv)
{
	int rc = 0;

	rc |= strv_push(argv, "sbatch");
	rc |= strv_push(argv, "--parsable");
	rc |= pushf(argv, "--job-name=bisectd-%.8s", id);
	rc |= pushf(argv, "--output=%s/%s.log", rn->spool, id);
	rc |= pushf(argv, "--chdir=%s", rn->spool);
	if (rn->partition)
		rc |= pushf(argv, "--partition=%s", rn->partition);
	if (rn->account)
		rc |= pushf(argv, "--account=%s", rn->account);
	if (rn->gres)
		rc |= pushf(argv, "--gres=%s", rn->gres);
	if (rn->constraint)
		rc |= pushf(argv, "--constraint=%s", rn->constraint);
	if (rn->time_limit_ms)
		rc |= pushf(argv, "--time=%lld", (long long)
		    ((rn->time_limit_ms + 59999) / 60000));
	if (pinned)
		rc |= pushf(argv, "--nodelist=%s", pinned);
	if (rn->exclusive)
		rc |= strv_push(argv, "--exclusive");
	rc |= strv_push(argv, script);
	return rc < 0 ? -1 : 0;
}

/* sbatch the request; *slurm_id gets the job's id. */
static int
submit(const struct slurm_measure_ctx *c, const struct conf_runner *rn,
    const char *id, const char *pinned, int64_t *slurm_id, struct err *e)
{
	char ctl[PATH_MAX], ectl[PATH_MAX + 16], econf[PATH_MAX + 32],
	    ereq[PATH_MAX + 32];
	const char *env[4] = { ectl, econf, ereq, NULL };
	char *script = fs_join(rn->spool, "node-run.sh"), *req;
	struct strv argv = STRV_INIT;
	struct run_result r;
	int rc;

	if (script == NULL)
		return err_set(e, "out of memory");
	if (node_ctl(ctl, sizeof(ctl), e) < 0 ||
	    fs_write_atomic(script, batch_script, sizeof(batch_script) - 1,
	    0755, e) < 0) {
		free(script);
		return -1;
	}
	req = remote_request_path(rn->spool, id);
	snprintf(ectl, sizeof(ectl), "BISECTD_CTL=%s", ctl);
	snprintf(econf, sizeof(econf), "BISECTD_CONFIG=%s", c->conf->path);
	snprintf(ereq, sizeof(ereq), "BISECTD_REQUEST=%s", req ? req : "");
	free(req);
	if (slurm_sbatch_argv(rn, id, pinned, script, &argv) < 0) {
		strv_clear(&argv);
		free(script);
		return err_set(e, "out of memory");
	}
	rc = tool((const char *const *)argv.v, env, &r, e);
	strv_clear(&argv);
	free(script);
	if (rc < 0)
		return -1;
	if (r.reason != RUN_OK)
		rc = tool_failed("sbatch", &r, e);
	else if (slurm_parse_jobid(r.out.data ? r.out.data : "", slurm_id) < 0)
		rc = err_set(e, "sbatch gave no job id");
	run_result_release(&r);
	return rc;
}

static void
say(const struct slurm_measure_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
say(const struct slurm_measure_ctx *c, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (c->note == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->note(c->arg, line);
}

int
slurm_pinned(struct store *s, int64_t bisect_id, char node[256],
    char hw_key[65], struct err *e)
{
	struct store_slurm_job row;
	int rc;

	node[0] = hw_key[0] = '\0';
	if ((rc = store_slurm_pin(s, bisect_id, &row, e)) != 0)
		return rc < 0 ? -1 : 0;
	snprintf(node, 256, "%s", row.node ? row.node : "");
	snprintf(hw_key, 65, "%s", row.hw_key ? row.hw_key : "");
	store_slurm_job_release(&row);
	return 0;
}

/* Submit a new job for the plan: 0 with *row, -1. */
static int
submit_new(const struct slurm_measure_ctx *c, const char *plan_json,
    const char *plan, int attempt, struct store_slurm_job *row,
    struct err *e)
{
	const struct conf_runner *rn = c->eng->runner;
	char id[REMOTE_ID_LEN + 1], node[256], key[65];
	struct err se = ERR_INIT;
	int64_t slurm_id = 0;
	int anchor;

	if (remote_new_id(id, e) < 0 ||
	    slurm_pinned(c->s, c->bisect_id, node, key, e) < 0 ||
	    store_slurm_anchor(c->s, c->bisect_id, &anchor, e) < 0 ||
	    remote_request_write(rn->spool, id, plan_json, anchor, e) < 0)
		return -1;
	memset(row, 0, sizeof(*row));
	row->request = id;
	row->plan = (char *)(uintptr_t)plan;
	row->bisect_id = c->bisect_id;
	row->job_id = c->job_id;
	row->engine = c->eng->name;
	row->runner = rn->name;
	row->attempt = attempt;
	row->pinned = node[0] ? node : NULL;
	if (store_slurm_add(c->s, row, &row->id, e) < 0)
		return -1;
	if (submit(c, rn, id, node[0] ? node : NULL, &slurm_id, &se) < 0) {
		store_slurm_fail(c->s, row->id, "slurm-submit", se.msg, NULL);
		return err_set(e, "%s", se.msg);
	}
	if (store_slurm_submitted(c->s, row->id, slurm_id, e) < 0)
		return -1;
	say(c, "Slurm job %lld submitted for request %.8s%s%s", (long long)
	    slurm_id, id, node[0] ? " on node " : "", node);
	return store_slurm_get(c->s, id, row, e) == 0 ? 0 : -1;
}

/* Whether the queue's job was asked to cancel. */
static int
cancel_asked(const struct slurm_measure_ctx *c)
{
	int yes = 0;

	return c->job_id && store_job_cancel_requested(c->s, c->job_id, &yes,
	    NULL) == 0 && yes;
}

/*
 * A stop asked: 1 with e set.  A cancel of the queue's job ends row's
 * Slurm job (when there is one); any other stop (SIGTERM) leaves it
 * running, to be taken up when the bisect resumes.
 */
static int
stopped(const struct slurm_measure_ctx *c, const struct store_slurm_job *row,
    struct err *e)
{
	if (c->stop == NULL || !*c->stop)
		return 0;
	if (cancel_asked(c)) {
		if (row == NULL)
			return err_set(e, "cancelled"), 1;
		slurm_cancel(row->slurm_id, NULL);
		store_slurm_fail(c->s, row->id, "slurm-cancelled", "the bisect "
		    "was cancelled", NULL);
		return err_set(e, "cancelled; Slurm job %lld scancelled",
		    (long long)row->slurm_id), 1;
	}
	if (row == NULL)
		return err_set(e, "interrupted"), 1;
	return err_set(e, "interrupted; Slurm job %lld keeps running and is "
	    "taken up again when the bisect resumes", (long long)
	    row->slurm_id), 1;
}

enum wait_end { WAIT_DONE, WAIT_RETRY, WAIT_FAIL };

/*
 * A job waiting for its pinned node, which drained or went down: it
 * would wait for ever.  Cancel it as a node failure, which ends the pin:
 * the next job goes to any node and starts a new anchor.  1 when it
 * did, 0 while the node is up, -1.
 */
static int
pinned_gone(const struct slurm_measure_ctx *c, const struct store_slurm_job *row,
    struct err *e)
{
	char why[512];
	int rc;

	if ((rc = slurm_node_down(row->pinned, why, sizeof(why), e)) <= 0)
		return rc;
	say(c, "Slurm job %lld waits for its pinned node, but %s: cancelled, "
	    "to be measured again on another node", (long long)row->slurm_id,
	    why);
	slurm_cancel(row->slurm_id, NULL);
	if (store_slurm_seen(c->s, row->id, "CANCELLED", row->pinned, e) < 0 ||
	    store_slurm_fail(c->s, row->id, "slurm-node-fail", why, e) < 0)
		return -1;
	return 1;
}

/*
 * Follow row's job to its end.  WAIT_DONE: ingested (hw_key set);
 * WAIT_RETRY: it failed in a way a new job may not (recorded); WAIT_FAIL
 * with e set: stop, cancel, or a failure no resubmission mends.
 */
static enum wait_end
wait_job(const struct slurm_measure_ctx *c, struct store_slurm_job *row,
    char hw_key[65], struct err *e)
{
	const struct conf_runner *rn = c->eng->runner;
	char last[32];
	struct err ie = ERR_INIT;

	snprintf(last, sizeof(last), "%s", row->state);
	for (;;) {
		struct slurm_state st;
		const char *failure;
		struct timespec ts = { 0, SLURM_POLL_MS * 1000000L };
		int rc;

		if (stopped(c, row, e))
			return WAIT_FAIL;
		if (slurm_poll(row->slurm_id, &st, e) < 0)
			return WAIT_FAIL;
		if (strcmp(st.state, last) != 0 && st.state[0]) {
			snprintf(last, sizeof(last), "%s", st.state);
			if (store_slurm_seen(c->s, row->id, st.state,
			    st.node[0] ? st.node : NULL, e) < 0)
				return WAIT_FAIL;
		}
		failure = slurm_failure(st.state);
		if (strcmp(st.state, "PENDING") == 0 && row->pinned &&
		    (rc = pinned_gone(c, row, e)) != 0)
			return rc < 0 ? WAIT_FAIL : WAIT_RETRY;
		if (st.state[0] && strcmp(st.state, "COMPLETED") != 0 &&
		    failure == NULL) {
			nanosleep(&ts, NULL);
			continue;
		}
		/* Ended, or forgotten by Slurm: the result decides. */
		rc = remote_ingest(c->conf, c->eng, c->s, rn->spool,
		    row->request, c->weights_id, c->weights_sha256, hw_key,
		    &ie);
		switch (rc) {
		case REMOTE_INGESTED:
			say(c, "Slurm job %lld on %s: result ingested",
			    (long long)row->slurm_id, st.node[0] ? st.node :
			    "its node");
			return WAIT_DONE;
		case REMOTE_NODE_ERROR:
			store_slurm_fail(c->s, row->id, "node-error", ie.msg,
			    NULL);
			err_set(e, "Slurm job %lld: %s", (long long)
			    row->slurm_id, ie.msg);
			return WAIT_FAIL;
		case REMOTE_REFUSED:
			say(c, "Slurm job %lld: %s", (long long)row->slurm_id,
			    ie.msg);
			store_slurm_fail(c->s, row->id, "result-refused",
			    ie.msg, NULL);
			return WAIT_RETRY;
		case REMOTE_MISSING:
			if (failure == NULL)
				failure = st.state[0] ? "slurm-failed" :
				    "slurm-lost";
			say(c, "Slurm job %lld ended %s (%s)%s%s", (long long)
			    row->slurm_id, st.state[0] ? st.state : "unknown",
			    failure, st.reason[0] ? ": " : "", st.reason);
			store_slurm_fail(c->s, row->id, failure, st.reason[0] ?
			    st.reason : st.state, NULL);
			return WAIT_RETRY;
		default:
			err_set(e, "%s", ie.msg);
			return WAIT_FAIL;
		}
	}
}

int
slurm_measure(const struct slurm_measure_ctx *c, const struct remote_plan *p,
    char hw_key[65], struct err *e)
{
	char *plan_json = NULL, plan[65];
	int rc = -1;

	if (remote_plan_json(c->conf, p, &plan_json, plan, e) < 0)
		return -1;
	for (;;) {
		struct store_slurm_job row;
		enum wait_end end;
		int n, found;

		if (stopped(c, NULL, e))
			break;
		if ((found = store_slurm_active(c->s, c->bisect_id, plan, &row,
		    e)) < 0)
			break;
		if (found == 0 && row.slurm_id == 0) {
			/* Died between recording and sbatch: unknown
			 * whether Slurm has it; a new request replaces it. */
			store_slurm_fail(c->s, row.id, "slurm-lost", "never "
			    "submitted", NULL);
			store_slurm_job_release(&row);
			continue;
		}
		if (found == 0)
			say(c, "taking up Slurm job %lld (request %.8s, %s)",
			    (long long)row.slurm_id, row.request, row.state);
		else {
			if (store_slurm_attempts(c->s, c->bisect_id, plan, &n,
			    e) < 0)
				break;
			if (n >= SLURM_MAX_ATTEMPTS) {
				err_set(e, "the measurement failed on Slurm %d "
				    "times; see bisectctl status", n);
				break;
			}
			if (submit_new(c, plan_json, plan, n + 1, &row, e) < 0)
				break;
		}
		end = wait_job(c, &row, hw_key, e);
		store_slurm_job_release(&row);
		if (end == WAIT_DONE)
			rc = 0;
		if (end != WAIT_RETRY)
			break;
	}
	free(plan_json);
	return rc;
}

int
slurm_cancel_job(struct store *s, int64_t job_id, int *n, struct err *e)
{
	struct store_slurm_jobs l;
	int rc = 0;

	*n = 0;
	if (store_slurm_list(s, job_id, 1, &l, e) < 0)
		return -1;
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].slurm_id > 0) {
			if (slurm_cancel(l.v[i].slurm_id, e) < 0)
				rc = -1;
			else
				(*n)++;
		}
	store_slurm_jobs_release(&l);
	return rc;
}
