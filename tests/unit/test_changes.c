/*
 * test_changes.c: what else changed for a serve engine (changes_serve()),
 * on runs made up here: each latency percentile and rate of two
 * releases, the mean over runs with its interval, failed runs and
 * missing figures left out, a goodput that falls to zero still a
 * change, and the goodput only where targets are set.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisectd/report/changes.h"
#include "check.h"
#include "store/serve.h"

#define RUNS 4

/* RUNS runs of a release: every latency ms (times 1 + 1% a run), the
 * rates given; run 0 failed with a latency that would swamp the rest. */
static void
make_rows(struct store_serve_rows *r, struct store_serve_row *v, double ms,
    double req, double good)
{
	memset(v, 0, (RUNS + 1) * sizeof(*v));
	for (int i = 0; i <= RUNS; i++) {
		double k = 1 + 0.01 * i;

		for (int f = 0; f < FIG_N; f++)
			v[i].figure_ns[f] = (i == 0 ? 1000 : 1) * ms * k * 1e6;
		v[i].run.req_per_s = req * k;
		v[i].run.out_tok_per_s = 16 * req * k;
		v[i].run.goodput_per_s = good * k;
	}
	v[0].failed = 1;
	/* One run without an ITL figure (a single token per answer). */
	v[2].figure_ns[FIG_ITL_P50] = NAN;
	r->v = v;
	r->n = RUNS + 1;
}

static const struct metric_change *
find(const struct metric_change *m, size_t n, const char *metric)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(m[i].metric, metric) == 0)
			return &m[i];
	fprintf(stderr, "no change for %s\n", metric);
	return NULL;
}

/* A scheduler that makes every latency 5x and halves the rates, with
 * goodput gone: all slower, rates shown as their own change. */
static void
test_serve_slower(void)
{
	struct conf_engine eng;
	struct store_serve_row va[RUNS + 1], vb[RUNS + 1];
	struct store_serve_rows a, b;
	struct metric_change m[CHANGES_MAX];
	const struct metric_change *x;
	size_t n;

	memset(&eng, 0, sizeof(eng));
	eng.load.slo_ttft_ms = 40;
	make_rows(&a, va, 10, 20, 20);
	make_rows(&b, vb, 50, 10, 0);
	n = changes_serve(&eng, 0.2, &a, &b, m, CHANGES_MAX);
	CHECK_INT((int)n, FIG_N + 3);
	if ((x = find(m, n, "ttft-p90")) != NULL) {
		CHECK_STR(x->what, "time to first token, p90");
		CHECK_STR(x->unit, "ms");
		CHECK_NEAR(x->rel.value, 4, 1e-9);
		CHECK(x->rel.lo < 4 && x->rel.hi > 4);
		CHECK_INT(x->moved, MOVE_SLOWER);
		CHECK_INT(x->bisectable, 1);
		CHECK_INT(x->tps, 0);
	}
	/* The failed run's figures are not in the mean: with them ttft
	 * would be hundreds of times over. */
	if ((x = find(m, n, "e2e-p99")) != NULL)
		CHECK_NEAR(x->rel.value, 4, 1e-9);
	if ((x = find(m, n, "itl-p50")) != NULL)
		CHECK_NEAR(x->rel.value, 4, 1e-9);
	if ((x = find(m, n, "req_per_s")) != NULL) {
		CHECK_NEAR(x->rel.value, -0.5, 1e-9);
		CHECK_INT(x->moved, MOVE_SLOWER);
		CHECK_INT(x->bisectable, 0);
		CHECK_STR(x->unit, "requests/s");
	}
	if ((x = find(m, n, "out_tok_per_s")) != NULL)
		CHECK_STR(x->unit, "tok/s");
	if ((x = find(m, n, "goodput_per_s")) != NULL) {
		CHECK_NEAR(x->rel.value, -1, 1e-9);
		CHECK_INT(x->moved, MOVE_SLOWER);
	}
}

/* The same runs on both sides: every figure unchanged; no targets, no
 * goodput. */
static void
test_serve_unchanged(void)
{
	struct conf_engine eng;
	struct store_serve_row va[RUNS + 1], vb[RUNS + 1];
	struct store_serve_rows a, b;
	struct metric_change m[CHANGES_MAX];
	size_t n;

	memset(&eng, 0, sizeof(eng));
	make_rows(&a, va, 10, 20, 20);
	make_rows(&b, vb, 10, 20, 20);
	n = changes_serve(&eng, 0.2, &a, &b, m, CHANGES_MAX);
	CHECK_INT((int)n, FIG_N + 2);
	for (size_t i = 0; i < n; i++) {
		CHECK_NEAR(m[i].rel.value, 0, 1e-12);
		CHECK_INT(m[i].moved, MOVE_NONE);
	}
	CHECK(find(m, n, "goodput_per_s") == NULL);
	/* No room: no more than max. */
	CHECK_INT((int)changes_serve(&eng, 0.2, &a, &b, m, 3), 3);
}

/* A release whose every run failed has no figure: nothing to compare. */
static void
test_serve_no_runs(void)
{
	struct conf_engine eng;
	struct store_serve_row va[RUNS + 1], vb[RUNS + 1];
	struct store_serve_rows a, b;
	struct metric_change m[CHANGES_MAX];

	memset(&eng, 0, sizeof(eng));
	make_rows(&a, va, 10, 20, 20);
	make_rows(&b, vb, 10, 20, 20);
	for (int i = 0; i <= RUNS; i++)
		vb[i].failed = 1;
	CHECK_INT((int)changes_serve(&eng, 0.2, &a, &b, m, CHANGES_MAX), 0);
}

int
main(void)
{
	CHECK_CASE(test_serve_slower);
	CHECK_CASE(test_serve_unchanged);
	CHECK_CASE(test_serve_no_runs);
	return check_done();
}
