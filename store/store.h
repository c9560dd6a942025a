/*
 * store.h: the SQLite store.  Every SQL statement of the project lives
 * under store/; callers get and give plain structs.
 *
 * store_open() applies the embedded migrations (sql/NNN_*.sql), each in
 * one transaction, tracked by PRAGMA user_version; a database newer than
 * this binary is refused.  Connections use WAL, foreign keys and a busy
 * timeout.  Every logical write is one transaction: on any error it is
 * rolled back and the database is as it was.
 */
#ifndef STORE_STORE_H
#define STORE_STORE_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct store;

/* Open (creating if needed) and migrate to the latest schema. */
int store_open(const char *path, struct store **out, struct err *e);

/*
 * Open and migrate only up to version max (tests build old schemas with
 * it).  max = 0 opens without migrating.
 */
int store_open_version(const char *path, int max, struct store **out,
    struct err *e);

/*
 * Open an existing, fully migrated database for reading only: what
 * commands that only read use, so that a user who may read the database
 * but not write it (a socket-group member) can run them.  Nothing is
 * created, migrated or switched to WAL.
 */
int store_open_readonly(const char *path, struct store **out,
    struct err *e);

void store_close(struct store *s);

/* The schema version of the open database, and of this binary. */
int store_schema_version(struct store *s);
int store_latest_version(void);

/* "ok", or the first problem PRAGMA integrity_check reports (malloced). */
char *store_integrity_check(struct store *s, struct err *e);

/*
 * A number that changes whenever another connection commits a change to
 * the database (PRAGMA data_version): a reader's cache of what it
 * computed from the store is good while it stays the same.
 */
int store_data_version(struct store *s, int *version, struct err *e);

/* Explicit transactions, for a caller's logical write spanning calls. */
int store_begin(struct store *s, struct err *e);
int store_commit(struct store *s, struct err *e);
void store_rollback(struct store *s);

/* --- engines and releases --- */

int store_engine_ensure(struct store *s, const char *name, const char *source,
    int64_t *id, struct err *e);
/* 0 and *id, or 1 if the store has never seen the engine, or -1. */
int store_engine_find(struct store *s, const char *name, int64_t *id,
    struct err *e);
int store_engine_etag(struct store *s, int64_t engine_id, char **etag,
    struct err *e);
int store_engine_set_etag(struct store *s, int64_t engine_id,
    const char *etag, struct err *e);

enum release_state { RELEASE_LISTED, RELEASE_FETCHED, RELEASE_MEASURED,
	RELEASE_FAILED };

struct store_release {
	int64_t id;
	int64_t engine_id;
	char *version;
	char *order_key;
	char *url;		/* or NULL */
	char *asset;		/* or NULL */
	char *expected_sha256;	/* or NULL */
	char *sha256_origin;	/* or NULL */
	char *archive_sha256;	/* or NULL */
	enum release_state state;
	char *failure;		/* or NULL */
	int64_t discovered;
};

void store_release_release(struct store_release *r);
const char *store_release_state_name(enum release_state st);

/*
 * Insert a release, or update its url/asset/expected hash if the version
 * is known (its state, archive hash and runs are kept).  r->id is set.
 */
int store_release_upsert(struct store *s, struct store_release *r,
    struct err *e);

/* 0 and *out filled, 1 if no such version, -1 on error. */
int store_release_get(struct store *s, int64_t engine_id, const char *version,
    struct store_release *out, struct err *e);

struct store_release_list {
	struct store_release *v;
	size_t n;
};

/* All releases of the engine in version order. */
int store_release_list(struct store *s, int64_t engine_id,
    struct store_release_list *out, struct err *e);
void store_release_list_release(struct store_release_list *l);

/* --- commits (release rows of kind 'commit') --- */

enum commit_build_state { COMMIT_BUILD_NONE, COMMIT_BUILD_RUNNING,
	COMMIT_BUILD_DONE, COMMIT_BUILD_FAILED };

struct store_commit_info {
	char id[41];		/* the commit id, also its release's version */
	char *subject;		/* upstream text; malloced */
	char *author;		/* upstream text; malloced */
	int64_t author_time;	/* Unix seconds */
	enum commit_build_state state;
	int builds;		/* builds started, interrupted ones included */
	int64_t build_ms;	/* the last finished build's, or -1 */
	char *log_tail;		/* a failed build's output tail, or NULL */
};

