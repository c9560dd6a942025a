/*
 * workers.c: the threads that run queued jobs, one at a time on this
 * machine and beside it up to each Slurm runner's max-jobs bisects; their
 * progress for status, and the loop's taking in of each one that ended
 * (see daemon_int.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bisectd/jobs/job_run.h"
#include "bisectd/measure/bench.h"
#include "common/clock.h"
#include "common/err.h"
#include "config/conf.h"
#include "daemon.h"
#include "daemon_int.h"

static void
worker_log(void *arg, int level, const char *msg)
{
	struct worker *w = arg;

	logm(w->d, level, "job %lld: %s", (long long)w->job.id, msg);
}

static void
worker_progress(void *arg, const struct bench_progress *p)
{
	struct worker *w = arg;
	struct progress *g = &w->prog;

	pthread_mutex_lock(&w->d->mu);
	if (p->building) {
		/* No run until the build ends: the last run's figures
		 * would be stale. */
		g->valid = 0;
		if (strcmp(g->building, p->building) != 0)
			g->build_started = clock_now_ns() / 1e9;
		snprintf(g->building, sizeof(g->building), "%s", p->building);
		snprintf(g->subject, sizeof(g->subject), "%s", p->subject ?
		    p->subject : "");
		g->probe = p->probe;
		pthread_mutex_unlock(&w->d->mu);
		return;
	}
	g->building[0] = '\0';
	g->valid = 1;
	snprintf(g->version, sizeof(g->version), "%s", p->version ?
	    p->version : "");
	snprintf(g->against, sizeof(g->against), "%s", p->against ?
	    p->against : "");
	if (p->c)
		snprintf(g->cell, sizeof(g->cell), "%s%d%s%s", p->c->kind,
		    strcmp(p->c->kind, "pp") == 0 ? p->c->prompt : p->c->gen,
		    p->c->content[0] ? "/" : "", p->c->content);
	g->rep = p->rep;
	g->reps = p->reps;
	g->warmup = p->warmup;
	g->cell_no = p->cell;
	g->ncells = p->ncells;
	g->done = p->done;
	g->total = p->total;
	g->elapsed_s = p->elapsed_s;
	g->eta_s = p->eta_s;
	snprintf(g->waiting, sizeof(g->waiting), "%s", p->waiting ?
	    p->waiting : "");
	pthread_mutex_unlock(&w->d->mu);
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct job_run_opts qo;
	struct err e = ERR_INIT;
	struct store *s = NULL;
	unsigned char idx = (unsigned char)w->index;

	memset(&qo, 0, sizeof(qo));
	qo.stop = &job_stop[w->index];
	qo.log = worker_log;
	qo.progress = worker_progress;
	qo.arg = w;
	qo.lock_path = w->d->bench_lock_path;
	/* Each thread has its own SQLite connection. */
	if (store_open(w->d->database, &s, &e) == 0)
		store_set_busy_wait(s, DAEMON_JOB_BUSY_MS,
		    &job_stop[w->index]);
	if (s == NULL) {
		w->outcome = JOB_RUN_FINISHED;
		w->exit_code = 1;
		w->result = strdup(e.msg);
	} else {
		w->outcome = job_run(w->conf, s, &w->job, &qo, &w->exit_code,
		    &w->result);
		store_close(s);
	}
	(void)write(w->d->done_pipe[1], &idx, 1);
	return NULL;
}

/* Whether a job may start beside those running: one on this machine at a
 * time; on a Slurm runner, fewer than its max-jobs. */
static int
job_fits(const struct daemon *d, const struct conf_runner *rn)
{
	int n = 0;

	for (int i = 0; i < DAEMON_WORKERS; i++) {
		const struct worker *w = &d->w[i];

		if (!w->busy)
			continue;
		if (rn == NULL ? w->runner[0] == '\0' :
		    strcmp(w->runner, rn->name) == 0)
			n++;
	}
	return n < (rn ? rn->max_jobs : 1);
}

