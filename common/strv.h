/*
 * strv.h: a NULL-terminated vector of malloced strings, the shape execve()
 * and most list-valued config keys want.
 */
#ifndef COMMON_STRV_H
#define COMMON_STRV_H

#include <stddef.h>

struct strv {
	char **v;	/* NULL-terminated once anything was pushed; owned */
	size_t n;
	size_t alloc;
};

#define STRV_INIT { NULL, 0, 0 }

/* Append a copy of s.  Returns 0, or -1 on allocation failure. */
int strv_push(struct strv *sv, const char *s);

/* Append a copy of the first len bytes of s. */
int strv_pushn(struct strv *sv, const char *s, size_t len);

/* Split s on sep, trimming blanks around each item; empty items are an
 * error (-1 with errno EINVAL) so "32,,128" is not silently "32,128". */
int strv_split(struct strv *sv, const char *s, char sep);

/* Copy every string of src onto the end of dst. */
int strv_extend(struct strv *dst, const struct strv *src);

/* 1 when one of sv's strings is s. */
int strv_contains(const struct strv *sv, const char *s);

/* Free the strings and the vector; leaves sv empty and reusable. */
void strv_clear(struct strv *sv);

/* Free each of the n strings of v (NULL ones included): a struct's
 * release lists the strings it owns once, in an array. */
void strs_free(char *const *v, size_t n);

#endif
