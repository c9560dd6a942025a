/*
 * fuzz_cron.c: cron expressions (config/cron.c).  The input is the
 * expression; a parsed one is asked for its next firing after instants
 * around the days when Berlin's clocks change, which must lie after them.
 */
#include <stdlib.h>
#include <time.h>

#include "config/cron.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* A zone with DST gaps and repeated hours, where the rules bite. */
	setenv("TZ", "Europe/Berlin", 1);
	tzset();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const time_t after[] = {
		0,
		1774742400,	/* 2026-03-29 00:00 UTC: spring forward */
		1792886400,	/* 2026-10-25 00:00 UTC: fall back */
		1798761599,	/* 2026-12-31 23:59:59 UTC */
	};
	char *expr = fuzz_strndup(data, size);
	const char *why = NULL;
	struct cron c;

	if (cron_parse(expr, &c, &why) < 0) {
		if (why == NULL)
			fuzz_fail("cron_parse('%s') failed without a reason",
			    expr);
		free(expr);
		return 0;
	}
	for (size_t i = 0; i < sizeof(after) / sizeof(after[0]); i++) {
		time_t next, again;

		if (cron_next(&c, after[i], &next) < 0)
			continue;
		if (next <= after[i])
			fuzz_fail("'%s' after %lld fires at %lld", expr,
			    (long long)after[i], (long long)next);
		/* The next firing after a firing is later again. */
		if (cron_next(&c, next, &again) == 0 && again <= next)
			fuzz_fail("'%s' after %lld fires at %lld", expr,
			    (long long)next, (long long)again);
	}
	free(expr);
	return 0;
}
