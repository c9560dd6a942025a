/*
 * changes.h: what else changed.  A bisect searches one metric; the
 * field report's regression tripled the cost of a prefill token while
 * decode moved 3.6%, and whoever watches one number misses the other.
 * For a pair of releases (the range's ends, a change point's boundary),
 * every metric of the matrix: the per-token cost, the fixed overhead,
 * each prefill length and each decode cell, with the change between
 * the two and its 95% interval, and where it stands against half the
 * threshold (stats_move()).
 */
#ifndef BISECTD_CHANGES_H
#define BISECTD_CHANGES_H

#include "bisectd/analysis/stats.h"
#include "config/conf.h"
#include "summary.h"

struct report;

/* What a pair's entries are made with. */
struct changes_ctx {
	const struct conf_engine *eng;
	double threshold;		/* a fraction */
	const char *searched;		/* the searched metric's name */
	const char *ctl;		/* "bisectctl -c FILE" or "bisectctl" */
	const char *range;		/* the report's range, "A..B" */
};

#define CHANGES_MAX	(2 + CONF_MAX_LENGTHS * 8)
_Static_assert(CHANGES_MAX >= FIG_N + 3, "a serve pair's changes fit");

/* One metric's change between two releases. */
struct metric_change {
	char metric[96];	/* "per-token", "fixed", "pp512", "tg32",
				 * "tg32/prose" */
	char what[128];		/* in words */
	const char *unit;	/* "ms/token", "ms", "tok/s"; static */
	int tps;		/* people read a throughput: its change is
				 * 1 / (1 + rel) - 1, up when faster */
	int bisectable;		/* --metric takes it */
	struct estimate rel;	/* of the time or cost, b / a - 1; a
				 * serve rate's own (changes_serve()) */
	enum move moved;	/* rel against half the threshold */
};

/*
 * Every metric both a and b measured, in the order above (the fit's,
 * then each prompt length, then each decode cell): at most max into
 * out; returns how many.
 */
size_t changes_list(const struct conf_engine *eng, double threshold,
    const struct release_figs *a, const struct release_figs *b,
    struct metric_change *out, size_t max);

struct store_serve_rows;

/* A serve figure in words: "time to first token, p90". */
void changes_serve_what(enum conf_serve_figure f, char *buf, size_t len);

/* The values of figure f over a release's runs r, failed ones and those
 * without it left out, into x (room for r->n); returns how many. */
size_t changes_serve_values(const struct store_serve_rows *r,
    enum conf_serve_figure f, double *x);

/*
 * A serve engine's figures both a and b measured (store/serve.h: the
 * runs of each release, failed ones left out): each latency percentile
 * (ms, positive when slower), then requests and output tokens a
 * second and, with targets set, the goodput (positive when faster).
 * Each is the mean over runs with its interval, the run the unit, as
 * the report shows them.  At most max into out; returns how many.
 */
size_t changes_serve(const struct conf_engine *eng, double threshold,
    const struct store_serve_rows *a, const struct store_serve_rows *b,
    struct metric_change *out, size_t max);

/*
 * A time's relative change (b / a - 1 with its interval) as the change
 * of the throughput it makes, 1 / (1 + x) - 1: *v, and the interval
 * *lo, *hi, the time's ends swapped.  An unbounded time gives -1 (a
 * throughput down to zero), a time that may fall by all of itself
 * INFINITY above: never a bound made up from an infinite one.
 */
void changes_tps(const struct estimate *time_rel, double *v, double *lo,
    double *hi);

/*
 * Append to rp's changes one per metric both a and b (versions va and
 * vb, which the changes point to) measured, with the command that
 * searches it for one that got slower and was not searched.  A time's
 * change is positive when slower; a throughput's (pp, tg: tok/s)
 * positive when faster, as people read them.  Returns 0, or -1 when
 * memory runs out.
 */
int changes_pair(const struct changes_ctx *c, const struct release_figs *a,
    const char *va, const struct release_figs *b, const char *vb,
    struct report *rp);

/* The same for the n changes m of a serve engine's pair (changes_serve()). */
int changes_append(const struct changes_ctx *c, const struct metric_change *m,
    size_t n, const char *va, const char *vb, struct report *rp);

#endif
