/*
 * test_whole_matrix.c: a bisect searches one metric and says what else
 * changed.  Over fake-engine releases whose decode alone gets slower at
 * 1.0.3 (and, apart, whose fixed overhead alone does), a bisect on the
 * per-token cost finds no regression and exits 0, yet every format
 * names the other change with its interval and the command that
 * bisects it; that command then finds 1.0.3.  The decode cells are
 * measured on the ends although the search probes prefill alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "check_json.h"

static const char *ctl, *build;
static char ctl_conf[4096];	/* bisectctl -c m.conf */

static void
write_config(void)
{
	static const char *const names[] = { "dec", "fix", "attn" };
	char text[4096], source[1024];
	size_t len;

	len = (size_t)snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = m.db\n\tcache = cache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n", build);
	snprintf(source, sizeof(source), "dir:%s/tests/releases", build);
	for (size_t i = 0; i < 3; i++)
		check_fake_engine(text, sizeof(text), &len, names[i], source,
		    "\ttimeout = 1m\n");
	check_write_file("m.conf", text);
}

/* The entry of what_else_changed between from and to for metric. */
static json_t *
change_of(json_t *rep, const char *from, const char *to, const char *metric)
{
	json_t *x;
	size_t i;

	json_array_foreach(json_object_get(rep, "what_else_changed"), i, x)
		if (strcmp(json_string_value(json_object_get(x, "from")),
		    from) == 0 && strcmp(json_string_value(json_object_get(x,
		    "to")), to) == 0 && strcmp(json_string_value(
		    json_object_get(x, "metric")), metric) == 0)
			return x;
	return NULL;
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
	x = change_of(rep, "1.0.0", "1.0.4", "per-token");
	CHECK(x != NULL);
	CHECK(x != NULL && (strcmp(json_string_value(json_object_get(x,
	    "moved")), "unchanged") == 0 || strcmp(json_string_value(
	    json_object_get(x, "moved")), "unsure") == 0));
	CHECK(json_is_true(json_object_get(x, "searched")));
	x = change_of(rep, "1.0.0", "1.0.4", other);
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

int
main(void)
{
	const char *daemon_bin;

	check_env(&ctl, &daemon_bin, &build);
	snprintf(ctl_conf, sizeof(ctl_conf), "%s -c m.conf", ctl);
	check_tmpdir("whole_matrix");
	write_config();
	CHECK_CASE(test_decode_only);
	CHECK_CASE(test_fixed_only);
	CHECK_CASE(test_ceiling_contradicted);
	return check_done();
}
