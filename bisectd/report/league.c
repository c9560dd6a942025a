/*
 * league.c: engines side by side, ranked (see league.h): the entries'
 * figures from the store, the ranks with their ties, and the renderings.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/report/league.h"
#include "bisectd/report/page.h"
#include "bisectd/report/summary.h"
#include "bisectd/report/text_escape.h"
#include "common/err.h"
#include "common/strv.h"

static void
fig_of(struct league_fig *g, int tokens, const struct cellsum *cs,
    double max_cv)
{
	memset(g, 0, sizeof(*g));
	g->tokens = tokens;
	if (!cs->ok || stats_throughput(tokens, &cs->st, &g->tp) < 0)
		return;
	g->ok = 1;
	g->lower_bound = cs->lower_bound;
	g->busy = cs->busy;
	g->noisy = cs->st.cv > max_cv;
}

int
league_entry(struct league *l, size_t i, struct store *s,
    const struct conf_engine *eng, const char *version, int64_t release_id,
    const char *wsha, const char *hw, struct err *e)
{
	struct league_entry *x = &l->v[i];
	struct release_figs f;
	size_t nk = eng->contents.n ? eng->contents.n : 1;

	memset(x, 0, sizeof(*x));
	x->eng = eng;
	if ((x->version = strdup(version)) == NULL)
		return err_set(e, "out of memory");
	snprintf(x->weights_sha256, sizeof(x->weights_sha256), "%s", wsha);
	snprintf(l->hw_key, sizeof(l->hw_key), "%s", hw);
	if (summary_release_figs(s, eng, release_id, wsha, hw, &f, e) < 0)
		return -1;
	for (size_t k = 0; k < f.npp && k < eng->nprompts; k++)
		fig_of(&x->pp[x->npp++], eng->prompts[k], &f.pp[k],
		    eng->max_cv);
	for (size_t g = 0; g < eng->ngen && g * nk < f.ntg; g++)
		fig_of(&x->tg[x->ntg++], eng->gen[g], &f.tg[g * nk],
		    eng->max_cv);
	if ((x->has_fit = f.has_fit)) {
		x->fit = f.fit;
		if (f.fit.fixed_why) {
			snprintf(x->why, sizeof(x->why), "%s", f.fit.fixed_why);
			x->fit.fixed_why = x->why;
		}
	}
	summary_figs_release(&f);
	return 0;
}

/* The entry's measured figure at tokens among figs, or NULL. */
static const struct league_fig *
fig_at(const struct league_fig *figs, size_t n, int tokens)
{
	for (size_t i = 0; i < n; i++)
		if (figs[i].tokens == tokens && figs[i].ok)
			return &figs[i];
	return NULL;
}

/* The longest length every entry measured, in pp (or tg) figures. */
static int
common_length(const struct league *l, int decode)
{
	const struct league_entry *x0 = &l->v[0];
	const struct league_fig *f0 = decode ? x0->tg : x0->pp;
	size_t n0 = decode ? x0->ntg : x0->npp;
	int best = 0;

	for (size_t k = 0; k < n0; k++) {
		size_t i;

		for (i = 0; i < l->n; i++)
			if (fig_at(decode ? l->v[i].tg : l->v[i].pp, decode ?
			    l->v[i].ntg : l->v[i].npp, f0[k].tokens) == NULL)
				break;
		if (i == l->n && f0[k].tokens > best)
			best = f0[k].tokens;
	}
	return best;
}

