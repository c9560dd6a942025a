/*
 * build.c: building the report of a release range from the store
 * (see build.h); report/print.c renders it.
 */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "bisectd/acquire/acquire.h"
#include "bisectd/measure/bench.h"
#include "bisectd/measure/canary.h"
#include "bisectd/measure/hygiene.h"
#include "bisectd/process/template.h"
#include "common/buf.h"
#include "bisectd/search/canary.h"
#include "bisectd/search/range.h"
#include "bisectd/search/verdict.h"
#include "bisectd/search/verdict_json.h"
#include "common/err.h"
#include "bisectd/analysis/fit.h"
#include "bisectd/search/commits.h"
#include "fetch/sha256.h"
#include "build.h"
#include "serve_lines.h"
#include "changes.h"
#include "report.h"
#include "summary.h"
#include "bisectd/analysis/stats.h"
#include "store/store.h"

/* --- per release --- */

/* A cell of a release as report.h types it. */
static void
cell_of(int tokens, const struct cellsum *cs, struct report_cell *c)
{
	struct throughput t;

	memset(c, 0, sizeof(*c));
	if (stats_throughput(tokens, &cs->st, &t) < 0)
		return;
	c->ok = 1;
	c->tps = t.tps;
	c->sd = t.sd;
	c->n = (long long)t.n;
	c->cv = t.cv;
	c->ms = cs->st.mean / 1e6;
	c->ms_sd = cs->st.sd / 1e6;
	c->ms_median = cs->st.median / 1e6;
	c->samples = (long long)cs->runs.samples;
	c->ms_sd_between = cs->runs.sd_between / 1e6;
	c->ms_sd_within = cs->runs.sd_within / 1e6;
	c->cv_within = cs->runs.cv_within;
	c->lower_bound = cs->lower_bound;
	c->throttled_runs = cs->throttled;
	if (cs->confirm_ok && stats_throughput(tokens, &cs->confirm.values,
	    &t) == 0) {
		c->confirm.ok = 1;
		c->confirm.tps = t.tps;
		c->confirm.n = (long long)t.n;
		c->confirm.ms = cs->confirm.values.mean / 1e6;
		c->confirm.ms_sd = cs->confirm.values.sd / 1e6;
		c->confirm.samples = (long long)cs->confirm.samples;
	}
}

/* The GPU figures' energy per prompt length fit report.h's. */
_Static_assert(CONF_MAX_LENGTHS <= FIT_MAX_CELLS, "report_gpu.pp");

/* A release's GPU figures (docs/report.md) as report.h types them. */
static void
gpu_of(const struct release_gpu *g, const struct conf_engine *eng,
    struct report_gpu *x)
{
	memset(x, 0, sizeof(*x));
	x->ok = g->runs > 0 || g->throttled > 0;
	x->runs = g->runs;
	x->throttled_runs = g->throttled;
	x->sm_mhz = g->sm_mhz;
	x->mem_peak_bytes = g->mem_peak >= 0 ? g->mem_peak : -1;
	for (size_t i = 0; i < eng->nprompts; i++) {
		struct report_energy *y = &x->pp[x->npp];

		if (g->energy_runs[i] == 0)
			continue;
		snprintf(y->tokens, sizeof(y->tokens), "%d", eng->prompts[i]);
		y->energy_j = g->energy_j[i];
		y->tokens_per_j = g->tokens_per_j[i];
		y->runs = g->energy_runs[i];
		x->npp++;
	}
}

static void
add_flag(struct report_release *tr, const char *f)
{
	if (!report_release_flagged(tr, f) && tr->nflags < REPORT_MAX_FLAGS)
		tr->flags[tr->nflags++] = f;
}

/* The band plotted around a release's line: this many lengths over the
 * fitted ones. */
#define BAND_STEPS 16

/* The fitted line and its band over the lengths it was fitted on: drawn
 * further, a line with a negative intercept would cross below zero at
 * lengths never measured. */
static json_t *
band_json(const struct fit *f, const struct conf_engine *eng)
{
	json_t *band = json_array();
	int shortest = INT_MAX, longest = 0;

	for (size_t i = 0; i < eng->nfit; i++) {
		if (eng->fit[i] > longest)
			longest = eng->fit[i];
		if (eng->fit[i] < shortest)
			shortest = eng->fit[i];
	}
	if (longest == 0)
		return band;
	for (int k = 0; k <= BAND_STEPS; k++) {
		double tokens = shortest + (double)(longest - shortest) * k /
		    BAND_STEPS;
		struct estimate at;
		json_t *p = json_array();

		fit_model_at(f, tokens, &at);
		json_array_append_new(p, json_real(tokens));
		json_array_append_new(p, out_num(at.value / 1e6));
		json_array_append_new(p, out_num(at.lo / 1e6));
		json_array_append_new(p, out_num(at.hi / 1e6));
		json_array_append_new(band, p);
	}
	return band;
}

/*
 * Whether a prefill cell measured faster than the fit's ceiling allows:
 * 1000 / per-token ms is the throughput a line reaches at an endless
 * prompt, so a measured throughput wholly above its interval says the
 * cost of a token grows with the prompt (llama.cpp's attention) and the
 * line's ceiling is no limit.  why gets the cell and both figures.
 */
