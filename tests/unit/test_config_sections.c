/*
 * test_config_sections.c: the configuration's keys of one subject each:
 * the memory cap, the commit keys, http and public-url, the output
 * canary, [runner], [ablation], [compare] and mode = serve, each with
 * its defaults and every mistake named at its line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_conf.h"
#include "config/conf.h"

static const char *minimal = CHECK_CONF_MINIMAL;
static const char *tmpdir;	/* where relative paths resolve */

/* max-memory: a default that caps runs, none, and too small a cap. */
static void
test_max_memory(void)
{
	char *probs = NULL;
	const char *base = "[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"e\"]\n\tsource = dir:r\n\tasset = e-{version}.tgz\n"
	    "\tcommand = {bin}/x\n";
	char text[1024];
	struct conf *c;

	c = check_conf_load(base);
	CHECK(c != NULL && c->engines[0].max_memory > 0);
	conf_free(c);
	snprintf(text, sizeof(text), "%s\tmax-memory = none\n", base);
	c = check_conf_load(text);
	CHECK(c != NULL && c->engines[0].max_memory == 0);
	conf_free(c);
	snprintf(text, sizeof(text), "%s\tmax-memory = 8K\n", base);
	c = check_conf_try(text, &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:7: engine.e.max-memory: expected a "
	    "size of 16M or more");
	free(probs);
}

/* The commit keys: defaults, a git: source's repository, and each bad
 * value with its line. */
