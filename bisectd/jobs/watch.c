/*
 * watch.c: the watch of an engine's source (new releases compared with
 * the last known good by an in-place bisect, a confirmed regression
 * alerted once) and the yardstick check (is the reference release still
 * the fastest?).  What they remember between runs lives in the store's
 * watch_state: "last-good:ENGINE", "last-seen:ENGINE" and
 * "yardstick-checked".
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bisectd/acquire/acquire.h"
#include "bisectd/notify/alert_sink.h"
#include "bisectd/acquire/bench_release.h"
#include "bisectd/analysis/bisect.h"
#include "bisectd/measure/hygiene.h"
#include "bisectd/report/changes.h"
#include "bisectd/report/build.h"
#include "bisectd/report/history.h"
#include "bisectd/report/matrix.h"
#include "bisectd/report/summary.h"
#include "config/conf.h"
#include "bisectd/search/perf.h"
#include "bisectd/search/canary.h"
#include "bisectd/search/range.h"
#include "bisectd/search/verdict.h"
#include "common/err.h"
#include "common/logto.h"
#include "store/store.h"
#include "watch.h"

/* Log through the caller's callback, if any. */
#define wlog(o, level, ...) log_to((o) ? (o)->log : NULL, \
	(o) ? (o)->arg : NULL, (level), __VA_ARGS__)

static void
note_line(void *arg, const char *line)
{
	const struct watch_opts *o = arg;

	wlog(o, ALERT_LOG_INFO, "%s", line);
}

static void
progress_line(void *arg, const struct bench_progress *p)
{
	const struct watch_opts *o = arg;

	if (o->progress)
		o->progress(o->arg, p);
}

struct refused_ctx {
	const struct watch_opts *o;
	const char *engine;
};

/* A release the source lists under a version no release may have. */
static void
on_refused(void *arg, const char *version, const char *why)
{
	const struct refused_ctx *r = arg;

	wlog(r->o, ALERT_LOG_WARNING, "watch %s: release '%s' refused: %s",
	    r->engine, version, why);
}

/* The index of version in l, or -1. */
static long
find_version(const struct store_release_list *l, const char *version)
{
	if (version == NULL)
		return -1;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].version, version) == 0)
			return (long)i;
	return -1;
}

