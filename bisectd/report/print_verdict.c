/*
 * print_verdict.c: a report's verdict for a terminal and an issue
 * tracker (print.c's text and markdown): the boundary or the slide, the
 * kind with its intervals, the change points, the power.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/analysis/bisect.h"
#include "fields.h"
#include "gpu_lines.h"
#include "print_int.h"
#include "text_escape.h"

/* What a "no" could have seen and what an "unknown" lacks, in runs. */
static void
print_power(const json_t *v, FILE *out, int md)
{
	const json_t *more = json_object_get(v, "more_runs_per_release");
	long long runs = (long long)json_integer_value(json_object_get(v,
	    "runs_per_release"));

	if (isfinite(rep_real(v, "detectable_change")))
		fprintf(out, "%s  power: at %lld runs per cell of each "
		    "endpoint, a slowdown of %.1f%% or more would have been "
		    "found (%d%% of the time)\n", md ? "\n" : "", runs,
		    100 * rep_real(v, "detectable_change"),
		    (int)(100 * BISECT_POWER + 0.5));
	if (json_is_integer(more))
		fprintf(out, "%s  about %lld more runs per cell of each "
		    "release compared (%lld in all, see max-reps) would likely "
		    "decide it\n", md ? "\n" : "",
		    (long long)json_integer_value(more),
		    runs + (long long)json_integer_value(more));
	else if (json_is_null(more))
		fprintf(out, "%s  more runs are not likely to decide it: the "
		    "change measured lies at half the threshold\n",
		    md ? "\n" : "");
}

/* A commit as one line: short id, subject, author, date, link. */
static void
print_commit(const json_t *c, FILE *out, int md, const char *label)
{
	fprintf(out, "%s  %s %s \"%s\" by %s, %s%s%s%s\n", md ? "\n" : "",
	    label, rep_str(c, "short"), rep_str(c, "subject"), rep_str(c, "author"),
	    rep_str(c, "date"), json_is_string(json_object_get(c, "url")) ? " " :
	    "", rep_str(c, "url"), strcmp(rep_str(c, "build"), "failed") == 0 ?
	    " (does not build)" : "");
}

/* A change and its interval in per cent: "+62.0% [+55.1%, +69.2%]". */
static void
pct_ci_text(char *buf, size_t len, const json_t *o, const char *key)
{
	char cikey[64];
	const json_t *ci;

	snprintf(cikey, sizeof(cikey), "%s_ci", key);
	ci = json_object_get(o, cikey);
	snprintf(buf, len, "%+.1f%% [%+.1f%%, %+.1f%%]", 100 * rep_real(o,
	    key), 100 * rep_at(ci, 0), 100 * rep_at(ci, 1));
}

/*
 * A gradual verdict: the slide's span and total with its interval, the
 * change a release, the releases it spreads over (those measured), and
 * its largest steps: no one of them is the cause.
 */
static void
print_gradual(const json_t *g, FILE *out, int md)
{
	char total[96], each[96];
	const json_t *x;
	size_t i;

	pct_ci_text(total, sizeof(total), g, "total_change");
	pct_ci_text(each, sizeof(each), g, "per_release_change");
	fprintf(out, ": a slide from %s to %s, %s over %zu releases, %s a "
	    "release; no one release is its cause\n", rep_str(g, "from"),
	    rep_str(g, "to"), total, json_array_size(json_object_get(g,
	    "releases")), each);
	if (json_array_size(json_object_get(g, "measured_between")) > 0) {
		fprintf(out, "%s  measured inside it:", md ? "\n" : "");
		json_array_foreach(json_object_get(g, "measured_between"), i, x)
			fprintf(out, " %s", json_string_value(x));
		fputc('\n', out);
	}
	json_array_foreach(json_object_get(g, "largest_steps"), i, x) {
		char step[96];

		pct_ci_text(step, sizeof(step), x, "change");
		fprintf(out, "%s  %s %s -> %s: %s\n", md ? "\n" : "",
		    i ? "then" : "largest step", rep_str(x, "from"),
		    rep_str(x, "to"), step);
	}
}

