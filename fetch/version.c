/*
 * version.c: the version order (see version.h).  One tokenizer feeds both
 * the comparison and the key, so the two cannot disagree.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "version.h"

/* Token kinds, in their order. */
enum vkind { V_PRE, V_END, V_NUM, V_ALPHA, V_OTHER };

struct vtok {
	enum vkind kind;
	const char *digits;	/* V_NUM: first significant digit */
	size_t ndigits;		/* V_NUM: 0 for the value zero */
	unsigned char c;	/* V_ALPHA, V_OTHER */
};

struct vscan {
	const char *start;
	const char *p;
	int pre_done;		/* a mark was given for the word at p */
};

static const char *const pre_words[] = {
	"alpha", "beta", "pre", "preview", "rc", "dev"
};

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int
is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* 1 when the letters at p form one of pre_words, not followed by more. */
static int
is_pre_word(const char *p)
{
	size_t n = 0;

	while (is_alpha((unsigned char)p[n]))
		n++;
	for (size_t i = 0; i < sizeof(pre_words) / sizeof(pre_words[0]); i++)
		if (strlen(pre_words[i]) == n &&
		    strncasecmp(p, pre_words[i], n) == 0)
			return 1;
	return 0;
}

static void
vscan_init(struct vscan *s, const char *v)
{
	s->start = s->p = v;
	s->pre_done = 0;
}

static void
vscan_next(struct vscan *s, struct vtok *t)
{
	const char *p = s->p;
	unsigned char c = (unsigned char)*p;
	int after_digit = p > s->start && is_digit((unsigned char)p[-1]);

	memset(t, 0, sizeof(*t));
	if (c == '\0') {
		t->kind = V_END;
		return;
	}
	if (c == '~' || (c == '-' && is_alpha((unsigned char)p[1])) ||
	    ((c == '.' || c == '_') && after_digit && is_pre_word(p + 1))) {
		t->kind = V_PRE;
		s->p = p + 1;
		s->pre_done = 1;	/* the word that follows has its mark */
		return;
	}
	if (is_alpha(c) && after_digit && !s->pre_done && is_pre_word(p)) {
		t->kind = V_PRE;	/* the letters come next, at p again */
		s->pre_done = 1;
		return;
	}
	s->pre_done = 0;
	if (is_digit(c)) {
		while (*p == '0')
			p++;
		t->kind = V_NUM;
		t->digits = p;
		while (is_digit((unsigned char)*p))
			p++;
		t->ndigits = (size_t)(p - t->digits);
		s->p = p;
		return;
	}
	t->kind = is_alpha(c) ? V_ALPHA : V_OTHER;
	t->c = c;
	s->p = p + 1;
}

int
version_cmp(const char *a, const char *b)
{
	struct vscan sa, sb;
	struct vtok ta, tb;

	vscan_init(&sa, a);
	vscan_init(&sb, b);
	for (;;) {
		vscan_next(&sa, &ta);
		vscan_next(&sb, &tb);
		if (ta.kind != tb.kind)
			return ta.kind < tb.kind ? -1 : 1;
		if (ta.kind == V_END)
			break;
		if (ta.kind == V_NUM) {
			int r;

			if (ta.ndigits != tb.ndigits)
				return ta.ndigits < tb.ndigits ? -1 : 1;
			if ((r = memcmp(ta.digits, tb.digits, ta.ndigits)) != 0)
				return r < 0 ? -1 : 1;
		} else if (ta.c != tb.c)
			return ta.c < tb.c ? -1 : 1;
	}
	return strcmp(a, b);
}

int
version_cmp_qsort(const void *a, const void *b)
{
	return version_cmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Key bytes per token: 'A' a pre-release mark; 'B' the end, followed by
 * the whole version in hex (the tie-break by bytes); 'C' a number: its
 * digit count written as one character '0' + (digits of the count)
 * then the count, then the digits, which orders by value at any length;
 * 'D' a letter; 'E' another byte in two hex digits.
 */
static int
key_add_num(struct buf *k, const struct vtok *t)
{
	char count[32];
	int n = snprintf(count, sizeof(count), "%zu", t->ndigits);

	if (buf_addstr(k, "C") < 0)
		return -1;
	if (t->ndigits == 0)
		return buf_addstr(k, "0");
	if (buf_printf(k, "%c%s", '0' + n, count) < 0)
		return -1;
	return buf_add(k, t->digits, t->ndigits);
}

char *
version_key(const char *v)
{
	struct buf k = BUF_INIT(SIZE_MAX / 2);
	struct vscan s;
	struct vtok t;
	int rc = 0;

	vscan_init(&s, v);
	do {
		vscan_next(&s, &t);
		switch (t.kind) {
		case V_PRE:
			rc = buf_addstr(&k, "A");
			break;
		case V_END:
			rc = buf_addstr(&k, "B");
			for (const char *p = v; rc == 0 && *p; p++)
				rc = buf_printf(&k, "%02x", (unsigned char)*p);
			break;
		case V_NUM:
			rc = key_add_num(&k, &t);
			break;
		case V_ALPHA:
			rc = buf_printf(&k, "D%c", t.c);
			break;
		case V_OTHER:
			rc = buf_printf(&k, "E%02x", t.c);
			break;
		}
	} while (rc == 0 && t.kind != V_END);
	if (rc < 0) {
		buf_release(&k);
		return NULL;
	}
	return buf_take(&k);
}
