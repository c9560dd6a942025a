/*
 * test_matrix.c: an engine on two runners with two weights files is four
 * cells, each its own series and verdict.  Over fake-engine releases
 * whose prefill gets dearer from 1.0.2 in proportion to the weights'
 * size (+100% on the 1 MiB file, +0.1% on the 1 KiB one), a bisect of
 * the matrix names 1.0.2 on the two cells of the large file and no
 * regression, with its power, on the two of the small one, in every
 * format; the configuration refuses a list that names no section.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "check_cli.h"
#include "check_json.h"

static const char *ctl, *build;
static char ctl_conf[CLI_CTL_CONF_MAX];	/* bisectctl -c m.conf */

static const char *const cells[] = { "fleet/m1/small", "fleet/m1/big",
	"fleet/m2/small", "fleet/m2/big" };

static void
write_config(void)
{
	char text[4096];

	check_write_pattern("small.bin", 1024);
	check_write_pattern("big.bin", 1 << 20);
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = m.db\n"
	    "\tcache = cache\n\tmax-busy = 100%%\n"
	    "[weights \"small\"]\n\tpath = small.bin\n"
	    "[weights \"big\"]\n\tpath = big.bin\n"
	    "[runner \"m1\"]\n\tkind = local\n"
	    "[runner \"m2\"]\n\tkind = local\n"
	    "[engine \"fleet\"]\n\tsource = dir:%s/tests/releases\n"
	    "\tasset = fleet-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 64,256\n\tgen = 16\n"
	    "\ttimeout = 1m\n"
	    "\trunner = m1, m2\n\tweights = small, big\n", build);
	check_write_file("m.conf", text);
}

/* The four cells are engines of their own, in runner then weights order;
 * the matrix's name is none, and a command of one engine says so. */
static void
test_cells(void)
{
	json_t *cf, *engines;
	char cmd[CLI_CTL_CONF_MAX + 64], *out = NULL;

	CHECK_INT(check_ctl_json(ctl_conf, "--format json check-config", 0,
	    &cf), 0);
	engines = json_object_get(cf, "engines");
	CHECK_INT(json_array_size(engines), 4);
	for (size_t i = 0; i < 4 && i < json_array_size(engines); i++) {
		json_t *g = json_array_get(engines, i);

		CHECK_STR(json_string_value(json_object_get(g, "name")),
		    cells[i]);
		CHECK_STR(json_string_value(json_object_get(g, "runner")),
		    i < 2 ? "m1" : "m2");
		CHECK_STR(json_string_value(json_object_get(g, "weights")),
		    i % 2 ? "big" : "small");
		CHECK_STR(json_string_value(json_object_get(g, "matrix")),
		    "fleet");
	}
	json_decref(cf);
	snprintf(cmd, sizeof(cmd), "%s bench fleet 1.0.0 2>&1", ctl_conf);
	CHECK_INT(check_run(cmd, &out), 2);
	CHECK_CONTAINS(out, "'fleet' is a matrix of 4 cells");
	CHECK_CONTAINS(out, "fleet/m2/big");
	free(out);
}

/* A list naming no section, or one name twice: the key, its line, the
 * name. */
static void
test_refused(void)
{
	static const struct {
		const char *line, *want;
	} rows[] = {
		{ "\tweights = small, large\n",
		    "m2.conf:7: engine.fleet.weights: no [weights \"large\"] "
		    "section" },
		{ "\trunner = m1, m1\n",
		    "m2.conf:7: engine.fleet.runner: 'm1' listed twice" },
		{ "\trunner = m1,\n",
		    "m2.conf:7: engine.fleet.runner: expected NAME or NAME, "
		    "NAME, ..., got 'm1,'" },
		{ "\trunner = m1\n\tenv = CLASS=x\n",
		    "m2.conf:8: engine.fleet.env: CLASS is set by [runner "
		    "\"m1\"] too; set it in one of them" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char text[1024], cmd[PATH_MAX + 64], *out = NULL;
		const char *p;

		snprintf(text, sizeof(text), "[weights \"small\"]\n"
		    "\tpath = small.bin\n[runner \"m1\"]\n\tenv = CLASS=m1\n"
		    "[engine \"fleet\"]\n\tsource = dir:/nonexistent\n%s"
		    "\tcommand = {bin}/x\n", rows[i].line);
		check_write_file("m2.conf", text);
		snprintf(cmd, sizeof(cmd), "%s -c m2.conf check-config 2>&1",
		    ctl);
		CHECK_INT(check_run(cmd, &out), 2);
		if (out == NULL || strstr(out, rows[i].want) == NULL)
			fprintf(stderr, "row %zu: wanted '%s' in:\n%s\n", i,
			    rows[i].want, out ? out : "");
		CHECK_CONTAINS(out, rows[i].want);
		/* Once, though each of a matrix's cells has the problem. */
		CHECK(out == NULL || (p = strstr(out, rows[i].want)) == NULL ||
		    strstr(p + 1, rows[i].want) == NULL);
		free(out);
	}
}

static const json_t *
cell_of(const json_t *mx, const char *name)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(mx, "cells"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "cell")),
		    name) == 0)
			return c;
	return NULL;
}

/* The large file's cells regressed at 1.0.2 by about +100%; the small
 * one's did not, and say what they would have seen. */
