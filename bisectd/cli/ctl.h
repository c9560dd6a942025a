/*
 * ctl.h: what bisectctl's command handlers share: the parsed command line,
 * the loaded configuration, and helpers for messages and output formats.
 * Each handler lives in a ctl_*.c file and is listed in main.c's
 * command table.
 */
#ifndef BISECTD_CTL_H
#define BISECTD_CTL_H

#include <stdio.h>
#include <time.h>

#include "common/err.h"
#include "config/conf.h"

struct err;
struct json_t;
struct store;

/* Exit codes, as the README and --help document them. */
enum {
	EXIT_OK = 0,		/* success, or no regression */
	EXIT_FAIL = 1,		/* the tool or the infrastructure failed */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_REGRESSION = 3,	/* a regression was found */
	EXIT_UNKNOWN = 4,	/* inconclusive */
	EXIT_SIGNAL_BASE = 128	/* + the signal that stopped it (130) */
};

enum ctl_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_MARKDOWN, FORMAT_CSV,
	FORMAT_HTML };

struct ctl {
	const char *config_path;
	struct conf *conf;	/* loaded before the handler runs; owned */
	enum ctl_format format;
	int format_given;
	int argc;		/* operands after the command word */
	char **argv;
	/* Command options (each command reads the ones it takes). */
	int refresh;
	int now;
	int last;		/* ablate --last */
	int all;
	int commits;		/* --commits: the range's ends are commits */
	const char *metric;
	const char *threshold;
	const char *prompts;
	int reps;
	long long limit;	/* status: jobs shown; 0: the default */
	const char *before;	/* jobs prune: an age such as "90d" */
	int upstream;		/* report --for-upstream */
	int dry_run;		/* bisect --dry-run */
	const char *dir;	/* init --dir */
	const char *model;	/* init --model */
	const char *api;	/* init --api */
};

/* One entry of bisectctl's command table (main.c). */
/* The options a command may take besides -c, -h and --format text. */
enum ctl_takes {
	TAKES_REFRESH = 1u << 0, TAKES_NOW = 1u << 1, TAKES_ALL = 1u << 2,
	TAKES_COMMITS = 1u << 3, TAKES_METRIC = 1u << 4,
	TAKES_THRESHOLD = 1u << 5, TAKES_PROMPTS = 1u << 6,
	TAKES_REPS = 1u << 7, TAKES_LIMIT = 1u << 8, TAKES_BEFORE = 1u << 9,
	TAKES_UPSTREAM = 1u << 10, TAKES_DRY_RUN = 1u << 11,
	TAKES_LAST = 1u << 12, TAKES_DIR = 1u << 17, TAKES_MODEL = 1u << 18,
	TAKES_API = 1u << 19,
	/* --format beyond text */
	TAKES_JSON = 1u << 13, TAKES_MARKDOWN = 1u << 14, TAKES_CSV = 1u << 15,
	TAKES_HTML = 1u << 16,
	TAKES_FORMATS = TAKES_JSON | TAKES_MARKDOWN | TAKES_CSV | TAKES_HTML
};

struct command {
	const char *name;
	int (*fn)(struct ctl *);
	const char *usage;	/* operands and options after the name */
	const char *summary;
	unsigned takes;		/* the options it takes (enum ctl_takes) */
	int min_args, max_args;
	/* NEEDS_CONFIG, or NEEDS_CORE: only the [bisectd] section, so it
	 * runs, with a warning, when the rest is broken; or NEEDS_NOTHING:
	 * it reads no configuration (init). */
	int core;
};

enum { NEEDS_CONFIG = 0, NEEDS_CORE = 1, NEEDS_NOTHING = 2 };

struct option;

/*
 * `bisectctl __complete WORD...`, for the bash completion: the words
 * typed after `bisectctl`, the last one the word being completed (maybe
 * empty).  Prints the candidates that start with it, one a line:
 * commands, the command's options, values of --format and --metric,
 * engine names from the configuration, versions from the store (with
 * ".." appended, or after "GOOD..", for a range).  Prints nothing where
 * it knows nothing (a broken configuration, no store).  key() maps a
 * long option's value to its enum ctl_takes bit (TAKES_FORMATS for
 * --format), 0 for the options every command takes.
 * Always returns EXIT_OK.
 */
int ctl_complete(int nwords, char **words, const struct command *cmds,
    const struct option *longopts, unsigned (*takes)(int));

/* Print "bisectctl: MSG" on stderr; returns EXIT_FAIL. */
int ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print e's message as ctl_error() does; returns EXIT_USAGE for an
 * err_usage() error (a version no release has), else EXIT_FAIL. */
int ctl_failed(const struct err *e);

/* Print "bisectctl: MSG" on stderr; returns EXIT_USAGE. */
int ctl_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Look up an engine by name or report it (EXIT_USAGE) and return NULL. */
const struct conf_engine *ctl_engine(struct ctl *c, const char *name);

/* Open the store named by the configuration; reports errors itself. */
struct store *ctl_store(struct ctl *c);

/*
 * The same for commands that only read: opened read-only, so that users
 * who may read the database but not write it can run them.  A database
 * not there yet is created as ctl_store() would.
 */
struct store *ctl_store_readonly(struct ctl *c);

/*
 * Upstream text (a tag, a failure's stderr, an alert's summary) with its
 * control characters written out (report/text_escape.h), for printing
 * to a terminal: at most n bytes of s, tabs and newlines kept when
 * keep_lines.  The result lives until the eighth call after this one.
 */
const char *ctl_safe_n(const char *s, size_t n, int keep_lines);

/* ctl_safe_n() of all of s on one line; NULL stays NULL. */
const char *ctl_safe(const char *s);

/* Print a JSON value to stdout with a newline, consuming it. */
void ctl_print_json(struct json_t *json);

/* The id of engine's stored release version: 0, or the exit code with
 * the message printed (EXIT_USAGE for a release the store lacks). */
int ctl_release_id(struct store *s, const char *engine, const char *version,
    int64_t *id);

int cmd_check_config(struct ctl *c);
int cmd_init(struct ctl *c);
int cmd_versions(struct ctl *c);
int cmd_refresh(struct ctl *c);
int cmd_fetch(struct ctl *c);
int cmd_bench(struct ctl *c);
int cmd_compare(struct ctl *c);
int cmd_runs(struct ctl *c);
int cmd_reparse(struct ctl *c);
int cmd_bisect(struct ctl *c);
int cmd_ablate(struct ctl *c);
int cmd_report(struct ctl *c);
int cmd_history(struct ctl *c);
int cmd_gc(struct ctl *c);
int cmd_alerts(struct ctl *c);
int cmd_status(struct ctl *c);
int cmd_cancel(struct ctl *c);
int cmd_watch(struct ctl *c);
int cmd_jobs(struct ctl *c);

/* A next fire time in words: "2026-12-02 03:00 CET (in 13h58m)", or
 * "due now ...".  Returns buf. */
const char *ctl_next_text(time_t next, time_t now, char *buf, size_t len);
int cmd_node_run(struct ctl *c);

/* The Slurm jobs for status, printed: each one's Slurm id, queue job,
 * engine, state, node and age.  Returns EXIT_OK or EXIT_FAIL (said). */
int ctl_slurm_status(struct store *s);

/* Tell the daemon a job was queued (a note on stderr if none runs). */
void ctl_wake(struct ctl *c);

#endif
