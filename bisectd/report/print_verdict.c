/*
 * print_verdict.c: a report's verdict for a terminal and an issue
 * tracker (print.c's text and markdown): the boundary or the slide, the
 * kind with its intervals, the change points, the power.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bisectd/analysis/bisect.h"
#include "fields.h"
#include "gpu_lines.h"
#include "print_int.h"
#include "report.h"
#include "text_escape.h"

/* What a "no" could have seen and what an "unknown" lacks, in runs. */
static void
print_power(const struct report_verdict *v, FILE *out, int md)
{
	long long runs = v->runs_per_release;

	if (isfinite(v->detectable_change))
		fprintf(out, "%s  power: at %lld runs per cell of each "
		    "endpoint, a slowdown of %.1f%% or more would have been "
		    "found (%d%% of the time)\n", md ? "\n" : "", runs,
		    100 * v->detectable_change,
		    (int)(100 * BISECT_POWER + 0.5));
	if (!v->more_runs_said)
		return;
	if (v->more_runs >= 0)
		fprintf(out, "%s  about %lld more runs per cell of each "
		    "release compared (%lld in all, see max-reps) would likely "
		    "decide it\n", md ? "\n" : "", v->more_runs,
		    runs + v->more_runs);
	else
		fprintf(out, "%s  more runs are not likely to decide it: the "
		    "change measured lies at half the threshold\n",
		    md ? "\n" : "");
}

/* A commit as one line: short id, subject, author, date, link. */
static void
print_commit(const struct report_commit *c, FILE *out, int md,
    const char *label)
{
	fprintf(out, "%s  %s %s \"%s\" by %s, %s%s%s%s\n", md ? "\n" : "",
	    label, c->short_id, c->subject, c->author, c->date,
	    c->url ? " " : "", c->url ? c->url : "",
	    strcmp(c->build, "failed") == 0 ? " (does not build)" : "");
}

/* A change and its interval in per cent: "+62.0% [+55.1%, +69.2%]", a
 * bound there is none of "unbounded". */
static void
pct_ci_text(char *buf, size_t len, const struct report_rel *r)
{
	char ci[64];

	snprintf(buf, len, "%+.1f%% %s", 100 * r->value, rep_pct_lohi(r->lo,
	    r->hi, ci, sizeof(ci)));
}

/*
 * A gradual verdict: the slide's span and total with its interval, the
 * change a release, the releases it spreads over (those measured), and
 * its largest steps: no one of them is the cause.
 */
