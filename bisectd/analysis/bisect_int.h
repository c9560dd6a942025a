/*
 * bisect_int.h: what the files of the bisection share and nothing else
 * sees: a cell's runs (adjacent samples of one process run) and the
 * index of a prompt length.
 */
#ifndef BISECTD_ANALYSIS_BISECT_INT_H
#define BISECTD_ANALYSIS_BISECT_INT_H

#include <stddef.h>

#include "stats.h"

struct bisect_cell;
struct bisect_params;

/* The runs of cell c with the confirm flag. */
size_t bisect_count_runs(const struct bisect_cell *c, int confirm);

/*
 * The values of the first count runs of cell c with the flag (each run
 * summarised as how says), into out[]; returns how many, or SIZE_MAX
 * when a sample is not finite or memory runs out.
 */
size_t bisect_take_runs(const struct bisect_cell *c, int confirm,
    size_t count, enum run_summary how, double *out);

/*
 * Outlier runs of a cell's values, as the bisection takes them out:
 * stats_drop_outliers(), but up to BISECT_OUTLIER_RUNS of them however
 * few the runs (still fewer than half).  Returns the number kept.
 */
size_t bisect_drop_outliers(double *v, size_t n);

/* NULL when p is valid, else a static message saying what is not. */
const char *bisect_check_params(const struct bisect_params *p);

/* The index of prompt length len in p's lengths, or -1. */
int bisect_length_index(const struct bisect_params *p, int len);

#endif
