/*
 * fuzz.c: the helpers of fuzz.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "fuzz.h"

static char tmpdir[4096];

char *
fuzz_strndup(const uint8_t *data, size_t n)
{
	char *s = malloc(n + 1);

	if (s == NULL)
		abort();
	memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

char *
fuzz_line(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
	const uint8_t *stop = nl != NULL ? nl : end;
	char *s = fuzz_strndup(*p, (size_t)(stop - *p));

	*p = nl != NULL ? nl + 1 : end;
	return s;
}

void
fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "property broken: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

static void
remove_tmpdir(void)
{
	struct err e = ERR_INIT;

	if (chdir("/") == 0 && tmpdir[0] != '\0')
		fs_remove_tree(tmpdir, &e);
}

const char *
fuzz_tmpdir(const char *target)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/bisectd-fuzz-%s-XXXXXX",
	    base != NULL && base[0] != '\0' ? base : "/tmp", target);
	if (mkdtemp(tmpdir) == NULL) {
		perror(tmpdir);
		abort();
	}
	atexit(remove_tmpdir);
	return tmpdir;
}
