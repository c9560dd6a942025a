/*
 * fuzz_git.c: upstream names of a git repository before any of them is
 * looked up or fetched: what a listed tag becomes (fetch/gitsrc.c), the
 * references a range's end is looked up as, the commit id check and the
 * GitHub link of a commit (fetch/gitrepo.c); libgit2 lists nothing here
 * and no repository is opened.  The input's lines are the engine's asset
 * pattern (empty: none), its tag-pattern (empty: none), "remote" when
 * the tags come from a remote, and a repository URL; the rest is names
 * split at NUL bytes, each taken as a tag, a name to resolve and a
 * commit id.
 *
 * Properties: a tag taken is one git would take, so never holds "..",
 * "//", a control byte or a component starting with '.', nor starts or
 * ends with '/'; its version is the tag less a 'v' before a digit, valid
 * UTF-8; its URL is the pattern with {tag} and {version} put in once
 * each, below the repository when relative, and with a printable pattern
 * printable and without a ".." component the pattern did not have; its
 * asset is the URL's last component.  A refused tag has a reason, a
 * printable version and no URL.  The references a name is looked up as
 * are "refs/tags/NAME" and "refs/tags/vNAME" and follow git's rules; a
 * commit id is 40 lowercase hex digits; a link is
 * https://github.com/OWNER/REPO/commit/ID with nothing a URL or a page
 * reads apart.
 */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "common/err.h"
#include "common/utf8.h"
#include "config/conf.h"
#include "fetch/gitrepo.h"
#include "fetch/release_list.h"
#include "fetch/source_impl.h"
#include "fuzz.h"

#define SRC	"/srv/engine"
#define ID	"0123456789abcdef0123456789abcdef01234567"

/* s is UTF-8 without a control byte, as release_list.h promises of a
 * version (C1 controls are written out where text is shown). */
static int
printable(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	uint32_t cp;

	for (size_t i = 0, k; i < n; i += k)
		if (p[i] < 0x20 || p[i] == 0x7f ||
		    (k = utf8_decode(p + i, n - i, &cp)) == 0)
			return 0;
	return 1;
}

/* Whether a '/'-separated component of s is "..". */
static int
has_dotdot(const char *s)
{
	for (const char *p = s; ; p++) {
		if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0'))
			return 1;
		if ((p = strchr(p, '/')) == NULL)
			return 0;
	}
}

/* Why git would not take name as (the end of) a reference, or NULL. */
static const char *
git_refusal(const char *name)
{
	size_t n = strlen(name);

	if (n == 0)
		return "empty";
	if (strstr(name, "..") != NULL)
		return "\"..\"";
	if (strstr(name, "//") != NULL || name[0] == '/' || name[n - 1] == '/')
		return "an empty component";
	if (name[0] == '.' || strstr(name, "/.") != NULL)
		return "a component starting with '.'";
	if (strstr(name, "@{") != NULL)
		return "\"@{\"";
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f ||
		    strchr(" ~^:?*[\\", name[i]) != NULL)
			return "a control byte or one of \" ~^:?*[\\\"";
	return NULL;
}

/* s as it stands in a URL: every byte but A-Z a-z 0-9 - . _ ~ as %XX. */
static char *
put_encoded(char *o, const char *s)
{
	for (; *s; s++)
		if (isalnum((unsigned char)*s) && (unsigned char)*s < 0x80)
			*o++ = *s;
		else if (strchr("-._~", *s))
			*o++ = *s;
		else
			o += sprintf(o, "%%%02X", (unsigned char)*s);
	return o;
}

/* pattern with {tag} and {version} put in, in one pass; percent-encoded
 * in a URL. */
static char *
expand(const char *pattern, const char *tag, const char *version)
{
	int url = strstr(pattern, "://") != NULL;
	size_t len = 1;
	char *out, *o;

	for (const char *p = pattern; *p; p++)
		len += 3 * (strlen(tag) + strlen(version)) + 1;
	if ((out = malloc(len)) == NULL)
		abort();
	for (o = out; *pattern; ) {
		if (strncmp(pattern, "{tag}", 5) == 0) {
			o = url ? put_encoded(o, tag) : stpcpy(o, tag);
			pattern += 5;
		} else if (strncmp(pattern, "{version}", 9) == 0) {
			o = url ? put_encoded(o, version) : stpcpy(o, version);
			pattern += 9;
		} else
			*o++ = *pattern++;
	}
	*o = '\0';
	return out;
}

