/*
 * test_utf8.c: utf8_decode() takes what is one UTF-8 character and
 * nothing else: no stray or cut sequence, overlong form, surrogate, or
 * code point past U+10FFFF.
 */
#include <string.h>

#include "check.h"
#include "common/utf8.h"

static size_t
len_of(const char *s, uint32_t *cp)
{
	return utf8_decode((const unsigned char *)s, strlen(s), cp);
}

static void
test_characters(void)
{
	uint32_t cp = 0;

	CHECK_INT(len_of("a", &cp), 1);
	CHECK_INT(cp, 'a');
	CHECK_INT(len_of("\xc3\xa9", &cp), 2);		/* é */
	CHECK_INT(cp, 0xe9);
	CHECK_INT(len_of("\xe2\x82\xac", &cp), 3);	/* € */
	CHECK_INT(cp, 0x20ac);
	CHECK_INT(len_of("\xf0\x9f\x98\x80", &cp), 4);	/* U+1F600 */
	CHECK_INT(cp, 0x1f600);
	CHECK_INT(len_of("\xf4\x8f\xbf\xbf", &cp), 4);	/* U+10FFFF */
}

static void
test_not_characters(void)
{
	static const char *const bad[] = {
		"\xff", "\x80", "\xc0\x80", "\xc1\xbf",	/* stray, overlong */
		"\xe0\x80\x80", "\xe0\x9f\xbf",		/* overlong */
		"\xed\xa0\x80", "\xed\xbf\xbf",		/* surrogates */
		"\xf0\x80\x80\x80", "\xf4\x90\x80\x80",	/* overlong, past */
		"\xf5\x80\x80\x80", "\xe2\x82", "\xc3",	/* past, cut */
		"\xe2\x28\xa1",				/* not continued */
	};
	uint32_t cp;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = len_of(bad[i], &cp);

		if (n != 0)
			fprintf(stderr, "bad[%zu] read as %zu bytes\n", i, n);
		CHECK_INT(n, 0);
	}
}

int
main(void)
{
	CHECK_CASE(test_characters);
	CHECK_CASE(test_not_characters);
	return check_done();
}
