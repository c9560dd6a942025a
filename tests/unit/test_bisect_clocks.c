/*
 * test_bisect_clocks.c: the GPU clock of a release's runs and whether
 * two sides differ (bisect_release_clock(), bisect_clocks_differ()), on
 * numbers alone.
 */
#include <math.h>
#include <stdint.h>

#include "bisectd/analysis/bisect.h"
#include "check.h"

/* One value per run, whatever its samples: run 1 has three samples at
 * 1400 MHz, runs 2 and 3 one each at 1980; the median run is 1980,
 * where a median of samples would be 1400. */
static void
test_release_clock(void)
{
	struct bisect_sample a[] = {
		{ 10, 1, 0, 1400 }, { 10, 1, 0, 1400 }, { 10, 1, 0, 1400 },
		{ 10, 2, 0, 1980 },
	};
	struct bisect_sample b[] = { { 10, 3, 1, 1980 }, { 10, 4, 0, 0 } };
	struct bisect_release r = { 0, { { a, 4 }, { b, 2 } } };
	struct bisect_release none = { 0, { { b + 1, 1 }, { NULL, 0 } } };

	CHECK_NEAR(bisect_release_clock(&r, 2), 1980, 1e-9);
	/* The first cell alone: runs 1 and 2, the median of two. */
	CHECK_NEAR(bisect_release_clock(&r, 1), 1690, 1e-9);
	/* A run without readings counts for nothing; none: 0. */
	CHECK_NEAR(bisect_release_clock(&none, 2), 0, 0);
}

static void
test_differ(void)
{
	CHECK_INT(bisect_clocks_differ(1980, 1980), 0);
	CHECK_INT(bisect_clocks_differ(1980, 1980 * 1.009), 0);
	CHECK_INT(bisect_clocks_differ(1980, 1980 * 1.011), 1);
	CHECK_INT(bisect_clocks_differ(1980, 1881), 1);	/* 5% slower */
	/* Unknown on a side: nothing to say. */
	CHECK_INT(bisect_clocks_differ(0, 1881), 0);
	CHECK_INT(bisect_clocks_differ(1980, 0), 0);
	CHECK_INT(bisect_clocks_differ(NAN, 1881), 0);
}

int
main(void)
{
	CHECK_CASE(test_release_clock);
	CHECK_CASE(test_differ);
	return check_done();
}
