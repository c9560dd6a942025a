/*
 * bisect-sim.c: the bisection's accuracy and cost on synthetic samples,
 * no processes.  A range of releases with one per-token step at a random
 * release; each sample is time = (fixed + per_token * tokens) * (1 + cv * z)
 * with z standard normal.  Prints, per noise level, the share of bisects
 * naming the right release, the releases measured and the runs spent,
 * beside a naive single-sample bisect and a full linear scan on the same
 * samples, and an A/A range (no change anywhere): the share that reports
 * a regression.
 *
 * usage: bisect-sim [-n trials] [-r releases] [-s step] [-c cap,...]
 *                   [-S seed] [-t threshold] [-v cv,...]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bisectd/analysis/bisect.h"

#define FIXED_NS	165e6
#define PER_TOKEN_NS	0.92e6
#define NLENGTHS	2

static const int lengths[NLENGTHS] = { 512, 2048 };

/* The world of one trial: the true line per release and a noise seed. */
struct world {
	size_t n;
	size_t first_bad;	/* SIZE_MAX: no change */
	double step;		/* per-token factor from first_bad on */
	double cv;
	uint64_t seed;
};

struct store {
	struct bisect_release *rel;
	struct bisect_sample *cells;	/* n * NLENGTHS * cap_samples */
	size_t cap_samples;
	size_t runs;
};

static uint64_t
splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static double
uniform01(uint64_t h)
{
	return ((double)(h >> 11) + 0.5) / 9007199254740992.0;
}

/*
 * Sample k of a release's cell, the same whichever method asks for it:
 * counter-based, so the naive bisect, the linear scan and the bisection
 * see identical numbers.
 */
static double
sample_ns(const struct world *w, size_t rel, int cell, int confirm,
    size_t k)
{
	uint64_t h = splitmix64(w->seed ^ splitmix64(rel * 1000003 +
	    (uint64_t)cell * 7919 + (uint64_t)confirm * 104729 + k * 31));
	double u1 = uniform01(h), u2 = uniform01(splitmix64(h));
	double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
	double p = PER_TOKEN_NS * (rel >= w->first_bad ? w->step : 1);

	return (FIXED_NS + p * lengths[cell]) * (1 + w->cv * z);
}

static int
store_init(struct store *s, size_t n, size_t cap_samples)
{
	s->rel = calloc(n, sizeof(*s->rel));
	s->cells = calloc(n * NLENGTHS * cap_samples, sizeof(*s->cells));
	s->cap_samples = cap_samples;
	s->runs = 0;
	if (s->rel == NULL || s->cells == NULL)
		return -1;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < NLENGTHS; c++)
			s->rel[i].cells[c].samples =
			    s->cells + (i * NLENGTHS + c) * cap_samples;
	return 0;
}

static void
store_free(struct store *s)
{
	free(s->rel);
	free(s->cells);
}

static size_t
count(const struct bisect_cell *c, int confirm)
{
	size_t k = 0;

	for (size_t i = 0; i < c->n; i++)
		k += c->samples[i].confirm == confirm;
	return k;
}

static void
add(struct store *s, const struct world *w, size_t rel, int confirm,
    size_t upto)
{
	for (int c = 0; c < NLENGTHS; c++) {
		struct bisect_cell *cell = &s->rel[rel].cells[c];
		struct bisect_sample *smp =
		    s->cells + (rel * NLENGTHS + (size_t)c) * s->cap_samples;

		for (size_t k = count(cell, confirm); k < upto &&
		    cell->n < s->cap_samples; k++) {
			smp[cell->n].time_ns = sample_ns(w, rel, c, confirm, k);
			smp[cell->n].confirm = confirm;
			cell->n++;
			s->runs++;
		}
	}
}

struct outcome_counts {
	size_t right, regression, unknown, none;
	size_t kind_right;	/* right release and kind per-token */
	double measured, runs;
};

/* Run one bisection to its verdict; 1 when it names w->first_bad. */
static int
run_bisect(const struct world *w, const struct bisect_params *p,
    struct outcome_counts *oc)
{
	struct bisect_action act;
	struct bisect_verdict v;
	struct store s;
	size_t measured = 0;
	int right = 0;

