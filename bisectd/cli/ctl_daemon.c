/*
 * ctl_daemon.c: the bisectctl commands that speak to the daemon: status
 * (the daemon over its socket, the queue from the store), cancel, watch,
 * and the wake-up sent after queueing a job.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

#include "bisectd/daemon/control.h"
#include "ctl.h"
#include "common/err.h"
#include "bisectd/jobs/compare_check.h"
#include "bisectd/jobs/job_run.h"
#include "bisectd/jobs/status.h"
#include "bisectd/jobs/watch.h"
#include "bisectd/report/fields.h"
#include "bisectd/search/verdict_json.h"
#include "config/cron.h"
#include "store/store.h"

void
ctl_wake(struct ctl *c)
{
	struct err e = ERR_INIT;
	char *reply = NULL;
	int rc;

	rc = control_call(c->conf->socket, "wake", &reply, &e);
	free(reply);
	if (rc == 0)
		printf("bisectd is running and takes it from the queue now\n");
	else if (rc == 1)
		fprintf(stderr, "bisectctl: no daemon is running; 'bisectd -c "
		    "%s' runs the queue\n", c->conf->path);
	else if (rc < 0)
		fprintf(stderr, "bisectctl: cannot wake the daemon: %s\n",
		    e.msg);
}

/* Ask the daemon; 0 with *out (a JSON object), 1 if none runs, -1. */
static int
ask(struct ctl *c, const char *request, json_t **out)
{
	struct err e = ERR_INIT;
	json_error_t je;
	char *reply;
	int rc;

	*out = NULL;
	rc = control_call(c->conf->socket, request, &reply, &e);
	if (rc != 0) {
		if (rc < 0)
			ctl_error("%s", e.msg);
		return rc;
	}
	*out = json_loads(reply, 0, &je);
	free(reply);
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		ctl_error("the daemon's reply is not a JSON object");
		return -1;
	}
	return 0;
}

static void
print_duration(char *buf, size_t len, double s)
{
	rep_span((long long)s, buf, len);
}

/* A running job: "running: job N, ..." and its progress. */
static void
print_running(json_t *job)
{
	json_t *p;
	char el[32], eta[32], args[512];
	const char *runner = json_string_value(json_object_get(job, "runner"));

	print_duration(el, sizeof(el), (double)json_integer_value(
	    json_object_get(job, "elapsed")));
	/* An object; a string from a daemon of before that. */
	status_job_args_text(json_string_value(json_object_get(job, "kind")),
	    json_object_get(job, "args"), args, sizeof(args));
	printf("running: job %lld, %s %s%s%s, for %s%s%s\n",
	    (long long)json_integer_value(json_object_get(job, "id")),
	    json_string_value(json_object_get(job, "kind")),
	    json_string_value(json_object_get(job, "engine")),
	    args[0] ? " " : "", args, el, runner ? ", on Slurm runner " : "",
	    runner ? ctl_safe(runner) : "");
	if (json_is_object(p = json_object_get(job, "build"))) {
		print_duration(el, sizeof(el), json_number_value(
		    json_object_get(p, "elapsed_s")));
		printf("  building commit %s \"%s\" for probe %lld, for %s\n",
		    ctl_safe(json_string_value(json_object_get(p, "short"))),
		    ctl_safe(json_string_value(json_object_get(p, "subject"))),
		    (long long)json_integer_value(json_object_get(p, "probe")),
		    el);
		return;
	}
	if (!json_is_object(p = json_object_get(job, "progress"))) {
		printf("  (%s)\n", runner ? "no result ingested yet: see the "
		    "Slurm jobs below" : "no run started yet: listing or "
		    "downloading releases");
		return;
	}
	if (json_is_real(json_object_get(p, "eta_s")))
		print_duration(eta, sizeof(eta), json_real_value(
		    json_object_get(p, "eta_s")));
	else
		snprintf(eta, sizeof(eta), "unknown");
	if (json_is_string(json_object_get(p, "confirming_against")))
		printf("  confirming %s against %s:\n",
		    ctl_safe(json_string_value(json_object_get(p, "release"))),
		    ctl_safe(json_string_value(json_object_get(p,
		    "confirming_against"))));
	printf("  release %s, cell %s (%lld/%lld), %s %lld/%lld, run %lld/%lld, "
	    "ETA %s\n", ctl_safe(json_string_value(json_object_get(p,
	    "release"))), json_string_value(json_object_get(p, "cell")),
	    (long long)json_integer_value(json_object_get(p, "cell_no")),
	    (long long)json_integer_value(json_object_get(p, "cells")),
	    json_is_true(json_object_get(p, "warmup")) ? "warm-up" : "rep",
	    (long long)json_integer_value(json_object_get(p, "rep")),
	    (long long)json_integer_value(json_object_get(p, "reps")),
	    (long long)json_integer_value(json_object_get(p, "run")),
	    (long long)json_integer_value(json_object_get(p, "runs")), eta);
	if (json_string_value(json_object_get(p, "waiting")))
		printf("  %s\n", json_string_value(json_object_get(p,
		    "waiting")));
}

