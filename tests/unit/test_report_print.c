/*
 * test_report_print.c: a report whose versions, engine and failure text
 * carry terminal control sequences (a hostile upstream's tags) renders
 * in every format without one raw control byte.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/report/changes.h"
#include "check.h"
#include "bisectd/report/html.h"
#include "bisectd/report/print.h"
#include "bisectd/report/text_escape.h"

/* ESC ] 0 ; title BEL sets a terminal's title; ESC [ 2 J clears it;
 * U+009B is the one-byte CSI of C1. */
#define HOSTILE "1.0\x1b]0;pwned\x07\x1b[2J\xc2\x9b" "31m"

/*
 * What a tool says of a format's output: JSON that jansson reads back
 * (valid UTF-8 included), HTML that xmllint parses as XML.
 */
static void
tool_judges(enum report_format f, const char *text)
{
	json_error_t je;
	json_t *back;

	if (f == REPORT_JSON) {
		back = json_loads(text, 0, &je);
		if (back == NULL)
			fprintf(stderr, "JSON does not read back: %s\n",
			    je.text);
		CHECK(back != NULL);
		json_decref(back);
	} else if (f == REPORT_HTML) {
		if (system("command -v xmllint >/dev/null 2>&1") != 0) {
			fprintf(stderr, "xmllint is missing: the test command "
			    "installs it (Debian's libxml2-utils)\n");
			CHECK(0);
			return;
		}
		check_write_file("hostile.html", text);
		CHECK_INT(check_run("xmllint --noout hostile.html", NULL), 0);
	}
}

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
		tool_judges(formats[i], text);
		if (formats[i] != REPORT_JSON) {
			CHECK(strstr(text, "\xc2\x9b") == NULL);
			/* Markdown writes the backslash and the bracket out
			 * again: it renders as the others print. */
			CHECK_CONTAINS(text, formats[i] == REPORT_MARKDOWN ?
			    "1.0\\\\x1b\\]0;pwned\\\\x07" :
			    "1.0\\x1b]0;pwned\\x07");
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

/*
 * Bidi and other format characters in a tag are written out, so a tag
 * cannot display as another ("v1.0<RLO>3.2" looks like "v1.02.3"), and
 * text around them, accents and emoji included, is kept.
 */
static void
test_escape_format_characters(void)
{
	/* U+202E RLO, U+2066 LRI, U+200F RLM, U+FEFF, U+E0041 (a tag
	 * character), U+00AD; é and U+1F600 are text. */
	char *s = text_escape("v1.0\xe2\x80\xae" "3.2\xe2\x81\xa6x"
	    "\xe2\x80\x8f\xef\xbb\xbf\xf3\xa0\x81\x81\xc2\xad"
	    "\xc3\xa9\xf0\x9f\x98\x80", 0);
	json_t *v = json_pack("{s:s}", "version", "1.0\xe2\x80\xae" "3.2"),
	    *safe = text_escape_json(v);

	CHECK_STR(s, "v1.0\\u202e3.2\\u2066x\\u200f\\ufeff\\U000e0041"
	    "\\u00ad\xc3\xa9\xf0\x9f\x98\x80");
	free(s);
	CHECK_STR(json_string_value(json_object_get(safe, "version")),
	    "1.0\\u202e3.2");
	/* A lone lead byte or a cut sequence is left to the JSON layer. */
	s = text_escape("a\xe2\x80", 0);
	CHECK_STR(s, "a\xe2\x80");
	free(s);
	json_decref(safe);
	json_decref(v);
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

/* The fields of one CSV line: quoted fields may hold commas and doubled
 * quotes. */
static int
csv_fields(const char *line)
{
	int n = 1, quoted = 0;

	for (const char *p = line; *p && *p != '\n'; p++)
		if (*p == '"')
			quoted = !quoted;
		else if (*p == ',' && !quoted)
			n++;
	return n;
}

/* rep rendered as f, malloced. */
static char *
rendered(const json_t *rep, enum report_format f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (out == NULL)
		abort();
	report_print(rep, f, out);
	fclose(out);
	return text;
}

/* Every row of a CSV text as wide as its header; the header's width. */
static int
check_csv_widths(const char *text)
{
	int header = csv_fields(text);

	for (const char *line = strchr(text, '\n'); line && line[1];
	    line = strchr(line + 1, '\n'))
		CHECK_INT(csv_fields(line + 1), header);
	return header;
}

/* Quotes in a commit's subject, a canary's text or a command line are
 * doubled inside a quoted field, however long the field; every row has
 * the header's columns. */
static void
test_csv_quotes(void)
{
	char cmd[3000], *text = NULL, *want;
	size_t len = 0;
	FILE *f;
	json_t *rep, *r0, *r1;

	memset(cmd, 'x', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	memcpy(cmd, "run --say \"hi, there\" ", 22);
	memcpy(cmd + sizeof(cmd) - 7, " \"\"end", 6);
	rep = json_pack("{s:s,s:s,s:f,s:s,s:{s:s,s:s},s:[{s:s,s:s},"
	    "{s:s,s:s,s:{s:{s:i,s:f}},s:{s:s,s:s,s:s,s:s},"
	    "s:{s:s,s:s,s:s,s:s,s:{s:i,s:s,s:s}}}],s:{s:s,s:s,s:s,s:[s]},"
	    "s:{s:[{s:s,s:s,s:s}]}}",
	    "engine", "e", "metric", "per-token", "threshold", 0.2,
	    "points", "commits", "range", "from", "c0", "to", "c1",
	    "releases", "version", "c0", "status", "measured",
	    "version", "c1", "status", "measured", "pp", "512", "n", 5,
	    "ms", 10.0, "commit", "subject", "make \"fast\" faster, again",
	    "author", "A \"B\" C", "date", "2026-01-01", "url", "u",
	    "canary", "status", "differs", "sha256", "ab",
	    "since", "c\"0, b", "detail", "runs \"differ\"", "diff",
	    "token", 3, "before", "\"x\"", "after", "y",
	    "verdict", "status", "regression", "first_bad", "c1",
	    "last_good", "c0", "candidates", "c1",
	    "reproduce", "runs", "version", "c1", "cell", "pp512", "command",
	    cmd);
	CHECK(rep != NULL);
	r0 = json_array_get(json_object_get(rep, "releases"), 0);
	r1 = json_array_get(json_object_get(rep, "releases"), 1);
	CHECK(r0 != NULL && r1 != NULL);
	f = open_memstream(&text, &len);
	report_print(rep, REPORT_CSV, f);
	fclose(f);
	CHECK_CONTAINS(text, ",\"make \"\"fast\"\" faster, again\","
	    "\"A \"\"B\"\" C\",2026-01-01,u,first-bad\n");
	CHECK_CONTAINS(text, ",differs,ab,\"token 3: \"\"x\"\" -> y\","
	    "\"c\"\"0, b\",\"runs \"\"differ\"\"\",");
	want = malloc(2 * sizeof(cmd));
	snprintf(want, 2 * sizeof(cmd), "\"run --say \"\"hi, there\"\" %.*s "
	    "\"\"\"\"end\",", (int)sizeof(cmd) - 29, cmd + 22);
	CHECK_CONTAINS(text, want);
	free(want);
	/* Every row as wide as the header. */
	CHECK_INT(check_csv_widths(text), 28);
	free(text);
	json_decref(rep);
}

/*
 * A hostile upstream's CSV: a tag with commas and a formula stays one
 * cell of text, and a subject or detail that starts like a formula is
 * kept as text behind a single quote; every row as wide as the header.
 */
static void
test_csv_injection(void)
{
	char *text;
	json_t *rep;

	rep = json_pack("{s:s,s:s,s:f,s:s,s:{s:s,s:s},s:[{s:s,s:s},"
	    "{s:s,s:s,s:{s:{s:i,s:f}},s:{s:s,s:s,s:s,s:s},"
	    "s:{s:s,s:s,s:s}}],s:{s:s,s:s,s:s,s:[s]}}",
	    "engine", "e", "metric", "per-token", "threshold", 0.2,
	    "points", "commits", "range", "from", "c0", "to", "1.1,=2+5,x",
	    "releases", "version", "c0", "status", "measured",
	    "version", "1.1,=2+5,x", "status", "measured", "pp", "512", "n",
	    5, "ms", 10.0, "commit", "subject", "=cmd|' /C calc'!A0",
	    "author", "@evil", "date", "2026-01-01", "url", "u",
	    "canary", "status", "nondeterministic", "sha256", "ab", "detail",
	    "+SUM(A1:A9)",
	    "verdict", "status", "regression", "first_bad", "1.1,=2+5,x",
	    "last_good", "c0", "candidates", "1.1,=2+5,x");
	CHECK(rep != NULL);
	text = rendered(rep, REPORT_CSV);
	CHECK_CONTAINS(text, "\"e\",\"1.1,=2+5,x\",measured,pp512,");
	CHECK_CONTAINS(text, ",\"'=cmd|' /C calc'!A0\",\"'@evil\",");
	CHECK_CONTAINS(text, ",\"'+SUM(A1:A9)\",");
	check_csv_widths(text);
	free(text);
	json_decref(rep);
}

/*
 * A fixed overhead that is not estimable (and a figure the report does
 * not have) leaves its CSV cells empty: never "nan", never an interval
 * of [0, 0] that a spreadsheet would read as measured.
 */
static void
test_csv_missing(void)
{
	char *text;
	json_t *rep;

	rep = json_pack("{s:s,s:s,s:f,s:{s:s,s:s},s:[{s:s,s:s,"
	    "s:{s:{s:i,s:f,s:f}},s:f,s:[f,f],s:n,s:s}],"
	    "s:{s:s,s:s,s:s,s:[]}}",
	    "engine", "e", "metric", "per-token", "threshold", 0.2,
	    "range", "from", "1.0", "to", "1.1",
	    "releases", "version", "1.1", "status", "measured",
	    "pp", "512", "n", 5, "ms", 10.0, "ms_sd", 0.5,
	    "per_token_ms", 0.5, "per_token_ms_ci", 0.25, 0.75,
	    "fixed_ms", "fixed_not_estimable", "one prompt length",
	    "verdict", "status", "no-change", "first_bad", "",
	    "last_good", "", "candidates");
	CHECK(rep != NULL);
	text = rendered(rep, REPORT_CSV);
	CHECK(strstr(text, "nan") == NULL);
	/* n, tps, sd, ms, ms_sd, per-token and its interval, then three
	 * empty fixed cells and an empty ceiling. */
	CHECK_CONTAINS(text, "\"e\",\"1.1\",measured,pp512,5,,,10,0.5,0.5,"
	    "0.25,0.75,,,,,\"");
	check_csv_widths(text);
	free(text);
	json_decref(rep);
}

/* How many times needle occurs in text. */
static int
occurrences(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/*
 * What --for-upstream says of the model and the CPU reads as a person
 * writes it: 24.1 M parameters, the flags kernels use (not a hundred),
 * and a reason the fixed overhead is not estimable said once for every
 * release it holds for; the archive list is a markdown list.
 */
static void
test_upstream_markdown(void)
{
	char *text;
	json_t *rep;

	rep = json_pack("{s:s,s:s,s:f,s:{s:s,s:s},s:[{s:s,s:s,s:s},"
	    "{s:s,s:s,s:s},{s:s,s:s,s:s}],s:{s:s,s:s,s:s,s:[]},"
	    "s:{s:s,s:{s:s,s:I},s:i,s:i,s:i,s:i,s:s,s:s},"
	    "s:{s:[{s:s,s:s}]}}",
	    "engine", "e", "metric", "per-token", "threshold", 0.2,
	    "range", "from", "1.0", "to", "1.2",
	    "releases", "version", "1.0", "status", "measured",
	    "fixed_not_estimable", "the line fits below zero",
	    "version", "1.1", "status", "measured",
	    "fixed_not_estimable", "the line fits below zero",
	    "version", "1.2", "status", "measured",
	    "fixed_not_estimable", "the line fits below zero",
	    "verdict", "status", "no-change", "first_bad", "",
	    "last_good", "", "candidates",
	    "about", "bisectd", "0.1", "model", "type", "llama 24M",
	    "params", (json_int_t)24100000, "threads", 4, "reps", 5,
	    "max_reps", 320, "warmup", 1, "cpu_model", "Fake CPU",
	    "cpu_flags", "fpu vme de pse tsc msr sse sse2 ssse3 sse4_1 "
	    "sse4_2 popcnt aes avx avx2 fma f16c avx512f avx512_vnni "
	    "amx_tile smep hypervisor",
	    "reproduce", "archives", "version", "1.0", "sha256", "ab");
	CHECK(rep != NULL);
	text = rendered(rep, REPORT_MARKDOWN);
	CHECK_CONTAINS(text, ", 24.1 M parameters\n");
	CHECK_CONTAINS(text, "- CPU Fake CPU; the flags kernels use: ssse3 "
	    "sse4_1 sse4_2 avx avx2 fma f16c avx512f avx512_vnni amx_tile\n");
	CHECK(strstr(text, "popcnt") == NULL);
	CHECK_CONTAINS(text, "fixed overhead not estimable on every release: "
	    "the line fits below zero\n");
	CHECK_INT(occurrences(text, "fixed overhead not estimable"), 1);
	CHECK_CONTAINS(text, "\n- archive 1.0: ");
	free(text);
	json_decref(rep);

	/* A per-token interval through zero is said for what it is. */
	rep = json_pack("{s:s,s:s,s:f,s:{s:s,s:s},s:[{s:s,s:s,s:f,s:[f,f],"
	    "s:[s]}],s:{s:s,s:s,s:s,s:[]}}",
	    "engine", "e", "metric", "per-token", "threshold", 0.2,
	    "range", "from", "1.0", "to", "1.1",
	    "releases", "version", "1.1", "status", "measured",
	    "per_token_ms", 0.505, "per_token_ms_ci", -1.054, 2.063,
	    "flags", "per-token-unresolved",
	    "verdict", "status", "unknown", "first_bad", "",
	    "last_good", "", "candidates");
	CHECK(rep != NULL);
	text = rendered(rep, REPORT_TEXT);
	CHECK_CONTAINS(text, "per-token cost unresolved on 1.1: its 95% "
	    "interval reaches zero or below, too few runs for this noise");
	free(text);
	json_decref(rep);
}

/*
 * A slow release 25 times the fast one's time: a panel each, not the
 * fast one flattened along the bottom of one axis; the change point's
 * label a factor, not +2400%.
 */
static void
test_html_shapes(void)
{
	char *text;
	json_t *rep;

	rep = json_pack("{s:s,s:s,s:f,s:{s:s,s:s},s:[{s:s,s:s,s:f,"
	    "s:[[f,f],[f,f]],s:[[f,f,f,f],[f,f,f,f]]},{s:s,s:s,s:f,"
	    "s:[[f,f],[f,f]],s:[[f,f,f,f],[f,f,f,f]]}],"
	    "s:{s:s,s:s,s:s,s:[s],s:[{s:s,s:s,s:f}]}}",
	    "engine", "e", "metric", "per-token", "threshold", 0.2,
	    "range", "from", "1.0", "to", "1.1",
	    "releases", "version", "1.0", "status", "measured",
	    "metric_ms", 0.04, "points", 128.0, 10.0, 512.0, 25.0,
	    "fit_band", 128.0, 10.0, 9.5, 10.5, 512.0, 25.0, 24.5, 25.5,
	    "version", "1.1", "status", "measured", "metric_ms", 1.0,
	    "points", 128.0, 200.0, 512.0, 600.0,
	    "fit_band", 128.0, 200.0, 190.0, 210.0, 512.0, 600.0, 590.0, 610.0,
	    "verdict", "status", "regression", "first_bad", "1.1",
	    "last_good", "1.0", "candidates", "1.1", "change_points",
	    "last_good", "1.0", "first_bad", "1.1", "metric_change", 23.5);
	CHECK(rep != NULL);
	text = rendered(rep, REPORT_HTML);
	CHECK_CONTAINS(text, "differ more than 5× in time: each has its own "
	    "axis.");
	CHECK_CONTAINS(text, "id=\"fit-boundary\"");
	CHECK_CONTAINS(text, "id=\"fit-boundary-bad\"");
	CHECK_CONTAINS(text, "text-anchor=\"middle\">24.5×</text>");
	CHECK(strstr(text, "+2350.0%") == NULL);
	free(text);
	json_decref(rep);
}

/*
 * Markdown for an issue tracker (--for-upstream too): a tag with HTML,
 * table pipes, a link, emphasis and a mention renders as the text it
 * is; a canary's text with backticks stays one code span.
 */
static void
test_markdown(void)
{
	static const char tag[] = "<img/src=x/onerror=alert(1)>|[x](http://e)"
	    "_*@octocat*_";
	char *text;
	json_t *rep;

	rep = json_pack("{s:s,s:s,s:f,s:{s:s,s:s},s:[{s:s,s:s},{s:s,s:s}],"
	    "s:{s:s,s:s,s:s,s:[s],s:s,s:s,s:{s:i,s:s,s:s}},"
	    "s:{s:[s]}}",
	    "engine", "e", "metric", "output", "threshold", 0.2,
	    "range", "from", "1.0", "to", tag,
	    "releases", "version", "1.0", "status", "measured",
	    "version", tag, "status", "measured",
	    "verdict", "status", "regression", "first_bad", tag,
	    "last_good", "1.0", "candidates", tag, "kind", "output",
	    "first_bad_sha256", "ab", "diff", "token", 2, "before", "a `b`",
	    "after", "``c",
	    "reproduce", "commands", "bisectctl report e 1.0..x`y`");
	CHECK(rep != NULL);
	text = rendered(rep, REPORT_MARKDOWN);
	/* Every "<" of the tag behind a backslash: no element. */
	for (const char *p = text; (p = strchr(p, '<')) != NULL; p++)
		CHECK(p > text && p[-1] == '\\');
	CHECK(strstr(text, "@octocat") == NULL);
	CHECK_CONTAINS(text, "\\<img/src=x/onerror=alert(1)\\>\\|\\[x\\]"
	    "(http://e)\\_\\*@\xe2\x80\x8boctocat\\*\\_");
	CHECK_CONTAINS(text, "`` a `b` `` -> ``` ``c ```");
	CHECK_CONTAINS(text, "- `` bisectctl report e 1.0..x`y` ``");
	free(text);
	json_decref(rep);
}

/*
 * A ranked switch says what it does to the runtime: one whose interval
 * lies below zero adds time, and the page must not say it removes it.
 */
static void
test_ablate_html_effect(void)
{
	json_t *rep;
	char *html = NULL;
	size_t len = 0;
	FILE *f;

	rep = json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:b, s:s, s:i}, "
	    "{s:s, s:b, s:s, s:i}]}", "engine", "e", "version", "1.0",
	    "status", "ranked", "control", "moe",
	    "switches",
	    "name", "moe", "control", 1, "effect", "removes", "rank", 1,
	    "name", "rope", "control", 0, "effect", "adds", "rank", 2);
	CHECK(rep != NULL);
	f = open_memstream(&html, &len);
	CHECK_INT(ablate_html(rep, f), 0);
	fclose(f);
	CHECK_CONTAINS(html, "rank 1: removes time");
	CHECK_CONTAINS(html, "rank 2: adds time");
	CHECK(html != NULL && strstr(html, "rank 2: removes time") == NULL);
	free(html);
	json_decref(rep);
}


/*
 * What else changed, for a decode cell of one run: a time whose
 * interval has no bound is a throughput that may fall to zero, and one
 * without a bound above; the renderings say "unbounded", never a made-up
 * [-100%, -100%].
 */
static void
test_unbounded_change(void)
{
	struct estimate t = { 0.25, INFINITY, 1, -INFINITY, INFINITY };
	double v, lo, hi;
	json_t *rep;
	char *text;

	changes_tps(&t, &v, &lo, &hi);
	CHECK_NEAR(v, -0.2, 1e-12);
	CHECK_NEAR(lo, -1, 1e-12);
	CHECK(isinf(hi) && hi > 0);
	/* Finite ends swap: +25% [+10%, +40%] time is -20% [-28.6%, -9.1%]. */
	t.lo = 0.10;
	t.hi = 0.40;
	changes_tps(&t, &v, &lo, &hi);
	CHECK_NEAR(lo, 1 / 1.4 - 1, 1e-12);
	CHECK_NEAR(hi, 1 / 1.1 - 1, 1e-12);
	rep = json_loads("{\"engine\":\"e\",\"range\":{\"from\":\"1\","
	    "\"to\":\"2\"},\"metric\":\"per-token\",\"threshold\":0.2,"
	    "\"releases\":[],\"verdict\":{\"status\":\"unknown\"},"
	    "\"what_else_changed\":[{\"from\":\"1\",\"to\":\"2\","
	    "\"metric\":\"tg16\",\"what\":\"decode of 16 tokens\","
	    "\"unit\":\"tok/s\",\"change\":-0.2,\"change_ci\":[-1,null],"
	    "\"moved\":\"unsure\",\"searched\":false}]}", 0, NULL);
	CHECK(rep != NULL);
	for (int f = 0; rep && f < 3; f++) {
		static const enum report_format fmt[] = { REPORT_TEXT,
		    REPORT_MARKDOWN, REPORT_HTML };

		text = rendered(rep, fmt[f]);
		CHECK_CONTAINS(text, "-20.0%");
		CHECK_CONTAINS(text, "[-100.0%, unbounded]");
		CHECK(text != NULL && strstr(text, "nan") == NULL);
		free(text);
	}
	json_decref(rep);
}

/*
 * What a verdict lacks is said so, never printed as a zero: a ratio
 * there is none of, an interval without its upper bound.
 */
static void
test_verdict_missing(void)
{
	json_t *rep = json_loads("{\"engine\": \"e\", \"metric\": "
	    "\"per-token\", \"threshold\": 0.2, \"range\": {\"from\": \"1\", "
	    "\"to\": \"3\"}, \"releases\": [], \"verdict\": {\"status\": "
	    "\"unknown\", \"reason\": \"undecided\", \"kind\": \"per-token\", "
	    "\"per_token_delta_ms\": 0.21, \"per_token_delta_ms_ci\": "
	    "[0.19, null], \"ratios\": {\"128\": 1.31, \"512\": null}, "
	    "\"ratios_ci\": {\"128\": [1.2, 1.4]}, \"ratio_trend\": "
	    "\"rising\", \"inconclusive\": {\"from\": \"1\", \"to\": \"3\", "
	    "\"change\": 0.07, \"change_ci\": [0.01, null]}, "
	    "\"change_points\": []}}", 0, NULL);
	char *text;
	size_t len;
	FILE *f;

	CHECK(rep != NULL);
	text = rendered(rep, REPORT_TEXT);
	CHECK_CONTAINS(text, "times slower by prompt length: 128: 1.31x "
	    "512: - (rising)\n");
	CHECK_CONTAINS(text, "per-token cost +0.21 ms per token;");
	CHECK_CONTAINS(text, "inconclusive between 1 and 3: +7.0% [+1.0%, "
	    "unbounded]\n");
	CHECK(strstr(text, "0.00x") == NULL && strstr(text, "+0.0%") ==
	    NULL && strstr(text, "nan") == NULL);
	free(text);
	/* The plot: a dot for 128 only, none at zero or nowhere. */
	text = NULL;
	len = 0;
	CHECK((f = open_memstream(&text, &len)) != NULL);
	CHECK_INT(report_html(rep, f), 0);
	fclose(f);
	CHECK_INT(occurrences(text, "<circle class=\"ratio\""), 1);
	CHECK_CONTAINS(text, ">1.31×</text>");
	CHECK(strstr(text, "nan") == NULL && strstr(text, "0.00×") == NULL);
	free(text);
	json_decref(rep);
}

int
main(void)
{
	check_tmpdir("report_print");
	CHECK_CASE(test_escape);
	CHECK_CASE(test_unbounded_change);
	CHECK_CASE(test_escape_format_characters);
	CHECK_CASE(test_formats);
	CHECK_CASE(test_html_markup);
	CHECK_CASE(test_csv_quotes);
	CHECK_CASE(test_csv_injection);
	CHECK_CASE(test_csv_missing);
	CHECK_CASE(test_upstream_markdown);
	CHECK_CASE(test_html_shapes);
	CHECK_CASE(test_markdown);
	CHECK_CASE(test_ablate_html_effect);
	CHECK_CASE(test_verdict_missing);
	return check_done();
}
