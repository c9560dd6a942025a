/*
 * daemon.c: the daemon's loop: signals through a self-pipe, the control
 * socket, the schedules (cron per engine, the yardstick's period), alert
 * delivery, and the worker threads that run queued jobs: one at a time on
 * this machine, and beside it up to each Slurm runner's max-jobs bisects
 * whose measurements run on its nodes.  It owns the daemon lock
 * (DATABASE.pid) and the configuration in force.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "bisectd/jobs/compare_check.h"
#include "bisectd/jobs/job_run.h"
#include "bisectd/jobs/status.h"
#include "bisectd/jobs/watch.h"
#include "bisectd/notify/alert_sink.h"
#include "bisectd/process/cgroup.h"
#include "bisectd/remote/slurm.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "config/conf.h"
#include "daemon.h"
#include "daemon_int.h"
#include "http.h"

/* What the signal handlers set; the loop does the work. */
volatile sig_atomic_t got_term;
static volatile sig_atomic_t got_hup;
static int sig_pipe[2] = { -1, -1 };
atomic_int job_stop[DAEMON_WORKERS];


static void
on_signal(int sig)
{
	int saved = errno;

	if (sig == SIGHUP)
		got_hup = 1;
	else {
		got_term = 1;
		for (int i = 0; i < DAEMON_WORKERS; i++)
			job_stop[i] = 1;
	}
	if (sig_pipe[1] >= 0)
		(void)write(sig_pipe[1], "s", 1);
	errno = saved;
}

static int
make_pipe(int p[2], struct err *e)
{
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return err_errno(e, "cannot create a pipe");
	return 0;
}

static void
drain(int fd)
{
	char b[64];

	while (read(fd, b, sizeof(b)) > 0)
		;
}

