/*
 * fuzz_config.c: the configuration (config/conf.c), through libgit2's
 * config parser and every key's validation.  The input is the file,
 * written to a temporary folder that holds nothing else.  A config is
 * either loaded or refused with at least one problem, each naming the
 * file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "common/strv.h"
#include "config/conf.h"
#include "fuzz.h"

static char path[4200];

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* conf_load() initialises libgit2 and shuts it down; held here, that
	 * is a count going up and down instead of a whole start-up. */
	git_libgit2_init();
	snprintf(path, sizeof(path), "%s/bisectd.conf", fuzz_tmpdir("config"));
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strv problems = STRV_INIT;
	struct conf *c = NULL;
	FILE *f = fopen(path, "w");

	if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	if (conf_load(path, &c, &problems) < 0) {
		if (problems.n == 0 || c != NULL)
			fuzz_fail("refused with %zu problems", problems.n);
		for (size_t i = 0; i < problems.n; i++)
			if (strncmp(problems.v[i], path, strlen(path)) != 0)
				fuzz_fail("problem '%s' does not name the "
				    "file", problems.v[i]);
	} else {
		if (c == NULL || problems.n != 0)
			fuzz_fail("loaded with %zu problems", problems.n);
		conf_free(c);
	}
	strv_clear(&problems);
	return 0;
}
