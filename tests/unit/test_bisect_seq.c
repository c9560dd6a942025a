/*
 * test_bisect_seq.c: the sequential probe test (stats_seq_classify()) on
 * seeded runs, and the gradual verdict of the walk on ranges whose
 * change is spread over releases, on numbers alone.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bisectd/analysis/bisect.h"
#include "check.h"

#define MS 1e6
#define NREL 24
#define NRUN 160	/* runs per cell and flag a release can hold */

/* A standard normal from a counter: check_normal() from a state the
 * key alone sets, spread so that near keys share no draw. */
static double
normal(uint64_t key)
{
	uint64_t st = key * 0xd1342543de82ef95ULL;

	return check_normal(&st);
}

/* The mean of n runs of value mu with relative spread cv, as an
 * estimate, the runs drawn from counter base. */
static void
runs_estimate(double mu, double cv, int n, uint64_t base,
    struct estimate *out)
{
	double x[NRUN];
	struct cell_stats cs;

	for (int i = 0; i < n; i++)
		x[i] = mu * (1 + cv * normal(base + (uint64_t)i));
	stats_cell(x, (size_t)n, &cs);
	stats_mean_estimate(&cs, out);
}

/*
 * One probe whose true value is mu, run by run up to cap runs against
 * sides good and bad (each of side_runs runs): the outcome, and the
 * runs it took in *used.
 */
static enum seq_side
run_probe(double mu, double good, double bad, double cv, int side_runs,
    int cap, double alpha, uint64_t seed, int *used)
{
	struct estimate eg, eb, em;
	struct seq_arm g = { &eg, side_runs }, b = { &eb, side_runs }, m;
	enum seq_side got = SEQ_MORE;

	runs_estimate(good, cv, side_runs, seed * 1000, &eg);
	runs_estimate(bad, cv, side_runs, seed * 1000 + 300, &eb);
	for (*used = 2; *used <= cap && got == SEQ_MORE; (*used)++) {
		runs_estimate(mu, cv, *used, seed * 1000 + 600, &em);
		m = (struct seq_arm){ &em, *used };
		got = stats_seq_classify(&m, &g, &b, alpha, NULL);
	}
	(*used)--;
	return got;
}

/* A probe equal to one side, 25% from the other at 5% noise a run, is
 * placed at once: two or three runs, where a 95% interval was asked
 * to clear the midpoint at the ladder's first rung of 5. */
static void
test_seq_early(void)
{
	double llr[3];
	int used, total = 0;
	struct estimate e = { 1, 0.05, 9, 0, 0 };
	struct seq_arm a = { &e, 10 };

	for (uint64_t s = 1; s <= 20; s++) {
		CHECK_INT(run_probe(1.0, 1.0, 1.25, 0.05, 20, 40,
		    BISECT_PROBE_ALPHA, s, &used), SEQ_GOOD);
		total += used;
		CHECK_INT(run_probe(1.25, 1.0, 1.25, 0.05, 20, 40,
		    BISECT_PROBE_ALPHA, s + 100, &used), SEQ_BAD);
		total += used;
		CHECK_INT(run_probe(sqrt(2.0), 1.0, 2.0, 0.05, 20, 40,
		    BISECT_PROBE_ALPHA, s + 200, &used), SEQ_NEITHER);
		CHECK(used <= 4);
	}
	/* the ratio gains about 10 a run against ln(2 / alpha) = 7.6 */
	printf("seq: clear probes placed in %.1f runs on average (40 probes)\n",
	    total / 40.0);
	CHECK(total / 40.0 < 4);

	/* the ratios: a probe at the good side favours G */
	CHECK_INT(stats_seq_classify(&a, &a, &a, 0.01, llr), SEQ_MORE);
	CHECK_NEAR(llr[0], 0, 1e-12);
	/* no spread known, or a value not above zero: more runs */
	e.se = INFINITY;
	CHECK_INT(stats_seq_classify(&a, &a, &a, 0.01, NULL), SEQ_MORE);
	e.se = 0.05;
	e.value = -1;
	CHECK_INT(stats_seq_classify(&a, &a, &a, 0.01, NULL), SEQ_MORE);

	/* Runs that never vary (a peak memory): placed by their values at
	 * once, where a spread of 0 used to ask for runs to the cap. */
	{
		struct estimate g = { 100, 0, 4, 100, 100 };
		struct estimate b = { 200, 0, 4, 200, 200 };
		struct estimate m = { 100, 0, 4, 100, 100 };
		struct seq_arm am = { &m, 5 }, ag = { &g, 5 }, ab = { &b, 5 };

		CHECK_INT(stats_seq_classify(&am, &ag, &ab, 0.001, NULL),
		    SEQ_GOOD);
		m.value = 90;	/* faster than the good side: its side */
		CHECK_INT(stats_seq_classify(&am, &ag, &ab, 0.001, NULL),
		    SEQ_GOOD);
		m.value = 200;
		CHECK_INT(stats_seq_classify(&am, &ag, &ab, 0.001, NULL),
		    SEQ_BAD);
		m.value = 250;
		CHECK_INT(stats_seq_classify(&am, &ag, &ab, 0.001, NULL),
		    SEQ_BAD);
		m.value = 150;
		CHECK_INT(stats_seq_classify(&am, &ag, &ab, 0.001, NULL),
		    SEQ_NEITHER);
		/* a probe of one run (no spread of its own) likewise */
		m.se = INFINITY;
		m.value = 200;
		am.runs = 1;
		CHECK_INT(stats_seq_classify(&am, &ag, &ab, 0.001, NULL),
		    SEQ_BAD);
	}
}

