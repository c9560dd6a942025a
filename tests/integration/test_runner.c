/*
 * test_runner.c: the runner against real processes: small shell scripts
 * written into the test's directory, and this test binary re-executed in
 * a helper mode (spin, alloc, flood, info) where exact behaviour matters.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "check.h"
#include "common/err.h"
#include "bisectd/process/cgroup.h"
#include "bisectd/process/runner.h"
#include "common/strv.h"
#include "bisectd/process/template.h"

#define MS 1000000LL

static char self[4096];		/* this binary, for helper modes */
static const char *dir;		/* the test's temporary directory */

/* ---- helper modes, run as children ---- */

static int64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int
helper(int argc, char **argv)
{
	const char *mode = argv[1];
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (strcmp(mode, "spin") == 0) {	/* n ms of CPU time */
		volatile uint64_t x = 0;
		int64_t end = cpu_ns() + n * MS;
		int i;

		/* The clock is a system call: look at it rarely, so the
		 * time is user time. */
		while (cpu_ns() < end)
			for (i = 0; i < 1000000; i++)
				x++;
		return 0;
	}
	if (strcmp(mode, "alloc") == 0) {	/* touch n MiB */
		char *p = malloc((size_t)n << 20);

		if (p == NULL)
			return 2;
		memset(p, 1, (size_t)n << 20);
		printf("%d\n", p[n]);
		free(p);
		return 0;
	}
	if (strcmp(mode, "parent") == 0) {	/* a run, then wait to be killed */
		const char *argv_[] = { "sleep", "60", NULL };
		struct child_spec s = CHILD_SPEC_INIT;
		struct run_proc *p;
		struct err e = ERR_INIT;

		s.argv = argv_;
		s.timeout_ms = 120000;
		if (run_start(&s, &p, &e) < 0)
			return 2;
		printf("%d\n", (int)run_proc_pid(p));
		fflush(stdout);
		for (;;)
			pause();
	}
	if (strcmp(mode, "flood") == 0) {	/* n bytes on each stream */
		static char xs[65536], ys[65536];
		long left;
		size_t k;

		memset(xs, 'x', sizeof(xs));
		memset(ys, 'y', sizeof(ys));
		for (left = n; left > 0; left -= (long)k) {
			k = left < (long)sizeof(xs) ? (size_t)left : sizeof(xs);
			if (fwrite(xs, 1, k, stdout) != k ||
			    fwrite(ys, 1, k, stderr) != k)
				return 2;
		}
		fputs("END\n", stderr);
		return 0;
	}
	if (strcmp(mode, "info") == 0) {
		struct sigaction sa;
		struct rlimit rl;
		char link[256];
		ssize_t len;

		sigaction(SIGPIPE, NULL, &sa);
		getrlimit(RLIMIT_CORE, &rl);
		len = readlink("/proc/self/fd/0", link, sizeof(link) - 1);
		link[len < 0 ? 0 : len] = '\0';
		printf("leader=%d\n", getpgrp() == getpid());
		printf("sigpipe_ignored=%d\n", sa.sa_handler == SIG_IGN);
		printf("core=%lu\n", (unsigned long)rl.rlim_cur);
		printf("stdin=%s\n", link);
		printf("marker=%s\n", getenv("BISECTD_RUN_ID") ?
		    getenv("BISECTD_RUN_ID") : "");
		return 0;
	}
	if (strcmp(mode, "term-exit") == 0) {	/* a server: wait for TERM */
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_BLOCK, &set, NULL);
		puts("ready");
		fflush(stdout);
		sigwait(&set, &sig);
		fputs("got TERM\n", stderr);
		return 7;
	}
	fprintf(stderr, "unknown helper mode '%s'\n", mode);
	return 99;
}

/* ---- utilities ---- */

static void
script(const char *name, const char *body)
{
	char text[4096];

	snprintf(text, sizeof(text), "#!/bin/sh\n%s\n", body);
	check_write_file(name, text);
	if (chmod(name, 0755) < 0) {
		perror(name);
		exit(99);
	}
}

