/*
 * check_conf.h: loading a configuration written by a test, for the tests
 * that drive the daemon's jobs from their config.
 */
#ifndef TESTS_CHECK_CONF_H
#define TESTS_CHECK_CONF_H

struct conf;

/* Write text to t.conf in the current directory and load it; NULL (with
 * every problem printed to stderr) when it does not load. */
struct conf *check_conf_load(const char *text);

#endif
