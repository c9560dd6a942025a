/*
 * test_ablate_e2e.c: bisectctl ablate on fake-engine releases, end to
 * end: a build whose switches work (the control confirmed, the switches
 * ranked, a switch that does nothing reported as such) and one whose
 * switches are ignored (inert, nothing ranked); every report format; a
 * switch's env only in its own runs; and the daemon's job.
 *
 * Both builds: 2 ms + 40 us per prompt token of work, of which "moe" is
 * 28 us per token (70% at 256 tokens: the control) and "attn" 8 us per
 * token and 1 ms fixed; "rope" names no component of the engine.
 */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "check_cli.h"
#include "check_json.h"

static const char *ctl, *build;
static char ctl_conf[CLI_CTL_CONF_MAX];	/* bisectctl -c a.conf */
static json_int_t off_first;	/* the --now ablation of off 1.0.0 */
static char rope_effect[16];	/* what the runs made of the no-op switch */

static void
write_config(void)
{
	char text[8192];
	static const char *const engines[] = { "on", "off" };
	size_t len;

	len = check_demo_head(text, sizeof(text), "a.db", build);
	for (int i = 0; i < 2; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
		    "[engine \"%s\"]\n\tsource = dir:%s/tests/releases\n"
		    "\tasset = ablate-%s-{version}.tar.gz\n"
		    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
		    "-n {gen} -t 1 -r 1 -o json\n"
		    "\tenv = FAKE_ENGINE_PRINT_ENV=1\n"
		    "\tparser = llama-bench\n\tprompts = 64,256\n\tgen = 16\n"
		    "\treps = 6\n\twarmup = 1\n\ttimeout = 1m\n"
		    "[ablation \"%s-moe\"]\n\tengine = %s\n"
		    "\tenv = FAKE_ENGINE_SKIP_MOE=1\n\tcontrol = yes\n"
		    "[ablation \"%s-attn\"]\n\tengine = %s\n"
		    "\targs = --skip attn\n"
		    "[ablation \"%s-rope\"]\n\tengine = %s\n"
		    "\tenv = FAKE_ENGINE_SKIP_ROPE=1\n", engines[i], build,
		    engines[i], engines[i], engines[i], engines[i], engines[i],
		    engines[i], engines[i]);
	/* A control whose every run fails: the engine refuses an option. */
	len += (size_t)snprintf(text + len, sizeof(text) - len,
	    "[engine \"bad\"]\n\tsource = dir:%s/tests/releases\n"
	    "\tasset = ablate-on-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 64,256\n\tgen = 16\n"
	    "\treps = 2\n\twarmup = 0\n\ttimeout = 1m\n"
	    "[ablation \"bad-ctl\"]\n\tengine = bad\n"
	    "\targs = --no-such-option\n\tcontrol = yes\n"
	    "[ablation \"bad-attn\"]\n\tengine = bad\n"
	    "\targs = --skip attn\n", build);
	check_write_file("a.conf", text);
}

static double
num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static double
ci(json_t *o, const char *key, size_t i)
{
	return json_number_value(json_array_get(json_object_get(o, key), i));
}

/* Switches that work: the control confirmed, each switch's removed time
 * per token and fixed inside its interval, rope without effect. */
