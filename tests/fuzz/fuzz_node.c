/*
 * fuzz_node.c: the JSON of a remote measurement past its checks of
 * ownership and checksum: a request as node-run reads it and matches
 * its cells to the engine's (bisectd/remote/request.c), and the runs of
 * a result as the ingest reads them into the store's structs
 * (bisectd/remote/result.c).  The input is one JSON text, read as both;
 * its length picks the engine's decode contents (none, two kinds, one
 * kind twice).
 *
 * Properties: a request taken has a valid id, the request format and a
 * plan of 64 hex digits that another id or anchor leaves alone and
 * another field changes; a refusal names the file.  The cells picked
 * are the request's, in its order, each one of the engine's with its
 * own content file; the first refused is none of the engine's.  A
 * sample taken keeps every figure of the file as it is there.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/measure/bench.h"
#include "bisectd/remote/remote.h"
#include "common/err.h"
#include "config/conf.h"
#include "store/run.h"
#include "fuzz.h"

#define PATH	"r.request"
#define OTHER_ID "fedcba9876543210fedcba9876543210"

static int
is_hex(const char *s, size_t n)
{
	return s != NULL && strlen(s) == n &&
	    strspn(s, "0123456789abcdef") == n;
}

static const char *
str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The plan of the request text of v, or "" when it is refused. */
static void
plan_of(json_t *v, char plan[65])
{
	struct err e = ERR_INIT;
	char *text = json_dumps(v, JSON_COMPACT);
	json_t *req = NULL;

	plan[0] = '\0';
	if (text == NULL)
		abort();
	if (remote_request_parse(text, strlen(text), PATH, &req, &e) == 0)
		snprintf(plan, 65, "%s", str(req, "plan"));
	json_decref(req);
	free(text);
}

static void
check_request(const char *text, size_t size, json_t *root)
{
	struct err e = ERR_INIT;
	json_t *req = (json_t *)1, *v;
	char plan[65], again[65];

	if (remote_request_parse(text, size, PATH, &req, &e) < 0) {
		if (req != NULL)
			fuzz_fail("refused, yet with a request");
		if (strstr(e.msg, "'" PATH "'") == NULL)
			fuzz_fail("refusal '%s' does not name the file", e.msg);
		return;
	}
	if (!is_hex(str(req, "id"), 32) || str(req, "format") == NULL ||
	    strcmp(str(req, "format"), "bisectd-request") != 0)
		fuzz_fail("taken without an id or the request format");
	if (!is_hex(str(req, "plan"), 64))
		fuzz_fail("plan '%s' is not 64 hex digits",
		    str(req, "plan") ? str(req, "plan") : "(none)");
	snprintf(plan, sizeof(plan), "%s", str(req, "plan"));
	json_decref(req);

	/* The same measurement under another id and anchor. */
	v = json_deep_copy(root);
	json_object_set_new(v, "id", json_string(OTHER_ID));
	json_object_set_new(v, "anchor", json_integer(7));
	plan_of(v, again);
	if (strcmp(plan, again) != 0)
		fuzz_fail("another id or anchor changes the plan");
	/* Another measurement. */
	if (json_object_get(v, "fuzz-other") == NULL) {
		json_object_set_new(v, "fuzz-other", json_true());
		plan_of(v, again);
		if (strcmp(plan, again) == 0)
			fuzz_fail("another request has the same plan");
	}
	json_decref(v);
}

static int
same_cell(const json_t *c, const struct bench_cell *b)
{
	const json_t *p = json_object_get(c, "prompt"),
	    *g = json_object_get(c, "gen");

	return str(c, "kind") && str(c, "content") &&
	    strcmp(str(c, "kind"), b->kind) == 0 &&
	    strcmp(str(c, "content"), b->content) == 0 &&
	    json_is_integer(p) && json_integer_value(p) == b->prompt &&
	    json_is_integer(g) && json_integer_value(g) == b->gen;
}

static char *
content_path(const char *content)
{
	char *p;

	if (asprintf(&p, "/cache/contents/%s.txt", content) < 0)
		abort();
	return p;
}

