/*
 * test_canary.c: the output canary end to end on fake-engine releases
 * whose generated text changes at 0.1.4 (which is also faster) and whose
 * 0.1.3 generates differently on every run: bisectctl bisect --now
 * --metric output and report in every format, the hash and the diff per
 * release, the nondeterministic release skipped, the prompt's pin, an
 * engine's control bytes kept off the terminal, a queued bisect run as
 * the daemon runs it, and the watch's alert, once, in one line with
 * "faster".
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/jobs/job_run.h"
#include "bisectd/jobs/watch.h"
#include "check.h"
#include "check_cli.h"
#include "check_json.h"
#include "check_conf.h"
#include "common/err.h"
#include "config/conf.h"
#include "store/store.h"

static const char *ctl, *build;
static char ctl_conf[CLI_CTL_CONF_MAX];	/* bisectctl -c t.conf */

/* The engine "gen", releases in rel/; hostile: the canary prints ESC
 * sequences and the version. */
static void
write_config(void)
{
	char text[8192];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = t.db\n\tcache = cache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"gen\"]\n\tsource = dir:rel\n"
	    "\tasset = gen-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n"
	    "\treps = 3\n\tmax-reps = 12\n\twarmup = 0\n\ttimeout = 1m\n"
	    "\tcanary = {bin}/bin/fake-engine --generate -m {weights} "
	    "-o json\n\tcanary-prompt = prompt.txt\n"
	    "\tcanary-parser = json:content\n"
	    "[engine \"hostile\"]\n\tsource = dir:rel\n"
	    "\tasset = gen-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n"
	    "\treps = 3\n\twarmup = 0\n\ttimeout = 1m\n"
	    "\tcanary = \"printf '%%s said \\\\033]0;owned\\\\007 "
	    "\\\\033[2J\\\\n' {version}\"\n\tcanary-prompt = prompt.txt\n",
	    build);
	check_write_file("t.conf", text);
}

/* Publish fake release gen-VERSION in rel/. */
static void
publish(const char *version)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "mkdir -p rel && ln -sf "
	    "%s/tests/releases/gen-%s.tar.gz rel/", build, version);
	CHECK_INT(check_run(cmd, NULL), 0);
}

static const char *
canary_of(json_t *rep, const char *version, const char *key)
{
	const char *v = json_string_value(json_object_get(json_object_get(
	    check_release(rep, version), "canary"), key));

	return v ? v : "";
}

/* bisect --now --metric output: the first differing release, 0.1.3's
 * nondeterministic canary skipped and named as a candidate. */
