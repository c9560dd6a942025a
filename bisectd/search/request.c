/*
 * request.c: a bisect's request, read from people's words and kept as a
 * job's arguments (see request.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/err.h"
#include "request.h"

void
bisect_request_init(struct bisect_request *r)
{
	memset(r, 0, sizeof(*r));
	r->metric.kind = (enum conf_metric_kind)-1;
	r->threshold = -1;
}

int
bisect_request_canary(const struct bisect_request *r)
{
	return r->metric.kind == METRIC_CANARY;
}

int
bisect_request_set(struct bisect_request *r, const char *metric,
    const char *threshold)
{
	if (metric && strcmp(metric, "output") == 0) {
		r->metric.kind = METRIC_CANARY;
		r->metric.n = 0;
	} else if (metric && conf_parse_metric(metric, &r->metric) < 0)
		return BISECT_REQUEST_BAD_METRIC;
	/* Above 0 and below 100 (10000%), as the bisection takes it: a
	 * threshold of 0% would call any noise a regression. */
	if (threshold && (conf_parse_percent(threshold, &r->threshold) < 0 ||
	    !(r->threshold > 0 && r->threshold < 100)))
		return BISECT_REQUEST_BAD_THRESHOLD;
	return 0;
}

char *
bisect_request_json(const struct bisect_request *r, const char *range)
{
	char metric[32];
	json_t *o;
	char *text;

	if ((int)r->metric.kind >= 0)
		conf_metric_name(&r->metric, metric, sizeof(metric));
	/* The threshold as its fraction: a JSON number reads back as the
	 * same double, a percentage's text need not. */
	o = json_pack("{s:s,s:s?,s:o,s:b,s:b}", "range", range, "metric",
	    (int)r->metric.kind >= 0 ? metric : NULL, "threshold",
	    r->threshold >= 0 ? json_real(r->threshold) : json_null(), "all",
	    r->all, "commits", r->commits);
	if (o == NULL)
		return NULL;
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

int
bisect_request_from_json(const char *json, struct bisect_request *r,
    char **range, struct err *e)
{
	json_t *o = json_loads(json ? json : "", 0, NULL);
	const char *spec = json_string_value(json_object_get(o, "range"));
	const char *metric = json_string_value(json_object_get(o, "metric"));
	const json_t *tj = json_object_get(o, "threshold");
	/* A percentage's text, as jobs queued by earlier builds have it,
	 * or the fraction as a number. */
	const char *threshold = json_string_value(tj);
	int rc;

	bisect_request_init(r);
	*range = NULL;
	if (spec == NULL || strstr(spec, "..") == NULL) {
		json_decref(o);
		return err_set(e, "bisect job: expected a range GOOD..BAD in "
		    "its arguments");
	}
	if ((rc = bisect_request_set(r, metric, threshold)) != 0) {
		err_set(e, rc == BISECT_REQUEST_BAD_METRIC ? "bisect job: bad "
		    "metric '%s'" : "bisect job: bad threshold '%s'",
		    rc == BISECT_REQUEST_BAD_METRIC ? metric : threshold);
		json_decref(o);
		return -1;
	}
	if (json_is_number(tj)) {
		r->threshold = json_number_value(tj);
		if (!(r->threshold >= 0 && r->threshold <= 1e6)) {
			json_decref(o);
			return err_set(e, "bisect job: bad threshold %g",
			    json_number_value(tj));
		}
	}
	r->all = json_is_true(json_object_get(o, "all"));
	r->commits = json_is_true(json_object_get(o, "commits"));
	if ((*range = strdup(spec)) == NULL) {
		json_decref(o);
		return err_set(e, "out of memory");
	}
	json_decref(o);
	return 0;
}

int
range_split(const char *spec, char good[RANGE_END_MAX],
    char bad[RANGE_END_MAX], struct err *e)
{
	const char *dots = strstr(spec, "..");

	if (dots == NULL || dots == spec || dots[2] == '\0' ||
	    (size_t)(dots - spec) >= RANGE_END_MAX || strlen(dots + 2) >=
	    RANGE_END_MAX)
		return err_usage(e, "expected a range GOOD..BAD such as "
		    "0.2.0..0.2.6, got '%s'", spec);
	snprintf(good, RANGE_END_MAX, "%.*s", (int)(dots - spec), spec);
	snprintf(bad, RANGE_END_MAX, "%s", dots + 2);
	return 0;
}
