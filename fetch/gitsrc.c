/*
 * gitsrc.c: the git:PATH-OR-URL release source.  Tags are listed with
 * libgit2 (a local repository is opened; a remote is asked with
 * git_remote_ls, nothing cloned or fetched), kept when they match the
 * engine's tag-pattern (an fnmatch glob over the whole tag name), and
 * each becomes a release, or is listed as refused, with nothing made of
 * it, when its version cannot name a release (release_version_refusal())
 * or git would not take it as a tag name ("..", a leading '/', a
 * component starting with '.', a control byte...), which a remote may
 * still advertise:
 *
 *	version	the tag, without a leading 'v' when a digit follows it
 *		("v0.2.0" -> "0.2.0"; "version-1" stays as it is);
 *	url	the asset pattern with {version} and {tag} (the tag as
 *		written, for URLs such as .../releases/download/{tag}/...)
 *		replaced, in one pass.  A URL ("scheme://...") or an
 *		absolute path is kept as it is; a relative one is taken
 *		below a local repository's folder and refused for a
 *		remote.  Without an asset, url and asset are NULL (the
 *		release can only be built from source);
 *	asset	the last path component of url.
 */
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "config/conf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "release_list.h"
#include "source_impl.h"
#include "common/strv.h"

#define TAG_PREFIX	"refs/tags/"

static const char *
git_msg(void)
{
	const git_error *g = git_error_last();

	return g && g->message ? g->message : "unknown libgit2 error";
}

/* A URL (with a scheme) or scp-like "host:path"; anything else is a
 * local path. */
static int
is_remote(const char *s)
{
	const char *colon = strchr(s, ':');

	if (s[0] == '/' || colon == NULL)
		return 0;
	return strstr(s, "://") != NULL || strchr(s, '/') == NULL ||
	    colon < strchr(s, '/');
}

/* The archive URL for one tag, as the file comment says; *url malloced
 * or NULL when the engine has no asset. */
static int
archive_url(const struct conf_engine *eng, int remote, const char *tag,
    const char *version, char **url, struct err *e)
{
	char *expanded;

	*url = NULL;
	if (eng->asset == NULL)
		return 0;
	if ((expanded = url_expand(eng->asset, tag, version)) == NULL)
		return err_errno(e, "engine '%s': cannot expand asset", eng->name);
	if (expanded[0] == '/' || strstr(expanded, "://") != NULL) {
		*url = expanded;
		return 0;
	}
	if (remote) {
		err_set(e, "engine '%s': asset '%s' is neither a URL nor an "
		    "absolute path, which a git remote needs", eng->name,
		    eng->asset);
		free(expanded);
		return -1;
	}
	*url = fs_join(eng->source_arg, expanded);
	free(expanded);
	return *url ? 0 : err_errno(e, "engine '%s': cannot expand asset",
	    eng->name);
}

/* List version as refused, for why, and make nothing of it. */
static int
add_refused(const struct conf_engine *eng, const char *version,
    const char *why, struct release_list *out, struct err *e)
{
	struct release_info r;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	r.refused = (char *)(uintptr_t)why;
	if ((r.version = release_version_escape(version,
	    strlen(version))) == NULL || release_list_add(out, &r) < 0)
		rc = err_errno(e, "engine '%s': cannot list tags", eng->name);
	free(r.version);
	return rc;
}

int
gitsrc_add_tag(const struct conf_engine *eng, int remote, const char *tag,
    struct release_list *out, struct err *e)
{
	struct release_info r;
	const char *version = tag, *why;
	char ref[512];
	int rc = 0, valid = 0;

