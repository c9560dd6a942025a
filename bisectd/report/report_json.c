/*
 * report_json.c: the typed parts of a report (report.h) as the report's
 * JSON and back: the head, the releases, what else changed.  Every key
 * of those parts is spelt here and nowhere else; the golden files of
 * tests/golden/ pin the bytes.  The parts only read are report_read.c's.
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
#include "report_int.h"

static const char *const group_names[] = { "pp", "tg" };

/* The members of table f (report_int.h) of the struct at v into object
 * o, in the table's order. */
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

void
report_fields_read(const struct field *f, size_t n, const json_t *o, void *v)
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
	report_fields_read(cell_fields, NFIELDS(cell_fields), o, c);
	c->confirm.ok = json_is_object(k);
	report_fields_read(confirm_fields, NFIELDS(confirm_fields), k, &c->confirm);
}

/* o[name] and its interval o[name_ci]; NAN where missing. */
void
report_value_ci_read(const json_t *o, const char *name, double *value,
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
	report_value_ci_read(o, name, &m->value, &m->lo, &m->hi);
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

void
report_release_clear(struct report_release *r)
{
	json_t *parts[] = { r->fit_band, r->points, r->commit, r->canary };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		json_decref(parts[i]);
	free(r->cells);
	free(r->failures);
	report_serve_clear(&r->serve);
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
	if (report_serve_read(json_object_get(r, "serve"), &out->serve) < 0) {
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
	report_fields_read(machine_fields, NFIELDS(machine_fields), m, out);
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
	out->serve = json_object_get(rep, "serve_profile") != NULL;
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

		report_fields_read(change_fields, NFIELDS(change_fields), x, c);
		c->lo = rep_at(ci, 0);
		c->hi = rep_at(ci, 1);
		report_fields_read(change_after_fields, NFIELDS(change_after_fields),
		    x, c);
		/* Owned, as the builder's. */
		if (c->bisect != NULL && (c->bisect = strdup(c->bisect)) ==
		    NULL)
			return -1;
	}
	return 0;
}

int
report_read(const json_t *rep, struct report *out)
{
	const json_t *rels = json_object_get(rep, "releases");
	size_t n = json_array_size(rels);

	memset(out, 0, sizeof(*out));
	head_read(rep, out);
	if (changes_read(json_object_get(rep, "what_else_changed"), out) < 0 ||
	    report_parts_read(rep, out) < 0) {
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
	report_parts_clear(r);
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