	if (store_init(&s, w->n, (size_t)p->reps_cap * 2) < 0) {
		perror("bisect-sim");
		exit(1);
	}
	for (;;) {
		if (bisect_next(s.rel, w->n, p, &act, &v) < 0) {
			fprintf(stderr, "bisect-sim: %s\n", act.error);
			exit(1);
		}
		if (act.kind == BISECT_DONE)
			break;
		if (act.kind == BISECT_MEASURE) {
			add(&s, w, act.release, 0, (size_t)act.reps);
		} else {
			/* interleaved: one of each in turn */
			for (size_t k = 1; k <= (size_t)act.reps; k++) {
				add(&s, w, act.good, 1, k);
				add(&s, w, act.bad, 1, k);
			}
		}
	}
	for (size_t i = 0; i < w->n; i++)
		measured += s.rel[i].cells[0].n > 0;
	switch (v.status) {
	case BISECT_REGRESSION:
		oc->regression++;
		right = v.changes[v.main].first_bad == w->first_bad;
		oc->kind_right += right &&
		    v.changes[v.main].kind == KIND_PER_TOKEN;
		break;
	case BISECT_UNKNOWN:
		oc->unknown++;
		break;
	case BISECT_NO_REGRESSION:
		oc->none++;
		break;
	}
	oc->right += right;
	oc->measured += (double)measured;
	oc->runs += (double)s.runs;
	bisect_verdict_release(&v);
	store_free(&s);
	return right;
}

/* Per-token cost of a release from one sample at each length. */
static double
one_sample_slope(const struct world *w, size_t rel, size_t k)
{
	return (sample_ns(w, rel, 1, 0, k) - sample_ns(w, rel, 0, 0, k)) /
	    (lengths[1] - lengths[0]);
}

/* git-bisect on one sample per release: closer to good or to bad. */
static int
naive_bisect(const struct world *w, struct outcome_counts *oc)
{
	size_t lo = 0, hi = w->n - 1, measured = 2;
	double g = one_sample_slope(w, lo, 0), b = one_sample_slope(w, hi, 0);

	while (hi - lo > 1) {
		size_t m = lo + (hi - lo) / 2;
		double x = one_sample_slope(w, m, 0);

		measured++;
		if (fabs(x - b) < fabs(x - g))
			hi = m;
		else
			lo = m;
	}
	oc->measured += (double)measured;
	oc->runs += (double)(measured * NLENGTHS);
	oc->right += hi == w->first_bad;
	return hi == w->first_bad;
}

/*
 * Every release measured with reps samples; the change point is the
 * split that leaves the least squared error around the two sides' means.
 */
static int
linear_scan(const struct world *w, int reps, struct outcome_counts *oc)
{
	double *x = malloc(w->n * sizeof(*x)), best = INFINITY;
	size_t at = 0;

	if (x == NULL)
		exit(1);
	for (size_t i = 0; i < w->n; i++) {
		double s = 0;

		for (int k = 0; k < reps; k++)
			s += one_sample_slope(w, i, (size_t)k);
		x[i] = s / reps;
	}
	for (size_t c = 1; c < w->n; c++) {
		double ml = 0, mr = 0, sse = 0;

		for (size_t i = 0; i < w->n; i++)
			*(i < c ? &ml : &mr) += x[i];
		ml /= (double)c;
		mr /= (double)(w->n - c);
		for (size_t i = 0; i < w->n; i++) {
			double d = x[i] - (i < c ? ml : mr);

			sse += d * d;
		}
		if (sse < best) {
			best = sse;
			at = c;
		}
	}
	free(x);
	oc->measured += (double)w->n;
	oc->runs += (double)(w->n * (size_t)reps * NLENGTHS);
	oc->right += at == w->first_bad;
	return at == w->first_bad;
}

static void
usage(void)
{
	fprintf(stderr, "usage: bisect-sim [-n trials] [-r releases] "
	    "[-s step] [-c cap,...] [-S seed] [-t threshold] [-v cv,...]\n");
	exit(2);
}

/* Parse "a,b,c" into up to max doubles; returns how many. */
static size_t
parse_list(char *arg, double *out, size_t max)
{
	size_t n = 0;

	for (char *tok = strtok(arg, ","); tok && n < max;
	    tok = strtok(NULL, ","))
		out[n++] = strtod(tok, NULL);
	return n;
}

