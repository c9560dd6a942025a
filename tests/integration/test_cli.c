/*
 * test_cli.c: bisectctl as a user meets it: options anywhere, --help,
 * --version, exit codes, check-config, versions, and bad input (config
 * missing, truncated or garbage; a database that is not SQLite, read-only,
 * locked by another writer, or on a disk that fills during a migration):
 * one clear line on stderr, a non-zero exit, the database untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "common/err.h"
#include "store/store.h"

static const char *ctl;

struct result {
	int status;
	char out[65536];
	char err[65536];
};

enum { AS_ROOT = 0, AS_NOBODY = 1 };

static int xfsz_default;	/* leave SIGXFSZ as bisectctl sets it */

static void
drain(int fd, char *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while ((n = read(fd, buf + off, len - 1 - off)) > 0)
		off += (size_t)n;
	buf[off] = '\0';
	close(fd);
}

/* Run bisectctl with args; fsize_limit > 0 sets RLIMIT_FSIZE. */
static void
run(struct result *r, long fsize_limit, int who, const char *const *args)
{
	int out[2], err[2];
	const char *argv[32];
	pid_t pid;
	int n = 0, status;

	argv[n++] = ctl;
	for (; *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	if (pipe(out) < 0 || pipe(err) < 0)
		abort();
	fflush(NULL);
	if ((pid = fork()) == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		if (fsize_limit > 0) {
			struct rlimit rl = { (rlim_t)fsize_limit,
			    (rlim_t)fsize_limit };

			signal(SIGXFSZ, xfsz_default ? SIG_DFL : SIG_IGN);
			setrlimit(RLIMIT_FSIZE, &rl);
		}
		if (who == AS_NOBODY && (setgid(65534) < 0 ||
		    setuid(65534) < 0))
			_exit(99);
		execv(ctl, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	/* Small outputs: read one pipe, then the other. */
	drain(out[0], r->out, sizeof(r->out));
	drain(err[0], r->err, sizeof(r->err));
	waitpid(pid, &status, 0);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) :
	    128 + WTERMSIG(status);
}

static int
lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void
write_config(const char *name, const char *db)
{
	char text[2048];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s\n\tcache = cache\n"
	    "[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:releases\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} -n {gen} -o json\n"
	    "\tparser = llama-bench\n", db);
	check_write_file(name, text);
}

static void
test_help_and_usage(void)
{
	struct result r;

	run(&r, 0, AS_ROOT, (const char *[]){ "--help", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "check-config");
	CHECK_CONTAINS(r.out, "3  regression found");
	run(&r, 0, AS_ROOT, (const char *[]){ "--version", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "bisectctl ");
	run(&r, 0, AS_ROOT, (const char *[]){ "versions", "--help", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "versions ENGINE");
	CHECK_CONTAINS(r.out, "\n  --refresh        ask the source again");
	CHECK(strstr(r.out, "exit status") == NULL);
	/* A command that judges says each of its options, the metrics, how
	 * it decides and what its exit status means. */
	run(&r, 0, AS_ROOT, (const char *[]){ "bisect", "--help", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "\n  --now            run it here and now");
	CHECK_CONTAINS(r.out, "ppN (prefill at N tokens)");
	CHECK_CONTAINS(r.out, "tgN (decode of N");
	CHECK_CONTAINS(r.out, "\ndeciding:\n  The threshold P");
	CHECK_CONTAINS(r.out, "20% by\n");
	CHECK_CONTAINS(r.out, "\nexit status:\n  0  success");
	CHECK_CONTAINS(r.out, "  3  regression found");
	CHECK(strstr(r.out, "--limit") == NULL);
	run(&r, 0, AS_ROOT, (const char *[]){ "status", "--help", NULL });
	CHECK_CONTAINS(r.out, "\n  --all            every job\n");
	run(&r, 0, AS_ROOT, (const char *[]){ NULL });
	CHECK_INT(r.status, 2);
	run(&r, 0, AS_ROOT, (const char *[]){ "frobnicate", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "unknown command 'frobnicate'");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "ok.conf",
	    "check-config", "--refresh", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "does not take that option");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "ok.conf", "versions",
	    NULL });
	CHECK_INT(r.status, 2);
	run(&r, 0, AS_ROOT, (const char *[]){ "--format", "yaml",
	    "check-config", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "--format: expected text, json");
}

static void
test_check_config(void)
{
	struct result r;

	/* Options after operands, GNU style. */
	run(&r, 0, AS_ROOT, (const char *[]){ "check-config", "-c", "ok.conf",
	    NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "engine basert");
	CHECK_CONTAINS(r.out, "fit over 512,2048, metric per-token");
	run(&r, 0, AS_ROOT, (const char *[]){ "check-config", "--format",
	    "json", "--config", "ok.conf", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "\"name\": \"basert\"");
	CHECK_CONTAINS(r.out, "\"fit\": [");
	setenv("BISECTD_CONFIG", "ok.conf", 1);
	run(&r, 0, AS_ROOT, (const char *[]){ "check-config", NULL });
	CHECK_INT(r.status, 0);
	CHECK(strstr(r.err, "loopback") == NULL);
	unsetenv("BISECTD_CONFIG");
}

/* An HTTP server on an address others reach is said to expose what it
 * shows, at check-config; on loopback nothing is said. */
static void
test_http_exposed(void)
{
	static const char *const open_to_all[] = { "0.0.0.0:0", "[::]:0",
	    "192.0.2.7:8088" };
	static const char *const loopback[] = { "127.0.0.1:0", "127.9.0.1:0",
	    "[::1]:0" };
	char text[4096], *base = check_read_file("ok.conf");
	struct result r;

	CHECK(base != NULL);
	for (size_t i = 0; base && i < 3; i++) {
		snprintf(text, sizeof(text), "%s[bisectd]\n\thttp = %s\n",
		    base, open_to_all[i]);
		check_write_file("http.conf", text);
		run(&r, 0, AS_ROOT, (const char *[]){ "-c", "http.conf",
		    "check-config", NULL });
		CHECK_INT(r.status, 0);
		CHECK_CONTAINS(r.err, "warning: bisectd.http: not a loopback "
		    "address");
		snprintf(text, sizeof(text), "%s[bisectd]\n\thttp = %s\n",
		    base, loopback[i]);
		check_write_file("http.conf", text);
		run(&r, 0, AS_ROOT, (const char *[]){ "-c", "http.conf",
		    "check-config", NULL });
		CHECK_INT(r.status, 0);
		CHECK(strstr(r.err, "loopback") == NULL);
	}
	free(base);
}

static void
test_bad_configs(void)
{
	struct result r;

	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "missing.conf",
	    "check-config", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "'missing.conf'");
	CHECK_INT(lines(r.err), 1);

	check_write_file("trunc.conf", "[bisectd]\n\tdatabase = x.db\n"
	    "[engine \"bas");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "trunc.conf",
	    "check-config", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "trunc.conf:3: syntax error");
	CHECK_INT(lines(r.err), 1);

	check_write_file("garbage.conf", "}}}} not a config {{{{\n");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "garbage.conf",
	    "check-config", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "garbage.conf:1:");
	CHECK_INT(lines(r.err), 1);

	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "ok.conf", "versions",
	    "ghost", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "no engine 'ghost'");
}

static void
test_versions_empty(void)
{
	struct result r;

	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "ok.conf", "versions",
	    "basert", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "no releases of basert known yet");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "ok.conf", "versions",
	    "basert", "--format", "json", NULL });
	CHECK_INT(r.status, 0);
	CHECK_STR(r.out, "[]\n");
}

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
	struct result r;
	struct err e = ERR_INIT;
	struct store *holder, *s;
	char *before;
	size_t lb;

	/* Not SQLite. */
	check_write_file("text.db", "These are not the bytes of a SQLite "
	    "database; they are text, long enough to fill the header and "
	    "then some more, so that SQLite reads them and says no.\n");
	write_config("text.conf", "text.db");
	before = check_read_bytes("text.db", &lb);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "text.conf", "versions",
	    "basert", NULL });
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "is not a SQLite database");
	CHECK_CONTAINS(r.err, "text.db");
	CHECK_INT(lines(r.err), 1);
	check_unchanged("text.db", before, lb);
	free(before);

	/* Locked by another writer while it needs migrating. */
	write_config("locked.conf", "locked.db");
	CHECK(store_open_version("locked.db", 0, &holder, &e) == 0);
	CHECK(holder && store_begin(holder, &e) == 0);
	before = check_read_bytes("locked.db", &lb);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "locked.conf", "versions",
	    "basert", NULL });
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "locked by another writer");
	CHECK_CONTAINS(r.err, "locked.db");
	CHECK_INT(lines(r.err), 1);
	store_rollback(holder);
	CHECK_INT(store_schema_version(holder), 0);
	store_close(holder);
	check_unchanged("locked.db", before, lb);
	free(before);

	/* The disk fills during the migration (RLIMIT_FSIZE on the WAL). */
	write_config("full.conf", "full.db");
	CHECK(store_open_version("full.db", 0, &s, &e) == 0);
	store_close(s);
	before = check_read_bytes("full.db", &lb);
	run(&r, 40000, AS_ROOT, (const char *[]){ "-c", "full.conf",
	    "versions", "basert", NULL });
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "full.db");
	CHECK_CONTAINS(r.err, "cannot migrate to schema 1");
	CHECK_INT(lines(r.err), 1);
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
	ctl = "./ctl-copy";
	write_config("ro.conf", "ro/ro.db");
	mkdir("ro", 0755);
	CHECK(store_open_version("ro/ro.db", 0, &s, &e) == 0);
	store_close(s);
	chmod("ro/ro.db", 0444);
	chmod("ro", 0555);
	chmod(".", 0755);
	before = check_read_bytes("ro/ro.db", &lb);
	run(&r, 0, geteuid() == 0 ? AS_NOBODY : AS_ROOT, (const char *[]){
	    "-c", "ro.conf", "versions", "basert", NULL });
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "ro.db");
	CHECK_INT(lines(r.err), 1);
	check_unchanged("ro/ro.db", before, lb);
	free(before);
	chmod("ro", 0755);
}

