/*
 * test_config.c: the configuration parser: defaults, value types, path
 * resolution, and every error path with its file and line.  The keys of
 * one subject each (commits, http, canary, runners, ablation, compare,
 * serve) are test_config_sections.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_conf.h"
#include "common/regex.h"
#include "config/conf.h"
#include "config/cron.h"

static const char *minimal = CHECK_CONF_MINIMAL;
static const char *tmpdir;	/* where relative paths resolve */

static void
test_defaults(void)
{
	char want[4096];
	struct conf *c = check_conf_load(minimal);
	const struct conf_engine *g;

	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_STR(c->database, "/var/lib/bisectd/bisectd.db");
	CHECK_STR(c->socket, "/var/lib/bisectd/bisectd.sock");
	CHECK_INT(c->cache_max, (uint64_t)20 << 30);
	CHECK_NEAR(c->max_busy, 0.25, 1e-12);
	CHECK_INT(c->max_wait_ms, 60000);
	g = conf_engine(c, "basert");
	CHECK(g != NULL);
	CHECK_INT(g->source, SOURCE_DIR);
	snprintf(want, sizeof(want), "%s/releases", tmpdir);
	CHECK_STR(g->source_arg, want);
	snprintf(want, sizeof(want), "%s/models/w.bin", tmpdir);
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
	struct conf *c;
	const struct conf_engine *g;
	char *text = check_read_file(getenv("EXAMPLE_CONF"));

	CHECK(text != NULL);
	if (text == NULL)
		return;
	c = check_conf_load(text);
	free(text);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(c->nengines, 6);
	CHECK_INT(c->nweights, 2);
	CHECK_INT(c->nalerts, 5);
	CHECK_STR(c->socket_group, "bisectd");
	CHECK_INT(c->max_wait_ms, 60000);
	g = conf_engine(c, "llama");
	CHECK(g != NULL && g->source == SOURCE_GITHUB);
	/* Its own two, then its runner's. */
	CHECK(g != NULL && g->env.n == 3);
	CHECK_STR(g ? g->env.v[1] : NULL, "LC_ALL=C");
	CHECK_STR(g && g->env.n == 3 ? g->env.v[2] : NULL,
	    "OMP_PROC_BIND=close");
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
	struct conf *c = check_conf_load(
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
	    "\tschedule = @daily\n");

	CHECK(c != NULL);
	if (c == NULL)
		return;
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

/* Each bad value names the file, the line of its key, the key, and what
 * was expected; all of them are reported in one run. */
static void
test_semantic_errors(void)
{
	char *probs = NULL;
	struct conf *c = check_conf_try(
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
	CHECK(check_count_lines(probs) >= 14);
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
	c = check_conf_try(text, &probs);
	CHECK(c != NULL);
	if (c != NULL)
		CHECK_INT(c->max_wait_ms, 0);
	conf_free(c);
	free(probs);

	probs = NULL;
	c = check_conf_try(
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

/* The weights and engine that the rows below add one mistake to. */
#define ENGINE_E "[weights \"w\"]\n\tpath = w\n[engine \"e\"]\n"

/* Sections that do not fit together, each refused with what is wrong. */
static const struct check_refusal structure[] = {
	{ "[engine]\n\tcommand = x\n",
	  { "t.conf:2: engine.command: expected [engine \"NAME\"]" }, 0 },
	{ "[bisectd \"x\"]\n\tdatabase = y\n",
	  { "t.conf:2: bisectd.x.database: [bisectd] takes no "
	    "subsection" }, 0 },
	{ "[weights \"a\"]\n\tpath = a\n[weights \"b\"]\n\tpath = b\n"
	  "[engine \"e\"]\n\tsource = dir:r\n\tasset = {version}.tgz\n"
	  "\tcommand = x\n",
	  { "engine.e.weights: missing" }, 0 },
	{ "[weights \"a\"]\n\tpath = a\n\turl = https://x/y\n",
	  { "weights.a: expected exactly one of path or url" }, 0 },
	{ "[alert \"x\"]\n\temail = a@b\n",
	  { "alert.x.smtp: missing" }, 0 },
	/* github-issue: OWNER/REPO[#N], its token from the environment, and
	 * never over plain http unless asked. */
	{ "[alert \"x\"]\n\tgithub-issue = acme\n",
	  { "alert.x.github-issue: expected OWNER/REPO or "
	    "OWNER/REPO#NUMBER, got 'acme'" }, 0 },
	{ "[alert \"x\"]\n\tgithub-issue = \"a/b#0\"\n",
	  { "got 'a/b#0'" }, 0 },
	{ "[alert \"x\"]\n\tgithub-issue = a/../b\n", { NULL }, 0 },
	{ "[alert \"x\"]\n\tgithub-issue = a/b\n",
	  { "alert.x.token-env: missing" }, 0 },
	{ "[alert \"x\"]\n\tgithub-issue = \"a/b#12\"\n"
	  "\ttoken-env = T\n\tapi = http://127.0.0.1:9/api\n",
	  { "alert.x.api: plain http would send the token in clear" }, 0 },
	/* github-comment: the same target, token and API checks; one kind
	 * an alert. */
	{ "[alert \"x\"]\n\tgithub-comment = a/../b\n",
	  { "alert.x.github-comment: expected OWNER/REPO" }, 0 },
	{ "[alert \"x\"]\n\tgithub-comment = a/b\n",
	  { "alert.x.token-env: missing" }, 0 },
	{ "[alert \"x\"]\n\tgithub-comment = a/b\n"
	  "\tgithub-issue = a/b\n\ttoken-env = T\n",
	  { "alert.x.github-issue: an alert has one of "
	    "webhook, command, email, github-issue or github-comment" }, 0 },
	{ ENGINE_E "\tsource = dir:r\n\tasset = {version}.tgz\n"
	  "\tcommand = x\n\treps = 10\n\tmax-reps = 5\n",
	  { "engine.e.max-reps: 5 is fewer than reps (10)" }, 0 },
	{ ENGINE_E "\tsource = dir:r\n\tasset = engine.tgz\n"
	  "\tcommand = x\n",
	  { "t.conf:5: engine.e.asset: expected a pattern "
	    "containing {version}, got 'engine.tgz'" }, 0 },
	{ "[yardstick]\n\tengine = ghost\n",
	  { "t.conf:2: yardstick.engine: no [engine \"ghost\"]" }, 0 },
	{ ENGINE_E "\tsource = url:https://x/e.tgz\n\tcommand = x\n",
	  { "t.conf:4: engine.e.source: expected url: followed",
	    "engine.e.versions: missing" }, 0 },
	/* The fit's problem at the fit line, not the source line. */
	{ ENGINE_E "\tsource = svn:x\n\tcommand = x\n\tmode = server\n"
	  "\tfit = 512,4096\n",
	  { "t.conf:4: engine.e.source: expected github:",
	    "engine.e.url: missing (mode = server",
	    "t.conf:7: engine.e.fit: 4096 is not one of the "
	    "prompt lengths" }, 0 },
};

static void
test_structure_errors(void)
{
	char *probs = NULL;
	struct conf *c;

	check_conf_refusals("structure", structure,
	    sizeof(structure) / sizeof(structure[0]));

	/* An alert's github targets that load, and what is made of them. */
	c = check_conf_load("[alert \"x\"]\n\tgithub-comment = a/b\n"
	    "\ttoken-env = T\n");
	CHECK(c != NULL && c->alerts[0].kind == ALERT_GITHUB_COMMENT);
	conf_free(c);
	c = check_conf_try("[alert \"x\"]\n\tgithub-issue = \"a/b#12\"\n"
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
}

static void
test_syntax_errors(void)
{
	char *probs = NULL;
	struct conf *c;
	struct strv p = STRV_INIT;

	/* Truncated in the middle of a section header. */
	c = check_conf_try("[bisectd]\n\tdatabase = x\n[engine \"bas", &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "t.conf:3: syntax error");
	free(probs);

	/* Garbage text. */
	c = check_conf_try("hello world\n", &probs);
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

/* The minimal engine parsing its output with re, at line 7. */
#define PARSER(re) CHECK_CONF_MINIMAL "\tparser = \"regex:" re "\"\n"
/* How each refused regex is introduced. */
#define BAD_REGEX "t.conf:7: engine.basert.parser: regex '"

/*
 * A regex parser is checked at check-config as the parser compiles it
 * (PCRE2): what does not compile, has no capture group or is longer than
 * 1024 bytes is named with its line and key.  "(.*){1,4000}", which
 * glibc's regcomp() compiled into 2 GB, is too large for PCRE2.
 */
static void
test_regex_check(void)
{
	static const struct check_refusal bad[] = {
		{ PARSER("(.*){1,4000}"), { BAD_REGEX, "regex '(.*){1,4000}' "
		  "does not compile: regular expression is too large (at "
		  "byte 12)" }, 1 },
		{ PARSER("((a{100}){100}){100}([0-9]+)"), { BAD_REGEX,
		  "does not compile: regular expression is too large" }, 1 },
		{ PARSER("t=([0-9]+"), { BAD_REGEX, "regex 't=([0-9]+' does "
		  "not compile: missing closing parenthesis (at byte 9)" },
		  1 },
		{ PARSER("prefill: [0-9]+ ms"), { BAD_REGEX, "regex 'prefill: "
		  "[0-9]+ ms' has no capture group for the value" }, 1 },
		{ PARSER("(?:[0-9]+) ms"), { BAD_REGEX,
		  "has no capture group" }, 1 },
	};
	static const char *const good[] = {
		"(.*){1,333}", "prefill_ms=([0-9.]+)", "took ([0-9.]+)\\\\s*ms",
		"([0-9]{1,20}(\\\\.[0-9]{1,20})?) ms", "t=(\\\\d+)",
		"([[:digit:]]+) ms", "(a*)\\\\1 ([0-9]+)",
	};
	char text[4096], *probs, *re;
	struct conf *c;
	size_t i;

	check_conf_refusals("bad", bad, sizeof(bad) / sizeof(bad[0]));
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "%s\tparser = \"regex:%s\"\n",
		    minimal, good[i]);
		c = check_conf_try(text, &probs);
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
	c = check_conf_try(text, &probs);
	CHECK(c == NULL);
	CHECK_CONTAINS(probs, "...' is longer than 1024 bytes");
	free(probs);
	re[REGEX_MAX_LEN] = '\0';
	snprintf(text, sizeof(text), "%s\tparser = \"regex:%s\"\n", minimal,
	    re);
	c = check_conf_try(text, &probs);
	CHECK(c != NULL && probs == NULL);
	conf_free(c);
	free(probs);
	free(re);
}

int
main(void)
{
	tmpdir = check_tmpdir("config");
	CHECK_CASE(test_defaults);
	CHECK_CASE(test_every_key);
	CHECK_CASE(test_values);
	CHECK_CASE(test_semantic_errors);
	CHECK_CASE(test_duration_ranges);
	CHECK_CASE(test_structure_errors);
	CHECK_CASE(test_syntax_errors);
	CHECK_CASE(test_value_parsers);
	CHECK_CASE(test_cron_parse);
	CHECK_CASE(test_regex_check);
	return check_done();
}