/* Send the signals that stop or reload the daemon to handler. */
static void
stop_signals(void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int
catch_signals(struct err *e)
{
	if (make_pipe(sig_pipe, e) < 0)
		return -1;
	stop_signals(on_signal);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void
restore_signals(void)
{
	stop_signals(SIG_DFL);
	for (int i = 0; i < 2; i++)
		if (sig_pipe[i] >= 0) {
			close(sig_pipe[i]);
			sig_pipe[i] = -1;
		}
}

/* --- schedules --- */

static int
load_schedules(struct daemon *d, const struct conf *c, struct err *e)
{
	struct schedule *v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < c->nengines; i++) {
		const struct conf_engine *g = &c->engines[i];
		const char *why;
		struct schedule *sc;

		if (g->schedule == NULL)
			continue;
		if ((sc = realloc(v, (n + 1) * sizeof(*v))) == NULL) {
			free(v);
			return err_set(e, "out of memory");
		}
		v = sc;
		sc = &v[n++];
		snprintf(sc->name, sizeof(sc->name), "engine:%s", g->name);
		snprintf(sc->engine, sizeof(sc->engine), "%s", g->name);
		if (cron_parse(g->schedule, &sc->cron, &why) < 0) {
			free(v);
			return err_set(e, "engine %s: schedule '%s': %s",
			    g->name, g->schedule, why);
		}
	}
	free(d->sched);
	d->sched = v;
	d->nsched = n;
	return 0;
}

/* Whether a job of this kind, engine and arguments is waiting or running:
 * a schedule never stacks up copies of its job. */
static int
job_pending(struct daemon *d, const char *kind, const char *engine,
    const char *args, int *yes, struct err *e)
{
	struct store_jobs jobs;

	*yes = 0;
	if (store_job_list(d->store, 0, &jobs, e) < 0)
		return -1;
	for (size_t i = 0; i < jobs.n; i++)
		if (strcmp(jobs.v[i].kind, kind) == 0 &&
		    strcmp(jobs.v[i].engine, engine) == 0 &&
		    strcmp(jobs.v[i].args, args) == 0)
			*yes = 1;
	store_jobs_release(&jobs);
	return 0;
}

/*
 * Queue a watch job of engine with args (taken over: freed here), what
 * it is in the log's words, unless the same is queued already.
 */
static int
enqueue_args(struct daemon *d, const char *engine, char *args,
    const char *what, const char *why, struct err *e)
{
	int64_t id;
	int pending, rc = -1;

	if (args == NULL)
		return err_set(e, "out of memory");
	if (job_pending(d, "watch", engine, args, &pending, e) < 0)
		goto out;
	if (pending) {
		logm(d, DAEMON_LOG_INFO, "%s: %s is queued already", why,
		    what);
		rc = 0;
		goto out;
	}
	if (store_job_enqueue(d->store, "watch", engine, args, 0, &id, e) < 0)
		goto out;
	d->queued = 1;
	logm(d, DAEMON_LOG_INFO, "%s: queued %s as job %lld", why, what,
	    (long long)id);
	rc = 0;
out:
	free(args);
	return rc;
}

static int
enqueue_watch(struct daemon *d, const char *engine, int yardstick,
    const char *why, struct err *e)
{
	char what[300];

	snprintf(what, sizeof(what), "%s of %s", yardstick ?
	    "the yardstick check" : "a watch", engine);
	return enqueue_args(d, engine, job_run_watch_args(yardstick), what,
	    why, e);
}

/*
 * Queue each [compare] check that is due; *next the soonest one to come.
 * A check that failed stores no time of its own: it waits a period from
 * when it was queued rather than being queued again at once.
 */
static int
compare_schedules(struct daemon *d, time_t now, time_t *next,
    struct err *e)
{
	for (size_t i = 0; i < d->conf->ncompares; i++) {
		const struct conf_compare *k = &d->conf->compares[i];
		char name[300], what[300], engine[256];
		int64_t when, last, every = k->every_ms / 1000;

		if (compare_check_next(d->store, k, &when, e) < 0)
			return -1;
		snprintf(name, sizeof(name), "compare:%s", k->name);
		if (store_schedule_last(d->store, name, &last, e) == 0 &&
		    last + every > when)
			when = last + every;
		if (when <= now) {
			/* The job is filed under the table's first engine. */
			snprintf(engine, sizeof(engine), "%.*s",
			    (int)strcspn(k->engines.v[0], "@"),
			    k->engines.v[0]);
			snprintf(what, sizeof(what), "the compare check %s",
			    k->name);
			if (enqueue_args(d, engine, job_run_compare_args(
			    k->name), what, "compare", e) < 0 ||
			    store_schedule_set(d->store, name, now, e) < 0)
				return -1;
			when = now + every;
		}
		if (*next == 0 || when < *next)
			*next = (time_t)when;
	}
	return 0;
}

/*
 * Queue the jobs of schedules that are due, and say in *next when the
 * next one is (0: none).  A schedule that fired never before starts
 * counting now; one that missed several fire times while the daemon was
 * down fires once.
 */
static int
run_schedules(struct daemon *d, time_t *next, struct err *e)
{
	time_t now = time(NULL);
	int64_t last, when;
	int rc;

	*next = 0;
	for (size_t i = 0; i < d->nsched; i++) {
		struct schedule *sc = &d->sched[i];
		time_t fire;

		if ((rc = store_schedule_last(d->store, sc->name, &last,
		    e)) < 0)
			return -1;
		if (rc == 1) {
			last = now;
			if (store_schedule_set(d->store, sc->name, now, e) < 0)
				return -1;
		}
		if (cron_next(&sc->cron, (time_t)last, &fire) < 0)
			continue;
		if (fire <= now) {
			if (enqueue_watch(d, sc->engine, 0, "schedule",
			    e) < 0 ||
			    store_schedule_set(d->store, sc->name, now, e) < 0)
				return -1;
			if (cron_next(&sc->cron, now, &fire) < 0)
				continue;
		}
		if (*next == 0 || fire < *next)
			*next = fire;
	}
	if (compare_schedules(d, now, next, e) < 0)
		return -1;
	if (d->conf->yardstick_engine == NULL)
		return 0;
	if ((rc = yardstick_next(d->conf, d->store, &when, e)) < 0)
		return -1;
	if (rc == 1)
		return 0;
	/* A check that failed stores no time of its own: wait a period
	 * from when it was queued rather than queue it again at once. */
	if (store_schedule_last(d->store, "yardstick", &last, e) == 0 &&
	    last + d->conf->yardstick_every_ms / 1000 > when)
		when = last + d->conf->yardstick_every_ms / 1000;
	if (when <= now) {
		if (enqueue_watch(d, d->conf->yardstick_engine, 1, "yardstick",
		    e) < 0 || store_schedule_set(d->store, "yardstick", now,
		    e) < 0)
			return -1;
		when = now + d->conf->yardstick_every_ms / 1000;
	}
	if (*next == 0 || when < *next)
		*next = (time_t)when;
	return 0;
}

/* Say when each schedule fires next: at start-up and after a reload. */
static void
log_next_runs(struct daemon *d)
{
	struct err e = ERR_INIT;
	time_t now = time(NULL), next;
	char when[64];
	struct tm tm;

	for (size_t i = 0; i < d->nsched; i++) {
		const struct schedule *sc = &d->sched[i];
		int64_t last = 0;

		if (store_schedule_last(d->store, sc->name, &last, &e) < 0 ||
		    cron_next_due(&sc->cron, (time_t)last, now, &next) < 0)
			continue;
		if (next <= now) {
			logm(d, DAEMON_LOG_INFO, "schedule: the watch of %s "
			    "is due now (missed while no daemon ran)",
			    sc->engine);
			continue;
		}
		localtime_r(&next, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M %Z", &tm);
		logm(d, DAEMON_LOG_INFO, "schedule: the next watch of %s is "
		    "at %s", sc->engine, when);
	}
}

/* --- the control socket --- */

/* A running job for status; under d->mu. */
static json_t *
worker_json(const struct worker *w)
{
	const struct progress *g = &w->prog;
	json_t *j = json_pack("{s:I,s:s,s:s,s:o,s:I,s:s?}", "id",
	    (json_int_t)w->job.id, "kind", w->job.kind, "engine",
	    w->job.engine, "args", status_job_args_json(w->job.args),
	    "elapsed", (json_int_t)(time(NULL) - w->started), "runner",
	    w->runner[0] ? w->runner : NULL);

	if (g->valid) {
		json_t *p = json_pack("{s:s,s:s,s:I,s:I,s:i,s:i,s:b,"
		    "s:I,s:I,s:f}", "release", g->version, "cell", g->cell,
		    "cell_no", (json_int_t)g->cell_no, "cells",
		    (json_int_t)g->ncells, "rep", g->rep, "reps", g->reps,
		    "warmup", g->warmup, "run", (json_int_t)g->done + 1,
		    "runs", (json_int_t)g->total, "elapsed_s",
		    g->elapsed_s);

		json_object_set_new(p, "eta_s", isfinite(g->eta_s) ?
		    json_real(g->eta_s) : json_null());
		if (g->against[0])
			json_object_set_new(p, "confirming_against",
			    json_string(g->against));
		if (g->waiting[0])
			json_object_set_new(p, "waiting",
			    json_string(g->waiting));
		json_object_set_new(j, "progress", p);
	}
	if (g->building[0])
		json_object_set_new(j, "build", json_pack("{s:s,s:s%,s:s,s:i,"
		    "s:f}", "commit", g->building, "short", g->building,
		    (size_t)12, "subject", g->subject, "probe", g->probe,
		    "elapsed_s", clock_now_ns() / 1e9 - g->build_started));
	return j;
}

/*
 * The daemon's status: "jobs", every running job, oldest first, and
 * "job", the one on this machine (else the oldest), or null.
 */
static json_t *
daemon_status_json(struct daemon *d)
{
	const struct worker *first = NULL;
	json_t *o, *a = json_array();

	pthread_mutex_lock(&d->mu);
	o = json_pack("{s:b,s:I,s:I,s:I,s:s,s:s}", "ok", 1, "pid",
	    (json_int_t)getpid(), "started", (json_int_t)d->started, "uptime",
	    (json_int_t)(time(NULL) - d->started), "config", d->config_path,
	    "database", d->database);

	json_object_set_new(o, "reload_failed", d->reload_failed_at ?
	    json_pack("{s:I,s:s}", "at", (json_int_t)d->reload_failed_at,
	    "error", d->reload_error) : json_null());
	for (int i = 0; i < DAEMON_WORKERS; i++)
		if (d->w[i].busy && d->w[i].runner[0] == '\0')
			first = &d->w[i];
	/* The rest by job number. */
	for (int64_t last = 0;;) {
		const struct worker *next = NULL;

		for (int i = 0; i < DAEMON_WORKERS; i++)
			if (d->w[i].busy && d->w[i].job.id > last &&
			    (next == NULL || d->w[i].job.id < next->job.id))
				next = &d->w[i];
		if (next == NULL)
			break;
		if (first == NULL)
			first = next;
		json_array_append_new(a, worker_json(next));
		last = next->job.id;
	}
	json_object_set_new(o, "job", first ? worker_json(first) :
	    json_null());
	json_object_set_new(o, "jobs", a);
	pthread_mutex_unlock(&d->mu);
	return o;
}

/* --- what the HTTP server's thread asks --- */

static json_t *
http_status(void *arg)
{
	return daemon_status_json(arg);
}

static const struct conf *
http_conf_hold(void *arg)
{
	struct daemon *d = arg;

	pthread_mutex_lock(&d->conf_mu);
	return d->conf;
}

static unsigned
http_conf_generation(void *arg)
{
	struct daemon *d = arg;

	return d->conf_generation;
}

static void
http_conf_release(void *arg)
{
	struct daemon *d = arg;

	pthread_mutex_unlock(&d->conf_mu);
}

static void
http_log(void *arg, int level, const char *msg)
{
	struct daemon *d = arg;

	d->o->log(d->o->arg, level, msg);
}

static int
http_listen(struct daemon *d, struct err *e)
{
	struct http_opts ho;
	int port;

	if (d->conf->http == NULL)
		return 0;
	memset(&ho, 0, sizeof(ho));
	ho.address = d->conf->http_address;
	ho.port = d->conf->http_port;
	ho.database = d->database;
	ho.status = http_status;
	ho.conf_hold = http_conf_hold;
	ho.conf_release = http_conf_release;
	ho.conf_generation = http_conf_generation;
	ho.log = http_log;
	ho.arg = d;
	if (http_start(&ho, &d->http, &port, e) < 0)
		return -1;
	logm(d, DAEMON_LOG_INFO, "http: serving %s%s%s port %d, read-only",
	    strchr(ho.address, ':') ? "[" : "", ho.address,
	    strchr(ho.address, ':') ? "]" : "", port);
	if (!conf_http_loopback(d->conf))
		logm(d, DAEMON_LOG_WARNING, "http: %s %s", ho.address,
		    CONF_HTTP_EXPOSED);
	return 0;
}

static json_t *
cancel_json(struct daemon *d, int64_t id)
{
	struct err e = ERR_INIT;

	switch (store_job_cancel(d->store, id, &e)) {
	case STORE_CANCEL_DONE:
		logm(d, DAEMON_LOG_INFO, "job %lld: cancelled while queued",
		    (long long)id);
		return json_pack("{s:b,s:s}", "ok", 1, "state", "cancelled");
	case STORE_CANCEL_RUNNING:
		for (int i = 0; i < DAEMON_WORKERS; i++) {
			struct worker *w = &d->w[i];
			int n = 0;

			if (!w->busy || w->job.id != id)
				continue;
			logm(d, DAEMON_LOG_INFO, "job %lld: cancel asked; its "
			    "running engine is ended", (long long)id);
			w->cancel = 1;
			job_stop[i] = 1;
			/* Its measurements on Slurm end now, not later; the
			 * stop is set first, so none is resubmitted. */
			if (slurm_cancel_job(d->store, id, &n, &e) < 0)
				logm(d, DAEMON_LOG_WARNING, "job %lld: %s",
				    (long long)id, e.msg);
			else if (n > 0)
				logm(d, DAEMON_LOG_INFO, "job %lld: scancel of "
				    "%d Slurm job%s", (long long)id, n,
				    n == 1 ? "" : "s");
			return json_pack("{s:b,s:s}", "ok", 1, "state",
			    "cancelling");
		}
		return json_pack("{s:b,s:s}", "ok", 0, "error", "the job is "
		    "marked running but this daemon is not running it");
	case STORE_CANCEL_FINISHED:
		return json_pack("{s:b,s:s}", "ok", 0, "error", "the job has "
		    "ended already");
	case STORE_CANCEL_NONE:
		return json_pack("{s:b,s:s}", "ok", 0, "error", "no such job");
	}
	return json_pack("{s:b,s:s}", "ok", 0, "error", e.msg);
}

/* A control-socket problem, logged at most once per
 * DAEMON_CONTROL_LOG_MS: a flood of bad clients must not flood the log. */
static void
control_log(struct daemon *d, const char *msg)
{
	int64_t now = clock_now_ms();

	if (now < d->log_quiet_until) {
		d->log_muted++;
		return;
	}
	if (d->log_muted > 0)
		logm(d, DAEMON_LOG_WARNING, "control socket: %s (and %u more "
		    "problems not logged)", msg, d->log_muted);
	else
		logm(d, DAEMON_LOG_WARNING, "control socket: %s", msg);
	d->log_muted = 0;
	d->log_quiet_until = now + DAEMON_CONTROL_LOG_MS;
}

/* The reply to a complete request (rc 1) or a bad one (rc -1, e).
 * *woken says a wake-up was asked. */
static void
answer(struct daemon *d, struct control_client *c, int rc,
    const struct control_request *req, struct err *e, int *woken)
{
	json_t *reply;
	char *text;

	if (rc < 0) {
		control_log(d, e->msg);
		reply = json_pack("{s:b,s:s}", "ok", 0, "error", e->msg);
	} else if (req->cmd == CONTROL_STATUS)
		reply = daemon_status_json(d);
	else if (req->cmd == CONTROL_WAKE) {
		*woken = 1;
		reply = json_pack("{s:b}", "ok", 1);
	} else
		reply = cancel_json(d, req->job_id);
	text = reply ? json_dumps(reply, JSON_COMPACT | JSON_PRESERVE_ORDER) :
	    NULL;
	json_decref(reply);
	if (text == NULL || control_client_set_reply(c, text, e) < 0) {
		control_log(d, text ? e->msg : "cannot build a reply");
		control_client_end(c);
	}
	free(text);
}

/* Take up to DAEMON_ACCEPTS_PER_PASS new clients into free slots. */
static void
accept_clients(struct daemon *d)
{
	for (int n = 0; n < DAEMON_ACCEPTS_PER_PASS; n++) {
		struct control_client *slot = NULL;
		int fd;

		for (size_t i = 0; i < DAEMON_CLIENTS_MAX && !slot; i++)
			if (d->clients[i].fd < 0)
				slot = &d->clients[i];
		if (slot == NULL)
			return;	/* the rest wait in the backlog */
		fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC |
		    SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN) {
				char msg[128];

				snprintf(msg, sizeof(msg), "accept: %s",
				    strerror(errno));
				control_log(d, msg);
			}
			return;
		}
		control_client_start(slot, fd);
	}
}

