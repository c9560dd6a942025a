/*
 * test_slurm_poll.c: the daemon's bisects waiting on Slurm jobs share
 * one squeue a poll (bisectd/remote/slurm.c, slurm_poll()): four
 * threads, each waiting on its own job for five polls, make about five
 * squeue calls, not twenty, and no scontrol call; a job squeue does not
 * list is asked of scontrol.  Four threads watching their pinned nodes
 * share one scontrol show node a poll, which says a drained node and
 * one the cluster no longer has.  The tools are scripts on PATH that
 * log each call and print a fixed answer.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bisectd/remote/slurm.h"
#include "check.h"
#include "common/err.h"

#define THREADS	4
#define POLLS	5

static int failures_seen;

static void *
waiter(void *arg)
{
	int64_t id = 11 + (int64_t)(intptr_t)arg;
	struct timespec ts = { 0, SLURM_POLL_MS * 1000000L };

	for (int k = 0; k < POLLS; k++) {
		struct slurm_state st;
		struct err e = ERR_INIT;

		if (slurm_poll(id, &st, &e) < 0 ||
		    strcmp(st.state, id == 12 ? "PENDING" : "RUNNING") != 0)
			__atomic_add_fetch(&failures_seen, 1, __ATOMIC_SEQ_CST);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Lines of the calls log that start with tool. */
static int
calls(const char *tool)
{
	char *log = check_read_file("calls.log");
	int n = 0;

	for (const char *p = log; p && *p; p = strchr(p, '\n') ?
	    strchr(p, '\n') + 1 : p + strlen(p))
		n += strncmp(p, tool, strlen(tool)) == 0;
	free(log);
	return n;
}

static void
test_shared_poll(void)
{
	pthread_t t[THREADS];
	struct slurm_state st;
	struct err e = ERR_INIT;
	int sq;

	for (intptr_t i = 0; i < THREADS; i++)
		CHECK_INT(pthread_create(&t[i], NULL, waiter, (void *)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_INT(failures_seen, 0);
	sq = calls("squeue");
	/* One a poll; a late thread may start one more. */
	fprintf(stderr, "squeue calls: %d for %d waits\n", sq,
	    THREADS * POLLS);
	CHECK(sq >= POLLS - 1 && sq <= POLLS + 2);
	CHECK_INT(calls("scontrol"), 0);
	/* Not in squeue's answer: scontrol says. */
	CHECK_INT(slurm_poll(99, &st, &e), 0);
	CHECK_STR(st.state, "COMPLETED");
	CHECK_INT(calls("scontrol"), 1);
}

static int down_wrong;

static void *
node_waiter(void *arg)
{
	static const char *const node[THREADS] = { "n1", "n2", "n3", "n9" };
	const char *name = node[(intptr_t)arg];
	struct timespec ts = { 0, SLURM_POLL_MS * 1000000L };

	for (int k = 0; k < POLLS; k++) {
		char why[256];
		struct err e = ERR_INIT;
		int down = slurm_node_down(name, why, sizeof(why), &e);

		/* n1 and n2 up; n3 drained; n9 not in the cluster. */
		if (down != (name[1] == '3' || name[1] == '9') ||
		    (name[1] == '3' && strcmp(why, "node n3 is IDLE+DRAIN: "
		    "bench maintenance") != 0) || (name[1] == '9' &&
		    strcmp(why, "node n9 is no longer in the cluster") != 0)) {
			fprintf(stderr, "%s: %d, '%s'\n", name, down, down > 0 ?
			    why : "");
			__atomic_add_fetch(&down_wrong, 1, __ATOMIC_SEQ_CST);
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void
test_shared_nodes(void)
{
	pthread_t t[THREADS];
	int before = calls("scontrol show node"), n;

	for (intptr_t i = 0; i < THREADS; i++)
		CHECK_INT(pthread_create(&t[i], NULL, node_waiter, (void *)i),
		    0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_INT(down_wrong, 0);
	n = calls("scontrol show node") - before;
	fprintf(stderr, "scontrol show node calls: %d for %d waits\n", n,
	    THREADS * POLLS);
	CHECK(n >= POLLS - 1 && n <= POLLS + 2);
}

int
main(void)
{
	char path[8192];
	const char *dir = check_tmpdir("slurm_poll");

	CHECK_INT(check_run("mkdir bin", NULL), 0);
	check_write_file("bin/squeue", "#!/bin/sh\n"
	    "echo \"squeue $*\" >> calls.log\n"
	    "echo 'JobId=11 JobState=RUNNING NodeList=n1 Reason=None'\n"
	    "echo 'JobId=12 JobState=PENDING NodeList= Reason=Resources'\n"
	    "echo 'JobId=13 JobState=RUNNING NodeList=n2 Reason=None'\n"
	    "echo 'JobId=14 JobState=RUNNING NodeList=n2 Reason=None'\n");
	check_write_file("bin/scontrol", "#!/bin/sh\n"
	    "echo \"scontrol $*\" >> calls.log\n"
	    "if [ \"$2\" = node ]; then\n"
	    "echo 'NodeName=n10 Arch=x86_64 State=DOWN Reason=None'\n"
	    "echo 'NodeName=n1 Arch=x86_64 State=IDLE Reason=None'\n"
	    "echo 'NodeName=n2 Arch=x86_64 State=MIXED Reason=None'\n"
	    "echo 'NodeName=n3 Arch=x86_64 State=IDLE+DRAIN "
	    "Reason=bench maintenance [root@2026-12-02T18:00:00]'\n"
	    "exit 0\nfi\n"
	    "echo 'JobId=99 JobName=x JobState=COMPLETED Reason=None "
	    "NodeList=n1'\n");
	check_write_file("calls.log", "");
	CHECK_INT(check_run("chmod +x bin/squeue bin/scontrol", NULL), 0);
	snprintf(path, sizeof(path), "%s/bin:%s", dir, getenv("PATH") ?
	    getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", path, 1);
	CHECK_CASE(test_shared_poll);
	CHECK_CASE(test_shared_nodes);
	return check_done();
}