static int
run(const char *const *argv, int64_t timeout_ms, struct run_result *r)
{
	struct child_spec s = CHILD_SPEC_INIT;
	struct err e = ERR_INIT;
	int rc;

	s.argv = argv;
	s.timeout_ms = timeout_ms;
	s.grace_ms = 300;
	rc = run_child(&s, r, &e);
	if (rc < 0)
		fprintf(stderr, "run_child: %s\n", e.msg);
	return rc;
}

static pid_t
read_pid(const char *path)
{
	char *s = check_read_file(path);
	pid_t pid = s ? (pid_t)atol(s) : 0;

	free(s);
	return pid;
}

/* 1 when pid no longer exists (killed and reaped). */
static int
gone(pid_t pid)
{
	return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	while (d != NULL && (de = readdir(d)) != NULL)
		n++;
	if (d != NULL)
		closedir(d);
	return n;
}

/* Our children that are not reaped, from /proc/self/task/ * /children. */
static int
count_children(void)
{
	char path[300], *s, *p, *end;
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children",
		    de->d_name);
		if ((s = check_read_file(path)) == NULL)
			continue;
		for (p = s; strtol(p, &end, 10), end != p; p = end)
			n++;
		free(s);
	}
	if (d != NULL)
		closedir(d);
	return n;
}

/* ---- tests ---- */

static void
test_exit_codes(void)
{
	const char *ok[] = { "./ok.sh", NULL };
	const char *three[] = { "./three.sh", NULL };
	struct run_result r;
	char line[256];

	script("ok.sh", "echo hello; echo warn >&2; exit 0");
	script("three.sh", "echo out; echo 'it failed' >&2; exit 3");

	CHECK_INT(run(ok, 0, &r), 0);
	CHECK_INT(r.reason, RUN_OK);
	CHECK_INT(r.exit_code, 0);
	CHECK_STR(r.out.data, "hello\n");
	CHECK_STR(r.errtail.data, "warn\n");
	CHECK_INT(r.out_truncated, 0);
	CHECK(r.wall_ns > 0 && r.wall_ns < 10000 * MS);
	CHECK(r.pid > 0);
	CHECK_STR(run_describe(&r, line, sizeof(line)),
	    "exited with status 0");
	run_result_release(&r);

	CHECK_INT(run(three, 0, &r), 0);
	CHECK_INT(r.reason, RUN_EXIT);
	CHECK_INT(r.exit_code, 3);
	CHECK_INT(r.signal, 0);
	CHECK_STR(r.errtail.data, "it failed\n");
	CHECK_STR(run_reason_name(r.reason), "exit");
	CHECK_STR(run_describe(&r, line, sizeof(line)),
	    "exited with status 3");
	run_result_release(&r);
}

