/*
 * changepoint.h: change points in a history of releases, up and down.
 * A bisect looks between two ends; a regression a later release fixed
 * leaves the ends alike, and a slide over weeks shows only as "the ends
 * differ".  This finds both over every release measured, in order.
 *
 * The method is E-divisive means (Matteson and James, 2014), as Apache
 * Otava and MongoDB's CI use it, not PELT: PELT needs a cost model and
 * a penalty whose false-positive rate depends on the noise being what
 * the model says, while E-divisive's permutation test states its own
 * level whatever the shape of the noise (lognormal, bursts, per-process
 * offsets), so "at most one false change point per 200 releases" is a
 * property of CP_ALPHA, not of a model being right.
 *
 * Each release's value is the mean of the logarithms of its run values
 * (the process run is the unit, stats_run_values()), its outlier runs
 * left out first (stats_drop_outliers()): a burst of 3x slow runs moves
 * no release.  The logarithm makes a step up and the same step down
 * back alike.  Over the releases' values, the split that maximises the
 * energy statistic (alpha = 1: absolute differences; the segment after
 * the split may end early, so a step up and back down is one strong
 * split) is tested by permuting the segment's values; when significant
 * at CP_ALPHA it is a change point, and each side is searched again,
 * until a test fails.  A point found is then placed, within CP_REFINE
 * releases, where the step of the means between its neighbours is
 * largest.  At CV 10% and 5 runs a release, a +15% step is placed
 * exactly about 85% of the time and within one release 95%: a bisect
 * over the releases around a point settles which.
 *
 * A slide (a run of small same-sign changes) is marked as such: the
 * search cuts it once or at a few places.  Two change points the same
 * way within CP_SLIDE_WINDOW / 2 + 2 releases are one slide cut twice;
 * a point alone is part of a slide when the releases beside it (up to
 * CP_SLIDE_WINDOW on each side within its segments, the one next to
 * the cut left out) are not at one level, by an F test of their spread
 * against that of the runs inside each (CP_ALPHA / 2 a side), and move
 * its way; beside a step both sides are flat.  Slide points share their
 * slide's number.
 *
 * Pure: numbers in, a struct out; seeded,
 * the same answer on every machine for the same seed.
 */
#ifndef BISECTD_CHANGEPOINT_H
#define BISECTD_CHANGEPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "stats.h"

#define CP_ALPHA		0.01	/* each permutation test's level */
#define CP_PERMUTATIONS		499	/* p resolves to 1 / 500 */
#define CP_MIN_SEGMENT		2	/* releases on each side of a split */
#define CP_SLIDE_WINDOW		8	/* releases a slide's trend is read on */
#define CP_REFINE		2	/* releases a point's place may move */
#define CP_MAX_RELEASES		2000	/* the search's matrix is n^2 */
#define CP_MAX_POINTS		64

/* One release of the history: its run values (costs, > 0), in any order. */
struct cp_release {
	const double *runs;
	size_t n;
};

struct cp_params {
	double alpha;		/* (0, 1) */
	size_t permutations;	/* >= 19 */
	size_t min_segment;	/* >= 1 */
	size_t slide_window;	/* 0: no slides */
	uint64_t seed;		/* the permutations' stream */
};

struct cp_point {
	size_t at;		/* the first release after the change */
	int up;			/* 1: costs more from at on; 0: less */
	/* The change of the mean run value from the segment before to the
	 * segment after (after / before - 1), its 95% interval from the
	 * two segments' runs. */
	struct estimate rel;
	size_t from, to;	/* the segments: [from, at) and [at, to) */
	double stat;		/* the energy statistic of the split */
	double p;		/* the permutation test's p */
	int slide;		/* 0, or its slide's number (1, 2, ...) */
};

struct cp_result {
	struct cp_point v[CP_MAX_POINTS];	/* in release order */
	size_t n;
	size_t nslides;
	/* The test that stopped the search: its p (1 when no segment
	 * could be split), what a reader weighs "none found" by; the last
	 * point's when CP_MAX_POINTS stopped it. */
	double last_p;
};

/* CP_ALPHA, CP_PERMUTATIONS, CP_MIN_SEGMENT, CP_SLIDE_WINDOW, seed 1. */
void cp_params_init(struct cp_params *p);

/*
 * The change points of releases r[0..n-1], in order.  Returns 0 with
 * *out filled (none when n < 2 x min_segment), or -1 when an argument is
 * out of bounds (n > CP_MAX_RELEASES, a release without runs, a run
 * value not finite and positive, params out of range) or memory runs
 * out; *out is untouched then.
 */
int cp_detect(const struct cp_release *r, size_t n, const struct cp_params *p,
    struct cp_result *out);

#endif
