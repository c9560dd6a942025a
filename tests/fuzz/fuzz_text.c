/*
 * fuzz_text.c: upstream text on its way to a terminal, a page, a chat, a
 * spreadsheet or an issue tracker (bisectd/report/text_escape.c).  The
 * input is one string, as a tag, a commit subject or an engine's output
 * could be.
 *
 * Properties: text_escape() leaves no control byte, C1 control or
 * format character (bidi included) that could change what is displayed;
 * text_chat_safe() leaves no '<', '>' or a mention-forming "@" and
 * letter; a CSV field is one quoted field whose quotes are doubled and
 * which no spreadsheet reads as a formula; in the markdown copy every
 * '<', '|', '[' and '`' stands behind a backslash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/report/text_escape.h"
#include "common/utf8.h"
#include "fuzz.h"

static void
check_escaped(const char *in, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	uint32_t cp;

	for (size_t i = 0, k; i < n; i += k) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			fuzz_fail("control byte 0x%02x left in '%s'", p[i], in);
		if ((k = utf8_decode(p + i, n - i, &cp)) == 0) {
			k = 1;		/* not UTF-8: the JSON layer's */
			continue;
		}
		if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a &&
		    cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
		    cp == 0x200e || cp == 0x200f || cp == 0xfeff)
			fuzz_fail("U+%04x left in the escaped text", (unsigned)cp);
	}
}

static void
check_chat(const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '<' || *p == '>')
			fuzz_fail("'%c' left in chat text", *p);
		if (*p == '@' && strncmp(p + 1, "\xe2\x80\x8b", 3) != 0)
			fuzz_fail("a bare '@' left in chat text");
	}
}

static void
check_csv(const char *in)
{
	char *out = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);

	if (f == NULL)
		abort();
	text_csv_field(f, in);
	fclose(f);
	if (len < 2 || out[0] != '"' || out[len - 1] != '"')
		fuzz_fail("CSV field not quoted");
	if (len > 2 && strchr("=+-@\t\r", out[1]) != NULL)
		fuzz_fail("CSV field starts like a formula");
	/* Inside: every quote doubled, so the field ends where it should. */
	for (i = 1; i < len - 1; i++)
		if (out[i] == '"') {
			if (out[i + 1] != '"' || i + 1 == len - 1)
				fuzz_fail("CSV quote not doubled");
			i++;
		}
	free(out);
}

static void
check_markdown(const char *in)
{
	json_t *v = json_pack("{s:s}", "subject", in), *md;
	const char *s;

	if (v == NULL)
		return;		/* not UTF-8: jansson refuses it */
	if ((md = text_markdown_json(v)) == NULL)
		abort();
	s = json_string_value(json_object_get(md, "subject"));
	for (size_t i = 0; s[i]; i++) {
		size_t bs = 0;

		if (strchr("<|[`", s[i]) == NULL)
			continue;
		while (bs < i && s[i - 1 - bs] == '\\')
			bs++;
		if (bs % 2 == 0)
			fuzz_fail("'%c' not escaped in markdown", s[i]);
	}
	json_decref(md);
	json_decref(v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_strndup(data, size > 4096 ? 4096 : size);
	char *s;

	if ((s = text_escape(in, 0)) == NULL)
		abort();
	check_escaped(in, s);
	free(s);
	if ((s = text_chat_safe(in)) == NULL)
		abort();
	check_escaped(in, s);
	check_chat(s);
	free(s);
	check_csv(in);
	check_markdown(in);
	free(in);
	return 0;
}
