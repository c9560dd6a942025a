/*
 * test_verdict.c: one verdict for one store.  A bisect over the demo's
 * releases in which every run of 0.2.3 crashes: the daemon's job,
 * `bisectctl report` and `bisectctl bisect --now` on the store it left
 * give the same status, boundary, candidates and exit code, and the
 * crashing release is among the candidates, as `git bisect skip` names
 * it.  Also: a report with no samples of an end exits 1 and says so,
 * and stored samples are reused within one measurement definition only.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bisectd/measure/bench.h"
#include "check.h"
#include "check_json.h"
#include "common/err.h"
#include "common/strv.h"
#include "config/conf.h"
#include "store/store.h"

static const char *ctl, *daemon_bin, *build;

/* threads: the command's -t, a change of the command that measures
 * the same thing. */
static void
write_config(const char *name, const char *db, int threads)
{
	char text[4096];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s\n\tcache = cache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:rel\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t %d -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n"
	    "\ttimeout = 1m\n", db, build, threads);
	check_write_file(name, text);
}

/* The verdict's status, boundary and candidates as one line. */
static char *
verdict_line(json_t *v)
{
	char *cand = json_dumps(json_object_get(v, "candidates"),
	    JSON_COMPACT);
	char *line = malloc(1024);
	const char *fb = json_string_value(json_object_get(v, "first_bad"));
	const char *lg = json_string_value(json_object_get(v, "last_good"));

	snprintf(line, 1024, "%s last_good=%s first_bad=%s candidates=%s",
	    json_string_value(json_object_get(v, "status")), lg ? lg : "-",
	    fb ? fb : "-", cand ? cand : "-");
	free(cand);
	return line;
}

static int
job_done(struct store *s, int64_t id, struct store_job *j)
{
	struct err e = ERR_INIT;

	if (store_job_get(s, id, j, &e) != 0)
		return 0;
	if (strcmp(j->state, "queued") == 0 ||
	    strcmp(j->state, "running") == 0) {
		store_job_release(j);
		return 0;
	}
	return 1;
}

static void
test_crash_one_verdict(void)
{
	static const char *const again[] = {
	    "-c v.conf report basert 0.2.0..0.2.6 --format json",
	    "-c v.conf bisect --now basert 0.2.0..0.2.6 --format json",
	};
	char cmd[4096], *daemon_line = NULL, *line;
	struct store *s = NULL;
	struct store_job j;
	struct err e = ERR_INIT;
	json_t *rep, *v;
	pid_t pid;
	int done = 0;

	snprintf(cmd, sizeof(cmd), "mkdir -p rel && for v in 0.2.0 0.2.1 "
	    "0.2.2 0.2.4 0.2.5 0.2.6; do ln -sf %s/tests/demo-cpu/"
	    "basert-$v.tar.gz rel/; done && ln -sf %s/tests/releases/"
	    "crash-1.0.0.tar.gz rel/basert-0.2.3.tar.gz", build, build);
	CHECK_INT(check_run(cmd, NULL), 0);
	write_config("v.conf", "v.db", 1);

	/* The daemon's job. */
	snprintf(cmd, sizeof(cmd), "%s -c v.conf bisect basert 0.2.0..0.2.6 "
	    ">/dev/null", ctl);
	CHECK_INT(check_run(cmd, NULL), 0);
	pid = check_start_daemon(daemon_bin, "v.conf", "daemon.log");
	CHECK(store_open("v.db", &s, &e) == 0);
	for (int i = 0; s && i < 6000 && !(done = job_done(s, 1, &j)); i++)
		check_sleep_ms(100);
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 60), 0);
	CHECK(done);
	if (!done) {
		char *log = check_read_file("daemon.log");

		fprintf(stderr, "daemon.log:\n%s\n", log ? log : "");
		free(log);
		store_close(s);
		return;
	}
	CHECK_STR(j.state, "done");
	CHECK_INT(j.exit_code, 3);
	v = json_loads(j.result ? j.result : "", 0, NULL);
	daemon_line = verdict_line(v);
	CHECK_STR(daemon_line, "regression last_good=0.2.2 first_bad=0.2.4 "
	    "candidates=[\"0.2.3\",\"0.2.4\"]");
	json_decref(v);
	store_job_release(&j);
	store_close(s);

	/* report, from the store alone, and bisect --now on the same store
	 * (nothing left to measure): the daemon's verdict. */
	for (size_t k = 0; k < sizeof(again) / sizeof(again[0]); k++) {
		int before = check_failures;

		CHECK_INT(check_ctl_json(ctl, again[k], 1, &rep), 3);
		line = verdict_line(json_object_get(rep, "verdict"));
		CHECK_STR(line, daemon_line);
		free(line);
		if (k == 0) {
			json_t *r = check_release(rep, "0.2.3");

			CHECK_STR(json_string_value(json_object_get(r,
			    "status")), "skipped");
			CHECK(json_array_size(json_object_get(r,
			    "failures")) > 0);
		}
		json_decref(rep);
		if (check_failures > before)
			fprintf(stderr, "  in: %s\n", again[k]);
	}

	/* A release whose runs all failed is not "measured". */
	CHECK_INT(check_ctl_json(ctl, "-c v.conf versions basert --format json",
	    1, &rep), 0);
	{
		size_t i;
		json_t *r;

		json_array_foreach(rep, i, r)
			if (strcmp(json_string_value(json_object_get(r,
			    "version")), "0.2.3") == 0)
				CHECK(strcmp(json_string_value(json_object_get(
				    r, "state")), "measured") != 0);
	}
	json_decref(rep);
	free(daemon_line);
}

