/*
 * source_impl.h: the kinds of source source_list() dispatches to, one
 * struct source_kind each, and their listers.  Each appends what its
 * source holds to out (unordered), with the same rules as source_list()
 * in source.h; none of them touches the store.  The kinds use
 * release_list.h's helpers, never source.c.
 */
#ifndef FETCH_SOURCE_IMPL_H
#define FETCH_SOURCE_IMPL_H

#include <stddef.h>

#include "config/conf.h"

struct err;
struct release_list;
struct source_state;

/* One kind of source: the engines whose source is kind use list. */
struct source_kind {
	enum conf_source kind;
	int (*list)(const struct conf_engine *eng, struct source_state *state,
	    struct release_list *out, struct err *e);
};

extern const struct source_kind source_kind_github;	/* github.c */
extern const struct source_kind source_kind_url;	/* urlsrc.c */
extern const struct source_kind source_kind_git;	/* gitsrc.c */
extern const struct source_kind source_kind_dir;	/* dirsrc.c */

/* github:OWNER/REPO (github.c).  state may be NULL (no conditional
 * request); with state->not_modified set on return, out is untouched. */
int source_list_github(const struct conf_engine *eng,
    struct source_state *state, struct release_list *out, struct err *e);

/* Limits of the GitHub client, parameters so tests can keep them short. */
struct github_opts {
	long max_wait_s;	/* wait for a rate-limit reset at most this
				 * long, else fail; <0: 60 */
	int max_pages;		/* give up beyond this many pages; <=0: 100 */
};

#define GITHUB_OPTS_INIT { -1, 0 }

/* source_list_github() with explicit limits (go NULL: defaults). */
int github_list(const struct conf_engine *eng, const struct github_opts *go,
    struct source_state *state, struct release_list *out, struct err *e);

/*
 * One page of GitHub's releases API (a JSON array of releases) into out:
 * drafts, prereleases unless eng->prereleases, and releases without an
 * asset matching eng->asset are left out.  Returns 0, or -1 with e naming
 * url when the text is not such an array.
 */
int github_parse_releases(const struct conf_engine *eng, const char *url,
    const char *json, size_t len, struct release_list *out, struct err *e);

/* url:TEMPLATE with versions and optional sha256sums (urlsrc.c). */
int source_list_url(const struct conf_engine *eng, struct source_state *state,
    struct release_list *out, struct err *e);

/*
 * Look name up in a SHA256SUMS file (GNU coreutils format: "HASH  NAME"
 * or "HASH *NAME", '#' comments and blank lines skipped; a name given as
 * "./NAME" or "dir/NAME" matches by its last component when no line
 * names it exactly).  Returns 1 with hex set (lowercase), 0 when no line
 * names it, -1 with e set when the text holds no valid line at all or two
 * lines give the name different hashes.  what names the file in messages.
 */
int sha256sums_find(const char *text, size_t len, const char *name,
    char hex[65], const char *what, struct err *e);

/* git:PATH-OR-URL, tags filtered by tag-pattern (gitsrc.c). */
int source_list_git(const struct conf_engine *eng, struct source_state *state,
    struct release_list *out, struct err *e);

/*
 * What source_list_git() makes of one tag it listed, apart from libgit2's
 * listing so that a fuzzer reaches it (libgit2 started, for its check
 * of a reference name): nothing when the tag does not match the
 * engine's tag-pattern, else a release, or a refused one, added to out
 * as gitsrc.c's header says (remote: listed from a remote, where an
 * asset that is neither a URL nor an absolute path is an error).  0, or
 * -1 with e set.
 */
int gitsrc_add_tag(const struct conf_engine *eng, int remote,
    const char *tag, struct release_list *out, struct err *e);

/* dir:PATH, archives whose names match asset (dirsrc.c). */
int source_list_dir(const struct conf_engine *eng, struct source_state *state,
    struct release_list *out, struct err *e);

#endif
