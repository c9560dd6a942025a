/*
 * test_node_request.c: what node-run reads of a request
 * (bisectd/remote/request.c) and what the ingest reads of a result's
 * samples (bisectd/remote/result.c): the request's id, format and plan;
 * its cells, each with its own content file even when asked twice; a
 * sample whose token count an int cannot hold refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/measure/bench.h"
#include "bisectd/remote/remote.h"
#include "check.h"
#include "check_conf.h"
#include "common/err.h"
#include "config/conf.h"
#include "store/run.h"

#define ID	"0123456789abcdef0123456789abcdef"

static const char conf_text[] =
    "[bisectd]\n\tdatabase = t.db\n\tcache = cache\n"
    "[weights \"w\"]\n\tpath = w.bin\n"
    "[engine \"eng\"]\n\tsource = dir:rel\n"
    "\tasset = basert-{version}.tar.gz\n"
    "\tcommand = {bin}/bin/engine -p {prompt} -n {gen} -f {content}\n"
    "\tweights = w\n\tprompts = 128,512\n\tgen = 16\n"
    /* One kind twice is accepted, so the daemon asks each cell twice. */
    "\tcontents = prose,prose\n";

static int
parse(const char *text, json_t **out, struct err *e)
{
	return remote_request_parse(text, strlen(text), "r.request", out, e);
}

static void
test_request(void)
{
	struct err e = ERR_INIT;
	json_t *a, *b;
	char plan[65];

	CHECK_INT(parse("{\"format\":\"bisectd-request\",\"id\":\"" ID "\","
	    "\"anchor\":2,\"engine\":\"eng\"}", &a, &e), 0);
	CHECK(a != NULL);
	if (a == NULL)
		return;
	CHECK_INT(strlen(json_string_value(json_object_get(a, "plan"))), 64);
	snprintf(plan, sizeof(plan), "%s",
	    json_string_value(json_object_get(a, "plan")));
	/* The same measurement with another id and anchor: one plan. */
	CHECK_INT(parse("{\"engine\":\"eng\",\"anchor\":5,"
	    "\"id\":\"fedcba9876543210fedcba9876543210\","
	    "\"format\":\"bisectd-request\"}", &b, &e), 0);
	CHECK_STR(json_string_value(json_object_get(b, "plan")), plan);
	json_decref(a);
	json_decref(b);

	CHECK_INT(parse("{\"format\":\"bisectd-request\","
	    "\"id\":\"0123456789ABCDEF0123456789abcdef\"}", &a, &e), -1);
	CHECK(a == NULL);
	CHECK_STR(e.msg, "'r.request' is not a measurement request");
	CHECK_INT(parse("{\"id\":", &a, &e), -1);
	CHECK_CONTAINS(e.msg, "measurement request 'r.request': line 1");
}

static void
test_cells_twice(void)
{
	struct conf *conf = check_conf_load(conf_text);
	const struct conf_engine *eng;
	struct err e = ERR_INIT;
	struct bench_cell *all = NULL, out[3];
	json_t *cells;
	int prompts[CONF_MAX_LENGTHS], gens[CONF_MAX_LENGTHS];
	size_t np, ng, nall = 0, n = 0;

	CHECK(conf != NULL);
	if (conf == NULL)
		return;
	eng = conf_engine(conf, "eng");
	cells = json_loads("[{\"kind\":\"pp\",\"prompt\":128,\"gen\":0,"
	    "\"content\":\"\"},{\"kind\":\"tg\",\"prompt\":0,\"gen\":16,"
	    "\"content\":\"prose\"},{\"kind\":\"tg\",\"prompt\":0,\"gen\":16,"
	    "\"content\":\"prose\"}]", 0, NULL);
	CHECK_INT(remote_cells_lengths(cells, prompts, &np, gens, &ng), 0);
	CHECK_INT(np, 1);
	CHECK_INT(ng, 2);
	CHECK_INT(bench_cells(conf, eng, prompts, np, gens, ng, 0, &all, &nall,
	    &e), 0);
	CHECK_INT(remote_cells_pick(cells, all, nall, out, &n), 0);
	CHECK_INT(n, 3);
	CHECK(out[0].content_path == NULL);
	/* Both decode cells read the text; the second used to get none
	 * and was measured on an empty content. */
	for (size_t i = 1; i < n; i++) {
		CHECK(out[i].content_path != NULL);
		if (out[i].content_path != NULL)
			CHECK_CONTAINS(out[i].content_path, "prose");
	}
	for (size_t i = 0; i < n; i++)
		free(out[i].content_path);
	bench_cells_free(all, nall);

	/* A cell this configuration does not have is named. */
	json_decref(cells);
	cells = json_loads("[{\"kind\":\"pp\",\"prompt\":128,\"gen\":0,"
	    "\"content\":\"\"},{\"kind\":\"tg\",\"prompt\":0,\"gen\":16,"
	    "\"content\":\"random\"}]", 0, NULL);
	CHECK_INT(remote_cells_lengths(cells, prompts, &np, gens, &ng), 0);
	CHECK_INT(bench_cells(conf, eng, prompts, np, gens, ng, 0, &all, &nall,
	    &e), 0);
	CHECK_INT(remote_cells_pick(cells, all, nall, out, &n), 2);
	CHECK_INT(n, 1);
	bench_cells_free(all, nall);
	json_decref(cells);

	/* A length past INT_MAX is refused, not cut to 128. */
	cells = json_loads("[{\"kind\":\"pp\",\"prompt\":4294967424,"
	    "\"gen\":0,\"content\":\"\"}]", 0, NULL);
	CHECK_INT(remote_cells_lengths(cells, prompts, &np, gens, &ng), -1);
	json_decref(cells);
	conf_free(conf);
}

