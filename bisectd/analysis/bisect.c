/*
 * bisect.c: the bisection state machine (see bisect.h).  Every call
 * replays the whole search from the stored samples: endpoints, probes,
 * change points, confirmations, stopping at the first step whose samples
 * are missing.  Nothing is remembered between calls.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "bisect_int.h"

enum step { STEP_ERR = -1, STEP_GO = 0, STEP_ACT = 1 };

/*
 * A range to examine; its ends are compared first.  SPAN_UNDER: a range
 * beside a pair that holds only a part of the change, or inside a slide
 * (`all`), searched for another step: its ends' change still undecided
 * after a few ladder steps is a part of the slide, and a pair there that
 * again holds only a part searches no further.
 */
enum span_kind { SPAN_TOP, SPAN_UNDER };

struct span {
	size_t a, b;
	enum span_kind kind;
};

struct walk {
	const struct bisect_release *rel;
	size_t n;
	const struct bisect_params *p;
	struct bisect_action *act;
	struct bisect_verdict *v;
	int *reps;		/* usable search runs per cell, per release:
				   every run it has (the range's two ends are
				   compared at the counts of ends below) */
	int *creps;		/* confirmation runs per cell, per release */
	struct estimate *est;	/* the metric at reps[i], once computed */
	unsigned char *have;	/* est[i] is computed */
	struct ends_walk ends;	/* the range's two ends, run by run */
	struct span *todo;	/* ranges still to examine */
	size_t ntodo, maxtodo;
	/*
	 * The first sign of a slide, in search order: the range a..b and
	 * its bracket lo..hi around the probe m found between its sides
	 * (m SIZE_MAX: the pair lo, hi holding only a part of the change).
	 */
	int sign, nbetween, npartial;
	size_t sa, sb, slo, sm, shi;
};

static int
ladder_next(const struct bisect_params *p, int r)
{
	if (r < p->reps_initial)
		return p->reps_initial;
	return r * 2 > p->reps_cap ? p->reps_cap : r * 2;
}

static int
ask_measure(struct walk *w, size_t i, int reps)
{
	w->act->kind = BISECT_MEASURE;
	w->act->release = i;
	w->act->reps = reps;
	w->act->prefetch[0] = w->act->prefetch[1] = SIZE_MAX;
	return STEP_ACT;
}

/* What the search measures after the release it asks for: a hint for
 * the driver, which may fetch them meanwhile (SIZE_MAX: none). */
static int
hint(struct walk *w, int rc, size_t a, size_t b)
{
	if (rc == STEP_ACT && w->act->kind == BISECT_MEASURE) {
		w->act->prefetch[0] = a;
		w->act->prefetch[1] = b;
	}
	return rc;
}

/* Release i has at least reps usable samples, or the action asks for them. */
static int
need(struct walk *w, size_t i, int reps)
{
	return w->reps[i] < reps ? ask_measure(w, i, reps) : STEP_GO;
}

/* Release i's metric from its first count search runs into *e, unless
 * *have says it is there already. */
static int
estimate_once(struct walk *w, size_t i, int count, struct estimate *e,
    unsigned char *have)
{
	if (*have)
		return STEP_GO;
	if (bisect_metric_estimate(&w->rel[i], w->p, 0, (size_t)count,
	    e) < 0) {
		w->act->error = "cannot compute the metric "
		    "(a sample is not finite)";
		return STEP_ERR;
	}
	*have = 1;
	return STEP_GO;
}

/*
 * Release i's metric.  A per-token cost whose interval reaches zero or
 * below ("0.505 [-1.054, 2.063]") is too few runs for this noise, not a
 * figure to compare: more runs are asked for first, up to the cap.
 */
static int
metric(struct walk *w, size_t i, struct estimate **out)
{
	if (estimate_once(w, i, w->reps[i], &w->est[i], &w->have[i]) !=
	    STEP_GO)
		return STEP_ERR;
	if (w->p->metric.kind == BISECT_METRIC_PER_TOKEN &&
	    !(w->est[i].lo > 0) && w->reps[i] < w->p->reps_cap)
		return ask_measure(w, i, ladder_next(w->p, w->reps[i]));
	*out = &w->est[i];
	return STEP_GO;
}

/*
 * An inconclusive comparison of the releases idx[0..k-1]: more samples for
 * the one with the fewest (the first on a tie), unless all are at the cap
 * (then STEP_GO: the caller records the unknown).
 */
static int
more_reps(struct walk *w, const size_t *idx, size_t k)
{
	size_t best = SIZE_MAX;

	for (size_t j = 0; j < k; j++)
		if (w->reps[idx[j]] < w->p->reps_cap &&
		    (best == SIZE_MAX || w->reps[idx[j]] < w->reps[best]))
			best = idx[j];
	if (best == SIZE_MAX)
		return STEP_GO;
	return ask_measure(w, best, ladder_next(w->p, w->reps[best]));
}

static void
note_unknown(struct walk *w, size_t lo, size_t hi, size_t probe,
    const struct estimate *rel, double dist, double se, double df,
    int runs)
{
	if (w->v->has_unknown)
		return;
	w->v->has_unknown = 1;
	w->v->unknown_lo = lo;
	w->v->unknown_hi = hi;
	w->v->unknown_probe = probe;
	w->v->unknown_rel = *rel;
	w->v->runs_used = runs;
	w->v->more_runs = bisect_runs_to_decide(dist, se, df, runs);
}

