/*
 * canary_diff.c: where two generated texts first differ, written for
 * people and made safe for a terminal and JSON (see canary.h).  Pure:
 * no store, no process, so a fuzzer reaches it alone.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "canary.h"
#include "common/utf8.h"

/* The next whitespace-separated token at or after *p, its length. */
static const char *
next_token(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *t;

	while (s < end && isspace((unsigned char)*s))
		s++;
	for (t = s; t < end && !isspace((unsigned char)*t); t++)
		;
	*p = t;
	*len = (size_t)(t - s);
	return s;
}

/* The length of the UTF-8 sequence at p (before end) that is printable
 * and not a C1 control, or 0. */
static size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
	uint32_t cp;
	size_t n = utf8_decode(p, (size_t)(end - p), &cp);

	return n < 2 || (cp >= 0x80 && cp <= 0x9f) ? 0 : n;
}

/* Append len bytes at t to out (used, size) with what is not printable
 * UTF-8 written as \xHH; never cuts an escape or a character. */
static void
append_safe(char *out, size_t *used, size_t size, const char *t, size_t len)
{
	const unsigned char *p = (const unsigned char *)t, *end = p + len;
	size_t n;

	while (p < end) {
		if (*p >= 0x20 && *p < 0x7f)
			n = 1;
		else
			n = utf8_len(p, end);
		if (n > 0) {
			if (*used + n >= size)
				break;
			memcpy(out + *used, p, n);
			*used += n;
			p += n;
		} else {
			if (*used + 4 >= size)
				break;
			snprintf(out + *used, size - *used, "\\x%02x", *p);
			*used += 4;
			p++;
		}
	}
	out[*used] = '\0';
}

/* Up to n tokens from p into out, one space apart, "..." after more. */
static void
tokens_from(const char *p, const char *end, int n, char *out, size_t len)
{
	size_t used = 0, tl;
	const char *t;

	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		t = next_token(&p, end, &tl);
		if (tl == 0)
			return;
		if (tl > 200)
			tl = 200;
		if (used + 2 >= len)
			break;
		if (used > 0)
			out[used++] = ' ';
		append_safe(out, &used, len - 5, t, tl);
	}
	next_token(&p, end, &tl);
	if (tl > 0 && used + 4 < len)
		memcpy(out + used, " ...", 5);
}

void
canary_diff(const char *a, size_t alen, const char *b, size_t blen,
    int ntokens, struct canary_diff *d)
{
	const char *pa = a, *pb = b, *ea = a + alen, *eb = b + blen;
	const char *ta, *tb, *sa, *sb;
	size_t la, lb;

	memset(d, 0, sizeof(*d));
	for (;;) {
		sa = pa;
		sb = pb;
		ta = next_token(&pa, ea, &la);
		tb = next_token(&pb, eb, &lb);
		if (la != lb || memcmp(ta, tb, la) != 0 || la == 0)
			break;
		d->token++;
	}
	tokens_from(sa, ea, ntokens, d->before, sizeof(d->before));
	tokens_from(sb, eb, ntokens, d->after, sizeof(d->after));
}