static void
test_samples(void)
{
	struct err e = ERR_INIT;
	struct store_sample *v = NULL;
	size_t n = 0;
	json_t *run;

	run = json_loads("{\"samples\":[[128,0,1000,900,800,10,2048],"
	    "[2147483647,0,1,1,1,1,1]]}", 0, NULL);
	CHECK_INT(remote_samples_from_json(run, &v, &n, &e), 0);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_INT(v[0].prompt_tokens, 128);
		CHECK_INT(v[0].max_rss_kb, 2048);
		CHECK_INT(v[1].prompt_tokens, 2147483647);
	}
	free(v);
	json_decref(run);

	/* 2^32 + 128 tokens used to be stored as 128. */
	run = json_loads("{\"samples\":[[128,0,1,1,1,1,1],"
	    "[4294967424,0,1,1,1,1,1]]}", 0, NULL);
	CHECK_INT(remote_samples_from_json(run, &v, &n, &e), -1);
	CHECK_STR(e.msg, "a sample of 4294967424 and 0 tokens");
	free(v);
	json_decref(run);
	run = json_loads("{\"samples\":[[0,-1,1,1,1,1,1]]}", 0, NULL);
	CHECK_INT(remote_samples_from_json(run, &v, &n, &e), -1);
	free(v);
	json_decref(run);
}

/* A run's ints as the file has them, or refused: never cut to an int. */
static void
test_run_fields(void)
{
	struct err e = ERR_INIT;
	struct store_run r;
	json_t *run;

	run = json_loads("{\"kind\":\"pp\",\"prompt\":2147483647,"
	    "\"gen\":0,\"rep\":3,\"exit_code\":-1,\"signal\":9}", 0, NULL);
	CHECK_INT(remote_run_from_json(run, &r, &e), 0);
	CHECK_INT(r.prompt_tokens, 2147483647);
	CHECK_INT(r.rep, 3);
	CHECK_INT(r.end.exit_code, -1);
	CHECK_INT(r.end.signal, 9);
	json_decref(run);
	run = json_loads("{\"kind\":\"pp\",\"prompt\":4294967424}", 0,
	    NULL);
	CHECK_INT(remote_run_from_json(run, &r, &e), -1);
	CHECK_STR(e.msg, "a run's prompt of 4294967424 is out of range");
	json_decref(run);
	run = json_loads("{\"kind\":\"pp\",\"rep\":-2}", 0, NULL);
	memset(&e, 0, sizeof(e));
	CHECK_INT(remote_run_from_json(run, &r, &e), -1);
	CHECK_STR(e.msg, "a run's rep of -2 is out of range");
	json_decref(run);
}

int
main(void)
{
	check_tmpdir("node_request");
	check_write_file("w.bin", "weights\n");
	CHECK_CASE(test_request);
	CHECK_CASE(test_cells_twice);
	CHECK_CASE(test_samples);
	CHECK_CASE(test_run_fields);
	return check_done();
}