static void
rank_at(struct league *l, int decode, int tokens)
{
	double *lo = calloc(l->n + 1, sizeof(*lo));
	double *hi = calloc(l->n + 1, sizeof(*hi));
	int *rank = calloc(l->n + 1, sizeof(*rank));

	for (size_t i = 0; lo && hi && rank && i < l->n; i++) {
		const struct league_fig *g = fig_at(decode ? l->v[i].tg :
		    l->v[i].pp, decode ? l->v[i].ntg : l->v[i].npp, tokens);

		lo[i] = g ? g->tp.lo : NAN;
		hi[i] = g ? g->tp.hi : NAN;
	}
	if (lo && hi && rank && tokens > 0) {
		stats_rank_intervals(lo, hi, l->n, rank);
		for (size_t i = 0; i < l->n; i++)
			*(decode ? &l->v[i].tg_rank : &l->v[i].pp_rank) =
			    rank[i];
	}
	free(lo);
	free(hi);
	free(rank);
}

void
league_rank(struct league *l)
{
	if (l->n == 0)
		return;
	l->rank_prompt = common_length(l, 0);
	l->rank_gen = common_length(l, 1);
	for (size_t i = 0; i < l->n; i++) {
		l->v[i].other_weights = strcmp(l->v[i].weights_sha256,
		    l->v[0].weights_sha256) != 0;
		l->weights_differ |= l->v[i].other_weights;
	}
	rank_at(l, 0, l->rank_prompt);
	rank_at(l, 1, l->rank_gen);
}

int
league_leader(const struct league *l, int decode)
{
	int at = -1;

	for (size_t i = 0; i < l->n; i++)
		if ((decode ? l->v[i].tg_rank : l->v[i].pp_rank) == 1) {
			if (at >= 0)
				return -1;
			at = (int)i;
		}
	return at;
}

const struct league_fig *
league_ranked_fig(const struct league *l, size_t i, int decode)
{
	const struct league_entry *x = &l->v[i];

	return decode ? fig_at(x->tg, x->ntg, l->rank_gen) :
	    fig_at(x->pp, x->npp, l->rank_prompt);
}

void
league_free(struct league *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].version);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* --- what every rendering shows --- */

/* The ranked figure of entry x (prefill at the common length). */
static double
ranked_tps(const struct league *l, const struct league_entry *x)
{
	const struct league_fig *g = fig_at(x->pp, x->npp, l->rank_prompt);

	return g ? g->tp.tps : NAN;
}

/* The entries in rank order: ranked first, faster first within a rank,
 * then the unranked as named. */
static size_t *
rank_order(const struct league *l)
{
	size_t *o = malloc((l->n + 1) * sizeof(*o));

	if (o == NULL)
		return NULL;
	for (size_t i = 0; i < l->n; i++)
		o[i] = i;
	for (size_t i = 1; i < l->n; i++)
		for (size_t k = i; k > 0; k--) {
			const struct league_entry *a = &l->v[o[k - 1]];
			const struct league_entry *b = &l->v[o[k]];
			int ra = a->pp_rank ? a->pp_rank : 1 << 30;
			int rb = b->pp_rank ? b->pp_rank : 1 << 30;

			if (ra < rb || (ra == rb && !(ranked_tps(l, b) >
			    ranked_tps(l, a))))
				break;
			size_t was = o[k - 1];

			o[k - 1] = o[k];
			o[k] = was;
		}
	return o;
}

/* Whether another entry shares x's rank: a tie. */
static int
tied(const struct league *l, const struct league_entry *x, int decode)
{
	int r = decode ? x->tg_rank : x->pp_rank;

	for (size_t i = 0; r > 0 && i < l->n; i++)
		if (&l->v[i] != x && (decode ? l->v[i].tg_rank :
		    l->v[i].pp_rank) == r)
			return 1;
	return 0;
}

/* The union of the entries' lengths, ascending: the table's columns. */
static size_t
columns(const struct league *l, int decode, int *out)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct league_fig *f = decode ? l->v[i].tg : l->v[i].pp;
		size_t nf = decode ? l->v[i].ntg : l->v[i].npp;

		for (size_t k = 0; k < nf; k++) {
			size_t j = 0, m;

			while (j < n && out[j] < f[k].tokens)
				j++;
			if ((j < n && out[j] == f[k].tokens) ||
			    n == CONF_MAX_LENGTHS)
				continue;
			for (m = n++; m > j; m--)
				out[m] = out[m - 1];
			out[j] = f[k].tokens;
		}
	}
	return n;
}

