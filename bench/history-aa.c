/*
 * history-aa.c: the error rates of the history's change-point detection
 * (bisectd/analysis/changepoint.c), measured on simulated histories
 * with the noise of a real machine: each run its own lognormal
 * per-process offset (CV 10% between runs), 5 samples a run 3% apart
 * within it (summarised per run, the run being the unit), and 2% of
 * runs a 3x slow burst.
 *
 *   false   histories of 200 unchanged releases: the change points
 *           found per history (goal: at most 1), and the share of
 *           histories with any, with its 95% Wilson interval;
 *   power   histories of 30 releases with a +15% step at release 15:
 *           the share where a change point up lies within one release
 *           of it (goal: at least 95%; the bisect over the releases
 *           around a point settles which), the share exactly on it, and
 *           the share of those found that are marked a slide.
 *
 * usage: history-aa [-n trials] [-S seed] [-r releases] [-s step]
 * (bench/history-aa.sh runs it with the defaults: 200 trials.)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bisectd/analysis/changepoint.h"
#include "bisectd/analysis/stats.h"

#define RUNS		5
#define SAMPLES		5
#define MAX_RELEASES	CP_MAX_RELEASES

static uint64_t
next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double
uniform(uint64_t *s)
{
	return ((double)(next_u64(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double
normal(uint64_t *s)
{
	return sqrt(-2 * log(uniform(s))) * cos(2 * M_PI * uniform(s));
}

static double runs[MAX_RELEASES][RUNS];
static struct cp_release hist[MAX_RELEASES];

/* n releases, release i costing level(i) x the noise above. */
static void
simulate(size_t n, size_t step_at, double step, uint64_t *s)
{
	double between = sqrt(log(1 + 0.10 * 0.10));
	double within = sqrt(log(1 + 0.03 * 0.03));

	for (size_t i = 0; i < n; i++) {
		double level = i >= step_at ? 1 + step : 1;

		for (size_t k = 0; k < RUNS; k++) {
			double offset = exp(between * normal(s)), x[SAMPLES];

			if (uniform(s) < 0.02)
				offset *= 3;
			for (size_t j = 0; j < SAMPLES; j++)
				x[j] = 1e6 * level * offset * exp(within *
				    normal(s));
			/* One process: its samples are one run value. */
			stats_run_value(x, SAMPLES, RUN_MEAN, &runs[i][k]);
		}
		hist[i].runs = runs[i];
		hist[i].n = RUNS;
	}
}

/* Wilson's 95% interval of k in n. */
static void
wilson(size_t k, size_t n, double *lo, double *hi)
{
	double z = 1.959964, p = (double)k / (double)n, d = (double)n;
	double mid = (p + z * z / (2 * d)) / (1 + z * z / d);
	double half = z * sqrt(p * (1 - p) / d + z * z / (4 * d * d)) /
	    (1 + z * z / d);

	*lo = fmax(0, mid - half);
	*hi = fmin(1, mid + half);
}

int
main(int argc, char **argv)
{
	size_t trials = 200, releases = 200, found = 0, any = 0, near = 0;
	size_t exact = 0, most = 0, slid = 0;
	double step = 0.15, lo, hi;
	uint64_t seed = 2026, s;
	struct cp_params p;
	int opt;

	while ((opt = getopt(argc, argv, "n:S:r:s:")) != -1)
		switch (opt) {
		case 'n':
			trials = strtoul(optarg, NULL, 10);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 10);
			break;
		case 'r':
			releases = strtoul(optarg, NULL, 10);
			break;
		case 's':
			step = strtod(optarg, NULL);
			break;
		default:
			goto usage;
		}
	if (trials == 0 || releases < 4 || releases > MAX_RELEASES)
		goto usage;
	cp_params_init(&p);
	s = seed;
	for (size_t t = 0; t < trials; t++) {
		struct cp_result res;

		simulate(releases, releases, 0, &s);
		p.seed = next_u64(&s);
		if (cp_detect(hist, releases, &p, &res) < 0) {
			fprintf(stderr, "history-aa: cp_detect failed\n");
			return 1;
		}
		found += res.n;
		any += res.n > 0;
		if (res.n > most)
			most = res.n;
	}
	wilson(any, trials, &lo, &hi);
	printf("history-aa: alpha %g, %d permutations, min segment %d, "
	    "%d runs a release (CV 10%%, 2%% 3x bursts), seed %llu\n",
	    CP_ALPHA, CP_PERMUTATIONS, CP_MIN_SEGMENT, RUNS,
	    (unsigned long long)seed);
	printf("unchanged: %zu histories of %zu releases: %zu false change "
	    "points, %.3f per %zu releases (goal at most 1), most in one %zu; "
	    "histories with any %.1f%% [%.1f%%, %.1f%%]\n", trials, releases,
	    found, (double)found / (double)trials, releases, most,
	    100.0 * (double)any / (double)trials, 100 * lo, 100 * hi);
	for (size_t t = 0; t < trials; t++) {
		struct cp_result res;
		int n1 = 0, n0 = 0, sl = 0;

		simulate(30, 15, step, &s);
		p.seed = next_u64(&s);
		if (cp_detect(hist, 30, &p, &res) < 0) {
			fprintf(stderr, "history-aa: cp_detect failed\n");
			return 1;
		}
		for (size_t i = 0; i < res.n; i++) {
			if (!res.v[i].up)
				continue;
			if (res.v[i].at + 1 >= 15 && res.v[i].at <= 16) {
				n1 = 1;
				sl |= res.v[i].slide != 0;
			}
			n0 |= res.v[i].at == 15;
		}
		near += n1;
		exact += n0;
		slid += sl;
	}
	wilson(near, trials, &lo, &hi);
	printf("step %+.0f%%: %zu histories of 30 releases, step at 15: "
	    "found within one release %.1f%% [%.1f%%, %.1f%%] (goal at least "
	    "95%%)", 100 * step, trials, 100.0 * (double)near /
	    (double)trials, 100 * lo, 100 * hi);
	wilson(exact, trials, &lo, &hi);
	printf(", exactly %.1f%% [%.1f%%, %.1f%%]", 100.0 * (double)exact /
	    (double)trials, 100 * lo, 100 * hi);
	wilson(slid, near ? near : 1, &lo, &hi);
	printf("; of those found, marked a slide %.1f%% [%.1f%%, %.1f%%]\n",
	    near ? 100.0 * (double)slid / (double)near : 0, 100 * lo,
	    100 * hi);
	return 0;
usage:
	fprintf(stderr, "usage: history-aa [-n trials] [-S seed] [-r releases] "
	    "[-s step]\n");
	return 2;
}
