/*
 * test_whole_matrix.c: a bisect searches one metric and says what else
 * changed.  Over fake-engine releases whose decode alone gets slower at
 * 1.0.3 (and, apart, whose fixed overhead alone does), a bisect on the
 * per-token cost finds no regression and exits 0, yet every format
 * names the other change with its interval and the command that
 * bisects it; that command then finds 1.0.3.  The decode cells are
 * measured on the ends although the search probes prefill alone.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "check_cli.h"
#include "check_json.h"

/* Built with AddressSanitizer (gcc says so one way, clang another). */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static const char *ctl, *build;
static char ctl_conf[CLI_CTL_CONF_MAX];	/* bisectctl -c m.conf */

static void
write_config(void)
{
	static const char *const names[] = { "dec", "fix", "attn" };
	char text[8192], source[1024];
	size_t len;

	len = check_demo_head(text, sizeof(text), "m.db", build);
	snprintf(source, sizeof(source), "dir:%s/tests/releases", build);
	for (size_t i = 0; i < 3; i++)
		check_fake_engine(text, sizeof(text), &len, names[i], source,
		    "\ttimeout = 1m\n");
	/* Three lengths, for the curve. */
	len += (size_t)snprintf(text + len, sizeof(text) - len,
	    "[engine \"curve\"]\n\tsource = %s\n"
	    "\tasset = curve-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 64,256,512\n"
	    "\tfit = 64,256,512\n\tgen = 16\n\treps = 10\n"
	    "\ttimeout = 1m\n"
	    "[engine \"mem\"]\n\tsource = %s\n"
	    "\tasset = mem-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 64,256\n\tgen = 16\n"
	    "\ttimeout = 1m\n", source, source);
	check_write_file("m.conf", text);
}

/*
 * A change only metric `other` sees: the per-token bisect exits 0, the
 * report's every format names the other metric's change and the
 * command that bisects it, and that command finds 1.0.3.
 */
static void
check_other_metric(const char *engine, const char *other, double lo_min)
{
	char args[256], want[512], *out = NULL;
	const char *cmd;
	json_t *rep, *x, *ci, *rel;

	snprintf(args, sizeof(args), "--format json bisect --now %s "
	    "1.0.0..1.0.4", engine);
	CHECK_INT(check_ctl_json(ctl_conf, args, 0, &rep), 0);
	if (rep == NULL)
		return;
	CHECK_STR(json_string_value(json_object_get(json_object_get(rep,
	    "verdict"), "status")), "no-regression");
	/* Decode measured on the ends, though the search probes prefill. */
	rel = check_release(rep, "1.0.4");
	CHECK(json_object_size(json_object_get(rel, "tg")) == 1);
	/* The searched metric did not move: unchanged, or (2% noise, 5
	 * runs, a 6 ms fixed part beside 10 ms of prefill) unsure. */
	x = check_change(rep, "1.0.0", "1.0.4", "per-token");
	CHECK(x != NULL);
	CHECK(x != NULL && (strcmp(json_string_value(json_object_get(x,
	    "moved")), "unchanged") == 0 || strcmp(json_string_value(
	    json_object_get(x, "moved")), "unsure") == 0));
	CHECK(json_is_true(json_object_get(x, "searched")));
	x = check_change(rep, "1.0.0", "1.0.4", other);
	CHECK(x != NULL);
	if (x == NULL) {
		json_decref(rep);
		return;
	}
	CHECK_STR(json_string_value(json_object_get(x, "moved")), "slower");
	ci = json_object_get(x, "change_ci");
	/* Slower: a time up, a throughput down, past half the 20%. */
	if (strcmp(json_string_value(json_object_get(x, "unit")),
	    "tok/s") == 0)
		CHECK(json_real_value(json_array_get(ci, 1)) < -lo_min);
	else
		CHECK(json_real_value(json_array_get(ci, 0)) > lo_min);
	cmd = json_string_value(json_object_get(x, "bisect"));
	snprintf(want, sizeof(want), " bisect --now --metric %s %s "
	    "1.0.0..1.0.4", other, engine);
	CHECK(cmd != NULL && strstr(cmd, want) != NULL);
	json_decref(rep);

	/* Every format for people says it. */
	snprintf(args, sizeof(args), "report %s 1.0.0..1.0.4", engine);
	CHECK_INT(check_ctl_run(ctl_conf, args, &out), 0);
	CHECK_CONTAINS(out, "what else changed (every metric of the matrix");
	snprintf(want, sizeof(want), "(%s) ", other);
	CHECK_CONTAINS(out, want);
	snprintf(want, sizeof(want), "bisect it: bisectctl -c ");
	CHECK_CONTAINS(out, want);
	free(out);
	snprintf(args, sizeof(args), "report %s 1.0.0..1.0.4 --format "
	    "markdown", engine);
	CHECK_INT(check_ctl_run(ctl_conf, args, &out), 0);
	CHECK_CONTAINS(out, "**What else changed**");
	snprintf(want, sizeof(want), "--metric %s %s 1.0.0..1.0.4`", other,
	    engine);
	CHECK_CONTAINS(out, want);
	free(out);
	snprintf(args, sizeof(args), "report %s 1.0.0..1.0.4 --format html "
	    ">%s.html", engine, engine);
	CHECK_INT(check_ctl_run(ctl_conf, args, NULL), 0);
	snprintf(args, sizeof(args), "%s.html", engine);
	out = check_xpath(args, "string(//*[@id=\"else-changed\"]//*[@class="
	    "\"slower\"]/*[1])");
	CHECK(out != NULL && strstr(out, other) != NULL);
	free(out);
	/* Decode plotted beside prefill: a dot per release measured on
	 * it, the two ends at least. */
	out = check_xpath(args, "count(//*[local-name()=\"svg\" and "
	    "@id=\"decode-tg16\"]/*[local-name()=\"circle\" and "
	    "@class=\"metric\"])");
	CHECK(out != NULL && atoi(out) >= 2);
	free(out);

	/* The paste-ready command finds the release. */
	snprintf(args, sizeof(args), "--format json bisect --now --metric %s "
	    "%s 1.0.0..1.0.4", other, engine);
	CHECK_INT(check_ctl_json(ctl_conf, args, 0, &rep), 3);
	if (rep == NULL)
		return;
	CHECK_STR(json_string_value(json_object_get(json_object_get(rep,
	    "verdict"), "first_bad")), "1.0.3");
	json_decref(rep);
}

