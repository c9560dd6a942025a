/*
 * test_daemon.c: the daemon as a real process on the demo's fake-engine
 * releases: a second daemon refused, an idle daemon that uses no CPU, a
 * job picked up soon after a wake-up, cancels of queued and running
 * jobs, malformed control messages, SIGHUP with a bad configuration,
 * SIGTERM in the middle of a bisect (back to the queue) and kill -9 in
 * the middle of one (resumed on restart, same verdict, store intact).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bisectd/measure/benchlock.h"
#include "check.h"
#include "check_daemon.h"
#include "bisectd/daemon/control.h"
#include "common/err.h"
#include "store/store.h"

static const char *ctl, *daemon_bin, *build;
static char dir[80];	/* a socket path must fit in sun_path */

/* The demo's daemon, with extra after its engine's keys. */
static void
write_config(const char *name, const char *extra)
{
	check_daemon_config(name, dir, build, "", extra);
}

/* Ask the daemon for its status until it answers (10 s at most). */
static json_t *
status(void)
{
	char path[4200], *reply = NULL;
	struct err e = ERR_INIT;
	json_t *j = NULL;

	snprintf(path, sizeof(path), "%s/state/bisectd.sock", dir);
	for (int i = 0; i < 200 && j == NULL; i++) {
		if (control_call(path, "status", &reply, &e) == 0)
			j = json_loads(reply, 0, NULL);
		free(reply);
		reply = NULL;
		if (j == NULL)
			check_sleep_ms(50);
	}
	return j;
}

static struct store *
open_store(void)
{
	return check_daemon_store(dir);
}

/* The state of job id ("" if unknown), into buf. */
static const char *
job_state(int64_t id, char *buf, size_t len, int *exit_code)
{
	struct store *s = open_store();
	struct store_job j;
	struct err e = ERR_INIT;

	snprintf(buf, len, "%s", "");
	if (s && store_job_get(s, id, &j, &e) == 0) {
		snprintf(buf, len, "%s", j.state);
		if (exit_code)
			*exit_code = j.exit_code;
		store_job_release(&j);
	}
	store_close(s);
	return buf;
}

/* Job id's state read every ms milliseconds until it is want (tries
 * times at most), then checked to be want; its exit code into *code. */
static void
job_becomes(int64_t id, const char *want, int tries, int ms, int *code)
{
	char buf[64];

	for (int i = 0; i < tries && strcmp(job_state(id, buf, sizeof(buf),
	    code), want) != 0; i++)
		check_sleep_ms(ms);
	CHECK_STR(job_state(id, buf, sizeof(buf), code), want);
}

/* bisectctl -c d.conf cancel id exits with status, saying want (when
 * not NULL). */
static void
cancel_says(int64_t id, int status, const char *want)
{
	char args[64];

	snprintf(args, sizeof(args), "-c d.conf cancel %lld", (long long)id);
	check_ctl_says(ctl, args, status, want, NULL);
}

static int64_t
enqueue(const char *kind, const char *args)
{
	struct store *s = open_store();
	struct err e = ERR_INIT;
	int64_t id = 0;

	if (s == NULL || store_job_enqueue(s, kind, "basert", args, 0, &id,
	    &e) < 0)
		fprintf(stderr, "enqueue: %s\n", e.msg);
	store_close(s);
	return id;
}

/* A connection to the daemon's socket that sends nothing yet, or -1. */
static int
connect_idle(void)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/state/bisectd.sock",
	    dir);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send raw bytes to the socket; the reply (malloced) or NULL. */
static char *
raw_request(const char *bytes, size_t len)
{
	char *reply = calloc(1, 4096);
	size_t got = 0;
	ssize_t n;
	int fd = connect_idle();

	if (fd < 0) {
		free(reply);
		return NULL;
	}
	(void)send(fd, bytes, len, MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	while (got < 4095 && (n = read(fd, reply + got, 4095 - got)) > 0)
		got += (size_t)n;
	close(fd);
	return reply;
}

static long long
cpu_ms(pid_t pid)
{
	char path[64], *text, *p;
	unsigned long long ut, st;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((text = check_read_file(path)) == NULL)
		return -1;
	/* Fields after the command's closing parenthesis: 14 and 15 are
	 * utime and stime, in clock ticks. */
	p = strrchr(text, ')');
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u "
	    "%*u %*u %llu %llu", &ut, &st) != 2) {
		free(text);
		return -1;
	}
	free(text);
	return (long long)((ut + st) * 1000 / (unsigned long long)
	    sysconf(_SC_CLK_TCK));
}