/* One step for a client poll() found ready, or past its deadline. */
static void
serve_client(struct daemon *d, struct control_client *c, short revents,
    int *woken)
{
	struct control_request req;
	struct err e = ERR_INIT;
	int rc;

	if (clock_now_ms() > c->deadline_ms) {
		control_log(d, c->out ? "a client did not take its reply in "
		    "time" : "a client sent no request in time");
		control_client_end(c);
		return;
	}
	if (revents == 0)
		return;
	if (c->out == NULL) {
		if ((rc = control_client_read(c, &req, &e)) == 0)
			return;
		answer(d, c, rc, &req, &e, woken);
		if (c->fd < 0)
			return;
	}
	rc = control_client_write(c, &e);
	if (rc < 0)
		control_log(d, e.msg);
	if (rc != 0)
		control_client_end(c);
}

/* The earliest client deadline, as a poll() timeout no longer than ms. */
static int
clients_timeout(const struct daemon *d, int ms)
{
	int64_t now = clock_now_ms();

	for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++) {
		int64_t left;

		if (d->clients[i].fd < 0)
			continue;
		left = d->clients[i].deadline_ms - now + 1;
		if (left < 0)
			left = 0;
		if (ms < 0 || left < ms)
			ms = (int)left;
	}
	return ms;
}

