/*
 * job_run.c: running one queued job: its arguments read from JSON, the
 * benchmark lock taken, then the fetch, bench, bisect or watch carried
 * out by the modules that own them (acquire, bench, driver, watch).
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/search/ablate.h"
#include "bisectd/acquire/acquire.h"
#include "bisectd/acquire/bench_release.h"
#include "bisectd/measure/benchlock.h"
#include "config/conf.h"
#include "bisectd/search/perf.h"
#include "bisectd/search/canary.h"
#include "bisectd/search/verdict.h"
#include "common/err.h"
#include "common/logto.h"
#include "compare_check.h"
#include "job_run.h"
#include "store/store.h"
#include "watch.h"

/* Log through the caller's callback. */
#define logf_(o, level, ...) log_to((o)->log, (o)->arg, (level), \
	__VA_ARGS__)

static int
on_lock_wait(void *arg, const struct benchlock_holder *h, int64_t waited_ms)
{
	const struct job_run_opts *o = arg;

	if (waited_ms == 0 || waited_ms % 60000 < 1000)
		logf_(o, JOB_RUN_LOG_INFO, "waiting for the benchmark lock, held "
		    "by pid %ld (%s)", (long)h->pid, h->what[0] ? h->what :
		    "unknown");
	return *o->stop;
}

static void
on_note(void *arg, const char *line)
{
	const struct job_run_opts *o = arg;

	logf_(o, JOB_RUN_LOG_INFO, "%s", line);
}

static void
on_progress(void *arg, const struct bench_progress *p)
{
	const struct job_run_opts *o = arg;

	if (o->progress)
		o->progress(o->arg, p);
}

/* A string member of the arguments, or NULL. */
static const char *
arg_str(json_t *args, const char *key)
{
	return json_string_value(json_object_get(args, key));
}