/* Start the queued job id in worker w: 0, 1 if it was taken meanwhile. */
static int
start_job(struct daemon *d, struct worker *w, int64_t id,
    const struct conf_runner *rn, struct err *e)
{
	sigset_t all, old;
	int rc;

	if ((rc = store_job_claim(d->store, id, &w->job, e)) != 0)
		return rc;
	logm(d, DAEMON_LOG_INFO, "job %lld: %s %s %s%s%s", (long long)
	    w->job.id, w->job.kind, w->job.engine, w->job.args, rn ?
	    ", measured on Slurm runner " : "", rn ? rn->name : "");
	job_stop[w->index] = got_term;
	w->d = d;
	w->cancel = 0;
	w->result = NULL;
	w->conf = d->conf;
	w->started = time(NULL);
	snprintf(w->runner, sizeof(w->runner), "%s", rn ? rn->name : "");
	pthread_mutex_lock(&d->mu);
	memset(&w->prog, 0, sizeof(w->prog));
	pthread_mutex_unlock(&d->mu);
	/* Signals are the loop's: the workers run with them blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->thread, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		err_errno(e, "cannot start a worker thread");
		store_job_requeue(d->store, w->job.id, NULL);
		store_job_release(&w->job);
		return -1;
	}
	pthread_mutex_lock(&d->mu);
	w->busy = 1;
	d->nbusy++;
	pthread_mutex_unlock(&d->mu);
	return 0;
}

/*
 * Start the queued jobs that fit, by priority then age: a job that must
 * wait (this machine is busy, its runner is full) lets the ones behind
 * it go first.
 */
int
start_jobs(struct daemon *d, struct err *e)
{
	struct store_jobs jobs;
	int rc = 0;

	if (d->nbusy == DAEMON_WORKERS)
		return 0;
	if (store_job_list(d->store, 0, &jobs, e) < 0)
		return -1;
	for (size_t i = 0; i < jobs.n && rc == 0; i++) {
		const struct conf_runner *rn;
		struct worker *w = NULL;

		if (strcmp(jobs.v[i].state, "queued") != 0)
			continue;
		rn = job_run_slurm(d->conf, &jobs.v[i]);
		if (!job_fits(d, rn))
			continue;
		for (int k = 0; k < DAEMON_WORKERS && w == NULL; k++)
			if (!d->w[k].busy)
				w = &d->w[k];
		if (w == NULL)
			break;
		if (start_job(d, w, jobs.v[i].id, rn, e) < 0)
			rc = -1;
	}
	store_jobs_release(&jobs);
	return rc;
}

/* Free the configurations a reload replaced that no job uses now. */
static void
free_retired(struct daemon *d)
{
	size_t k = 0;

	for (size_t i = 0; i < d->nretired; i++) {
		int used = 0;

		for (int j = 0; j < DAEMON_WORKERS; j++)
			used |= d->w[j].busy && d->w[j].conf == d->retired[i];
		if (used)
			d->retired[k++] = d->retired[i];
		else
			conf_free(d->retired[i]);
	}
	d->nretired = k;
	if (k == 0) {
		free(d->retired);
		d->retired = NULL;
	}
}

/* How worker w's job ended, into the store: -1 with e when the store
 * failed (store_last_busy() says whether for a lock). */
static int
record_end(struct daemon *d, struct worker *w, struct err *e)
{
	const char *state;
	int asked = 0, rc;

	if (w->outcome == JOB_RUN_STOPPED) {
		if (store_job_cancel_requested(d->store, w->job.id, &asked,
		    e) < 0)
			asked = 0;
		if (w->cancel || asked) {
			if ((rc = store_job_finish(d->store, w->job.id,
			    "cancelled", 1, "cancelled", e)) == 0)
				logm(d, DAEMON_LOG_INFO, "job %lld: cancelled",
				    (long long)w->job.id);
		} else if ((rc = store_job_requeue(d->store, w->job.id,
		    e)) == 0)
			logm(d, DAEMON_LOG_INFO, "job %lld: stopped; back in "
			    "the queue", (long long)w->job.id);
		return rc;
	}
	state = w->exit_code == 0 || w->exit_code == 3 || w->exit_code == 4 ?
	    "done" : "failed";
	if ((rc = store_job_finish(d->store, w->job.id, state, w->exit_code,
	    w->result, e)) == 0)
		logm(d, w->exit_code == 1 ? DAEMON_LOG_WARNING :
		    DAEMON_LOG_INFO, "job %lld: %s, exit code %d%s%s",
		    (long long)w->job.id, state, w->exit_code,
		    w->exit_code == 1 && w->result ? ": " : "",
		    w->exit_code == 1 && w->result ? w->result : "");
	return rc;
}

/*
 * Worker w said it is done: record how its job ended, and free it.  A
 * store another process holds locked keeps the end (and the worker's
 * slot) until retry_ends() records it: nothing of the job is lost, and
 * the daemon goes on.
 */
static int
finish_job(struct daemon *d, struct worker *w, struct err *e)
{
	int rc;

	if (!w->joined) {
		pthread_join(w->thread, NULL);
		w->joined = 1;
	}
	if ((rc = record_end(d, w, e)) < 0 && store_last_busy(d->store)) {
		if (!w->end_waiting)
			logm(d, DAEMON_LOG_WARNING, "job %lld: ended; waiting "
			    "to record it: %s", (long long)w->job.id, e->msg);
		w->end_waiting = 1;
		return 0;
	}
	if (w->end_waiting && rc == 0)
		logm(d, DAEMON_LOG_INFO, "job %lld: its end is recorded, the "
		    "database free again", (long long)w->job.id);
	pthread_mutex_lock(&d->mu);
	w->busy = 0;
	d->nbusy--;
	pthread_mutex_unlock(&d->mu);
	w->joined = w->end_waiting = 0;
	free_retired(d);
	free(w->result);
	w->result = NULL;
	store_job_release(&w->job);
	return rc;
}

int
retry_ends(struct daemon *d, struct err *e)
{
	for (int i = 0; i < DAEMON_WORKERS; i++)
		if (d->w[i].busy && d->w[i].end_waiting &&
		    finish_job(d, &d->w[i], e) < 0)
			return -1;
	return 0;
}

int
ends_waiting(const struct daemon *d)
{
	for (int i = 0; i < DAEMON_WORKERS; i++)
		if (d->w[i].busy && d->w[i].end_waiting)
			return 1;
	return 0;
}

/* The workers whose indexes wait in done_pipe: finish their jobs. */
int
finish_jobs(struct daemon *d, struct err *e)
{
	unsigned char b[64];
	ssize_t n;

	while ((n = read(d->done_pipe[0], b, sizeof(b))) > 0)
		for (ssize_t i = 0; i < n; i++)
			if (b[i] < DAEMON_WORKERS && d->w[b[i]].busy &&
			    !d->w[b[i]].end_waiting &&
			    finish_job(d, &d->w[b[i]], e) < 0)
				return -1;
	return 0;
}
