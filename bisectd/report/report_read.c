/*
 * report_read.c: the parts of a report (report.h) that are only read
 * from its JSON: the verdict (written by search/verdict_json.c and
 * search/commits.c), how to reproduce it and the "about" (by
 * report/build.c), the serve figures (by report/serve_lines.c).  Their
 * keys are spelt here for the renderers; the golden files of
 * tests/golden/ pin what they render.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fields.h"
#include "report.h"
#include "report_int.h"

/* The flat parts.  A relative change's interval ("NAME_ci") is read
 * apart. */
static const struct field point_fields[] = {
	FIELD(struct report_point, first_bad, F_STR),
	FIELD(struct report_point, last_good, F_STR),
	FIELD(struct report_point, kind, F_STR),
	FIELD(struct report_point, confirmed, F_TRUE),
};

static const struct field commit_fields[] = {
	FIELD(struct report_commit, id, F_STR),
	FIELD_AS(struct report_commit, short_id, "short", F_STR),
	FIELD(struct report_commit, subject, F_STR),
	FIELD(struct report_commit, author, F_STR),
	FIELD(struct report_commit, date, F_STR),
	FIELD(struct report_commit, url, F_OPT_STR),
	FIELD(struct report_commit, build, F_STR),
};

static const struct field clocks_fields[] = {
	FIELD(struct report_clocks, good, F_STR),
	FIELD(struct report_clocks, bad, F_STR),
	FIELD(struct report_clocks, good_sm_mhz, F_REAL),
	FIELD(struct report_clocks, bad_sm_mhz, F_REAL),
	FIELD(struct report_clocks, differ, F_TRUE),
};

static const struct field drill_fields[] = {
	FIELD(struct report_drill, range, F_STR),
	FIELD(struct report_drill, status, F_STR),
	FIELD(struct report_drill, reason, F_STR),
};

static const struct field diff_fields[] = {
	FIELD(struct report_diff, token, F_INT),
	FIELD(struct report_diff, before, F_STR),
	FIELD(struct report_diff, after, F_STR),
};

static const struct field inconclusive_fields[] = {
	FIELD(struct report_inconclusive, from, F_STR),
	FIELD(struct report_inconclusive, to, F_STR),
};

static const struct field step_fields[] = {
	FIELD(struct report_step, from, F_STR),
	FIELD(struct report_step, to, F_STR),
};

static const struct field gradual_fields[] = {
	FIELD(struct report_gradual, from, F_STR),
	FIELD(struct report_gradual, to, F_STR),
};

static const struct field archive_fields[] = {
	FIELD(struct report_archive, version, F_STR),
	FIELD(struct report_archive, url, F_STR),
	FIELD(struct report_archive, sha256, F_STR),
};

static const struct field run_line_fields[] = {
	FIELD(struct report_run_line, version, F_STR),
	FIELD(struct report_run_line, cell, F_STR),
	FIELD(struct report_run_line, command, F_STR),
};

static const struct field about_fields[] = {
	FIELD(struct report_about, bisectd, F_STR),
	FIELD(struct report_about, reps, F_INT),
	FIELD(struct report_about, max_reps, F_INT),
	FIELD(struct report_about, warmup, F_INT),
	FIELD(struct report_about, cpu_model, F_STR),
	FIELD(struct report_about, cpu_flags, F_OPT_STR),
};

static const struct field summary_fields[] = {
	FIELD(struct report_summary, value, F_REAL),
	FIELD(struct report_summary, sd, F_REAL),
	FIELD(struct report_summary, n, F_INT),
};

static const struct field serve_fields[] = {
	FIELD(struct report_serve, runs, F_INT),
	FIELD(struct report_serve, failed_runs, F_INT),
	FIELD(struct report_serve, client_bound_runs, F_INT),
};

static const struct field profile_fields[] = {
	FIELD(struct report_serve_profile, arrival, F_STR),
	FIELD(struct report_serve_profile, dialect, F_STR),
	FIELD(struct report_serve_profile, concurrency, F_REAL),
	FIELD(struct report_serve_profile, rate, F_REAL),
	FIELD(struct report_serve_profile, warmup, F_REAL),
	FIELD(struct report_serve_profile, requests, F_REAL),
	FIELD(struct report_serve_profile, duration_ms, F_REAL),
	FIELD(struct report_serve_profile, slo_ttft_ms, F_REAL),
	FIELD(struct report_serve_profile, slo_tpot_ms, F_REAL),
	FIELD(struct report_serve_profile, max_lag_ms, F_REAL),
};

