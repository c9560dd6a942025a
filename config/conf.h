/*
 * conf.h: the configuration, read from a git-config syntax file with
 * libgit2's config API and validated as a whole.
 *
 * conf_load() gives either a fully resolved struct conf (defaults filled
 * in, relative paths made absolute against the file's folder, weights
 * names resolved) or the list of every problem found, each one line of
 * the form "FILE:LINE: section.key: what was expected".
 */
#ifndef CONFIG_CONF_H
#define CONFIG_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "common/strv.h"

struct cron;

#define CONF_MAX_LENGTHS 32

enum conf_source {
	SOURCE_GITHUB,		/* github:OWNER/REPO */
	SOURCE_URL,		/* url:TEMPLATE */
	SOURCE_GIT,		/* git:PATH-OR-URL */
	SOURCE_DIR		/* dir:PATH */
};

enum conf_parser {
	PARSER_WALL,		/* the runner's own clock */
	PARSER_LLAMA_BENCH,	/* llama-bench -o json / jsonl */
	PARSER_JSON,		/* json:PATH, a number at a dotted path */
	PARSER_REGEX		/* regex:RE, first capture in regex-unit */
};

/* How a canary's generated text is picked out of its stdout. */
enum conf_text_parser {
	TEXT_STDOUT,		/* the whole of stdout */
	TEXT_JSON,		/* json:PATH, a string at a dotted path */
	TEXT_REGEX		/* regex:RE, its first capture */
};

enum conf_unit { UNIT_NS, UNIT_US, UNIT_MS, UNIT_S, UNIT_TPS };

enum conf_mode { MODE_BENCH, MODE_SERVER, MODE_SERVE };

/* Serve mode: how requests arrive. */
enum conf_arrival {
	ARRIVAL_POISSON,	/* at load-rate, exponential gaps */
	ARRIVAL_FIXED,		/* at load-rate, equal gaps */
	ARRIVAL_CONCURRENCY	/* load-concurrency in flight, each sent as
				 * one ends */
};

/* Serve mode: the streaming API spoken. */
enum conf_dialect {
	DIALECT_OPENAI,		/* /v1/completions, "stream": true */
	DIALECT_LLAMA		/* llama-server's /completion stream */
};

/*
 * A serve-mode figure of one run: a latency and a percentile.  The
 * order is the order of a serve run's stored samples (their index), so
 * it only ever grows at the end.
 */
enum conf_serve_figure {
	FIG_TTFT_P50, FIG_TTFT_P90, FIG_TTFT_P99,
	FIG_TPOT_P50, FIG_TPOT_P90, FIG_TPOT_P99,
	FIG_ITL_P50, FIG_ITL_P90, FIG_ITL_P99,
	FIG_E2E_P50, FIG_E2E_P90, FIG_E2E_P99,
	FIG_N
};

/* The load profile of a serve-mode engine: one run is one server start
 * and the whole of this load. */
struct conf_load {
	enum conf_arrival arrival;
	double rate;		/* requests a second; 0 with concurrency */
	int concurrency;	/* requests in flight; 0 with a rate */
	int requests;		/* measured requests; 0 with a duration */
	int64_t duration_ms;	/* arrivals stop after it; 0: requests */
	int warmup;		/* requests before, sent and not counted */
	int prompt[CONF_MAX_LENGTHS];	/* prompt words, drawn uniformly */
	size_t nprompt;
	int output[CONF_MAX_LENGTHS];	/* output tokens, drawn uniformly */
	size_t noutput;
	int64_t slo_ttft_ms;	/* goodput's targets; 0: none */
	int64_t slo_tpot_ms;
	int64_t max_lag_ms;	/* a run whose requests left later than this
				 * at p99 is flagged: the client was the
				 * bottleneck */
	double max_errors;	/* fraction of failed requests past which
				 * the run fails */
	enum conf_dialect dialect;
	int line;		/* where load-rate or load-concurrency is,
				 * for messages; 0 */
};