static void
test_bisect(void)
{
	/* The verdict's key holding want, all of it when whole. */
	static const struct {
		const char *args;
		int rc;
		const char *key, *want;
		int whole;
	} ends[] = {
		/* The same text at both ends: no change, exit 0. */
		{ "bisect --now --metric output gen 0.1.4..0.1.6 --format "
		    "json", 0, "status", "no-regression", 1 },
		/* A bad end that cannot run cannot be judged: exit 1. */
		{ "bisect --now --metric output gen 0.1.6..0.1.7 --format "
		    "json", 1, "reason", "the bad end of the range cannot be "
		    "judged: 0.1.7", 0 },
		/* A nondeterministic good end cannot be the reference:
		 * exit 1. */
		{ "report gen 0.1.3..0.1.6 --metric output --format json", 1,
		    "reason", "nondeterministic", 0 },
	};
	json_t *rep, *v, *d;
	int rc;

	rc = check_ctl_json(ctl_conf, "bisect --now --metric output gen "
	    "0.1.0..0.1.6 --format json", 0, &rep);
	CHECK_INT(rc, 3);
	CHECK(rep != NULL);
	if (rep == NULL)
		return;
	v = json_object_get(rep, "verdict");
	CHECK_STR(json_string_value(json_object_get(rep, "metric")), "output");
	CHECK_STR(json_string_value(json_object_get(v, "status")),
	    "regression");
	CHECK_STR(json_string_value(json_object_get(v, "kind")), "output");
	CHECK_STR(json_string_value(json_object_get(v, "first_bad")), "0.1.4");
	CHECK_STR(json_string_value(json_object_get(v, "last_good")), "0.1.2");
	CHECK_INT(json_array_size(json_object_get(v, "candidates")), 2);
	CHECK_STR(json_string_value(json_array_get(json_object_get(v,
	    "candidates"), 0)), "0.1.3");
	CHECK_CONTAINS(json_string_value(json_object_get(v, "reason")),
	    "0.1.4 generates different text from 0.1.2 on the canary prompt");
	/* The fake engine's seed acts from the ninth word on. */
	d = json_object_get(v, "diff");
	CHECK_INT(json_integer_value(json_object_get(d, "token")), 8);
	CHECK(json_is_string(json_object_get(d, "before")) &&
	    json_is_string(json_object_get(d, "after")));
	if (json_is_string(json_object_get(d, "before")) &&
	    json_is_string(json_object_get(d, "after"))) {
		CHECK(strlen(json_string_value(json_object_get(d,
		    "before"))) > 0);
		CHECK(strcmp(json_string_value(json_object_get(d, "before")),
		    json_string_value(json_object_get(d, "after"))) != 0);
	}
	CHECK_STR(canary_of(rep, "0.1.3", "status"), "nondeterministic");
	CHECK_STR(canary_of(rep, "0.1.0", "status"), "deterministic");
	CHECK_INT(strlen(canary_of(rep, "0.1.0", "sha256")), 64);
	CHECK_STR(canary_of(rep, "0.1.2", "sha256"),
	    canary_of(rep, "0.1.0", "sha256"));
	CHECK(strcmp(canary_of(rep, "0.1.4", "sha256"),
	    canary_of(rep, "0.1.2", "sha256")) != 0);
	/* Releases the search never needed are never run: 0.1.1 and 0.1.5
	 * (one canary pair per probe). */
	CHECK_STR(canary_of(rep, "0.1.5", "status"), "not-measured");
	CHECK_STR(canary_of(rep, "0.1.1", "status"), "not-measured");
	CHECK(json_is_true(json_object_get(json_object_get(check_release(rep,
	    "0.1.4"), "canary"), "changed")));
	CHECK_STR(canary_of(rep, "0.1.4", "since"), "0.1.2");
	json_decref(rep);

	/* A release whose canary cannot run is skipped and named. */
	rc = check_ctl_json(ctl_conf, "bisect --now --metric output gen "
	    "0.1.6..0.1.8 --format json", 0, &rep);
	CHECK_INT(rc, 3);
	v = json_object_get(rep, "verdict");
	CHECK_STR(json_string_value(json_object_get(v, "last_good")), "0.1.6");
	CHECK_STR(json_string_value(json_object_get(v, "first_bad")), "0.1.8");
	CHECK_STR(json_string_value(json_array_get(json_object_get(v,
	    "candidates"), 0)), "0.1.7");
	CHECK_STR(canary_of(rep, "0.1.7", "status"), "failed");
	CHECK_CONTAINS(canary_of(rep, "0.1.7", "detail"), "signal");
	json_decref(rep);

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		int before = check_failures;
		const char *got;

		CHECK_INT(check_ctl_json(ctl_conf, ends[i].args, 0, &rep),
		    ends[i].rc);
		got = json_string_value(json_object_get(json_object_get(rep,
		    "verdict"), ends[i].key));
		if (ends[i].whole)
			CHECK_STR(got, ends[i].want);
		else
			CHECK_CONTAINS(got, ends[i].want);
		json_decref(rep);
		if (check_failures > before)
			fprintf(stderr, "  ends[%zu]: %s\n", i, ends[i].args);
	}
}

