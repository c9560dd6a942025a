/*
 * report_json.c: the typed parts of a report (report.h) as the report's
 * JSON and back.  Every key of those parts is spelt here and nowhere
 * else; the golden files of tests/golden/ pin the bytes.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/search/verdict_json.h"
#include "fields.h"
#include "report.h"

static const char *const group_names[] = { "pp", "tg" };

/*
 * The members of a flat object (a cell, its confirmation runs, the
 * machine) as a table, so that each key is written once for both ways:
 * fields_json() writes them in the table's order, fields_read() reads
 * them back.
 */
enum field_type {
	F_REAL,		/* double: a number, null when not finite */
	F_INT,		/* long long */
	F_STR,		/* const char *: left out when NULL; "" when read
			 * and missing */
	F_OPT_STR,	/* const char *: left out when NULL, NULL when read
			 * and missing */
	F_CHARS,	/* char[size]: copied whole when read */
	F_TRUE,		/* int: true, left out when 0 */
	F_BOOL,		/* int: true or false */
	F_POSITIVE,	/* long long: left out when 0 or less */
};

struct field {
	const char *key;
	enum field_type type;
	size_t off, size;	/* in the struct */
};

#define FIELD(s, member, type) FIELD_AS(s, member, #member, type)
#define FIELD_AS(s, member, key, type) { key, type, offsetof(s, member), \
	sizeof(((s *)0)->member) }

static void
fields_json(const struct field *f, size_t n, const void *v, json_t *o)
{
	const char *base = v;

	for (size_t i = 0; i < n; i++) {
		const void *at = base + f[i].off;
		long long k;

		switch (f[i].type) {
		case F_REAL:
			json_object_set_new(o, f[i].key,
			    out_num(*(const double *)at));
			break;
		case F_INT:
			json_object_set_new(o, f[i].key,
			    json_integer(*(const long long *)at));
			break;
		case F_STR:
		case F_OPT_STR:
			if (*(const char *const *)at != NULL)
				json_object_set_new(o, f[i].key, json_string(
				    *(const char *const *)at));
			break;
		case F_CHARS:
			json_object_set_new(o, f[i].key, json_string(at));
			break;
		case F_TRUE:
			if (*(const int *)at)
				json_object_set_new(o, f[i].key, json_true());
			break;
		case F_BOOL:
			json_object_set_new(o, f[i].key,
			    json_boolean(*(const int *)at));
			break;
		case F_POSITIVE:
			if ((k = *(const long long *)at) > 0)
				json_object_set_new(o, f[i].key,
				    json_integer(k));
			break;
		}
	}
}

static void
fields_read(const struct field *f, size_t n, const json_t *o, void *v)
{
	char *base = v;

	for (size_t i = 0; i < n; i++) {
		const json_t *x = json_object_get(o, f[i].key);
		void *at = base + f[i].off;

		switch (f[i].type) {
		case F_REAL:
			*(double *)at = json_is_number(x) ?
			    json_number_value(x) : NAN;
			break;
		case F_INT:
		case F_POSITIVE:
			*(long long *)at = json_integer_value(x);
			break;
		case F_STR:
			*(const char **)at = json_is_string(x) ?
			    json_string_value(x) : "";
			break;
		case F_OPT_STR:
			*(const char **)at = json_string_value(x);
			break;
		case F_CHARS:
			snprintf(at, f[i].size, "%s", json_is_string(x) ?
			    json_string_value(x) : "");
			break;
		case F_TRUE:
		case F_BOOL:
			*(int *)at = json_is_true(x);
			break;
		}
	}
}

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

