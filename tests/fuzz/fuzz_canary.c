/*
 * fuzz_canary.c: where two texts an engine generated first differ
 * (bisectd/measure/canary_diff.c).  The input is the two texts, split
 * at its first NUL byte (all of it and nothing, without one).
 *
 * Properties: both sides of the diff are valid UTF-8 with no control
 * byte or C1 control, whatever the engine wrote; the first differing
 * token is the same both ways round and lies within both texts; a text
 * against itself differs nowhere it shows.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "bisectd/measure/canary.h"
#include "common/utf8.h"
#include "fuzz.h"

static void
check_side(const char *s, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strnlen(s, size);
	uint32_t cp;

	if (n == size)
		fuzz_fail("a side of the diff is not NUL-terminated");
	for (size_t i = 0, k; i < n; i += k) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			fuzz_fail("control byte 0x%02x in the diff", p[i]);
		if ((k = utf8_decode(p + i, n - i, &cp)) == 0)
			fuzz_fail("byte 0x%02x of the diff is not UTF-8", p[i]);
		if (cp >= 0x80 && cp <= 0x9f)
			fuzz_fail("C1 control U+%04x in the diff", (unsigned)cp);
	}
}

static size_t
tokens(const char *s, size_t n)
{
	size_t count = 0;

	for (size_t i = 0; i < n; ) {
		while (i < n && isspace((unsigned char)s[i]))
			i++;
		if (i == n)
			break;
		count++;
		while (i < n && !isspace((unsigned char)s[i]))
			i++;
	}
	return count;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *a = (const char *)data, *nul = memchr(data, 0, size);
	size_t alen = nul ? (size_t)(nul - a) : size;
	const char *b = nul ? nul + 1 : a + size;
	size_t blen = nul ? size - alen - 1 : 0;
	struct canary_diff ab, ba, aa;

	canary_diff(a, alen, b, blen, 8, &ab);
	canary_diff(b, blen, a, alen, 8, &ba);
	canary_diff(a, alen, a, alen, 8, &aa);
	check_side(ab.before, sizeof(ab.before));
	check_side(ab.after, sizeof(ab.after));
	check_side(ba.before, sizeof(ba.before));
	if (ab.token != ba.token)
		fuzz_fail("first difference at token %zu one way, %zu the "
		    "other", ab.token, ba.token);
	if (ab.token > tokens(a, alen) || ab.token > tokens(b, blen))
		fuzz_fail("first difference at token %zu, past a text",
		    ab.token);
	if (strcmp(aa.before, aa.after) != 0 || aa.token != tokens(a, alen))
		fuzz_fail("a text differs from itself");
	return 0;
}
