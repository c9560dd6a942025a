/*
 * ablate_print.h: rendering an ablation's report (search/ablate.h builds
 * it) as aligned text, markdown, csv, an HTML page (html.h) or
 * the JSON itself: the verdict's one line, the baseline, then per switch
 * its rank or effect and the time it removes, per token and fixed, with
 * intervals.
 */
#ifndef BISECTD_ABLATE_PRINT_H
#define BISECTD_ABLATE_PRINT_H

#include <stdio.h>

#include "print.h"

struct json_t;

void ablate_print(const struct json_t *report, enum report_format f,
    FILE *out);

#endif
