/*
 * test_slurm_poll.c: the daemon's bisects waiting on Slurm jobs share
 * one squeue a poll (bisectd/remote/slurm.c, slurm_poll()): four
 * threads, each waiting on its own job for five polls, make about five
 * squeue calls, not twenty, and no scontrol call; a job squeue does not
 * list is asked of scontrol.  The tools are scripts on PATH that log
 * each call and print a fixed answer.
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
	    "echo 'JobId=99 JobName=x JobState=COMPLETED Reason=None "
	    "NodeList=n1'\n");
	check_write_file("calls.log", "");
	CHECK_INT(check_run("chmod +x bin/squeue bin/scontrol", NULL), 0);
	snprintf(path, sizeof(path), "%s/bin:%s", dir, getenv("PATH") ?
	    getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", path, 1);
	CHECK_CASE(test_shared_poll);
	return check_done();
}
