/*
 * serve.h: what a serve run measured beside its figures (sql/014's
 * serve_run), and a release's serve runs read back for the report.
 */
#ifndef STORE_SERVE_H
#define STORE_SERVE_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct store;

/* The figures a serve run stores as its samples, idx 0 to this - 1
 * (config's enum conf_serve_figure). */
#define STORE_SERVE_FIGURES	12

/* Failed requests by type, in the order of the table's columns. */
enum store_serve_error { SERVE_REFUSED, SERVE_TIMEOUT, SERVE_TRUNCATED,
	SERVE_HTTP, SERVE_STREAM, SERVE_TRANSPORT, SERVE_NERRORS };

struct store_serve_run {
	int64_t run_id;
	char *profile;		/* JSON; malloced when read back */
	int requests, ok;
	int errors[SERVE_NERRORS];
	/* -1 / NAN when no request completed. */
	int64_t duration_ns;
	double req_per_s, out_tok_per_s, goodput_per_s, goodput_share;
	int64_t lag_p50_ns, lag_p99_ns, lag_max_ns;
	int lag_over;		/* the client set the pace */
};

/* Store r beside its run (store_run_insert()'s, in the same
 * transaction of the caller's). */
int store_serve_insert(struct store *s, const struct store_serve_run *r,
    struct err *e);

/* A serve run of a release as the report reads it. */
struct store_serve_row {
	struct store_serve_run run;
	int failed;		/* the run failed (its failure is the
				 * run's) */
	double figure_ns[STORE_SERVE_FIGURES];	/* NAN: none */
};

struct store_serve_rows {
	struct store_serve_row *v;	/* malloced, oldest first */
	size_t n;
};

/* The measured (not warm-up) serve runs of a release under the
 * definition key.  0, or -1 with e set. */
int store_serve_list(struct store *s, int64_t release_id,
    const char *definition, struct store_serve_rows *out, struct err *e);
void store_serve_rows_release(struct store_serve_rows *r);

#endif
