/*
 * test_history.c: bisectctl history over fake-engine releases benched
 * into a store.  One series costs 50% more per prompt token from 1.0.6
 * and is back at 1.0.11: the report of the whole range finds no
 * regression (its ends agree), the history finds both change points,
 * each with the bisect and the report around it.  Another slides, 10%
 * more per token at each release from 1.0.6 to 1.0.12: the history
 * finds it, slower, and marks it a slide, not a step.  Every format is
 * read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "check_cli.h"
#include "check_json.h"

#define NREL 20

static const char *ctl, *build;
static char ctl_conf[CLI_CTL_CONF_MAX];	/* bisectctl -c h.conf */

static void
write_config(void)
{
	char text[4096], source[1024];
	size_t len;

	len = check_demo_head(text, sizeof(text), "h.db", build);
	snprintf(source, sizeof(source), "dir:%s/tests/releases", build);
	check_fake_engine(text, sizeof(text), &len, "bump", source,
	    "\ttimeout = 1m\n");
	check_fake_engine(text, sizeof(text), &len, "slide", source,
	    "\ttimeout = 1m\n");
	check_write_file("h.conf", text);
}

/* Bench every release of engine, 5 runs a cell. */
static void
bench_all(const char *engine)
{
	char args[256];

	for (int i = 0; i < NREL; i++) {
		snprintf(args, sizeof(args), "bench %s 1.0.%d --reps 5", engine,
		    i);
		CHECK_INT(check_ctl_run(ctl_conf, args, NULL), 0);
	}
}

