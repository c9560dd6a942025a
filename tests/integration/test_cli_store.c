/*
 * test_cli_store.c: bisectctl on a database that is not SQLite,
 * read-only, locked by another writer, on a disk that fills during a
 * migration or past a file size limit, and interrupted or waiting for
 * the machine's benchmark lock: one clear line on stderr, a non-zero
 * exit, the database untouched.  Also the status of jobs and pruning.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "check_cli.h"
#include "common/err.h"
#include "store/store.h"

/* The database file must be byte for byte what it was. */
static void
check_unchanged(const char *path, const char *before, size_t lb)
{
	size_t la;
	char *after = check_read_bytes(path, &la);

	CHECK(after != NULL && la == lb && memcmp(before, after, lb) == 0);
	free(after);
}

static void
test_bad_databases(void)
{
	struct cli_result r;
	struct err e = ERR_INIT;
	struct store *holder, *s;
	char *before;
	size_t lb;

	/* Not SQLite. */
	check_write_file("text.db", "These are not the bytes of a SQLite "
	    "database; they are text, long enough to fill the header and "
	    "then some more, so that SQLite reads them and says no.\n");
	cli_write_config("text.conf", "text.db");
	before = check_read_bytes("text.db", &lb);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "text.conf", "versions",
	    "basert", NULL });
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "is not a SQLite database");
	CHECK_CONTAINS(r.err, "text.db");
	CHECK_INT(check_count_lines(r.err), 1);
	check_unchanged("text.db", before, lb);
	free(before);

	/* Locked by another writer while it needs migrating. */
	cli_write_config("locked.conf", "locked.db");
	CHECK(store_open_version("locked.db", 0, &holder, &e) == 0);
	CHECK(holder && store_begin(holder, &e) == 0);
	before = check_read_bytes("locked.db", &lb);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "locked.conf", "versions",
	    "basert", NULL });
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "locked by another writer");
	CHECK_CONTAINS(r.err, "locked.db");
	CHECK_INT(check_count_lines(r.err), 1);
	store_rollback(holder);
	CHECK_INT(store_schema_version(holder), 0);
	store_close(holder);
	check_unchanged("locked.db", before, lb);
	free(before);

	/* The disk fills during the migration (RLIMIT_FSIZE on the WAL). */
	cli_write_config("full.conf", "full.db");
	CHECK(store_open_version("full.db", 0, &s, &e) == 0);
	store_close(s);
	before = check_read_bytes("full.db", &lb);
	cli_run(&r, 40000, AS_ROOT, (const char *[]){ "-c", "full.conf",
	    "versions", "basert", NULL });
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "full.db");
	CHECK_CONTAINS(r.err, "cannot migrate to schema 1");
	CHECK_INT(check_count_lines(r.err), 1);
	check_unchanged("full.db", before, lb);
	free(before);
	CHECK(store_open_version("full.db", 0, &s, &e) == 0);
	CHECK_INT(s ? store_schema_version(s) : -1, 0);
	store_close(s);

	/* Read-only: as root a file mode does not stop writes, so run as
	 * nobody when we are root, from a copy nobody can reach (the build
	 * may sit under a folder only root may enter). */
	CHECK_INT(check_run("cp \"$BISECTCTL\" ./ctl-copy && chmod 755 ctl-copy",
	    NULL), 0);
	cli_ctl = "./ctl-copy";
	cli_write_config("ro.conf", "ro/ro.db");
	mkdir("ro", 0755);
	CHECK(store_open_version("ro/ro.db", 0, &s, &e) == 0);
	store_close(s);
	chmod("ro/ro.db", 0444);
	chmod("ro", 0555);
	chmod(".", 0755);
	before = check_read_bytes("ro/ro.db", &lb);
	cli_run(&r, 0, geteuid() == 0 ? AS_NOBODY : AS_ROOT, (const char *[]){
	    "-c", "ro.conf", "versions", "basert", NULL });
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "ro.db");
	CHECK_INT(check_count_lines(r.err), 1);
	check_unchanged("ro/ro.db", before, lb);
	free(before);
	chmod("ro", 0755);
}

/* ulimit -f: the write fails with EFBIG and is reported, no SIGXFSZ. */
static void
test_file_size_limit(void)
{
	struct cli_result r;

	cli_write_config("fsize.conf", "fsize.db");
	cli_xfsz_default = 1;
	cli_run(&r, 40000, AS_ROOT, (const char *[]){ "-c", "fsize.conf",
	    "versions", "basert", NULL });
	cli_xfsz_default = 0;
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "fsize.db");
	CHECK_CONTAINS(r.err, strerror(EFBIG));
	CHECK_INT(check_count_lines(r.err), 1);
}

