/*
 * test_changepoint.c: change points over simulated histories: a step up
 * and back down five releases later, a slide, unchanged releases with
 * per-process offsets and bursts of slow runs, and the bounds.
 */
#include <math.h>

#include "check.h"
#include "bisectd/analysis/changepoint.h"

#define RUNS	5
#define MAXREL	200

/* A history of n releases, RUNS runs each: release i costs level[i]
 * times a lognormal per-process offset of CV cv, and one run in 50 is a
 * 3x slow burst. */
struct history {
	double v[MAXREL][RUNS];
	struct cp_release r[MAXREL];
	size_t n;
};

static void
simulate(struct history *h, const double *level, size_t n, double cv,
    uint64_t seed)
{
	double sigma = sqrt(log(1 + cv * cv));
	uint64_t s = seed;

	h->n = n;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < RUNS; k++) {
			h->v[i][k] = 1e6 * level[i] * exp(sigma *
			    check_normal(&s));
			/* P(Z > 2.054) = 2%. */
			if (check_normal(&s) > 2.054)
				h->v[i][k] *= 3;
		}
		h->r[i].runs = h->v[i];
		h->r[i].n = RUNS;
	}
}

static size_t
detect(const struct history *h, struct cp_result *res)
{
	struct cp_params p;

	cp_params_init(&p);
	CHECK_INT(cp_detect(h->r, h->n, &p, res), 0);
	if (getenv("CP_VERBOSE"))
		for (size_t i = 0; i < res->n; i++)
			fprintf(stderr, "  at %zu %s %+.3f [%+.3f, %+.3f] "
			    "p %.3g slide %d\n", res->v[i].at, res->v[i].up ?
			    "up" : "down", res->v[i].rel.value,
			    res->v[i].rel.lo, res->v[i].rel.hi, res->v[i].p,
			    res->v[i].slide);
	return res->n;
}

/* +25% from release 12 on, back at 17: the ends agree, the history
 * does not. */
static void
test_step_up_down(void)
{
	static struct history h;
	double level[30];
	size_t exact = 0, covered = 0;

	for (size_t i = 0; i < 30; i++)
		level[i] = i >= 12 && i < 17 ? 1.25 : 1;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct cp_result res;

		simulate(&h, level, 30, 0.10, seed);
		detect(&h, &res);
		if (res.n == 2 && res.v[0].at == 12 && res.v[0].up &&
		    res.v[1].at == 17 && !res.v[1].up &&
		    res.v[0].slide == 0 && res.v[1].slide == 0)
			exact++;
		/* The intervals of the sizes: +25% up, -20% down. */
		if (res.n == 2) {
			covered += res.v[0].rel.lo < 0.25 &&
			    res.v[0].rel.hi > 0.25;
			covered += res.v[1].rel.lo < -0.20 &&
			    res.v[1].rel.hi > -0.20;
		}
		if (seed == 1) {
			CHECK_INT(res.n, 2);
			CHECK_INT(res.v[0].at, 12);
			CHECK_INT(res.v[0].up, 1);
			CHECK_INT(res.v[1].at, 17);
			CHECK_INT(res.v[1].up, 0);
			CHECK(res.v[0].rel.lo > 0.10 && res.v[0].rel.hi < 0.40);
			CHECK(res.v[1].rel.hi < -0.10 && res.v[1].rel.lo > -0.30);
			CHECK(res.v[0].p <= CP_ALPHA && res.v[1].p <= CP_ALPHA);
			CHECK_INT(res.v[0].from, 0);
			CHECK_INT(res.v[0].to, 17);
			CHECK_INT(res.v[1].from, 12);
			CHECK_INT(res.v[1].to, 30);
		}
	}
	/* Five releases of +25% stand about five of a release's standard
	 * errors out: all but a rare seed find both exactly. */
	CHECK(exact >= 36);
	/* 95% intervals: about 76 of the 80 hold the step's size. */
	CHECK(covered >= 68);
	if (getenv("CP_VERBOSE"))
		fprintf(stderr, "exact %zu of 40, covered %zu of 80\n", exact,
		    covered);
}

/* Ten releases each 5% dearer than the one before, between flat
 * stretches: change points spread over the slide, all up, numbered as
 * one slide. */
static void
test_slide(void)
{
	static struct history h;
	double level[40];
	size_t inside = 0, slides = 0;

	for (size_t i = 0; i < 40; i++)
		level[i] = pow(1.05, i < 15 ? 0 : i < 25 ? (double)(i - 14) :
		    10);
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct cp_result res;
		int ok = 1;

		simulate(&h, level, 40, 0.10, seed);
		detect(&h, &res);
		for (size_t i = 0; i < res.n; i++)
			if (!res.v[i].up || res.v[i].at < 14 ||
			    res.v[i].at > 25)
				ok = 0;
		inside += ok && res.n >= 2;
		slides += res.nslides == 1 && res.n >= 2 &&
		    res.v[0].slide == 1 && res.v[res.n - 1].slide == 1;
	}
	/* A seed may find one step in it, or a false point beside it. */
	if (getenv("CP_VERBOSE"))
		fprintf(stderr, "inside %zu, slides %zu of 20\n", inside,
		    slides);
	CHECK(inside >= 15);
	CHECK(slides >= 14);
}

