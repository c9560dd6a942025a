/*
 * bench.h: running an engine's benchmark matrix on unpacked releases and
 * storing every run and sample.  Each run: a quiet-machine check, the
 * command template expanded into argv (no shell), the runner, the parser,
 * one transaction for the run and its samples.  Runs of several releases
 * measured for one comparison are interleaved (A B A B ...).
 */
#ifndef BISECTD_BENCH_H
#define BISECTD_BENCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct conf;
struct conf_engine;
struct err;
struct store;
struct store_cell_query;
struct buf;
struct tmpl_vals;

struct bench_cell {
	const char *kind;	/* "pp" (prefill) or "tg" (decode) */
	int prompt, gen;
	const char *content;	/* decode content kind, "" if none */
	char *content_path;	/* its text file, or NULL; owned */
};

/*
 * Matrix cells: a prefill cell per prompt length, then a decode cell per
 * gen length and content kind of the engine (only its first kind with
 * one_content).  Content texts are written under cache/contents/ when
 * missing.  Caller frees with bench_cells_free().
 */
int bench_cells(const struct conf *conf, const struct conf_engine *eng,
    const int *prompts, size_t nprompts, const int *gens, size_t ngens,
    int one_content, struct bench_cell **cells, size_t *ncells,
    struct err *e);
void bench_cells_free(struct bench_cell *cells, size_t n);

/* The text file of a decode content kind, CACHE/contents/KIND.txt, as
 * bench_cells() names it.  Malloced; NULL when out of memory. */
char *bench_content_path(const struct conf *conf, const char *content);

/* The command line one run of a cell executes, for people to run again:
 * def_command_line() of the engine's command. */
int bench_command_line(const struct conf_engine *eng,
    const struct tmpl_vals *v, struct buf *out, struct err *e);

/* Most targets one bench_run() interleaves (a comparison: two; an
 * ablation: the baseline and each switch). */
#define BENCH_MAX_TARGETS 40

/*
 * The version of bisectd's own timing method: how the runner starts,
 * clocks and reaps a run and how samples are taken from it.  It is part
 * of every measurement definition: raise it with any change that makes
 * new times incomparable with stored ones, and stored samples are no
 * longer reused.
 */
#define BENCH_TIMING_VERSION 1

/*
 * A measurement definition: what one run of a cell measures, as
 * canonical JSON (the command expanded for the cell with {bin},
 * {version}, {weights} and {content} left as written, the parser and
 * its unit, the mode and server URL, env, threads, the cell, the
 * weights' sha256, the hardware key and BENCH_TIMING_VERSION) and its
 * sha256.  Samples are compared and reused only within one definition.
 */
struct bench_definition {
	char key[65];		/* sha256 of text */
	char *text;		/* malloced */
	const char *clock;	/* "engine", "wall" or "ttft" (server mode) */
};

int bench_definition(const struct conf_engine *eng, const char *kind,
    int prompt, int gen, const char *content, const char *weights_sha256,
    const char *hw_key, struct bench_definition *d, struct err *e);
void bench_definition_release(struct bench_definition *d);

/*
 * The definition of a run stored under text once reparse has read its
 * output with the engine's current parser: text with the parser's part
 * (parser, unit, clock) replaced.
 */
int bench_definition_reparse(const char *text, const struct conf_engine *eng,
    struct bench_definition *d, struct err *e);

/*
 * The store's query for one cell of release_id under the engine's
 * current definition of it.  Returns 0, or -1 with e set.
 */
int bench_cell_query(const struct conf_engine *eng, const char *kind,
    int prompt, int gen, const char *content, int64_t release_id,
    const char *weights_sha256, const char *hw_key,
    struct store_cell_query *q, struct err *e);

struct bench_target {
	int64_t release_id;
	const char *version;
	const char *dir;	/* the unpacked release root: {bin} */
	/* Or NULL: the context's.  An ablation's switch runs the engine
	 * with its own env and arguments, under its own definition. */
	const struct conf_engine *eng;
	int64_t ablation_id;	/* 0, or the ablation whose run this is */
	const char *variant;	/* with it: "" the baseline, else a switch */
	/* Or 0 and NULL: the context's.  Engines compared side by side
	 * (bisectctl compare) each run on their own pinned weights. */
	int64_t weights_id;
	const char *weights_path, *weights_sha256;
};

struct bench_progress {
	size_t cell, ncells;	/* 1-based cell being run */
	const struct bench_cell *c;
	const char *version;
	const char *engine;	/* the run's engine where the targets are of
				 * several (a comparison), else NULL */
	int rep, reps;		/* 1-based repetition within the cell, of
				 * reps warm-ups or measured runs */
	int warmup;
	const char *against;	/* a confirmation: the release it is
				 * measured against, else NULL */
	size_t done, total;	/* runs */
	double elapsed_s, eta_s;
	const char *waiting;	/* non-NULL: waiting for a quiet machine */
	long long waited_ms;	/* for how long, when waiting */
	/* Non-NULL: no run, a commit of a commit bisect is being built
	 * (the fields above are unset): its id, subject, and the probe of
	 * the bisect it is built for, from 1. */
	const char *building;
	const char *subject;
	int probe;
};

struct bench_ctx {
	const struct conf *conf;
	const struct conf_engine *eng;
	struct store *store;
	int64_t weights_id;	/* the pinned weights: store id, path, hash */
	const char *weights_path;
	const char *weights_sha256;
	int64_t machine_id;	/* this machine: store id, hardware key */
	const char *hw_key;
	void (*progress)(void *arg, const struct bench_progress *p);
	void *progress_arg;
	/* Set asynchronously (a signal) to stop: the running engine is
	 * ended, its run measured again later. */
	const atomic_int *stop;
};

struct bench_tally {
	int runs;		/* runs stored, warm-ups included */
	int failed;		/* of which failed */
	int busy;		/* of which ran on a busy machine */
	int spawn;		/* of which could not start (spawn) */
	char last_failure[512];	/* the last failure's description */
};

/*
 * Run, for each cell in order, `warmup` warm-up runs of each target, then
 * reps[t * ncells + c] analysed runs of target t, interleaved across the
 * targets.  Targets of another engine than the context's (by name) get
 * their engine's pre and post commands; the canary is the context
 * engine's, run on its own targets only.  confirm marks the runs as taken to confirm a boundary.  Every
 * run, failed or not, is stored before the next starts.  A run that
 * cannot start (its binary is missing, say) ends its target's runs in
 * that cell: the others would fail the same way.  Returns 0 when
 * everything ran (failures are counted in tally, not errors), -1 when it
 * could not go on (the store, the lock, or a stop request: e says which).
 */
int bench_run(struct bench_ctx *b, const struct bench_target *targets,
    size_t ntargets, const struct bench_cell *cells, size_t ncells,
    const int *reps, int warmup, int confirm, struct bench_tally *tally,
    struct err *e);

/* Record this machine in the store; fills *machine_id and hw_key[65]. */
int bench_machine(struct store *s, int64_t *machine_id, char hw_key[65],
    struct err *e);

#endif
