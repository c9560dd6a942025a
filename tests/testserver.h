/*
 * testserver.h: start and stop the loopback test server (testserver.c,
 * whose header comment lists the paths and how to drive each fault) from
 * a test, in one line, and read what it logged.
 */
#ifndef TESTS_TESTSERVER_H
#define TESTS_TESTSERVER_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

struct testserver {
	pid_t pid;		/* the server, leader of its process group */
	int port;		/* HTTP */
	int smtp_port;		/* SMTP sink */
	char root[PATH_MAX];	/* what /files/NAME serves; absolute */
	char log[PATH_MAX];	/* the request log */
	char base[64];		/* "http://127.0.0.1:PORT" */
};

/*
 * Start the server on root (created if missing; made absolute) and wait
 * for it to listen.  The binary is $TESTSERVER or the one built with the
 * tests.  Returns 0, or -1 with a message on stderr.
 */
int testserver_start(const char *root, struct testserver *ts);

/* Stop the server and every connection it is still serving. */
void testserver_stop(struct testserver *ts);

/* The log so far; malloced, "" when empty. */
char *testserver_log(const struct testserver *ts);

/* How many logged lines contain every one of the NULL-terminated
 * substrings, e.g. testserver_count(ts, "GET /404 ", "status=404", NULL). */
int testserver_count(const struct testserver *ts, const char *sub, ...);

/* Forget what was logged so far. */
void testserver_log_reset(const struct testserver *ts);

/* ts->base followed by path, in one of four buffers used in turn, so a
 * call may take a few of them as arguments. */
const char *testserver_url(const struct testserver *ts, const char *path);

/* Write size pseudo-random bytes, the same for the same seed, to path:
 * files for the server to serve.  Aborts on failure. */
void testserver_write_pattern(const char *path, size_t size, unsigned seed);

#endif
