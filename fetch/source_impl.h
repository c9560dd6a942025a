/*
 * source_impl.h: the per-kind listers source_list() dispatches to.  Each
 * appends what its source holds to out (unordered), with the same rules
 * as source_list() in source.h; none of them touches the store.
 */
#ifndef FETCH_SOURCE_IMPL_H
#define FETCH_SOURCE_IMPL_H

struct conf_engine;
struct err;
struct release_list;
struct source_state;

/* github:OWNER/REPO (github.c).  state may be NULL (no conditional
 * request); with state->not_modified set on return, out is untouched. */
int source_list_github(const struct conf_engine *eng,
    struct source_state *state, struct release_list *out, struct err *e);

/* url:TEMPLATE with versions and optional sha256sums (urlsrc.c). */
int source_list_url(const struct conf_engine *eng, struct release_list *out,
    struct err *e);

/* git:PATH-OR-URL, tags filtered by tag-pattern (gitsrc.c). */
int source_list_git(const struct conf_engine *eng, struct release_list *out,
    struct err *e);

/* dir:PATH, archives whose names match asset (dirsrc.c). */
int source_list_dir(const struct conf_engine *eng, struct release_list *out,
    struct err *e);

#endif
