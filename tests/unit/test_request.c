/*
 * test_request.c: a bisect's request (bisectd/search/request.h) read
 * from people's words, kept as a queued job's arguments and read back:
 * the same values, in the format jobs queued before have.
 */
#include <stdlib.h>
#include <string.h>

#include "bisectd/search/request.h"
#include "check.h"
#include "common/err.h"

static void
test_words(void)
{
	struct bisect_request r;

	bisect_request_init(&r);
	CHECK_INT((int)r.metric.kind, -1);
	CHECK(r.threshold < 0);
	CHECK(!bisect_request_canary(&r));
	CHECK_INT(bisect_request_set(&r, "pp512", "3%"), 0);
	CHECK_INT(r.metric.kind, METRIC_PP);
	CHECK_INT(r.metric.n, 512);
	CHECK(r.threshold == 0.03);
	CHECK_INT(bisect_request_set(&r, "output", NULL), 0);
	CHECK(bisect_request_canary(&r));
	CHECK(r.threshold == 0.03);	/* NULL leaves it */
	CHECK_INT(bisect_request_set(&r, "pp0", NULL),
	    BISECT_REQUEST_BAD_METRIC);
	CHECK_INT(bisect_request_set(&r, "outputs", NULL),
	    BISECT_REQUEST_BAD_METRIC);
	CHECK_INT(bisect_request_set(&r, NULL, "twenty"),
	    BISECT_REQUEST_BAD_THRESHOLD);
}

static void
test_round_trip(void)
{
	static const char *const metrics[] = { "per-token", "fixed", "pp128",
	    "tg32", "output" };
	static const double thresholds[] = { 0.2, 0.03, 0.1234567, 1.0 / 3,
	    0.0005, 2.5 };
	struct err e = ERR_INIT;

	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
		for (size_t k = 0; k < sizeof(thresholds) /
		    sizeof(thresholds[0]); k++) {
			struct bisect_request r, back;
			char *json, *range = NULL;

			bisect_request_init(&r);
			CHECK_INT(bisect_request_set(&r, metrics[i], NULL), 0);
			r.threshold = thresholds[k];
			r.all = (int)(k & 1);
			r.commits = (int)(i & 1);
			json = bisect_request_json(&r, "v1..v9");
			CHECK(json != NULL);
			CHECK_INT(bisect_request_from_json(json, &back, &range,
			    &e), 0);
			CHECK_STR(range, "v1..v9");
			CHECK_INT(back.metric.kind, r.metric.kind);
			CHECK_INT(back.metric.n, r.metric.n);
			CHECK(back.threshold == r.threshold);
			CHECK_INT(back.all, r.all);
			CHECK_INT(back.commits, r.commits);
			free(json);
			free(range);
		}
}

/* The engine's own metric and threshold are null, as before. */
static void
test_defaults(void)
{
	struct bisect_request r, back;
	struct err e = ERR_INIT;
	char *json, *range = NULL;

	bisect_request_init(&r);
	json = bisect_request_json(&r, "0.2.0..0.2.6");
	CHECK_STR(json, "{\"range\":\"0.2.0..0.2.6\",\"metric\":null,"
	    "\"threshold\":null,\"all\":false,\"commits\":false}");
	CHECK_INT(bisect_request_from_json(json, &back, &range, &e), 0);
	CHECK_INT((int)back.metric.kind, -1);
	CHECK(back.threshold < 0);
	free(json);
	free(range);
}

/* Arguments as bisectctl queued them before the request was a value. */
static void
test_queued_before(void)
{
	struct bisect_request r;
	struct err e = ERR_INIT;
	char *range = NULL;

	CHECK_INT(bisect_request_from_json("{\"range\":\"0.1.0..0.1.3\","
	    "\"threshold\":\"3%\",\"metric\":\"pp512\",\"all\":true}", &r,
	    &range, &e), 0);
	CHECK_STR(range, "0.1.0..0.1.3");
	CHECK_INT(r.metric.kind, METRIC_PP);
	CHECK_INT(r.metric.n, 512);
	CHECK(r.threshold == 0.03);
	CHECK_INT(r.all, 1);
	CHECK_INT(r.commits, 0);
	free(range);
	CHECK_INT(bisect_request_from_json("{\"range\":\"0.1.0..0.1.6\","
	    "\"metric\":\"output\"}", &r, &range, &e), 0);
	CHECK(bisect_request_canary(&r));
	free(range);
}

static void
test_refused(void)
{
	struct bisect_request r;
	struct err e = ERR_INIT;
	char *range = NULL;

	CHECK_INT(bisect_request_from_json("{\"metric\":\"fixed\"}", &r,
	    &range, &e), -1);
	CHECK_STR(e.msg, "bisect job: expected a range GOOD..BAD in its "
	    "arguments");
	CHECK(range == NULL);
	CHECK_INT(bisect_request_from_json("not json", &r, &range, &e), -1);
	CHECK_INT(bisect_request_from_json("{\"range\":\"a..b\",\"metric\":"
	    "\"speed\"}", &r, &range, &e), -1);
	CHECK_STR(e.msg, "bisect job: bad metric 'speed'");
	CHECK_INT(bisect_request_from_json("{\"range\":\"a..b\",\"threshold\":"
	    "\"lots\"}", &r, &range, &e), -1);
	CHECK_STR(e.msg, "bisect job: bad threshold 'lots'");
	CHECK_INT(bisect_request_from_json("{\"range\":\"a..b\",\"threshold\":"
	    "-0.5}", &r, &range, &e), -1);
	CHECK(range == NULL);
}

int
main(void)
{
	CHECK_CASE(test_words);
	CHECK_CASE(test_round_trip);
	CHECK_CASE(test_defaults);
	CHECK_CASE(test_queued_before);
	CHECK_CASE(test_refused);
	return check_done();
}