static void
test_signal_and_core(void)
{
	const char *segv[] = { "./segv.sh", NULL };
	const char *info[] = { self, "info", NULL };
	struct run_result r;
	char line[256];
	DIR *d;
	struct dirent *de;
	int cores = 0;

	script("segv.sh", "echo before; kill -SEGV $$; echo after");
	CHECK_INT(run(segv, 0, &r), 0);
	CHECK_INT(r.reason, RUN_SIGNAL);
	CHECK_INT(r.signal, SIGSEGV);
	CHECK_INT(r.exit_code, -1);
	CHECK_STR(r.out.data, "before\n");
	CHECK_STR(run_reason_name(r.reason), "signal");
	CHECK_CONTAINS(run_describe(&r, line, sizeof(line)),
	    "killed by SIGSEGV");
	run_result_release(&r);
	/* No core file (RLIMIT_CORE 0 in the child). */
	d = opendir(".");
	while (d != NULL && (de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "core", 4) == 0)
			cores++;
	if (d != NULL)
		closedir(d);
	CHECK_INT(cores, 0);

	/* The child: its own process group, core 0, stdin from /dev/null,
	 * default dispositions although we ignore SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	CHECK_INT(run(info, 0, &r), 0);
	CHECK_INT(r.reason, RUN_OK);
	CHECK_CONTAINS(r.out.data, "leader=1\n");
	CHECK_CONTAINS(r.out.data, "sigpipe_ignored=0\n");
	CHECK_CONTAINS(r.out.data, "core=0\n");
	CHECK_CONTAINS(r.out.data, "stdin=/dev/null\n");
	CHECK_CONTAINS(r.out.data, "marker=");
	CHECK(strstr(r.out.data, "marker=\n") == NULL);
	run_result_release(&r);
	signal(SIGPIPE, SIG_DFL);
}

static void
test_timeout(void)
{
	const char *hang[] = { "./hang.sh", NULL };
	const char *stubborn[] = { "./stubborn.sh", NULL };
	struct run_result r;
	char line[256];

	/* Obeys SIGTERM: ends at the timeout. */
	script("hang.sh", "echo started; exec sleep 1000");
	CHECK_INT(run(hang, 300, &r), 0);
	CHECK_INT(r.reason, RUN_TIMEOUT);
	CHECK_INT(r.timed_out, 1);
	CHECK_INT(r.signal, SIGTERM);
	CHECK(r.wall_ns >= 300 * MS);
	CHECK(r.wall_ns < 300 * MS + 300 * MS + 3000 * MS);
	CHECK_STR(r.out.data, "started\n");
	CHECK_STR(run_reason_name(r.reason), "timeout");
	CHECK_CONTAINS(run_describe(&r, line, sizeof(line)),
	    "timed out after");
	run_result_release(&r);

	/* Ignores SIGTERM: SIGKILL after the grace period. */
	script("stubborn.sh", "trap '' TERM; echo $$ > stubborn.pid; "
	    "while :; do sleep 0.05; done");
	CHECK_INT(run(stubborn, 300, &r), 0);
	CHECK_INT(r.reason, RUN_TIMEOUT);
	CHECK_INT(r.signal, SIGKILL);
	CHECK(r.wall_ns >= 600 * MS);
	CHECK(r.wall_ns < 600 * MS + 3000 * MS);
	CHECK(gone(read_pid("stubborn.pid")));
	run_result_release(&r);
}

static atomic_int stop_flag;

static void *
set_stop_later(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	atomic_store(&stop_flag, 1);
	return NULL;
}

/* A stop flag set while a child runs (Ctrl-C in bisectctl) ends the
 * child within the poll's 100 ms and the grace, not at its own end or
 * the timeout; with and without a pidfd. */
static void
test_stop_flag(void)
{
	static const unsigned flags[] = { 0, RUN_NO_PIDFD };
	const char *hang[] = { "./hang.sh", NULL };

	script("hang.sh", "echo started; exec sleep 1000");
	for (size_t i = 0; i < 2; i++) {
		struct child_spec s = CHILD_SPEC_INIT;
		struct err e = ERR_INIT;
		struct run_result r;
		pthread_t th;

		atomic_store(&stop_flag, 0);
		s.argv = hang;
		s.timeout_ms = 60000;
		s.grace_ms = 300;
		s.flags = flags[i];
		s.stop = &stop_flag;
		CHECK_INT(pthread_create(&th, NULL, set_stop_later, NULL), 0);
		CHECK_INT(run_child(&s, &r, &e), 0);
		pthread_join(th, NULL);
		CHECK_INT(r.stopped, 1);
		CHECK_INT(r.timed_out, 0);
		CHECK(r.wall_ns >= 200 * MS && r.wall_ns < 5000 * MS);
		CHECK_STR(r.out.data, "started\n");
		run_result_release(&r);
	}
}

/* A grandchild that leaves the group with setsid, and a nested one. */
static void
check_escapees(enum run_isolation iso, unsigned flags)
{
	const char *esc[] = { "./escape.sh", NULL };
	struct child_spec s = CHILD_SPEC_INIT;
	struct err e = ERR_INIT;
	struct run_result r;
	pid_t p1, p2, p3;

	unlink("g1.pid");
	unlink("g2.pid");
	unlink("g3.pid");
	script("escape.sh",
	    "setsid sleep 1000 &\n"
	    "echo $! > g1.pid\n"
	    "setsid sh -c 'sleep 1000 & echo $! > g2.pid; wait' &\n"
	    "sleep 1000 &\n"
	    "echo $! > g3.pid\n"
	    "while [ ! -s g2.pid ]; do sleep 0.01; done\n"
	    "echo done");
	s.argv = esc;
	s.timeout_ms = 10000;
	s.grace_ms = 300;
	s.isolation = iso;
	s.flags = flags;
	CHECK_INT(run_child(&s, &r, &e), 0);
	CHECK_INT(r.reason, RUN_OK);
	CHECK_INT(r.isolation, iso);
	/* The grandchildren held stdout open: the run still ended. */
	CHECK(r.wall_ns < 5000 * MS);
	CHECK_STR(r.out.data, "done\n");
	CHECK(r.leftovers >= 2);
	p1 = read_pid("g1.pid");
	p2 = read_pid("g2.pid");
	p3 = read_pid("g3.pid");
	CHECK(p1 > 0 && p2 > 0 && p3 > 0);
	CHECK(gone(p1));
	CHECK(gone(p2));
	CHECK(gone(p3));
	CHECK_INT(count_children(), 0);
	run_result_release(&r);
}

