/*
 * test_config.c: the configuration parser: defaults, value types, path
 * resolution, and every error path with its file and line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "common/regex.h"
#include "config/conf.h"
#include "config/cron.h"

static const char *minimal =
    "[weights \"w\"]\n"
    "\tpath = models/w.bin\n"
    "[engine \"basert\"]\n"
    "\tsource = dir:releases\n"
    "\tasset = basert-{version}.tar.gz\n"
    "\tcommand = {bin}/bin/bench -m {weights} -p {prompt}\n";

/* Load text as a config; returns the conf or NULL with problems joined. */
static struct conf *
load(const char *text, char **problems)
{
	struct strv p = STRV_INIT;
	struct conf *c = NULL;
	size_t len = 0;

	check_write_file("t.conf", text);
	*problems = NULL;
	if (conf_load("t.conf", &c, &p) < 0) {
		for (size_t i = 0; i < p.n; i++)
			len += strlen(p.v[i]) + 1;
		*problems = calloc(1, len + 1);
		for (size_t i = 0; i < p.n; i++) {
			strcat(*problems, p.v[i]);
			strcat(*problems, "\n");
		}
	}
	strv_clear(&p);
	return c;
}

static int
count_lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

static void
test_defaults(const char *dir)
{
	char *probs, want[4096];
	struct conf *c = load(minimal, &probs);
	const struct conf_engine *g;

	CHECK(c != NULL);
	if (c == NULL) {
		fprintf(stderr, "%s", probs);
		free(probs);
		return;
	}
	CHECK_STR(c->database, "/var/lib/bisectd/bisectd.db");
	CHECK_STR(c->socket, "/var/lib/bisectd/bisectd.sock");
	CHECK_INT(c->cache_max, (uint64_t)20 << 30);
	CHECK_NEAR(c->max_busy, 0.25, 1e-12);
	CHECK_INT(c->max_wait_ms, 60000);
	g = conf_engine(c, "basert");
	CHECK(g != NULL);
	CHECK_INT(g->source, SOURCE_DIR);
	snprintf(want, sizeof(want), "%s/releases", dir);
	CHECK_STR(g->source_arg, want);
	snprintf(want, sizeof(want), "%s/models/w.bin", dir);
	CHECK_STR(g->weights->path, want);
	CHECK_INT(g->nprompts, 4);
	CHECK_INT(g->prompts[0], 32);
	CHECK_INT(g->prompts[3], 2048);
	CHECK_INT(g->ngen, 1);
	CHECK_INT(g->gen[0], 128);
	CHECK_INT(g->reps, 5);
	CHECK_INT(g->max_reps, 320);
	CHECK_INT(g->warmup, 1);
	CHECK_INT(g->timeout_ms, 600000);
	CHECK_INT(g->nfit, 2);
	CHECK_INT(g->fit[0], 512);
	CHECK_INT(g->fit[1], 2048);
	CHECK_INT(g->metric.kind, METRIC_PER_TOKEN);
	CHECK_NEAR(g->threshold, 0.20, 1e-12);
	CHECK_NEAR(g->max_cv, 0.10, 1e-12);
	CHECK_INT(g->parser, PARSER_WALL);
	CHECK_INT(g->mode, MODE_BENCH);
	CHECK(g->threads >= 1);
	CHECK_INT(c->yardstick_every_ms, 30LL * 86400 * 1000);
	conf_free(c);
}

