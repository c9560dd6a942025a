/*
 * fuzz_route.c: the HTTP server's URLs, query options and ranges, as a
 * client may send them (bisectd/daemon/routes.c, range_split()).  The
 * input's lines: the URL's path, then metric, threshold and all (a
 * missing line: the option absent).
 *
 * Properties: a route that names an engine has one, non-empty, without
 * a slash and shorter than ROUTE_ENGINE_MAX, and the URL is its prefix,
 * that name and (for a route with a rest) "/" and the rest, non-empty;
 * a route without one names none.  A matrix's cell (route_engine(),
 * here every name of an even length known) keeps the route's prefix,
 * the name then "/" and a non-empty rest.  Options accepted give a metric
 * bisectctl would take (no canary) and a threshold the bisection takes
 * (above 0, below 100); options refused say which in a NUL-terminated
 * line.  A range split gives two
 * non-empty ends that, joined with "..", are the text again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisectd/daemon/routes.h"
#include "common/err.h"
#include "fuzz.h"

static const char *const prefixes[] = {
	[ROUTE_API_VERSIONS] = "/api/versions/",
	[ROUTE_API_RUNS] = "/api/runs/",
	[ROUTE_API_REPORT] = "/api/report/",
	[ROUTE_REPORT] = "/report/",
};

static int
even_known(const void *arg, const char *name)
{
	(void)arg;
	return strlen(name) % 2 == 0;
}

/* The longest known run of segments: the URL is still prefix, name,
 * "/" and rest. */
static void
check_cell(const char *url, struct route r)
{
	const char *p;
	size_t n;

	route_engine(&r, even_known, NULL);
	if (r.kind < ROUTE_API_VERSIONS)
		return;
	p = prefixes[r.kind];
	n = strlen(r.engine);
	if (n == 0 || n >= ROUTE_ENGINE_MAX || strncmp(url + strlen(p),
	    r.engine, n) != 0)
		fuzz_fail("cell '%s' of '%s'", r.engine, url);
	if (r.kind != ROUTE_API_VERSIONS && (r.rest == NULL ||
	    r.rest != url + strlen(p) + n + 1 || r.rest[-1] != '/' ||
	    *r.rest == '\0'))
		fuzz_fail("the rest of cell '%s' of '%s'", r.engine, url);
}

static void
check_route(const char *url)
{
	struct route r;
	size_t n;

	route_parse(url, &r);
	if (r.kind >= ROUTE_API_VERSIONS) {
		const char *p = prefixes[r.kind];

		n = strlen(r.engine);
		if (n == 0 || n >= ROUTE_ENGINE_MAX || strchr(r.engine, '/'))
			fuzz_fail("engine '%s' of '%s'", r.engine, url);
		if (strncmp(url, p, strlen(p)) != 0 || strncmp(url +
		    strlen(p), r.engine, n) != 0)
			fuzz_fail("'%s' is not its route's prefix and engine",
			    url);
		if (r.kind == ROUTE_API_VERSIONS ? r.rest != NULL ||
		    url[strlen(p) + n] != '\0' : r.rest == NULL ||
		    r.rest != url + strlen(p) + n + 1 || *r.rest == '\0')
			fuzz_fail("the rest of '%s'", url);
	} else if (r.engine[0] != '\0' || r.rest != NULL)
		fuzz_fail("route %d of '%s' names an engine", r.kind, url);
	check_cell(url, r);
	if (r.kind == ROUTE_API_REPORT || r.kind == ROUTE_REPORT) {
		char good[RANGE_END_MAX], bad[RANGE_END_MAX], again[600];
		struct err e = ERR_INIT;

		if (range_split(r.rest, good, bad, &e) == 0) {
			snprintf(again, sizeof(again), "%s..%s", good, bad);
			if (!good[0] || !bad[0] || strcmp(again, r.rest) != 0)
				fuzz_fail("'%s' split as '%s' and '%s'",
				    r.rest, good, bad);
		} else if (!e.usage || e.msg[0] == '\0')
			fuzz_fail("a range refused without a usage message");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	char *line[4] = { NULL }, why[512];
	struct bisect_request q;
	size_t n = 0;

	while (n < 4 && p < end)
		line[n++] = fuzz_line(&p, end);
	if (n == 0)
		line[n++] = fuzz_strndup(data, 0);
	check_route(line[0]);
	memset(why, 'x', sizeof(why));
	if (route_report_request(line[1], line[2], line[3], &q, why,
	    sizeof(why)) == 0) {
		if (q.metric.kind == METRIC_CANARY)
			fuzz_fail("the canary accepted over HTTP");
		if (line[2] && !(q.threshold > 0 && q.threshold < 100))
			fuzz_fail("threshold %g from '%s'", q.threshold,
			    line[2]);
	} else if (memchr(why, '\0', sizeof(why)) == NULL ||
	    (strncmp(why, "metric: ", 8) != 0 &&
	    strncmp(why, "threshold: ", 11) != 0))
		fuzz_fail("a refusal that says nothing: '%.40s'", why);
	for (size_t i = 0; i < n; i++)
		free(line[i]);
	return 0;
}