static void
test_switches_work(void)
{
	json_t *rep, *moe, *attn, *rope;

	CHECK_INT(check_ctl_json(ctl_conf, "ablate --now on 1.0.0 --format "
	    "json", 0, &rep), 0);
	if (rep == NULL)
		return;
	CHECK_STR(json_string_value(json_object_get(rep, "status")), "ranked");
	CHECK_STR(json_string_value(json_object_get(rep, "control")), "on-moe");
	CHECK_INT(json_integer_value(json_object_get(rep, "tokens")), 256);
	moe = check_entry(rep, "switches", "name", "on-moe");
	attn = check_entry(rep, "switches", "name", "on-attn");
	rope = check_entry(rep, "switches", "name", "on-rope");
	CHECK(moe && attn && rope);
	if (!moe || !attn || !rope) {
		json_decref(rep);
		return;
	}
	/* Report order: by rank, then the switch without effect. */
	CHECK(json_array_get(json_object_get(rep, "switches"), 0) == moe);
	CHECK(json_array_get(json_object_get(rep, "switches"), 2) == rope);
	CHECK_INT(json_integer_value(json_object_get(moe, "rank")), 1);
	CHECK_STR(json_string_value(json_object_get(moe, "effect")), "removes");
	/* 28 us per token of 42: 0.028 ms, 70% of the runtime at 256. */
	CHECK(ci(moe, "per_token_removed_ms_ci", 0) < 0.028 * 1.05 &&
	    ci(moe, "per_token_removed_ms_ci", 1) > 0.028 * 0.95);
	CHECK_NEAR(num(moe, "per_token_removed_ms"), 0.028, 0.004);
	CHECK_NEAR(num(moe, "runtime_removed_share"), 7168.0 / 12240, 0.05);
	CHECK_INT(json_integer_value(json_object_get(moe, "runs")), 6);
	CHECK_INT(json_integer_value(json_object_get(attn, "rank")), 2);
	CHECK_NEAR(num(attn, "per_token_removed_ms"), 0.008, 0.003);
	CHECK_NEAR(num(attn, "fixed_removed_ms"), 1.0, 0.5);
	/* rope removes nothing: its share stays near zero, and it is
	 * unranked with "no measurable effect" and what the runs could have
	 * seen.  Its 95% interval misses zero in about one run in twenty by
	 * chance; then it is ranked last, adding or removing a sliver. */
	snprintf(rope_effect, sizeof(rope_effect), "%s",
	    json_string_value(json_object_get(rope, "effect")) ?
	    json_string_value(json_object_get(rope, "effect")) : "");
	CHECK(fabs(num(rope, "runtime_removed_share")) < 0.05);
	if (strcmp(rope_effect, "none") == 0) {
		CHECK(json_is_null(json_object_get(rope, "rank")));
		CHECK(ci(rope, "runtime_removed_share_ci", 0) < 0 &&
		    ci(rope, "runtime_removed_share_ci", 1) > 0);
		CHECK(num(rope, "detectable_share") > 0 &&
		    num(rope, "detectable_share") < 0.2);
	} else {
		fprintf(stderr, "note: rope's interval missed zero: %s\n",
		    rope_effect);
		CHECK_INT(json_integer_value(json_object_get(rope, "rank")), 3);
		if (strcmp(rope_effect, "adds") == 0)
			CHECK(ci(rope, "runtime_removed_share_ci", 1) < 0);
		else {
			CHECK_STR(rope_effect, "removes");
			CHECK(ci(rope, "runtime_removed_share_ci", 0) > 0);
		}
	}
	/* A switch's env by its name only. */
	CHECK_STR(json_string_value(json_array_get(json_object_get(moe, "env"),
	    0)), "FAKE_ENGINE_SKIP_MOE");
	json_decref(rep);
}

/* Switches this build ignores: the control moved nothing, so nothing is
 * ranked and no switch is said to have no effect. */
static void
test_switches_ignored(void)
{
	json_t *rep, *sw;
	size_t i;

	CHECK_INT(check_ctl_json(ctl_conf, "ablate --now off 1.0.0 --format "
	    "json", 0, &rep), 4);
	if (rep == NULL)
		return;
	CHECK_STR(json_string_value(json_object_get(rep, "status")), "inert");
	off_first = json_integer_value(json_object_get(rep, "ablation"));
	CHECK(off_first > 0);
	CHECK_CONTAINS(json_string_value(json_object_get(rep, "reason")),
	    "look inert in this binary (the switch did nothing");
	CHECK(!json_is_true(json_object_get(rep, "control_enough")));
	CHECK_INT(json_array_size(json_object_get(rep, "switches")), 3);
	json_array_foreach(json_object_get(rep, "switches"), i, sw) {
		CHECK(json_is_null(json_object_get(sw, "rank")));
		CHECK_STR(json_string_value(json_object_get(sw, "effect")),
		    "not-judged");
		CHECK(json_is_null(json_object_get(sw, "detectable_share")));
		CHECK(fabs(num(sw, "runtime_removed_share")) < 0.1);
	}
	json_decref(rep);
}

/* A control whose runs all fail: nothing is judged, and the report says
 * why in its own words, not only in 'bisectctl runs'. */
