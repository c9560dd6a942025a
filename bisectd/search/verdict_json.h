/*
 * verdict_json.h: the verdict of a bisection (analysis/bisect.h) as the
 * JSON object the report, the job result and the alerts carry, and the
 * two number helpers every JSON rendering shares.
 */
#ifndef BISECTD_VERDICT_JSON_H
#define BISECTD_VERDICT_JSON_H

#include "bisectd/analysis/bisect.h"

struct json_t;
struct store_release;

/*
 * The verdict object of the report JSON, with release indices turned
 * into the versions of rel (the range's releases, from GOOD on).  New
 * reference.
 */
struct json_t *verdict_json(const struct bisect_verdict *v,
    const struct store_release *rel);

/*
 * A verdict object (as verdict_json() makes it) in a few words, into buf:
 * "regression at b4744, per-token, confirmed", "2 regressions: at 0.2.2
 * (fixed-overhead), at 0.2.4 (per-token)", "no regression (+1.2%)",
 * "unknown (...)".  Versions are upstream text: the caller escapes buf
 * for its terminal.  Returns buf.
 */
const char *verdict_words(const struct json_t *verdict, char *buf,
    size_t len);

/* A number, or null where it is not finite: never a made-up zero. */
struct json_t *out_num(double x);
/* [lo, hi] as two out_num()s. */
struct json_t *out_interval(double lo, double hi);

/* Sets NAME to value and NAME_ci to [lo, hi] in o, as out_num()s. */
void out_value_ci(double value, double lo, double hi, const char *name,
    struct json_t *o);

/* Sets NAME (ms) and NAME_ci ([lo, hi] ms) in o from x (ns); returns o. */
struct json_t *out_estimate_ms(const struct estimate *x, const char *name,
    struct json_t *o);

/*
 * out_estimate_ms() for a fixed-overhead figure; when why is not NULL
 * (the model's intercept is not the fixed cost, see fit.h) NAME and
 * NAME_ci are null and "fixed_not_estimable" says why, with hint
 * (fit_hint()) or, when it is NULL, the hint to measure longer prompts.
 * Returns o.
 */
struct json_t *out_fixed_ms(const struct estimate *x, const char *why,
    const char *hint, const char *name, struct json_t *o);

/* The "fixed_not_estimable" sentence of out_fixed_ms() into buf. */
void out_fixed_note(const char *why, const char *hint, char *buf,
    size_t len);

#endif
