/*
 * bisectctl: the command-line client.  It reads the configuration, then
 * runs one command from the table below; queries and reports read the
 * store directly, so they work with the daemon stopped.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_local.h"
#include "fetch/check.h"

/* The most operands a command takes (init's versions). */
#define CTL_MAX_OPERANDS	64

static const struct command commands[] = {
	{ "init", cmd_init, "llama.cpp | dir:PATH | url:TEMPLATE VERSION... "
	  "[--dir PATH] [--model FILE] [--api URL]",
	  "write a first, commented bisectd.conf for llama.cpp's CPU builds "
	  "on this machine (never over a file), check it, and print what "
	  "to run next", TAKES_DIR | TAKES_MODEL | TAKES_API, 1, CTL_MAX_OPERANDS,
	  NEEDS_NOTHING },
	{ "check-config", cmd_check_config, "",
	  "validate the configuration and print the resolved engines",
	  TAKES_JSON, 0, 0, 0 },
	{ "versions", cmd_versions, "ENGINE [--refresh]",
	  "list releases in order with their state",
	  TAKES_REFRESH | TAKES_JSON, 1, 1, 0 },
	{ "fetch", cmd_fetch, "ENGINE VERSION",
	  "download, verify and unpack a release", TAKES_JSON, 2, 2, 0 },
	{ "bench", cmd_bench, "ENGINE VERSION [--prompts L] [--reps N]",
	  "run the benchmark matrix and print a summary",
	  TAKES_PROMPTS | TAKES_REPS | TAKES_JSON, 2, 2, 0 },
	{ "compare", cmd_compare, "ENGINE[@VERSION] ENGINE[@VERSION]... "
	  "[--reps N] [--format text|json|markdown|csv|html]",
	  "measure engines side by side on this machine, their runs "
	  "interleaved, and rank them, ties where the intervals overlap",
	  TAKES_REPS | TAKES_FORMATS, 2, 40, 0 },
	{ "runs", cmd_runs, "ENGINE VERSION",
	  "stored runs with failure reasons and stderr tails", TAKES_JSON,
	  2, 2, 0 },
	{ "reparse", cmd_reparse, "ENGINE [VERSION]",
	  "re-read stored output with the current parser", 0, 1, 2, 0 },
	{ "bisect", cmd_bisect, "[--now | --dry-run] [--metric M] "
	  "[--threshold P] [--all] [--commits] ENGINE GOOD..BAD",
	  "queue a bisect, run it now, or show what it would run (with "
	  "--commits: the commits, and the build lines of both ends); a "
	  "matrix's name: each of its cells",
	  TAKES_NOW | TAKES_DRY_RUN | TAKES_METRIC | TAKES_THRESHOLD |
	  TAKES_ALL | TAKES_COMMITS | TAKES_FORMATS, 2, 2, 0 },
	{ "ablate", cmd_ablate, "[--now | --last] ENGINE VERSION "
	  "[--format text|markdown|json|csv|html]",
	  "queue an ablation of the engine's switches with its positive "
	  "control, run it now, or show the last",
	  TAKES_NOW | TAKES_LAST | TAKES_FORMATS, 2, 2, 0 },
	{ "report", cmd_report, "ENGINE A..B [--metric M] [--threshold P] "
	  "[--all] [--for-upstream] [--commits] "
	  "[--format text|markdown|json|csv|html]",
	  "table, fit, verdict and how to reproduce; a matrix's name: one "
	  "table of its cells",
	  TAKES_METRIC | TAKES_THRESHOLD | TAKES_ALL | TAKES_UPSTREAM |
	  TAKES_COMMITS | TAKES_FORMATS, 2, 2, 0 },
	{ "history", cmd_history, "ENGINE [--metric M] "
	  "[--format text|json|csv|html]",
	  "change points, up and down, over every stored release, each "
	  "with the bisect and the report around it",
	  TAKES_METRIC | TAKES_JSON | TAKES_CSV | TAKES_HTML, 1, 1, 0 },
	{ "gc", cmd_gc, "", "trim the unpacked releases to cache-max", 0,
	  0, 0, 1 },
	{ "status", cmd_status, "[--limit N] [--all] [--format text|json]",
	  "the daemon, its running job with progress (or the commit it "
	  "is building, for which probe, for how long), the next scheduled "
	  "runs, and the newest jobs", TAKES_LIMIT | TAKES_ALL | TAKES_JSON,
	  0, 0, 1 },
	{ "jobs", cmd_jobs, "prune --before AGE",
	  "delete the rows of jobs that ended more than AGE ago (90d, 12h)",
	  TAKES_BEFORE, 1, 1, 1 },
	{ "cancel", cmd_cancel, "JOB", "cancel a queued or running job", 0,
	  1, 1, 1 },
	{ "watch", cmd_watch, "ENGINE",
	  "queue a watch of the engine's source now (of each cell, for a "
	  "matrix)", 0, 1, 1, 0 },
	{ "alerts", cmd_alerts, "[--format text|json]",
	  "alerts recorded, and their delivery to each sink", TAKES_JSON,
	  0, 0, 1 },
	{ "node-run", cmd_node_run, "REQUEST",
	  "carry out a measurement request on this node (a Slurm job's "
	  "command)", 0, 1, 1, 0 },
	{ NULL, NULL, NULL, NULL, 0, 0, 0, 0 }
};