static int
ceiling_contradicted(const struct release_figs *fg,
    const struct conf_engine *eng, char *why, size_t len)
{
	for (size_t i = 0; i < fg->npp; i++) {
		struct throughput t;

		const struct fit *f = &fg->fit;

		if (!fg->pp[i].ok || stats_throughput(eng->prompts[i],
		    &fg->pp[i].st, &t) < 0 || !(t.lo > f->model_ceiling_hi))
			continue;
		snprintf(why, len, "pp%d measured %.0f [%.0f, %.0f] tok/s, "
		    "above the %s's ceiling of %.0f [%.0f, %.0f]: the cost "
		    "of a token grows with the prompt", eng->prompts[i], t.tps,
		    t.lo, t.hi, f->model == FIT_MODEL_CURVE ? "curve" : "line",
		    f->model_ceiling_tps, f->model_ceiling_lo,
		    f->model_ceiling_hi);
		return 1;
	}
	return 0;
}

static void
ms_of(const struct estimate *x, struct report_ms *m)
{
	m->value = x->value / 1e6;
	m->lo = x->lo / 1e6;
	m->hi = x->hi / 1e6;
}

/*
 * A release's fit as report.h types it; why and note hold the
 * ceiling's contradiction and why the fixed part is not estimable.
 */
static void
fit_of(const struct release_figs *fg, const struct conf_engine *eng,
    struct report_fit *rf, char *why, size_t why_len, char *note,
    size_t note_len)
{
	const struct fit *f = &fg->fit;

	memset(rf, 0, sizeof(*rf));
	why[0] = note[0] = '\0';
	rf->fixed_not_estimable = note;
	rf->ceiling_contradicted = why;
	if (!fg->has_fit)
		return;
	rf->ok = 1;
	ms_of(&f->per_token_ns, &rf->per_token);
	rf->curve = f->model == FIT_MODEL_CURVE;
	for (size_t i = 0; i < f->nper_token_at; i++) {
		rf->cost_at[i].tokens = f->per_token_at[i].tokens;
		ms_of(&f->per_token_at[i].cost_ns, &rf->cost_at[i].ms);
	}
	rf->ncost_at = f->nper_token_at;
	if (fit_model_why(f) != NULL) {
		rf->fixed.value = rf->fixed.lo = rf->fixed.hi = NAN;
		out_fixed_note(fit_model_why(f), fit_hint(f), note, note_len);
	} else
		ms_of(&f->model_fixed_ns, &rf->fixed);
	rf->fit_hint = fit_hint(f);
	if (ceiling_contradicted(fg, eng, why, why_len)) {
		rf->ceiling.value = rf->ceiling.lo = rf->ceiling.hi = NAN;
		rf->ceiling_tokens = NAN;
		return;
	}
	rf->ceiling.value = f->model_ceiling_tps;
	rf->ceiling.lo = f->model_ceiling_lo;
	rf->ceiling.hi = f->model_ceiling_hi;
	rf->ceiling_tokens = rf->curve ? f->model_ceiling_tokens : NAN;
}

/* The strings a release's entry points to while it is encoded. */
struct release_text {
	char why[256];		/* the ceiling's contradiction */
	char note[512];		/* why the fixed part is not estimable */
};

/*
 * A release's entry from its figures and its row (version, archive,
 * fetch failure) into *tr, pointing into fg, rel and t; with plot, also
 * its runs as plot points ([tokens, ms] per process run of each prompt
 * length) and the fitted line's band.  Returns 0, or -1 when memory
 * runs out; free with report_release_clear() either way.
 */
static int
release_of(const struct release_figs *fg, const struct conf_engine *eng,
    const struct store_release *rel, int plot, struct report_release *tr,
    struct release_text *t)
{
	size_t nk = eng->contents.n ? eng->contents.n : 1;
	int measured = 0;
	double decode_tps[2] = { NAN, NAN };
	struct report_cell_at *at;

