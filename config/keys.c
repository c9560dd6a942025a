/*
 * keys.c: the table of every key of the configuration (see keys.h) and
 * the keys whose values need a setter of their own; key_use.c sets,
 * defaults, frees and documents the keys by the table.  A new key is one row here, a field in conf.h, and a line in
 * bisectd.conf.example; parsing, freeing and docs/config-keys.md
 * follow from the row.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/regex.h"
#include "conf.h"
#include "conf_int.h"
#include "cron.h"
#include "keys.h"

char *
conf_xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		abort();	/* a few bytes at start-up: nothing to save */
	return p;
}

/* Where a browser reaches the daemon's HTTP server: an http(s) URL with
 * a host and nothing a link could not carry as it is. */
static void
want_public_url(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf *c = obj;
	const char *v = en->value, *host = strstr(v, "://");
	size_t n = strlen(v);
	int bad = !conf_valid_url(v, 0) || host == NULL || host[3] == '\0' ||
	    host[3] == '/' || strchr(v, '?') || strchr(v, '#');

	for (const char *p = v; *p && !bad; p++)
		bad = (unsigned char)*p <= ' ' || *p == '"' || *p == '<' ||
		    *p == '>' || *p == '\\' || *p == 0x7f;
	if (bad) {
		ld_problem(ld, en->line,
		    "%s: expected an http:// or https:// URL "
		    "such as https://bisectd.example.com, got '%s'",
		    en->label, v);
		return;
	}
	conf_set_str(&c->public_url, v);
	while (n > 0 && c->public_url[n - 1] == '/')
		c->public_url[--n] = '\0';
}

static void
engine_source(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_engine *g = obj;
	static const struct {
		const char *prefix;
		enum conf_source kind;
	} kinds[] = {
		{ "github:", SOURCE_GITHUB }, { "url:", SOURCE_URL },
		{ "git:", SOURCE_GIT }, { "dir:", SOURCE_DIR },
	};
	const char *v = en->value;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++) {
		size_t n = strlen(kinds[i].prefix);

		if (strncmp(v, kinds[i].prefix, n) != 0)
			continue;
		g->source = kinds[i].kind;
		g->source_line = en->line;
		conf_set_str(&g->source_spec, v);
		v += n;
		if (*v == '\0')
			break;
		switch (g->source) {
		case SOURCE_GITHUB: {
			const char *slash = strchr(v, '/');

			if (slash == NULL || slash == v || slash[1] == '\0' ||
			    strchr(slash + 1, '/') != NULL)
				ld_problem(ld, en->line, "%s: expected "
				    "github:OWNER/REPO, got '%s'", en->label,
				    en->value);
			conf_set_str(&g->source_arg, v);
			break;
		}
		case SOURCE_URL:
			if (!conf_valid_url(v, 0) || strstr(v, "{version}") == NULL)
				ld_problem(ld, en->line,
				    "%s: expected url: followed "
				    "by an http(s) URL containing {version}, "
				    "got "
				    "'%s'",
				    en->label, en->value);
			conf_set_str(&g->source_arg, v);
			break;
		case SOURCE_GIT:
			if (strstr(v, "://") || strchr(v, '@'))
				conf_set_str(&g->source_arg, v);
			else
				conf_set_path(ld, &g->source_arg, v);
			break;
		case SOURCE_DIR:
			conf_set_path(ld, &g->source_arg, v);
			break;
		}
		return;
	}
	ld_problem(ld, en->line,
	    "%s: expected github:OWNER/REPO, url:TEMPLATE, "
	    "git:PATH-OR-URL or dir:PATH, got '%s'",
	    en->label, en->value);
}

/*
 * The json:PATH or regex:RE part of a parser key: 1 with *arg set for
 * json:, 2 for regex: (compiled as the parser compiles it, with the
 * capture group the value is read from), 0 for neither.
 */
static int
parser_arg(struct conf_loader *ld, const struct conf_entry *en, char **arg)
{
	const char *v = en->value;
	struct err e = ERR_INIT;
	struct regex *re;

	free(*arg);
	*arg = NULL;
	if (strncmp(v, "json:", 5) == 0 && v[5] != '\0') {
		*arg = conf_xstrdup(v + 5);
		return 1;
	}
	if (strncmp(v, "regex:", 6) != 0 || v[6] == '\0')
		return 0;
	*arg = conf_xstrdup(v + 6);
	if (regex_compile(v + 6, &re, &e) < 0)
		ld_problem(ld, en->line, "%s: %s", en->label, e.msg);
	regex_free(re);
	return 2;
}

static void
engine_parser(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_engine *g = obj;
	const char *v = en->value;
	int kind = parser_arg(ld, en, &g->parser_arg);

	if (kind == 1)
		g->parser = PARSER_JSON;
	else if (kind == 2)
		g->parser = PARSER_REGEX;
	else if (strcmp(v, "wall") == 0)
		g->parser = PARSER_WALL;
	else if (strcmp(v, "llama-bench") == 0)
		g->parser = PARSER_LLAMA_BENCH;
	else
		ld_problem(ld, en->line, "%s: expected wall, llama-bench, "
		    "json:PATH or regex:RE, got '%s'", en->label, v);
}

/*
 * A build line: a command template whose placeholders are {src}, {out}
 * and {jobs} only ({{ is a literal brace).  The words are split when it
 * runs, without a shell, as for command.
 */
