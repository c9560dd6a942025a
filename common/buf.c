/* buf.c: bounded growable byte buffers (see buf.h). */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void
buf_init(struct buf *b, size_t limit)
{
	b->data = NULL;
	b->len = b->alloc = 0;
	b->limit = limit;
}

static int
buf_grow(struct buf *b, size_t need)
{
	size_t alloc;
	char *p;

	if (need + 1 <= b->alloc)
		return 0;
	alloc = b->alloc ? b->alloc : 64;
	while (alloc < need + 1)
		alloc *= 2;
	if (alloc > b->limit + 1)
		alloc = b->limit + 1;
	if ((p = realloc(b->data, alloc)) == NULL)
		return -1;
	b->data = p;
	b->alloc = alloc;
	return 0;
}

int
buf_add(struct buf *b, const void *p, size_t len)
{
	assert(b->len <= b->limit);
	if (len > b->limit - b->len) {
		errno = E2BIG;
		return -1;
	}
	if (buf_grow(b, b->len + len) < 0)
		return -1;
	if (len > 0)
		memcpy(b->data + b->len, p, len);
	b->len += len;
	assert(b->len < b->alloc);	/* room for the NUL, always */
	b->data[b->len] = '\0';
	return 0;
}

size_t
buf_add_capped(struct buf *b, const void *p, size_t len)
{
	size_t room = b->limit - b->len;

	if (len > room)
		len = room;
	if (buf_add(b, p, len) < 0)
		return 0;
	return len;
}

int
buf_addstr(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n > b->limit - b->len) {
		errno = E2BIG;
		return -1;
	}
	if (buf_grow(b, b->len + (size_t)n) < 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

char *
buf_take(struct buf *b)
{
	char *p = b->data;

	if (p == NULL)
		p = strdup("");
	b->data = NULL;
	b->len = b->alloc = 0;
	return p;
}

void
buf_release(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
}
