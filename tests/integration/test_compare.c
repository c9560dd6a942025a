/*
 * test_compare.c: bisectctl compare, the league table.  Three fake
 * engines: cmpa four times cheaper per prompt token and twice per
 * generated token than cmpb and cmpc, which cost the same.  cmpa ranks
 * 1, cmpb and cmpc tie at 2; cmpc runs on other weights and is flagged,
 * its own pre and post commands run;
 * the runs of the three alternate; every format says it; an engine
 * whose noise is above its max-cv is warned of, a server's prefill is
 * marked a lower bound, the demo's releases rank as its story goes;
 * unknown engines and versions are usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "check_cli.h"
#include "check_json.h"

static const char *ctl, *build;
static char ctl_conf[CLI_CTL_CONF_MAX];	/* bisectctl -c m.conf */
static const char *const names[] = { "cmpa", "cmpb", "cmpc" };

static void
write_config(void)
{
	char text[8192], source[1024], cwd[2048], extra[5200];
	size_t len;
	int port;

	/* Other bytes than the demo's weights: another weights file. */
	check_write_file("other.bin", "OTHER WEIGHTS 1\n");
	len = check_demo_head(text, sizeof(text), "m.db", build);
	len += (size_t)snprintf(text + len, sizeof(text) - len,
	    "[weights \"other\"]\n\tpath = other.bin\n");
	snprintf(source, sizeof(source), "dir:%s/tests/releases", build);
	check_fake_engine(text, sizeof(text), &len, "cmpa", source,
	    "\tweights = demo\n\ttimeout = 1m\n");
	check_fake_engine(text, sizeof(text), &len, "cmpb", source,
	    "\tweights = demo\n\ttimeout = 1m\n");
	/* cmpc's own pre and post commands, run around its runs although
	 * cmpa leads the loop. */
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		abort();
	snprintf(extra, sizeof(extra), "\tweights = other\n\ttimeout = 1m\n"
	    "\tpre = /usr/bin/touch %s/cmpc.pre\n"
	    "\tpost = /usr/bin/touch %s/cmpc.post\n", cwd, cwd);
	check_fake_engine(text, sizeof(text), &len, "cmpc", source, extra);
	/* cmpb's releases again, held to a max-cv below their 2% noise. */
	len += (size_t)snprintf(text + len, sizeof(text) - len,
	    "[engine \"strict\"]\n\tsource = %s\n"
	    "\tasset = cmpb-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 64,256\n\tgen = 16\n"
	    "\tweights = demo\n\ttimeout = 1m\n\tmax-cv = 0.1%%\n", source);
	/* The srv releases as a server: prefill timed to the first token. */
	port = check_free_port();
	len += (size_t)snprintf(text + len, sizeof(text) - len,
	    "[engine \"server\"]\n\tsource = %s\n"
	    "\tasset = srv-{version}.tar.gz\n\tmode = server\n"
	    "\tcommand = {bin}/bin/fake-engine --server --port %d -m "
	    "{weights}\n\turl = http://127.0.0.1:%d/v1/completions\n"
	    "\tprompts = 64,512\n\tweights = demo\n\ttimeout = 1m\n", source,
	    port, port);
	/* The demo's releases, timed by the CPU clock. */
	len += (size_t)snprintf(text + len, sizeof(text) - len,
	    "[engine \"basert\"]\n\tsource = dir:%s/tests/demo-cpu\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 512,2048\n\tfit = 512,2048\n"
	    "\tgen = 32\n\tweights = demo\n\ttimeout = 1m\n", build);
	check_write_file("m.conf", text);
}

/* The league table l's entry of engine, or NULL. */
static json_t *
entry_of(json_t *l, const char *engine)
{
	return check_entry(l, "entries", "engine", engine);
}

/*
 * Whether cmpb's and cmpc's 95% intervals of figure (prefill or decode)
 * at tokens overlap.  They cost the same, yet two such intervals miss
 * each other about 0.5% of the time: the tie is asserted where the rule
 * gives it, never by chance.
 */
static int
bc_overlap(json_t *l, const char *figure, json_int_t tokens)
{
	double lo[2], hi[2];

	for (int k = 0; k < 2; k++) {
		json_t *x, *ci = NULL;
		size_t i;

		json_array_foreach(json_object_get(entry_of(l, k ? "cmpc" :
		    "cmpb"), figure), i, x)
			if (json_integer_value(json_object_get(x, "tokens")) ==
			    tokens)
				ci = json_object_get(x, "ci");
		lo[k] = json_number_value(json_array_get(ci, 0));
		hi[k] = json_number_value(json_array_get(ci, 1));
	}
	return !(lo[0] > hi[1] || lo[1] > hi[0]);
}