/*
 * A token's cost that grows with the prompt: at 64 tokens 1.48 ms (43
 * thousand tok/s), at 512 23.3 ms, a line of 48.8 us per token whose
 * ceiling (20.5 thousand tok/s) the short prompt beats.  The report
 * gives no ceiling there, and says why; /metrics follows the report.
 */
static void
test_ceiling_contradicted(void)
{
	json_t *rep, *rel;
	char *out = NULL;

	CHECK_INT(check_ctl_run(ctl_conf, "bench attn 1.0.0 --reps 5", NULL),
	    0);
	CHECK_INT(check_ctl_json(ctl_conf, "--format json report attn "
	    "1.0.0..1.0.1", 0, &rep) >= 0, 1);
	rel = check_release(rep, "1.0.0");
	CHECK(rel != NULL && json_is_null(json_object_get(rel, "ceiling_tps")));
	CHECK_CONTAINS(json_string_value(json_object_get(rel,
	    "ceiling_contradicted")), "pp64 measured ");
	CHECK_CONTAINS(json_string_value(json_object_get(rel,
	    "ceiling_contradicted")), "the cost of a token grows with the "
	    "prompt");
	json_decref(rep);
	CHECK_INT(check_ctl_run(ctl_conf, "report attn 1.0.0..1.0.1", &out) >=
	    0, 1);
	CHECK_CONTAINS(out, "1.0.0: no ceiling: pp64 measured ");
	free(out);
}

/*
 * Three lengths of a cost that grows with the prompt (5 ms + 20 us per
 * token + 0.05 us per token squared, the square doubled at 1.0.1): the
 * curve is chosen, gives the 5 ms back from its intercept with the cost
 * of a token at each length (26.4, 45.6 and 71.2 us at 1.0.0), and the
 * bisect calls the change per-token, never fixed.
 */
