/*
 * regex.c: regex:RE patterns by PCRE2 (see regex.h).  The only file that
 * includes pcre2.h.
 *
 * PCRE2 rather than glibc's regcomp(): glibc builds a DFA as it scans,
 * with no bound on the states it keeps, and "(a|b)*a(a|b){100}(x)" took
 * 800 MB and 26 s on one line of 4 kB; nothing but the pattern's shape
 * bounded it.  PCRE2 bounds its heap, and its steps are counted here
 * with an automatic callout before each item of the pattern: PCRE2's own
 * match limit starts again at every position of the subject, so on its
 * own it let the pattern above take 15 s on that line.  Counting costs
 * some 2x on a plain pattern, a fraction of a millisecond an output.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pcre2.h>

#include "regex.h"

struct regex {
	pcre2_code *code;
	pcre2_match_context *mctx;
	pcre2_match_data *md;
	char pattern[REGEX_MAX_LEN + 1];
};

/* The pattern for a message: cut at 64 bytes. */
#define SHOWN(p) (int)(strlen(p) > 64 ? 64 : strlen(p)), (p), \
	(strlen(p) > 64 ? "..." : "")

int
regex_compile(const char *pattern, struct regex **out, struct err *e)
{
	PCRE2_UCHAR why[256];
	PCRE2_SIZE at;
	struct regex *re;
	uint32_t groups;
	int code;

	*out = NULL;
	if (strlen(pattern) > REGEX_MAX_LEN)
		return err_set(e, "regex '%.*s%s' is longer than %d bytes",
		    SHOWN(pattern), REGEX_MAX_LEN);
	if ((re = calloc(1, sizeof(*re))) == NULL)
		return err_errno(e, "cannot compile regex");
	strcpy(re->pattern, pattern);
	/* No PCRE2_UTF: output is bytes, valid UTF-8 or not. */
	re->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
	    PCRE2_AUTO_CALLOUT, &code, &at, NULL);
	if (re->code == NULL) {
		pcre2_get_error_message(code, why, sizeof(why));
		free(re);
		return err_set(e, "regex '%.*s%s' does not compile: %s (at "
		    "byte %zu)", SHOWN(pattern), (const char *)why,
		    (size_t)at);
	}
	pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &groups);
	if (groups < 1) {
		regex_free(re);
		return err_set(e, "regex '%.*s%s' has no capture group for "
		    "the value", SHOWN(pattern));
	}
	if ((re->mctx = pcre2_match_context_create(NULL)) == NULL ||
	    (re->md = pcre2_match_data_create_from_pattern(re->code,
	    NULL)) == NULL) {
		regex_free(re);
		return err_set(e, "cannot compile regex: out of memory");
	}
	pcre2_set_heap_limit(re->mctx, REGEX_HEAP_LIMIT);
	*out = re;
	return 0;
}

/* The callout before each item: one step more, and the end of the match
 * once the budget is spent. */
static int
count_step(pcre2_callout_block *cb, void *arg)
{
	unsigned long *steps = arg;

	(void)cb;
	return ++*steps > REGEX_STEP_LIMIT ? PCRE2_ERROR_MATCHLIMIT : 0;
}

int
regex_first(struct regex *re, const char *text, struct regex_match *m,
    size_t *cut, struct err *e)
{
	PCRE2_UCHAR why[256];
	const PCRE2_SIZE *ov;
	const char *line = text, *nl;
	size_t len, lineno = 1;
	unsigned long steps = 0;
	uint32_t flags;
	int rc;

	*cut = 0;
	pcre2_set_callout(re->mctx, count_step, &steps);
	for (;; lineno++) {
		nl = strchr(line, '\n');
		len = nl != NULL ? (size_t)(nl - line) : strlen(line);
		flags = 0;
		if (len > REGEX_LINE_MAX) {
			len = REGEX_LINE_MAX;
			flags |= PCRE2_NOTEOL;	/* the cut is not its end */
			(*cut)++;
		}
		rc = pcre2_match(re->code, (PCRE2_SPTR)line, len, 0, flags,
		    re->md, re->mctx);
		if (rc >= 0)
			break;
		if (rc != PCRE2_ERROR_NOMATCH) {
			pcre2_get_error_message(rc, why, sizeof(why));
			return err_set(e, "regex '%.*s%s' gave up on line %zu "
			    "of the output: %s (it may take %d steps over "
			    "the whole output and %d KiB a line)",
			    SHOWN(re->pattern), lineno, (const char *)why,
			    REGEX_STEP_LIMIT, REGEX_HEAP_LIMIT);
		}
		if (nl == NULL)
			return 0;
		line = nl + 1;
	}
	ov = pcre2_get_ovector_pointer(re->md);
	m->captured = ov[2] != PCRE2_UNSET;
	m->so = m->captured ? (size_t)(line - text) + ov[2] : 0;
	m->eo = m->captured ? (size_t)(line - text) + ov[3] : 0;
	return 1;
}

void
regex_free(struct regex *re)
{
	if (re == NULL)
		return;
	pcre2_match_data_free(re->md);
	pcre2_match_context_free(re->mctx);
	pcre2_code_free(re->code);
	free(re);
}