static const struct field verdict_fields[] = {
	FIELD(struct report_verdict, status, F_STR),
	FIELD(struct report_verdict, reason, F_STR),
	FIELD(struct report_verdict, endpoints_change, F_REAL),
	FIELD(struct report_verdict, fixed_not_estimable, F_STR),
	FIELD(struct report_verdict, ratio_trend, F_STR),
	FIELD(struct report_verdict, detectable_change, F_REAL),
	FIELD(struct report_verdict, runs_per_release, F_INT),
	FIELD(struct report_verdict, last_good_sha256, F_STR),
	FIELD(struct report_verdict, first_bad_sha256, F_STR),
};

/* calloc(n, size), where none is no room and no failure (NULL); *oom
 * set when out of memory. */
static void *
room(size_t n, size_t size, int *oom)
{
	void *p = n > 0 ? calloc(n, size) : NULL;

	if (n > 0 && p == NULL)
		*oom = 1;
	return p;
}

/* A serve figure: {"value", "ci": [lo, hi], "sd", "n"}. */
static void
summary_read(const json_t *o, struct report_summary *s)
{
	const json_t *ci = json_object_get(o, "ci");

	report_fields_read(summary_fields, NFIELDS(summary_fields), o, s);
	s->lo = rep_at(ci, 0);
	s->hi = rep_at(ci, 1);
}

int
report_serve_read(const json_t *sv, struct report_serve *out)
{
	const json_t *fig = json_object_get(sv, "figures_ms");
	const json_t *errs = json_object_get(sv, "failed_requests");
	const char *k;
	json_t *x;
	int oom = 0;

	out->ok = json_is_object(sv);
	report_fields_read(serve_fields, NFIELDS(serve_fields), sv, out);
	summary_read(json_object_get(sv, "req_per_s"), &out->req_per_s);
	summary_read(json_object_get(sv, "out_tok_per_s"),
	    &out->out_tok_per_s);
	summary_read(json_object_get(sv, "goodput_per_s"),
	    &out->goodput_per_s);
	summary_read(json_object_get(sv, "goodput_share"),
	    &out->goodput_share);
	summary_read(json_object_get(sv, "lag_p99_ms"), &out->lag_p99_ms);
	if ((out->figures = room(json_object_size(fig),
	    sizeof(*out->figures), &oom)) != NULL)
		json_object_foreach((json_t *)(uintptr_t)fig, k, x) {
			struct report_serve_figure *f =
			    &out->figures[out->nfigures++];

			snprintf(f->name, sizeof(f->name), "%s", k);
			summary_read(x, &f->s);
		}
	if ((out->errors = room(json_object_size(errs),
	    sizeof(*out->errors), &oom)) != NULL)
		json_object_foreach((json_t *)(uintptr_t)errs, k, x) {
			struct report_request_errors *e =
			    &out->errors[out->nerrors++];

			snprintf(e->type, sizeof(e->type), "%s", k);
			e->count = json_integer_value(x);
		}
	return oom ? -1 : 0;
}

const struct report_summary *
report_serve_figure(const struct report_serve *s, const char *name)
{
	static const struct report_summary none = { NAN, NAN, NAN, NAN, 0 };

	for (size_t i = 0; i < s->nfigures; i++)
		if (strcmp(s->figures[i].name, name) == 0)
			return &s->figures[i].s;
	return &none;
}

static void
ms_read(const json_t *o, const char *name, struct report_ms *m)
{
	report_value_ci_read(o, name, &m->value, &m->lo, &m->hi);
}

static void
rel_read(const json_t *o, const char *name, struct report_rel *r)
{
	report_value_ci_read(o, name, &r->value, &r->lo, &r->hi);
}

/* The strings of array a (borrowed; "" for anything else) into *n of
 * a malloced array. */
static const char **
strings_read(const json_t *a, size_t *n, int *oom)
{
	const char **s = room(json_array_size(a), sizeof(*s), oom);
	const json_t *x;
	size_t i;

	*n = 0;
	if (s != NULL)
		json_array_foreach(a, i, x)
			s[(*n)++] = json_is_string(x) ? json_string_value(x) :
			    "";
	return s;
}

static void
point_read(const json_t *o, struct report_point *p)
{
	report_fields_read(point_fields, NFIELDS(point_fields), o, p);
	rel_read(o, "metric_change", &p->metric_change);
}

void
report_commit_read(const json_t *o, struct report_commit *c)
{
	c->ok = json_is_object(o);
	report_fields_read(commit_fields, NFIELDS(commit_fields), o, c);
}