/*
 * Record commit c of the engine as a release of kind 'commit' (version:
 * its id) with its description, or find it; *release_id is its row.  A
 * release of the source's called like the commit is an error.  Releases
 * listed by store_release_list() never include commits.
 */
int store_commit_ensure(struct store *s, int64_t engine_id,
    const struct store_commit_info *c, int64_t *release_id, struct err *e);

/* 0 and *out filled (free with store_commit_info_release()), 1 when the
 * release is no commit, -1 on error. */
int store_commit_get(struct store *s, int64_t release_id,
    struct store_commit_info *out, struct err *e);
void store_commit_info_release(struct store_commit_info *c);

/* A build of the commit starts: state 'building', one more build. */
int store_commit_build_start(struct store *s, int64_t release_id,
    struct err *e);

/* A build ended as state (built or failed), with its log tail. */
int store_commit_build_done(struct store *s, int64_t release_id,
    enum commit_build_state state, int64_t build_ms, const char *log_tail,
    struct err *e);

int store_release_set_state(struct store *s, int64_t release_id,
    enum release_state st, const char *failure, struct err *e);
int store_release_set_archive(struct store *s, int64_t release_id,
    const char *sha256, struct err *e);

/* --- weights and machines --- */

int store_weights_ensure(struct store *s, const char *name,
    const char *sha256, int64_t size, int64_t *id, struct err *e);

struct store_machine {
	char *hw_key;
	char *cpu_model;
	int cores;
	int64_t mem_bytes;
	char *arch;
	char *kernel;
	char *os;
	char *hostname;
};

int store_machine_ensure(struct store *s, const struct store_machine *m,
    int64_t *id, struct err *e);

/* The newest row of a machine with this hardware identity; 1 if none.
 * Fields are malloced; free with store_machine_release(). */
int store_machine_find(struct store *s, const char *hw_key,
    struct store_machine *out, struct err *e);
void store_machine_release(struct store_machine *m);

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

/* --- the output canary (store/canary.c) --- */

/* The id of the canary definition key (the sha256 of text), recorded
 * with its text when new. */
int store_canary_definition_ensure(struct store *s, const char *key,
    const char *text, int64_t *id, struct err *e);

struct store_canary_run {
	int64_t id;		/* out */
	int64_t release_id, weights_id, machine_id, definition_id;
	int64_t started;
	struct store_run_end end;	/* failure NULL: it ran and its
					 * text was read */
	const char *text;	/* the generated text; NULL when failed */
	size_t text_len;
	const char *sha256;	/* of text; NULL when failed */
	uint64_t out_bytes;
};

int store_canary_insert(struct store *s, struct store_canary_run *r,
    struct err *e);

struct store_canary_row {
	int64_t id;
	int64_t started;
	int64_t wall_ns;	/* -1: none */
	char *definition;	/* its definition's key */
	char *definition_text;	/* and canonical text */
	char *failure;		/* NULL: ok */
	char *failure_detail;
	char *text;		/* NUL-terminated, text_len bytes before it;
				 * NULL when failed */
	size_t text_len;
	char *sha256;		/* NULL when failed */
	char *err_tail;		/* NULL when none */
	size_t err_len;
};

struct store_canary_rows {
	struct store_canary_row *v;	/* oldest first; malloced */
	size_t n;
};

/* The canary runs of a release under the definition with key def_key,
 * or under every definition when def_key is NULL. */
int store_canary_list(struct store *s, int64_t release_id,
    const char *def_key, struct store_canary_rows *out, struct err *e);
void store_canary_rows_release(struct store_canary_rows *r);

/* --- alerts --- */

/*
 * Record an alert once per dedup_key: returns 0 when recorded, 1 when an
 * alert with that key exists already, -1 on error.
 */
int store_alert_record(struct store *s, const char *kind, const char *engine,
    const char *dedup_key, const char *summary, const char *body,
    struct err *e);


/* --- samples for analysis --- */

/* Which runs' samples to read: comparability (the README's) is the same
 * release, the same weights hash and the same hardware identity, and
 * the same measurement definition (which names those two and the cell
 * again, with the command, parser, mode, env and timing method). */