/* report, from the store alone, in every format. */
static void
test_report_formats(void)
{
	char *out = NULL;
	json_t *rep;
	int rc;

	rc = check_ctl_json(ctl_conf, "report gen 0.1.0..0.1.6 --metric "
	    "output --format json", 0, &rep);
	CHECK_INT(rc, 3);
	CHECK_STR(json_string_value(json_object_get(json_object_get(rep,
	    "verdict"), "first_bad")), "0.1.4");
	/* Each release reproduced by the canary's command as it ran, the
	 * prompt file its {content} and its stdin; not the timing cells. */
	{
		const json_t *runs = json_object_get(json_object_get(rep,
		    "reproduce"), "runs"), *x;
		size_t i;

		CHECK(json_array_size(runs) >= 2);
		json_array_foreach(runs, i, x) {
			const char *cmd = json_string_value(json_object_get(x,
			    "command"));

			CHECK_STR(json_string_value(json_object_get(x, "cell")),
			    "canary");
			CHECK_CONTAINS(cmd, "/bin/fake-engine --generate -m ");
			CHECK_CONTAINS(cmd, "/demo/weights.bin -o json < ");
			CHECK(strlen(cmd) > 11 && strcmp(cmd + strlen(cmd) - 11,
			    "/prompt.txt") == 0);
		}
	}
	json_decref(rep);
	/* The timing report lists a command for the cells that ran alone:
	 * an output bisect ran none of them. */
	rc = check_ctl_json(ctl_conf, "report gen 0.1.0..0.1.6 --format json",
	    0, &rep);
	CHECK_INT(json_array_size(json_object_get(json_object_get(rep,
	    "reproduce"), "runs")), 0);
	json_decref(rep);

	CHECK_INT(check_ctl_run(ctl_conf, "report gen 0.1.0..0.1.6 --metric "
	    "output", &out), 3);
	CHECK_CONTAINS(out, "canary (sha256 of the text each release");
	CHECK_CONTAINS(out, "changed since 0.1.2 at token 8");
	CHECK_CONTAINS(out, "0.1.3        nondeterministic (runs");
	CHECK_CONTAINS(out, "verdict: regression: first bad 0.1.4, last good "
	    "0.1.2 (texts compared exactly)");
	CHECK_CONTAINS(out, "from token 8");
	/* Pasted, the commands give the same verdict. */
	CHECK_CONTAINS(out, " bisect --now --metric output gen 0.1.0..0.1.6\n");
	CHECK_CONTAINS(out, " report --metric output gen 0.1.0..0.1.6\n");
	free(out);

	CHECK_INT(check_ctl_run(ctl_conf, "report gen 0.1.0..0.1.6 --metric "
	    "output --format markdown", &out), 3);
	CHECK_CONTAINS(out, "**Output canary**");
	CHECK_CONTAINS(out, "- 0.1.4: `");
	CHECK_CONTAINS(out, "**changed** since 0.1.2 at token 8");
	CHECK_CONTAINS(out, "**Verdict: regression**: first bad 0.1.4");
	free(out);

	CHECK_INT(check_ctl_run(ctl_conf, "report gen 0.1.0..0.1.6 --metric "
	    "output --format csv", &out), 3);
	CHECK_CONTAINS(out, ",canary,canary_sha256,canary_diff,canary_since,"
	    "canary_detail,command\n");
	/* Why 0.1.3 is not deterministic, and what 0.1.4 changed since. */
	CHECK_CONTAINS(out, ",nondeterministic,,,,\"runs ");
	CHECK_CONTAINS(out, ",\"token 8: ");
	CHECK_CONTAINS(out, "\",\"0.1.2\",,");
	CHECK_CONTAINS(out, ",deterministic,");
	free(out);

	/* The timing report shows the canary too. */
	CHECK_INT(check_ctl_run(ctl_conf, "report gen 0.1.0..0.1.6", &out) >= 0,
	    1);
	CHECK_CONTAINS(out, "changed since 0.1.2 at token 8");
	free(out);
}

