/*
 * test_slurm.c: measurements as Slurm jobs, on a real single-host cluster
 * that tests/lib/slurm-cluster.sh starts in this test's folder: the demo's
 * bisect through a slurm runner reaches the local runner's verdict; a
 * job scancelled from outside is a typed failure and is resubmitted; a
 * bisect killed (kill -9) with its job in flight reattaches to it and
 * ingests it once; a result file that is cut short, altered, another
 * request's or ingested before is refused, the store unchanged.  The
 * daemon runs two bisects of two engines at once with max-jobs = 2, both
 * jobs in squeue together, and shows them in status and on its page; a
 * kill -9 with both in flight and a restart takes both up and ingests
 * each once; with max-jobs = 1 the bisects run one after the other.  A
 * bisect whose pinned node drains is re-anchored, and its report says so.
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

#include "bisectd/remote/remote.h"
#include "check.h"
#include "check_slurm.h"
#include "common/err.h"
#include "config/conf.h"
#include "store/store.h"

static const char *ctl, *daemon_bin, *build;
/* The demo's releases timed by the CPU clock (tests/demo-cpu), so that
 * the Slurm and the local bisect reach one verdict on a loaded machine. */
static void
write_config(const char *name, const char *db, int slurm, const char *gate)
{
	char text[8192], wait[4200] = "", cwd[4096];

	if (gate != NULL) {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			abort();
		snprintf(wait, sizeof(wait), " --wait-for %s/%s", cwd, gate);
	}
	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s\n\tcache = cache-%s\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/tests/demo-cpu\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json%s\n"
	    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n"
	    "\ttimeout = 1m\n%s"
	    "[runner \"cluster\"]\n\tkind = slurm\n\tspool = spool\n"
	    "\tpartition = bench\n\ttime-limit = 10m\n",
	    db, db, build, build, wait, slurm ? "\trunner = cluster\n" : "");
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
count_runs(struct store *s, const char *engine_name)
{
	struct store_release_list l;
	struct err e = ERR_INIT;
	int64_t engine;
	int n = 0;

	if (store_engine_find(s, engine_name, &engine, &e) != 0 ||
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

	write_config("slurm.conf", "slurm.db", 1, NULL);
	write_config("local.conf", "local.db", 0, NULL);
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
	before = count_runs(s, "basert");
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
	CHECK_INT(count_runs(s, "basert"), before);
	free(from);
	free(to);
done:
	store_slurm_jobs_release(&jobs);
	store_close(s);
	conf_free(c);
	strv_clear(&probs);
}

/*
 * The Slurm id of a job the cluster runs now, other than except, or 0
 * after timeout_s.
 */
static long
running_job(double timeout_s, long except)
{
	double t0 = check_now_s();

	while (check_now_s() - t0 < timeout_s) {
		char *out = NULL, *p, *end;
		long id = 0;

		check_run("squeue -h -t RUNNING -o %i", &out);
		for (p = out; p != NULL && *p != '\0'; p = end) {
			id = strtol(p, &end, 10);
			if (end == p)
				break;
			if (id > 0 && id != except)
				break;
			id = 0;
		}
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

	/* The engine waits for the gate: the job cannot finish first. */
	write_config("cancel.conf", "cancel.db", 1, "cancel.gate");
	pid = bisect_bg("cancel.conf", "0.2.3..0.2.4");
	id = running_job(120, 0);
	CHECK(id > 0);
	snprintf(cmd, sizeof(cmd), "scancel %ld", id);
	CHECK_INT(check_run(cmd, NULL), 0);
	/* its resubmission runs: the gate opens */
	CHECK(running_job(300, id) > 0);
	check_write_file("cancel.gate", "");
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

	write_config("kill.conf", "kill.db", 1, "kill.gate");
	pid = bisect_bg("kill.conf", "0.2.3..0.2.4");
	id = running_job(120, 0);
	CHECK(id > 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	check_write_file("kill.gate", "");
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

	write_config("d.conf", "d.db", 1, "d.gate");
	pid = check_start_daemon(daemon_bin, "d.conf", "d.log");
	snprintf(cmd, sizeof(cmd), "%s -c d.conf bisect basert 0.2.3..0.2.4",
	    ctl);
	CHECK_INT(check_run(cmd, NULL), 0);
	id = running_job(120, 0);
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

/*
 * A daemon's configuration: engines basert and second, both measured on
 * the cluster's runner, at most max_jobs at once; its HTTP page on a
 * free port.
 */
static void
write_pair_config(const char *name, const char *db, int max_jobs)
{
	char text[8192], eng[2][1024];
	const char *names[2] = { "basert", "second" };

	for (int i = 0; i < 2; i++)
		snprintf(eng[i], sizeof(eng[i]),
		    "[engine \"%s\"]\n\tsource = dir:%s/tests/demo-cpu\n"
		    "\tasset = basert-{version}.tar.gz\n"
		    "\tcommand = {bin}/bin/fake-engine -m {weights} "
		    "-p {prompt} -n {gen} -t 1 -r 1 -o json\n"
		    "\tparser = llama-bench\n\tprompts = 128,512\n"
		    "\tgen = 16\n\ttimeout = 1m\n\trunner = cluster\n",
		    names[i], build);
	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s\n\tcache = cache-%s\n"
	    "\tmax-busy = 100%%\n\thttp = 127.0.0.1:0\n"
	    "\tsocket = %s.sock\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n%s%s"
	    "[runner \"cluster\"]\n\tkind = slurm\n\tspool = spool-%s\n"
	    "\tpartition = bench\n\ttime-limit = 10m\n\tmax-jobs = %d\n",
	    db, db, db, build, eng[0], eng[1], db, max_jobs);
	check_write_file(name, text);
}

/* The test partition UP or DOWN: a job in a down one stays PENDING. */
static void
partition(const char *state)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "scontrol update PartitionName=bench "
	    "State=%s", state);
	CHECK_INT(check_run(cmd, NULL), 0);
}

/* Jobs in squeue, any state. */
static int
squeue_count(void)
{
	char *out = NULL;
	int n = 0;

	check_run("squeue -h -o %i", &out);
	for (const char *p = out; p && *p; p++)
		n += *p == '\n';
	free(out);
	return n;
}

/* Queue a bisect with the daemon of conf. */
static void
queue_bisect(const char *conf, const char *engine, const char *range)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "%s -c %s bisect %s %s >/dev/null "
	    "2>>%s.log", ctl, conf, engine, range, conf);
	CHECK_INT(check_run(cmd, NULL), 0);
}

