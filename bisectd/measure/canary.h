/*
 * canary.h: the output canary.  A release that got faster because it
 * changed what the model computes is a regression that no clock sees, so
 * each measured release also runs the engine's canary command: text
 * generated deterministically from a fixed prompt, run twice, stored
 * with its sha256 and compared exactly with other releases'.  Two runs
 * of one release that differ make it nondeterministic, and its text is
 * then never used for a verdict.
 *
 * The command is the [engine] canary template (no shell, the bench
 * command's placeholders; {content} is the pinned prompt's file, which
 * is also the command's stdin), run by the runner with the engine's
 * environment, workdir, timeout and memory cap.  Its stdout is capped,
 * and the text the canary-parser picks out of it is capped again.
 */
#ifndef BISECTD_CANARY_H
#define BISECTD_CANARY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"	/* struct store_canary_rows */

struct buf;

struct conf;
struct conf_engine;
struct err;

/* Runs of the canary per release: two, so that nondeterminism shows. */
#define CANARY_RUNS 2

/* Largest prompt file. */
#define CANARY_PROMPT_MAX (1024 * 1024)

/* The prompt a canary generates from, pinned by its sha256 and copied
 * into the cache, so the engine reads exactly the bytes hashed. */
struct canary_prompt {
	char sha256[65];
	char *path;		/* the cache's copy; malloced */
};

/*
 * Read eng's canary-prompt, check its sha256 against canary-prompt-sha256
 * or, without it, the hash pinned by the first use (the store's
 * "canary-prompt:ENGINE"), and put the copy in the cache.  A changed
 * file is an error naming both hashes.  Returns 0, or -1 with e set.
 */
int canary_prompt_pin(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, struct canary_prompt *out, struct err *e);
void canary_prompt_release(struct canary_prompt *p);

/*
 * A canary definition: what one canary run is, as canonical JSON (the
 * command with {bin}, {version}, {weights} and {content} left as
 * written, the text parser, the prompt's sha256, env, threads, the
 * weights' sha256 and the hardware key) and its sha256.  Only runs of
 * one definition are compared.
 */
struct canary_definition {
	char key[65];
	char *text;		/* malloced */
};

int canary_definition(const struct conf_engine *eng,
    const char *prompt_sha256, const char *weights_sha256,
    const char *hw_key, struct canary_definition *d, struct err *e);
void canary_definition_release(struct canary_definition *d);

enum canary_state {
	CANARY_NOT_MEASURED,	/* fewer than CANARY_RUNS runs */
	CANARY_FAILED,		/* a run failed and no pair agrees */
	CANARY_NONDETERMINISTIC,	/* two runs generated different text */
	CANARY_DETERMINISTIC	/* CANARY_RUNS or more runs, one text */
};

/* "not-measured", "failed", "nondeterministic", "deterministic". */
const char *canary_state_name(enum canary_state st);

/* A release's canary as the store holds it under one definition. */
struct canary_status {
	enum canary_state state;
	int runs, failed;
	char sha256[65];	/* DETERMINISTIC: the text's; else "" */
	char *text;		/* DETERMINISTIC: the text; malloced */
	size_t text_len;
	char detail[512];	/* FAILED: the last failure's reason and
				 * detail; NONDETERMINISTIC: the two
				 * hashes */
};

int canary_status_get(struct store *s, int64_t release_id,
    const char *def_key, struct canary_status *out, struct err *e);
void canary_status_release(struct canary_status *st);

/*
 * Every canary run of a release, of every definition, oldest first, for
 * listing: each with the state of its release's canary under the run's
 * definition (deterministic, nondeterministic, or not-measured while the
 * pair is incomplete), or CANARY_FAILED for a run that failed.
 */
struct canary_runs {
	struct store_canary_rows rows;
	enum canary_state *state;	/* one per row; malloced */
};

int canary_runs_list(struct store *s, int64_t release_id,
    struct canary_runs *out, struct err *e);
void canary_runs_release(struct canary_runs *r);

/* Where and on what a canary runs: the pinned weights and prompt, this
 * machine, the store. */
struct canary_ctx {
	const struct conf_engine *eng;
	struct store *store;
	int64_t weights_id;
	const char *weights_path;
	const char *weights_sha256;
	int64_t machine_id;
	const char *hw_key;
	const struct canary_prompt *prompt;
	const atomic_int *stop;	/* set asynchronously: stop between runs */
};

/*
 * The command line a canary run of version (unpacked in dir) executes,
 * for people to run again, as bench_command_line() writes a cell's: the
 * canary template expanded with the config's prompt file as {content},
 * and that file on its stdin ("< FILE").  Appended to out.
 */
int canary_command_line(const struct conf_engine *eng, const char *dir,
    const char *version, const char *weights, struct buf *out,
    struct err *e);

/*
 * Run the canary of release release_id (version, unpacked in dir) until
 * CANARY_RUNS runs of the current definition are stored (none when they
 * are), each stored before the next starts.  A run that fails is stored
 * with its reason, not an error.  Returns 0, or -1 with e set when it
 * could not go on (the store, a stop request).
 */
int canary_run(const struct canary_ctx *k, int64_t release_id,
    const char *version, const char *dir, struct err *e);

/*
 * Where two texts first differ, for people: the index of the first
 * whitespace-separated token that differs, and up to ntokens tokens from
 * there of each side, each cut at 200 bytes, "..." after when more
 * follow.  An engine's text is not trusted: control bytes, C1 controls
 * and bytes that are not UTF-8 are written out as \xHH, so before and
 * after are valid UTF-8 that is safe on a terminal and in JSON.  Pure.
 */
struct canary_diff {
	size_t token;		/* 0-based index of the first differing token */
	char before[256];
	char after[256];
};

void canary_diff(const char *a, size_t alen, const char *b, size_t blen,
    int ntokens, struct canary_diff *d);

#endif