static void
engine_build(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_engine *g = obj;
	const char *p = en->value;

	if (p[strspn(p, " \t")] == '\0') {
		ld_problem(ld, en->line,
		    "%s: expected a command such as 'cc -O2 "
		    "-o {out}/engine {src}/engine.c', got an empty value",
		    en->label);
		return;
	}
	while ((p = strchr(p, '{')) != NULL) {
		size_t n;

		if (p[1] == '{') {
			p += 2;
			continue;
		}
		n = strspn(p + 1, "abcdefghijklmnopqrstuvwxyz_");
		if (n > 0 && p[1 + n] == '}' && !((n == 3 && (strncmp(p + 1,
		    "src", 3) == 0 || strncmp(p + 1, "out", 3) == 0)) ||
		    (n == 4 && strncmp(p + 1, "jobs", 4) == 0))) {
			ld_problem(ld, en->line, "%s: unknown placeholder "
			    "'{%.*s}' (known: {src} {out} {jobs}; write {{ for "
			    "a literal brace)", en->label, (int)n, p + 1);
			return;
		}
		p++;
	}
	strv_push(&g->build, en->value);
}

static void
engine_canary_parser(struct conf_loader *ld, void *obj,
    const struct conf_entry *en)
{
	struct conf_engine *g = obj;
	int kind = parser_arg(ld, en, &g->canary_parser_arg);

	if (kind == 1)
		g->canary_parser = TEXT_JSON;
	else if (kind == 2)
		g->canary_parser = TEXT_REGEX;
	else if (strcmp(en->value, "stdout") == 0)
		g->canary_parser = TEXT_STDOUT;
	else
		ld_problem(ld, en->line, "%s: expected stdout, json:PATH or "
		    "regex:RE, got '%s'", en->label, en->value);
}

/*
 * A value handed to sbatch as one option's argument: never a shell
 * word, but Slurm splits some of them on commas and reads others as
 * expressions, so only the characters its names and expressions use
 * are taken.
 */
static void
want_slurm_word(struct conf_loader *ld, const struct conf_entry *en,
    const char *extra, char **field)
{
	const char *v = en->value;

	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && strchr("_.-", *p) == NULL &&
		    strchr(extra, *p) == NULL) {
			ld_problem(ld, en->line,
			    "%s: expected a Slurm name%s%s, "
			    "got '%s' ('%c' is not taken)",
			    en->label, extra[0] ? " with " : "", extra, v,
			    isprint((unsigned char)*p) ? *p : '?');
			return;
		}
	if (v[0] == '\0' || v[0] == '-') {
		ld_problem(ld, en->line, "%s: expected a Slurm name, got '%s'",
		    en->label, v);
		return;
	}
	conf_set_str(field, v);
}

/* --- keys with a setter of their own --- */

static void
bisectd_cache_max(
    struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf *c = obj;

	if (conf_parse_size(en->value, &c->cache_max) < 0)
		ld_problem(ld, en->line, "%s: expected a size such as 20G or "
		    "512M, got '%s'", en->label, en->value);
}

static void
bisectd_http(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf *c = obj;

	if (conf_parse_listen(en->value, c->http_address,
	    sizeof(c->http_address), &c->http_port) < 0)
		ld_problem(ld, en->line, "%s: expected a numeric address and a "
		    "port such as 127.0.0.1:8088 or [::1]:8088, got '%s'",
		    en->label, en->value);
	else
		conf_set_str(&c->http, en->value);
}

static void
engine_versions(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_engine *g = obj;

	strv_clear(&g->versions);
	if (strv_split(&g->versions, en->value, ',') < 0)
		ld_problem(ld, en->line, "%s: expected a comma-separated list "
		    "of versions, got '%s'", en->label, en->value);
}

/* prefetch = N | off | auto: archives downloaded ahead at most. */
static void
engine_prefetch(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_engine *g = obj;
	const char *v = en->value;
	char *end;
	long n;

	if (strcmp(v, "auto") == 0) {
		g->prefetch = -1;
		return;
	}
	if (strcmp(v, "off") == 0) {
		g->prefetch = 0;
		return;
	}
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < 0 || n > 16) {
		ld_problem(ld, en->line, "%s: expected a number of archives "
		    "from 0 to 16, off or auto, got '%s'", en->label, v);
		return;
	}
	g->prefetch = (int)n;
}

static void
engine_contents(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_engine *g = obj;
	const char *v = en->value;

	strv_clear(&g->contents);
	if (strcmp(v, "none") != 0 && strv_split(&g->contents, v, ',') < 0)
		ld_problem(ld, en->line, "%s: expected a comma-separated list "
		    "such as random,prose, got '%s'", en->label, v);
	for (size_t i = 0; i < g->contents.n; i++)
		if (strcmp(g->contents.v[i], "random") != 0 &&
		    strcmp(g->contents.v[i], "prose") != 0)
			ld_problem(ld, en->line, "%s: unknown content kind "
			    "'%s' (expected random or prose)", en->label,
			    g->contents.v[i]);
}

