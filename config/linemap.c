/*
 * linemap.c: the line of each key in the configuration's text.  libgit2
 * parses the syntax and reports syntax errors with a line; it does not
 * give the line of each entry, so the file's text is scanned once more
 * to name the line of a key in semantic errors (see conf_int.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_int.h"

/*
 * A section header at q (its '['), up to eol: its name lowercased, and
 * ".SUBSECTION" with the subsection's escapes resolved, into section.
 * Returns the byte after ']', or NULL (section "") when it has none.
 */
static const char *
header_parse(const char *q, const char *eol, char *section, size_t size)
{
	const char *close = memchr(q, ']', (size_t)(eol - q));
	const char *quote;
	size_t n = 0;

	section[0] = '\0';
	if (close == NULL)
		return NULL;
	q++;
	while (q < close && isspace((unsigned char)*q))
		q++;
	while (q < close && !isspace((unsigned char)*q) && *q != '"' &&
	    n + 1 < size)
		section[n++] = (char)tolower((unsigned char)*q++);
	section[n] = '\0';
	quote = memchr(q, '"', (size_t)(close - q));
	if (quote) {
		const char *end = quote + 1;

		while (end < close && *end != '"') {
			if (*end == '\\' && end + 1 < close)
				end++;
			end++;
		}
		if (n + 1 + (size_t)(end - quote) < size) {
			section[n++] = '.';
			for (const char *s = quote + 1; s < end; s++) {
				if (*s == '\\' && s + 1 < end)
					s++;
				section[n++] = *s;
			}
			section[n] = '\0';
		}
	}
	return close + 1;
}

/*
 * The value of key name, from q (after the name) to the end of its last
 * line, continuation lines included: *eolp and *linep move to that line.
 * git-config knows the escapes \\ \" \n \t \b and a backslash at the
 * end of a line; libgit2 names any other (a regex's \d) without its line
 * or key, so the first one in each value is reported here.
 */
static void
value_scan(struct conf_loader *ld, const char *name, const char *q,
    const char **eolp, int *linep)
{
	const char *eol = *eolp;
	int quoted = 0;

	while (q < eol && isspace((unsigned char)*q))
		q++;
	if (q == eol || *q++ != '=')
		return;
	for (; q < eol; q++) {
		if (*q == '"')
			quoted = !quoted;
		else if (!quoted && (*q == '#' || *q == ';'))
			return;
		else if (*q == '\\' && q + 1 == eol && *eol == '\n') {
			(*linep)++;
			q = eol;	/* the loop steps to the next line */
			if ((eol = strchr(q + 1, '\n')) == NULL)
				eol = q + 1 + strlen(q + 1);
			*eolp = eol;
		} else if (*q == '\\' && q + 1 < eol &&
		    strchr("\\\"ntb", q[1]) != NULL)
			q++;
		else if (*q == '\\') {
			char msg[700];

			snprintf(msg, sizeof(msg),
			    "%s:%d: %s: invalid escape "
			    "'\\%.1s' in the value: write a backslash as "
			    "'\\\\'%s",
			    ld->file, *linep, name, q + 1 < eol ? q + 1 : "",
			    strstr(name, ".parser") ? " (a regex's \\d is "
						      "written \\\\d)"
						    : "");
			strv_push(&ld->escapes, msg);
			return;
		}
	}
}

/* The line at p: its end (its '\n' or the NUL) in *eol; returns its
 * first byte that is not blank. */
static const char *
line_at(const char *p, const char **eol)
{
	const char *q = p;

	if ((*eol = strchr(p, '\n')) == NULL)
		*eol = p + strlen(p);
	while (q < *eol && isspace((unsigned char)*q))
		q++;
	return q;
}

/*
 * Scan the text the way git-config does, well enough to know on which
 * line each key is: section headers set the prefix, the first word of
 * any other line is a key.
 */
void
linemap_build(struct conf_loader *ld, const char *text)
{
	char section[256] = "";
	size_t alloc = 0;
	int line = 1;

	for (const char *p = text; *p; line++) {
		const char *eol;
		const char *q = line_at(p, &eol);

		if (q < eol && *q == '[') {
			/* A key may follow the header on the same line. */
			if ((q = header_parse(q, eol, section,
			    sizeof(section))) == NULL)
				goto next;
			while (q < eol && isspace((unsigned char)*q))
				q++;
		}
		if (q < eol && (isalpha((unsigned char)*q))) {
			char name[512];
			size_t n = (size_t)snprintf(name, sizeof(name), "%s.",
			    section);

			while (q < eol && (isalnum((unsigned char)*q) ||
			    *q == '-') && n + 1 < sizeof(name))
				name[n++] = (char)tolower((unsigned char)*q++);
			name[n] = '\0';
			if (ld->nkeys == alloc) {
				struct linekey *k;

				alloc = alloc ? alloc * 2 : 64;
				k = realloc(ld->keys, alloc * sizeof(*k));
				if (k == NULL)
					return;
				ld->keys = k;
			}
			ld->keys[ld->nkeys].name = strdup(name);
			ld->keys[ld->nkeys].line = line;
			ld->nkeys++;
			value_scan(ld, name, q, &eol, &line);
		}
next:
		p = *eol ? eol + 1 : eol;
	}
}

/*
 * text with every line outside [bisectd] sections blanked, the line
 * count kept, for conf_load_core().  Caller frees.
 */
char *
core_text(const char *text, size_t len)
{
	char section[256] = "";
	char *out = malloc(len + 1), *o = out;

	if (out == NULL)
		return NULL;
	for (const char *p = text; *p;) {
		const char *eol;
		const char *q = line_at(p, &eol);

		if (q < eol && *q == '[')
			header_parse(q, eol, section, sizeof(section));
		if (strcmp(section, "bisectd") == 0) {
			memcpy(o, p, (size_t)(eol - p));
			o += eol - p;
		}
		if (*eol)
			*o++ = '\n';
		p = *eol ? eol + 1 : eol;
	}
	*o = '\0';
	return out;
}

/* The line of the nth (from 0) occurrence of name, or 0 if unknown. */
int
linemap_find(const struct conf_loader *ld, const char *name, int nth)
{
	for (size_t i = 0; i < ld->nkeys; i++)
		if (ld->keys[i].name && strcmp(ld->keys[i].name, name) == 0 &&
		    nth-- == 0)
			return ld->keys[i].line;
	return 0;
}

/* The line of a section header, found through its first key. */
int
linemap_section(const struct conf_loader *ld, const char *prefix)
{
	size_t len = strlen(prefix);

	for (size_t i = 0; i < ld->nkeys; i++)
		if (ld->keys[i].name &&
		    strncmp(ld->keys[i].name, prefix, len) == 0 &&
		    ld->keys[i].name[len] == '.' &&
		    strchr(ld->keys[i].name + len + 1, '.') == NULL)
			return ld->keys[i].line;
	return 0;
}