enum conf_metric_kind {
	METRIC_PER_TOKEN,	/* slope of the fit, ms per prompt token */
	METRIC_FIXED,		/* intercept of the fit, ms */
	METRIC_PP,		/* prefill throughput at prompt length n */
	METRIC_TG,		/* decode throughput at gen length n */
	METRIC_SERVE,		/* a serve run's figure, n: its enum
				 * conf_serve_figure */
	METRIC_MEMORY,		/* a run's peak memory, n: its enum
				 * conf_memory ("gpu-memory", "rss") */
	METRIC_CANARY		/* "output": the canary's text, not a time;
				 * a bisect's and a report's, never an
				 * engine's metric key */
};

/* METRIC_MEMORY's n: which memory. */
enum conf_memory {
	MEM_GPU,		/* peak GPU memory of the run (NVML) */
	MEM_RSS			/* the run's peak resident set (its cgroup,
				 * else getrusage) */
};

struct conf_metric {
	enum conf_metric_kind kind;
	int n;			/* prompt or gen length for METRIC_PP/TG;
				 * the enum conf_serve_figure of SERVE */
};

/* conf_weights, conf_engine, conf_alert, conf_runner and conf_ablation keep
 * their name first: conf.c finds sections by it. */
struct conf_weights {
	char *name;		/* the subsection name */
	char *path;		/* absolute, or NULL when url is set */
	char *url;		/* or NULL */
	char *sha256;		/* 64 lowercase hex digits, or NULL */
	int line;		/* where the section starts, for messages */
	int path_line, sha256_line;	/* where those keys are, or 0 */
};

enum conf_runner_kind {
	RUNNER_LOCAL,		/* on this machine, one benchmark at a time */
	RUNNER_SLURM		/* one batch job per measurement */
};

/* Where an engine's measurements run: [runner "NAME"]. */
struct conf_runner {
	char *name;
	int line;
	enum conf_runner_kind kind;
	char *partition;	/* sbatch --partition, or NULL */
	char *account;		/* --account, or NULL */
	char *gres;		/* --gres, e.g. "gpu:1", or NULL */
	char *constraint;	/* --constraint, or NULL */
	int exclusive;		/* --exclusive; default 1 */
	int64_t time_limit_ms;	/* --time, whole minutes; 0: the
				 * partition's */
	int max_jobs;		/* measurements in flight at once; 1 local */
	char *spool;		/* absolute: requests and results, reachable
				 * from the daemon and every node; slurm */
	struct strv env;	/* NAME=VALUE of every run on it: after
				 * conf_load(), in its engines' env too */
};

struct conf_engine {
	char *name;
	int line;

	char *runner_name;	/* [engine] runner, or NULL: local */
	const struct conf_runner *runner;	/* resolved, or NULL; not
						 * owned */
	/*
	 * A cell of a matrix (docs/fleet.md): an [engine] whose runner or
	 * weights list several names is not an engine itself but one per
	 * runner and weights, "ENGINE/RUNNER/WEIGHTS" (a part that lists
	 * one name left out).  A cell shares every other field with its
	 * matrix; it owns only its name, runner_name and weights_name.
	 */
	const struct conf_engine *matrix;	/* or NULL: not a cell */
	struct strv matrix_runners;	/* a matrix's lists, as written; */
	struct strv matrix_weights;	/* empty in a cell or an engine */

	enum conf_source source;
	char *source_spec;	/* as written: "github:o/r" */
	char *source_arg;	/* after the prefix; a path is absolute */
	int source_line;	/* where source is, or 0 */
	char *asset;		/* pattern with {version}, or NULL */
	struct strv versions;	/* explicit list for url: sources */
	char *sha256sums;	/* URL or NULL */
	char *api;		/* GitHub API base */
	char *token_env;	/* or NULL */
	int prereleases;
	int allow_http;
	char *tag_pattern;

