/*
 * test_slurm.c: measurements as Slurm jobs, on a real single-host cluster
 * that tests/slurm-cluster.sh starts in this test's folder: the demo's
 * bisect through a slurm runner reaches the local runner's verdict; a
 * job scancelled from outside is a typed failure and is resubmitted; a
 * bisect killed (kill -9) with its job in flight reattaches to it and
 * ingests it once; a result file that is cut short, altered, another
 * request's or ingested before is refused, the store unchanged.
 *
 * As root (CI) the cluster must come up; elsewhere the test skips (exit
 * 77) saying why.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "bisectd/jobs/remote.h"
#include "check.h"
#include "common/err.h"
#include "config/conf.h"
#include "store/store.h"

static const char *ctl, *build, *src;
static char cluster[4096];

static void
stop_cluster(void)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "sh %s/tests/slurm-cluster.sh stop %s",
	    src, cluster);
	check_run(cmd, NULL);
}

static void
write_config(const char *name, const char *db, int slurm)
{
	char text[4096];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s\n\tcache = cache-%s\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/demo/releases\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n"
	    "\ttimeout = 1m\n%s"
	    "[runner \"cluster\"]\n\tkind = slurm\n\tspool = spool\n"
	    "\tpartition = bench\n\ttime-limit = 10m\n",
	    db, db, build, build, slurm ? "\trunner = cluster\n" : "");
	check_write_file(name, text);
}

/* bisect --now as JSON: its status and first bad release. */
static int
bisect(const char *conf, const char *range, char *status, char *first_bad)
{
	char cmd[8192], *out = NULL;
	json_t *o, *v;
	int rc;

	snprintf(cmd, sizeof(cmd), "(%s -c %s --format json bisect --now "
	    "basert %s 2>>%s.log)", ctl, conf, range, conf);
	rc = check_run(cmd, &out);
	o = out ? json_loads(out, 0, NULL) : NULL;
	v = json_object_get(o, "verdict");
	snprintf(status, 32, "%s", json_string_value(json_object_get(v,
	    "status")) ? json_string_value(json_object_get(v, "status")) :
	    "none");
	snprintf(first_bad, 32, "%s", json_string_value(json_object_get(v,
	    "first_bad")) ? json_string_value(json_object_get(v,
	    "first_bad")) : "none");
	if (o == NULL)
		fprintf(stderr, "bisect %s: not JSON (rc %d): %.500s\n", conf,
		    rc, out ? out : "");
	json_decref(o);
	free(out);
	return rc;
}

static struct store *
open_store(const char *db)
{
	struct store *s = NULL;
	struct err e = ERR_INIT;

	if (store_open(db, &s, &e) < 0)
		fprintf(stderr, "%s\n", e.msg);
	return s;
}

static int
count_runs(struct store *s)
{
	struct store_release_list l;
	struct err e = ERR_INIT;
	int64_t engine;
	int n = 0;

	if (store_engine_find(s, "basert", &engine, &e) != 0 ||
	    store_release_list(s, engine, &l, &e) < 0)
		return -1;
	for (size_t i = 0; i < l.n; i++) {
		struct store_run_rows r;

		if (store_run_list(s, l.v[i].id, &r, &e) == 0) {
			n += (int)r.n;
			store_run_rows_release(&r);
		}
	}
	store_release_list_release(&l);
	return n;
}

/* The demo through Slurm and locally: the same verdict. */
static void
test_same_verdict(void)
{
	char st_s[32], fb_s[32], st_l[32], fb_l[32];
	struct store_slurm_jobs jobs;
	struct err e = ERR_INIT;
	struct store *s;
	int rc_s, rc_l;

	write_config("slurm.conf", "slurm.db", 1);
	write_config("local.conf", "local.db", 0);
	rc_s = bisect("slurm.conf", "0.2.0..0.2.6", st_s, fb_s);
	rc_l = bisect("local.conf", "0.2.0..0.2.6", st_l, fb_l);
	CHECK_INT(rc_s, 3);
	CHECK_INT(rc_l, 3);
	CHECK_STR(st_s, "regression");
	CHECK_STR(fb_s, "0.2.4");
	CHECK_STR(st_s, st_l);
	CHECK_STR(fb_s, fb_l);
	if ((s = open_store("slurm.db")) == NULL) {
		CHECK(0);
		return;
	}
	/* Every measurement was a job, each ingested once, on one node. */
	CHECK_INT(store_slurm_list(s, 0, 0, &jobs, &e), 0);
	CHECK(jobs.n >= 3);
	for (size_t i = 0; i < jobs.n; i++) {
		CHECK_STR(jobs.v[i].state, "ingested");
		CHECK(jobs.v[i].slurm_id > 0);
		CHECK_STR(jobs.v[i].node, jobs.v[0].node);
		CHECK_STR(jobs.v[i].hw_key, jobs.v[0].hw_key);
		/* pinned with --nodelist after the first */
		if (i > 0)
			CHECK_STR(jobs.v[i].pinned, jobs.v[0].node);
	}
	store_slurm_jobs_release(&jobs);
	store_close(s);
}

