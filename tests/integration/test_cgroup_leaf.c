/*
 * test_cgroup_leaf: the daemon leaves the root of a cgroup delegated to
 * it for a leaf, so that runs' cgroups beside the leaf can have the
 * memory controller (cgroup v2 allows controllers for children only in
 * a cgroup without processes).  On a fake tree of plain files first:
 * what it reads and writes, and when it must not move.  Then, where
 * this process may make cgroups (root, a writable cgroup2 mount), on a
 * real one: a child alone in a fresh cgroup moves into its leaf, runs
 * get cgroups beside it, and bisectd started alone in one says it moved.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bisectd/process/cgroup.h"
#include "check.h"
#include "common/err.h"

static const char *daemon_bin;

/* A fake delegated cgroup "svc" whose cgroup.procs holds procs; the
 * leaf's cgroup.procs exists already, as the kernel would make it. */
static void
fake_tree(const char *procs, int delegated)
{
	(void)check_run("rm -rf svc", NULL);
	CHECK(mkdir("svc", 0755) == 0);
	CHECK(mkdir("svc/daemon", 0755) == 0);
	check_write_file("svc/cgroup.procs", procs);
	check_write_file("svc/daemon/cgroup.procs", "");
	if (delegated)
		check_write_file("svc/cgroup.subtree_control", "");
}

static void
test_fake_alone(void)
{
	char why[256] = "", pid[32], line[40], *text;

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	snprintf(line, sizeof(line), "%s\n", pid);
	fake_tree(line, 1);
	CHECK_INT(cgroup_move_to_leaf("svc", "daemon", getpid(), why,
	    sizeof(why)), 1);
	text = check_read_file("svc/daemon/cgroup.procs");
	CHECK_STR(text, pid);
	free(text);
}

static void
test_fake_shared(void)
{
	char why[256] = "", procs[64], *text;

	/* The shell that started us, then us: not the service's cgroup. */
	snprintf(procs, sizeof(procs), "1\n%ld\n", (long)getpid());
	fake_tree(procs, 1);
	CHECK_INT(cgroup_move_to_leaf("svc", "daemon", getpid(), why,
	    sizeof(why)), 0);
	CHECK_CONTAINS(why, "other processes share cgroup 'svc'");
	text = check_read_file("svc/daemon/cgroup.procs");
	CHECK_STR(text, "");
	free(text);
	/* Another pid whose digits start like ours is not us either. */
	snprintf(procs, sizeof(procs), "%ld1\n", (long)getpid());
	fake_tree(procs, 1);
	CHECK_INT(cgroup_move_to_leaf("svc", "daemon", getpid(), why,
	    sizeof(why)), 0);
	CHECK_CONTAINS(why, "other processes");
}

static void
test_fake_not_delegated(void)
{
	char why[256] = "", pid[32];

	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	fake_tree(pid, 0);
	CHECK_INT(cgroup_move_to_leaf("svc", "daemon", getpid(), why,
	    sizeof(why)), 0);
	CHECK_CONTAINS(why, "is not delegated to us");
	/* A leaf that cannot take us (a file here) is a failed move. */
	fake_tree(pid, 1);
	CHECK(check_run("rm -rf svc/daemon && touch svc/daemon", NULL) == 0);
	CHECK_INT(cgroup_move_to_leaf("svc", "daemon", getpid(), why,
	    sizeof(why)), -1);
	CHECK_CONTAINS(why, "cannot move into cgroup 'svc/daemon'");
}

/*
 * A fresh cgroup below our own on the real cgroup2 mount, into dir:
 * 1, or 0 (with a note) where this process may not make one.
 */
static int
real_cgroup(char *dir, size_t len)
{
	char *mnt = NULL, *self = NULL, *nl;
	int ok = 0;

	if (check_run("awk '/ - cgroup2 / { print $5; exit }' "
	    "/proc/self/mountinfo", &mnt) != 0 || check_run("sed -n 's/^0:://p' /proc/self/cgroup", &self) != 0 ||
	    mnt[0] == '\0' || self[0] == '\0') {
		fprintf(stderr, "note: no cgroup2 mount; real tree not "
		    "tested\n");
		goto out;
	}
	if ((nl = strchr(mnt, '\n')) != NULL)
		*nl = '\0';
	if ((nl = strchr(self, '\n')) != NULL)
		*nl = '\0';
	snprintf(dir, len, "%s%s/bisectd-test-leaf-%ld", mnt,
	    strcmp(self, "/") == 0 ? "" : self, (long)getpid());
	if (mkdir(dir, 0755) < 0) {
		fprintf(stderr, "note: cannot make cgroup '%s' (%s); real "
		    "tree not tested\n", dir, strerror(errno));
		goto out;
	}
	ok = 1;
out:
	free(mnt);
	free(self);
	return ok;
}