static void
test_commit_keys(void)
{
	char *probs = NULL, want[4096];
	const char *base = "[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"e\"]\n\tsource = git:repo\n"
	    "\tcommand = {bin}/engine\n";
	char text[2048];
	struct conf *c;

	c = check_conf_try(base, &probs);
	CHECK(c != NULL);
	if (c != NULL) {
		snprintf(want, sizeof(want), "%s/repo", tmpdir);
		CHECK_STR(c->engines[0].repo, want);
		CHECK_INT(c->engines[0].build_timeout_ms, 3600000);
		CHECK_INT(c->engines[0].first_parent, 1);
		CHECK_INT(c->engines[0].drill_down, 0);
		CHECK_INT(c->engines[0].build.n, 0);
	}
	conf_free(c);
	free(probs);
	snprintf(text, sizeof(text), "%s\tbuild = cc -o {out}/engine "
	    "{src}/e.c -j{jobs}\n\tbuild = touch {out}/{{x}\n"
	    "\tbuild-timeout = 2m\n\tfirst-parent = no\n"
	    "\tdrill-down = yes\n\trepo = https://h.example/r.git\n", base);
	c = check_conf_try(text, &probs);
	CHECK(c != NULL);
	if (c != NULL) {
		const struct conf_engine *g = &c->engines[0];

		CHECK_INT(g->build.n, 2);
		CHECK_STR(g->build.v[1], "touch {out}/{{x}");
		CHECK_INT(g->build_timeout_ms, 120000);
		CHECK_INT(g->first_parent, 0);
		CHECK_INT(g->drill_down, 1);
		CHECK_STR(g->repo, "https://h.example/r.git");
	}
	conf_free(c);
	free(probs);
	snprintf(text, sizeof(text), "%s\tbuild = cc {bin}/x.c\n"
	    "\tbuild-timeout = forever\n\tfirst-parent = maybe\n"
	    "\tdrill-down = 2\n", base);
	check_conf_problems("build keys", text, (const char *const[]){
	    "t.conf:6: engine.e.build: unknown placeholder '{bin}' (known: "
	    "{src} {out} {jobs}",
	    "t.conf:7: engine.e.build-timeout: expected a duration",
	    "t.conf:8: engine.e.first-parent: expected true or false",
	    "t.conf:9: engine.e.drill-down: expected true or false",
	    NULL }, 0);
	/* Build and drill-down need a repository; drill-down needs build. */
	c = check_conf_try("[weights \"w\"]\n\tpath = w.bin\n[engine \"e\"]\n"
	    "\tsource = dir:r\n\tasset = e-{version}.tgz\n\tcommand = x\n"
	    "\tbuild = make\n\tdrill-down = yes\n[engine \"f\"]\n"
	    "\tsource = git:r\n\tcommand = x\n\tdrill-down = yes\n",
	    &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:7: engine.e.repo: missing (build needs");
	CHECK_CONTAINS(probs, "t.conf:8: engine.e.drill-down: needs repo and "
	    "build");
	CHECK_CONTAINS(probs, "t.conf:12: engine.f.drill-down: needs build");
	free(probs);
}

/* [bisectd] KEY = "VALUE" is refused with "bisectd.KEY: WHY, got 'VALUE'". */
static void
refused(const char *key, const char *value, const char *why)
{
	char text[1024], want[512], *probs = NULL;
	struct conf *c;

	snprintf(text, sizeof(text), "%s[bisectd]\n\t%s = \"%s\"\n", minimal,
	    key, value);
	c = check_conf_try(text, &probs);
	CHECK(c == NULL);
	snprintf(want, sizeof(want), "bisectd.%s: %s, got '%s'", key, why,
	    value);
	CHECK_CONTAINS(probs, want);
	conf_free(c);
	free(probs);
}

/* [bisectd] http and public-url: what is taken, what is refused and how
 * it is said; off unless set. */
static void
test_http_keys(void)
{
	static const char *const bad_http[] = { "localhost:8088",
	    "127.0.0.1", "127.0.0.1:65536", "127.0.0.1:-1", "::1:80",
	    "[::1:80", "127.0.0.1:80x", "[]:80", "999.0.0.1:80" };
	static const char *const bad_url[] = { "ftp://x", "https://",
	    "https:///x", "bisectd.example.com", "https://x/a b",
	    "https://x/?q=1", "https://x/<b>" };
	char text[1024];
	char *probs = NULL;
	struct conf *c;

	c = check_conf_load(minimal);
	CHECK(c != NULL && c->http == NULL && c->public_url == NULL);
	conf_free(c);
	snprintf(text, sizeof(text), "%s[bisectd]\n\thttp = [::1]:0\n"
	    "\tpublic-url = https://b.example.com/bisectd//\n", minimal);
	c = check_conf_try(text, &probs);
	CHECK(c != NULL);
	if (c != NULL) {
		CHECK_STR(c->http, "[::1]:0");
		CHECK_STR(c->http_address, "::1");
		CHECK_INT(c->http_port, 0);
		CHECK_STR(c->public_url, "https://b.example.com/bisectd");
	}
	conf_free(c);
	free(probs);
	snprintf(text, sizeof(text), "%s[bisectd]\n\thttp = 127.0.0.1:8088\n",
	    minimal);
	c = check_conf_try(text, &probs);
	CHECK(c != NULL && c->http_port == 8088);
	if (c != NULL)
		CHECK_STR(c->http_address, "127.0.0.1");
	conf_free(c);
	free(probs);
	for (size_t i = 0; i < sizeof(bad_http) / sizeof(*bad_http); i++)
		refused("http", bad_http[i], "expected a numeric address and "
		    "a port such as 127.0.0.1:8088 or [::1]:8088");
	for (size_t i = 0; i < sizeof(bad_url) / sizeof(*bad_url); i++)
		refused("public-url", bad_url[i], "expected an http:// or "
		    "https:// URL such as https://bisectd.example.com");
}

/* The output canary's keys: resolved, and each mistake named. */
static void
test_canary(void)
{
	static const struct check_refusal bad[] = {
		{ CHECK_CONF_MINIMAL "\tcanary = {bin}/bin/gen\n",
		  { "engine.basert.canary-prompt: missing" }, 1 },
		{ CHECK_CONF_MINIMAL "\tcanary-prompt = p.txt\n",
		  { "engine.basert.canary: missing" }, 1 },
		{ CHECK_CONF_MINIMAL "\tcanary = g\n\tcanary-prompt = p.txt\n"
		  "\tcanary-parser = text\n",
		  { "t.conf:9: engine.basert.canary-parser: expected stdout, "
		    "json:PATH or regex:RE, got 'text'" }, 1 },
		{ CHECK_CONF_MINIMAL "\tcanary = g\n\tcanary-prompt = p.txt\n"
		  "\tcanary-parser = \"regex:(.*){1,4000}\"\n",
		  { "t.conf:9: engine.basert.canary-parser: regex "
		    "'(.*){1,4000}' does not compile: regular expression is "
		    "too large" }, 1 },
		{ CHECK_CONF_MINIMAL "\tcanary = g\n\tcanary-prompt = p.txt\n"
		  "\tcanary-prompt-sha256 = abc\n",
		  { "t.conf:9: engine.basert.canary-prompt-sha256: expected 64 "
		    "hex digits, got 'abc'" }, 1 },
	};
	char text[4096], want[4096], *probs;
	const struct conf_engine *g;
	struct conf *c;

	check_conf_refusals("bad", bad, sizeof(bad) / sizeof(bad[0]));
	snprintf(text, sizeof(text), "%s\tcanary = {bin}/bin/gen -f "
	    "{content}\n\tcanary-prompt = prompts/p.txt\n"
	    "\tcanary-prompt-sha256 = %s\n\tcanary-parser = json:a.text\n",
	    minimal, "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
	    "0123456789");
	c = check_conf_load(text);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	g = conf_engine(c, "basert");
	CHECK_STR(g->canary, "{bin}/bin/gen -f {content}");
	snprintf(want, sizeof(want), "%s/prompts/p.txt", tmpdir);
	CHECK_STR(g->canary_prompt, want);
	CHECK_STR(g->canary_prompt_sha256, "abcdef0123456789abcdef0123456789"
	    "abcdef0123456789abcdef0123456789");
	CHECK_INT(g->canary_parser, TEXT_JSON);
	CHECK_STR(g->canary_parser_arg, "a.text");
	conf_free(c);
	/* Without a canary-parser, the whole of stdout is the text. */
	snprintf(text, sizeof(text), "%s\tcanary = g\n\tcanary-prompt = "
	    "p.txt\n", minimal);
	c = check_conf_try(text, &probs);
	CHECK(c != NULL);
	if (c != NULL) {
		CHECK_INT(conf_engine(c, "basert")->canary_parser, TEXT_STDOUT);
		CHECK(conf_engine(c, "basert")->canary_prompt_sha256 == NULL);
	}
	conf_free(c);
	free(probs);
}

/* [runner] sections: defaults, and each bad value with its line. */
static void
test_runners(void)
{
	char *probs, text[4096];
	struct conf *c;

	snprintf(text, sizeof(text), "%s\trunner = s\n"
	    "[runner \"s\"]\n\tkind = slurm\n\tspool = spool\n"
	    "[runner \"l\"]\n\tkind = local\n", minimal);
	c = check_conf_try(text, &probs);
	CHECK(c != NULL);
	if (c) {
		const struct conf_runner *s = conf_runner_find(c, "s");
		const struct conf_runner *l = conf_runner_find(c, "l");
		char want[4096];

		CHECK(s != NULL && l != NULL);
		CHECK(c->engines[0].runner == s);
		CHECK_INT(s ? s->exclusive : -1, 1);
		CHECK_INT(s ? s->max_jobs : -1, 4);
		CHECK_INT(s ? s->time_limit_ms : -1, 0);
		CHECK_INT(l ? l->max_jobs : -1, 1);
		CHECK(getcwd(want, sizeof(want) - 8) != NULL);
		strcat(want, "/spool");
		CHECK_STR(s ? s->spool : NULL, want);
		conf_free(c);
	}
	free(probs);

	snprintf(text, sizeof(text), "%s\trunner = nope\n"	/* 7 */
	    "[runner \"s\"]\n"			/* 8 */
	    "\tkind = pbs\n"			/* 9 */
	    "\tpartition = \"a b\"\n"		/* 10 */
	    "\tgres = -gpu\n"			/* 11 */
	    "\ttime-limit = 30s\n"		/* 12 */
	    "\tmax-jobs = 0\n"			/* 13 */
	    "\tnodes = 3\n"			/* 14 */
	    "\texclusive = maybe\n"		/* 15 */
	    "[runner \"l\"]\n"			/* 16 */
	    "\tpartition = p\n"			/* 17 */
	    "\tmax-jobs = 2\n"			/* 18 */
	    "[runner \"t\"]\n"			/* 19 */
	    "\tkind = slurm\n", minimal);	/* 20 */
	check_conf_problems("runners", text, (const char *const[]){
	    "t.conf:7: engine.basert.runner: no [runner \"nope\"] section",
	    "t.conf:9: runner.s.kind: expected local or slurm, got 'pbs'",
	    "t.conf:10: runner.s.partition: expected a Slurm name, got 'a b'",
	    "t.conf:11: runner.s.gres: expected a Slurm name, got '-gpu'",
	    "t.conf:12: runner.s.time-limit: Slurm counts whole minutes",
	    "t.conf:13: runner.s.max-jobs: expected an integer from 1 to 1024, "
	    "got '0'",
	    "t.conf:14: runner.s.nodes: unknown key in [runner \"s\"]",
	    "t.conf:15: runner.s.exclusive: expected true or false",
	    "t.conf:17: runner.l.partition: only kind = slurm takes it",
	    "t.conf:18: runner.l.max-jobs: a local runner runs one benchmark "
	    "at a time, got 2",
	    "t.conf:20: runner.t.spool: missing",
	    NULL }, 0);
}

/* [ablation] switches: parsed with their defaults, and every mistake
 * reported at its line in one run. */
static void
test_ablation(void)
{
	char text[2048], *probs = NULL;
	const struct conf_ablation *a;
	struct conf *c;

	snprintf(text, sizeof(text), "%s"
	    "[ablation \"moe\"]\n"
	    "\tengine = basert\n"
	    "\tenv = BASERT_SKIP_MOE=1\n"
	    "\tenv = BASERT_TOKEN=s3cret\n"
	    "\tcontrol = yes\n"
	    "[ablation \"attn\"]\n"
	    "\tengine = basert\n"
	    "\targs = --skip 'attention heads'\n", minimal);
	c = check_conf_load(text);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(c->nablations, 2);
	a = conf_ablation_control(c, "basert");
	CHECK(a == &c->ablations[0]);
	CHECK(a != NULL && a->engine == conf_engine(c, "basert"));
	CHECK_INT(a ? a->env.n : 0, 2);
	CHECK_STR(a ? a->env.v[1] : NULL, "BASERT_TOKEN=s3cret");
	CHECK_NEAR(a ? a->control_min : 0, 0.20, 1e-12);
	CHECK(!c->ablations[1].control);
	CHECK_INT(c->ablations[1].args.n, 1);
	CHECK_STR(c->ablations[1].args.v[0], "--skip 'attention heads'");
	CHECK(conf_ablation_control(c, "nope") == NULL);
	conf_free(c);

	snprintf(text, sizeof(text), "%s"		/* 1-6 */
	    "[ablation \"a\"]\n"			/* 7 */
	    "\tenv = X=1\n"				/* 8 */
	    "[ablation \"b\"]\n"			/* 9 */
	    "\tengine = nope\n"				/* 10 */
	    "\tenv = NOEQUALS\n"			/* 11 */
	    "[ablation \"c\"]\n"			/* 12 */
	    "\tengine = basert\n"			/* 13 */
	    "\tcontrol-min = 20%%\n"			/* 14 */
	    "[ablation \"d\"]\n"			/* 15 */
	    "\tengine = basert\n"			/* 16 */
	    "\tcontrol = maybe\n"			/* 17 */
	    "\tcolour = red\n"				/* 18 */
	    "[ablation \"e\"]\n"			/* 19 */
	    "\tengine = basert\n"			/* 20 */
	    "\tenv = Y=2\n"				/* 21 */
	    "\tcontrol = yes\n"				/* 22 */
	    "\tcontrol-min = 120%%\n"			/* 23 */
	    "[ablation \"f\"]\n"			/* 24 */
	    "\tengine = basert\n"			/* 25 */
	    "\tenv = Z=3\n"				/* 26 */
	    "\tcontrol = true\n", minimal);		/* 27 */
	check_conf_problems("ablations", text, (const char *const[]){
	    "t.conf:8: ablation.a.engine: missing",
	    "t.conf:10: ablation.b.engine: no [engine \"nope\"] section",
	    "t.conf:11: ablation.b.env: expected NAME=VALUE",
	    "t.conf:13: ablation.c: expected env",
	    "t.conf:14: ablation.c.control-min: only the control switch",
	    "t.conf:17: ablation.d.control: expected true or false",
	    "t.conf:18: ablation.d.colour: unknown key in [ablation \"d\"]",
	    "t.conf:23: ablation.e.control-min: expected a percentage above 0%",
	    "t.conf:27: ablation.f.control: engine basert has its control "
	    "already ([ablation \"e\"])",
	    NULL }, 11);

	/* Switches without a control would read "did nothing" as "costs
	 * nothing". */
	snprintf(text, sizeof(text), "%s"
	    "[ablation \"moe\"]\n"			/* 7 */
	    "\tengine = basert\n"			/* 8 */
	    "\tenv = BASERT_SKIP_MOE=1\n", minimal);
	c = check_conf_try(text, &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:8: ablation.moe: engine basert has no "
	    "control");
	CHECK_INT(check_count_lines(probs), 1);
	free(probs);
}

/* Two engines for [compare], at lines 1 to 12. */
#define ENGINES "[weights \"w\"]\n\tpath = /w.bin\n" \
	    "[engine \"a\"]\n\tsource = dir:/r\n\tasset = a-{version}.tgz\n" \
	    "\tcommand = {bin}/x\n\tweights = w\n" \
	    "[engine \"b\"]\n\tsource = dir:/r\n\tasset = b-{version}.tgz\n" \
	    "\tcommand = {bin}/x\n\tweights = w\n"
/* Its [compare "m"] at line 13, the keys below from line 14. */
#define COMPARE_M ENGINES "[compare \"m\"]\n"

/* [compare]: two engines or more, each configured, once; a spec is
 * ENGINE or ENGINE@VERSION; each problem on its line. */
static void
test_compare_sections(void)
{
	static const struct check_refusal bad[] = {
		{ COMPARE_M "\tengines = a\n", { "t.conf:14: "
		    "compare.m.engines: expected 2 to 16 engines, got 1" }, 1 },
		{ COMPARE_M "\tengines = a, ghost@1.0\n", { "t.conf:14: "
		    "compare.m.engines: no [engine \"ghost\"] section" }, 1 },
		{ COMPARE_M "\tengines = a, b@\n", { "t.conf:14: "
		    "compare.m.engines: expected ENGINE or ENGINE@VERSION, "
		    "comma-separated, got 'a, b@'" }, 1 },
		{ COMPARE_M "\tengines = a, b, a@1.0\n", { "t.conf:14: "
		    "compare.m.engines: engine 'a' named twice (one release "
		    "an engine)" }, 1 },
		{ COMPARE_M "\tengines = a, b\n\treps = 0\n",
		  { "t.conf:15: compare.m.reps" }, 1 },
		{ COMPARE_M "\tevery = 7d\n", { "compare.m.engines: expected 2 "
		    "to 16 engines, got 0" }, 1 },
	};
	static const char engines[] = ENGINES;
	char text[2048], *probs;
	struct conf *c;

	check_conf_refusals("bad", bad, sizeof(bad) / sizeof(bad[0]));
	snprintf(text, sizeof(text), "%s[compare \"m\"]\n"
	    "\tengines = a@0.2.0 ,b\n\tevery = 7d\n", engines);
	c = check_conf_try(text, &probs);
	CHECK(c != NULL);
	if (c != NULL && c->ncompares == 1) {
		CHECK_INT(c->compares[0].engines.n, 2);
		CHECK_STR(c->compares[0].engines.v[0], "a@0.2.0");
		CHECK_STR(c->compares[0].engines.v[1], "b");
		CHECK_INT(c->compares[0].every_ms, 7LL * 86400 * 1000);
		CHECK_INT(c->compares[0].reps, 0);
	} else
		CHECK(!"one compare section");
	conf_free(c);
	free(probs);
}

/* mode = serve: the profile with its defaults, and each mistake at its
 * line in one run. */
static void
test_serve(void)
{
	struct conf_metric m;
	char *probs, text[4096];
	struct conf *c;

	snprintf(text, sizeof(text), "%s\tmode = serve\n"
	    "\turl = http://127.0.0.1:1/v1/completions\n"
	    "\tload-rate = 8.5\n\tload-prompt = 64,256\n"
	    "\tslo-ttft = 200ms\n", minimal);
	c = check_conf_try(text, &probs);
	CHECK(c != NULL);
	if (c) {
		const struct conf_load *l = &c->engines[0].load;

		CHECK(l->arrival == ARRIVAL_POISSON && l->rate == 8.5);
		CHECK_INT(l->requests, 100);
		CHECK_INT(l->nprompt, 2);
		CHECK_INT(l->output[0], 64);
		CHECK_INT(l->slo_ttft_ms, 200);
		CHECK_INT(l->slo_tpot_ms, 0);
		CHECK_INT(l->max_lag_ms, 5);
		CHECK(c->engines[0].metric.kind == METRIC_SERVE &&
		    c->engines[0].metric.n == FIG_TTFT_P90);
		conf_free(c);
	}
	free(probs);

	snprintf(text, sizeof(text), "%s\tmode = serve\n"	/* 7 */
	    "\turl = http://127.0.0.1:1/v1/completions\n"	/* 8 */
	    "\tload-rate = fast\n"				/* 9 */
	    "\tload-concurrency = 4\n"			/* 10 */
	    "\tload-requests = 10\n"				/* 11 */
	    "\tload-duration = 10s\n"				/* 12 */
	    "\tload-output = 1\n"				/* 13 */
	    "\tload-arrival = burst\n"			/* 14 */
	    "\tmetric = per-token\n"				/* 15 */
	    "[engine \"b\"]\n\tsource = dir:r\n"		/* 16, 17 */
	    "\tcommand = {bin}/x\n\tweights = w\n"		/* 18, 19 */
	    "\tload-rate = 2\n\tmetric = tpot-p99\n",	/* 20, 21 */
	    minimal);
	check_conf_problems("load keys", text, (const char *const[]){
	    "t.conf:9: engine.basert.load-rate: expected requests a second",
	    "t.conf:12: engine.basert.load-duration: not with load-requests",
	    "t.conf:13: engine.basert.load-output: expected 2 tokens or more",
	    "t.conf:14: engine.basert.load-arrival: expected poisson or fixed",
	    "t.conf:15: engine.basert.metric: expected a serve figure",
	    "t.conf:20: engine.b.load-rate: only mode = serve takes a load "
	    "profile",
	    "t.conf:21: engine.b.metric: tpot-p99 is a serve figure",
	    NULL }, 0);

	CHECK(conf_parse_metric("e2e-p99", &m) == 0 &&
	    m.kind == METRIC_SERVE && m.n == FIG_E2E_P99);
	CHECK(conf_parse_metric("ttft-p95", &m) < 0);
	CHECK(conf_parse_metric("gpu-memory", &m) == 0 &&
	    m.kind == METRIC_MEMORY && m.n == MEM_GPU);
	CHECK(conf_parse_metric("rss", &m) == 0 && m.kind == METRIC_MEMORY &&
	    m.n == MEM_RSS);
	CHECK_STR(conf_metric_name(&m, text, sizeof(text)), "rss");
	CHECK(conf_parse_metric("rss2", &m) < 0);
}

int
main(void)
{
	tmpdir = check_tmpdir("config_sections");
	CHECK_CASE(test_max_memory);
	CHECK_CASE(test_commit_keys);
	CHECK_CASE(test_http_keys);
	CHECK_CASE(test_canary);
	CHECK_CASE(test_runners);
	CHECK_CASE(test_ablation);
	CHECK_CASE(test_compare_sections);
	CHECK_CASE(test_serve);
	return check_done();
}
