/*
 * ablation.h: ablations and their runs.
 */
#ifndef STORE_ABLATION_H
#define STORE_ABLATION_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct store;
struct store_points;

/* --- ablations --- */
/* A new ablation of release_id (job_id 0: run by hand); *id is set. */
int store_ablation_open(struct store *s, int64_t job_id, int64_t engine_id,
    int64_t release_id, int64_t *id, struct err *e);

/*
 * The newest ablation of release_id still "running" (one that was
 * stopped or killed before it finished), or *id 0.  The caller holds the
 * benchmark lock, so no other process is measuring it.
 */
int store_ablation_unfinished(struct store *s, int64_t release_id,
    int64_t *id, struct err *e);

/* End it: state "done" with its status (ablate_status_name()'s words)
 * and report JSON, or "failed" with why in result. */
int store_ablation_finish(struct store *s, int64_t id, const char *state,
    const char *status, const char *result, struct err *e);

/*
 * The analysed samples of an ablation's variant ("" the baseline) in the
 * prefill cell of prompt_tokens measured under the definition def_key
 * (warm-ups and failed runs excluded), in that definition's clock,
 * oldest first.
 */
int store_ablation_points(struct store *s, int64_t ablation_id,
    const char *variant, int prompt_tokens, const char *def_key,
    struct store_points *out, struct err *e);

/*
 * How many runs of an ablation's variant failed (warm-ups included: a
 * switch whose every run fails fails there first), into *n, and the
 * newest one's failure, detail and stderr tail (malloced; NULL when
 * none failed or it has none).
 */
int store_ablation_failures(struct store *s, int64_t ablation_id,
    const char *variant, int64_t *n, char **failure, char **detail,
    char **stderr_tail, struct err *e);

/* The report JSON of the newest finished ablation of release_id, or
 * NULL (*json malloced). */
int store_ablation_latest(struct store *s, int64_t release_id, char **json,
    struct err *e);

#endif
