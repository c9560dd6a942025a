/*
 * gitrepo.h: an engine's git repository for commit-level bisection.  It
 * is cloned (bare) into CACHE/git/ once and fetched again only when an
 * end of a range is not found in it; the ends are resolved, the commits
 * between them walked, and one commit is checked out into a clean
 * folder to be built.
 *
 * Everything from the repository is upstream text: a commit is named by
 * the 40 hex digits of its id only, a tag is only ever looked up as a
 * reference whose name passes git's rules (gitrepo_name_refs()), and no
 * path is made from either.
 */
#ifndef FETCH_GITREPO_H
#define FETCH_GITREPO_H

#include <stddef.h>
#include <stdint.h>

struct err;

/* Most commits one range may hold: a walk beyond it is refused. */
#define GITREPO_MAX_COMMITS	100000

struct gitrepo_commit {
	char id[41];		/* lowercase hex */
	char *subject;		/* the message's first line; malloced */
	char *author;		/* the author's name; malloced */
	int64_t time;		/* author time, Unix seconds */
};

struct gitrepo_commits {
	struct gitrepo_commit *v;	/* oldest first; owned */
	size_t n;
};

struct gitrepo;

/*
 * Open the cached clone of url (a URL or a local path) for engine under
 * cache_dir, cloning it first when there is none.  The clone is made in
 * a work folder and renamed into place, so a crash never leaves half a
 * repository under the cached name.  With online 0 nothing is cloned or
 * fetched: the clone there is, or an error.  Free with gitrepo_close().
 */
int gitrepo_open(const char *cache_dir, const char *engine, const char *url,
    int online, struct gitrepo **out, struct err *e);
void gitrepo_close(struct gitrepo *g);

/*
 * The commit that name stands for, as 40 hex digits in id: a tag (as
 * written, or with a leading 'v' added, as git: sources drop it), or a
 * commit id of 7 to 40 hex digits (a unique prefix).  When the clone
 * does not know it, the repository is fetched once and asked again.
 */
int gitrepo_resolve(struct gitrepo *g, const char *name, char id[41],
    struct err *e);

/*
 * The commits from good to bad, both included, oldest first: bad and its
 * ancestors that are not good's, each after its parents, along first
 * parents only when first_parent is set.  good must be an ancestor of
 * bad.  Free with gitrepo_commits_release().
 */
int gitrepo_walk(struct gitrepo *g, const char *good, const char *bad,
    int first_parent, struct gitrepo_commits *out, struct err *e);
void gitrepo_commits_release(struct gitrepo_commits *c);

/* The subject, author and time of commit id (40 hex digits). */
int gitrepo_describe(struct gitrepo *g, const char *id,
    struct gitrepo_commit *out, struct err *e);
void gitrepo_commit_release(struct gitrepo_commit *c);

/*
 * Write the tree of commit id (40 hex digits) into dir, which must be an
 * empty folder: a clean checkout, without the repository's index.
 */
int gitrepo_checkout(struct gitrepo *g, const char *id, const char *dir,
    struct err *e);

/*
 * What gitrepo_resolve() looks name up as, apart from the repository so
 * that a fuzzer reaches it: refs[0] "refs/tags/NAME" and refs[1]
 * "refs/tags/vNAME", each "" when it is not a reference name git would
 * take (libgit2's check, and no DEL byte, which libgit2 lets by) or
 * does not fit; 1 when name may also be a commit id (7 to 40 hex
 * digits, either case), else 0.
 */
#define GITREPO_REF_MAX	512
int gitrepo_name_refs(const char *name, char refs[2][GITREPO_REF_MAX]);

/* 1 when s is 40 lowercase hex digits, a full commit id. */
int gitrepo_is_id(const char *s);

/*
 * The web page of commit id when url is a GitHub repository
 * ("https://github.com/OWNER/REPO[.git]" or "git@github.com:OWNER/REPO"),
 * into buf; 0, or -1 (not on GitHub, or buf too small).
 */
int gitrepo_github_link(const char *url, const char *id, char *buf,
    size_t len);

#endif
