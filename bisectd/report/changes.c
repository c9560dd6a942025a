/*
 * changes.c: every metric of the matrix between two releases (see
 * changes.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changes.h"
#include "report.h"
#include "store/serve.h"

/* The change of two cells' mean run times; -1 when either is missing. */
static int
cell_change(const struct cellsum *a, const struct cellsum *b,
    struct estimate *rel)
{
	struct estimate ea, eb;

	if (!a->ok || !b->ok)
		return -1;
	stats_mean_estimate(&a->st, &ea);
	stats_mean_estimate(&b->st, &eb);
	return stats_rel_change(&eb, &ea, rel);
}

/* Add a change; returns it, NULL when out is full. */
static struct metric_change *
add(struct metric_change *out, size_t max, size_t *n, double threshold,
    const char *metric, const char *what, const char *unit, int tps,
    const struct estimate *rel)
{
	struct metric_change *m;

	if (*n == max)
		return NULL;
	m = &out[(*n)++];
	memset(m, 0, sizeof(*m));
	snprintf(m->metric, sizeof(m->metric), "%s", metric);
	snprintf(m->what, sizeof(m->what), "%s", what);
	m->unit = unit;
	m->tps = tps;
	m->rel = *rel;
	m->moved = stats_move(rel, threshold);
	/* A content kind past the first and the memory are not metrics
	 * the bisect takes. */
	m->bisectable = strchr(metric, '/') == NULL &&
	    strcmp(metric, "gpu-memory") != 0;
	return m;
}

size_t
changes_list(const struct conf_engine *eng, double threshold,
    const struct release_figs *a, const struct release_figs *b,
    struct metric_change *out, size_t max)
{
	size_t nk = eng->contents.n ? eng->contents.n : 1, n = 0;
	struct estimate rel;
	char metric[96], what[128];

	if (a->has_fit && b->has_fit) {
		if (a->fit.per_token_ns.value > 0 && stats_rel_change(
		    &b->fit.per_token_ns, &a->fit.per_token_ns, &rel) == 0)
			add(out, max, &n, threshold, "per-token",
			    "prefill cost per token", "ms/token", 0, &rel);
		if (a->fit.fixed_estimable && b->fit.fixed_estimable &&
		    a->fit.fixed_ns.value > 0 && stats_rel_change(
		    &b->fit.fixed_ns, &a->fit.fixed_ns, &rel) == 0)
			add(out, max, &n, threshold, "fixed", "fixed overhead",
			    "ms", 0, &rel);
	}
	/* The mean of each run's peak, with its interval, where both ends
	 * read their GPUs' memory. */
	if (a->gpu.mem.n > 0 && b->gpu.mem.n > 0 && a->gpu.mem.mean > 0) {
		struct estimate ea, eb;

		stats_mean_estimate(&a->gpu.mem, &ea);
		stats_mean_estimate(&b->gpu.mem, &eb);
		if (stats_rel_change(&eb, &ea, &rel) == 0)
			add(out, max, &n, threshold, "gpu-memory",
			    "peak GPU memory", "bytes", 0, &rel);
	}
	for (size_t i = 0; i < a->npp && i < b->npp; i++) {
		if (cell_change(&a->pp[i], &b->pp[i], &rel) < 0)
			continue;
		snprintf(metric, sizeof(metric), "pp%d", eng->prompts[i]);
		snprintf(what, sizeof(what), "prefill of %d tokens",
		    eng->prompts[i]);
		add(out, max, &n, threshold, metric, what, "tok/s", 1, &rel);
	}
	for (size_t i = 0; i < a->ntg && i < b->ntg; i++) {
		size_t g = i / nk, k = i % nk;

		if (cell_change(&a->tg[i], &b->tg[i], &rel) < 0)
			continue;
		/* tgN searches the first content kind; the others are
		 * named with theirs. */
		if (eng->contents.n && k > 0)
			snprintf(metric, sizeof(metric), "tg%d/%s", eng->gen[g],
			    eng->contents.v[k]);
		else
			snprintf(metric, sizeof(metric), "tg%d", eng->gen[g]);
		snprintf(what, sizeof(what), "decode of %d tokens%s%s",
		    eng->gen[g], eng->contents.n ? ", " : "",
		    eng->contents.n ? eng->contents.v[k] : "");
		add(out, max, &n, threshold, metric, what, "tok/s", 1, &rel);
	}
	return n;
}

/* Past FIG_N, the rates a serve run stores beside its figures. */
enum serve_rate { RATE_REQ, RATE_TOK, RATE_GOOD, NRATES };

/* The values of k (a latency: FIG_*; past FIG_N a rate) over r's runs
 * that have it, into x; returns how many. */
static size_t
serve_values(const struct store_serve_rows *r, int k, double *x)
{
	size_t m = 0;

	for (size_t i = 0; i < r->n; i++) {
		const struct store_serve_run *run = &r->v[i].run;
		double v = k < FIG_N ? r->v[i].figure_ns[k] :
		    k == FIG_N + RATE_REQ ? run->req_per_s :
		    k == FIG_N + RATE_TOK ? run->out_tok_per_s :
		    run->goodput_per_s;

		if (!r->v[i].failed && isfinite(v))
			x[m++] = v;
	}
	return m;
}

size_t
changes_serve_values(const struct store_serve_rows *r,
    enum conf_serve_figure f, double *x)
{
	return serve_values(r, (int)f, x);
}

void
changes_serve_what(enum conf_serve_figure f, char *buf, size_t len)
{
	static const char *const lat[] = { "time to first token",
	    "time per output token", "inter-token latency",
	    "end-to-end latency" };
	static const char *const pct[] = { "p50", "p90", "p99" };

	snprintf(buf, len, "%s, %s", lat[f / 3], pct[f % 3]);
}

