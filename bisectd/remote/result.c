/*
 * result.c: a result file's text judged (see remote.h): its checksum
 * line, its format, and the request it answers.  Pure, so a fuzzer
 * reaches it without a spool or a store.
 */
#include <string.h>

#include <jansson.h>

#include "common/err.h"
#include "fetch/sha256.h"
#include "remote.h"
#include "wire.h"

int
remote_result_parse(const char *text, size_t len, const char *path,
    const char *id, const char *plan, json_t **out, struct err *e)
{
	const char *trailer = NULL;
	char hash[65];
	json_error_t je;
	json_t *o;

	*out = NULL;
	/* BODY "\n" "sha256 " HEX "\n", and nothing after. */
	if (len >= 1 + strlen(TRAILER) + 64 + 1) {
		trailer = text + len - (strlen(TRAILER) + 64 + 1);
		if (trailer[-1] != '\n' || strncmp(trailer, TRAILER,
		    strlen(TRAILER)) != 0 || text[len - 1] != '\n')
			trailer = NULL;
	}
	if (trailer == NULL)
		return err_set(e, "result '%s' refused: truncated (no checksum "
		    "line at its end)", path), REMOTE_REFUSED;
	if (sha256_buf(text, (size_t)(trailer - 1 - text), hash) < 0 ||
	    strncmp(hash, trailer + strlen(TRAILER), 64) != 0)
		return err_set(e, "result '%s' refused: its sha256 does not "
		    "match its checksum line (cut short or altered)", path),
		    REMOTE_REFUSED;
	o = json_loadb(text, (size_t)(trailer - 1 - text), 0, &je);
	if (o == NULL)
		return err_set(e, "result '%s' refused: %s", path, je.text),
		    REMOTE_REFUSED;
	if (jstr(o, "format") == NULL || strcmp(jstr(o, "format"),
	    RESULT_FORMAT) != 0 || jint(o, "version", 0) != 1) {
		json_decref(o);
		return err_set(e, "result '%s' refused: not a version 1 "
		    "result", path), REMOTE_REFUSED;
	}
	if (jstr(o, "request") == NULL || strcmp(jstr(o, "request"), id) != 0 ||
	    jstr(o, "plan") == NULL || strcmp(jstr(o, "plan"), plan) != 0) {
		err_set(e, "result '%s' refused: it answers request %s (plan "
		    "%.12s), not %s (plan %.12s)", path, jstr(o, "request") ?
		    jstr(o, "request") : "?", jstr(o, "plan") ? jstr(o, "plan") :
		    "?", id, plan);
		json_decref(o);
		return REMOTE_REFUSED;
	}
	*out = o;
	return 0;
}