static void
print_daemon(json_t *d)
{
	json_t *job = json_object_get(d, "job"), *jobs = json_object_get(d,
	    "jobs"), *x;
	json_t *failed = json_object_get(d, "reload_failed");
	char up[32];
	size_t i;

	print_duration(up, sizeof(up), (double)json_integer_value(
	    json_object_get(d, "uptime")));
	printf("daemon: running, pid %lld, up %s, config %s\n",
	    (long long)json_integer_value(json_object_get(d, "pid")), up,
	    json_string_value(json_object_get(d, "config")));
	if (json_is_object(failed)) {
		time_t t = (time_t)json_integer_value(json_object_get(failed,
		    "at"));
		char when[32];
		struct tm tm;

		localtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		printf("last reload failed at %s: %s\n  (the configuration "
		    "loaded before it stays in force)\n", when,
		    ctl_safe(json_string_value(json_object_get(failed,
		    "error"))));
	}
	if (!json_is_object(job)) {
		printf("running: nothing\n");
		return;
	}
	/* A daemon of before "jobs" names its one job alone. */
	if (!json_is_array(jobs) || json_array_size(jobs) == 0) {
		print_running(job);
		return;
	}
	json_array_foreach(jobs, i, x)
		print_running(x);
}

/* "2026-12-02 03:00 CET", local time. */
static const char *
local_time(time_t t, char *buf, size_t len)
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M %Z", &tm);
	return buf;
}

const char *
ctl_next_text(time_t next, time_t now, char *buf, size_t len)
{
	char when[64], in[32];

	if (next <= now)
		snprintf(buf, len, "due now (missed while no daemon ran)");
	else {
		print_duration(in, sizeof(in), (double)(next - now));
		snprintf(buf, len, "%s (in %s)", local_time(next, when,
		    sizeof(when)), in);
	}
	return buf;
}

/* The schedules' next fire times. */
static int
schedules(struct ctl *c, struct store *s)
{
	time_t now = time(NULL), next;
	struct err e = ERR_INIT;
	int64_t when;
	char text[128];
	int rc, shown = 0;

	for (size_t i = 0; i < c->conf->nengines; i++) {
		const struct conf_engine *g = &c->conf->engines[i];

		if ((rc = status_next_watch(g, s, now, &next, &e)) == 1)
			continue;
		if (rc < 0)
			return ctl_failed(&e);
		if (shown++ == 0)
			printf("next scheduled:\n");
		printf("  watch %-12s %s  (%s)\n", g->name, ctl_next_text(next,
		    now, text, sizeof(text)), g->schedule);
	}
	for (size_t i = 0; i < c->conf->ncompares; i++) {
		const struct conf_compare *k = &c->conf->compares[i];

		if (compare_check_next(s, k, &when, &e) < 0)
			return ctl_failed(&e);
		if (shown++ == 0)
			printf("next scheduled:\n");
		printf("  compare %-10s %s\n", k->name, ctl_next_text(
		    (time_t)when, now, text, sizeof(text)));
	}
	if (c->conf->yardstick_engine == NULL)
		return 0;
	if (yardstick_next(c->conf, s, &when, &e) < 0)
		return ctl_failed(&e);
	if (shown++ == 0)
		printf("next scheduled:\n");
	printf("  yardstick %-8s %s\n", c->conf->yardstick_engine,
	    ctl_next_text((time_t)when, now, text, sizeof(text)));
	return 0;
}