static void
test_escapees(void)
{
	char why[256];

	check_escapees(RUN_ISOLATE_SUBREAPER, 0);
	if (cgroup_available(NULL, 0, why, sizeof(why))) {
		check_escapees(RUN_ISOLATE_CGROUP, 0);
		check_escapees(RUN_ISOLATE_CGROUP, RUN_NO_CLONE3);
		check_escapees(RUN_ISOLATE_CGROUP, RUN_NO_CLONE_VM);
	} else
		fprintf(stderr, "note: cgroup path not tested: %s\n", why);
}

/*
 * A run over its memory cap is killed inside its cgroup and says so:
 * reason oom, and a description naming the cap.  Only where runs get
 * cgroups with the memory controller.
 */
static void
test_memory_cap(void)
{
	const char *alloc[] = { self, "alloc", "512", NULL };
	struct child_spec s = CHILD_SPEC_INIT;
	struct err e = ERR_INIT;
	struct run_result r;
	char why[256], text[512];

	if (!cgroup_available(NULL, 0, why, sizeof(why))) {
		fprintf(stderr, "note: memory cap not tested (runs get no "
		    "cgroup here): %s\n", why);
		return;
	}
	s.argv = alloc;
	s.timeout_ms = 60000;
	s.isolation = RUN_ISOLATE_CGROUP;
	s.memory_max = (uint64_t)64 << 20;
	CHECK_INT(run_child(&s, &r, &e), 0);
	if (r.memory_max == 0) {
		fprintf(stderr, "note: memory cap not tested (no memory "
		    "controller for our cgroup's children)\n");
		run_result_release(&r);
		return;
	}
	CHECK_INT(r.reason, RUN_OOM);
	CHECK_STR(run_reason_name(r.reason), "oom");
	CHECK_CONTAINS(run_describe(&r, text, sizeof(text)), "64 MiB");
	run_result_release(&r);
	/* The same cgroup, kept for the next run, caps nothing then. */
	s.memory_max = 0;
	CHECK_INT(run_child(&s, &r, &e), 0);
	CHECK_INT(r.reason, RUN_OK);
	run_result_release(&r);
}

static void
test_flood(void)
{
	const char *flood[] = { self, "flood", "3000000", NULL };
	struct child_spec s = CHILD_SPEC_INIT;
	struct err e = ERR_INIT;
	struct run_result r;
	size_t i;
	int all_x = 1;

	s.argv = flood;
	s.timeout_ms = 30000;
	s.stdout_max = 1000;
	s.stderr_max = 500;
	CHECK_INT(run_child(&s, &r, &e), 0);
	CHECK_INT(r.reason, RUN_OK);
	CHECK_INT(r.out.len, 1000);
	CHECK_INT(r.out_bytes, 3000000);
	CHECK_INT(r.out_truncated, 1);
	for (i = 0; i < r.out.len; i++)
		all_x &= r.out.data[i] == 'x';
	CHECK(all_x);
	/* stderr keeps its tail: the end of the y's and "END". */
	CHECK_INT(r.errtail.len, 500);
	CHECK_INT(r.err_bytes, 3000004);
	CHECK_INT(r.err_truncated, 1);
	CHECK(r.errtail.len == 500 &&
	    strcmp(r.errtail.data + 496, "END\n") == 0);
	CHECK(r.errtail.len == 500 && r.errtail.data[0] == 'y');
	run_result_release(&r);
}