static void
engine_watch_metrics(struct conf_loader *ld, void *obj,
    const struct conf_entry *en)
{
	struct conf_engine *g = obj;
	const char *v = en->value;
	struct conf_metric m;

	strv_clear(&g->watch_metrics);
	if (strcmp(v, "all") == 0)
		return;
	if (strv_split(&g->watch_metrics, v, ',') < 0)
		ld_problem(ld, en->line, "%s: expected all or a comma-separated "
		    "list such as per-token,tg32, got '%s'", en->label, v);
	for (size_t i = 0; i < g->watch_metrics.n; i++)
		if (conf_parse_metric(g->watch_metrics.v[i], &m) < 0)
			ld_problem(ld, en->line, "%s: '%s' is no metric "
			    "(expected per-token, fixed, ppN or tgN)",
			    en->label, g->watch_metrics.v[i]);
}

static void
engine_max_memory(struct conf_loader *ld, void *obj,
    const struct conf_entry *en)
{
	struct conf_engine *g = obj;
	const char *v = en->value;

	if (strcmp(v, "none") == 0)
		g->max_memory = 0;
	else if (conf_parse_size(v, &g->max_memory) < 0 ||
	    g->max_memory < ((uint64_t)16 << 20))
		ld_problem(ld, en->line, "%s: expected a size of 16M or more "
		    "such as 512M or 20G, or none, got '%s'", en->label, v);
}

static void
engine_metric(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_engine *g = obj;

	if (conf_parse_metric(en->value, &g->metric) < 0)
		ld_problem(ld, en->line,
		    "%s: expected per-token, fixed, ppN, tgN, gpu-memory, "
		    "rss or a serve figure (ttft, tpot, itl or e2e, -p50, "
		    "-p90 or -p99), got '%s'",
		    en->label, en->value);
}

/* Serve mode's requests a second: a positive number. */
static void
engine_load_rate(struct conf_loader *ld, void *obj,
    const struct conf_entry *en)
{
	struct conf_engine *g = obj;
	char *end;
	double v;

	errno = 0;
	v = strtod(en->value, &end);
	if (errno || end == en->value || *end != '\0' || !(v > 0) ||
	    v > 1e6)
		ld_problem(ld, en->line, "%s: expected requests a second, a "
		    "number above 0 and up to 1000000 such as 8 or 0.5, got "
		    "'%s'", en->label, en->value);
	else
		g->load.rate = v;
}

static void
engine_repo(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_engine *g = obj;
	const char *v = en->value;

	if (v[0] == '\0')
		ld_problem(ld, en->line, "%s: expected a git URL or path, got "
		    "an empty value", en->label);
	else if (strstr(v, "://") || strchr(v, '@'))
		conf_set_str(&g->repo, v);
	else
		conf_set_path(ld, &g->repo, v);
}

static void
engine_schedule(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_engine *g = obj;
	struct cron cr;
	const char *why;

	if (cron_parse(en->value, &cr, &why) < 0)
		ld_problem(ld, en->line, "%s: %s in cron expression '%s'",
		    en->label, why, en->value);
	conf_set_str(&g->schedule, en->value);
}

/* webhook, command and email: an alert has one of them. */
static void
alert_target(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_alert *a = obj;
	const char *k = en->key;
	enum conf_alert_kind kind = k[0] == 'w' ? ALERT_WEBHOOK :
	    k[0] == 'c' ? ALERT_COMMAND : strcmp(k, "github-issue") == 0 ?
	    ALERT_GITHUB : strcmp(k, "github-comment") == 0 ?
	    ALERT_GITHUB_COMMENT : ALERT_EMAIL;

	if ((int)a->kind != -1 && a->kind != kind)
		ld_problem(ld, en->line, "%s: an alert has one of webhook, "
		    "command, email, github-issue or github-comment, not "
		    "several", en->label);
	if (CONF_ALERT_IS_GITHUB(kind) && !conf_github_target(en->value, NULL,
	    0, NULL))
		ld_problem(ld, en->line, "%s: expected OWNER/REPO or "
		    "OWNER/REPO#NUMBER, got '%s'", en->label, en->value);
	if (kind == ALERT_WEBHOOK && !conf_valid_url(en->value, 0)) {
		char shown[256];

		ld_problem(ld, en->line, "%s: expected an http(s) URL, got "
		    "'%s'", en->label, conf_url_redact(en->value, shown,
		    sizeof(shown)));
	}
	if (kind == ALERT_EMAIL && strchr(en->value, '@') == NULL)
		ld_problem(ld, en->line, "%s: expected e-mail addresses, got "
		    "'%s'", en->label, en->value);
	a->kind = kind;
	conf_set_str(&a->target, en->value);
}

static void
alert_smtp(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_alert *a = obj;

	if (strncmp(en->value, "smtp://", 7) != 0 &&
	    strncmp(en->value, "smtps://", 8) != 0)
		ld_problem(ld, en->line, "%s: expected an smtp:// or smtps:// "
		    "URL, got '%s'", en->label, en->value);
	conf_set_str(&a->smtp, en->value);
}

static void
runner_kind(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_runner *r = obj;

	if (strcmp(en->value, "local") == 0)
		r->kind = RUNNER_LOCAL;
	else if (strcmp(en->value, "slurm") == 0)
		r->kind = RUNNER_SLURM;
	else {
		ld_problem(ld, en->line, "%s: expected local or slurm, got "
		    "'%s'", en->label, en->value);
		r->kind = (enum conf_runner_kind)-1;
	}
}

static void
runner_partition(struct conf_loader *ld, void *obj,
    const struct conf_entry *en)
{
	want_slurm_word(ld, en, "", &((struct conf_runner *)obj)->partition);
}

static void
runner_account(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	want_slurm_word(ld, en, "", &((struct conf_runner *)obj)->account);
}

