/*
 * test_report_value.c: the typed parts of a report (report.h: its head,
 * each release's entry, what else changed) read back from the report's
 * JSON and encode to the same bytes, the verdict and the serve figures
 * read into their structs, and what an entry lacks reads as missing
 * (NAN, NULL, none), never as a made-up zero.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/report/report.h"
#include "check.h"

#define DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | \
	JSON_REAL_PRECISION(17))

/* Whether got (a new reference, decref'd here) dumps as want. */
static int
same_json(json_t *got, const json_t *want)
{
	char *a = json_dumps(want, DUMP_FLAGS);
	char *b = got ? json_dumps(got, DUMP_FLAGS) : NULL;
	int same = a && b && strcmp(a, b) == 0;

	if (!same)
		fprintf(stderr, "want %s\n got %s\n", a ? a : "?", b ? b :
		    "?");
	free(a);
	free(b);
	json_decref(got);
	return same;
}

/* The head of rp encodes as every member of rep before "releases". */
static void
head_encodes_as(const struct report *rp, const json_t *rep)
{
	json_t *head = report_head_json(rp), *want = json_object();
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)rep, key, v) {
		if (strcmp(key, "releases") == 0)
			break;
		json_object_set(want, key, v);
	}
	json_object_set_new(want, "releases", json_array());
	CHECK(same_json(head, want));
	json_decref(want);
}

/* Each release of the golden report, read and encoded again, is the
 * golden's to the byte: the decoder knows every key the encoder
 * writes. */
static void
test_golden_round_trip(void)
{
	char path[4096], *text;
	const json_t *rels;
	struct report rp;
	json_t *rep;

	snprintf(path, sizeof(path), "%s/tests/golden/report.json",
	    check_source_dir());
	text = check_read_file(path);
	CHECK(text != NULL);
	rep = json_loads(text ? text : "", 0, NULL);
	free(text);
	CHECK(rep != NULL);
	rels = json_object_get(rep, "releases");
	CHECK(json_array_size(rels) >= 2);
	CHECK_INT(report_read(rep, &rp), 0);
	CHECK_INT(rp.nreleases, json_array_size(rels));
	for (size_t i = 0; i < rp.nreleases; i++)
		CHECK(same_json(report_release_json(&rp.releases[i]),
		    json_array_get(rels, i)));
	head_encodes_as(&rp, rep);
	CHECK(rp.nchanges > 0);
	CHECK(same_json(report_changes_json(&rp), json_object_get(rep,
	    "what_else_changed")));
	/* Some release of it is measured, with cells and a fit. */
	CHECK(rp.nreleases > 0 && rp.releases[0].ncells > 0);
	CHECK(rp.nreleases > 0 && rp.releases[0].fit.ok);
	report_clear(&rp);
	json_decref(rep);
}

/* A release the golden store has no example of: a curve whose ceiling
 * is contradicted, a fixed part not estimable, GPU figures, a failed
 * run and a failed fetch.  Encoded, read back and encoded again, the
 * same bytes; its fields as they were set. */
