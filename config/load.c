/*
 * load.c: reading the configuration file with libgit2's config API and
 * validating it against the key table (keys.c).
 *
 * libgit2 parses the syntax and reports syntax errors with a line; the
 * line of each entry comes from the line map (linemap.c).  Each entry is
 * set through its row of the table into its section's struct, created
 * with the table's defaults when the section first appears; the whole is
 * then checked (checks.c).  Every problem is collected; the caller
 * prints them all.
 */
#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <git2.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "conf.h"
#include "conf_int.h"
#include "keys.h"

#define CONF_MAX_BYTES (1024 * 1024)

void
ld_problem(struct conf_loader *ld, int line, const char *fmt, ...)
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
	/* Once: a matrix's cells share their section's lines. */
	if (!strv_contains(ld->problems, full))
		strv_push(ld->problems, full);
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
	*(char **)(void *)el = conf_xstrdup(name);
	*added = 1;
	return el;
}

/* What the table cannot say of an engine's defaults: the machine's. */
static void
engine_start(struct conf_engine *g)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	long pages = sysconf(_SC_PHYS_PAGES);
	long size = sysconf(_SC_PAGESIZE);

	g->threads = cores > 0 ? (int)cores : 1;
	/* Three quarters of the machine: room for the engine and its
	 * weights, and the rest for the daemon and the system, so that a
	 * run that runs away is killed instead of something else. */
	g->max_memory = pages > 0 && size > 0 ?
	    (uint64_t)pages * (uint64_t)size / 4 * 3 : 0;
}

/* Where each named section's array is in struct conf, its elements'
 * size, and where each element keeps the line its section starts at. */
#define NAMED(arr, n, type) { offsetof(struct conf, arr), \
	offsetof(struct conf, n), sizeof(type), offsetof(type, line) }
static const struct named {
	size_t arr, n, size, line;
} named[CONF_NSECTIONS] = {
	[CONF_WEIGHTS] = NAMED(weights, nweights, struct conf_weights),
	[CONF_ENGINE] = NAMED(engines, nengines, struct conf_engine),
	[CONF_RUNNER] = NAMED(runners, nrunners, struct conf_runner),
	[CONF_ABLATION] = NAMED(ablations, nablations, struct conf_ablation),
	[CONF_ALERT] = NAMED(alerts, nalerts, struct conf_alert),
	[CONF_COMPARE] = NAMED(compares, ncompares, struct conf_compare),
};

/*
 * The struct of en's section: the configuration for [bisectd] and
 * [yardstick], else the named section, started (its line, the table's
 * defaults, what "not set" reads as) the first time it appears.
 */
static void *
section_of(struct conf_loader *ld, enum conf_section s,
    const struct conf_entry *en)
{
	const struct named *k = &named[s];
	char *c = (char *)ld->c, label[320];
	void *obj;
	int added;

	if (s == CONF_BISECTD || s == CONF_YARDSTICK)
		return ld->c;
	obj = section_get((void **)(void *)(c + k->arr),
	    (size_t *)(void *)(c + k->n), k->size, en->sub, &added);
	if (!added)
		return obj;
	*(int *)(void *)((char *)obj + k->line) = en->line;
	snprintf(label, sizeof(label), "%s.%s", conf_section_name(s), en->sub);
	conf_key_defaults(ld, s, obj, label);
	if (s == CONF_ENGINE)
		engine_start(obj);
	else if (s == CONF_RUNNER)
		((struct conf_runner *)obj)->max_jobs = -1;
	else if (s == CONF_ABLATION)
		((struct conf_ablation *)obj)->control_min = -1;
	else if (s == CONF_ALERT)
		((struct conf_alert *)obj)->kind = (enum conf_alert_kind)-1;
	return obj;
}

/* The keys of section for "unknown key" messages: "a, b or c". */
static void
key_list(enum conf_section s, char *buf, size_t len)
{
	const char *names[64];
	size_t n = 0;

	for (size_t i = 0; i < conf_nkeys && n < 63; i++)
		if (conf_keys[i].section == s)
			names[n++] = conf_keys[i].name;
	names[n] = NULL;
	conf_or_list(names, buf, len);
}

/* Levenshtein distance with transpositions (optimal string alignment),
 * of names up to 63 bytes; longer ones are "far". */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[64][64];

	if (la >= 64 || lb >= 64)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
			size_t best = sub < del ? sub : del;

			best = best < ins ? best : ins;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

