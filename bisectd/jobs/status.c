/*
 * status.c: the status object bisectctl prints and the daemon serves
 * (see status.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/measure/benchlock.h"
#include "bisectd/report/text_escape.h"
#include "bisectd/search/verdict_json.h"
#include "common/err.h"
#include "config/conf.h"
#include "config/cron.h"
#include "compare_check.h"
#include "status.h"
#include "store/store.h"
#include "watch.h"

int
status_next_watch(const struct conf_engine *g, struct store *s, time_t now,
    time_t *next, struct err *e)
{
	struct cron cron;
	const char *why;
	char name[300];
	int64_t last = 0;

	if (g->schedule == NULL)
		return 1;
	if (cron_parse(g->schedule, &cron, &why) < 0)
		return err_set(e, "engine %s: schedule '%s': %s", g->name,
		    g->schedule, why);
	snprintf(name, sizeof(name), "engine:%s", g->name);
	if (s && store_schedule_last(s, name, &last, e) < 0)
		return -1;
	if (cron_next_due(&cron, (time_t)last, now, next) < 0)
		return err_set(e, "engine %s: schedule '%s' never fires",
		    g->name, g->schedule);
	return 0;
}

json_t *
status_job_args_json(const char *args)
{
	json_t *o = json_loads(args ? args : "", 0, NULL);

	if (json_is_object(o))
		return o;
	json_decref(o);
	return json_string(args ? args : "");
}

/* " --name value" at buf + *off, as far as it fits. */
static void
add_option(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n;
}

/* raw escaped into buf (as far as it fits) for a page or a terminal. */
static const char *
escaped(const char *raw, char *buf, size_t len)
{
	char *safe = text_escape(raw, 0);

	snprintf(buf, len, "%s", safe ? safe : "(out of memory)");
	free(safe);
	return buf;
}

const char *
status_job_args_text(const char *kind, const json_t *args, char *buf,
    size_t len)
{
	json_t *parsed = NULL;
	const json_t *a = args, *t;
	const char *range, *version, *v;
	char raw[1024];
	size_t off = 0;

	raw[0] = '\0';
	if (kind == NULL)
		kind = "";
	if (json_is_string(args))
		a = parsed = json_loads(json_string_value(args), 0, NULL);
	range = json_string_value(json_object_get(a, "range"));
	version = json_string_value(json_object_get(a, "version"));
	if (!json_is_object(a))
		snprintf(raw, sizeof(raw), "%s", json_is_string(args) ?
		    json_string_value(args) : "");
	else if (strcmp(kind, "bisect") == 0 && range) {
		add_option(raw, sizeof(raw), &off, "%s", range);
		if (json_is_true(json_object_get(a, "all")))
			add_option(raw, sizeof(raw), &off, " --all");
		if (json_is_true(json_object_get(a, "commits")))
			add_option(raw, sizeof(raw), &off, " --commits");
		if ((v = json_string_value(json_object_get(a, "metric"))))
			add_option(raw, sizeof(raw), &off, " --metric %s", v);
		/* The fraction, or an older job's percentage text. */
		t = json_object_get(a, "threshold");
		if (json_is_number(t))
			add_option(raw, sizeof(raw), &off, " --threshold "
			    "%g%%", 100 * json_number_value(t));
		else if (json_is_string(t))
			add_option(raw, sizeof(raw), &off, " --threshold %s",
			    json_string_value(t));
	} else if (strcmp(kind, "watch") == 0) {
		if (json_is_true(json_object_get(a, "yardstick")))
			snprintf(raw, sizeof(raw), "yardstick check");
		else if ((v = json_string_value(json_object_get(a,
		    "compare"))))
			snprintf(raw, sizeof(raw), "compare check %s", v);
	} else if (version) {
		add_option(raw, sizeof(raw), &off, "%s", version);
		if ((v = json_string_value(json_object_get(a, "prompts"))))
			add_option(raw, sizeof(raw), &off, " --prompts %s", v);
		if (json_integer_value(json_object_get(a, "reps")) > 0)
			add_option(raw, sizeof(raw), &off, " --reps %lld",
			    (long long)json_integer_value(json_object_get(a,
			    "reps")));
	} else {
		char *text = json_dumps(a, JSON_COMPACT);

		snprintf(raw, sizeof(raw), "%s", text ? text : "");
		free(text);
	}
	json_decref(parsed);
	/* Versions and ranges are upstream text. */
	return escaped(raw, buf, len);
}