/* --- reload, start, stop --- */

static void
reload_failed(struct daemon *d, const char *first)
{
	d->reload_failed_at = time(NULL);
	snprintf(d->reload_error, sizeof(d->reload_error), "%.1000s", first);
}

static void
reload(struct daemon *d)
{
	struct strv problems = STRV_INIT;
	struct err e = ERR_INIT;
	struct conf *c, **r;

	logm(d, DAEMON_LOG_INFO, "reloading '%s'", d->config_path);
	if (conf_load(d->config_path, &c, &problems) < 0) {
		for (size_t i = 0; i < problems.n; i++)
			logm(d, DAEMON_LOG_ERR, "%s", problems.v[i]);
		logm(d, DAEMON_LOG_ERR, "the configuration has errors; the old "
		    "one stays in force");
		reload_failed(d, problems.n > 0 ? problems.v[0] :
		    "the configuration has errors");
		strv_clear(&problems);
		return;
	}
	if (load_schedules(d, c, &e) < 0) {
		logm(d, DAEMON_LOG_ERR, "%s; the old configuration stays in "
		    "force", e.msg);
		reload_failed(d, e.msg);
		conf_free(c);
		load_schedules(d, d->conf, &e);
		return;
	}
	d->reload_failed_at = 0;
	d->reload_error[0] = '\0';
	if (strcmp(c->database, d->database) != 0 ||
	    strcmp(c->socket, d->conf->socket) != 0 ||
	    (c->http == NULL) != (d->conf->http == NULL) ||
	    (c->http && strcmp(c->http, d->conf->http) != 0))
		logm(d, DAEMON_LOG_WARNING, "database, socket and http changes "
		    "take effect at the next start");
	pthread_mutex_lock(&d->conf_mu);
	if (d->nbusy > 0) {
		/* Running jobs keep the configuration they started with. */
		r = realloc(d->retired, (d->nretired + 1) * sizeof(*r));
		if (r == NULL) {
			pthread_mutex_unlock(&d->conf_mu);
			conf_free(c);
			load_schedules(d, d->conf, &e);
			logm(d, DAEMON_LOG_ERR, "reload: out of memory");
			return;
		}
		d->retired = r;
		d->retired[d->nretired++] = d->conf;
	} else
		conf_free(d->conf);
	d->conf = c;
	d->conf_generation++;
	pthread_mutex_unlock(&d->conf_mu);
	logm(d, DAEMON_LOG_INFO, "configuration reloaded: %zu engines, %zu "
	    "schedules", c->nengines, d->nsched);
	log_next_runs(d);
}

