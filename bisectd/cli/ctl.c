/*
 * ctl.c: helpers bisectctl's command handlers share (see ctl.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "store/store.h"
#include "bisectd/report/listing_json.h"
#include "bisectd/report/text_escape.h"

static void say(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));

static void
say(const char *fmt, va_list ap)
{
	fputs("bisectctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int
ctl_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	return EXIT_FAIL;
}

int
ctl_failed(const struct err *e)
{
	fprintf(stderr, "bisectctl: %s\n", e->msg);
	return e->usage ? EXIT_USAGE : EXIT_FAIL;
}

int
ctl_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

const struct conf_engine *
ctl_engine(struct ctl *c, const char *name)
{
	const struct conf_engine *g = conf_engine(c->conf, name);
	const struct conf_engine *m = conf_matrix(c->conf, name);

	if (g == NULL && m != NULL) {
		size_t n = 0;

		for (size_t i = 0; i < c->conf->nengines; i++)
			n += c->conf->engines[i].matrix == m;
		fprintf(stderr, "bisectctl: '%s' is a matrix of %zu cells; "
		    "this command takes one of them:", name, n);
		for (size_t i = 0; i < c->conf->nengines; i++)
			if (c->conf->engines[i].matrix == m)
				fprintf(stderr, " %s", c->conf->engines[i].name);
		fputc('\n', stderr);
	} else if (g == NULL) {
		fprintf(stderr, "bisectctl: no engine '%s' in '%s'", name,
		    c->conf->path);
		if (c->conf->nengines > 0) {
			fprintf(stderr, " (it has:");
			for (size_t i = 0; i < c->conf->nengines; i++)
				fprintf(stderr, " %s", c->conf->engines[i].name);
			fprintf(stderr, ")");
		}
		fputc('\n', stderr);
	}
	return g;
}

struct store *
ctl_store(struct ctl *c)
{
	struct err e = ERR_INIT;
	struct store *s;
	char *dir = strdup(c->conf->database);
	char *slash = dir ? strrchr(dir, '/') : NULL;

	if (slash && slash != dir) {
		*slash = '\0';
		if (fs_mkdirs(dir, 0755, &e) < 0) {
			free(dir);
			ctl_error("%s", e.msg);
			return NULL;
		}
	}
	free(dir);
	/* Commands that write may fetch: the cache is made private first. */
	if (c->conf->cache != NULL && fs_mkdirs(c->conf->cache, 0700, &e) < 0) {
		ctl_error("%s", e.msg);
		return NULL;
	}
	if (store_open(c->conf->database, &s, &e) < 0) {
		ctl_error("%s", e.msg);
		return NULL;
	}
	return s;
}

struct store *
ctl_store_readonly(struct ctl *c)
{
	struct err e = ERR_INIT;
	struct store *s;

	/* Not there yet, or needing a migration we may make: open for
	 * writing, which creates or migrates it. */
	if (access(c->conf->database, F_OK) < 0 && errno == ENOENT)
		return ctl_store(c);
	if (store_open_readonly(c->conf->database, &s, &e) == 0)
		return s;
	if (access(c->conf->database, W_OK) == 0)
		return ctl_store(c);
	ctl_error("%s", e.msg);
	return NULL;
}

const char *
ctl_safe_n(const char *s, size_t n, int keep_lines)
{
	static char *slots[8];
	static size_t next;
	char *copy = strndup(s, n);

	free(slots[next]);
	slots[next] = copy ? text_escape(copy, keep_lines) : NULL;
	free(copy);
	s = slots[next] ? slots[next] : "(out of memory)";
	next = (next + 1) % 8;
	return s;
}

const char *
ctl_safe(const char *s)
{
	return s ? ctl_safe_n(s, strlen(s), 0) : NULL;
}

void
ctl_print_json(json_t *json)
{
	char *s = listing_json_text(json);

	if (s) {
		fputs(s, stdout);
		free(s);
	}
	json_decref(json);
}

int
ctl_release_id(struct store *s, const char *engine, const char *version,
    int64_t *id)
{
	struct store_release r;
	struct err e = ERR_INIT;
	int64_t eid;
	int rc;

	rc = store_engine_find(s, engine, &eid, &e);
	if (rc == 0)
		rc = store_release_get(s, eid, version, &r, &e);
	if (rc < 0)
		return ctl_failed(&e);
	if (rc == 1)
		return ctl_usage_error("%s has no stored release '%s' (see "
		    "'bisectctl versions %s')", engine, version, engine);
	*id = r.id;
	store_release_release(&r);
	return 0;
}