/* The state of queue job id, into buf ("" when unknown). */
static const char *
job_state(struct store *s, int64_t id, char *buf, size_t len,
    struct store_job *out)
{
	struct store_job j;
	struct err e = ERR_INIT;

	buf[0] = '\0';
	if (store_job_get(s, id, &j, &e) != 0)
		return buf;
	snprintf(buf, len, "%s", j.state);
	if (out)
		*out = j;
	else
		store_job_release(&j);
	return buf;
}

/* Wait up to timeout_s for queue jobs 1 and 2 to end: 1 if they did. */
static int
wait_both(struct store *s, double timeout_s)
{
	double t0 = check_now_s();
	char a[32], b[32];

	while (check_now_s() - t0 < timeout_s) {
		job_state(s, 1, a, sizeof(a), NULL);
		job_state(s, 2, b, sizeof(b), NULL);
		if (strcmp(a, "queued") && strcmp(a, "running") && a[0] &&
		    strcmp(b, "queued") && strcmp(b, "running") && b[0])
			return 1;
		check_sleep_ms(200);
	}
	return 0;
}

/* The runs a result file holds, or -1. */
static int
result_runs(const char *spool, const char *request)
{
	char *path = remote_result_path(spool, request);
	char *text = path ? check_read_file(path) : NULL;
	json_t *o = text ? json_loads(text, JSON_DISABLE_EOF_CHECK, NULL) :
	    NULL;
	int n = o ? (int)json_array_size(json_object_get(o, "runs")) : -1;

	json_decref(o);
	free(text);
	free(path);
	return n;
}

/* Occurrences of needle in the file at path. */
static int
count_in_file(const char *path, const char *needle)
{
	char *text = check_read_file(path);
	int n = 0;

	for (const char *p = text; p && (p = strstr(p, needle)) != NULL;
	    p += strlen(needle))
		n++;
	free(text);
	return n;
}

