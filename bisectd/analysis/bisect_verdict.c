/*
 * bisect_verdict.c: a verdict once bisect_next() gave it (see bisect.h):
 * its status's name, and what it holds released.
 */
#include <stdlib.h>
#include <string.h>

#include "bisect.h"

void
bisect_verdict_release(struct bisect_verdict *v)
{
	for (size_t i = 0; i < v->nchanges; i++)
		free(v->changes[i].candidates);
	free(v->changes);
	free(v->slide.between);
	memset(v, 0, sizeof(*v));
}

const char *
bisect_status_name(enum bisect_status s)
{
	switch (s) {
	case BISECT_REGRESSION:
		return "regression";
	case BISECT_NO_REGRESSION:
		return "no-regression";
	case BISECT_GRADUAL:
		return "gradual";
	case BISECT_UNKNOWN:
		break;
	}
	return "unknown";
}