static void
test_spawn_failures(void)
{
	const char *missing[] = { "no-such-program-bisectd", NULL };
	const char *badpath[] = { "./nonexistent/bench", NULL };
	const char *noexec[] = { "./noexec.sh", NULL };
	const char *ok[] = { "./ok.sh", NULL };
	struct child_spec s = CHILD_SPEC_INIT;
	struct err e = ERR_INIT;
	struct run_result r;
	char line[600];

	CHECK_INT(run(missing, 0, &r), 0);
	CHECK_INT(r.reason, RUN_SPAWN);
	CHECK_INT(r.spawn_errno, ENOENT);
	CHECK_CONTAINS(r.detail, "'no-such-program-bisectd'");
	CHECK_STR(run_reason_name(r.reason), "spawn");
	CHECK_CONTAINS(run_describe(&r, line, sizeof(line)), "cannot run");
	run_result_release(&r);

	/* A path: the exec failure comes back through the pipe. */
	CHECK_INT(run(badpath, 0, &r), 0);
	CHECK_INT(r.reason, RUN_SPAWN);
	CHECK_INT(r.spawn_errno, ENOENT);
	CHECK_CONTAINS(r.detail, "cannot run './nonexistent/bench'");
	CHECK_CONTAINS(r.detail, "No such file or directory");
	run_result_release(&r);

	check_write_file("noexec.sh", "#!/bin/sh\nexit 0\n");
	CHECK_INT(run(noexec, 0, &r), 0);
	CHECK_INT(r.reason, RUN_SPAWN);
	CHECK_INT(r.spawn_errno, EACCES);
	run_result_release(&r);

	script("ok.sh", "echo hello; echo warn >&2; exit 0");
	s.argv = ok;
	s.workdir = "/nonexistent-workdir";
	CHECK_INT(run_child(&s, &r, &e), 0);
	CHECK_INT(r.reason, RUN_SPAWN);
	CHECK_CONTAINS(r.detail, "'/nonexistent-workdir'");
	run_result_release(&r);

	/* Caller errors are -1, not runs. */
	s.workdir = NULL;
	s.argv = NULL;
	CHECK_INT(run_child(&s, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "empty command");
	run_result_release(&r);
	{
		const char *bad_env[] = { "NOEQUALS", NULL };

		s.argv = ok;
		s.env = bad_env;
		CHECK_INT(run_child(&s, &r, &e), -1);
		CHECK_CONTAINS(e.msg, "'NOEQUALS'");
		run_result_release(&r);
	}
}

/*
 * Each way of starting a child into its cgroup (sharing our memory until
 * exec, a copy of it, or moving itself in) runs the program, reports a
 * failed exec or chdir as a spawn failure, and leaves nothing behind.
 */
static void
test_spawn_paths(void)
{
	static const unsigned paths[] = { 0, RUN_NO_CLONE_VM, RUN_NO_CLONE3 };
	const char *ok[] = { "./ok.sh", NULL };
	const char *badpath[] = { "./nonexistent/bench", NULL };
	struct child_spec s = CHILD_SPEC_INIT;
	struct err e = ERR_INIT;
	struct run_result r;
	char why[256];
	int fds = count_fds();

	if (!cgroup_available(NULL, 0, why, sizeof(why))) {
		fprintf(stderr, "note: cgroup spawn paths not tested: %s\n",
		    why);
		return;
	}
	script("ok.sh", "echo hello; exit 3");
	s.isolation = RUN_ISOLATE_CGROUP;
	s.timeout_ms = 10000;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		s.flags = paths[i];
		s.argv = ok;
		s.workdir = NULL;
		CHECK_INT(run_child(&s, &r, &e), 0);
		CHECK_INT(r.reason, RUN_EXIT);
		CHECK_INT(r.exit_code, 3);
		CHECK_INT(r.isolation, RUN_ISOLATE_CGROUP);
		CHECK_STR(r.out.data, "hello\n");
		CHECK(r.wall_ns > 0 && r.wall_ns < 10000 * MS);
		run_result_release(&r);

		s.argv = badpath;
		CHECK_INT(run_child(&s, &r, &e), 0);
		CHECK_INT(r.reason, RUN_SPAWN);
		CHECK_INT(r.spawn_errno, ENOENT);
		CHECK_CONTAINS(r.detail, "cannot run './nonexistent/bench'");
		run_result_release(&r);

		s.argv = ok;
		s.workdir = "/nonexistent-workdir";
		CHECK_INT(run_child(&s, &r, &e), 0);
		CHECK_INT(r.reason, RUN_SPAWN);
		CHECK_CONTAINS(r.detail, "'/nonexistent-workdir'");
		run_result_release(&r);
	}
	CHECK_INT(count_children(), 0);
	CHECK_INT(count_fds(), fds);
}