static void
test_every_key(void)
{
	char *probs;
	struct conf *c;
	const struct conf_engine *g;
	char *text = check_read_file(getenv("EXAMPLE_CONF"));

	CHECK(text != NULL);
	if (text == NULL)
		return;
	c = load(text, &probs);
	free(text);
	CHECK(c != NULL);
	if (c == NULL) {
		fprintf(stderr, "%s", probs);
		free(probs);
		return;
	}
	CHECK_INT(c->nengines, 6);
	CHECK_INT(c->nweights, 2);
	CHECK_INT(c->nalerts, 5);
	CHECK_STR(c->socket_group, "bisectd");
	CHECK_INT(c->max_wait_ms, 60000);
	g = conf_engine(c, "llama");
	CHECK(g != NULL && g->source == SOURCE_GITHUB);
	CHECK(g != NULL && g->env.n == 2);
	CHECK_STR(g ? g->env.v[1] : NULL, "LC_ALL=C");
	CHECK(g != NULL && g->contents.n == 2);
	CHECK(g != NULL && g->parser == PARSER_LLAMA_BENCH);
	CHECK_STR(g ? g->schedule : NULL, "30 2 * * *");
	CHECK(g != NULL && g->runner != NULL &&
	    g->runner->kind == RUNNER_SLURM);
	CHECK_INT(c->nrunners, 1);
	if (c->nrunners == 1) {
		const struct conf_runner *r = &c->runners[0];

		CHECK_STR(r->partition, "bench");
		CHECK_STR(r->account, "perf");
		CHECK_STR(r->gres, "gpu:1");
		CHECK_STR(r->constraint, "a100");
		CHECK_INT(r->exclusive, 1);
		CHECK_INT(r->time_limit_ms, 2 * 3600 * 1000);
		CHECK_INT(r->max_jobs, 4);
		CHECK_STR(r->spool, "/srv/bisectd/spool");
	}
	g = conf_engine(c, "basert");
	CHECK(g != NULL && g->source == SOURCE_URL && g->versions.n == 7);
	CHECK(g != NULL && g->parser == PARSER_REGEX);
	CHECK_STR(g ? g->parser_arg : NULL, "prefill_ms=([0-9.]+)");
	g = conf_engine(c, "mine");
	CHECK(g != NULL && g->source == SOURCE_GIT && g->parser == PARSER_JSON);
	CHECK(g != NULL && g->canary != NULL &&
	    g->canary_parser == TEXT_REGEX);
	CHECK(g != NULL && g->build.n == 3 && g->drill_down &&
	    g->first_parent && g->build_timeout_ms == 3600000);
	CHECK_STR(g ? g->repo : NULL, "https://git.example.com/mine/engine.git");
	g = conf_engine(c, "splash");
	CHECK(g != NULL && g->mode == MODE_SERVER);
	CHECK_STR(c->yardstick_engine, "basert");
	CHECK_STR(c->yardstick_version, "0.2.0");
	CHECK(c->alerts[2].kind == ALERT_EMAIL);
	CHECK(c->alerts[3].kind == ALERT_GITHUB);
	CHECK_STR(c->alerts[3].target, "ggml-org/llama.cpp");
	CHECK_STR(c->alerts[3].token_env, "BISECTD_GITHUB_TOKEN");
	CHECK(c->alerts[4].kind == ALERT_GITHUB_COMMENT);
	CHECK_STR(c->alerts[4].api, "https://api.github.com");
	CHECK_INT(c->nablations, 3);
	CHECK_INT(c->ncompares, 1);
	if (c->ncompares == 1) {
		CHECK_INT(c->compares[0].engines.n, 3);
		CHECK_STR(c->compares[0].engines.v[0], "basert@0.2.0");
		CHECK_INT(c->compares[0].every_ms, 30LL * 86400 * 1000);
		CHECK_INT(c->compares[0].reps, 10);
	}
	CHECK(conf_ablation_control(c, "basert") == &c->ablations[0]);
	CHECK_STR(c->ablations[2].args.n ? c->ablations[2].args.v[0] : NULL,
	    "--skip lm-head");
	CHECK_STR(c->http, "127.0.0.1:8088");
	CHECK_STR(c->public_url, "https://bisectd.example.com");
	conf_free(c);
}

static void
test_values(void)
{
	char *probs;
	struct conf *c = load(
	    "[bisectd]\n"
	    "\tdatabase = /abs/x.db\n"
	    "\tcache-max = 512M\n"
	    "\tmax-busy = 2.5%\n"
	    "\tmax-wait = 250ms\n"
	    "[weights \"w\"]\n"
	    "\tpath = w\n"
	    "\tsha256 = 9F2C3B1E6D4A5F708192A3B4C5D6E7F8091A2B3C4D5E6F708192A3B4C5D6E7F8\n"
	    "[engine \"e\"]\n"
	    "\tsource = url:http://127.0.0.1:9/e-{version}.tgz\n"
	    "\tversions = 1.0, 1.1 ,2.0\n"
	    "\tcommand = {bin}/x\n"
	    "\tparser = \"regex:took ([0-9.]+)\\\\s*ms\"\n"
	    "\tregex-unit = us\n"
	    "\tprompts = 64,256,1024\n"
	    "\tfit = 64,256,1024\n"
	    "\tmetric = pp256\n"
	    "\tthreshold = 3%\n"
	    "\ttimeout = 2h\n"
	    "\tmax-memory = 512M\n"
	    "\tcontents = none\n"
	    "\tschedule = @daily\n", &probs);

	CHECK(c != NULL);
	if (c == NULL) {
		fprintf(stderr, "%s", probs);
		free(probs);
		return;
	}
	CHECK_STR(c->database, "/abs/x.db");
	CHECK_STR(c->socket, "/abs/bisectd.sock");
	CHECK_INT(c->cache_max, 512ULL << 20);
	CHECK_NEAR(c->max_busy, 0.025, 1e-12);
	CHECK_INT(c->max_wait_ms, 250);
	CHECK_STR(c->weights[0].sha256,
	    "9f2c3b1e6d4a5f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8");
	CHECK_INT(c->engines[0].versions.n, 3);
	CHECK_STR(c->engines[0].versions.v[1], "1.1");
	/* git-config quoting: \\ in the file is one backslash in the regex. */
	CHECK_STR(c->engines[0].parser_arg, "took ([0-9.]+)\\s*ms");
	CHECK_INT(c->engines[0].regex_unit, UNIT_US);
	CHECK_INT(c->engines[0].nfit, 3);
	CHECK_INT(c->engines[0].metric.kind, METRIC_PP);
	CHECK_INT(c->engines[0].metric.n, 256);
	CHECK_NEAR(c->engines[0].threshold, 0.03, 1e-12);
	CHECK_INT(c->engines[0].timeout_ms, 7200000);
	CHECK_INT(c->engines[0].max_memory, 512ULL << 20);
	CHECK_INT(c->engines[0].contents.n, 0);
	conf_free(c);
}

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

	c = load(base, &probs);
	CHECK(c != NULL && c->engines[0].max_memory > 0);
	conf_free(c);
	free(probs);
	snprintf(text, sizeof(text), "%s\tmax-memory = none\n", base);
	c = load(text, &probs);
	CHECK(c != NULL && c->engines[0].max_memory == 0);
	conf_free(c);
	free(probs);
	snprintf(text, sizeof(text), "%s\tmax-memory = 8K\n", base);
	c = load(text, &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:7: engine.e.max-memory: expected a "
	    "size of 16M or more");
	free(probs);
}