#define TD "*[local-name()=\"td\"]"
#define CANARY_ROW(v) "//*[local-name()=\"table\" and @class=\"canary\"]" \
	"//*[local-name()=\"tr\" and " TD "[1]=\"" v "\"]"

/* Write the page of "bisectctl ARGS --format html" to page; its exit
 * code, or -1 when it is not well-formed XML. */
static int
html_page(const char *args, const char *page)
{
	char cmd[4096];
	int rc;

	snprintf(cmd, sizeof(cmd), "(%s -c t.conf %s --format html >%s "
	    "2>stderr.txt)", ctl, args, page);
	rc = check_run(cmd, NULL);
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", page);
	return check_run(cmd, NULL) == 0 ? rc : -1;
}

/* An XPath expression on a page and what it gives: exactly want, or a
 * string that contains it. */
struct xpath_check {
	const char *expr, *want;
	int exact;
};

static void
xpath_checks(const char *page, const struct xpath_check *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *x = check_xpath(page, c[i].expr);

		if (x == NULL || (c[i].exact ? strcmp(x, c[i].want) != 0 :
		    strstr(x, c[i].want) == NULL))
			fprintf(stderr, "%s: %s gives \"%s\", not %s\"%s\"\n",
			    page, c[i].expr, x ? x : "(nothing)",
			    c[i].exact ? "" : "a string with ", c[i].want);
		CHECK(x != NULL && (c[i].exact ? strcmp(x, c[i].want) == 0 :
		    strstr(x, c[i].want) != NULL));
		free(x);
	}
}

/*
 * The HTML page of an output bisect, from bisect itself and from
 * report: well-formed, the verdict naming 0.1.4 with the first
 * differing tokens, a canary row per release with its hash, 0.1.3
 * marked nondeterministic, 0.1.4 changed since 0.1.2 at token 8, and no
 * time plots; the timing report's page has the same canary table.
 */
static void
test_report_html(void)
{
	static const char *const pages[] = { "bisect --now --metric output "
	    "gen 0.1.0..0.1.6", "report gen 0.1.0..0.1.6 --metric output" };
	static const struct xpath_check output[] = {
		{ "string(//*[local-name()=\"dt\" and .=\"first bad\"]/"
		    "following-sibling::*[1])", "0.1.4", 1 },
		{ "string(//*[local-name()=\"dt\" and .=\"first difference\"]"
		    "/following-sibling::*[1])", "token 8: ", 0 },
		{ "count(//*[local-name()=\"table\" and @class=\"canary\"]//"
		    "*[local-name()=\"tbody\"]/*)", "7", 1 },
		{ "string(" CANARY_ROW("0.1.3") "/@class)", "nondeterministic",
		    1 },
		{ "string(" CANARY_ROW("0.1.3") "/" TD "[3])",
		    "nondeterministic: runs ", 0 },
		{ "string(" CANARY_ROW("0.1.4") "/@class)", "changed", 1 },
		{ "string(" CANARY_ROW("0.1.4") "/" TD "[4])",
		    "changed since 0.1.2 at token 8: ", 0 },
		{ "count(" CANARY_ROW("0.1.4") "/" TD "[4]/*[local-name()="
		    "\"code\"])", "2", 1 },
		{ "string(" CANARY_ROW("0.1.2") "/" TD "[4])", "same as 0.1.0",
		    1 },
		{ "count(//*[local-name()=\"svg\"])", "0", 1 },
	};
	static const struct xpath_check timing[] = {
		{ "string(" CANARY_ROW("0.1.4") "/" TD "[4])",
		    "changed since 0.1.2 at token 8: ", 0 },
		{ "count(//*[local-name()=\"svg\" and @id=\"metric-plot\"])",
		    "1", 1 },
	};
	struct xpath_check hash[2];
	char short_hash[13];
	json_t *rep;

	check_ctl_json(ctl_conf, "report gen 0.1.0..0.1.6 --metric output "
	    "--format json", 0, &rep);
	CHECK(rep != NULL);
	if (rep == NULL)
		return;
	/* The hash shown is the text's, its first 12 digits. */
	snprintf(short_hash, sizeof(short_hash), "%s", canary_of(rep, "0.1.0",
	    "sha256"));
	hash[0] = (struct xpath_check){ "string(" CANARY_ROW("0.1.0") "/" TD
	    "[2]/*/@title)", canary_of(rep, "0.1.0", "sha256"), 1 };
	hash[1] = (struct xpath_check){ "string(" CANARY_ROW("0.1.0") "/" TD
	    "[2])", short_hash, 1 };
	CHECK_INT(strlen(short_hash), 12);
	for (size_t i = 0; i < 2; i++) {
		char page[32];

		snprintf(page, sizeof(page), "output-%zu.html", i);
		CHECK_INT(html_page(pages[i], page), 3);
		xpath_checks(page, output, sizeof(output) / sizeof(output[0]));
		xpath_checks(page, hash, 2);
	}
	json_decref(rep);

	/* The timing report of the same range shows the same table. */
	CHECK(html_page("report gen 0.1.0..0.1.6", "time.html") >= 0);
	xpath_checks("time.html", timing, sizeof(timing) / sizeof(timing[0]));
}

