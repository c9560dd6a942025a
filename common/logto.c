/* logto.c: formatting messages for a log callback (see logto.h). */
#include <stdarg.h>
#include <stdio.h>

#include "logto.h"

void
log_to(log_fn fn, void *arg, int level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	if (fn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(arg, level, msg);
}
