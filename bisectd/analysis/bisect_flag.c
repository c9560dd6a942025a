/*
 * bisect_flag.c: the yes/no bisection of a property known exactly once
 * a release is measured (see bisect.h, bisect_flag_next()).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bisect.h"

int
bisect_flag_next(const enum flag_state *states, size_t n,
    struct flag_step *out, const char **why)
{
	size_t lo = 0, hi, mid, best = SIZE_MAX, dist, best_dist = SIZE_MAX;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	if (n < 2) {
		*why = "a range needs two releases";
		return -1;
	}
	if (states[0] != FLAG_GOOD) {
		*why = "the good end of the range is not good";
		return -1;
	}
	if (states[n - 1] == FLAG_SKIP) {
		*why = "the bad end of the range cannot be judged";
		return -1;
	}
	if (states[n - 1] == FLAG_UNKNOWN) {
		out->probe = n - 1;
		return 0;
	}
	if (states[n - 1] == FLAG_GOOD) {
		out->done = 1;
		out->last_good = n - 1;
		out->first_bad = SIZE_MAX;
		out->first_candidate = SIZE_MAX;
		return 0;
	}
	for (hi = 1; states[hi] != FLAG_BAD; hi++)
		;
	for (size_t i = 0; i < hi; i++)
		if (states[i] == FLAG_GOOD)
			lo = i;
	mid = lo + (hi - lo) / 2;
	for (size_t i = lo + 1; i < hi; i++) {
		if (states[i] != FLAG_UNKNOWN)
			continue;
		dist = i > mid ? i - mid : mid - i;
		if (dist < best_dist) {
			best = i;
			best_dist = dist;
		}
	}
	if (best != SIZE_MAX) {
		out->probe = best;
		return 0;
	}
	out->done = 1;
	out->last_good = lo;
	out->first_bad = hi;
	out->first_candidate = lo + 1;
	return 0;
}
