/*
 * text_escape.c: writing out control characters and chat mentions in
 * upstream text before it is shown (see text_escape.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "text_escape.h"

/* Worst case: every byte becomes six ("&amp;" is five, "\xHH" four). */
static char *
escape(const char *s, int keep_lines, int chat)
{
	size_t n = strlen(s), o = 0;
	char *out = malloc(n * 6 + 1);
	const unsigned char *p = (const unsigned char *)s;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];

		if ((c < 0x20 || c == 0x7f) &&
		    !(keep_lines && (c == '\n' || c == '\t')))
			o += (size_t)sprintf(out + o, "\\x%02x", c);
		else if (c == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
			o += (size_t)sprintf(out + o, "\\u00%02x", p[++i]);
		else if (chat && c == '&')
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

	/* A NUL inside is cut where text_escape() stops. */
	if (n != json_string_length(v))
		return 1;
	for (size_t i = 0; i < n; i++)
		if (((p[i] < 0x20 || p[i] == 0x7f) && p[i] != '\n' &&
		    p[i] != '\t') || (p[i] == 0xc2 && p[i + 1] >= 0x80 &&
		    p[i + 1] <= 0x9f))
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

json_t *
text_escape_json(const json_t *v)
{
	json_t *out, *x, *obj = (json_t *)(uintptr_t)v;	/* iterated only */
	const char *k;
	size_t i;
	char *t;

	/* What needs nothing is shared, not copied: a report's plot
	 * points and bands are most of it. */
	if (!needs_escape(v))
		return json_incref(obj);
	switch (json_typeof(v)) {
	case JSON_STRING:
		if ((t = text_escape(json_string_value(v), 1)) == NULL)
			return NULL;
		out = json_string(t);
		free(t);
		return out;
	case JSON_OBJECT:
		if ((out = json_object()) == NULL)
			return NULL;
		json_object_foreach(obj, k, x)
			if (json_object_set_new(out, k,
			    text_escape_json(x)) < 0) {
				json_decref(out);
				return NULL;
			}
		return out;
	case JSON_ARRAY:
		if ((out = json_array()) == NULL)
			return NULL;
		json_array_foreach(v, i, x)
			if (json_array_append_new(out,
			    text_escape_json(x)) < 0) {
				json_decref(out);
				return NULL;
			}
		return out;
	default:
		return json_incref(obj);
	}
}

/* Append s percent-encoded to out (room checked by the caller). */
static char *
url_part(char *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p))
			*out++ = (char)*p;
		else {
			*out++ = '%';
			*out++ = hex[*p >> 4];
			*out++ = hex[*p & 15];
		}
	return out;
}

char *
text_report_path(const char *engine, const char *from, const char *to)
{
	size_t n = 3 * (strlen(engine) + strlen(from) + strlen(to)) + 16;
	char *path = malloc(n), *p;

	if (path == NULL)
		return NULL;
	memcpy(path, "/report/", 8);
	p = url_part(path + 8, engine);
	*p++ = '/';
	p = url_part(p, from);
	*p++ = '.';
	*p++ = '.';
	p = url_part(p, to);
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
