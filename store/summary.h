/*
 * summary.h: the per-release figures kept for reports.
 */
#ifndef STORE_SUMMARY_H
#define STORE_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "release_runs.h"

struct err;
struct store;
struct store_release_runs;

/* --- per-release figures kept for reports --- */
/* What a summary was computed under besides the runs. */
struct store_summary_key {
	const char *weights_sha256;
	const char *hw_key;
	const char *config;	/* a hash of every other input */
};

struct store_summary {
	char *stamp;	/* the state of the release's runs; malloced */
	int hit;	/* 1: a summary is kept for stamp (handed to use()) */
	/* Not a hit: the release's runs, read in the stamp's snapshot, and
	 * what the caller computes of them: entry, plot and runs, which
	 * store_summary_release() frees. */
	struct store_release_runs runs_read;
	void *entry;
	size_t entry_len;
	void *plot;
	size_t plot_len;
	void *runs;
	size_t runs_len;
};

/* A summary to keep, or one kept as it is read: computed from the runs
 * read at stamp. */
struct store_summary_row {
	int64_t release_id;
	const char *stamp;
	const void *entry, *plot, *runs;
	size_t entry_len, plot_len, runs_len;
};

/*
 * The summaries kept of release_ids[0..n-1] under k, each handed to
 * use(arg, i, row) as it is read, its bytes the store's until use()
 * returns (nothing is copied); the stamp of each into out[0..n-1]
 * (free each with store_summary_release()); and for each release
 * without a summary kept for its runs as they are, its runs as
 * store_release_runs_read() reads them, all from one snapshot.  plot:
 * also read the plot.  Returns 0; use()'s value when it returns
 * non-zero, which stops the reading; or -1 with e set.  Nothing is
 * left to free unless 0 is returned.
 */
int store_summary_read(struct store *s, const struct store_summary_key *k,
    int plot, const int64_t *release_ids, size_t n,
    struct store_summary *out,
    int (*use)(void *arg, size_t i, const struct store_summary_row *row),
    void *arg, struct err *e);
void store_summary_release(struct store_summary *x);

/*
 * Keep rows[0..n-1] under k, in one transaction, dropping what the
 * same releases kept for older states.  Returns 0; 1 when nothing was
 * kept because the store is read-only or another connection is
 * writing (it does not wait); -1 with e set on an error.
 */
int store_summary_save(struct store *s, const struct store_summary_key *k,
    const struct store_summary_row *rows, size_t n, struct err *e);

/* How many summaries are kept. */
int store_summary_count(struct store *s, int64_t *n, struct err *e);

#endif
