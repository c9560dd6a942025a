/*
 * urlenc.c: percent-encoding one part of a URL (see urlenc.h).
 */
#include <string.h>

#include "urlenc.h"

static int
unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' && strchr("-._~", c));
}

size_t
url_encoded_len(const char *s)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += unreserved(*p) ? 1 : 3;
	return n;
}

char *
url_encode_into(char *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (unreserved(*p))
			*out++ = (char)*p;
		else {
			*out++ = '%';
			*out++ = hex[*p >> 4];
			*out++ = hex[*p & 15];
		}
	*out = '\0';
	return out;
}