enum { OPT_FORMAT = 256, OPT_METRIC, OPT_THRESHOLD, OPT_PROMPTS, OPT_REPS,
	OPT_NOW, OPT_ALL, OPT_LIMIT, OPT_BEFORE,
OPT_UPSTREAM, OPT_DRY_RUN, OPT_COMMITS, OPT_LAST, OPT_DIR, OPT_MODEL,
OPT_API };

static const struct option long_options[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "refresh", no_argument, NULL, 'r' },
	{ "now", no_argument, NULL, OPT_NOW },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "commits", no_argument, NULL, OPT_COMMITS },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "prompts", required_argument, NULL, OPT_PROMPTS },
	{ "reps", required_argument, NULL, OPT_REPS },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "before", required_argument, NULL, OPT_BEFORE },
	{ "for-upstream", no_argument, NULL, OPT_UPSTREAM },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "last", no_argument, NULL, OPT_LAST },
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "api", required_argument, NULL, OPT_API },
	{ NULL, 0, NULL, 0 }
};

/* What a command must take for each long option: its TAKES_ bit,
 * TAKES_FORMATS for --format, 0 for those every command takes. */
static unsigned
option_takes(int opt)
{
	switch (opt) {
	case 'r': return TAKES_REFRESH;
	case OPT_NOW: return TAKES_NOW;
	case OPT_ALL: return TAKES_ALL;
	case OPT_COMMITS: return TAKES_COMMITS;
	case OPT_METRIC: return TAKES_METRIC;
	case OPT_THRESHOLD: return TAKES_THRESHOLD;
	case OPT_PROMPTS: return TAKES_PROMPTS;
	case OPT_REPS: return TAKES_REPS;
	case OPT_FORMAT: return TAKES_FORMATS;
	case OPT_LIMIT: return TAKES_LIMIT;
	case OPT_BEFORE: return TAKES_BEFORE;
	case OPT_UPSTREAM: return TAKES_UPSTREAM;
	case OPT_DRY_RUN: return TAKES_DRY_RUN;
	case OPT_LAST: return TAKES_LAST;
	case OPT_DIR: return TAKES_DIR;
	case OPT_MODEL: return TAKES_MODEL;
	case OPT_API: return TAKES_API;
	default: return 0;
	}
}

static const char deciding_text[] =
    "  The threshold P (--threshold, the engine's threshold, 20% by\n"
    "  default) is the slowdown a bisect must find, decided at P/2.\n"
    "  The range's ends get 5 process runs each, then one at a time,\n"
    "  A B A B, until a sequential test finds them the same or apart\n"
    "  by (1 + P/2)^2 - 1; a probe between them likewise, against its\n"
    "  sides.  Other comparisons take the 95% interval of the\n"
    "  slowdown: above P/2 they differ, below it they are the same,\n"
    "  else the runs go 5, 10, 20 ...  Each stops at max-reps (320\n"
    "  by default) per cell, and then the answer is unknown.\n"
    "  With the metric output a bisect follows the engine's canary\n"
    "  instead: the first release whose generated text differs from\n"
    "  GOOD's, compared exactly (exit 3), one canary pair per probe.\n";

static const char exit_text[] =
    "  0  success, or no regression\n"
    "  1  the tool or the infrastructure failed (download, run, store),\n"
    "     or an end of the range has no samples or cannot be measured\n"
    "  2  usage error: a bad option or --format, an unknown command or\n"
    "     engine, a range backwards or naming a release the source\n"
    "     does not have, or a configuration with problems\n"
    "  3  regression found (also when the culprit is a range), or a\n"
    "     gradual one: status gradual, the slowdown spread over releases\n"
    "  4  unknown: the comparison was inconclusive, the boundary did\n"
    "     not confirm, or the stored samples do not decide yet\n"
    "  130  interrupted (Ctrl-C; 143 for SIGTERM): the runs finished\n"
    "     before are stored; the same bisect or ablate resumes\n";