	memset(tr, 0, sizeof(*tr));
	if ((fg->npp + fg->ntg > 0 && (tr->cells = calloc(fg->npp + fg->ntg,
	    sizeof(*tr->cells))) == NULL) || (tr->failures = calloc(
	    fg->nfailed + 1, sizeof(*tr->failures))) == NULL)
		return -1;
	tr->version = rel->version;
	tr->sha256 = rel->archive_sha256;
	if (plot && (tr->points = json_array()) == NULL)
		return -1;
	for (size_t i = 0; i < fg->npp; i++) {
		const struct cellsum *cs = &fg->pp[i];

		for (size_t k = 0; tr->points && k < fg->npoints[i]; k++)
			json_array_append_new(tr->points, json_pack("[i,f]",
			    eng->prompts[i], fg->points[i][k] / 1e6));
		if (!cs->ok)
			continue;
		measured = 1;
		at = &tr->cells[tr->ncells++];
		at->group = REPORT_PP;
		snprintf(at->key, sizeof(at->key), "%d", eng->prompts[i]);
		cell_of(eng->prompts[i], cs, &at->c);
		if (cs->st.cv > eng->max_cv)
			add_flag(tr, "noisy");
		if (cs->busy)
			add_flag(tr, "busy");
		if (cs->lower_bound)
			add_flag(tr, "lower-bound");
	}
	for (size_t i = 0; i < fg->ntg; i++) {
		size_t g = i / nk, k = i % nk;
		const char *content = eng->contents.n ? eng->contents.v[k] :
		    "";
		const struct cellsum *cs = &fg->tg[i];

		if (!cs->ok)
			continue;
		measured = 1;
		at = &tr->cells[tr->ncells++];
		at->group = REPORT_TG;
		if (content[0])
			snprintf(at->key, sizeof(at->key), "%d/%s",
			    eng->gen[g], content);
		else
			snprintf(at->key, sizeof(at->key), "%d", eng->gen[g]);
		cell_of(eng->gen[g], cs, &at->c);
		if (g == 0 && k < 2 && at->c.ok)
			decode_tps[k] = at->c.tps;
		if (cs->st.cv > eng->max_cv)
			add_flag(tr, "noisy");
		if (cs->busy)
			add_flag(tr, "busy");
	}
	/* Left out of the figures, kept in the store: during those runs
	 * the GPU ran at another clock (docs/gpu.md). */
	if (fg->gpu.throttled > 0) {
		add_flag(tr, "throttled");
		tr->throttled_runs = fg->gpu.throttled;
	}
	/* Decode on two kinds of content differing by more than 20%:
	 * speculative decoding is the usual reason. */
	if (isfinite(decode_tps[0]) && isfinite(decode_tps[1]) &&
	    fabs(decode_tps[0] / decode_tps[1] - 1) > 0.20 &&
	    fabs(decode_tps[1] / decode_tps[0] - 1) > 0.20)
		add_flag(tr, "content-dependent-decode");
	fit_of(fg, eng, &tr->fit, t->why, sizeof(t->why), t->note,
	    sizeof(t->note));
	if (fg->has_fit) {
		const struct fit *f = &fg->fit;

		/* An interval reaching zero: too few runs for this noise. */
		if (!(f->per_token_ns.lo > 0))
			add_flag(tr, "per-token-unresolved");
		if (!f->model_fixed_estimable)
			add_flag(tr, "fixed-not-estimable");
		/* Measured faster than the line's limit: the cost of a token
		 * is not one number here; no ceiling. */
		if (t->why[0])
			add_flag(tr, "ceiling-contradicted");
		if (plot && (tr->fit_band = band_json(f, eng)) == NULL)
			return -1;
	}
	for (size_t i = 0; i < fg->nfailed; i++) {
		struct report_failure *f = &tr->failures[tr->nfailures++];

		f->reason = fg->failed[i].failure;
		f->detail = fg->failed[i].detail;
		f->run = fg->failed[i].run_id;
	}
	if (rel->state == RELEASE_FAILED && rel->failure) {
		struct report_failure *f = &tr->failures[tr->nfailures++];

		f->reason = "fetch";
		f->detail = rel->failure;
		f->run = -1;
	}
	gpu_of(&fg->gpu, eng, &tr->gpu);
	tr->status = measured ? "measured" : rel->state == RELEASE_FAILED ||
	    tr->nfailures ? "failed" : "not-measured";
	return 0;
}

/*
 * The verdict's metric of a release (k-th of the range) when the
 * verdict was judged on its search runs.  Nothing when it has none.
 */
static void
release_metric(const struct judgement *j, const struct release_figs *fg,
    size_t k, int bytes, struct report_release *tr)
{
	if (j->data.rel == NULL || k >= j->data.n || j->data.ncells == 0 ||
	    j->data.rel[k].skipped || !fg->has_metric)
		return;
	tr->has_metric = 1;
	/* A memory's cost is its bytes, kept as they are. */
	if ((tr->metric_bytes = bytes))
		tr->metric = (struct report_ms){ fg->metric.value,
		    fg->metric.lo, fg->metric.hi };
	else
		ms_of(&fg->metric, &tr->metric);
}

/* Tokens a report's diff shows of each side. */
#define DIFF_TOKENS 8

/* The last release before, in the range, whose canary has a text. */
struct canary_prev {
	const struct canary_status *st;
	const char *version;
};

/*
 * The "canary" object of release i of the range: its state, the sha256
 * of its text, and whether the text changed since *prev, the last
 * release before it that has one, with the first differing tokens.
 * Called for each release in order, it moves *prev on.
 */
static json_t *
canary_json(const struct canary_judgement *oj, const struct range *r,
    size_t i, struct canary_prev *prev)
{
	const struct canary_status *st = &oj->st[i];
	json_t *o = json_object();

	json_object_set_new(o, "status", json_string(
	    canary_state_name(st->state)));
	json_object_set_new(o, "sha256", st->sha256[0] ?
	    json_string(st->sha256) : json_null());
	json_object_set_new(o, "runs", json_integer(st->runs));
	json_object_set_new(o, "failed", json_integer(st->failed));
	if (st->detail[0])
		json_object_set_new(o, "detail", json_string(st->detail));
	if (st->state == CANARY_DETERMINISTIC && prev->st != NULL) {
		int changed = strcmp(prev->st->sha256, st->sha256) != 0;

		json_object_set_new(o, "changed", json_boolean(changed));
		json_object_set_new(o, "since", json_string(prev->version));
		if (changed) {
			struct canary_diff d;
			json_t *diff = json_object();

			canary_diff(prev->st->text, prev->st->text_len,
			    st->text, st->text_len, DIFF_TOKENS, &d);
			json_object_set_new(diff, "token",
			    json_integer((json_int_t)d.token));
			json_object_set_new(diff, "before",
			    json_string(d.before));
			json_object_set_new(diff, "after",
			    json_string(d.after));
			json_object_set_new(o, "diff", diff);
		}
	}
	if (st->state == CANARY_DETERMINISTIC) {
		prev->st = st;
		prev->version = r->list.v[r->lo + i].version;
	}
	return o;
}

