/*
 * ablate.c: one ablation with a positive control (see ablate.h): the
 * variants of the engine, their interleaved runs, the samples read back
 * per variant, the verdict, and the report.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ablate.h"
#include "bisectd/acquire/acquire.h"
#include "bisectd/acquire/bench_release.h"
#include "bisectd/analysis/ablate.h"
#include "bisectd/measure/bench.h"
#include "common/err.h"
#include "config/conf.h"
#include "store/store.h"

/* One variant: the baseline (sw NULL) or a switch, its engine and its
 * run values per fit length. */
struct variant {
	const struct conf_ablation *sw;
	struct conf_engine eng;		/* a copy; env and command owned
					 * for a switch */
	double *values[CONF_MAX_LENGTHS];	/* run values; malloced */
	struct fit_cell cells[CONF_MAX_LENGTHS];
	/* per fit length, the definition its runs are measured under:
	 * runs stored under another (the switch's env or args changed
	 * since) are neither reused nor judged */
	char def_key[CONF_MAX_LENGTHS][65];
	/* Its failed runs: how many, and the newest one's reason ("" when
	 * none failed), for the report to say why a switch went
	 * unmeasured. */
	int64_t nfailed;
	char failure[600];
};

/*
 * The engine as a switch runs it: its env after the engine's (a later
 * entry wins), its args after the command.  Only the switch's own runs
 * get them.
 */
static int
variant_engine(const struct conf_engine *eng, const struct conf_ablation *a,
    struct conf_engine *out, struct err *e)
{
	size_t len = strlen(eng->command) + 1;
	char *cmd;

	*out = *eng;
	out->env = (struct strv)STRV_INIT;
	for (size_t i = 0; i < a->args.n; i++)
		len += strlen(a->args.v[i]) + 1;
	if ((cmd = malloc(len)) == NULL)
		return err_set(e, "out of memory");
	strcpy(cmd, eng->command);
	for (size_t i = 0; i < a->args.n; i++) {
		strcat(cmd, " ");
		strcat(cmd, a->args.v[i]);
	}
	out->command = cmd;
	for (size_t i = 0; i < eng->env.n; i++)
		if (strv_push(&out->env, eng->env.v[i]) < 0)
			return err_set(e, "out of memory");
	for (size_t i = 0; i < a->env.n; i++)
		if (strv_push(&out->env, a->env.v[i]) < 0)
			return err_set(e, "out of memory");
	return 0;
}

static void
variants_free(struct variant *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].sw) {
			free(v[i].eng.command);
			strv_clear(&v[i].eng.env);
		}
		for (size_t k = 0; k < CONF_MAX_LENGTHS; k++)
			free(v[i].values[k]);
	}
	free(v);
}

/*
 * The line of an engine's stderr that says why it stopped: the last one
 * that speaks of an error (an engine that refuses an option says so,
 * then prints its usage), else the last line.  Edits text.
 */
static const char *
why_line(char *text)
{
	static const char *const words[] = { "error", "invalid", "unknown",
	    "unrecognized", "failed", "not found", "abort" };
	const char *last = NULL, *telling = NULL;
	char *save = NULL;

	/* strtok_r: the daemon ablates in its workers' threads. */
	for (char *line = strtok_r(text, "\r\n", &save); line != NULL;
	    line = strtok_r(NULL, "\r\n", &save)) {
		last = line;
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strcasestr(line, words[i]) != NULL)
				telling = line;
	}
	return telling ? telling : last ? last : "";
}

/* The run values of variant v at each fit length, outlier runs out, as
 * the bisection reads a cell. */
