/*
 * fuzz_sha256sums.c: SHA256SUMS files (fetch/urlsrc.c).  The input's
 * first line is the asset name looked up, the rest is the file.  A hash
 * found is 64 lowercase hex digits that the file holds (in either case).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "fetch/source_impl.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	char *name = fuzz_line(&p, end);
	size_t len = (size_t)(end - p);
	char *text = malloc(len > 0 ? len : 1), hex[65];
	struct err e = ERR_INIT;
	int rc;

	/* A copy of exactly len bytes, so a read past the end is caught. */
	if (text == NULL)
		abort();
	memcpy(text, p, len);
	memset(hex, 'x', sizeof(hex));
	rc = sha256sums_find(text, len, name, hex, "SHA256SUMS", &e);
	if (rc < 0 && e.msg[0] == '\0')
		fuzz_fail("sha256sums_find failed without a message");
	if (rc == 1) {
		int found = 0;

		if (strlen(hex) != 64 || strspn(hex, "0123456789abcdef") != 64)
			fuzz_fail("'%s' gave hash '%.65s'", name, hex);
		for (size_t i = 0; i + 64 <= len && !found; i++) {
			size_t k = 0;

			while (k < 64 && tolower((unsigned char)text[i + k]) ==
			    hex[k])
				k++;
			found = k == 64;
		}
		if (!found)
			fuzz_fail("'%s' gave hash %s, not in the file", name,
			    hex);
	}
	free(name);
	free(text);
	return 0;
}
