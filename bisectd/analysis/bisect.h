/*
 * bisect.h: the bisection of an ordered release range as a pure state
 * machine.  Given every sample stored so far, bisect_next() returns the
 * one next thing to do (measure a release, confirm a boundary pair) or
 * the verdict.  It keeps no state between calls: the next action is a
 * function of the stored samples alone, so a bisect interrupted anywhere
 * resumes by calling it again, and samples already stored are reused.
 *
 * The process run is the unit of replication: the samples of one run
 * (an engine may print several) are summarised into one value per run,
 * and repetitions, intervals and the ladder count runs.
 *
 * The driver's loop: call bisect_next(); on MEASURE or CONFIRM run only
 * the missing runs, store them, call again; on DONE report.
 * docs/statistics.md explains the decisions and their error rates.
 */
#ifndef BISECTD_BISECT_H
#define BISECTD_BISECT_H

#include <stddef.h>
#include <stdint.h>

#include "fit.h"
#include "stats.h"

#define BISECT_MAX_CELLS FIT_MAX_CELLS

/* The metric a bisect follows; every metric is read as a cost (ns). */
enum bisect_metric_kind {
	BISECT_METRIC_PER_TOKEN,	/* the fit's slope */
	BISECT_METRIC_FIXED,		/* the fit's intercept */
	BISECT_METRIC_PP,		/* mean time of prompt length n (ppN) */
	BISECT_METRIC_TG,		/* mean time of gen length n (tgN) */
	BISECT_METRIC_SERVE,		/* mean of one figure of serve runs
					 * (a latency percentile), the one
					 * cell's; n names the figure */
	BISECT_METRIC_RUN		/* mean of a value each run has, the
					 * one cell's (its peak memory, in
					 * bytes as a cost); n for the caller */
};

struct bisect_metric {
	enum bisect_metric_kind kind;
	int n;			/* the length for PP and TG; SERVE: the
				 * figure, for the caller */
};

struct bisect_sample {
	double time_ns;
	int64_t run;		/* the process run it came from; 0: a run of
				   its own (each sample independent) */
	int confirm;		/* 1: taken in a boundary confirmation */
	double sm_mhz;		/* its run's median GPU SM clock; 0: not
				   read */
};

/* One cell's samples in the order they were stored, the samples of one
 * run adjacent (not owned). */
struct bisect_cell {
	const struct bisect_sample *samples;
	size_t n;
};

struct bisect_release {
	int skipped;	/* could not be downloaded, unpacked or run */
	struct bisect_cell cells[BISECT_MAX_CELLS];	/* [i]: lengths[i] */
};

struct bisect_params {
	struct bisect_metric metric;
	double threshold;	/* smallest relative change that counts: 0.20 */
	/*
	 * The cells measured on every probe.  PER_TOKEN and FIXED: the fit
	 * lengths (two or more prompt lengths).  PP: prompt lengths that
	 * include metric.n.  TG: the single gen length metric.n.  SERVE:
	 * one cell, whose samples are one figure per run.  With two
	 * or more prompt lengths the verdict also carries the fit's deltas
	 * and the kind of change.
	 */
	int lengths[BISECT_MAX_CELLS];
	size_t nlengths;
	int reps_initial;	/* runs per cell at first measurement: 5 */
	int reps_cap;		/* the ladder of runs doubles up to this: 320 */
	int all;		/* find every change point, not only one */
	enum run_summary summary;	/* a run's samples to its one value */
	int keep_outliers;	/* 1: no outlier runs taken out (see
				   BISECT_OUTLIER_RUNS); default 0 */
};

enum bisect_action_kind {
	BISECT_MEASURE,		/* measure release to reps samples per cell */
	BISECT_CONFIRM,		/* re-measure good and bad interleaved */
	BISECT_DONE		/* the verdict is filled in */
};

struct bisect_action {
	enum bisect_action_kind kind;
	/* MEASURE: the level of search runs (confirm = 0) wanted. */
	size_t release;
	/* CONFIRM: the pair, and the level of confirmation runs
	 * (confirm = 1) wanted of each, taken A B A B. */
	size_t good, bad;
	int reps;
	/* The total of runs wanted in each cell at that level
	 * (bisect_cell_runs()): [0] of release (MEASURE) or good
	 * (CONFIRM), [1] of bad.  The driver runs only the missing
	 * ones. */
	int want[2][BISECT_MAX_CELLS];
	/* MEASURE: the releases the search measures next, whichever way
	 * this one turns out (the next probe on either side, the other
	 * end); a hint to fetch them meanwhile.  SIZE_MAX: none. */
	size_t prefetch[2];
	const char *error;	/* static message when bisect_next() fails */
};