static int
load_variant(struct store *s, int64_t ablation_id,
    const struct conf_engine *eng, struct variant *v, struct err *e)
{
	char *failure, *detail, *tail;

	if (store_ablation_failures(s, ablation_id, v->sw ? v->sw->name : "",
	    &v->nfailed, &failure, &detail, &tail, e) < 0)
		return -1;
	snprintf(v->failure, sizeof(v->failure), "%s%s%s%s%s", failure ?
	    failure : "", detail && *detail ? ": " : "", detail ? detail : "",
	    tail && *tail ? "; stderr: " : "", tail ? why_line(tail) : "");
	free(failure);
	free(detail);
	free(tail);
	for (size_t k = 0; k < eng->nfit; k++) {
		struct store_points pts;
		int64_t *run;
		size_t n = 0;

		if (store_ablation_points(s, ablation_id, v->sw ? v->sw->name :
		    "", eng->fit[k], v->def_key[k], &pts, e) < 0)
			return -1;
		v->values[k] = malloc((pts.n + 1) * sizeof(double));
		run = malloc((pts.n + 1) * sizeof(*run));
		if (v->values[k] == NULL || run == NULL) {
			free(run);
			store_points_release(&pts);
			return err_set(e, "out of memory");
		}
		for (size_t i = 0; i < pts.n; i++) {
			v->values[k][i] = (double)pts.v[i].time_ns;
			run[i] = pts.v[i].run_id;
		}
		if (pts.n > 0 && stats_run_values(v->values[k], run, pts.n,
		    RUN_MEAN, v->values[k], &n) < 0)
			n = 0;
		n = stats_drop_outliers(v->values[k], n);
		free(run);
		store_points_release(&pts);
		v->cells[k].tokens = eng->fit[k];
		v->cells[k].time_ns = v->values[k];
		v->cells[k].n = n;
	}
	return 0;
}

static json_t *
ms_ci(const struct estimate *x)
{
	if (!isfinite(x->lo) || !isfinite(x->hi))
		return json_null();
	return json_pack("[f,f]", x->lo / 1e6, x->hi / 1e6);
}

static json_t *
share_ci(const struct estimate *x)
{
	if (!isfinite(x->lo) || !isfinite(x->hi))
		return json_null();
	return json_pack("[f,f]", x->lo, x->hi);
}