/*
 * Clients that connect and say nothing each hold a slot until their
 * deadline, not the daemon: `bisectctl status` is answered beside ten
 * of them (it used to wait 2 s per idle client, past its own 10 s).  A
 * flood of such connections does not delay SIGTERM (it used to keep the
 * loop accepting); the bound is generous beside the < 1 s it takes.
 */
static void
test_idle_clients_and_flood(pid_t pid)
{
	char cmd[4200], *out = NULL, *log;
	int idle[10];
	pid_t flood;
	double t0;

	for (int i = 0; i < 10; i++)
		CHECK((idle[i] = connect_idle()) >= 0);
	t0 = check_now_s();
	snprintf(cmd, sizeof(cmd), "%s -c d.conf status", ctl);
	CHECK_INT(check_run(cmd, &out), 0);
	CHECK_CONTAINS(out, "daemon: running");
	fprintf(stderr, "status beside 10 idle clients: %.3f s\n",
	    check_now_s() - t0);
	free(out);
	for (int i = 0; i < 10; i++)
		if (idle[i] >= 0)
			close(idle[i]);

	if ((flood = fork()) == 0) {
		int fds[200] = { 0 }, n = 0;
		double end = check_now_s() + 60;

		/* Connect without a word, keeping up to 200 open. */
		while (check_now_s() < end) {
			if (fds[n % 200] > 0)
				close(fds[n % 200]);
			fds[n % 200] = connect_idle();
			if (fds[n % 200] < 0) {
				fds[n % 200] = 0;
				check_sleep_ms(1);
			}
			n++;
		}
		_exit(0);
	}
	check_sleep_ms(1000);
	t0 = check_now_s();
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 10), 0);
	fprintf(stderr, "stopped %.3f s after SIGTERM under a connect "
	    "flood\n", check_now_s() - t0);
	kill(flood, SIGKILL);
	waitpid(flood, NULL, 0);
	/* The flood's timeouts are logged, but not one line each. */
	log = check_read_file("daemon.log");
	CHECK(log != NULL);
	if (log != NULL) {
		int n = 0;

		for (char *p = log; (p = strstr(p, "control socket:")) != NULL;
		    p++)
			n++;
		CHECK(n < 20);
	}
	free(log);
}

/* The daemon's status once it reports a failed reload (failed) or none
 * (!failed), 10 s at most; NULL when it does not. */
static json_t *
reload_seen(int failed)
{
	for (int i = 0; i < 200; i++) {
		json_t *st = status();
		json_t *r = json_object_get(st, "reload_failed");

		if (failed ? json_is_object(r) : json_is_null(r))
			return st;
		json_decref(st);
		check_sleep_ms(50);
	}
	return NULL;
}

