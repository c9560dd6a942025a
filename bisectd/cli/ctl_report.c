/*
 * ctl_report.c: bisectctl report and bisect.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/measure/benchlock.h"
#include "bisectd/report/build.h"
#include "bisectd/report/matrix.h"
#include "bisectd/search/canary.h"
#include "bisectd/search/perf.h"
#include "common/err.h"
#include "ctl.h"
#include "ctl_local.h"

/*
 * --metric, --threshold, --all and --commits as the request of a bisect
 * or a report: 0, or the usage error's exit code.
 */
static int
parse_request(struct ctl *c, struct bisect_request *r)
{
	bisect_request_init(r);
	switch (bisect_request_set(r, c->metric, c->threshold)) {
	case BISECT_REQUEST_BAD_METRIC:
		return ctl_usage_error("--metric: expected per-token, fixed, "
		    "ppN, tgN, gpu-memory, rss, output or a serve figure such "
		    "as ttft-p90, got '%s'", c->metric);
	case BISECT_REQUEST_BAD_THRESHOLD:
		return ctl_usage_error("--threshold: expected a percentage "
		    "such as 20%%, got '%s'", c->threshold);
	}
	r->all = c->all;
	r->commits = c->commits;
	return 0;
}

/* --metric output of an engine without a canary: the usage error. */
static int
no_canary(const struct conf_engine *g, const struct bisect_request *r)
{
	if (bisect_request_canary(r) && g->canary == NULL)
		return ctl_usage_error("--metric output: engine %s has no "
		    "canary (see [engine] canary)", g->name);
	return 0;
}

/*
 * Build the report of the range and print it; closes the store.  JSON
 * goes out release by release as they are built, so a long range never
 * holds every release's JSON at once.  An exit code of 1 also says why
 * on stderr.
 */
static int
report_out(struct ctl *c, const struct conf_engine *g, struct store *s,
    struct report_opts *o)
{
	struct err e = ERR_INIT;
	struct report_json_stream w = { stdout, 0 };
	struct report_sink sink = { report_json_stream_head,
	    report_json_stream_release, &w };
	json_t *rep;
	int rc, code;

	if (c->format == FORMAT_JSON)
		o->sink = &sink;
	rc = report_build(c->conf, g, s, c->argv[1], o, &rep, &code, &e);
	store_close(s);
	if (rc < 0)
		return ctl_failed(&e);
	if (o->sink)
		report_json_tail(rep, w.n, stdout);
	else
		report_print(rep, ctl_report_format(c), stdout);
	if (code == EXIT_FAIL)
		ctl_error("%s", json_string_value(json_object_get(
		    json_object_get(rep, "verdict"), "reason")));
	json_decref(rep);
	return code;
}

/*
 * A range that is no range, or is given backwards, is a usage error (exit
 * 2), found before anything is queued or measured.  Ends not known yet
 * are left to the job, which asks the source.  Returns 0 or EXIT_USAGE.
 */
static int
range_usage(struct ctl *c, struct store *s, const struct conf_engine *g)
{
	struct err e = ERR_INIT;
	struct range r;
	int64_t id = 0;
	int rc;

	if (strstr(c->argv[1], "..") == NULL)
		return ctl_usage_error("expected a range GOOD..BAD such as "
		    "0.2.0..0.2.6, got '%s'", c->argv[1]);
	/* Commits are ordered by the repository, not by the store. */
	if (c->commits) {
		char good[RANGE_END_MAX], bad[RANGE_END_MAX];

		return range_split(c->argv[1], good, bad, &e) < 0 ?
		    ctl_usage_error("%s", e.msg) : 0;
	}
	if (store_engine_find(s, g->name, &id, &e) != 0)
		return 0;
	rc = range_resolve(s, id, c->argv[1], &r, &e);
	if (rc == RANGE_BAD)
		return ctl_usage_error("%s", e.msg);
	if (rc == 0)
		range_release(&r);
	return 0;
}

/*
 * The request r checked against engine g, and the store opened with the
 * range of the command checked in it (range_usage()).  Returns 0 with
 * *s open, or the exit code with *s closed.
 */