struct store_cell_query {
	int64_t release_id;
	const char *weights_sha256;
	const char *hw_key;
	const char *kind;	/* "pp" or "tg" */
	int prompt_tokens, gen_tokens;
	const char *content;	/* "" for none */
	char definition[65];	/* the definition's key; "" matches nothing */
};

struct store_point {
	int64_t time_ns;	/* the definition's clock: the engine's own
				 * figure, the wall time, or the TTFT */
	int64_t run_id;
	int confirm;		/* the run confirmed a boundary */
	int busy;		/* the machine was busy before the run */
	int lower_bound;	/* server mode: time to first token */
};

struct store_points {
	struct store_point *v;	/* malloced */
	size_t n;
};

/*
 * The analysed samples of one cell (warm-ups and failed runs excluded),
 * oldest first.
 */
int store_cell_points(struct store *s, const struct store_cell_query *q,
    struct store_points *out, struct err *e);
void store_points_release(struct store_points *p);

/* Failed runs of a cell (for skip decisions and reports). */
int store_cell_failures(struct store *s, const struct store_cell_query *q,
    int *count, struct err *e);

/*
 * The outcomes of a cell's runs: *ok counts analysed runs that gave
 * samples, *bad the runs that failed (warm-ups included) and analysed
 * runs that gave none.  Every measured run adds to one of the two.
 */
int store_cell_outcomes(struct store *s, const struct store_cell_query *q,
    int *ok, int *bad, struct err *e);

/* --- the runs of many releases, read in one pass (release_runs.c) --- */

/* One cell of a release under one definition: what store_cell_points()
 * and store_cell_outcomes() give for a query that names it. */
struct store_cell_runs {
	char kind[3];			/* "pp" or "tg" */
	int prompt_tokens, gen_tokens;
	char *content;			/* "" for none; malloced */
	char definition[65];		/* the definition's key */
	struct store_points points;	/* analysed samples, oldest first */
	int ok, bad;			/* the outcomes of its runs */
};

struct store_failed_run {
	int64_t run_id;
	char *failure;			/* malloced */
	char *detail;			/* malloced; NULL when none */
};

struct store_release_runs {
	/* Every cell with runs comparable under one weights hash and one
	 * hardware identity (the release's and those of the releases with
	 * its archive), whatever the definition. */
	struct store_cell_runs *cells;	/* malloced */
	size_t ncells;
	/* The release's own failed runs, whatever their weights, machine
	 * or definition, oldest first, as store_run_list() has them. */
	struct store_failed_run *failed;	/* malloced */
	size_t nfailed;
};

/*
 * Read the runs of n releases into out[0..n-1] (free each with
 * store_release_runs_release()), from one snapshot of the store: what a
 * report or a verdict over a long range reads, one statement per
 * release instead of one per cell.  Returns 0, or -1 with e set and
 * nothing to free.
 */
int store_release_runs_read(struct store *s, const char *weights_sha256,
    const char *hw_key, const int64_t *release_ids, size_t n,
    struct store_release_runs *out, struct err *e);
void store_release_runs_release(struct store_release_runs *rr);

/* The cell of rr that q names (q's release, weights and machine are
 * taken to be rr's), or NULL when it has no runs. */
const struct store_cell_runs *store_release_runs_cell(
    const struct store_release_runs *rr, const struct store_cell_query *q);

/* --- per-release figures kept for reports (summary.c) --- */

/* What a summary was computed under besides the runs. */
struct store_summary_key {
	const char *weights_sha256;
	const char *hw_key;
	const char *config;	/* a hash of every other input */
};

struct store_summary {
	char *stamp;	/* the state of the release's runs; malloced */
	int hit;	/* 1: a summary is kept for stamp (handed to use()) */
	/* Not a hit: the release's runs, read in the stamp's snapshot, and
	 * what the caller computes of them: entry, plot and runs, which
	 * store_summary_release() frees. */
	struct store_release_runs runs_read;
	void *entry;
	size_t entry_len;
	void *plot;
	size_t plot_len;
	void *runs;
	size_t runs_len;
};

/* A summary to keep, or one kept as it is read: computed from the runs
 * read at stamp. */