static void
test_curve_gpu_failures(void)
{
	struct report_failure fails[2] = {
		{ "timeout", "ran past 60 s", 17 },
		{ "fetch", "404", -1 },
	};
	struct report_release r, *back;
	struct report rp;
	json_t *rep, *o;

	memset(&r, 0, sizeof(r));
	r.version = "0.2.1";
	r.sha256 = NULL;
	r.status = "measured";
	r.fit.ok = 1;
	r.fit.curve = 1;
	r.fit.per_token = (struct report_ms){ 0.05, 0.04, 0.06 };
	r.fit.ncost_at = 2;
	r.fit.cost_at[0] = (struct report_cost_at){ 64, { 0.02, 0.01,
	    0.03 } };
	r.fit.cost_at[1] = (struct report_cost_at){ 512, { 0.07, 0.06,
	    0.08 } };
	r.fit.fixed = (struct report_ms){ NAN, NAN, NAN };
	r.fit.fixed_not_estimable = "the intercept is negative; measure more";
	r.fit.fit_hint = "three lengths";
	r.fit.ceiling = (struct report_ms){ NAN, NAN, NAN };
	r.fit.ceiling_contradicted = "pp64 measured faster";
	r.fit.ceiling_tokens = NAN;
	r.gpu.ok = 1;
	r.gpu.runs = 6;
	r.gpu.throttled_runs = 2;
	r.gpu.sm_mhz = 1980;
	r.gpu.mem_peak_bytes = -1;
	r.gpu.npp = 1;
	snprintf(r.gpu.pp[0].tokens, sizeof(r.gpu.pp[0].tokens), "512");
	r.gpu.pp[0].energy_j = 12.5;
	r.gpu.pp[0].tokens_per_j = 41;
	r.gpu.pp[0].runs = 3;
	r.flags[r.nflags++] = "fixed-not-estimable";
	r.flags[r.nflags++] = "ceiling-contradicted";
	r.failures = fails;
	r.nfailures = 2;
	r.same_archive_as = "0.2.0";
	r.has_metric = 1;
	r.metric = (struct report_ms){ 10.5, 10.1, 10.9 };

	o = report_release_json(&r);
	CHECK(o != NULL);
	CHECK(json_is_null(json_object_get(o, "ceiling_tps")));
	CHECK(json_is_null(json_object_get(o, "ceiling_ci")));
	CHECK(json_object_get(o, "ceiling_tokens") == NULL);
	CHECK(json_is_null(json_object_get(o, "fixed_ms")));
	CHECK(json_is_null(json_object_get(o, "sha256")));
	CHECK(json_is_null(json_object_get(json_object_get(o, "gpu"),
	    "mem_peak_bytes")));
	CHECK(json_object_get(json_array_get(json_object_get(o, "failures"),
	    1), "run") == NULL);
	rep = json_pack("{s:[o]}", "releases", o);
	CHECK_INT(report_read(rep, &rp), 0);
	CHECK_INT(rp.nreleases, 1);
	back = &rp.releases[0];
	CHECK(same_json(report_release_json(back), o));
	CHECK_STR(back->version, "0.2.1");
	CHECK(back->sha256 == NULL);
	CHECK(back->fit.ok && back->fit.curve);
	CHECK_INT(back->fit.ncost_at, 2);
	CHECK_INT(back->fit.cost_at[1].tokens, 512);
	CHECK_NEAR(back->fit.cost_at[1].ms.hi, 0.08, 1e-12);
	CHECK(isnan(back->fit.fixed.value) && isnan(back->fit.ceiling.value));
	CHECK_STR(back->fit.ceiling_contradicted, "pp64 measured faster");
	CHECK_STR(back->fit.fit_hint, "three lengths");
	CHECK_INT(back->gpu.mem_peak_bytes, -1);
	CHECK_STR(back->gpu.pp[0].tokens, "512");
	CHECK_INT(back->gpu.pp[0].runs, 3);
	CHECK_INT(back->nfailures, 2);
	CHECK_INT(back->failures[0].run, 17);
	CHECK_INT(back->failures[1].run, -1);
	CHECK(report_release_flagged(back, "ceiling-contradicted"));
	CHECK(!report_release_flagged(back, "noisy"));
	CHECK_NEAR(back->metric.lo, 10.1, 1e-12);
	report_clear(&rp);
	json_decref(rep);
}

/* A release object with nothing in it but its version: every figure
 * missing, no cell, no fit, no GPU, no metric. */
static void
test_missing_is_missing(void)
{
	json_t *rep = json_pack("{s:[{s:s,s:{s:n}}]}", "releases", "version",
	    "1.0", "pp", "512");
	const struct report_release *r;
	struct report rp;

	CHECK_INT(report_read(rep, &rp), 0);
	CHECK_INT(rp.nreleases, 1);
	r = &rp.releases[0];
	CHECK_STR(r->version, "1.0");
	CHECK_STR(r->status, "");
	CHECK(!r->fit.ok);
	CHECK(isnan(r->fit.per_token.value) && isnan(r->fit.per_token.lo));
	CHECK(isnan(r->fit.ceiling_tokens));
	CHECK_STR(r->fit.fixed_not_estimable, "");
	CHECK(!r->gpu.ok && isnan(r->gpu.sm_mhz));
	CHECK(!r->has_metric && isnan(r->metric.value));
	/* A null cell is there, without a figure. */
	CHECK_INT(r->ncells, 1);
	CHECK(report_release_cell(r, REPORT_PP, "512") != NULL);
	CHECK(!report_release_cell(r, REPORT_PP, "512")->ok);
	CHECK(isnan(report_release_cell(r, REPORT_PP, "512")->tps));
	CHECK(report_release_cell(r, REPORT_TG, "512") == NULL);
	CHECK(report_release_cell(r, REPORT_PP, "128") == NULL);
	CHECK(r->nflags == 0 && r->nfailures == 0 && r->canary == NULL);
	report_clear(&rp);
	json_decref(rep);
}

