/*
 * fuzz_version.c: the order of release versions (fetch/version.c).  The
 * input is three versions separated by NUL bytes.  version_cmp() must be
 * a total order, antisymmetric, transitive and equal only for equal
 * strings, and version_key() must sort by strcmp() exactly as it does.
 */
#include <stdlib.h>
#include <string.h>

#include "fetch/version.h"
#include "fuzz.h"

static int
sign(int v)
{
	return (v > 0) - (v < 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	char *v[3], *key[3];
	int i, j, k;

	for (i = 0; i < 3; i++) {
		const uint8_t *nul = memchr(p, '\0', (size_t)(end - p));
		const uint8_t *stop = nul != NULL ? nul : end;

		v[i] = fuzz_strndup(p, (size_t)(stop - p));
		p = nul != NULL ? nul + 1 : end;
		if ((key[i] = version_key(v[i])) == NULL)
			abort();
		for (const char *q = key[i]; *q; q++)
			if (*q < 0x20 || *q > 0x7e)
				fuzz_fail("key of '%s' has byte 0x%02x", v[i],
				    (unsigned char)*q);
	}
	for (i = 0; i < 3; i++) {
		if (version_cmp(v[i], v[i]) != 0)
			fuzz_fail("'%s' is not equal to itself", v[i]);
		for (j = 0; j < 3; j++) {
			int ab = sign(version_cmp(v[i], v[j]));
			int ba = sign(version_cmp(v[j], v[i]));

			if (ab != -ba)
				fuzz_fail("cmp('%s', '%s') = %d but cmp('%s', "
				    "'%s') = %d", v[i], v[j], ab, v[j], v[i],
				    ba);
			if ((ab == 0) != (strcmp(v[i], v[j]) == 0))
				fuzz_fail("cmp('%s', '%s') = %d for different "
				    "strings", v[i], v[j], ab);
			if (sign(strcmp(key[i], key[j])) != ab)
				fuzz_fail("keys '%s' and '%s' of '%s' and '%s' "
				    "do not order as cmp = %d", key[i], key[j],
				    v[i], v[j], ab);
			for (k = 0; k < 3; k++)
				if (ab <= 0 && version_cmp(v[j], v[k]) <= 0 &&
				    version_cmp(v[i], v[k]) > 0)
					fuzz_fail("'%s' <= '%s' <= '%s' but "
					    "'%s' > '%s'", v[i], v[j], v[k],
					    v[i], v[k]);
		}
	}
	for (i = 0; i < 3; i++) {
		free(v[i]);
		free(key[i]);
	}
	return 0;
}
