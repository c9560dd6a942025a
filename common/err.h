/*
 * err.h: the error value that library code fills in instead of printing.
 *
 * Library functions take a struct err * and return -1 (or a documented
 * enum) after err_set(); the command handler that called them decides
 * what to print and how to exit.  The message says what failed first and
 * quotes its subject: "cannot open 'x.db': Permission denied".
 */
#ifndef COMMON_ERR_H
#define COMMON_ERR_H

#include <stddef.h>

#define ERR_MSG_MAX 1024

struct err {
	char msg[ERR_MSG_MAX];	/* "" when no error has been set */
	int usage;		/* set by err_usage(): the caller's input was
				 * wrong (a version no release has), not the
				 * tool or what it reached */
};

#define ERR_INIT { { 0 }, 0 }

#if defined(__GNUC__)
#define ERR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ERR_PRINTF(a, b)
#endif

/* Set the message; always returns -1 so callers can write return err_set(). */
int err_set(struct err *e, const char *fmt, ...) ERR_PRINTF(2, 3);

/* Like err_set(), for a mistake in what the user asked: a command line
 * exits 2 for it, not 1. */
int err_usage(struct err *e, const char *fmt, ...) ERR_PRINTF(2, 3);

/* Like err_set() with ": strerror(errno)" appended; errno is preserved. */
int err_errno(struct err *e, const char *fmt, ...) ERR_PRINTF(2, 3);

/* Prepend "prefix: " to the message already set, for context on the way
 * up; a usage error stays one. */
int err_prefix(struct err *e, const char *fmt, ...) ERR_PRINTF(2, 3);

#endif