static const char history_text[] =
    "  Every stored release's runs under the current definitions,\n"
    "  weights and machine, in release order, one series per metric\n"
    "  of the matrix (--metric: that one alone).  A change point is\n"
    "  the strongest split of the releases' values by E-divisive\n"
    "  means that a permutation test finds at p <= 0.01, each side\n"
    "  searched again.  Points the same way within six releases, or\n"
    "  a point whose neighbouring releases still move its way, are a\n"
    "  slide.  Each point prints the bisect (for a slowdown) and the\n"
    "  report over the releases around it.\n";

static const char history_metric_text[] =
    "  --metric M       one metric alone: per-token, fixed, ppN or tgN;\n"
    "                   a serve engine's ttft-p90, e2e-p99 ...\n"
    "                   (default: every metric of the matrix, or of\n"
    "                   the load)";

static const char history_exit_text[] =
    "  0  no change point in any series\n"
    "  1  the tool or the store failed\n"
    "  2  usage error: a bad option or --format, an unknown engine\n"
    "     or metric\n"
    "  3  change points found, up or down\n";

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: bisectctl [-c FILE] [--format text|json] COMMAND [ARGS]\n"
	    "\n"
	    "Benchmark engine releases on pinned weights, find the release\n"
	    "where the per-token cost jumped, and report it.\n"
	    "\n"
	    "commands:\n");
	for (const struct command *cmd = commands; cmd->name; cmd++)
		fprintf(f, "  %-14s %s\n", cmd->name, cmd->summary);
	fprintf(f,
	    "\n"
	    "options:\n"
	    "  -c, --config FILE  configuration (default $BISECTD_CONFIG, then\n"
	    "                     /etc/bisectd.conf)\n"
	    "  --format FORMAT    text or json for listings; report, bisect,\n"
	    "                     ablate and compare also take markdown, csv\n"
	    "                     and html\n"
	    "  -h, --help         this help; 'bisectctl COMMAND --help' for one\n"
	    "  -V, --version      print the version\n"
	    "\n"
	    "deciding:\n%s"
	    "\n"
	    "exit status:\n%s", deciding_text, exit_text);
}

/* What each option a command may take does, for its --help. */
static const struct {
	unsigned takes;
	const char *text;
} option_help[] = {
	{ TAKES_NOW, "  --now            run it here and now, not in the daemon's "
	  "queue" },
	{ TAKES_DRY_RUN, "  --dry-run        show what it would run, and run "
	  "nothing" },
	{ TAKES_LAST, "  --last           show the last one stored" },
	{ TAKES_METRIC, "  --metric M       what to search or judge: per-token "
	  "(prefill cost per\n                   token, the default), fixed, "
	  "ppN (prefill at N tokens),\n                   tgN (decode of N "
	  "tokens), output (the canary's text),\n                   "
	  "gpu-memory or rss (a run's peak memory)\n                   or, in "
	  "serve mode, ttft, tpot, itl or e2e at\n                   p50, "
	  "p90 or p99 (ttft-p90)" },
	{ TAKES_THRESHOLD, "  --threshold P    the slowdown that counts "
	  "(default: the engine's, 20%)" },
	{ TAKES_ALL, "  --all            every release of the range, not only "
	  "those the search\n                   needs" },
	{ TAKES_COMMITS, "  --commits        the commits between the two "
	  "releases, built from the repo" },
	{ TAKES_UPSTREAM, "  --for-upstream   markdown to paste into an "
	  "upstream issue: no local paths,\n                   host name or "
	  "configuration" },
	{ TAKES_PROMPTS, "  --prompts L      prompt lengths (128,512) instead of "
	  "the engine's" },
	{ TAKES_REPS, "  --reps N         process runs per cell instead of the "
	  "engine's" },
	{ TAKES_REFRESH, "  --refresh        ask the source again first" },
	{ TAKES_LIMIT, "  --limit N        the newest N jobs" },
	{ TAKES_BEFORE, "  --before AGE     ended more than AGE ago (90d, 12h)" },
	{ TAKES_DIR, "  --dir PATH       the folder of bisectd.conf, its store and "
	  "cache (default: .)" },
	{ TAKES_MODEL, "  --model FILE     the GGUF weights every release runs on "
	  "(default: model.gguf\n                   beside the config)" },
	{ TAKES_API, "  --api URL        the GitHub API to ask (GitHub Enterprise, "
	  "a mirror)" },
};