/*
 * An engine that prints its environment (the fake engine does with
 * FAKE_ENGINE_PRINT_ENV) shows what the runner handed it: the store's
 * stderr tail must hold the configured variable and never the token.
 */
static void
test_secret_env(void)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	char text[2048];
	struct result r;

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = env.db\n\tcache = envcache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"w\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/demo/releases\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\ttoken-env = BISECTD_TEST_TOKEN\n"
	    "\tenv = FAKE_ENGINE_PRINT_ENV=1\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 64,128\n\tgen = 4\n",
	    build, build);
	check_write_file("env.conf", text);
	setenv("BISECTD_TEST_TOKEN", "tok-must-not-leak", 1);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "bench",
	    "basert", "0.2.0", "--reps", "1", NULL });
	unsetenv("BISECTD_TEST_TOKEN");
	CHECK_INT(r.status, 0);
	if (r.status != 0)
		fprintf(stderr, "bench: %s", r.err);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "runs",
	    "basert", "0.2.0", "--format", "json", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "FAKE_ENGINE_PRINT_ENV=1");
	CHECK_CONTAINS(r.out, "BISECTD_RUN_ID=");
	/* Repetitions count from 1, as the progress line does; both clocks
	 * are shown, and which one the analysis reads. */
	CHECK_CONTAINS(r.out, "\"rep\": 1,");
	CHECK(strstr(r.out, "\"rep\": 0,") == NULL);
	CHECK_CONTAINS(r.out, "\"analysis_reads\": \"engine\"");
	CHECK_CONTAINS(r.out, "\"engine_ms\": ");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "runs",
	    "basert", "0.2.0", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "WALL ms   ENGINE ms READS");
	CHECK_CONTAINS(r.out, "READS the one the analysis uses");
	CHECK(strstr(r.out, "    0  run") == NULL);
	CHECK_CONTAINS(r.out, "    1  run     ");
	CHECK(strstr(r.out, "tok-must-not-leak") == NULL);
	CHECK(strstr(r.out, "BISECTD_TEST_TOKEN") == NULL);
	/* The cache, which holds what runs, is the owner's alone. */
	{
		struct stat st;
		mode_t old = umask(022);

		umask(old);
		CHECK_INT(stat("envcache", &st), 0);
		CHECK_INT((int)(st.st_mode & 0777), 0700 & ~old);
	}
}

