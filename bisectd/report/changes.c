/*
 * changes.c: every metric of the matrix between two releases (see
 * changes.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/analysis/stats.h"
#include "changes.h"

/*
 * One entry: rel is the change of a time (b / a - 1, positive slower);
 * tps says the figure people read is a throughput, whose change is
 * 1 / (1 + rel) - 1 and runs the other way.
 */
static void
entry(const struct changes_ctx *c, const char *va, const char *vb,
    const char *metric, const char *what, const char *unit, int tps,
    const struct estimate *rel, json_t *out)
{
	enum move m = stats_move(rel, c->threshold);
	double v = rel->value, lo = rel->lo, hi = rel->hi;
	int searched = strcmp(metric, c->searched) == 0;
	json_t *o = json_object();

	if (tps) {
		v = 1 / (1 + rel->value) - 1;
		lo = 1 / (1 + rel->hi) - 1;
		hi = 1 / (1 + rel->lo) - 1;
	}
	json_object_set_new(o, "from", json_string(va));
	json_object_set_new(o, "to", json_string(vb));
	json_object_set_new(o, "metric", json_string(metric));
	json_object_set_new(o, "what", json_string(what));
	json_object_set_new(o, "unit", json_string(unit));
	json_object_set_new(o, "change", isfinite(v) ? json_real(v) :
	    json_null());
	json_object_set_new(o, "change_ci", isfinite(lo) && isfinite(hi) ?
	    json_pack("[f,f]", lo, hi) : json_null());
	json_object_set_new(o, "moved", json_string(stats_move_name(m)));
	json_object_set_new(o, "searched", json_boolean(searched));
	/* A slowdown no one searched: the command that does. */
	if (m == MOVE_SLOWER && !searched && strchr(metric, '/') == NULL) {
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "%s bisect --now --metric %s %s %s",
		    c->ctl, metric, c->eng->name, c->range);
		json_object_set_new(o, "bisect", json_string(cmd));
	}
	json_array_append_new(out, o);
}

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

void
changes_pair(const struct changes_ctx *c, const struct release_figs *a,
    const char *va, const struct release_figs *b, const char *vb,
    json_t *out)
{
	const struct conf_engine *eng = c->eng;
	size_t nk = eng->contents.n ? eng->contents.n : 1;
	size_t first = json_array_size(out), i;
	struct estimate rel;
	char metric[96], what[128];
	json_t *x;

	if (a->has_fit && b->has_fit) {
		if (a->fit.per_token_ns.value > 0 && stats_rel_change(
		    &b->fit.per_token_ns, &a->fit.per_token_ns, &rel) == 0)
			entry(c, va, vb, "per-token", "prefill cost per token",
			    "ms/token", 0, &rel, out);
		if (a->fit.fixed_estimable && b->fit.fixed_estimable &&
		    a->fit.fixed_ns.value > 0 && stats_rel_change(
		    &b->fit.fixed_ns, &a->fit.fixed_ns, &rel) == 0)
			entry(c, va, vb, "fixed", "fixed overhead", "ms", 0,
			    &rel, out);
	}
	for (i = 0; i < a->npp && i < b->npp; i++) {
		if (cell_change(&a->pp[i], &b->pp[i], &rel) < 0)
			continue;
		snprintf(metric, sizeof(metric), "pp%d", eng->prompts[i]);
		snprintf(what, sizeof(what), "prefill of %d tokens",
		    eng->prompts[i]);
		entry(c, va, vb, metric, what, "tok/s", 1, &rel, out);
	}
	for (i = 0; i < a->ntg && i < b->ntg; i++) {
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
		entry(c, va, vb, metric, what, "tok/s", 1, &rel, out);
	}
	/* Where the searched metric got slower too, the others are that
	 * regression seen from another cell: no second bisect to run. */
	json_array_foreach(out, i, x)
		if (i >= first && json_is_true(json_object_get(x, "searched")) &&
		    strcmp(json_string_value(json_object_get(x, "moved")),
		    "slower") == 0)
			break;
	if (i < json_array_size(out))
		json_array_foreach(out, i, x)
			if (i >= first)
				json_object_del(x, "bisect");
}