static const struct field cell_fields[] = {
	FIELD(struct report_cell, tps, F_REAL),
	FIELD(struct report_cell, sd, F_REAL),
	FIELD(struct report_cell, n, F_INT),
	FIELD(struct report_cell, cv, F_REAL),
	FIELD(struct report_cell, ms, F_REAL),
	FIELD(struct report_cell, ms_sd, F_REAL),
	FIELD(struct report_cell, ms_median, F_REAL),
	/* Both levels of spread: between process runs (what intervals and
	 * comparisons rest on) and between samples inside one run. */
	FIELD(struct report_cell, samples, F_INT),
	FIELD(struct report_cell, ms_sd_between, F_REAL),
	FIELD(struct report_cell, ms_sd_within, F_REAL),
	FIELD(struct report_cell, cv_within, F_REAL),
	FIELD(struct report_cell, lower_bound, F_TRUE),
	FIELD(struct report_cell, throttled_runs, F_POSITIVE),
};

static const struct field confirm_fields[] = {
	FIELD(struct report_confirm, tps, F_REAL),
	FIELD(struct report_confirm, n, F_INT),
	FIELD(struct report_confirm, ms, F_REAL),
	FIELD(struct report_confirm, ms_sd, F_REAL),
	FIELD(struct report_confirm, samples, F_INT),
};

/* A change, around its interval ("change_ci"), and after it; the
 * command ("bisect") is copied when read. */
static const struct field change_fields[] = {
	FIELD(struct report_change, from, F_STR),
	FIELD(struct report_change, to, F_STR),
	FIELD(struct report_change, metric, F_CHARS),
	FIELD(struct report_change, what, F_CHARS),
	FIELD(struct report_change, unit, F_STR),
	FIELD(struct report_change, change, F_REAL),
};

static const struct field change_after_fields[] = {
	FIELD(struct report_change, moved, F_STR),
	FIELD(struct report_change, searched, F_BOOL),
	FIELD(struct report_change, bisect, F_OPT_STR),
};

static const struct field machine_fields[] = {
	FIELD(struct report_machine, cpu_model, F_STR),
	FIELD(struct report_machine, cores, F_INT),
	FIELD(struct report_machine, mem_bytes, F_INT),
	FIELD(struct report_machine, arch, F_STR),
	FIELD(struct report_machine, kernel, F_STR),
	FIELD(struct report_machine, os, F_STR),
	FIELD(struct report_machine, hostname, F_OPT_STR),
	FIELD(struct report_machine, hw_key, F_STR),
};

/* The verdict's flat parts, read only: verdict_json() (search/) writes
 * them.  A relative change's interval ("NAME_ci") is read apart. */
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

const char *
report_group_name(enum report_group g)
{
	return group_names[g];
}

/* A cell as its JSON object, or null when it has no figure. */
static json_t *
cell_json(const struct report_cell *c)
{
	json_t *o;

	if (!c->ok)
		return json_null();
	o = json_object();
	fields_json(cell_fields, NFIELDS(cell_fields), c, o);
	if (c->confirm.ok) {
		json_t *k = json_object();

		fields_json(confirm_fields, NFIELDS(confirm_fields),
		    &c->confirm, k);
		json_object_set_new(o, "confirm", k);
	}
	return o;
}

static void
cells_json(const struct report_release *r, json_t *o)
{
	for (int g = REPORT_PP; g <= REPORT_TG; g++) {
		json_t *cells = json_object();

		for (size_t i = 0; i < r->ncells; i++)
			if (r->cells[i].group == (enum report_group)g)
				json_object_set_new(cells, r->cells[i].key,
				    cell_json(&r->cells[i].c));
		json_object_set_new(o, group_names[g], cells);
	}
}

/* NAME and NAME_ci of a figure in ms. */
static void
ms_json(const struct report_ms *m, const char *name, json_t *o)
{
	out_value_ci(m->value, m->lo, m->hi, name, o);
}