/* The canary runs of release version in "runs --format json": how many,
 * each one's canary object in k[] (borrowed from *a, which the caller
 * decrefs). */
static size_t
canary_runs(const char *version, json_t **a, json_t *k[], size_t nk)
{
	char args[128];
	json_t *r;
	size_t i, n = 0;
	int rc;

	snprintf(args, sizeof(args), "runs gen %s --format json", version);
	rc = check_ctl_json(ctl_conf, args, 0, a);
	CHECK_INT(rc, 0);
	json_array_foreach(*a, i, r) {
		if (strcmp(json_string_value(json_object_get(json_object_get(r,
		    "cell"), "kind")), "canary") != 0)
			continue;
		if (n < nk)
			k[n] = r;
		n++;
	}
	return n;
}

/*
 * bisectctl runs lists a release's canary runs after its runs, in text
 * and JSON: each with the hash of its text and its state: deterministic
 * pairs with one hash, 0.1.3's nondeterministic pair with two, 0.1.7's
 * failed runs with their reason.
 */
static void
test_runs(void)
{
	json_t *a, *k[4], *c0, *c1;
	char *out = NULL, prefix[16];

	CHECK_INT(canary_runs("0.1.0", &a, k, 4), 2);
	c0 = json_object_get(k[0], "canary");
	c1 = json_object_get(k[1], "canary");
	CHECK_STR(json_string_value(json_object_get(c0, "status")),
	    "deterministic");
	CHECK_STR(json_string_value(json_object_get(c1, "status")),
	    "deterministic");
	CHECK_INT(strlen(json_string_value(json_object_get(c0, "sha256"))),
	    64);
	CHECK_STR(json_string_value(json_object_get(c0, "sha256")),
	    json_string_value(json_object_get(c1, "sha256")));
	CHECK(json_is_null(json_object_get(k[0], "failure")));
	CHECK(json_is_string(json_object_get(k[0], "definition")));
	json_decref(a);

	CHECK_INT(canary_runs("0.1.3", &a, k, 4), 2);
	c0 = json_object_get(k[0], "canary");
	c1 = json_object_get(k[1], "canary");
	CHECK_STR(json_string_value(json_object_get(c0, "status")),
	    "nondeterministic");
	CHECK_STR(json_string_value(json_object_get(c1, "status")),
	    "nondeterministic");
	CHECK(strcmp(json_string_value(json_object_get(c0, "sha256")),
	    json_string_value(json_object_get(c1, "sha256"))) != 0);
	snprintf(prefix, sizeof(prefix), "%.12s", json_string_value(
	    json_object_get(c1, "sha256")));
	json_decref(a);
	CHECK_INT(check_ctl_run(ctl_conf, "runs gen 0.1.3", &out), 0);
	CHECK_CONTAINS(out, "canary runs (the text each generated from the "
	    "canary prompt):");
	CHECK_CONTAINS(out, prefix);
	CHECK_CONTAINS(out, "  nondeterministic\n");
	CHECK_CONTAINS(out, "canary definition ");
	free(out);

	CHECK_INT(canary_runs("0.1.7", &a, k, 4), 2);
	CHECK_STR(json_string_value(json_object_get(json_object_get(k[0],
	    "canary"), "status")), "failed");
	CHECK(json_is_null(json_object_get(json_object_get(k[0], "canary"),
	    "sha256")));
	CHECK_STR(json_string_value(json_object_get(k[0], "failure")),
	    "signal");
	CHECK_CONTAINS(json_string_value(json_object_get(k[0], "detail")),
	    "killed by");
	json_decref(a);
	CHECK_INT(check_ctl_run(ctl_conf, "runs gen 0.1.7", &out), 0);
	CHECK_CONTAINS(out, "  failed: signal\n        killed by ");
	free(out);
}