/* cmpb's and cmpc's ranks in figure: tied at 2 where their intervals
 * overlap, else 2 and 3, the faster first. */
static void
check_bc_ranks(json_t *l, const char *figure, json_int_t tokens)
{
	char key[32], tie[32];
	json_int_t b, c;

	snprintf(key, sizeof(key), "%s_rank", figure);
	snprintf(tie, sizeof(tie), "%s_tie", figure);
	b = json_integer_value(json_object_get(entry_of(l, "cmpb"), key));
	c = json_integer_value(json_object_get(entry_of(l, "cmpc"), key));
	if (bc_overlap(l, figure, tokens)) {
		CHECK_INT(b, 2);
		CHECK_INT(c, 2);
		CHECK(json_is_true(json_object_get(entry_of(l, "cmpb"), tie)));
	} else {
		fprintf(stderr, "cmpb and cmpc apart in %s by chance\n",
		    figure);
		CHECK((b == 2 && c == 3) || (b == 3 && c == 2));
	}
}

/* out holds one of the lines a rank of cmpb or cmpc can give: tied at
 * 2, or 2 or 3 where this measurement's intervals missed each other. */
static int
has_bc_rank(const char *out, const char *tied, const char *second,
    const char *third)
{
	return out != NULL && (strstr(out, tied) || strstr(out, second) ||
	    strstr(out, third));
}

static json_int_t
rank(json_t *l, const char *engine, const char *which)
{
	return json_integer_value(json_object_get(entry_of(l, engine),
	    which));
}

/* The league as JSON, measured once for the cases that read it. */
static json_t *league;

static json_t *
measured(void)
{
	if (league == NULL)
		CHECK_INT(check_ctl_json(ctl_conf, "--format json compare cmpa "
		    "cmpb@1.0.0 cmpc --reps 8", 0, &league), 0);
	return league;
}

static void
test_ranks(void)
{
	json_t *l = measured(), *n, *x;
	size_t i;
	int said = 0;

	if (l == NULL)
		return;
	CHECK_INT(json_integer_value(json_object_get(l, "rank_prompt")), 256);
	CHECK_INT(json_integer_value(json_object_get(l, "rank_gen")), 16);
	CHECK_INT(rank(l, "cmpa", "prefill_rank"), 1);
	check_bc_ranks(l, "prefill", 256);
	CHECK(!json_is_true(json_object_get(entry_of(l, "cmpa"),
	    "prefill_tie")));
	CHECK_INT(rank(l, "cmpa", "decode_rank"), 1);
	check_bc_ranks(l, "decode", 16);
	/* The first engine named leads the table. */
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    json_object_get(l, "entries"), 0), "engine")), "cmpa");
	/* Each figure with its spread and n; the fit's ceiling. */
	x = json_array_get(json_object_get(entry_of(l, "cmpb"), "prefill"),
	    1);
	CHECK_INT(json_integer_value(json_object_get(x, "tokens")), 256);
	CHECK_INT(json_integer_value(json_object_get(x, "n")), 8);
	CHECK(json_real_value(json_object_get(x, "sd")) > 0);
	/* 256 tokens in 2 + 10.24 ms: about 20.9 tok/ms. */
	CHECK(json_real_value(json_object_get(x, "tps")) > 15000 &&
	    json_real_value(json_object_get(x, "tps")) < 25000);
	x = json_object_get(entry_of(l, "cmpa"), "fit");
	/* 10 us per token: a ceiling of 100,000 tok/s. */
	CHECK(json_real_value(json_object_get(x, "ceiling_tps")) > 70000 &&
	    json_real_value(json_object_get(x, "ceiling_tps")) < 130000);
	/* The weights difference, flagged on cmpc alone. */
	CHECK(json_is_true(json_object_get(l, "weights_differ")));
	CHECK(json_is_true(json_object_get(entry_of(l, "cmpc"),
	    "other_weights")));
	CHECK(!json_is_true(json_object_get(entry_of(l, "cmpb"),
	    "other_weights")));
	json_array_foreach(json_object_get(l, "notes"), i, n)
		said |= strstr(json_string_value(n), "cmpc 1.0.0 runs on other "
		    "weights") != NULL;
	CHECK(said);
	CHECK(access("cmpc.pre", F_OK) == 0);
	CHECK(access("cmpc.post", F_OK) == 0);
}