/* The commit keys: defaults, a git: source's repository, and each bad
 * value with its line. */
static void
test_commit_keys(const char *dir)
{
	char *probs = NULL, want[4096];
	const char *base = "[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"e\"]\n\tsource = git:repo\n"
	    "\tcommand = {bin}/engine\n";
	char text[2048];
	struct conf *c;

	c = load(base, &probs);
	CHECK(c != NULL);
	if (c != NULL) {
		snprintf(want, sizeof(want), "%s/repo", dir);
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
	c = load(text, &probs);
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
	c = load(text, &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:6: engine.e.build: unknown placeholder "
	    "'{bin}' (known: {src} {out} {jobs}");
	CHECK_CONTAINS(probs, "t.conf:7: engine.e.build-timeout: expected a "
	    "duration");
	CHECK_CONTAINS(probs, "t.conf:8: engine.e.first-parent: expected "
	    "true or false");
	CHECK_CONTAINS(probs, "t.conf:9: engine.e.drill-down: expected true "
	    "or false");
	free(probs);
	/* Build and drill-down need a repository; drill-down needs build. */
	c = load("[weights \"w\"]\n\tpath = w.bin\n[engine \"e\"]\n"
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

/* Each bad value names the file, the line of its key, the key, and what
 * was expected; all of them are reported in one run. */
static void
test_semantic_errors(void)
{
	char *probs = NULL;
	struct conf *c = load(
	    "[bisectd]\n"				/* 1 */
	    "\tmax-wait = 10 minutes\n"			/* 2 */
	    "\tcolour = blue\n"				/* 3 */
	    "[weights \"w\"]\n"				/* 4 */
	    "\tpath = w.bin\n"				/* 5 */
	    "[engine \"e\"]\n"				/* 6 */
	    "\tsource = dir:r\n"			/* 7 */
	    "\tasset = e-{version}.tgz\n"		/* 8 */
	    "\tcommand = x\n"				/* 9 */
	    "\tweights = nope\n"			/* 10 */
	    "\ttimeout = 5x\n"				/* 11 */
	    "\tschedule = 61 * * * *\n"			/* 12 */
	    "\tThreshold = 20\n"			/* 13 */
	    "\tmax-cv = ten%\n"				/* 14 */
	    "\tprompts = 128,,512\n"			/* 15 */
	    "\tmetric = pp999\n"			/* 16 */
	    "\treps = 0\n"				/* 17 */
	    "[frobnicate]\n"				/* 18 */
	    "\tx = 1\n"					/* 19 */
	    "[engine \"f\"]\n"				/* 20 */
	    "\tcommand = y\n"				/* 21 */
	    "\tbogus-key = 1\n"			/* 22 */
	    "\ttreads = 4\n"				/* 23 */
	    "\tpromtps = 128\n"			/* 24 */
	    "[bisectd]\n"				/* 25 */
	    "\tdatabse = x.db\n", &probs);		/* 26 */

	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:2: bisectd.max-wait: expected a duration");
	CHECK_CONTAINS(probs, "'10 minutes'");
	CHECK_CONTAINS(probs, "t.conf:3: bisectd.colour: unknown key");
	CHECK_CONTAINS(probs, "t.conf:10: engine.e.weights: no [weights \"nope\"]");
	CHECK_CONTAINS(probs, "t.conf:11: engine.e.timeout: expected a duration");
	CHECK_CONTAINS(probs, "t.conf:12: engine.e.schedule: bad minute field");
	CHECK_CONTAINS(probs, "t.conf:13: engine.e.threshold: expected a percentage");
	CHECK_CONTAINS(probs, "t.conf:14: engine.e.max-cv: expected a percentage");
	CHECK_CONTAINS(probs, "t.conf:15: engine.e.prompts: expected a comma-separated");
	CHECK_CONTAINS(probs, "engine.e.metric: pp999 needs 999");
	CHECK_CONTAINS(probs, "t.conf:17: engine.e.reps: expected an integer from 1");
	CHECK_CONTAINS(probs, "t.conf:19: frobnicate.x: unknown section [frobnicate]");
	CHECK_CONTAINS(probs, "t.conf:22: engine.f.bogus-key: unknown key "
	    "in [engine \"f\"]\n");
	/* A typo is told the key it was meant to be: a letter left out,
	 * two swapped; the section's list is then not needed. */
	CHECK_CONTAINS(probs, "t.conf:23: engine.f.treads: unknown key in "
	    "[engine \"f\"] (did you mean 'threads'?)\n");
	CHECK_CONTAINS(probs, "t.conf:24: engine.f.promtps: unknown key in "
	    "[engine \"f\"] (did you mean 'prompts'?)\n");
	CHECK_CONTAINS(probs, "t.conf:26: bisectd.databse: unknown key in "
	    "[bisectd] (did you mean 'database'?)\n");
	CHECK_CONTAINS(probs, "t.conf:3: bisectd.colour: unknown key in "
	    "[bisectd] (expected database, ");
	CHECK_CONTAINS(probs, "t.conf:21: engine.f.source: missing");
	CHECK(count_lines(probs) >= 14);
	free(probs);
	conf_free(c);
}

/* max-wait = 0s means "do not wait"; a zero timeout or period is out of
 * range, which is said differently from a value that is no duration. */
static void
test_duration_ranges(void)
{
	char *probs = NULL;
	char text[1024];
	struct conf *c;

	snprintf(text, sizeof(text), "%s[bisectd]\n\tmax-wait = 0s\n",
	    minimal);
	c = load(text, &probs);
	CHECK(c != NULL);
	if (c != NULL)
		CHECK_INT(c->max_wait_ms, 0);
	conf_free(c);
	free(probs);

	probs = NULL;
	c = load(
	    "[bisectd]\n"				/* 1 */
	    "\tmax-wait = 4000d\n"			/* 2 */
	    "[weights \"w\"]\n"			/* 3 */
	    "\tpath = w.bin\n"				/* 4 */
	    "[engine \"e\"]\n"				/* 5 */
	    "\tsource = dir:r\n"			/* 6 */
	    "\tasset = e-{version}.tgz\n"		/* 7 */
	    "\tcommand = x\n"				/* 8 */
	    "\ttimeout = 0s\n"				/* 9 */
	    "[yardstick]\n"				/* 10 */
	    "\tengine = e\n"				/* 11 */
	    "\tevery = 99999999999999999999d\n"	/* 12 */
	    "\tversion = 1\n", &probs);		/* 13 */
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:2: bisectd.max-wait: duration '4000d' "
	    "is out of range (expected 0s to 3650d)");
	CHECK_CONTAINS(probs, "t.conf:9: engine.e.timeout: duration '0s' "
	    "is out of range (expected 1ms to 3650d)");
	CHECK_CONTAINS(probs, "t.conf:12: yardstick.every: duration "
	    "'99999999999999999999d' is out of range");
	CHECK(probs == NULL || strstr(probs, "expected a duration such") ==
	    NULL);
	free(probs);
	conf_free(c);
}

/* [bisectd] KEY = "VALUE" is refused with "bisectd.KEY: WHY, got 'VALUE'". */
static void
refused(const char *key, const char *value, const char *why)
{
	char text[1024], want[512], *probs = NULL;
	struct conf *c;

	snprintf(text, sizeof(text), "%s[bisectd]\n\t%s = \"%s\"\n", minimal,
	    key, value);
	c = load(text, &probs);
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

	c = load(minimal, &probs);
	CHECK(c != NULL && c->http == NULL && c->public_url == NULL);
	conf_free(c);
	free(probs);
	snprintf(text, sizeof(text), "%s[bisectd]\n\thttp = [::1]:0\n"
	    "\tpublic-url = https://b.example.com/bisectd//\n", minimal);
	c = load(text, &probs);
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
	c = load(text, &probs);
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

static void
test_structure_errors(void)
{
	char *probs = NULL;
	struct conf *c;

	c = load("[engine]\n\tcommand = x\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:2: engine.command: expected [engine \"NAME\"]");
	free(probs);

	c = load("[bisectd \"x\"]\n\tdatabase = y\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:2: bisectd.x.database: [bisectd] takes no subsection");
	free(probs);

	c = load("[weights \"a\"]\n\tpath = a\n[weights \"b\"]\n\tpath = b\n"
	    "[engine \"e\"]\n\tsource = dir:r\n\tasset = {version}.tgz\n"
	    "\tcommand = x\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "engine.e.weights: missing");
	free(probs);

	c = load("[weights \"a\"]\n\tpath = a\n\turl = https://x/y\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "weights.a: expected exactly one of path or url");
	free(probs);

	c = load("[alert \"x\"]\n\temail = a@b\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "alert.x.smtp: missing");
	free(probs);

	/* github-issue: OWNER/REPO[#N], its token from the environment, and
	 * never over plain http unless asked. */
	c = load("[alert \"x\"]\n\tgithub-issue = acme\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "alert.x.github-issue: expected OWNER/REPO or "
	    "OWNER/REPO#NUMBER, got 'acme'");
	free(probs);
	c = load("[alert \"x\"]\n\tgithub-issue = \"a/b#0\"\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "got 'a/b#0'");
	free(probs);
	c = load("[alert \"x\"]\n\tgithub-issue = a/../b\n", &probs);
	CHECK(c == NULL);
	free(probs);
	c = load("[alert \"x\"]\n\tgithub-issue = a/b\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "alert.x.token-env: missing");
	free(probs);
	c = load("[alert \"x\"]\n\tgithub-issue = \"a/b#12\"\n"
	    "\ttoken-env = T\n\tapi = http://127.0.0.1:9/api\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "alert.x.api: plain http would send the token "
	    "in clear");
	free(probs);
	/* github-comment: the same target, token and API checks; one kind
	 * an alert. */
	c = load("[alert \"x\"]\n\tgithub-comment = a/../b\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "alert.x.github-comment: expected OWNER/REPO");
	free(probs);
	c = load("[alert \"x\"]\n\tgithub-comment = a/b\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "alert.x.token-env: missing");
	free(probs);
	c = load("[alert \"x\"]\n\tgithub-comment = a/b\n"
	    "\tgithub-issue = a/b\n\ttoken-env = T\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "alert.x.github-issue: an alert has one of "
	    "webhook, command, email, github-issue or github-comment");
	free(probs);
	c = load("[alert \"x\"]\n\tgithub-comment = a/b\n"
	    "\ttoken-env = T\n", &probs);
	CHECK(c != NULL && c->alerts[0].kind == ALERT_GITHUB_COMMENT);
	conf_free(c);
	free(probs);
	c = load("[alert \"x\"]\n\tgithub-issue = \"a/b#12\"\n"
	    "\ttoken-env = T\n", &probs);
	CHECK(c != NULL);
	if (c != NULL) {
		char repo[64];
		long n = -1;

		CHECK_STR(c->alerts[0].api, "https://api.github.com");
		CHECK_INT(conf_github_target(c->alerts[0].target, repo,
		    sizeof(repo), &n), 1);
		CHECK_STR(repo, "a/b");
		CHECK_INT(n, 12);
		conf_free(c);
	}
	free(probs);

	c = load("[weights \"w\"]\n\tpath = w\n[engine \"e\"]\n"
	    "\tsource = dir:r\n\tasset = {version}.tgz\n\tcommand = x\n"
	    "\treps = 10\n\tmax-reps = 5\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "engine.e.max-reps: 5 is fewer than reps (10)");
	free(probs);

	c = load("[weights \"w\"]\n\tpath = w\n[engine \"e\"]\n"
	    "\tsource = dir:r\n\tasset = engine.tgz\n\tcommand = x\n",
	    &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:5: engine.e.asset: expected a pattern "
	    "containing {version}, got 'engine.tgz'");
	free(probs);

	c = load("[yardstick]\n\tengine = ghost\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:2: yardstick.engine: no [engine \"ghost\"]");
	free(probs);

	c = load("[weights \"w\"]\n\tpath = w\n[engine \"e\"]\n"
	    "\tsource = url:https://x/e.tgz\n\tcommand = x\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:4: engine.e.source: expected url: followed");
	CHECK_CONTAINS(probs, "engine.e.versions: missing");
	free(probs);

	c = load("[weights \"w\"]\n\tpath = w\n[engine \"e\"]\n"
	    "\tsource = svn:x\n\tcommand = x\n\tmode = server\n"
	    "\tfit = 512,4096\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:4: engine.e.source: expected github:");
	CHECK_CONTAINS(probs, "engine.e.url: missing (mode = server");
	/* At the fit line, not the source line. */
	CHECK_CONTAINS(probs, "t.conf:7: engine.e.fit: 4096 is not one of the "
	    "prompt lengths");
	free(probs);
}

static void
test_syntax_errors(void)
{
	char *probs = NULL;
	struct conf *c;
	struct strv p = STRV_INIT;

	/* Truncated in the middle of a section header. */
	c = load("[bisectd]\n\tdatabase = x\n[engine \"bas", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:3: syntax error");
	free(probs);

	/* Garbage text. */
	c = load("hello world\n", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:1: syntax error");
	free(probs);

	/* Binary garbage. */
	check_write_file("bin.conf", "[bisectd]\n");
	{
		FILE *f = fopen("bin.conf", "a");

		fputs("x = \001\002", f);
		fputc(0, f);
		fputs("\377\n", f);
		fclose(f);
	}
	CHECK(conf_load("bin.conf", &c, &p) < 0);
	CHECK(p.n == 1);
	CHECK_CONTAINS(p.n ? p.v[0] : NULL, "bin.conf:2: not a text file");
	strv_clear(&p);

	/* Missing. */
	CHECK(conf_load("missing.conf", &c, &p) < 0);
	CHECK(p.n == 1);
	CHECK_CONTAINS(p.n ? p.v[0] : NULL, "cannot open 'missing.conf'");
	strv_clear(&p);
}

static void
test_value_parsers(void)
{
	int64_t ms;
	double f;
	uint64_t b;
	int v[CONF_MAX_LENGTHS];
	size_t n;
	struct conf_metric m;

	CHECK(conf_parse_duration("10m", &ms) == 0 && ms == 600000);
	CHECK(conf_parse_duration("30d", &ms) == 0 && ms == 2592000000LL);
	CHECK(conf_parse_duration("250ms", &ms) == 0 && ms == 250);
	CHECK(conf_parse_duration("10", &ms) < 0);
	CHECK(conf_parse_duration("-5s", &ms) < 0);
	CHECK(conf_parse_duration("5 s", &ms) < 0);
	CHECK(conf_parse_duration("0s", &ms) == 0 && ms == 0);
	CHECK(conf_parse_duration("3650d", &ms) == 0 &&
	    ms == CONF_DURATION_MAX_MS);
	/* Not a duration (-1) and a duration too long (-2) differ. */
	CHECK_INT(conf_parse_duration("3651d", &ms), -2);
	CHECK_INT(conf_parse_duration("99999999999999999999d", &ms), -2);
	CHECK_INT(conf_parse_duration("9999999999999999999ms", &ms), -2);
	CHECK_INT(conf_parse_duration("5 s", &ms), -1);
	CHECK_INT(conf_parse_duration("5w", &ms), -1);
	CHECK(conf_parse_percent("20%", &f) == 0 && fabs(f - 0.2) < 1e-12);
	CHECK(conf_parse_percent("20", &f) < 0);
	CHECK(conf_parse_percent("%", &f) < 0);
	CHECK(conf_parse_size("20G", &b) == 0 && b == 20ULL << 30);
	CHECK(conf_parse_size("1KiB", &b) == 0 && b == 1024);
	CHECK(conf_parse_size("7", &b) == 0 && b == 7);
	CHECK(conf_parse_size("7X", &b) < 0);
	CHECK(conf_parse_lengths("512,2048", v, CONF_MAX_LENGTHS, &n) == 0 &&
	    n == 2 && v[1] == 2048);
	CHECK(conf_parse_lengths("512,512", v, CONF_MAX_LENGTHS, &n) < 0);
	CHECK(conf_parse_lengths("512,x", v, CONF_MAX_LENGTHS, &n) < 0);
	CHECK(conf_parse_metric("tg128", &m) == 0 && m.kind == METRIC_TG &&
	    m.n == 128);
	CHECK(conf_parse_metric("fixed", &m) == 0 && m.kind == METRIC_FIXED);
	CHECK(conf_parse_metric("pp", &m) < 0);
	CHECK(conf_parse_metric("pp0", &m) < 0);
	CHECK(conf_parse_metric("speed", &m) < 0);
}

static void
test_cron_parse(void)
{
	struct cron c;
	const char *why;

	CHECK(cron_parse("30 2 * * *", &c, &why) == 0);
	CHECK(c.minute == (1ULL << 30) && c.hour == (1u << 2));
	CHECK(c.dom_star && c.dow_star);
	CHECK(cron_parse("*/15 9-17 * jan,jul mon-fri", &c, &why) == 0);
	CHECK(c.minute == ((1ULL << 0) | (1ULL << 15) | (1ULL << 30) |
	    (1ULL << 45)));
	CHECK(c.month == ((1u << 1) | (1u << 7)));
	CHECK(c.dow == 0x3e);
	CHECK(cron_parse("0 0 * * 7", &c, &why) == 0 && c.dow == 1);
	CHECK(cron_parse("@weekly", &c, &why) == 0 && c.dow == 1);
	CHECK(cron_parse("61 * * * *", &c, &why) < 0);
	CHECK_CONTAINS(why, "minute");
	CHECK(cron_parse("* * * *", &c, &why) < 0);
	CHECK_CONTAINS(why, "5 fields");
	CHECK(cron_parse("* * 0 * *", &c, &why) < 0);
	CHECK(cron_parse("* * * foo *", &c, &why) < 0);
	CHECK(cron_parse("@sometimes", &c, &why) < 0);
	CHECK(cron_parse("5-1 * * * *", &c, &why) < 0);
	CHECK(cron_parse("*/0 * * * *", &c, &why) < 0);
}

/*
 * A regex parser is checked at check-config as the parser compiles it
 * (PCRE2): what does not compile, has no capture group or is longer than
 * 1024 bytes is named with its line and key.  "(.*){1,4000}", which
 * glibc's regcomp() compiled into 2 GB, is too large for PCRE2.
 */
static void
test_regex_check(void)
{
	static const struct {
		const char *re;
		const char *why;
	} bad[] = {
		{ "(.*){1,4000}", "regex '(.*){1,4000}' does not compile: "
		  "regular expression is too large (at byte 12)" },
		{ "((a{100}){100}){100}([0-9]+)", "does not compile: regular "
		  "expression is too large" },
		{ "t=([0-9]+", "regex 't=([0-9]+' does not compile: missing "
		  "closing parenthesis (at byte 9)" },
		{ "prefill: [0-9]+ ms", "regex 'prefill: [0-9]+ ms' has no "
		  "capture group for the value" },
		{ "(?:[0-9]+) ms", "has no capture group" },
	};
	static const char *const good[] = {
		"(.*){1,333}", "prefill_ms=([0-9.]+)", "took ([0-9.]+)\\\\s*ms",
		"([0-9]{1,20}(\\\\.[0-9]{1,20})?) ms", "t=(\\\\d+)",
		"([[:digit:]]+) ms", "(a*)\\\\1 ([0-9]+)",
	};
	char text[4096], want[256], *probs, *re;
	struct conf *c;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s\tparser = \"regex:%s\"\n",
		    minimal, bad[i].re);
		c = load(text, &probs);
		CHECK(c == NULL);
		snprintf(want, sizeof(want), "t.conf:7: engine.basert.parser: "
		    "regex '");
		CHECK_CONTAINS(probs, want);
		CHECK_CONTAINS(probs, bad[i].why);
		CHECK_INT(count_lines(probs), 1);
		free(probs);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "%s\tparser = \"regex:%s\"\n",
		    minimal, good[i]);
		c = load(text, &probs);
		CHECK(c != NULL);
		if (probs != NULL)
			fprintf(stderr, "%s", probs);
		conf_free(c);
		free(probs);
	}

	/* Length: 1024 bytes pass, 1025 do not. */
	re = malloc(REGEX_MAX_LEN + 2);
	memset(re, 'a', REGEX_MAX_LEN + 1);
	memcpy(re, "(a)", 3);
	re[REGEX_MAX_LEN + 1] = '\0';
	snprintf(text, sizeof(text), "%s\tparser = \"regex:%s\"\n", minimal,
	    re);
	c = load(text, &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "...' is longer than 1024 bytes");
	free(probs);
	re[REGEX_MAX_LEN] = '\0';
	snprintf(text, sizeof(text), "%s\tparser = \"regex:%s\"\n", minimal,
	    re);
	c = load(text, &probs);
	CHECK(c != NULL && probs == NULL);
	conf_free(c);
	free(probs);
	free(re);
}

/* The output canary's keys: resolved, and each mistake named. */
static void
test_canary(const char *dir)
{
	static const struct {
		const char *keys;
		const char *want;
	} bad[] = {
		{ "\tcanary = {bin}/bin/gen\n",
		  "engine.basert.canary-prompt: missing" },
		{ "\tcanary-prompt = p.txt\n",
		  "engine.basert.canary: missing" },
		{ "\tcanary = g\n\tcanary-prompt = p.txt\n"
		  "\tcanary-parser = text\n",
		  "t.conf:9: engine.basert.canary-parser: expected stdout, "
		  "json:PATH or regex:RE, got 'text'" },
		{ "\tcanary = g\n\tcanary-prompt = p.txt\n"
		  "\tcanary-parser = \"regex:(.*){1,4000}\"\n",
		  "t.conf:9: engine.basert.canary-parser: regex '(.*){1,4000}' "
		  "does not compile: regular expression is too large" },
		{ "\tcanary = g\n\tcanary-prompt = p.txt\n"
		  "\tcanary-prompt-sha256 = abc\n",
		  "t.conf:9: engine.basert.canary-prompt-sha256: expected 64 "
		  "hex digits, got 'abc'" },
	};
	char text[4096], want[4096], *probs;
	const struct conf_engine *g;
	struct conf *c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", minimal, bad[i].keys);
		c = load(text, &probs);
		CHECK(c == NULL);
		CHECK_CONTAINS(probs, bad[i].want);
		CHECK_INT(count_lines(probs), 1);
		free(probs);
	}
	snprintf(text, sizeof(text), "%s\tcanary = {bin}/bin/gen -f "
	    "{content}\n\tcanary-prompt = prompts/p.txt\n"
	    "\tcanary-prompt-sha256 = %s\n\tcanary-parser = json:a.text\n",
	    minimal, "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
	    "0123456789");
	c = load(text, &probs);
	CHECK(c != NULL);
	if (c == NULL) {
		fprintf(stderr, "%s", probs);
		free(probs);
		return;
	}
	g = conf_engine(c, "basert");
	CHECK_STR(g->canary, "{bin}/bin/gen -f {content}");
	snprintf(want, sizeof(want), "%s/prompts/p.txt", dir);
	CHECK_STR(g->canary_prompt, want);
	CHECK_STR(g->canary_prompt_sha256, "abcdef0123456789abcdef0123456789"
	    "abcdef0123456789abcdef0123456789");
	CHECK_INT(g->canary_parser, TEXT_JSON);
	CHECK_STR(g->canary_parser_arg, "a.text");
	conf_free(c);
	/* Without a canary-parser, the whole of stdout is the text. */
	snprintf(text, sizeof(text), "%s\tcanary = g\n\tcanary-prompt = "
	    "p.txt\n", minimal);
	c = load(text, &probs);
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
	c = load(text, &probs);
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
	c = load(text, &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:7: engine.basert.runner: no [runner "
	    "\"nope\"] section");
	CHECK_CONTAINS(probs, "t.conf:9: runner.s.kind: expected local or "
	    "slurm, got 'pbs'");
	CHECK_CONTAINS(probs, "t.conf:10: runner.s.partition: expected a "
	    "Slurm name, got 'a b'");
	CHECK_CONTAINS(probs, "t.conf:11: runner.s.gres: expected a Slurm "
	    "name, got '-gpu'");
	CHECK_CONTAINS(probs, "t.conf:12: runner.s.time-limit: Slurm counts "
	    "whole minutes");
	CHECK_CONTAINS(probs, "t.conf:13: runner.s.max-jobs: expected an "
	    "integer from 1 to 1024, got '0'");
	CHECK_CONTAINS(probs, "t.conf:14: runner.s.nodes: unknown key in "
	    "[runner \"s\"]");
	CHECK_CONTAINS(probs, "t.conf:15: runner.s.exclusive: expected true "
	    "or false");
	CHECK_CONTAINS(probs, "t.conf:17: runner.l.partition: only kind = "
	    "slurm takes it");
	CHECK_CONTAINS(probs, "t.conf:18: runner.l.max-jobs: a local runner "
	    "runs one benchmark at a time, got 2");
	CHECK_CONTAINS(probs, "t.conf:20: runner.t.spool: missing");
	free(probs);
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
	c = load(text, &probs);
	CHECK(c != NULL);
	if (probs)
		fprintf(stderr, "%s", probs);
	free(probs);
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
	c = load(text, &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:8: ablation.a.engine: missing");
	CHECK_CONTAINS(probs, "t.conf:10: ablation.b.engine: no [engine "
	    "\"nope\"] section");
	CHECK_CONTAINS(probs, "t.conf:11: ablation.b.env: expected NAME=VALUE");
	CHECK_CONTAINS(probs, "t.conf:13: ablation.c: expected env");
	CHECK_CONTAINS(probs, "t.conf:14: ablation.c.control-min: only the "
	    "control switch");
	CHECK_CONTAINS(probs, "t.conf:17: ablation.d.control: expected true "
	    "or false");
	CHECK_CONTAINS(probs, "t.conf:18: ablation.d.colour: unknown key in "
	    "[ablation \"d\"]");
	CHECK_CONTAINS(probs, "t.conf:23: ablation.e.control-min: expected a "
	    "percentage above 0%");
	CHECK_CONTAINS(probs, "t.conf:27: ablation.f.control: engine basert "
	    "has its control already ([ablation \"e\"])");
	CHECK_INT(count_lines(probs), 11);
	if (count_lines(probs) != 11)
		fprintf(stderr, "%s", probs);
	free(probs);

	/* Switches without a control would read "did nothing" as "costs
	 * nothing". */
	snprintf(text, sizeof(text), "%s"
	    "[ablation \"moe\"]\n"			/* 7 */
	    "\tengine = basert\n"			/* 8 */
	    "\tenv = BASERT_SKIP_MOE=1\n", minimal);
	c = load(text, &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:8: ablation.moe: engine basert has no "
	    "control");
	CHECK_INT(count_lines(probs), 1);
	free(probs);
}

/* [compare]: two engines or more, each configured, once; a spec is
 * ENGINE or ENGINE@VERSION; each problem on its line. */
static void
test_compare_sections(void)
{
	static const char engines[] =
	    "[weights \"w\"]\n\tpath = /w.bin\n"
	    "[engine \"a\"]\n\tsource = dir:/r\n\tasset = a-{version}.tgz\n"
	    "\tcommand = {bin}/x\n\tweights = w\n"
	    "[engine \"b\"]\n\tsource = dir:/r\n\tasset = b-{version}.tgz\n"
	    "\tcommand = {bin}/x\n\tweights = w\n";
	struct { const char *body, *problem; } bad[] = {
		{ "\tengines = a\n", "t.conf:14: compare.m.engines: expected "
		    "2 to 16 engines, got 1" },
		{ "\tengines = a, ghost@1.0\n", "t.conf:14: compare.m.engines: "
		    "no [engine \"ghost\"] section" },
		{ "\tengines = a, b@\n", "t.conf:14: compare.m.engines: "
		    "expected ENGINE or ENGINE@VERSION, comma-separated, got "
		    "'a, b@'" },
		{ "\tengines = a, b, a@1.0\n", "t.conf:14: compare.m.engines: "
		    "engine 'a' named twice (one release an engine)" },
		{ "\tengines = a, b\n\treps = 0\n", "t.conf:15: compare.m.reps" },
		{ "\tevery = 7d\n", "compare.m.engines: expected 2 to 16 "
		    "engines, got 0" },
	};
	char text[2048], *probs;
	struct conf *c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s[compare \"m\"]\n%s", engines,
		    bad[i].body);
		c = load(text, &probs);
		CHECK(c == NULL);
		CHECK_CONTAINS(probs, bad[i].problem);
		CHECK_INT(count_lines(probs ? probs : ""), 1);
		conf_free(c);
		free(probs);
	}
	snprintf(text, sizeof(text), "%s[compare \"m\"]\n"
	    "\tengines = a@0.2.0 ,b\n\tevery = 7d\n", engines);
	c = load(text, &probs);
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
	c = load(text, &probs);
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
	c = load(text, &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:9: engine.basert.load-rate: expected "
	    "requests a second");
	CHECK_CONTAINS(probs, "t.conf:12: engine.basert.load-duration: not "
	    "with load-requests");
	CHECK_CONTAINS(probs, "t.conf:13: engine.basert.load-output: expected "
	    "2 tokens or more");
	CHECK_CONTAINS(probs, "t.conf:14: engine.basert.load-arrival: "
	    "expected poisson or fixed");
	CHECK_CONTAINS(probs, "t.conf:15: engine.basert.metric: expected a "
	    "serve figure");
	CHECK_CONTAINS(probs, "t.conf:20: engine.b.load-rate: only mode = "
	    "serve takes a load profile");
	CHECK_CONTAINS(probs, "t.conf:21: engine.b.metric: tpot-p99 is a "
	    "serve figure");
	free(probs);

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
	const char *dir = check_tmpdir("config");

	test_defaults(dir);
	CHECK_CASE(test_every_key);
	CHECK_CASE(test_values);
	CHECK_CASE(test_max_memory);
	test_commit_keys(dir);
	CHECK_CASE(test_semantic_errors);
	CHECK_CASE(test_duration_ranges);
	CHECK_CASE(test_http_keys);
	CHECK_CASE(test_structure_errors);
	CHECK_CASE(test_syntax_errors);
	CHECK_CASE(test_value_parsers);
	CHECK_CASE(test_cron_parse);
	CHECK_CASE(test_regex_check);
	test_canary(dir);
	CHECK_CASE(test_runners);
	CHECK_CASE(test_ablation);
	CHECK_CASE(test_compare_sections);
	CHECK_CASE(test_serve);
	return check_done();
}