static void
runner_gres(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	want_slurm_word(ld, en, ":,", &((struct conf_runner *)obj)->gres);
}

static void
runner_constraint(struct conf_loader *ld, void *obj,
    const struct conf_entry *en)
{
	want_slurm_word(ld, en, ":,&|[]()*!",
	    &((struct conf_runner *)obj)->constraint);
}

static void
runner_time_limit(struct conf_loader *ld, void *obj,
    const struct conf_entry *en)
{
	struct conf_runner *r = obj;
	int64_t ms = 0;

	conf_want_duration(ld, en, 1, &ms);
	if (ms > 0 && ms < 60 * 1000)
		ld_problem(ld, en->line, "%s: Slurm counts whole minutes; "
		    "expected 1m or more, got '%s'", en->label, en->value);
	else
		r->time_limit_ms = ms;
}

static void
ablation_args(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_ablation *a = obj;
	const char *v = en->value;

	if (v[0] == '\0' || strcmp(v, "true") == 0)
		ld_problem(ld, en->line, "%s: expected the extra arguments, "
		    "such as --skip moe", en->label);
	else
		strv_push(&a->args, v);
}

static void
ablation_control_min(struct conf_loader *ld, void *obj,
    const struct conf_entry *en)
{
	struct conf_ablation *a = obj;
	double f;

	if (conf_parse_percent(en->value, &f) < 0 || f <= 0 || f >= 1)
		ld_problem(ld, en->line, "%s: expected a percentage above 0%% "
		    "and below 100%% such as 20%%, got '%s'", en->label,
		    en->value);
	else
		a->control_min = f;
}

static void
compare_engines(struct conf_loader *ld, void *obj, const struct conf_entry *en)
{
	struct conf_compare *k = obj;
	struct strv v = STRV_INIT;

	strv_split(&v, en->value, ',');
	strv_clear(&k->engines);
	for (size_t i = 0; i < v.n; i++) {
		char *w = v.v[i], *at;

		while (*w == ' ' || *w == '\t')
			w++;
		for (size_t n = strlen(w); n > 0 && (w[n - 1] == ' ' ||
		    w[n - 1] == '\t'); n--)
			w[n - 1] = '\0';
		at = strchr(w, '@');
		if (w[0] == '\0' || w[0] == '@' || (at && at[1] == '\0') ||
		    strpbrk(w, " \t") != NULL) {
			ld_problem(ld, en->line, "%s: expected ENGINE or "
			    "ENGINE@VERSION, comma-separated, got '%s'",
			    en->label, en->value);
			k->engines_bad = 1;
			break;
		}
		strv_push(&k->engines, w);
	}
	strv_clear(&v);
}

/* --- the table --- */

#define B(f)	offsetof(struct conf, f)
#define W(f)	offsetof(struct conf_weights, f)
#define G(f)	offsetof(struct conf_engine, f)
#define R(f)	offsetof(struct conf_runner, f)
#define A(f)	offsetof(struct conf_ablation, f)
#define L(f)	offsetof(struct conf_alert, f)
#define K(f)	offsetof(struct conf_compare, f)

static const char *const units[] = { "ns", "us", "ms", "s", "tps", NULL };
static const char *const modes[] = { "bench", "server", "serve", NULL };
static const char *const arrivals[] = { "poisson", "fixed", NULL };
static const char *const dialects[] = { "openai", "llama", NULL };

/* In each section, the order of the file's documentation and of the
 * "unknown key" messages. */
