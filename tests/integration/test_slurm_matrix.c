/*
 * test_slurm_matrix.c: a matrix on a real three-node cluster that
 * tests/lib/slurm-cluster.sh starts (bt1 and bt3 of class m1, bt2 of
 * class m2, a partition per class).  The daemon bisects the four cells
 * of two runners by two weights files at once: each cell's jobs run on
 * its own class's nodes only, the two classes side by side, and the
 * one cell whose fake engine slows down (the large file on class m1, as
 * its runner's env tells the engine) names 1.0.2.  A node of m1 drains
 * while it measures
 * a cell: only the cells pinned to it re-anchor; the m2 cells never
 * notice.
 *
 * As root (CI) the cluster must come up; elsewhere the test skips (exit
 * 77) saying why.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "check_daemon.h"
#include "check_slurm.h"
#include "common/err.h"
#include "store/store.h"

static const char *ctl, *daemon_bin, *build;
static char dir[80];	/* a socket path must fit in sun_path */

static const char *const cells[] = { "fleet/r1/small", "fleet/r1/big",
	"fleet/r2/small", "fleet/r2/big" };

static void
write_config(void)
{
	char src[4200];

	snprintf(src, sizeof(src), "\tsource = dir:%s/tests/releases\n", build);
	check_matrix_config("d.conf", dir,
	    "[runner \"r1\"]\n\tkind = slurm\n\tspool = spool\n"
	    "\tpartition = m1\n\ttime-limit = 10m\n\tmax-jobs = 2\n"
	    "\tenv = FAKE_ENGINE_CLASS=m1\n"
	    "[runner \"r2\"]\n\tkind = slurm\n\tspool = spool\n"
	    "\tpartition = m2\n\ttime-limit = 10m\n\tmax-jobs = 2\n"
	    "\tenv = FAKE_ENGINE_CLASS=m2\n", "r1, r2", src, "");
}

static int
is_cell(const struct store_slurm_job *j, const char *runner)
{
	return j->engine && strncmp(j->engine, "fleet/", 6) == 0 &&
	    j->runner && strcmp(j->runner, runner) == 0;
}

/* The node of a running r1 job, into node; 0 if none yet. */
static int
r1_running(char *node, size_t len, int *both)
{
	struct store_slurm_jobs jobs;
	struct err e = ERR_INIT;
	struct store *s = check_daemon_store(dir);
	int found = 0, r2 = 0;

	if (s == NULL)
		return 0;
	if (store_slurm_list(s, 0, 0, &jobs, &e) == 0) {
		for (size_t i = 0; i < jobs.n; i++) {
			const struct store_slurm_job *j = &jobs.v[i];

			if (strcmp(j->state, "RUNNING") != 0 || !j->node)
				continue;
			if (is_cell(j, "r2"))
				r2 = 1;
			if (is_cell(j, "r1") && !found) {
				snprintf(node, len, "%s", j->node);
				found = 1;
			}
		}
		store_slurm_jobs_release(&jobs);
	}
	store_close(s);
	*both |= found && r2;
	return found;
}