	char *command;		/* template with {bin} {weights} ... */
	struct strv env;	/* NAME=VALUE */
	char *workdir;		/* absolute or NULL */
	char *pre, *post;	/* templates or NULL */
	enum conf_parser parser;
	char *parser_arg;	/* json path or regex, or NULL */
	enum conf_unit regex_unit;
	enum conf_mode mode;
	char *url;		/* server mode: completions URL, or NULL */
	char *health_url;	/* server mode: readiness URL, or NULL */
	struct conf_load load;	/* serve mode's profile */

	char *weights_name;
	const struct conf_weights *weights;	/* resolved; not owned */

	int prompts[CONF_MAX_LENGTHS];
	size_t nprompts;
	int gen[CONF_MAX_LENGTHS];
	size_t ngen;
	struct strv contents;	/* decode content kinds; empty: once */
	struct strv watch_metrics;	/* the metrics a watch compares
					 * beside metric: per-token, fixed,
					 * ppN, tgN; empty: all the matrix's */
	int reps;
	int max_reps;		/* an inconclusive comparison doubles reps
				 * up to this */
	int warmup;
	int threads;
	int64_t timeout_ms;
	uint64_t max_memory;	/* bytes a run's cgroup may use, 0: none */
	int fit[CONF_MAX_LENGTHS];	/* prompt lengths the fit uses */
	size_t nfit;
	struct conf_metric metric;
	double threshold;	/* fraction: 0.20 for 20% */
	double max_cv;		/* fraction */
	char *schedule;		/* cron expression or NULL */
	uint64_t unpack_max;	/* bytes an unpacked release may take; after
				 * conf_load(), the [bisectd] value when the
				 * engine sets none */
	int64_t download_deadline_ms;	/* a whole archive download, retries
				 * included, for the first GiB (longer in
				 * proportion past it); as unpack_max */
	int prefetch;		/* archives downloaded ahead at most; 0:
				 * off; after loading never -1 (auto) */
	uint64_t prefetch_rate;	/* bytes a second, a download ahead */

	/* The output canary: a command that generates text deterministically
	 * from a fixed prompt, compared exactly between releases. */
	char *canary;		/* argv template, or NULL: no canary */
	char *canary_prompt;	/* the prompt file, absolute; NULL without
				 * a canary */
	char *canary_prompt_sha256;	/* 64 lowercase hex digits, or NULL:
				 * the first hash seen is pinned */
	enum conf_text_parser canary_parser;
	char *canary_parser_arg;	/* json path or regex, or NULL */
	/* Commit-level bisection (bisectctl bisect --commits, drill-down). */
	char *repo;		/* the engine's git repository: a URL, or an
				 * absolute path; a git: source's by
				 * default; or NULL */
	struct strv build;	/* argv templates with {src} {out} {jobs},
				 * run in order to build a checkout */
	int64_t build_timeout_ms;	/* each build line */
	int first_parent;	/* walk first parents only (default 1) */
	int drill_down;		/* a confirmed release regression goes on
				 * into the commits between its tags */
};

/*
 * One switch of an engine for `bisectctl ablate`: an environment and
 * extra arguments that turn a component off.  One switch per engine is
 * the positive control: a component known to be heavy, whose switch
 * must move the runtime before any other switch is believed.
 */
struct conf_ablation {
	char *name;		/* the subsection name */
	int line;
	char *engine_name;
	const struct conf_engine *engine;	/* resolved; not owned */
	struct strv env;	/* NAME=VALUE, for this switch's runs only */
	struct strv args;	/* template words appended to the command */
	int control;		/* the known-heavy one */
	double control_min;	/* fraction of the runtime the control must
				 * remove (0.20); read on the control */
};

/* The default of control-min. */
#define CONF_CONTROL_MIN 0.20

/* The most engines a [compare] section ranks. */
#define CONF_COMPARE_MAX 16

/* A league table re-measured on a schedule (bisectctl compare's), with
 * an alert when its leader changes beyond the noise. */
struct conf_compare {
	char *name;		/* the subsection name */
	int line;
	struct strv engines;	/* ENGINE or ENGINE@VERSION, as written */
	int engines_bad;	/* the list could not be read (said once) */
	int64_t every_ms;	/* how often it is measured */
	int reps;		/* runs a cell; 0: each engine's reps */
};