const char *
status_job_outcome(const struct store_job *j, char *buf, size_t len)
{
	const char *range, *sha;
	char raw[1024], words[768];
	json_t *r, *v;

	buf[0] = raw[0] = '\0';
	if (strcmp(j->state, "cancelled") == 0) {
		snprintf(buf, len, "cancelled");
		return buf;
	}
	if (strcmp(j->state, "done") != 0 && strcmp(j->state, "failed") != 0)
		return buf;
	r = json_loads(j->result ? j->result : "", 0, NULL);
	if (!json_is_object(r))
		/* A failure's message, or a result from an older bisectd. */
		snprintf(raw, sizeof(raw), "%s%s", strcmp(j->state,
		    "failed") == 0 ? "failed: " : "", j->result ? j->result :
		    "no result");
	else if (strcmp(j->kind, "bisect") == 0)
		verdict_words(r, raw, sizeof(raw));
	else if (strcmp(j->kind, "watch") == 0 &&
	    json_object_get(r, "compare"))
		snprintf(raw, sizeof(raw), "%s", j->exit_code == 0 ?
		    "the same leaders (or none apart from the rest)" :
		    j->exit_code == 3 ? "another engine leads" :
		    "inconclusive");
	else if (strcmp(j->kind, "watch") == 0 &&
	    json_object_get(r, "yardstick"))
		snprintf(raw, sizeof(raw), "%s", j->exit_code == 0 ?
		    "the yardstick is the fastest" : j->exit_code == 3 ?
		    "another engine is faster than the yardstick" :
		    "inconclusive");
	else if (strcmp(j->kind, "watch") == 0 &&
	    json_is_object(v = json_object_get(r, "verdict"))) {
		range = json_string_value(json_object_get(r, "range"));
		snprintf(raw, sizeof(raw), "%s over %s", verdict_words(v,
		    words, sizeof(words)), range ? range : "?");
	} else if (strcmp(j->kind, "watch") == 0)
		snprintf(raw, sizeof(raw), "nothing new to compare");
	else if (strcmp(j->kind, "bench") == 0)
		snprintf(raw, sizeof(raw), "%lld runs, %lld failed",
		    (long long)json_integer_value(json_object_get(r, "runs")),
		    (long long)json_integer_value(json_object_get(r,
		    "failed")));
	else if (strcmp(j->kind, "fetch") == 0) {
		sha = json_string_value(json_object_get(r, "sha256"));
		snprintf(raw, sizeof(raw), "%s, sha256 %.12s",
		    json_is_true(json_object_get(r, "downloaded")) ?
		    "downloaded" : "in the cache", sha ? sha : "?");
	}
	json_decref(r);
	/* Versions and messages in the words are upstream text. */
	return escaped(raw, buf, len);
}

static json_t *
job_json(const struct store_job *j, int interrupted)
{
	char text[1024];
	json_t *o = json_pack("{s:I,s:s,s:s,s:o,s:i,s:s,s:I}", "id",
	    (json_int_t)j->id, "kind", j->kind, "engine", j->engine, "args",
	    status_job_args_json(j->args), "priority", j->priority, "state",
	    j->state, "created", (json_int_t)j->created);

	json_object_set_new(o, "interrupted", json_boolean(interrupted));
	json_object_set_new(o, "started", j->started ?
	    json_integer(j->started) : json_null());
	json_object_set_new(o, "finished", j->finished ?
	    json_integer(j->finished) : json_null());
	json_object_set_new(o, "exit_code", j->exit_code >= 0 ?
	    json_integer(j->exit_code) : json_null());
	json_object_set_new(o, "result", j->result ? json_string(j->result) :
	    json_null());
	status_job_outcome(j, text, sizeof(text));
	json_object_set_new(o, "outcome", text[0] ? json_string(text) :
	    json_null());
	return o;
}

/* Each scheduled watch, compare check and the yardstick check with its
 * next time. */
static int
schedules_json(const struct conf *c, struct store *s, json_t *a,
    struct err *e)
{
	time_t now = time(NULL), next;
	int64_t when;
	int rc;