/* The machine as report.h types it; for upstream, no hostname. */
static void
machine_of(const struct store_machine *m, int upstream,
    struct report_machine *x)
{
	x->ok = m->hw_key != NULL;
	x->cpu_model = m->cpu_model;
	x->cores = m->cores;
	x->mem_bytes = m->mem_bytes;
	x->arch = m->arch;
	x->kernel = m->kernel;
	x->os = m->os;
	x->hostname = upstream ? NULL : m->hostname;
	x->hw_key = m->hw_key;
}

/*
 * The options that decide a verdict, as the command line that asked for
 * it: " --all --metric pp512 --threshold 3%".  Without them a pasted
 * command gives another answer.
 */
static void
options_text(const struct report_opts *o, char *buf, size_t len)
{
	char metric[32];
	size_t off = 0;

	buf[0] = '\0';
	if (o->req.all)
		off = (size_t)snprintf(buf, len, " --all");
	if ((int)o->req.metric.kind >= 0 && off < len)
		off += (size_t)snprintf(buf + off, len - off, " --metric %s",
		    conf_metric_name(&o->req.metric, metric, sizeof(metric)));
	if (o->req.threshold >= 0 && off < len)
		off += (size_t)snprintf(buf + off, len - off,
		    " --threshold %.6g%%", 100 * o->req.threshold);
	if (o->req.commits && off < len)
		snprintf(buf + off, len - off, " --commits");
}

/* A command template with every absolute path cut to ".../NAME": what
 * is local to this machine means nothing upstream. */
static void
strip_paths(const char *cmd, char *buf, size_t len)
{
	size_t off = 0;

	while (*cmd && off + 1 < len) {
		const char *end, *slash;

		if (*cmd != '/' || (off > 0 && buf[off - 1] != ' ' &&
		    buf[off - 1] != '=')) {
			buf[off++] = *cmd++;
			continue;
		}
		end = cmd + strcspn(cmd, " ");
		for (slash = end; slash > cmd && slash[-1] != '/'; slash--)
			;
		off += (size_t)snprintf(buf + off, len - off, ".../%.*s",
		    (int)(end - slash), slash);
		if (off >= len)
			off = len - 1;
		cmd = end;
	}
	buf[off] = '\0';
}

static int
is_remote(const char *url)
{
	return url && (strncmp(url, "https://", 8) == 0 ||
	    strncmp(url, "http://", 7) == 0);
}

/* Append { version, cell, command } to runs; for upstream, with the
 * line's paths cut to their last names. */
static int
add_run_line(json_t *runs, const char *version, const char *cell,
    const struct buf *line, int upstream, struct err *e)
{
	/* ".../NAME" is at most 3 bytes longer per path. */
	size_t len = 2 * line->len + 16;
	char *cut;

	if (!upstream) {
		json_array_append_new(runs, json_pack("{s:s,s:s,s:s}",
		    "version", version, "cell", cell, "command", line->data));
		return 0;
	}
	if ((cut = malloc(len)) == NULL)
		return err_set(e, "out of memory");
	strip_paths(line->data, cut, len);
	json_array_append_new(runs, json_pack("{s:s,s:s,s:s}", "version",
	    version, "cell", cell, "command", cut));
	free(cut);
	return 0;
}

/*
 * The command line of every cell of a release as a run executed it,
 * appended to runs as { version, cell, command }: the template expanded
 * with the release's unpacked folder, the weights' path and the cell.
 * For the output canary's verdict (output), the canary's command line,
 * as cell "canary".
 */
static int
release_commands(const struct conf *conf, const struct conf_engine *eng,
    const struct store_release *rel, const struct release_figs *f,
    const char *weights, int upstream, int output, json_t *runs,
    struct err *e)
{
	size_t nk = eng->contents.n ? eng->contents.n : 1;
	size_t ncells = output ? 1 : eng->nprompts + eng->ngen * nk;
	char *dir;
	int rc = 0;

