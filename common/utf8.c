/* utf8.c: reading UTF-8 strictly (see utf8.h). */
#include "utf8.h"

size_t
utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t len;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	len = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (len > n)
		return 0;
	*cp = p[0] & (0xff >> (len + 1));
	for (size_t k = 1; k < len; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (p[k] & 0x3f);
	}
	if ((len == 3 && (*cp < 0x800 || (*cp >= 0xd800 && *cp <= 0xdfff))) ||
	    (len == 4 && (*cp < 0x10000 || *cp > 0x10ffff)))
		return 0;
	return len;
}