/* Copy a file, cut to len bytes (0: whole) or with byte at flip changed. */
static void
copy_file(const char *from, const char *to, size_t len, long flip)
{
	char *text = check_read_file(from);
	size_t n = text ? strlen(text) : 0;
	FILE *f;

	if (text == NULL)
		return;
	if (len && len < n)
		n = len;
	if (flip >= 0 && (size_t)flip < n)
		text[flip] = text[flip] == '1' ? '2' : '1';
	f = fopen(to, "w");
	if (f) {
		fwrite(text, 1, n, f);
		fclose(f);
	}
	free(text);
}

/*
 * Result files that must not enter the store: the same file again, a
 * copy under another request's id, one cut short, one altered.
 */
static void
test_refused(void)
{
	struct store_slurm_jobs jobs;
	struct store_slurm_job row;
	struct err e = ERR_INIT;
	struct conf *c = NULL;
	struct strv probs = STRV_INIT;
	struct store *s;
	char hw[65], id[REMOTE_ID_LEN + 1], *from, *to, wsha[65];
	char *w = NULL;
	int64_t wid;
	int before, rc;

	if (conf_load("slurm.conf", &c, &probs) < 0 ||
	    (s = open_store("slurm.db")) == NULL) {
		CHECK(0);
		strv_clear(&probs);
		conf_free(c);
		return;
	}
	CHECK_INT(store_slurm_list(s, 0, 0, &jobs, &e), 0);
	CHECK_INT(store_weights_latest(s, "demo", &w, &e), 0);
	snprintf(wsha, sizeof(wsha), "%s", w ? w : "");
	free(w);
	CHECK_INT(store_weights_ensure(s, "demo", wsha, 0, &wid, &e), 0);
	before = count_runs(s);
	CHECK(before > 0);
	if (jobs.n == 0) {
		CHECK(0);
		goto done;
	}
	/* Duplicated: ingested before. */
	rc = remote_ingest(c, &c->engines[0], s, c->runners[0].spool,
	    jobs.v[0].request, wid, wsha, hw, &e);
	CHECK_INT(rc, REMOTE_REFUSED);
	CHECK_CONTAINS(e.msg, "ingested before");
	/* Another request's file under a new id: a row for the same plan. */
	CHECK_INT(remote_new_id(id, &e), 0);
	memset(&row, 0, sizeof(row));
	row.request = id;
	row.plan = jobs.v[0].plan;
	row.engine = (char *)(uintptr_t)"basert";
	row.runner = (char *)(uintptr_t)"cluster";
	row.attempt = 1;
	CHECK_INT(store_slurm_add(s, &row, &row.id, &e), 0);
	CHECK_INT(store_slurm_submitted(s, row.id, 999999, &e), 0);
	from = remote_result_path(c->runners[0].spool, jobs.v[0].request);
	to = remote_result_path(c->runners[0].spool, id);
	copy_file(from, to, 0, -1);
	rc = remote_ingest(c, &c->engines[0], s, c->runners[0].spool, id, wid,
	    wsha, hw, &e);
	CHECK_INT(rc, REMOTE_REFUSED);
	CHECK_CONTAINS(e.msg, "answers request");
	/* Cut short. */
	copy_file(from, to, 200, -1);
	rc = remote_ingest(c, &c->engines[0], s, c->runners[0].spool, id, wid,
	    wsha, hw, &e);
	CHECK_INT(rc, REMOTE_REFUSED);
	CHECK_CONTAINS(e.msg, "truncated");
	/* Altered: one digit of the body changed. */
	copy_file(from, to, 0, 300);
	rc = remote_ingest(c, &c->engines[0], s, c->runners[0].spool, id, wid,
	    wsha, hw, &e);
	CHECK_INT(rc, REMOTE_REFUSED);
	CHECK_CONTAINS(e.msg, "does not match its checksum");
	CHECK_INT(count_runs(s), before);
	free(from);
	free(to);
done:
	store_slurm_jobs_release(&jobs);
	store_close(s);
	conf_free(c);
	strv_clear(&probs);
}