static int
state_key(char *buf, size_t len, const char *what, const char *engine)
{
	int n = snprintf(buf, len, "%s:%s", what, engine);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The first bad releases a watch found, so that a regression seen on
 * several metrics (a prefill per-token step shows on every ppN) is
 * alerted once. */
struct found {
	char v[8][128];
	size_t n;
};

static int
found_has(const struct found *f, const char *version)
{
	for (size_t i = 0; f && version && i < f->n; i++)
		if (strcmp(f->v[i], version) == 0)
			return 1;
	return 0;
}

static void
found_add(struct found *f, const char *version)
{
	if (f && version && f->n < sizeof(f->v) / sizeof(f->v[0]))
		snprintf(f->v[f->n++], sizeof(f->v[0]), "%s", version);
}

/*
 * What the other cells of eng's matrix say of spec on req's metric, from
 * the store alone, for the alert of a regression on eng: where the same
 * range did not regress, with the power it had, and where it was not
 * judged yet.  Into buf; NULL when it cannot be said.
 */
static const char *
other_cells(const struct conf *c, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct bisect_request *req,
    char *buf, size_t len)
{
	struct report_matrix mx;
	struct report_opts o;
	struct err e = ERR_INIT;
	int code;
	const char *words = NULL;

	memset(&o, 0, sizeof(o));
	o.req = *req;
	if (report_matrix_build(c, eng->matrix, s, spec, &o, &mx, &code,
	    &e) == 0)
		words = report_matrix_others(&mx, eng->name, buf, len);
	report_matrix_clear(&mx);
	return words;
}

/*
 * The matrix's alert over spec, once every cell has decided it and one
 * moved: where it regressed and where not, with the power each had.
 * Each cell's own regression is alerted as it is found; this one comes
 * when the last cell is in.  1 recorded, 0 nothing to say or said
 * before, -1 on error.
 */
static int
matrix_alert(const struct conf *c, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct bisect_request *req,
    const char *metric, struct err *e)
{
	struct report_matrix mx;
	struct report_opts o;
	struct err be = ERR_INIT;
	char key[600], text[4096], report[1024];
	json_t *body;
	char *dump;
	int code, rc = 0;

	memset(&o, 0, sizeof(o));
	o.req = *req;
	if (report_matrix_build(c, eng->matrix, s, spec, &o, &mx, &code,
	    &be) < 0 || !report_matrix_verdict(&mx, text, sizeof(text))) {
		report_matrix_clear(&mx);
		return 0;
	}
	snprintf(key, sizeof(key), "matrix:%s:%s:%s", eng->matrix->name, spec,
	    metric);
	snprintf(report, sizeof(report), "bisectctl -c %s report %s %s",
	    c->path, eng->matrix->name, spec);
	if ((body = report_matrix_json(&mx)) == NULL) {
		report_matrix_clear(&mx);
		return err_set(e, "out of memory");
	}
	json_object_set_new(body, "kind", json_string("matrix"));
	json_object_set_new(body, "text", json_string(text));
	json_object_set_new(body, "metric", json_string(metric));
	json_object_set_new(body, "report", json_string(report));
	dump = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(body);
	report_matrix_clear(&mx);
	if (dump == NULL)
		return err_set(e, "out of memory");
	rc = store_alert_record(s, "matrix", eng->matrix->name, key, text,
	    dump, e);
	free(dump);
	return rc < 0 ? -1 : rc == 0;
}

/*
 * Bisect spec and, on a regression, record its alert.  *status gets the
 * verdict's status and *fresh whether the alert is new.
 */
static int
compare(const struct conf *c, const struct conf_engine *eng, struct store *s,
    const struct watch_opts *o, const char *spec, const struct conf_metric *m,
    struct found *found, enum bisect_status *status, int *fresh,
    struct err *e)
{
	struct perf_opts d;
	char metric[32];
	json_t *verdict = NULL;
	int rc;

	memset(&d, 0, sizeof(d));
	bisect_request_init(&d.req);
	if (m != NULL)
		d.req.metric = *m;
	d.job_id = o->job_id;
	d.note = note_line;
	d.progress = progress_line;
	d.arg = (void *)(uintptr_t)o;
	d.stop = o->stop;
	*fresh = 0;
	conf_metric_name(m ? m : &eng->metric, metric, sizeof(metric));
	wlog(o, ALERT_LOG_INFO, "watch %s: comparing %s on %s", eng->name,
	    spec, metric);
	if (perf_bisect(c, eng, s, spec, &d, &verdict, status, e) < 0)
		return err_prefix(e, "watch %s over %s", eng->name, spec);
	if (*status == BISECT_REGRESSION && found_has(found, json_string_value(
	    json_object_get(verdict, "first_bad")))) {
		/* One regression, one alert: another cell of it. */
		wlog(o, ALERT_LOG_INFO, "watch %s: %s regressed too at %s, the "
		    "regression found already", eng->name, metric,
		    json_string_value(json_object_get(verdict, "first_bad")));
		json_decref(verdict);
		return 0;
	}
	if (*status == BISECT_REGRESSION)
		found_add(found, json_string_value(json_object_get(verdict,
		    "first_bad")));
	if (*status == BISECT_REGRESSION || *status == BISECT_GRADUAL) {
		struct alert_where w;
		struct machine here;
		struct err me = ERR_INIT;
		char report[1024], machine[600], cells[2048];

		/* The command a reader pastes to see the whole report, and
		 * the machine the figure belongs to. */
		snprintf(report, sizeof(report), "bisectctl -c %s report %s "
		    "%s", c->path, eng->name, spec);
		w.report = report;
		w.machine = NULL;
		w.cells = eng->matrix ? other_cells(c, eng, s, spec, &d.req,
		    cells, sizeof(cells)) : NULL;
		if (hygiene_machine(NULL, &here, &me) == 0) {
			snprintf(machine, sizeof(machine), "%s (%s)",
			    here.hostname, here.cpu_model);
			w.machine = machine;
		}
		rc = *status == BISECT_GRADUAL ? alert_record_gradual(s,
		    eng->name, spec, metric, verdict, &w, e) :
		    alert_record_regression(s, eng->name, spec, metric,
		    verdict, &w, e);
		if (rc < 0) {
			json_decref(verdict);
			return -1;
		}
		*fresh = rc == 0;
		if (*status == BISECT_GRADUAL)
			wlog(o, ALERT_LOG_WARNING, "watch %s: a slide over %s "
			    "on %s%s", eng->name, spec, metric, *fresh ?
			    " (alert recorded)" : " (alerted before)");
		else
			wlog(o, ALERT_LOG_WARNING, "watch %s: regression "
			    "%s..%s on %s%s", eng->name, json_string_value(
			    json_object_get(verdict, "last_good")),
			    json_string_value(json_object_get(verdict,
			    "first_bad")), metric, *fresh ?
			    " (alert recorded)" : " (alerted before)");
	} else
		wlog(o, ALERT_LOG_INFO, "watch %s: %s over %s", eng->name,
		    bisect_status_name(*status), spec);
	if (eng->matrix) {
		if ((rc = matrix_alert(c, eng, s, spec, &d.req, metric,
		    e)) < 0) {
			json_decref(verdict);
			return -1;
		}
		if (rc == 1)
			wlog(o, ALERT_LOG_WARNING, "watch %s: every cell of "
			    "%s has judged %s (alert recorded)", eng->name,
			    eng->matrix->name, spec);
	}
	/* The job's verdict is the watched metric's. */
	if (m == NULL && o->verdict && o->compared) {
		json_decref(*o->verdict);
		free(*o->compared);
		*o->verdict = verdict;
		*o->compared = strdup(spec);
	} else
		json_decref(verdict);
	return 0;
}

/* The family-wise level over the other metrics a watch compares. */
#define WATCH_FAMILY_ALPHA 0.05

/* Whether a watch compares metric m beside the engine's own metric. */
static int
watched(const struct conf_engine *eng, const char *m)
{
	char own[32];

	conf_metric_name(&eng->metric, own, sizeof(own));
	/* tgN/CONTENT has no --metric of its own; the engine's is
	 * compared already. */
	if (strchr(m, '/') != NULL || strcmp(m, own) == 0)
		return 0;
	if (eng->watch_metrics.n == 0)
		return 1;
	for (size_t i = 0; i < eng->watch_metrics.n; i++)
		if (strcmp(eng->watch_metrics.v[i], m) == 0)
			return 1;
	return 0;
}

/*
 * Every other metric of the matrix between the baseline good and the
 * newest release, from the whole matrix the bisect measured on its
 * ends: those whose runs show a slowdown past half the threshold, by
 * Holm's procedure at WATCH_FAMILY_ALPHA over the metrics compared (so
 * that watching k metrics does not multiply the false alarms by k),
 * each get their own bisect, and on a regression their own alert,
 * deduplicated as the engine's metric's are.  *regressed counts them.
 */
static int
watch_matrix(const struct conf *c, const struct conf_engine *eng,
    struct store *s, const struct watch_opts *o,
    const struct store_release *good, const struct store_release *newest,
    struct found *found, int *regressed, struct err *e)
{
	struct release_figs fa, fb;
	struct metric_change m[CHANGES_MAX];
	double p[CHANGES_MAX];
	int reject[CHANGES_MAX], idx[CHANGES_MAX];
	char *wsha = NULL, hw[65], spec[512];
	struct machine here;
	size_t n, k = 0;
	int rc = -1;

	*regressed = 0;
	snprintf(spec, sizeof(spec), "%s..%s", good->version,
	    newest->version);
	if (hygiene_machine(NULL, &here, e) < 0)
		return -1;
	memcpy(hw, here.hw_key, sizeof(hw));
	/* On Slurm the runs are the bisect's node's. */
	if (eng->runner && eng->runner->kind == RUNNER_SLURM &&
	    store_slurm_range_key(s, eng->name, good->version, newest->version,
	    hw, e) < 0)
		return -1;
	if (store_weights_latest(s, eng->weights->name, &wsha, e) < 0)
		return -1;
	if (wsha == NULL)
		return 0;
	if (summary_release_figs(s, eng, good->id, wsha, hw, &fa, e) < 0) {
		free(wsha);
		return -1;
	}
	if (summary_release_figs(s, eng, newest->id, wsha, hw, &fb, e) < 0) {
		summary_figs_release(&fa);
		free(wsha);
		return -1;
	}
	free(wsha);
	n = changes_list(eng, eng->threshold, &fa, &fb, m, CHANGES_MAX);
	summary_figs_release(&fa);
	summary_figs_release(&fb);
	for (size_t i = 0; i < n; i++)
		if (watched(eng, m[i].metric)) {
			p[k] = stats_slower_p(&m[i].rel, eng->threshold / 2);
			idx[k++] = (int)i;
		}
	stats_holm(p, k, WATCH_FAMILY_ALPHA, reject);
	rc = 0;
	for (size_t j = 0; j < k && rc == 0; j++) {
		struct conf_metric cm;
		enum bisect_status st;
		size_t n0;
		int fresh;

		if (!reject[j]) {
			wlog(o, ALERT_LOG_INFO, "watch %s: %s over %s: %+.1f%% "
			    "(p %.2g, Holm at %g%% over %zu metrics: not a "
			    "slowdown)", eng->name, m[idx[j]].metric, spec,
			    100 * m[idx[j]].rel.value, p[j],
			    100 * WATCH_FAMILY_ALPHA, k);
			continue;
		}
		if (conf_parse_metric(m[idx[j]].metric, &cm) < 0)
			continue;
		n0 = found->n;
		rc = compare(c, eng, s, o, spec, &cm, found, &st, &fresh, e);
		*regressed += rc == 0 && found->n > n0;
	}
	return rc;
}

/*
 * How much faster version is than since on eng's metric, from what the
 * store holds (a fraction: 0.3 for 30% less time), when the 95% interval
 * of the change lies wholly below minus half the threshold; else 0.
 */
static double
faster_by(const struct conf *c, const struct conf_engine *eng,
    struct store *s, int64_t engine_id, const char *since,
    const char *version, struct err *e)
{
	struct bisect_params p;
	struct judgement j;
	struct range r;
	char spec[512], hw[65], *wsha = NULL;
	int64_t machine_id;
	double by = 0;

	(void)c;
	memset(&j, 0, sizeof(j));
	snprintf(spec, sizeof(spec), "%s..%s", since, version);
	if (range_resolve(s, engine_id, spec, &r, e) < 0)
		return 0;
	if (range_params(eng, NULL, &p, e) == 0 &&
	    bench_machine(s, &machine_id, hw, e) == 0 &&
	    store_weights_latest(s, eng->weights->name, &wsha, e) == 0 &&
	    judge_range(s, &r, &p, eng, wsha, hw, &j, e) == 0 && j.done &&
	    isfinite(j.v.endpoints_rel.hi) &&
	    j.v.endpoints_rel.hi < -p.threshold / 2)
		by = -j.v.endpoints_rel.value;
	judgement_release(&j);
	free(wsha);
	range_release(&r);
	return by;
}

/*
 * The canary of each release from list->v[from] to list->v[to], and of
 * the one before from: each text that differs from the text of the last
 * release before it that has one is an alert of its own (kind "output"),
 * in one line with "faster" when the release is also faster.  A release
 * whose canary is nondeterministic or fails is logged and never compared.
 */
static int
watch_canary(const struct conf *c, const struct conf_engine *eng,
    struct store *s, const struct watch_opts *o,
    const struct store_release_list *list, size_t from, size_t to,
    struct err *e)
{
	struct canary_session x;
	struct canary_status prev, st;
	const char *prev_version = NULL;
	char metric[32];
	int rc = -1;

	memset(&prev, 0, sizeof(prev));
	if (canary_session_open(c, eng, s, o ? o->stop : NULL, &x, e) < 0)
		return err_prefix(e, "watch %s: canary", eng->name);
	conf_metric_name(&eng->metric, metric, sizeof(metric));
	for (size_t i = from > 0 ? from - 1 : 0; i <= to; i++) {
		const char *version = list->v[i].version;
		struct err fe = ERR_INIT;
		int fresh;

		rc = canary_session_measure(&x, version, &st, &fe, e);
		if (rc < 0)
			goto done;
		rc = -1;
		if (st.state != CANARY_DETERMINISTIC) {
			wlog(o, ALERT_LOG_WARNING, "watch %s: the canary of %s "
			    "is %s%s%s: not compared", eng->name, version,
			    canary_state_name(st.state), st.detail[0] ? ": " :
			    fe.msg[0] ? ": " : "", st.detail[0] ? st.detail :
			    fe.msg);
			canary_status_release(&st);
			continue;
		}
		if (prev_version && strcmp(prev.sha256, st.sha256) != 0) {
			double by = faster_by(c, eng, s, x.engine_id,
			    prev_version, version, &fe);

			fresh = canary_alert(s, eng, x.key, prev_version, &prev,
			    version, &st, by, metric, e);
			if (fresh < 0) {
				canary_status_release(&st);
				goto done;
			}
			wlog(o, ALERT_LOG_WARNING, "watch %s: %s generates "
			    "different text from %s on the canary prompt%s%s",
			    eng->name, version, prev_version, by > 0 ?
			    ", and is faster" : "", fresh == 0 ?
			    " (alert recorded)" : " (alerted before)");
		}
		canary_status_release(&prev);
		prev = st;
		prev_version = version;
	}
	rc = 0;
done:
	canary_status_release(&prev);
	canary_session_close(&x);
	return rc;
}

/*
 * Whether an earlier alert of eng (a regression's, or the history's)
 * named a first bad release from `from` to `to` in l's order: that
 * alert covered the change point between them.
 */
static int
covered(const struct store_alert_rows *rows, const struct store_release_list *l,
    const char *from, const char *to)
{
	long a = find_version(l, from), b = find_version(l, to);

	for (size_t i = 0; i < rows->n; i++) {
		const struct store_alert *x = &rows->v[i].alert;
		json_t *body;
		long k;

		if (strcmp(x->kind, "regression") != 0 &&
		    strcmp(x->kind, "history") != 0)
			continue;
		if ((body = json_loads(x->body, 0, NULL)) == NULL)
			continue;
		k = find_version(l, json_string_value(json_object_get(body,
		    "first_bad")));
		json_decref(body);
		if (k >= 0 && k >= a && k <= b)
			return 1;
	}
	return 0;
}

/* Record the alert of slowdown p of series x; 0 new, 1 known, -1. */
static int
alert_history(struct store *s, const struct history *h,
    const struct history_series *x, const struct cp_point *p, struct err *e)
{
	json_t *o = history_json(h), *pe;
	char key[600], text[1024];
	size_t si = (size_t)(x - h->series), pi = (size_t)(p - x->cp.v);
	const char *good = x->v[p->at - 1].version, *bad = x->v[p->at].version;
	char *body;
	int rc;

	pe = json_incref(json_array_get(json_object_get(json_array_get(
	    json_object_get(o, "series"), si), "change_points"), pi));
	json_decref(o);
	if (pe == NULL)
		return err_set(e, "out of memory");
	snprintf(key, sizeof(key), "history:%s:%s..%s:%s", h->eng->name, good,
	    bad, x->metric);
	snprintf(text, sizeof(text), "%s %s: %s slower, %+.1f%% %s since %s "
	    "(a change point of the history, p %.2g%s); bisect: %s",
	    h->eng->name, bad, x->what, 100 * json_real_value(json_object_get(
	    pe, "change")), history_unit(x), good, p->p, p->slide ?
	    ", part of a slide" : "", json_string_value(json_object_get(pe,
	    "bisect")));
	json_object_set_new(pe, "kind", json_string("history"));
	json_object_set_new(pe, "text", json_string(text));
	json_object_set_new(pe, "engine", json_string(h->eng->name));
	json_object_set_new(pe, "metric", json_string(x->metric));
	json_object_set_new(pe, "first_bad", json_string(bad));
	json_object_set_new(pe, "last_good", json_string(good));
	body = json_dumps(pe, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(pe);
	if (body == NULL)
		return err_set(e, "cannot encode the alert for '%s'", key);
	rc = store_alert_record(s, "history", h->eng->name, key, text, body, e);
	free(body);
	return rc;
}

/*
 * The history of eng (every stored release, every metric): each
 * slowdown it finds whose interval lies above half the engine's
 * threshold and that no earlier alert covered (a regression alert or a
 * history alert naming a first bad release among the releases around
 * it) is alerted once, kind "history".  A slowdown the same
 * releases show on several metrics is alerted once.  Changes for the
 * better are logged, not alerted.
 */
static int
watch_history(const struct conf *c, const struct conf_engine *eng,
    struct store *s, const struct watch_opts *o,
    const struct store_release_list *l, struct err *e)
{
	struct store_alert_rows rows = { NULL, 0 };
	struct history h;
	int rc = -1;

	if (history_build(c, eng, s, NULL, &h, e) < 0)
		return err_prefix(e, "watch %s: history", eng->name);
	if (store_alert_list_engine(s, eng->name, 100000, &rows, e) < 0)
		goto done;
	for (size_t i = 0; i < h.nseries; i++) {
		const struct history_series *x = &h.series[i];

		for (size_t k = 0; k < x->cp.n; k++) {
			const struct cp_point *p = &x->cp.v[k];
			size_t a, b;
			int fresh;

			history_range(x, p, &a, &b);
			/* As the bisect counts a change: its interval above
			 * half the threshold.  A significant drift of 3% is
			 * the history's to show, not news to page anyone
			 * about (a loaded machine makes such shifts). */
			if (p->up && !(p->rel.lo > eng->threshold / 2)) {
				wlog(o, ALERT_LOG_INFO, "watch %s: history of "
				    "%s: slower at %s by %+.1f%% [%+.1f%%, "
				    "%+.1f%%], below half the threshold: not "
				    "alerted", eng->name, x->metric,
				    x->v[p->at].version, 100 * p->rel.value,
				    100 * p->rel.lo, 100 * p->rel.hi);
				continue;
			}
			if (!p->up || covered(&rows, l, x->v[a].version,
			    x->v[b].version)) {
				wlog(o, ALERT_LOG_INFO, "watch %s: history of "
				    "%s: %s at %s%s", eng->name, x->metric,
				    p->up ? "slower" : "faster",
				    x->v[p->at].version, p->up ?
				    " (alerted before)" : "");
				continue;
			}
			if ((fresh = alert_history(s, &h, x, p, e)) < 0)
				goto done;
			wlog(o, ALERT_LOG_WARNING, "watch %s: history of %s: "
			    "slower at %s since %s%s", eng->name, x->metric,
			    x->v[p->at].version, x->v[p->at - 1].version,
			    fresh == 0 ? " (alert recorded)" :
			    " (alerted before)");
			/* What is recorded now covers the other metrics. */
			store_alert_rows_release(&rows);
			if (store_alert_list_engine(s, eng->name, 100000, &rows,
			    e) < 0)
				goto done;
		}
	}
	rc = 0;
done:
	store_alert_rows_release(&rows);
	history_release(&h);
	return rc;
}

int
watch_run(const struct conf *c, const struct conf_engine *eng,
    struct store *s, const struct watch_opts *o, struct err *e)
{
	struct store_release_list list = { NULL, 0 };
	struct acquire a;
	char good_key[300], seen_key[300], spec[512];
	char *last_good = NULL, *last_seen = NULL;
	const char *newest;
	struct refused_ctx rctx;
	enum bisect_status status;
	long ig, in;
	struct found found = { { "" }, 0 };
	int rc = -1, added = 0, fresh = 0, others = 0;

	if (state_key(good_key, sizeof(good_key), "last-good", eng->name) < 0 ||
	    state_key(seen_key, sizeof(seen_key), "last-seen", eng->name) < 0)
		return err_set(e, "engine name '%s' too long", eng->name);
	if (acquire_init(&a, c, eng, s, e) < 0)
		return -1;
	rctx.o = o;
	rctx.engine = eng->name;
	a.refused = on_refused;
	a.refused_arg = &rctx;
	a.stop = o ? o->stop : NULL;
	if (acquire_refresh(&a, NULL, &added, e) < 0) {
		err_prefix(e, "watch %s: cannot list releases of %s",
		    eng->name, eng->source_spec);
		wlog(o, ALERT_LOG_ERR, "%s", e->msg);
		return -1;
	}
	if (store_release_list(s, a.engine_id, &list, e) < 0 ||
	    store_state_get(s, good_key, &last_good, NULL, e) < 0 ||
	    store_state_get(s, seen_key, &last_seen, NULL, e) < 0)
		goto done;
	if (list.n == 0) {
		wlog(o, ALERT_LOG_INFO, "watch %s: the source lists no "
		    "releases", eng->name);
		rc = 0;
		goto done;
	}
	newest = list.v[list.n - 1].version;
	in = (long)list.n - 1;
	if (last_seen && strcmp(last_seen, newest) == 0) {
		wlog(o, ALERT_LOG_INFO, "watch %s: nothing new since %s",
		    eng->name, newest);
		rc = 0;
		goto done;
	}
	/* The baseline: the last known good, else the newest release an
	 * earlier watch saw, else the release before the newest. */
	ig = find_version(&list, last_good);
	if (ig < 0 || ig >= in)
		ig = find_version(&list, last_seen);
	if (ig < 0 || ig >= in)
		ig = in - 1;
	if (ig < 0) {
		/* A single release: nothing to compare it with yet. */
		rc = store_state_set(s, good_key, newest, e) < 0 ||
		    store_state_set(s, seen_key, newest, e) < 0 ? -1 : 0;
		goto done;
	}
	snprintf(spec, sizeof(spec), "%s..%s", list.v[ig].version, newest);
	if (compare(c, eng, s, o, spec, NULL, &found, &status, &fresh, e) < 0)
		goto done;
	if (status == BISECT_REGRESSION && !fresh && ig < in - 1) {
		/* The regression found is one alerted before, from a
		 * baseline left behind it: is the newest release worse
		 * again than the one before it? */
		enum bisect_status st2;

		snprintf(spec, sizeof(spec), "%s..%s",
		    list.v[in - 1].version, newest);
		if (compare(c, eng, s, o, spec, NULL, &found, &st2, &fresh,
		    e) < 0)
			goto done;
	}
	/* Every other metric of the matrix, newest against the good. */
	if (watch_matrix(c, eng, s, o, &list.v[ig], &list.v[in], &found,
	    &others, e) < 0)
		goto done;
	/* The releases new since the last watch, each against the one
	 * before it. */
	if (eng->canary) {
		long is = find_version(&list, last_seen);

		if (watch_canary(c, eng, s, o, &list, is >= 0 && is < in ?
		    (size_t)is + 1 : (size_t)in, (size_t)in, e) < 0) {
			wlog(o, ALERT_LOG_ERR, "%s", e->msg);
			goto done;
		}
	}
	/* Over every stored release: what no comparison of two ends sees.
	 * A history that cannot be read costs its alerts, not the watch's
	 * verdict. */
	{
		struct err he = ERR_INIT;

		if (watch_history(c, eng, s, o, &list, &he) < 0)
			wlog(o, ALERT_LOG_ERR, "%s", he.msg);
	}
	/* Good only when no metric regressed: the next watch compares from
	 * here. */
	if (status == BISECT_NO_REGRESSION && others == 0 &&
	    store_state_set(s, good_key, newest, e) < 0)
		goto done;
	if (store_state_set(s, seen_key, newest, e) < 0)
		goto done;
	rc = status == BISECT_NO_REGRESSION ? others ? 3 : 0 :
	    verdict_exit_code(status);
done:
	free(last_good);
	free(last_seen);
	store_release_list_release(&list);
	return rc;
}

/* --- the yardstick --- */

/* One engine's figure in the yardstick check. */
struct standing {
	const struct conf_engine *eng;
	char *version;		/* malloced */
	char weights_sha[65];
	struct estimate cost;	/* ns; lower is faster */
	int ok;
};

/*
 * Measure version of eng on the metric's cells (the engine's reps, after
 * its warm-ups) and estimate its cost from the runs just taken.
 */
static int
measure_standing(const struct conf *c, struct store *s,
    const struct watch_opts *o,
    const struct conf_metric *metric, struct standing *st, struct err *e)
{
	const struct conf_engine *eng = st->eng;
	struct bisect_params p;
	struct bench_job j;
	struct bisect_release rel;
	struct store_points pts[BISECT_MAX_CELLS];
	int prompts[BISECT_MAX_CELLS], gens[1], rc = -1;
	size_t np = 0, ng = 0, npts = 0, from, nruns;
	struct bisect_request req;

	memset(&rel, 0, sizeof(rel));
	memset(&j, 0, sizeof(j));
	bisect_request_init(&req);
	req.metric = *metric;
	if (range_params(eng, &req, &p, e) < 0)
		return -1;
	if (p.metric.kind == BISECT_METRIC_TG)
		gens[ng++] = p.lengths[0];
	else
		for (size_t i = 0; i < p.nlengths; i++)
			prompts[np++] = p.lengths[i];
	j.prompts = np ? prompts : NULL;
	j.nprompts = np;
	j.gens = ng ? gens : NULL;
	j.ngens = ng;
	j.stop = o->stop;
	j.progress = progress_line;
	j.progress_arg = (void *)(uintptr_t)o;
	wlog(o, ALERT_LOG_INFO, "yardstick: measuring %s %s", eng->name,
	    st->version);
	if (bench_release(c, eng, s, st->version, &j, e) < 0)
		goto done;
	memcpy(st->weights_sha, j.weights_sha256, sizeof(st->weights_sha));
	/* The cost from the runs just taken: the last reps points of each
	 * cell, so an older measurement never masks a change. */
	for (size_t i = 0; i < p.nlengths; i++) {
		struct store_cell_query q;
		struct bisect_sample *b;

		if (range_cell_query(&p, i, eng, j.release_id,
		    j.weights_sha256, j.hw_key, &q, e) < 0 ||
		    store_cell_points(s, &q, &pts[i], e) < 0)
			goto done;
		npts++;
		/* The last reps runs with all their samples: the run, not
		 * the sample, is the unit (the samples of a run are adjacent). */
		from = pts[i].n;
		for (nruns = 0; from > 0 && nruns < (size_t)eng->reps; nruns++)
			for (int64_t id = pts[i].v[from - 1].run_id; from > 0 &&
			    pts[i].v[from - 1].run_id == id; )
				from--;
		if (nruns < (size_t)eng->reps) {
			err_set(e, "yardstick: %s %s: only %zu good runs of "
			    "%s%d (%s)", eng->name, st->version, nruns,
			    q.kind, p.lengths[i], j.tally.last_failure);
			goto done;
		}
		b = calloc(pts[i].n - from, sizeof(*b));
		if (b == NULL) {
			err_set(e, "out of memory");
			goto done;
		}
		for (size_t k = from; k < pts[i].n; k++) {
			b[k - from].time_ns = (double)pts[i].v[k].time_ns;
			b[k - from].run = pts[i].v[k].run_id;
		}
		rel.cells[i].samples = b;
		rel.cells[i].n = pts[i].n - from;
	}
	if (bisect_metric_estimate(&rel, &p, 0, (size_t)eng->reps,
	    &st->cost) < 0) {
		err_set(e, "yardstick: %s %s: cannot estimate its cost",
		    eng->name, st->version);
		goto done;
	}
	st->ok = 1;
	rc = 0;
done:
	for (size_t i = 0; i < p.nlengths && i < BISECT_MAX_CELLS; i++)
		free((void *)(uintptr_t)rel.cells[i].samples);
	for (size_t i = 0; i < npts; i++)
		store_points_release(&pts[i]);
	bench_job_release(&j);
	return rc;
}

/* The newest release of eng after asking its source. */
static int
latest(const struct conf *c, const struct conf_engine *eng, struct store *s,
    char **version, struct err *e)
{
	struct acquire a;

	return acquire_init(&a, c, eng, s, e) < 0 ? -1 :
	    acquire_newest(&a, 1, version, e);
}

int
yardstick_next(const struct conf *c, struct store *s, int64_t *when,
    struct err *e)
{
	char *v = NULL;
	int64_t updated = 0;
	int rc;

	if (c->yardstick_engine == NULL)
		return 1;
	rc = store_state_get(s, "yardstick-checked", &v, &updated, e);
	free(v);
	if (rc < 0)
		return -1;
	*when = rc == 1 ? (int64_t)time(NULL) :
	    updated + c->yardstick_every_ms / 1000;
	return 0;
}

/* How the metric reads for people, from a cost in ns. */
static void
figure(const struct conf_metric *m, double cost_ns, char *buf, size_t len)
{
	switch (m->kind) {
	case METRIC_PER_TOKEN:
		snprintf(buf, len, "%.4g ms per prompt token", cost_ns / 1e6);
		break;
	case METRIC_FIXED:
		snprintf(buf, len, "%.4g ms fixed overhead", cost_ns / 1e6);
		break;
	case METRIC_PP:
		snprintf(buf, len, "pp%d %.4g t/s", m->n, m->n * 1e9 / cost_ns);
		break;
	case METRIC_TG:
		snprintf(buf, len, "tg%d %.4g t/s", m->n, m->n * 1e9 / cost_ns);
		break;
	case METRIC_SERVE:
		snprintf(buf, len, "%s %.4g ms", conf_serve_figure_name(m->n),
		    cost_ns / 1e6);
		break;
	case METRIC_MEMORY:
		/* The cost of a memory metric is its bytes. */
		snprintf(buf, len, "%s %.3g GiB", m->n == MEM_GPU ?
		    "peak GPU memory" : "peak RSS", cost_ns / (1 << 30));
		break;
	case METRIC_CANARY:
		assert(!"the yardstick compares times, not texts");
		break;
	}
}

static json_t *
standing_json(const struct standing *st, const struct conf_metric *m)
{
	char text[128];

	figure(m, st->cost.value, text, sizeof(text));
	return json_pack("{s:s,s:s,s:s,s:f,s:[f,f],s:s}", "engine",
	    st->eng->name, "version", st->version, "weights_sha256",
	    st->weights_sha, "cost_ms", st->cost.value / 1e6, "cost_ci_ms",
	    st->cost.lo / 1e6, st->cost.hi / 1e6, "figure", text);
}

/* Record the alert: fastest (st[best]) beats the yardstick (st[0]). */
static int
alert_yardstick(struct store *s, const struct conf_metric *m,
    const struct standing *st, size_t n, size_t best, int weights_differ,
    struct err *e)
{
	char key[512], text[768], a[128], b[128], metric[32];
	json_t *o, *ranking = json_array();
	char *body;
	int rc;

	figure(m, st[best].cost.value, a, sizeof(a));
	figure(m, st[0].cost.value, b, sizeof(b));
	conf_metric_name(m, metric, sizeof(metric));
	snprintf(text, sizeof(text), "yardstick %s %s is no longer the "
	    "fastest at %s: %s %s has %s against %s%s", st[0].eng->name,
	    st[0].version, metric, st[best].eng->name, st[best].version, a, b,
	    weights_differ ? " (weights differ: the ordering holds, not the "
	    "decimals)" : "");
	snprintf(key, sizeof(key), "yardstick:%s:%s", st[best].eng->name,
	    st[best].version);
	for (size_t i = 0; i < n; i++)
		if (st[i].ok)
			json_array_append_new(ranking, standing_json(&st[i], m));
	o = json_pack("{s:s,s:s,s:s,s:{s:s,s:s},s:{s:s,s:s},s:o,s:b}",
	    "kind", "yardstick", "text", text, "metric", metric,
	    "yardstick", "engine", st[0].eng->name, "version", st[0].version,
	    "fastest", "engine", st[best].eng->name, "version",
	    st[best].version, "ranking", ranking, "weights_differ",
	    weights_differ);
	if (weights_differ)
		json_object_set_new(o, "flags", json_pack("[s]",
		    "weights-differ"));
	body = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	if (body == NULL)
		return err_set(e, "cannot encode the yardstick alert");
	rc = store_alert_record(s, "yardstick", st[best].eng->name, key, text,
	    body, e);
	free(body);
	return rc;
}

int
yardstick_run(const struct conf *c, struct store *s,
    const struct watch_opts *o, struct err *e)
{
	const struct conf_engine *yeng;
	struct standing *st;
	struct conf_metric m;
	size_t n = 0, best = 0;
	int rc = -1, weights_differ = 0;
	char now[32];

	if (c->yardstick_engine == NULL)
		return err_set(e, "no [yardstick] in the configuration");
	if ((yeng = conf_engine(c, c->yardstick_engine)) == NULL)
		return err_set(e, "yardstick engine '%s' is not configured",
		    c->yardstick_engine);
	m = yeng->metric;
	if ((st = calloc(c->nengines, sizeof(*st))) == NULL)
		return err_set(e, "out of memory");
	/* st[0] is the yardstick, then every other engine's latest. */
	st[n].eng = yeng;
	if (c->yardstick_version)
		st[n].version = strdup(c->yardstick_version);
	else if (latest(c, yeng, s, &st[n].version, e) < 0)
		goto done;
	if (st[n].version == NULL) {
		err_set(e, "out of memory");
		goto done;
	}
	if (measure_standing(c, s, o, &m, &st[n], e) < 0) {
		err_prefix(e, "yardstick %s %s", yeng->name, st[0].version);
		goto done;
	}
	n++;
	for (size_t i = 0; i < c->nengines; i++) {
		struct err ee = ERR_INIT;

		if (&c->engines[i] == yeng)
			continue;
		st[n].eng = &c->engines[i];
		if (latest(c, st[n].eng, s, &st[n].version, &ee) < 0 ||
		    measure_standing(c, s, o, &m, &st[n], &ee) < 0) {
			/* One broken engine does not hide the others. */
			wlog(o, ALERT_LOG_WARNING, "yardstick: skipping %s: %s",
			    st[n].eng->name, ee.msg);
			if (o->stop && *o->stop) {
				err_set(e, "interrupted");
				n++;
				goto done;
			}
		}
		n++;
	}
	for (size_t i = 1; i < n; i++) {
		if (!st[i].ok)
			continue;
		if (strcmp(st[i].weights_sha, st[0].weights_sha) != 0)
			weights_differ = 1;
		/* Faster beyond the noise: its whole interval below the
		 * yardstick's and below the best so far. */
		if (st[i].cost.hi < st[0].cost.lo &&
		    (best == 0 || st[i].cost.value < st[best].cost.value))
			best = i;
	}
	if (best != 0) {
		if (alert_yardstick(s, &m, st, n, best, weights_differ, e) < 0)
			goto done;
		wlog(o, ALERT_LOG_WARNING, "yardstick %s %s is no longer the "
		    "fastest: %s %s is", yeng->name, st[0].version,
		    st[best].eng->name, st[best].version);
	} else
		wlog(o, ALERT_LOG_INFO, "yardstick %s %s is still the fastest "
		    "(or indistinguishable from it)", yeng->name,
		    st[0].version);
	snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
	if (store_state_set(s, "yardstick-checked", now, e) < 0)
		goto done;
	rc = best != 0 ? 3 : 0;
done:
	for (size_t i = 0; i < c->nengines; i++)
		free(st[i].version);
	free(st);
	return rc;
}