enum bisect_status {
	BISECT_NO_REGRESSION,
	BISECT_REGRESSION,	/* also when the culprit is a range */
	BISECT_UNKNOWN,		/* inconclusive, or did not confirm */
	BISECT_GRADUAL		/* a regression spread over releases (a
				   slide); exit code 3 as a regression */
};

/* One change point: the pair of adjacent measured releases around it. */
struct bisect_change {
	size_t last_good, first_bad;	/* release indices */
	/* The releases that may be the first bad one: the skipped releases
	 * between last_good and first_bad, then first_bad; ascending. */
	size_t *candidates;		/* malloced */
	size_t ncandidates;
	int confirmed;
	int in_slide;			/* found inside a slide's range (see
					   struct bisect_gradual) */
	struct estimate metric_rel;	/* first_bad / last_good - 1, search samples */
	struct estimate confirm_rel;	/* the same from confirmation samples;
					   value NAN when none were taken */
	/* From every sample of the pair; has_fit is 0 for a TG metric or a
	 * single prompt length, and the fields below are then unset. */
	int has_fit;
	enum change_kind kind;
	/* 0 when either release's line does not fit (see fit.h): the fixed
	 * delta is then not reported and the kind ignores it. */
	int fixed_estimable;
	const char *fixed_why;		/* static, when not estimable */
	const char *fit_hint;		/* static: what to make of the fixed
					 * part (fit.h's fit_hint()), or NULL */
	struct estimate per_token_delta_ns;
	struct estimate fixed_delta_ns;
	struct length_ratio ratios[BISECT_MAX_CELLS];
	size_t nratios;
	enum ratio_trend trend;
};

/*
 * A slide: a change spread over releases.  The walk finds one when a
 * probe lands between its sides (the sequential test's third outcome,
 * see stats_seq_classify()), or when the adjacent pair it arrives at
 * holds only a part of the change (an end is still known slower than
 * the pair's bad release, or the pair's good release slower than the
 * good end, one-sided at BISECT_SEQ_ALPHA) and so does the pair found
 * when the rest of the range is searched (once only: another step, a
 * change of its own).  Its edges are then
 * bisected: the last release at the good end's level (not known slower
 * than it: the interval of the slowdown reaches zero) and the first at
 * the bad end's.  The slide spreads over releases lo + 1 .. hi.
 */
#define BISECT_SLIDE_STEPS 3

/* A step between consecutive measured releases of a slide. */
struct bisect_slide_step {
	size_t lo, hi;			/* release indices */
	struct estimate rel;		/* hi / lo - 1, search samples */
};

struct bisect_gradual {
	size_t lo, hi;			/* the slide's span: lo is before it */
	size_t *between;		/* the releases measured inside it,
					   ascending; malloced */
	size_t nbetween;
	/* The largest steps between consecutive measured releases of
	 * lo, between[], hi: largest first, at most BISECT_SLIDE_STEPS. */
	struct bisect_slide_step steps[BISECT_SLIDE_STEPS];
	size_t nsteps;
	struct estimate total_rel;	/* hi / lo - 1, search samples */
	/* (1 + total)^(1 / (hi - lo)) - 1 with its interval mapped the
	 * same way: the change per release if it is spread evenly. */
	struct estimate per_release_rel;
};

struct bisect_verdict {
	enum bisect_status status;
	const char *reason;		/* static, one line */
	struct estimate endpoints_rel;	/* BAD / GOOD - 1 on the metric */
	/* Every change point found, ascending; without `all` at most one. */
	struct bisect_change *changes;	/* malloced */
	size_t nchanges;
	size_t main;	/* changes[main] is the one the verdict names: the
			   largest confirmed change (or the first one) */
	/* GRADUAL: the slide.  Its steps are the changes with in_slide set;
	 * a step below the threshold is not confirmed (it is a part of the
	 * slide, not a regression of its own).  With `all`, a step of its
	 * own inside the slide (an adjacent pair whose slowdown lies above
	 * half the threshold one-sided at BISECT_SEQ_ALPHA) is a change
	 * with in_slide 0, confirmed as any, apart from the slide. */
	int gradual;
	struct bisect_gradual slide;
	/* Where an inconclusive comparison stopped the search (the first
	 * such range in `all` mode): releases lo..hi, the probe inside or
	 * SIZE_MAX when it was the endpoints themselves, and the change
	 * measured between lo and hi. */
	int has_unknown;
	size_t unknown_lo, unknown_hi, unknown_probe;
	struct estimate unknown_rel;
	/*
	 * Power.  NO_REGRESSION: the smallest slowdown of the endpoints the
	 * comparison would have found with BISECT_POWER probability at the
	 * runs it used (runs_used per cell of each endpoint).  UNKNOWN: the
	 * further runs per cell of each release of the undecided comparison
	 * that would likely (BISECT_POWER) decide it, if the change measured
	 * so far is the true one (runs_used: the runs it has now).  NAN / -1
	 * where they do not apply; more_runs is also -1 when no number of
	 * runs would likely decide it (a change measured right at the cut).
	 */
	double detectable_rel;
	int runs_used;
	long more_runs;
};

