/*
 * print.c: rendering a report (print.h) for a terminal (aligned
 * text), an issue tracker (markdown), a spreadsheet (csv) or a script
 * (JSON).  Every figure is shown with its spread and n.
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "html.h"
#include "fields.h"
#include "gpu_lines.h"
#include "serve_lines.h"
#include "print.h"
#include "print_int.h"
#include "report.h"
#include "text_escape.h"

/*
 * "1234.5 ± 12.3 (5)" for a cell of 5 runs, the spread between runs;
 * with several samples per run also the samples and the spread inside
 * a run: "1234.5 ± 12.3 (5 runs/25, in-run ± 0.4)".  "-" when missing.
 */
static void
cell_text(char *buf, size_t len, const struct report_cell *c)
{
	const char *lb;

	if (c == NULL || !c->ok) {
		snprintf(buf, len, "-");
		return;
	}
	lb = c->lower_bound ? "≥" : "";
	if (c->samples > c->n && isfinite(c->cv_within))
		snprintf(buf, len, "%s%.1f ± %.1f (%lld runs/%lld, in-run "
		    "± %.1f)", lb, c->tps, c->sd, c->n, c->samples,
		    c->tps * c->cv_within);
	else
		snprintf(buf, len, "%s%.1f ± %.1f (%lld)", lb, c->tps, c->sd,
		    c->n);
}

void
ms_ci_text(char *buf, size_t len, const struct report_ms *m, int sign,
    const char *none)
{
	if (!isfinite(m->value))
		snprintf(buf, len, "%s", none);
	else if (isfinite(m->lo) && isfinite(m->hi))
		snprintf(buf, len, sign ? "%+.4g [%+.4g, %+.4g]" :
		    "%.4g [%.4g, %.4g]", m->value, m->lo, m->hi);
	else
		snprintf(buf, len, sign ? "%+.4g" : "%.4g", m->value);
}

/* The fixed part: "not estimable" where the fit says so. */
static void
fixed_text(char *buf, size_t len, const struct report_fit *f)
{
	ms_ci_text(buf, len, &f->fixed, 0, f->fixed_not_estimable[0] ?
	    "not estimable" : "-");
}

static void
flags_text(char *buf, size_t len, const struct report_release *r)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->nflags; i++)
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
		    "%s%s", i ? "," : "", r->flags[i]);
}

/* Columns a UTF-8 string takes on a terminal ("±" is two bytes, one
 * column). */
