/*
 * test_gradual.c: bisectctl bisect --now over fake-engine releases whose
 * prefill token gets 8% dearer at each of 1.0.1..1.0.8 (+85% end to end;
 * every process its own offset, 1% of them 3x slow): no release is the
 * step, and the verdict says so.  Status gradual, exit code 3, the span
 * around the slide, the change per release with its interval, and the
 * largest steps, in the JSON report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "check_cli.h"
#include "check_json.h"

static const char *ctl, *build;
static char ctl_conf[CLI_CTL_CONF_MAX];

static void
write_config(void)
{
	char text[2048];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = g.db\n\tcache = cache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"grad\"]\n\tsource = dir:%s/tests/releases\n"
	    "\tasset = grad-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n"
	    "\ttimeout = 1m\n", build, build);
	check_write_file("g.conf", text);
}

static double
num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static void
test_slide_named(void)
{
	json_t *rep, *v, *g, *ci, *rel, *steps;
	const char *from, *to;
	double per, lo, hi;

	CHECK_INT(check_ctl_json(ctl_conf, "--format json bisect --now grad "
	    "1.0.0..1.0.9", 0, &rep), 3);
	if (rep == NULL)
		return;
	v = json_object_get(rep, "verdict");
	CHECK_STR(json_string_value(json_object_get(v, "status")), "gradual");
	g = json_object_get(v, "gradual");
	CHECK(json_is_object(g));
	from = json_string_value(json_object_get(g, "from"));
	to = json_string_value(json_object_get(g, "to"));
	CHECK(from != NULL && to != NULL);
	if (from == NULL || to == NULL) {
		json_decref(rep);
		return;
	}
	/* the slide spreads over 1.0.1..1.0.8: the span holds most of it,
	 * from a release at most 1.0.3 to one at least 1.0.6 */
	CHECK(strcmp(from, "1.0.3") <= 0);
	CHECK(strcmp(to, "1.0.6") >= 0);
	rel = json_object_get(g, "releases");
	CHECK(json_array_size(rel) >= 3);
	CHECK_STR(json_string_value(json_array_get(rel, json_array_size(rel) -
	    1)), to);
	/* the total change is real, the change per release near 8% */
	ci = json_object_get(g, "total_change_ci");
	CHECK(json_real_value(json_array_get(ci, 0)) > 0.1);
	per = num(g, "per_release_change");
	ci = json_object_get(g, "per_release_change_ci");
	lo = json_real_value(json_array_get(ci, 0));
	hi = json_real_value(json_array_get(ci, 1));
	printf("gradual %s..%s, %+.1f%% a release [%+.1f%%, %+.1f%%]\n", from,
	    to, 100 * per, 100 * lo, 100 * hi);
	CHECK(lo < per && per < hi);
	CHECK(per > 0.03 && per < 0.15);
	steps = json_object_get(g, "largest_steps");
	CHECK(json_array_size(steps) >= 1);
	CHECK(json_is_array(json_object_get(json_array_get(steps, 0),
	    "change_ci")));
	CHECK(json_is_array(json_object_get(g, "measured_between")));
	CHECK(json_is_array(json_object_get(v, "change_points")));
	json_decref(rep);
}

/* Every format for people says it is a slide, with its span and total,
 * from the stored runs: nothing is measured again. */
static void
test_slide_formats(void)
{
	char *out = NULL;

	CHECK_INT(check_ctl_run(ctl_conf, "report grad 1.0.0..1.0.9", &out), 3);
	CHECK_CONTAINS(out, "verdict: gradual: a slide from 1.0.");
	CHECK_CONTAINS(out, "no one release is its cause");
	CHECK_CONTAINS(out, "largest step 1.0.");
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "report grad 1.0.0..1.0.9 --format "
	    "markdown", &out), 3);
	CHECK_CONTAINS(out, "**Verdict: gradual**: a slide from 1.0.");
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "report grad 1.0.0..1.0.9 --format "
	    "html", &out), 3);
	CHECK_CONTAINS(out, "<span class=\"status gradual\">gradual</span>");
	CHECK_CONTAINS(out, "change a release");
	free(out);
}

int
main(void)
{
	cli_open("gradual", "g.conf", write_config, &ctl, NULL, &build,
	    ctl_conf);
	CHECK_CASE(test_slide_named);
	CHECK_CASE(test_slide_formats);
	return check_done();
}