/* Unchanged releases: offsets, lognormal noise and 3x bursts give
 * change points at about CP_ALPHA per history, not one in ten. */
static void
test_unchanged(void)
{
	static struct history h;
	double level[MAXREL];
	size_t found = 0, histories = 100;

	for (size_t i = 0; i < MAXREL; i++)
		level[i] = 1;
	for (uint64_t seed = 1; seed <= histories; seed++) {
		struct cp_result res;

		simulate(&h, level, 60, 0.10, 1000 + seed);
		found += detect(&h, &res);
	}
	/* 1% per history expected; 5 of 100 has odds below 0.4%. */
	CHECK(found <= 4);
}

/* A step down is found as down, with a negative change. */
static void
test_step_down(void)
{
	static struct history h;
	double level[24];
	struct cp_result res;

	for (size_t i = 0; i < 24; i++)
		level[i] = i < 10 ? 1 : 0.8;
	simulate(&h, level, 24, 0.10, 7);
	CHECK_INT(detect(&h, &res), 1);
	CHECK_INT(res.v[0].at, 10);
	CHECK_INT(res.v[0].up, 0);
	CHECK(res.v[0].rel.hi < 0 && res.v[0].rel.lo < -0.2 + 0.08);
}

/* The same seed, the same answer; another seed may only move p. */
static void
test_seeded(void)
{
	static struct history h;
	double level[30];
	struct cp_result a, b;
	struct cp_params p;

	for (size_t i = 0; i < 30; i++)
		level[i] = i >= 12 && i < 17 ? 1.25 : 1;
	simulate(&h, level, 30, 0.10, 3);
	cp_params_init(&p);
	p.seed = 42;
	CHECK_INT(cp_detect(h.r, h.n, &p, &a), 0);
	CHECK_INT(cp_detect(h.r, h.n, &p, &b), 0);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
}

static void
test_bounds(void)
{
	double ok[3] = { 1, 2, 3 }, nan_[2] = { 1, NAN }, neg[2] = { 1, -1 };
	double zero[2] = { 1, 0 };
	struct cp_release r[6];
	struct cp_params p;
	struct cp_result res;

	cp_params_init(&p);
	for (size_t i = 0; i < 6; i++) {
		r[i].runs = ok;
		r[i].n = 3;
	}
	/* Too short to split: none, and "no test" as p 1. */
	CHECK_INT(cp_detect(r, 0, &p, &res), 0);
	CHECK_INT(res.n, 0);
	CHECK_NEAR(res.last_p, 1, 0);
	CHECK_INT(cp_detect(r, 3, &p, &res), 0);
	CHECK_INT(res.n, 0);
	/* Identical releases: no split has any energy. */
	CHECK_INT(cp_detect(r, 6, &p, &res), 0);
	CHECK_INT(res.n, 0);

	res.n = 99;
	CHECK_INT(cp_detect(NULL, 2, &p, &res), -1);
	CHECK_INT(cp_detect(r, 6, NULL, &res), -1);
	CHECK_INT(cp_detect(r, CP_MAX_RELEASES + 1, &p, &res), -1);
	r[2].n = 0;
	CHECK_INT(cp_detect(r, 6, &p, &res), -1);
	r[2].n = 2;
	r[2].runs = nan_;
	CHECK_INT(cp_detect(r, 6, &p, &res), -1);
	r[2].runs = neg;
	CHECK_INT(cp_detect(r, 6, &p, &res), -1);
	r[2].runs = zero;
	CHECK_INT(cp_detect(r, 6, &p, &res), -1);
	r[2].runs = NULL;
	CHECK_INT(cp_detect(r, 6, &p, &res), -1);
	r[2].runs = ok;
	p.alpha = 0;
	CHECK_INT(cp_detect(r, 6, &p, &res), -1);
	p.alpha = 1;
	CHECK_INT(cp_detect(r, 6, &p, &res), -1);
	cp_params_init(&p);
	p.permutations = 10;
	CHECK_INT(cp_detect(r, 6, &p, &res), -1);
	cp_params_init(&p);
	p.alpha = 0.001;	/* no p can reach it at 499 shuffles */
	CHECK_INT(cp_detect(r, 6, &p, &res), -1);
	cp_params_init(&p);
	p.min_segment = 0;
	CHECK_INT(cp_detect(r, 6, &p, &res), -1);
	CHECK_INT(res.n, 99);	/* untouched on failure */
}

int
main(void)
{
	check_tmpdir("changepoint");
	CHECK_CASE(test_step_up_down);
	CHECK_CASE(test_slide);
	CHECK_CASE(test_unchanged);
	CHECK_CASE(test_step_down);
	CHECK_CASE(test_seeded);
	CHECK_CASE(test_bounds);
	return check_done();
}