static int
run_bisect(const struct conf *c, const struct conf_engine *g,
    struct store *s, const struct store_job *job, struct job_run_opts *o,
    char **result, struct err *e)
{
	struct perf_opts d;
	enum bisect_status st;
	json_t *verdict;
	char *range;
	int rc, code = 0;

	memset(&d, 0, sizeof(d));
	if (bisect_request_from_json(job->args, &d.req, &range, e) < 0)
		return -1;
	if (bisect_request_canary(&d.req)) {
		struct canary_opts oo = { on_note, o, o->stop };

		rc = canary_bisect(c, g, s, range, &oo, &verdict, &code, e);
	} else {
		d.job_id = job->id;
		d.progress = on_progress;
		d.note = on_note;
		d.arg = o;
		d.stop = o->stop;
		if ((rc = perf_bisect(c, g, s, range, &d, &verdict, &st,
		    e)) == 0)
			code = verdict_exit_code(st);
	}
	free(range);
	if (rc < 0)
		return -1;
	*result = json_dumps(verdict, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(verdict);
	return code;
}

static int
run_fetch(const struct conf *c, const struct conf_engine *g,
    struct store *s, json_t *args, const atomic_int *stop, char **result,
    struct err *e)
{
	const char *version = arg_str(args, "version");
	struct acquire a;
	struct acquired got;
	json_t *o;

	if (version == NULL)
		return err_set(e, "fetch job: no version in its arguments");
	if (acquire_init(&a, c, g, s, e) < 0)
		return -1;
	a.stop = stop;
	if (acquire_release(&a, version, &got, e) < 0)
		return -1;
	o = json_pack("{s:s,s:s,s:b}", "version", version, "sha256",
	    got.sha256, "downloaded", got.downloaded);
	*result = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	acquired_release(&got);
	return 0;
}

static int
run_bench(const struct conf *c, const struct conf_engine *g,
    struct store *s, json_t *args, struct job_run_opts *o,
    char **result, struct err *e)
{
	const char *version = arg_str(args, "version");
	const char *plist = arg_str(args, "prompts");
	json_int_t nreps = json_integer_value(json_object_get(args, "reps"));
	int prompts[CONF_MAX_LENGTHS], rc;
	size_t nprompts = 0;
	struct bench_job j;
	json_t *r;

	if (version == NULL)
		return err_set(e, "bench job: no version in its arguments");
	if (plist && conf_parse_lengths(plist, prompts, CONF_MAX_LENGTHS,
	    &nprompts) < 0)
		return err_set(e, "bench job: bad prompts '%s'", plist);
	if (nreps < 0 || nreps > 1000)
		return err_set(e, "bench job: bad reps %lld", (long long)nreps);
	memset(&j, 0, sizeof(j));
	j.prompts = plist ? prompts : NULL;
	j.nprompts = nprompts;
	j.reps = (int)nreps;
	j.progress = on_progress;
	j.progress_arg = o;
	j.stop = o->stop;
	rc = bench_release(c, g, s, version, &j, e);
	bench_job_release(&j);
	if (rc < 0)
		return -1;
	r = json_pack("{s:s,s:i,s:i,s:i}", "version", version, "runs",
	    j.tally.runs, "failed", j.tally.failed, "busy", j.tally.busy);
	if (j.tally.failed > 0)
		json_object_set_new(r, "last_failure",
		    json_string(j.tally.last_failure));
	*result = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(r);
	/* As `bisectctl bench`: a failed run fails the job. */
	return j.tally.failed > 0 ? 1 : 0;
}

static int
run_ablate(const struct conf *c, const struct conf_engine *g,
    struct store *s, const struct store_job *job, json_t *args,
    struct job_run_opts *o, char **result, struct err *e)
{
	const char *version = arg_str(args, "version");
	struct ablate_opts ao;
	json_t *rep;
	int rc;

	if (version == NULL)
		return err_set(e, "ablate job: no version in its arguments");
	memset(&ao, 0, sizeof(ao));
	ao.job_id = job->id;
	ao.progress = on_progress;
	ao.arg = o;
	ao.stop = o->stop;
	if ((rc = ablate_release(c, g, s, version, &ao, &rep, e)) < 0)
		return -1;
	*result = json_dumps(rep, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(rep);
	return rc;
}

static int
run_watch(const struct conf *c, const struct conf_engine *g,
    struct store *s, const struct store_job *job, json_t *args,
    struct job_run_opts *o, char **result, struct err *e)
{
	struct watch_opts w;
	json_t *r, *verdict = NULL;
	char *compared = NULL;
	int rc, yard = json_is_true(json_object_get(args, "yardstick"));
	const char *cmp = json_string_value(json_object_get(args, "compare"));
	const struct conf_compare *k = NULL;

	memset(&w, 0, sizeof(w));
	w.stop = o->stop;
	w.log = o->log;
	w.arg = o->arg;
	w.progress = o->progress;
	w.job_id = job->id;
	w.compared = &compared;
	w.verdict = &verdict;
	if (cmp && (k = conf_compare(c, cmp)) == NULL)
		return err_set(e, "[compare \"%s\"] is no longer configured",
		    cmp);
	rc = k ? compare_check_run(c, s, &w, k, NULL, e) : yard ?
	    yardstick_run(c, s, &w, e) : watch_run(c, g, s, &w, e);
	if (rc < 0) {
		json_decref(verdict);
		free(compared);
		return -1;
	}
	r = json_pack("{s:s,s:i}", k ? "compare" : yard ? "yardstick" :
	    "watch", k ? k->name : g->name, "exit_code", rc);
	/* What the watch compared and found, for `bisectctl status`. */
	if (compared && verdict) {
		json_object_set_new(r, "range", json_string(compared));
		json_object_set_new(r, "verdict", verdict);
	} else
		json_decref(verdict);
	free(compared);
	*result = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(r);
	return rc;
}

const struct conf_runner *
job_run_slurm(const struct conf *c, const struct store_job *job)
{
	const struct conf_engine *g = conf_engine(c, job->engine);
	struct bisect_request r;
	struct err e = ERR_INIT;
	char *range;

	if (g == NULL || g->runner == NULL || g->runner->kind != RUNNER_SLURM ||
	    strcmp(job->kind, "bisect") != 0)
		return NULL;
	/* A request that does not read fails here, with its message. */
	if (bisect_request_from_json(job->args, &r, &range, &e) < 0)
		return NULL;
	free(range);
	/* The canary and builds of commits run on this machine. */
	return bisect_request_canary(&r) || r.commits ? NULL : g->runner;
}

int
job_run(const struct conf *c, struct store *s, const struct store_job *job,
    const struct job_run_opts *opts, int *exit_code, char **result)
{
	/* A copy the callbacks may point to without casting const away. */
	struct job_run_opts qo = *opts, *o = &qo;
	const struct conf_engine *g = conf_engine(c, job->engine);
	struct benchlock lock = BENCHLOCK_INIT;
	struct err e = ERR_INIT;
	json_error_t je;
	json_t *args = NULL;
	char what[256];
	int rc = -1;

	assert(opts->stop != NULL);
	*result = NULL;
	*exit_code = 1;
	if (g == NULL) {
		err_set(&e, "engine '%s' is not in the configuration",
		    job->engine);
		goto failed;
	}
	args = json_loads(job->args, 0, &je);
	if (!json_is_object(args)) {
		err_set(&e, "job %lld: its arguments are not a JSON object: "
		    "%s", (long long)job->id, je.text);
		goto failed;
	}
	snprintf(what, sizeof(what), "bisectd job %lld (%s %s)",
	    (long long)job->id, job->kind, job->engine);
	/* Measured on a Slurm node, under its lock: this machine's stays
	 * free for a local job. */
	rc = job_run_slurm(c, job) ? 0 : benchlock_acquire(&lock,
	    o->lock_path, what, on_lock_wait, o, &e);
	if (rc != 0) {
		json_decref(args);
		args = NULL;
		if (rc == 1)
			return JOB_RUN_STOPPED;
		goto failed;
	}
	if (strcmp(job->kind, "bisect") == 0)
		rc = run_bisect(c, g, s, job, o, result, &e);
	else if (strcmp(job->kind, "fetch") == 0)
		rc = run_fetch(c, g, s, args, o->stop, result, &e);
	else if (strcmp(job->kind, "bench") == 0)
		rc = run_bench(c, g, s, args, o, result, &e);
	else if (strcmp(job->kind, "watch") == 0)
		rc = run_watch(c, g, s, job, args, o, result, &e);
	else if (strcmp(job->kind, "ablate") == 0)
		rc = run_ablate(c, g, s, job, args, o, result, &e);
	else
		rc = err_set(&e, "unknown job kind '%s'", job->kind);
	benchlock_release(&lock);
	json_decref(args);
	args = NULL;
	if (rc < 0 && *o->stop) {
		free(*result);
		*result = NULL;
		return JOB_RUN_STOPPED;
	}
	if (rc >= 0) {
		*exit_code = rc;
		return JOB_RUN_FINISHED;
	}
failed:
	json_decref(args);
	free(*result);
	*result = strdup(e.msg);
	*exit_code = 1;
	return JOB_RUN_FINISHED;
}

char *
job_run_watch_args(int yardstick)
{
	return strdup(yardstick ? "{\"yardstick\":true}" : "{}");
}

char *
job_run_compare_args(const char *name)
{
	json_t *o = json_pack("{s:s}", "compare", name);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return s;
}