/*
 * Far runs a cell of the bisection may lose even when they are more than
 * a quarter of its runs (cells of 5 to 7 runs, where a probe is often
 * placed): two 3x slow runs among a probe's first five made it 80% slow
 * and put a good release on the bad side.  Two of five or more are
 * still fewer than half, so the median and the deviation that set the
 * fence remain the ordinary runs' (docs/statistics.md, "Outlier runs").
 */
#define BISECT_OUTLIER_RUNS 2

/*
 * The ends' sequential test's error bounds (see stats_seq_change()):
 * equal ends called different (the search then starts, and its boundary
 * must still confirm: an A/A range ends unknown, not a regression), and
 * ends a slowdown of the threshold apart called the same (a wrong
 * no-regression), each at most about this often.  The same is called
 * only from twice the initial runs of each end on.
 */
#define BISECT_ENDS_ALPHA_DIFF 0.005
#define BISECT_ENDS_ALPHA_SAME 0.002

/*
 * The sequential probe test's error bound (see stats_seq_classify()): a
 * probe like one side placed on the other or between, at most this
 * often.  A misplaced probe mostly shows as a pair that holds only a
 * part of the change, or a boundary that does not confirm.
 */
#define BISECT_PROBE_ALPHA 0.001

/*
 * The one-sided bound of the checks around the probes: a probe's runs
 * spread wider than its sides', an end still slower than the pair the
 * search arrived at, a step of its own inside a slide.
 */
#define BISECT_SEQ_ALPHA 0.0003

/*
 * `all`: a pair of consecutive measured releases inside a slide not yet
 * known to hold a step of its own is measured up to this many times the
 * initial runs (at most the cap) before it is taken as a part of the
 * slide.
 */
#define BISECT_STEP_RUNS 32

/* The probability at which power figures are stated. */
#define BISECT_POWER 0.80

/*
 * The smallest slowdown of b over a that a comparison at Welch degrees of
 * freedom df would find with probability BISECT_POWER against threshold
 * (its interval clearing threshold / 2): on the log scale,
 * ln(1 + d) = ln(1 + threshold / 2) + (t.975 + t.80) se(ln b/a).  When b
 * is at or below zero, its standard error is taken at b = a (1 + d)
 * instead of at b.  INFINITY when a is not above zero or a spread is
 * unknown.
 */
double bisect_detectable(const struct estimate *a, const struct estimate *b,
    double threshold, double df);

/*
 * The further runs per release after which a comparison whose estimate
 * lies dist from its cut (on the log scale), with standard error se at
 * runs runs and df degrees of freedom, would likely (BISECT_POWER) clear
 * the cut: the se shrinks as 1 / sqrt(runs).  -1 when no number would
 * (dist 0, or more than a million runs).
 */
long bisect_runs_to_decide(double dist, double se, double df, int runs);

/*
 * Two sides of a comparison whose GPUs ran at median SM clocks further
 * apart than this, relative, measured two machines: the comparison is
 * not confirmed (docs/gpu.md).
 */
#define BISECT_CLOCK_REL 0.01

/* The median over a release's runs in its first ncells cells of their
 * SM clocks (struct bisect_sample.sm_mhz); 0 when none was read. */
double bisect_release_clock(const struct bisect_release *r, size_t ncells);

/* 1 when both clocks are known and apart by more than BISECT_CLOCK_REL. */
int bisect_clocks_differ(double good_mhz, double bad_mhz);

/* Defaults: per-token, 20%, 5 runs up to 320, run means, no lengths,
 * not `all`. */
void bisect_params_init(struct bisect_params *p);