static void
test_failed_switch(void)
{
	json_t *rep, *sw;
	char *out = NULL;

	CHECK_INT(check_ctl_json(ctl_conf, "ablate --now bad 1.0.0 --format "
	    "json", 0, &rep), 1);
	if (rep == NULL)
		return;
	CHECK_STR(json_string_value(json_object_get(rep, "status")),
	    "no-control");
	CHECK_CONTAINS(json_string_value(json_object_get(rep, "reason")),
	    "the control 'bad-ctl' could not be measured (4 of its runs "
	    "failed; the last: exit");
	sw = check_entry(rep, "switches", "name", "bad-ctl");
	CHECK(sw != NULL);
	CHECK_STR(json_string_value(json_object_get(sw, "effect")),
	    "unmeasured");
	CHECK_INT(json_integer_value(json_object_get(sw, "failed_runs")), 4);
	CHECK_CONTAINS(json_string_value(json_object_get(sw, "failure")),
	    "no-such-option");
	sw = check_entry(rep, "switches", "name", "bad-attn");
	CHECK(sw != NULL && json_integer_value(json_object_get(sw,
	    "failed_runs")) == 0 && json_object_get(sw, "failure") == NULL);
	json_decref(rep);
	CHECK_INT(check_ctl_run(ctl_conf, "ablate --last bad 1.0.0", &out), 1);
	CHECK_CONTAINS(out, "not measured: 4 runs failed, the last: exit");
	free(out);
}

/* The stored reports in every format, from the store alone. */
static void
test_formats(void)
{
	char *out = NULL, row[96];

	CHECK_INT(check_ctl_run(ctl_conf, "ablate --last on 1.0.0", &out), 0);
	CHECK_CONTAINS(out, "verdict: ranked: the control 'on-moe' removed");
	CHECK_CONTAINS(out, "on-moe (control)");
	if (strcmp(rope_effect, "none") == 0)
		CHECK_CONTAINS(out, "no measurable effect (would have seen");
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "ablate --last on 1.0.0 --format "
	    "markdown", &out), 0);
	CHECK_CONTAINS(out, "## Ablation of on 1.0.0");
	CHECK_CONTAINS(out, "| 1 | on-moe (control) |");
	CHECK_CONTAINS(out, "| 2 | on-attn |");
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "ablate --last on 1.0.0 --format csv",
	    &out), 0);
	CHECK_CONTAINS(out, "engine,version,status,switch,control,effect,rank,");
	CHECK_CONTAINS(out, "\"on\",\"1.0.0\",ranked,\"on-moe\",1,removes,1,6,");
	snprintf(row, sizeof(row), "\"on\",\"1.0.0\",ranked,\"on-rope\",0,%s,%s,6,",
	    rope_effect, strcmp(rope_effect, "none") == 0 ? "" : "3");
	CHECK_CONTAINS(out, row);
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "ablate --last off 1.0.0", &out), 4);
	CHECK_CONTAINS(out, "verdict: inert:");
	CHECK(out && strstr(out, "no measurable effect") == NULL);
	free(out);
	CHECK_INT(check_ctl_run(ctl_conf, "ablate --last off 9.9.9", &out), 2);
	free(out);
}

#define TD "*[local-name()=\"td\"]"
#define ROW(name) "//*[local-name()=\"tr\" and " TD "[1]=\"" name "\"]/"

/*
 * The HTML page, well-formed XML with nothing that runs: the verdict,
 * per switch its effect and time removed with intervals, a bar per
 * switch; an inert build says so and judges no switch.
 */