static int
min_reps(const struct walk *w, const size_t *idx, size_t k)
{
	int r = w->reps[idx[0]];

	for (size_t j = 1; j < k; j++)
		if (w->reps[idx[j]] < r)
			r = w->reps[idx[j]];
	return r;
}

/*
 * b's change relative to a, or an unknown one: against a base at or
 * below zero (a per-token cost fitted that low) no relative change is
 * defined, whatever b is.
 */
static void
rel_or_unknown(const struct estimate *b, const struct estimate *a,
    struct estimate *out)
{
	if (!(a->value > 0) || stats_rel_change(b, a, out) < 0)
		*out = (struct estimate){ NAN, INFINITY, 1, -INFINITY,
		    INFINITY };
}

/* The measured release nearest the middle of (lo, hi), or SIZE_MAX. */
static size_t
pick_probe(const struct walk *w, size_t lo, size_t hi)
{
	size_t mid = lo + (hi - lo) / 2;

	/* Step outward from the middle, lower side first, over skipped
	 * releases, like git bisect skip. */
	for (size_t d = 0; d < hi - lo; d++) {
		if (mid >= lo + 1 + d && !w->rel[mid - d].skipped)
			return mid - d;
		if (mid + d + 1 < hi && !w->rel[mid + d + 1].skipped)
			return mid + d + 1;
	}
	return SIZE_MAX;
}

static int
add_change(struct walk *w, size_t lo, size_t hi, int in_slide)
{
	struct bisect_change *c;

	c = realloc(w->v->changes, (w->v->nchanges + 1) * sizeof(*c));
	if (c == NULL) {
		w->act->error = "out of memory";
		return STEP_ERR;
	}
	w->v->changes = c;
	c = &c[w->v->nchanges++];
	memset(c, 0, sizeof(*c));
	c->last_good = lo;
	c->first_bad = hi;
	c->in_slide = in_slide;
	return STEP_GO;
}

static int
push(struct walk *w, size_t a, size_t b, enum span_kind kind)
{
	if (w->ntodo == w->maxtodo) {
		w->act->error = "too many ranges to examine";
		return STEP_ERR;
	}
	w->todo[w->ntodo++] = (struct span){ a, b, kind };
	return STEP_GO;
}

/* One side of the probes of a range (see stats_pool_add()), and the
 * release placed there last. */
struct pool {
	struct stats_pool s;
	size_t last;
};

static void
pool_add(struct pool *p, size_t i, const struct estimate *e, int runs)
{
	p->last = i;
	stats_pool_add(&p->s, e, runs);
}

/*
 * An undecided probe m: one more run of it, until it has as many as the
 * side with fewer; then one more run of that side's latest release,
 * since the side's uncertainty is what the test lacks.  STEP_GO when
 * all are at the cap.
 */
static int
more_probe(struct walk *w, size_t m, const struct pool *g,
    const struct pool *b)
{
	const struct pool *few = g->s.runs <= b->s.runs ? g : b;
	int cap = w->p->reps_cap;

	if (w->reps[m] < cap && (w->reps[m] < few->s.runs ||
	    w->reps[few->last] >= cap))
		return ask_measure(w, m, w->reps[m] + 1);
	if (w->reps[few->last] < cap)
		return ask_measure(w, few->last, w->reps[few->last] + 1);
	return STEP_GO;
}

/*
 * Where the sequential test places probe m (arm[0] against the sides
 * arm[1], arm[2]).  The test takes one spread for the three, pooled
 * mostly from the sides' many runs.  When m's own runs spread wider (a
 * one-sided F test of its per-run relative variance against the sides',
 * at BISECT_SEQ_ALPHA: far runs the outlier rule cannot take out yet),
 * the place must also hold at m's own spread, taken for the three; else
 * m is measured further (*wild set), until the rule takes those runs
 * out or its spread is the sides' again.
 */
static enum seq_side
place(const struct seq_arm *arm, const struct pool *g, const struct pool *b,
    int *wild)
{
	const struct estimate *em = arm[0].est;
	struct estimate own[2] = { g->s.est, b->s.est };
	struct seq_arm alone[3] = { arm[0], { &own[0], arm[1].runs },
	    { &own[1], arm[2].runs } };
	double sdf = g->s.sdf + b->s.sdf, r, ref;
	enum seq_side got;

	*wild = 0;
	got = stats_seq_classify(&arm[0], &arm[1], &arm[2], BISECT_PROBE_ALPHA,
	    NULL);
	if (got == SEQ_MORE || !(em->value > 0) || !(em->df > 0) ||
	    !(sdf > 0))
		return got;
	r = em->se / em->value;
	ref = (g->s.sv + b->s.sv) / sdf;
	if (!isfinite(r) || !(ref > 0) || 1 - stats_f_cdf(r * r * arm[0].runs /
	    ref, em->df, sdf) >= BISECT_SEQ_ALPHA)
		return got;
	/* Sides without a spread of their own take the probe's. */
	own[0].se = own[1].se = INFINITY;
	if (stats_seq_classify(&alone[0], &alone[1], &alone[2],
	    BISECT_PROBE_ALPHA, NULL) == got)
		return got;
	*wild = 1;
	return SEQ_MORE;
}

/*
 * Narrow *lo..*hi by probes, each placed by the sequential test against
 * the pooled sides.  STEP_GO when no probe is left (*lo and *hi adjacent
 * but for skipped releases), with *between set to a probe found between
 * the sides (else SIZE_MAX), or with *stuck set when a probe is still
 * undecided at the cap (noted as the unknown).
 */