/*
 * Decide the next action for releases[0..n-1], ordered oldest first,
 * releases[0] the known-good end and releases[n-1] the bad end.
 * The range's two ends are compared run by run by a sequential test
 * (stats_seq_change(), see bisect_int.h's ends walk), replayed over the
 * runs stored, so a measurement interrupted half-way gives the same
 * action again.  A probe counts every run: it is placed by the
 * sequential test (stats_seq_classify() at BISECT_PROBE_ALPHA against
 * the pooled sides), one run at a time after its first 5, and a probe
 * between its sides is a slide (struct bisect_gradual).  A boundary is
 * confirmed on interleaved runs looked at one pair at a time up to twice
 * the initial runs, then on the ladder (5, 10, 20, ... 320).
 * On DONE *v is filled and the caller frees it with
 * bisect_verdict_release(); otherwise *v is left empty (releasing it is
 * harmless).  Returns 0, or -1 with act->error set when the parameters
 * are invalid, n < 2, an endpoint is skipped, or memory runs out.
 */
int bisect_next(const struct bisect_release *releases, size_t n,
    const struct bisect_params *p, struct bisect_action *act,
    struct bisect_verdict *v);

void bisect_verdict_release(struct bisect_verdict *v);

/* The report's words: "regression", "no-regression", "unknown",
 * "gradual". */
const char *bisect_status_name(enum bisect_status s);

/*
 * A release's runs per cell at level k: the runs of each cell with the
 * confirm flag that the metric takes when the release is said to have
 * k runs, into count[0 .. p->nlengths - 1].  k in every cell, but in a
 * fit of two lengths beyond the initial runs: there the cell holding the
 * larger part of the metric's spread takes k and the other a share of k
 * in proportion to its part (its weight in the metric times the median
 * of its initial runs), never fewer than the initial runs.  At 512 and
 * 2,048 tokens with a fixed overhead of a quarter of the short cell's
 * time, the short cell takes about a third of the long one's runs.
 */
void bisect_cell_runs(const struct bisect_release *r,
    const struct bisect_params *p, int confirm, size_t k, size_t *count);

/* The highest level whose runs with the flag every cell of r holds. */
size_t bisect_release_runs(const struct bisect_release *r,
    const struct bisect_params *p, int confirm);

/*
 * The metric of one release as a cost estimate (ns) from its runs at
 * level count (bisect_cell_runs(): the first runs of each cell whose
 * confirm flag equals confirm), each run summarised as p->summary says.
 * Returns 0, or -1 when a cell has fewer runs or the fit fails.
 */
int bisect_metric_estimate(const struct bisect_release *r,
    const struct bisect_params *p, int confirm, size_t count,
    struct estimate *out);

/* The metric of one release from every search run of each cell, as a
 * report shows it.  Returns 0, or -1 when a cell has none or the fit
 * fails. */
int bisect_metric_all(const struct bisect_release *r,
    const struct bisect_params *p, struct estimate *out);

/*
 * The yes/no bisection, as git bisect does it for a property that is
 * known exactly once a release is measured (the output canary: the same
 * text as the good end, or not).  No statistics: one measurement per
 * probe, and what it says is final.
 */
enum flag_state {
	FLAG_UNKNOWN,		/* not measured yet */
	FLAG_GOOD,		/* has the good end's property */
	FLAG_BAD,		/* does not */
	FLAG_SKIP		/* cannot be judged (not run, not decided) */
};

struct flag_step {
	int done;		/* 1: the answer below; 0: measure probe */
	size_t probe;
	/* done: last_good, and first_bad (SIZE_MAX when the bad end has
	 * the property: nothing changed).  The releases that may be the
	 * first bad one are the skipped ones after last_good, then
	 * first_bad: indices first_candidate .. first_bad. */
	size_t last_good, first_bad, first_candidate;
};

/*
 * The next step over states[0..n-1], oldest first: states[0] must be
 * FLAG_GOOD.  The bad end is measured first; then the unknown release
 * nearest the middle of the last good and the first bad (the lower on
 * a tie) is probed, skipped releases stepped over.  A good release
 * after a bad one is ignored: the answer is the first change after the
 * last good before it, as git bisect's.  Returns 0, or -1 (with
 * *why static) when n < 2, states[0] is not FLAG_GOOD or the bad end
 * is skipped.
 */
int bisect_flag_next(const enum flag_state *states, size_t n,
    struct flag_step *out, const char **why);

#endif