static void
test_html(void)
{
	char *out = NULL, *x, row[96];

	CHECK_INT(check_ctl_run(ctl_conf, "ablate --last on 1.0.0 --format "
	    "html", &out), 0);
	check_write_file("on.html", out ? out : "");
	free(out);
	CHECK_INT(check_run("xmllint --noout on.html", NULL), 0);
	out = check_read_file("on.html");
	CHECK(out != NULL && strstr(out, "<script") == NULL);
	CHECK(out != NULL && strstr(out, "http://") == strstr(out,
	    "http://www.w3.org/"));
	free(out);
	check_xpath_is("on.html", "string(//*[@id=\"verdict\"]//*[contains("
	    "@class,\"status\")])", "ranked");
	check_xpath_is("on.html", "string(" ROW("on-moe (control)") TD "[2])",
	    "rank 1: removes time");
	/* The control's time per token and its interval, in ms. */
	x = check_xpath("on.html", "string(" ROW("on-moe (control)")
	    TD "[@class=\"per-token\"])");
	CHECK(x != NULL && atof(x) > 0.024 && atof(x) < 0.032 &&
	    strchr(x, '[') != NULL);
	free(x);
	x = check_xpath("on.html", "string(" ROW("on-attn") TD "[@class=\"fixed\"])");
	CHECK(x != NULL && atof(x) > 0.5 && atof(x) < 1.5 &&
	    strchr(x, '[') != NULL);
	free(x);
	x = check_xpath("on.html", "string(" ROW("on-rope") TD "[2])");
	if (strcmp(rope_effect, "none") == 0)
		CHECK_CONTAINS(x, "no measurable effect (the runs would have "
		    "seen ");
	else {
		snprintf(row, sizeof(row), "rank 3: %s time", rope_effect);
		CHECK_STR(x, row);
	}
	free(x);
	check_xpath_is("on.html", "count(//*[local-name()=\"svg\" and "
	    "@id=\"ablation-plot\"]//*[local-name()=\"rect\"])", "3");

	CHECK_INT(check_ctl_run(ctl_conf, "ablate --last off 1.0.0 --format "
	    "html", &out), 4);
	check_write_file("off.html", out ? out : "");
	free(out);
	CHECK_INT(check_run("xmllint --noout off.html", NULL), 0);
	x = check_xpath("off.html", "string(//*[@class=\"inert\"])");
	CHECK_CONTAINS(x, "The switches look inert in this binary");
	free(x);
	check_xpath_is("off.html", "count(//*[local-name()=\"td\" and "
	    "@class=\"effect\" and .=\"not judged: the control did not "
	    "work\"])", "3");
	out = check_read_file("off.html");
	CHECK(out != NULL && strstr(out, "no measurable effect") == NULL &&
	    strstr(out, "rank ") == NULL);
	free(out);
}

/* Each switch's env reaches its own runs only: the engine prints its
 * environment, and only the runs measured under a definition with the
 * switch's variable show it. */
static void
test_env_reaches_its_runs(void)
{
	json_t *runs, *r;
	size_t i;
	int with = 0, without = 0;

	CHECK_INT(check_ctl_json(ctl_conf, "runs on 1.0.0 --format json", 0,
	    &runs), 0);
	json_array_foreach(runs, i, r) {
		const char *def = json_string_value(json_object_get(r,
		    "definition_text"));
		const char *err = json_string_value(json_object_get(r,
		    "stderr_tail"));
		int mine = def && strstr(def, "FAKE_ENGINE_SKIP_MOE");

		CHECK(err != NULL && strstr(err, "FAKE_ENGINE_PRINT_ENV=1"));
		CHECK((err && strstr(err, "FAKE_ENGINE_SKIP_MOE")) == mine);
		with += mine;
		without += !mine;
	}
	/* 6 runs and a warm-up at 2 lengths for each of 4 variants. */
	CHECK_INT(with, 14);
	CHECK_INT(without, 42);
	json_decref(runs);
}

/*
 * The analysed runs (no warm-up, no failure) the runs listing of r.conf
 * holds for on 1.0.0; with most set, the most any one variant has at
 * one length (each variant has its own definition).
 */
static int
analysed_runs(int *most)
{
	char cmd[4096], *text = NULL;
	json_t *runs, *r, *per = json_object();
	const char *k;
	size_t i;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "%s -c r.conf runs on 1.0.0 --format json "
	    "2>/dev/null", ctl);
	(void)check_run(cmd, &text);
	runs = json_loads(text ? text : "", 0, NULL);
	free(text);
	json_array_foreach(runs, i, r) {
		char key[512];
		json_t *c;

		if (json_is_true(json_object_get(r, "warmup")) ||
		    !json_is_null(json_object_get(r, "failure")))
			continue;
		snprintf(key, sizeof(key), "%s@%lld",
		    json_string_value(json_object_get(r, "definition")),
		    (long long)json_integer_value(json_object_get(
		    json_object_get(r, "cell"), "prompt")));
		c = json_object_get(per, key);
		json_object_set_new(per, key, json_integer(c ?
		    json_integer_value(c) + 1 : 1));
		n++;
	}
	if (most) {
		*most = 0;
		json_object_foreach(per, k, r)
			if (json_integer_value(r) > *most)
				*most = (int)json_integer_value(r);
	}
	json_decref(per);
	json_decref(runs);
	return n;
}

