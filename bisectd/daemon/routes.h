/*
 * routes.h: what the HTTP server's URLs and query options say, read by
 * pure functions (the server in http.c answers them; fuzz_route feeds
 * them anything).  Everything here comes from an HTTP client: nothing
 * is trusted, nothing found here is a path.
 */
#ifndef BISECTD_ROUTES_H
#define BISECTD_ROUTES_H

#include <stddef.h>

#include "bisectd/search/request.h"

enum route_kind {
	ROUTE_NONE,		/* no such page: 404 */
	ROUTE_PAGE,		/* / */
	ROUTE_METRICS,		/* /metrics */
	ROUTE_API_STATUS,	/* /api/status */
	ROUTE_API_ALERTS,	/* /api/alerts */
	ROUTE_API_VERSIONS,	/* /api/versions/ENGINE */
	ROUTE_API_RUNS,		/* /api/runs/ENGINE/VERSION */
	ROUTE_API_REPORT,	/* /api/report/ENGINE/A..B */
	ROUTE_REPORT		/* /report/ENGINE/A..B */
};

#define ROUTE_ENGINE_MAX 256

struct route {
	enum route_kind kind;
	char engine[ROUTE_ENGINE_MAX];	/* "" when the route has none */
	const char *rest;	/* what follows ENGINE/ (a version, a range),
				 * pointing into the URL; NULL when none */
	const char *path;	/* ENGINE/REST as the URL has it, or NULL */
};

/*
 * The route of url (its path, as libmicrohttpd gives it).  An engine's
 * name is the segment after the prefix, non-empty and shorter than
 * ROUTE_ENGINE_MAX; a route with a rest wants one, non-empty, and one
 * without refuses a slash.  Anything else is ROUTE_NONE.
 */
void route_parse(const char *url, struct route *out);

/*
 * A matrix's cell is named ENGINE/RUNNER/WEIGHTS (docs/fleet.md): the
 * longest run of out->path's first segments that known(arg, name) says
 * is an engine or a matrix names it, and the rest follows.  Nothing
 * changes when no longer run is known.
 */
void route_engine(struct route *out, int (*known)(const void *, const char *),
    const void *arg);

/*
 * A report's query options, ?metric=M&threshold=P&all=1 as bisectctl
 * report's (each NULL when absent), into req.  0, or -1 with the 400
 * answer's text in why.
 */
int route_report_request(const char *metric, const char *threshold,
    const char *all, struct bisect_request *req, char *why, size_t len);

#endif