/* ulimit -f: the write fails with EFBIG and is reported, no SIGXFSZ. */
static void
test_file_size_limit(void)
{
	struct result r;

	write_config("fsize.conf", "fsize.db");
	xfsz_default = 1;
	run(&r, 40000, AS_ROOT, (const char *[]){ "-c", "fsize.conf",
	    "versions", "basert", NULL });
	xfsz_default = 0;
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "fsize.db");
	CHECK_CONTAINS(r.err, strerror(EFBIG));
	CHECK_INT(lines(r.err), 1);
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
	struct result r;
	char *before;
	size_t lb;

	write_config("rd.conf", "rd/rd.db");
	mkdir("rd", 0755);
	CHECK(store_open("rd/rd.db", &s, &e) == 0);
	chmod("rd/rd.db", 0644);
	chmod("rd/rd.db-wal", 0644);
	chmod("rd/rd.db-shm", 0644);
	chmod("rd", 0555);
	before = check_read_bytes("rd/rd.db", &lb);
	run(&r, 0, geteuid() == 0 ? AS_NOBODY : AS_ROOT, (const char *[]){
	    "-c", "rd.conf", "status", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "daemon: not running");
	CHECK_CONTAINS(r.out, "(the queue is empty)");
	CHECK_CONTAINS(r.out, "daemon: not running (no socket at ");
	if (r.status != 0)
		fprintf(stderr, "status: %s", r.err);
	run(&r, 0, geteuid() == 0 ? AS_NOBODY : AS_ROOT, (const char *[]){
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
	struct result r;
	int64_t eid = 0, first, resumed_id;
	int resumed;

	write_config("jobs.conf", "jobs.db");
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

	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "status",
	    NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "jobs: newest 10 of 13 (--limit N or --all");
	/* Newest first: the last queued fetch above the first. */
	CHECK(strstr(r.out, "    13  ") && strstr(r.out, "    12  ") &&
	    strstr(r.out, "    13  ") < strstr(r.out, "    12  "));
	CHECK(strstr(r.out, "     1  bisect") == NULL);
	CHECK_CONTAINS(r.out, "fetch   basert     queued");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "status",
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
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "status",
	    "--limit", "2", "--format", "json", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "\"jobs_total\": 13");
	CHECK_CONTAINS(r.out, "\"interrupted\": true");
	/* A job's arguments are JSON in the JSON, not a string of it. */
	CHECK_CONTAINS(r.out, "\"args\": {");
	CHECK(strstr(r.out, "\"args\": \"") == NULL);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "status",
	    "--limit", "0", NULL });
	CHECK_INT(r.status, 2);

	/* Nothing ended 90 days ago; bad ages are usage errors. */
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "jobs",
	    "prune", "--before", "90d", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "pruned 0 jobs");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "jobs",
	    "prune", "--before", "soon", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "--before: expected an age");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "jobs",
	    "prune", NULL });
	CHECK_INT(r.status, 2);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "jobs",
	    "list", "--before", "1d", NULL });
	CHECK_INT(r.status, 2);
	/* A second later everything that ended is older than 0 s; the
	 * queued and the interrupted jobs stay. */
	check_sleep_ms(1100);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "jobs",
	    "prune", "--before", "0s", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "pruned 3 jobs");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "jobs.conf", "status",
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