/* The ratios in the JSON's order, their intervals beside them. */
static void
ratios_read(const json_t *v, struct report_verdict *out, int *oom)
{
	const json_t *ratios = json_object_get(v, "ratios");
	const json_t *cis = json_object_get(v, "ratios_ci");
	const char *k;
	json_t *x;

	out->ratios = room(json_object_size(ratios), sizeof(*out->ratios),
	    oom);
	if (out->ratios == NULL)
		return;
	json_object_foreach((json_t *)(uintptr_t)ratios, k, x) {
		struct report_ratio *r = &out->ratios[out->nratios++];
		const json_t *ci = json_object_get(cis, k);

		snprintf(r->tokens, sizeof(r->tokens), "%s", k);
		r->value = json_is_number(x) ? json_number_value(x) : NAN;
		r->lo = rep_at(ci, 0);
		r->hi = rep_at(ci, 1);
	}
}

static void
gradual_read(const json_t *g, struct report_gradual *out, int *oom)
{
	const json_t *steps = json_object_get(g, "largest_steps"), *x;
	size_t i;

	out->ok = json_is_object(g);
	report_fields_read(gradual_fields, NFIELDS(gradual_fields), g, out);
	out->nreleases = json_array_size(json_object_get(g, "releases"));
	rel_read(g, "total_change", &out->total);
	rel_read(g, "per_release_change", &out->per_release);
	out->between = strings_read(json_object_get(g, "measured_between"),
	    &out->nbetween, oom);
	out->steps = room(json_array_size(steps), sizeof(*out->steps), oom);
	if (out->steps == NULL)
		return;
	json_array_foreach(steps, i, x) {
		struct report_step *st = &out->steps[out->nsteps++];

		report_fields_read(step_fields, NFIELDS(step_fields), x, st);
		rel_read(x, "change", &st->change);
	}
}

/* The verdict object v into *out: 0, or -1 when out of memory. */
static int
verdict_read(const json_t *v, struct report_verdict *out)
{
	const json_t *more = json_object_get(v, "more_runs_per_release");
	const json_t *u = json_object_get(v, "inconclusive");
	const json_t *clocks = json_object_get(v, "clocks");
	const json_t *drill = json_object_get(v, "drill_down");
	const json_t *diff = json_object_get(v, "diff");
	const json_t *points = json_object_get(v, "change_points");
	const json_t *cc = json_object_get(v, "candidate_commits"), *x;
	size_t i;
	int oom = 0;

	out->ok = json_is_object(v);
	report_fields_read(verdict_fields, NFIELDS(verdict_fields), v, out);
	point_read(v, &out->change);
	out->candidates = strings_read(json_object_get(v, "candidates"),
	    &out->ncandidates, &oom);
	out->has_deltas = json_object_get(v, "per_token_delta_ms") != NULL;
	ms_read(v, "per_token_delta_ms", &out->per_token_delta);
	ms_read(v, "fixed_delta_ms", &out->fixed_delta);
	ratios_read(v, out, &oom);
	if ((out->points = room(json_array_size(points),
	    sizeof(*out->points), &oom)) != NULL)
		json_array_foreach(points, i, x)
			point_read(x, &out->points[out->npoints++]);
	gradual_read(json_object_get(v, "gradual"), &out->gradual, &oom);
	out->inconclusive.ok = json_is_object(u);
	report_fields_read(inconclusive_fields, NFIELDS(inconclusive_fields), u,
	    &out->inconclusive);
	rel_read(u, "change", &out->inconclusive.change);
	out->more_runs_said = json_is_integer(more) || json_is_null(more);
	out->more_runs = json_is_integer(more) ? json_integer_value(more) :
	    -1;
	report_fields_read(clocks_fields, NFIELDS(clocks_fields), clocks,
	    &out->clocks);
	/* A clock that was not read is no clock, never a zero one. */
	out->clocks.ok = json_is_object(clocks) &&
	    out->clocks.good_sm_mhz > 0 && out->clocks.bad_sm_mhz > 0;
	report_commit_read(json_object_get(v, "commit"), &out->commit);
	out->has_candidate_commits = cc != NULL;
	if ((out->candidate_commits = room(json_array_size(cc),
	    sizeof(*out->candidate_commits), &oom)) != NULL)
		json_array_foreach(cc, i, x)
			report_commit_read(x, &out->candidate_commits[
			    out->ncandidate_commits++]);
	out->drill_down.ok = json_is_object(drill);
	report_fields_read(drill_fields, NFIELDS(drill_fields), drill,
	    &out->drill_down);
	out->diff.ok = json_is_object(diff);
	report_fields_read(diff_fields, NFIELDS(diff_fields), diff, &out->diff);
	return oom ? -1 : 0;
}

