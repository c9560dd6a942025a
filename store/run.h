/*
 * run.h: weights, machines, runs and their samples, and the stored runs
 * `runs` and `reparse` read.
 */
#ifndef STORE_RUN_H
#define STORE_RUN_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct store;

/* --- weights and machines --- */
int store_weights_ensure(struct store *s, const char *name,
    const char *sha256, int64_t size, int64_t *id, struct err *e);

/* A GPU of a machine, as its hardware key saw it; "" and -1 unknown. */
struct store_gpu {
	int slot;		/* order among the visible GPUs */
	int index;		/* its index on the machine */
	char model[96], uuid[96], driver[80], cuda[16], vbios[64];
	int64_t power_limit_mw;
	int persistence, mig, ecc;	/* 0 off, 1 on */
	int app_sm_mhz, app_mem_mhz, default_sm_mhz, default_mem_mhz;
	int clocks_locked;
};

struct store_machine {
	char *hw_key;
	char *cpu_model;
	int cores;
	int64_t mem_bytes;
	char *arch;
	char *kernel;
	char *os;
	char *hostname;
	const struct store_gpu *gpus;	/* recorded by ensure(), if any */
	size_t ngpus;
};

int store_machine_ensure(struct store *s, const struct store_machine *m,
    int64_t *id, struct err *e);

/* The newest row of a machine with this hardware identity; 1 if none.
 * Fields are malloced; free with store_machine_release(). */
int store_machine_find(struct store *s, const char *hw_key,
    struct store_machine *out, struct err *e);
void store_machine_release(struct store_machine *m);

/* The GPUs recorded with machine id, in slot order, up to max: *n of
 * them (0 for a machine without). */
int store_machine_gpus(struct store *s, int64_t machine_id,
    struct store_gpu *out, size_t max, size_t *n, struct err *e);

/* The newest weights hash recorded under name; 1 if none (*sha malloced). */
int store_weights_latest(struct store *s, const char *name, char **sha,
    struct err *e);

/* --- runs and samples --- */
struct store_sample {
	int prompt_tokens;
	int gen_tokens;
	int64_t wall_ns;
	int64_t engine_ns;	/* -1: the engine reported none */
	int64_t user_ns, sys_ns;
	int64_t max_rss_kb;
};

/*
 * How a run ended, as a bench run and a canary run both keep it: one
 * helper of the measuring side fills it from the runner's result.
 */
struct store_run_end {
	int64_t wall_ns;	/* -1: none */
	int exit_code;		/* -1: none */
	int signal;		/* 0: none */
	const char *failure;	/* NULL if the run succeeded */
	const char *failure_detail;
	const char *err_tail;	/* the last bytes of stderr */
	size_t err_len;
};

/*
 * What the GPUs did during a run (bisectd/measure/gpurun.c says how each
 * is taken).  samples 0: no GPU state, every field stored as NULL; -1 a
 * field unknown (NULL) although there were readings.
 */
struct store_run_gpu {
	int samples;
	double sm_mhz, mem_mhz;	/* medians */
	int temp_max_c;
	double power_w, util_pct;	/* means */
	int64_t throttle;	/* OR of NVML's reasons */
	int64_t mem_peak;	/* bytes above the memory in use before */
	double energy_j;
	int throttled;		/* thermal, power cap, HW slowdown seen */
};

struct store_run {
	int64_t id;		/* out */
	int64_t release_id, weights_id, machine_id;
	const char *kind;	/* "pp" or "tg" */
	int prompt_tokens, gen_tokens;
	const char *content;	/* "" if none */
	int rep;
	int warmup;
	const char *mode;	/* "bench" or "server" */
	const char *parser;
	int64_t started;
	struct store_run_end end;
	int64_t user_ns, sys_ns, max_rss_kb;	/* -1: none */
	const char *out;	/* stdout, may be NULL */
	size_t out_len;
	int out_truncated;
	double busy_share, loadavg;	/* -1: not sampled */
	int busy;
	const char *info;	/* JSON or NULL */
	int confirm;		/* taken to confirm a boundary */
	int64_t definition_id;	/* store_definition_ensure()'s; 0: none */
	int64_t ablation_id;	/* store_ablation_open()'s; 0: none */
	const char *variant;	/* with it: "" the baseline, else a switch */
	struct store_run_gpu gpu;	/* zero: no GPU state */
};

/*
 * The id of the measurement definition key (the sha256 of text), recorded
 * with its text and clock ("engine", "wall" or "ttft") when new.
 */
int store_definition_ensure(struct store *s, const char *key,
    const char *text, const char *clock, int64_t *id, struct err *e);

/*
 * Store a run and its samples in one transaction: after a crash either
 * both are there or neither.  Inside a transaction of the caller's
 * (store_begin()), they join it, and a failure leaves the rollback to the
 * caller.
 */
int store_run_insert(struct store *s, struct store_run *run,
    const struct store_sample *samples, size_t nsamples, struct err *e);

/* --- stored runs, for `runs` and `reparse` --- */
struct store_run_row {
	int64_t id;
	char *kind;
	int prompt_tokens, gen_tokens;
	char *content;
	int rep, warmup, confirm, busy;
	int64_t started;
	int64_t wall_ns;	/* -1 if none */
	int exit_code;		/* -1 if none */
	int signal;
	char *failure;		/* NULL: ok */
	char *failure_detail;
	char *out;		/* stdout as stored */
	size_t out_len;
	char *err_tail;
	size_t err_len;
	char *parser;
	char *mode;
	int64_t user_ns, sys_ns, max_rss_kb;
	double busy_share;	/* -1 if not sampled */
	int nsamples;
	double engine_ms;	/* the mean of its samples' engine figures
				 * (ms), or -1 when the engine gave none */
	char *clock;		/* the figure the analysis reads under its
				 * definition: "engine", "wall" or "ttft";
				 * NULL without a definition */
	char *definition;	/* its definition's key, or NULL */
	char *definition_text;	/* and canonical text, or NULL */
	char *info;		/* the parser's JSON, or NULL */
	double loadavg;		/* -1 if not sampled */
	int out_truncated;
	int64_t machine_id;
	struct store_run_gpu gpu;	/* samples 0: none stored */
};

struct store_run_rows {
	struct store_run_row *v;
	size_t n;
};

int store_run_list(struct store *s, int64_t release_id,
    struct store_run_rows *out, struct err *e);

/* What the engine last reported about itself in a successful run of the
 * release (the run's info JSON: build, model, threads), or *info NULL
 * when none did.  *info is malloced. */
int store_release_info(struct store *s, int64_t release_id, char **info,
    struct err *e);
void store_run_rows_release(struct store_run_rows *r);

/* A run's samples in their order (*v malloced; may be NULL when none). */
int store_run_samples(struct store *s, int64_t run_id,
    struct store_sample **v, size_t *n, struct err *e);

/*
 * Replace a run's samples and its failure (NULL: the run is now ok) in
 * one transaction: what reparse does with the current parser.  A
 * definition_id > 0 moves the run to that measurement definition (the
 * one with the current parser).
 */
int store_run_resample(struct store *s, int64_t run_id,
    const struct store_sample *samples, size_t n, const char *failure,
    const char *failure_detail, const char *info, int64_t definition_id,
    struct err *e);

#endif
