/*
 * gitrepo.c: the cached clone of an engine's repository, its ends, its
 * commits and clean checkouts, with libgit2 (see gitrepo.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "cache.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "gitrepo.h"

struct gitrepo {
	git_repository *repo;
	char *url;		/* as configured */
	char *path;		/* the clone's folder */
	int fetched;		/* fetched once by this handle */
};

static const char *
git_msg(void)
{
	const git_error *g = git_error_last();

	return g && g->message ? g->message : "unknown libgit2 error";
}

int
gitrepo_is_id(const char *s)
{
	return strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

/*
 * Fetch branches and tags from url into repo, tags that moved included.
 * The remote is anonymous: nothing of it is kept in the clone's
 * configuration, so the configured URL is the one fetched from.
 */
static int
fetch_into(git_repository *repo, const char *url, struct err *e)
{
	static char heads[] = "+refs/heads/*:refs/remotes/origin/*";
	static char tags[] = "+refs/tags/*:refs/tags/*";
	char *specs[] = { heads, tags };
	git_strarray refspecs = { specs, 2 };
	git_fetch_options fo;
	git_remote_create_options ro;
	git_remote *remote = NULL;
	int rc = 0;

	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	ro.repository = repo;
	/* No url.*.insteadOf rewriting: the configured URL is fetched (and
	 * libgit2's config regex would leak its match data). */
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
	if (git_remote_create_with_opts(&remote, url, &ro) < 0 ||
	    git_remote_fetch(remote, &refspecs, &fo, NULL) < 0)
		rc = err_set(e, "cannot fetch '%s': %s", url, git_msg());
	git_remote_free(remote);
	return rc;
}

/* Make a bare repository in a work folder beside path, fetch url into
 * it, then rename it there. */
static int
clone_into(struct gitrepo *g, const char *parent, struct err *e)
{
	git_repository *repo = NULL;
	struct err re = ERR_INIT;
	char tmp[4096 + 64];

	snprintf(tmp, sizeof(tmp), "%s/.tmp-clone-%ld-XXXXXX", parent,
	    (long)getpid());
	if (mkdtemp(tmp) == NULL)
		return err_errno(e, "cannot make a folder in '%s'", parent);
	if (git_repository_init(&repo, tmp, 1) < 0) {
		err_set(e, "cannot make a repository in '%s': %s", tmp,
		    git_msg());
		fs_remove_tree(tmp, &re);
		return -1;
	}
	if (fetch_into(repo, g->url, e) < 0) {
		err_prefix(e, "cannot clone");
		git_repository_free(repo);
		fs_remove_tree(tmp, &re);
		return -1;
	}
	git_repository_free(repo);
	if (rename(tmp, g->path) < 0) {
		err_errno(e, "cannot rename '%s' to '%s'", tmp, g->path);
		fs_remove_tree(tmp, &re);
		return -1;
	}
	return 0;
}

int
gitrepo_open(const char *cache_dir, const char *engine, const char *url,
    int online, struct gitrepo **out, struct err *e)
{
	struct gitrepo *g;
	char name[CACHE_DIRNAME_MAX], parent[4096], path[4096 + 160];
	struct stat st;

	*out = NULL;
	if (cache_release_dirname(engine, name) < 0)
		return err_set(e, "engine '%s': cannot name its repository's "
		    "folder", engine);
	snprintf(parent, sizeof(parent), "%s/git", cache_dir);
	snprintf(path, sizeof(path), "%s/%s.git", parent, name);
	if (fs_mkdirs(parent, 0700, e) < 0)
		return -1;
	if ((g = calloc(1, sizeof(*g))) == NULL ||
	    (g->url = strdup(url)) == NULL || (g->path = strdup(path)) == NULL) {
		if (g)
			free(g->url);
		free(g);
		return err_set(e, "out of memory");
	}
	if (git_libgit2_init() < 0) {
		free(g->url);
		free(g->path);
		free(g);
		return err_set(e, "libgit2 failed to start: %s", git_msg());
	}
	/* Offline, the clone there is is all there is: never fetched. */
	g->fetched = !online;
	if (stat(path, &st) < 0) {
		if (!online) {
			err_set(e, "'%s' has not been cloned yet (a bisect "
			    "--commits clones it)", url);
			goto fail;
		}
		if (clone_into(g, parent, e) < 0)
			goto fail;
		g->fetched = 1;
	}
	if (git_repository_open_bare(&g->repo, path) < 0) {
		err_set(e, "cannot open the clone '%s' of '%s': %s", path, url,
		    git_msg());
		goto fail;
	}
	*out = g;
	return 0;
fail:
	gitrepo_close(g);
	return -1;
}

void
gitrepo_close(struct gitrepo *g)
{
	if (g == NULL)
		return;
	git_repository_free(g->repo);
	free(g->url);
	free(g->path);
	free(g);
	git_libgit2_shutdown();
}

static int
fetch_all(struct gitrepo *g, struct err *e)
{
	g->fetched = 1;
	return fetch_into(g->repo, g->url, e);
}

int
gitrepo_name_refs(const char *name, char refs[2][GITREPO_REF_MAX])
{
	size_t len = strlen(name);
	char vtag[300];
	int valid, started = git_libgit2_init() >= 0;

	refs[0][0] = refs[1][0] = '\0';
	/* libgit2 takes a DEL, which git refuses with the other control
	 * bytes: a loose reference is a file named after it. */
	if (started && strchr(name, 0x7f) == NULL) {
		if (snprintf(refs[0], GITREPO_REF_MAX, "refs/tags/%s", name) >=
		    GITREPO_REF_MAX || git_reference_name_is_valid(&valid,
		    refs[0]) < 0 || !valid)
			refs[0][0] = '\0';
		if (snprintf(vtag, sizeof(vtag), "v%s", name) >=
		    (int)sizeof(vtag) || snprintf(refs[1], GITREPO_REF_MAX,
		    "refs/tags/%s", vtag) >= GITREPO_REF_MAX ||
		    git_reference_name_is_valid(&valid, refs[1]) < 0 || !valid)
			refs[1][0] = '\0';
	}
	if (started)
		git_libgit2_shutdown();
	return len >= 7 && len <= 40 && strspn(name,
	    "0123456789abcdefABCDEF") == len;
}

/* The commit the reference ref peels to; 1 when there is no such tag. */
static int
lookup_tag(git_repository *repo, const char *ref, git_oid *oid)
{
	git_reference *r = NULL;
	git_object *obj = NULL;
	int rc = 1;

	if (git_reference_lookup(&r, repo, ref) == 0 &&
	    git_reference_peel(&obj, r, GIT_OBJECT_COMMIT) == 0) {
		git_oid_cpy(oid, git_object_id(obj));
		rc = 0;
	}
	git_object_free(obj);
	git_reference_free(r);
	return rc;
}

/* name as a tag, a 'v'-prefixed tag, or a hex prefix; 1: not found. */
static int
lookup_name(git_repository *repo, const char *name, git_oid *oid)
{
	char refs[2][GITREPO_REF_MAX];
	int hex = gitrepo_name_refs(name, refs);

	for (size_t i = 0; i < 2; i++)
		if (refs[i][0] != '\0' && lookup_tag(repo, refs[i], oid) == 0)
			return 0;
	if (hex) {
		size_t len = strlen(name);
		git_commit *c = NULL;
		git_oid prefix;

		if (git_oid_fromstrn(&prefix, name, len) == 0 &&
		    git_commit_lookup_prefix(&c, repo, &prefix, len) == 0) {
			git_oid_cpy(oid, git_commit_id(c));
			git_commit_free(c);
			return 0;
		}
	}
	return 1;
}

int
gitrepo_resolve(struct gitrepo *g, const char *name, char id[41],
    struct err *e)
{
	git_oid oid;
	int rc = lookup_name(g->repo, name, &oid);

	if (rc == 1 && !g->fetched) {
		if (fetch_all(g, e) < 0)
			return -1;
		rc = lookup_name(g->repo, name, &oid);
	}
	if (rc != 0)
		return err_set(e, "'%s' is neither a tag nor a commit of '%s'",
		    name, g->url);
	git_oid_tostr(id, 41, &oid);
	return 0;
}

static int
fill_commit(git_commit *c, struct gitrepo_commit *out)
{
	const git_signature *a = git_commit_author(c);
	const char *summary = git_commit_summary(c);

	memset(out, 0, sizeof(*out));
	git_oid_tostr(out->id, sizeof(out->id), git_commit_id(c));
	out->subject = strdup(summary ? summary : "");
	out->author = strdup(a && a->name ? a->name : "");
	out->time = a ? (int64_t)a->when.time : 0;
	if (out->subject == NULL || out->author == NULL) {
		gitrepo_commit_release(out);
		return -1;
	}
	return 0;
}

static int
describe_oid(git_repository *repo, const git_oid *oid,
    struct gitrepo_commit *out, struct err *e)
{
	git_commit *c = NULL;
	int rc;

	if (git_commit_lookup(&c, repo, oid) < 0)
		return err_set(e, "no commit %s: %s", git_oid_tostr_s(oid),
		    git_msg());
	rc = fill_commit(c, out) < 0 ? err_set(e, "out of memory") : 0;
	git_commit_free(c);
	return rc;
}

int
gitrepo_describe(struct gitrepo *g, const char *id,
    struct gitrepo_commit *out, struct err *e)
{
	git_oid oid;

	memset(out, 0, sizeof(*out));
	if (!gitrepo_is_id(id) || git_oid_fromstr(&oid, id) < 0)
		return err_set(e, "'%s' is not a commit id", id);
	return describe_oid(g->repo, &oid, out, e);
}

void
gitrepo_commit_release(struct gitrepo_commit *c)
{
	free(c->subject);
	free(c->author);
	c->subject = c->author = NULL;
}

void
gitrepo_commits_release(struct gitrepo_commits *c)
{
	for (size_t i = 0; i < c->n; i++)
		gitrepo_commit_release(&c->v[i]);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

static int
push_commit(git_repository *repo, const git_oid *oid, size_t *alloc,
    struct gitrepo_commits *out, struct err *e)
{
	if (out->n == *alloc) {
		size_t na = *alloc ? *alloc * 2 : 64;
		struct gitrepo_commit *v = realloc(out->v, na * sizeof(*v));

		if (v == NULL)
			return err_set(e, "out of memory");
		out->v = v;
		*alloc = na;
	}
	if (describe_oid(repo, oid, &out->v[out->n], e) < 0)
		return -1;
	out->n++;
	return 0;
}

int
gitrepo_walk(struct gitrepo *g, const char *good, const char *bad,
    int first_parent, struct gitrepo_commits *out, struct err *e)
{
	git_revwalk *w = NULL;
	git_oid og, ob, oid;
	size_t alloc = 0;
	int rc = -1, walked;

	out->v = NULL;
	out->n = 0;
	if (!gitrepo_is_id(good) || !gitrepo_is_id(bad) ||
	    git_oid_fromstr(&og, good) < 0 || git_oid_fromstr(&ob, bad) < 0)
		return err_set(e, "expected two commit ids");
	if (git_graph_descendant_of(g->repo, &ob, &og) != 1)
		return err_set(e, "%.12s is not an ancestor of %.12s: the "
		    "range must go from an older commit to a newer one", good,
		    bad);
	if (git_revwalk_new(&w, g->repo) < 0 ||
	    git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE) <
	    0 || git_revwalk_push(w, &ob) < 0 || git_revwalk_hide(w, &og) < 0 ||
	    (first_parent && git_revwalk_simplify_first_parent(w) < 0)) {
		err_set(e, "cannot walk %.12s..%.12s: %s", good, bad,
		    git_msg());
		goto done;
	}
	if (push_commit(g->repo, &og, &alloc, out, e) < 0)
		goto done;
	while ((walked = git_revwalk_next(&oid, w)) == 0) {
		if (out->n >= GITREPO_MAX_COMMITS) {
			err_set(e, "more than %d commits between %.12s and "
			    "%.12s", GITREPO_MAX_COMMITS, good, bad);
			goto done;
		}
		if (push_commit(g->repo, &oid, &alloc, out, e) < 0)
			goto done;
	}
	if (walked != GIT_ITEROVER) {
		err_set(e, "cannot walk %.12s..%.12s: %s", good, bad,
		    git_msg());
		goto done;
	}
	rc = 0;
done:
	git_revwalk_free(w);
	if (rc < 0)
		gitrepo_commits_release(out);
	return rc;
}

int
gitrepo_checkout(struct gitrepo *g, const char *id, const char *dir,
    struct err *e)
{
	git_checkout_options co;
	git_commit *c = NULL;
	git_tree *tree = NULL;
	git_oid oid;
	int rc = 0;

	if (!gitrepo_is_id(id) || git_oid_fromstr(&oid, id) < 0)
		return err_set(e, "'%s' is not a commit id", id);
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE |
	    GIT_CHECKOUT_DONT_UPDATE_INDEX;
	co.target_directory = dir;
	if (git_commit_lookup(&c, g->repo, &oid) < 0 ||
	    git_commit_tree(&tree, c) < 0 ||
	    git_checkout_tree(g->repo, (git_object *)tree, &co) < 0)
		rc = err_set(e, "cannot check %.12s out into '%s': %s", id, dir,
		    git_msg());
	git_tree_free(tree);
	git_commit_free(c);
	return rc;
}

int
gitrepo_github_link(const char *url, const char *id, char *buf, size_t len)
{
	static const char *const prefixes[] = { "https://github.com/",
	    "http://github.com/", "git@github.com:", "ssh://git@github.com/" };
	const char *rest = NULL, *slash;
	size_t n;

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (strncmp(url, prefixes[i], strlen(prefixes[i])) == 0)
			rest = url + strlen(prefixes[i]);
	if (rest == NULL || !gitrepo_is_id(id))
		return -1;
	n = strlen(rest);
	while (n > 0 && rest[n - 1] == '/')
		n--;
	if (n > 4 && strncmp(rest + n - 4, ".git", 4) == 0)
		n -= 4;
	/* OWNER/REPO, nothing more, and nothing a URL would read apart. */
	slash = n ? memchr(rest, '/', n) : NULL;
	if (slash == NULL || slash == rest || slash + 1 == rest + n ||
	    memchr(slash + 1, '/', (size_t)(rest + n - slash - 1)) != NULL ||
	    strspn(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_./") < n || rest[0] == '.' || slash[1] == '.')
		return -1;
	if (snprintf(buf, len, "https://github.com/%.*s/commit/%s", (int)n,
	    rest, id) >= (int)len)
		return -1;
	return 0;
}