	if (acquire_release_dir(conf, eng, rel->version, &dir, e) < 0)
		return -1;
	for (size_t i = 0; i < ncells && rc == 0; i++) {
		struct tmpl_vals v = TMPL_VALS_INIT;
		struct buf line = BUF_INIT(TMPL_MAX_LEN + 4096);
		char cell[96], *content = NULL;

		v.bin = dir;
		v.version = rel->version;
		v.weights = weights;
		v.threads = eng->threads;
		/* A cell that has no runs: no command that ran. */
		if (!output && f != NULL && !(i < eng->nprompts ?
		    i < f->npp && f->pp[i].ok : i - eng->nprompts < f->ntg &&
		    f->tg[i - eng->nprompts].ok))
			continue;
		/* As bench_cells() makes them: the other length is 0. */
		v.prompt = 0;
		v.gen = 0;
		if (output) {
			snprintf(cell, sizeof(cell), "canary");
		} else if (i < eng->nprompts) {
			v.prompt = eng->prompts[i];
			snprintf(cell, sizeof(cell), "pp%d", v.prompt);
		} else {
			size_t g = (i - eng->nprompts) / nk;
			size_t k = (i - eng->nprompts) % nk;

			v.gen = eng->gen[g];
			if (eng->contents.n) {
				content = bench_content_path(conf,
				    eng->contents.v[k]);
				snprintf(cell, sizeof(cell), "tg%d/%s", v.gen,
				    eng->contents.v[k]);
			} else
				snprintf(cell, sizeof(cell), "tg%d", v.gen);
			v.content = content ? content : "";
		}
		rc = output ? canary_command_line(eng, dir, rel->version,
		    weights, &line, e) : bench_command_line(eng, &v, &line, e);
		if (rc == 0)
			rc = add_run_line(runs, rel->version, cell, &line,
			    upstream, e);
		free(content);
		buf_release(&line);
	}
	free(dir);
	return rc;
}

static json_t *
reproduce_json(const struct conf *conf, const struct conf_engine *eng,
    const struct range *r, const struct report_summaries *rs,
    const char *spec, const struct report_opts *ro, const char *wsha,
    json_t *verdict, struct err *e)
{
	json_t *o = json_object(), *archives = json_array();
	json_t *commands = json_array(), *runs = json_array();
	char *weights = acquire_weights_path(conf, eng->weights, wsha);
	const char *first_bad = json_string_value(json_object_get(verdict,
	    "first_bad"));
	const char *last_good = json_string_value(json_object_get(verdict,
	    "last_good"));
	char line[4096], opts[128], config[4200] = "";

	for (size_t i = r->lo; i <= r->hi; i++) {
		const struct store_release *rel = &r->list.v[i];
		struct release_figs f;
		json_t *a;
		int rc;

		if (rel->archive_sha256 == NULL)
			continue;
		if (first_bad && last_good && strcmp(rel->version,
		    first_bad) != 0 && strcmp(rel->version, last_good) != 0 &&
		    i != r->lo && i != r->hi)
			continue;
		a = json_object();
		json_object_set_new(a, "version", json_string(rel->version));
		json_object_set_new(a, "url", rel->url && (!ro->upstream ||
		    is_remote(rel->url)) ? json_string(rel->url) :
		    json_null());
		json_object_set_new(a, "sha256",
		    json_string(rel->archive_sha256));
		json_array_append_new(archives, a);
		if (summary_figs(rs, i - r->lo, eng, &f) < 0) {
			err_set(e, "out of memory");
			f.pp = NULL;
		}
		rc = f.pp == NULL ? -1 : release_commands(conf, eng, rel, &f,
		    weights ? weights : "", ro->upstream,
		    bisect_request_canary(&ro->req), runs, e);
		if (f.pp != NULL)
			summary_figs_release(&f);
		if (rc < 0) {
			free(weights);
			json_decref(o);
			json_decref(archives);
			json_decref(commands);
			json_decref(runs);
			return NULL;
		}
	}
	free(weights);
	options_text(ro, opts, sizeof(opts));
	if (!ro->upstream)
		snprintf(config, sizeof(config), " -c %s", conf->path);
	snprintf(line, sizeof(line), "bisectctl%s bisect --now%s %s %s",
	    config, opts, eng->name, spec);
	json_array_append_new(commands, json_string(line));
	snprintf(line, sizeof(line), "bisectctl%s report%s %s %s", config,
	    opts, eng->name, spec);
	json_array_append_new(commands, json_string(line));
	/* A commit's tree is built from the repository: check it out, run
	 * the build lines. */
	for (size_t i = 0; ro->req.commits && i < eng->build.n; i++)
		json_array_append_new(commands, json_string(eng->build.v[i]));
	json_object_set_new(o, "options", json_string(opts[0] ? opts + 1 :
	    ""));
	json_object_set_new(o, "archives", archives);
	json_object_set_new(o, "commands", commands);
	json_object_set_new(o, "runs", runs);
	return o;
}

/* A member of the engine's info, copied into to when it is there. */
static void
copy_info(json_t *to, const char *as, const json_t *info, const char *key)
{
	json_t *v = json_object_get(info, key);

	if (v && !json_is_null(v))
		json_object_set(to, as, v);
}

/*
 * What a maintainer upstream asks for: bisectd's version, the engine's
 * own build of each end of the change, the model, threads, runs, the
 * CPU and its flags.
 */
static json_t *
about_json(const struct conf_engine *eng, struct store *s,
    const struct range *r, const struct store_machine *m, json_t *verdict,
    struct err *e)
{
	const char *ends[2] = {
		json_string_value(json_object_get(verdict, "last_good")),
		json_string_value(json_object_get(verdict, "first_bad")),
	};
	json_t *o = json_object(), *builds = json_array(), *model = NULL;
	json_t *threads = NULL;
	char flags[4096];
	struct stat st;

