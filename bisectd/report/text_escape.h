/*
 * text_escape.h: upstream text (tags, versions, asset names, an engine's
 * stderr) made safe to show.  A tag is whatever a release's publisher
 * typed: an ESC sequence in it must not reach a terminal, and a
 * "<!channel>" in it must not ping a chat channel through an alert.
 */
#ifndef BISECTD_TEXT_ESCAPE_H
#define BISECTD_TEXT_ESCAPE_H

#include <stdio.h>

struct json_t;

/*
 * s with control characters written out: C0 bytes and DEL as \xHH (tab
 * and newline too unless keep_lines), the C1 controls U+0080..U+009F
 * as \u00HH.  Other bytes, UTF-8 included, are kept.  Malloced; NULL
 * when out of memory.
 */
char *text_escape(const char *s, int keep_lines);

/*
 * text_escape() of s, then what a chat receiver would act on made
 * inert: '&', '<' and '>' as &amp; &lt; &gt; (Slack's control sequences
 * such as <!channel> are written in them) and a zero-width space after
 * every '@' (@here, @everyone in Markdown-speaking receivers).
 * Malloced; NULL when out of memory.
 */
char *text_chat_safe(const char *s);

/*
 * A copy of v in which every string (keys excepted) has gone through
 * text_escape(s, 1): what renderings for people (text, Markdown, CSV)
 * print from.  A new reference; NULL when out of memory.  What needs no
 * escaping is shared with v: read it, never change it.
 */
struct json_t *text_escape_json(const struct json_t *v);

/*
 * The path of the daemon's page of a report, "/report/ENGINE/FROM..TO",
 * each part percent-encoded but for letters, digits and "-._~", so that
 * no tag can add a path segment, a query or markup to a link.
 * Malloced; NULL when out of memory.
 */
char *text_report_path(const char *engine, const char *from,
    const char *to);

/*
 * s as one CSV field: quoted, its quotes doubled, and a first character
 * a spreadsheet reads as the start of a formula (=, +, -, @, tab, CR)
 * kept as text behind a single quote, as OWASP advises against CSV
 * injection.  A tag such as "1.1,=2+5,x" stays one cell of text.
 */
void text_csv_field(FILE *out, const char *s);

/* A comma, then x as a CSV field: nothing for a figure that is missing
 * or not estimable (NaN), never "nan" or a 0 a spreadsheet would read
 * as measured. */
void text_csv_number(FILE *out, double x);

/*
 * A copy of a report for markdown: every string with markdown's inline
 * markup (\ ` * _ [ ] < > | ~ &) behind a backslash and "@" made to
 * mention no one, so upstream text renders as the text it is; the
 * strings of a code span (commands, a canary's texts) are left for
 * text_md_code().  New reference, or NULL when memory runs out.
 */
struct json_t *text_markdown_json(const struct json_t *v);

/* s with markdown's inline markup written out: a backslash before each
 * character that starts or ends markup (an underscore only where it
 * could: inside a word it is text, "Q4_0"), and "@" followed by U+200B
 * so it mentions no one.  Malloced; NULL when out of memory. */
char *text_md_escape(const char *s);

/* s as a markdown code span, fenced by more backticks than it holds in
 * a row, its newlines as spaces. */
void text_md_code(FILE *out, const char *s);

#endif
