/*
 * test_report_print.c: a report whose versions, engine and failure text
 * carry terminal control sequences (a hostile upstream's tags) renders
 * in every format without one raw control byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "bisectd/output/report_print.h"
#include "bisectd/output/text_escape.h"

/* ESC ] 0 ; title BEL sets a terminal's title; ESC [ 2 J clears it;
 * U+009B is the one-byte CSI of C1. */
#define HOSTILE "1.0\x1b]0;pwned\x07\x1b[2J\xc2\x9b" "31m"

static void
test_formats(void)
{
	static const enum report_format formats[] = { REPORT_TEXT,
	    REPORT_MARKDOWN, REPORT_CSV, REPORT_JSON };
	json_t *rep = json_pack("{s:s,s:s,s:f,s:{s:s,s:s},s:[{s:s,s:s,s:s}],"
	    "s:{s:s,s:s,s:s,s:[s]}}",
	    "engine", "eng\x1b[31m", "metric", "per-token", "threshold", 0.2,
	    "range", "from", "0.9", "to", HOSTILE,
	    "releases", "version", HOSTILE, "status", "skipped",
	    "skip_reason", "unpack failed:\x1b[2J",
	    "verdict", "status", "regression", "first_bad", HOSTILE,
	    "last_good", "0.9", "candidates", HOSTILE);

	CHECK(rep != NULL);
	for (size_t i = 0; i < 4; i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		report_print(rep, formats[i], f);
		fclose(f);
		CHECK(len > 0);
		CHECK(memchr(text, 0x1b, len) == NULL);
		CHECK(memchr(text, 0x07, len) == NULL);
		if (formats[i] != REPORT_JSON) {
			CHECK(strstr(text, "\xc2\x9b") == NULL);
			CHECK_CONTAINS(text, "1.0\\x1b]0;pwned\\x07");
		}
		free(text);
	}
	json_decref(rep);
}

static void
test_escape(void)
{
	char *s = text_escape("a\tb\nc\x7f\xc2\xa0\xc2\x85", 0);

	/* No-break space (U+00A0) is text; NEL (U+0085) is a control. */
	CHECK_STR(s, "a\\x09b\\x0ac\\x7f\xc2\xa0\\u0085");
	free(s);
	s = text_escape("a\tb\nc", 1);
	CHECK_STR(s, "a\tb\nc");
	free(s);
	s = text_chat_safe("x <!channel> <@U123> @here & co");
	CHECK_STR(s, "x &lt;!channel&gt; &lt;@\xe2\x80\x8bU123&gt; "
	    "@\xe2\x80\x8bhere &amp; co");
	free(s);
}

int
main(void)
{
	test_escape();
	test_formats();
	return check_done();
}