/* Run the daemon's binary instead of bisectctl. */
static void
run_daemon(struct result *r, const char *const *args)
{
	const char *saved = ctl;

	ctl = getenv("BISECTD");
	run(r, 0, AS_ROOT, args);
	ctl = saved;
}

/*
 * What would fail hours later is caught by check-config and bisectd -n,
 * every problem in one run, each as FILE:LINE: key: what was expected,
 * in the file's order: a weights hash that does not match (hashed), a
 * weights path or a dir: folder that does not exist, a command without
 * {bin}, a regex that does not compile or has no group, a fit length
 * that is no prompt length (named at the fit line).
 */
static void
test_check_config_problems(void)
{
	static const char *const want[] = {
		"p.conf:5: weights.w.sha256: expected the hash of '",
		"p.conf:7: weights.gone.path: expected an existing file or "
		    "folder, but '",
		"p.conf:9: engine.a.source: expected an existing folder of "
		    "release archives, but '",
		"p.conf:12: engine.a.command: expected {bin}",
		"p.conf:13: engine.a.parser: regex 't=([0-9]+' does not compile",
		"p.conf:15: engine.a.fit: 4096 is not one of the prompt lengths",
		"p.conf:21: engine.b.parser: regex 't=[0-9]+' has no capture "
		    "group",
	};
	struct result r;
	const char *at;

	check_write_file("p.conf",
	    "[bisectd]\n"					/* 1 */
	    "\tdatabase = p.db\n"				/* 2 */
	    "[weights \"w\"]\n"				/* 3 */
	    "\tpath = w.bin\n"				/* 4 */
	    "\tsha256 = 00000000000000000000000000000000"
	    "00000000000000000000000000000000\n"		/* 5 */
	    "[weights \"gone\"]\n"				/* 6 */
	    "\tpath = gone.bin\n"				/* 7 */
	    "[engine \"a\"]\n"				/* 8 */
	    "\tsource = dir:no-such-folder\n"			/* 9 */
	    "\tasset = a-{version}.tgz\n"			/* 10 */
	    "\tweights = w\n"					/* 11 */
	    "\tcommand = /usr/bin/true -p {prompt}\n"		/* 12 */
	    "\tparser = \"regex:t=([0-9]+\"\n"		/* 13 */
	    "\tprompts = 128,512\n"				/* 14 */
	    "\tfit = 128,4096\n"				/* 15 */
	    "[engine \"b\"]\n"				/* 16 */
	    "\tsource = dir:releases\n"			/* 17 */
	    "\tasset = b-{version}.tgz\n"			/* 18 */
	    "\tweights = gone\n"				/* 19 */
	    "\tcommand = {bin}/x -p {prompt}\n"		/* 20 */
	    "\tparser = \"regex:t=[0-9]+\"\n");		/* 21 */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0)
			run(&r, 0, AS_ROOT, (const char *[]){ "-c", "p.conf",
			    "check-config", NULL });
		else
			run_daemon(&r, (const char *[]){ "-n", "-c", "p.conf",
			    NULL });
		CHECK_INT(r.status, 2);
		CHECK_INT(lines(r.err), 7);
		at = r.err;
		for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
			const char *hit = strstr(at, want[i]);

			CHECK_CONTAINS(at, want[i]);
			if (hit != NULL)
				at = hit;
		}
		/* The hash found is named: sha256 of "weights". */
		CHECK_CONTAINS(r.err, "which is 9a129038d9a00aed");
	}

	/* A single backslash: the line, the key and how to write it. */
	check_write_file("esc.conf",
	    "[bisectd]\n\tdatabase = p.db\n"
	    "[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"e\"]\n\tsource = dir:releases\n"
	    "\tasset = e-{version}.tgz\n\tcommand = {bin}/x\n"
	    "\tparser = \"regex:t=(\\d+)\"\n");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "esc.conf",
	    "check-config", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "esc.conf:9: engine.e.parser: invalid escape "
	    "'\\d' in the value: write a backslash as '\\\\'");
	CHECK_INT(lines(r.err), 1);

	/* The commands that need only [bisectd] run on a broken file. */
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "p.conf", "status",
	    NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "daemon: not running");
	CHECK_CONTAINS(r.err, "warning: p.conf:13: engine.a.parser");
	CHECK_CONTAINS(r.err, "warning: 'p.conf' has errors; status reads its "
	    "[bisectd] section alone");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "esc.conf", "alerts",
	    NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.err, "warning: esc.conf:9:");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "esc.conf", "cancel", "7",
	    NULL });
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "no job 7");
	/* A broken [bisectd] itself locks out as before. */
	check_write_file("core.conf", "[bisectd]\n\tdatabase = \"a\\qb\"\n");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "core.conf", "status",
	    NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "core.conf:2: bisectd.database: invalid escape");
}