/* An engine's text is hostile: its control bytes reach no terminal and
 * its JSON stays valid. */
static void
test_hostile(void)
{
	char *out = NULL;
	json_t *rep;
	int rc;

	rc = check_ctl_run(ctl_conf, "bisect --now --metric output hostile "
	    "0.1.0..0.1.1", &out);
	CHECK_INT(rc, 3);
	CHECK(out != NULL && strchr(out, '\033') == NULL);
	CHECK(out != NULL && strchr(out, '\007') == NULL);
	CHECK_CONTAINS(out, "\\x1b]0;owned\\x07");
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "report hostile 0.1.0..0.1.1 "
	    "--metric output --format markdown", &out), 3);
	CHECK(out != NULL && strchr(out, '\033') == NULL);
	free(out);
	/* ... and in a page, its markup stays text. */
	CHECK_INT(html_page("report hostile 0.1.0..0.1.1 --metric output",
	    "hostile.html"), 3);
	out = check_read_file("hostile.html");
	CHECK(out != NULL && strchr(out, '\033') == NULL);
	free(out);
	rc = check_ctl_json(ctl_conf, "report hostile 0.1.0..0.1.1 --metric "
	    "output --format json", 0, &rep);
	CHECK(rep != NULL);
	CHECK_CONTAINS(json_string_value(json_object_get(json_object_get(
	    json_object_get(rep, "verdict"), "diff"), "before")),
	    "\\x1b[2J");
	json_decref(rep);
}

/* A prompt that changed after its pin stops the job and says both
 * hashes; nothing is run on it. */
static void
test_prompt_pin(void)
{
	char *err;

	check_write_file("prompt.txt", "Another prompt.\n");
	CHECK_INT(check_ctl_run(ctl_conf, "bisect --now --metric output gen "
	    "0.1.5..0.1.6", NULL), 1);
	err = check_read_file("stderr.txt");
	CHECK_CONTAINS(err, "canary prompt '");
	CHECK_CONTAINS(err, "pinned at its first use as");
	free(err);
	check_write_file("prompt.txt", "Once upon a time, a lighthouse.\n");
}

/* A queued bisect runs as the daemon runs it, with the same verdict. */
static void
test_job(struct conf *c, struct store *s)
{
	static atomic_int stop;
	struct job_run_opts o;
	struct store_job job;
	struct err e = ERR_INIT;
	char *result = NULL;
	int64_t id;
	int code = -1;

	CHECK_INT(store_job_enqueue(s, "bisect", "gen", "{\"range\":"
	    "\"0.1.0..0.1.6\",\"metric\":\"output\"}", 0, &id, &e), 0);
	CHECK_INT(store_job_pick(s, &job, &e), 0);
	memset(&o, 0, sizeof(o));
	o.stop = &stop;
	o.lock_path = "t.db.bench-lock";
	CHECK_INT(job_run(c, s, &job, &o, &code, &result), JOB_RUN_FINISHED);
	CHECK_INT(code, 3);
	CHECK_CONTAINS(result, "\"first_bad\":\"0.1.4\"");
	CHECK_CONTAINS(result, "\"kind\":\"output\"");
	free(result);
	store_job_release(&job);
}