static void
command_usage(FILE *f, const struct command *cmd)
{
	int any = 0;

	fprintf(f, "usage: bisectctl [-c FILE] %s %s\n\n%s\n", cmd->name,
	    cmd->usage, cmd->summary);
	for (size_t i = 0; i < sizeof(option_help) / sizeof(option_help[0]);
	    i++)
		if (cmd->takes & option_help[i].takes) {
			fprintf(f, "%s%s\n", any ? "" : "\noptions:\n",
			    cmd->fn == cmd_status && option_help[i].takes ==
			    TAKES_ALL ? "  --all            every job" :
			    cmd->fn == cmd_history && option_help[i].takes ==
			    TAKES_METRIC ? history_metric_text :
			    option_help[i].text);
			any = 1;
		}
	if (cmd->fn == cmd_history) {
		fprintf(f, "\nfinding:\n%s\nexit status:\n%s",
		    history_text, history_exit_text);
		return;
	}
	/* The commands that judge: how, and their answer's exit status. */
	if (cmd->takes & TAKES_METRIC)
		fprintf(f, "\ndeciding:\n%s", deciding_text);
	if (cmd->takes & TAKES_METRIC || cmd->fn == cmd_ablate)
		fprintf(f, "\nexit status:\n%s", exit_text);
}

static const struct command *
command_find(const char *name)
{
	for (const struct command *cmd = commands; cmd->name; cmd++)
		if (strcmp(cmd->name, name) == 0)
			return cmd;
	return NULL;
}

/* By enum ctl_format, and what a command must take to print it. */
static const char *const format_names[] = { "text", "json", "markdown",
    "csv", "html" };
static const unsigned format_takes[] = { 0, TAKES_JSON, TAKES_MARKDOWN,
    TAKES_CSV, TAKES_HTML };

static int
parse_format(struct ctl *c, const char *v)
{
	for (int i = 0; i < 5; i++)
		if (strcmp(v, format_names[i]) == 0) {
			c->format = (enum ctl_format)i;
			c->format_given = 1;
			return 0;
		}
	return -1;
}

static void
print_lines(const char *prefix, const struct strv *lines)
{
	for (size_t i = 0; i < lines->n; i++)
		fprintf(stderr, "bisectctl: %s%s\n", prefix, lines->v[i]);
}

/*
 * Load the configuration cmd needs into c->conf; -1 after printing every
 * problem.  check-config also checks the disk (fetch/check.h).  A command
 * that needs only [bisectd] runs on that section when the rest of the
 * file is broken, so that a bad edit does not lock anyone out of status,
 * alerts or cancel; the problems are shown as warnings.
 */
static int
load_config(struct ctl *c, const struct command *cmd)
{
	struct strv problems = STRV_INIT, notes = STRV_INIT, core = STRV_INIT;
	int rc;

	if (c->config_path == NULL)
		c->config_path = getenv("BISECTD_CONFIG");
	if (c->config_path == NULL || c->config_path[0] == '\0')
		c->config_path = "/etc/bisectd.conf";
	if (cmd->fn == cmd_check_config)
		rc = conf_load_checked(c->config_path, fetch_check_local,
		    &notes, &c->conf, &problems);
	else
		rc = conf_load(c->config_path, &c->conf, &problems);
	print_lines("", &notes);
	if (rc < 0 && cmd->core == NEEDS_CORE &&
	    conf_load_core(c->config_path, &c->conf, &core) == 0) {
		print_lines("warning: ", &problems);
		fprintf(stderr, "bisectctl: warning: '%s' has errors; %s reads "
		    "its [bisectd] section alone\n", c->config_path,
		    cmd->name);
		rc = 0;
	} else if (rc < 0)
		print_lines("", &problems);
	strv_clear(&problems);
	strv_clear(&notes);
	strv_clear(&core);
	return rc;
}