	for (size_t i = 0; i < c->nengines; i++) {
		const struct conf_engine *g = &c->engines[i];

		if ((rc = status_next_watch(g, s, now, &next, e)) == 1)
			continue;
		if (rc < 0)
			return -1;
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:I,s:b}",
		    "job", "watch", "engine", g->name, "schedule", g->schedule,
		    "next", (json_int_t)next, "due", next <= now));
	}
	for (size_t i = 0; i < c->ncompares; i++) {
		if (compare_check_next(s, &c->compares[i], &when, e) < 0)
			return -1;
		json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:b}", "job",
		    "compare", "compare", c->compares[i].name, "next",
		    (json_int_t)when, "due", when <= now));
	}
	if (c->yardstick_engine == NULL)
		return 0;
	if (yardstick_next(c, s, &when, e) < 0)
		return -1;
	json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:b}", "job",
	    "yardstick", "engine", c->yardstick_engine, "next",
	    (json_int_t)when, "due", when <= now));
	return 0;
}

/* Whether a Slurm job has ended (its result in, or given up). */
static int
slurm_ended(const struct store_slurm_job *j)
{
	return strcmp(j->state, "ingested") == 0 ||
	    strcmp(j->state, "failed") == 0;
}

int
status_slurm_json(struct store *s, time_t now, json_t **out, struct err *e)
{
	struct store_slurm_jobs l;
	size_t ended = 0;

	*out = NULL;
	if (store_slurm_list(s, 0, 0, &l, e) < 0)
		return -1;
	if ((*out = json_array()) == NULL) {
		store_slurm_jobs_release(&l);
		return err_set(e, "out of memory");
	}
	for (size_t i = 0; i < l.n; i++)
		ended += slurm_ended(&l.v[i]);
	for (size_t i = 0; i < l.n; i++) {
		const struct store_slurm_job *j = &l.v[i];

		if (slurm_ended(j) && ended-- > STATUS_SLURM_ENDED)
			continue;
		json_array_append_new(*out, json_pack("{s:I,s:s,s:I,s:s,s:s,"
		    "s:s,s:s?,s:s?,s:s?,s:s?,s:i,s:I,s:I}",
		    "slurm_id", (json_int_t)j->slurm_id, "request", j->request,
		    "job", (json_int_t)j->job_id, "engine", j->engine,
		    "runner", j->runner, "state", j->state, "node", j->node,
		    "pinned", j->pinned, "failure", j->failure, "detail",
		    j->detail, "attempt", j->attempt, "submitted",
		    (json_int_t)j->submitted, "age_s", (json_int_t)(now >
		    j->submitted ? now - j->submitted : 0)));
	}
	store_slurm_jobs_release(&l);
	return 0;
}

json_t *
status_bench_lock_json(const struct conf *c)
{
	const char *path = benchlock_path(c->bench_lock);
	struct benchlock_holder h;
	struct err e = ERR_INIT;

	if (benchlock_holder(path, &h, &e) < 0)
		return json_pack("{s:s,s:s}", "path", path, "error", e.msg);
	/* The holder line is cleared on release; one left by a holder that
	 * died names a pid that no longer runs. */
	if (h.pid > 0 && (kill(h.pid, 0) == 0 || errno == EPERM))
		return json_pack("{s:s,s:b,s:I,s:s}", "path", path, "held", 1,
		    "pid", (json_int_t)h.pid, "what", h.what);
	return json_pack("{s:s,s:b}", "path", path, "held", 0);
}

int
status_json(const struct conf *c, struct store *s, json_t *daemon,
    int stale_socket, int64_t limit, json_t **out, struct err *e)
{
	struct store_jobs jobs;
	json_t *a, *sched = json_array(), *slurm = NULL;
	int64_t total;

	*out = NULL;
	if (schedules_json(c, s, sched, e) < 0 ||
	    status_slurm_json(s, time(NULL), &slurm, e) < 0 ||
	    store_job_recent(s, limit, &jobs, &total, e) < 0) {
		json_decref(sched);
		json_decref(slurm);
		json_decref(daemon);
		return -1;
	}
	a = json_array();
	for (size_t i = 0; i < jobs.n; i++)
		json_array_append_new(a, job_json(&jobs.v[i], daemon == NULL &&
		    strcmp(jobs.v[i].state, "running") == 0));
	store_jobs_release(&jobs);
	if (daemon)
		json_object_del(daemon, "ok");
	*out = json_pack("{s:o,s:b,s:o,s:o,s:I,s:o}", "daemon", daemon ?
	    daemon : json_null(), "stale_socket", stale_socket, "schedules",
	    sched, "jobs", a, "jobs_total", (json_int_t)total, "slurm_jobs",
	    slurm);
	if (*out == NULL)
		return err_set(e, "out of memory");
	json_object_set_new(*out, "bench_lock", status_bench_lock_json(c));
	return 0;
}
