/*
 * fields.c: a built report's fields as numbers and strings, and the
 * spans and times shown beside them (see fields.h).
 */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "fields.h"

double
rep_real(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

double
rep_at(const json_t *a, size_t i)
{
	const json_t *v = json_array_get(a, i);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *
rep_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

const char *
rep_pct_ci(const json_t *ci, char *buf, size_t len)
{
	return rep_pct_lohi(rep_at(ci, 0), rep_at(ci, 1), buf, len);
}

const char *
rep_pct_lohi(double lo, double hi, char *buf, size_t len)
{
	char a[32] = "unbounded", b[32] = "unbounded";

	if (!isfinite(lo) && !isfinite(hi)) {
		snprintf(buf, len, "[unbounded]");
		return buf;
	}
	if (isfinite(lo))
		snprintf(a, sizeof(a), "%+.1f%%", 100 * lo);
	if (isfinite(hi))
		snprintf(b, sizeof(b), "%+.1f%%", 100 * hi);
	snprintf(buf, len, "[%s, %s]", a, b);
	return buf;
}

const char *
rep_span(long long s, char *buf, size_t len)
{
	if (s >= 86400)
		snprintf(buf, len, "%lldd%02lldh", s / 86400, s / 3600 % 24);
	else if (s >= 3600)
		snprintf(buf, len, "%lldh%02lldm", s / 3600, s / 60 % 60);
	else if (s >= 60)
		snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
	else
		snprintf(buf, len, "%llds", s);
	return buf;
}

const char *
rep_when(int64_t t, int utc, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0)
		return "-";
	if (utc)
		gmtime_r(&tt, &tm);
	else
		localtime_r(&tt, &tm);
	strftime(buf, len, utc ? "%Y-%m-%d %H:%M:%SZ" : "%Y-%m-%d %H:%M:%S",
	    &tm);
	return buf;
}