/* The mean of k over a release's runs as an estimate; -1 when no run
 * has it. */
static int
serve_estimate(const struct store_serve_rows *r, int k, double *x,
    struct estimate *out)
{
	struct cell_stats cs;
	size_t m = serve_values(r, k, x);

	if (m == 0 || stats_cell(x, m, &cs) < 0)
		return -1;
	stats_mean_estimate(&cs, out);
	return 0;
}

size_t
changes_serve(const struct conf_engine *eng, double threshold,
    const struct store_serve_rows *a, const struct store_serve_rows *b,
    struct metric_change *out, size_t max)
{
	static const struct { const char *metric, *what, *unit; } rates[] = {
		{ "req_per_s", "requests completed a second", "requests/s" },
		{ "out_tok_per_s", "output tokens a second", "tok/s" },
		{ "goodput_per_s", "requests a second within the targets",
		    "requests/s" },
	};
	int good = eng->load.slo_ttft_ms > 0 || eng->load.slo_tpot_ms > 0;
	double *x = calloc(a->n > b->n ? a->n + 1 : b->n + 1, sizeof(*x));
	size_t n = 0;

	if (x == NULL)
		return 0;
	for (int k = 0; k < FIG_N + NRATES; k++) {
		struct estimate ea, eb, rel;
		struct metric_change *m;
		char what[128];

		if (k == FIG_N + RATE_GOOD && !good)
			break;
		if (serve_estimate(a, k, x, &ea) < 0 ||
		    serve_estimate(b, k, x, &eb) < 0 ||
		    stats_rel_change(&eb, &ea, &rel) < 0)
			continue;
		/* Times and rates are never below zero: nor is the
		 * change's interval below -100%, where a rate fell to
		 * zero with little spread. */
		if (rel.lo < -1)
			rel.lo = -1;
		if (k < FIG_N) {
			changes_serve_what((enum conf_serve_figure)k, what,
			    sizeof(what));
			add(out, max, &n, threshold, conf_serve_figure_name(
			    (enum conf_serve_figure)k), what, "ms", 0, &rel);
			continue;
		}
		m = add(out, max, &n, threshold, rates[k - FIG_N].metric,
		    rates[k - FIG_N].what, rates[k - FIG_N].unit, 0, &rel);
		if (m == NULL)
			continue;
		/* A rate is shown as its own change, up when faster. */
		m->bisectable = 0;
		m->moved = stats_move_rate(&rel, threshold);
	}
	free(x);
	return n;
}

void
changes_tps(const struct estimate *time_rel, double *v, double *lo,
    double *hi)
{
	*v = 1 / (1 + time_rel->value) - 1;
	/* A time that may grow without bound is a throughput that may fall
	 * to zero; one that may fall by all of itself, a throughput with no
	 * bound above. */
	*lo = isfinite(time_rel->hi) ? 1 / (1 + time_rel->hi) - 1 : -1;
	*hi = time_rel->lo > -1 ? 1 / (1 + time_rel->lo) - 1 : INFINITY;
}

/* A change's names are copied whole. */
_Static_assert(sizeof(((struct report_change *)0)->metric) ==
    sizeof(((struct metric_change *)0)->metric), "metric");
_Static_assert(sizeof(((struct report_change *)0)->what) ==
    sizeof(((struct metric_change *)0)->what), "what");

int
changes_pair(const struct changes_ctx *c, const struct release_figs *a,
    const char *va, const struct release_figs *b, const char *vb,
    struct report *rp)
{
	struct metric_change m[CHANGES_MAX];
	size_t n = changes_list(c->eng, c->threshold, a, b, m, CHANGES_MAX);

	return changes_append(c, m, n, va, vb, rp);
}

int
changes_append(const struct changes_ctx *c, const struct metric_change *m,
    size_t n, const char *va, const char *vb, struct report *rp)
{
	struct report_change *v;
	int searched_slower = 0;

	if (n == 0)
		return 0;
	if ((v = realloc(rp->changes, (rp->nchanges + n) * sizeof(*v))) ==
	    NULL)
		return -1;
	rp->changes = v;
	/* Where the searched metric got slower too, the others are that
	 * regression seen from another cell: no second bisect to run. */
	for (size_t i = 0; i < n; i++)
		if (strcmp(m[i].metric, c->searched) == 0 &&
		    m[i].moved == MOVE_SLOWER)
			searched_slower = 1;
	for (size_t i = 0; i < n; i++) {
		const struct estimate *r = &m[i].rel;
		struct report_change *x = &rp->changes[rp->nchanges++];

		memset(x, 0, sizeof(*x));
		x->from = va;
		x->to = vb;
		memcpy(x->metric, m[i].metric, sizeof(x->metric));
		memcpy(x->what, m[i].what, sizeof(x->what));
		x->unit = m[i].unit;
		x->change = r->value;
		x->lo = r->lo;
		x->hi = r->hi;
		if (m[i].tps)
			changes_tps(r, &x->change, &x->lo, &x->hi);
		x->moved = stats_move_name(m[i].moved);
		x->searched = strcmp(m[i].metric, c->searched) == 0;
		/* A slowdown no one searched: the command that does. */
		if (m[i].moved == MOVE_SLOWER && !x->searched &&
		    !searched_slower && m[i].bisectable &&
		    asprintf(&x->bisect, "%s bisect --now --metric %s %s %s",
		    c->ctl, m[i].metric, c->eng->name, c->range) < 0) {
			x->bisect = NULL;
			return -1;
		}
	}
	return 0;
}
