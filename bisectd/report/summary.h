/*
 * summary.h: what a report shows of each release's runs (its figures:
 * cells, fit, failed runs, plot points; and the verdict's run values),
 * computed from the runs or read back from the summary the store keeps
 * of them (store/summary.c, sql/011_release_summary.sql).  A summary
 * read back gives the same bytes as the runs: a new one is read back
 * the same way before it is used.
 */
#ifndef BISECTD_SUMMARY_H
#define BISECTD_SUMMARY_H

#include "bisectd/analysis/bisect.h"
#include "bisectd/analysis/stats.h"
#include "config/conf.h"
#include "fetch/sha256.h"
#include "bisectd/search/range.h"
#include "store/store.h"

struct err;

/* A cell of a release as its entry shows it. */
struct cellsum {
	struct cell_stats st;	/* of the run values: runs are the unit */
	struct run_stats runs;
	int ok;
	int busy, lower_bound;
	int throttled;		/* runs left out: the GPU throttled */
	/* The boundary's interleaved confirmation runs, apart: taken
	 * later, beside another release, they describe the comparison,
	 * not the release's first measurement, and set none of its flags. */
	struct run_stats confirm;
	int confirm_ok;
};

/*
 * The store's query of every cell a release's entry reads, made once
 * for the report: the measurement definitions are the same for every
 * release.  tg holds ngen x the content kinds (one when none).
 */
struct report_cells {
	struct store_cell_query pp[CONF_MAX_LENGTHS];
	struct store_cell_query fit[CONF_MAX_LENGTHS];
	struct store_cell_query *tg;	/* malloced */
};

int report_cells_init(const struct conf_engine *eng, const char *wsha,
    const char *hw, struct report_cells *rc, struct err *e);

/* A release's GPU figures over its analysed runs in the report's cells
 * (docs/gpu.md); runs and throttled both 0: none to show. */
struct release_gpu {
	int runs;		/* analysed runs with GPU readings */
	int throttled;		/* runs left out: the GPU throttled */
	double sm_mhz;		/* the median of their SM clocks */
	int64_t mem_peak;	/* the most memory above the baseline, bytes;
				   -1: not read */
	struct cell_stats mem;	/* of each run's peak; n 0: none read */
	/* Per prompt length of the engine, over its runs with an energy
	 * figure (energy_runs of them): the median joules of a run, and of
	 * prompt tokens (times the run's samples) per joule. */
	double energy_j[CONF_MAX_LENGTHS], tokens_per_j[CONF_MAX_LENGTHS];
	int energy_runs[CONF_MAX_LENGTHS];
};

/* What a release's entry shows of its runs, the part kept in its
 * summary: the report's release_json() makes the entry of it. */
struct release_figs {
	struct cellsum *pp, *tg;	/* eng's prompts, gens x contents;
					 * malloced */
	size_t npp, ntg;
	int has_fit;
	struct fit fit;			/* fixed_why points into why */
	char why[256];
	int has_metric;
	struct estimate metric;		/* the verdict's metric of it */
	struct store_failed_run *failed;	/* malloced, as the runs' */
	size_t nfailed;
	struct release_gpu gpu;
	/* The plot's points: per prompt length, its run values. */
	double *points[CONF_MAX_LENGTHS];	/* malloced */
	size_t npoints[CONF_MAX_LENGTHS];
};

/* A release's figures as a summary keeps them; both malloced. */
struct summary_bytes {
	void *entry, *plot;		/* plot NULL: not asked for */
	size_t entry_len, plot_len;
};

/*
 * Each release's figures and verdict data: what summary_load() gives.
 * The figures stay as the summary's bytes, a fraction of their size
 * decoded, until summary_figs() decodes one release's.
 */
struct report_summaries {
	struct summary_bytes *figs;	/* per release; malloced */
	int *runs_fail;			/* per release: judge_runs_fail() */
	struct range_data d;		/* for judge_range_data() */
};


/*
 * The summaries' config key: a hash of everything but the runs that a
 * summary is computed from: the code, the cells read and their
 * definitions (which hold the command, parser and clock), the lengths,
 * the noise limit, the bisection's parameters p and their cells pq
 * (range_cell_queries()).
 */
int summary_config(const struct conf_engine *eng, const struct bisect_params *p,
    const struct report_cells *qc, const struct store_cell_query *pq,
    char hex[SHA256_HEX_LEN + 1], struct err *e);

/*
 * The figures and verdict data of releases ids[0..n-1] (a range's, in
 * order): from the summaries kept under k for their runs' present
 * state, the others computed from the runs and kept when the store can
 * be written (k->config NULL: none read, none kept).  plot: with the
 * plot points.  Returns 0 with *out filled (free with
 * summary_release()), 1 when a kept summary cannot be read back (ask
 * again with k->config NULL), or -1 with e set.
 */
int summary_load(struct store *s, const struct store_summary_key *k,
    const int64_t *ids, size_t n, int plot, const struct report_cells *qc,
    const struct conf_engine *eng, const struct bisect_params *p,
    const struct store_cell_query *pq, struct report_summaries *out,
    struct err *e);
void summary_release(struct report_summaries *x, size_t n);

/*
 * The figures of release i of x into *f (free with summary_figs_release()):
 * summary_load() decoded each once already, so this fails only for want
 * of memory.  Returns 0 or -1.
 */
int summary_figs(const struct report_summaries *x, size_t i,
    const struct conf_engine *eng, struct release_figs *f);
/* The process runs of a release's cell, its own (its confirmation runs
 * left out), one value each (stats_run_values(), the mean of a run's
 * samples): *out malloced, NULL with *n 0 when it has none, cell NULL
 * included.  -1 when memory runs out. */
int report_own_run_values(const struct store_cell_runs *cell, double **out,
    size_t *n);

void summary_figs_release(struct release_figs *f);

/*
 * One release's figures computed from its runs as a report's entry
 * shows them (bench prints its fit so): free with
 * summary_figs_release().  Returns 0 or -1 with e set.
 */
int summary_release_figs(struct store *s, const struct conf_engine *eng,
    int64_t release_id, const char *wsha, const char *hw,
    struct release_figs *f, struct err *e);

#endif