	if (ends[0] == NULL || ends[1] == NULL) {
		ends[0] = r->list.v[r->lo].version;
		ends[1] = r->list.v[r->hi].version;
	}
	json_object_set_new(o, "bisectd", json_string(BISECTD_VERSION));
	for (size_t i = r->lo; i <= r->hi; i++) {
		const struct store_release *rel = &r->list.v[i];
		json_t *info, *b;
		char *text;

		if (strcmp(rel->version, ends[0]) != 0 &&
		    strcmp(rel->version, ends[1]) != 0)
			continue;
		if (store_release_info(s, rel->id, &text, e) < 0) {
			json_decref(o);
			json_decref(builds);
			json_decref(model);
			return NULL;
		}
		info = json_loads(text ? text : "", 0, NULL);
		free(text);
		b = json_pack("{s:s}", "version", rel->version);
		copy_info(b, "build_commit", info, "build_commit");
		copy_info(b, "build_number", info, "build_number");
		copy_info(b, "backend", info, "backend");
		json_array_append_new(builds, b);
		if (model == NULL && json_object_get(info, "model_type")) {
			model = json_object();
			copy_info(model, "type", info, "model_type");
			copy_info(model, "size_bytes", info, "model_size");
			copy_info(model, "params", info, "model_n_params");
		}
		if (threads == NULL && json_is_integer(json_object_get(info,
		    "n_threads")))
			threads = json_incref(json_object_get(info,
			    "n_threads"));
		json_decref(info);
	}
	json_object_set_new(o, "engine_builds", builds);
	if (model == NULL)
		model = json_object();
	json_object_set_new(model, "weights", json_string(eng->weights->name));
	if (eng->weights->path && stat(eng->weights->path, &st) == 0)
		json_object_set_new(model, "file_bytes",
		    json_integer((json_int_t)st.st_size));
	json_object_set_new(o, "model", model);
	json_object_set_new(o, "threads", threads ? threads :
	    eng->threads > 0 ? json_integer(eng->threads) : json_null());
	json_object_set_new(o, "reps", json_integer(eng->reps));
	json_object_set_new(o, "max_reps", json_integer(eng->max_reps));
	json_object_set_new(o, "warmup", json_integer(eng->warmup));
	json_object_set_new(o, "cpu_model", json_string(m->cpu_model ?
	    m->cpu_model : "unknown"));
	json_object_set_new(o, "cpu_flags", hygiene_cpu_flags(NULL, flags,
	    sizeof(flags)) == 0 ? json_string(flags) : json_null());
	return o;
}

/* The drill-down's verdict as the store holds it, when the engine
 * drills down and the release verdict calls for it. */
static void
drill_down(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const struct report_opts *o, json_t *verdict)
{
	struct report_opts co = *o;
	struct err ce = ERR_INIT;
	char spec[2 * RANGE_END_MAX + 4];
	json_t *crep = NULL;
	int code;

	if (!commits_drill_wanted(eng, verdict, spec, sizeof(spec)))
		return;
	co.req.commits = 1;
	co.sink = NULL;
	if (report_build(conf, eng, s, spec, &co, &crep, &code, &ce) < 0) {
		commits_drill_attach(verdict, spec, NULL, ce.msg);
		return;
	}
	commits_drill_attach(verdict, spec, json_incref(json_object_get(crep,
	    "verdict")), NULL);
	json_decref(crep);
}

/*
 * The times the range's newest bisect lost its node (it failed or
 * drained) and went on under a new anchor: [{"from", "to", "why"}], the
 * nodes and the failure's detail; an empty array when it never did.
 * The runs before each are not compared with those after, so the ends
 * were measured again.
 */
static json_t *
reanchored_json(struct store *s, const char *engine, const char *good,
    const char *bad, struct err *e)
{
	struct store_slurm_jobs l;
	const char *key = NULL, *node = NULL, *why = NULL;
	json_t *a;

	if (store_slurm_range_jobs(s, engine, good, bad, &l, e) < 0)
		return NULL;
	a = json_array();
	for (size_t i = 0; i < l.n; i++) {
		const struct store_slurm_job *j = &l.v[i];

		if (j->failure && strcmp(j->failure, "slurm-node-fail") == 0)
			why = j->detail ? j->detail : j->failure;
		if (strcmp(j->state, "ingested") != 0 || j->hw_key == NULL)
			continue;
		if (key && strcmp(key, j->hw_key) != 0)
			json_array_append_new(a, json_pack("{s:s?,s:s?,s:s?}",
			    "from", node, "to", j->node, "why", why));
		key = j->hw_key;
		node = j->node;
		why = NULL;
	}
	store_slurm_jobs_release(&l);
	return a;
}

/*
 * What else changed, every metric of the matrix: between the range's
 * ends, then across each change point's boundary pair, into head's
 * changes.  Returns 0, or -1 when memory runs out.
 */
