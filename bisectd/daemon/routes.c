/*
 * routes.c: the HTTP server's URLs and query options (see routes.h).
 */
#include <stdio.h>
#include <string.h>

#include "routes.h"

static const struct {
	const char *prefix;
	enum route_kind kind;
	int engine;		/* 1: ENGINE follows, 2: ENGINE/REST */
} routes[] = {
	{ "/api/versions/", ROUTE_API_VERSIONS, 1 },
	{ "/api/runs/", ROUTE_API_RUNS, 2 },
	{ "/api/report/", ROUTE_API_REPORT, 2 },
	{ "/report/", ROUTE_REPORT, 2 },
};

void
route_parse(const char *url, struct route *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = ROUTE_NONE;
	if (strcmp(url, "/") == 0)
		out->kind = ROUTE_PAGE;
	else if (strcmp(url, "/metrics") == 0)
		out->kind = ROUTE_METRICS;
	else if (strcmp(url, "/api/status") == 0)
		out->kind = ROUTE_API_STATUS;
	else if (strcmp(url, "/api/alerts") == 0)
		out->kind = ROUTE_API_ALERTS;
	if (out->kind != ROUTE_NONE)
		return;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		size_t n = strlen(routes[i].prefix), name;
		const char *path = url + n, *slash;

		if (strncmp(url, routes[i].prefix, n) != 0)
			continue;
		slash = strchr(path, '/');
		name = slash ? (size_t)(slash - path) : strlen(path);
		if (name == 0 || name >= ROUTE_ENGINE_MAX)
			return;
		if (routes[i].engine == 1 && slash != NULL)
			return;
		if (routes[i].engine == 2 && (slash == NULL ||
		    slash[1] == '\0'))
			return;
		memcpy(out->engine, path, name);
		out->engine[name] = '\0';
		out->rest = slash ? slash + 1 : NULL;
		out->path = routes[i].engine == 2 ? path : NULL;
		out->kind = routes[i].kind;
		return;
	}
}

void
route_engine(struct route *out, int (*known)(const void *, const char *),
    const void *arg)
{
	char name[ROUTE_ENGINE_MAX];
	const char *p, *best = NULL;

	if (out->path == NULL)
		return;
	/* Each '/' but the last ends a candidate: a rest stays. */
	for (p = strchr(out->path, '/'); p != NULL; p = strchr(p + 1, '/')) {
		size_t n = (size_t)(p - out->path);

		if (n >= sizeof(name) || p[1] == '\0')
			break;
		memcpy(name, out->path, n);
		name[n] = '\0';
		if (known(arg, name))
			best = p;
	}
	if (best == NULL)
		return;
	memcpy(out->engine, out->path, (size_t)(best - out->path));
	out->engine[best - out->path] = '\0';
	out->rest = best + 1;
}

int
route_report_request(const char *metric, const char *threshold,
    const char *all, struct bisect_request *req, char *why, size_t len)
{
	int bad;

	bisect_request_init(req);
	bad = bisect_request_set(req, metric, threshold);
	/* The canary's report is bisectctl's alone. */
	if (bad == BISECT_REQUEST_BAD_METRIC || bisect_request_canary(req)) {
		snprintf(why, len, "metric: expected per-token, fixed, ppN or "
		    "tgN, got '%s'", metric ? metric : "");
		return -1;
	}
	if (bad == BISECT_REQUEST_BAD_THRESHOLD) {
		snprintf(why, len, "threshold: expected a percentage such as "
		    "20%%, got '%s'", threshold ? threshold : "");
		return -1;
	}
	req->all = all != NULL && strcmp(all, "0") != 0;
	return 0;
}