/* One table block: a noise level at one repetition cap. */
static void
run_setting(const struct bisect_params *p, size_t n, double step, double cv,
    size_t trials, uint64_t seed, int baselines)
{
	struct outcome_counts bis = { 0 }, naive = { 0 }, lin = { 0 };
	struct outcome_counts aa = { 0 };
	double t = (double)trials;

	for (size_t i = 0; i < trials; i++) {
		uint64_t s = splitmix64(seed + i);
		struct world w = { n, 1 + s % (n - 1), step, cv, s };

		run_bisect(&w, p, &bis);
		if (baselines) {
			naive_bisect(&w, &naive);
			linear_scan(&w, p->reps_initial, &lin);
		}

		w.first_bad = SIZE_MAX;
		w.seed = splitmix64(s);
		run_bisect(&w, p, &aa);
	}
	printf("%4.0f%% %5d  %-15s %7.1f%% %7.1f%% %7.1f%% %9.1f %9.1f"
	    "   kind per-token %.1f%%\n",
	    cv * 100, p->reps_cap, "bisect", 100 * bis.right / t,
	    100 * bis.unknown / t, 100 * (t - bis.right - bis.unknown) / t,
	    bis.measured / t, bis.runs / t, 100 * bis.kind_right / t);
	printf("%12s %-15s %7.1f%% regression, %.1f%% unknown, "
	    "%.1f%% no-regression; %.1f runs\n", "", "A/A",
	    100 * aa.regression / t, 100 * aa.unknown / t, 100 * aa.none / t,
	    aa.runs / t);
	fflush(stdout);
	if (!baselines)
		return;
	printf("%12s %-15s %7.1f%% %8s %7.1f%% %9.1f %9.1f\n", "",
	    "naive 1-sample", 100 * naive.right / t, "-",
	    100 * (t - naive.right) / t, naive.measured / t, naive.runs / t);
	printf("%12s %-15s %7.1f%% %8s %7.1f%% %9.1f %9.1f\n", "",
	    "linear scan", 100 * lin.right / t, "-",
	    100 * (t - lin.right) / t, lin.measured / t, lin.runs / t);
}

int
main(int argc, char **argv)
{
	struct bisect_params p;
	double cvs[8] = { 0.05, 0.10, 0.17 }, caps[8] = { 40, 80, 320 };
	double step = 1.25;
	size_t ncv = 3, ncap = 3, trials = 1000, n = 64;
	uint64_t seed = 20260;
	int opt;

	bisect_params_init(&p);
	while ((opt = getopt(argc, argv, "n:r:s:c:S:t:v:")) != -1) {
		switch (opt) {
		case 'n':
			trials = strtoul(optarg, NULL, 10);
			break;
		case 'r':
			n = strtoul(optarg, NULL, 10);
			break;
		case 's':
			step = strtod(optarg, NULL);
			break;
		case 'c':
			ncap = parse_list(optarg, caps, 8);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 10);
			break;
		case 't':
			p.threshold = strtod(optarg, NULL);
			break;
		case 'v':
			ncv = parse_list(optarg, cvs, 8);
			break;
		default:
			usage();
		}
	}
	if (trials == 0 || n < 2 || ncv == 0 || ncap == 0)
		usage();
	p.nlengths = NLENGTHS;
	memcpy(p.lengths, lengths, sizeof(lengths));

	printf("bisect-sim: %zu releases, per-token x%.2f from a random "
	    "release on, fit 512/2048, threshold %.0f%%, reps from %d, "
	    "%zu trials, seed %llu\n", n, step, p.threshold * 100,
	    p.reps_initial, trials, (unsigned long long)seed);
	printf("goal: >= 99%% right at cv <= 10%%, >= 95%% at 17%%; "
	    "<= %d releases measured; A/A regression <= 1%%\n\n",
	    (int)ceil(log2((double)n)) + 3);
	printf("%5s %5s  %-15s %8s %8s %8s %9s %9s\n", "cv", "cap",
	    "method", "right", "unknown", "wrong", "releases", "runs");
	for (size_t ci = 0; ci < ncv; ci++)
		for (size_t k = 0; k < ncap; k++) {
			p.reps_cap = (int)caps[k];
			if (p.reps_cap < p.reps_initial)
				usage();
			run_setting(&p, n, step, cvs[ci], trials,
			    seed + ci * 1000003, k + 1 == ncap);
		}
	return 0;
}
