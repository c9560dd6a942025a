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

#include "config/conf.h"
#include "summary.h"

struct json_t;

/* What a pair's entries are made with. */
struct changes_ctx {
	const struct conf_engine *eng;
	double threshold;		/* a fraction */
	const char *searched;		/* the searched metric's name */
	const char *ctl;		/* "bisectctl -c FILE" or "bisectctl" */
	const char *range;		/* the report's range, "A..B" */
};

/*
 * Append to out (an array) one entry per metric both a and b measured:
 * {"from", "to", "metric", "what", "unit", "change", "change_ci",
 * "moved", "searched", and "bisect" (the command that searches it) for
 * one that got slower and was not searched}.  A time's change is
 * positive when slower; a throughput's (pp, tg: tok/s) positive when
 * faster, as people read them.
 */
void changes_pair(const struct changes_ctx *c, const struct release_figs *a,
    const char *va, const struct release_figs *b, const char *vb,
    struct json_t *out);

#endif
