/*
 * report_json.c: the typed parts of a report (report.h) as the report's
 * JSON and back.  Every key of those parts is spelt here and nowhere
 * else; the golden files of tests/golden/ pin the bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/search/verdict_json.h"
#include "fields.h"
#include "report.h"

static const char *const group_names[] = { "pp", "tg" };

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
	json_object_set_new(o, "tps", out_num(c->tps));
	json_object_set_new(o, "sd", out_num(c->sd));
	json_object_set_new(o, "n", json_integer(c->n));
	json_object_set_new(o, "cv", out_num(c->cv));
	json_object_set_new(o, "ms", out_num(c->ms));
	json_object_set_new(o, "ms_sd", out_num(c->ms_sd));
	json_object_set_new(o, "ms_median", out_num(c->ms_median));
	/* Both levels of spread: between process runs (what intervals and
	 * comparisons rest on) and between samples inside one run. */
	json_object_set_new(o, "samples", json_integer(c->samples));
	json_object_set_new(o, "ms_sd_between", out_num(c->ms_sd_between));
	json_object_set_new(o, "ms_sd_within", out_num(c->ms_sd_within));
	json_object_set_new(o, "cv_within", out_num(c->cv_within));
	if (c->lower_bound)
		json_object_set_new(o, "lower_bound", json_true());
	if (c->throttled_runs > 0)
		json_object_set_new(o, "throttled_runs",
		    json_integer(c->throttled_runs));
	if (c->confirm.ok)
		json_object_set_new(o, "confirm", json_pack("{s:o,s:I,s:o,s:o,"
		    "s:I}", "tps", out_num(c->confirm.tps), "n",
		    (json_int_t)c->confirm.n, "ms", out_num(c->confirm.ms),
		    "ms_sd", out_num(c->confirm.ms_sd), "samples",
		    (json_int_t)c->confirm.samples));
	return o;
}

void
report_cells_json(const struct report_release *r, json_t *o)
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
	c->tps = rep_real(o, "tps");
	c->sd = rep_real(o, "sd");
	c->n = count(o, "n");
	c->cv = rep_real(o, "cv");
	c->ms = rep_real(o, "ms");
	c->ms_sd = rep_real(o, "ms_sd");
	c->ms_median = rep_real(o, "ms_median");
	c->samples = count(o, "samples");
	c->ms_sd_between = rep_real(o, "ms_sd_between");
	c->ms_sd_within = rep_real(o, "ms_sd_within");
	c->cv_within = rep_real(o, "cv_within");
	c->lower_bound = json_is_true(json_object_get(o, "lower_bound"));
	c->throttled_runs = count(o, "throttled_runs");
	c->confirm.ok = json_is_object(k);
	c->confirm.tps = rep_real(k, "tps");
	c->confirm.n = count(k, "n");
	c->confirm.ms = rep_real(k, "ms");
	c->confirm.ms_sd = rep_real(k, "ms_sd");
	c->confirm.samples = count(k, "samples");
}

static void
release_clear(struct report_release *r)
{
	free(r->cells);
	memset(r, 0, sizeof(*r));
}

static int
release_read(const json_t *r, struct report_release *out)
{
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	for (int g = REPORT_PP; g <= REPORT_TG; g++)
		n += json_object_size(json_object_get(r, group_names[g]));
	if (n == 0)
		return 0;
	if ((out->cells = calloc(n, sizeof(*out->cells))) == NULL)
		return -1;
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

int
report_read(const json_t *rep, struct report *out)
{
	const json_t *rels = json_object_get(rep, "releases");
	size_t n = json_array_size(rels);

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return 0;
	if ((out->releases = calloc(n, sizeof(*out->releases))) == NULL)
		return -1;
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
		release_clear(&r->releases[i]);
	free(r->releases);
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