/* Whether the daemon's socket file is there (a daemon that died left it). */
static int
socket_left(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* The machine's benchmark lock and who holds it, in words. */
static void
bench_lock_status(const struct ctl *c)
{
	json_t *l = status_bench_lock_json(c->conf);
	const char *path = json_string_value(json_object_get(l, "path"));

	if (json_is_string(json_object_get(l, "error")))
		printf("benchmark lock: %s\n", json_string_value(
		    json_object_get(l, "error")));
	else if (json_is_true(json_object_get(l, "held")))
		printf("benchmark lock: held by pid %lld (%s), %s\n",
		    (long long)json_integer_value(json_object_get(l, "pid")),
		    ctl_safe(json_string_value(json_object_get(l, "what"))),
		    path);
	else
		printf("benchmark lock: free, %s\n", path);
	json_decref(l);
}

int
cmd_status(struct ctl *c)
{
	struct store_jobs jobs;
	struct err e = ERR_INIT;
	struct store *s;
	json_t *d = NULL;
	int64_t total, limit = c->all ? -1 : c->limit > 0 ? c->limit :
	    STATUS_JOBS;
	int rc, stale = 0, ew = 10;

	rc = ask(c, "status", &d);
	if (rc < 0)
		return EXIT_FAIL;
	if (rc == 1)
		stale = socket_left(c->conf->socket);
	if ((s = ctl_store_readonly(c)) == NULL) {
		json_decref(d);
		return EXIT_FAIL;
	}
	if (c->format == FORMAT_JSON) {
		json_t *o;

		rc = status_json(c->conf, s, d, stale, limit, &o, &e);
		store_close(s);
		if (rc < 0)
			return ctl_failed(&e);
		ctl_print_json(o);
		return EXIT_OK;
	}
	rc = store_job_recent(s, limit, &jobs, &total, &e);
	if (rc < 0) {
		store_close(s);
		json_decref(d);
		return ctl_failed(&e);
	}
	if (d)
		print_daemon(d);
	else if (stale)
		printf("daemon: not running (stale socket at %s: the daemon "
		    "stopped without removing it)\n", c->conf->socket);
	else
		printf("daemon: not running (no socket at %s)\n",
		    c->conf->socket);
	json_decref(d);
	bench_lock_status(c);
	rc = schedules(c, s);
	if (rc == EXIT_OK)
		rc = ctl_slurm_status(s);
	store_close(s);
	if (rc != EXIT_OK) {
		store_jobs_release(&jobs);
		return rc;
	}
	if (jobs.n == 0)
		printf("jobs: none (the queue is empty)\n");
	else if ((int64_t)jobs.n < total)
		printf("jobs: newest %zu of %lld (--limit N or --all for "
		    "more)\n", jobs.n, (long long)total);
	else
		printf("jobs: all %lld, newest first\n", (long long)total);
	/* As wide as the longest engine: a matrix's cells are long. */
	for (size_t i = 0; i < jobs.n; i++)
		if ((int)strlen(jobs.v[i].engine) > ew)
			ew = (int)strlen(jobs.v[i].engine);
	if (jobs.n > 0)
		printf("%6s  %-7s %-*s %-11s %-16s  %s\n", "JOB", "KIND", ew,
		    "ENGINE", "STATE", "CREATED", "ARGS / OUTCOME");
	for (size_t i = 0; i < jobs.n; i++) {
		const struct store_job *j = &jobs.v[i];
		time_t t = (time_t)j->created;
		char when[32], args[512], outcome[1024];
		const char *state = j->state;
		json_t *a;
		struct tm tm;

		localtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
		/* Left running by a daemon that is gone: the next daemon
		 * puts it back in the queue and it resumes. */
		if (d == NULL && strcmp(state, "running") == 0)
			state = "interrupted";
		if ((a = status_job_args_json(j->args)) != NULL)
			status_job_args_text(j->kind, a, args, sizeof(args));
		else
			snprintf(args, sizeof(args), "(out of memory)");
		json_decref(a);
		status_job_outcome(j, outcome, sizeof(outcome));
		printf("%6lld  %-7s %-*s %-11s %-16s  %s%s%s\n",
		    (long long)j->id, j->kind, ew, ctl_safe(j->engine), state,
		    when,
		    args, args[0] && outcome[0] ? ": " : "", outcome);
	}
	for (size_t i = 0; i < jobs.n; i++)
		if (d == NULL && strcmp(jobs.v[i].state, "running") == 0) {
			printf("(interrupted jobs resume when the daemon "
			    "starts)\n");
			break;
		}
	store_jobs_release(&jobs);
	return EXIT_OK;
}

int
cmd_jobs(struct ctl *c)
{
	struct err e = ERR_INIT;
	struct store *s;
	int64_t ms, n;
	int rc;

	if (strcmp(c->argv[0], "prune") != 0)
		return ctl_usage_error("jobs: expected 'prune', got '%s'",
		    c->argv[0]);
	if (c->before == NULL)
		return ctl_usage_error("jobs prune: --before AGE is needed "
		    "(e.g. --before 90d)");
	if (conf_parse_duration(c->before, &ms) < 0)
		return ctl_usage_error("--before: expected an age such as "
		    "90d, 12h or 30m, got '%s'", c->before);
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	rc = store_job_prune(s, (int64_t)time(NULL) - ms / 1000, &n, &e);
	store_close(s);
	if (rc < 0)
		return ctl_failed(&e);
	printf("pruned %lld job%s that ended more than %s ago\n",
	    (long long)n, n == 1 ? "" : "s", c->before);
	return EXIT_OK;
}

int
cmd_cancel(struct ctl *c)
{
	struct err e = ERR_INIT;
	struct store *s;
	char *end, req[64];
	long long id;
	json_t *r;
	int rc;

	errno = 0;
	id = strtoll(c->argv[0], &end, 10);
	if (errno != 0 || *end != '\0' || end == c->argv[0] || id <= 0)
		return ctl_usage_error("expected a job number, got '%s'",
		    c->argv[0]);
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	rc = store_job_cancel(s, id, &e);
	switch (rc) {
	case STORE_CANCEL_DONE:
		store_close(s);
		printf("job %lld cancelled\n", id);
		return EXIT_OK;
	case STORE_CANCEL_FINISHED:
		store_close(s);
		return ctl_error("job %lld has ended already", id);
	case STORE_CANCEL_NONE:
		store_close(s);
		return ctl_error("no job %lld", id);
	case STORE_CANCEL_RUNNING:
		break;
	default:
		store_close(s);
		return ctl_failed(&e);
	}
	snprintf(req, sizeof(req), "cancel %lld", id);
	rc = ask(c, req, &r);
	if (rc == 1) {
		/* Running with no daemon: its daemon died; nothing runs it. */
		rc = store_job_finish(s, id, "cancelled", 1, "cancelled", &e);
		store_close(s);
		if (rc < 0)
			return ctl_failed(&e);
		printf("job %lld cancelled (no daemon was running it)\n", id);
		return EXIT_OK;
	}
	store_close(s);
	if (rc < 0)
		return EXIT_FAIL;
	if (!json_is_true(json_object_get(r, "ok"))) {
		rc = ctl_error("the daemon cannot cancel job %lld: %s", id,
		    json_string_value(json_object_get(r, "error")) ?
		    json_string_value(json_object_get(r, "error")) : "?");
		json_decref(r);
		return rc;
	}
	printf("job %lld: %s; its running engine is ended\n", id,
	    json_string_value(json_object_get(r, "state")));
	json_decref(r);
	return EXIT_OK;
}

/* A watch of the engine, or of each cell of the matrix, called name. */
int
cmd_watch(struct ctl *c)
{
	const struct conf_engine *m = conf_matrix(c->conf, c->argv[0]);
	const struct conf_engine *g = m ? NULL : ctl_engine(c, c->argv[0]);
	struct err e = ERR_INIT;
	struct store *s;
	char *args;
	int rc = 0;

	if (g == NULL && m == NULL)
		return EXIT_USAGE;
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	if ((args = job_run_watch_args(0)) == NULL) {
		store_close(s);
		return ctl_error("out of memory");
	}
	for (size_t i = 0; i < c->conf->nengines && rc == 0; i++) {
		const struct conf_engine *x = &c->conf->engines[i];
		int64_t id;

		if (m ? x->matrix != m : x != g)
			continue;
		if ((rc = store_job_enqueue(s, "watch", x->name, args, 0, &id,
		    &e)) == 0)
			printf("queued a watch of %s as job %lld\n", x->name,
			    (long long)id);
	}
	free(args);
	store_close(s);
	if (rc < 0)
		return ctl_failed(&e);
	ctl_wake(c);
	return EXIT_OK;
}
