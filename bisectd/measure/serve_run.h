/*
 * serve_run.h: one serve run.  Start the engine's server (as server mode
 * does), send it the load profile's requests with the load client, stop
 * it, and turn the requests into the run's figures and its row of the
 * store's serve_run table.  One server start with its whole load is one
 * run: the unit of replication.
 */
#ifndef BISECTD_SERVE_RUN_H
#define BISECTD_SERVE_RUN_H

#include <stdatomic.h>
#include <stdint.h>

#include "bisectd/analysis/serve.h"
#include "store/serve.h"
#include "ttft.h"

struct conf_engine;
struct err;

struct serve_outcome {
	enum ttft_status server;	/* TTFT_OK: the server started and
					 * stayed up */
	int measured;			/* the load ran: fig and row are set */
	struct serve_figures fig;
	struct store_serve_run row;	/* profile malloced; run_id unset */
	char detail[1100];		/* why the run failed, or "" */
};

/*
 * The load profile's part of a measurement definition, as JSON text
 * (malloced): arrivals, rate or concurrency, requests or duration,
 * warm-up, lengths and dialect.  The targets and the bounds are not
 * part of it: they judge figures, they do not change them.
 */
char *serve_profile_json(const struct conf_engine *eng);

/*
 * Run the load once against the server of spec: 0 with *out filled
 * (out->server, out->measured and out->detail say how far it went; a run
 * failed by too many failed requests has measured set and detail), or
 * -1 with e set when the runner or the client could not run at all.
 * The server's run goes to *server_run.  seed draws the schedule and
 * the lengths: one per repetition, the same for every release.
 */
int serve_measure(const struct ttft_server_spec *spec,
    const struct conf_engine *eng, uint64_t seed, const atomic_int *stop,
    struct serve_outcome *out, struct run_result *server_run,
    struct err *e);

void serve_outcome_release(struct serve_outcome *o);

#endif