/*
 * Alone in a cgroup delegated to us (systemd's Delegate=yes), move into
 * a leaf of it before any run, so that runs' cgroups beside the leaf
 * can have the memory controller.  Said when it happened or failed;
 * started by hand, in a shell's cgroup, nothing is moved.
 */
static void
leave_delegated_cgroup(struct daemon *d)
{
	char where[PATH_MAX], why[512];

	switch (cgroup_leave_delegated(DAEMON_CGROUP_LEAF, where,
	    sizeof(where), why, sizeof(why))) {
	case 1:
		logm(d, DAEMON_LOG_INFO, "cgroup: moved into '%s'; runs get "
		    "cgroups beside it", where);
		break;
	case -1:
		logm(d, DAEMON_LOG_WARNING, "cgroup: %s; runs' memory caps "
		    "may not apply", why);
		break;
	}
}

static int
start(struct daemon *d, struct err *e)
{
	struct benchlock_holder h;
	char *dir = strdup(d->database), *slash;
	int rc, n;

	leave_delegated_cgroup(d);
	/* The database's folder holds the lock files: make it first. */
	if (dir == NULL)
		return err_set(e, "out of memory");
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (fs_mkdirs(dir, 0755, e) < 0) {
			free(dir);
			return -1;
		}
	}
	free(dir);
	/* The cache holds what runs: other users have no business in it.
	 * Made private here, before anything is fetched into it. */
	if (d->conf->cache != NULL && fs_mkdirs(d->conf->cache, 0700, e) < 0)
		return -1;
	snprintf(d->lock_path, sizeof(d->lock_path), "%s.pid", d->database);
	snprintf(d->bench_lock_path, sizeof(d->bench_lock_path), "%s",
	    benchlock_path(d->conf->bench_lock));
	rc = benchlock_try(&d->lock, d->lock_path, "bisectd", &h, e);
	if (rc < 0)
		return -1;
	if (rc == 1)
		return err_set(e, "another bisectd (pid %ld) is running on "
		    "'%s'; stop it first", (long)h.pid, d->database);
	if (store_open(d->database, &d->store, e) < 0)
		return -1;
	store_set_busy_wait(d->store, DAEMON_LOOP_BUSY_MS, NULL);
	if (store_job_recover(d->store, &n, e) < 0)
		return -1;
	if (n > 0)
		logm(d, DAEMON_LOG_INFO, "%d job%s left running by a stopped "
		    "daemon put back in the queue", n, n == 1 ? "" : "s");
	if (load_schedules(d, d->conf, e) < 0)
		return -1;
	if (control_listen(d->conf->socket, d->conf->socket_group,
	    &d->listen_fd, e) < 0)
		return -1;
	if (make_pipe(d->done_pipe, e) < 0)
		return -1;
	return http_listen(d, e);
}