/* bisectd's own options: --help is help, not an unknown option. */
static void
test_daemon_options(void)
{
	struct result r;

	run_daemon(&r, (const char *[]){ "--help", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "usage: bisectd");
	CHECK_CONTAINS(r.out, "2  usage error, or a configuration with "
	    "problems");
	run_daemon(&r, (const char *[]){ "--version", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "bisectd ");
	run_daemon(&r, (const char *[]){ "--bogus", NULL });
	CHECK_INT(r.status, 2);
	run_daemon(&r, (const char *[]){ "--check", "-c", "ok.conf", NULL });
	CHECK_INT(r.status, 0);
}

/*
 * A --format a command cannot print is refused (exit 2), not silently
 * replaced by text; a range given backwards is a usage error too.
 */
static void
test_usage_errors(void)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	char text[2048];
	struct result r;

	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "ok.conf", "versions",
	    "basert", "--format", "csv", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "versions does not take --format csv");
	CHECK_STR(r.out, "");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "ok.conf", "status",
	    "--format", "markdown", NULL });
	CHECK_INT(r.status, 2);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "ok.conf", "gc",
	    "--format", "json", NULL });
	CHECK_INT(r.status, 2);

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = rev.db\n\tcache = revcache\n"
	    "[weights \"w\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/demo/releases\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -p {prompt}\n", build, build);
	check_write_file("rev.conf", text);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "versions",
	    "basert", "--refresh", NULL });
	CHECK_INT(r.status, 0);
	/* A dir: source's first fetch unpacks from its folder: nothing
	 * came from a cache; the second finds it unpacked. */
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "fetch",
	    "basert", "0.2.0", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "(unpacked from the release folder)");
	CHECK(strstr(r.out, "cache)") == NULL);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "fetch",
	    "basert", "0.2.0", NULL });
	CHECK_CONTAINS(r.out, "(already unpacked)");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "report",
	    "basert", "0.2.6..0.2.0", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "'0.2.6' must be an older release than '0.2.0'");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "bisect",
	    "basert", "0.2.6..0.2.0", NULL });
	CHECK_INT(r.status, 2);
	CHECK(strstr(r.out, "queued") == NULL);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "report",
	    "basert", "0.2.6", NULL });
	CHECK_INT(r.status, 2);
	/* A tag the source does not have is the user's mistake too, after
	 * the source was asked once more. */
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "bisect",
	    "--now", "basert", "0.2.0..0.2.99", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "no release '0.2.99' is known");
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "report",
	    "basert", "0.2.99..0.2.6", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "no release '0.2.99' is known");

	/* Weights that do not match their hash: said once, naming the
	 * section. */
	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = rev.db\n\tcache = revcache\n"
	    "[weights \"w\"]\n\tpath = %s/demo/weights.bin\n\tsha256 = "
	    "%064d\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/demo/releases\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -p {prompt}\n", build, 0,
	    build);
	check_write_file("hash.conf", text);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "hash.conf", "bench",
	    "basert", "0.2.0", NULL });
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "bisectctl: [weights \"w\"]: weights '");
	CHECK_CONTAINS(r.err, "' do not match: sha256 is ");
	CHECK(strstr(r.err, "weights 'w'") == NULL);
}