static void
free_cells(struct bench_cell *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].content_path);
	free(v);
}

/* The engine's cells for the lengths, as bench_cells() makes them. */
static struct bench_cell *
engine_cells(const int *prompts, size_t np, const int *gens, size_t ng,
    const char *const *contents, size_t nk, size_t *n)
{
	struct bench_cell *all = calloc(np + ng * (nk ? nk : 1) + 1,
	    sizeof(*all));
	size_t k = 0;

	if (all == NULL)
		abort();
	for (size_t i = 0; i < np; i++) {
		all[k].kind = "pp";
		all[k].prompt = prompts[i];
		all[k++].content = "";
	}
	for (size_t g = 0; g < ng; g++)
		for (size_t j = 0; j < (nk ? nk : 1); j++) {
			all[k].kind = "tg";
			all[k].gen = gens[g];
			all[k].content = nk ? contents[j] : "";
			if (nk)
				all[k].content_path = content_path(contents[j]);
			k++;
		}
	*n = k;
	return all;
}

static void
check_cells(const json_t *cells, size_t size)
{
	static const char *const kinds[][2] = {
		{ NULL, NULL }, { "prose", "random" }, { "prose", "prose" },
	};
	const char *const *contents = kinds[size % 3];
	size_t nk = contents[0] ? 2 : 0;
	int prompts[CONF_MAX_LENGTHS], gens[CONF_MAX_LENGTHS];
	size_t np, ng, nall, ncells = json_array_size(cells), n = 0, pp = 0,
	    tg = 0;
	struct bench_cell *all, *out;
	int bad;

	int bad_len = 0;

	/* A pp or tg cell of a length no int holds, or none, is refused. */
	for (size_t i = 0; i < ncells; i++) {
		const json_t *c = json_array_get(cells, i);
		const char *k = str(c, "kind");
		int is_pp = k && strcmp(k, "pp") == 0;
		const json_t *len = json_object_get(c, is_pp ? "prompt" : "gen");

		if ((is_pp || (k && strcmp(k, "tg") == 0)) &&
		    (!json_is_integer(len) || json_integer_value(len) < 1 ||
		    json_integer_value(len) > INT_MAX))
			bad_len = 1;
	}
	if (remote_cells_lengths(cells, prompts, &np, gens, &ng) < 0) {
		if (json_is_array(cells) && ncells > 0 &&
		    ncells <= 2 * CONF_MAX_LENGTHS && !bad_len)
			fuzz_fail("%zu cells refused", ncells);
		return;
	}
	if (ncells == 0 || ncells > 2 * CONF_MAX_LENGTHS || bad_len)
		fuzz_fail("%zu cells taken", ncells);
	for (size_t i = 0; i < ncells; i++) {
		const json_t *c = json_array_get(cells, i);
		const json_t *len = json_object_get(c,
		    str(c, "kind") && strcmp(str(c, "kind"), "pp") == 0 ?
		    "prompt" : "gen");
		int want = json_is_integer(len) ? (int)json_integer_value(len) :
		    0;

		if (str(c, "kind") && strcmp(str(c, "kind"), "pp") == 0 &&
		    pp < CONF_MAX_LENGTHS && prompts[pp++] != want)
			fuzz_fail("prompt %zu is %d, not %d", pp,
			    prompts[pp - 1], want);
		if (str(c, "kind") && strcmp(str(c, "kind"), "tg") == 0 &&
		    tg < CONF_MAX_LENGTHS && gens[tg++] != want)
			fuzz_fail("gen %zu is %d, not %d", tg, gens[tg - 1],
			    want);
	}
	if (np != pp || ng != tg)
		fuzz_fail("%zu prompts and %zu gens of %zu and %zu", np, ng, pp,
		    tg);

	all = engine_cells(prompts, np, gens, ng, contents, nk, &nall);
	if ((out = calloc(ncells, sizeof(*out))) == NULL)
		abort();
	bad = remote_cells_pick(cells, all, nall, out, &n);
	if (bad < 0 || (size_t)bad > ncells)
		fuzz_fail("pick returned %d of %zu cells", bad, ncells);
	if (n != (bad ? (size_t)bad - 1 : ncells))
		fuzz_fail("%zu cells picked, refused %d", n, bad);
	for (size_t i = 0; i < n; i++) {
		const json_t *c = json_array_get(cells, i);

		if (!same_cell(c, &out[i]))
			fuzz_fail("cell %zu picked is not the request's",
			    i + 1);
		if ((out[i].content_path == NULL) !=
		    (out[i].content[0] == '\0'))
			fuzz_fail("cell %zu (%s) %s a content file", i + 1,
			    out[i].content, out[i].content_path ? "has" :
			    "lacks");
		if (out[i].content_path != NULL) {
			char *want = content_path(out[i].content);

			if (strcmp(out[i].content_path, want) != 0)
				fuzz_fail("cell %zu has content file %s", i + 1,
				    out[i].content_path);
			free(want);
		}
	}
	if (bad) {
		for (size_t k = 0; k < nall; k++)
			if (same_cell(json_array_get(cells, (size_t)bad - 1),
			    &all[k]))
				fuzz_fail("cell %d refused, yet the engine's "
				    "cell %zu", bad, k + 1);
	}
	free_cells(out, n);
	free_cells(all, nall);
}

