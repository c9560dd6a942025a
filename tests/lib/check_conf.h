/*
 * check_conf.h: loading a configuration written by a test, for the tests
 * that drive the daemon's jobs from their config and those of the
 * parser itself.
 */
#ifndef TESTS_CHECK_CONF_H
#define TESTS_CHECK_CONF_H

#include <stddef.h>

struct conf;

/* The smallest configuration that loads, six lines that end inside
 * [engine "basert"] (a dir: source), so that keys appended to it are
 * that engine's and the first of them is at line 7.  A literal, to be
 * joined with others at compile time. */
#define CHECK_CONF_MINIMAL \
    "[weights \"w\"]\n" \
    "\tpath = models/w.bin\n" \
    "[engine \"basert\"]\n" \
    "\tsource = dir:releases\n" \
    "\tasset = basert-{version}.tar.gz\n" \
    "\tcommand = {bin}/bin/bench -m {weights} -p {prompt}\n"

/* Write text to t.conf in the current directory and load it; NULL (with
 * every problem printed to stderr) when it does not load. */
struct conf *check_conf_load(const char *text);

/* The same, the problems joined into *problems, one a line (malloced;
 * NULL when it loaded). */
struct conf *check_conf_try(const char *text, char **problems);

/* A configuration that must not load, and what its problems say. */
struct check_refusal {
	const char *text;
	const char *want[3];	/* each is in the problems; NULL ends */
	int lines;		/* so many problems; 0: not counted */
};

/* Each row of the table called name: the text does not load and its
 * problems say what the row wants; a row that fails is named with its
 * index and text. */
void check_conf_refusals(const char *name, const struct check_refusal *r,
    size_t n);

/* text does not load, and its problems hold each of want (NULL-ended),
 * so many lines of them when lines > 0; on a failure they are printed
 * whole, named name. */
void check_conf_problems(const char *name, const char *text,
    const char *const *want, int lines);

#endif
