/*
 * test_routes.c: the HTTP server's URLs and query options as a client
 * may write them: each route and its engine and rest, and the paths
 * that are no page (an empty engine, a missing or extra segment, a name
 * too long); a matrix's cell named by its longest known run of
 * segments; the report's options as bisectctl's.
 */
#include <string.h>

#include "bisectd/daemon/routes.h"
#include "check.h"

static void
test_parse(void)
{
	static const struct {
		const char *url;
		enum route_kind kind;
		const char *engine, *rest;
	} cases[] = {
		{ "/", ROUTE_PAGE, "", NULL },
		{ "/metrics", ROUTE_METRICS, "", NULL },
		{ "/api/status", ROUTE_API_STATUS, "", NULL },
		{ "/api/alerts", ROUTE_API_ALERTS, "", NULL },
		{ "/api/versions/basert", ROUTE_API_VERSIONS, "basert", NULL },
		{ "/api/runs/basert/0.2.4", ROUTE_API_RUNS, "basert", "0.2.4" },
		{ "/api/report/basert/0.2.0..0.2.6", ROUTE_API_REPORT,
		  "basert", "0.2.0..0.2.6" },
		{ "/report/basert/0.2.0..0.2.6", ROUTE_REPORT, "basert",
		  "0.2.0..0.2.6" },
		/* A rest may hold slashes: a version is the client's text. */
		{ "/api/runs/basert/a/b", ROUTE_API_RUNS, "basert", "a/b" },
		{ "/api/versions/", ROUTE_NONE, "", NULL },
		{ "/api/versions//x", ROUTE_NONE, "", NULL },
		{ "/api/versions/basert/", ROUTE_NONE, "", NULL },
		{ "/api/runs/basert", ROUTE_NONE, "", NULL },
		{ "/api/runs/basert/", ROUTE_NONE, "", NULL },
		{ "/report/", ROUTE_NONE, "", NULL },
		{ "/metrics/", ROUTE_NONE, "", NULL },
		{ "/api/statusx", ROUTE_NONE, "", NULL },
		{ "", ROUTE_NONE, "", NULL },
		{ "/../etc/passwd", ROUTE_NONE, "", NULL },
	};
	char longname[600];
	struct route r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		route_parse(cases[i].url, &r);
		if (r.kind != cases[i].kind)
			fprintf(stderr, "url '%s'\n", cases[i].url);
		CHECK_INT(r.kind, cases[i].kind);
		CHECK_STR(r.engine, cases[i].engine);
		CHECK(cases[i].rest ? r.rest && strcmp(r.rest,
		    cases[i].rest) == 0 : r.rest == NULL);
	}
	/* An engine name past ROUTE_ENGINE_MAX is no engine, not cut. */
	memcpy(longname, "/api/versions/", 14);
	memset(longname + 14, 'e', sizeof(longname) - 15);
	longname[sizeof(longname) - 1] = '\0';
	route_parse(longname, &r);
	CHECK_INT(r.kind, ROUTE_NONE);
}

static int
known(const void *arg, const char *name)
{
	static const char *const names[] = { "fleet", "fleet/m1/big",
	    "basert" };

	(void)arg;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

static void
test_cells(void)
{
	static const struct {
		const char *url, *engine, *rest;
	} cases[] = {
		{ "/report/fleet/m1/big/1.0.0..1.0.3", "fleet/m1/big",
		  "1.0.0..1.0.3" },
		{ "/api/report/fleet/m1/big/1.0.0..1.0.3", "fleet/m1/big",
		  "1.0.0..1.0.3" },
		{ "/report/fleet/1.0.0..1.0.3", "fleet", "1.0.0..1.0.3" },
		/* No cell "fleet/m1": the matrix, the rest its client's. */
		{ "/report/fleet/m1/1.0.0..1.0.3", "fleet", "m1/1.0.0..1.0.3" },
		/* A name needs a rest after it. */
		{ "/report/fleet/m1/big/", "fleet", "m1/big/" },
		{ "/api/runs/basert/a/b", "basert", "a/b" },
		{ "/api/versions/fleet", "fleet", NULL },
	};
	struct route r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		route_parse(cases[i].url, &r);
		route_engine(&r, known, NULL);
		if (strcmp(r.engine, cases[i].engine) != 0)
			fprintf(stderr, "url '%s': '%s'\n", cases[i].url,
			    r.engine);
		CHECK_STR(r.engine, cases[i].engine);
		CHECK(cases[i].rest ? r.rest && strcmp(r.rest,
		    cases[i].rest) == 0 : r.rest == NULL);
	}
}

static void
test_options(void)
{
	struct bisect_request q;
	char why[256];

	CHECK_INT(route_report_request(NULL, NULL, NULL, &q, why,
	    sizeof(why)), 0);
	CHECK(!q.all);
	CHECK_INT(route_report_request("tg32", "30%", "1", &q, why,
	    sizeof(why)), 0);
	CHECK_INT(q.metric.kind, METRIC_TG);
	CHECK_INT(q.metric.n, 32);
	CHECK_NEAR(q.threshold, 0.30, 1e-12);
	CHECK(q.all);
	CHECK_INT(route_report_request(NULL, NULL, "0", &q, why,
	    sizeof(why)), 0);
	CHECK(!q.all);
	CHECK_INT(route_report_request("pp0", NULL, NULL, &q, why,
	    sizeof(why)), -1);
	CHECK_CONTAINS(why, "metric: expected per-token, fixed, ppN or tgN, "
	    "got 'pp0'");
	/* The canary's report is bisectctl's alone. */
	CHECK_INT(route_report_request("output", NULL, NULL, &q, why,
	    sizeof(why)), -1);
	CHECK_INT(route_report_request(NULL, "lots", NULL, &q, why,
	    sizeof(why)), -1);
	CHECK_CONTAINS(why, "threshold: expected a percentage");
	/* 0% would call any noise a regression (fuzz_route found it). */
	CHECK_INT(route_report_request(NULL, "0%", NULL, &q, why,
	    sizeof(why)), -1);
}

int
main(void)
{
	CHECK_CASE(test_parse);
	CHECK_CASE(test_cells);
	CHECK_CASE(test_options);
	return check_done();
}