static void
test_control(void)
{
	/* Requests the daemon refuses and what its answer says; bytes NULL
	 * stands for big, longer than a request may be. */
	static const struct {
		const char *bytes, *answer;
	} refused[] = {
		{ NULL, "longer than" },
		{ "bogus\n", "unknown request" },
		{ "cancel 12x\n", "expected a job number" },
		{ "status", "truncated" },
		{ "wake\nwake\n", "\"ok\":false" },
	};
	struct benchlock lock = BENCHLOCK_INIT;
	struct err e = ERR_INIT;
	char path[4200], buf[64], *out = NULL, *log, *r, big[300];
	long long c0, c1;
	int64_t held, queued, quick;
	double t0;
	json_t *st;
	pid_t pid;
	int code;

	write_config("d.conf", "");
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	st = status();
	CHECK(st != NULL);
	CHECK_INT(json_integer_value(json_object_get(st, "pid")), pid);
	CHECK(json_is_null(json_object_get(st, "job")));
	json_decref(st);

	/* A second daemon on the same database is refused. */
	snprintf(path, sizeof(path), "%s -c d.conf", daemon_bin);
	CHECK_INT(check_run(path, &out), 1);
	CHECK_CONTAINS(out, "another bisectd");
	free(out);

	/* Idle: no CPU over 2 s. */
	c0 = cpu_ms(pid);
	check_sleep_ms(2000);
	c1 = cpu_ms(pid);
	CHECK(c0 >= 0 && c1 - c0 < 50);

	/* Malformed and oversized requests are refused; it keeps serving. */
	memset(big, 'x', sizeof(big));
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const char *bytes = refused[i].bytes ? refused[i].bytes : big;

		r = raw_request(bytes, refused[i].bytes ? strlen(bytes) :
		    sizeof(big));
		CHECK_CONTAINS(r, refused[i].answer);
		free(r);
	}
	st = status();
	CHECK(st != NULL);
	json_decref(st);

	/* With the benchmark lock held here, a job waits running; the next
	 * one waits queued.  Cancel both. */
	snprintf(path, sizeof(path), "%s", benchlock_path(NULL));
	CHECK_INT(benchlock_acquire(&lock, path, "test", NULL, NULL, &e), 0);
	held = enqueue("fetch", "{\"version\":\"0.2.0\"}");
	queued = enqueue("fetch", "{\"version\":\"0.2.1\"}");
	snprintf(path, sizeof(path), "%s -c d.conf watch nosuch", ctl);
	CHECK_INT(check_run(path, NULL), 2);
	r = raw_request("wake\n", 5);
	CHECK_CONTAINS(r, "\"ok\":true");
	free(r);
	job_becomes(held, "running", 100, 50, NULL);
	cancel_says(queued, 0, "cancelled");
	CHECK_STR(job_state(queued, buf, sizeof(buf), NULL), "cancelled");
	cancel_says(held, 0, "cancelling");
	job_becomes(held, "cancelled", 100, 50, NULL);
	cancel_says(held, 1, "ended already");
	benchlock_release(&lock);

	/* A queued job is picked up soon after the wake-up bisectctl sends
	 * (bound generous for a loaded machine; the loop takes < 1 s). */
	t0 = check_now_s();
	quick = enqueue("fetch", "{\"version\":\"0.2.0\"}");
	r = raw_request("wake\n", 5);
	free(r);
	while (check_now_s() - t0 < 10 && strcmp(job_state(quick, buf, sizeof(buf),
	    NULL), "queued") == 0)
		check_sleep_ms(20);
	fprintf(stderr, "picked up %.3f s after enqueue\n", check_now_s() - t0);
	CHECK(check_now_s() - t0 < 3);
	job_becomes(quick, "done", 200, 50, &code);
	CHECK_INT(code, 0);

	/*
	 * SIGHUP with a bad file (a regex's single backslash, which
	 * libgit2 refuses as a syntax error): logged, the old configuration
	 * kept, and status says so.  The commands that need only [bisectd]
	 * still work on the broken file, with a warning.
	 */
	write_config("d.conf", "\tparser = \"regex:t=(\\d+)\"\n");
	kill(pid, SIGHUP);
	st = reload_seen(1);
	CHECK(st != NULL);
	CHECK_CONTAINS(json_string_value(json_object_get(json_object_get(st,
	    "reload_failed"), "error")), "d.conf:15: engine.basert.parser: "
	    "invalid escape '\\d'");
	CHECK(json_integer_value(json_object_get(json_object_get(st,
	    "reload_failed"), "at")) > 0);
	json_decref(st);
	check_ctl_says(ctl, "-c d.conf status", 0,
	    "warning: d.conf:15: engine.basert.parser", "daemon: running",
	    "last reload failed at ",
	    ": d.conf:15: engine.basert.parser: invalid escape", NULL);
	snprintf(path, sizeof(path), "%s -c d.conf alerts", ctl);
	CHECK_INT(check_run(path, NULL), 0);
	cancel_says(999, 1, "no job 999");
	/* A command that needs the engines refuses the broken file. */
	snprintf(path, sizeof(path), "%s -c d.conf versions basert", ctl);
	CHECK_INT(check_run(path, NULL), 2);
	log = check_read_file("daemon.log");
	CHECK_CONTAINS(log, "old one stays in force");
	free(log);
	/* A good reload clears it. */
	write_config("d.conf", "");
	kill(pid, SIGHUP);
	st = reload_seen(0);
	CHECK(st != NULL);
	json_decref(st);

	/* bisectctl status through the socket. */
	check_ctl_says(ctl, "-c d.conf status", 0, "daemon: running", NULL);

	test_idle_clients_and_flood(pid);
	check_ctl_says(ctl, "-c d.conf status", 0, "not running", NULL);
}

/* Wait until the running job has stored some runs (progress shown). */
static int
wait_progress(int min_run)
{
	for (int i = 0; i < 1200; i++) {
		json_t *st = status();
		json_t *p = json_object_get(json_object_get(st, "job"),
		    "progress");
		long long run = json_integer_value(json_object_get(p, "run"));

		json_decref(st);
		if (run >= min_run)
			return 1;
		check_sleep_ms(100);
	}
	return 0;
}