/*
 * A user who may read the database but not write it (socket-group's
 * members) runs the commands that only read while the daemon (here a
 * connection held open) has it open, and the file is untouched.
 */
static void
test_read_only_status(void)
{
	struct store *s;
	struct err e = ERR_INIT;
	struct cli_result r;
	char *before;
	size_t lb;

	cli_write_config("rd.conf", "rd/rd.db");
	mkdir("rd", 0755);
	CHECK(store_open("rd/rd.db", &s, &e) == 0);
	chmod("rd/rd.db", 0644);
	chmod("rd/rd.db-wal", 0644);
	chmod("rd/rd.db-shm", 0644);
	chmod("rd", 0555);
	before = check_read_bytes("rd/rd.db", &lb);
	cli_run(&r, 0, geteuid() == 0 ? AS_NOBODY : AS_ROOT, (const char *[]){
	    "-c", "rd.conf", "status", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "daemon: not running");
	CHECK_CONTAINS(r.out, "(the queue is empty)");
	CHECK_CONTAINS(r.out, "daemon: not running (no socket at ");
	if (r.status != 0)
		fprintf(stderr, "status: %s", r.err);
	cli_run(&r, 0, geteuid() == 0 ? AS_NOBODY : AS_ROOT, (const char *[]){
	    "-c", "rd.conf", "alerts", NULL });
	CHECK_INT(r.status, 0);
	check_unchanged("rd/rd.db", before, lb);
	free(before);
	store_close(s);
	chmod("rd", 0755);
}

/* A job as the daemon leaves it: queued, then ended with a result. */
static int64_t
job_ended(struct store *s, const char *kind, const char *args,
    const char *state, int code, const char *result)
{
	struct err e = ERR_INIT;
	int64_t id = 0;

	CHECK_INT(store_job_enqueue(s, kind, "basert", args, 0, &id, &e), 0);
	if (state)
		CHECK_INT(store_job_finish(s, id, state, code, result, &e), 0);
	return id;
}

/*
 * status lists the newest jobs first, a default number of them, with
 * their arguments as a command line and each verdict in words; jobs
 * prune deletes the old ones that ended, and nothing else.
 */
static void
test_status_jobs_and_prune(void)
{
	struct store *s;
	struct store_bisect b;
	struct err e = ERR_INIT;
	struct cli_result r;
	int64_t eid = 0, first, resumed_id;
	int resumed;

	cli_write_config("jobs.conf", "jobs.db");
	CHECK_INT(store_open("jobs.db", &s, &e), 0);
	if (s == NULL)
		return;
	first = job_ended(s, "bisect", "{\"range\":\"0.2.0..0.2.6\","
	    "\"threshold\":\"3%\",\"metric\":\"pp512\",\"all\":true}", "done",
	    3, "{\"status\":\"regression\",\"first_bad\":\"b4744\","
	    "\"last_good\":\"b4743\",\"candidates\":[\"b4744\"],\"kind\":"
	    "\"per-token\",\"confirmed\":true,\"change_points\":[{}]}");
	/* A bisect row of that job outlives the prune. */
	CHECK_INT(store_engine_ensure(s, "basert", "dir:releases", &eid, &e),
	    0);
	memset(&b, 0, sizeof(b));
	b.job_id = first;
	b.engine_id = eid;
	b.good = "0.2.0";
	b.bad = "0.2.6";
	b.metric = "pp512";
	b.threshold = 0.03;
	CHECK_INT(store_bisect_open(s, &b, &resumed, &e), 0);
	resumed_id = b.id;
	job_ended(s, "watch", "{}", "done", 0, "{\"watch\":\"basert\","
	    "\"exit_code\":0,\"range\":\"0.2.5..0.2.6\",\"verdict\":"
	    "{\"status\":\"no-regression\",\"endpoints_change\":0.012,"
	    "\"change_points\":[]}}");
	/* The threshold as bisectd queues it now: the fraction. */
	job_ended(s, "bisect", "{\"range\":\"1..2\",\"threshold\":0.05,"
	    "\"commits\":true}", "failed", 1,
	    "cannot download 1: \033]0;owned\007 refused");
	for (int i = 0; i < 9; i++)
		job_ended(s, "fetch", "{\"version\":\"0.2.1\"}", NULL, 0,
		    NULL);
	job_ended(s, "watch", "{}", "running", 0, NULL);
	store_close(s);

	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "status",
	    NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "jobs: newest 10 of 13 (--limit N or --all");
	/* Newest first: the last queued fetch above the first. */
	CHECK(strstr(r.out, "    13  ") && strstr(r.out, "    12  ") &&
	    strstr(r.out, "    13  ") < strstr(r.out, "    12  "));
	CHECK(strstr(r.out, "     1  bisect") == NULL);
	CHECK_CONTAINS(r.out, "fetch   basert     queued");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "status",
	    "--all", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "jobs: all 13, newest first");
	CHECK_CONTAINS(r.out, "0.2.0..0.2.6 --all --metric pp512 --threshold "
	    "3%: regression at b4744, per-token, confirmed");
	CHECK_CONTAINS(r.out, "no regression (+1.2% end to end) over "
	    "0.2.5..0.2.6");
	CHECK_CONTAINS(r.out, "1..2 --commits --threshold 5%: failed: cannot "
	    "download 1: \\x1b]0;owned\\x07 refused");
	CHECK(strchr(r.out, '\033') == NULL);
	CHECK(strstr(r.out, "{\"range\"") == NULL);
	/* A job left running with no daemon: interrupted, it resumes. */
	CHECK_CONTAINS(r.out, "watch   basert     interrupted");
	CHECK_CONTAINS(r.out, "resume when the daemon starts");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "status",
	    "--limit", "2", "--format", "json", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "\"jobs_total\": 13");
	CHECK_CONTAINS(r.out, "\"interrupted\": true");
	/* A job's arguments are JSON in the JSON, not a string of it. */
	CHECK_CONTAINS(r.out, "\"args\": {");
	CHECK(strstr(r.out, "\"args\": \"") == NULL);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "status",
	    "--limit", "0", NULL });
	CHECK_INT(r.status, 2);

	/* Nothing ended 90 days ago; bad ages are usage errors. */
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "jobs",
	    "prune", "--before", "90d", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "pruned 0 jobs");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "jobs",
	    "prune", "--before", "soon", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "--before: expected an age");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "jobs",
	    "prune", NULL });
	CHECK_INT(r.status, 2);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "jobs",
	    "list", "--before", "1d", NULL });
	CHECK_INT(r.status, 2);
	/* A second later everything that ended is older than 0 s; the
	 * queued and the interrupted jobs stay. */
	check_sleep_ms(1100);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "jobs",
	    "prune", "--before", "0s", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "pruned 3 jobs");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "status",
	    "--all", NULL });
	CHECK_CONTAINS(r.out, "jobs: all 10, newest first");
	CHECK(strstr(r.out, "b4744") == NULL);
	CHECK_INT(store_open("jobs.db", &s, &e), 0);
	if (s) {
		b.job_id = 0;
		CHECK_INT(store_bisect_open(s, &b, &resumed, &e), 0);
		CHECK_INT(resumed, 1);
		CHECK_INT(b.id, resumed_id);
		store_close(s);
	}
}