/* What a table shows: its columns and the order of its rows. */
struct layout {
	int pcol[CONF_MAX_LENGTHS], gcol[CONF_MAX_LENGTHS];
	size_t np, ng;
	size_t *ord;		/* malloced */
};

static int
layout_of(const struct league *l, struct layout *t)
{
	t->np = columns(l, 0, t->pcol);
	t->ng = columns(l, 1, t->gcol);
	t->ord = rank_order(l);
	return t->ord ? 0 : -1;
}

static void
note(struct strv *sv, const char *fmt, ...) __attribute__((format(printf, 2,
    3)));

static void
note(struct strv *sv, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	(void)strv_push(sv, line);
}

static void
fig_notes(struct strv *sv, const struct league_entry *x,
    const struct league_fig *f, size_t n, const char *kind)
{
	for (size_t k = 0; k < n; k++) {
		if (!f[k].ok) {
			note(sv, "%s %s %s%d: not measured (no run succeeded)",
			    x->eng->name, x->version, kind, f[k].tokens);
			continue;
		}
		if (f[k].lower_bound)
			note(sv, "%s %s %s%d: a lower bound (server mode, from "
			    "the time to the first token)", x->eng->name,
			    x->version, kind, f[k].tokens);
		if (f[k].noisy)
			note(sv, "%s %s %s%d: CV %.1f%% above max-cv %.1f%% "
			    "(+-%.1f tok/s): the interval is wide, trust the "
			    "order more than the figure", x->eng->name,
			    x->version, kind, f[k].tokens, 100 * f[k].tp.cv,
			    100 * x->eng->max_cv, f[k].tp.sd);
		if (f[k].busy)
			note(sv, "%s %s %s%d: runs started on a busy machine",
			    x->eng->name, x->version, kind, f[k].tokens);
	}
}

/* The caveats beside the table, as the field report wrote them; the
 * strings hold versions as they are (escape them to show). */
static void
league_notes(const struct league *l, struct strv *sv)
{
	const struct league_entry *x0 = &l->v[0];

	if (l->rank_prompt == 0)
		note(sv, "no prompt length measured by every engine: prefill "
		    "not ranked");
	if (l->rank_gen == 0)
		note(sv, "no decode length measured by every engine: decode "
		    "not ranked");
	for (size_t i = 0; i < l->n; i++) {
		const struct league_entry *x = &l->v[i];

		if (x->other_weights)
			note(sv, "%s %s runs on other weights (%s, sha256 "
			    "%.12s) than %s %s (%s, sha256 %.12s): the order "
			    "holds, not the decimals", x->eng->name, x->version,
			    x->eng->weights->name, x->weights_sha256,
			    x0->eng->name, x0->version, x0->eng->weights->name,
			    x0->weights_sha256);
		fig_notes(sv, x, x->pp, x->npp, "pp");
		fig_notes(sv, x, x->tg, x->ntg, "tg");
	}
}

/* --- JSON --- */

static json_t *
num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *
pair(double lo, double hi)
{
	return json_pack("[o,o]", num(lo), num(hi));
}

static json_t *
figs_json(const struct league_fig *f, size_t n)
{
	json_t *a = json_array();

	for (size_t k = 0; k < n; k++)
		json_array_append_new(a, f[k].ok ? json_pack("{s:i,s:o,s:o,"
		    "s:o,s:o,s:I,s:b,s:b,s:b}", "tokens", f[k].tokens, "tps",
		    num(f[k].tp.tps), "sd", num(f[k].tp.sd), "cv",
		    num(f[k].tp.cv), "ci", pair(f[k].tp.lo, f[k].tp.hi), "n",
		    (json_int_t)f[k].tp.n, "lower_bound", f[k].lower_bound,
		    "noisy", f[k].noisy, "busy", f[k].busy) :
		    json_pack("{s:i,s:n,s:I}", "tokens", f[k].tokens, "tps",
		    "n", (json_int_t)0));
	return a;
}