/* Move the calling process into the cgroup dir; 0 or -1. */
static int
enter(const char *dir)
{
	char path[PATH_MAX + 16];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	rc = fprintf(f, "%ld", (long)getpid()) < 0;
	return (fclose(f) != 0 || rc) ? -1 : 0;
}

/* Whether /proc/PID/cgroup's v2 line ends with suffix. */
static int
in_cgroup(pid_t pid, const char *suffix)
{
	char cmd[128], *out = NULL;
	size_t n, sn = strlen(suffix);
	int ok;

	snprintf(cmd, sizeof(cmd), "sed -n 's/^0:://p' /proc/%ld/cgroup",
	    (long)pid);
	ok = check_run(cmd, &out) == 0 && (n = strcspn(out, "\n")) >= sn &&
	    strncmp(out + n - sn, suffix, sn) == 0;
	free(out);
	return ok;
}

static void
remove_cgroup(const char *dir)
{
	char leaf[PATH_MAX + 16];

	snprintf(leaf, sizeof(leaf), "%s/daemon", dir);
	(void)rmdir(leaf);
	CHECK(rmdir(dir) == 0);
}

/*
 * In a child alone in a fresh cgroup: it moves into the leaf, and runs'
 * cgroups go beside the leaf, with the memory controller where the
 * kernel offers it to the fresh cgroup.  The child's failures are its
 * exit status.
 */
static void
test_real_leaf(void)
{
	char dir[PATH_MAX], where[PATH_MAX + 64], want[PATH_MAX + 64];
	char why[512], base[PATH_MAX], *run_dir = NULL, *ctl;
	struct err e = ERR_INIT;
	int64_t oom;
	pid_t pid;
	int st, fd;

	if (!real_cgroup(dir, sizeof(dir)))
		return;
	fflush(NULL);
	if ((pid = fork()) == 0) {
		check_failures = 0;
		CHECK(enter(dir) == 0);
		CHECK_INT(cgroup_leave_delegated("daemon", where,
		    sizeof(where), why, sizeof(why)), 1);
		snprintf(want, sizeof(want), "%s/daemon", dir);
		CHECK_STR(where, want);
		CHECK(in_cgroup(getpid(), "/daemon"));
		/* Runs' cgroups are the leaf's siblings, not its children. */
		CHECK(cgroup_available(base, sizeof(base), why, sizeof(why)));
		CHECK_STR(base, dir);
		fd = cgroup_open_run("leaf-run", &run_dir, &oom, &e);
		CHECK(fd >= 0);
		snprintf(want, sizeof(want), "%s/bisectd-leaf-run", dir);
		CHECK_STR(run_dir, want);
		snprintf(want, sizeof(want), "%s/cgroup.controllers", dir);
		ctl = check_read_file(want);
		if (ctl != NULL && strstr(ctl, "memory") != NULL)
			CHECK(cgroup_set_memory_max(run_dir, 64 << 20) == 0);
		else
			fprintf(stderr, "note: no memory controller offered "
			    "to '%s'; the cap is not tested\n", dir);
		free(ctl);
		if (fd >= 0)
			close(fd);
		cgroup_close_run(&run_dir, 1);
		fflush(NULL);
		_exit(check_failures > 100 ? 100 : check_failures);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	CHECK_INT(WEXITSTATUS(st), 0);
	remove_cgroup(dir);
}

/* bisectd started alone in a fresh cgroup moves into its leaf and logs
 * it: what it does as a systemd service with Delegate=yes. */
static void
test_real_daemon(void)
{
	char dir[PATH_MAX], *log;
	double t0;
	pid_t pid;

	if (!real_cgroup(dir, sizeof(dir)))
		return;
	check_write_file("d.conf", "[bisectd]\n\tdatabase = d.db\n");
	fflush(NULL);
	if ((pid = fork()) == 0) {
		if (enter(dir) < 0 || freopen("d.log", "w", stderr) == NULL)
			_exit(126);
		execl(daemon_bin, "bisectd", "-c", "d.conf", (char *)NULL);
		_exit(127);
	}
	CHECK(pid > 0);
	for (t0 = check_now_s(); check_now_s() - t0 < 20;
	    check_sleep_ms(50)) {
		log = check_read_file("d.log");
		if (log != NULL && strstr(log, "started: pid") != NULL)
			break;
		free(log);
		log = NULL;
	}
	CHECK_CONTAINS(log, "cgroup: moved into '");
	CHECK_CONTAINS(log, "/daemon'; runs get cgroups beside it");
	free(log);
	CHECK(in_cgroup(pid, "/daemon"));
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 20), 0);
	remove_cgroup(dir);
}

int
main(void)
{
	check_env(NULL, &daemon_bin, NULL);
	check_tmpdir("test_cgroup_leaf");
	CHECK_CASE(test_fake_alone);
	CHECK_CASE(test_fake_shared);
	CHECK_CASE(test_fake_not_delegated);
	CHECK_CASE(test_real_leaf);
	CHECK_CASE(test_real_daemon);
	return check_done();
}
