/*
 * text_escape.c: writing out control characters and chat mentions in
 * upstream text before it is shown (see text_escape.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/utf8.h"
#include "common/urlenc.h"
#include "text_escape.h"

/*
 * Unicode's format characters (category Cf): invisible, and the bidi
 * ones (U+202A..U+202E, U+2066..U+2069) make text display in another
 * order, so a tag can be made to look like another.
 */
static int
is_format(uint32_t cp)
{
	static const uint32_t ranges[][2] = {
		{ 0x00ad, 0x00ad }, { 0x0600, 0x0605 }, { 0x061c, 0x061c },
		{ 0x06dd, 0x06dd }, { 0x070f, 0x070f }, { 0x08e2, 0x08e2 },
		{ 0x180e, 0x180e }, { 0x200b, 0x200f }, { 0x202a, 0x202e },
		{ 0x2060, 0x2064 }, { 0x2066, 0x206f }, { 0xfeff, 0xfeff },
		{ 0xfff9, 0xfffb }, { 0x110bd, 0x110bd }, { 0x110cd, 0x110cd },
		{ 0x1d173, 0x1d17a }, { 0xe0001, 0xe0001 },
		{ 0xe0020, 0xe007f },
	};

	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (cp >= ranges[i][0] && cp <= ranges[i][1])
			return 1;
	return 0;
}

/*
 * The character at p[i] (n bytes in all) when it must be written out:
 * its length in bytes, with *cp its code (a C0 control or DEL, a C1
 * control, a format character), or 0 for one shown as it is.
 */
static size_t
special(const unsigned char *p, size_t n, size_t i, int keep_lines,
    uint32_t *cp)
{
	unsigned char c = p[i];
	size_t len;

	if (c < 0x20 || c == 0x7f) {
		*cp = c;
		return keep_lines && (c == '\n' || c == '\t') ? 0 : 1;
	}
	if (c < 0x80 || (len = utf8_decode(p + i, n - i, cp)) == 0)
		return 0;
	return (*cp >= 0x80 && *cp <= 0x9f) || is_format(*cp) ? len : 0;
}

/* Worst case: every byte becomes six ("&amp;" is five, "\xHH" four,
 * "\U000e0020" ten of a character's four). */
static char *
escape(const char *s, int keep_lines, int chat)
{
	size_t n = strlen(s), o = 0, k;
	char *out = malloc(n * 6 + 1);
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];

		if ((k = special(p, n, i, keep_lines, &cp)) != 0) {
			o += (size_t)sprintf(out + o, cp < 0x80 ? "\\x%02x" :
			    cp <= 0xffff ? "\\u%04x" : "\\U%08x",
			    (unsigned)cp);
			i += k - 1;
		} else if (chat && c == '&')
			o += (size_t)sprintf(out + o, "&amp;");
		else if (chat && c == '<')
			o += (size_t)sprintf(out + o, "&lt;");
		else if (chat && c == '>')
			o += (size_t)sprintf(out + o, "&gt;");
		else if (chat && c == '@')
			/* U+200B ZERO WIDTH SPACE: shown as nothing, but
			 * "@here" is no longer a word to act on. */
			o += (size_t)sprintf(out + o, "@\xe2\x80\x8b");
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	return out;
}

char *
text_escape(const char *s, int keep_lines)
{
	return escape(s, keep_lines, 0);
}

char *
text_chat_safe(const char *s)
{
	return escape(s, 0, 1);
}

/* Whether text_escape(s, 1) would change the string v. */
static int
string_needs_escape(const json_t *v)
{
	const unsigned char *p = (const unsigned char *)json_string_value(v);
	size_t n = strlen((const char *)p);
	uint32_t cp;

	/* A NUL inside is cut where text_escape() stops. */
	if (n != json_string_length(v))
		return 1;
	for (size_t i = 0; i < n; i++)
		if (special(p, n, i, 1, &cp) != 0)
			return 1;
	return 0;
}

/* Whether any string in v (keys excepted) needs escaping. */
static int
needs_escape(const json_t *v)
{
	json_t *obj = (json_t *)(uintptr_t)v, *x;	/* iterated only */
	const char *k;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_STRING:
		return string_needs_escape(v);
	case JSON_OBJECT:
		json_object_foreach(obj, k, x)
			if (needs_escape(x))
				return 1;
		return 0;
	case JSON_ARRAY:
		json_array_foreach(v, i, x)
			if (needs_escape(x))
				return 1;
		return 0;
	default:
		return 0;
	}
}