/* Start bisectctl -c conf with args in the background, stdout and stderr
 * to err_file; its pid. */
static pid_t
start_ctl(const char *conf, const char *args, const char *err_file)
{
	char cmd[4096];
	pid_t pid;

	snprintf(cmd, sizeof(cmd), "exec %s -c %s %s >%s 2>&1", cli_ctl, conf,
	    args, err_file);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * Ctrl-C: the running engine is ended (one that would hang until its
 * timeout included), within seconds; the exit code is 130 and the
 * message says what was kept; the stopped run is no failure of the
 * release.  A bisect says that running it again resumes, and it does.
 */
static void
test_interrupt(void)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	char text[4096], *out;
	double t0;
	pid_t pid;

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = int.db\n\tcache = intcache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"w\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"hang\"]\n\tsource = dir:%s/tests/releases\n"
	    "\tasset = hang-{version}.tar.gz\n\ttimeout = 10m\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -r 1 -o json\n\tparser = llama-bench\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/tests/demo-cpu\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n\tparser = llama-bench\n"
	    "\tprompts = 128,512\n\tgen = 16\n", build, build, build);
	check_write_file("int.conf", text);
	pid = start_ctl("int.conf", "bench hang 1.0.0", "int-bench.txt");
	check_sleep_ms(1500);
	t0 = check_now_s();
	kill(pid, SIGINT);
	CHECK_INT(check_wait_exit(pid, 60), 130);
	CHECK(check_now_s() - t0 < 5);
	out = check_read_file("int-bench.txt");
	CHECK_CONTAINS(out, "bisectctl: interrupted\n");
	CHECK_CONTAINS(out, "the runs finished before the stop are stored\n");
	free(out);
	CHECK_INT(check_ctl_run(cli_ctl, "-c int.conf runs hang 1.0.0", &out), 0);
	CHECK(out != NULL && strstr(out, "timeout") == NULL &&
	    strstr(out, "failed") == NULL);
	free(out);

	pid = start_ctl("int.conf", "bisect --now basert 0.2.0..0.2.6",
	    "int-bisect.txt");
	check_sleep_ms(1500);
	kill(pid, SIGINT);
	CHECK_INT(check_wait_exit(pid, 60), 130);
	out = check_read_file("int-bisect.txt");
	CHECK_CONTAINS(out, "; run the same command again to resume\n");
	free(out);
	CHECK_INT(check_ctl_run(cli_ctl, "-c int.conf bisect --now basert "
	    "0.2.0..0.2.6", NULL), 3);
}

