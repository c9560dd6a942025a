/*
 * check.c: the on-disk checks of a loaded configuration (see check.h).
 * Hashing is the slow part: a pinned weights file is read whole, once
 * per check, which is what a job would do on its first run anyway.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "weights.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/strv.h"
#include "config/conf.h"

static void
check_dir_source(const struct conf *c, const struct conf_engine *g,
    struct strv *problems)
{
	struct stat st;
	const char *why;

	if (g->source != SOURCE_DIR || g->source_arg == NULL)
		return;
	if (stat(g->source_arg, &st) < 0)
		why = errno == ENOENT ? "does not exist" : strerror(errno);
	else if (!S_ISDIR(st.st_mode))
		why = "is not a folder";
	else
		return;
	conf_problem(c, problems, g->source_line, "engine.%s.source: expected "
	    "an existing folder of release archives, but '%s' %s", g->name,
	    g->source_arg, why);
}

static void
check_weights(const struct conf *c, const struct conf_weights *w,
    struct strv *problems, struct strv *notes)
{
	struct weights_stamp none = WEIGHTS_STAMP_INIT;
	struct err e = ERR_INIT;
	struct stat st;
	char hex[65] = "";
	int64_t start, ms;
	int rc;

	if (w->path == NULL)
		return;
	if (stat(w->path, &st) < 0) {
		conf_problem(c, problems, w->path_line, "weights.%s.path: "
		    "expected an existing file or folder, but '%s' %s", w->name,
		    w->path, errno == ENOENT ? "does not exist" :
		    strerror(errno));
		return;
	}
	if (w->sha256 == NULL)
		return;
	start = clock_now_ms();
	rc = weights_verify_path(w->path, w->sha256, &none, hex, &e);
	ms = clock_now_ms() - start;
	if (ms >= FETCH_CHECK_SLOW_MS) {
		char note[600];

		if (S_ISDIR(st.st_mode))
			snprintf(note, sizeof(note), "weights.%s: hashed the "
			    "folder '%s' in %.1f s", w->name, w->path,
			    (double)ms / 1000);
		else
			snprintf(note, sizeof(note), "weights.%s: hashed %.1f "
			    "GiB of '%s' in %.1f s", w->name,
			    (double)st.st_size / (1 << 30), w->path,
			    (double)ms / 1000);
		if (notes != NULL)
			strv_push(notes, note);
	}
	if (rc >= 0)
		return;
	if (hex[0] != '\0' && strcmp(hex, w->sha256) != 0)
		conf_problem(c, problems, w->sha256_line, "weights.%s.sha256: "
		    "expected the hash of '%s', which is %s", w->name, w->path,
		    hex);
	else
		conf_problem(c, problems, w->sha256_line, "weights.%s.sha256: "
		    "%s", w->name, e.msg);
}

void
fetch_check_local(const struct conf *c, struct strv *problems, void *notes)
{
	for (size_t i = 0; i < c->nengines; i++)
		check_dir_source(c, &c->engines[i], problems);
	for (size_t i = 0; i < c->nweights; i++)
		check_weights(c, &c->weights[i], problems, notes);
	if (!conf_http_loopback(c))
		strv_push(notes, "warning: bisectd.http: " CONF_HTTP_EXPOSED);
}