static void
deliver_alerts(struct daemon *d)
{
	struct alert_opts ao;
	struct err e = ERR_INIT;

	if (d->conf->nalerts == 0)
		return;
	memset(&ao, 0, sizeof(ao));
	ao.log = d->o->log;
	ao.arg = d->o->arg;
	if (alert_deliver_pending(d->conf, d->store, &ao, &e) < 0)
		logm(d, DAEMON_LOG_ERR, "alerts: %s", e.msg);
}

/* Milliseconds to sleep until `when` (0: forever), capped so a clock
 * change is noticed within the hour. */
static int
timeout_until(time_t when)
{
	time_t now = time(NULL);

	if (when == 0)
		return 3600 * 1000;
	if (when <= now)
		return 0;
	return when - now > 3600 ? 3600 * 1000 : (int)(when - now) * 1000;
}

/*
 * What a pass of the loop does when the store failed: a lock another
 * process holds is waited out (said once, then again when it is free)
 * and the pass tried again in a second; anything else ends the daemon.
 * 0 to go on, -1 to stop.
 */
static int
store_trouble(struct daemon *d, struct err *e)
{
	if (!store_last_busy(d->store))
		return -1;
	if (!d->store_waiting)
		logm(d, DAEMON_LOG_WARNING, "waiting for the database: %s",
		    e->msg);
	d->store_waiting = 1;
	return 0;
}