static int
bracket(struct walk *w, size_t *lo, size_t *hi, struct pool *pg,
    struct pool *pb, size_t *between, int *stuck)
{
	size_t m, idx[3];
	int rc, wild;

	*between = SIZE_MAX;
	*stuck = 0;
	while ((m = pick_probe(w, *lo, *hi)) != SIZE_MAX) {
		struct estimate *em, *elo, *ehi, side, rel;
		struct seq_arm arm[3];

		/* Either side of m is probed next, as it turns out. */
		if ((rc = hint(w, need(w, m, w->p->reps_initial),
		    pick_probe(w, m, *hi), pick_probe(w, *lo, m))) != STEP_GO ||
		    (rc = metric(w, m, &em)) != STEP_GO ||
		    (rc = metric(w, *lo, &elo)) != STEP_GO ||
		    (rc = metric(w, *hi, &ehi)) != STEP_GO)
			return rc;
		arm[0] = (struct seq_arm){ em, w->reps[m] };
		arm[1] = (struct seq_arm){ &pg->s.est, pg->s.runs };
		arm[2] = (struct seq_arm){ &pb->s.est, pb->s.runs };
		switch (place(arm, pg, pb, &wild)) {
		case SEQ_GOOD:
			pool_add(pg, m, em, w->reps[m]);
			*lo = m;
			continue;
		case SEQ_BAD:
			pool_add(pb, m, em, w->reps[m]);
			*hi = m;
			continue;
		case SEQ_NEITHER:
			*between = m;
			return STEP_GO;
		case SEQ_MORE:
			break;
		}
		if (wild && w->reps[m] < w->p->reps_cap)
			return ask_measure(w, m, w->reps[m] + 1);
		if ((rc = more_probe(w, m, pg, pb)) != STEP_GO)
			return rc;
		stats_mid_diff(em, elo, ehi, &side);
		idx[0] = m;
		idx[1] = *lo;
		idx[2] = *hi;
		rel_or_unknown(ehi, elo, &rel);
		note_unknown(w, *lo, *hi, m, &rel, fabs(side.value), side.se,
		    side.df, min_reps(w, idx, 3));
		*stuck = 1;
		return STEP_GO;
	}
	return STEP_GO;
}

/* a and b measured to the first rung, or the action that measures
 * them; after the pair, the probe between them. */
static int
need_pair(struct walk *w, size_t a, size_t b)
{
	int rc = hint(w, need(w, a, w->p->reps_initial), b,
	    pick_probe(w, a, b));

	if (rc != STEP_GO)
		return rc;
	return hint(w, need(w, b, w->p->reps_initial), pick_probe(w, a, b),
	    SIZE_MAX);
}

/* a and b measured to the first rung, their metrics, and b's change
 * relative to a; or the action that measures them. */
static int
pair_rel(struct walk *w, size_t a, size_t b, struct estimate **ea,
    struct estimate **eb, struct estimate *rel)
{
	int rc;

	if ((rc = need_pair(w, a, b)) != STEP_GO ||
	    (rc = metric(w, a, ea)) != STEP_GO ||
	    (rc = metric(w, b, eb)) != STEP_GO)
		return rc;
	rel_or_unknown(*eb, *ea, rel);
	return STEP_GO;
}

/* The range's two ends compared run by run (bisect_ends_walk()): their
 * metrics and b's change at the state it stopped at, and its outcome;
 * or the action that measures the initial runs. */
static int
ends(struct walk *w, struct estimate **ea, struct estimate **eb,
    struct estimate *rel, enum outcome *out)
{
	int rc;

	if ((rc = need_pair(w, 0, w->n - 1)) != STEP_GO)
		return rc;
	if (bisect_ends_walk(&w->rel[0], &w->rel[w->n - 1], w->p,
	    &w->ends) < 0) {
		w->act->error = "cannot compute the metric "
		    "(a sample is not finite)";
		return STEP_ERR;
	}
	*ea = &w->ends.ea;
	*eb = &w->ends.eb;
	*rel = w->ends.rel;
	*out = w->ends.outcome;
	return STEP_GO;
}

/*
 * Whether b is off a's level, slower: STEP_GO with *yes set when its
 * slowdown's interval lies above zero, not set when it lies below half
 * the threshold, or the action that measures them further.  At a
 * slide's edge the change is small by nature, so only a few ladder
 * steps are spent (4 x the initial runs): a change still undecided then
 * is taken as at the level.
 */
static int
known_slower(struct walk *w, size_t a, size_t b, int *yes)
{
	struct estimate *ea, *eb, rel;
	size_t idx[2] = { a, b };
	int rc;

	*yes = 0;
	if (a == b)
		return STEP_GO;
	if ((rc = pair_rel(w, a, b, &ea, &eb, &rel)) != STEP_GO)
		return rc;
	if (rel.lo > 0) {
		*yes = 1;
		return STEP_GO;
	}
	if (rel.hi < w->p->threshold / 2 ||
	    min_reps(w, idx, 2) >= 4 * w->p->reps_initial)
		return STEP_GO;
	return more_reps(w, idx, 2);
}

/*
 * Whether b is slower than a on the runs they have now, one-sided at the
 * sequential test's bound: an end still off the level of the pair the
 * search arrived at, so the pair holds only a part of the change.
 */