static void
test_cpu_and_memory(void)
{
	const char *spin[] = { self, "spin", "300", NULL };
	const char *alloc[] = { self, "alloc", "64", NULL };
	struct run_result r;

	/* CPU time is what the child used, whatever the load: 300 ms of
	 * spinning plus start-up, within a generous factor. */
	CHECK_INT(run(spin, 30000, &r), 0);
	CHECK_INT(r.reason, RUN_OK);
	CHECK(r.user_ns >= 250 * MS);
	CHECK(r.user_ns < 3000 * MS);
	CHECK(r.sys_ns >= 0 && r.sys_ns < 3000 * MS);
	CHECK(r.wall_ns >= r.user_ns / 2);
	run_result_release(&r);

	CHECK_INT(run(alloc, 30000, &r), 0);
	CHECK_INT(r.reason, RUN_OK);
	CHECK(r.max_rss_kb >= 60 * 1024);
	CHECK(r.max_rss_kb < 4L * 1024 * 1024);
	run_result_release(&r);
}

static void
test_env_and_workdir(void)
{
	const char *show[] = { "./show.sh", NULL };
	const char *env[] = { "BISECTD_TEST_A=one two", "HOME=/nowhere",
	    NULL };
	struct child_spec s = CHILD_SPEC_INIT;
	struct err e = ERR_INIT;
	struct run_result r;
	char *cwd, expect[4200];

	if (mkdir("wd", 0755) < 0 && errno != EEXIST)
		perror("wd");
	setenv("BISECTD_TEST_B", "inherited", 1);
	setenv("GITHUB_TOKEN", "ghp_secret", 1);
	setenv("HOME", "/root-of-test", 1);
	setenv("CUDA_VISIBLE_DEVICES", "1,GPU-abc", 1);
	script("show.sh", "echo \"A=$BISECTD_TEST_A\"; "
	    "echo \"B=$BISECTD_TEST_B\"; echo \"HOME=$HOME\"; "
	    "echo \"GPUS=$CUDA_VISIBLE_DEVICES\"; pwd; "
	    "env >&2; cat; echo \"args=$#\"");
	/* Absolute path: workdir changes before exec. */
	cwd = getcwd(NULL, 0);
	snprintf(expect, sizeof(expect), "%s/show.sh", cwd);
	show[0] = expect;
	s.argv = show;
	s.env = env;
	s.workdir = "wd";
	CHECK_INT(run_child(&s, &r, &e), 0);
	CHECK_INT(r.reason, RUN_OK);
	CHECK_CONTAINS(r.out.data, "A=one two\n");
	/* Only PATH, HOME and LANG of ours, never the rest (a token). */
	CHECK_CONTAINS(r.out.data, "B=\n");
	CHECK(strstr(r.errtail.data, "ghp_secret") == NULL);
	CHECK(strstr(r.errtail.data, "BISECTD_TEST_B") == NULL);
	CHECK_CONTAINS(r.errtail.data, "PATH=");
	CHECK_CONTAINS(r.out.data, "HOME=/nowhere\n");
	/* The GPUs the machine key describes are the engine's too. */
	CHECK_CONTAINS(r.out.data, "GPUS=1,GPU-abc\n");
	snprintf(expect, sizeof(expect), "\n%s/wd\n", cwd);
	CHECK_CONTAINS(r.out.data, expect);
	CHECK_CONTAINS(r.out.data, "args=0\n");
	run_result_release(&r);
	free(cwd);
	unsetenv("BISECTD_TEST_B");
	unsetenv("GITHUB_TOKEN");
	unsetenv("CUDA_VISIBLE_DEVICES");

	/* PATH from the additions is the one searched. */
	{
		const char *path_env[] = { "PATH=/nonexistent:.", NULL };
		const char *name[] = { "show.sh", NULL };

		s.argv = name;
		s.env = path_env;
		s.workdir = NULL;
		CHECK_INT(run_child(&s, &r, &e), 0);
		CHECK_INT(r.reason, RUN_OK);
		CHECK_CONTAINS(r.out.data, "args=0");
		run_result_release(&r);
	}
}