static const char *
str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void
test_step_up_and_down(void)
{
	json_t *rep, *h, *s, *cps, *a, *b;
	char *out = NULL;
	int rc;

	bench_all("bump");
	/*
	 * The ends agree: no regression over the whole range, the step
	 * up and down invisible to them.  Benched minutes apart on a loaded
	 * machine, their five runs each may also stay undecided (unknown,
	 * exit 4): never a regression.
	 */
	rc = check_ctl_json(ctl_conf, "--format json report bump "
	    "1.0.0..1.0.19", 0, &rep);
	CHECK(rc == 0 || rc == 4);
	CHECK_STR(str(json_object_get(rep, "verdict"), "status"),
	    rc == 0 ? "no-regression" : "unknown");
	json_decref(rep);

	CHECK_INT(check_ctl_json(ctl_conf, "--format json history bump "
	    "--metric per-token", 0, &h), 3);
	s = check_entry(h, "series", "metric", "per-token");
	CHECK(s != NULL);
	CHECK_INT(json_array_size(json_object_get(s, "releases")), NREL);
	cps = json_object_get(s, "change_points");
	CHECK_INT(json_array_size(cps), 2);
	a = json_array_get(cps, 0);
	b = json_array_get(cps, 1);
	CHECK_STR(str(a, "version"), "1.0.6");
	CHECK_STR(str(a, "direction"), "slower");
	CHECK_STR(str(b, "version"), "1.0.11");
	CHECK_STR(str(b, "direction"), "faster");
	/* +50% per token, then -33%, each with its interval. */
	CHECK(json_real_value(json_array_get(json_object_get(a, "change_ci"),
	    0)) > 0.25);
	CHECK(json_real_value(json_array_get(json_object_get(b, "change_ci"),
	    1)) < -0.15);
	CHECK(json_is_null(json_object_get(a, "slide")));
	CHECK_CONTAINS(str(a, "bisect"), " bisect --metric per-token bump "
	    "1.0.4..1.0.7");
	CHECK_CONTAINS(str(a, "report"), " report --metric per-token bump "
	    "1.0.4..1.0.7");
	/* A bisect looks for slowdowns: the fix has its report alone. */
	CHECK(json_is_null(json_object_get(b, "bisect")));
	CHECK_CONTAINS(str(b, "report"), " bump 1.0.9..1.0.12");
	json_decref(h);

	/* The printed bisect finds the release. */
	CHECK_INT(check_ctl_json(ctl_conf, "--format json bisect --now "
	    "--metric per-token bump 1.0.4..1.0.7", 0, &rep), 3);
	CHECK_STR(str(json_object_get(rep, "verdict"), "first_bad"), "1.0.6");
	json_decref(rep);

	/* Every metric by default; the text names both points. */
	CHECK_INT(check_ctl_run(ctl_conf, "history bump", &out), 3);
	CHECK_CONTAINS(out, "per-token (prefill cost per token, ms/token): "
	    "20 releases measured, 2 change points");
	CHECK_CONTAINS(out, "change point at 1.0.6 (after 1.0.5): slower, +");
	CHECK_CONTAINS(out, "change point at 1.0.11 (after 1.0.10): faster, -");
	CHECK_CONTAINS(out, "bisect it: bisectctl -c ");
	CHECK_CONTAINS(out, "pp256 (prefill of 256 tokens, tok/s)");
	CHECK_CONTAINS(out, "tg16 (decode of 16 tokens, tok/s)");
	free(out);

	CHECK_INT(check_ctl_run(ctl_conf, "history bump --metric per-token "
	    "--format csv", &out), 3);
	CHECK_CONTAINS(out, "metric,version,n,value,value_lo,value_hi,unit,"
	    "change_point,");
	CHECK_CONTAINS(out, "\"per-token\",\"1.0.6\",5,");
	CHECK_CONTAINS(out, ",\"ms/token\",\"slower\",");
	CHECK_CONTAINS(out, ",\"ms/token\",\"faster\",");
	free(out);

	CHECK_INT(check_ctl_run(ctl_conf, "history bump --metric per-token "
	    "--format html >bump.html", NULL), 3);
	check_xpath_is("bump.html", "count(//*[local-name()=\"svg\"]/*["
	    "local-name()=\"line\" and @class=\"change\"])", "2");
	check_xpath_is("bump.html", "count(//*[local-name()=\"svg\"]/*["
	    "local-name()=\"circle\" and @class=\"metric\"])", "20");

	/* Usage: a metric that is no series, output, another format. */
	CHECK_INT(check_ctl_run(ctl_conf, "history bump --metric output",
	    NULL), 2);
	CHECK_INT(check_ctl_run(ctl_conf, "history bump --format markdown",
	    NULL), 2);
	CHECK_INT(check_ctl_run(ctl_conf, "history nosuch", NULL), 2);
	CHECK_INT(check_ctl_run(ctl_conf, "history bump --metric pp999",
	    NULL), 2);
}

static void
test_slide(void)
{
	json_t *h, *s, *x;
	size_t i, n;
	int slide = -1;

	bench_all("slide");
	CHECK_INT(check_ctl_json(ctl_conf, "--format json history slide "
	    "--metric per-token", 0, &h), 3);
	s = check_entry(h, "series", "metric", "per-token");
	/* Cut once or at a few places, each cut marked a slide's. */
	n = json_array_size(json_object_get(s, "change_points"));
	CHECK(n >= 1);
	json_array_foreach(json_object_get(s, "change_points"), i, x) {
		const char *v = str(x, "version");

		CHECK_STR(str(x, "direction"), "slower");
		/* Inside the slide: from 1.0.6 to 1.0.12. */
		CHECK(strncmp(v, "1.0.", 4) == 0 && atoi(v + 4) >= 6 &&
		    atoi(v + 4) <= 12);
		CHECK(json_is_integer(json_object_get(x, "slide")));
		if (i == 0)
			slide = (int)json_integer_value(json_object_get(x,
			    "slide"));
		CHECK_INT(json_integer_value(json_object_get(x, "slide")),
		    slide);
	}
	json_decref(h);
}

int
main(void)
{
	cli_open("history", "h.conf", write_config, &ctl, NULL, &build,
	    ctl_conf);
	CHECK_CASE(test_step_up_and_down);
	CHECK_CASE(test_slide);
	return check_done();
}
