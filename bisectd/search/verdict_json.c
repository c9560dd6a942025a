/*
 * verdict_json.c: a bisection verdict as the report JSON's "verdict"
 * object (see verdict_json.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/analysis/fit.h"
#include "store/store.h"
#include "verdict_json.h"

/* A number, or null where it is not finite: never a made-up zero. */
json_t *
out_num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

json_t *
out_interval(double lo, double hi)
{
	json_t *a = json_array();

	json_array_append_new(a, out_num(lo));
	json_array_append_new(a, out_num(hi));
	return a;
}

void
out_value_ci(double value, double lo, double hi, const char *name,
    json_t *o)
{
	char key[64];

	json_object_set_new(o, name, out_num(value));
	snprintf(key, sizeof(key), "%s_ci", name);
	json_object_set_new(o, key, out_interval(lo, hi));
}

json_t *
out_estimate_ms(const struct estimate *x, const char *name, json_t *o)
{
	out_value_ci(x->value / 1e6, x->lo / 1e6, x->hi / 1e6, name, o);
	return o;
}

json_t *
out_fixed_ms(const struct estimate *x, const char *why, const char *hint,
    const char *name, json_t *o)
{
	char key[64], note[512];

	if (why == NULL)
		return out_estimate_ms(x, name, o);
	json_object_set_new(o, name, json_null());
	snprintf(key, sizeof(key), "%s_ci", name);
	json_object_set_new(o, key, out_interval(NAN, NAN));
	out_fixed_note(why, hint, note, sizeof(note));
	json_object_set_new(o, "fixed_not_estimable", json_string(note));
	return o;
}

void
out_fixed_note(const char *why, const char *hint, char *buf, size_t len)
{
	snprintf(buf, len, "%s; %s", why, hint ? hint : "measure longer "
	    "prompts (fit lengths well above where the line bends)");
}

/* A relative change and its interval under name and name_ci. */
static void
out_change(const struct estimate *x, const char *name, json_t *o)
{
	out_value_ci(x->value, x->lo, x->hi, name, o);
}

static const char *
version_at(const struct store_release *rel, size_t i)
{
	return rel[i].version;
}

static json_t *
change_json(const struct bisect_change *c, const struct store_release *r)
{
	json_t *o = json_object(), *cand = json_array(), *ratios, *ratios_ci;

	json_object_set_new(o, "first_bad", json_string(version_at(r,
	    c->first_bad)));
	json_object_set_new(o, "last_good", json_string(version_at(r,
	    c->last_good)));
	for (size_t i = 0; i < c->ncandidates; i++)
		json_array_append_new(cand, json_string(version_at(r,
		    c->candidates[i])));
	json_object_set_new(o, "candidates", cand);
	json_object_set_new(o, "confirmed", json_boolean(c->confirmed));
	json_object_set_new(o, "in_slide", json_boolean(c->in_slide));
	out_change(&c->metric_rel, "metric_change", o);
	if (isfinite(c->confirm_rel.value))
		out_change(&c->confirm_rel, "confirm_change", o);
	if (!c->has_fit) {
		json_object_set_new(o, "kind", json_null());
		return o;
	}
	json_object_set_new(o, "kind", json_string(fit_kind_name(c->kind)));
	out_estimate_ms(&c->per_token_delta_ns, "per_token_delta_ms", o);
	out_fixed_ms(&c->fixed_delta_ns, c->fixed_estimable ? NULL :
	    c->fixed_why, c->fit_hint, "fixed_delta_ms", o);
	ratios = json_object();
	ratios_ci = json_object();
	for (size_t i = 0; i < c->nratios; i++) {
		const struct estimate *x = &c->ratios[i].ratio;
		char key[32];

		snprintf(key, sizeof(key), "%d", c->ratios[i].tokens);
		json_object_set_new(ratios, key, out_num(x->value));
		json_object_set_new(ratios_ci, key, out_interval(x->lo,
		    x->hi));
	}
	json_object_set_new(o, "ratios", ratios);
	json_object_set_new(o, "ratios_ci", ratios_ci);
	json_object_set_new(o, "ratio_trend",
	    json_string(fit_trend_name(c->trend)));
	return o;
}

/* The slide of a gradual verdict. */
static json_t *
gradual_json(const struct bisect_gradual *g, const struct store_release *r)
{
	json_t *o = json_object(), *rel = json_array(), *btw = json_array();
	json_t *steps = json_array();

	json_object_set_new(o, "from", json_string(version_at(r, g->lo)));
	json_object_set_new(o, "to", json_string(version_at(r, g->hi)));
	for (size_t i = g->lo + 1; i <= g->hi; i++)
		json_array_append_new(rel, json_string(version_at(r, i)));
	json_object_set_new(o, "releases", rel);
	out_change(&g->total_rel, "total_change", o);
	out_change(&g->per_release_rel, "per_release_change", o);
	for (size_t i = 0; i < g->nbetween; i++)
		json_array_append_new(btw, json_string(version_at(r,
		    g->between[i])));
	json_object_set_new(o, "measured_between", btw);
	for (size_t i = 0; i < g->nsteps; i++) {
		json_t *st = json_object();

		json_object_set_new(st, "from", json_string(version_at(r,
		    g->steps[i].lo)));
		json_object_set_new(st, "to", json_string(version_at(r,
		    g->steps[i].hi)));
		out_change(&g->steps[i].rel, "change", st);
		json_array_append_new(steps, st);
	}
	json_object_set_new(o, "largest_steps", steps);
	return o;
}