/* A change no one searched, with the bisect that does, and one whose
 * interval has no upper bound: null there, not a number made up. */
static void
test_changes(void)
{
	char cmd[] = "bisectctl bisect --now --metric tg32 e 1..2";
	struct report r, back;
	struct report_change c[2];
	json_t *all, *rep;

	memset(&r, 0, sizeof(r));
	memset(c, 0, sizeof(c));
	for (int i = 0; i < 2; i++) {
		c[i].from = "1";
		c[i].to = "2";
		c[i].unit = "tok/s";
		c[i].moved = i ? "unsure" : "slower";
	}
	snprintf(c[0].metric, sizeof(c[0].metric), "tg32");
	snprintf(c[0].what, sizeof(c[0].what), "decode of 32 tokens");
	c[0].change = -0.3;
	c[0].lo = -0.35;
	c[0].hi = -0.25;
	c[0].bisect = cmd;
	snprintf(c[1].metric, sizeof(c[1].metric), "pp512");
	snprintf(c[1].what, sizeof(c[1].what), "prefill of 512 tokens");
	c[1].change = -0.2;
	c[1].lo = -1;
	c[1].hi = INFINITY;
	c[1].searched = 1;
	r.changes = c;
	r.nchanges = 2;
	all = report_changes_json(&r);
	CHECK(json_is_null(json_array_get(json_object_get(json_array_get(all,
	    1), "change_ci"), 1)));
	CHECK(json_object_get(json_array_get(all, 1), "bisect") == NULL);
	rep = json_pack("{s:o}", "what_else_changed", all);
	CHECK_INT(report_read(rep, &back), 0);
	CHECK(back.has_changes);
	CHECK_INT(back.nchanges, 2);
	CHECK_STR(back.changes[0].bisect, cmd);
	CHECK_STR(back.changes[0].metric, "tg32");
	CHECK(back.changes[1].bisect == NULL);
	CHECK(back.changes[1].searched && !back.changes[0].searched);
	CHECK(isnan(back.changes[1].hi));
	CHECK_NEAR(back.changes[1].lo, -1, 1e-12);
	CHECK(same_json(report_changes_json(&back), all));
	report_clear(&back);
	json_decref(rep);
}

/* A regression's verdict read into its struct: the main change point at
 * the top, the ratios in the JSON's order, the commits; what it lacks
 * (an interval, the slide, the diff) is missing, never zero. */
