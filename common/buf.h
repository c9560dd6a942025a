/*
 * buf.h: a growable byte buffer with a hard size limit, after curl's
 * dynbuf: every buffer that holds data from outside (a peer, an archive,
 * a child's output) is created with the largest size it may reach.
 */
#ifndef COMMON_BUF_H
#define COMMON_BUF_H

#include <stddef.h>

struct buf {
	char *data;	/* NUL-terminated when not NULL; owned */
	size_t len;
	size_t alloc;
	size_t limit;	/* len never exceeds this */
};

#define BUF_INIT(limit) { NULL, 0, 0, (limit) }

void buf_init(struct buf *b, size_t limit);

/* Append len bytes.  Returns 0, or -1 with errno E2BIG when the limit
 * would be passed (nothing is appended then) or ENOMEM. */
int buf_add(struct buf *b, const void *p, size_t len);

/* Append as much of p as fits under the limit; returns the bytes kept. */
size_t buf_add_capped(struct buf *b, const void *p, size_t len);

int buf_addstr(struct buf *b, const char *s);

/* printf-style append; -1 with E2BIG past the limit. */
int buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void buf_reset(struct buf *b);

/* Hand the data to the caller (caller owns it; never NULL on success:
 * an empty buffer gives ""), leaving b empty. */
char *buf_take(struct buf *b);

void buf_release(struct buf *b);

#endif
