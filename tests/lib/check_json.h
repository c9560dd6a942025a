/*
 * check_json.h: bisectctl's JSON answers, for the tests that run the
 * program (the library links jansson; check.h stays without it).
 */
#ifndef TESTS_CHECK_JSON_H
#define TESTS_CHECK_JSON_H

#include <jansson.h>

/*
 * check_ctl_run(ctl, args) (check.h) with its stdout parsed as JSON into
 * *out, NULL when it is not JSON: then, unless quiet (polling, where no
 * answer is expected yet), args, the exit code, stdout and stderr.txt are
 * printed.  Returns the exit code.
 */
int check_ctl_json(const char *ctl, const char *args, int quiet,
    json_t **out);

/*
 * Run `ctl args` through the shell, its stderr appended to ctl.err: its
 * stdout parsed as JSON, or NULL when it exits non-zero (then, unless
 * quiet, the command and its stdout are printed) or does not print JSON.
 */
json_t *check_ctl_ok_json(const char *ctl, const char *args, int quiet);

/* The entry of the report rep's "releases" whose version is version, or
 * NULL. */
json_t *check_release(json_t *rep, const char *version);

/* The first object of o's array called array whose string key is value,
 * or NULL. */
json_t *check_entry(json_t *o, const char *array, const char *key,
    const char *value);

/* The webhook body n (from 1) that the test server serving root stored,
 * parsed; NULL when there is none or it is not JSON. */
json_t *check_hook(const char *root, int n);

/* The entry of the report rep's "what_else_changed" for metric between
 * from and to; NULL, said on stderr, when it has none. */
json_t *check_change(json_t *rep, const char *from, const char *to,
    const char *metric);

#endif