struct store_summary_row {
	int64_t release_id;
	const char *stamp;
	const void *entry, *plot, *runs;
	size_t entry_len, plot_len, runs_len;
};

/*
 * The summaries kept of release_ids[0..n-1] under k, each handed to
 * use(arg, i, row) as it is read, its bytes the store's until use()
 * returns (nothing is copied); the stamp of each into out[0..n-1]
 * (free each with store_summary_release()); and for each release
 * without a summary kept for its runs as they are, its runs as
 * store_release_runs_read() reads them, all from one snapshot.  plot:
 * also read the plot.  Returns 0; use()'s value when it returns
 * non-zero, which stops the reading; or -1 with e set.  Nothing is
 * left to free unless 0 is returned.
 */
int store_summary_read(struct store *s, const struct store_summary_key *k,
    int plot, const int64_t *release_ids, size_t n,
    struct store_summary *out,
    int (*use)(void *arg, size_t i, const struct store_summary_row *row),
    void *arg, struct err *e);
void store_summary_release(struct store_summary *x);

/*
 * Keep rows[0..n-1] under k, in one transaction, dropping what the
 * same releases kept for older states.  Returns 0; 1 when nothing was
 * kept because the store is read-only or another connection is
 * writing (it does not wait); -1 with e set on an error.
 */
int store_summary_save(struct store *s, const struct store_summary_key *k,
    const struct store_summary_row *rows, size_t n, struct err *e);

/* How many summaries are kept. */
int store_summary_count(struct store *s, int64_t *n, struct err *e);

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

/* --- bisects --- */

struct store_bisect {
	int64_t id;
	int64_t job_id;		/* 0: none */
	int64_t engine_id;
	const char *good, *bad, *metric;
	double threshold;
	int all;
	int64_t weights_id, machine_id;
};

/*
 * The running bisect with the same engine, range, metric, threshold and
 * mode, to resume; or a new one.  *resumed says which.
 */
int store_bisect_open(struct store *s, struct store_bisect *b, int *resumed,
    struct err *e);

/* Append the next probe (seq = count so far). */
int store_probe_add(struct store *s, int64_t bisect_id, const char *action,
    int64_t release_id, int64_t other_id, int reps, struct err *e);

/* How many probes the bisect has stored. */
int store_probe_count(struct store *s, int64_t bisect_id, int *n,
    struct err *e);

/* The releases the bisect marked skipped (*ids malloced). */
int store_probe_skipped(struct store *s, int64_t bisect_id, int64_t **ids,
    size_t *n, struct err *e);

int store_bisect_finish(struct store *s, int64_t bisect_id, const char *state,
    const char *status, const char *verdict_json, struct err *e);

/* The verdict JSON of the newest finished bisect over the range, or NULL
 * (*json malloced). */
int store_bisect_latest(struct store *s, int64_t engine_id, const char *good,
    const char *bad, const char *metric, char **json, struct err *e);

/* --- ablations --- */

/* A new ablation of release_id (job_id 0: run by hand); *id is set. */
int store_ablation_open(struct store *s, int64_t job_id, int64_t engine_id,
    int64_t release_id, int64_t *id, struct err *e);

/*
 * The newest ablation of release_id still "running" (one that was
 * stopped or killed before it finished), or *id 0.  The caller holds the
 * benchmark lock, so no other process is measuring it.
 */
int store_ablation_unfinished(struct store *s, int64_t release_id,
    int64_t *id, struct err *e);

/* End it: state "done" with its status ("ranked", "inert", "no-control")
 * and report JSON, or "failed" with why in result. */
int store_ablation_finish(struct store *s, int64_t id, const char *state,
    const char *status, const char *result, struct err *e);

/*
 * The analysed samples of an ablation's variant ("" the baseline) in the
 * prefill cell of prompt_tokens measured under the definition def_key
 * (warm-ups and failed runs excluded), in that definition's clock,
 * oldest first.
 */
int store_ablation_points(struct store *s, int64_t ablation_id,
    const char *variant, int prompt_tokens, const char *def_key,
    struct store_points *out, struct err *e);

/* The report JSON of the newest finished ablation of release_id, or
 * NULL (*json malloced). */