json_t *
verdict_json(const struct bisect_verdict *v, const struct store_release *r)
{
	json_t *o = json_object(), *points = json_array();

	json_object_set_new(o, "status",
	    json_string(bisect_status_name(v->status)));
	json_object_set_new(o, "reason", json_string(v->reason ? v->reason :
	    ""));
	out_change(&v->endpoints_rel, "endpoints_change", o);
	for (size_t i = 0; i < v->nchanges; i++)
		json_array_append_new(points, change_json(&v->changes[i], r));
	if (v->nchanges > 0) {
		/* The main change point's fields at the top, as documented. */
		json_t *m = change_json(&v->changes[v->main], r);

		json_object_update(o, m);
		json_decref(m);
	} else {
		json_object_set_new(o, "first_bad", json_null());
		json_object_set_new(o, "last_good", json_null());
		json_object_set_new(o, "candidates", json_array());
		json_object_set_new(o, "kind", json_string(
		    v->status == BISECT_NO_REGRESSION ? "none" : "unknown"));
		json_object_set_new(o, "confirmed", json_false());
	}
	if (v->status == BISECT_GRADUAL)
		json_object_set_new(o, "gradual", gradual_json(&v->slide, r));
	if (v->has_unknown) {
		json_t *u = json_object();

		json_object_set_new(u, "from", json_string(version_at(r,
		    v->unknown_lo)));
		json_object_set_new(u, "to", json_string(version_at(r,
		    v->unknown_hi)));
		if (v->unknown_probe != SIZE_MAX)
			json_object_set_new(u, "probe", json_string(
			    version_at(r, v->unknown_probe)));
		json_object_set_new(u, "change", out_num(v->unknown_rel.value));
		json_object_set_new(u, "change_ci", out_interval(v->unknown_rel.lo,
		    v->unknown_rel.hi));
		json_object_set_new(o, "inconclusive", u);
	}
	/* Power: what a "no" could have seen, what an "unknown" lacks. */
	if (v->status == BISECT_NO_REGRESSION && isfinite(v->detectable_rel))
		json_object_set_new(o, "detectable_change",
		    out_num(v->detectable_rel));
	if (v->status != BISECT_REGRESSION && v->runs_used >= 0)
		json_object_set_new(o, "runs_per_release",
		    json_integer(v->runs_used));
	if (v->status == BISECT_UNKNOWN)
		json_object_set_new(o, "more_runs_per_release",
		    v->more_runs > 0 ? json_integer(v->more_runs) :
		    json_null());
	json_object_set_new(o, "change_points", points);
	return o;
}

/* One change point: "at V, KIND, confirmed", or its candidates. */
static void
change_words(const json_t *c, int with_confirm, char *buf, size_t len)
{
	const char *bad = json_string_value(json_object_get(c, "first_bad"));
	const char *kind = json_string_value(json_object_get(c, "kind"));
	const json_t *cand = json_object_get(c, "candidates");
	size_t n = json_array_size(cand), off;

	if (n > 1) {
		off = (size_t)snprintf(buf, len, "among %zu candidates", n);
		for (size_t i = 0; i < n && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
			    i ? ", " : " ", json_string_value(
			    json_array_get(cand, i)));
	} else
		off = (size_t)snprintf(buf, len, "at %s", bad ? bad : "?");
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, ", %s",
		    kind ? kind : "kind unknown");
	if (with_confirm && off < len)
		snprintf(buf + off, len - off, ", %s", json_is_true(
		    json_object_get(c, "confirmed")) ? "confirmed" :
		    "not confirmed");
}

const char *
verdict_words(const json_t *v, char *buf, size_t len)
{
	const char *status = json_string_value(json_object_get(v, "status"));
	const json_t *points = json_object_get(v, "change_points");
	const json_t *ch = json_object_get(v, "endpoints_change");
	size_t n = json_array_size(points), off;
	char one[512];

	if (len == 0)
		return buf;
	if (status == NULL) {
		snprintf(buf, len, "no verdict");
	} else if (strcmp(status, "regression") == 0 && n > 1) {
		off = (size_t)snprintf(buf, len, "%zu regressions:", n);
		for (size_t i = 0; i < n && off < len; i++) {
			change_words(json_array_get(points, i), 0, one,
			    sizeof(one));
			off += (size_t)snprintf(buf + off, len - off, "%s %s",
			    i ? ";" : "", one);
		}
	} else if (strcmp(status, "regression") == 0) {
		change_words(v, 1, one, sizeof(one));
		snprintf(buf, len, "regression %s", one);
	} else if (strcmp(status, "gradual") == 0) {
		const json_t *g = json_object_get(v, "gradual");
		const json_t *t = json_object_get(g, "total_change");
		const json_t *pr = json_object_get(g, "per_release_change");
		const char *from = json_string_value(json_object_get(g,
		    "from"));
		const char *to = json_string_value(json_object_get(g, "to"));

		snprintf(buf, len, "gradual regression from %s to %s, %+.1f%% "
		    "over %zu releases (%+.1f%% a release)", from ? from : "?",
		    to ? to : "?", 100 * json_number_value(t),
		    json_array_size(json_object_get(g, "releases")),
		    100 * json_number_value(pr));
	} else if (strcmp(status, "no-regression") == 0) {
		if (json_is_number(ch))
			snprintf(buf, len, "no regression (%+.1f%% end to "
			    "end)", 100 * json_number_value(ch));
		else
			snprintf(buf, len, "no regression");
	} else {
		const char *why = json_string_value(json_object_get(v,
		    "reason"));

		snprintf(buf, len, "%s%s%s%s", status, why && why[0] ?
		    " (" : "", why && why[0] ? why : "", why && why[0] ?
		    ")" : "");
	}
	return buf;
}
