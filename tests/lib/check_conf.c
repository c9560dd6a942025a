/* check_conf.c: a test's configuration from text (see check_conf.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct conf *
check_conf_try(const char *text, char **problems)
{
	struct strv p = STRV_INIT;
	struct conf *c = NULL;
	size_t len = 0;

	check_write_file("t.conf", text);
	*problems = NULL;
	if (conf_load("t.conf", &c, &p) < 0) {
		for (size_t i = 0; i < p.n; i++)
			len += strlen(p.v[i]) + 1;
		if ((*problems = calloc(1, len + 1)) == NULL)
			abort();
		for (size_t i = 0; i < p.n; i++) {
			strcat(*problems, p.v[i]);
			strcat(*problems, "\n");
		}
	}
	strv_clear(&p);
	return c;
}

void
check_conf_refusals(const char *name, const struct check_refusal *r,
    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int before = check_failures;
		char *probs;
		struct conf *c = check_conf_try(r[i].text, &probs);

		CHECK(c == NULL);
		for (size_t k = 0; k < 3 && r[i].want[k] != NULL; k++)
			CHECK_CONTAINS(probs, r[i].want[k]);
		if (r[i].lines > 0)
			CHECK_INT(check_count_lines(probs), r[i].lines);
		if (check_failures > before)
			fprintf(stderr, "  in %s[%zu], the configuration:\n%s",
			    name, i, r[i].text);
		conf_free(c);
		free(probs);
	}
}

void
check_conf_problems(const char *name, const char *text,
    const char *const *want, int lines)
{
	int before = check_failures;
	char *probs;
	struct conf *c = check_conf_try(text, &probs);

	CHECK(c == NULL);
	for (; *want != NULL; want++)
		CHECK_CONTAINS(probs, *want);
	if (lines > 0)
		CHECK_INT(check_count_lines(probs), lines);
	if (check_failures > before)
		fprintf(stderr, "  in %s, the problems:\n%s", name,
		    probs ? probs : "");
	conf_free(c);
	free(probs);
}