static void
test_verdict(void)
{
	const char *text = "{\"verdict\": {\"status\": \"regression\", "
	    "\"reason\": \"why\", \"endpoints_change\": 0.6, "
	    "\"first_bad\": \"0.2.3\", \"last_good\": \"0.2.2\", "
	    "\"candidates\": [\"0.2.3\"], \"confirmed\": true, "
	    "\"metric_change\": 0.62, \"kind\": \"per-token\", "
	    "\"per_token_delta_ms\": 0.2, \"per_token_delta_ms_ci\": "
	    "[0.18, 0.22], \"fixed_delta_ms\": null, \"fixed_delta_ms_ci\": "
	    "[null, null], \"fixed_not_estimable\": \"a curve\", "
	    "\"ratios\": {\"512\": 1.5, \"128\": 1.2, \"64\": null}, "
	    "\"ratios_ci\": {\"512\": [1.4, 1.6], \"128\": [null, 1.3]}, "
	    "\"ratio_trend\": \"rising\", \"clocks\": {\"good\": \"0.2.2\", "
	    "\"bad\": \"0.2.3\", \"good_sm_mhz\": 1980.0, \"bad_sm_mhz\": "
	    "1881.0, \"differ\": true}, \"commit\": {\"id\": \"abcdef\", "
	    "\"short\": \"abc\", \"subject\": \"s\", \"author\": \"a\", "
	    "\"date\": \"d\", \"url\": null, \"build\": \"failed\"}, "
	    "\"candidate_commits\": [], \"change_points\": [{\"first_bad\": "
	    "\"0.2.3\", \"last_good\": \"0.2.2\", \"kind\": null, "
	    "\"confirmed\": false, \"metric_change\": -0.1}]}}";
	const struct report_verdict *v;
	struct report rp;
	json_t *rep = json_loads(text, 0, NULL), *none;

	CHECK(rep != NULL);
	CHECK_INT(report_read(rep, &rp), 0);
	v = &rp.verdict;
	CHECK(v->ok);
	CHECK_STR(v->status, "regression");
	CHECK_STR(v->reason, "why");
	CHECK_STR(v->change.first_bad, "0.2.3");
	CHECK_STR(v->change.last_good, "0.2.2");
	CHECK_STR(v->change.kind, "per-token");
	CHECK(v->change.confirmed);
	CHECK_NEAR(v->change.metric_change.value, 0.62, 1e-12);
	/* No metric_change_ci: the interval is missing, not [0, 0]. */
	CHECK(isnan(v->change.metric_change.lo));
	CHECK(isnan(v->change.metric_change.hi));
	CHECK_INT(v->ncandidates, 1);
	CHECK_STR(v->candidates[0], "0.2.3");
	CHECK_NEAR(v->endpoints_change, 0.6, 1e-12);
	CHECK(v->has_deltas);
	CHECK_NEAR(v->per_token_delta.lo, 0.18, 1e-12);
	CHECK_NEAR(v->per_token_delta.hi, 0.22, 1e-12);
	CHECK(isnan(v->fixed_delta.value) && isnan(v->fixed_delta.lo));
	CHECK_STR(v->fixed_not_estimable, "a curve");
	CHECK_INT(v->nratios, 3);
	CHECK_STR(v->ratios[0].tokens, "512");
	CHECK_STR(v->ratios[1].tokens, "128");
	CHECK_NEAR(v->ratios[0].hi, 1.6, 1e-12);
	CHECK(isnan(v->ratios[1].lo));
	CHECK_NEAR(v->ratios[1].hi, 1.3, 1e-12);
	CHECK(isnan(v->ratios[2].value) && isnan(v->ratios[2].lo));
	CHECK_STR(v->ratio_trend, "rising");
	CHECK(v->clocks.ok && v->clocks.differ);
	CHECK_NEAR(v->clocks.bad_sm_mhz, 1881, 1e-9);
	CHECK(v->commit.ok);
	CHECK_STR(v->commit.short_id, "abc");
	CHECK(v->commit.url == NULL);
	CHECK_STR(v->commit.build, "failed");
	CHECK(v->has_candidate_commits && v->ncandidate_commits == 0);
	CHECK_INT(v->npoints, 1);
	CHECK_STR(v->points[0].kind, "");
	CHECK(!v->points[0].confirmed);
	CHECK_NEAR(v->points[0].metric_change.value, -0.1, 1e-12);
	CHECK(isnan(v->points[0].metric_change.lo));
	/* Not gradual, nothing inconclusive, no power, no canary. */
	CHECK(!v->gradual.ok && v->gradual.nsteps == 0);
	CHECK(isnan(v->gradual.total.value));
	CHECK(!v->inconclusive.ok && isnan(v->inconclusive.change.value));
	CHECK(isnan(v->detectable_change) && !v->more_runs_said);
	CHECK(!v->diff.ok && !v->drill_down.ok);
	CHECK_STR(v->first_bad_sha256, "");
	report_clear(&rp);
	json_decref(rep);

	/* An unknown that stopped without an interval, none that would
	 * decide it; and a report without a verdict. */
	rep = json_loads("{\"verdict\": {\"status\": \"unknown\", "
	    "\"inconclusive\": {\"from\": \"1\", \"to\": \"2\", \"change\": "
	    "0.05}, \"runs_per_release\": 6, \"more_runs_per_release\": null, "
	    "\"clocks\": {\"good\": \"1\", \"bad\": \"2\", \"good_sm_mhz\": "
	    "null, \"bad_sm_mhz\": 1881.0}}}", 0, NULL);
	CHECK_INT(report_read(rep, &rp), 0);
	v = &rp.verdict;
	CHECK(v->inconclusive.ok);
	CHECK_STR(v->inconclusive.to, "2");
	CHECK_NEAR(v->inconclusive.change.value, 0.05, 1e-12);
	CHECK(isnan(v->inconclusive.change.lo));
	CHECK(isnan(v->inconclusive.change.hi));
	CHECK(v->more_runs_said && v->more_runs == -1);
	CHECK_INT(v->runs_per_release, 6);
	/* One side's clock not read: no clocks. */
	CHECK(!v->clocks.ok && isnan(v->clocks.good_sm_mhz));
	CHECK(!v->has_deltas && v->nratios == 0 && v->npoints == 0);
	report_clear(&rp);
	json_decref(rep);
	none = json_object();
	CHECK_INT(report_read(none, &rp), 0);
	CHECK(!rp.verdict.ok);
	CHECK_STR(rp.verdict.status, "");
	CHECK(isnan(rp.verdict.endpoints_change));
	report_clear(&rp);
	json_decref(none);
}