/* Nothing stored for the range's good end: exit 1, and the reason. */
static void
test_no_samples(void)
{
	json_t *rep;
	char *err;

	CHECK_INT(check_ctl_json(ctl, "-c v.conf report basert 0.2.1..0.2.6 "
	    "--format json", 1, &rep), 1);
	CHECK_STR(json_string_value(json_object_get(json_object_get(rep,
	    "verdict"), "status")), "unknown");
	err = check_read_file("stderr.txt");
	CHECK_CONTAINS(err, "no samples of basert 0.2.1");
	free(err);
	json_decref(rep);
}

/* First runs (not warm-ups, not a boundary's confirmation) of 0.2.2's
 * pp512 cell under each definition: counts[i] for the i-th definition
 * seen; returns how many definitions. */
static int
runs_by_definition(const char *conf, int counts[4])
{
	char args[256], seen[4][65];
	json_t *a, *r;
	size_t i;
	int n = 0;

	memset(counts, 0, 4 * sizeof(*counts));
	snprintf(args, sizeof(args), "-c %s runs basert 0.2.2 --format json",
	    conf);
	if (check_ctl_json(ctl, args, 1, &a) != 0)
		return -1;
	json_array_foreach(a, i, r) {
		const char *key = json_string_value(json_object_get(r,
		    "definition"));
		int k;

		if (key == NULL || json_integer_value(json_object_get(
		    json_object_get(r, "cell"), "prompt")) != 512 ||
		    json_is_true(json_object_get(r, "warmup")) ||
		    json_is_true(json_object_get(r, "confirm")))
			continue;
		for (k = 0; k < n && strcmp(seen[k], key) != 0; k++)
			;
		if (k == n && n < 4)
			snprintf(seen[n++], sizeof(seen[0]), "%s", key);
		if (k < 4)
			counts[k]++;
	}
	json_decref(a);
	return n;
}

/*
 * Samples are reused within one measurement definition only: the same
 * bisect again measures nothing, the same bisect after a change of the
 * command measures both releases afresh.
 */
static void
test_definition_reuse(void)
{
	int before[4], after[4], code;
	json_t *rep;

	write_config("d.conf", "d.db", 1);
	code = check_ctl_json(ctl, "-c d.conf bisect --now basert 0.2.1..0.2.2 "
	    "--format json", 1, &rep);
	CHECK_INT(code, 0);	/* equal, and timed by the CPU clock */
	json_decref(rep);
	CHECK_INT(runs_by_definition("d.conf", before), 1);
	CHECK(before[0] >= 5);

	/* Unchanged: everything is reused, not one run more. */
	CHECK_INT(check_ctl_json(ctl, "-c d.conf bisect --now basert "
	    "0.2.1..0.2.2 --format json", 1, &rep), code);
	json_decref(rep);
	CHECK_INT(runs_by_definition("d.conf", after), 1);
	CHECK_INT(after[0], before[0]);

	/* The command changed: a new definition, measured from scratch. */
	write_config("d.conf", "d.db", 2);
	code = check_ctl_json(ctl, "-c d.conf bisect --now basert 0.2.1..0.2.2 "
	    "--format json", 1, &rep);
	CHECK_INT(code, 0);
	json_decref(rep);
	CHECK_INT(runs_by_definition("d.conf", after), 2);
	CHECK_INT(after[0], before[0]);
	CHECK(after[1] >= 5);
	/* The report counts the new definition's samples alone. */
	CHECK(check_ctl_json(ctl, "-c d.conf report basert 0.2.1..0.2.2 "
	    "--format json", 1, &rep) == code);
	{
		size_t i;
		json_t *r;

		json_array_foreach(json_object_get(rep, "releases"), i, r)
			if (strcmp(json_string_value(json_object_get(r,
			    "version")), "0.2.2") == 0)
				CHECK_INT(json_integer_value(json_object_get(
				    json_object_get(json_object_get(r, "pp"),
				    "512"), "n")), after[1]);
	}
	json_decref(rep);
}