int store_ablation_latest(struct store *s, int64_t release_id, char **json,
    struct err *e);

/* --- the job queue --- */

struct store_job {
	int64_t id;
	char *kind;		/* "fetch", "bench", "bisect", "watch" */
	char *engine;
	char *args;		/* JSON */
	int priority;
	char *state;		/* "queued", "running", "done", "failed",
				 * "cancelled" */
	int64_t created, started, finished;	/* 0: not yet */
	int exit_code;		/* -1: none yet */
	char *result;		/* or NULL */
};

/* Queue a job; *id gets its number. */
int store_job_enqueue(struct store *s, const char *kind, const char *engine,
    const char *args, int priority, int64_t *id, struct err *e);

struct store_jobs {
	struct store_job *v;
	size_t n;
};

/* Jobs not finished (queued or running) in the order they run, then the
 * `recent` most recently finished. */
int store_job_list(struct store *s, int recent, struct store_jobs *out,
    struct err *e);
void store_jobs_release(struct store_jobs *j);

/*
 * The newest `limit` jobs (all when limit < 0), newest first; *total
 * gets how many jobs the store holds.
 */
int store_job_recent(struct store *s, int64_t limit, struct store_jobs *out,
    int64_t *total, struct err *e);

/*
 * Delete the jobs that ended (done, failed, cancelled) before `before`
 * (epoch seconds), in one transaction; their bisects and probes stay,
 * no longer tied to a job.  *n gets how many were deleted.
 */
int store_job_prune(struct store *s, int64_t before, int64_t *n,
    struct err *e);

/* --- the daemon's side of the queue (store/queue.c) --- */

/*
 * Take the next queued job (highest priority, then oldest) and mark it
 * running, in one statement: two pickers never get the same job.
 * 0 with *out filled (free with store_job_release), 1 when the queue is
 * empty, -1 on error.
 */
int store_job_pick(struct store *s, struct store_job *out, struct err *e);
/* Take the queued job id and mark it running, as store_job_pick: 0 with
 * *out, 1 when it is no longer queued, -1. */
int store_job_claim(struct store *s, int64_t id, struct store_job *out,
    struct err *e);

/* One job by number: 0, 1 if there is none, -1. */
int store_job_get(struct store *s, int64_t id, struct store_job *out,
    struct err *e);
void store_job_release(struct store_job *j);

/*
 * End a running job: state "done", "failed" or "cancelled", with the
 * exit code and result (the verdict JSON, or the error message; may be
 * NULL).
 */
int store_job_finish(struct store *s, int64_t id, const char *state,
    int exit_code, const char *result, struct err *e);

/* Put a running job back in the queue (a clean stop: it resumes). */
int store_job_requeue(struct store *s, int64_t id, struct err *e);

/*
 * At start-up: every job left running by a daemon that died goes back
 * to the queue (those whose cancel was asked end cancelled); *n gets how
 * many were requeued.
 */
int store_job_recover(struct store *s, int *n, struct err *e);

enum store_cancel {
	STORE_CANCEL_DONE,	/* it was queued and is now cancelled */
	STORE_CANCEL_RUNNING,	/* it is running: the cancel is recorded,
				 * its runner must stop it */
	STORE_CANCEL_FINISHED,	/* it had ended already */
	STORE_CANCEL_NONE	/* no such job */
};

/* Cancel a job: returns an enum store_cancel, or -1 on error. */
int store_job_cancel(struct store *s, int64_t id, struct err *e);

/* Whether a cancel was asked for the job: 0 and *yes, -1. */
int store_job_cancel_requested(struct store *s, int64_t id, int *yes,
    struct err *e);

/* The last time schedule name fired: 0 and *when, 1 if never, -1. */
int store_schedule_last(struct store *s, const char *name, int64_t *when,
    struct err *e);
int store_schedule_set(struct store *s, const char *name, int64_t when,
    struct err *e);

/* --- counts for the daemon's /metrics (store/tally.c) --- */

struct store_tally_row {
	char *key[3];		/* malloced, or NULL */
	int64_t n, sum;
};

struct store_tally {
	struct store_tally_row *v;
	size_t n;
};

/* Runs by engine, outcome ("ok" or the failure reason) and kind
 * ("run", "warmup", "confirm"): n runs. */