/* A release's figures under load and the profile read into their
 * structs: a figure the release lacks is NAN, one run has no interval. */
static void
test_serve(void)
{
	json_t *rep = json_loads("{\"serve_profile\": {\"arrival\": "
	    "\"poisson\", \"rate\": 2.5, \"duration_ms\": 30000, \"prompt\": "
	    "[64, 256], \"output\": [128], \"slo_ttft_ms\": 500, "
	    "\"slo_tpot_ms\": null}, \"releases\": [{\"version\": \"1\", "
	    "\"serve\": {\"runs\": 1, \"failed_runs\": 2, \"figures_ms\": "
	    "{\"ttft-p50\": {\"n\": 1, \"value\": 12.5, \"sd\": 0, \"ci\": "
	    "[null, null]}, \"ttft-p90\": {\"n\": 0, \"value\": null}}, "
	    "\"req_per_s\": {\"n\": 3, \"value\": 2.4, \"ci\": [2.2, 2.6]}, "
	    "\"failed_requests\": {\"refused\": 0, \"timeout\": 3}}}, "
	    "{\"version\": \"2\"}]}", 0, NULL);
	const struct report_serve_profile *p;
	const struct report_serve *sv;
	const struct report_summary *x;
	struct report rp;

	CHECK(rep != NULL);
	CHECK_INT(report_read(rep, &rp), 0);
	p = &rp.serve_profile;
	CHECK(p->ok && !p->has_requests);
	CHECK_STR(p->arrival, "poisson");
	CHECK_NEAR(p->duration_ms, 30000, 1e-9);
	CHECK(p->nprompt == 2 && p->prompt[1] == 256 && p->noutput == 1);
	CHECK_NEAR(p->slo_ttft_ms, 500, 1e-9);
	CHECK(isnan(p->slo_tpot_ms) && isnan(p->concurrency));
	sv = &rp.releases[0].serve;
	CHECK(sv->ok);
	CHECK(sv->runs == 1 && sv->failed_runs == 2 &&
	    sv->client_bound_runs == 0);
	x = report_serve_figure(sv, "ttft-p50");
	CHECK_NEAR(x->value, 12.5, 1e-12);
	CHECK(x->n == 1 && isnan(x->lo) && isnan(x->hi));
	CHECK(isnan(report_serve_figure(sv, "ttft-p90")->value));
	CHECK(isnan(report_serve_figure(sv, "e2e-p99")->value));
	CHECK_NEAR(sv->req_per_s.hi, 2.6, 1e-12);
	CHECK(isnan(sv->req_per_s.sd) && isnan(sv->lag_p99_ms.value));
	CHECK_INT(sv->nerrors, 2);
	CHECK_STR(sv->errors[1].type, "timeout");
	CHECK(sv->errors[1].count == 3);
	CHECK(!rp.releases[1].serve.ok && rp.releases[1].serve.nfigures == 0);
	report_clear(&rp);
	json_decref(rep);
}

int
main(void)
{
	check_tmpdir("report_value");
	CHECK_CASE(test_golden_round_trip);
	CHECK_CASE(test_curve_gpu_failures);
	CHECK_CASE(test_missing_is_missing);
	CHECK_CASE(test_changes);
	CHECK_CASE(test_verdict);
	CHECK_CASE(test_serve);
	return check_done();
}