static json_t *
fit_json(const struct league_entry *x)
{
	const struct fit *f = &x->fit;

	if (!x->has_fit)
		return json_null();
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "per_token_ms",
	    num(f->per_token_ns.value / 1e6), "per_token_ci_ms",
	    pair(f->per_token_ns.lo / 1e6, f->per_token_ns.hi / 1e6),
	    "ceiling_tps", num(f->ceiling_tps), "ceiling_ci",
	    pair(f->ceiling_lo, f->ceiling_hi), "fixed_ms", f->fixed_estimable ?
	    num(f->fixed_ns.value / 1e6) : json_null(), "fixed_ci_ms",
	    f->fixed_estimable ? pair(f->fixed_ns.lo / 1e6, f->fixed_ns.hi /
	    1e6) : json_null(), "fixed_why", f->fixed_why ?
	    json_string(f->fixed_why) : json_null());
}

static json_t *
rank_json(int r)
{
	return r > 0 ? json_integer(r) : json_null();
}

json_t *
league_json(const struct league *l)
{
	json_t *o, *a = json_array(), *w = json_array();
	struct strv sv = STRV_INIT;
	size_t *ord = rank_order(l);

	if (ord == NULL || a == NULL || w == NULL) {
		free(ord);
		json_decref(a);
		json_decref(w);
		return NULL;
	}
	for (size_t k = 0; k < l->n; k++) {
		const struct league_entry *x = &l->v[ord[k]];

		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:b,s:s,"
		    "s:f,s:o,s:b,s:o,s:b,s:o,s:o,s:o}", "engine", x->eng->name,
		    "version", x->version, "weights", x->eng->weights->name,
		    "weights_sha256", x->weights_sha256, "other_weights",
		    x->other_weights, "mode", conf_mode_name(
		    x->eng->mode), "max_cv", x->eng->max_cv,
		    "prefill_rank", rank_json(x->pp_rank), "prefill_tie",
		    tied(l, x, 0), "decode_rank", rank_json(x->tg_rank),
		    "decode_tie", tied(l, x, 1), "prefill", figs_json(x->pp,
		    x->npp), "fit", fit_json(x), "decode", figs_json(x->tg,
		    x->ntg)));
	}
	league_notes(l, &sv);
	for (size_t i = 0; i < sv.n; i++)
		json_array_append_new(w, json_string(sv.v[i]));
	strv_clear(&sv);
	free(ord);
	o = json_pack("{s:s,s:o,s:o,s:s,s:b,s:o,s:o}", "machine", l->hw_key,
	    "rank_prompt", l->rank_prompt ? json_integer(l->rank_prompt) :
	    json_null(), "rank_gen", l->rank_gen ? json_integer(l->rank_gen) :
	    json_null(), "ties", "95% intervals overlap", "weights_differ",
	    l->weights_differ, "entries", a, "notes", w);
	return o;
}

/* --- text and markdown --- */

/* A throughput as a table shows it: "927.9 ± 10.5 (n5)", ">=" before a
 * lower bound, "!" after a CV above max-cv, "-" when not measured. */
static void
fig_text(char *buf, size_t len, const struct league_fig *g)
{
	if (g == NULL || !g->ok)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s%.1f ± %.1f (n%zu)%s", g->lower_bound ?
		    ">=" : "", g->tp.tps, g->tp.sd, g->tp.n, g->noisy ? "!" :
		    "");
}