static int
count_alerts(struct store *s, const char *kind, char *summary, size_t len)
{
	struct store_alert_rows rows;
	struct err e = ERR_INIT;
	int n = 0;

	if (store_alert_list(s, 100, &rows, &e) < 0)
		return -1;
	for (size_t i = 0; i < rows.n; i++)
		if (strcmp(rows.v[i].alert.kind, kind) == 0) {
			n++;
			snprintf(summary, len, "%s", rows.v[i].alert.summary);
		}
	store_alert_rows_release(&rows);
	return n;
}

/* The watch: a new release that generates differently is one alert, in
 * one line with "faster" when it is faster; not again at the next watch. */
static void
test_watch(struct conf *c, struct store *s)
{
	struct watch_opts o;
	struct err e = ERR_INIT;
	char summary[512] = "";
	int rc;

	memset(&o, 0, sizeof(o));
	check_run("rm -rf rel", NULL);
	publish("0.1.1");
	publish("0.1.2");
	rc = watch_run(c, &c->engines[0], s, &o, &e);
	CHECK(rc == 0 || rc == 4);
	CHECK_INT(count_alerts(s, "output", summary, sizeof(summary)), 0);
	publish("0.1.4");
	rc = watch_run(c, &c->engines[0], s, &o, &e);
	if (rc < 0)
		fprintf(stderr, "watch: %s\n", e.msg);
	CHECK(rc >= 0);
	CHECK_INT(count_alerts(s, "output", summary, sizeof(summary)), 1);
	if (getenv("TEST_CANARY_VERBOSE"))
		fprintf(stderr, "alert: %s\n", summary);
	CHECK_CONTAINS(summary, "gen 0.1.4 is ");
	CHECK_CONTAINS(summary, "% faster than 0.1.2 (per-token) and "
	    "generates different text on the canary prompt");
	CHECK(strchr(summary, '\n') == NULL);
	/* Nothing new: nothing run, nothing alerted again. */
	CHECK_INT(watch_run(c, &c->engines[0], s, &o, &e), 0);
	publish("0.1.5");
	rc = watch_run(c, &c->engines[0], s, &o, &e);
	CHECK(rc >= 0);
	CHECK_INT(count_alerts(s, "output", summary, sizeof(summary)), 1);
}

int
main(void)
{
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	char *text;

	cli_open("canary", "t.conf", NULL, &ctl, NULL, &build, ctl_conf);
	check_write_file("prompt.txt", "Once upon a time, a lighthouse.\n");
	for (int v = 0; v <= 8; v++) {
		char ver[16];

		snprintf(ver, sizeof(ver), "0.1.%d", v);
		publish(ver);
	}
	write_config();
	CHECK_CASE(test_bisect);
	CHECK_CASE(test_report_formats);
	CHECK_CASE(test_report_html);
	CHECK_CASE(test_runs);
	CHECK_CASE(test_hostile);
	CHECK_CASE(test_prompt_pin);

	text = check_read_file("t.conf");
	c = check_conf_load(text);
	free(text);
	CHECK(c != NULL);
	if (c == NULL)
		return check_done();
	CHECK_INT(store_open("t.db", &s, &e), 0);
	test_job(c, s);
	/* A fresh store for the watch: its own baseline. */
	store_close(s);
	check_run("rm -f t.db t.db-wal t.db-shm", NULL);
	CHECK_INT(store_open("t.db", &s, &e), 0);
	test_watch(c, s);
	store_close(s);
	conf_free(c);
	return check_done();
}
