/*
 * print_int.h: what print.c shares with print_verdict.c.
 */
#ifndef BISECTD_REPORT_PRINT_INT_H
#define BISECTD_REPORT_PRINT_INT_H

#include <stddef.h>
#include <stdio.h>

struct json_t;

/* o[key] with its interval o[key_ci]: "0.3281 [0.31, 0.34]" (sign: with
 * a sign), "not estimable" for a fixed part that is not, "-" when
 * missing. */
void ci_text(char *buf, size_t len, const struct json_t *o, const char *key,
    int sign);

/* The verdict's lines, for text (md 0) or markdown (md 1). */
void print_verdict_text(const struct json_t *v, FILE *out, int md);

#endif