static void
fit_json(const struct report_fit *f, json_t *o)
{
	json_t *at;

	if (!f->ok) {
		json_object_set_new(o, "per_token_ms", json_null());
		json_object_set_new(o, "fixed_ms", json_null());
		json_object_set_new(o, "ceiling_tps", json_null());
		return;
	}
	ms_json(&f->per_token, "per_token_ms", o);
	json_object_set_new(o, "model", json_string(f->curve ? "curve" :
	    "line"));
	at = json_array();
	for (size_t i = 0; i < f->ncost_at; i++) {
		json_t *c = json_object();

		json_object_set_new(c, "tokens",
		    json_integer(f->cost_at[i].tokens));
		ms_json(&f->cost_at[i].ms, "ms", c);
		json_array_append_new(at, c);
	}
	json_object_set_new(o, "per_token_at", at);
	ms_json(&f->fixed, "fixed_ms", o);
	if (f->fixed_not_estimable[0])
		json_object_set_new(o, "fixed_not_estimable",
		    json_string(f->fixed_not_estimable));
	if (f->fit_hint != NULL)
		json_object_set_new(o, "fit_hint", json_string(f->fit_hint));
	if (f->ceiling_contradicted[0]) {
		json_object_set_new(o, "ceiling_tps", json_null());
		json_object_set_new(o, "ceiling_ci", json_null());
		json_object_set_new(o, "ceiling_contradicted",
		    json_string(f->ceiling_contradicted));
		return;
	}
	json_object_set_new(o, "ceiling_tps", out_num(f->ceiling.value));
	json_object_set_new(o, "ceiling_ci", out_interval(f->ceiling.lo,
	    f->ceiling.hi));
	/* The curve's peak is at a length, not at an endless prompt. */
	if (f->curve)
		json_object_set_new(o, "ceiling_tokens",
		    out_num(f->ceiling_tokens));
}

static void
gpu_json(const struct report_gpu *g, json_t *o)
{
	json_t *x, *pp;

	if (!g->ok)
		return;
	x = json_object();
	pp = json_object();
	json_object_set_new(x, "runs", json_integer(g->runs));
	json_object_set_new(x, "throttled_runs",
	    json_integer(g->throttled_runs));
	json_object_set_new(x, "sm_mhz", g->runs > 0 ? json_real(g->sm_mhz) :
	    json_null());
	json_object_set_new(x, "mem_peak_bytes", g->mem_peak_bytes >= 0 ?
	    json_integer(g->mem_peak_bytes) : json_null());
	for (size_t i = 0; i < g->npp; i++)
		json_object_set_new(pp, g->pp[i].tokens, json_pack("{s:f,s:f,"
		    "s:I}", "energy_j", g->pp[i].energy_j, "tokens_per_j",
		    g->pp[i].tokens_per_j, "runs", (json_int_t)g->pp[i].runs));
	json_object_set_new(x, "pp", pp);
	json_object_set_new(o, "gpu", x);
}

static json_t *
failures_json(const struct report_release *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->nfailures; i++) {
		const struct report_failure *f = &r->failures[i];
		json_t *x = json_object();

		json_object_set_new(x, "reason", json_string(f->reason));
		json_object_set_new(x, "detail", json_string(f->detail ?
		    f->detail : ""));
		if (f->run >= 0)
			json_object_set_new(x, "run", json_integer(f->run));
		json_array_append_new(a, x);
	}
	return a;
}

/* Set key to v, a reference the object takes another of, when v is
 * there. */
static void
part_json(json_t *o, const char *key, json_t *v)
{
	if (v != NULL)
		json_object_set(o, key, v);
}

static json_t *
machine_json(const struct report_machine *m)
{
	json_t *o = json_object();

	if (m->ok)
		fields_json(machine_fields, NFIELDS(machine_fields), m, o);
	return o;
}

json_t *
report_head_json(const struct report *r)
{
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "engine", json_string(r->engine));
	json_object_set_new(o, "points", json_string(r->commits ? "commits" :
	    "releases"));
	json_object_set_new(o, "range", json_pack("{s:s,s:s}", "from",
	    r->from, "to", r->to));
	json_object_set_new(o, "metric", json_string(r->metric));
	json_object_set_new(o, "threshold", out_num(r->threshold));
	if (r->shape_unknown != NULL)
		json_object_set_new(o, "shape_unknown",
		    json_string(r->shape_unknown));
	json_object_set_new(o, "machine", machine_json(&r->machine));
	part_json(o, "reanchored", r->reanchored);
	json_object_set_new(o, "weights", json_pack("{s:s,s:o}", "name",
	    r->weights, "sha256", r->weights_sha256 ?
	    json_string(r->weights_sha256) : json_null()));
	json_object_set_new(o, "releases", json_array());
	return o;
}

