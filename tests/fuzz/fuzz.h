/*
 * fuzz.h: what the libFuzzer targets of tests/fuzz share: cutting the
 * fuzzer's bytes into the pieces a target feeds its parser, and failing
 * a property check so that libFuzzer keeps the input as a crash.
 */
#ifndef TESTS_FUZZ_H
#define TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* The entry point libFuzzer calls with each input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated malloced copy of n bytes (the C string stops at the
 * first NUL byte in them); aborts when out of memory. */
char *fuzz_strndup(const uint8_t *data, size_t n);

/*
 * The next line of [*p, end): a malloced C string without its '\n',
 * *p moved past it.  At the end of the input, the rest (maybe "").
 */
char *fuzz_line(const uint8_t **p, const uint8_t *end);

/* Print what broke, and abort: libFuzzer saves the input as crash-*. */
void fuzz_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* A fresh directory under $TMPDIR (or /tmp) for the whole run, removed at
 * exit; aborts if it cannot be made. */
const char *fuzz_tmpdir(const char *target);

#endif
