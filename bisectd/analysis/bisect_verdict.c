/*
 * bisect_verdict.c: a verdict (see bisect.h): its changes in order, its
 * status and reason decided from what the walk found, its status's name,
 * and what it holds released.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "bisect_int.h"

static int
cmp_change(const void *x, const void *y)
{
	const struct bisect_change *a = x, *b = y;

	return (a->last_good > b->last_good) - (a->last_good < b->last_good);
}

/* The change with the largest slowdown (only confirmed ones when asked),
 * or SIZE_MAX. */
static size_t
largest_change(const struct bisect_verdict *v, int confirmed)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < v->nchanges; i++)
		if ((v->changes[i].confirmed || !confirmed) &&
		    (best == SIZE_MAX || v->changes[i].metric_rel.value >
		    v->changes[best].metric_rel.value))
			best = i;
	return best;
}

void
bisect_verdict_decide(struct bisect_verdict *v)
{
	int any_confirmed;

	v->main = largest_change(v, 1);
	any_confirmed = v->main != SIZE_MAX;
	/* A slide names its largest step when none confirmed. */
	if (!any_confirmed)
		v->main = v->gradual ? largest_change(v, 0) : 0;
	if (v->main == SIZE_MAX)
		v->main = 0;
	if (v->gradual) {
		v->status = BISECT_GRADUAL;
		v->reason = "the slowdown is spread over releases: probes "
		    "lie between their sides, or again and again the pair "
		    "the search arrives at holds only a part of it";
	} else if (any_confirmed) {
		v->status = BISECT_REGRESSION;
		v->reason = v->nchanges > 1 ? "change points found; each "
		    "slowdown's 95% interval lies above half the threshold "
		    "when re-measured interleaved" :
		    "change point found; its slowdown's 95% interval lies "
		    "above half the threshold when re-measured interleaved";
	} else if (v->nchanges > 0) {
		v->status = BISECT_UNKNOWN;
		v->reason = "the boundary did not confirm: re-measured "
		    "interleaved, its slowdown's 95% interval does not lie "
		    "above half the threshold";
	} else if (v->has_unknown) {
		v->status = BISECT_UNKNOWN;
		v->reason = v->unknown_probe == SIZE_MAX ?
		    "the endpoints' sequential test is still undecided "
		    "at the repetition cap (max-reps)" :
		    "a probe still cannot be placed on either side at the "
		    "repetition cap (max-reps)";
	} else {
		v->status = BISECT_NO_REGRESSION;
		v->reason = "the endpoints' sequential test favours no "
		    "slowdown over one past the threshold";
	}
	if (v->status != BISECT_NO_REGRESSION)
		v->detectable_rel = NAN;
	if (v->status != BISECT_UNKNOWN)
		v->more_runs = -1;
	if (v->status == BISECT_REGRESSION || v->status == BISECT_GRADUAL)
		v->runs_used = -1;
}

void
bisect_verdict_sort(struct bisect_verdict *v)
{
	if (v->nchanges > 1)
		qsort(v->changes, v->nchanges, sizeof(v->changes[0]),
		    cmp_change);
}

void
bisect_verdict_release(struct bisect_verdict *v)
{
	for (size_t i = 0; i < v->nchanges; i++)
		free(v->changes[i].candidates);
	free(v->changes);
	free(v->slide.between);
	memset(v, 0, sizeof(*v));
}

const char *
bisect_status_name(enum bisect_status s)
{
	switch (s) {
	case BISECT_REGRESSION:
		return "regression";
	case BISECT_NO_REGRESSION:
		return "no-regression";
	case BISECT_GRADUAL:
		return "gradual";
	case BISECT_UNKNOWN:
		break;
	}
	return "unknown";
}