/* Start bisectctl -c conf with args in the background, stdout and stderr
 * to err_file; its pid. */
static pid_t
start_ctl(const char *conf, const char *args, const char *err_file)
{
	char cmd[4096];
	pid_t pid;

	snprintf(cmd, sizeof(cmd), "exec %s -c %s %s >%s 2>&1", ctl, conf,
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
	CHECK_INT(check_ctl_run(ctl, "-c int.conf runs hang 1.0.0", &out), 0);
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
	CHECK_INT(check_ctl_run(ctl, "-c int.conf bisect --now basert "
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
		check_ctl_run(ctl, "-c fast.conf status", &out);
		held = out && strstr(out, "benchmark lock: held by pid ") &&
		    strstr(out, "(bisectctl bench hang 1.0.0)");
		if (!held)
			check_sleep_ms(50);
	}
	CHECK(held);
	free(out);
	CHECK_INT(check_ctl_run(ctl, "-c fast.conf --format json status",
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
	CHECK_INT(check_ctl_run(ctl, "-c fast.conf status", &out), 0);
	CHECK_CONTAINS(out, "benchmark lock: free, ");
	free(out);
	/* bench says what its figures are of, and the release's fit. */
	CHECK_INT(check_ctl_run(ctl, "-c fast.conf bench fast 1.0.0 --reps 3",
	    &out), 0);
	CHECK_CONTAINS(out, "fast 1.0.0, weights w (sha256 ");
	CHECK_CONTAINS(out, "), machine ");
	CHECK_CONTAINS(out, "\nfit over 512,2048: prefill ");
	CHECK_CONTAINS(out, " ms per token [");
	free(out);
}

/*
 * What bash offers after the words typed: the installed completion
 * script run by bash itself on COMP_WORDS (the last word the partial
 * one), one candidate a line in *out.
 */
static int
complete(const char *script, const char *words, char **out)
{
	char text[4096];

	if (snprintf(text, sizeof(text), "set -e\nsource '%s'\n"
	    "COMP_WORDS=('%s' %s)\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
	    "_bisectctl\nprintf '%%s\\n' \"${COMPREPLY[@]}\"\n", script, ctl,
	    words) >= (int)sizeof(text))
		abort();	/* paths of the test's own beyond its buffer */
	check_write_file("complete.sh", text);
	return check_run("bash complete.sh", out);
}

/*
 * cmake --install puts the bash completion where bash-completion looks,
 * and it completes commands, options, option values, engine names and
 * versions from the store (env.conf's, filled by test_secret_env).
 */
static void
test_completion(void)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	char cmd[4096], script[4200], *out = NULL;

	snprintf(cmd, sizeof(cmd), "cmake --install '%s' --prefix "
	    "\"$PWD/inst\" >/dev/null", build);
	CHECK_INT(check_run(cmd, NULL), 0);
	snprintf(script, sizeof(script),
	    "inst/share/bash-completion/completions/bisectctl");
	CHECK(access(script, R_OK) == 0);
	CHECK_INT(complete(script, "ver", &out), 0);
	CHECK_STR(out, "versions\n");
	free(out);
	CHECK_INT(complete(script, "re", &out), 0);
	CHECK_STR(out, "reparse\nreport\n");
	free(out);
	CHECK_INT(complete(script, "report --f", &out), 0);
	CHECK_STR(out, "--format\n--for-upstream\n");
	free(out);
	CHECK_INT(complete(script, "status --format ''", &out), 0);
	CHECK_STR(out, "text\njson\n");
	free(out);
	CHECK_INT(complete(script, "-c env.conf runs b", &out), 0);
	CHECK_STR(out, "basert\n");
	free(out);
	CHECK_INT(complete(script, "-c env.conf fetch basert 0.2.", &out), 0);
	CHECK_STR(out, "0.2.0\n0.2.1\n0.2.2\n0.2.3\n0.2.4\n0.2.5\n0.2.6\n");
	free(out);
	CHECK_INT(complete(script, "--config=env.conf bisect --all basert "
	    "0.2.3..0.2.", &out), 0);
	CHECK_STR(out, "0.2.3..0.2.0\n0.2.3..0.2.1\n0.2.3..0.2.2\n"
	    "0.2.3..0.2.3\n0.2.3..0.2.4\n0.2.3..0.2.5\n0.2.3..0.2.6\n");
	free(out);
	/* A broken configuration completes nothing, and says nothing. */
	check_write_file("broken.conf", "[engine \"x\"\n");
	CHECK_INT(complete(script, "-c broken.conf fetch ''", &out), 0);
	CHECK_STR(out, "\n");
	free(out);
}

/* bisect --dry-run: the releases and the exact first commands, and
 * nothing fetched or run. */
static void
test_dry_run(void)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	struct result r;
	char line[8192], cwd[4096];

	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "bisect",
	    "--dry-run", "--threshold", "10%", "basert", "0.2.0..0.2.6",
	    NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "bisect basert 0.2.0..0.2.6: metric per-token, "
	    "threshold 10%; 7 releases (nothing is fetched or run)");
	CHECK_CONTAINS(r.out, ", the good end\n");
	CHECK_CONTAINS(r.out, "  0.2.3                listed\n");
	CHECK_CONTAINS(r.out, "  0.2.6                listed, the bad end\n");
	/* As a run executes it: the engine's env before the command. */
	snprintf(line, sizeof(line), "  0.2.6 pp128: env FAKE_ENGINE_PRINT_ENV=1 "
	    "%s/envcache/releases/basert/0.2.6/bin/fake-engine -m "
	    "%s/demo/weights.bin -p 128 -n 0 -t 1 -r 1 -o json\n",
	    getcwd(cwd, sizeof(cwd)) ? cwd : "?", build);
	CHECK_CONTAINS(r.out, line);
	CHECK_CONTAINS(r.out, "about 3 probes");
	CHECK(access("envcache/releases/basert/0.2.6", F_OK) < 0);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "runs",
	    "basert", "0.2.6", NULL });
	CHECK(strstr(r.out, "pp128") == NULL);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "bisect",
	    "--dry-run", "--now", "basert", "0.2.0..0.2.6", NULL });
	CHECK_INT(r.status, 2);
}

