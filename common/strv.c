/* strv.c: NULL-terminated string vectors (see strv.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strv.h"

int
strv_pushn(struct strv *sv, const char *s, size_t len)
{
	char *copy;

	if (sv->n + 2 > sv->alloc) {
		size_t alloc = sv->alloc ? sv->alloc * 2 : 8;
		char **v = realloc(sv->v, alloc * sizeof(*v));

		if (v == NULL)
			return -1;
		sv->v = v;
		sv->alloc = alloc;
	}
	if ((copy = strndup(s, len)) == NULL)
		return -1;
	sv->v[sv->n++] = copy;
	sv->v[sv->n] = NULL;
	return 0;
}

int
strv_push(struct strv *sv, const char *s)
{
	return strv_pushn(sv, s, strlen(s));
}

int
strv_split(struct strv *sv, const char *s, char sep)
{
	const char *p = s, *end, *a, *b;

	for (;;) {
		end = strchr(p, sep);
		if (end == NULL)
			end = p + strlen(p);
		a = p;
		b = end;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (a == b) {
			errno = EINVAL;
			return -1;
		}
		if (strv_pushn(sv, a, (size_t)(b - a)) < 0)
			return -1;
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
}

int
strv_extend(struct strv *dst, const struct strv *src)
{
	for (size_t i = 0; i < src->n; i++)
		if (strv_push(dst, src->v[i]) < 0)
			return -1;
	return 0;
}

void
strv_clear(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->alloc = 0;
}

void
strs_free(char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
}

int
strv_contains(const struct strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}