/*
 * The error bound over many seeded probes at alpha = 0.02: a probe like
 * the good side is called bad or neither at most alpha of the time, and
 * one like the bad side good or neither.  Were the cut ln(1/alpha) half
 * as high (the bound wrong by a square root), the errors measured below
 * would be several times alpha.
 */
static void
test_seq_bound(void)
{
	const double alpha = 0.02;
	const int trials = 3000;
	int wrong[2] = { 0, 0 }, open = 0, half = 0, used;
	enum seq_side got;

	for (int t = 0; t < trials; t++) {
		uint64_t s = 5000 + (uint64_t)t;

		/* wrong: decided, and not the probe's side */
		got = run_probe(1.0, 1.0, 1.2, 0.15, 40, 80, alpha, s, &used);
		wrong[0] += got != SEQ_GOOD && got != SEQ_MORE;
		open += got == SEQ_MORE;
		got = run_probe(1.2, 1.0, 1.2, 0.15, 40, 80, alpha,
		    s + 100000, &used);
		wrong[1] += got != SEQ_BAD && got != SEQ_MORE;
		open += got == SEQ_MORE;
		got = run_probe(1.0, 1.0, 1.2, 0.15, 40, 80, sqrt(alpha), s,
		    &used);
		half += got != SEQ_GOOD && got != SEQ_MORE;
	}
	printf("seq: wrong like-good %d, like-bad %d of %d at alpha %.2f "
	    "(%d undecided at 80 runs); at the cut halved %d\n", wrong[0],
	    wrong[1], trials, alpha, open, half);
	CHECK(wrong[0] <= alpha * trials);
	CHECK(wrong[1] <= alpha * trials);
	CHECK(open < trials / 10);
	CHECK(half > alpha * trials);
}

/* The store of a range: per release and cell, runs of one sample. */
struct range {
	struct bisect_release rel[NREL];
	struct bisect_sample smp[NREL][2][2 * NRUN];
	size_t have[NREL][2];	/* runs stored per flag */
	double per_token[NREL];	/* the truth, ms */
	double cv;
	uint64_t seed;
	size_t runs;
};

static const int lens[2] = { 512, 2048 };

static void
range_add(struct range *g, size_t i, int confirm, int upto)
{
	while (g->have[i][confirm] < (size_t)upto &&
	    g->have[i][confirm] < NRUN) {
		size_t k = g->have[i][confirm]++;

		for (int c = 0; c < 2; c++) {
			struct bisect_cell *cell = &g->rel[i].cells[c];
			double t = 165 + g->per_token[i] * lens[c];
			uint64_t h = g->seed * 1000003 + i * 7919 +
			    (uint64_t)c * 131 + (uint64_t)confirm * 17 +
			    k * 100003;

			g->smp[i][c][cell->n] = (struct bisect_sample){
			    t * MS * (1 + g->cv * normal(h)),
			    (int64_t)(i * 100000 + k * 4 + (size_t)c * 2 +
			    (size_t)confirm + 1), confirm, 0 };
			cell->n++;
		}
		g->runs++;
	}
}

/* Drive the walk to its verdict; 0, or -1 on an error. */
static int
range_run(struct range *g, size_t n, const struct bisect_params *p,
    struct bisect_verdict *v)
{
	struct bisect_action act;

	for (int steps = 0; steps < 5000; steps++) {
		if (bisect_next(g->rel, n, p, &act, v) < 0)
			return -1;
		if (act.kind == BISECT_DONE)
			return 0;
		if (act.kind == BISECT_MEASURE)
			range_add(g, act.release, 0, act.reps);
		else {
			range_add(g, act.good, 1, act.reps);
			range_add(g, act.bad, 1, act.reps);
		}
	}
	return -1;
}