static void
test_crash_resume(void)
{
	char buf[128], cmd[4300], *log, *ok, *out;
	int64_t wid;
	struct store *s;
	struct store_job j;
	struct store_release_list rels;
	struct err e = ERR_INIT;
	int64_t id, eid;
	double t0;
	pid_t pid;
	int code = -1, rc, warmups_seen = 0, confirm_seen = 0;
	time_t first_running = 0;

	write_config("d.conf", "");
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	json_decref(status());
	id = enqueue("bisect", "{\"range\":\"0.2.0..0.2.6\",\"all\":false}");
	free(raw_request("wake\n", 5));
	CHECK(wait_progress(3));
	first_running = time(NULL);

	/* SIGTERM: the running engine is ended, the job goes back. */
	t0 = check_now_s();
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 60), 0);
	fprintf(stderr, "stopped %.3f s after SIGTERM\n", check_now_s() - t0);
	CHECK_STR(job_state(id, buf, sizeof(buf), NULL), "queued");

	/* Restart, then kill -9 half-way. */
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	CHECK(wait_progress(3));
	check_sleep_ms(1500);
	kill(pid, SIGKILL);
	CHECK_INT(check_wait_exit(pid, 20), 128 + SIGKILL);
	CHECK_STR(job_state(id, buf, sizeof(buf), NULL), "running");
	/* What a user sees meanwhile: the socket left behind, the job
	 * interrupted (not "running"), to resume at the next start. */
	check_ctl_says(ctl, "-c d.conf status", 0,
	    "daemon: not running (stale socket at ",
	    " bisect  basert     interrupted ",
	    "interrupted jobs resume when the daemon starts", NULL);

	/* Restart: the job is recovered and the bisect finishes.  Its
	 * progress counts warm-ups out of the warm-ups (one), and the
	 * confirmation names the release it measures against. */
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	for (int i = 0; i < 3000; i++) {
		json_t *st = status(), *p;
		const char *against;

		p = json_object_get(json_object_get(st, "job"), "progress");
		if (json_is_true(json_object_get(p, "warmup"))) {
			warmups_seen++;
			CHECK_INT(json_integer_value(json_object_get(p,
			    "reps")), 1);
		}
		against = json_string_value(json_object_get(p,
		    "confirming_against"));
		if (against != NULL) {
			confirm_seen++;
			CHECK(strcmp(against, "0.2.3") == 0 ||
			    strcmp(against, "0.2.4") == 0);
		}
		json_decref(st);
		if (strcmp(job_state(id, buf, sizeof(buf), &code),
		    "running") != 0 && strcmp(buf, "queued") != 0)
			break;
		check_sleep_ms(20);
	}
	CHECK(confirm_seen > 0);
	/* Its duration is from its first start: the work before the stop
	 * and the kill -9 counts. */
	if ((s = open_store()) != NULL && store_job_get(s, id, &j, &e) == 0) {
		CHECK(j.started > 0 && j.started <= (int64_t)first_running);
		CHECK(j.finished >= j.started);
		store_job_release(&j);
	}
	store_close(s);
	fprintf(stderr, "progress seen: %d warm-ups, %d in the "
	    "confirmation\n", warmups_seen, confirm_seen);
	CHECK_STR(job_state(id, buf, sizeof(buf), &code), "done");
	CHECK_INT(code, 3);
	/* The finished job's verdict in words; then a watch shows its
	 * progress as a bisect does (cancelled once it has). */
	check_ctl_says(ctl, "-c d.conf status", 0,
	    "0.2.0..0.2.6: regression at 0.2.4, ", ", confirmed", NULL);
	wid = enqueue("watch", "{}");
	free(raw_request("wake\n", 5));
	CHECK(wait_progress(1));
	snprintf(cmd, sizeof(cmd), "%s -c d.conf status", ctl);
	CHECK_INT(check_run(cmd, &out), 0);
	snprintf(buf, sizeof(buf), "running: job %lld, watch basert, for ",
	    (long long)wid);
	CHECK_CONTAINS(out, buf);
	CHECK_CONTAINS(out, "  release 0.2.");
	CHECK_CONTAINS(out, ", ETA ");
	free(out);
	cancel_says(wid, 0, NULL);
	job_becomes(wid, "cancelled", 600, 100, NULL);
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 30), 0);
	log = check_read_file("daemon.log");
	CHECK_CONTAINS(log, "put back in the queue");
	/* The log numbers jobs only: the resumed bisect is named by its
	 * range, not by a second number that reads as another job's. */
	CHECK_CONTAINS(log, "resuming the bisect of 0.2.0..0.2.6 from its "
	    "stored probes");
	CHECK(strstr(log, "resuming bisect ") == NULL);
	free(log);

	s = open_store();
	CHECK(s != NULL);
	if (s == NULL)
		return;
	ok = store_integrity_check(s, &e);
	CHECK_STR(ok, "ok");
	free(ok);
	CHECK_INT(store_job_get(s, id, &j, &e), 0);
	{
		json_t *v = json_loads(j.result ? j.result : "", 0, NULL);

		CHECK_STR(json_string_value(json_object_get(v, "status")),
		    "regression");
		CHECK_STR(json_string_value(json_object_get(v, "first_bad")),
		    "0.2.4");
		CHECK_STR(json_string_value(json_object_get(v, "last_good")),
		    "0.2.3");
		json_decref(v);
	}
	store_job_release(&j);
	/* Every successful run has its samples; no (release, cell, rep)
	 * analysed twice outside confirmations. */
	rc = store_engine_find(s, "basert", &eid, &e);
	CHECK_INT(rc, 0);
	if (rc == 0 && store_release_list(s, eid, &rels, &e) == 0) {
		for (size_t i = 0; i < rels.n; i++) {
			struct store_run_rows rows;

			if (store_run_list(s, rels.v[i].id, &rows, &e) < 0)
				continue;
			for (size_t k = 0; k < rows.n; k++)
				if (rows.v[k].failure == NULL)
					CHECK(rows.v[k].nsamples > 0);
				else
					CHECK_STR(rows.v[k].failure,
					    "interrupted");
			store_run_rows_release(&rows);
		}
		store_release_list_release(&rels);
	}
	store_close(s);
}