int
main(int argc, char **argv)
{
	/* The operands after the command word, pointing into argv. */
	char *operands[CTL_MAX_OPERANDS + 1];
	struct ctl c;
	const struct command *cmd = NULL;
	unsigned used = 0;
	int opt, help = 0, rc;

	/*
	 * Past RLIMIT_FSIZE (ulimit -f) a write should fail with EFBIG and
	 * be reported, not kill the process half-way through a command.
	 */
	signal(SIGXFSZ, SIG_IGN);
	if (argc > 1 && strcmp(argv[1], "__complete") == 0)
		return ctl_complete(argc - 2, argv + 2, commands,
		    long_options, option_takes);
	memset(&c, 0, sizeof(c));
	memset(operands, 0, sizeof(operands));
	c.argv = operands;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:c:hVr", long_options,
	    NULL)) != -1 || optind < argc) {
		if (opt == -1) {
			/* An operand: the first is the command word. */
			if (cmd == NULL) {
				if ((cmd = command_find(argv[optind])) == NULL) {
					fprintf(stderr, "bisectctl: unknown "
					    "command '%s'; see 'bisectctl "
					    "--help'\n", argv[optind]);
					return EXIT_USAGE;
				}
			} else {
				/* More than any command takes: said below,
				 * with the command's usage. */
				if (c.argc < CTL_MAX_OPERANDS)
					operands[c.argc] = argv[optind];
				c.argc++;
			}
			optind++;
			continue;
		}
		switch (opt) {
		case 'c':
			c.config_path = optarg;
			break;
		case 'h':
			help = 1;
			break;
		case 'V':
			printf("bisectctl %s\n", BISECTD_VERSION);
			return EXIT_OK;
		case OPT_FORMAT:
			if (parse_format(&c, optarg) < 0)
				return ctl_usage_error("--format: expected "
				    "text, json, markdown, csv or html, got '%s'",
				    optarg);
			break;
		case 'r':
			c.refresh = 1;
			break;
		case OPT_NOW:
			c.now = 1;
			break;
		case OPT_LAST:
			c.last = 1;
			break;
		case OPT_ALL:
			c.all = 1;
			break;
		case OPT_COMMITS:
			c.commits = 1;
			break;
		case OPT_METRIC:
			c.metric = optarg;
			break;
		case OPT_THRESHOLD:
			c.threshold = optarg;
			break;
		case OPT_PROMPTS:
			c.prompts = optarg;
			break;
		case OPT_REPS:
			c.reps = atoi(optarg);
			if (c.reps <= 0)
				return ctl_usage_error("--reps: expected a "
				    "positive integer, got '%s'", optarg);
			break;
		case OPT_LIMIT: {
			char *end;

			errno = 0;
			c.limit = strtoll(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg ||
			    c.limit <= 0)
				return ctl_usage_error("--limit: expected a "
				    "positive integer, got '%s'", optarg);
			break;
		}
		case OPT_BEFORE:
			c.before = optarg;
			break;
		case OPT_UPSTREAM:
			c.upstream = 1;
			break;
		case OPT_DRY_RUN:
			c.dry_run = 1;
			break;
		case OPT_DIR:
			c.dir = optarg;
			break;
		case OPT_MODEL:
			c.model = optarg;
			break;
		case OPT_API:
			c.api = optarg;
			break;
		case '?':
			if (optopt)
				return ctl_usage_error("unknown option '-%c'; "
				    "see 'bisectctl --help'", optopt);
			return ctl_usage_error("unknown option '%s'; see "
			    "'bisectctl --help'", argv[optind - 1]);
		case ':':
			return ctl_usage_error("option '%s' needs a value",
			    argv[optind - 1]);
		}
		if (option_takes(opt) != TAKES_FORMATS)
			used |= option_takes(opt);
	}
	if (cmd == NULL) {
		if (help) {
			usage(stdout);
			return EXIT_OK;
		}
		usage(stderr);
		return EXIT_USAGE;
	}
	if (help) {
		command_usage(stdout, cmd);
		return EXIT_OK;
	}
	if ((used & ~cmd->takes) != 0) {
		command_usage(stderr, cmd);
		return ctl_usage_error("'%s' does not take that option",
		    cmd->name);
	}
	if (c.format != FORMAT_TEXT &&
	    (cmd->takes & format_takes[c.format]) == 0) {
		return ctl_usage_error("%s does not take --format %s",
		    cmd->name, format_names[c.format]);
	}
	if (c.argc < cmd->min_args || c.argc > cmd->max_args) {
		command_usage(stderr, cmd);
		return EXIT_USAGE;
	}
	if (cmd->core != NEEDS_NOTHING && load_config(&c, cmd) < 0) {
		return EXIT_USAGE;
	}
	rc = cmd->fn(&c);
	conf_free(c.conf);
	/* Stopped by a signal: the shell's 128 + signal, so a script tells
	 * it from a failure. */
	if (rc != EXIT_OK && ctl_stop) {
		int resumes = strcmp(cmd->name, "bisect") == 0 ||
		    strcmp(cmd->name, "ablate") == 0;

		fprintf(stderr, "bisectctl: the runs finished before the stop "
		    "are stored%s\n", resumes ? "; run the same command again "
		    "to resume" : "");
		rc = EXIT_SIGNAL_BASE + ctl_stop;
	}
	/* Output redirected to a file that hit a limit or a full disk. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "bisectctl: cannot write standard output: "
		    "%s\n", strerror(errno ? errno : EIO));
		return EXIT_FAIL;
	}
	return rc;
}