json_t *
report_changes_json(const struct report *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->nchanges; i++) {
		const struct report_change *c = &r->changes[i];
		json_t *o = json_object();

		fields_json(change_fields, NFIELDS(change_fields), c, o);
		/* A bound there is none of is null: never a made-up one. */
		json_object_set_new(o, "change_ci", isfinite(c->lo) ||
		    isfinite(c->hi) ? out_interval(c->lo, c->hi) :
		    json_null());
		fields_json(change_after_fields, NFIELDS(change_after_fields),
		    c, o);
		json_array_append_new(a, o);
	}
	return a;
}

json_t *
report_release_json(const struct report_release *r)
{
	json_t *o = json_object(), *flags = json_array();

	if (o == NULL || flags == NULL) {
		json_decref(o);
		json_decref(flags);
		return NULL;
	}
	json_object_set_new(o, "version", json_string(r->version));
	json_object_set_new(o, "sha256", r->sha256 ? json_string(r->sha256) :
	    json_null());
	if (r->throttled_runs > 0)
		json_object_set_new(o, "throttled_runs",
		    json_integer(r->throttled_runs));
	fit_json(&r->fit, o);
	part_json(o, "fit_band", r->fit_band);
	gpu_json(&r->gpu, o);
	json_object_set_new(o, "status", json_string(r->status));
	cells_json(r, o);
	for (size_t i = 0; i < r->nflags; i++)
		json_array_append_new(flags, json_string(r->flags[i]));
	json_object_set_new(o, "flags", flags);
	json_object_set_new(o, "failures", failures_json(r));
	part_json(o, "points", r->points);
	if (r->same_archive_as != NULL)
		json_object_set_new(o, "same_archive_as",
		    json_string(r->same_archive_as));
	if (r->has_metric)
		ms_json(&r->metric, r->metric_bytes ? "metric_bytes" :
		    "metric_ms", o);
	part_json(o, "commit", r->commit);
	part_json(o, "canary", r->canary);
	return o;
}

int
report_has_canary(const struct report *rp)
{
	for (size_t i = 0; i < rp->nreleases; i++)
		if (json_is_object(rp->releases[i].canary))
			return 1;
	return 0;
}

int
report_release_flagged(const struct report_release *r, const char *flag)
{
	for (size_t i = 0; i < r->nflags; i++)
		if (strcmp(r->flags[i], flag) == 0)
			return 1;
	return 0;
}