static void
rank_text(char *buf, size_t len, const struct league *l,
    const struct league_entry *x, int decode)
{
	int r = decode ? x->tg_rank : x->pp_rank;

	if (r == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%d%s", r, tied(l, x, decode) ? "=" : "");
}

static void
fit_text(char *pt, char *ceil, size_t len, const struct league_entry *x)
{
	const struct fit *f = &x->fit;

	if (!x->has_fit) {
		snprintf(pt, len, "-");
		snprintf(ceil, len, "-");
		return;
	}
	snprintf(pt, len, "%.4g [%.4g, %.4g]", f->per_token_ns.value / 1e6,
	    f->per_token_ns.lo / 1e6, f->per_token_ns.hi / 1e6);
	if (!isfinite(f->ceiling_tps))
		snprintf(ceil, len, "-");
	else if (!isfinite(f->ceiling_hi))
		snprintf(ceil, len, "%.0f [%.0f, unbounded]", f->ceiling_tps,
		    f->ceiling_lo);
	else
		snprintf(ceil, len, "%.0f [%.0f, %.0f]", f->ceiling_tps,
		    f->ceiling_lo, f->ceiling_hi);
}

/* Upstream text for a terminal (md 0) or markdown (md 1). */
static void
put_safe(FILE *out, const char *s, int md)
{
	char *t = md ? text_md_escape(s) : text_escape(s, 0);

	fputs(t ? t : "?", out);
	free(t);
}

/* One cell of the table: padded to w characters for text (a UTF-8
 * continuation byte takes no column: "±"), between bars for md. */
static void
cell(FILE *out, int md, int w, const char *s)
{
	for (size_t i = 0; s[i]; i++)
		w += ((unsigned char)s[i] & 0xc0) == 0x80;
	if (md)
		fprintf(out, " %s |", s);
	else
		fprintf(out, " %-*s", w, s);
}

static void
print_table(const struct league *l, FILE *out, int md)
{
	struct layout t;
	struct strv sv = STRV_INIT;
	char buf[128], ceil[128];

	if (layout_of(l, &t) < 0)
		return;
	if (md)
		fputs("| Rank | Engine | Weights |", out);
	else
		fprintf(out, "%-5s %-28s %-18s", "RANK", "ENGINE", "WEIGHTS");
	for (size_t k = 0; k < t.np; k++) {
		snprintf(buf, sizeof(buf), "pp%d tok/s", t.pcol[k]);
		cell(out, md, 24, buf);
	}
	cell(out, md, 26, "per token ms");
	cell(out, md, 24, "ceiling tok/s");
	for (size_t k = 0; k < t.ng; k++) {
		snprintf(buf, sizeof(buf), "tg%d tok/s", t.gcol[k]);
		cell(out, md, 24, buf);
	}
	cell(out, md, 0, "decode rank");
	fputc('\n', out);
	if (md) {
		fputs("|---|---|---|", out);
		for (size_t k = 0; k < t.np + t.ng + 3; k++)
			fputs("---|", out);
		fputc('\n', out);
	}
	for (size_t k = 0; k < l->n; k++) {
		const struct league_entry *x = &l->v[t.ord[k]];
		char *name = md ? text_md_escape(x->version) :
		    text_escape(x->version, 0);

		rank_text(buf, sizeof(buf), l, x, 0);
		if (md) {
			fprintf(out, "| %s | ", buf);
			put_safe(out, x->eng->name, 1);
			fprintf(out, " %s | ", name ? name : "?");
			put_safe(out, x->eng->weights->name, 1);
			fprintf(out, "%s |", x->other_weights ? " (other)" : "");
		} else {
			char who[160], w[96];

			snprintf(who, sizeof(who), "%s %s", x->eng->name, name ?
			    name : "?");
			snprintf(w, sizeof(w), "%.12s%s", x->weights_sha256,
			    x->other_weights ? " *" : "");
			fprintf(out, "%-5s %-28s %-18s", buf, who, w);
		}
		free(name);
		for (size_t c = 0; c < t.np; c++) {
			fig_text(buf, sizeof(buf), fig_at(x->pp, x->npp,
			    t.pcol[c]));
			cell(out, md, 24, buf);
		}
		fit_text(buf, ceil, sizeof(buf), x);
		cell(out, md, 26, buf);
		cell(out, md, 24, ceil);
		for (size_t c = 0; c < t.ng; c++) {
			fig_text(buf, sizeof(buf), fig_at(x->tg, x->ntg,
			    t.gcol[c]));
			cell(out, md, 24, buf);
		}
		rank_text(buf, sizeof(buf), l, x, 1);
		cell(out, md, 0, buf);
		fputc('\n', out);
	}
	free(t.ord);
	league_notes(l, &sv);
	if (sv.n)
		fputs(md ? "\n**Notes**\n\n" : "\nnotes:\n", out);
	for (size_t i = 0; i < sv.n; i++) {
		fputs(md ? "- " : "  ", out);
		put_safe(out, sv.v[i], md);
		fputc('\n', out);
	}
	strv_clear(&sv);
}

/* What the table ranks by and how to read it: for a terminal (0),
 * markdown (1) or HTML (2). */
static void
print_head(const struct league *l, FILE *out, int how)
{
	char pp[32], tg[32], text[640];

	snprintf(pp, sizeof(pp), l->rank_prompt ? "pp%d" : "(none in common)",
	    l->rank_prompt);
	snprintf(tg, sizeof(tg), l->rank_gen ? "tg%d" : "(none in common)",
	    l->rank_gen);
	snprintf(text, sizeof(text), "Machine %.12s, runs interleaved (A B C "
	    "A B C); ranked by prefill tok/s at %s, decode apart at %s; a "
	    "rank shared (2=) where the 95%% intervals overlap.  Figures: "
	    "mean ± sd (n runs); >= a lower bound, ! a CV above max-cv%s.",
	    l->hw_key, pp, tg, how == 0 ? ", * other weights" : "");
	if (how == 2)
		html_esc(out, text);
	else
		fprintf(out, "%s%s\n\n", how == 1 ? "**Engines compared on "
		    "one machine**\n\n" : "", text);
}

/* --- CSV --- */

static void
csv_rows(const struct league *l, const struct league_entry *x,
    const struct league_fig *f, size_t n, const char *kind, FILE *out)
{
	char rank[32];

	for (size_t k = 0; k < n; k++) {
		rank_text(rank, sizeof(rank), l, x, kind[0] == 't');
		text_csv_field(out, x->eng->name);
		fputc(',', out);
		text_csv_field(out, x->version);
		fprintf(out, ",%s,%d,%s,%d", x->weights_sha256,
		    x->other_weights, kind, f[k].tokens);
		fputc(',', out);
		text_csv_field(out, rank);
		text_csv_number(out, f[k].ok ? f[k].tp.tps : NAN);
		text_csv_number(out, f[k].ok ? f[k].tp.sd : NAN);
		text_csv_number(out, f[k].ok ? f[k].tp.lo : NAN);
		text_csv_number(out, f[k].ok ? f[k].tp.hi : NAN);
		text_csv_number(out, f[k].ok ? f[k].tp.cv : NAN);
		fprintf(out, ",%zu,%d,%d\n", f[k].ok ? f[k].tp.n : 0,
		    f[k].lower_bound, f[k].noisy);
	}
}

static void
print_csv(const struct league *l, FILE *out)
{
	size_t *ord = rank_order(l);

	if (ord == NULL)
		return;
	fputs("engine,version,weights_sha256,other_weights,metric,tokens,"
	    "rank,value,sd,lo,hi,cv,n,lower_bound,noisy\n", out);
	for (size_t k = 0; k < l->n; k++) {
		const struct league_entry *x = &l->v[ord[k]];
		const struct fit *f = &x->fit;

		csv_rows(l, x, x->pp, x->npp, "pp", out);
		csv_rows(l, x, x->tg, x->ntg, "tg", out);
		if (!x->has_fit)
			continue;
		text_csv_field(out, x->eng->name);
		fputc(',', out);
		text_csv_field(out, x->version);
		fprintf(out, ",%s,%d,per-token-ms,,", x->weights_sha256,
		    x->other_weights);
		text_csv_number(out, f->per_token_ns.value / 1e6);
		text_csv_number(out, NAN);
		text_csv_number(out, f->per_token_ns.lo / 1e6);
		text_csv_number(out, f->per_token_ns.hi / 1e6);
		fprintf(out, ",,%zu,0,0\n", f->nsamples);
		text_csv_field(out, x->eng->name);
		fputc(',', out);
		text_csv_field(out, x->version);
		fprintf(out, ",%s,%d,ceiling-tps,,", x->weights_sha256,
		    x->other_weights);
		text_csv_number(out, f->ceiling_tps);
		text_csv_number(out, NAN);
		text_csv_number(out, f->ceiling_lo);
		text_csv_number(out, f->ceiling_hi);
		fprintf(out, ",,%zu,0,0\n", f->nsamples);
	}
	free(ord);
}

/* --- HTML --- */

/* Bars of each entry's figure at tokens, with its 95% interval as an
 * error bar, in rank order. */
static void
html_bars(const struct league *l, const size_t *ord, int decode,
    int tokens, FILE *out)
{
	struct plot_axes a = { 0, 1, 0, 0 };
	char title[96], label[64];
	double slot;

	if (tokens == 0)
		return;
	for (size_t k = 0; k < l->n; k++) {
		const struct league_entry *x = &l->v[ord[k]];
		const struct league_fig *g = fig_at(decode ? x->tg : x->pp,
		    decode ? x->ntg : x->npp, tokens);

		if (g && isfinite(g->tp.hi) && g->tp.hi > a.y1)
			a.y1 = g->tp.hi;
		else if (g && g->tp.tps > a.y1)
			a.y1 = g->tp.tps;
	}
	svg_nice_range(&a.y0, &a.y1);
	snprintf(title, sizeof(title), "%s tok/s at %s%d, with 95%% "
	    "intervals", decode ? "decode" : "prefill", decode ? "tg" : "pp",
	    tokens);
	snprintf(label, sizeof(label), "%s%d tok/s", decode ? "tg" : "pp",
	    tokens);
	svg_open(out, decode ? "decode-bars" : "prefill-bars", title);
	svg_axes(out, &a, 0, "engine", label);
	slot = (double)(PLOT_W - PAD_L - PAD_R) / (double)l->n;
	for (size_t k = 0; k < l->n; k++) {
		const struct league_entry *x = &l->v[ord[k]];
		const struct league_fig *g = fig_at(decode ? x->tg : x->pp,
		    decode ? x->ntg : x->npp, tokens);
		double cx = PAD_L + slot * ((double)k + 0.5);

		html_markup(out, "<g class=\"entry\"><title>", x->eng->name,
		    " ", x->version, "</title>", NULL);
		if (g) {
			double lo = isfinite(g->tp.lo) ? g->tp.lo : g->tp.tps;
			double hi = isfinite(g->tp.hi) ? g->tp.hi : g->tp.tps;

			fprintf(out, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" "
			    "width=\"%.1f\" height=\"%.1f\"/>",
			    g->lower_bound ? "bar lower-bound" : "bar",
			    cx - slot * 0.3, svg_py(&a, g->tp.tps), slot * 0.6,
			    svg_py(&a, 0) - svg_py(&a, g->tp.tps));
			fprintf(out, "<path class=\"ci\" d=\"M%.1f %.1fH%.1f"
			    "M%.1f %.1fV%.1fM%.1f %.1fH%.1f\"/>", cx - 6,
			    svg_py(&a, lo), cx + 6, cx, svg_py(&a, lo), svg_py(&a,
			    hi), cx - 6, svg_py(&a, hi), cx + 6);
		}
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
		    cx, PLOT_H - PAD_B + 16);
		html_markup(out, "", x->eng->name, " ", x->version,
		    "</text></g>\n", NULL);
	}
	fputs("</svg>\n", out);
}