/*
 * kill -9 in the middle of an ablation: run again, it takes the same
 * ablation up with the runs it stored and measures only what is
 * missing, no variant more than reps times at a length.  A switch whose
 * env changed meanwhile measures anew: its old runs are of another
 * definition, neither reused nor mixed with the new ones.
 */
static void
test_resume(void)
{
	json_t *rep;
	pid_t pid;
	int before = 0, after, most, old_rope, status;

	CHECK_INT(check_run("sed 's/a\\.db/r.db/' a.conf > r.conf", NULL),
	    0);
	if ((pid = fork()) == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execl(ctl, ctl, "-c", "r.conf", "ablate", "--now", "on",
		    "1.0.0", (char *)NULL);
		_exit(127);
	}
	/* A few runs of the 48 stored, and far from all. */
	for (int k = 0; k < 600 && before < 6; k++) {
		check_sleep_ms(100);
		before = analysed_runs(NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status));
	before = analysed_runs(NULL);
	CHECK(before >= 6 && before < 48);
	/* The rope switch, last of the four, gets one more env entry. */
	CHECK_INT(check_run("sed -i 's/\\(env = FAKE_ENGINE_SKIP_ROPE=1\\)/"
	    "\\1\\n\\tenv = ROPE_CHANGED=1/' r.conf", NULL), 0);

	CHECK_INT(check_ctl_json(ctl_conf, "ablate --now on 1.0.0 --format "
	    "json -c r.conf", 0, &rep), 0);
	CHECK_INT(json_integer_value(json_object_get(rep, "ablation")), 1);
	CHECK_STR(json_string_value(json_object_get(rep, "status")), "ranked");
	after = analysed_runs(&most);
	/* 6 at 2 lengths for 4 variants, and the rope switch's runs under
	 * its old definition: at least one, as the variants take turns. */
	old_rope = after - 48;
	CHECK(old_rope >= 1 && old_rope <= 12);
	CHECK_INT(json_integer_value(json_object_get(rep, "reused_runs")),
	    before - old_rope);
	CHECK_INT(most, 6);
	json_decref(rep);
	/* Finished, it is not taken up again: a new ablation. */
	CHECK_INT(check_ctl_json(ctl_conf, "ablate --now on 1.0.0 --format "
	    "json -c r.conf", 0, &rep), 0);
	CHECK_INT(json_integer_value(json_object_get(rep, "ablation")), 2);
	CHECK_INT(json_integer_value(json_object_get(rep, "reused_runs")), 0);
	json_decref(rep);
}

/* Queued, the daemon runs it as a job; --last shows what it stored. */
static void
test_daemon_job(const char *daemon_bin)
{
	char *out = NULL;
	pid_t pid;
	int rc = -1;

	CHECK_INT(check_ctl_run(ctl_conf, "ablate off 1.0.0", &out), 0);
	CHECK_CONTAINS(out, "queued ablation of off 1.0.0 as job");
	free(out);
	/* Done when --last shows an ablation newer than the --now one. */
	pid = check_start_daemon(daemon_bin, "a.conf", "daemon.log");
	for (int i = 0; i < 1200 && rc != 1; i++) {
		json_t *rep;
		char *text = NULL;

		check_sleep_ms(100);
		if (check_ctl_run(ctl_conf, "ablate --last off 1.0.0 --format "
		    "json", &text) != 4 || text == NULL) {
			free(text);
			continue;
		}
		rep = json_loads(text, 0, NULL);
		rc = json_integer_value(json_object_get(rep, "ablation")) >
		    off_first;
		json_decref(rep);
		free(text);
	}
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 60), 0);
	CHECK(rc == 1);
	CHECK_INT(check_ctl_run(ctl_conf, "ablate --last off 1.0.0 --format "
	    "json", &out), 4);
	CHECK_CONTAINS(out, "\"status\": \"inert\"");
	free(out);
}

int
main(void)
{
	const char *daemon_bin;

	cli_open("ablate_e2e", "a.conf", write_config, &ctl, &daemon_bin,
	    &build, ctl_conf);
	CHECK_CASE(test_switches_work);
	CHECK_CASE(test_switches_ignored);
	CHECK_CASE(test_formats);
	CHECK_CASE(test_failed_switch);
	CHECK_CASE(test_html);
	CHECK_CASE(test_resume);
	CHECK_CASE(test_env_reaches_its_runs);
	test_daemon_job(daemon_bin);
	return check_done();
}
