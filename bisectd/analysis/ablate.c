/*
 * ablate.c: the verdict of an ablation with a positive control (see
 * ablate.h): each switch against the baseline, the control's test, and
 * the ranking.
 */
#include <math.h>
#include <string.h>

#include "ablate.h"

static const struct fit_cell *
longest(const struct fit_cell *c, size_t n)
{
	const struct fit_cell *l = NULL;

	for (size_t i = 0; i < n; i++)
		if (l == NULL || c[i].tokens > l->tokens)
			l = &c[i];
	return l;
}

/* -x: the removed time from a delta (switched - baseline). */
static void
negate(const struct estimate *x, struct estimate *out)
{
	out->value = -x->value;
	out->se = x->se;
	out->df = x->df;
	out->lo = -x->hi;
	out->hi = -x->lo;
}

/* One switch against the baseline; -1 when its runs cannot be fitted. */
static int
measure(const struct ablate_input *in, const struct ablate_switch_in *s,
    struct ablate_switch_out *o)
{
	const struct fit_cell *bl = longest(in->baseline, in->nbaseline), *sl;
	struct fit_comparison cmp;
	struct cell_stats bs, ss;
	struct estimate bm, sm, ratio;

	if (bl == NULL)
		return -1;
	o->tokens = bl->tokens;
	if ((sl = fit_cell_find(s->cells, s->ncells, bl->tokens)) == NULL ||
	    fit_compare(in->baseline, in->nbaseline, s->cells, s->ncells,
	    NULL, 0, 0, &cmp) < 0 ||
	    fit_ratio(bl->time_ns, bl->n, sl->time_ns, sl->n, &ratio) < 0 ||
	    stats_cell(bl->time_ns, bl->n, &bs) < 0 ||
	    stats_cell(sl->time_ns, sl->n, &ss) < 0)
		return -1;
	stats_mean_estimate(&bs, &bm);
	stats_mean_estimate(&ss, &sm);
	stats_diff(&bm, &sm, &o->runtime_removed_ns);
	o->runtime_removed_rel.value = 1 - ratio.value;
	o->runtime_removed_rel.se = ratio.se;
	o->runtime_removed_rel.df = ratio.df;
	o->runtime_removed_rel.lo = 1 - ratio.hi;
	o->runtime_removed_rel.hi = 1 - ratio.lo;
	negate(&cmp.per_token_delta_ns, &o->per_token_removed_ns);
	negate(&cmp.fixed_delta_ns, &o->fixed_removed_ns);
	o->fixed_estimable = cmp.fixed_estimable;
	o->fixed_why = cmp.fixed_why;
	/* The effect whose interval would clear 0 with ABLATE_POWER: the
	 * 95% half-width plus the power's quantile, in standard errors. */
	o->detectable_rel = (stats_t_quantile(0.5 + STATS_LEVEL / 2,
	    ratio.df) + stats_t_quantile(ABLATE_POWER, ratio.df)) * ratio.se;
	return 0;
}

/* Two switches' runtimes are indistinguishable: the interval of their
 * ratio at the longest length holds 1. */
static int
same_runtime(const struct ablate_input *in, size_t a, size_t b, int tokens)
{
	const struct fit_cell *ca = fit_cell_find(in->switches[a].cells,
	    in->switches[a].ncells, tokens);
	const struct fit_cell *cb = fit_cell_find(in->switches[b].cells,
	    in->switches[b].ncells, tokens);
	struct estimate r;

	if (ca == NULL || cb == NULL ||
	    fit_ratio(ca->time_ns, ca->n, cb->time_ns, cb->n, &r) < 0)
		return 1;
	return r.lo <= 1 && r.hi >= 1;
}

/* Ranked switches first, by the share they remove, largest first; then
 * those with no measurable effect; then the rest, in input order. */
static int
before(const struct ablate_switch_out *a, size_t ia,
    const struct ablate_switch_out *b, size_t ib)
{
	int ga = a->rank > 0 ? 0 : a->effect == EFFECT_NONE ? 1 : 2;
	int gb = b->rank > 0 ? 0 : b->effect == EFFECT_NONE ? 1 : 2;

	if (ga != gb)
		return ga < gb;
	if (ga == 0 && a->runtime_removed_rel.value !=
	    b->runtime_removed_rel.value)
		return a->runtime_removed_rel.value >
		    b->runtime_removed_rel.value;
	return ia < ib;
}