/* A stored run: its id, its engine, when it started. */
struct stored {
	long long id, started;
	size_t engine;
};

static int
by_id(const void *a, const void *b)
{
	const struct stored *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The stored runs, in the order they ran (run ids), alternate a b c. */
static void
test_interleaved(void)
{
	struct stored v[768];
	size_t n = 0, per[3] = { 0, 0, 0 };

	if (measured() == NULL)
		return;
	for (size_t e = 0; e < 3; e++) {
		char args[128];
		json_t *runs = NULL, *r;
		size_t i;

		snprintf(args, sizeof(args), "--format json runs %s 1.0.0",
		    names[e]);
		CHECK_INT(check_ctl_json(ctl_conf, args, 0, &runs), 0);
		json_array_foreach(runs, i, r)
			if (n < sizeof(v) / sizeof(v[0])) {
				v[n].id = json_integer_value(json_object_get(r,
				    "id"));
				v[n].started = json_integer_value(
				    json_object_get(r, "started"));
				v[n++].engine = e;
				per[e]++;
			}
		json_decref(runs);
	}
	/* 3 cells x 8 runs each, warm-ups besides. */
	CHECK(per[0] >= 24);
	CHECK(per[0] == per[1] && per[1] == per[2]);
	qsort(v, n, sizeof(v[0]), by_id);
	for (size_t k = 0; k < n; k++) {
		/* The k-th run stored is engine k mod 3's, and none started
		 * before the one stored ahead of it. */
		CHECK_INT(v[k].engine, k % 3);
		CHECK(k == 0 || v[k].started >= v[k - 1].started);
	}
}

static void
test_formats(void)
{
	char *out = NULL;

	if (measured() == NULL)
		return;
	/* Measured again each time: what every format shows the same. */
	CHECK_INT(check_ctl_run(ctl_conf, "compare cmpa cmpb cmpc --reps 4",
	    &out), 0);
	CHECK_CONTAINS(out, "ranked by prefill tok/s at pp256, decode apart "
	    "at tg16");
	CHECK(out && strstr(out, "\n1     cmpa 1.0.0") != NULL);
	CHECK(has_bc_rank(out, "\n2=    cmpb 1.0.0", "\n2     cmpb 1.0.0",
	    "\n3     cmpb 1.0.0"));
	CHECK(has_bc_rank(out, "\n2=    cmpc 1.0.0", "\n2     cmpc 1.0.0",
	    "\n3     cmpc 1.0.0"));
	CHECK_CONTAINS(out, "(n12)");
	CHECK_CONTAINS(out, "notes:\n  cmpc 1.0.0 runs on other weights");
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "compare cmpa cmpb cmpc --reps 1 "
	    "--format markdown", &out), 0);
	CHECK_CONTAINS(out, "| Rank | Engine | Weights |");
	CHECK_CONTAINS(out, "| 1 | cmpa 1.0.0 | demo |");
	CHECK(has_bc_rank(out, "| 2= | cmpc 1.0.0 | other (other) |",
	    "| 2 | cmpc 1.0.0 | other (other) |",
	    "| 3 | cmpc 1.0.0 | other (other) |"));
	CHECK_CONTAINS(out, "**Notes**\n\n- cmpc 1.0.0 runs on other weights");
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "compare cmpa cmpb cmpc --reps 1 "
	    "--format csv", &out), 0);
	CHECK_CONTAINS(out, "engine,version,weights_sha256,other_weights,"
	    "metric,tokens,rank,value,sd,lo,hi,cv,n,lower_bound,noisy\n");
	CHECK_CONTAINS(out, "\"cmpa\",\"1.0.0\",");
	CHECK_CONTAINS(out, ",0,pp,256,\"1\",");
	CHECK(has_bc_rank(out, ",1,pp,256,\"2=\",", ",1,pp,256,\"2\",",
	    ",1,pp,256,\"3\","));
	CHECK_CONTAINS(out, ",per-token-ms,,");
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "compare cmpa cmpb cmpc --reps 1 "
	    "--format html >league.html", NULL), 0);
	check_xpath_is("league.html", "count(//*[local-name()=\"table\" and "
	    "@id=\"league\"]//*[local-name()=\"tbody\"]/*[local-name()="
	    "\"tr\"])", "3");
	check_xpath_is("league.html", "string(//*[local-name()=\"tr\" and "
	    "@class=\"other-weights\"]/*[@class=\"engine\"])", "cmpc 1.0.0");
	/* A bar with an error bar per engine, prefill and decode. */
	check_xpath_is("league.html", "count(//*[local-name()=\"svg\" and "
	    "@id=\"prefill-bars\"]//*[local-name()=\"rect\"])", "3");
	check_xpath_is("league.html", "count(//*[local-name()=\"svg\" and "
	    "@id=\"decode-bars\"]//*[local-name()=\"path\" and "
	    "@class=\"ci\"])", "3");
}

