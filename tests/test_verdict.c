/*
 * test_verdict.c: one verdict for one store.  A bisect over the demo's
 * releases in which every run of 0.2.3 crashes: the daemon's job,
 * `bisectctl report` and `bisectctl bisect --now` on the store it left
 * give the same status, boundary, candidates and exit code, and the
 * crashing release is among the candidates, as `git bisect skip` names
 * it.  Also: a report with no samples of an end exits 1 and says so.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "common/err.h"
#include "store/store.h"

static const char *ctl, *daemon_bin, *build;

static void
write_config(const char *name, const char *db)
{
	char text[4096];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s\n\tcache = cache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:rel\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n"
	    "\ttimeout = 1m\n", db, build);
	check_write_file(name, text);
}

/* Run bisectctl; its stdout parsed as JSON into *out (NULL if not). */
static int
ctl_json(const char *args, json_t **out)
{
	char cmd[4096], *text = NULL;
	int rc;

	snprintf(cmd, sizeof(cmd), "(%s %s 2>stderr.txt)", ctl, args);
	rc = check_run(cmd, &text);
	*out = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	return rc;
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
	char cmd[4096], *daemon_line = NULL, *line;
	struct store *s = NULL;
	struct store_job j;
	struct err e = ERR_INIT;
	json_t *rep, *v;
	pid_t pid;
	int done = 0, code;

	snprintf(cmd, sizeof(cmd), "mkdir -p rel && for v in 0.2.0 0.2.1 "
	    "0.2.2 0.2.4 0.2.5 0.2.6; do ln -sf %s/demo/releases/"
	    "basert-$v.tar.gz rel/; done && ln -sf %s/tests/releases/"
	    "crash-1.0.0.tar.gz rel/basert-0.2.3.tar.gz", build, build);
	CHECK_INT(check_run(cmd, NULL), 0);
	write_config("v.conf", "v.db");

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

	/* report, from the store alone. */
	code = ctl_json("-c v.conf report basert 0.2.0..0.2.6 --format json",
	    &rep);
	CHECK_INT(code, 3);
	line = verdict_line(json_object_get(rep, "verdict"));
	CHECK_STR(line, daemon_line);
	free(line);
	{
		size_t i;
		json_t *r;

		json_array_foreach(json_object_get(rep, "releases"), i, r)
			if (strcmp(json_string_value(json_object_get(r,
			    "version")), "0.2.3") == 0) {
				CHECK_STR(json_string_value(json_object_get(r,
				    "status")), "skipped");
				CHECK(json_array_size(json_object_get(r,
				    "failures")) > 0);
			}
	}
	json_decref(rep);

	/* bisect --now on the same store: nothing left to measure. */
	code = ctl_json("-c v.conf bisect --now basert 0.2.0..0.2.6 "
	    "--format json", &rep);
	CHECK_INT(code, 3);
	line = verdict_line(json_object_get(rep, "verdict"));
	CHECK_STR(line, daemon_line);
	free(line);
	json_decref(rep);

	/* A release whose runs all failed is not "measured". */
	CHECK_INT(ctl_json("-c v.conf versions basert --format json", &rep), 0);
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

	CHECK_INT(ctl_json("-c v.conf report basert 0.2.1..0.2.6 "
	    "--format json", &rep), 1);
	CHECK_STR(json_string_value(json_object_get(json_object_get(rep,
	    "verdict"), "status")), "unknown");
	err = check_read_file("stderr.txt");
	CHECK_CONTAINS(err, "no samples of basert 0.2.1");
	free(err);
	json_decref(rep);
}

int
main(void)
{
	ctl = getenv("BISECTCTL");
	daemon_bin = getenv("BISECTD");
	build = getenv("BISECTD_BUILD_DIR");
	if (ctl == NULL || daemon_bin == NULL || build == NULL) {
		fprintf(stderr, "BISECTCTL, BISECTD and BISECTD_BUILD_DIR must "
		    "be set\n");
		return 1;
	}
	check_tmpdir("verdict");
	test_crash_one_verdict();
	test_no_samples();
	return check_done();
}