enum conf_alert_kind { ALERT_WEBHOOK, ALERT_COMMAND, ALERT_EMAIL,
	ALERT_GITHUB, ALERT_GITHUB_COMMENT };

/* Whether an alert of kind k speaks to GitHub's API (api, token-env). */
#define CONF_ALERT_IS_GITHUB(k) \
	((k) == ALERT_GITHUB || (k) == ALERT_GITHUB_COMMENT)

struct conf_alert {
	char *name;
	int line;
	enum conf_alert_kind kind;
	char *target;		/* webhook URL, command, address list, or
				 * github-issue's or github-comment's
				 * OWNER/REPO[#N] */
	char *smtp;		/* email: smtp:// or smtps:// URL */
	char *from;		/* email: sender */
	int allow_http;		/* webhook over plain http (loopback tests) */
	char *api;		/* github-*: the GitHub API */
	char *token_env;	/* github-*: the variable of its token */
};

struct conf {
	char *file;		/* the file as conf_load() was given it, for
				 * messages */
	char *path;		/* the file, absolute */
	char *dir;		/* its folder */

	char *database;
	char *cache;
	char *bench_lock;	/* NULL: benchlock_path()'s default */
	uint64_t cache_max;	/* bytes */
	uint64_t unpack_max;	/* bytes; 0 in the file: cache_max */
	int64_t download_deadline_ms;	/* see conf_engine */
	double max_busy;	/* fraction */
	int64_t max_wait_ms;
	char *socket;
	char *socket_group;	/* or NULL: socket mode 0600 */
	char *http;		/* "ADDRESS:PORT" as written, or NULL: off */
	char http_address[64];	/* numeric, without IPv6's brackets */
	int http_port;		/* 0: any free port */
	char *public_url;	/* or NULL; no trailing '/' */

	struct conf_weights *weights;
	size_t nweights;
	struct conf_engine *engines;	/* a matrix's cells among them */
	size_t nengines;
	struct conf_engine *matrices;	/* own the fields their cells share */
	size_t nmatrices;
	struct conf_alert *alerts;
	size_t nalerts;
	struct conf_ablation *ablations;	/* in the file's order */
	size_t nablations;
	struct conf_compare *compares;		/* in the file's order */
	size_t ncompares;
	struct conf_runner *runners;
	size_t nrunners;

	char *yardstick_engine;	/* or NULL */
	char *yardstick_version;	/* or NULL: the engine's latest */
	int64_t yardstick_every_ms;
};

/*
 * Read and validate path.  Returns 0 with *out set (caller frees with
 * conf_free), or -1 with every problem found pushed onto problems, one
 * line each.
 */
int conf_load(const char *path, struct conf **out, struct strv *problems);

/*
 * A check beyond the file itself, such as fetch_check_local()'s look at
 * the disk.  It sees the configuration as resolved so far, even when the
 * file has other problems (a field may then be NULL), and pushes what it
 * finds onto problems.
 */
typedef void conf_check_fn(const struct conf *c, struct strv *problems,
    void *arg);

/* conf_load() that also runs check(c, problems, arg) before judging, so
 * that one run reports every problem. */
int conf_load_checked(const char *path, conf_check_fn *check, void *arg,
    struct conf **out, struct strv *problems);

/*
 * The same for commands that need only the [bisectd] section (the
 * database, the cache, the socket) while the rest of the file may be
 * broken: every other section is skipped, syntax errors in it included,
 * and *out has no weights, engines, alerts or yardstick.  Returns 0, or
 * -1 with the problems of the [bisectd] section itself.
 */
int conf_load_core(const char *path, struct conf **out,
    struct strv *problems);

void conf_free(struct conf *c);

/*
 * Push one problem found in c after conf_load(), in conf_load()'s form:
 * "FILE:LINE: MSG", or "FILE: MSG" when line is 0.
 */