/* The key of section s closest to a mistyped one, as git suggests a
 * command: within two edits (one for names of four letters or less),
 * or NULL. */
static const char *
key_suggestion(enum conf_section s, const char *typed)
{
	size_t best = SIZE_MAX, limit = strlen(typed) <= 4 ? 1 : 2;
	const char *name = NULL;

	for (size_t i = 0; i < conf_nkeys; i++) {
		size_t dist;

		if (conf_keys[i].section != s)
			continue;
		dist = edit_distance(typed, conf_keys[i].name);
		if (dist < best) {
			best = dist;
			name = conf_keys[i].name;
		}
	}
	return best <= limit ? name : NULL;
}

static void
key_entry(struct conf_loader *ld, enum conf_section s,
    const struct conf_entry *en)
{
	void *obj = section_of(ld, s, en);
	const struct conf_key *k = conf_key_find(s, en->key);
	const char *near;
	char list[512], why[600] = "";

	if (k != NULL) {
		conf_key_set(ld, obj, k, en);
		return;
	}
	/* A typo gets the key it was meant to be; else the section's keys,
	 * but for an engine's, too many to list. */
	if ((near = key_suggestion(s, en->key)) != NULL)
		snprintf(why, sizeof(why), " (did you mean '%s'?)", near);
	else if (s != CONF_ENGINE) {
		key_list(s, list, sizeof(list));
		snprintf(why, sizeof(why), " (expected %s)", list);
	}
	if (en->sub)
		ld_problem(ld, en->line, "%s: unknown key in [%s \"%s\"]%s",
		    en->label, en->section, en->sub, why);
	else
		ld_problem(ld, en->line, "%s: unknown key in [%s]%s",
		    en->label, en->section, why);
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
dispatch(struct conf_loader *ld, const git_config_entry *ge, int nth)
{
	char section[128], *sub = NULL;
	const char *name = ge->name, *dot1, *dot2;
	struct conf_entry en;
	int s;

	memset(&en, 0, sizeof(en));
	en.line = linemap_find(ld, name, nth);
	en.value = ge->value ? ge->value : "true";
	snprintf(en.label, sizeof(en.label), "%s", name);
	dot1 = strchr(name, '.');
	dot2 = strrchr(name, '.');
	if (dot1 == NULL) {
		ld_problem(ld, en.line, "%s: a key outside any section", name);
		return;
	}
	snprintf(section, sizeof(section), "%.*s", (int)(dot1 - name), name);
	en.section = section;
	en.key = dot2 + 1;
	if (dot2 != dot1)
		sub = strndup(dot1 + 1, (size_t)(dot2 - dot1 - 1));
	en.sub = sub;
	for (s = 0; s < CONF_NSECTIONS; s++)
		if (strcmp(section, conf_section_name(s)) == 0)
			break;
	if (s == CONF_NSECTIONS)
		ld_problem(ld, en.line, "%s: unknown section [%s] (expected "
		    "bisectd, weights, engine, alert, runner, ablation, "
		    "yardstick or compare)", name, section);
	else if (s == CONF_BISECTD || s == CONF_YARDSTICK) {
		if (sub)
			ld_problem(ld, en.line, "%s: [%s] takes no subsection "
			    "name (found \"%s\")", name, section, sub);
		else
			key_entry(ld, s, &en);
	} else if (sub == NULL || sub[0] == '\0')
		ld_problem(ld, en.line, "%s: expected [%s \"NAME\"]", name,
		    section);
	else
		key_entry(ld, s, &en);
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
problem_line(const struct conf_loader *ld, const char *msg)
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
sort_by_line(const struct conf_loader *ld, char **v, size_t n)
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
	struct conf_loader ld = { 0 };
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
		ld_problem(&ld, line, "not a text file (a NUL byte)");
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
	ld.c->file = conf_xstrdup(path);
	ld.c->path = conf_xstrdup(abspath);
	ld.c->dir = conf_xstrdup(abspath);
	*strrchr(ld.c->dir, '/') = '\0';
	if (ld.c->dir[0] == '\0') {
		free(ld.c->dir);
		ld.c->dir = conf_xstrdup("/");
	}
	conf_key_defaults(&ld, CONF_BISECTD, ld.c, "bisectd");
	conf_key_defaults(&ld, CONF_YARDSTICK, ld.c, "yardstick");

	open_path = abspath;
	scan = text.data ? text.data : "";
	if (core && ((scan = filtered = core_text(scan, text.len)) == NULL ||
	    (open_path = core_file(filtered, &memfd, memfile,
	    sizeof(memfile))) == NULL)) {
		err_errno(
		    &e, "cannot read the [bisectd] section of '%s'", path);
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
		ld_problem(&ld, git_error_line(msg), "syntax error: %s", clean);
		goto fail_git;
	}
	if (git_config_iterator_new(&it, gc) < 0) {
		ld_problem(&ld, 0, "cannot read: %s", git_error_last() ?
		    git_error_last()->message : "libgit2 failed");
		goto fail_git;
	}
	while ((rc = git_config_next(&ge, it)) == 0)
		dispatch(&ld, ge, seen_before(&seen, ge->name));
	if (rc != GIT_ITEROVER)
		ld_problem(&ld, 0, "cannot read: %s", git_error_last() ?
		    git_error_last()->message : "libgit2 failed");
	if (!core)
		conf_check_all(&ld);
	if (check != NULL)
		check(ld.c, problems, arg);
	if (problems->n > before) {
		sort_by_line(&ld, problems->v + before, problems->n - before);
		goto fail_git;
	}
	if (ld.c->socket == NULL) {
		char *dir = conf_xstrdup(ld.c->database);

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
	struct conf_loader ld = { 0 };
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ld.problems = problems;
	ld.file = c->file;
	ld_problem(&ld, line, "%s", msg);
}

/* What an engine or a matrix owns beside its name. */
void
conf_engine_free(struct conf_engine *g)
{
	free(g->source_arg);
	free(g->parser_arg);
	free(g->canary_parser_arg);
	strv_clear(&g->matrix_runners);
	strv_clear(&g->matrix_weights);
	conf_key_free(CONF_ENGINE, g);
}

const struct conf_engine *
conf_matrix(const struct conf *c, const char *name)
{
	for (size_t i = 0; i < c->nmatrices; i++)
		if (strcmp(c->matrices[i].name, name) == 0)
			return &c->matrices[i];
	return NULL;
}

const struct conf_engine *
conf_engine(const struct conf *c, const char *name)
{
	for (size_t i = 0; i < c->nengines; i++)
		if (strcmp(c->engines[i].name, name) == 0)
			return &c->engines[i];
	return NULL;
}

const struct conf_compare *
conf_compare(const struct conf *c, const char *name)
{
	for (size_t i = 0; i < c->ncompares; i++)
		if (strcmp(c->compares[i].name, name) == 0)
			return &c->compares[i];
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
		conf_key_free(CONF_WEIGHTS, &c->weights[i]);
	}
	for (size_t i = 0; i < c->nengines; i++) {
		struct conf_engine *g = &c->engines[i];

		free(g->name);
		if (g->matrix) {
			free(g->runner_name);
			free(g->weights_name);
			strv_clear(&g->env);
		} else
			conf_engine_free(g);
	}
	for (size_t i = 0; i < c->nmatrices; i++) {
		free(c->matrices[i].name);
		conf_engine_free(&c->matrices[i]);
	}
	free(c->matrices);
	for (size_t i = 0; i < c->nrunners; i++) {
		free(c->runners[i].name);
		conf_key_free(CONF_RUNNER, &c->runners[i]);
	}
	for (size_t i = 0; i < c->nalerts; i++) {
		free(c->alerts[i].name);
		conf_key_free(CONF_ALERT, &c->alerts[i]);
	}
	for (size_t i = 0; i < c->nablations; i++) {
		free(c->ablations[i].name);
		conf_key_free(CONF_ABLATION, &c->ablations[i]);
	}
	for (size_t i = 0; i < c->ncompares; i++) {
		free(c->compares[i].name);
		conf_key_free(CONF_COMPARE, &c->compares[i]);
	}
	free(c->weights);
	free(c->engines);
	free(c->runners);
	free(c->alerts);
	free(c->ablations);
	free(c->compares);
	free(c->file);
	free(c->path);
	free(c->dir);
	conf_key_free(CONF_BISECTD, c);
	conf_key_free(CONF_YARDSTICK, c);
	free(c);
}
