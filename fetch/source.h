/*
 * source.h: discovering an engine's releases.  Each kind of source
 * (github:, url:, git:, dir:) lists what it has as a release_list; the
 * caller orders it (version.h) and stores it.  Nothing here touches the
 * store: state such as a stored ETag comes in and goes out as values.
 */
#ifndef FETCH_SOURCE_H
#define FETCH_SOURCE_H

#include <stddef.h>

#include "release_list.h"

struct conf_engine;
struct err;

/* Conditional-request state for sources that support it (GitHub). */
struct source_state {
	char *etag;		/* in: stored ETag or NULL; out: new one */
	int not_modified;	/* out: 1 when the source answered 304 */
};

/*
 * List the engine's releases into out (appended, unordered).  With
 * state->not_modified set on return, out is left empty and the stored
 * list still holds.  Returns 0 or -1 with e set.
 */
int source_list(const struct conf_engine *eng, struct source_state *state,
    struct release_list *out, struct err *e);

#endif