void
print_verdict_text(const json_t *v, FILE *out, int md)
{
	const char *status = rep_str(v, "status");
	const json_t *ratios = json_object_get(v, "ratios");
	const json_t *cand = json_object_get(v, "candidates");
	const json_t *points = json_object_get(v, "change_points");
	const json_t *u = json_object_get(v, "inconclusive");
	char a[128], b[128];
	const char *k;
	json_t *x;
	size_t i;

	fprintf(out, md ? "\n**Verdict: %s**" : "\nverdict: %s", status);
	if (strcmp(status, "regression") == 0) {
		fprintf(out, ": first bad %s, last good %s%s\n",
		    rep_str(v, "first_bad"), rep_str(v, "last_good"),
		    strcmp(rep_str(v, "kind"), "output") == 0 ?
		    " (texts compared exactly)" :
		    json_is_true(json_object_get(v, "confirmed")) ?
		    " (confirmed by an interleaved re-measurement)" :
		    " (not confirmed)");
		if (json_array_size(cand) > 1) {
			fprintf(out, "%s  candidates (%s between could not be "
			    "%s):", md ? "\n" : "", json_object_get(v,
			    "candidate_commits") ? "commits" : "releases",
			    json_object_get(v, "candidate_commits") ?
			    "built or measured" : "measured");
			json_array_foreach(cand, i, x)
				fprintf(out, " %s", json_string_value(x));
			fputc('\n', out);
		}
		if (json_is_object(json_object_get(v, "drill_down")))
			fprintf(out, "%s  drill-down into the commits %s: %s%s%s"
			    "\n", md ? "\n" : "", rep_str(json_object_get(v,
			    "drill_down"), "range"), rep_str(json_object_get(v,
			    "drill_down"), "status"), *rep_str(json_object_get(v,
			    "drill_down"), "reason") ? ": " : "",
			    rep_str(json_object_get(v, "drill_down"), "reason"));
		if (json_is_object(json_object_get(v, "commit")))
			print_commit(json_object_get(v, "commit"), out, md,
			    "first bad commit");
		if (json_array_size(json_object_get(v,
		    "candidate_commits")) > 1)
			json_array_foreach(json_object_get(v,
			    "candidate_commits"), i, x)
				print_commit(x, out, md, "candidate");
	} else if (strcmp(status, "gradual") == 0)
		print_gradual(json_object_get(v, "gradual"), out, md);
	else
		fputc('\n', out);
	if (*rep_str(v, "reason"))
		fprintf(out, "%s  %s\n", md ? "\n" : "", rep_str(v, "reason"));
	if (json_is_object(json_object_get(v, "diff"))) {
		const json_t *d = json_object_get(v, "diff");

		if (md) {
			fprintf(out, "\n  text %.12s -> %.12s, from token %lld: ",
			    rep_str(v, "last_good_sha256"), rep_str(v,
			    "first_bad_sha256"), (long long)json_integer_value(
			    json_object_get(d, "token")));
			text_md_code(out, rep_str(d, "before"));
			fputs(" -> ", out);
			text_md_code(out, rep_str(d, "after"));
			fputc('\n', out);
		} else
			fprintf(out, "  text %.12s -> %.12s, from token %lld: "
			    "\"%s\" -> \"%s\"\n", rep_str(v, "last_good_sha256"),
			    rep_str(v, "first_bad_sha256"), (long long)
			    json_integer_value(json_object_get(d, "token")),
			    rep_str(d, "before"), rep_str(d, "after"));
	}
	if (isfinite(rep_real(v, "endpoints_change")))
		fprintf(out, "%s  endpoints differ by %+.1f%% on the metric\n",
		    md ? "\n" : "", 100 * rep_real(v, "endpoints_change"));
	gpu_clocks_text(v, out, md);
	if (json_is_string(json_object_get(v, "kind")) &&
	    json_object_get(v, "per_token_delta_ms")) {
		ci_text(a, sizeof(a), v, "per_token_delta_ms", 1);
		ci_text(b, sizeof(b), v, "fixed_delta_ms", 1);
		fprintf(out, "%s  kind: %s\n%s  per-token cost %s ms per "
		    "token; fixed overhead %s%s (95%% intervals)\n",
		    md ? "\n" : "", rep_str(v, "kind"), md ? "\n" : "", a, b,
		    isfinite(rep_real(v, "fixed_delta_ms")) ? " ms" : "");
		if (*rep_str(v, "fixed_not_estimable"))
			fprintf(out, "%s  fixed overhead not estimable: %s; "
			    "the kind rests on the per-token part and the "
			    "ratio trend\n", md ? "\n" : "",
			    rep_str(v, "fixed_not_estimable"));
	}
	if (json_object_size(ratios) > 0) {
		fprintf(out, "%s  times slower by prompt length:",
		    md ? "\n" : "");
		json_object_foreach((json_t *)(uintptr_t)ratios, k, x)
			fprintf(out, " %s: %.2fx", k, json_number_value(x));
		fprintf(out, " (%s)\n", rep_str(v, "ratio_trend"));
	}
	if (json_array_size(points) > 1) {
		fprintf(out, "%s  change points:\n", md ? "\n" : "");
		json_array_foreach(points, i, x)
			fprintf(out, "%s    %s -> %s: %+.1f%%, %s%s\n",
			    md ? "- " : "", rep_str(x, "last_good"),
			    rep_str(x, "first_bad"),
			    100 * rep_real(x, "metric_change"),
			    json_is_string(json_object_get(x, "kind")) ?
			    rep_str(x, "kind") : "",
			    json_is_true(json_object_get(x, "confirmed")) ?
			    ", confirmed" : "");
	}
	if (json_is_object(u))
		fprintf(out, "%s  inconclusive between %s and %s: %+.1f%% "
		    "[%+.1f%%, %+.1f%%]\n", md ? "\n" : "", rep_str(u, "from"),
		    rep_str(u, "to"), 100 * rep_real(u, "change"),
		    100 * json_number_value(json_array_get(
		    json_object_get(u, "change_ci"), 0)),
		    100 * json_number_value(json_array_get(
		    json_object_get(u, "change_ci"), 1)));
	print_power(v, out, md);
}