static int
else_changed(const struct conf *conf, const struct conf_engine *eng,
    const struct report_opts *o, const struct range *r,
    const struct judgement *j, const struct report_summaries *rs,
    const struct store_serve_rows *serve, double threshold,
    const char *metric, const char *spec, struct report *head)
{
	char ctl[4200];
	struct changes_ctx c = { eng, threshold, metric, ctl, spec };

	head->has_changes = 1;
	snprintf(ctl, sizeof(ctl), o->upstream ? "bisectctl" :
	    "bisectctl -c %s", conf->path);
	for (size_t k = 0; k <= j->v.nchanges; k++) {
		size_t ia = 0, ib = r->hi - r->lo;
		struct release_figs fa, fb;
		int rc;

		if (k > 0) {
			ia = j->v.changes[k - 1].last_good;
			ib = j->v.changes[k - 1].first_bad;
			/* The ends again: said once. */
			if (ia == 0 && ib == r->hi - r->lo)
				continue;
		}
		/* A serve engine's figures are its load's, not cells. */
		if (serve) {
			struct metric_change m[CHANGES_MAX];
			size_t nm = changes_serve(eng, threshold, &serve[ia],
			    &serve[ib], m, CHANGES_MAX);

			if (changes_append(&c, m, nm, r->list.v[r->lo +
			    ia].version, r->list.v[r->lo + ib].version,
			    head) < 0)
				return -1;
			continue;
		}
		if (summary_figs(rs, ia, eng, &fa) < 0)
			return -1;
		if (summary_figs(rs, ib, eng, &fb) < 0) {
			summary_figs_release(&fa);
			return -1;
		}
		rc = changes_pair(&c, &fa, r->list.v[r->lo + ia].version, &fb,
		    r->list.v[r->lo + ib].version, head);
		summary_figs_release(&fa);
		summary_figs_release(&fb);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int
report_build(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct report_opts *o,
    json_t **out, int *exit_code, struct err *e)
{
	struct store_machine m;
	struct bisect_params p;
	struct range r;
	struct judgement j;
	struct canary_judgement oj;
	struct report_summaries rs;
	struct report_cells qc;
	struct canary_prev prev = { NULL, NULL };
	struct store_cell_query pq[BISECT_MAX_CELLS];
	struct report head;
	json_t *rep = NULL, *rels, *verdict, *w, *serve = NULL;
	struct store_serve_rows *srows = NULL;
	struct machine here;
	char *wsha = NULL, hw[65], metric[32], key[65];
	char config[SHA256_HEX_LEN + 1];
	int64_t engine_id, *ids = NULL;
	size_t n = 0;
	int rc, ret = -1;

	*out = NULL;
	memset(&m, 0, sizeof(m));
	memset(&j, 0, sizeof(j));
	memset(&oj, 0, sizeof(oj));
	memset(&rs, 0, sizeof(rs));
	memset(&qc, 0, sizeof(qc));
	memset(&head, 0, sizeof(head));
	if (bisect_request_canary(&o->req) && eng->canary == NULL)
		return err_set(e, "engine %s has no canary (see [engine] "
		    "canary in the configuration)", eng->name);
	if (store_engine_find(s, eng->name, &engine_id, e) != 0)
		return err_set(e, "nothing is stored for %s yet: run "
		    "'bisectctl bisect %s %s' first", eng->name, eng->name,
		    spec);
	if ((o->req.commits ? commits_range(conf, eng, s, engine_id, spec, 0, &r,
	    e) : range_resolve(s, engine_id, spec, &r, e)) < 0)
		return -1;
	n = r.hi - r.lo + 1;
	if (range_params(eng, &o->req, &p, e) < 0)
		goto fail;
	/* This machine's identity, not recorded: a report only reads, so
	 * it can be built from a read-only connection. */
	if (hygiene_machine(NULL, &here, e) < 0)
		goto fail;
	memcpy(hw, here.hw_key, sizeof(hw));
	/* Measured on Slurm: the runs compared are the bisect's node's. */
	if (eng->runner && eng->runner->kind == RUNNER_SLURM &&
	    store_slurm_range_key(s, eng->name, r.list.v[r.lo].version,
	    r.list.v[r.hi].version, hw, e) < 0)
		goto fail;
	if (store_machine_find(s, hw, &m, e) < 0)
		goto fail;
	if (store_weights_latest(s, eng->weights->name, &wsha, e) < 0)
		goto fail;
	head.engine = eng->name;
	head.commits = o->req.commits;
	head.from = r.list.v[r.lo].version;
	head.to = r.list.v[r.hi].version;
	head.metric = conf_metric_name((int)o->req.metric.kind >= 0 ?
	    &o->req.metric : &eng->metric, metric, sizeof(metric));
	head.threshold = p.threshold;
	/* A line through two points always fits: only a third length shows
	 * a cost per token that grows with the prompt. */
	if (eng->nfit < 3 && eng->mode != MODE_SERVE)
		head.shape_unknown = "two fit lengths cannot show whether the "
		    "cost of a token grows with the prompt: fit over three or "
		    "more (fit = 128,512,2048)";
	machine_of(&m, o->upstream, &head.machine);
	if (eng->runner && eng->runner->kind == RUNNER_SLURM &&
	    (head.reanchored = reanchored_json(s, eng->name,
	    r.list.v[r.lo].version, r.list.v[r.hi].version, e)) == NULL)
		goto fail;
	head.weights = eng->weights->name;
	head.weights_sha256 = wsha;
	if ((rep = report_head_json(&head)) == NULL) {
		err_set(e, "out of memory");
		goto fail;
	}
	rels = json_object_get(rep, "releases");
	if (report_cells_init(eng, wsha ? wsha : "", hw, &qc, e) < 0 ||
	    range_cell_queries(&p, eng, wsha ? wsha : "", hw, pq, e) < 0 ||
	    summary_config(eng, &p, &qc, pq, config, e) < 0)
		goto fail;
	if ((ids = calloc(n, sizeof(*ids))) == NULL) {
		err_set(e, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = r.list.v[r.lo + i].id;
	{
		struct store_summary_key k = { wsha ? wsha : "", hw,
		    o->fresh ? NULL : config };

		/* A kept summary that does not read back: computed anew. */
		if ((rc = summary_load(s, &k, ids, n, o->plot, &qc, eng, &p,
		    pq, &rs, e)) > 0) {
			k.config = NULL;
			rc = summary_load(s, &k, ids, n, o->plot, &qc, eng,
			    &p, pq, &rs, e);
		}
		if (rc != 0)
			goto fail;
	}
	if (judge_range_data(&r, &p, eng, rs.runs_fail, &rs.d, &j, e) < 0)
		goto fail;
	if (eng->canary && (canary_definition_key(s, eng, wsha, hw, key,
	    e) < 0 || canary_judge(s, &r, key, &oj, e) < 0))
		goto fail;
	/* Everything that can fail but memory comes before the first
	 * release is handed to a sink: a streamed report does not stop
	 * halfway for a store error. */
	if (bisect_request_canary(&o->req)) {
		verdict = canary_judgement_json(&oj, &r);
		*exit_code = oj.exit_code;
	} else {
		verdict = judgement_json(&j, &r);
		if (o->req.commits && commits_annotate(eng, s, engine_id, verdict,
		    e) < 0) {
			json_decref(verdict);
			goto fail;
		}
		if (!o->req.commits)
			drill_down(conf, eng, s, o, verdict);
		*exit_code = j.exit_code;
	}
	json_object_set_new(rep, "verdict", verdict);
	if ((w = reproduce_json(conf, eng, &r, &rs, spec, o, wsha, verdict,
	    e)) == NULL)
		goto fail;
	json_object_set_new(rep, "reproduce", w);
	if (o->upstream) {
		json_t *about = about_json(eng, s, &r, &m, verdict, e);

		if (about == NULL)
			goto fail;
		json_object_set_new(rep, "about", about);
	}
	if (eng->mode == MODE_SERVE && serve_rows_load(s, eng,
	    &r.list.v[r.lo], n, wsha ? wsha : "", hw, &srows, e) < 0)
		goto fail;
	if (!bisect_request_canary(&o->req)) {
		if (else_changed(conf, eng, o, &r, &j, &rs, srows, p.threshold,
		    metric, spec, &head) < 0) {
			err_set(e, "out of memory");
			goto fail;
		}
		json_object_set_new(rep, "what_else_changed",
		    report_changes_json(&head));
	}
	if (eng->mode == MODE_SERVE) {
		json_object_set_new(rep, "serve_profile",
		    serve_profile_report(eng));
		if ((serve = serve_releases_json(srows, n)) == NULL) {
			err_set(e, "out of memory");
			goto fail;
		}
	}
	if (o->sink)
		o->sink->head(rep, o->sink->arg);
	for (size_t i = r.lo; i <= r.hi; i++) {
		const char *sha = r.list.v[i].archive_sha256;
		struct release_figs fg;
		struct report_release tr;
		struct release_text t;
		json_t *rj;

		assert(i - r.lo < n);
		/* Checked when loaded: only memory can run out here. */
		if (summary_figs(&rs, i - r.lo, eng, &fg) < 0) {
			err_set(e, "out of memory");
			goto fail;
		}
		if (release_of(&fg, eng, &r.list.v[i], o->plot, &tr, &t) < 0) {
			report_release_clear(&tr);
			summary_figs_release(&fg);
			err_set(e, "out of memory");
			goto fail;
		}
		/* Its samples are the first release's with its archive. */
		for (size_t k = 0; sha && k < i; k++)
			if (r.list.v[k].archive_sha256 &&
			    strcmp(r.list.v[k].archive_sha256, sha) == 0) {
				tr.same_archive_as = r.list.v[k].version;
				break;
			}
		release_metric(&j, &fg, i - r.lo, p.metric.kind ==
		    BISECT_METRIC_RUN, &tr);
		if (j.failed[i - r.lo] && i != r.lo && i != r.hi)
			tr.status = "skipped";
		if (o->req.commits)
			tr.commit = commits_describe(eng, s, engine_id,
			    r.list.v[i].version, e);
		if (eng->canary && i - r.lo < oj.n)
			tr.canary = canary_json(&oj, &r, i - r.lo, &prev);
		rj = report_release_json(&tr);
		report_release_clear(&tr);
		summary_figs_release(&fg);
		if (rj == NULL) {
			err_set(e, "out of memory");
			goto fail;
		}
		if (serve)
			serve_release_attach(rj, json_array_get(serve,
			    i - r.lo));
		if (o->sink) {
			o->sink->release(rj, i - r.lo, o->sink->arg);
			json_decref(rj);
		} else
			json_array_append_new(rels, rj);
	}
	*out = rep;
	rep = NULL;
	ret = 0;
fail:
	serve_rows_free(srows, n);
	json_decref(serve);
	json_decref(rep);
	report_clear(&head);
	judgement_release(&j);
	canary_judgement_release(&oj);
	summary_release(&rs, n);
	free(ids);
	free(qc.tg);
	free(wsha);
	store_machine_release(&m);
	range_release(&r);
	return ret;
}