static void
range_init(struct range *g, double cv, uint64_t seed)
{
	memset(g, 0, sizeof(*g));
	g->cv = cv;
	g->seed = seed;
	for (size_t i = 0; i < NREL; i++) {
		g->per_token[i] = 0.92;
		for (int c = 0; c < 2; c++)
			g->rel[i].cells[c].samples = g->smp[i][c];
	}
}

static void
params(struct bisect_params *p, int all)
{
	bisect_params_init(p);
	p->nlengths = 2;
	p->lengths[0] = lens[0];
	p->lengths[1] = lens[1];
	p->all = all;
}

/*
 * 16 releases, each of 4..11 making a token 6% dearer (+59% in all):
 * named gradual, over a span that holds the slide, its change per
 * release within its interval, on every seed; and a one-step range of
 * the same length for the runs it takes.
 */
static void
test_slide(void)
{
	static struct range g;
	struct bisect_params p;
	struct bisect_verdict v;
	double runs_slide = 0, runs_step = 0, per = 1.06;
	int named = 0, covered = 0, nseeds = 10;

	params(&p, 0);
	for (int s = 0; s < nseeds; s++) {
		range_init(&g, 0.05, 77 + (uint64_t)s);
		for (size_t i = 4; i < 16; i++)
			g.per_token[i] = 0.92 * pow(1.06, i < 12 ?
			    (double)(i - 3) : 8.0);
		CHECK_INT(range_run(&g, 16, &p, &v), 0);
		if (v.status == BISECT_GRADUAL) {
			const struct bisect_gradual *sl = &v.slide;

			named++;
			CHECK(sl->lo <= 6 && sl->hi >= 9);
			CHECK(sl->lo < sl->hi && sl->hi <= 15);
			CHECK(sl->total_rel.lo > 0.2);
			CHECK(sl->nsteps >= 1);
			covered += sl->per_release_rel.lo <= per - 1 &&
			    per - 1 <= sl->per_release_rel.hi;
			CHECK(sl->per_release_rel.lo <
			    sl->per_release_rel.value &&
			    sl->per_release_rel.value <
			    sl->per_release_rel.hi);
		}
		runs_slide += (double)g.runs;
		bisect_verdict_release(&v);

		range_init(&g, 0.05, 77 + (uint64_t)s);
		for (size_t i = 8; i < 16; i++)
			g.per_token[i] = 0.92 * pow(1.06, 8);
		CHECK_INT(range_run(&g, 16, &p, &v), 0);
		CHECK_INT(v.status, BISECT_REGRESSION);
		runs_step += (double)g.runs;
		bisect_verdict_release(&v);
	}
	printf("slide: gradual %d/%d, per-release interval covers 6%% in "
	    "%d; runs %.0f a slide, %.0f a step\n", named, nseeds, covered,
	    runs_slide / nseeds, runs_step / nseeds);
	/* the spread per release is a mean over the span, which may
	 * reach a release or two outside the slide: most, not all */
	CHECK(named >= nseeds - 1);
	CHECK(covered >= nseeds / 2);
	CHECK(runs_slide <= 2.5 * runs_step);
	CHECK_STR(bisect_status_name(BISECT_GRADUAL), "gradual");
}

/*
 * With `all`, one big step (+40%) inside a slide (releases 4..11, 5%
 * each): the verdict is gradual, and the step a confirmed change point
 * of its own: the slide's pairs that hold a step are searched apart
 * (docs/statistics.md, step 8), so in 10 of these 12 seeds or more
 * (12 seen; before that rule, a third).
 */
static void
test_step_slide(void)
{
	static struct range g;
	struct bisect_params p;
	struct bisect_verdict v;
	int found = 0, nseeds = 12;

	params(&p, 1);
	for (int s = 0; s < nseeds; s++) {
		range_init(&g, 0.04, 300 + (uint64_t)s);
		for (size_t i = 4; i < 16; i++)
			g.per_token[i] = 0.92 * pow(1.05, i < 12 ?
			    (double)(i - 3) : 8.0) * (i >= 8 ? 1.4 : 1);
		CHECK_INT(range_run(&g, 16, &p, &v), 0);
		CHECK_INT(v.status, BISECT_GRADUAL);
		for (size_t i = 0; i < v.nchanges; i++)
			found += v.changes[i].confirmed &&
			    v.changes[i].first_bad == 8;
		bisect_verdict_release(&v);
	}
	printf("step in a slide: the step confirmed in %d/%d\n", found,
	    nseeds);
	CHECK(found >= nseeds - 2);
}

int
main(void)
{
	CHECK_CASE(test_seq_early);
	CHECK_CASE(test_seq_bound);
	CHECK_CASE(test_slide);
	CHECK_CASE(test_step_slide);
	return check_done();
}
