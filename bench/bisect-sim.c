/*
 * bisect-sim.c: the bisection's accuracy and cost on synthetic samples,
 * no processes.  A range of releases with one per-token step at a random
 * release, under a choice of noise models, each measured two ways on the
 * same numbers:
 *
 *   runs      the process run is the unit: a run's samples become one
 *             value (mean or median) and the ladder counts runs;
 *             Runs far from the cell's others are taken out
 *             (stats_drop_outliers(); -o keeps them); each cell gets
 *             the runs the action asks of it (the cheaper of the two
 *             fit lengths a share, bisect_cell_runs());
 *   samples   the old estimator: every sample an independent repetition,
 *             the ladder counting samples, the driver asking for
 *             (repetitions - samples) more runs, no outlier rule.
 *
 * Noise models (cv is the between-run spread, cvw the within-run one):
 *   normal   one sample per run, time * (1 + cv z): independent normal;
 *   offset   each run its own offset 1 + cv z, its k samples within cvw;
 *   heavy    lognormal offsets exp(cv z), 2% of runs 3x slow, lognormal
 *            samples within cvw;
 *   drift    offset, and the whole machine slower by 5% at the end of a
 *            bisect (linear in the runs taken; the end is the mean runs
 *            of the same bisect under offset).
 *
 * Shapes of the change (-p), the per-token factor over the releases:
 *   step       x step from a random release on (the default);
 *   slide      from 1 to 1 + 2 (step - 1) over L releases (-l, default
 *              16) from a random one, each adding 2 (step - 1) / L
 *              (+50% in all, 3.1% a release, at the defaults);
 *   stepslide  that slide with one more step of (step - 1) in its
 *              middle (+75% in all), bisected with --all.
 *
 * For each: the share of bisects naming the right answer, unknown and
 * wrong; the runs spent (processes); and on A/A ranges (no change), the
 * share reporting a regression or unknown, alone and in --all mode.
 * Right is the step's release (step); gradual with the slide's span
 * within L / 2 releases of the true one at each end (slide: the first
 * and last few releases of a slide are within the noise of its ends'
 * levels); and stepslide both: gradual and a confirmed change point at
 * the step.  -b also gives the share of bisects with a confirmed change
 * point elsewhere (a right verdict may have one too).
 *
 * usage: bisect-sim [-n trials] [-r releases] [-s step] [-c cap]
 *                   [-S seed] [-t threshold] [-v cv] [-w cvw]
 *                   [-k samples-per-run] [-m model,...] [-e mean|median]
 *                   [-o (keep outlier runs)] [-p shape,...] [-l L]
 *                   [-b (where the runs went: the ends, the probes, the
 *                   confirmation)]
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

/* -b: where a bisect's runs went, under each row. */
static int breakdown;

enum model { MODEL_NORMAL, MODEL_OFFSET, MODEL_HEAVY, MODEL_DRIFT };
static const char *const model_names[] = { "normal", "offset", "heavy",
    "drift" };

enum shape { SHAPE_STEP, SHAPE_SLIDE, SHAPE_STEPSLIDE };
static const char *const shape_names[] = { "step", "slide", "stepslide" };

/* The world of one trial: the true line per release and the noise. */
struct world {
	size_t n;
	size_t first_bad;	/* SIZE_MAX: no change */
	double step;		/* per-token factor from first_bad on */
	enum shape shape;
	size_t len;		/* slide: releases first_bad .. + len - 1 */
	enum model model;
	double cv, cvw;		/* between-run, within-run */
	size_t spr;		/* samples per run */
	double horizon;		/* drift: runs at which the machine is 5% slower */
	uint64_t seed;
};

