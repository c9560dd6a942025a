/*
 * fields.h: reading the fields of a built report (the JSON of
 * report/build.h) for its renderings, where a missing or null
 * field is a NAN or an empty string, never a made-up zero; and the
 * spans and times those renderings show, worded for people.
 */
#ifndef BISECTD_REPORT_FIELDS_H
#define BISECTD_REPORT_FIELDS_H

#include <stddef.h>
#include <stdint.h>

struct json_t;

/* o[key] as a number; NAN when missing, null or not a number. */
double rep_real(const struct json_t *o, const char *key);

/* a[i] as a number; NAN when missing, null or not a number. */
double rep_at(const struct json_t *a, size_t i);

/* o[key] as a string; "" when missing or not a string.  Borrowed. */
const char *rep_str(const struct json_t *o, const char *key);

/* An interval of changes, ci = [lo, hi] as fractions, in per cent for
 * people: "[-2.6%, +5.8%]"; a bound that is null or missing (none can be
 * put there) is "unbounded", a missing interval "[unbounded]".  Returns
 * buf. */
const char *rep_pct_ci(const struct json_t *ci, char *buf, size_t len);

/* The same of the bounds lo and hi, NAN where there is none. */
const char *rep_pct_lohi(double lo, double hi, char *buf, size_t len);

/* A span of s seconds for people, in its two largest units: "40s",
 * "3m05s", "2h03m", "3d04h".  Returns buf. */
const char *rep_span(long long s, char *buf, size_t len);

/* The time t (Unix seconds) for people, "2026-03-04 05:06:07" in the
 * local zone or, with utc, "2026-03-04 05:06:07Z"; "-" when t is not
 * set.  Returns buf or that "-". */
const char *rep_when(int64_t t, int utc, char *buf, size_t len);

#endif
