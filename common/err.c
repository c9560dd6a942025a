/* err.c: formatting of struct err messages (see err.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

/* The message, and whether it is a mistake in the user's words. */
static void set_v(struct err *e, int usage, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void
set_v(struct err *e, int usage, const char *fmt, va_list ap)
{
	if (e == NULL)
		return;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	e->usage = usage;
}

int
err_set(struct err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_v(e, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int
err_usage(struct err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_v(e, 1, fmt, ap);
	va_end(ap);
	return -1;
}

int
err_errno(struct err *e, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	size_t len;

	if (e == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	len = strlen(e->msg);
	snprintf(e->msg + len, sizeof(e->msg) - len, ": %s", strerror(saved));
	e->usage = 0;
	errno = saved;
	return -1;
}

int
err_prefix(struct err *e, const char *fmt, ...)
{
	char old[ERR_MSG_MAX];
	va_list ap;
	size_t len;

	if (e == NULL)
		return -1;
	memcpy(old, e->msg, sizeof(old));
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	len = strlen(e->msg);
	snprintf(e->msg + len, sizeof(e->msg) - len, ": %s", old);
	return -1;
}
