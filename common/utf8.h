/*
 * utf8.h: one UTF-8 character read strictly, for the places that judge
 * upstream bytes: a release's version, text shown on a terminal or a
 * page, an engine's generated text.
 */
#ifndef COMMON_UTF8_H
#define COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * The length of the UTF-8 character at p (n > 0 bytes there), its code
 * point in *cp: 1 for ASCII, 2 to 4 for the rest, or 0 when the bytes
 * are no character: a stray or cut sequence, an overlong form, a
 * surrogate, past U+10FFFF.
 */
size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);

#endif