/* How many of c stand in s. */
static size_t
count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

/* The pattern with the item as both tag and version. */
static void
check_expand(const char *pattern, const char *tag)
{
	char *got = url_expand(pattern, tag, tag),
	    *want = expand(pattern, tag, tag);

	if (got == NULL || strcmp(got, want) != 0)
		fuzz_fail("'%s' with '%s' expands to '%s', not '%s'",
		    pattern, tag, got ? got : "(null)", want);
	free(got);
	free(want);
}

static void
check_release(const struct conf_engine *eng, int remote, const char *tag,
    const struct release_info *r)
{
	const char *version = tag, *slash;
	char *want, *url;
	size_t n;

	if (r->refused != NULL) {
		if (r->refused[0] == '\0' || r->version == NULL ||
		    !printable(r->version))
			fuzz_fail("tag '%s' refused without a reason or a "
			    "printable version", tag);
		if (r->url != NULL || r->asset != NULL)
			fuzz_fail("refused tag '%s' has URL '%s'", tag,
			    r->url ? r->url : "(null)");
		return;
	}
	if (git_refusal(tag) != NULL)
		fuzz_fail("tag '%s' taken with %s", tag, git_refusal(tag));
	if (tag[0] == 'v' && tag[1] >= '0' && tag[1] <= '9')
		version++;
	if (r->version == NULL || strcmp(r->version, version) != 0 ||
	    !printable(r->version))
		fuzz_fail("tag '%s' taken as version '%s'", tag,
		    r->version ? r->version : "(null)");
	if (eng->asset == NULL) {
		if (r->url != NULL || r->asset != NULL)
			fuzz_fail("tag '%s' has a URL without an asset", tag);
		return;
	}
	want = expand(eng->asset, tag, version);
	if (want[0] == '/' || strstr(want, "://") != NULL)
		url = strdup(want);
	else if (remote)
		fuzz_fail("tag '%s' of a remote taken with relative URL '%s'",
		    tag, want);
	else if (asprintf(&url, "%s/%s", SRC, want) < 0)
		url = NULL;
	if (url == NULL)
		abort();
	if (r->url == NULL || strcmp(r->url, url) != 0)
		fuzz_fail("tag '%s' has URL '%s', not '%s'", tag,
		    r->url ? r->url : "(null)", url);
	slash = strrchr(url, '/');
	slash = slash ? slash + 1 : url;
	n = strcspn(slash, "?#");
	if (r->asset == NULL || strlen(r->asset) != n ||
	    strncmp(r->asset, slash, n) != 0)
		fuzz_fail("tag '%s' has asset '%s' of URL '%s'", tag,
		    r->asset ? r->asset : "(null)", url);
	if (printable(eng->asset) && (!printable(r->url) ||
	    !printable(r->asset)))
		fuzz_fail("tag '%s' makes URL '%s' unprintable", tag, r->url);
	/* A tag is data in a URL: no fragment, query or path of its own. */
	if (strstr(eng->asset, "://") != NULL && (count_char(r->url, '#') !=
	    count_char(eng->asset, '#') || count_char(r->url, '?') !=
	    count_char(eng->asset, '?') || count_char(r->url, '/') !=
	    count_char(eng->asset, '/')))
		fuzz_fail("tag '%s' changes the shape of URL '%s'", tag,
		    r->url);
	if (strstr(eng->asset, "..") == NULL && has_dotdot(r->url))
		fuzz_fail("tag '%s' makes URL '%s' leave its folder", tag,
		    r->url);
	free(url);
	free(want);
}

static void
check_tag(const struct conf_engine *eng, int remote, const char *tag)
{
	struct release_list out = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;
	int matches = fnmatch(eng->tag_pattern ? eng->tag_pattern : "*", tag,
	    0) == 0;

	if (gitsrc_add_tag(eng, remote, tag, &out, &e) < 0) {
		const char *version = tag;
		char *want;

		if (tag[0] == 'v' && tag[1] >= '0' && tag[1] <= '9')
			version++;
		if (!matches || !remote || eng->asset == NULL)
			fuzz_fail("tag '%s' failed: %s", tag, e.msg);
		want = expand(eng->asset, tag, version);
		if (want[0] == '/' || strstr(want, "://"))
			fuzz_fail("tag '%s' failed: %s", tag, e.msg);
		if (strstr(e.msg, "engine 'fuzz'") == NULL)
			fuzz_fail("failure '%s' does not name the engine",
			    e.msg);
		free(want);
	} else if (out.n != (size_t)matches)
		fuzz_fail("tag '%s' %s the pattern, %zu releases", tag,
		    matches ? "matches" : "does not match", out.n);
	else if (out.n == 1)
		check_release(eng, remote, tag, &out.v[0]);
	release_list_release(&out);
}

