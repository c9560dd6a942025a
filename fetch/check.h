/*
 * check.h: what check-config and `bisectd -n` verify on disk beyond the
 * file itself, so that a job does not find it hours later: each dir:
 * source's folder, each weights path, and each pinned weights hash.
 */
#ifndef FETCH_CHECK_H
#define FETCH_CHECK_H

struct conf;
struct strv;

/* A hash that takes this long is worth a note (ms). */
#define FETCH_CHECK_SLOW_MS	1000

/*
 * Check c's local sources and weights, as a conf_check_fn (conf.h): each
 * problem is pushed onto problems in conf_load()'s form ("FILE:LINE: key:
 * what was expected"), all of them in one call.  notes is a struct strv
 * or NULL: a weights hash that took FETCH_CHECK_SLOW_MS or more is named
 * there with its size and time.  Weights given by url are checked when a
 * job downloads them.
 */
void fetch_check_local(const struct conf *c, struct strv *problems,
    void *notes);

#endif
