/*
 * print_int.h: what print.c shares with print_verdict.c.
 */
#ifndef BISECTD_REPORT_PRINT_INT_H
#define BISECTD_REPORT_PRINT_INT_H

#include <stddef.h>
#include <stdio.h>

struct report_ms;
struct report_verdict;

/* A figure with its interval: "0.3281 [0.31, 0.34]" (sign: with a sign),
 * without one when it has none, none when there is no figure. */
void ms_ci_text(char *buf, size_t len, const struct report_ms *m, int sign,
    const char *none);

/* The verdict's lines, for text (md 0) or markdown (md 1). */
void print_verdict_text(const struct report_verdict *v, FILE *out, int md);

#endif
