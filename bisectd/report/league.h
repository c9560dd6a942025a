/*
 * league.h: engines measured side by side on one machine, ranked
 * (bisectctl compare): each entry's prefill at every prompt length, the
 * fit's per-token cost and ceiling, decode, each with its spread and n,
 * and the caveats beside them (other weights, lower bounds, noise),
 * rendered as text, JSON, markdown, CSV or an HTML page with a bar
 * chart.  Built from the store's runs; the renderers only read it.
 */
#ifndef BISECTD_REPORT_LEAGUE_H
#define BISECTD_REPORT_LEAGUE_H

#include <stdint.h>
#include <stdio.h>

#include "bisectd/analysis/fit.h"
#include "bisectd/analysis/stats.h"
#include "bisectd/report/print.h"
#include "config/conf.h"

struct err;
struct json_t;
struct store;

/* One cell of an entry as a throughput. */
struct league_fig {
	int tokens;
	int ok;			/* measured: tp is set */
	struct throughput tp;	/* tok/s, its sd, cv, 95% interval, n runs */
	int lower_bound;	/* server mode: time to first token */
	int noisy;		/* cv above the engine's max-cv */
	int busy;		/* a run started on a busy machine */
};

struct league_entry {
	const struct conf_engine *eng;
	char *version;		/* malloced */
	char weights_sha256[65];
	struct league_fig pp[CONF_MAX_LENGTHS];	/* eng->prompts */
	size_t npp;
	struct league_fig tg[CONF_MAX_LENGTHS];	/* eng->gen, its first
						 * content kind */
	size_t ntg;
	int has_fit;
	struct fit fit;		/* over eng->fit; fixed_why into why */
	char why[256];
	int other_weights;	/* not on the first entry's weights file */
	int pp_rank, tg_rank;	/* 0: not ranked */
};

struct league {
	struct league_entry *v;	/* in the order named; malloced */
	size_t n;
	char hw_key[65];
	int rank_prompt;	/* the longest prompt every entry measured; 0:
				 * none in common */
	int rank_gen;		/* the same for decode */
	int weights_differ;
};

/*
 * Entry i of l (l->v has room) for release_id of eng measured on weights
 * wsha and machine hw: its figures from the store's runs.  Returns 0,
 * or -1 with e set.
 */
int league_entry(struct league *l, size_t i, struct store *s,
    const struct conf_engine *eng, const char *version, int64_t release_id,
    const char *wsha, const char *hw, struct err *e);

/* The common lengths, the weights flags and both ranks of l's entries. */
void league_rank(struct league *l);

void league_free(struct league *l);

/* The entry that ranks first alone on prefill (decode 0) or on decode
 * (1), its interval apart from every other's: its index, or -1 when the
 * first place is shared or nothing ranks. */
int league_leader(const struct league *l, int decode);

/* Entry i's figure at the length the side is ranked at, or NULL. */
const struct league_fig *league_ranked_fig(const struct league *l, size_t i,
    int decode);

/* The league as JSON: a new reference, NULL when memory runs out. */
struct json_t *league_json(const struct league *l);

/* The league rendered in format f. */
void league_print(const struct league *l, enum report_format f, FILE *out);

#endif