/* GET path from the daemon's page into a malloced string, or NULL. */
static char *
http_get(int port, const char *path)
{
	char cmd[4096], *out = NULL;

	snprintf(cmd, sizeof(cmd), "curl -sS --max-time 120 "
	    "'http://127.0.0.1:%d%s'", port, path);
	if (check_run(cmd, &out) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* `bisectctl status`, as text or JSON, into a malloced string. */
static char *
status(const char *conf, int json)
{
	char cmd[8192], *out = NULL;

	snprintf(cmd, sizeof(cmd), "%s -c %s%s status 2>&1", ctl, conf,
	    json ? " --format json" : "");
	CHECK_INT(check_run(cmd, &out), 0);
	return out;
}

/*
 * Status while both jobs wait in squeue: bisectctl status (text and
 * JSON) and the daemon's page name each Slurm job with its state, and
 * the daemon runs both bisects.
 */
static void
check_status_pending(const char *conf, const char *log, long ids[2])
{
	char *text = status(conf, 0), *js = status(conf, 1), *page, *api,
	    id[32];
	json_t *o = js ? json_loads(js, 0, NULL) : NULL, *a, *x;
	int port = check_http_port(log), seen = 0;
	size_t i;

	a = json_object_get(o, "slurm_jobs");
	CHECK_INT(json_array_size(a), 2);
	json_array_foreach(a, i, x) {
		CHECK_STR(json_string_value(json_object_get(x, "state")),
		    "PENDING");
		CHECK(json_integer_value(json_object_get(x, "age_s")) >= 0);
		CHECK_STR(json_string_value(json_object_get(x, "runner")),
		    "cluster");
		for (int k = 0; k < 2; k++)
			seen += json_integer_value(json_object_get(x,
			    "slurm_id")) == ids[k];
	}
	CHECK_INT(seen, 2);
	/* Two bisects running at once, both on the runner. */
	a = json_object_get(json_object_get(o, "daemon"), "jobs");
	CHECK_INT(json_array_size(a), 2);
	json_array_foreach(a, i, x)
		CHECK_STR(json_string_value(json_object_get(x, "runner")),
		    "cluster");
	CHECK_CONTAINS(text, "slurm jobs:");
	CHECK_CONTAINS(text, "on Slurm runner cluster");
	page = http_get(port, "/");
	api = http_get(port, "/api/status");
	CHECK_CONTAINS(page, "<table id=\"slurm\">");
	for (int k = 0; k < 2; k++) {
		snprintf(id, sizeof(id), "%ld", ids[k]);
		CHECK_CONTAINS(text, id);
		snprintf(id, sizeof(id), "<tr><td>%ld</td>", ids[k]);
		CHECK_CONTAINS(page, id);
		snprintf(id, sizeof(id), "\"slurm_id\": %ld,", ids[k]);
		CHECK_CONTAINS(api, id);
	}
	CHECK_CONTAINS(page, "PENDING");
	CHECK_CONTAINS(page, "measured on Slurm runner cluster");
	json_decref(o);
	free(text);
	free(js);
	free(page);
	free(api);
}

/*
 * Two bisects of two engines through the daemon with max-jobs = 2: both
 * jobs are in squeue at once (the partition held down keeps them there).
 * kill -9 of the daemon with both in flight; after the restart both are
 * taken up, none resubmitted, and each result is ingested once: the
 * store holds exactly the runs of the results.  Status shows the jobs.
 */
static void
test_concurrent_kill(void)
{
	struct store_slurm_jobs jobs;
	struct err e = ERR_INIT;
	struct conf *c = NULL;
	struct strv probs = STRV_INIT;
	struct store *s;
	char buf[32], host[256], *text;
	long ids[2] = { 0, 0 };
	int both = 0, runs = 0, n;
	pid_t pid;

	write_pair_config("pair.conf", "pair.db", 2);
	partition("DOWN");
	pid = check_start_daemon(daemon_bin, "pair.conf", "pair.log");
	queue_bisect("pair.conf", "basert", "0.2.3..0.2.4");
	queue_bisect("pair.conf", "second", "0.2.3..0.2.4");
	for (int i = 0; i < 1200 && !both; i++) {
		both = squeue_count() == 2;
		if (!both)
			check_sleep_ms(100);
	}
	CHECK(both);
	if ((s = open_store("pair.db")) == NULL) {
		CHECK(0);
		partition("UP");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	CHECK_INT(store_slurm_list(s, 0, 1, &jobs, &e), 0);
	CHECK_INT(jobs.n, 2);
	for (size_t i = 0; i < jobs.n && i < 2; i++)
		ids[i] = (long)jobs.v[i].slurm_id;
	/* from the two queue jobs, the two engines */
	if (jobs.n == 2) {
		CHECK(jobs.v[0].job_id != jobs.v[1].job_id);
		CHECK(strcmp(jobs.v[0].engine, jobs.v[1].engine) != 0);
	}
	store_slurm_jobs_release(&jobs);
	check_status_pending("pair.conf", "pair.log", ids);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	partition("UP");
	pid = check_start_daemon(daemon_bin, "pair.conf", "pair2.log");
	CHECK(wait_both(s, 600));
	CHECK_STR(job_state(s, 1, buf, sizeof(buf), NULL), "done");
	CHECK_STR(job_state(s, 2, buf, sizeof(buf), NULL), "done");
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 60), 0);

	/* Both taken up, neither resubmitted, each ingested once. */
	CHECK_INT(count_in_file("pair2.log", "taking up Slurm job"), 2);
	CHECK_INT(conf_load("pair.conf", &c, &probs), 0);
	CHECK_INT(store_slurm_list(s, 0, 0, &jobs, &e), 0);
	for (size_t i = 0; i < jobs.n; i++) {
		int k = 0;

		CHECK_STR(jobs.v[i].state, "ingested");
		CHECK_INT(jobs.v[i].attempt, 1);
		for (size_t j = 0; j < jobs.n; j++)
			k += jobs.v[j].slurm_id == jobs.v[i].slurm_id;
		CHECK_INT(k, 1);
		if (c && (n = result_runs(c->runners[0].spool,
		    jobs.v[i].request)) > 0)
			runs += n;
		else
			CHECK(0);
	}
	for (int k = 0; k < 2; k++) {
		int found = 0;

		for (size_t i = 0; i < jobs.n; i++)
			found += jobs.v[i].slurm_id == ids[k];
		CHECK_INT(found, 1);
	}
	store_slurm_jobs_release(&jobs);
	CHECK(runs > 0);
	CHECK_INT(count_runs(s, "basert") + count_runs(s, "second"), runs);
	store_close(s);

	/* Once ended, status names the node each ran on. */
	gethostname(host, sizeof(host));
	host[strcspn(host, ".")] = '\0';
	text = status("pair.conf", 0);
	CHECK_CONTAINS(text, "ingested");
	CHECK_CONTAINS(text, host);
	free(text);
	text = status("pair.conf", 1);
	snprintf(buf, sizeof(buf), "\"node\": \"%.20s\"", host);
	CHECK_CONTAINS(text, buf);
	free(text);
	conf_free(c);
	strv_clear(&probs);
}

/*
 * max-jobs = 1: the second bisect starts only once the first ended, and
 * no two of their Slurm jobs are in flight at once.
 */
static void
test_one_at_a_time(void)
{
	struct store_slurm_jobs jobs;
	struct store_job j1, j2;
	struct err e = ERR_INIT;
	struct store *s;
	char buf[32];
	int most = 0, done = 0;
	pid_t pid;

	write_pair_config("one.conf", "one.db", 1);
	pid = check_start_daemon(daemon_bin, "one.conf", "one.log");
	queue_bisect("one.conf", "basert", "0.2.3..0.2.4");
	queue_bisect("one.conf", "second", "0.2.3..0.2.4");
	if ((s = open_store("one.db")) == NULL) {
		CHECK(0);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	for (double t0 = check_now_s(); !done && check_now_s() - t0 < 600;) {
		int n = squeue_count();

		if (n > most)
			most = n;
		done = wait_both(s, 0.2);
	}
	CHECK(done);
	CHECK_INT(most, 1);
	memset(&j1, 0, sizeof(j1));
	memset(&j2, 0, sizeof(j2));
	CHECK_STR(job_state(s, 1, buf, sizeof(buf), &j1), "done");
	CHECK_STR(job_state(s, 2, buf, sizeof(buf), &j2), "done");
	CHECK(j2.started >= j1.finished);
	CHECK_INT(store_slurm_list(s, 0, 0, &jobs, &e), 0);
	CHECK(jobs.n >= 2);
	/* every job of the second bisect after every one of the first */
	for (size_t a = 0; a < jobs.n; a++)
		for (size_t b = 0; b < jobs.n; b++)
			if (jobs.v[a].job_id == 1 && jobs.v[b].job_id == 2)
				CHECK(jobs.v[b].submitted >=
				    jobs.v[a].ingested);
	store_slurm_jobs_release(&jobs);
	store_job_release(&j1);
	store_job_release(&j2);
	store_close(s);
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 60), 0);
}

