/*
 * load.h: the load client of serve mode.  It sends a profile's requests
 * to a started server, streamed, on a thread of its own with libcurl's
 * multi interface (fetch/http_multi.h), on the schedule the profile
 * gives (Poisson or equal gaps at a rate, or a fixed number in flight),
 * and stamps every token as it arrives.  It also measures itself: how
 * late each request left against its schedule, so that a run where the
 * client, not the server, set the pace is flagged.
 */
#ifndef BISECTD_LOAD_H
#define BISECTD_LOAD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bisectd/analysis/serve.h"
#include "config/conf.h"

struct err;

/* Why a request failed, by type. */
enum load_error {
	LOAD_OK,
	LOAD_REFUSED,		/* no connection */
	LOAD_TIMEOUT,		/* past the request timeout */
	LOAD_TRUNCATED,		/* the stream ended before its end mark */
	LOAD_HTTP,		/* an answer other than 200 */
	LOAD_STREAM,		/* an error event, a malformed stream, or no
				 * token at all */
	LOAD_TRANSPORT,		/* any other transport failure */
	LOAD_NERR
};

/* What the client sends; all but url from the engine's profile. */
struct load_spec {
	const char *url;		/* not owned */
	const struct conf_load *profile;	/* not owned */
	int64_t timeout_ms;		/* each request; 0: 10 min */
	uint64_t seed;			/* arrivals and lengths */
	const atomic_int *stop;		/* or NULL: ends the run early */
};

struct load_result {
	struct serve_request *req;	/* the measured requests, in the
					 * order they ended; malloced */
	size_t n;
	double *itl_ns;			/* every gap between two tokens of
					 * a complete measured stream */
	size_t nitl;
	int errors[LOAD_NERR];		/* measured requests by outcome */
	long last_status;		/* the last HTTP error's status */
	char first_error[320];		/* the first failure's words, or "" */
	int stopped;			/* the stop flag ended it */
};

/*
 * Run the load against the server at spec->url: warm-up requests, then
 * the measured ones.  0 with *out filled (release it with
 * load_result_release()), failed requests counted in it; -1 with e set
 * when the client itself could not run (memory, threads, libcurl).
 */
int load_run(const struct load_spec *spec, struct load_result *out,
    struct err *e);

void load_result_release(struct load_result *r);

/* "ok", "refused", "timeout", "truncated", "http", "stream",
 * "transport". */
const char *load_error_name(enum load_error err);

#endif
