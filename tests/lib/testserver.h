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

/*
 * List versions[0..n) (oldest first) as the releases of GitHub repository
 * repo ("owner/name") in the server's emulation: one release object a
 * line, newest first as GitHub lists them, tag "vVERSION" and id 100 + i,
 * with one asset NAME-VERSION.tar.gz, served from a symbolic link to
 * archives/NAME-VERSION.tar.gz.  Written aside and renamed, so the server
 * never reads half a file.  Returns 0, or -1 with a message on stderr.
 */
int testserver_publish(const struct testserver *ts, const char *repo,
    const char *name, const char *archives, const char *const *versions,
    size_t n);

/* Write size pseudo-random bytes, the same for the same seed, to path:
 * files for the server to serve.  Aborts on failure. */
void testserver_write_pattern(const char *path, size_t size, unsigned seed);

#endif