int store_tally_runs(struct store *s, struct store_tally *out, struct err *e);
/* Jobs by kind and state: n jobs, sum of seconds from start to finish
 * (0 for those not finished). */
int store_tally_jobs(struct store *s, struct store_tally *out, struct err *e);
/* Each engine's newest finished bisect: engine, status, "GOOD..BAD"; n
 * is when it finished (Unix time), sum its number. */
int store_tally_verdicts(struct store *s, struct store_tally *out,
    struct err *e);
void store_tally_release(struct store_tally *t);
/* --- measurements on Slurm (store/slurm.c) --- */

/* One measurement request and the batch job carrying it out. */
struct store_slurm_job {
	int64_t id;
	char *request;		/* 32 hex digits, in its files */
	char *plan;		/* sha256 of what it measures */
	int64_t bisect_id;	/* 0: none */
	int64_t job_id;		/* the queue's job; 0: none */
	char *engine, *runner;
	int attempt;		/* 1, 2 ... for the same plan */
	int64_t slurm_id;	/* 0: not submitted yet */
	char *state;		/* Slurm's, or submitting, ingested, failed */
	char *node;		/* or NULL */
	char *pinned;		/* --nodelist, or NULL */
	char *hw_key;		/* ingested: the result's comparability key */
	char *failure, *detail;	/* or NULL */
	int64_t submitted, updated, ingested;	/* Unix times; 0: not yet */
};

struct store_slurm_jobs {
	struct store_slurm_job *v;	/* malloced */
	size_t n;
};

void store_slurm_job_release(struct store_slurm_job *j);
void store_slurm_jobs_release(struct store_slurm_jobs *l);

/* Record a request about to be submitted (state submitting), from j's
 * request, plan, bisect_id, job_id, engine, runner, attempt, pinned. */
int store_slurm_add(struct store *s, const struct store_slurm_job *j,
    int64_t *id, struct err *e);
/* sbatch gave it slurm_id: state PENDING. */
int store_slurm_submitted(struct store *s, int64_t id, int64_t slurm_id,
    struct err *e);
/* Slurm's state as last read, and the node (NULL: keep the one known);
 * an ingested or failed job is left as it is. */
int store_slurm_seen(struct store *s, int64_t id, const char *state,
    const char *node, struct err *e);
/* It ended without a result the store took: state failed. */
int store_slurm_fail(struct store *s, int64_t id, const char *failure,
    const char *detail, struct err *e);
/* The bisect's newest job with this plan still in flight: 0, 1, -1. */
int store_slurm_active(struct store *s, int64_t bisect_id, const char *plan,
    struct store_slurm_job *out, struct err *e);
/* The job of a request id: 0, 1 if none, -1. */
int store_slurm_get(struct store *s, const char *request,
    struct store_slurm_job *out, struct err *e);
/* How many jobs the bisect submitted for the plan, resubmissions too. */
int store_slurm_attempts(struct store *s, int64_t bisect_id, const char *plan,
    int *n, struct err *e);
/*
 * The bisect's pinned node: its newest ingested job (node, hw_key),
 * unless a later job of the bisect failed on that node with
 * slurm-node-fail.  0, 1 when nothing pins it, -1.
 */
int store_slurm_pin(struct store *s, int64_t bisect_id,
    struct store_slurm_job *out, struct err *e);
/*
 * Mark the job's result ingested, with its node and comparability key:
 * 0, or 1 when it was ingested already (the caller rolls back), -1.  Meant
 * inside the caller's transaction with the result's runs.
 */
int store_slurm_claim(struct store *s, int64_t id, const char *node,
    const char *hw_key, struct err *e);
/*
 * The comparability key of the node whose runs a report of engine's
 * good..bad shows: that of the newest ingested job of a bisect over the
 * range, else of the engine's newest.  0, 1 if the engine has none, -1.
 */
int store_slurm_range_key(struct store *s, const char *engine,
    const char *good, const char *bad, char hw_key[65], struct err *e);
/*
 * The bisect's anchor: how many of its jobs failed with
 * slurm-node-fail.  Each such failure starts a new one, whose runs are
 * compared with none of the earlier anchors' even on the same node (it
 * may come back repaired, changed).
 */