static void
check_name(const char *name)
{
	char refs[2][GITREPO_REF_MAX], want[2][GITREPO_REF_MAX + 16];
	size_t n = strlen(name);

	snprintf(want[0], sizeof(want[0]), "refs/tags/%s", name);
	snprintf(want[1], sizeof(want[1]), "refs/tags/v%s", name);
	if (gitrepo_name_refs(name, refs) != (n >= 7 && n <= 40 &&
	    strspn(name, "0123456789abcdefABCDEF") == n))
		fuzz_fail("'%s' taken or not taken as a commit id", name);
	for (int i = 0; i < 2; i++) {
		if (refs[i][0] == '\0')
			continue;
		if (strcmp(refs[i], want[i]) != 0)
			fuzz_fail("'%s' looked up as '%s'", name, refs[i]);
		if (git_refusal(refs[i]) != NULL)
			fuzz_fail("'%s' looked up with %s", refs[i],
			    git_refusal(refs[i]));
	}
	if (gitrepo_is_id(name) != (n == 40 &&
	    strspn(name, "0123456789abcdef") == 40))
		fuzz_fail("'%s' taken or not taken as a full commit id", name);
}

static void
check_link(const char *url, const char *id)
{
	static const char *const prefixes[] = { "https://github.com/",
	    "http://github.com/", "git@github.com:", "ssh://git@github.com/" };
	char buf[256], small[48];
	const char *path, *slash, *commit;
	size_t i;

	if (gitrepo_github_link(url, id, buf, sizeof(buf)) < 0)
		return;
	for (i = 0; i < 4; i++)
		if (strncmp(url, prefixes[i], strlen(prefixes[i])) == 0)
			break;
	if (i == 4 || !gitrepo_is_id(id))
		fuzz_fail("link '%s' of '%s' and '%s'", buf, url, id);
	if (strncmp(buf, "https://github.com/", 19) != 0)
		fuzz_fail("link '%s' is not on https://github.com/", buf);
	path = buf + 19;
	slash = strchr(path, '/');
	commit = slash ? strchr(slash + 1, '/') : NULL;
	if (slash == NULL || slash == path || commit == NULL ||
	    commit == slash + 1 || path[0] == '.' || slash[1] == '.' ||
	    strncmp(commit, "/commit/", 8) != 0 || strcmp(commit + 8, id) != 0)
		fuzz_fail("link '%s' is not OWNER/REPO/commit/ID", buf);
	if (strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_./") != strlen(path))
		fuzz_fail("link '%s' holds a byte a URL or a page reads apart",
		    buf);
	if (gitrepo_github_link(url, id, small, sizeof(small)) == 0 &&
	    strcmp(small, buf) != 0)
		fuzz_fail("link '%s' cut to '%s'", buf, small);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int started;
	static char name[] = "fuzz", src[] = SRC;
	const uint8_t *p = data, *end = data + size;
	char *asset = fuzz_line(&p, end), *pattern = fuzz_line(&p, end),
	    *where = fuzz_line(&p, end), *url = fuzz_line(&p, end);
	int remote = strcmp(where, "remote") == 0;
	struct conf_engine eng;

	if (!started && git_libgit2_init() >= 0)
		started = 1;
	memset(&eng, 0, sizeof(eng));
	eng.name = name;
	eng.source = SOURCE_GIT;
	eng.source_arg = src;
	eng.asset = asset[0] ? asset : NULL;
	eng.tag_pattern = pattern[0] ? pattern : NULL;
	check_link(url, ID);
	while (p < end) {
		const uint8_t *nul = memchr(p, '\0', (size_t)(end - p));
		char *item = fuzz_strndup(p, (size_t)((nul ? nul : end) - p));

		p = nul ? nul + 1 : end;
		check_expand(asset, item);
		check_tag(&eng, remote, item);
		check_name(item);
		check_link(url, item);
		free(item);
	}
	free(asset);
	free(pattern);
	free(where);
	free(url);
	return 0;
}