static int
slower_now(struct walk *w, size_t a, size_t b)
{
	struct estimate *ea, *eb, rel;

	return a != b && pair_rel(w, a, b, &ea, &eb, &rel) == STEP_GO &&
	    rel.se > 0 && rel.value / rel.se > stats_t_quantile(1 -
	    BISECT_SEQ_ALPHA, rel.df);
}

/* Whether the pair's change on its search samples is the threshold or
 * more: a step of its own beside a slide. */
static int
step_counts(struct walk *w, size_t lo, size_t hi)
{
	struct estimate *elo, *ehi, rel;

	return pair_rel(w, lo, hi, &elo, &ehi, &rel) == STEP_GO &&
	    rel.value >= w->p->threshold;
}

/*
 * Whether the pair a, b (consecutive measured releases of a slide) holds
 * a step of its own: *yes set when its slowdown lies above half the
 * threshold one-sided at BISECT_SEQ_ALPHA, on every search run of the
 * two.  The pairs of a slide are many and the edge search chose some
 * of them for their noise, so the bound is the probes', not the 95%
 * interval's.  A pair undecided while its estimate is at the cut or
 * above gets one more run of the release with fewer, up to
 * BISECT_STEP_RUNS x the initial runs; one below the cut is a part of
 * the slide.
 */
static int
step_apart(struct walk *w, size_t a, size_t b, int *yes)
{
	struct estimate *ea, *eb, rel;
	double cut = log1p(w->p->threshold / 2), l, se;
	size_t few = w->reps[a] <= w->reps[b] ? a : b;
	int rc, most = BISECT_STEP_RUNS * w->p->reps_initial;

	*yes = 0;
	if ((rc = pair_rel(w, a, b, &ea, &eb, &rel)) != STEP_GO)
		return rc;
	if (!(rel.value > -1))
		return STEP_GO;
	/* On the log scale, as stats_rel_change() forms the interval. */
	l = log1p(rel.value);
	se = rel.se / (1 + rel.value);
	if (se > 0 && l - stats_t_quantile(1 - BISECT_SEQ_ALPHA, rel.df) *
	    se > cut) {
		*yes = 1;
		return STEP_GO;
	}
	if (!(l >= cut) || w->reps[few] >= most ||
	    w->reps[few] >= w->p->reps_cap)
		return STEP_GO;
	return ask_measure(w, few, w->reps[few] + 1);
}

/*
 * With `all`, the steps of their own inside a slide.  Each pair of
 * consecutive measured releases of the span is judged by step_apart();
 * one that holds a step with releases between is bisected: its middle
 * release is measured and the two pairs it makes are judged alike.  An
 * adjacent pair that holds a step is a change point apart from the
 * slide (a pair the search arrived at, or a new one), confirmed as any.
 */
static int
split_steps(struct walk *w)
{
	const struct bisect_gradual *g = &w->v->slide;
	size_t prev = g->lo, m, k;
	int rc, yes;

	for (size_t i = g->lo + 1; i <= g->hi; i++) {
		if (i < g->hi && w->reps[i] < w->p->reps_initial)
			continue;
		if ((rc = step_apart(w, prev, i, &yes)) != STEP_GO)
			return rc;
		if (yes && (m = pick_probe(w, prev, i)) != SIZE_MAX)
			return ask_measure(w, m, w->p->reps_initial);
		for (k = 0; yes && k < w->v->nchanges; k++)
			if (w->v->changes[k].last_good == prev &&
			    w->v->changes[k].first_bad == i)
				break;
		if (yes && k < w->v->nchanges)
			w->v->changes[k].in_slide = 0;
		else if (yes && (rc = add_change(w, prev, i, 0)) != STEP_GO)
			return rc;
		prev = i;
	}
	return STEP_GO;
}

/* Widen the slide's span to take in lo..hi. */
static void
widen_slide(struct walk *w, size_t lo, size_t hi)
{
	struct bisect_gradual *g = &w->v->slide;

	if (!w->v->gradual || lo < g->lo)
		g->lo = lo;
	if (!w->v->gradual || hi > g->hi)
		g->hi = hi;
	w->v->gradual = 1;
}

/*
 * One edge of a slide in the range a..b (down: the lower edge, against
 * a's level; else the upper, against b's): from out, the release where
 * the search stopped on that side, outward to the first measured
 * release not known off the end's level, then bisected between it and
 * the last one off it (at first `in`, the slide's inside).  *edge gets
 * the release at the end's level nearest the slide.
 */
static int
slide_edge(struct walk *w, size_t a, size_t b, size_t out, size_t in,
    int down, size_t *edge)
{
	size_t end = down ? a : b, m;
	int rc, off;

	for (;;) {
		if (w->reps[out] >= w->p->reps_initial || out == end) {
			if ((rc = known_slower(w, down ? a : out, down ? out :
			    b, &off)) != STEP_GO)
				return rc;
			if (!off)
				break;
			in = out;
		}
		out = down ? out - 1 : out + 1;
	}
	while ((m = pick_probe(w, down ? out : in, down ? in : out)) !=
	    SIZE_MAX) {
		if ((rc = known_slower(w, down ? a : m, down ? m : b, &off)) !=
		    STEP_GO)
			return rc;
		if (off)
			in = m;
		else
			out = m;
	}
	*edge = out;
	return STEP_GO;
}