static void
check_runs(const json_t *runs)
{
	size_t i;
	const json_t *x;

	json_array_foreach(runs, i, x) {
		const json_t *a = json_object_get(x, "samples");
		struct store_run r;
		struct store_sample *v = NULL;
		struct err e = ERR_INIT;
		size_t n = 0;

		if (remote_run_from_json(x, &r, &e) < 0) {
			if (e.msg[0] == '\0')
				fuzz_fail("run %zu refused without a message", i);
			continue;
		}
		/* What is taken is the file's, never cut to an int. */
		if ((json_is_integer(json_object_get(x, "prompt")) &&
		    json_integer_value(json_object_get(x, "prompt")) !=
		    r.prompt_tokens) ||
		    (json_is_integer(json_object_get(x, "rep")) &&
		    json_integer_value(json_object_get(x, "rep")) != r.rep))
			fuzz_fail("run %zu's prompt or rep is not the file's", i);
		if (r.kind != str(x, "kind") || r.mode != str(x, "mode") ||
		    r.parser != str(x, "parser"))
			fuzz_fail("run %zu's strings are not its own", i);
		if (r.out != NULL && strlen(r.out) != r.out_len)
			fuzz_fail("run %zu's stdout is %zu bytes, not %zu", i,
			    strlen(r.out), r.out_len);
		if ((r.warmup | r.confirm | r.busy | r.out_truncated) & ~1)
			fuzz_fail("run %zu has a flag other than 0 or 1", i);
		if (remote_samples_from_json(x, &v, &n, &e) < 0) {
			if (e.msg[0] == '\0')
				fuzz_fail("samples refused without a message");
			free(v);
			continue;
		}
		if (n != json_array_size(a))
			fuzz_fail("%zu samples of %zu", n, json_array_size(a));
		for (size_t k = 0; k < n; k++) {
			const json_t *s = json_array_get(a, k);
			json_int_t f[7];

			for (size_t j = 0; j < 7; j++)
				f[j] = json_integer_value(json_array_get(s, j));
			if (f[0] != v[k].prompt_tokens ||
			    f[1] != v[k].gen_tokens ||
			    f[2] != v[k].wall_ns || f[3] != v[k].engine_ns ||
			    f[4] != v[k].user_ns || f[5] != v[k].sys_ns ||
			    f[6] != v[k].max_rss_kb)
				fuzz_fail("sample %zu of run %zu is not the "
				    "file's", k, i);
		}
		free(v);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	json_error_t je;
	json_t *root = json_loadb(text, size, 0, &je);

	check_request(text, size, root);
	if (root != NULL) {
		check_cells(json_object_get(root, "cells"), size);
		check_runs(json_object_get(root, "runs"));
	}
	json_decref(root);
	return 0;
}