static void
test_curve(void)
{
	static const int tokens[] = { 64, 256, 512 };
	static const double cost_us[2][3] = { { 26.4, 45.6, 71.2 },
	    { 32.8, 71.2, 122.4 } };
	json_t *rep, *rel, *at, *v;
	char *out = NULL;

	CHECK_INT(check_ctl_run(ctl_conf, "bisect --now curve 1.0.0..1.0.1",
	    NULL), 3);
	CHECK_INT(check_ctl_json(ctl_conf, "--format json report curve "
	    "1.0.0..1.0.1", 0, &rep), 3);
	for (int k = 0; k < 2; k++) {
		double fixed, lo, hi;

		rel = check_release(rep, k ? "1.0.1" : "1.0.0");
		CHECK_STR(json_string_value(json_object_get(rel, "model")),
		    "curve");
		/* The intercept is the fixed overhead: 5 ms, and a process
		 * start, within a millisecond. */
		fixed = json_number_value(json_object_get(rel, "fixed_ms"));
		lo = json_number_value(json_array_get(json_object_get(rel,
		    "fixed_ms_ci"), 0));
		hi = json_number_value(json_array_get(json_object_get(rel,
		    "fixed_ms_ci"), 1));
		CHECK(fixed > 4.5 && fixed < 6.0 && lo < fixed && hi > fixed);
		at = json_object_get(rel, "per_token_at");
		CHECK_INT(json_array_size(at), 3);
		for (size_t i = 0; i < 3 && i < json_array_size(at); i++) {
			double ms = json_number_value(json_object_get(
			    json_array_get(at, i), "ms"));

			CHECK_INT(json_integer_value(json_object_get(
			    json_array_get(at, i), "tokens")), tokens[i]);
			/*
			 * Within 20% of the engine's own cost: several
			 * standard errors at 64 tokens from ten runs a cell
			 * with their process offsets (an outlier run out),
			 * while the line's one slope is 82% off there and
			 * 32% at 512.
			 */
			if (!(fabs(ms * 1000 / cost_us[k][i] - 1) < 0.20))
				fprintf(stderr, "%s at %d: %.4g ms, not %.4g\n",
				    k ? "1.0.1" : "1.0.0", tokens[i], ms,
				    cost_us[k][i] / 1000);
			CHECK(fabs(ms * 1000 / cost_us[k][i] - 1) < 0.20);
		}
		/* Under the curve no measured length beats the ceiling. */
		CHECK(json_is_number(json_object_get(rel, "ceiling_tps")));
		CHECK(json_object_get(rel, "ceiling_contradicted") == NULL);
	}
	v = json_object_get(rep, "verdict");
	CHECK_STR(json_string_value(json_object_get(v, "first_bad")), "1.0.1");
	CHECK_STR(json_string_value(json_object_get(v, "kind")), "per-token");
	json_decref(rep);
	CHECK_INT(check_ctl_run(ctl_conf, "report curve 1.0.0..1.0.1", &out),
	    3);
	CHECK_CONTAINS(out, "the cost per token grows with the prompt");
	CHECK_CONTAINS(out, "ms at 512; fixed ");
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "report curve 1.0.0..1.0.1 --format "
	    "html", &out), 3);
	CHECK_CONTAINS(out, "1.0.1: curve, ");
	CHECK_CONTAINS(out, " tok/s");
	free(out);
}

/* Decode 200 to 400 us per token: tg16 5.2 to 8.4 ms, -38% tok/s. */
static void
test_decode_only(void)
{
	check_other_metric("dec", "tg16", 0.25);
}

/* The fixed overhead 2 to 6 ms, the cost per token the same. */
static void
test_fixed_only(void)
{
	check_other_metric("fix", "fixed", 0.5);
}

/*
 * The resident set as the metric: 1.0.2 holds 20 MiB more and costs the
 * same.  `--metric rss` names it, with the change in bytes; the time
 * bisect finds nothing; the report's releases carry their peak memory
 * in bytes, not as a time.
 */
static void
test_rss(void)
{
	json_t *rep, *v, *rel;
	double bytes;

	CHECK_INT(check_ctl_run(ctl_conf, "bisect --now mem 1.0.0..1.0.2",
	    NULL), 0);
#ifdef UNDER_ASAN
	/*
	 * A child's ru_maxrss counts the resident set of the process it was
	 * cloned from (the kernel keeps the old memory's peak at exec).
	 * Under AddressSanitizer bisectctl's own, its shadow and quarantine
	 * (55 MB and growing with every call), is above the fake engine's
	 * 43 MB, so the engine's peak cannot be told apart here; the
	 * normal build checks it.
	 */
	printf("test_rss: the rss bisect is not checked under "
	    "AddressSanitizer (bisectctl's own resident set is larger)\n");
	return;
#endif
	CHECK_INT(check_ctl_json(ctl_conf, "bisect --now --metric rss mem "
	    "1.0.0..1.0.2 --format json", 0, &rep), 3);
	v = json_object_get(rep, "verdict") ? json_object_get(rep, "verdict") :
	    rep;
	CHECK_STR(json_string_value(json_object_get(v, "status")),
	    "regression");
	CHECK_STR(json_string_value(json_object_get(v, "first_bad")), "1.0.2");
	/* 20 MiB over 40 and the process's own few: +30% to +50%. */
	CHECK(json_real_value(json_object_get(v, "metric_change")) > 0.30 &&
	    json_real_value(json_object_get(v, "metric_change")) < 0.50);
	json_decref(rep);
	CHECK_INT(check_ctl_json(ctl_conf, "--format json report --metric rss "
	    "mem 1.0.0..1.0.2", 0, &rep), 3);
	rel = check_release(rep, "1.0.2");
	bytes = json_real_value(json_object_get(rel, "metric_bytes"));
	CHECK(json_object_get(rel, "metric_ms") == NULL);
	CHECK(bytes > 60.0 * (1 << 20) && bytes < 90.0 * (1 << 20));
	json_decref(rep);
}

int
main(void)
{
	cli_open("whole_matrix", "m.conf", write_config, &ctl, NULL, &build,
	    ctl_conf);
	CHECK_CASE(test_decode_only);
	CHECK_CASE(test_fixed_only);
	CHECK_CASE(test_ceiling_contradicted);
	CHECK_CASE(test_curve);
	CHECK_CASE(test_rss);
	return check_done();
}
