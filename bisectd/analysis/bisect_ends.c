/*
 * bisect_ends.c: the range's two ends compared run by run (see
 * bisect_int.h): the order their runs are taken in, replayed over the
 * runs stored, and the first state at which the sequential test
 * decides.
 */
#include <math.h>
#include <stdint.h>

#include "bisect.h"
#include "bisect_int.h"

/* The runs stored in every cell of r, at most the cap. */
static int
stored(const struct bisect_release *r, const struct bisect_params *p)
{
	size_t k = bisect_release_runs(r, p, 0);

	return k < (size_t)p->reps_cap ? (int)k : p->reps_cap;
}

/* A per-token cost whose interval reaches zero is too few runs for the
 * noise, not a figure to compare (as for any release, bisect.c), until
 * the cap. */
static int
usable(const struct estimate *e, const struct bisect_params *p, int runs)
{
	return p->metric.kind != BISECT_METRIC_PER_TOKEN || e->lo > 0 ||
	    runs >= p->reps_cap;
}

int
bisect_ends_walk(const struct bisect_release *a,
    const struct bisect_release *b, const struct bisect_params *p,
    struct ends_walk *out)
{
	const struct bisect_release *rel[2] = { a, b };
	struct estimate *e[2] = { &out->ea, &out->eb };
	int have[2] = { stored(a, p), stored(b, p) }, *k[2], cap = p->reps_cap;

	k[0] = &out->ka;
	k[1] = &out->kb;
	out->ka = out->kb = p->reps_initial;
	out->next = SIZE_MAX;
	out->want = 0;
	if (have[0] < p->reps_initial || have[1] < p->reps_initial ||
	    bisect_metric_estimate(a, p, 0, (size_t)out->ka, &out->ea) < 0 ||
	    bisect_metric_estimate(b, p, 0, (size_t)out->kb, &out->eb) < 0)
		return -1;
	for (;;) {
		size_t i;
		int to;

		out->outcome = OUTCOME_UNKNOWN;
		if (out->ea.value > 0 && stats_rel_change(&out->eb, &out->ea,
		    &out->rel) == 0)
			out->outcome = stats_seq_change(&out->rel,
			    p->threshold, BISECT_ENDS_ALPHA_DIFF,
			    BISECT_ENDS_ALPHA_SAME);
		else
			out->rel = (struct estimate){ NAN, INFINITY, 1,
			    -INFINITY, INFINITY };
		/* A spread from five runs a side comes out small often
		 * enough to call a real step the same more often than the
		 * bound says: no-regression waits for twice that. */
		if (out->outcome == OUTCOME_SAME && (out->ka < 2 *
		    p->reps_initial || out->kb < 2 * p->reps_initial))
			out->outcome = OUTCOME_UNKNOWN;
		/* An end whose cost per token reaches zero climbs the
		 * ladder first; else the end with fewer runs gets one, the
		 * good one on a tie. */
		if (!usable(&out->ea, p, out->ka) ||
		    !usable(&out->eb, p, out->kb)) {
			i = usable(&out->ea, p, out->ka);
			to = *k[i] * 2 < cap ? *k[i] * 2 : cap;
		} else if (out->outcome != OUTCOME_UNKNOWN)
			return 0;
		else {
			i = *k[0] <= *k[1] && *k[0] < cap ? 0 :
			    *k[1] < cap ? 1 : SIZE_MAX;
			if (i == SIZE_MAX)
				return 0;	/* both at the cap */
			to = *k[i] + 1;
		}
		out->outcome = OUTCOME_UNKNOWN;
		if (have[i] < to) {
			out->next = i;
			out->want = to;
			return 0;
		}
		*k[i] = to;
		if (bisect_metric_estimate(rel[i], p, 0, (size_t)to, e[i]) < 0)
			return -1;
	}
}