/*
 * The slide in the range a..b around the search's last bracket lo..hi:
 * around the probe m found between (or, SIZE_MAX, the pair lo, hi).
 */
static int
slide_span(struct walk *w, size_t a, size_t lo, size_t m, size_t hi,
    size_t b)
{
	size_t i, j;
	int rc;

	if ((rc = slide_edge(w, a, b, lo, m == SIZE_MAX ? hi : m, 1, &i)) !=
	    STEP_GO ||
	    (rc = slide_edge(w, a, b, hi, m == SIZE_MAX ? lo : m, 0, &j)) !=
	    STEP_GO)
		return rc;
	widen_slide(w, i, j);
	return STEP_GO;
}

static void
note_sign(struct walk *w, size_t a, size_t lo, size_t m, size_t hi,
    size_t b)
{
	if (w->sign)
		return;
	w->sign = 1;
	w->sa = a;
	w->sb = b;
	w->slo = lo;
	w->sm = m;
	w->shi = hi;
}

/*
 * With `all`, once a slide is found: inside it each range between
 * consecutive measured releases whose change on its search samples is
 * the threshold or more, searched for a step of its own; and when the
 * sign was a probe between (beside set), the ranges beside the slide in
 * r, which no search has seen yet.
 */
static int
push_inside(struct walk *w, const struct span *r, int beside)
{
	const struct bisect_gradual *g = &w->v->slide;
	size_t prev = g->hi;
	int rc;

	/* A stack: the rightmost first, so the left is examined first. */
	if (beside && g->hi < r->b &&
	    (rc = push(w, g->hi, r->b, r->kind)) != STEP_GO)
		return rc;
	for (size_t i = g->hi; i-- > g->lo;) {
		if (i > g->lo && w->reps[i] < w->p->reps_initial)
			continue;
		if (prev - i > 1 && step_counts(w, i, prev) &&
		    (rc = push(w, i, prev, SPAN_UNDER)) != STEP_GO)
			return rc;
		prev = i;
	}
	if (beside && g->lo > r->a &&
	    (rc = push(w, r->a, g->lo, r->kind)) != STEP_GO)
		return rc;
	return STEP_GO;
}

/*
 * Examine the range r: are its ends different, and if so, where is the
 * boundary.  Found boundaries are appended to the verdict's changes; in
 * `all` mode the two sides of a boundary are queued as new ranges.
 *
 * A slide shows in two ways.  A probe lands between its sides (the
 * sequential test's third outcome): the slide lies within the bracket
 * around it.  Or the search ends at an adjacent pair that holds only a
 * part of the change: an end is known slower than the pair's bad
 * release, or the pair's good release known slower than the good end;
 * the probes on the way were then placed between the ends, each on the
 * nearer side.  The slide then lies within the measured releases around
 * the pair still near an end's level (slide_span()).
 */
static int
examine(struct walk *w, const struct span *r)
{
	struct estimate *ea, *eb, rel;
	struct pool pg, pb;
	size_t a = r->a, b = r->b, lo = a, hi = b, m, idx[2] = { a, b };
	int rc, stuck, top = r->kind == SPAN_TOP && a == 0 && b == w->n - 1;
	int off_hi, off_lo, more_hi, more_lo, runs;
	enum outcome out;

	/* The range's own ends are compared run by run; a range inside it
	 * at the runs its ends have, by the interval. */
	if (top)
		rc = ends(w, &ea, &eb, &rel, &out);
	else if ((rc = pair_rel(w, a, b, &ea, &eb, &rel)) == STEP_GO)
		out = stats_outcome(&rel, w->p->threshold);
	if (rc != STEP_GO)
		return rc;
	runs = !top ? min_reps(w, idx, 2) : w->ends.ka < w->ends.kb ?
	    w->ends.ka : w->ends.kb;
	if (top)
		w->v->endpoints_rel = rel;
	switch (out) {
	case OUTCOME_SAME:
		if (top) {
			/* Power: the slowdown whose interval would clear
			 * the cut with probability BISECT_POWER. */
			w->v->runs_used = runs;
			w->v->detectable_rel = bisect_detectable(ea, eb,
			    w->p->threshold, rel.df);
		}
		return STEP_GO;
	case OUTCOME_UNKNOWN:
		/* Beside a slide, a range whose change stays undecided
		 * after a few ladder steps is a part of the slide. */
		if (r->kind == SPAN_UNDER && runs >= 4 * w->p->reps_initial)
			return STEP_GO;
		if (!top)
			rc = more_reps(w, idx, 2);
		else if (w->ends.next != SIZE_MAX)
			rc = hint(w, ask_measure(w, idx[w->ends.next],
			    w->ends.want), idx[!w->ends.next],
			    pick_probe(w, a, b));
		if (rc == STEP_GO)
			note_unknown(w, a, b, SIZE_MAX, &rel, fabs(log1p(
			    rel.value) - log1p(w->p->threshold / 2)),
			    stats_log_se(ea, eb), rel.df, runs);
		return rc;
	case OUTCOME_DIFFERENT:
		break;
	}

	/* As sides of the probes the ends count every run they have (the
	 * probes ask them for more, one at a time). */
	if ((rc = metric(w, a, &ea)) != STEP_GO ||
	    (rc = metric(w, b, &eb)) != STEP_GO)
		return rc;
	memset(&pg, 0, sizeof(pg));
	memset(&pb, 0, sizeof(pb));
	pool_add(&pg, a, ea, w->reps[a]);
	pool_add(&pb, b, eb, w->reps[b]);
	if ((rc = bracket(w, &lo, &hi, &pg, &pb, &m, &stuck)) != STEP_GO ||
	    stuck)
		return rc;
	if (m != SIZE_MAX) {
		w->nbetween++;
		note_sign(w, a, lo, m, hi, b);
		return STEP_GO;
	}
	/* The pair holds the whole change unless an end is known further
	 * from it, on the runs the search left. */
	off_hi = slower_now(w, hi, b);
	off_lo = slower_now(w, a, lo);
	if (off_hi || off_lo) {
		w->npartial++;
		note_sign(w, a, lo, SIZE_MAX, hi, b);
	}
	if ((rc = add_change(w, lo, hi, off_hi || off_lo)) != STEP_GO)
		return rc;
	/* The rest of the change is searched too, for another step or a
	 * slide (not again beside a slide: that is the slide itself); with
	 * `all`, the sides of every step. */
	more_hi = hi < b && ((off_hi && r->kind == SPAN_TOP) || w->p->all);
	more_lo = lo > a && ((off_lo && r->kind == SPAN_TOP) || w->p->all);
	/* A stack: the right side goes first so the left one is examined
	 * first. */
	if (more_hi && (rc = push(w, hi, b, off_hi ? SPAN_UNDER : r->kind)) !=
	    STEP_GO)
		return rc;
	if (more_lo && (rc = push(w, a, lo, off_lo ? SPAN_UNDER : r->kind)) !=
	    STEP_GO)
		return rc;
	return STEP_GO;
}