/*
 * The benchmark lock is the machine's: a bench on a second store waits
 * for one on the first, says for whom, and runs once it ends; status
 * names the holder.
 */
static void
test_machine_lock(void)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	static const char *const names[] = { "hang", "fast" };
	char text[4096], *out = NULL;
	pid_t slow, waiting;
	int held = 0;

	for (int i = 0; i < 2; i++) {
		snprintf(text, sizeof(text),
		    "[bisectd]\n\tdatabase = %s.db\n\tcache = %scache\n"
		    "\tmax-busy = 100%%\n"
		    "[weights \"w\"]\n\tpath = %s/demo/weights.bin\n"
		    "[engine \"%s\"]\n\tsource = dir:%s/tests/releases\n"
		    "\tasset = %s-{version}.tar.gz\n\ttimeout = 10m\n"
		    "\tcommand = {bin}/bin/fake-engine -m {weights} -p "
		    "{prompt} -n {gen} -r 1 -o json\n\tparser = llama-bench\n",
		    names[i], names[i], build, names[i], build, names[i]);
		check_write_file(i ? "fast.conf" : "hang.conf", text);
	}
	slow = start_ctl("hang.conf", "bench hang 1.0.0", "lock-hang.txt");
	for (int i = 0; i < 200 && !held; i++) {
		free(out);
		out = NULL;
		check_ctl_run(cli_ctl, "-c fast.conf status", &out);
		held = out && strstr(out, "benchmark lock: held by pid ") &&
		    strstr(out, "(bisectctl bench hang 1.0.0)");
		if (!held)
			check_sleep_ms(50);
	}
	CHECK(held);
	free(out);
	CHECK_INT(check_ctl_run(cli_ctl, "-c fast.conf --format json status",
	    &out), 0);
	CHECK_CONTAINS(out, "\"held\": true");
	free(out);
	waiting = start_ctl("fast.conf", "bench fast 1.0.0 --reps 1",
	    "lock-fast.txt");
	check_sleep_ms(1500);
	out = check_read_file("lock-fast.txt");
	CHECK_CONTAINS(out, "waiting for the benchmark lock, held by pid ");
	CHECK_CONTAINS(out, "(bisectctl bench hang 1.0.0)");
	free(out);
	/* Still waiting; it runs once the first bench is stopped. */
	CHECK_INT(waitpid(waiting, NULL, WNOHANG), 0);
	kill(slow, SIGINT);
	CHECK_INT(check_wait_exit(slow, 60), 130);
	CHECK_INT(check_wait_exit(waiting, 120), 0);
	CHECK_INT(check_ctl_run(cli_ctl, "-c fast.conf status", &out), 0);
	CHECK_CONTAINS(out, "benchmark lock: free, ");
	free(out);
	/* bench says what its figures are of, and the release's fit. */
	CHECK_INT(check_ctl_run(cli_ctl, "-c fast.conf bench fast 1.0.0 --reps 3",
	    &out), 0);
	CHECK_CONTAINS(out, "fast 1.0.0, weights w (sha256 ");
	CHECK_CONTAINS(out, "), machine ");
	CHECK_CONTAINS(out, "\nfit over 512,2048: prefill ");
	CHECK_CONTAINS(out, " ms per token [");
	free(out);
}

int
main(void)
{
	cli_setup("cli_store");
	CHECK_CASE(test_bad_databases);
	CHECK_CASE(test_file_size_limit);
	CHECK_CASE(test_read_only_status);
	CHECK_CASE(test_status_jobs_and_prune);
	CHECK_CASE(test_interrupt);
	CHECK_CASE(test_machine_lock);
	return check_done();
}