static int
dispw(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Print s left-aligned in width columns. */
static void
pad(FILE *out, const char *s, int width)
{
	fputs(s, out);
	for (int w = dispw(s); w < width; w++)
		fputc(' ', out);
}

/* Column keys: "pp512", "tg128/prose" in the order they appear. */
struct columns {
	char name[32][112];
	enum report_group group[32];
	char key[32][96];
	size_t n;
};

static void
collect_columns(const struct report *rp, struct columns *c)
{
	c->n = 0;
	for (size_t i = 0; i < rp->nreleases; i++) {
		const struct report_release *r = &rp->releases[i];

		for (size_t k = 0; k < r->ncells; k++) {
			const struct report_cell_at *at = &r->cells[k];
			const char *g = report_group_name(at->group);
			size_t j;

			for (j = 0; j < c->n; j++)
				if (c->group[j] == at->group &&
				    strcmp(c->key[j], at->key) == 0)
					break;
			if (j < c->n || c->n == 32)
				continue;
			c->group[c->n] = at->group;
			snprintf(c->key[c->n], sizeof(c->key[0]), "%s",
			    at->key);
			snprintf(c->name[c->n], sizeof(c->name[0]),
			    "%s%s tok/s", g, at->key);
			c->n++;
		}
	}
}

/*
 * Of a CPU's flags (space-separated, as /proc/cpuinfo has them), those
 * an engine's kernels are built for: vector and matrix extensions, not
 * the hundred others a maintainer would scroll past.
 */
static void
kernel_flags(const char *all, char *buf, size_t len)
{
	/* A trailing '*': every flag of that family (avx512bw ...). */
	static const char *const kinds[] = { "sse4*", "ssse3", "avx*",
	    "fma", "f16c", "amx*", "neon", "asimd*", "sve*", "sme", "sme2",
	    "i8mm", "bf16", "fphp", "dotprod" };
	size_t used = 0;

	buf[0] = '\0';
	while (*all) {
		size_t n = strcspn(all, " \t");

		for (size_t k = 0; n > 0 && k < sizeof(kinds) /
		    sizeof(kinds[0]); k++) {
			size_t kl = strlen(kinds[k]);
			int family = kinds[k][kl - 1] == '*';

			if (family ? n >= kl - 1 && strncmp(all, kinds[k],
			    kl - 1) == 0 : n == kl && strncmp(all, kinds[k],
			    n) == 0) {
				if (used + n + 2 < len)
					used += (size_t)snprintf(buf + used,
					    len - used, "%s%.*s", used ? " " :
					    "", (int)n, all);
				break;
			}
		}
		all += n;
		all += strspn(all, " \t");
	}
}

/* report --for-upstream: what a maintainer asks for first. */
static void
print_about(const struct report_about *a, FILE *out, int md)
{
	const char *li = md ? "- " : "";

	if (!a->ok)
		return;
	fprintf(out, "%stool bisectd %s\n", li, a->bisectd);
	for (size_t i = 0; i < a->nbuilds; i++) {
		const struct report_build *b = &a->builds[i];

		fprintf(out, "%sengine %s: build %s", li, b->version,
		    b->build_commit ? b->build_commit : "not reported");
		if (b->build_number >= 0)
			fprintf(out, " (b%lld)", b->build_number);
		if (b->backend != NULL)
			fprintf(out, ", backend %s", b->backend);
		fputc('\n', out);
	}
	fprintf(out, "%smodel %s", li, a->model_type ? a->model_type :
	    a->weights);
	if (a->size_bytes >= 0)
		fprintf(out, ", %.2f GiB", (double)a->size_bytes / (1 << 30));
	else if (a->file_bytes >= 0)
		fprintf(out, ", file %.2f GiB", (double)a->file_bytes /
		    (1 << 30));
	if (a->params >= 0) {
		double n = (double)a->params;

		fprintf(out, ", %.3g %s parameters", n >= 1e9 ? n / 1e9 :
		    n / 1e6, n >= 1e9 ? "B" : "M");
	}
	fputc('\n', out);
	if (a->threads >= 0)
		fprintf(out, "%sthreads %lld", li, a->threads);
	else
		fprintf(out, "%sthreads: the engine's default", li);
	fprintf(out, ", %lld runs per cell (up to %lld), %lld warm-up\n",
	    a->reps, a->max_reps, a->warmup);
	if (a->cpu_flags != NULL) {
		char flags[1024];

		kernel_flags(a->cpu_flags, flags, sizeof(flags));
		fprintf(out, "%sCPU %s; the flags kernels use: %s\n", li,
		    a->cpu_model, flags[0] ? flags : "none");
	} else
		fprintf(out, "%sCPU %s; flags: not reported\n", li,
		    a->cpu_model);
}

/* "3f2a9c1b0d4e" for a canary's text, or its state. */
static const char *
canary_hash(const json_t *k, char *buf, size_t len)
{
	if (json_is_string(json_object_get(k, "sha256")))
		snprintf(buf, len, "%.12s", rep_str(k, "sha256"));
	else
		snprintf(buf, len, "%s", rep_str(k, "status"));
	return buf;
}

/*
 * The canary of each release: the hash of its text (the first 12 hex
 * digits), its state when it has none, and where the text changed since
 * the release before, the first differing tokens.  Nothing without a
 * canary.
 */
static void
print_canary(const struct report *rp, FILE *out, int md)
{
	const json_t *k, *d;
	char h[80];

	if (!report_has_canary(rp))
		return;
	fprintf(out, md ? "\n**Output canary** (sha256 of the text each "
	    "release generates from the canary prompt)\n\n" :
	    "\ncanary (sha256 of the text each release generates from the "
	    "canary prompt):\n");
	for (size_t i = 0; i < rp->nreleases; i++) {
		k = rp->releases[i].canary;
		if (!json_is_object(k))
			continue;
		fprintf(out, md ? "- %s: `%s`" : "  %-12s %s",
		    rp->releases[i].version, canary_hash(k, h, sizeof(h)));
		if (strcmp(rep_str(k, "status"), "deterministic") != 0 &&
		    *rep_str(k, "detail"))
			fprintf(out, " (%s)", rep_str(k, "detail"));
		if (json_is_true(json_object_get(k, "changed"))) {
			d = json_object_get(k, "diff");
			if (md) {
				fprintf(out, " **changed** since %s at token "
				    "%lld: ", rep_str(k, "since"), (long long)
				    json_integer_value(json_object_get(d,
				    "token")));
				text_md_code(out, rep_str(d, "before"));
				fputs(" -> ", out);
				text_md_code(out, rep_str(d, "after"));
			} else
				fprintf(out, "  changed since %s at token %lld: "
				    "\"%s\" -> \"%s\"", rep_str(k, "since"),
				    (long long)json_integer_value(
				    json_object_get(d, "token")), rep_str(d,
				    "before"), rep_str(d, "after"));
		} else if (json_is_false(json_object_get(k, "changed")))
			fprintf(out, md ? " (same as %s)" : "  same as %s",
			    rep_str(k, "since"));
		fputc('\n', out);
	}
}

static void
print_header(const struct report *rp, FILE *out, int md)
{
	const struct report_machine *m = &rp->machine;
	const json_t *x;
	size_t i;

	fprintf(out, md ? "### %s %s..%s\n\n" : "%s %s..%s", rp->engine,
	    rp->from, rp->to);
	fprintf(out, md ? "metric %s, threshold %.3g%%\n\n" :
	    ": metric %s, threshold %.3g%%\n", rp->metric,
	    100 * rp->threshold);
	if (m->ok)
		fprintf(out, "%smachine %s, %lld cores, %.1f GiB, %s; %s, "
		    "kernel %s%s%s\n", md ? "- " : "", m->cpu_model, m->cores,
		    (double)m->mem_bytes / (1 << 30), m->arch, m->os,
		    m->kernel, m->hostname ? ", host " : "", m->hostname ?
		    m->hostname : "");
	json_array_foreach(rp->reanchored, i, x)
		fprintf(out, "%sre-anchored: %s%s%s; the ends were measured "
		    "again on node %s\n", md ? "- " : "",
		    *rep_str(x, "why") ? rep_str(x, "why") : "node ",
		    *rep_str(x, "why") ? "" : rep_str(x, "from"),
		    *rep_str(x, "why") ? "" : " was lost", rep_str(x, "to"));
	print_about(&rp->about, out, md);
	fprintf(out, "%sweights %s, sha256 %s\n", md ? "- " : "",
	    rp->weights, rp->weights_sha256 ? rp->weights_sha256 :
	    "(not pinned yet)");
}

/* The releases whose per-token interval reaches zero, and what that
 * means, in one sentence. */
static void
print_unresolved(const struct report *rp, FILE *out, int md)
{
	size_t k = 0;

	for (size_t i = 0; i < rp->nreleases; i++)
		if (report_release_flagged(&rp->releases[i],
		    "per-token-unresolved"))
			fprintf(out, "%s%s", k++ ? ", " : md ? "\nper-token cost "
			    "unresolved on " : "per-token cost unresolved on ",
			    rp->releases[i].version);
	if (k > 0)
		fprintf(out, ": its 95%% interval reaches zero or below, too "
		    "few runs for this noise to compare (a bisect measures "
		    "more first)\n");
}

/* What a metric's move means, in words: "slower", "within the noise". */
static const char *
move_words(const struct report_change *x, char *buf, size_t len, double cut)
{
	const char *m = x->moved;

	if (strcmp(m, "unchanged") == 0)
		snprintf(buf, len, x->lo < 0 && x->hi > 0 ?
		    "unchanged, within the noise" : "unchanged: moved, but "
		    "by less than %.3g%%", 100 * cut);
	else if (strcmp(m, "unsure") == 0)
		snprintf(buf, len, "unsure: its interval reaches past ±%.3g%%",
		    100 * cut);
	else
		snprintf(buf, len, "%s", m);
	return buf;
}

/* What else changed: every metric of each pair, with its interval and
 * how it moved; a slowdown no one searched with the bisect that does. */
static void
print_else_changed(const struct report *rp, FILE *out, int md)
{
	double cut = rp->threshold / 2;
	const char *from = "", *to = "";
	char words[96], name[240], interval[64];

	if (rp->nchanges == 0)
		return;
	fprintf(out, md ? "\n**What else changed** (every metric of the "
	    "matrix; a move counts past half the threshold, %.3g%%)\n" :
	    "\nwhat else changed (every metric of the matrix; a move counts "
	    "past half the threshold, %.3g%%):\n", 100 * cut);
	for (size_t i = 0; i < rp->nchanges; i++) {
		const struct report_change *x = &rp->changes[i];

		if (strcmp(from, x->from) != 0 || strcmp(to, x->to) != 0) {
			from = x->from;
			to = x->to;
			fprintf(out, md ? "\n%s → %s:\n\n" : "  %s -> %s:\n",
			    from, to);
		}
		snprintf(name, sizeof(name), "%s (%s%s)", x->what, x->metric,
		    x->searched ? ", searched" : "");
		rep_pct_lohi(x->lo, x->hi, interval, sizeof(interval));
		if (md)
			fprintf(out, "- %s: %+.1f%% %s %s: %s\n", name,
			    100 * x->change, interval, x->unit, move_words(x,
			    words, sizeof(words), cut));
		else
			fprintf(out, "    %-46s %+7.1f%% %s %s: %s\n", name,
			    100 * x->change, interval, x->unit, move_words(x,
			    words, sizeof(words), cut));
		if (x->bisect != NULL) {
			if (md) {
				fputs("  bisect it: ", out);
				text_md_code(out, x->bisect);
				fputc('\n', out);
			} else
				fprintf(out, "      bisect it: %s\n", x->bisect);
		}
	}
}

/*
 * Where the fixed overhead is not estimable, said once per reason with
 * the releases it holds for: the same sentence eight times over is
 * read once and skipped after.
 */
static void
print_not_estimable(const struct report *rp, FILE *out, int md)
{
	size_t i, j, count, n = rp->nreleases;

	for (i = 0; i < n; i++) {
		const char *why = rp->releases[i].fit.fixed_not_estimable;

		if (!*why)
			continue;
		/* Said already with an earlier release of that reason. */
		for (j = 0; j < i; j++)
			if (strcmp(rp->releases[j].fit.fixed_not_estimable,
			    why) == 0)
				break;
		if (j < i)
			continue;
		count = 0;
		for (j = i; j < n; j++)
			count += strcmp(rp->releases[j].fit.fixed_not_estimable,
			    why) == 0;
		fprintf(out, "%sfixed overhead not estimable", md ? "\n" : "");
		if (count == n && n > 1)
			fprintf(out, " on every release");
		else
			for (j = i; j < n; j++)
				if (strcmp(rp->releases[j].fit.
				    fixed_not_estimable, why) == 0)
					fprintf(out, "%s%s", j == i ? " on " :
					    ", ", rp->releases[j].version);
		fprintf(out, ": %s\n", why);
	}
}

/*
 * The releases whose prefill is a curve, not a line: the cost of a
 * token at each fit length with its interval, and where that leaves the
 * fixed overhead.  The table's per-token column is the line's slope,
 * an average over the lengths for them.
 */
static void
print_curves(const struct report *rp, FILE *out, int md)
{
	int any = 0;

	for (size_t i = 0; i < rp->nreleases; i++) {
		const struct report_fit *f = &rp->releases[i].fit;

		if (!f->curve)
			continue;
		if (!any)
			fprintf(out, "%sthe cost per token grows with the "
			    "prompt (a curve fits, the line does not; "
			    "per-token ms in the table is the line's "
			    "average):\n", md ? "\n" : "");
		any = 1;
		fprintf(out, "%s%s:", md ? "- " : "  ",
		    rp->releases[i].version);
		for (size_t k = 0; k < f->ncost_at; k++) {
			char ci[96];

			ms_ci_text(ci, sizeof(ci), &f->cost_at[k].ms, 0, "-");
			fprintf(out, "%s %s ms at %lld", k ? "," : "", ci,
			    f->cost_at[k].tokens);
		}
		if (isfinite(f->fixed.value))
			fprintf(out, "; fixed %.4g ms from the curve's "
			    "intercept", f->fixed.value);
		if (isfinite(f->ceiling_tokens))
			fprintf(out, "; at most %.0f tok/s, at %.0f tokens",
			    f->ceiling.value, f->ceiling_tokens);
		fputc('\n', out);
	}
}

static void
print_confirm(const struct report *rp, FILE *out, int md)
{
	int shown = 0;

	for (size_t i = 0; i < rp->nreleases; i++)
		for (size_t j = 0; j < rp->releases[i].ncells; j++) {
			const struct report_cell_at *at =
			    &rp->releases[i].cells[j];
			const struct report_confirm *k = &at->c.confirm;

			if (!k->ok)
				continue;
			if (shown++ == 0)
				fprintf(out, md ? "\n**Confirmation runs** "
				    "(interleaved with the other end; not in "
				    "the table, no flags)\n\n" : "\n"
				    "confirmation runs (interleaved with the "
				    "other end; not in the table, no "
				    "flags):\n");
			fprintf(out, "%s%s %s%s: %lld runs, %.4g ms (sd %.3g), "
			    "%.1f tok/s; first runs %.4g ms\n", md ? "- " :
			    "  ", rp->releases[i].version,
			    report_group_name(at->group), at->key, k->n,
			    k->ms, k->ms_sd, k->tps, at->c.ms);
		}
}

/* A fence no backtick run inside the commands can close. */
static int
fence_len(const struct report_reproduce *r)
{
	int longest = 2;

	for (size_t i = 0; i < r->nruns; i++)
		for (const char *p = r->runs[i].command; *p; p++) {
			int n = 0;

			while (p[n] == '`')
				n++;
			if (n > longest)
				longest = n;
			p += n ? n - 1 : 0;
		}
	return longest + 1;
}

/* Each cell's command line as a run executed it. */
static void
print_runs(const struct report_reproduce *r, FILE *out, int md)
{
	int fence = fence_len(r);

	if (r->nruns == 0)
		return;
	if (md)
		fprintf(out, "\nEach cell as a run executed it:\n\n%.*s"
		    "sh\n", fence, "````````````````````````````````");
	for (size_t i = 0; i < r->nruns; i++)
		fprintf(out, md ? "# %s %s\n%s\n" : "  # %s %s\n  %s\n",
		    r->runs[i].version, r->runs[i].cell, r->runs[i].command);
	if (md)
		fprintf(out, "%.*s\n", fence,
		    "````````````````````````````````");
}

/* A release's fit columns: the per-token cost and the fixed overhead;
 * for a serve engine the searched figure (per), as it has no fit. */
static void
fit_cols(const struct report *rp, const struct report_release *r, char *per,
    size_t plen, char *fix, size_t flen)
{
	if (rp->serve) {
		ms_ci_text(per, plen, &r->metric, 0, "-");
		*fix = '\0';
		return;
	}
	ms_ci_text(per, plen, &r->fit.per_token, 0, "-");
	fixed_text(fix, flen, &r->fit);
}

/* The archives that matter and the commands, then each cell's. */
static void
print_reproduce(const struct report_reproduce *r, FILE *out, int md)
{
	fprintf(out, md ? "\n**Reproduce**\n\n" : "\nreproduce:\n");
	for (size_t i = 0; i < r->narchives; i++) {
		const struct report_archive *x = &r->archives[i];

		fprintf(out, "%sarchive %s: %s%ssha256 %s\n", md ? "- " : "  ",
		    x->version, x->url, *x->url ? " " : "", x->sha256);
	}
	for (size_t i = 0; i < r->ncommands; i++)
		if (md) {
			fputs("- ", out);
			text_md_code(out, r->commands[i]);
			fputc('\n', out);
		} else
			fprintf(out, "  %s\n", r->commands[i]);
	print_runs(r, out, md);
}

static void
print_text(const json_t *rep, FILE *out, int md)
{
	struct columns cols;
	struct report rp;
	char buf[160], per[96], fix[96], head[64];
	size_t i, j;
	int wv = 7, wc[32], wp = 12, wf = 8;

	if (report_read(rep, &rp) < 0)
		return;
	/* A serve engine has no fit: its column is the searched figure. */
	if (rp.serve) {
		snprintf(head, sizeof(head), "%s MS", rp.metric);
		for (char *p = head; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		wp = (int)strlen(head);
	}
	print_header(&rp, out, md);
	collect_columns(&rp, &cols);
	for (j = 0; j < cols.n; j++)
		wc[j] = dispw(cols.name[j]);
	for (i = 0; i < rp.nreleases; i++) {
		const struct report_release *r = &rp.releases[i];

		if ((int)strlen(r->version) > wv)
			wv = (int)strlen(r->version);
		for (j = 0; j < cols.n; j++) {
			cell_text(buf, sizeof(buf), report_release_cell(r,
			    cols.group[j], cols.key[j]));
			if (dispw(buf) > wc[j])
				wc[j] = dispw(buf);
		}
		fit_cols(&rp, r, per, sizeof(per), fix, sizeof(fix));
		if ((int)strlen(per) > wp)
			wp = (int)strlen(per);
		if ((int)strlen(fix) > wf)
			wf = (int)strlen(fix);
	}
	fputc('\n', out);
	if (md) {
		fprintf(out, "| version | status |");
		for (j = 0; j < cols.n; j++)
			fprintf(out, " %s |", cols.name[j]);
		if (rp.serve)
			fprintf(out, " %s ms | flags | failures |\n|---|---|",
			    rp.metric);
		else
			fprintf(out, " per-token ms | fixed ms | ceiling tok/s "
			    "| flags | failures |\n|---|---|");
		for (j = 0; j < cols.n; j++)
			fprintf(out, "---|");
		fprintf(out, rp.serve ? "---|---|---|\n" :
		    "---|---|---|---|---|\n");
	} else {
		fprintf(out, "%-*s  %-12s", wv, "VERSION", "STATUS");
		for (j = 0; j < cols.n; j++) {
			fputs("  ", out);
			pad(out, cols.name[j], wc[j]);
		}
		if (rp.serve)
			fprintf(out, "  %-*s  %s\n", wp, head, "FLAGS");
		else
			fprintf(out, "  %-*s  %-*s  %-7s  %s\n", wp,
			    "PER-TOKEN MS", wf, "FIXED MS", "CEILING", "FLAGS");
	}
	for (i = 0; i < rp.nreleases; i++) {
		const struct report_release *r = &rp.releases[i];
		double ceil = r->fit.ceiling.value;
		char flags[256];

		flags_text(flags, sizeof(flags), r);
		fit_cols(&rp, r, per, sizeof(per), fix, sizeof(fix));
		if (md)
			fprintf(out, "| %s | %s |", r->version, r->status);
		else
			fprintf(out, "%-*s  %-12s", wv, r->version, r->status);
		for (j = 0; j < cols.n; j++) {
			cell_text(buf, sizeof(buf), report_release_cell(r,
			    cols.group[j], cols.key[j]));
			if (md)
				fprintf(out, " %s |", buf);
			else {
				fputs("  ", out);
				pad(out, buf, wc[j]);
			}
		}
		snprintf(buf, sizeof(buf), isfinite(ceil) ? "%.0f" : "-", ceil);
		if (md) {
			if (rp.serve)
				fprintf(out, " %s | %s |", per, flags);
			else
				fprintf(out, " %s | %s | %s | %s |", per, fix,
				    buf, flags);
			for (j = 0; j < r->nfailures; j++)
				fprintf(out, "%s %s", j ? "," : "",
				    r->failures[j].reason);
			fputs(" |\n", out);
			continue;
		}
		if (rp.serve)
			fprintf(out, "  %-*s  %s\n", wp, per, flags);
		else
			fprintf(out, "  %-*s  %-*s  %-7s  %s\n", wp, per, wf,
			    fix, buf, flags);
		for (j = 0; j < r->nfailures; j++) {
			if (j == 3) {
				fprintf(out, "%*s  ... %zu failures in all "
				    "('bisectctl runs')\n", wv, "",
				    r->nfailures);
				break;
			}
			fprintf(out, "%*s  failed run: %s: %s\n", wv, "",
			    r->failures[j].reason, r->failures[j].detail);
		}
	}
	for (i = 0; i < rp.nreleases; i++)
		if (rp.releases[i].same_archive_as != NULL)
			fprintf(out, "%s%s: same archive as %s (sha256 %.12s): "
			    "measured once, the same samples\n", md ? "\n" : "",
			    rp.releases[i].version,
			    rp.releases[i].same_archive_as,
			    rp.releases[i].sha256 ? rp.releases[i].sha256 : "");
	print_not_estimable(&rp, out, md);
	print_curves(&rp, out, md);
	print_unresolved(&rp, out, md);
	if (rp.shape_unknown != NULL)
		fprintf(out, "%sthe shape: %s\n", md ? "\n" : "",
		    rp.shape_unknown);
	for (i = 0; i < rp.nreleases; i++)
		if (*rp.releases[i].fit.ceiling_contradicted)
			fprintf(out, "%s%s: no ceiling: %s\n", md ? "\n" : "",
			    rp.releases[i].version,
			    rp.releases[i].fit.ceiling_contradicted);
	print_confirm(&rp, out, md);
	gpu_releases_text(&rp, out, md);
	serve_text(&rp, out, md);
	print_canary(&rp, out, md);
	print_verdict_text(&rp.verdict, out, md);
	print_else_changed(&rp, out, md);
	print_reproduce(&rp.reproduce, out, md);
	report_clear(&rp);
}

/*
 * The command line the cell's runs executed, from reproduce.runs, as a
 * CSV field; an empty field for a release the reproduce section does
 * not cover.
 */
static void
csv_command(const struct report_reproduce *r, const char *version,
    const char *group, const char *key, FILE *out)
{
	char cell[96];

	snprintf(cell, sizeof(cell), "%s%s", group, key);
	for (size_t i = 0; i < r->nruns; i++)
		if (strcmp(r->runs[i].version, version) == 0 &&
		    strcmp(r->runs[i].cell, cell) == 0) {
			text_csv_field(out, r->runs[i].command);
			break;
		}
}

/* The commit columns of a row (none for releases): subject, author,
 * date, url and the commit's part in the verdict. */
static void
commit_cells(int commits, const struct report_release *r,
    const struct report_verdict *v, FILE *out)
{
	const struct report_commit *c = &v->commit;
	struct report_commit own;
	const char *version = r->version, *role = "";

	if (!commits && !v->commit.ok)
		return;
	if (!commits) {
		/* A drill-down: the first bad release's rows name the
		 * first bad commit. */
		if (strcmp(version, v->change.first_bad) != 0) {
			fputs(",,,,,", out);
			return;
		}
		role = "first-bad-commit";
	} else {
		report_commit_read(r->commit, &own);
		c = &own;
		if (strcmp(version, v->change.first_bad) == 0)
			role = "first-bad";
		else if (strcmp(version, v->change.last_good) == 0)
			role = "last-good";
		else
			for (size_t i = 0; i < v->ncandidates; i++)
				if (strcmp(version, v->candidates[i]) == 0)
					role = "candidate";
	}
	fputc(',', out);
	text_csv_field(out, c->subject);
	fputc(',', out);
	text_csv_field(out, c->author);
	fprintf(out, ",%s,%s,%s%s%s", c->date, c->url ? c->url : "", role,
	    commits ? "" : " ", commits ? "" : c->id);
}

/* The five canary columns: its state, hash, diff, the release the diff
 * is since, and why it is not deterministic (or failed). */
static void
canary_csv(const json_t *k, FILE *out)
{
	const json_t *d = json_object_get(k, "diff");
	char diff[600];

	if (!json_is_object(k)) {
		fputs(",,,,", out);
		return;
	}
	fprintf(out, "%s,%s,", rep_str(k, "status"), rep_str(k, "sha256"));
	if (json_is_object(d)) {
		snprintf(diff, sizeof(diff), "token %lld: %s -> %s",
		    (long long)json_integer_value(json_object_get(d, "token")),
		    rep_str(d, "before"), rep_str(d, "after"));
		text_csv_field(out, diff);
	}
	fputc(',', out);
	if (*rep_str(k, "since"))
		text_csv_field(out, rep_str(k, "since"));
	fputc(',', out);
	if (*rep_str(k, "detail"))
		text_csv_field(out, rep_str(k, "detail"));
}

static void
print_csv(const json_t *rep, FILE *out)
{
	struct report rp;
	int commits, drilled;

	if (report_read(rep, &rp) < 0)
		return;
	commits = rp.commits;
	drilled = rp.verdict.commit.ok;
	/* A commit range adds who and what each commit is, and its part
	 * in the verdict. */
	fprintf(out, "engine,version,status,cell,n,tps,tps_sd,ms,ms_sd,"
	    "per_token_ms,per_token_lo,per_token_hi,fixed_ms,fixed_lo,"
	    "fixed_hi,ceiling_tps,flags,canary,canary_sha256,canary_diff,"
	    "canary_since,canary_detail,command%s\n", commits || drilled ?
	    ",subject,author,date,url,verdict" : "");
	for (size_t i = 0; i < rp.nreleases; i++) {
		const struct report_release *tr = &rp.releases[i];
		const struct report_fit *f = &tr->fit;
		char flags[256];

		flags_text(flags, sizeof(flags), tr);
		if (tr->ncells == 0) {
			/* A release without samples still gets a row. */
			text_csv_field(out, rp.engine);
			fputc(',', out);
			text_csv_field(out, tr->version);
			fprintf(out, ",%s,,,,,,,,,,,,,,\"%s\",", tr->status,
			    flags);
			canary_csv(tr->canary, out);
			fputc(',', out);
			commit_cells(commits, tr, &rp.verdict, out);
			fputc('\n', out);
		}
		for (size_t k = 0; k < tr->ncells; k++) {
			const struct report_cell_at *at = &tr->cells[k];
			const char *g = report_group_name(at->group);

			text_csv_field(out, rp.engine);
			fputc(',', out);
			text_csv_field(out, tr->version);
			fprintf(out, ",%s,%s%s,%lld", tr->status, g, at->key,
			    at->c.n);
			text_csv_number(out, at->c.tps);
			text_csv_number(out, at->c.sd);
			text_csv_number(out, at->c.ms);
			text_csv_number(out, at->c.ms_sd);
			text_csv_number(out, f->per_token.value);
			text_csv_number(out, f->per_token.lo);
			text_csv_number(out, f->per_token.hi);
			text_csv_number(out, f->fixed.value);
			text_csv_number(out, f->fixed.lo);
			text_csv_number(out, f->fixed.hi);
			text_csv_number(out, f->ceiling.value);
			fprintf(out, ",\"%s\",", flags);
			canary_csv(tr->canary, out);
			fputc(',', out);
			csv_command(&rp.reproduce, tr->version, g, at->key, out);
			commit_cells(commits, tr, &rp.verdict, out);
			fputc('\n', out);
		}
	}
	report_clear(&rp);
}

#define REPORT_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | \
	JSON_REAL_PRECISION(10) | JSON_ENCODE_ANY)

/*
 * A value nested depth levels deep in the report on its way out: jansson
 * hands over a token at a time, which go to out in large writes.
 */
struct json_nest {
	FILE *out;
	int depth;
	size_t len;
	char buf[1 << 16];
};

static void
nest_put(struct json_nest *n, const char *p, size_t len)
{
	if (len > sizeof(n->buf) - n->len) {
		fwrite(n->buf, 1, n->len, n->out);
		n->len = 0;
		if (len > sizeof(n->buf)) {
			fwrite(p, 1, len, n->out);
			return;
		}
	}
	memcpy(n->buf + n->len, p, len);
	n->len += len;
}

/* json_dump_callback()'s output, each new line indented to the depth. */
static int
nest_write(const char *buf, size_t len, void *arg)
{
	static const char spaces[] = "                                ";
	struct json_nest *n = arg;
	const char *nl;

	while ((nl = memchr(buf, '\n', len)) != NULL) {
		size_t k = (size_t)(nl - buf) + 1;

		nest_put(n, buf, k);
		for (size_t m = 2 * (size_t)n->depth; m > 0;) {
			size_t w = m < sizeof(spaces) - 1 ? m :
			    sizeof(spaces) - 1;

			nest_put(n, spaces, w);
			m -= w;
		}
		buf += k;
		len -= k;
	}
	nest_put(n, buf, len);
	return 0;
}

/* Value v as jansson lays it out depth levels deep. */
static void
nest_dump(const json_t *v, int depth, FILE *out)
{
	struct json_nest n;

	n.out = out;
	n.depth = depth;
	n.len = 0;
	json_dump_callback(v, nest_write, &n, REPORT_JSON_FLAGS);
	fwrite(n.buf, 1, n.len, out);
}

/*
 * The report's members from the one after "releases" (after: 1) or
 * from the first up to "releases" (after: 0), each on its line:
 * "  \"key\": value", separated by commas; a comma before the first
 * when comma is set.  Returns whether a comma is due.
 */
static int
members(const json_t *rep, int after, int comma, FILE *out)
{
	json_t *obj = (json_t *)(uintptr_t)rep;	/* jansson's API wants it */
	const char *key;
	json_t *v, *k;
	int past = 0;

	json_object_foreach(obj, key, v) {
		if (strcmp(key, "releases") == 0) {
			past = 1;
			if (!after)
				break;
			continue;
		}
		if (after && !past)
			continue;
		fputs(comma ? ",\n  " : "\n  ", out);
		comma = 1;
		k = json_string(key);
		nest_dump(k, 1, out);
		json_decref(k);
		fputs(": ", out);
		nest_dump(v, 1, out);
	}
	return comma;
}

void
report_json_head(const json_t *rep, FILE *out)
{
	fputc('{', out);
	fputs(members(rep, 0, 0, out) ? ",\n  \"releases\": [" :
	    "\n  \"releases\": [", out);
}

void
report_json_release(const json_t *rel, size_t i, FILE *out)
{
	fputs(i > 0 ? ",\n    " : "\n    ", out);
	nest_dump(rel, 2, out);
}

void
report_json_tail(const json_t *rep, size_t n, FILE *out)
{
	fputs(n > 0 ? "\n  ]" : "]", out);
	members(rep, 1, 1, out);
	fputs("\n}\n", out);
}

void
report_json_stream_head(const json_t *rep, void *arg)
{
	const struct report_json_stream *w = arg;

	report_json_head(rep, w->out);
}

void
report_json_stream_release(const json_t *rel, size_t i, void *arg)
{
	struct report_json_stream *w = arg;

	report_json_release(rel, i, w->out);
	w->n = i + 1;
}

void
report_print(const json_t *rep, enum report_format f, FILE *out)
{
	const json_t *rels = json_object_get(rep, "releases");
	json_t *safe, *x;
	size_t i;

	switch (f) {
	case REPORT_HTML:
		report_html(rep, out);
		break;
	case REPORT_JSON:
		report_json_head(rep, out);
		json_array_foreach(rels, i, x)
			report_json_release(x, i, out);
		report_json_tail(rep, json_array_size(rels), out);
		break;
	case REPORT_CSV:
	case REPORT_MARKDOWN:
	case REPORT_TEXT:
		/* Versions, reasons and stderr come from upstream: their
		 * control characters are written out, not printed.  JSON
		 * escapes them itself. */
		if ((safe = text_escape_json(rep)) == NULL)
			break;
		if (f == REPORT_CSV)
			print_csv(safe, out);
		else if (f == REPORT_TEXT)
			print_text(safe, out, 0);
		else if ((x = text_markdown_json(safe)) != NULL) {
			/* Upstream text is text on a page too. */
			print_text(x, out, 1);
			json_decref(x);
		}
		json_decref(safe);
		break;
	}
}