static json_t *
number(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* One switch as the report shows it: env by its names alone. */
static json_t *
switch_json(const struct variant *v, const struct ablate_switch_out *o,
    size_t runs, int judged)
{
	const struct conf_ablation *a = v->sw;
	json_t *j = json_object(), *env = json_array(), *args = json_array();
	int measured = o->effect != EFFECT_UNMEASURED;

	for (size_t k = 0; k < a->env.n; k++)
		json_array_append_new(env, json_stringn(a->env.v[k],
		    strcspn(a->env.v[k], "=")));
	for (size_t k = 0; k < a->args.n; k++)
		json_array_append_new(args, json_string(a->args.v[k]));
	json_object_set_new(j, "name", json_string(a->name));
	json_object_set_new(j, "control", json_boolean(a->control));
	json_object_set_new(j, "env", env);
	json_object_set_new(j, "args", args);
	json_object_set_new(j, "effect", json_string(ablate_effect_name(
	    o->effect)));
	json_object_set_new(j, "rank", o->rank > 0 ? json_integer(o->rank) :
	    json_null());
	json_object_set_new(j, "runs", json_integer((json_int_t)runs));
	json_object_set_new(j, "failed_runs", json_integer(v->nfailed));
	if (v->failure[0])
		json_object_set_new(j, "failure", json_string(v->failure));
	if (!measured)
		return j;
	json_object_set_new(j, "runtime_removed_ms",
	    number(o->runtime_removed_ns.value / 1e6));
	json_object_set_new(j, "runtime_removed_ms_ci",
	    ms_ci(&o->runtime_removed_ns));
	json_object_set_new(j, "runtime_removed_share",
	    number(o->runtime_removed_rel.value));
	json_object_set_new(j, "runtime_removed_share_ci",
	    share_ci(&o->runtime_removed_rel));
	json_object_set_new(j, "per_token_removed_ms",
	    number(o->per_token_removed_ns.value / 1e6));
	json_object_set_new(j, "per_token_removed_ms_ci",
	    ms_ci(&o->per_token_removed_ns));
	json_object_set_new(j, "fixed_removed_ms", o->fixed_estimable ?
	    number(o->fixed_removed_ns.value / 1e6) : json_null());
	json_object_set_new(j, "fixed_removed_ms_ci", o->fixed_estimable ?
	    ms_ci(&o->fixed_removed_ns) : json_null());
	if (!o->fixed_estimable)
		json_object_set_new(j, "fixed_not_estimable",
		    json_string(o->fixed_why ? o->fixed_why : "the line does "
		    "not fit"));
	json_object_set_new(j, "detectable_share", judged &&
	    o->effect == EFFECT_NONE ? number(o->detectable_rel) :
	    json_null());
	return j;
}

/* The one line that says what the verdict means. */
static void
reason(const struct ablate_result *r, const struct variant *cv, char *buf,
    size_t len)
{
	const struct ablate_switch_out *c = &r->sw[r->control];
	size_t ranked = 0, none = 0;

	if (r->status == ABLATE_NO_CONTROL) {
		snprintf(buf, len, "the control '%s' could not be measured "
		    "(%lld of its runs failed; the last: %s): nothing is judged",
		    c->name, (long long)cv->nfailed, cv->failure[0] ?
		    cv->failure : "no reason stored");
		return;
	}
	if (r->status == ABLATE_CONTROL_ADDS) {
		snprintf(buf, len, "the control '%s' added %.1f%% [%.1f%%, "
		    "%.1f%%] to the runtime at %d tokens: a control must remove "
		    "time; choose a switch that turns a heavy part off; nothing "
		    "is ranked", c->name, -100 * c->runtime_removed_rel.value,
		    -100 * c->runtime_removed_rel.hi,
		    -100 * c->runtime_removed_rel.lo, c->tokens);
		return;
	}
	if (r->status == ABLATE_INERT) {
		snprintf(buf, len, "the control '%s' removed %.1f%% [%.1f%%, "
		    "%.1f%%] of the runtime at %d tokens, %s: the switches "
		    "look inert in this binary (the switch did nothing; this "
		    "says nothing about the components); nothing is ranked",
		    c->name, 100 * c->runtime_removed_rel.value,
		    100 * c->runtime_removed_rel.lo,
		    100 * c->runtime_removed_rel.hi, c->tokens,
		    !r->control_beyond_noise ? "not beyond the noise" :
		    "less than control-min");
		if (r->control_beyond_noise && strlen(buf) + 16 < len)
			snprintf(buf + strlen(buf), len - strlen(buf),
			    " (control-min %.3g%%)", 100 * r->control_min);
		return;
	}
	for (size_t i = 0; i < r->nswitches; i++) {
		ranked += r->sw[i].rank > 0;
		none += r->sw[i].effect == EFFECT_NONE;
	}
	snprintf(buf, len, "the control '%s' removed %.1f%% [%.1f%%, %.1f%%] "
	    "of the runtime at %d tokens (control-min %.3g%%): the switches "
	    "work in this binary; %zu ranked, %zu with no measurable effect",
	    c->name, 100 * c->runtime_removed_rel.value,
	    100 * c->runtime_removed_rel.lo, 100 * c->runtime_removed_rel.hi,
	    c->tokens, 100 * r->control_min, ranked, none);
}

static json_t *
report_json(const struct conf_engine *eng, const char *version,
    const struct acquired *got, const struct pinned_weights *w,
    int64_t ablation_id, const struct variant *v, size_t nv,
    const struct ablate_result *r)
{
	json_t *o = json_object(), *fit = json_array(), *base = json_object();
	json_t *sw = json_array();
	const struct conf_ablation *control = v[1 + r->control].sw;
	char why[1024];
	struct fit f;

	for (size_t k = 0; k < eng->nfit; k++) {
		struct cell_stats st;

		json_array_append_new(fit, json_integer(eng->fit[k]));
		if (stats_cell(v[0].cells[k].time_ns, v[0].cells[k].n,
		    &st) == 0) {
			char key[16];

			snprintf(key, sizeof(key), "%d", eng->fit[k]);
			json_object_set_new(base, key, json_pack("{s:f,s:f,s:i}",
			    "ms", st.mean / 1e6, "sd_ms", st.sd / 1e6, "runs",
			    (int)st.n));
		}
	}
	if (fit_line(v[0].cells, eng->nfit, &f) == 0) {
		json_object_set_new(base, "per_token_ms",
		    number(f.per_token_ns.value / 1e6));
		json_object_set_new(base, "per_token_ms_ci",
		    ms_ci(&f.per_token_ns));
		json_object_set_new(base, "fixed_ms", f.fixed_estimable ?
		    number(f.fixed_ns.value / 1e6) : json_null());
		json_object_set_new(base, "fixed_ms_ci", f.fixed_estimable ?
		    ms_ci(&f.fixed_ns) : json_null());
	}
	reason(r, &v[1 + r->control], why, sizeof(why));
	json_object_set_new(o, "engine", json_string(eng->name));
	json_object_set_new(o, "version", json_string(version));
	json_object_set_new(o, "sha256", json_string(got->sha256));
	json_object_set_new(o, "weights", json_pack("{s:s,s:s}", "name",
	    eng->weights->name, "sha256", w->sha256));
	json_object_set_new(o, "ablation", json_integer(ablation_id));
	json_object_set_new(o, "fit", fit);
	json_object_set_new(o, "tokens", json_integer(r->sw[0].tokens));
	json_object_set_new(o, "status", json_string(ablate_status_name(
	    r->status)));
	json_object_set_new(o, "reason", json_string(why));
	json_object_set_new(o, "control", json_string(control->name));
	json_object_set_new(o, "control_min", json_real(r->control_min));
	json_object_set_new(o, "control_beyond_noise",
	    json_boolean(r->control_beyond_noise));
	json_object_set_new(o, "control_enough",
	    json_boolean(r->control_enough));
	json_object_set_new(o, "baseline", base);
	for (size_t k = 0; k < r->nswitches; k++) {
		size_t i = r->order[k];
		const struct fit_cell *longest = fit_cell_find(v[1 + i].cells,
		    eng->nfit, r->sw[i].tokens);

		json_array_append_new(sw, switch_json(&v[1 + i], &r->sw[i],
		    longest ? longest->n : 0, r->status == ABLATE_RANKED));
	}
	json_object_set_new(o, "switches", sw);
	(void)nv;
	return o;
}

int
ablate_exit_code(const struct json_t *report)
{
	const char *st = json_string_value(json_object_get(report, "status"));

	if (st && strcmp(st, "ranked") == 0)
		return 0;
	if (st && strcmp(st, "inert") == 0)
		return 4;
	/* The configuration's control is the wrong switch. */
	if (st && strcmp(st, "control-adds") == 0)
		return 2;
	return 1;
}

/* How many analysed runs variant v has at the kth fit length in the
 * ablation, under its definition there. */
static int
runs_stored(struct store *s, int64_t ablation_id, const struct variant *v,
    int tokens, size_t k, size_t *n, struct err *e)
{
	struct store_points pts;

	*n = 0;
	if (store_ablation_points(s, ablation_id, v->sw ? v->sw->name : "",
	    tokens, v->def_key[k], &pts, e) < 0)
		return -1;
	for (size_t i = 0; i < pts.n; i++)
		*n += i == 0 || pts.v[i].run_id != pts.v[i - 1].run_id;
	store_points_release(&pts);
	return 0;
}

/*
 * Measure every variant interleaved, A B C ... on each fit length, as
 * many runs as each still lacks: an ablation taken up again after a stop
 * or a kill keeps the runs it stored (*reused counts them) and never
 * measures them twice.
 */
static int
measure(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *version, const struct acquired *got,
    const struct pinned_weights *w, int64_t ablation_id,
    struct variant *v, size_t nv, const struct ablate_opts *o,
    size_t *reused, struct err *e)
{
	struct bench_target t[BENCH_MAX_TARGETS];
	struct bench_cell *cells = NULL;
	struct bench_tally tally;
	struct bench_ctx ctx;
	char hw_key[65];
	int64_t machine_id;
	size_t ncells = 0;
	int *reps = NULL, rc = -1;

	*reused = 0;
	if (nv > BENCH_MAX_TARGETS)
		return err_set(e, "engine %s: %zu switches, at most %d",
		    eng->name, nv - 1, BENCH_MAX_TARGETS - 1);
	if (bench_machine(s, &machine_id, hw_key, e) < 0 ||
	    bench_cells(conf, eng, eng->fit, eng->nfit, NULL, 0, 1, &cells,
	    &ncells, e) < 0)
		return -1;
	if ((reps = malloc(nv * ncells * sizeof(*reps))) == NULL) {
		err_set(e, "out of memory");
		goto done;
	}
	/* The cells are the fit lengths, in order. */
	for (size_t i = 0; i < nv; i++)
		for (size_t c = 0; c < ncells; c++) {
			struct bench_definition d;
			size_t have;

			if (bench_definition(&v[i].eng, cells[c].kind,
			    cells[c].prompt, cells[c].gen, cells[c].content,
			    w->sha256, hw_key, &d, e) < 0)
				goto done;
			memcpy(v[i].def_key[c], d.key, sizeof(d.key));
			bench_definition_release(&d);
			if (runs_stored(s, ablation_id, &v[i], cells[c].prompt,
			    c, &have, e) < 0)
				goto done;
			*reused += have;
			reps[i * ncells + c] = have >= (size_t)eng->reps ? 0 :
			    eng->reps - (int)have;
		}
	memset(t, 0, sizeof(t));
	for (size_t i = 0; i < nv; i++) {
		t[i].release_id = got->release_id;
		t[i].version = version;
		t[i].dir = got->dir;
		t[i].eng = &v[i].eng;
		t[i].ablation_id = ablation_id;
		t[i].variant = v[i].sw ? v[i].sw->name : "";
	}
	memset(&tally, 0, sizeof(tally));
	bench_ctx_pinned(&ctx, conf, eng, s, w, machine_id, hw_key);
	ctx.progress = o->progress;
	ctx.progress_arg = o->arg;
	ctx.stop = o->stop;
	rc = bench_run(&ctx, t, nv, cells, ncells, reps, eng->warmup, 0,
	    &tally, e);
done:
	free(reps);
	bench_cells_free(cells, ncells);
	return rc;
}

int
ablate_release(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *version, const struct ablate_opts *o,
    struct json_t **report, struct err *e)
{
	struct ablate_switch_in in_sw[ABLATE_MAX_SWITCHES];
	struct ablate_input in;
	struct ablate_result r;
	struct acquire a;
	struct acquired got;
	struct pinned_weights w;
	struct variant *v = NULL;
	int64_t engine_id, ablation_id = 0;
	size_t nv = 1, reused = 0;
	char *text;
	int rc = -1;

	*report = NULL;
	memset(&got, 0, sizeof(got));
	memset(&w, 0, sizeof(w));
	if ((v = calloc(conf->nablations + 1, sizeof(*v))) == NULL)
		return err_set(e, "out of memory");
	v[0].eng = *eng;
	for (size_t i = 0; i < conf->nablations; i++) {
		const struct conf_ablation *sw = &conf->ablations[i];

		if (sw->engine != eng)
			continue;
		if (nv > ABLATE_MAX_SWITCHES) {
			err_set(e, "engine %s: more than %d switches",
			    eng->name, ABLATE_MAX_SWITCHES);
			goto done;
		}
		v[nv].sw = sw;
		if (variant_engine(eng, sw, &v[nv++].eng, e) < 0)
			goto done;
	}
	if (nv == 1) {
		err_set(e, "engine %s has no [ablation] switches (see "
		    "'bisectctl check-config')", eng->name);
		goto done;
	}
	if (acquire_init(&a, conf, eng, s, e) < 0)
		goto done;
	a.stop = o->stop;
	if (acquire_release(&a, version, &got, e) < 0 ||
	    acquire_weights(&a, &w, e) < 0 ||
	    store_engine_find(s, eng->name, &engine_id, e) != 0 ||
	    store_ablation_unfinished(s, got.release_id, &ablation_id,
	    e) < 0 || (ablation_id == 0 && store_ablation_open(s, o->job_id,
	    engine_id, got.release_id, &ablation_id, e) < 0))
		goto done;
	if (measure(conf, eng, s, version, &got, &w, ablation_id, v, nv, o,
	    &reused, e) < 0) {
		/* Stopped, it stays open: the next ablation of the release
		 * takes it up with the runs it has. */
		if (o->stop && *o->stop)
			goto done;
		goto failed;
	}
	for (size_t i = 0; i < nv; i++)
		if (load_variant(s, ablation_id, eng, &v[i], e) < 0)
			goto failed;
	for (size_t i = 1; i < nv; i++) {
		in_sw[i - 1].name = v[i].sw->name;
		in_sw[i - 1].control = v[i].sw->control;
		in_sw[i - 1].cells = v[i].cells;
		in_sw[i - 1].ncells = eng->nfit;
	}
	in.baseline = v[0].cells;
	in.nbaseline = eng->nfit;
	in.switches = in_sw;
	in.nswitches = nv - 1;
	in.control_min = conf_ablation_control(conf, eng->name)->control_min;
	if (ablate_judge(&in, &r) < 0) {
		err_set(e, "%s %s: the baseline gave no runs to judge the "
		    "switches against (see 'bisectctl runs %s %s')", eng->name,
		    version, eng->name, version);
		goto failed;
	}
	*report = report_json(eng, version, &got, &w, ablation_id, v, nv, &r);
	json_object_set_new(*report, "reused_runs", json_integer(
	    (json_int_t)reused));
	text = json_dumps(*report, JSON_COMPACT | JSON_PRESERVE_ORDER);
	rc = store_ablation_finish(s, ablation_id, "done",
	    ablate_status_name(r.status), text, e);
	free(text);
	if (rc < 0) {
		json_decref(*report);
		*report = NULL;
		goto done;
	}
	rc = ablate_exit_code(*report);
	goto done;
failed:
	store_ablation_finish(s, ablation_id, "failed", NULL, e->msg, NULL);
done:
	variants_free(v, nv);
	pinned_weights_release(&w);
	acquired_release(&got);
	return rc;
}
