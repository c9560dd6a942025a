/*
 * conf.c: reading the configuration file with libgit2's config API and
 * validating it against the keys of DESIGN.md's interface table.
 *
 * libgit2 parses the syntax and reports syntax errors with a line; it does
 * not give the line of each entry, so the file's text is scanned once
 * more (linemap below) to name the line of a key in semantic errors.
 * Every semantic problem is collected; the caller prints them all.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include <git2.h>

#include "common/buf.h"
#include "conf.h"
#include "cron.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/regex.h"

#define CONF_MAX_BYTES (1024 * 1024)

/* One key occurrence in the file's text, for line numbers. */
struct linekey {
	char *name;	/* "section.subsection.key" as libgit2 names it */
	int line;
};

struct loader {
	struct conf *c;
	struct strv *problems;
	struct linekey *keys;
	size_t nkeys;
	const char *file;	/* as given, for messages */
	struct strv escapes;	/* invalid escapes, with their lines */
};

static void problem(struct loader *ld, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
problem(struct loader *ld, int line, const char *fmt, ...)
{
	char msg[1024];
	char full[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(full, sizeof(full), "%s:%d: %s", ld->file, line, msg);
	else
		snprintf(full, sizeof(full), "%s: %s", ld->file, msg);
	strv_push(ld->problems, full);
}

/*
 * A section header at q (its '['), up to eol: its name lowercased, and
 * ".SUBSECTION" with the subsection's escapes resolved, into section.
 * Returns the byte after ']', or NULL (section "") when it has none.
 */
static const char *
header_parse(const char *q, const char *eol, char *section, size_t size)
{
	const char *close = memchr(q, ']', (size_t)(eol - q));
	const char *quote;
	size_t n = 0;

	section[0] = '\0';
	if (close == NULL)
		return NULL;
	q++;
	while (q < close && isspace((unsigned char)*q))
		q++;
	while (q < close && !isspace((unsigned char)*q) && *q != '"' &&
	    n + 1 < size)
		section[n++] = (char)tolower((unsigned char)*q++);
	section[n] = '\0';
	quote = memchr(q, '"', (size_t)(close - q));
	if (quote) {
		const char *end = quote + 1;

		while (end < close && *end != '"') {
			if (*end == '\\' && end + 1 < close)
				end++;
			end++;
		}
		if (n + 1 + (size_t)(end - quote) < size) {
			section[n++] = '.';
			for (const char *s = quote + 1; s < end; s++) {
				if (*s == '\\' && s + 1 < end)
					s++;
				section[n++] = *s;
			}
			section[n] = '\0';
		}
	}
	return close + 1;
}

/*
 * The value of key name, from q (after the name) to the end of its last
 * line, continuation lines included: *eolp and *linep move to that line.
 * git-config knows the escapes \\ \" \n \t \b and a backslash at the
 * end of a line; libgit2 names any other (a regex's \d) without its line
 * or key, so the first one in each value is reported here.
 */
static void
value_scan(struct loader *ld, const char *name, const char *q,
    const char **eolp, int *linep)
{
	const char *eol = *eolp;
	int quoted = 0;

	while (q < eol && isspace((unsigned char)*q))
		q++;
	if (q == eol || *q++ != '=')
		return;
	for (; q < eol; q++) {
		if (*q == '"')
			quoted = !quoted;
		else if (!quoted && (*q == '#' || *q == ';'))
			return;
		else if (*q == '\\' && q + 1 == eol && *eol == '\n') {
			(*linep)++;
			q = eol;	/* the loop steps to the next line */
			if ((eol = strchr(q + 1, '\n')) == NULL)
				eol = q + 1 + strlen(q + 1);
			*eolp = eol;
		} else if (*q == '\\' && q + 1 < eol &&
		    strchr("\\\"ntb", q[1]) != NULL)
			q++;
		else if (*q == '\\') {
			char msg[700];

			snprintf(msg, sizeof(msg), "%s:%d: %s: invalid escape "
			    "'\\%.1s' in the value: write a backslash as '\\\\'%s",
			    ld->file, *linep, name, q + 1 < eol ? q + 1 : "",
			    strstr(name, ".parser") ? " (a regex's \\d is "
			    "written \\\\d)" : "");
			strv_push(&ld->escapes, msg);
			return;
		}
	}
}

/* The line at p: its end (its '\n' or the NUL) in *eol; returns its
 * first byte that is not blank. */
static const char *
line_at(const char *p, const char **eol)
{
	const char *q = p;

	if ((*eol = strchr(p, '\n')) == NULL)
		*eol = p + strlen(p);
	while (q < *eol && isspace((unsigned char)*q))
		q++;
	return q;
}

/*
 * Scan the text the way git-config does, well enough to know on which
 * line each key is: section headers set the prefix, the first word of
 * any other line is a key.
 */
static void
linemap_build(struct loader *ld, const char *text)
{
	char section[256] = "";
	size_t alloc = 0;
	int line = 1;

	for (const char *p = text; *p; line++) {
		const char *eol;
		const char *q = line_at(p, &eol);

		if (q < eol && *q == '[') {
			/* A key may follow the header on the same line. */
			if ((q = header_parse(q, eol, section,
			    sizeof(section))) == NULL)
				goto next;
			while (q < eol && isspace((unsigned char)*q))
				q++;
		}
		if (q < eol && (isalpha((unsigned char)*q))) {
			char name[512];
			size_t n = (size_t)snprintf(name, sizeof(name), "%s.",
			    section);

			while (q < eol && (isalnum((unsigned char)*q) ||
			    *q == '-') && n + 1 < sizeof(name))
				name[n++] = (char)tolower((unsigned char)*q++);
			name[n] = '\0';
			if (ld->nkeys == alloc) {
				struct linekey *k;

				alloc = alloc ? alloc * 2 : 64;
				k = realloc(ld->keys, alloc * sizeof(*k));
				if (k == NULL)
					return;
				ld->keys = k;
			}
			ld->keys[ld->nkeys].name = strdup(name);
			ld->keys[ld->nkeys].line = line;
			ld->nkeys++;
			value_scan(ld, name, q, &eol, &line);
		}
next:
		p = *eol ? eol + 1 : eol;
	}
}

/*
 * text with every line outside [bisectd] sections blanked, the line
 * count kept, for conf_load_core().  Caller frees.
 */
static char *
core_text(const char *text, size_t len)
{
	char section[256] = "";
	char *out = malloc(len + 1), *o = out;

	if (out == NULL)
		return NULL;
	for (const char *p = text; *p;) {
		const char *eol;
		const char *q = line_at(p, &eol);

		if (q < eol && *q == '[')
			header_parse(q, eol, section, sizeof(section));
		if (strcmp(section, "bisectd") == 0) {
			memcpy(o, p, (size_t)(eol - p));
			o += eol - p;
		}
		if (*eol)
			*o++ = '\n';
		p = *eol ? eol + 1 : eol;
	}
	*o = '\0';
	return out;
}

/* The line of the nth (from 0) occurrence of name, or 0 if unknown. */
static int
linemap_find(const struct loader *ld, const char *name, int nth)
{
	for (size_t i = 0; i < ld->nkeys; i++)
		if (ld->keys[i].name && strcmp(ld->keys[i].name, name) == 0 &&
		    nth-- == 0)
			return ld->keys[i].line;
	return 0;
}

/* The line of a section header, found through its first key. */
static int
linemap_section(const struct loader *ld, const char *prefix)
{
	size_t len = strlen(prefix);

	for (size_t i = 0; i < ld->nkeys; i++)
		if (ld->keys[i].name &&
		    strncmp(ld->keys[i].name, prefix, len) == 0 &&
		    ld->keys[i].name[len] == '.' &&
		    strchr(ld->keys[i].name + len + 1, '.') == NULL)
			return ld->keys[i].line;
	return 0;
}

/* --- value helpers --- */

struct entry {
	const char *section;	/* lowercased */
	const char *sub;	/* case kept, or NULL */
	const char *key;	/* lowercased */
	const char *value;	/* never NULL: a bare key reads as "true" */
	int line;
	char label[320];	/* "engine.basert.timeout" for messages */
};

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		abort();	/* a few bytes at start-up: nothing to save */
	return p;
}

static void
set_str(char **field, const char *v)
{
	free(*field);
	*field = xstrdup(v);
}

/* A path relative to the config file's folder becomes absolute. */
static void
set_path(struct loader *ld, char **field, const char *v)
{
	free(*field);
	if (v[0] == '/')
		*field = xstrdup(v);
	else if ((*field = fs_join(ld->c->dir, v)) == NULL)
		abort();
}

static int
want_bool(struct loader *ld, const struct entry *en, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(en->value, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(en->value, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	problem(ld, en->line, "%s: expected true or false, got '%s'",
	    en->label, en->value);
	return -1;
}

/* A duration from min_ms (0 or 1) to CONF_DURATION_MAX_MS. */
static void
want_duration(struct loader *ld, const struct entry *en, int64_t min_ms,
    int64_t *ms)
{
	int64_t v;
	int rc = conf_parse_duration(en->value, &v);

	if (rc == -1)
		problem(ld, en->line, "%s: expected a duration such as 250ms, "
		    "30s, 10m, 2h or 30d, got '%s'", en->label, en->value);
	else if (rc < 0 || v < min_ms)
		problem(ld, en->line, "%s: duration '%s' is out of range "
		    "(expected %s to %lldd)", en->label, en->value,
		    min_ms > 0 ? "1ms" : "0s",
		    (long long)(CONF_DURATION_MAX_MS / 86400000));
	else
		*ms = v;
}

static void
want_percent(struct loader *ld, const struct entry *en, double *f)
{
	if (conf_parse_percent(en->value, f) < 0)
		problem(ld, en->line, "%s: expected a percentage such as 20%%, "
		    "got '%s'", en->label, en->value);
}

static void
want_int(struct loader *ld, const struct entry *en, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(en->value, &end, 10);
	if (errno || end == en->value || *end != '\0' || v < lo || v > hi) {
		problem(ld, en->line, "%s: expected an integer from %d to %d, "
		    "got '%s'", en->label, lo, hi, en->value);
		return;
	}
	*out = (int)v;
}

static void
want_lengths(struct loader *ld, const struct entry *en, int *out, size_t *n)
{
	if (conf_parse_lengths(en->value, out, CONF_MAX_LENGTHS, n) < 0 ||
	    *n == 0)
		problem(ld, en->line, "%s: expected a comma-separated list of "
		    "distinct token counts such as 512,2048, got '%s'",
		    en->label, en->value);
}

/* A size above zero, such as 4G or 512M. */
static void
want_size(struct loader *ld, const struct entry *en, uint64_t *out)
{
	if (conf_parse_size(en->value, out) < 0 || *out == 0)
		problem(ld, en->line, "%s: expected a size above zero such as "
		    "16G or 512M, got '%s'", en->label, en->value);
}

/* 64 hex digits into *out, lowercased. */
static void
want_sha256(struct loader *ld, const struct entry *en, char **out)
{
	size_t n = strlen(en->value);
	int ok = n == 64;

	for (size_t i = 0; ok && i < n; i++)
		ok = isxdigit((unsigned char)en->value[i]);
	if (!ok)
		problem(ld, en->line, "%s: expected 64 hex digits, got '%s'",
		    en->label, en->value);
	set_str(out, en->value);
	for (char *p = *out; *p; p++)
		*p = (char)tolower((unsigned char)*p);
}

static int
valid_url(const char *v, int allow_file)
{
	return strncmp(v, "https://", 8) == 0 ||
	    strncmp(v, "http://", 7) == 0 ||
	    (allow_file && strncmp(v, "file://", 7) == 0);
}

/* Where a browser reaches the daemon's HTTP server: an http(s) URL with
 * a host and nothing a link could not carry as it is. */
static void
want_public_url(struct loader *ld, const struct entry *en)
{
	const char *v = en->value, *host = strstr(v, "://");
	size_t n = strlen(v);
	int bad = !valid_url(v, 0) || host == NULL || host[3] == '\0' ||
	    host[3] == '/' || strchr(v, '?') || strchr(v, '#');

	for (const char *p = v; *p && !bad; p++)
		bad = (unsigned char)*p <= ' ' || *p == '"' || *p == '<' ||
		    *p == '>' || *p == '\\' || *p == 0x7f;
	if (bad) {
		problem(ld, en->line, "%s: expected an http:// or https:// URL "
		    "such as https://bisectd.example.com, got '%s'", en->label,
		    v);
		return;
	}
	set_str(&ld->c->public_url, v);
	while (n > 0 && ld->c->public_url[n - 1] == '/')
		ld->c->public_url[--n] = '\0';
}

/* --- sections --- */

static void
bisectd_key(struct loader *ld, const struct entry *en)
{
	struct conf *c = ld->c;

	if (strcmp(en->key, "database") == 0)
		set_path(ld, &c->database, en->value);
	else if (strcmp(en->key, "cache") == 0)
		set_path(ld, &c->cache, en->value);
	else if (strcmp(en->key, "cache-max") == 0) {
		if (conf_parse_size(en->value, &c->cache_max) < 0)
			problem(ld, en->line, "%s: expected a size such as "
			    "20G or 512M, got '%s'", en->label, en->value);
	} else if (strcmp(en->key, "unpack-max") == 0)
		want_size(ld, en, &c->unpack_max);
	else if (strcmp(en->key, "download-deadline") == 0)
		want_duration(ld, en, 1, &c->download_deadline_ms);
	else if (strcmp(en->key, "max-busy") == 0)
		want_percent(ld, en, &c->max_busy);
	else if (strcmp(en->key, "max-wait") == 0)
		want_duration(ld, en, 0, &c->max_wait_ms);
	else if (strcmp(en->key, "socket") == 0)
		set_path(ld, &c->socket, en->value);
	else if (strcmp(en->key, "socket-group") == 0)
		set_str(&c->socket_group, en->value);
	else if (strcmp(en->key, "http") == 0) {
		if (conf_parse_listen(en->value, c->http_address,
		    sizeof(c->http_address), &c->http_port) < 0)
			problem(ld, en->line, "%s: expected a numeric address "
			    "and a port such as 127.0.0.1:8088 or [::1]:8088, "
			    "got '%s'", en->label, en->value);
		else
			set_str(&c->http, en->value);
	} else if (strcmp(en->key, "public-url") == 0)
		want_public_url(ld, en);
	else
		problem(ld, en->line, "%s: unknown key in [bisectd] (expected "
		    "database, cache, cache-max, unpack-max, download-deadline, "
		    "max-busy, max-wait, socket, socket-group, http or "
		    "public-url)", en->label);
}

/*
 * The section called name in an array of weights, engines or alerts,
 * appended zeroed (with its name) when missing; *added says which.  Each
 * of those structs has its char *name first (conf.h), which is how the
 * elements are compared here.
 */
static void *
section_get(void **arr, size_t *n, size_t size, const char *name,
    int *added)
{
	char *base = *arr, *el;

	*added = 0;
	for (size_t i = 0; i < *n; i++) {
		char *const *elname = (char *const *)(void *)(base + i * size);

		if (strcmp(*elname, name) == 0)
			return base + i * size;
	}
	if ((base = realloc(*arr, (*n + 1) * size)) == NULL)
		abort();	/* a few bytes at start-up: nothing to save */
	*arr = base;
	el = base + (*n)++ * size;
	memset(el, 0, size);
	*(char **)(void *)el = xstrdup(name);
	*added = 1;
	return el;
}

static struct conf_weights *
weights_get(struct loader *ld, const char *name, int line)
{
	int added;
	struct conf_weights *w = section_get((void **)&ld->c->weights,
	    &ld->c->nweights, sizeof(*w), name, &added);

	if (added)
		w->line = line;
	return w;
}

static void
weights_key(struct loader *ld, const struct entry *en)
{
	struct conf_weights *w = weights_get(ld, en->sub, en->line);

	if (strcmp(en->key, "path") == 0) {
		set_path(ld, &w->path, en->value);
		w->path_line = en->line;
	}
	else if (strcmp(en->key, "url") == 0) {
		if (!valid_url(en->value, 0))
			problem(ld, en->line, "%s: expected an http(s) URL, got "
			    "'%s'", en->label, en->value);
		set_str(&w->url, en->value);
	} else if (strcmp(en->key, "sha256") == 0) {
		want_sha256(ld, en, &w->sha256);
		w->sha256_line = en->line;
	} else
		problem(ld, en->line, "%s: unknown key in [weights \"%s\"] "
		    "(expected path, url or sha256)", en->label, en->sub);
}

static void
engine_defaults(struct conf_engine *g)
{
	static const int prompts[] = { 32, 128, 512, 2048 };
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	g->api = xstrdup("https://api.github.com");
	g->tag_pattern = xstrdup("*");
	g->parser = PARSER_WALL;
	g->regex_unit = UNIT_MS;
	g->mode = MODE_BENCH;
	memcpy(g->prompts, prompts, sizeof(prompts));
	g->nprompts = 4;
	g->gen[0] = 128;
	g->ngen = 1;
	g->reps = 5;
	g->max_reps = 320;
	g->warmup = 1;
	g->threads = cores > 0 ? (int)cores : 1;
	g->timeout_ms = 10 * 60 * 1000;
	/* Three quarters of the machine: room for the engine and its
	 * weights, and the rest for the daemon and the system, so that a
	 * run that runs away is killed instead of something else. */
	{
		long pages = sysconf(_SC_PHYS_PAGES);
		long size = sysconf(_SC_PAGESIZE);

		g->max_memory = pages > 0 && size > 0 ?
		    (uint64_t)pages * (uint64_t)size / 4 * 3 : 0;
	}
	g->metric.kind = METRIC_PER_TOKEN;
	g->threshold = 0.20;
	g->max_cv = 0.10;
	g->build_timeout_ms = 60 * 60 * 1000;
	g->first_parent = 1;
}

static struct conf_engine *
engine_get(struct loader *ld, const char *name, int line)
{
	int added;
	struct conf_engine *g = section_get((void **)&ld->c->engines,
	    &ld->c->nengines, sizeof(*g), name, &added);

	if (added) {
		g->line = line;
		engine_defaults(g);
	}
	return g;
}

static void
engine_source(struct loader *ld, struct conf_engine *g, const struct entry *en)
{
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
		set_str(&g->source_spec, v);
		v += n;
		if (*v == '\0')
			break;
		switch (g->source) {
		case SOURCE_GITHUB: {
			const char *slash = strchr(v, '/');

			if (slash == NULL || slash == v || slash[1] == '\0' ||
			    strchr(slash + 1, '/') != NULL)
				problem(ld, en->line, "%s: expected "
				    "github:OWNER/REPO, got '%s'", en->label,
				    en->value);
			set_str(&g->source_arg, v);
			break;
		}
		case SOURCE_URL:
			if (!valid_url(v, 0) || strstr(v, "{version}") == NULL)
				problem(ld, en->line, "%s: expected url: followed "
				    "by an http(s) URL containing {version}, got "
				    "'%s'", en->label, en->value);
			set_str(&g->source_arg, v);
			break;
		case SOURCE_GIT:
			if (strstr(v, "://") || strchr(v, '@'))
				set_str(&g->source_arg, v);
			else
				set_path(ld, &g->source_arg, v);
			break;
		case SOURCE_DIR:
			set_path(ld, &g->source_arg, v);
			break;
		}
		return;
	}
	problem(ld, en->line, "%s: expected github:OWNER/REPO, url:TEMPLATE, "
	    "git:PATH-OR-URL or dir:PATH, got '%s'", en->label, en->value);
}

/*
 * The json:PATH or regex:RE part of a parser key: 1 with *arg set for
 * json:, 2 for regex: (compiled as the parser compiles it, with the
 * capture group the value is read from), 0 for neither.
 */
static int
parser_arg(struct loader *ld, const struct entry *en, char **arg)
{
	const char *v = en->value;
	struct err e = ERR_INIT;
	struct regex *re;

	free(*arg);
	*arg = NULL;
	if (strncmp(v, "json:", 5) == 0 && v[5] != '\0') {
		*arg = xstrdup(v + 5);
		return 1;
	}
	if (strncmp(v, "regex:", 6) != 0 || v[6] == '\0')
		return 0;
	*arg = xstrdup(v + 6);
	if (regex_compile(v + 6, &re, &e) < 0)
		problem(ld, en->line, "%s: %s", en->label, e.msg);
	regex_free(re);
	return 2;
}

static void
engine_parser(struct loader *ld, struct conf_engine *g, const struct entry *en)
{
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
		problem(ld, en->line, "%s: expected wall, llama-bench, "
		    "json:PATH or regex:RE, got '%s'", en->label, v);
}

/*
 * A build line: a command template whose placeholders are {src}, {out}
 * and {jobs} only ({{ is a literal brace).  The words are split when it
 * runs, without a shell, as for command.
 */
static void
engine_build(struct loader *ld, struct conf_engine *g, const struct entry *en)
{
	const char *p = en->value;

	if (p[strspn(p, " \t")] == '\0') {
		problem(ld, en->line, "%s: expected a command such as 'cc -O2 "
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
			problem(ld, en->line, "%s: unknown placeholder "
			    "'{%.*s}' (known: {src} {out} {jobs}; write {{ for "
			    "a literal brace)", en->label, (int)n, p + 1);
			return;
		}
		p++;
	}
	strv_push(&g->build, en->value);
}

static void
engine_canary_parser(struct loader *ld, struct conf_engine *g,
    const struct entry *en)
{
	int kind = parser_arg(ld, en, &g->canary_parser_arg);

	if (kind == 1)
		g->canary_parser = TEXT_JSON;
	else if (kind == 2)
		g->canary_parser = TEXT_REGEX;
	else if (strcmp(en->value, "stdout") == 0)
		g->canary_parser = TEXT_STDOUT;
	else
		problem(ld, en->line, "%s: expected stdout, json:PATH or "
		    "regex:RE, got '%s'", en->label, en->value);
}

static void
engine_key(struct loader *ld, const struct entry *en)
{
	struct conf_engine *g = engine_get(ld, en->sub, en->line);
	const char *k = en->key, *v = en->value;

	if (strcmp(k, "source") == 0)
		engine_source(ld, g, en);
	else if (strcmp(k, "asset") == 0)
		set_str(&g->asset, v); else if (strcmp(k, "versions") == 0) {
		strv_clear(&g->versions);
		if (strv_split(&g->versions, v, ',') < 0)
			problem(ld, en->line, "%s: expected a comma-separated "
			    "list of versions, got '%s'", en->label, v);
	} else if (strcmp(k, "sha256sums") == 0) {
		if (!valid_url(v, 0))
			problem(ld, en->line, "%s: expected an http(s) URL, got "
			    "'%s'", en->label, v);
		set_str(&g->sha256sums, v);
	} else if (strcmp(k, "api") == 0) {
		if (!valid_url(v, 0))
			problem(ld, en->line, "%s: expected an http(s) URL, got "
			    "'%s'", en->label, v);
		set_str(&g->api, v);
	} else if (strcmp(k, "token-env") == 0)
		set_str(&g->token_env, v);
	else if (strcmp(k, "prereleases") == 0)
		want_bool(ld, en, &g->prereleases);
	else if (strcmp(k, "allow-http") == 0)
		want_bool(ld, en, &g->allow_http);
	else if (strcmp(k, "tag-pattern") == 0)
		set_str(&g->tag_pattern, v);
	else if (strcmp(k, "command") == 0)
		set_str(&g->command, v);
	else if (strcmp(k, "runner") == 0)
		set_str(&g->runner_name, v);
	else if (strcmp(k, "env") == 0) {
		const char *eq = strchr(v, '=');

		if (eq == NULL || eq == v)
			problem(ld, en->line, "%s: expected NAME=VALUE, got '%s'",
			    en->label, v);
		else
			strv_push(&g->env, v);
	} else if (strcmp(k, "workdir") == 0)
		set_path(ld, &g->workdir, v);
	else if (strcmp(k, "pre") == 0)
		set_str(&g->pre, v);
	else if (strcmp(k, "post") == 0)
		set_str(&g->post, v);
	else if (strcmp(k, "parser") == 0)
		engine_parser(ld, g, en);
	else if (strcmp(k, "regex-unit") == 0) {
		static const char *const units[] = { "ns", "us", "ms", "s",
		    "tps" };
		size_t i;

		for (i = 0; i < 5; i++)
			if (strcmp(v, units[i]) == 0)
				break;
		if (i == 5)
			problem(ld, en->line, "%s: expected ns, us, ms, s or tps, "
			    "got '%s'", en->label, v);
		else
			g->regex_unit = (enum conf_unit)i;
	} else if (strcmp(k, "mode") == 0) {
		if (strcmp(v, "bench") == 0)
			g->mode = MODE_BENCH;
		else if (strcmp(v, "server") == 0)
			g->mode = MODE_SERVER;
		else
			problem(ld, en->line, "%s: expected bench or server, got "
			    "'%s'", en->label, v);
	} else if (strcmp(k, "url") == 0 || strcmp(k, "health-url") == 0) {
		if (!valid_url(v, 0))
			problem(ld, en->line, "%s: expected an http(s) URL, got "
			    "'%s'", en->label, v);
		set_str(strcmp(k, "url") == 0 ? &g->url : &g->health_url, v);
	} else if (strcmp(k, "weights") == 0)
		set_str(&g->weights_name, v);
	else if (strcmp(k, "prompts") == 0)
		want_lengths(ld, en, g->prompts, &g->nprompts);
	else if (strcmp(k, "gen") == 0)
		want_lengths(ld, en, g->gen, &g->ngen);
	else if (strcmp(k, "contents") == 0) {
		strv_clear(&g->contents);
		if (strcmp(v, "none") != 0 &&
		    strv_split(&g->contents, v, ',') < 0)
			problem(ld, en->line, "%s: expected a comma-separated "
			    "list such as random,prose, got '%s'", en->label, v);
		for (size_t i = 0; i < g->contents.n; i++)
			if (strcmp(g->contents.v[i], "random") != 0 &&
			    strcmp(g->contents.v[i], "prose") != 0)
				problem(ld, en->line, "%s: unknown content kind "
				    "'%s' (expected random or prose)", en->label,
				    g->contents.v[i]);
	} else if (strcmp(k, "reps") == 0)
		want_int(ld, en, 1, 1000, &g->reps);
	else if (strcmp(k, "max-reps") == 0)
		want_int(ld, en, 1, 100000, &g->max_reps);
	else if (strcmp(k, "warmup") == 0)
		want_int(ld, en, 0, 100, &g->warmup);
	else if (strcmp(k, "threads") == 0)
		want_int(ld, en, 1, 4096, &g->threads);
	else if (strcmp(k, "timeout") == 0)
		want_duration(ld, en, 1, &g->timeout_ms);
	else if (strcmp(k, "max-memory") == 0) {
		if (strcmp(v, "none") == 0)
			g->max_memory = 0;
		else if (conf_parse_size(v, &g->max_memory) < 0 ||
		    g->max_memory < ((uint64_t)16 << 20))
			problem(ld, en->line, "%s: expected a size of 16M or "
			    "more such as 512M or 20G, or none, got '%s'",
			    en->label, v);
	}
	else if (strcmp(k, "unpack-max") == 0)
		want_size(ld, en, &g->unpack_max);
	else if (strcmp(k, "download-deadline") == 0)
		want_duration(ld, en, 1, &g->download_deadline_ms);
	else if (strcmp(k, "fit") == 0)
		want_lengths(ld, en, g->fit, &g->nfit);
	else if (strcmp(k, "metric") == 0) {
		if (conf_parse_metric(v, &g->metric) < 0)
			problem(ld, en->line, "%s: expected per-token, fixed, ppN "
			    "or tgN, got '%s'", en->label, v);
	} else if (strcmp(k, "threshold") == 0)
		want_percent(ld, en, &g->threshold);
	else if (strcmp(k, "max-cv") == 0)
		want_percent(ld, en, &g->max_cv);
	else if (strcmp(k, "canary") == 0)
		set_str(&g->canary, v);
	else if (strcmp(k, "canary-prompt") == 0)
		set_path(ld, &g->canary_prompt, v);
	else if (strcmp(k, "canary-prompt-sha256") == 0)
		want_sha256(ld, en, &g->canary_prompt_sha256);
	else if (strcmp(k, "canary-parser") == 0)
		engine_canary_parser(ld, g, en);
	else if (strcmp(k, "repo") == 0) {
		if (v[0] == '\0')
			problem(ld, en->line, "%s: expected a git URL or path, "
			    "got an empty value", en->label);
		else if (strstr(v, "://") || strchr(v, '@'))
			set_str(&g->repo, v);
		else
			set_path(ld, &g->repo, v);
	} else if (strcmp(k, "build") == 0)
		engine_build(ld, g, en);
	else if (strcmp(k, "build-timeout") == 0)
		want_duration(ld, en, 1, &g->build_timeout_ms);
	else if (strcmp(k, "first-parent") == 0)
		want_bool(ld, en, &g->first_parent);
	else if (strcmp(k, "drill-down") == 0)
		want_bool(ld, en, &g->drill_down);
	else if (strcmp(k, "schedule") == 0) {
		struct cron cr;
		const char *why;

		if (cron_parse(v, &cr, &why) < 0)
			problem(ld, en->line, "%s: %s in cron expression '%s'",
			    en->label, why, v);
		set_str(&g->schedule, v);
	} else
		problem(ld, en->line, "%s: unknown key in [engine \"%s\"]",
		    en->label, en->sub);
}

const char *
conf_url_redact(const char *url, char *buf, size_t len)
{
	const char *scheme_end = strstr(url, "://"), *auth, *host, *end, *at;

	if (len == 0)
		return buf;
	if (scheme_end == NULL) {
		snprintf(buf, len, "%s", url);
		return buf;
	}
	auth = scheme_end + 3;
	end = auth + strcspn(auth, "/?#");
	host = auth;
	for (at = auth; at < end; at++)
		if (*at == '@')
			host = at + 1;
	snprintf(buf, len, "%.*s%.*s%s", (int)(auth - url), url,
	    (int)(end - host), host, *end != '\0' ? "/..." : "");
	return buf;
}

const char *
conf_alert_shown(const struct conf_alert *a, char *buf, size_t len)
{
	if (a->kind == ALERT_WEBHOOK && a->target != NULL)
		return conf_url_redact(a->target, buf, len);
	snprintf(buf, len, "%s", a->target ? a->target : "");
	return buf;
}

static struct conf_alert *
alert_get(struct loader *ld, const char *name, int line)
{
	int added;
	struct conf_alert *a = section_get((void **)&ld->c->alerts,
	    &ld->c->nalerts, sizeof(*a), name, &added);

	if (added) {
		a->line = line;
		a->kind = (enum conf_alert_kind)-1;
	}
	return a;
}

static void
alert_key(struct loader *ld, const struct entry *en)
{
	struct conf_alert *a = alert_get(ld, en->sub, en->line);
	const char *k = en->key;
	enum conf_alert_kind kind;

	if (strcmp(k, "webhook") == 0 || strcmp(k, "command") == 0 ||
	    strcmp(k, "email") == 0) {
		kind = k[0] == 'w' ? ALERT_WEBHOOK : k[0] == 'c' ?
		    ALERT_COMMAND : ALERT_EMAIL;
		if ((int)a->kind != -1 && a->kind != kind)
			problem(ld, en->line, "%s: an alert has one of webhook, "
			    "command or email, not several", en->label);
		if (kind == ALERT_WEBHOOK && !valid_url(en->value, 0)) {
			char shown[256];

			problem(ld, en->line, "%s: expected an http(s) URL, got "
			    "'%s'", en->label, conf_url_redact(en->value,
			    shown, sizeof(shown)));
		}
		if (kind == ALERT_EMAIL && strchr(en->value, '@') == NULL)
			problem(ld, en->line, "%s: expected e-mail addresses, "
			    "got '%s'", en->label, en->value);
		a->kind = kind;
		set_str(&a->target, en->value);
	} else if (strcmp(k, "smtp") == 0) {
		if (strncmp(en->value, "smtp://", 7) != 0 &&
		    strncmp(en->value, "smtps://", 8) != 0)
			problem(ld, en->line, "%s: expected an smtp:// or "
			    "smtps:// URL, got '%s'", en->label, en->value);
		set_str(&a->smtp, en->value);
	} else if (strcmp(k, "from") == 0)
		set_str(&a->from, en->value);
	else if (strcmp(k, "allow-http") == 0)
		want_bool(ld, en, &a->allow_http);
	else
		problem(ld, en->line, "%s: unknown key in [alert \"%s\"] "
		    "(expected webhook, command, email, smtp, from or "
		    "allow-http)", en->label, en->sub);
}

static struct conf_runner *
runner_get(struct loader *ld, const char *name, int line)
{
	int added;
	struct conf_runner *r = section_get((void **)&ld->c->runners,
	    &ld->c->nrunners, sizeof(*r), name, &added);

	if (added) {
		r->line = line;
		r->kind = RUNNER_LOCAL;
		r->exclusive = 1;
		r->max_jobs = -1;
	}
	return r;
}

/*
 * A value handed to sbatch as one option's argument: never a shell
 * word, but Slurm splits some of them on commas and reads others as
 * expressions, so only the characters its names and expressions use
 * are taken.
 */
static void
want_slurm_word(struct loader *ld, const struct entry *en, const char *extra,
    char **field)
{
	const char *v = en->value;

	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && strchr("_.-", *p) == NULL &&
		    strchr(extra, *p) == NULL) {
			problem(ld, en->line, "%s: expected a Slurm name%s%s, "
			    "got '%s' ('%c' is not taken)", en->label,
			    extra[0] ? " with " : "", extra,
			    v, isprint((unsigned char)*p) ? *p : '?');
			return;
		}
	if (v[0] == '\0' || v[0] == '-') {
		problem(ld, en->line, "%s: expected a Slurm name, got '%s'",
		    en->label, v);
		return;
	}
	set_str(field, v);
}

static void
runner_key(struct loader *ld, const struct entry *en)
{
	struct conf_runner *r = runner_get(ld, en->sub, en->line);
	const char *k = en->key;

	if (strcmp(k, "kind") == 0) {
		if (strcmp(en->value, "local") == 0)
			r->kind = RUNNER_LOCAL;
		else if (strcmp(en->value, "slurm") == 0)
			r->kind = RUNNER_SLURM;
		else {
			problem(ld, en->line, "%s: expected local or slurm, got "
			    "'%s'", en->label, en->value);
			r->kind = (enum conf_runner_kind)-1;
		}
	} else if (strcmp(k, "partition") == 0)
		want_slurm_word(ld, en, "", &r->partition);
	else if (strcmp(k, "account") == 0)
		want_slurm_word(ld, en, "", &r->account);
	else if (strcmp(k, "gres") == 0)
		want_slurm_word(ld, en, ":,", &r->gres);
	else if (strcmp(k, "constraint") == 0)
		want_slurm_word(ld, en, ":,&|[]()*!", &r->constraint);
	else if (strcmp(k, "exclusive") == 0)
		want_bool(ld, en, &r->exclusive);
	else if (strcmp(k, "time-limit") == 0) {
		int64_t ms = 0;

		want_duration(ld, en, 1, &ms);
		if (ms > 0 && ms < 60 * 1000)
			problem(ld, en->line, "%s: Slurm counts whole minutes; "
			    "expected 1m or more, got '%s'", en->label,
			    en->value);
		else
			r->time_limit_ms = ms;
	} else if (strcmp(k, "max-jobs") == 0)
		want_int(ld, en, 1, 1024, &r->max_jobs);
	else if (strcmp(k, "spool") == 0)
		set_path(ld, &r->spool, en->value);
	else
		problem(ld, en->line, "%s: unknown key in [runner \"%s\"] "
		    "(expected kind, partition, account, gres, constraint, "
		    "exclusive, time-limit, max-jobs or spool)", en->label,
		    en->sub);
}

static void
check_runner(struct loader *ld, struct conf_runner *r)
{
	static const char *const slurm_only[] = { "partition", "account",
	    "gres", "constraint", "exclusive", "time-limit", "spool" };
	char key[320];

	snprintf(key, sizeof(key), "runner.%s", r->name);
	r->line = linemap_section(ld, key);
	if ((int)r->kind == -1)
		return;		/* said already; its other keys are moot */
	if (r->kind == RUNNER_SLURM) {
		if (r->spool == NULL)
			problem(ld, r->line, "runner.%s.spool: missing (a slurm "
			    "runner needs a folder the daemon and the nodes "
			    "both reach)", r->name);
		if (r->max_jobs < 0)
			r->max_jobs = 4;
		return;
	}
	for (size_t i = 0; i < sizeof(slurm_only) / sizeof(*slurm_only);
	    i++) {
		int line;

		snprintf(key, sizeof(key), "runner.%s.%s", r->name,
		    slurm_only[i]);
		if ((line = linemap_find(ld, key, 0)) > 0)
			problem(ld, line, "%s: only kind = slurm takes it",
			    key);
	}
	snprintf(key, sizeof(key), "runner.%s.max-jobs", r->name);
	if (r->max_jobs > 1)
		problem(ld, linemap_find(ld, key, 0), "%s: a local runner runs "
		    "one benchmark at a time, got %d", key, r->max_jobs);
	r->max_jobs = 1;
}

static struct conf_ablation *
ablation_get(struct loader *ld, const char *name, int line)
{
	int added;
	struct conf_ablation *a = section_get((void **)&ld->c->ablations,
	    &ld->c->nablations, sizeof(*a), name, &added);

	if (added) {
		a->line = line;
		a->control_min = -1;
	}
	return a;
}

static void
ablation_key(struct loader *ld, const struct entry *en)
{
	struct conf_ablation *a = ablation_get(ld, en->sub, en->line);
	const char *k = en->key, *v = en->value;

	if (strcmp(k, "engine") == 0)
		set_str(&a->engine_name, v);
	else if (strcmp(k, "env") == 0) {
		const char *eq = strchr(v, '=');

		if (eq == NULL || eq == v)
			problem(ld, en->line, "%s: expected NAME=VALUE, got '%s'",
			    en->label, v);
		else
			strv_push(&a->env, v);
	} else if (strcmp(k, "args") == 0) {
		if (v[0] == '\0' || strcmp(v, "true") == 0)
			problem(ld, en->line, "%s: expected the extra arguments, "
			    "such as --skip moe", en->label);
		else
			strv_push(&a->args, v);
	} else if (strcmp(k, "control") == 0)
		want_bool(ld, en, &a->control);
	else if (strcmp(k, "control-min") == 0) {
		double f;

		if (conf_parse_percent(v, &f) < 0 || f <= 0 || f >= 1)
			problem(ld, en->line, "%s: expected a percentage above "
			    "0%% and below 100%% such as 20%%, got '%s'",
			    en->label, v);
		else
			a->control_min = f;
	} else
		problem(ld, en->line, "%s: unknown key in [ablation \"%s\"] "
		    "(expected engine, env, args, control or control-min)",
		    en->label, en->sub);
}

static void
yardstick_key(struct loader *ld, const struct entry *en)
{
	struct conf *c = ld->c;

	if (strcmp(en->key, "engine") == 0)
		set_str(&c->yardstick_engine, en->value);
	else if (strcmp(en->key, "version") == 0)
		set_str(&c->yardstick_version, en->value);
	else if (strcmp(en->key, "every") == 0)
		want_duration(ld, en, 1, &c->yardstick_every_ms);
	else
		problem(ld, en->line, "%s: unknown key in [yardstick] (expected "
		    "engine, version or every)", en->label);
}

/* --- whole-file checks once every key is read --- */

static int
contains(const int *v, size_t n, int x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The line of the engine's key, or of its section when the key is not
 * in the file (a default). */
static int
engine_line(const struct loader *ld, const struct conf_engine *g,
    const char *key, int section_line)
{
	char name[320];
	int line;

	snprintf(name, sizeof(name), "engine.%s.%s", g->name, key);
	line = linemap_find(ld, name, 0);
	return line ? line : section_line;
}

static void
check_engine(struct loader *ld, struct conf_engine *g)
{
	char prefix[300];
	int line, fit_line;

	snprintf(prefix, sizeof(prefix), "engine.%s", g->name);
	line = linemap_section(ld, prefix);
	if (g->source_spec == NULL)
		problem(ld, line, "engine.%s.source: missing (expected "
		    "github:OWNER/REPO, url:TEMPLATE, git:PATH-OR-URL or "
		    "dir:PATH)", g->name);
	else if ((g->source == SOURCE_GITHUB || g->source == SOURCE_DIR) &&
	    g->asset == NULL)
		problem(ld, line, "engine.%s.asset: missing (a %s: source needs "
		    "the archive's name pattern with {version})", g->name,
		    conf_source_name(g->source));
	if (g->asset && strstr(g->asset, "{version}") == NULL &&
	    !(g->source == SOURCE_GIT && strstr(g->asset, "{tag}"))) {
		char key[320];

		snprintf(key, sizeof(key), "engine.%s.asset", g->name);
		problem(ld, linemap_find(ld, key, 0), "%s: expected a pattern "
		    "containing {version}%s, got '%s'", key,
		    g->source == SOURCE_GIT ? " or {tag}" : "", g->asset);
	}
	if (g->source_spec && g->source == SOURCE_URL && g->versions.n == 0)
		problem(ld, line, "engine.%s.versions: missing (a url: source "
		    "needs the list of versions)", g->name);
	if (g->source_spec && g->source != SOURCE_URL && g->versions.n > 0) {
		char key[320];

		snprintf(key, sizeof(key), "engine.%s.versions", g->name);
		problem(ld, linemap_find(ld, key, 0), "%s: only url: sources "
		    "take a list of versions", key);
	}
	if (g->command == NULL)
		problem(ld, line, "engine.%s.command: missing (the bench "
		    "command, e.g. {bin}/bin/llama-bench -m {weights} -p "
		    "{prompt} -n {gen} -o json)", g->name);
	else if (strstr(g->command, "{bin}") == NULL)
		problem(ld, engine_line(ld, g, "command", line), "engine.%s."
		    "command: expected {bin}, the unpacked release, in the "
		    "command (without it every release runs the same binary), "
		    "got '%s'", g->name, g->command);
	if (g->mode == MODE_SERVER && g->url == NULL)
		problem(ld, line, "engine.%s.url: missing (mode = server needs "
		    "the completions URL)", g->name);
	if (g->weights_name == NULL) {
		if (ld->c->nweights == 1)
			g->weights = &ld->c->weights[0];
		else
			problem(ld, line, "engine.%s.weights: missing (expected "
			    "the name of a [weights] section%s)", g->name,
			    ld->c->nweights == 0 ? "; there is none" : "");
	} else if ((g->weights = conf_weights_find(ld->c, g->weights_name)) ==
	    NULL) {
		char key[320];

		snprintf(key, sizeof(key), "engine.%s.weights", g->name);
		problem(ld, linemap_find(ld, key, 0), "%s: no [weights \"%s\"] "
		    "section", key, g->weights_name);
	}
	if (g->runner_name && (g->runner = conf_runner_find(ld->c,
	    g->runner_name)) == NULL) {
		char key[320];

		snprintf(key, sizeof(key), "engine.%s.runner", g->name);
		problem(ld, linemap_find(ld, key, 0), "%s: no [runner \"%s\"] "
		    "section", key, g->runner_name);
	}
	if (g->nfit == 0) {
		/* The two largest prompt lengths. */
		int sorted[CONF_MAX_LENGTHS];

		memcpy(sorted, g->prompts, g->nprompts * sizeof(int));
		qsort(sorted, g->nprompts, sizeof(int), cmp_int);
		for (size_t i = g->nprompts >= 2 ? g->nprompts - 2 : 0;
		    i < g->nprompts; i++)
			g->fit[g->nfit++] = sorted[i];
	}
	if (g->repo == NULL && g->source_spec && g->source == SOURCE_GIT &&
	    g->source_arg)
		g->repo = xstrdup(g->source_arg);
	if (g->build.n > 0 && g->repo == NULL) {
		char key[320];

		snprintf(key, sizeof(key), "engine.%s.build", g->name);
		problem(ld, linemap_find(ld, key, 0), "engine.%s.repo: missing "
		    "(build needs the engine's git repository; a git: source "
		    "gives it)", g->name);
	}
	if (g->drill_down && (g->repo == NULL || g->build.n == 0)) {
		char key[320];

		snprintf(key, sizeof(key), "engine.%s.drill-down", g->name);
		problem(ld, linemap_find(ld, key, 0), "%s: needs %s (the "
		    "commits between two tags are built from the repository)",
		    key, g->repo == NULL ? "repo and build" : "build");
	}
	if (g->max_reps < g->reps)
		problem(ld, engine_line(ld, g, "max-reps", line),
		    "engine.%s.max-reps: %d is fewer than reps "
		    "(%d)", g->name, g->max_reps, g->reps);
	/* Without a fit key, the fit is the prompts' two largest: a
	 * problem with it is the prompts'. */
	fit_line = engine_line(ld, g, "fit", engine_line(ld, g, "prompts",
	    line));
	if (g->nfit < 2)
		problem(ld, fit_line, "engine.%s.fit: the fit needs two or more "
		    "prompt lengths", g->name);
	for (size_t i = 0; i < g->nfit; i++)
		if (!contains(g->prompts, g->nprompts, g->fit[i]))
			problem(ld, fit_line, "engine.%s.fit: %d is not one of "
			    "the prompt lengths", g->name, g->fit[i]);
	for (size_t i = 0; i < g->nprompts; i++)
		if (g->prompts[i] == 0)
			problem(ld, engine_line(ld, g, "prompts", line),
			    "engine.%s.prompts: a prefill length must be "
			    "positive", g->name);
	if (g->canary && g->canary_prompt == NULL)
		problem(ld, line, "engine.%s.canary-prompt: missing (a canary "
		    "generates from a prompt file, given to it as {content} "
		    "and on stdin)", g->name);
	if (g->canary == NULL && (g->canary_prompt ||
	    g->canary_prompt_sha256 || g->canary_parser_arg))
		problem(ld, line, "engine.%s.canary: missing (canary-prompt "
		    "and canary-parser describe a canary command)", g->name);
	if (g->metric.kind == METRIC_PP &&
	    !contains(g->prompts, g->nprompts, g->metric.n))
		problem(ld, engine_line(ld, g, "metric", line), "engine.%s."
		    "metric: pp%d needs %d among the prompt lengths", g->name,
		    g->metric.n, g->metric.n);
	if (g->metric.kind == METRIC_TG && !contains(g->gen, g->ngen,
	    g->metric.n))
		problem(ld, engine_line(ld, g, "metric", line), "engine.%s."
		    "metric: tg%d needs %d among the gen lengths", g->name,
		    g->metric.n, g->metric.n);
}

/* Each switch names a known engine and turns something on; each engine
 * with switches has exactly one control. */
static void
check_ablations(struct loader *ld)
{
	struct conf *c = ld->c;

	for (size_t i = 0; i < c->nablations; i++) {
		struct conf_ablation *a = &c->ablations[i];
		char key[320];

		if (a->engine_name == NULL)
			problem(ld, a->line, "ablation.%s.engine: missing (the "
			    "engine whose component the switch turns off)",
			    a->name);
		else if ((a->engine = conf_engine(c, a->engine_name)) ==
		    NULL) {
			snprintf(key, sizeof(key), "ablation.%s.engine",
			    a->name);
			problem(ld, linemap_find(ld, key, 0), "%s: no [engine "
			    "\"%s\"] section", key, a->engine_name);
		}
		if (a->env.n == 0 && a->args.n == 0)
			problem(ld, a->line, "ablation.%s: expected env "
			    "(NAME=VALUE) or args, what turns the component "
			    "off", a->name);
		snprintf(key, sizeof(key), "ablation.%s.control-min", a->name);
		if (!a->control && a->control_min >= 0)
			problem(ld, linemap_find(ld, key, 0), "%s: only the "
			    "control switch (control = yes) takes a "
			    "control-min", key);
		if (a->control_min < 0)
			a->control_min = CONF_CONTROL_MIN;
	}
	for (size_t i = 0; i < c->nablations; i++) {
		const struct conf_ablation *a = &c->ablations[i], *first = NULL;
		size_t k, controls = 0;

		if (a->engine == NULL)
			continue;
		for (k = 0; k < i; k++)
			if (c->ablations[k].engine == a->engine)
				break;
		if (k < i)
			continue;	/* the engine was checked already */
		for (k = i; k < c->nablations; k++) {
			const struct conf_ablation *b = &c->ablations[k];
			char key[320];

			if (b->engine != a->engine || !b->control)
				continue;
			if (controls++ == 0) {
				first = b;
				continue;
			}
			snprintf(key, sizeof(key), "ablation.%s.control",
			    b->name);
			problem(ld, linemap_find(ld, key, 0), "%s: engine %s "
			    "has its control already ([ablation \"%s\"]); "
			    "exactly one switch per engine is the control",
			    key, a->engine->name, first->name);
		}
		if (controls == 0)
			problem(ld, a->line, "ablation.%s: engine %s has no "
			    "control: mark one switch of a component known to "
			    "be heavy with control = yes, so that a switch that "
			    "does nothing is not read as a component that costs "
			    "nothing", a->name, a->engine->name);
	}
}

static void
check_all(struct loader *ld)
{
	struct conf *c = ld->c;

	for (size_t i = 0; i < c->nweights; i++) {
		struct conf_weights *w = &c->weights[i];

		if ((w->path == NULL) == (w->url == NULL))
			problem(ld, w->line, "weights.%s: expected exactly one "
			    "of path or url", w->name);
		if (w->url && w->sha256 == NULL)
			problem(ld, w->line, "weights.%s.sha256: missing (weights "
			    "fetched by url must be pinned by hash)", w->name);
	}
	for (size_t i = 0; i < c->nrunners; i++)
		check_runner(ld, &c->runners[i]);
	if (c->unpack_max == 0)
		c->unpack_max = c->cache_max;
	for (size_t i = 0; i < c->nengines; i++) {
		struct conf_engine *g = &c->engines[i];

		if (g->unpack_max == 0)
			g->unpack_max = c->unpack_max;
		if (g->download_deadline_ms <= 0)
			g->download_deadline_ms = c->download_deadline_ms;
		check_engine(ld, g);
	}
	for (size_t i = 0; i < c->nalerts; i++) {
		struct conf_alert *a = &c->alerts[i];

		if ((int)a->kind == -1)
			problem(ld, a->line, "alert.%s: expected one of webhook, "
			    "command or email", a->name);
		else if (a->kind == ALERT_EMAIL && a->smtp == NULL)
			problem(ld, a->line, "alert.%s.smtp: missing (email "
			    "alerts need an smtp:// URL)", a->name);
	}
	if (c->yardstick_engine && conf_engine(c, c->yardstick_engine) == NULL)
		problem(ld, linemap_find(ld, "yardstick.engine", 0),
		    "yardstick.engine: no [engine \"%s\"] section",
		    c->yardstick_engine);
	check_ablations(ld);
	if (c->yardstick_version && c->yardstick_engine == NULL)
		problem(ld, linemap_find(ld, "yardstick.version", 0),
		    "yardstick.engine: missing (a yardstick names its engine)");
}

static void
conf_defaults(struct conf *c)
{
	c->database = xstrdup("/var/lib/bisectd/bisectd.db");
	c->cache = xstrdup("/var/cache/bisectd");
	c->cache_max = (uint64_t)20 << 30;
	c->max_busy = 0.25;
	c->max_wait_ms = 60 * 1000;
	c->download_deadline_ms = 30 * 60 * 1000;
	c->yardstick_every_ms = 30LL * 86400 * 1000;
}

/* The line libgit2 names in "... (in FILE:LINE)", or 0. */
static int
git_error_line(const char *msg)
{
	const char *in = strstr(msg, "(in ");
	const char *colon;

	if (in == NULL || (colon = strrchr(in, ':')) == NULL)
		return 0;
	return atoi(colon + 1);
}

static void
dispatch(struct loader *ld, const git_config_entry *ge, int nth)
{
	char section[128], *sub = NULL;
	const char *name = ge->name, *dot1, *dot2;
	struct entry en;

	memset(&en, 0, sizeof(en));
	en.line = linemap_find(ld, name, nth);
	en.value = ge->value ? ge->value : "true";
	snprintf(en.label, sizeof(en.label), "%s", name);
	dot1 = strchr(name, '.');
	dot2 = strrchr(name, '.');
	if (dot1 == NULL) {
		problem(ld, en.line, "%s: a key outside any section", name);
		return;
	}
	snprintf(section, sizeof(section), "%.*s", (int)(dot1 - name), name);
	en.section = section;
	en.key = dot2 + 1;
	if (dot2 != dot1)
		sub = strndup(dot1 + 1, (size_t)(dot2 - dot1 - 1));
	en.sub = sub;
	if (strcmp(section, "bisectd") == 0 || strcmp(section, "yardstick") == 0) {
		if (sub)
			problem(ld, en.line, "%s: [%s] takes no subsection name "
			    "(found \"%s\")", name, section, sub);
		else if (section[0] == 'b')
			bisectd_key(ld, &en);
		else
			yardstick_key(ld, &en);
	} else if (strcmp(section, "weights") == 0 ||
	    strcmp(section, "engine") == 0 || strcmp(section, "alert") == 0 ||
	    strcmp(section, "ablation") == 0 ||
	    strcmp(section, "runner") == 0) {
		if (sub == NULL || sub[0] == '\0')
			problem(ld, en.line, "%s: expected [%s \"NAME\"]", name,
			    section);
		else if (section[0] == 'w')
			weights_key(ld, &en);
		else if (section[0] == 'e')
			engine_key(ld, &en);
		else if (strcmp(section, "ablation") == 0)
			ablation_key(ld, &en);
		else if (section[0] == 'r')
			runner_key(ld, &en);
		else
			alert_key(ld, &en);
	} else
		problem(ld, en.line, "%s: unknown section [%s] (expected "
		    "bisectd, weights, engine, alert, runner, ablation or "
		    "yardstick)", name, section);
	free(sub);
}

/* How many times name was seen before, for multi-valued keys' lines. */
static int
seen_before(struct strv *seen, const char *name)
{
	int n = 0;

	for (size_t i = 0; i < seen->n; i++)
		if (strcmp(seen->v[i], name) == 0)
			n++;
	strv_push(seen, name);
	return n;
}

/*
 * libgit2 opens files only: conf_load_core() gives it the filtered text
 * through a memory file, so nothing is written to disk.  The caller
 * closes *fd.  Returns the path to open, or NULL.
 */
static const char *
core_file(const char *filtered, int *fd, char *path, size_t size)
{
	size_t n = strlen(filtered);

	if ((*fd = memfd_create("bisectd-core.conf", MFD_CLOEXEC)) < 0 ||
	    (n > 0 && write(*fd, filtered, n) != (ssize_t)n))
		return NULL;
	snprintf(path, size, "/proc/self/fd/%d", *fd);
	return path;
}

/* The line a problem names after "FILE:", or 0. */
static long
problem_line(const struct loader *ld, const char *msg)
{
	size_t n = strlen(ld->file);

	if (strncmp(msg, ld->file, n) != 0 || msg[n] != ':')
		return 0;
	return strtol(msg + n + 1, NULL, 10);
}

/* Problems in the order of the file's lines (a stable insertion sort:
 * the few found are already mostly in order), those without a line
 * first. */
static void
sort_by_line(const struct loader *ld, char **v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		char *p = v[i];
		long line = problem_line(ld, p);
		size_t j = i;

		for (; j > 0 && problem_line(ld, v[j - 1]) > line; j--)
			v[j] = v[j - 1];
		v[j] = p;
	}
}

static int
load(const char *path, int core, conf_check_fn *check, void *arg,
    struct conf **out, struct strv *problems)
{
	struct loader ld = { 0 };
	struct buf text = BUF_INIT(CONF_MAX_BYTES);
	struct err e = ERR_INIT;
	struct strv seen = STRV_INIT;
	git_config *gc = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *ge;
	char abspath[PATH_MAX], memfile[64];
	char *filtered = NULL;
	const char *open_path, *scan;
	size_t before = problems->n;
	int rc, memfd = -1;

	*out = NULL;
	ld.problems = problems;
	ld.file = path;
	if (fs_read_file(path, &text, &e) < 0) {
		err_prefix(&e, "configuration");
		strv_push(problems, e.msg);
		return -1;
	}
	if (memchr(text.data ? text.data : "", '\0', text.len) != NULL) {
		int line = 1;

		for (size_t i = 0; i < text.len && text.data[i]; i++)
			line += text.data[i] == '\n';
		problem(&ld, line, "not a text file (a NUL byte)");
		buf_release(&text);
		return -1;
	}
	if (realpath(path, abspath) == NULL) {
		err_errno(&e, "cannot resolve '%s'", path);
		strv_push(problems, e.msg);
		buf_release(&text);
		return -1;
	}
	if ((ld.c = calloc(1, sizeof(*ld.c))) == NULL)
		abort();
	ld.c->file = xstrdup(path);
	ld.c->path = xstrdup(abspath);
	ld.c->dir = xstrdup(abspath);
	*strrchr(ld.c->dir, '/') = '\0';
	if (ld.c->dir[0] == '\0')
		set_str(&ld.c->dir, "/");
	conf_defaults(ld.c);

	open_path = abspath;
	scan = text.data ? text.data : "";
	if (core && ((scan = filtered = core_text(scan, text.len)) == NULL ||
	    (open_path = core_file(filtered, &memfd, memfile,
	    sizeof(memfile))) == NULL)) {
		err_errno(&e, "cannot read the [bisectd] section of '%s'", path);
		strv_push(problems, e.msg);
		goto fail;
	}
	linemap_build(&ld, scan);
	git_libgit2_init();
	if (git_config_open_ondisk(&gc, open_path) < 0) {
		const git_error *ge_ = git_error_last();
		const char *msg = ge_ ? ge_->message : "cannot parse";
		const char *colon = strstr(msg, "config file: ");
		char clean[512];

		/* libgit2 stops at the first error and may not say where:
		 * the escapes the scan found are named with their lines. */
		if (ld.escapes.n > 0) {
			for (size_t i = 0; i < ld.escapes.n; i++)
				strv_push(problems, ld.escapes.v[i]);
			goto fail_git;
		}
		/* "failed to parse config file: X (in F:N)" -> "F:N: X" */
		snprintf(clean, sizeof(clean), "%s", colon ? colon + 13 : msg);
		if (strstr(clean, " (in "))
			*strstr(clean, " (in ") = '\0';
		problem(&ld, git_error_line(msg), "syntax error: %s", clean);
		goto fail_git;
	}
	if (git_config_iterator_new(&it, gc) < 0) {
		problem(&ld, 0, "cannot read: %s", git_error_last() ?
		    git_error_last()->message : "libgit2 failed");
		goto fail_git;
	}
	while ((rc = git_config_next(&ge, it)) == 0)
		dispatch(&ld, ge, seen_before(&seen, ge->name));
	if (rc != GIT_ITEROVER)
		problem(&ld, 0, "cannot read: %s", git_error_last() ?
		    git_error_last()->message : "libgit2 failed");
	if (!core)
		check_all(&ld);
	if (check != NULL)
		check(ld.c, problems, arg);
	if (problems->n > before) {
		sort_by_line(&ld, problems->v + before, problems->n - before);
		goto fail_git;
	}
	if (ld.c->socket == NULL) {
		char *dir = xstrdup(ld.c->database);

		*strrchr(dir, '/') = '\0';
		ld.c->socket = fs_join(dir[0] ? dir : "/", "bisectd.sock");
		free(dir);
	}
	*out = ld.c;
	ld.c = NULL;
fail_git:
	git_config_iterator_free(it);
	git_config_free(gc);
	git_libgit2_shutdown();
fail:
	if (memfd >= 0)
		close(memfd);
	free(filtered);
	for (size_t i = 0; i < ld.nkeys; i++)
		free(ld.keys[i].name);
	free(ld.keys);
	strv_clear(&ld.escapes);
	strv_clear(&seen);
	buf_release(&text);
	conf_free(ld.c);
	return *out ? 0 : -1;
}

int
conf_load(const char *path, struct conf **out, struct strv *problems)
{
	return load(path, 0, NULL, NULL, out, problems);
}

int
conf_load_checked(const char *path, conf_check_fn *check, void *arg,
    struct conf **out, struct strv *problems)
{
	return load(path, 0, check, arg, out, problems);
}

int
conf_load_core(const char *path, struct conf **out, struct strv *problems)
{
	return load(path, 1, NULL, NULL, out, problems);
}

void
conf_problem(const struct conf *c, struct strv *problems, int line,
    const char *fmt, ...)
{
	struct loader ld = { 0 };
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ld.problems = problems;
	ld.file = c->file;
	problem(&ld, line, "%s", msg);
}

const struct conf_engine *
conf_engine(const struct conf *c, const char *name)
{
	for (size_t i = 0; i < c->nengines; i++)
		if (strcmp(c->engines[i].name, name) == 0)
			return &c->engines[i];
	return NULL;
}

const struct conf_runner *
conf_runner_find(const struct conf *c, const char *name)
{
	for (size_t i = 0; i < c->nrunners; i++)
		if (strcmp(c->runners[i].name, name) == 0)
			return &c->runners[i];
	return NULL;
}

const struct conf_ablation *
conf_ablation_control(const struct conf *c, const char *engine)
{
	for (size_t i = 0; i < c->nablations; i++)
		if (c->ablations[i].control && c->ablations[i].engine &&
		    strcmp(c->ablations[i].engine->name, engine) == 0)
			return &c->ablations[i];
	return NULL;
}

const struct conf_weights *
conf_weights_find(const struct conf *c, const char *name)
{
	for (size_t i = 0; i < c->nweights; i++)
		if (strcmp(c->weights[i].name, name) == 0)
			return &c->weights[i];
	return NULL;
}

void
conf_free(struct conf *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nweights; i++) {
		free(c->weights[i].name);
		free(c->weights[i].path);
		free(c->weights[i].url);
		free(c->weights[i].sha256);
	}
	for (size_t i = 0; i < c->nengines; i++) {
		struct conf_engine *g = &c->engines[i];

		free(g->name);
		free(g->source_spec);
		free(g->source_arg);
		free(g->asset);
		strv_clear(&g->versions);
		free(g->sha256sums);
		free(g->api);
		free(g->token_env);
		free(g->tag_pattern);
		free(g->command);
		strv_clear(&g->env);
		free(g->workdir);
		free(g->pre);
		free(g->post);
		free(g->parser_arg);
		free(g->url);
		free(g->health_url);
		free(g->weights_name);
		strv_clear(&g->contents);
		free(g->schedule);
		free(g->canary);
		free(g->canary_prompt);
		free(g->canary_prompt_sha256);
		free(g->canary_parser_arg);
		free(g->runner_name);
		free(g->repo);
		strv_clear(&g->build);
	}
	for (size_t i = 0; i < c->nrunners; i++) {
		struct conf_runner *r = &c->runners[i];

		free(r->name);
		free(r->partition);
		free(r->account);
		free(r->gres);
		free(r->constraint);
		free(r->spool);
	}
	free(c->runners);
	for (size_t i = 0; i < c->nalerts; i++) {
		free(c->alerts[i].name);
		free(c->alerts[i].target);
		free(c->alerts[i].smtp);
		free(c->alerts[i].from);
	}
	for (size_t i = 0; i < c->nablations; i++) {
		free(c->ablations[i].name);
		free(c->ablations[i].engine_name);
		strv_clear(&c->ablations[i].env);
		strv_clear(&c->ablations[i].args);
	}
	free(c->ablations);
	free(c->weights);
	free(c->engines);
	free(c->alerts);
	free(c->file);
	free(c->path);
	free(c->dir);
	free(c->database);
	free(c->cache);
	free(c->socket);
	free(c->socket_group);
	free(c->http);
	free(c->public_url);
	free(c->yardstick_engine);
	free(c->yardstick_version);
	free(c);
}