/*
 * The looks of a confirmation: one more interleaved run of each release
 * at a time up to twice the initial runs (most steps confirm there),
 * then the ladder; at most the cap.
 */
static int
confirm_next(const struct bisect_params *p, int k)
{
	if (k >= 2 * p->reps_initial)
		return ladder_next(p, k);
	return k + 1 < p->reps_cap ? k + 1 : p->reps_cap;
}

/*
 * The boundary pair measured again, interleaved, on its own samples:
 * confirmed when the slowdown is significant and at least half the
 * threshold; refuted when it is known to be below half the threshold.
 * Judged at each look (confirm_next()) of the runs stored, the first
 * that decides, so a later call judges as an earlier one did.
 */
static int
confirm(struct walk *w, struct bisect_change *c)
{
	const struct bisect_params *p = w->p;
	struct estimate eg, eb;
	int have = w->creps[c->last_good] < w->creps[c->first_bad] ?
	    w->creps[c->last_good] : w->creps[c->first_bad], k;

	c->confirm_rel = (struct estimate){ NAN, INFINITY, 1, -INFINITY,
	    INFINITY };
	/* A step of a slide below the threshold is a part of it, not a
	 * regression to confirm on its own. */
	if (c->in_slide && w->v->gradual &&
	    !step_counts(w, c->last_good, c->first_bad))
		return STEP_GO;
	for (k = p->reps_initial; k <= have; k = confirm_next(p, k)) {
		if (bisect_metric_estimate(&w->rel[c->last_good], p, 1,
		    (size_t)k, &eg) < 0 ||
		    bisect_metric_estimate(&w->rel[c->first_bad], p, 1,
		    (size_t)k, &eb) < 0) {
			w->act->error = "cannot compute the metric "
			    "(a sample is not finite)";
			return STEP_ERR;
		}
		rel_or_unknown(&eb, &eg, &c->confirm_rel);
		if (c->confirm_rel.lo > 0 &&
		    c->confirm_rel.value >= p->threshold / 2) {
			c->confirmed = 1;
			return STEP_GO;
		}
		if (c->confirm_rel.hi < p->threshold / 2)
			return STEP_GO;
		if (k < p->reps_cap)
			continue;
		if (w->v->more_runs < 0 && !w->v->has_unknown) {
			w->v->runs_used = k;
			w->v->more_runs = bisect_runs_to_decide(fabs(log1p(
			    c->confirm_rel.value) - log1p(p->threshold / 2)),
			    stats_log_se(&eg, &eb), c->confirm_rel.df, k);
		}
		return STEP_GO;
	}
	w->act->kind = BISECT_CONFIRM;
	w->act->good = c->last_good;
	w->act->bad = c->first_bad;
	w->act->reps = k;
	return STEP_ACT;
}

/* The runs in each cell the action asks for. */
static void
fill_want(struct walk *w)
{
	struct bisect_action *a = w->act;
	size_t r[2], count[BISECT_MAX_CELLS];
	int confirm = a->kind == BISECT_CONFIRM;

	r[0] = confirm ? a->good : a->release;
	r[1] = confirm ? a->bad : SIZE_MAX;
	memset(a->want, 0, sizeof(a->want));
	for (size_t t = 0; t < 2; t++) {
		if (r[t] == SIZE_MAX)
			continue;
		bisect_cell_runs(&w->rel[r[t]], w->p, confirm,
		    (size_t)a->reps, count);
		for (size_t c = 0; c < w->p->nlengths; c++)
			a->want[t][c] = (int)count[c];
	}
}

/* All usable runs (search and confirmation) of release r, per cell. */
static int
pair_cells(const struct walk *w, size_t r, double *buf, size_t stride,
    struct fit_cell *cells)
{
	size_t runs[BISECT_MAX_CELLS], cruns[BISECT_MAX_CELLS];

