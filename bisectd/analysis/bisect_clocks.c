/*
 * bisect_clocks.c: the GPU clock each side of a comparison ran at (see
 * bisect.h): a side measured at another clock measured another machine.
 */
#include <math.h>
#include <stdlib.h>

#include "bisect.h"

double
bisect_release_clock(const struct bisect_release *r, size_t ncells)
{
	double *v = NULL, m = 0;
	size_t n = 0, total = 0;

	for (size_t c = 0; c < ncells; c++)
		total += r->cells[c].n;
	if (total == 0 || (v = malloc(total * sizeof(*v))) == NULL)
		return 0;
	/* One value per run: its samples are adjacent and share it. */
	for (size_t c = 0; c < ncells; c++) {
		const struct bisect_cell *cell = &r->cells[c];

		for (size_t i = 0; i < cell->n; i++) {
			const struct bisect_sample *x = &cell->samples[i];

			if (i > 0 && x->run != 0 &&
			    x->run == cell->samples[i - 1].run)
				continue;
			if (x->sm_mhz > 0 && isfinite(x->sm_mhz))
				v[n++] = x->sm_mhz;
		}
	}
	if (n == 0 || stats_run_value(v, n, RUN_MEDIAN, &m) < 0)
		m = 0;
	free(v);
	return m;
}

int
bisect_clocks_differ(double good_mhz, double bad_mhz)
{
	return good_mhz > 0 && bad_mhz > 0 &&
	    fabs(bad_mhz / good_mhz - 1) > BISECT_CLOCK_REL;
}