static int
loop(struct daemon *d, struct err *e)
{
	int check_queue = 1;

	for (;;) {
		struct pollfd p[3 + DAEMON_CLIENTS_MAX];
		struct control_client *polled[DAEMON_CLIENTS_MAX];
		time_t next = 0;
		int64_t due;
		int woken = 0, rc, np = 3, failed;

		if (got_hup) {
			got_hup = 0;
			reload(d);
		}
		if (got_term && !d->stopping) {
			d->stopping = 1;
			logm(d, DAEMON_LOG_INFO, "stopping%s", d->nbusy ?
			    ": the running engines are ended" : "");
		}
		/* failed: a pass that met a locked store tries again soon. */
		failed = ends_waiting(d) && retry_ends(d, e) < 0;
		if (failed && store_trouble(d, e) < 0)
			return -1;
		if (d->stopping && d->nbusy == 0)
			return 0;
		if (!d->stopping && !failed) {
			if (run_schedules(d, &next, e) < 0) {
				if (store_trouble(d, e) < 0)
					return -1;
				failed = 1;
			}
			if (d->queued) {
				d->queued = 0;
				check_queue = 1;
			}
			if (!failed && d->conf->nalerts > 0) {
				deliver_alerts(d);
				if (alert_next_due(d->conf, d->store, &due,
				    e) < 0) {
					if (store_trouble(d, e) < 0)
						return -1;
					failed = 1;
				} else if (due > 0 && (next == 0 ||
				    due < next))
					next = (time_t)due;
			}
			if (!failed && check_queue) {
				if (start_jobs(d, e) < 0) {
					if (store_trouble(d, e) < 0)
						return -1;
					failed = 1;
				} else
					/* Look again when the job ends or a
					 * wake-up or a schedule says there is
					 * new work. */
					check_queue = 0;
			}
		}
		if (!failed && d->store_waiting && !ends_waiting(d)) {
			logm(d, DAEMON_LOG_INFO, "the database is free again");
			d->store_waiting = 0;
		}
		/* A locked store, or an end still to record: again soon. */
		if (failed || ends_waiting(d))
			next = time(NULL) + 1;
		p[0].fd = sig_pipe[0];
		p[1].fd = d->listen_fd;
		p[2].fd = d->done_pipe[0];
		for (int i = 0; i < 3; i++) {
			p[i].events = POLLIN;
			p[i].revents = 0;
		}
		for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++) {
			struct control_client *c = &d->clients[i];

			if (c->fd < 0)
				continue;
			polled[np - 3] = c;
			p[np].fd = c->fd;
			p[np].events = c->out ? POLLOUT : POLLIN;
			p[np].revents = 0;
			np++;
		}
		rc = poll(p, (nfds_t)np, clients_timeout(d, d->stopping &&
		    !ends_waiting(d) ? -1 : timeout_until(next)));
		if (rc < 0 && errno != EINTR)
			return err_errno(e, "poll");
		/* Clients first: a deadline may have passed without events. */
		for (int i = 3; i < np; i++)
			serve_client(d, polled[i - 3], rc > 0 ? p[i].revents :
			    0, &woken);
		if (woken)
			check_queue = 1;
		if (rc <= 0)
			continue;
		if (p[0].revents)
			drain(sig_pipe[0]);
		if (p[2].revents) {
			if (finish_jobs(d, e) < 0 && store_trouble(d, e) < 0)
				return -1;
			check_queue = 1;
		}
		if (p[1].revents)
			accept_clients(d);
	}
}