int store_slurm_anchor(struct store *s, int64_t bisect_id, int *n,
    struct err *e);
/* The jobs of the newest bisect of engine's good..bad, oldest first (none
 * when it has none). */
int store_slurm_range_jobs(struct store *s, const char *engine,
    const char *good, const char *bad, struct store_slurm_jobs *out,
    struct err *e);
/* Jobs of the queue's job_id (0: of every job), only those in flight
 * when active, oldest first. */
int store_slurm_list(struct store *s, int64_t job_id, int active,
    struct store_slurm_jobs *out, struct err *e);

/* --- alert delivery, watch and yardstick state (store/alert.c) --- */

struct store_alert {
	int64_t id;
	int64_t created;
	char *kind, *engine, *dedup_key, *summary;	/* malloced */
	char *body;		/* the alert's JSON; malloced */
};
void store_alert_release(struct store_alert *a);

/*
 * Give sink (target: its URL, command or addresses as they may be shown,
 * for the listing) a delivery due at due_at of every alert recorded at or
 * after since that it has none of yet: new alerts, and for a sink added
 * to the configuration the recent ones, never an old backlog.  The
 * sink's earlier rows take this target too.  due_at is the caller's
 * clock, so the rows are due in the pass that enlists them even when
 * the clock turned a second since the pass began.
 */
int store_alert_enlist(struct store *s, const char *sink, const char *target,
    int64_t since, int64_t due_at, struct err *e);

struct store_alert_due {
	struct store_alert alert;
	int attempts;		/* made before this one */
};

struct store_alert_dues {
	struct store_alert_due *v;	/* malloced */
	size_t n;
};

/* The pending deliveries of sink due at now (next_at <= now), oldest
 * alert first, at most max. */
int store_alert_due(struct store *s, const char *sink, int64_t now,
    size_t max, struct store_alert_dues *out, struct err *e);
void store_alert_dues_release(struct store_alert_dues *d);

struct store_alert_attempt {
	int64_t alert_id;
	const char *sink;
	int64_t at;		/* Unix time it started */
	int ok;
	long http_status;	/* -1: none */
	int exit_code;		/* -1: none */
	const char *error;	/* NULL when ok */
	int64_t duration_ms;
	int64_t next_at;	/* failed: when to retry; 0: give up */
};

/* Store an attempt and move its delivery to delivered, failed, or
 * pending until next_at, in one transaction. */
int store_alert_attempt_add(struct store *s,
    const struct store_alert_attempt *a, struct err *e);

/* Move every pending delivery of sink due before until to until,
 * without counting an attempt: a receiver that is down is not asked
 * again for each alert in turn. */
int store_alert_postpone(struct store *s, const char *sink, int64_t until,
    struct err *e);

/* The earliest next attempt of sink's pending deliveries: 0 and *when,
 * 1 if none is pending, -1. */
int store_alert_next_due(struct store *s, const char *sink, int64_t *when,
    struct err *e);

struct store_alert_try {
	int64_t at;
	int ok;
	long http_status;	/* -1: none */
	int exit_code;		/* -1: none */
	char *error;		/* or NULL; malloced */
	int64_t duration_ms;
};

struct store_alert_sink {
	char *sink, *target, *state;	/* malloced */
	int attempts;
	int64_t next_at;
	int64_t delivered;	/* 0: not yet */
	struct store_alert_try *tries;	/* oldest first; malloced */
	size_t ntries;
};

struct store_alert_row {
	struct store_alert alert;
	struct store_alert_sink *sinks;	/* by name; malloced */
	size_t nsinks;
};

struct store_alert_rows {
	struct store_alert_row *v;	/* newest first; malloced */
	size_t n;
};

/* The newest limit alerts with their deliveries and attempts. */
int store_alert_list(struct store *s, int limit, struct store_alert_rows *out,
    struct err *e);
void store_alert_rows_release(struct store_alert_rows *r);

/* A named value of watch_state: 0 with *value (malloced) and *updated
 * (may be NULL), 1 if unset, -1. */
int store_state_get(struct store *s, const char *key, char **value,
    int64_t *updated, struct err *e);
int store_state_set(struct store *s, const char *key, const char *value,
    struct err *e);

#endif
