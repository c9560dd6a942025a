/*
 * regex.h: the regexes of regex:RE parsers (the bench's number, the
 * canary's text), compiled and matched by PCRE2 with bounded work.
 *
 * The syntax is PCRE2's (Perl's): \d, \s, [[:digit:]], (?:...) and
 * back-references all work.  A pattern is at most REGEX_MAX_LEN bytes and
 * needs a capture group: its first group is what a match yields.  Text is
 * matched one line at a time, a line only up to its first REGEX_LINE_MAX
 * bytes, so a match never spans lines and ^ and $ are each line's ends.
 * Matching all of an output may take at most REGEX_STEP_LIMIT steps of
 * PCRE2's matcher (some 200 ms), a line REGEX_HEAP_LIMIT KiB; the line
 * that needs more ends the match with an error naming it, instead of the
 * minutes or gigabytes a pattern such as "((a+)+)+b" could take.  A plain
 * pattern takes a few steps a byte ("time = *([0-9.]+) ms", some 30 on a
 * 400 byte output; ".*([0-9.]+) ms" 11,000 on a line of 4 kB).
 */
#ifndef COMMON_REGEX_H
#define COMMON_REGEX_H

#include <stddef.h>

#include "err.h"

#define REGEX_MAX_LEN		1024
#define REGEX_LINE_MAX		4096
#define REGEX_STEP_LIMIT	10000000
#define REGEX_HEAP_LIMIT	4096

struct regex;

/* The first match's first group: offsets into the text matched, or
 * captured 0 when the group took no part in the match ("(a)|(b)"). */
struct regex_match {
	size_t so, eo;
	int captured;
};

/*
 * Compile pattern into *re.  -1 with e set when it is too long, does not
 * compile (PCRE2's message and the byte it stopped at) or has no capture
 * group.  Messages start "regex 'PATTERN'".
 */
int regex_compile(const char *pattern, struct regex **re, struct err *e);

/*
 * Find the first line of text (NUL-terminated) that matches.  1 with *m
 * filled, 0 when no line matches (*cut counts the lines longer than what
 * was read of them), -1 with e set when a line took more than the limits.
 */
int regex_first(struct regex *re, const char *text,
    struct regex_match *m, size_t *cut, struct err *e);

void regex_free(struct regex *re);

#endif