static void
test_template_run(void)
{
	struct tmpl_vals v = TMPL_VALS_INIT;
	struct child_spec s = CHILD_SPEC_INIT;
	struct err e = ERR_INIT;
	struct run_result r;
	char *cwd = getcwd(NULL, 0);
	struct stat st;

	script("args.sh", "for a in \"$@\"; do echo \"[$a]\"; done");
	v.bin = cwd;
	v.version = "0.2.0; touch pwned";
	v.weights = "$(touch pwned2)";
	v.prompt = 512;
	CHECK_INT(run_template("{bin}/args.sh -v {version} -m {weights} "
	    "-p {prompt}", &v, &s, &r, &e), 0);
	CHECK_INT(r.reason, RUN_OK);
	CHECK_STR(r.out.data, "[-v]\n[0.2.0; touch pwned]\n[-m]\n"
	    "[$(touch pwned2)]\n[-p]\n[512]\n");
	CHECK(stat("pwned", &st) < 0);
	CHECK(stat("pwned2", &st) < 0);
	run_result_release(&r);

	CHECK_INT(run_template("{bin}/args.sh {nope}", &v, &s, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "'{nope}'");
	run_result_release(&r);
	free(cwd);
}

static void
test_no_pidfd(void)
{
	const char *three[] = { "./three.sh", NULL };
	const char *hang[] = { "./hang.sh", NULL };
	struct child_spec s = CHILD_SPEC_INIT;
	struct err e = ERR_INIT;
	struct run_result r;

	s.flags = RUN_NO_PIDFD;
	s.argv = three;
	CHECK_INT(run_child(&s, &r, &e), 0);
	CHECK_INT(r.reason, RUN_EXIT);
	CHECK_INT(r.exit_code, 3);
	CHECK_STR(r.out.data, "out\n");
	run_result_release(&r);

	s.argv = hang;
	s.timeout_ms = 200;
	s.grace_ms = 200;
	CHECK_INT(run_child(&s, &r, &e), 0);
	CHECK_INT(r.reason, RUN_TIMEOUT);
	CHECK(r.wall_ns >= 200 * MS && r.wall_ns < 3000 * MS);
	run_result_release(&r);
}

static void
test_background(void)
{
	const char *server[] = { self, "term-exit", NULL };
	const char *quick[] = { "./three.sh", NULL };
	const char *missing[] = { "no-such-server-bisectd", NULL };
	struct child_spec s = CHILD_SPEC_INIT;
	struct err e = ERR_INIT;
	struct run_result r;
	struct run_proc *p;
	int i;

	s.argv = server;
	s.grace_ms = 2000;
	CHECK_INT(run_start(&s, &p, &e), 0);
	CHECK(run_proc_pid(p) > 0);
	/* It keeps running while we do other things. */
	usleep(200000);
	CHECK_INT(run_proc_exited(p), 0);
	run_proc_stop(p, &r);
	CHECK_INT(r.reason, RUN_OK);
	CHECK_INT(r.stopped, 1);
	CHECK_INT(r.exit_code, 7);	/* it ended cleanly on SIGTERM */
	CHECK_STR(r.out.data, "ready\n");
	CHECK_STR(r.errtail.data, "got TERM\n");
	CHECK(gone(r.pid));
	run_result_release(&r);

	/* A child that ends by itself is noticed, and keeps its reason. */
	s.argv = quick;
	CHECK_INT(run_start(&s, &p, &e), 0);
	for (i = 0; i < 500 && !run_proc_exited(p); i++)
		usleep(10000);
	CHECK_INT(run_proc_exited(p), 1);
	run_proc_stop(p, &r);
	CHECK_INT(r.reason, RUN_EXIT);
	CHECK_INT(r.exit_code, 3);
	CHECK_INT(r.stopped, 0);
	run_result_release(&r);

	/* One that cannot start is a handle whose run has ended. */
	s.argv = missing;
	CHECK_INT(run_start(&s, &p, &e), 0);
	CHECK_INT(run_proc_exited(p), 1);
	run_proc_stop(p, &r);
	CHECK_INT(r.reason, RUN_SPAWN);
	run_result_release(&r);
}

/* Many runs leave no descriptors, zombies or cgroups behind. */
static void
test_no_leaks(void)
{
	const char *t[] = { "/bin/true", NULL };
	struct run_result r;
	char where[4096], path[4300];
	int before, i, failures = 0;
	struct dirent *de;
	DIR *d;

	before = count_fds();
	for (i = 0; i < 50; i++) {
		if (run(t, 5000, &r) < 0 || r.reason != RUN_OK)
			failures++;
		run_result_release(&r);
	}
	CHECK_INT(failures, 0);
	CHECK_INT(count_fds(), before);
	CHECK_INT(count_children(), 0);
	if (cgroup_available(where, sizeof(where), NULL, 0)) {
		int mine = 0, kept = 0;

		/* One emptied cgroup is kept for the next run... */
		snprintf(path, sizeof(path), "bisectd-%ld-", (long)getpid());
		d = opendir(where);
		while (d != NULL && (de = readdir(d)) != NULL)
			if (strncmp(de->d_name, path, strlen(path)) == 0)
				kept++;
		if (d != NULL)
			closedir(d);
		CHECK_INT(kept, 1);
		/* ...until shutdown. */
		run_shutdown();

		snprintf(path, sizeof(path), "bisectd-%ld-", (long)getpid());
		d = opendir(where);
		while (d != NULL && (de = readdir(d)) != NULL)
			if (strncmp(de->d_name, path, strlen(path)) == 0)
				mine++;
		if (d != NULL)
			closedir(d);
		CHECK_INT(mine, 0);
	}
}

/* Gone, or a zombie nobody has reaped yet. */
static int
dead(pid_t pid)
{
	char path[64], *stat;
	const char *close_paren;
	int z;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((stat = check_read_file(path)) == NULL)
		return 1;
	close_paren = strrchr(stat, ')');
	z = close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
	free(stat);
	return z;
}

/*
 * A run dies with the process that waits for it: kill -9 of a daemon or
 * of bisectctl leaves no build or engine behind, writing on.
 */
static void
test_dies_with_parent(void)
{
	int out[2], status;
	pid_t helper, child = 0;
	char line[32] = "";
	FILE *f;

	CHECK_INT(pipe(out), 0);
	if ((helper = fork()) == 0) {
		dup2(out[1], 1);
		close(out[0]);
		execl(self, self, "parent", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	if ((f = fdopen(out[0], "r")) != NULL && fgets(line, sizeof(line), f))
		child = (pid_t)atoi(line);
	CHECK(child > 0);
	CHECK(child > 0 && !dead(child));
	kill(helper, SIGKILL);
	waitpid(helper, &status, 0);
	for (int i = 0; child > 0 && i < 300 && !dead(child); i++)
		check_sleep_ms(10);
	CHECK(child > 0 && dead(child));
	if (child > 0)
		waitpid(child, &status, WNOHANG);
	if (f)
		fclose(f);
}

int
main(int argc, char **argv)
{
	ssize_t n;

	if (argc > 1)
		return helper(argc, argv);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		perror("/proc/self/exe");
		return 99;
	}
	self[n] = '\0';
	dir = check_tmpdir("runner");
	(void)dir;

	CHECK_CASE(test_exit_codes);
	CHECK_CASE(test_signal_and_core);
	CHECK_CASE(test_timeout);
	CHECK_CASE(test_stop_flag);
	CHECK_CASE(test_escapees);
	CHECK_CASE(test_flood);
	CHECK_CASE(test_spawn_failures);
	CHECK_CASE(test_spawn_paths);
	CHECK_CASE(test_cpu_and_memory);
	CHECK_CASE(test_memory_cap);
	CHECK_CASE(test_env_and_workdir);
	CHECK_CASE(test_template_run);
	CHECK_CASE(test_no_pidfd);
	CHECK_CASE(test_background);
	CHECK_CASE(test_no_leaks);
	CHECK_CASE(test_dies_with_parent);
	return check_done();
}