const struct conf_key conf_keys[] = {
	{ CONF_BISECTD, "database", CK_PATH, B(database),
	    .init = "/var/lib/bisectd/bisectd.db",
	    .doc = "the SQLite database holding every run and sample" },
	{ CONF_BISECTD, "cache", CK_PATH, B(cache),
	    .init = "/var/cache/bisectd",
	    .doc = "downloaded archives (content-addressed) and unpacked "
		   "releases" },
	{ CONF_BISECTD, "cache-max", CK_CUSTOM, B(cache_max),
	    .set = bisectd_cache_max, .init = "20G", .form = "SIZE",
	    .doc = "size cap of unpacked releases, least recently used "
		   "removed first" },
	{ CONF_BISECTD, "unpack-max", CK_SIZE, B(unpack_max),
	    .dflt = "cache-max",
	    .doc = "largest unpacked release; an unpack also stops at the "
		   "cache's free space" },
	{ CONF_BISECTD, "download-deadline", CK_DURATION,
	    B(download_deadline_ms), .lo = 1, .init = "30m",
	    .doc = "longest download of one archive, retries included, up to "
		   "1 GiB (longer past it)" },
	{ CONF_BISECTD, "max-busy", CK_PERCENT, B(max_busy), .init = "25%",
	    .doc = "start a run only when the machine's CPU busy share is "
		   "below this" },
	{ CONF_BISECTD, "max-wait", CK_DURATION, B(max_wait_ms), .lo = 0,
	    .init = "60s",
	    .doc = "wait at most this long for max-busy, then run and flag "
		   "the run busy" },
	{ CONF_BISECTD, "bench-lock", CK_PATH, B(bench_lock),
	    .dflt = "$BISECTD_BENCH_LOCK, else " "/run/lock/bisectd-bench.lock "
		    "(/tmp/bisectd-bench.lock without /run/lock)",
	    .doc = "the machine's benchmark lock: every run on this machine, "
		   "of any store or user, waits for it" },
	{ CONF_BISECTD, "socket", CK_PATH, B(socket),
	    .dflt = "beside the database",
	    .doc = "the daemon's control socket" },
	{ CONF_BISECTD, "socket-group", CK_STR, B(socket_group),
	    .form = "GROUP", .dflt = "none: the owner only (mode 0600)",
	    .doc = "the group allowed to use the control socket" },
	{ CONF_BISECTD, "http", CK_CUSTOM, B(http), .set = bisectd_http,
	    .owned = CO_STR, .form = "ADDRESS:PORT", .dflt = "off",
	    .doc = "serve the status page, reports, /api/ and /metrics, "
		   "read-only" },
	{ CONF_BISECTD, "public-url", CK_CUSTOM, B(public_url),
	    .set = want_public_url, .owned = CO_STR, .form = "URL",
	    .doc = "where browsers reach that server; alerts link their "
		   "report" },

	{ CONF_WEIGHTS, "path", CK_PATH, W(path), .line_off = W(path_line),
	    .doc = "the weights file or directory (or url)" },
	{ CONF_WEIGHTS, "url", CK_URL, W(url),
	    .doc = "where to download the weights (or path)" },
	{ CONF_WEIGHTS, "sha256", CK_SHA256, W(sha256),
	    .line_off = W(sha256_line), .dflt = "the first hash seen is pinned",
	    .doc = "the expected hash; a directory's is that of its sorted "
		   "manifest" },

	{ CONF_ENGINE, "source", CK_CUSTOM, G(source_spec),
	    .set = engine_source, .owned = CO_STR,
	    .form = "github:OWNER/REPO | url:TEMPLATE | git:PATH-OR-URL | "
		    "dir:PATH",
	    .doc = "where the releases are listed" },
	{ CONF_ENGINE, "asset", CK_STR, G(asset), .form = "PATTERN",
	    .doc = "the archive's name; {version} marks the version" },
	{ CONF_ENGINE, "versions", CK_CUSTOM, G(versions),
	    .set = engine_versions, .owned = CO_STRV, .form = "LIST",
	    .doc = "the versions of a url: source" },
	{ CONF_ENGINE, "sha256sums", CK_URL, G(sha256sums),
	    .doc = "a SHA256SUMS file of a url: source's archives" },
	{ CONF_ENGINE, "api", CK_URL, G(api), .init = "https://api.github.com",
	    .doc = "the GitHub API of a github: source" },
	{ CONF_ENGINE, "token-env", CK_STR, G(token_env), .form = "NAME",
	    .doc = "the environment variable holding an API token" },
	{ CONF_ENGINE, "prereleases", CK_BOOL, G(prereleases), .dflt = "no",
	    .doc = "include pre-releases (drafts are always skipped)" },
	{ CONF_ENGINE, "allow-http", CK_BOOL, G(allow_http), .dflt = "no",
	    .doc = "allow plain http for this engine's URLs" },
	{ CONF_ENGINE, "tag-pattern", CK_STR, G(tag_pattern), .init = "*",
	    .form = "GLOB",
	    .doc = "the git tags of a git: source that are releases" },
	{ CONF_ENGINE, "command", CK_STR, G(command), .form = "TEMPLATE",
	    .doc = "the bench command: {bin} {version} {weights} {prompt} "
		   "{gen} {threads} {content}" },
	{ CONF_ENGINE, "runner", CK_STR, G(runner_name), .form = "NAME, ...",
	    .dflt = "this machine",
	    .doc = "the [runner] section its measurements run on; several: "
		   "one cell of a matrix each" },
	{ CONF_ENGINE, "env", CK_ENV, G(env),
	    .doc = "an environment variable of the engine, pre and post; "
		   "repeatable" },
	{ CONF_ENGINE, "workdir", CK_PATH, G(workdir),
	    .doc = "the working directory of the command" },
	{ CONF_ENGINE, "pre", CK_STR, G(pre), .form = "TEMPLATE",
	    .doc = "run before each benchmark job" },
	{ CONF_ENGINE, "post", CK_STR, G(post), .form = "TEMPLATE",
	    .doc = "run after each benchmark job" },
	{ CONF_ENGINE, "parser", CK_CUSTOM, G(parser), .set = engine_parser,
	    .init = "wall", .form = "wall | llama-bench | json:PATH | regex:RE",
	    .doc = "where the time of a run is read" },
	{ CONF_ENGINE, "regex-unit", CK_ENUM, G(regex_unit), .names = units,
	    .init = "ms", .doc = "the unit of a regex: parser's capture" },
	{ CONF_ENGINE, "mode", CK_ENUM, G(mode), .names = modes,
	    .init = "bench",
	    .form = "bench | server | serve",
	    .doc = "run the command per cell, start a server and time its "
		   "first token, or start a server and load it" },
	{ CONF_ENGINE, "url", CK_URL, G(url),
	    .doc = "server and serve mode: the completions URL" },
	{ CONF_ENGINE, "health-url", CK_URL, G(health_url),
	    .doc = "server and serve mode: the URL that answers once it is "
		   "ready" },
	{ CONF_ENGINE, "load-rate", CK_CUSTOM, G(load.rate),
	    .set = engine_load_rate, .line_off = G(load.line), .form = "RATE",
	    .doc = "serve mode: requests a second (or load-concurrency)" },
	{ CONF_ENGINE, "load-arrival", CK_ENUM, G(load.arrival),
	    .names = arrivals, .init = "poisson", .form = "poisson | fixed",
	    .doc = "serve mode: exponential or equal gaps between arrivals "
		   "at load-rate" },
	{ CONF_ENGINE, "load-concurrency", CK_INT, G(load.concurrency),
	    .lo = 1, .hi = 4096, .line_off = G(load.line),
	    .doc = "serve mode: requests kept in flight (or load-rate)" },
	{ CONF_ENGINE, "load-requests", CK_INT, G(load.requests), .lo = 1,
	    .hi = 1000000, .dflt = "100 without load-duration",
	    .doc = "serve mode: the requests measured in a run" },
	{ CONF_ENGINE, "load-duration", CK_DURATION, G(load.duration_ms),
	    .lo = 1, .doc = "serve mode: or send for this long" },
	{ CONF_ENGINE, "load-warmup", CK_INT, G(load.warmup), .lo = 0,
	    .hi = 100000, .init = "4",
	    .doc = "serve mode: requests sent before, never counted" },
	{ CONF_ENGINE, "load-prompt", CK_LENGTHS, G(load.prompt),
	    G(load.nprompt), .init = "128",
	    .doc = "serve mode: prompt words, one drawn uniformly per request" },
	{ CONF_ENGINE, "load-output", CK_LENGTHS, G(load.output),
	    G(load.noutput), .init = "64",
	    .doc = "serve mode: output tokens (2 or more), drawn as the prompt, "
		   "end-of-text held back" },
	{ CONF_ENGINE, "load-dialect", CK_ENUM, G(load.dialect),
	    .names = dialects, .init = "openai", .form = "openai | llama",
	    .doc = "serve mode: OpenAI /v1/completions or llama-server's "
		   "/completion stream" },
	{ CONF_ENGINE, "slo-ttft", CK_DURATION, G(load.slo_ttft_ms), .lo = 1,
	    .dflt = "none",
	    .doc = "serve mode: goodput's target for time to first token" },
	{ CONF_ENGINE, "slo-tpot", CK_DURATION, G(load.slo_tpot_ms), .lo = 1,
	    .dflt = "none",
	    .doc = "serve mode: goodput's target for time per output token" },
	{ CONF_ENGINE, "load-max-lag", CK_DURATION, G(load.max_lag_ms),
	    .lo = 1, .init = "5ms",
	    .doc = "serve mode: a run whose requests left later than this at "
		   "p99 is flagged client-bound" },
	{ CONF_ENGINE, "load-max-errors", CK_PERCENT, G(load.max_errors),
	    .init = "0%",
	    .doc = "serve mode: the share of failed requests past which a run "
		   "fails" },
	{ CONF_ENGINE, "weights", CK_STR, G(weights_name), .form = "NAME, ...",
	    .dflt = "the only [weights] section",
	    .doc = "the [weights] section every release runs on; several: "
		   "one cell of a matrix each" },
	{ CONF_ENGINE, "prompts", CK_LENGTHS, G(prompts), G(nprompts),
	    .init = "32,128,512,2048", .doc = "the prefill prompt lengths" },
	{ CONF_ENGINE, "gen", CK_LENGTHS, G(gen), G(ngen), .init = "128",
	    .doc = "the decode lengths, measured with prompt 0" },
	{ CONF_ENGINE, "contents", CK_CUSTOM, G(contents),
	    .set = engine_contents, .owned = CO_STRV,
	    .form = "none | random,prose", .dflt = "none",
	    .doc = "the decode content kinds; {content} is that kind's text" },
	{ CONF_ENGINE, "reps", CK_INT, G(reps), .lo = 1, .hi = 1000,
	    .init = "5", .doc = "process runs per cell" },
	{ CONF_ENGINE, "max-reps", CK_INT, G(max_reps), .lo = 1, .hi = 100000,
	    .init = "320",
	    .doc = "an inconclusive comparison adds runs up to this" },
	{ CONF_ENGINE, "warmup", CK_INT, G(warmup), .lo = 0, .hi = 100,
	    .init = "1",
	    .doc = "runs before each cell, stored, never analysed; a "
		   "bisect warms a release's cell up once (each time with "
		   "pre or post)" },
	{ CONF_ENGINE, "threads", CK_INT, G(threads), .lo = 1, .hi = 4096,
	    .dflt = "the number of cores", .doc = "the value of {threads}" },
	{ CONF_ENGINE, "timeout", CK_DURATION, G(timeout_ms), .lo = 1,
	    .init = "10m", .doc = "the longest run" },
	{ CONF_ENGINE, "max-memory", CK_CUSTOM, G(max_memory),
	    .set = engine_max_memory, .form = "SIZE | none",
	    .dflt = "three quarters of the memory",
	    .doc = "the memory a run's cgroup may use; over it the run is "
		   "killed" },
	{ CONF_ENGINE, "unpack-max", CK_SIZE, G(unpack_max),
	    .dflt = "[bisectd]'s", .doc = "the largest unpacked release" },
	{ CONF_ENGINE, "download-deadline", CK_DURATION,
	    G(download_deadline_ms), .lo = 1, .dflt = "[bisectd]'s",
	    .doc = "the longest download of one archive" },
	{ CONF_ENGINE, "prefetch", CK_CUSTOM, G(prefetch),
	    .set = engine_prefetch, .init = "auto", .form = "N|off|auto",
	    .dflt = "auto: 2 for github: and url: sources, off for dir:, git: "
		    "and a Slurm runner",
	    .doc = "archives a bisect downloads ahead, its next probes, while "
		   "it measures" },
	{ CONF_ENGINE, "prefetch-rate", CK_SIZE, G(prefetch_rate),
	    .init = "32M", .form = "SIZE",
	    .doc = "bytes a second a download ahead takes at most" },
	{ CONF_ENGINE, "fit", CK_LENGTHS, G(fit), G(nfit),
	    .dflt = "the two largest prompts",
	    .doc = "the prompt lengths the fit uses" },
	{ CONF_ENGINE, "watch-metrics", CK_CUSTOM, G(watch_metrics),
	    .set = engine_watch_metrics, .owned = CO_STRV,
	    .form = "all | per-token,fixed,ppN,tgN", .dflt = "all",
	    .doc = "what a watch compares besides metric, each bisected and "
		   "alerted apart (Holm's 5% over them)" },
	{ CONF_ENGINE, "metric", CK_CUSTOM, G(metric), .set = engine_metric,
	    .init = "per-token",
	    .form = "per-token | fixed | ppN | tgN | gpu-memory | rss | "
		"ttft-p90 ...",
	    .dflt = "per-token; ttft-p90 in serve mode",
	    .doc = "what the bisection searches on" },
	{ CONF_ENGINE, "threshold", CK_PERCENT, G(threshold), .init = "20%",
	    .doc = "the smallest change that counts as a regression" },
	{ CONF_ENGINE, "max-cv", CK_PERCENT, G(max_cv), .init = "10%",
	    .doc = "above this a figure is flagged noisy" },
	{ CONF_ENGINE, "canary", CK_STR, G(canary), .form = "TEMPLATE",
	    .doc = "the output canary: a command that generates text "
		   "deterministically" },
	{ CONF_ENGINE, "canary-prompt", CK_PATH, G(canary_prompt),
	    .doc = "the canary's prompt file, {content}" },
	{ CONF_ENGINE, "canary-prompt-sha256", CK_SHA256,
	    G(canary_prompt_sha256), .dflt = "the first hash seen is pinned",
	    .doc = "the prompt file's expected hash" },
	{ CONF_ENGINE, "canary-parser", CK_CUSTOM, G(canary_parser),
	    .set = engine_canary_parser, .init = "stdout",
	    .form = "stdout | json:PATH | regex:RE",
	    .doc = "what of the canary's stdout is its text" },
	{ CONF_ENGINE, "repo", CK_CUSTOM, G(repo), .set = engine_repo,
	    .owned = CO_STR, .form = "URL | PATH",
	    .dflt = "a git: source's own",
	    .doc = "the git repository whose commits --commits bisects" },
	{ CONF_ENGINE, "build", CK_CUSTOM, G(build), .set = engine_build,
	    .owned = CO_STRV, .form = "TEMPLATE",
	    .doc = "a build line of a checkout: {src} {out} {jobs}; several "
		   "run in order" },
	{ CONF_ENGINE, "build-timeout", CK_DURATION, G(build_timeout_ms),
	    .lo = 1, .init = "1h", .doc = "the longest build line" },
	{ CONF_ENGINE, "first-parent", CK_BOOL, G(first_parent), .init = "yes",
	    .doc = "walk the first parents only" },
	{ CONF_ENGINE, "drill-down", CK_BOOL, G(drill_down), .dflt = "no",
	    .doc = "a confirmed release regression goes on into its commits" },
	{ CONF_ENGINE, "schedule", CK_CUSTOM, G(schedule),
	    .set = engine_schedule, .owned = CO_STR, .form = "CRON",
	    .doc = "when the daemon watches for new releases" },

	{ CONF_RUNNER, "kind", CK_CUSTOM, R(kind), .set = runner_kind,
	    .init = "local", .form = "local | slurm",
	    .doc = "this machine, one benchmark at a time, or Slurm jobs" },
	{ CONF_RUNNER, "partition", CK_CUSTOM, R(partition),
	    .set = runner_partition, .owned = CO_STR, .form = "NAME",
	    .doc = "sbatch --partition" },
	{ CONF_RUNNER, "account", CK_CUSTOM, R(account), .set = runner_account,
	    .owned = CO_STR, .form = "NAME", .doc = "sbatch --account" },
	{ CONF_RUNNER, "gres", CK_CUSTOM, R(gres), .set = runner_gres,
	    .owned = CO_STR, .form = "GRES", .doc = "sbatch --gres" },
	{ CONF_RUNNER, "constraint", CK_CUSTOM, R(constraint),
	    .set = runner_constraint, .owned = CO_STR, .form = "EXPRESSION",
	    .doc = "sbatch --constraint" },
	{ CONF_RUNNER, "exclusive", CK_BOOL, R(exclusive), .init = "yes",
	    .doc = "the whole node for each job (--exclusive)" },
	{ CONF_RUNNER, "time-limit", CK_CUSTOM, R(time_limit_ms),
	    .set = runner_time_limit, .form = "DURATION",
	    .dflt = "the partition's", .doc = "sbatch --time, whole minutes" },
	{ CONF_RUNNER, "max-jobs", CK_INT, R(max_jobs), .lo = 1, .hi = 1024,
	    .dflt = "4; a local runner: 1",
	    .doc = "measurements in flight at once" },
	{ CONF_RUNNER, "spool", CK_PATH, R(spool),
	    .doc = "a folder the daemon and every node reach, the daemon's "
	    "user's alone: requests and results" },
	{ CONF_RUNNER, "env", CK_ENV, R(env),
	    .doc = "an environment variable of every run on this runner, a "
		   "machine class's own; repeatable" },

	{ CONF_ABLATION, "engine", CK_STR, A(engine_name), .form = "NAME",
	    .doc = "the engine the switch belongs to" },
	{ CONF_ABLATION, "env", CK_ENV, A(env),
	    .doc = "an environment variable of this switch's runs; "
		   "repeatable" },
	{ CONF_ABLATION, "args", CK_CUSTOM, A(args), .set = ablation_args,
	    .owned = CO_STRV, .form = "WORDS",
	    .doc = "words appended to the command; repeatable" },
	{ CONF_ABLATION, "control", CK_BOOL, A(control), .dflt = "no",
	    .doc = "the positive control: a component known to be heavy" },
	{ CONF_ABLATION, "control-min", CK_CUSTOM, A(control_min),
	    .set = ablation_control_min, .form = "PERCENT", .dflt = "20%",
	    .doc = "the share of the runtime the control must remove" },

	{ CONF_ALERT, "webhook", CK_CUSTOM, L(target), .set = alert_target,
	    .owned = CO_STR, .form = "URL",
	    .doc = "post alerts to this URL (Slack-compatible JSON)" },
	{ CONF_ALERT, "command", CK_CUSTOM, L(target), .set = alert_target,
	    .owned = CO_STR, .form = "COMMAND",
	    .doc = "run this command with the alert on its standard input" },
	{ CONF_ALERT, "email", CK_CUSTOM, L(target), .set = alert_target,
	    .owned = CO_STR, .form = "ADDRESSES",
	    .doc = "mail alerts to these addresses, through smtp" },
	{ CONF_ALERT, "smtp", CK_CUSTOM, L(smtp), .set = alert_smtp,
	    .owned = CO_STR, .form = "smtp://HOST | smtps://HOST",
	    .doc = "the mail server of an email alert" },
	{ CONF_ALERT, "from", CK_STR, L(from), .form = "ADDRESS",
	    .doc = "the sender of an email alert" },
	{ CONF_ALERT, "github-issue", CK_CUSTOM, L(target), .set = alert_target,
	    .owned = CO_STR, .form = "OWNER/REPO | OWNER/REPO#NUMBER",
	    .doc = "open an issue for each confirmed regression, or comment "
		   "on issue or pull request NUMBER" },
	{ CONF_ALERT, "github-comment", CK_CUSTOM, L(target),
	    .set = alert_target, .owned = CO_STR,
	    .form = "OWNER/REPO | OWNER/REPO#NUMBER",
	    .doc = "comment on the first bad commit a commit drill-down "
		   "names, for each confirmed regression, or on pull request "
		   "NUMBER" },
	{ CONF_ALERT, "api", CK_URL, L(api), .init = "https://api.github.com",
	    .doc = "the GitHub API of a github-issue or github-comment alert" },
	{ CONF_ALERT, "token-env", CK_STR, L(token_env), .form = "NAME",
	    .doc = "the environment variable holding a github-issue or "
		   "github-comment alert's token" },
	{ CONF_ALERT, "allow-http", CK_BOOL, L(allow_http), .dflt = "no",
	    .doc = "allow a webhook or the GitHub API over plain http" },

	{ CONF_YARDSTICK, "engine", CK_STR, B(yardstick_engine), .form = "NAME",
	    .doc = "the reference engine to re-check" },
	{ CONF_YARDSTICK, "version", CK_STR, B(yardstick_version),
	    .form = "VERSION", .dflt = "the engine's latest",
	    .doc = "the reference release" },
	{ CONF_YARDSTICK, "every", CK_DURATION, B(yardstick_every_ms), .lo = 1,
	    .init = "30d", .doc = "how often the reference is checked" },

	{ CONF_COMPARE, "engines", CK_CUSTOM, K(engines),
	    .set = compare_engines, .owned = CO_STRV,
	    .form = "ENGINE[@VERSION], ...",
	    .doc = "the engines ranked side by side, each at a release or "
		   "at its newest" },
	{ CONF_COMPARE, "every", CK_DURATION, K(every_ms), .lo = 1,
	    .init = "30d", .doc = "how often the table is measured again" },
	{ CONF_COMPARE, "reps", CK_INT, K(reps), .lo = 1, .hi = 1000,
	    .dflt = "each engine's reps",
	    .doc = "process runs of each engine in each cell" },
};

const size_t conf_nkeys = sizeof(conf_keys) / sizeof(conf_keys[0]);

const char *
conf_section_name(enum conf_section s)
{
	static const char *const names[CONF_NSECTIONS] = { "bisectd",
	    "weights", "engine", "runner", "ablation", "alert", "yardstick",
	    "compare" };

	assert((unsigned)s < CONF_NSECTIONS);
	return names[s];
}

const struct conf_key *
conf_key_find(enum conf_section section, const char *name)
{
	for (size_t i = 0; i < conf_nkeys; i++)
		if (conf_keys[i].section == section &&
		    strcmp(conf_keys[i].name, name) == 0)
			return &conf_keys[i];
	return NULL;
}