/*
 * Another process holds the database's write lock while a job ends: the
 * daemon waits it out, saying so, records the end once the lock is
 * gone, and stops cleanly; it used to exit with status 1, the job left
 * "running".
 */
static void
test_locked_database(void)
{
	struct benchlock lock = BENCHLOCK_INIT;
	struct err e = ERR_INIT;
	struct store *holder;
	char path[4200], buf[64], *log;
	int64_t held;
	pid_t pid;
	int code;

	write_config("d.conf", "");
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	json_decref(status());
	snprintf(path, sizeof(path), "%s", benchlock_path(NULL));
	CHECK_INT(benchlock_acquire(&lock, path, "test", NULL, NULL, &e), 0);
	held = enqueue("fetch", "{\"version\":\"0.2.0\"}");
	free(raw_request("wake\n", 5));
	job_becomes(held, "running", 100, 50, NULL);
	/* The job waits for the benchmark lock; SIGTERM ends it there, and
	 * its end must go into a database this test holds locked. */
	holder = open_store();
	CHECK(holder != NULL && store_begin(holder, &e) == 0);
	kill(pid, SIGTERM);
	check_sleep_ms(3000);
	CHECK_INT(kill(pid, 0), 0);	/* still there, waiting */
	log = check_read_file("daemon.log");
	CHECK_CONTAINS(log, "ended; waiting to record it");
	CHECK_CONTAINS(log, "locked by another writer");
	free(log);
	store_rollback(holder);
	store_close(holder);
	benchlock_release(&lock);
	code = check_wait_exit(pid, 20);
	CHECK_INT(code, 0);
	/* Stopped by SIGTERM: back in the queue, for the next daemon. */
	CHECK_STR(job_state(held, buf, sizeof(buf), NULL), "queued");
	log = check_read_file("daemon.log");
	CHECK_CONTAINS(log, "its end is recorded");
	free(log);
}

int
main(void)
{
	check_env(&ctl, &daemon_bin, &build);
	snprintf(dir, sizeof(dir), "%s", check_tmpdir("test_daemon"));
	CHECK_CASE(test_control);
	if (chdir("..") == 0) {
		snprintf(dir, sizeof(dir), "%s", check_tmpdir("test_daemon"));
		test_crash_resume();
	}
	if (chdir("..") == 0) {
		snprintf(dir, sizeof(dir), "%s", check_tmpdir("test_daemon"));
		CHECK_CASE(test_locked_database);
	}
	return check_done();
}