static void
html_fig(FILE *out, const struct league_fig *g)
{
	char buf[128];

	fig_text(buf, sizeof(buf), g);
	fputs("<td>", out);
	html_esc(out, buf);
	fputs("</td>", out);
}

static void
print_html(const struct league *l, FILE *out)
{
	struct layout t;
	struct strv sv = STRV_INIT;
	char buf[128], ceil[128];

	if (layout_of(l, &t) < 0)
		return;
	html_page_open(out);
	fputs("Engines compared</title>\n<style>", out);
	fprintf(out, "%s.bar{fill:#4a7ab5}.lower-bound{fill:#a9c1de}"
	    ".ci{stroke:#222;stroke-width:1.5;fill:none}</style>\n</head>\n"
	    "<body>\n<h1>Engines compared</h1>\n<p class=\"meta\">",
	    html_page_style);
	print_head(l, out, 2);
	fputs("</p>\n<table id=\"league\">\n<thead><tr><th>rank</th>"
	    "<th>engine</th><th>weights</th>", out);
	for (size_t c = 0; c < t.np; c++)
		fprintf(out, "<th>pp%d tok/s</th>", t.pcol[c]);
	fputs("<th>per token ms</th><th>ceiling tok/s</th>", out);
	for (size_t c = 0; c < t.ng; c++)
		fprintf(out, "<th>tg%d tok/s</th>", t.gcol[c]);
	fputs("<th>decode rank</th></tr></thead>\n<tbody>\n", out);
	for (size_t k = 0; k < l->n; k++) {
		const struct league_entry *x = &l->v[t.ord[k]];

		rank_text(buf, sizeof(buf), l, x, 0);
		fputs(x->other_weights ? "<tr class=\"other-weights\">" :
		    "<tr>", out);
		html_markup(out, "<td class=\"rank\">",
		    buf, "</td><td class=\"engine\">", x->eng->name, " ",
		    x->version, "</td><td>", x->eng->weights->name, " ",
		    x->other_weights ? "(other weights)" : "", "</td>", NULL);
		for (size_t c = 0; c < t.np; c++)
			html_fig(out, fig_at(x->pp, x->npp, t.pcol[c]));
		fit_text(buf, ceil, sizeof(buf), x);
		html_markup(out, "<td>", buf, "</td><td>", ceil, "</td>",
		    NULL);
		for (size_t c = 0; c < t.ng; c++)
			html_fig(out, fig_at(x->tg, x->ntg, t.gcol[c]));
		rank_text(buf, sizeof(buf), l, x, 1);
		html_markup(out, "<td class=\"decode-rank\">", buf,
		    "</td></tr>\n", NULL);
	}
	fputs("</tbody>\n</table>\n", out);
	html_bars(l, t.ord, 0, l->rank_prompt, out);
	html_bars(l, t.ord, 1, l->rank_gen, out);
	league_notes(l, &sv);
	if (sv.n)
		fputs("<h2>Notes</h2>\n<ul id=\"notes\">\n", out);
	for (size_t i = 0; i < sv.n; i++)
		html_markup(out, "<li>", sv.v[i], "</li>\n", NULL);
	if (sv.n)
		fputs("</ul>\n", out);
	fputs("</body>\n</html>\n", out);
	strv_clear(&sv);
	free(t.ord);
}

void
league_print(const struct league *l, enum report_format f, FILE *out)
{
	json_t *j;
	char *s;

	switch (f) {
	case REPORT_JSON:
		j = league_json(l);
		s = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
		if (s)
			fprintf(out, "%s\n", s);
		free(s);
		json_decref(j);
		break;
	case REPORT_CSV:
		print_csv(l, out);
		break;
	case REPORT_HTML:
		print_html(l, out);
		break;
	case REPORT_MARKDOWN:
	case REPORT_TEXT:
		print_head(l, out, f == REPORT_MARKDOWN);
		print_table(l, out, f == REPORT_MARKDOWN);
		break;
	}
}