static long long
count(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* A cell from its JSON: a null (or anything but an object) has no
 * figure, and each figure missing is NAN. */
static void
cell_read(const json_t *o, struct report_cell *c)
{
	const json_t *k = json_object_get(o, "confirm");

	memset(c, 0, sizeof(*c));
	c->ok = json_is_object(o);
	fields_read(cell_fields, NFIELDS(cell_fields), o, c);
	c->confirm.ok = json_is_object(k);
	fields_read(confirm_fields, NFIELDS(confirm_fields), k, &c->confirm);
}

/* o[name] and its interval o[name_ci]; NAN where missing. */
static void
value_ci_read(const json_t *o, const char *name, double *value,
    double *lo, double *hi)
{
	char key[64];
	const json_t *ci;

	snprintf(key, sizeof(key), "%s_ci", name);
	ci = json_object_get(o, key);
	*value = rep_real(o, name);
	*lo = rep_at(ci, 0);
	*hi = rep_at(ci, 1);
}

static void
ms_read(const json_t *o, const char *name, struct report_ms *m)
{
	value_ci_read(o, name, &m->value, &m->lo, &m->hi);
}

static void
rel_read(const json_t *o, const char *name, struct report_rel *r)
{
	value_ci_read(o, name, &r->value, &r->lo, &r->hi);
}

static void
fit_read(const json_t *r, struct report_fit *f)
{
	const json_t *at = json_object_get(r, "per_token_at"), *c;
	const json_t *hint = json_object_get(r, "fit_hint");
	size_t i;

	memset(f, 0, sizeof(*f));
	f->ok = json_is_string(json_object_get(r, "model"));
	ms_read(r, "per_token_ms", &f->per_token);
	f->curve = strcmp(rep_str(r, "model"), "curve") == 0;
	json_array_foreach(at, i, c) {
		if (f->ncost_at == FIT_MAX_CELLS)
			break;
		f->cost_at[f->ncost_at].tokens = count(c, "tokens");
		ms_read(c, "ms", &f->cost_at[f->ncost_at++].ms);
	}
	ms_read(r, "fixed_ms", &f->fixed);
	f->fixed_not_estimable = rep_str(r, "fixed_not_estimable");
	f->fit_hint = json_string_value(hint);
	f->ceiling.value = rep_real(r, "ceiling_tps");
	f->ceiling.lo = rep_at(json_object_get(r, "ceiling_ci"), 0);
	f->ceiling.hi = rep_at(json_object_get(r, "ceiling_ci"), 1);
	f->ceiling_contradicted = rep_str(r, "ceiling_contradicted");
	f->ceiling_tokens = rep_real(r, "ceiling_tokens");
}

static void
gpu_read(const json_t *r, struct report_gpu *g)
{
	const json_t *x = json_object_get(r, "gpu"), *e;
	const json_t *mem = json_object_get(x, "mem_peak_bytes");
	const char *k;

	memset(g, 0, sizeof(*g));
	g->ok = json_is_object(x);
	g->runs = count(x, "runs");
	g->throttled_runs = count(x, "throttled_runs");
	g->sm_mhz = rep_real(x, "sm_mhz");
	g->mem_peak_bytes = json_is_number(mem) ?
	    (long long)json_number_value(mem) : -1;
	json_object_foreach((json_t *)(uintptr_t)json_object_get(x, "pp"), k,
	    e) {
		struct report_energy *y = &g->pp[g->npp];

		if (g->npp == FIT_MAX_CELLS)
			break;
		snprintf(y->tokens, sizeof(y->tokens), "%s", k);
		y->energy_j = rep_real(e, "energy_j");
		y->tokens_per_j = rep_real(e, "tokens_per_j");
		y->runs = count(e, "runs");
		g->npp++;
	}
}

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

	fields_read(summary_fields, NFIELDS(summary_fields), o, s);
	s->lo = rep_at(ci, 0);
	s->hi = rep_at(ci, 1);
}

