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
#include <time.h>

#include <jansson.h>

#include "bisectd/daemon/control.h"
#include "ctl.h"
#include "common/err.h"
#include "bisectd/jobs/job_run.h"
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
	long long t = (long long)s;

	if (t >= 3600)
		snprintf(buf, len, "%lldh%02lldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "%lldm%02llds", t / 60, t % 60);
	else
		snprintf(buf, len, "%llds", t);
}

static void
print_daemon(json_t *d)
{
	json_t *job = json_object_get(d, "job"), *p;
	char up[32], el[32], eta[32];

	print_duration(up, sizeof(up), (double)json_integer_value(
	    json_object_get(d, "uptime")));
	printf("daemon: running, pid %lld, up %s, config %s\n",
	    (long long)json_integer_value(json_object_get(d, "pid")), up,
	    json_string_value(json_object_get(d, "config")));
	if (!json_is_object(job)) {
		printf("running: nothing\n");
		return;
	}
	print_duration(el, sizeof(el), (double)json_integer_value(
	    json_object_get(job, "elapsed")));
	printf("running: job %lld, %s %s %s, for %s\n",
	    (long long)json_integer_value(json_object_get(job, "id")),
	    json_string_value(json_object_get(job, "kind")),
	    json_string_value(json_object_get(job, "engine")),
	    json_string_value(json_object_get(job, "args")), el);
	if (!json_is_object(p = json_object_get(job, "progress")))
		return;
	if (json_is_real(json_object_get(p, "eta_s")))
		print_duration(eta, sizeof(eta), json_real_value(
		    json_object_get(p, "eta_s")));
	else
		snprintf(eta, sizeof(eta), "unknown");
	printf("  release %s, cell %s (%lld/%lld), %s %lld/%lld, run %lld/%lld, "
	    "ETA %s\n", json_string_value(json_object_get(p, "release")),
	    json_string_value(json_object_get(p, "cell")),
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

static json_t *
job_json(const struct store_job *j)
{
	json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:i,s:s,s:I}", "id",
	    (json_int_t)j->id, "kind", j->kind, "engine", j->engine, "args",
	    j->args, "priority", j->priority, "state", j->state, "created",
	    (json_int_t)j->created);

	json_object_set_new(o, "started", j->started ?
	    json_integer(j->started) : json_null());
	json_object_set_new(o, "finished", j->finished ?
	    json_integer(j->finished) : json_null());
	json_object_set_new(o, "exit_code", j->exit_code >= 0 ?
	    json_integer(j->exit_code) : json_null());
	json_object_set_new(o, "result", j->result ? json_string(j->result) :
	    json_null());
	return o;
}

int
cmd_status(struct ctl *c)
{
	struct store_jobs jobs;
	struct err e = ERR_INIT;
	struct store *s;
	json_t *d = NULL;
	int rc;

	rc = ask(c, "status", &d);
	if (rc < 0)
		return EXIT_FAIL;
	if ((s = ctl_store_readonly(c)) == NULL) {
		json_decref(d);
		return EXIT_FAIL;
	}
	rc = store_job_list(s, 10, &jobs, &e);
	store_close(s);
	if (rc < 0) {
		json_decref(d);
		return ctl_error("%s", e.msg);
	}
	if (c->format == FORMAT_JSON) {
		json_t *a = json_array();

		for (size_t i = 0; i < jobs.n; i++)
			json_array_append_new(a, job_json(&jobs.v[i]));
		if (d)
			json_object_del(d, "ok");
		ctl_print_json(json_pack("{s:o,s:o}", "daemon", d ? d :
		    json_null(), "jobs", a));
		store_jobs_release(&jobs);
		return EXIT_OK;
	}
	if (d)
		print_daemon(d);
	else
		printf("daemon: not running (no socket at %s)\n",
		    c->conf->socket);
	json_decref(d);
	printf("%6s  %-7s %-12s %-10s %-19s %4s  %s\n", "JOB", "KIND", "ENGINE",
	    "STATE", "CREATED", "EXIT", "ARGS");
	for (size_t i = 0; i < jobs.n; i++) {
		const struct store_job *j = &jobs.v[i];
		time_t t = (time_t)j->created;
		char when[32], code[16] = "-";
		struct tm tm;

		localtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		if (j->exit_code >= 0)
			snprintf(code, sizeof(code), "%d", j->exit_code);
		printf("%6lld  %-7s %-12s %-10s %-19s %4s  %s\n",
		    (long long)j->id, j->kind, j->engine, j->state, when, code,
		    j->args);
	}
	if (jobs.n == 0)
		printf("(the queue is empty)\n");
	store_jobs_release(&jobs);
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
		return ctl_error("%s", e.msg);
	}
	snprintf(req, sizeof(req), "cancel %lld", id);
	rc = ask(c, req, &r);
	if (rc == 1) {
		/* Running with no daemon: its daemon died; nothing runs it. */
		rc = store_job_finish(s, id, "cancelled", 1, "cancelled", &e);
		store_close(s);
		if (rc < 0)
			return ctl_error("%s", e.msg);
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
	printf("job %lld: %s; it stops after the current run\n", id,
	    json_string_value(json_object_get(r, "state")));
	json_decref(r);
	return EXIT_OK;
}

int
cmd_watch(struct ctl *c)
{
	const struct conf_engine *g = ctl_engine(c, c->argv[0]);
	struct err e = ERR_INIT;
	struct store *s;
	char *args;
	int64_t id;
	int rc;

	if (g == NULL)
		return EXIT_USAGE;
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	if ((args = job_run_watch_args(0)) == NULL) {
		store_close(s);
		return ctl_error("out of memory");
	}
	rc = store_job_enqueue(s, "watch", g->name, args, 0, &id, &e);
	free(args);
	store_close(s);
	if (rc < 0)
		return ctl_error("%s", e.msg);
	printf("queued a watch of %s as job %lld\n", g->name, (long long)id);
	ctl_wake(c);
	return EXIT_OK;
}