static void
check_json_table(const json_t *mx)
{
	CHECK_STR(json_string_value(json_object_get(mx, "matrix")), "fleet");
	CHECK_STR(json_string_value(json_object_get(mx, "range")),
	    "1.0.0..1.0.3");
	CHECK_INT(json_array_size(json_object_get(mx, "cells")), 4);
	CHECK_INT(json_array_size(json_object_get(mx, "regressed")), 2);
	CHECK_INT(json_array_size(json_object_get(mx, "unchanged")), 2);
	for (size_t i = 0; i < 4; i++) {
		const json_t *c = cell_of(mx, cells[i]);
		double ch = json_real_value(json_object_get(c, "change"));

		CHECK(c != NULL);
		CHECK_STR(json_string_value(json_object_get(c, "weights")),
		    i % 2 ? "big" : "small");
		if (i % 2) {
			CHECK_STR(json_string_value(json_object_get(c,
			    "status")), "regression");
			CHECK_STR(json_string_value(json_object_get(c,
			    "first_bad")), "1.0.2");
			/* The kind is the cell's own verdict's (test_verdict
			 * pins its rules); never a fixed overhead alone. */
			CHECK(json_is_string(json_object_get(c, "kind")) &&
			    strcmp(json_string_value(json_object_get(c,
			    "kind")), "fixed") != 0);
			/* +40 us on 40 a token: the per-token cost doubles. */
			CHECK(ch > 0.80 && ch < 1.20);
			CHECK(json_real_value(json_array_get(json_object_get(c,
			    "change_ci"), 0)) > 0.5);
			CHECK_INT(json_integer_value(json_object_get(c,
			    "exit_code")), 3);
		} else {
			double p = json_real_value(json_object_get(c,
			    "detectable_change"));

			CHECK_STR(json_string_value(json_object_get(c,
			    "status")), "no-regression");
			CHECK(json_object_get(c, "first_bad") != NULL &&
			    json_is_null(json_object_get(c, "first_bad")));
			/* A number, never a zero for none. */
			CHECK(p > 0.01 && p < 0.50);
			CHECK(json_integer_value(json_object_get(c,
			    "runs_per_release")) >= 5);
		}
	}
}

#define GRID "//*[local-name()=\"table\" and @class=\"grid\"]"

static void
test_bisect(void)
{
	json_t *mx;
	char *out = NULL, *xp;
	FILE *f;

	CHECK_INT(check_ctl_run(ctl_conf, "bisect --now fleet 1.0.0..1.0.3",
	    &out), 3);
	CHECK_CONTAINS(out, "fleet 1.0.0..1.0.3: 4 cells, metric per-token, "
	    "threshold 20%");
	CHECK_CONTAINS(out, "fleet/m1/big: regressed at 1.0.2 (");
	CHECK_CONTAINS(out, "fleet/m2/big: regressed at 1.0.2 (");
	CHECK_CONTAINS(out, "fleet/m1/small: no regression (within noise, "
	    "would have seen ");
	CHECK_CONTAINS(out, "fleet/m2/small: no regression (within noise, "
	    "would have seen ");
	free(out);

	/* The report reads the same from the store, in every format. */
	CHECK_INT(check_ctl_json(ctl_conf, "--format json report fleet "
	    "1.0.0..1.0.3", 0, &mx), 3);
	check_json_table(mx);
	json_decref(mx);
	CHECK_INT(check_ctl_run(ctl_conf, "--format csv report fleet "
	    "1.0.0..1.0.3", &out), 3);
	CHECK_CONTAINS(out, "cell,runner,weights,verdict,first_bad,last_good,"
	    "kind,change,change_lo,change_hi,detectable_change,"
	    "runs_per_release,reason\n");
	CHECK_CONTAINS(out, "\"fleet/m2/big\",\"m2\",\"big\",\"regression\","
	    "\"1.0.2\",\"1.0.1\",\"");
	CHECK_CONTAINS(out, "\"fleet/m1/small\",\"m1\",\"small\","
	    "\"no-regression\",\"\",\"\",\"\",");
	CHECK_INT(check_count_lines(out), 5);
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "--format markdown report fleet "
	    "1.0.0..1.0.3", &out), 3);
	CHECK_CONTAINS(out, "| fleet/m1/small | m1 | small | no-regression "
	    "| - | - |");
	CHECK_CONTAINS(out, "- fleet/m1/big: regressed at 1.0.2");
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "--format html report fleet "
	    "1.0.0..1.0.3", &out), 3);
	if ((f = fopen("matrix.html", "w")) != NULL) {
		fputs(out ? out : "", f);
		fclose(f);
	}
	free(out);
	/* A grid: a row per runner, a column per weights file. */
	xp = check_xpath("matrix.html", "count(" GRID "/*[local-name()=\"tr\"])");
	CHECK_STR(xp, "3");
	free(xp);
	xp = check_xpath("matrix.html", "string(" GRID "/*[local-name()=\"tr\"]"
	    "[3]/*[local-name()=\"td\"][2]/@class)");
	CHECK_STR(xp, "regression");
	free(xp);
	xp = check_xpath("matrix.html", "string(" GRID "/*[local-name()=\"tr\"]"
	    "[2]/*[local-name()=\"td\"][1]/@class)");
	CHECK_STR(xp, "no-regression");
	free(xp);

	/* One cell alone is an engine's report. */
	CHECK_INT(check_ctl_json(ctl_conf, "--format json report fleet/m1/big "
	    "1.0.0..1.0.3", 0, &mx), 3);
	CHECK_STR(json_string_value(json_object_get(json_object_get(mx,
	    "verdict"), "first_bad")), "1.0.2");
	json_decref(mx);
}

int
main(void)
{
	cli_open("matrix", "m.conf", write_config, &ctl, NULL, &build,
	    ctl_conf);
	CHECK_CASE(test_cells);
	CHECK_CASE(test_refused);
	CHECK_CASE(test_bisect);
	return check_done();
}
