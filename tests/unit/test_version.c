/*
 * test_version.c: the version order (fetch/version.c): ordered pairs,
 * sorting a shuffled list, and the key agreeing with the comparison on
 * every pair, including random strings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fetch/version.h"

static int
sign(int x)
{
	return (x > 0) - (x < 0);
}

/* a < b, b > a, and the keys agree. */
static void
check_less(const char *a, const char *b)
{
	char *ka = version_key(a), *kb = version_key(b);

	check_count++;
	if (version_cmp(a, b) >= 0 || version_cmp(b, a) <= 0) {
		check_failures++;
		fprintf(stderr, "expected %s < %s\n", a, b);
	}
	check_count++;
	if (ka == NULL || kb == NULL || strcmp(ka, kb) >= 0) {
		check_failures++;
		fprintf(stderr, "expected key(%s) < key(%s): %s %s\n", a, b,
		    ka ? ka : "(null)", kb ? kb : "(null)");
	}
	free(ka);
	free(kb);
}

static void
test_pairs(void)
{
	static const char *const less[][2] = {
		{ "0.2.9", "0.2.10" },
		{ "0.2.10", "0.3.0" },
		{ "0.9", "0.10" },
		{ "b999", "b1000" },
		{ "b999", "b11382" },
		{ "b11382", "b11383" },
		{ "1.0.0-rc1", "1.0.0" },
		{ "1.0.0-rc1", "1.0.0-rc2" },
		{ "1.0.0-rc2", "1.0.0-rc10" },
		{ "1.0.0-alpha", "1.0.0-alpha.1" },
		{ "1.0.0-alpha.1", "1.0.0-beta" },
		{ "1.0.0-beta", "1.0.0-rc1" },
		{ "0.9.9", "1.0.0-rc1" },
		{ "1.0.0", "1.0.0-1" },
		{ "1.0.0", "1.0.1" },
		{ "1.0", "1.0.0" },
		{ "1.0", "1.0a" },
		{ "1.1.1", "1.1.1a" },
		{ "1.1.1a", "1.1.1b" },
		{ "1.0~rc1", "1.0" },
		{ "1.0rc1", "1.0" },
		{ "1.0RC1", "1.0" },
		{ "2.0.beta2", "2.0" },
		{ "2.0_dev", "2.0" },
		{ "2.0.dev1", "2.0.dev2" },
		{ "1.0.0", "1.0.0+cu121" },
		{ "1.0a", "1.0.1" },
		{ "1.2", "1.10" },
		{ "9", "10" },
		{ "99999999999999999999998", "99999999999999999999999" },
		{ "99999999999999999999999", "100000000000000000000000" },
		{ "123456789012345678901234567890",
		  "1234567890123456789012345678901" },
		{ "a", "b" },
		{ "a1", "ab" },
		{ "1.1", "1.a" },
		{ "1.01", "1.1" },	/* equal by value: bytes decide */
		{ "1.0.0", "1.00.0" },
		{ "", "0" },
		{ "2024.01.15", "2024.02.01" },
		{ "r9", "r10" },
		{ "release-9", "release-10" },
		{ "v", "w" },
	};

	for (size_t i = 0; i < sizeof(less) / sizeof(less[0]); i++)
		check_less(less[i][0], less[i][1]);
	CHECK_INT(version_cmp("0.2.10", "0.2.10"), 0);
	CHECK_INT(version_cmp("", ""), 0);
}

/* Words are marks only where documented: "b" and "rc" elsewhere are
 * letters, so the order does not depend on guesses. */
static void
test_words(void)
{
	check_less("1.0", "1.0b1");	/* not a pre word: post-release */
	check_less("1.0", "1.0.a");
	check_less("rc1", "rc2");	/* no digit before: plain letters */
	check_less("1.0", "1.0.release");
	check_less("1.0.rc", "1.0");
	check_less("1.0.rcx", "1.0.rd");	/* "rcx" is not "rc" */
}