/* The key of eng's definition of the pp512 cell (into key[65]). */
static const char *
key_of(const struct conf_engine *eng, const char *wsha, const char *hw,
    char key[65])
{
	struct bench_definition d;
	struct err e = ERR_INIT;

	snprintf(key, 65, "error: %s", "");
	if (bench_definition(eng, "pp", 512, 0, "", wsha, hw, &d, &e) == 0) {
		memcpy(key, d.key, 65);
		bench_definition_release(&d);
	} else
		fprintf(stderr, "bench_definition: %s\n", e.msg);
	return key;
}

/* What a measurement definition holds, and what it leaves out. */
static void
test_definition_keys(void)
{
	struct conf_engine eng, x;
	struct bench_definition d, r;
	struct err e = ERR_INIT;
	char base[65], k[65];

	memset(&eng, 0, sizeof(eng));
	eng.name = (char *)(uintptr_t)"e";
	eng.command = (char *)(uintptr_t)"{bin}/bin/e -m {weights} -p {prompt} "
	    "-v {version} -t {threads}";
	eng.parser = PARSER_LLAMA_BENCH;
	eng.mode = MODE_BENCH;
	eng.threads = 4;
	key_of(&eng, "w1", "hw1", base);
	CHECK_STR(key_of(&eng, "w1", "hw1", k), base);
	CHECK(bench_definition(&eng, "pp", 512, 0, "", "w1", "hw1", &d,
	    &e) == 0);
	/* The release's own path and version stay placeholders. */
	CHECK_CONTAINS(d.text, "\"{bin}/bin/e\"");
	CHECK_CONTAINS(d.text, "\"{version}\"");
	CHECK_CONTAINS(d.text, "\"512\"");
	CHECK_STR(d.clock, "engine");

	x = eng;
	x.command = (char *)(uintptr_t)"{bin}/bin/e -m {weights} -p {prompt} "
	    "-v {version} -t {threads} -r 5";
	CHECK(strcmp(key_of(&x, "w1", "hw1", k), base) != 0);
	x = eng;
	x.threads = 8;
	CHECK(strcmp(key_of(&x, "w1", "hw1", k), base) != 0);
	x = eng;
	x.parser = PARSER_WALL;
	CHECK(strcmp(key_of(&x, "w1", "hw1", k), base) != 0);
	/* Reparse with the wall parser lands on the wall definition. */
	CHECK(bench_definition_reparse(d.text, &x, &r, &e) == 0);
	CHECK_STR(r.key, k);
	CHECK_STR(r.clock, "wall");
	bench_definition_release(&r);
	x = eng;
	x.mode = MODE_SERVER;
	x.url = (char *)(uintptr_t)"http://127.0.0.1:1/v1/completions";
	CHECK(strcmp(key_of(&x, "w1", "hw1", k), base) != 0);
	CHECK(bench_definition(&x, "pp", 512, 0, "", "w1", "hw1", &r,
	    &e) == 0);
	CHECK_STR(r.clock, "ttft");	/* never the bench clock */
	bench_definition_release(&r);
	x = eng;
	memset(&x.env, 0, sizeof(x.env));
	strv_push(&x.env, "OMP_NUM_THREADS=1");
	CHECK(strcmp(key_of(&x, "w1", "hw1", k), base) != 0);
	strv_clear(&x.env);
	CHECK(strcmp(key_of(&eng, "w2", "hw1", k), base) != 0);
	CHECK(strcmp(key_of(&eng, "w1", "hw2", k), base) != 0);
	bench_definition_release(&d);
}

int
main(void)
{
	check_env(&ctl, &daemon_bin, &build);
	check_tmpdir("verdict");
	CHECK_CASE(test_definition_keys);
	CHECK_CASE(test_crash_one_verdict);
	CHECK_CASE(test_no_samples);
	CHECK_CASE(test_definition_reuse);
	return check_done();
}