static void
sort_order(struct ablate_result *out)
{
	for (size_t i = 0; i < out->nswitches; i++)
		out->order[i] = i;
	/* Insertion sort: a few dozen switches at most. */
	for (size_t i = 1; i < out->nswitches; i++)
		for (size_t k = i; k > 0; k--) {
			size_t a = out->order[k - 1], b = out->order[k];

			if (!before(&out->sw[b], b, &out->sw[a], a))
				break;
			out->order[k - 1] = b;
			out->order[k] = a;
		}
}

int
ablate_judge(const struct ablate_input *in, struct ablate_result *out)
{
	const struct ablate_switch_out *c;
	size_t controls = 0, pos;

	memset(out, 0, sizeof(*out));
	if (in->nswitches == 0 || in->nswitches > ABLATE_MAX_SWITCHES ||
	    in->nbaseline < 2)
		return -1;
	for (size_t i = 0; i < in->nswitches; i++)
		if (in->switches[i].control) {
			out->control = i;
			controls++;
		}
	if (controls != 1)
		return -1;
	for (size_t i = 0; i < in->nbaseline; i++)
		if (in->baseline[i].n == 0)
			return -1;
	out->nswitches = in->nswitches;
	out->control_min = in->control_min;
	for (size_t i = 0; i < in->nswitches; i++) {
		struct ablate_switch_out *o = &out->sw[i];

		o->name = in->switches[i].name;
		o->control = in->switches[i].control;
		o->detectable_rel = NAN;
		o->effect = measure(in, &in->switches[i], o) < 0 ?
		    EFFECT_UNMEASURED : EFFECT_NOT_JUDGED;
	}
	c = &out->sw[out->control];
	if (c->effect == EFFECT_UNMEASURED) {
		out->status = ABLATE_NO_CONTROL;
		sort_order(out);
		return 0;
	}
	out->control_beyond_noise = c->runtime_removed_rel.lo > 0;
	out->control_enough = c->runtime_removed_rel.value >= in->control_min;
	/* Adding time is judged as removing it is: beyond the noise and by
	 * at least control_min.  A control that adds a little is inert as a
	 * control, and an inert one's interval misses zero below it by
	 * chance one time in forty. */
	if (c->runtime_removed_rel.hi < 0 &&
	    -c->runtime_removed_rel.value >= in->control_min) {
		out->status = ABLATE_CONTROL_ADDS;
		sort_order(out);
		return 0;
	}
	if (!out->control_beyond_noise || !out->control_enough) {
		out->status = ABLATE_INERT;
		sort_order(out);
		return 0;
	}
	out->status = ABLATE_RANKED;
	for (size_t i = 0; i < out->nswitches; i++) {
		struct ablate_switch_out *o = &out->sw[i];

		if (o->effect == EFFECT_UNMEASURED)
			continue;
		o->effect = o->runtime_removed_rel.lo > 0 ? EFFECT_REMOVES :
		    o->runtime_removed_rel.hi < 0 ? EFFECT_ADDS : EFFECT_NONE;
		if (o->effect != EFFECT_NONE)
			o->rank = 1;	/* placed below */
	}
	sort_order(out);
	/* Competition ranks; a switch indistinguishable from the one above
	 * it shares that one's rank. */
	pos = 0;
	for (size_t k = 0; k < out->nswitches; k++) {
		struct ablate_switch_out *o = &out->sw[out->order[k]];

		if (o->rank == 0)
			break;
		pos++;
		if (k > 0 && same_runtime(in, out->order[k - 1], out->order[k],
		    o->tokens))
			o->rank = out->sw[out->order[k - 1]].rank;
		else
			o->rank = (int)pos;
	}
	return 0;
}

const char *
ablate_status_name(enum ablate_status s)
{
	switch (s) {
	case ABLATE_RANKED: return "ranked";
	case ABLATE_INERT: return "inert";
	case ABLATE_CONTROL_ADDS: return "control-adds";
	case ABLATE_NO_CONTROL: return "no-control";
	}
	return "?";
}

const char *
ablate_effect_name(enum ablate_effect e)
{
	switch (e) {
	case EFFECT_REMOVES: return "removes";
	case EFFECT_ADDS: return "adds";
	case EFFECT_NONE: return "none";
	case EFFECT_NOT_JUDGED: return "not-judged";
	case EFFECT_UNMEASURED: return "unmeasured";
	}
	return "?";
}
