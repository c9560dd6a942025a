/*
 * request.c: a request file's text as node-run takes it (see remote.h):
 * its JSON, id and format, the plan the daemon matches the result with,
 * and its cells matched against the engine's.  Pure, so a fuzzer
 * reaches it without a spool, a store or an engine.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/measure/bench.h"
#include "common/err.h"
#include "config/conf.h"
#include "fetch/sha256.h"
#include "remote.h"
#include "wire.h"

int
remote_request_parse(const char *text, size_t len, const char *path,
    json_t **out, struct err *e)
{
	json_error_t je;
	json_t *req, *copy;
	char *plan_text, plan[65];

	*out = NULL;
	if ((req = json_loadb(text, len, 0, &je)) == NULL)
		return err_set(e, "measurement request '%s': line %d: %s",
		    path, je.line, je.text);
	if (!valid_id(jstr(req, "id")) || jstr(req, "format") == NULL ||
	    strcmp(jstr(req, "format"), REQUEST_FORMAT) != 0) {
		json_decref(req);
		return err_set(e, "'%s' is not a measurement request", path);
	}
	/* The plan the daemon will match: the request without its id. */
	copy = json_deep_copy(req);
	json_object_del(copy, "id");
	json_object_del(copy, "anchor");
	plan_text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(copy);
	if (plan_text == NULL || sha256_buf(plan_text, strlen(plan_text),
	    plan) < 0) {
		free(plan_text);
		json_decref(req);
		return err_set(e, "out of memory");
	}
	free(plan_text);
	json_object_set_new(req, "plan", json_string(plan));
	*out = req;
	return 0;
}

int
remote_cells_lengths(const json_t *cells, int *prompts, size_t *np,
    int *gens, size_t *ng)
{
	*np = *ng = 0;
	if (!json_is_array(cells) || json_array_size(cells) == 0 ||
	    json_array_size(cells) > 2 * CONF_MAX_LENGTHS)
		return -1;
	for (size_t i = 0; i < json_array_size(cells); i++) {
		const json_t *c = json_array_get(cells, i);
		const char *kind = jstr(c, "kind");

		int pp = kind && strcmp(kind, "pp") == 0;
		int tg = kind && strcmp(kind, "tg") == 0;
		int64_t len = jint(c, tg ? "gen" : "prompt", 0);

		/* A length no int holds is refused, never cut to another. */
		if ((pp || tg) && (len < 1 || len > INT_MAX))
			return -1;
		if (pp && *np < CONF_MAX_LENGTHS)
			prompts[(*np)++] = (int)len;
		else if (tg && *ng < CONF_MAX_LENGTHS)
			gens[(*ng)++] = (int)len;
	}
	return 0;
}

int
remote_cells_pick(const json_t *cells, const struct bench_cell *all,
    size_t nall, struct bench_cell *out, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < json_array_size(cells); i++) {
		const json_t *c = json_array_get(cells, i);
		const char *kind = jstr(c, "kind"), *content = jstr(c,
		    "content");
		size_t k;

		for (k = 0; k < nall; k++)
			if (kind && content && strcmp(all[k].kind, kind) == 0 &&
			    all[k].prompt == jint(c, "prompt", -1) &&
			    all[k].gen == jint(c, "gen", -1) &&
			    strcmp(all[k].content, content) == 0)
				break;
		if (k == nall)
			return (int)i + 1;
		/* Its own copy: a cell asked twice (contents = prose,prose)
		 * is measured with its text both times. */
		out[i] = all[k];
		if (all[k].content_path != NULL &&
		    (out[i].content_path = strdup(all[k].content_path)) == NULL)
			return -1;
		(*n)++;
	}
	return 0;
}