/*
 * A copy of v with each string replaced by fn(the string, the key it is
 * under), NULL from fn meaning memory ran out.  What shared() says fn
 * would not change is shared, not copied: a report's plot points and
 * bands are most of it.  New reference, or NULL.
 */
static json_t *
map_strings(const json_t *v, const char *key,
    char *(*fn)(const char *s, const char *key),
    int (*shared)(const json_t *v))
{
	json_t *out, *x, *obj = (json_t *)(uintptr_t)v;	/* iterated only */
	const char *k;
	size_t i;
	char *t;

	if (shared && shared(v))
		return json_incref(obj);
	switch (json_typeof(v)) {
	case JSON_STRING:
		if ((t = fn(json_string_value(v), key)) == NULL)
			return NULL;
		out = json_string(t);
		free(t);
		return out;
	case JSON_OBJECT:
		if ((out = json_object()) == NULL)
			return NULL;
		json_object_foreach(obj, k, x)
			if (json_object_set_new(out, k, map_strings(x, k, fn,
			    shared)) < 0) {
				json_decref(out);
				return NULL;
			}
		return out;
	case JSON_ARRAY:
		if ((out = json_array()) == NULL)
			return NULL;
		json_array_foreach(obj, i, x)
			if (json_array_append_new(out, map_strings(x, key, fn,
			    shared)) < 0) {
				json_decref(out);
				return NULL;
			}
		return out;
	default:
		return json_incref(obj);
	}
}

static char *
escape_lines(const char *s, const char *key)
{
	(void)key;
	return text_escape(s, 1);
}

static int
nothing_to_escape(const json_t *v)
{
	return !needs_escape(v);
}

json_t *
text_escape_json(const json_t *v)
{
	return map_strings(v, NULL, escape_lines, nothing_to_escape);
}

char *
text_report_path(const char *engine, const char *from, const char *to)
{
	size_t n = url_encoded_len(engine) + url_encoded_len(from) +
	    url_encoded_len(to) + 16;
	char *path = malloc(n), *p;

	if (path == NULL)
		return NULL;
	memcpy(path, "/report/", 8);
	p = url_encode_into(path + 8, engine);
	*p++ = '/';
	p = url_encode_into(p, from);
	*p++ = '.';
	*p++ = '.';
	p = url_encode_into(p, to);
	*p = '\0';
	return path;
}

void
text_csv_field(FILE *out, const char *s)
{
	fputc('"', out);
	if (s[0] != '\0' && strchr("=+-@\t\r", s[0]) != NULL)
		fputc('\'', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

void
text_csv_number(FILE *out, double x)
{
	if (isfinite(x))
		fprintf(out, ",%.6g", x);
	else
		fputc(',', out);
}

/* Keys whose strings the markdown rendering puts in code spans or
 * fenced blocks, where markup is not read: md_code() writes them. */
static int
md_literal_key(const char *key)
{
	static const char *const keys[] = { "command", "commands", "before",
	    "after", NULL };

	for (size_t i = 0; key && keys[i]; i++)
		if (strcmp(key, keys[i]) == 0)
			return 1;
	return 0;
}

char *
text_md_escape(const char *s)
{
	char *out = malloc(strlen(s) * 4 + 1), *o = out;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; s[i]; i++) {
		int inword = s[i] == '_' && i > 0 &&
		    isalnum((unsigned char)s[i - 1]) &&
		    isalnum((unsigned char)s[i + 1]);

		if (strchr("\\`*_[]<>|~&", s[i]) != NULL && !inword)
			*o++ = '\\';
		*o++ = s[i];
		if (s[i] == '@') {
			memcpy(o, "\xe2\x80\x8b", 3);
			o += 3;
		}
	}
	*o = '\0';
	return out;
}

/* A string of a report as markdown shows it: its markup written out,
 * or as it is for a code span (md_literal_key()). */
static char *
md_string(const char *s, const char *key)
{
	return md_literal_key(key) ? strdup(s) : text_md_escape(s);
}

json_t *
text_markdown_json(const json_t *v)
{
	return map_strings(v, NULL, md_string, NULL);
}

void
text_md_code(FILE *out, const char *s)
{
	size_t run = 0, longest = 0;

	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (size_t i = 0; i <= longest; i++)
		fputc('`', out);
	/* A space keeps a backtick at either end off the fence. */
	if (longest > 0)
		fputc(' ', out);
	for (; *s; s++)
		fputc(*s == '\n' ? ' ' : *s, out);
	if (longest > 0)
		fputc(' ', out);
	for (size_t i = 0; i <= longest; i++)
		fputc('`', out);
}