	if (fnmatch(eng->tag_pattern ? eng->tag_pattern : "*", tag, 0) != 0)
		return 0;
	if (tag[0] == 'v' && tag[1] >= '0' && tag[1] <= '9')
		version++;
	if ((why = release_version_refusal(version, strlen(version))) != NULL)
		return add_refused(eng, version, why, out, e);
	/*
	 * git never makes such a tag (check_refname_format), but a remote
	 * advertises whatever names it likes, and git_remote_ls() passes
	 * them on: "../../x" would lead the URL out of its folder.
	 */
	if (snprintf(ref, sizeof(ref), TAG_PREFIX "%s", tag) >=
	    (int)sizeof(ref) || git_reference_name_is_valid(&valid, ref) < 0 ||
	    !valid)
		return add_refused(eng, version, "not a valid git tag name",
		    out, e);
	memset(&r, 0, sizeof(r));
	if (archive_url(eng, remote, tag, version, &r.url, e) < 0)
		return -1;
	if (r.url != NULL) {
		const char *slash = strrchr(r.url, '/');

		r.asset = strndup(slash ? slash + 1 : r.url,
		    strcspn(slash ? slash + 1 : r.url, "?#"));
	}
	if ((r.version = strdup(version)) == NULL ||
	    (r.url != NULL && r.asset == NULL) || release_list_add(out, &r) < 0)
		rc = err_errno(e, "engine '%s': cannot list tags", eng->name);
	release_info_release(&r);
	return rc;
}

static int
list_local(const struct conf_engine *eng, struct strv *tags, struct err *e)
{
	git_repository *repo = NULL;
	git_strarray names = { NULL, 0 };
	int rc = 0;

	if (git_repository_open_ext(&repo, eng->source_arg,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		return err_set(e, "engine '%s': cannot open git repository "
		    "'%s': %s", eng->name, eng->source_arg, git_msg());
	if (git_tag_list(&names, repo) < 0)
		rc = err_set(e, "engine '%s': cannot list tags of '%s': %s",
		    eng->name, eng->source_arg, git_msg());
	for (size_t i = 0; rc == 0 && i < names.count; i++)
		if (strv_push(tags, names.strings[i]) < 0)
			rc = err_errno(e, "engine '%s': cannot list tags",
			    eng->name);
	git_strarray_dispose(&names);
	git_repository_free(repo);
	return rc;
}

static int
list_remote(const struct conf_engine *eng, struct strv *tags, struct err *e)
{
	git_remote *remote = NULL;
	git_remote_callbacks cb;
	const git_remote_head **heads;
	size_t n, plen = strlen(TAG_PREFIX);
	int rc = 0;

	git_remote_init_callbacks(&cb, GIT_REMOTE_CALLBACKS_VERSION);
	/* Detached: no repository, so no local configuration applies. */
	if (git_remote_create_detached(&remote, eng->source_arg) < 0)
		return err_set(e, "engine '%s': bad git remote '%s': %s",
		    eng->name, eng->source_arg, git_msg());
	if (git_remote_connect(remote, GIT_DIRECTION_FETCH, &cb, NULL,
	    NULL) < 0 || git_remote_ls(&heads, &n, remote) < 0) {
		rc = err_set(e, "engine '%s': cannot list tags of '%s': %s",
		    eng->name, eng->source_arg, git_msg());
		n = 0;
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const char *name = heads[i]->name;
		size_t len = strlen(name);

		/* "refs/tags/X^{}" is X peeled to its commit: listed once. */
		if (strncmp(name, TAG_PREFIX, plen) != 0 || len == plen ||
		    (len >= 3 && strcmp(name + len - 3, "^{}") == 0))
			continue;
		if (strv_push(tags, name + plen) < 0)
			rc = err_errno(e, "engine '%s': cannot list tags",
			    eng->name);
	}
	git_remote_disconnect(remote);
	git_remote_free(remote);
	return rc;
}

int
source_list_git(const struct conf_engine *eng, struct source_state *state,
    struct release_list *out, struct err *e)
{
	struct strv tags = STRV_INIT;
	int remote = is_remote(eng->source_arg);
	int rc;

	(void)state;

	if (git_libgit2_init() < 0)
		return err_set(e, "engine '%s': libgit2 failed to start: %s",
		    eng->name, git_msg());
	rc = remote ? list_remote(eng, &tags, e) : list_local(eng, &tags, e);
	for (size_t i = 0; rc == 0 && i < tags.n; i++)
		rc = gitsrc_add_tag(eng, remote, tags.v[i], out, e);
	strv_clear(&tags);
	git_libgit2_shutdown();
	return rc;
}

const struct source_kind source_kind_git = { SOURCE_GIT, source_list_git };