static int
open_range(struct ctl *c, const struct conf_engine *g,
    const struct bisect_request *r, struct store **s)
{
	int rc;

	if ((rc = no_canary(g, r)) != 0)
		return rc;
	if ((*s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	if ((rc = range_usage(c, *s, g)) != 0) {
		store_close(*s);
		return rc;
	}
	return 0;
}

/*
 * The range on every cell of matrix m, one table (report/matrix.h);
 * closes the store.  Its exit code is report_matrix_build()'s.
 */
static int
matrix_out(struct ctl *c, const struct conf_engine *m, struct store *s,
    const struct report_opts *o)
{
	struct report_matrix mx;
	struct err e = ERR_INIT;
	int rc, code;

	rc = report_matrix_build(c->conf, m, s, c->argv[1], o, &mx, &code, &e);
	if (rc == 0)
		report_matrix_print(&mx, ctl_report_format(c), stdout);
	report_matrix_clear(&mx);
	store_close(s);
	if (rc < 0)
		return ctl_failed(&e);
	return code;
}

int
cmd_report(struct ctl *c)
{
	const struct conf_engine *m = conf_matrix(c->conf, c->argv[0]);
	const struct conf_engine *g;
	struct report_opts o;
	struct store *s;
	int rc;

	memset(&o, 0, sizeof(o));
	if (m != NULL) {
		if ((rc = parse_request(c, &o.req)) != 0)
			return rc;
		if ((s = ctl_store(c)) == NULL)
			return EXIT_FAIL;
		return matrix_out(c, m, s, &o);
	}
	if ((g = ctl_engine(c, c->argv[0])) == NULL)
		return EXIT_USAGE;
	if ((rc = parse_request(c, &o.req)) != 0)
		return rc;
	o.upstream = c->upstream;
	o.plot = c->format == FORMAT_HTML;
	if ((rc = open_range(c, g, &o.req, &s)) != 0)
		return rc;
	return report_out(c, g, s, &o);
}

/* bisect --dry-run: the releases and the first commands, run nowhere. */
static int
print_plan(struct ctl *c, const struct conf_engine *g, struct store *s,
    const struct perf_opts *o)
{
	struct err e = ERR_INIT;
	json_t *plan, *x;
	size_t i, n;
	int commits;

	if (perf_plan(c->conf, g, s, c->argv[1], o, &plan, &e) < 0)
		return ctl_failed(&e);
	if (c->format == FORMAT_JSON) {
		ctl_print_json(plan);
		return EXIT_OK;
	}
	n = json_array_size(json_object_get(plan, "releases"));
	commits = json_is_array(json_object_get(plan, "builds"));
	printf("bisect %s%s %s: metric %s, threshold %.3g%%%s; %zu %s%s "
	    "(nothing is %s or run)\n", commits ? "--commits " : "", g->name,
	    ctl_safe(c->argv[1]), json_string_value(json_object_get(plan,
	    "metric")), 100 * json_real_value(json_object_get(plan,
	    "threshold")), json_is_true(json_object_get(plan, "all")) ?
	    ", every change (--all)" : "", n, commits ? "commits" :
	    "releases", !commits ? "" : json_is_true(json_object_get(plan,
	    "first_parent")) ? ", first parents" : ", every parent",
	    commits ? "built" : "fetched");
	json_array_foreach(json_object_get(plan, "releases"), i, x) {
		const char *v = json_string_value(json_object_get(x,
		    "version"));

		if (commits)
			printf("  %.12s %-9s \"%s\"%s\n", v, json_string_value(
			    json_object_get(x, "build")), ctl_safe(
			    json_string_value(json_object_get(x, "subject"))),
			    i == 0 ? ", the good end" : i + 1 == n ?
			    ", the bad end" : "");
		else
			printf("  %-20s %s%s\n", ctl_safe(v), json_string_value(
			    json_object_get(x, "state")), i == 0 ?
			    ", the good end" : i + 1 == n ? ", the bad end" :
			    "");
	}
	if (commits) {
		printf("it starts by building both ends:\n");
		json_array_foreach(json_object_get(plan, "builds"), i, x) {
			json_t *l;
			size_t k;

			if (json_is_true(json_object_get(x, "cached")))
				printf("  %.12s: built already, its tree is "
				    "reused\n", json_string_value(
				    json_object_get(x, "commit")));
			json_array_foreach(json_object_get(x, "commands"), k,
			    l)
				printf("  %.12s build: %s\n", json_string_value(
				    json_object_get(x, "commit")), ctl_safe(
				    json_string_value(l)));
		}
	}
	printf("%s measuring both ends, %lld warm-up and %lld runs "
	    "per cell, interleaved, with these commands:\n", commits ?
	    "then" : "it starts by", (long long)json_integer_value(
	    json_object_get(plan, "warmup")), (long long)json_integer_value(
	    json_object_get(plan, "reps")));
	json_array_foreach(json_object_get(plan, "commands"), i, x)
		printf("  %.*s %s: %s\n", commits ? 12 : INT_MAX, ctl_safe(
		    json_string_value(json_object_get(x, "version"))),
		    json_string_value(json_object_get(x, "cell")), ctl_safe(
		    json_string_value(json_object_get(x, "command"))));
	if (n > 2)
		printf("then it %s the %s between them, halving the range "
		    "each time (about %d probes).\n", commits ? "builds and "
		    "measures" : "measures", commits ? "commits" : "releases",
		    (int)ceil(log2((double)(n - 1))));
	json_decref(plan);
	return EXIT_OK;
}

/*
 * Queue the bisect of g for the daemon, or with --now run it here; a
 * failure is said.  Returns 0 or the exit code of a failure.
 */
static int
bisect_one(struct ctl *c, const struct conf_engine *g, struct store *s,
    struct perf_opts *o)
{
	struct benchlock lock = BENCHLOCK_INIT;
	struct err e = ERR_INIT;
	enum bisect_status st;
	json_t *verdict = NULL;
	int rc;

	if (!c->now) {
		char *text = bisect_request_json(&o->req, c->argv[1]);
		int64_t id;

		rc = text == NULL ? err_set(&e, "out of memory") :
		    store_job_enqueue(s, "bisect", g->name, text, 0, &id, &e);
		free(text);
		if (rc < 0)
			return ctl_failed(&e);
		printf("queued %sbisect of %s %s as job %lld ('bisectctl status' "
		    "shows the queue; 'bisectctl bisect --now' runs it here)\n",
		    c->commits ? "commit " : "", g->name, c->argv[1],
		    (long long)id);
		return 0;
	}
	ctl_local_start();
	if (ctl_local_lock(c, &lock, "bisectctl bisect --now %s %s", g->name,
	    c->argv[1]) != 0)
		return EXIT_FAIL;
	o->progress = ctl_on_progress;
	o->note = ctl_on_note;
	o->stop = &ctl_stop;
	if (bisect_request_canary(&o->req)) {
		struct canary_opts oo = { ctl_on_note, NULL, &ctl_stop };
		int code;

		rc = canary_bisect(c->conf, g, s, c->argv[1], &oo, NULL, &code,
		    &e);
	} else
		rc = perf_bisect(c->conf, g, s, c->argv[1], o, &verdict, &st,
		    &e);
	ctl_end_line();
	benchlock_release(&lock);
	json_decref(verdict);
	return rc < 0 ? ctl_failed(&e) : 0;
}

/* bisect of a matrix: each cell's bisect queued, or run here one after
 * another; with --now, the table of them. */
static int
bisect_matrix(struct ctl *c, const struct conf_engine *m)
{
	struct report_opts ro;
	struct perf_opts o;
	struct store *s;
	int rc, failed = 0;

	memset(&o, 0, sizeof(o));
	if ((rc = parse_request(c, &o.req)) != 0)
		return rc;
	if (c->dry_run || c->commits)
		return ctl_usage_error("%s is a matrix: --dry-run and --commits "
		    "take one of its cells (bisectctl config shows them)",
		    m->name);
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	for (size_t i = 0; i < c->conf->nengines; i++) {
		const struct conf_engine *g = &c->conf->engines[i];
		struct perf_opts co = o;

		if (g->matrix != m)
			continue;
		if ((rc = range_usage(c, s, g)) != 0) {
			store_close(s);
			return rc;
		}
		if (bisect_one(c, g, s, &co) != 0)
			failed = 1;
		if (ctl_stop)
			break;
	}
	if (!c->now) {
		store_close(s);
		ctl_wake(c);
		return failed ? EXIT_FAIL : EXIT_OK;
	}
	memset(&ro, 0, sizeof(ro));
	ro.req = o.req;
	rc = matrix_out(c, m, s, &ro);
	return failed && rc != EXIT_REGRESSION ? EXIT_FAIL : rc;
}

int
cmd_bisect(struct ctl *c)
{
	const struct conf_engine *m = conf_matrix(c->conf, c->argv[0]);
	const struct conf_engine *g;
	struct perf_opts o;
	struct store *s;
	int rc;

	if (m != NULL)
		return bisect_matrix(c, m);
	if ((g = ctl_engine(c, c->argv[0])) == NULL)
		return EXIT_USAGE;
	memset(&o, 0, sizeof(o));
	if ((rc = parse_request(c, &o.req)) != 0)
		return rc;
	if (c->now && c->dry_run)
		return ctl_usage_error("--now and --dry-run: choose one");
	if (c->commits && (g->repo == NULL || g->build.n == 0))
		return ctl_usage_error("engine %s: --commits needs its repo and "
		    "build lines in the configuration", g->name);
	if ((rc = open_range(c, g, &o.req, &s)) != 0)
		return rc;
	if (c->dry_run) {
		rc = print_plan(c, g, s, &o);
		store_close(s);
		return rc;
	}
	if ((rc = bisect_one(c, g, s, &o)) != 0 || !c->now) {
		store_close(s);
		if (rc == 0)
			ctl_wake(c);
		return rc;
	}
	/* The verdict, with the table around it, as report shows it. */
	{
		struct report_opts ro;

		memset(&ro, 0, sizeof(ro));
		ro.req = o.req;
		ro.plot = c->format == FORMAT_HTML;
		return report_out(c, g, s, &ro);
	}
}