/* A CV above max-cv is warned of beside the figure, with the figure. */
static void
test_noisy(void)
{
	char *out = NULL;

	CHECK_INT(check_ctl_run(ctl_conf, "compare cmpa strict --reps 4",
	    &out), 0);
	CHECK_CONTAINS(out, "above max-cv 0.1%");
	CHECK_CONTAINS(out, "!");
	free(out);
}

/* A server's prefill is a lower bound, and says so. */
static void
test_lower_bound(void)
{
	json_t *l = NULL, *x;
	size_t i;
	int said = 0;

	CHECK_INT(check_ctl_json(ctl_conf, "--format json compare cmpa "
	    "server@1.0.0 --reps 2", 0, &l), 0);
	if (l == NULL)
		return;
	CHECK_INT(json_integer_value(json_object_get(l, "rank_prompt")), 64);
	x = json_array_get(json_object_get(entry_of(l, "server"), "prefill"),
	    0);
	CHECK_INT(json_integer_value(json_object_get(x, "tokens")), 64);
	CHECK(json_is_true(json_object_get(x, "lower_bound")));
	x = json_array_get(json_object_get(entry_of(l, "cmpa"), "prefill"), 0);
	CHECK(!json_is_true(json_object_get(x, "lower_bound")));
	json_array_foreach(json_object_get(l, "notes"), i, x)
		said |= strstr(json_string_value(x), "server 1.0.0 pp64: a "
		    "lower bound") != NULL;
	CHECK(said);
	json_decref(l);
}

/* The demo's story: 0.2.4's prefill token three and a half times
 * dearer than 0.2.3's ranks it second, its ceiling as low. */
static void
test_demo(void)
{
	json_t *l = NULL, *a, *b;
	double pa, pb;

	CHECK_INT(check_ctl_json(ctl_conf, "--format json compare "
	    "basert@0.2.4 basert@0.2.3 --reps 3", 0, &l), 0);
	if (l == NULL)
		return;
	CHECK_INT(json_integer_value(json_object_get(l, "rank_prompt")),
	    2048);
	a = json_array_get(json_object_get(l, "entries"), 0);
	b = json_array_get(json_object_get(l, "entries"), 1);
	CHECK_STR(json_string_value(json_object_get(a, "version")), "0.2.3");
	CHECK_INT(json_integer_value(json_object_get(a, "prefill_rank")), 1);
	CHECK_STR(json_string_value(json_object_get(b, "version")), "0.2.4");
	CHECK_INT(json_integer_value(json_object_get(b, "prefill_rank")), 2);
	CHECK(!json_is_true(json_object_get(l, "weights_differ")));
	/* 96.6 and 328 us per token. */
	pa = json_real_value(json_object_get(json_object_get(a, "fit"),
	    "per_token_ms"));
	pb = json_real_value(json_object_get(json_object_get(b, "fit"),
	    "per_token_ms"));
	CHECK(pa > 0.085 && pa < 0.11);
	CHECK(pb > 0.29 && pb < 0.37);
	json_decref(l);
}

static void
test_usage(void)
{
	CHECK_INT(check_ctl_run(ctl_conf, "compare cmpa nosuch", NULL), 2);
	CHECK_INT(check_ctl_run(ctl_conf, "compare cmpa cmpb@9.9.9", NULL), 2);
	CHECK_INT(check_ctl_run(ctl_conf, "compare cmpa", NULL), 2);
	CHECK_INT(check_ctl_run(ctl_conf, "compare cmpa cmpb@", NULL), 2);
}

int
main(void)
{
	cli_open("compare", "m.conf", write_config, &ctl, NULL, &build,
	    ctl_conf);
	CHECK_CASE(test_ranks);
	CHECK_CASE(test_interleaved);
	CHECK_CASE(test_formats);
	CHECK_CASE(test_noisy);
	CHECK_CASE(test_lower_bound);
	CHECK_CASE(test_demo);
	CHECK_CASE(test_usage);
	json_decref(league);
	return check_done();
}