void conf_problem(const struct conf *c, struct strv *problems, int line,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The engine called name, or NULL. */
const struct conf_engine *conf_engine(const struct conf *c, const char *name);
/* The matrix called name, or NULL; its cells are the engines whose
 * matrix it is, in the order of its runners, then its weights. */
const struct conf_engine *conf_matrix(const struct conf *c, const char *name);
/* The [compare "NAME"] section, or NULL. */
const struct conf_compare *conf_compare(const struct conf *c,
    const char *name);

/* The runner called name, or NULL. */
const struct conf_runner *conf_runner_find(const struct conf *c,
    const char *name);

/* The control switch of engine, or NULL when it has no switches. */
const struct conf_ablation *conf_ablation_control(const struct conf *c,
    const char *engine);

/* The weights called name, or NULL. */
const struct conf_weights *conf_weights_find(const struct conf *c,
    const char *name);

/*
 * Value parsers shared by the config and the command line.  Each returns
 * 0 or -1 and never prints.
 */
/* The longest duration any key takes: ten years, so that a duration in
 * nanoseconds still fits an int64_t. */
#define CONF_DURATION_MAX_MS	(3650LL * 86400000)
/* "10m", "250ms", "0s": 0; -1 when s is not a duration; -2 when it is
 * one beyond CONF_DURATION_MAX_MS. */
int conf_parse_duration(const char *s, int64_t *ms);
int conf_parse_percent(const char *s, double *fraction);	/* "20%" */
int conf_parse_size(const char *s, uint64_t *bytes);	/* "20G", "512M" */
int conf_parse_lengths(const char *s, int *out, size_t max, size_t *n);
int conf_parse_metric(const char *s, struct conf_metric *m);
/* "127.0.0.1:8088" or "[::1]:8088": a numeric address and a port from 0
 * to 65535; address gets the address without brackets. */
int conf_parse_listen(const char *s, char *address, size_t len, int *port);

/*
 * 1 when [bisectd] http is off or on a loopback address (127.0.0.0/8,
 * ::1); 0 when it serves, without authentication, whoever can reach the
 * address.
 */
int conf_http_loopback(const struct conf *c);
/* What check-config and the daemon say of such an address. */
#define CONF_HTTP_EXPOSED "not a loopback address: the status page, " \
	"reports, /api/ and /metrics, with local paths, commands and " \
	"alerts, are served without authentication to whoever reaches it " \
	"(keep it on 127.0.0.1 or ::1, behind a proxy with TLS and " \
	"authentication)"

/* Names for display and storage. */
/*
 * url as it may be shown, logged or stored: scheme, host and port, with
 * any user:password@ dropped and any path or query replaced by "/...".
 * A Slack webhook's path is its secret.  Text without "://" is copied
 * as it is.  Returns buf.
 */
const char *conf_url_redact(const char *url, char *buf, size_t len);

/* An alert's target as it may be shown and stored: a webhook's URL
 * redacted, a command or address list as written.  Returns buf. */
const char *conf_alert_shown(const struct conf_alert *a, char *buf,
    size_t len);

/*
 * A github-issue target, OWNER/REPO or OWNER/REPO#NUMBER (owner and
 * repository of [A-Za-z0-9._-], NUMBER from 1): 1 with "OWNER/REPO" in
 * repo (when not NULL) and NUMBER, or 0, in *number (when not NULL);
 * 0 when it is none.
 */
int conf_github_target(const char *s, char *repo, size_t len, long *number);

const char *conf_source_name(enum conf_source s);
const char *conf_parser_name(enum conf_parser p);
const char *conf_text_parser_name(enum conf_text_parser p);
const char *conf_unit_name(enum conf_unit u);
const char *conf_mode_name(enum conf_mode m);	/* "bench" ... */
const char *conf_metric_name(const struct conf_metric *m, char *buf,
    size_t len);
/* "ttft-p90": the metric name of a serve figure. */
const char *conf_serve_figure_name(enum conf_serve_figure f);

#endif