static int
cmp_str_for_test(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
test_sort(void)
{
	static const char *const sorted[] = {
		"0.1.0", "0.2.0-alpha", "0.2.0-rc1", "0.2.0-rc2", "0.2.0",
		"0.2.1", "0.2.2", "0.2.9", "0.2.10", "0.2.11", "0.10.0",
		"1.0.0~beta", "1.0.0", "1.0.0-1", "1.0.1", "1.10.0",
		"10.0.0", "b9", "b999", "b1000", "b11382",
	};
	enum { N = sizeof(sorted) / sizeof(sorted[0]) };
	const char *list[N];
	char *keys[N];
	unsigned seed = 12345;

	for (int round = 0; round < 20; round++) {
		int ok = 1;

		memcpy(list, sorted, sizeof(list));
		for (size_t i = N - 1; i > 0; i--) {
			size_t j;
			const char *tmp;

			seed = seed * 1103515245u + 12345u;
			j = (seed >> 8) % (i + 1);
			tmp = list[i];
			list[i] = list[j];
			list[j] = tmp;
		}
		qsort(list, N, sizeof(list[0]), version_cmp_qsort);
		for (size_t i = 0; i < N; i++)
			if (strcmp(list[i], sorted[i]) != 0)
				ok = 0;
		CHECK(ok);
	}

	/* Sorting the keys bytewise gives the same order. */
	for (size_t i = 0; i < N; i++)
		keys[i] = version_key(sorted[N - 1 - i]);
	qsort(keys, N, sizeof(keys[0]), cmp_str_for_test);
	for (size_t i = 0; i < N; i++) {
		char *k = version_key(sorted[i]);

		CHECK_STR(keys[i], k);
		free(k);
	}
	for (size_t i = 0; i < N; i++)
		free(keys[i]);
}

/* Keys agree with the comparison on every pair of random strings drawn
 * from the characters that matter, and the comparison is antisymmetric
 * and transitive on them. */
static void
test_random_agreement(void)
{
	static const char alphabet[] = "0012399.-~_+abrcRCv";
	enum { N = 300 };
	char *v[N], *k[N];
	unsigned seed = 777;
	int disagree = 0, asym = 0, nontrans = 0, printable = 1;

	for (int i = 0; i < N; i++) {
		size_t len;

		seed = seed * 1103515245u + 12345u;
		len = (seed >> 16) % 9;
		v[i] = malloc(len + 1);
		for (size_t j = 0; j < len; j++) {
			seed = seed * 1103515245u + 12345u;
			v[i][j] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		v[i][len] = '\0';
		k[i] = version_key(v[i]);
		for (const char *p = k[i]; *p; p++)
			if (*p < 0x21 || *p > 0x7e)
				printable = 0;
	}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			int c = sign(version_cmp(v[i], v[j]));

			if (c != sign(strcmp(k[i], k[j])))
				disagree++;
			if (c != -sign(version_cmp(v[j], v[i])))
				asym++;
			if (c == 0 && strcmp(v[i], v[j]) != 0)
				asym++;
		}
	for (int i = 0; i < N; i += 7)
		for (int j = 0; j < N; j += 5)
			for (int l = 0; l < N; l += 3)
				if (version_cmp(v[i], v[j]) < 0 &&
				    version_cmp(v[j], v[l]) < 0 &&
				    version_cmp(v[i], v[l]) >= 0)
					nontrans++;
	CHECK_INT(disagree, 0);
	CHECK_INT(asym, 0);
	CHECK_INT(nontrans, 0);
	CHECK(printable);
	for (int i = 0; i < N; i++) {
		free(v[i]);
		free(k[i]);
	}
}

int
main(void)
{
	check_tmpdir("version");
	CHECK_CASE(test_pairs);
	CHECK_CASE(test_words);
	CHECK_CASE(test_sort);
	CHECK_CASE(test_random_agreement);
	return check_done();
}
