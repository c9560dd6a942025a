/*
 * http_value.c: header values read without libcurl: a trimmed copy, the
 * rel="next" URL of a Link value, a strong ETag (see http_value.h).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_value.h"

int
http_no_newline(const char *s)
{
	return strpbrk(s, "\r\n") == NULL;
}


/* Trimmed copy of a header value; malloced. */
char *
http_value_dup(const char *v, size_t len)
{
	while (len > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		len--;
	}
	while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t' ||
	    v[len - 1] == '\r' || v[len - 1] == '\n'))
		len--;
	return strndup(v, len);
}


/* 1 when the parameters [p, end) of a Link entry say rel="... next ...". */
static int
rel_is_next(const char *p, const char *end)
{
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *stop = semi ? semi : end;

		while (p < stop && (*p == ' ' || *p == '\t'))
			p++;
		if (stop - p > 4 && strncasecmp(p, "rel", 3) == 0) {
			const char *q = p + 3;

			while (q < stop && *q == ' ')
				q++;
			if (q < stop && *q == '=') {
				q++;
				while (q < stop && (*q == ' ' || *q == '"'))
					q++;
				/* space-separated relation types */
				while (q < stop && *q != '"') {
					const char *t = q;

					while (q < stop && *q != ' ' && *q != '"'
					    && *q != ',')
						q++;
					if (q - t == 4 &&
					    strncasecmp(t, "next", 4) == 0)
						return 1;
					while (q < stop && *q == ' ')
						q++;
					if (q < stop && *q == ',')
						break;
				}
			}
		}
		p = semi ? semi + 1 : end;
	}
	return 0;
}


/* The URL of the rel="next" entry of a Link value, malloced, or NULL. */
char *
http_link_next(const char *v, size_t len)
{
	const char *p = v, *end = v + len;

	while (p < end) {
		const char *lt = memchr(p, '<', (size_t)(end - p)), *gt, *stop;

		if (lt == NULL)
			break;
		if ((gt = memchr(lt, '>', (size_t)(end - lt))) == NULL)
			break;
		stop = memchr(gt, '<', (size_t)(end - gt));
		if (stop == NULL)
			stop = end;
		if (rel_is_next(gt + 1, stop))
			return strndup(lt + 1, (size_t)(gt - lt - 1));
		p = stop;
	}
	return NULL;
}


/* A strong ETag (If-Range takes no weak one) of sane length, copied;
 * NULL if none. */
char *
http_strong_etag(const char *etag)
{
	if (etag == NULL || etag[0] != '"' || strlen(etag) > 256 ||
	    !http_no_newline(etag))
		return NULL;
	return strdup(etag);
}
