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
#include "bisectd/output/report_html.h"
#include "bisectd/output/report_print.h"
#include "bisectd/output/text_escape.h"

/* ESC ] 0 ; title BEL sets a terminal's title; ESC [ 2 J clears it;
 * U+009B is the one-byte CSI of C1. */
#define HOSTILE "1.0\x1b]0;pwned\x07\x1b[2J\xc2\x9b" "31m"

static void
test_formats(void)
{
	static const enum report_format formats[] = { REPORT_TEXT,
	    REPORT_MARKDOWN, REPORT_CSV, REPORT_JSON, REPORT_HTML };
	json_t *rep = json_pack("{s:s,s:s,s:f,s:{s:s,s:s},s:[{s:s,s:s,s:s}],"
	    "s:{s:s,s:s,s:s,s:[s]}}",
	    "engine", "eng\x1b[31m", "metric", "per-token", "threshold", 0.2,
	    "range", "from", "0.9", "to", HOSTILE,
	    "releases", "version", HOSTILE, "status", "skipped",
	    "skip_reason", "unpack failed:\x1b[2J",
	    "verdict", "status", "regression", "first_bad", HOSTILE,
	    "last_good", "0.9", "candidates", HOSTILE);

	CHECK(rep != NULL);
	for (size_t i = 0; i < 5; i++) {
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

/* Markup in a version or an engine's output stays text in the HTML page:
 * no element, attribute or entity of the upstream's making. */
static void
test_html_markup(void)
{
	static const char markup[] = "0.3<script>alert(1)</script>"
	    "\"'&amp;<img src=x onerror=y>";
	json_t *rep = json_pack("{s:s,s:s,s:f,s:{s:s,s:s},s:[{s:s,s:s,"
	    "s:{s:{s:i,s:f,s:f,s:f,s:f}},s:[s],s:[{s:s,s:s}]}],"
	    "s:{s:s,s:s,s:s,s:s,s:[s]},s:{s:[s]}}",
	    "engine", "e<i>", "metric", "per-token", "threshold", 0.2,
	    "range", "from", "0.2", "to", markup,
	    "releases", "version", markup, "status", "measured",
	    "pp", "512", "n", 5, "ms", 10.0, "ms_sd", 1.0, "ms_median", 10.0,
	    "cv", 0.1, "flags", "noisy</td>",
	    "failures", "reason", "exit", "detail", "</pre><b>x</b>",
	    "verdict", "status", "regression\"><x", "reason", "<h1>",
	    "first_bad", markup, "last_good", "0.2", "candidates", markup,
	    "reproduce", "commands", "run </pre> & <x>");
	char *text = NULL, *pre;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(rep != NULL);
	CHECK_INT(report_html(rep, f), 0);
	fclose(f);
	CHECK(strstr(text, "<script") == NULL);
	CHECK(strstr(text, "<img") == NULL);
	CHECK(strstr(text, "<x") == NULL);
	CHECK(strstr(text, "<b>") == NULL);
	CHECK(strstr(text, "<i>") == NULL);
	CHECK(strstr(text, "noisy</td>") == NULL);
	CHECK_CONTAINS(text, "0.3&lt;script&gt;alert(1)&lt;/script&gt;"
	    "&quot;&#39;&amp;amp;&lt;img src=x onerror=y&gt;");
	CHECK_CONTAINS(text, "class=\"status regression&quot;&gt;&lt;x\"");
	CHECK_CONTAINS(text, "run &lt;/pre&gt; &amp; &lt;x&gt;");
	/* One <pre> opened and closed: the command did not end it. */
	pre = strstr(text, "</pre>");
	CHECK(pre != NULL && strstr(pre + 1, "</pre>") == NULL);
	free(text);
	json_decref(rep);
}

int
main(void)
{
	test_escape();
	test_formats();
	test_html_markup();
	return check_done();
}