/* This host's short name: the test cluster's one node. */
static void
node_name(char host[256])
{
	gethostname(host, 256);
	host[255] = '\0';
	host[strcspn(host, ".")] = '\0';
}

/* A row of the store's Slurm jobs that failed with slurm-node-fail, its
 * detail into why; 0 if none. */
static int
node_failed(const char *db, char *why, size_t len)
{
	struct store_slurm_jobs jobs;
	struct err e = ERR_INIT;
	struct store *s = open_store(db);
	int found = 0;

	if (s == NULL)
		return 0;
	if (store_slurm_list(s, 0, 0, &jobs, &e) == 0) {
		for (size_t i = 0; i < jobs.n && !found; i++)
			if (jobs.v[i].failure && strcmp(jobs.v[i].failure,
			    "slurm-node-fail") == 0) {
				snprintf(why, len, "%s", jobs.v[i].detail ?
				    jobs.v[i].detail : "");
				found = 1;
			}
		store_slurm_jobs_release(&jobs);
	}
	store_close(s);
	return found;
}

/*
 * The pinned node drains while the bisect runs: the job waiting for it
 * is cancelled as slurm-node-fail, the next goes to any node under a new
 * anchor (one host: the same node once back in service, whose runs from
 * before are not compared), the ends are measured again, the verdict
 * stands, and the report says so.  A second node is not covered here.
 */