static int
reproduce_read(const json_t *r, struct report_reproduce *out)
{
	const json_t *archives = json_object_get(r, "archives");
	const json_t *runs = json_object_get(r, "runs"), *x;
	size_t i;
	int oom = 0;

	out->commands = strings_read(json_object_get(r, "commands"),
	    &out->ncommands, &oom);
	if ((out->archives = room(json_array_size(archives),
	    sizeof(*out->archives), &oom)) != NULL)
		json_array_foreach(archives, i, x)
			report_fields_read(archive_fields, NFIELDS(archive_fields), x,
			    &out->archives[out->narchives++]);
	if ((out->runs = room(json_array_size(runs), sizeof(*out->runs),
	    &oom)) != NULL)
		json_array_foreach(runs, i, x)
			report_fields_read(run_line_fields, NFIELDS(run_line_fields),
			    x, &out->runs[out->nruns++]);
	return oom ? -1 : 0;
}

/* o[key] as a string when the key is there (even null: ""), NULL when
 * it is left out: the engine did not report it. */
static const char *
reported_str(const json_t *o, const char *key)
{
	return json_object_get(o, key) != NULL ? rep_str(o, key) : NULL;
}

/* o[key] as a count when the key is there, -1 when it is left out. */
static long long
reported_count(const json_t *o, const char *key)
{
	return json_object_get(o, key) != NULL ?
	    (long long)json_integer_value(json_object_get(o, key)) : -1;
}

static int
about_read(const json_t *a, struct report_about *out)
{
	const json_t *builds = json_object_get(a, "engine_builds"), *x;
	const json_t *model = json_object_get(a, "model");
	const json_t *threads = json_object_get(a, "threads");
	size_t i;
	int oom = 0;

	out->ok = json_is_object(a);
	report_fields_read(about_fields, NFIELDS(about_fields), a, out);
	out->model_type = reported_str(model, "type");
	out->weights = rep_str(model, "weights");
	out->size_bytes = reported_count(model, "size_bytes");
	out->file_bytes = reported_count(model, "file_bytes");
	out->params = reported_count(model, "params");
	out->threads = json_is_integer(threads) ? json_integer_value(threads) :
	    -1;
	if ((out->builds = room(json_array_size(builds),
	    sizeof(*out->builds), &oom)) != NULL)
		json_array_foreach(builds, i, x) {
			struct report_build *b = &out->builds[out->nbuilds++];
			const json_t *n = json_object_get(x, "build_number");

			b->version = rep_str(x, "version");
			b->build_commit = reported_str(x, "build_commit");
			b->build_number = json_is_integer(n) ?
			    json_integer_value(n) : -1;
			b->backend = reported_str(x, "backend");
		}
	return oom ? -1 : 0;
}

/* The integers of array a into *n of a malloced array. */
static long long *
lengths_read(const json_t *a, size_t *n, int *oom)
{
	long long *v = room(json_array_size(a), sizeof(*v), oom);
	const json_t *x;
	size_t i;

	*n = 0;
	if (v != NULL)
		json_array_foreach(a, i, x)
			v[(*n)++] = json_integer_value(x);
	return v;
}

static int
profile_read(const json_t *p, struct report_serve_profile *out)
{
	int oom = 0;

	out->ok = json_is_object(p);
	report_fields_read(profile_fields, NFIELDS(profile_fields), p, out);
	out->has_requests = json_object_get(p, "requests") != NULL;
	out->prompt = lengths_read(json_object_get(p, "prompt"),
	    &out->nprompt, &oom);
	out->output = lengths_read(json_object_get(p, "output"),
	    &out->noutput, &oom);
	return oom ? -1 : 0;
}

static void
verdict_clear(struct report_verdict *v)
{
	free(v->candidates);
	free(v->ratios);
	free(v->points);
	free(v->candidate_commits);
	free(v->gradual.between);
	free(v->gradual.steps);
	memset(v, 0, sizeof(*v));
}

static void
reproduce_clear(struct report_reproduce *r)
{
	free(r->archives);
	free(r->commands);
	free(r->runs);
	memset(r, 0, sizeof(*r));
}

void
report_serve_clear(struct report_serve *s)
{
	free(s->figures);
	free(s->errors);
	memset(s, 0, sizeof(*s));
}

int
report_parts_read(const json_t *rep, struct report *out)
{
	if (verdict_read(json_object_get(rep, "verdict"), &out->verdict) < 0 ||
	    reproduce_read(json_object_get(rep, "reproduce"),
	    &out->reproduce) < 0 ||
	    about_read(json_object_get(rep, "about"), &out->about) < 0 ||
	    profile_read(json_object_get(rep, "serve_profile"),
	    &out->serve_profile) < 0)
		return -1;
	return 0;
}

void
report_parts_clear(struct report *r)
{
	verdict_clear(&r->verdict);
	reproduce_clear(&r->reproduce);
	free(r->about.builds);
	free(r->serve_profile.prompt);
	free(r->serve_profile.output);
	memset(&r->about, 0, sizeof(r->about));
	memset(&r->serve_profile, 0, sizeof(r->serve_profile));
}
