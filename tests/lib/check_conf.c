/* check_conf.c: a test's configuration from text (see check_conf.h). */
#include <stdio.h>

#include "check.h"
#include "check_conf.h"
#include "common/strv.h"
#include "config/conf.h"

struct conf *
check_conf_load(const char *text)
{
	struct strv problems = STRV_INIT;
	struct conf *c = NULL;

	check_write_file("t.conf", text);
	if (conf_load("t.conf", &c, &problems) < 0) {
		for (size_t i = 0; i < problems.n; i++)
			fprintf(stderr, "config: %s\n", problems.v[i]);
		c = NULL;
	}
	strv_clear(&problems);
	return c;
}