static void
test_reanchor(void)
{
	struct store_slurm_jobs jobs;
	struct err e = ERR_INIT;
	struct store *s;
	char host[256], cmd[8192], why[512], *out = NULL, *log;
	const char *first = NULL, *last = NULL;
	pid_t pid;
	int failed = 0;

	node_name(host);
	write_config("anchor.conf", "anchor.db", 1, NULL);
	pid = bisect_bg("anchor.conf", "0.2.0..0.2.6");
	CHECK(running_job(120, 0) > 0);
	snprintf(cmd, sizeof(cmd), "scontrol update NodeName=%s State=DRAIN "
	    "Reason=bisectd-test-drain", host);
	CHECK_INT(check_run(cmd, NULL), 0);
	for (double t0 = check_now_s(); !failed && check_now_s() - t0 < 300;) {
		failed = node_failed("anchor.db", why, sizeof(why));
		if (!failed)
			check_sleep_ms(200);
	}
	snprintf(cmd, sizeof(cmd), "scontrol update NodeName=%s "
	    "State=RESUME", host);
	CHECK_INT(check_run(cmd, NULL), 0);
	CHECK(failed);
	CHECK_CONTAINS(why, "DRAIN");
	CHECK_CONTAINS(why, "bisectd-test-drain");
	CHECK_INT(check_wait_exit(pid, 600), 3);
	log = check_read_file("anchor.conf.log");
	CHECK_CONTAINS(log, "waits for its pinned node");
	CHECK_CONTAINS(log, "re-anchored on another node");
	free(log);
	if ((s = open_store("anchor.db")) == NULL) {
		CHECK(0);
		return;
	}
	/* The ingested results before and after: two anchors. */
	CHECK_INT(store_slurm_list(s, 0, 0, &jobs, &e), 0);
	for (size_t i = 0; i < jobs.n; i++)
		if (strcmp(jobs.v[i].state, "ingested") == 0) {
			if (first == NULL)
				first = jobs.v[i].hw_key;
			last = jobs.v[i].hw_key;
		}
	CHECK(first && last && strcmp(first, last) != 0);
	store_slurm_jobs_release(&jobs);
	store_close(s);
	snprintf(cmd, sizeof(cmd), "%s -c anchor.conf report basert "
	    "0.2.0..0.2.6", ctl);
	CHECK_INT(check_run(cmd, &out), 3);
	CHECK_CONTAINS(out, "re-anchored: node ");
	CHECK_CONTAINS(out, "bisectd-test-drain");
	snprintf(cmd, sizeof(cmd), "the ends were measured again on node %s",
	    host);
	CHECK_CONTAINS(out, cmd);
	CHECK_CONTAINS(out, "0.2.4");
	free(out);
}

int
main(void)
{
	const char *dir = check_tmpdir("slurm");
	int rc;

	check_env(&ctl, &daemon_bin, &build);
	if ((rc = check_slurm_start(dir, NULL)) != 0)
		return rc;
	CHECK_CASE(test_same_verdict);
	CHECK_CASE(test_refused);
	CHECK_CASE(test_scancel);
	CHECK_CASE(test_kill_reattach);
	CHECK_CASE(test_daemon_cancel);
	CHECK_CASE(test_concurrent_kill);
	CHECK_CASE(test_one_at_a_time);
	CHECK_CASE(test_reanchor);
	/* Before check_done() removes the folder with the daemons' pid
	 * files; the atexit() one is for an early exit. */
	check_slurm_stop();
	return check_done();
}