struct store {
	struct bisect_release *rel;
	struct bisect_sample *cells;	/* n * NLENGTHS * cap_samples */
	size_t *runs_in;		/* runs per release, cell and flag */
	size_t cap_samples;
	size_t runs;			/* processes started */
	size_t ends, confirm;		/* of them: the range's two ends'
					   search runs, confirmation runs */
	int64_t next_id;
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

static double
gauss(uint64_t h)
{
	double u1 = uniform01(h), u2 = uniform01(splitmix64(h));

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* The true per-token factor of release rel. */
static double
factor(const struct world *w, size_t rel)
{
	double d = 2 * (w->step - 1), done;

	if (w->first_bad == SIZE_MAX || rel < w->first_bad)
		return 1;
	if (w->shape == SHAPE_STEP)
		return w->step;
	done = rel - w->first_bad + 1 > w->len ? (double)w->len :
	    (double)(rel - w->first_bad + 1);
	if (w->shape == SHAPE_SLIDE)
		return 1 + d * done / (double)w->len;
	return 1 + d * done / (double)w->len +
	    (rel >= w->first_bad + w->len / 2 ? w->step - 1 : 0);
}

/*
 * Sample j of run k of a release's cell: counter-based, so both
 * estimators see identical numbers; only drift depends on when it is
 * taken (after `taken` runs of the bisect).
 */
static double
sample_ns(const struct world *w, size_t rel, int cell, int confirm,
    size_t k, size_t j, size_t taken)
{
	uint64_t h = splitmix64(w->seed ^ splitmix64(rel * 1000003 +
	    (uint64_t)cell * 7919 + (uint64_t)confirm * 104729 + k * 31));
	double p = PER_TOKEN_NS * factor(w, rel);
	double t = FIXED_NS + p * lengths[cell];
	double zs = gauss(splitmix64(h ^ (0x51ed27ULL + j)));

	switch (w->model) {
	case MODEL_NORMAL:
		return t * (1 + w->cv * gauss(h));
	case MODEL_DRIFT:
		t *= 1 + 0.05 * (double)taken / w->horizon;
		/* FALLTHROUGH */
	case MODEL_OFFSET:
		return t * (1 + w->cv * gauss(h)) * (1 + w->cvw * zs);
	case MODEL_HEAVY:
		t *= exp(w->cv * gauss(h)) * exp(w->cvw * zs);
		return uniform01(splitmix64(h ^ 0xbad)) < 0.02 ? 3 * t : t;
	}
	return t;
}

static int
store_init(struct store *s, size_t n, size_t cap_samples)
{
	s->rel = calloc(n, sizeof(*s->rel));
	s->cells = calloc(n * NLENGTHS * cap_samples, sizeof(*s->cells));
	s->runs_in = calloc(n * NLENGTHS * 2, sizeof(*s->runs_in));
	s->cap_samples = cap_samples;
	s->runs = s->ends = s->confirm = 0;
	s->next_id = 1;
	if (s->rel == NULL || s->cells == NULL || s->runs_in == NULL)
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
	free(s->runs_in);
}

/* What the driver counts as repetitions had in cell c: runs, or (old)
 * samples. */
static size_t
have(const struct store *s, const struct world *w, size_t rel, int c,
    int confirm, int old)
{
	size_t r = s->runs_in[(rel * NLENGTHS + (size_t)c) * 2 +
	    (size_t)confirm];

	return old ? r * w->spr : r;
}

/* One more run of release rel in each cell whose *left is above 0. */
static void
add_run(struct store *s, const struct world *w, size_t rel, int confirm,
    int old, long *left)
{
	for (int c = 0; c < NLENGTHS; c++) {
		struct bisect_cell *cell;
		struct bisect_sample *smp;
		size_t *k;
		int64_t id;

		if (left[c]-- <= 0)
			continue;
		cell = &s->rel[rel].cells[c];
		smp = s->cells + (rel * NLENGTHS + (size_t)c) * s->cap_samples;
		k = &s->runs_in[(rel * NLENGTHS + (size_t)c) * 2 +
		    (size_t)confirm];
		id = s->next_id++;

		for (size_t j = 0; j < w->spr && cell->n < s->cap_samples;
		    j++) {
			smp[cell->n].time_ns = sample_ns(w, rel, c, confirm,
			    *k, j, s->runs);
			smp[cell->n].run = old ? 0 : id;
			smp[cell->n].confirm = confirm;
			cell->n++;
		}
		(*k)++;
		s->runs++;
		s->confirm += confirm != 0;
		s->ends += !confirm && (rel == 0 || rel == w->n - 1);
	}
}

struct outcome_counts {
	size_t right, regression, unknown, none;
	size_t elsewhere;	/* a confirmed change point not at the step */
	double runs, ends, confirm;
};

/* Whether verdict v names the world's change (see the top). */
static int
named_right(const struct world *w, const struct bisect_verdict *v)
{
	size_t lo = w->first_bad - 1, hi = w->first_bad + w->len - 1;
	size_t tol = w->len / 2, step = w->first_bad + w->len / 2;
	int span_ok, step_ok = 0;

	if (w->shape == SHAPE_STEP)
		return v->status == BISECT_REGRESSION && v->nchanges > 0 &&
		    v->changes[v->main].first_bad == w->first_bad;
	if (v->status != BISECT_GRADUAL)
		return 0;
	span_ok = v->slide.lo + tol >= lo && v->slide.lo <= lo + tol &&
	    v->slide.hi + tol >= hi && v->slide.hi <= hi + tol;
	for (size_t i = 0; i < v->nchanges; i++)
		step_ok |= v->changes[i].confirmed &&
		    v->changes[i].first_bad == step;
	return span_ok && (w->shape == SHAPE_SLIDE || step_ok);
}

/* Run one bisection to its verdict, the driver's way for the estimator. */
static void
run_bisect(const struct world *w, const struct bisect_params *p, int old,
    struct outcome_counts *oc)
{
	struct bisect_action act;
	struct bisect_verdict v;
	struct store s;

	if (store_init(&s, w->n, (size_t)p->reps_cap * 4 * w->spr + 8) < 0) {
		perror("bisect-sim");
		exit(1);
	}
	for (;;) {
		long want[2][NLENGTHS], more;
		size_t rel[2];
		int confirm;

		if (bisect_next(s.rel, w->n, p, &act, &v) < 0) {
			fprintf(stderr, "bisect-sim: %s\n", act.error);
			exit(1);
		}
		if (act.kind == BISECT_DONE)
			break;
		/* The missing runs of each cell; a pair interleaved, one
		 * of each in turn. */
		confirm = act.kind == BISECT_CONFIRM;
		rel[0] = confirm ? act.good : act.release;
		rel[1] = confirm ? act.bad : SIZE_MAX;
		for (size_t t = 0; t < 2; t++)
			for (int c = 0; c < NLENGTHS; c++)
				want[t][c] = rel[t] == SIZE_MAX ? 0 :
				    act.want[t][c] - (long)have(&s, w, rel[t],
				    c, confirm, old);
		do {
			more = 0;
			for (size_t t = 0; t < 2; t++) {
				if (rel[t] == SIZE_MAX)
					continue;
				add_run(&s, w, rel[t], confirm, old, want[t]);
				for (int c = 0; c < NLENGTHS; c++)
					more |= want[t][c] > 0;
			}
		} while (more);
	}
	switch (v.status) {
	case BISECT_REGRESSION:
	case BISECT_GRADUAL:
		oc->regression++;
		oc->right += named_right(w, &v);
		break;
	case BISECT_UNKNOWN:
		oc->unknown++;
		break;
	case BISECT_NO_REGRESSION:
		oc->none++;
		break;
	}
	for (size_t i = 0; i < v.nchanges; i++)
		if (v.changes[i].confirmed && w->first_bad != SIZE_MAX &&
		    v.changes[i].first_bad != (w->shape == SHAPE_STEP ?
		    w->first_bad : w->first_bad + w->len / 2)) {
			oc->elsewhere++;
			break;
		}
	oc->runs += (double)s.runs;
	oc->ends += (double)s.ends;
	oc->confirm += (double)s.confirm;
	bisect_verdict_release(&v);
	store_free(&s);
}

static void
usage(void)
{
	fprintf(stderr, "usage: bisect-sim [-n trials] [-r releases] "
	    "[-s step] [-c cap] [-S seed] [-t threshold] [-v cv] [-w cvw] "
	    "[-k samples-per-run] [-m model,...] [-e mean|median] [-o] "
	    "[-p shape,...] [-l L] [-b]\n");
	exit(2);
}

/*
 * One shape, model and estimator: the bisect, A/A and A/A --all rows.
 * The A/A rows do not depend on the shape: *aa and *aall are measured
 * once (when aa->runs is 0) and reused for the other shapes.
 */
static void
run_setting(struct bisect_params *p, struct world *proto, int old,
    size_t trials, uint64_t seed, double *runs_bis, double *runs_aa,
    struct outcome_counts *aa, struct outcome_counts *aall)
{
	struct outcome_counts bis = { 0 };
	double t = (double)trials;
	int keep = p->keep_outliers, do_aa = aa->runs == 0;

	if (old)	/* the old estimator as it was: no outlier rule */
		p->keep_outliers = 1;
	for (size_t i = 0; i < trials; i++) {
		uint64_t s = splitmix64(seed + i);
		struct world w = *proto;

		w.seed = s;
		w.first_bad = w.shape == SHAPE_STEP ? 1 + s % (w.n - 1) :
		    1 + s % (w.n - w.len);
		if (w.model == MODEL_DRIFT)
			w.horizon = runs_bis[old];
		p->all = w.shape == SHAPE_STEPSLIDE;
		run_bisect(&w, p, old, &bis);
		p->all = 0;
		if (!do_aa)
			continue;

		w.first_bad = SIZE_MAX;
		w.seed = splitmix64(s);
		if (w.model == MODEL_DRIFT)
			w.horizon = runs_aa[old];
		run_bisect(&w, p, old, aa);
		p->all = 1;
		run_bisect(&w, p, old, aall);
		p->all = 0;
	}
	p->keep_outliers = keep;
	if (proto->model == MODEL_OFFSET) {
		runs_bis[old] = bis.runs / t;
		runs_aa[old] = aa->runs / t;
	}
	printf("%-9s %-7s %-8s %6.1f%% %6.1f%% %6.1f%% %7.0f  %6.1f%% "
	    "%6.1f%% %6.1f%% %6.1f%% %7.0f\n", shape_names[proto->shape],
	    model_names[proto->model], old ? "samples" : "runs",
	    100 * bis.right / t, 100 * bis.unknown / t,
	    100 * (t - bis.right - bis.unknown) / t, bis.runs / t,
	    100 * aa->regression / t, 100 * aa->unknown / t,
	    100 * aall->regression / t, 100 * aall->unknown / t,
	    aa->runs / t);
	if (breakdown)
		printf("%-9s %-7s %-8s   runs: ends %.0f, probes %.0f, "
		    "confirmation %.0f; A/A ends %.0f; a change point "
		    "confirmed elsewhere %.1f%%\n", "", "", "",
		    bis.ends / t, (bis.runs - bis.ends - bis.confirm) / t,
		    bis.confirm / t, aa->ends / t, 100 * bis.elsewhere / t);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct bisect_params p;
	struct world proto;
	int models[8], nmodels = 0, shapes[3] = { SHAPE_STEP }, nshapes = 0;
	struct outcome_counts aa[4][2], aall[4][2];
	size_t trials = 1000;
	uint64_t seed = 20260;
	char *tok;
	int opt;

	bisect_params_init(&p);
	memset(&proto, 0, sizeof(proto));
	proto.n = 64;
	proto.step = 1.25;
	proto.cv = 0.10;
	proto.cvw = 0.01;
	proto.spr = 5;
	proto.len = 16;
	while ((opt = getopt(argc, argv, "n:r:s:c:S:t:v:w:k:m:e:op:l:b")) !=
	    -1) {
		switch (opt) {
		case 'n':
			trials = strtoul(optarg, NULL, 10);
			break;
		case 'r':
			proto.n = strtoul(optarg, NULL, 10);
			break;
		case 's':
			proto.step = strtod(optarg, NULL);
			break;
		case 'c':
			p.reps_cap = atoi(optarg);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 10);
			break;
		case 't':
			p.threshold = strtod(optarg, NULL);
			break;
		case 'v':
			proto.cv = strtod(optarg, NULL);
			break;
		case 'w':
			proto.cvw = strtod(optarg, NULL);
			break;
		case 'k':
			proto.spr = strtoul(optarg, NULL, 10);
			break;
		case 'm':
			for (tok = strtok(optarg, ","); tok && nmodels < 8;
			    tok = strtok(NULL, ",")) {
				int m;

				for (m = 0; m < 4; m++)
					if (strcmp(tok, model_names[m]) == 0)
						break;
				if (m == 4)
					usage();
				models[nmodels++] = m;
			}
			break;
		case 'o':
			p.keep_outliers = 1;
			break;
		case 'b':
			breakdown = 1;
			break;
		case 'p':
			for (tok = strtok(optarg, ","); tok && nshapes < 3;
			    tok = strtok(NULL, ",")) {
				int m;

				for (m = 0; m < 3; m++)
					if (strcmp(tok, shape_names[m]) == 0)
						break;
				if (m == 3)
					usage();
				shapes[nshapes++] = m;
			}
			break;
		case 'l':
			proto.len = strtoul(optarg, NULL, 10);
			break;
		case 'e':
			if (strcmp(optarg, "median") == 0)
				p.summary = RUN_MEDIAN;
			else if (strcmp(optarg, "mean") != 0)
				usage();
			break;
		default:
			usage();
		}
	}
	if (trials == 0 || proto.n < 2 || proto.spr == 0 ||
	    p.reps_cap < p.reps_initial || proto.len < 2 ||
	    proto.len + 1 >= proto.n)
		usage();
	if (nshapes == 0)
		nshapes = 1;
	if (nmodels == 0)
		for (nmodels = 0; nmodels < 4; nmodels++)
			models[nmodels] = nmodels;
	p.nlengths = NLENGTHS;
	memcpy(p.lengths, lengths, sizeof(lengths));

	printf("bisect-sim: %zu releases, per-token x%.2f from a random "
	    "release on (slides over %zu), fit 512/2048, threshold %.0f%%, runs %d..%d, "
	    "between-run cv %.0f%%, within-run cv %.0f%%, %zu samples per "
	    "run (normal: 1), run %s, %zu trials, seed %llu\n", proto.n,
	    proto.step, proto.len, p.threshold * 100, p.reps_initial, p.reps_cap,
	    proto.cv * 100, proto.cvw * 100, proto.spr,
	    p.summary == RUN_MEDIAN ? "median" : "mean", trials,
	    (unsigned long long)seed);
	printf("goal: >= 99%% right at cv 10%%; A/A regression <= 1%% "
	    "(also --all)\n\n");
	printf("%-9s %-7s %-8s %7s %7s %7s %7s  %7s %7s %7s %7s %7s\n",
	    "shape", "model", "unit", "right", "unknown", "wrong", "runs", "A/A reg", "A/A unk",
	    "all reg", "all unk", "A/A run");
	memset(aa, 0, sizeof(aa));
	memset(aall, 0, sizeof(aall));
	for (int k = 0; k < nshapes; k++) {
		double runs_bis[2] = { 1000, 1000 };
		double runs_aa[2] = { 1000, 1000 };

		for (int i = 0; i < nmodels; i++) {
			struct world w = proto;

			w.shape = (enum shape)shapes[k];
			w.model = (enum model)models[i];
			if (w.model == MODEL_NORMAL)
				w.spr = 1;
			for (int old = 0; old <= 1; old++) {
				/* normal: one sample per run, the same; the
				 * old estimator only on the step */
				if ((w.model == MODEL_NORMAL ||
				    w.shape != SHAPE_STEP) && old)
					continue;
				run_setting(&p, &w, old, trials, seed +
				    (uint64_t)i * 1000003, runs_bis, runs_aa,
				    &aa[w.model][old], &aall[w.model][old]);
			}
		}
	}
	return 0;
}