	bisect_cell_runs(&w->rel[r], w->p, 0, (size_t)w->reps[r], runs);
	bisect_cell_runs(&w->rel[r], w->p, 1, (size_t)w->creps[r], cruns);
	for (size_t c = 0; c < w->p->nlengths; c++) {
		double *out = buf + c * stride;
		size_t k, kc;

		k = bisect_take_runs(&w->rel[r].cells[c], 0, runs[c],
		    w->p->summary, out);
		if (k == SIZE_MAX)
			return -1;
		kc = bisect_take_runs(&w->rel[r].cells[c], 1, cruns[c],
		    w->p->summary, out + k);
		if (kc == SIZE_MAX)
			return -1;
		k += kc;
		if (!w->p->keep_outliers)
			k = bisect_drop_outliers(out, k);
		cells[c].tokens = w->p->lengths[c];
		cells[c].time_ns = out;
		cells[c].n = k;
	}
	return 0;
}

/* Candidates, the metric's change, and the fit's deltas and kind. */
static int
describe(struct walk *w, struct bisect_change *c)
{
	struct fit_cell ga[BISECT_MAX_CELLS], ba[BISECT_MAX_CELLS];
	struct fit_comparison cmp;
	struct estimate *eg, *eb;
	size_t stride, k = 0;
	double *buf;
	int rc;

	c->candidates = malloc((c->first_bad - c->last_good) *
	    sizeof(*c->candidates));
	if (c->candidates == NULL)
		goto nomem;
	for (size_t i = c->last_good + 1; i <= c->first_bad; i++)
		c->candidates[k++] = i;
	c->ncandidates = k;
	if ((rc = metric(w, c->last_good, &eg)) != STEP_GO ||
	    (rc = metric(w, c->first_bad, &eb)) != STEP_GO)
		return rc;
	rel_or_unknown(eb, eg, &c->metric_rel);

	stride = (size_t)(w->p->reps_cap * 2);
	buf = malloc(2 * w->p->nlengths * stride * sizeof(*buf));
	if (buf == NULL)
		goto nomem;
	if (pair_cells(w, c->last_good, buf, stride, ga) < 0 ||
	    pair_cells(w, c->first_bad, buf + w->p->nlengths * stride,
	    stride, ba) < 0) {
		free(buf);
		w->act->error = "cannot compute the metric "
		    "(a sample is not finite)";
		return STEP_ERR;
	}
	/* The kind is judged at the bar the search itself used: half the
	 * threshold (see stats_outcome()), so a regression found is never
	 * left without a kind merely for being near the threshold. */
	c->has_fit = w->p->metric.kind != BISECT_METRIC_TG &&
	    w->p->nlengths >= 2 &&
	    fit_compare(ga, w->p->nlengths, ba, w->p->nlengths, NULL, 0,
	    w->p->threshold / 2, &cmp) == 0;
	if (c->has_fit) {
		c->kind = cmp.kind;
		c->fixed_estimable = cmp.fixed_estimable;
		c->fixed_why = cmp.fixed_why;
		c->fit_hint = cmp.hint;
		c->per_token_delta_ns = cmp.per_token_delta_ns;
		c->fixed_delta_ns = cmp.fixed_delta_ns;
		memcpy(c->ratios, cmp.ratios, sizeof(c->ratios));
		c->nratios = cmp.nratios;
		c->trend = cmp.trend;
	} else {
		c->nratios = 0;
		for (size_t i = 0; i < w->p->nlengths; i++) {
			struct length_ratio *r = &c->ratios[c->nratios];

			r->tokens = ga[i].tokens;
			if (fit_ratio(ga[i].time_ns, ga[i].n, ba[i].time_ns,
			    ba[i].n, &r->ratio) == 0)
				c->nratios++;
		}
		c->trend = TREND_FLAT;
	}
	free(buf);
	return STEP_GO;
nomem:
	w->act->error = "out of memory";
	return STEP_ERR;
}

/* The slide's total change and its change per release. */
static int
describe_slide(struct walk *w)
{
	struct bisect_gradual *g = &w->v->slide;
	struct estimate *elo, *ehi, *t = &g->total_rel, *r = &g->per_release_rel;
	double k = 1.0 / (double)(g->hi - g->lo);
	int rc;

	g->between = malloc((g->hi - g->lo + 1) * sizeof(*g->between));
	if (g->between == NULL) {
		w->act->error = "out of memory";
		return STEP_ERR;
	}
	for (size_t i = g->lo + 1; i < g->hi; i++)
		if (w->reps[i] >= w->p->reps_initial)
			g->between[g->nbetween++] = i;
	for (size_t i = 0; i <= g->nbetween; i++) {
		struct bisect_slide_step st;
		size_t j;

		st.lo = i == 0 ? g->lo : g->between[i - 1];
		st.hi = i == g->nbetween ? g->hi : g->between[i];
		if ((rc = metric(w, st.lo, &elo)) != STEP_GO ||
		    (rc = metric(w, st.hi, &ehi)) != STEP_GO)
			return rc;
		rel_or_unknown(ehi, elo, &st.rel);
		/* Insert, largest first, keeping BISECT_SLIDE_STEPS. */
		for (j = g->nsteps; j > 0 && !(g->steps[j - 1].rel.value >=
		    st.rel.value); j--)
			if (j < BISECT_SLIDE_STEPS)
				g->steps[j] = g->steps[j - 1];
		if (j < BISECT_SLIDE_STEPS)
			g->steps[j] = st;
		if (g->nsteps < BISECT_SLIDE_STEPS)
			g->nsteps++;
	}
	if ((rc = metric(w, g->lo, &elo)) != STEP_GO ||
	    (rc = metric(w, g->hi, &ehi)) != STEP_GO)
		return rc;
	rel_or_unknown(ehi, elo, t);
	/* Each end of the interval maps through the same monotone
	 * function; the se by the delta method. */
	r->value = 1 + t->value > 0 ? pow(1 + t->value, k) - 1 : NAN;
	r->lo = 1 + t->lo > 0 ? pow(1 + t->lo, k) - 1 : -1;
	r->hi = 1 + t->hi > 0 ? pow(1 + t->hi, k) - 1 : NAN;
	r->se = t->se * k * (1 + r->value) / (1 + t->value);
	r->df = t->df;
	return STEP_GO;
}

