/*
 * verdict.h: the one verdict of a release range, judged from the store
 * alone.  The driver asks it what to measure next and for the verdict;
 * `report` and `bisect --now` print it; the daemon's jobs store it.  No
 * caller keeps a state of its own (which releases were skipped, what is
 * measured), so every path gives the same status, boundary, candidates
 * and exit code on the same store.
 *
 * A release is failed, and skipped as `git bisect skip` does, when its
 * archive could not be fetched or unpacked (its state), or when in one of
 * the parameters' cells more of its runs are bad than good (see
 * store_cell_outcomes()): a release whose runs all crash is named among
 * the candidates, never measured again under the same cells.
 */
#ifndef BISECTD_VERDICT_H
#define BISECTD_VERDICT_H

#include "bisectd/analysis/bisect.h"
#include "range.h"

struct err;
struct json_t;

struct judgement {
	int *failed;		/* per release of the range; malloced */
	int done;		/* 1: v holds the verdict */
	int end_failed;		/* an end of the range cannot be measured */
	struct bisect_action act;	/* otherwise: what to measure next */
	struct bisect_verdict v;
	struct range_data data;	/* the samples judged (none if end_failed) */
	/* 0, 3 or 4 from the verdict; 4 when the store does not hold enough
	 * to decide; 1 when an end cannot be measured or has no samples. */
	int exit_code;
	char why[512];		/* when not done: one line saying why */
	/* done: the median GPU SM clocks (bisect_release_clock(), 0: not
	 * read) of the sides compared, release indices clock_good and
	 * clock_bad: the main change's pair, or the ends when they differ
	 * and it does not, or when there is no change; differ: apart by
	 * more than BISECT_CLOCK_REL, and then nothing is confirmed. */
	double good_sm_mhz, bad_sm_mhz;
	size_t clock_good, clock_bad;
	int clocks_differ;
};

/* The exit code of a verdict's status: 0, 3 (also gradual) or 4. */
int verdict_exit_code(enum bisect_status s);

/*
 * Judge releases r->lo..r->hi on the samples the store holds for the
 * parameters' cells under weights_sha256 and hw_key.  Returns 0 with *j
 * filled (free with judgement_release()), or -1 with e set when the
 * store fails.
 */
int judge_range(struct store *s, const struct range *r,
    const struct bisect_params *p, const struct conf_engine *eng,
    const char *weights_sha256, const char *hw_key, struct judgement *j,
    struct err *e);

/* judge_range() on the range's runs as range_runs_load() read them. */
int judge_range_runs(const struct range_runs *rr, const struct range *r,
    const struct bisect_params *p, const struct conf_engine *eng,
    const char *weights_sha256, const char *hw_key, struct judgement *j,
    struct err *e);

/*
 * judge_range_runs() on what it reads of each release's runs, however
 * obtained: runs_fail[i] (judge_runs_fail() of release i's runs) and d,
 * the parameters' cells (range_load_engine()), which *j takes over (d
 * is left empty).
 */
int judge_range_data(const struct range *r, const struct bisect_params *p,
    const struct conf_engine *eng, const int *runs_fail,
    struct range_data *d, struct judgement *j, struct err *e);

/* 1 when in one of the parameters' cells q[] (range_cell_queries())
 * more of the release's runs are bad than good; else 2 when in one more
 * of them throttled than not (store_cell_runs.throttled); else 0. */
int judge_runs_fail(const struct store_release_runs *rr,
    const struct bisect_params *p, const struct store_cell_query *q);

void judgement_release(struct judgement *j);

/*
 * The report's "verdict" object: search/verdict_json.h's shape when
 * done, else status "unknown" with the reason.  New reference.
 */
struct json_t *judgement_json(const struct judgement *j,
    const struct range *r);

#endif