int
daemon_run(struct conf *c, const struct daemon_opts *o, struct err *e)
{
	struct daemon d;
	int rc = -1;

	memset(&d, 0, sizeof(d));
	d.o = o;
	d.conf = c;
	d.listen_fd = -1;
	for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++)
		d.clients[i].fd = -1;
	d.done_pipe[0] = d.done_pipe[1] = -1;
	d.lock.fd = -1;
	d.started = time(NULL);
	pthread_mutex_init(&d.mu, NULL);
	pthread_mutex_init(&d.conf_mu, NULL);
	got_term = got_hup = 0;
	for (int i = 0; i < DAEMON_WORKERS; i++) {
		d.w[i].index = i;
		d.w[i].d = &d;
		job_stop[i] = 0;
	}
	d.database = strdup(c->database);
	d.config_path = strdup(c->path);
	if (d.database == NULL || d.config_path == NULL) {
		err_set(e, "out of memory");
		goto out;
	}
	if (catch_signals(e) < 0)
		goto out;
	if (start(&d, e) < 0)
		goto out;
	logm(&d, DAEMON_LOG_INFO, "started: pid %ld, config '%s', database "
	    "'%s', socket '%s'", (long)getpid(), d.config_path, d.database,
	    d.conf->socket);
	log_next_runs(&d);
	rc = loop(&d, e);
	http_stop(d.http);
	d.http = NULL;
	for (int i = 0; i < DAEMON_WORKERS; i++)
		job_stop[i] = 1;
	for (int i = 0; i < DAEMON_WORKERS; i++) {
		struct worker *w = &d.w[i];

		if (!w->busy)
			continue;
		/* A store failure in the loop: stop the jobs and wait. */
		pthread_join(w->thread, NULL);
		store_job_requeue(d.store, w->job.id, NULL);
		store_job_release(&w->job);
		free(w->result);
	}
	if (rc == 0)
		logm(&d, DAEMON_LOG_INFO, "stopped");
out:
	http_stop(d.http);
	for (size_t i = 0; i < DAEMON_CLIENTS_MAX; i++)
		if (d.clients[i].fd >= 0)
			control_client_end(&d.clients[i]);
	if (d.listen_fd >= 0) {
		close(d.listen_fd);
		unlink(d.conf->socket);
	}
	for (int i = 0; i < 2; i++)
		if (d.done_pipe[i] >= 0)
			close(d.done_pipe[i]);
	restore_signals();
	store_close(d.store);
	benchlock_release(&d.lock);
	for (size_t i = 0; i < d.nretired; i++)
		conf_free(d.retired[i]);
	free(d.retired);
	free(d.sched);
	free(d.database);
	free(d.config_path);
	conf_free(d.conf);
	pthread_mutex_destroy(&d.mu);
	pthread_mutex_destroy(&d.conf_mu);
	return rc;
}
