/*
 * changes.c: every metric of the matrix between two releases (see
 * changes.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "changes.h"

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

static void
add(struct metric_change *out, size_t max, size_t *n, double threshold,
    const char *metric, const char *what, const char *unit, int tps,
    const struct estimate *rel)
{
	struct metric_change *m;

	if (*n == max)
		return;
	m = &out[(*n)++];
	snprintf(m->metric, sizeof(m->metric), "%s", metric);
	snprintf(m->what, sizeof(m->what), "%s", what);
	m->unit = unit;
	m->tps = tps;
	m->rel = *rel;
	m->moved = stats_move(rel, threshold);
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

void
changes_pair(const struct changes_ctx *c, const struct release_figs *a,
    const char *va, const struct release_figs *b, const char *vb,
    json_t *out)
{
	struct metric_change m[CHANGES_MAX];
	size_t n = changes_list(c->eng, c->threshold, a, b, m, CHANGES_MAX);
	int searched_slower = 0;

	/* Where the searched metric got slower too, the others are that
	 * regression seen from another cell: no second bisect to run. */
	for (size_t i = 0; i < n; i++)
		if (strcmp(m[i].metric, c->searched) == 0 &&
		    m[i].moved == MOVE_SLOWER)
			searched_slower = 1;
	for (size_t i = 0; i < n; i++) {
		const struct estimate *r = &m[i].rel;
		int searched = strcmp(m[i].metric, c->searched) == 0;
		double v = r->value, lo = r->lo, hi = r->hi;
		json_t *o = json_object();

		if (m[i].tps)
			changes_tps(r, &v, &lo, &hi);
		json_object_set_new(o, "from", json_string(va));
		json_object_set_new(o, "to", json_string(vb));
		json_object_set_new(o, "metric", json_string(m[i].metric));
		json_object_set_new(o, "what", json_string(m[i].what));
		json_object_set_new(o, "unit", json_string(m[i].unit));
		json_object_set_new(o, "change", isfinite(v) ? json_real(v) :
		    json_null());
		/* A bound there is none of is null: never a made-up one. */
		json_object_set_new(o, "change_ci", isfinite(lo) ||
		    isfinite(hi) ? json_pack("[o,o]", isfinite(lo) ?
		    json_real(lo) : json_null(), isfinite(hi) ? json_real(hi) :
		    json_null()) : json_null());
		json_object_set_new(o, "moved", json_string(stats_move_name(
		    m[i].moved)));
		json_object_set_new(o, "searched", json_boolean(searched));
		/* A slowdown no one searched: the command that does. */
		if (m[i].moved == MOVE_SLOWER && !searched &&
		    !searched_slower && strchr(m[i].metric, '/') == NULL &&
		    strcmp(m[i].metric, "gpu-memory") != 0)
			json_object_set_new(o, "bisect", json_sprintf("%s bisect "
			    "--now --metric %s %s %s", c->ctl, m[i].metric,
			    c->eng->name, c->range));
		json_array_append_new(out, o);
	}
}