/*
 * The README's command table and bisectctl's --help agree: every
 * command --help lists has the row "| `NAME USAGE` |" with the usage
 * its own --help prints, and the table has no other command.
 */
static void
test_readme_agrees(void)
{
	const char *src = check_source_dir();
	char path[4096], *readme, *p, *table;
	struct result help, one;
	int commands = 0;

	snprintf(path, sizeof(path), "%s/README.md", src);
	readme = check_read_file(path);
	CHECK(readme != NULL);
	if (readme == NULL)
		return;
	table = strstr(readme, "| command | does |");
	CHECK(table != NULL);
	if (table && (p = strstr(table, "\n\n")) != NULL)
		p[1] = '\0';
	/* Markdown writes a "|" inside a cell as "\|". */
	for (p = table; p && *p; p++)
		if (p[0] == '\\' && p[1] == '|')
			memmove(p, p + 1, strlen(p));
	run(&help, 0, AS_ROOT, (const char *[]){ "--help", NULL });
	p = strstr(help.out, "commands:\n");
	CHECK(p != NULL);
	for (p = p ? p + 10 : NULL; p && p[0] == ' ' && p[1] == ' '; ) {
		char name[64], row[512], *u;

		if (sscanf(p, " %63s", name) != 1)
			break;
		run(&one, 0, AS_ROOT, (const char *[]){ name, "--help", NULL });
		CHECK_INT(one.status, 0);
		/* "usage: bisectctl [-c FILE] NAME USAGE\n" */
		u = strstr(one.out, "] ");
		if (u) {
			u[strcspn(u, "\n")] = '\0';
			while (u[0] && u[strlen(u) - 1] == ' ')
				u[strlen(u) - 1] = '\0';
			snprintf(row, sizeof(row), "| `%s` |", u + 2);
			if (table == NULL || strstr(table, row) == NULL)
				fprintf(stderr, "README lacks the row %s\n",
				    row);
			CHECK(table != NULL && strstr(table, row) != NULL);
		}
		commands++;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	CHECK(commands >= 14);
	/* No row for a command --help does not list. */
	for (p = table; p && (p = strstr(p, "\n| `")) != NULL; p += 4) {
		char name[64], want[80];

		if (sscanf(p + 4, "%63[a-z-]", name) != 1)
			continue;
		snprintf(want, sizeof(want), "  %s ", name);
		CHECK_CONTAINS(help.out, want);
	}
	free(readme);
}

/* Occurrences of sub in s. */
static int
count_of(const char *s, const char *sub)
{
	int n = 0;

	for (; (s = strstr(s, sub)) != NULL; s += strlen(sub))
		n++;
	return n;
}

/*
 * A command whose binary is missing fails at spawn: the cell fails at
 * once, one stored run per cell instead of one per warm-up and
 * repetition, each saying why.
 */
static void
test_spawn_failure(void)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	char text[2048];
	struct result r;

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = sp.db\n\tcache = spcache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"w\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/demo/releases\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/no-such-engine -p {prompt} -n {gen}\n"
	    "\tprompts = 64,128\n\tgen = 4\n\twarmup = 1\n", build, build);
	check_write_file("sp.conf", text);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "sp.conf", "bench",
	    "basert", "0.2.0", "--reps", "3", NULL });
	CHECK_INT(r.status, 1);
	run(&r, 0, AS_ROOT, (const char *[]){ "-c", "sp.conf", "runs",
	    "basert", "0.2.0", "--format", "json", NULL });
	CHECK_INT(r.status, 0);
	/* Three cells (pp64, pp128, tg4); 3 reps after 1 warm-up would
	 * be 12 runs. */
	CHECK_INT(count_of(r.out, "\"failure\": \"spawn\""), 3);
	CHECK_INT(count_of(r.out, "\"id\": "), 3);
	CHECK_CONTAINS(r.out, "no-such-engine");
}

int
main(void)
{
	const char *dir;

	check_env(&ctl, NULL, NULL);
	dir = check_tmpdir("cli");
	chmod(dir, 0755);
	write_config("ok.conf", "state/bisectd.db");
	check_write_file("w.bin", "weights");
	mkdir("releases", 0755);
	CHECK_CASE(test_help_and_usage);
	CHECK_CASE(test_check_config);
	CHECK_CASE(test_http_exposed);
	CHECK_CASE(test_bad_configs);
	CHECK_CASE(test_versions_empty);
	CHECK_CASE(test_bad_databases);
	CHECK_CASE(test_secret_env);
	CHECK_CASE(test_file_size_limit);
	CHECK_CASE(test_read_only_status);
	CHECK_CASE(test_status_jobs_and_prune);
	CHECK_CASE(test_check_config_problems);
	CHECK_CASE(test_daemon_options);
	CHECK_CASE(test_usage_errors);
	CHECK_CASE(test_interrupt);
	CHECK_CASE(test_machine_lock);
	CHECK_CASE(test_completion);
	CHECK_CASE(test_dry_run);
	CHECK_CASE(test_readme_agrees);
	CHECK_CASE(test_spawn_failure);
	return check_done();
}