static void
print_gradual(const struct report_gradual *g, FILE *out, int md)
{
	char total[96], each[96];

	pct_ci_text(total, sizeof(total), &g->total);
	pct_ci_text(each, sizeof(each), &g->per_release);
	fprintf(out, ": a slide from %s to %s, %s over %zu releases, %s a "
	    "release; no one release is its cause\n", g->from, g->to, total,
	    g->nreleases, each);
	if (g->nbetween > 0) {
		fprintf(out, "%s  measured inside it:", md ? "\n" : "");
		for (size_t i = 0; i < g->nbetween; i++)
			fprintf(out, " %s", g->between[i]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < g->nsteps; i++) {
		char step[96];

		pct_ci_text(step, sizeof(step), &g->steps[i].change);
		fprintf(out, "%s  %s %s -> %s: %s\n", md ? "\n" : "",
		    i ? "then" : "largest step", g->steps[i].from,
		    g->steps[i].to, step);
	}
}

/* A regression's boundary: the pair, its candidates, the drill-down
 * into its commits and the commits. */
static void
print_boundary(const struct report_verdict *v, FILE *out, int md)
{
	const struct report_drill *d = &v->drill_down;

	fprintf(out, ": first bad %s, last good %s%s\n", v->change.first_bad,
	    v->change.last_good, strcmp(v->change.kind, "output") == 0 ?
	    " (texts compared exactly)" : v->change.confirmed ?
	    " (confirmed by an interleaved re-measurement)" :
	    " (not confirmed)");
	if (v->ncandidates > 1) {
		fprintf(out, "%s  candidates (%s between could not be %s):",
		    md ? "\n" : "", v->has_candidate_commits ? "commits" :
		    "releases", v->has_candidate_commits ?
		    "built or measured" : "measured");
		for (size_t i = 0; i < v->ncandidates; i++)
			fprintf(out, " %s", v->candidates[i]);
		fputc('\n', out);
	}
	if (d->ok)
		fprintf(out, "%s  drill-down into the commits %s: %s%s%s\n",
		    md ? "\n" : "", d->range, d->status, *d->reason ? ": " :
		    "", d->reason);
	if (v->commit.ok)
		print_commit(&v->commit, out, md, "first bad commit");
	if (v->ncandidate_commits > 1)
		for (size_t i = 0; i < v->ncandidate_commits; i++)
			print_commit(&v->candidate_commits[i], out, md,
			    "candidate");
}

/* The output canary's texts: their hashes and the first difference. */
static void
print_diff(const struct report_verdict *v, FILE *out, int md)
{
	const struct report_diff *d = &v->diff;

	if (md) {
		fprintf(out, "\n  text %.12s -> %.12s, from token %lld: ",
		    v->last_good_sha256, v->first_bad_sha256, d->token);
		text_md_code(out, d->before);
		fputs(" -> ", out);
		text_md_code(out, d->after);
		fputc('\n', out);
	} else
		fprintf(out, "  text %.12s -> %.12s, from token %lld: "
		    "\"%s\" -> \"%s\"\n", v->last_good_sha256,
		    v->first_bad_sha256, d->token, d->before, d->after);
}

/* The kind with the per-token and fixed changes, and the ratios. */
static void
print_kind(const struct report_verdict *v, FILE *out, int md)
{
	char a[128], b[128];

	if (*v->change.kind && v->has_deltas) {
		ms_ci_text(a, sizeof(a), &v->per_token_delta, 1, "-");
		ms_ci_text(b, sizeof(b), &v->fixed_delta, 1,
		    *v->fixed_not_estimable ? "not estimable" : "-");
		fprintf(out, "%s  kind: %s\n%s  per-token cost %s ms per "
		    "token; fixed overhead %s%s (95%% intervals)\n",
		    md ? "\n" : "", v->change.kind, md ? "\n" : "", a, b,
		    isfinite(v->fixed_delta.value) ? " ms" : "");
		if (*v->fixed_not_estimable)
			fprintf(out, "%s  fixed overhead not estimable: %s; "
			    "the kind rests on the per-token part and the "
			    "ratio trend\n", md ? "\n" : "",
			    v->fixed_not_estimable);
	}
	if (v->nratios > 0) {
		fprintf(out, "%s  times slower by prompt length:",
		    md ? "\n" : "");
		/* A ratio there is none of is said so, never 0x. */
		for (size_t i = 0; i < v->nratios; i++)
			fprintf(out, isfinite(v->ratios[i].value) ?
			    " %s: %.2fx" : " %s: -", v->ratios[i].tokens,
			    v->ratios[i].value);
		fprintf(out, " (%s)\n", v->ratio_trend);
	}
}

void
print_verdict_text(const struct report_verdict *v, FILE *out, int md)
{
	const struct report_inconclusive *u = &v->inconclusive;
	char ci[64];

	fprintf(out, md ? "\n**Verdict: %s**" : "\nverdict: %s", v->status);
	if (strcmp(v->status, "regression") == 0)
		print_boundary(v, out, md);
	else if (strcmp(v->status, "gradual") == 0)
		print_gradual(&v->gradual, out, md);
	else
		fputc('\n', out);
	if (*v->reason)
		fprintf(out, "%s  %s\n", md ? "\n" : "", v->reason);
	if (v->diff.ok)
		print_diff(v, out, md);
	if (isfinite(v->endpoints_change))
		fprintf(out, "%s  endpoints differ by %+.1f%% on the metric\n",
		    md ? "\n" : "", 100 * v->endpoints_change);
	gpu_clocks_text(&v->clocks, out, md);
	print_kind(v, out, md);
	if (v->npoints > 1) {
		fprintf(out, "%s  change points:\n", md ? "\n" : "");
		for (size_t i = 0; i < v->npoints; i++) {
			const struct report_point *p = &v->points[i];

			fprintf(out, "%s    %s -> %s: %+.1f%%, %s%s\n",
			    md ? "- " : "", p->last_good, p->first_bad,
			    100 * p->metric_change.value, p->kind,
			    p->confirmed ? ", confirmed" : "");
		}
	}
	if (u->ok) {
		pct_ci_text(ci, sizeof(ci), &u->change);
		fprintf(out, "%s  inconclusive between %s and %s: %s\n",
		    md ? "\n" : "", u->from, u->to, ci);
	}
	print_power(v, out, md);
}