static void
test_matrix(void)
{
	struct store_slurm_jobs jobs;
	struct err e = ERR_INIT;
	struct store *s;
	char cmd[8192], node[64] = "", state[32], *out = NULL;
	const char *p;
	int64_t ids[4];
	int n = 0, codes[4], both = 0, drained = 0;
	int fails[2] = { 0, 0 }, wrong_node = 0;
	pid_t pid;

	write_config();
	snprintf(cmd, sizeof(cmd), "%s -c d.conf bisect fleet 1.0.0..1.0.3 "
	    "2>/dev/null", ctl);
	CHECK_INT(check_run(cmd, &out), 0);
	for (p = out; p && (p = strstr(p, "as job ")) != NULL && n < 4; p++)
		ids[n++] = strtoll(p + 7, NULL, 10);
	free(out);
	CHECK_INT(n, 4);
	if (n != 4)
		return;
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");

	/* A node of m1 drains under a running r1 job. */
	for (double t0 = check_now_s(); check_now_s() - t0 < 300 &&
	    !drained;) {
		if (r1_running(node, sizeof(node), &both)) {
			snprintf(cmd, sizeof(cmd), "scontrol update NodeName="
			    "%s State=DRAIN Reason=bisectd-test-drain", node);
			CHECK_INT(check_run(cmd, NULL), 0);
			drained = 1;
		} else
			check_sleep_ms(100);
	}
	CHECK(drained);
	/* Until the four end, whether both classes run at once. */
	for (int i = 0; i < 4; i++)
		codes[i] = -1;
	for (double t0 = check_now_s(); check_now_s() - t0 < 600;) {
		char other[64];
		int done = 0;

		r1_running(other, sizeof(other), &both);
		for (int i = 0; i < 4; i++) {
			const char *st = check_job_wait(dir, ids[i], 0.05,
			    state, sizeof(state), &codes[i]);

			/* Ended, well or not: the checks below say which. */
			done += st[0] && strcmp(st, "queued") != 0 &&
			    strcmp(st, "running") != 0;
		}
		if (done == 4)
			break;
		check_sleep_ms(200);
	}
	for (int i = 0; i < 4; i++)
		CHECK_STR(check_job_wait(dir, ids[i], 1, state, sizeof(state),
		    &codes[i]), "done");
	if (drained) {
		snprintf(cmd, sizeof(cmd), "scontrol update NodeName=%s "
		    "State=RESUME", node);
		CHECK_INT(check_run(cmd, NULL), 0);
	}
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 30), 0);

	/* The large file's cell on m1 regressed, no other. */
	CHECK(codes[0] == 0 || codes[0] == 4);
	CHECK_INT(codes[1], 3);
	CHECK(codes[2] == 0 || codes[2] == 4);
	CHECK(codes[3] == 0 || codes[3] == 4);
	/* The two classes measured side by side. */
	CHECK(both);

	if ((s = check_daemon_store(dir)) == NULL) {
		CHECK(0);
		return;
	}
	CHECK_INT(store_slurm_list(s, 0, 0, &jobs, &e), 0);
	for (size_t i = 0; i < jobs.n; i++) {
		const struct store_slurm_job *j = &jobs.v[i];
		int r2 = is_cell(j, "r2");

		if (!is_cell(j, "r1") && !r2)
			continue;
		/* Each class's jobs on its own nodes. */
		if (j->node && (r2 ? strcmp(j->node, "bt2") != 0 :
		    strcmp(j->node, "bt2") == 0)) {
			fprintf(stderr, "%s job %lld ran on %s\n", j->engine,
			    (long long)j->slurm_id, j->node);
			wrong_node = 1;
		}
		if (j->failure && strcmp(j->failure, "slurm-node-fail") == 0)
			fails[r2]++;
	}
	store_slurm_jobs_release(&jobs);
	store_close(s);
	CHECK(!wrong_node);
	/* The drained node's cells re-anchored; m2's never failed. */
	CHECK(fails[0] >= 1);
	CHECK_INT(fails[1], 0);

	/* One table of the four, from the store. */
	snprintf(cmd, sizeof(cmd), "%s -c d.conf report fleet 1.0.0..1.0.3",
	    ctl);
	CHECK_INT(check_run(cmd, &out), 3);
	for (int i = 0; i < 4; i++) {
		char want[128];

		snprintf(want, sizeof(want), "%s: %s", cells[i], i == 1 ?
		    "regressed at 1.0.2" : "no regression");
		CHECK_CONTAINS(out, want);
	}
	free(out);
}

int
main(void)
{
	int rc;

	check_env(&ctl, &daemon_bin, &build);
	snprintf(dir, sizeof(dir), "%s", check_tmpdir("slurm_matrix"));
	if ((rc = check_slurm_start(dir, "m1 m2 m1")) != 0)
		return rc;
	CHECK_CASE(test_matrix);
	check_slurm_stop();
	return check_done();
}