static int
walk_all(struct walk *w)
{
	int rc;

	w->todo[w->ntodo++] = (struct span){ 0, w->n - 1, SPAN_TOP };
	for (;;) {
		while (w->ntodo > 0) {
			struct span r = w->todo[--w->ntodo];

			if ((rc = examine(w, &r)) != STEP_GO)
				return rc;
		}
		/* A slide: a probe between its sides, or again and again a
		 * pair that holds only a part of the change.  Its edges
		 * once; with `all`, then the ranges around and inside it. */
		if (w->v->gradual || !(w->nbetween > 0 || w->npartial >= 2))
			break;
		if ((rc = slide_span(w, w->sa, w->slo, w->sm, w->shi,
		    w->sb)) != STEP_GO)
			return rc;
		if (w->p->all && (rc = push_inside(w, &(struct span){ w->sa,
		    w->sb, SPAN_TOP }, w->sm != SIZE_MAX)) != STEP_GO)
			return rc;
	}
	if (w->p->all && w->v->gradual && (rc = split_steps(w)) != STEP_GO)
		return rc;
	/* One part of the change elsewhere is another step, not a slide. */
	for (size_t i = 0; i < w->v->nchanges; i++)
		w->v->changes[i].in_slide &= w->v->gradual;
	if (w->v->gradual && (rc = describe_slide(w)) != STEP_GO)
		return rc;
	bisect_verdict_sort(w->v);
	for (size_t i = 0; i < w->v->nchanges; i++)
		if ((rc = confirm(w, &w->v->changes[i])) != STEP_GO)
			return rc;
	for (size_t i = 0; i < w->v->nchanges; i++)
		if ((rc = describe(w, &w->v->changes[i])) != STEP_GO)
			return rc;
	bisect_verdict_decide(w->v);
	return STEP_GO;
}

int
bisect_next(const struct bisect_release *releases, size_t n,
    const struct bisect_params *p, struct bisect_action *act,
    struct bisect_verdict *v)
{
	struct walk w;
	int rc = STEP_ERR;

	memset(act, 0, sizeof(*act));
	act->prefetch[0] = act->prefetch[1] = SIZE_MAX;
	memset(v, 0, sizeof(*v));
	v->unknown_probe = SIZE_MAX;
	v->detectable_rel = NAN;
	v->runs_used = -1;
	v->more_runs = -1;
	if ((act->error = bisect_check_params(p)) != NULL)
		return -1;
	if (n < 2) {
		act->error = "a range needs two releases";
		return -1;
	}
	if (releases[0].skipped || releases[n - 1].skipped) {
		act->error = releases[0].skipped ?
		    "the good endpoint cannot be measured" :
		    "the bad endpoint cannot be measured";
		return -1;
	}

	memset(&w, 0, sizeof(w));
	w.rel = releases;
	w.n = n;
	w.p = p;
	w.act = act;
	w.v = v;
	w.reps = calloc(n, sizeof(*w.reps));
	w.creps = calloc(n, sizeof(*w.creps));
	w.est = calloc(n, sizeof(*w.est));
	w.have = calloc(n, sizeof(*w.have));
	/* Two sides a change, one range a release inside a slide. */
	w.maxtodo = 4 * n + 1;
	w.todo = calloc(w.maxtodo, sizeof(*w.todo));
	if (!w.reps || !w.creps || !w.est || !w.have || !w.todo) {
		act->error = "out of memory";
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t s = bisect_release_runs(&releases[i], p, 0);
		size_t c = bisect_release_runs(&releases[i], p, 1);

		/* Every run counts (the sequential tests look after each). */
		w.reps[i] = s < (size_t)p->reps_cap ? (int)s : p->reps_cap;
		if (releases[i].skipped)
			w.reps[i] = 0;
		w.creps[i] = releases[i].skipped ? 0 : c < (size_t)p->reps_cap ?
		    (int)c : p->reps_cap;
	}
	rc = walk_all(&w);
	if (rc == STEP_ACT)
		fill_want(&w);
	if (rc == STEP_ACT || rc == STEP_ERR) {
		bisect_verdict_release(v);
		v->unknown_probe = SIZE_MAX;
		v->detectable_rel = NAN;
		v->runs_used = -1;
		v->more_runs = -1;
	}
	if (rc == STEP_GO)
		act->kind = BISECT_DONE;
out:
	free(w.reps);
	free(w.creps);
	free(w.est);
	free(w.have);
	free(w.todo);
	return rc == STEP_ERR ? -1 : 0;
}