static int
serve_read(const json_t *sv, struct report_serve *out)
{
	const json_t *fig = json_object_get(sv, "figures_ms");
	const json_t *errs = json_object_get(sv, "failed_requests");
	const char *k;
	json_t *x;
	int oom = 0;

	out->ok = json_is_object(sv);
	fields_read(serve_fields, NFIELDS(serve_fields), sv, out);
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

void
report_release_clear(struct report_release *r)
{
	json_t *parts[] = { r->fit_band, r->points, r->commit, r->canary };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		json_decref(parts[i]);
	free(r->cells);
	free(r->failures);
	free(r->serve.figures);
	free(r->serve.errors);
	memset(r, 0, sizeof(*r));
}

/* A JSON part kept as it is: a new reference, NULL when missing. */
static json_t *
part_read(const json_t *r, const char *key)
{
	return json_incref(json_object_get(r, key));
}

static int
release_read(const json_t *r, struct report_release *out)
{
	const json_t *flags = json_object_get(r, "flags");
	const json_t *fails = json_object_get(r, "failures"), *x;
	size_t n = 0, i;

	memset(out, 0, sizeof(*out));
	out->version = rep_str(r, "version");
	out->sha256 = json_string_value(json_object_get(r, "sha256"));
	out->throttled_runs = count(r, "throttled_runs");
	out->status = rep_str(r, "status");
	json_array_foreach(flags, i, x)
		if (json_is_string(x) && out->nflags < REPORT_MAX_FLAGS)
			out->flags[out->nflags++] = json_string_value(x);
	out->same_archive_as = json_string_value(json_object_get(r,
	    "same_archive_as"));
	out->metric_bytes = json_object_get(r, "metric_bytes") != NULL;
	out->has_metric = out->metric_bytes ||
	    json_object_get(r, "metric_ms") != NULL;
	ms_read(r, out->metric_bytes ? "metric_bytes" : "metric_ms",
	    &out->metric);
	out->fit_band = part_read(r, "fit_band");
	out->points = part_read(r, "points");
	out->commit = part_read(r, "commit");
	out->canary = part_read(r, "canary");
	if (json_array_size(fails) > 0 && (out->failures = calloc(
	    json_array_size(fails), sizeof(*out->failures))) == NULL) {
		report_release_clear(out);
		return -1;
	}
	json_array_foreach(fails, i, x) {
		struct report_failure *f = &out->failures[out->nfailures++];
		const json_t *run = json_object_get(x, "run");

		f->reason = rep_str(x, "reason");
		f->detail = rep_str(x, "detail");
		f->run = json_is_integer(run) ? json_integer_value(run) : -1;
	}
	for (int g = REPORT_PP; g <= REPORT_TG; g++)
		n += json_object_size(json_object_get(r, group_names[g]));
	fit_read(r, &out->fit);
	gpu_read(r, &out->gpu);
	if (serve_read(json_object_get(r, "serve"), &out->serve) < 0) {
		report_release_clear(out);
		return -1;
	}
	if (n == 0)
		return 0;
	if ((out->cells = calloc(n, sizeof(*out->cells))) == NULL) {
		report_release_clear(out);
		return -1;
	}
	for (int g = REPORT_PP; g <= REPORT_TG; g++) {
		const char *key;
		json_t *v;

		json_object_foreach(json_object_get(r, group_names[g]), key,
		    v) {
			struct report_cell_at *at = &out->cells[out->ncells++];

			at->group = (enum report_group)g;
			snprintf(at->key, sizeof(at->key), "%s", key);
			cell_read(v, &at->c);
		}
	}
	return 0;
}

static void
machine_read(const json_t *m, struct report_machine *out)
{
	out->ok = json_object_size(m) > 0;
	fields_read(machine_fields, NFIELDS(machine_fields), m, out);
}

static void
head_read(const json_t *rep, struct report *out)
{
	const json_t *range = json_object_get(rep, "range");
	const json_t *w = json_object_get(rep, "weights");

	out->engine = rep_str(rep, "engine");
	out->commits = strcmp(rep_str(rep, "points"), "commits") == 0;
	out->from = rep_str(range, "from");
	out->to = rep_str(range, "to");
	out->metric = rep_str(rep, "metric");
	out->threshold = rep_real(rep, "threshold");
	out->shape_unknown = json_string_value(json_object_get(rep,
	    "shape_unknown"));
	machine_read(json_object_get(rep, "machine"), &out->machine);
	out->reanchored = part_read(rep, "reanchored");
	out->weights = rep_str(w, "name");
	out->weights_sha256 = json_string_value(json_object_get(w,
	    "sha256"));
}

/* What else changed, read from all (its JSON array). */
static int
changes_read(const json_t *all, struct report *out)
{
	const json_t *x;
	size_t i;

	out->has_changes = json_is_array(all);
	if (json_array_size(all) == 0)
		return 0;
	if ((out->changes = calloc(json_array_size(all),
	    sizeof(*out->changes))) == NULL)
		return -1;
	json_array_foreach(all, i, x) {
		struct report_change *c = &out->changes[out->nchanges++];
		const json_t *ci = json_object_get(x, "change_ci");

		fields_read(change_fields, NFIELDS(change_fields), x, c);
		c->lo = rep_at(ci, 0);
		c->hi = rep_at(ci, 1);
		fields_read(change_after_fields, NFIELDS(change_after_fields),
		    x, c);
		/* Owned, as the builder's. */
		if (c->bisect != NULL && (c->bisect = strdup(c->bisect)) ==
		    NULL)
			return -1;
	}
	return 0;
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
	fields_read(point_fields, NFIELDS(point_fields), o, p);
	rel_read(o, "metric_change", &p->metric_change);
}

void
report_commit_read(const json_t *o, struct report_commit *c)
{
	c->ok = json_is_object(o);
	fields_read(commit_fields, NFIELDS(commit_fields), o, c);
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
	fields_read(gradual_fields, NFIELDS(gradual_fields), g, out);
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

		fields_read(step_fields, NFIELDS(step_fields), x, st);
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
	fields_read(verdict_fields, NFIELDS(verdict_fields), v, out);
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
	fields_read(inconclusive_fields, NFIELDS(inconclusive_fields), u,
	    &out->inconclusive);
	rel_read(u, "change", &out->inconclusive.change);
	out->more_runs_said = json_is_integer(more) || json_is_null(more);
	out->more_runs = json_is_integer(more) ? json_integer_value(more) :
	    -1;
	fields_read(clocks_fields, NFIELDS(clocks_fields), clocks,
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
	fields_read(drill_fields, NFIELDS(drill_fields), drill,
	    &out->drill_down);
	out->diff.ok = json_is_object(diff);
	fields_read(diff_fields, NFIELDS(diff_fields), diff, &out->diff);
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
			fields_read(archive_fields, NFIELDS(archive_fields), x,
			    &out->archives[out->narchives++]);
	if ((out->runs = room(json_array_size(runs), sizeof(*out->runs),
	    &oom)) != NULL)
		json_array_foreach(runs, i, x)
			fields_read(run_line_fields, NFIELDS(run_line_fields),
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
	return json_object_get(o, key) != NULL ? count(o, key) : -1;
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
	fields_read(about_fields, NFIELDS(about_fields), a, out);
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
	fields_read(profile_fields, NFIELDS(profile_fields), p, out);
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

int
report_read(const json_t *rep, struct report *out)
{
	const json_t *rels = json_object_get(rep, "releases");
	size_t n = json_array_size(rels);

	memset(out, 0, sizeof(*out));
	head_read(rep, out);
	if (changes_read(json_object_get(rep, "what_else_changed"), out) < 0 ||
	    verdict_read(json_object_get(rep, "verdict"), &out->verdict) < 0 ||
	    reproduce_read(json_object_get(rep, "reproduce"),
	    &out->reproduce) < 0 ||
	    about_read(json_object_get(rep, "about"), &out->about) < 0 ||
	    profile_read(json_object_get(rep, "serve_profile"),
	    &out->serve_profile) < 0) {
		report_clear(out);
		return -1;
	}
	if (n == 0)
		return 0;
	if ((out->releases = calloc(n, sizeof(*out->releases))) == NULL) {
		report_clear(out);
		return -1;
	}
	for (out->nreleases = 0; out->nreleases < n; out->nreleases++)
		if (release_read(json_array_get(rels, out->nreleases),
		    &out->releases[out->nreleases]) < 0) {
			report_clear(out);
			return -1;
		}
	return 0;
}

void
report_clear(struct report *r)
{
	for (size_t i = 0; i < r->nreleases; i++)
		report_release_clear(&r->releases[i]);
	free(r->releases);
	json_decref(r->reanchored);
	for (size_t i = 0; i < r->nchanges; i++)
		free(r->changes[i].bisect);
	free(r->changes);
	verdict_clear(&r->verdict);
	reproduce_clear(&r->reproduce);
	free(r->about.builds);
	free(r->serve_profile.prompt);
	free(r->serve_profile.output);
	memset(r, 0, sizeof(*r));
}

const struct report_cell *
report_release_cell(const struct report_release *r, enum report_group g,
    const char *key)
{
	for (size_t i = 0; i < r->ncells; i++)
		if (r->cells[i].group == g && strcmp(r->cells[i].key,
		    key) == 0)
			return &r->cells[i].c;
	return NULL;
}
