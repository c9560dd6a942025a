/*
 * remote.h: a measurement carried out on another machine.  The daemon
 * writes a request file (the release or the two releases of a
 * comparison, the cells, the runs per cell, the warm-up and whether the
 * runs confirm a boundary); a node runs it with `bisectctl node-run`,
 * which needs no database of the daemon's, and leaves one result file
 * (its runs, samples, failures and the node's identity, ending in the
 * sha256 of what comes before); the daemon takes that file into its
 * store in one transaction, exactly once.
 *
 * Files in the spool are named by the request's id: ID.request and
 * ID.result, each written to a temporary name and renamed.
 */
#ifndef BISECTD_REMOTE_H
#define BISECTD_REMOTE_H

#include <stddef.h>
#include <stdint.h>

struct bench_cell;
struct conf;
struct conf_engine;
struct err;
struct json_t;
struct store;
struct store_release;
struct store_run;
struct store_sample;

/* A request's id: 32 hex digits. */
#define REMOTE_ID_LEN 32

/* The largest result file read (runs carry their output's head). */
#define REMOTE_RESULT_MAX ((size_t)256 << 20)

/* What one request measures. */
struct remote_plan {
	const struct conf_engine *eng;
	const struct store_release *rel[2];	/* the targets */
	size_t nrel;
	const struct bench_cell *cells;
	size_t ncells;
	const int *reps;	/* [target * ncells + cell] analysed runs */
	const int *stored;	/* the same, runs stored before: a step of
				 * the ladder that asks as many runs again is
				 * another plan */
	int warmup;
	int confirm;
	const char *weights_sha256;	/* what the node must find */
};

/* A fresh request id (from getrandom). */
int remote_new_id(char id[REMOTE_ID_LEN + 1], struct err *e);

/*
 * The request's JSON without its id, canonical, and its sha256 (plan):
 * the same measurement asked again has the same plan.  *json malloced.
 */
int remote_plan_json(const struct conf *conf, const struct remote_plan *p,
    char **json, char plan[65], struct err *e);

/*
 * Write SPOOL/ID.request (temporary name, then rename), with the
 * bisect's anchor when above 0 (store_slurm_anchor): not part of the
 * plan, it goes into the node's comparability key.
 */
int remote_request_write(const char *spool, const char *id,
    const char *plan_json, int anchor, struct err *e);

/* The file names of a request and its result (malloced). */
char *remote_request_path(const char *spool, const char *id);
char *remote_result_path(const char *spool, const char *id);

/*
 * The node's side: read the request at path, check it names this
 * configuration's engine, fetch its releases into the configured
 * (node-local) cache, verify the weights against its hash, run the plan
 * with the local runner and its containment under the node's own
 * benchmark lock (CACHE/node.bench-lock), and write the result file
 * beside the request.  The runs go through a scratch SQLite file under
 * CACHE/node/ that is removed afterwards.  A measurement that could not
 * run still leaves a result, with its error; -1 only when no result
 * could be written.
 */
/*
 * Whether path, the spool (dir 1) or a file in it, may be taken as
 * written by this daemon and its nodes: owned by this user, writable by
 * no one else, a folder or a regular file (never a link).  A result
 * another user could write could move a verdict.  0, or -1 with e
 * naming the path and what is wrong.
 */
int remote_trusted(const char *path, int dir, struct err *e);

int remote_node_run(const struct conf *conf, const char *request_path,
    struct err *e);

/*
 * What remote_node_run() reads of a request (request.c), apart from the
 * spool and the engine so that a fuzzer reaches it.
 *
 * A request file's text (len bytes; path names it in messages): its JSON
 * (new reference) when it is an object with a valid id and the request
 * format, "plan" set to the sha256 of its canonical text without its id
 * and anchor (what the result must name).  0 with *out, or -1 with e
 * set.
 */
int remote_request_parse(const char *text, size_t len, const char *path,
    struct json_t **out, struct err *e);

/*
 * The prompt and gen lengths the request's cells (its "cells" array)
 * ask, for bench_cells(): in the request's order, at most
 * CONF_MAX_LENGTHS of each kind.  -1 when cells is no array, is empty,
 * holds more than 2 * CONF_MAX_LENGTHS, or has a pp or tg cell whose
 * length is not from 1 to INT_MAX.
 */
int remote_cells_lengths(const struct json_t *cells, int *prompts,
    size_t *np, int *gens, size_t *ng);

/*
 * Each of the request's cells as the one of all[0..nall) equal to it
 * (kind, prompt, gen and content), into out[0..*n) in the request's
 * order; out holds a slot for each, and each out[i] its own copy of its
 * content_path (bench_cells_free() them, all apart).  0, the number
 * (from 1) of the first cell that is none of all's, or -1 when out of
 * memory.
 */
int remote_cells_pick(const struct json_t *cells,
    const struct bench_cell *all, size_t nall, struct bench_cell *out,
    size_t *n);

/* How an ingest ended. */
enum remote_ingest {
	REMOTE_INGESTED,	/* the runs are in the store */
	REMOTE_NODE_ERROR,	/* a valid result whose measurement failed:
				 * e holds the node's message */
	REMOTE_REFUSED,		/* truncated, tampered, another request's,
				 * or ingested before: e says which */
	REMOTE_MISSING		/* no result file */
};

/*
 * A result file's text (len bytes; path names it in messages) read: its
 * JSON (new reference) when the body's sha256 is its last line's, it is
 * a version 1 result, and it answers request id with plan.  0 with
 * *out, or REMOTE_REFUSED with e saying which of those failed.
 */
int remote_result_parse(const char *text, size_t len, const char *path,
    const char *id, const char *plan, struct json_t **out, struct err *e);

/*
 * A result's run object o read for store_run_insert(): *r filled, its
 * strings pointing into o; a time, memory figure or exit code o lacks
 * is -1.  -1 with e set when its prompt, gen, rep or signal is not from
 * 0 to INT_MAX or its exit code not from -1 to INT_MAX.
 */
int remote_run_from_json(const struct json_t *o, struct store_run *r,
    struct err *e);

/* The samples of a result's run o: *v (malloced, free it even on -1)
 * and *n; -1 with e set when one is not 7 integers, or its token counts
 * are not from 0 to INT_MAX. */
int remote_samples_from_json(const struct json_t *o,
    struct store_sample **v, size_t *n, struct err *e);

/*
 * Take SPOOL/ID.result into the store for the slurm_job row of request
 * id, in one transaction with the row's mark: its runs and samples under
 * their definitions, the node as a machine, each release's archive hash
 * and state.  The result must end in the sha256 of its body, name this
 * request and its plan, and have definitions equal to what this
 * configuration gives for the node (so both ends measured alike).
 * Returns an enum remote_ingest, or -1 with e set when the store failed.
 * *hw_key (65 bytes) gets the result's comparability key on INGESTED.
 */
int remote_ingest(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spool, const char *id, int64_t weights_id,
    const char *weights_sha256, char hw_key[65], struct err *e);

#endif