/* The Slurm id of a job the cluster runs now, or 0 after timeout_s. */
static long
running_job(double timeout_s)
{
	double t0 = check_now_s();

	while (check_now_s() - t0 < timeout_s) {
		char *out = NULL;
		long id = 0;

		check_run("squeue -h -t RUNNING -o %i", &out);
		if (out)
			id = atol(out);
		free(out);
		if (id > 0)
			return id;
		check_sleep_ms(100);
	}
	return 0;
}

static pid_t
bisect_bg(const char *conf, const char *range)
{
	pid_t pid = fork();

	if (pid == 0) {
		char log[256];

		snprintf(log, sizeof(log), "%s.log", conf);
		if (freopen(log, "a", stderr) == NULL ||
		    freopen("/dev/null", "w", stdout) == NULL)
			_exit(99);
		execl(ctl, ctl, "-c", conf, "bisect", "--now", "basert", range,
		    (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* scancel from outside: slurm-cancelled, then a new job finishes it. */
static void
test_scancel(void)
{
	char cmd[256], st[32], fb[32];
	struct store_slurm_jobs jobs;
	struct err e = ERR_INIT;
	struct store *s;
	pid_t pid;
	long id;
	int cancelled = 0, later_ok = 0;

	write_config("cancel.conf", "cancel.db", 1);
	pid = bisect_bg("cancel.conf", "0.2.3..0.2.4");
	id = running_job(120);
	CHECK(id > 0);
	snprintf(cmd, sizeof(cmd), "scancel %ld", id);
	CHECK_INT(check_run(cmd, NULL), 0);
	CHECK_INT(check_wait_exit(pid, 600), 3);
	CHECK_INT(bisect("cancel.conf", "0.2.3..0.2.4", st, fb), 3);
	CHECK_STR(st, "regression");
	if ((s = open_store("cancel.db")) == NULL) {
		CHECK(0);
		return;
	}
	CHECK_INT(store_slurm_list(s, 0, 0, &jobs, &e), 0);
	for (size_t i = 0; i < jobs.n; i++) {
		if (jobs.v[i].slurm_id == id) {
			CHECK_STR(jobs.v[i].state, "failed");
			CHECK_STR(jobs.v[i].failure, "slurm-cancelled");
			cancelled = 1;
			/* the next job of the same plan is its resubmission */
			if (i + 1 < jobs.n) {
				CHECK_STR(jobs.v[i + 1].plan, jobs.v[i].plan);
				CHECK_INT(jobs.v[i + 1].attempt, 2);
				later_ok = strcmp(jobs.v[i + 1].state,
				    "ingested") == 0;
			}
		}
	}
	CHECK(cancelled);
	CHECK(later_ok);
	store_slurm_jobs_release(&jobs);
	store_close(s);
}

/* kill -9 while the job runs: run again, it is taken up and ingested once. */
static void
test_kill_reattach(void)
{
	char st[32], fb[32];
	struct store_slurm_jobs jobs;
	struct err e = ERR_INIT;
	struct store *s;
	pid_t pid;
	long id;
	int seen = 0;

	write_config("kill.conf", "kill.db", 1);
	pid = bisect_bg("kill.conf", "0.2.3..0.2.4");
	id = running_job(120);
	CHECK(id > 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK_INT(bisect("kill.conf", "0.2.3..0.2.4", st, fb), 3);
	CHECK_STR(st, "regression");
	if ((s = open_store("kill.db")) == NULL) {
		CHECK(0);
		return;
	}
	CHECK_INT(store_slurm_list(s, 0, 0, &jobs, &e), 0);
	for (size_t i = 0; i < jobs.n; i++) {
		CHECK_STR(jobs.v[i].state, "ingested");
		CHECK_INT(jobs.v[i].attempt, 1);
		seen += jobs.v[i].slurm_id == id;
	}
	/* Neither resubmitted nor lost: taken up, ingested once. */
	CHECK_INT(seen, 1);
	{
		char *log = check_read_file("kill.conf.log");

		CHECK_CONTAINS(log, "taking up Slurm job");
		free(log);
	}
	store_slurm_jobs_release(&jobs);
	store_close(s);
}

/* bisectctl cancel of the daemon's running bisect scancels its job. */
static void
test_daemon_cancel(void)
{
	char cmd[8192], *out = NULL;
	struct store_slurm_jobs jobs;
	struct store_job job;
	struct err e = ERR_INIT;
	struct store *s;
	pid_t pid;
	long id;
	int found = 0;

	write_config("d.conf", "d.db", 1);
	pid = check_start_daemon(getenv("BISECTD"), "d.conf", "d.log");
	snprintf(cmd, sizeof(cmd), "%s -c d.conf bisect basert 0.2.3..0.2.4",
	    ctl);
	CHECK_INT(check_run(cmd, NULL), 0);
	id = running_job(120);
	CHECK(id > 0);
	snprintf(cmd, sizeof(cmd), "%s -c d.conf cancel 1", ctl);
	CHECK_INT(check_run(cmd, &out), 0);
	CHECK_CONTAINS(out, "cancelling");
	free(out);
	if ((s = open_store("d.db")) == NULL) {
		CHECK(0);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	memset(&job, 0, sizeof(job));
	for (int i = 0; i < 600; i++) {
		store_job_release(&job);
		if (store_job_get(s, 1, &job, &e) != 0 ||
		    strcmp(job.state, "running") != 0)
			break;
		check_sleep_ms(100);
	}
	CHECK_STR(job.state, "cancelled");
	store_job_release(&job);
	CHECK_INT(store_slurm_list(s, 1, 0, &jobs, &e), 0);
	for (size_t i = 0; i < jobs.n; i++)
		if (jobs.v[i].slurm_id == id) {
			found = 1;
			CHECK_STR(jobs.v[i].failure, "slurm-cancelled");
		}
	CHECK(found);
	store_slurm_jobs_release(&jobs);
	/* and nothing was resubmitted after the cancel */
	CHECK_INT(store_slurm_list(s, 1, 1, &jobs, &e), 0);
	CHECK_INT(jobs.n, 0);
	store_slurm_jobs_release(&jobs);
	store_close(s);
	{
		char *log = check_read_file("d.log");

		CHECK_CONTAINS(log, "scancel of 1 Slurm job");
		free(log);
	}
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 60), 0);
}

int
main(void)
{
	const char *dir = check_tmpdir("slurm");
	char cmd[8192], *out = NULL, *conf;
	int rc;

	ctl = getenv("BISECTCTL");
	build = getenv("BISECTD_BUILD_DIR");
	src = getenv("BISECTD_SOURCE_DIR");
	if (ctl == NULL || build == NULL || src == NULL) {
		fprintf(stderr, "BISECTCTL, BISECTD_BUILD_DIR and "
		    "BISECTD_SOURCE_DIR must be set\n");
		return 99;
	}
	snprintf(cluster, sizeof(cluster), "%s/cluster", dir);
	snprintf(cmd, sizeof(cmd), "sh %s/tests/slurm-cluster.sh start %s",
	    src, cluster);
	rc = check_run(cmd, &out);
	if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77 && geteuid() != 0) {
		printf("SKIP: no Slurm cluster here: %s", out ? out : "");
		free(out);
		return 77;
	}
	if (rc != 0 || out == NULL || (conf = strstr(out, "SLURM_CONF=")) ==
	    NULL) {
		fprintf(stderr, "the test cluster did not start: %s\n",
		    out ? out : "");
		free(out);
		stop_cluster();
		return 1;
	}
	atexit(stop_cluster);
	conf[strcspn(conf, "\n")] = '\0';
	setenv("SLURM_CONF", conf + strlen("SLURM_CONF="), 1);
	free(out);
	test_same_verdict();
	test_refused();
	test_scancel();
	test_kill_reattach();
	test_daemon_cancel();
	/* Before check_done() removes the folder with the daemons' pid
	 * files; the atexit() one is for an early exit. */
	stop_cluster();
	return check_done();
}
