/*
 * test_gitsrc.c: the git: release source (fetch/gitsrc.c) on real
 * repositories made here with the git command: a working repository
 * opened directly, a bare clone asked through a file:// remote, tag
 * filtering, the leading 'v', asset expansion, and errors; a remote
 * on the loopback test server that advertises tags git would never make.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config/conf.h"
#include "common/err.h"
#include "fetch/source.h"
#include "fetch/source_impl.h"
#include "fetch/version.h"
#include "testserver.h"

#define OID	"7e68cf6baed899444f50b064a760fdab894586b5"

static char eng_name[] = "basert";

static void
engine(struct conf_engine *eng, char *src, char *asset, char *pattern)
{
	memset(eng, 0, sizeof(*eng));
	eng->name = eng_name;
	eng->source = SOURCE_GIT;
	eng->source_arg = src;
	eng->asset = asset;
	eng->tag_pattern = pattern;
}

static int
by_version(const void *a, const void *b)
{
	return version_cmp(((const struct release_info *)a)->version,
	    ((const struct release_info *)b)->version);
}

/* List, sort by version, and compare "version url asset" lines. */
static void
check_list(struct conf_engine *eng, const char *want)
{
	struct release_list l = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;
	char got[4096];
	size_t o = 0;
	int rc = source_list_git(eng, NULL, &l, &e);

	if (rc != 0)
		fprintf(stderr, "%s\n", e.msg);
	CHECK_INT(rc, 0);
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(l.v[0]), by_version);
	got[0] = '\0';
	for (size_t i = 0; i < l.n; i++) {
		o += (size_t)snprintf(got + o, sizeof(got) - o, "%s %s %s\n",
		    l.v[i].version, l.v[i].url ? l.v[i].url : "-",
		    l.v[i].asset ? l.v[i].asset : "-");
		CHECK(l.v[i].sha256 == NULL);
	}
	CHECK_STR(got, want);
	release_list_release(&l);
}

static void
make_repos(void)
{
	CHECK_INT(check_run(
	    "export GIT_CONFIG_NOSYSTEM=1 HOME=$PWD && "
	    "git init -q work && cd work && "
	    "git config user.name t && git config user.email t@example.org && "
	    "echo 1 > f && git add f && git commit -q -m one && "
	    "git tag v0.1.0 && "
	    "echo 2 > f && git commit -q -am two && "
	    "git tag -a v0.2.0 -m 'release 0.2.0' && "
	    "echo 3 > f && git commit -q -am three && "
	    "git tag 0.10.0 && git tag nightly && git tag version-9 && "
	    "git branch feature-1.0.0 && "
	    "cd .. && git clone -q --bare work bare.git", NULL), 0);
}

static void
test_local(const char *root)
{
	struct conf_engine eng;
	char src[PATH_MAX], want[4 * PATH_MAX];
	char url_asset[] = "https://example.org/dl/{tag}/basert-{version}.tgz";
	char rel_asset[] = "dist/basert-{version}.tar.gz";
	char all[] = "*", dotted[] = "*.*.*", vtags[] = "v*";

	snprintf(src, sizeof(src), "%s/work", root);
	engine(&eng, src, url_asset, dotted);
	check_list(&eng,
	    "0.1.0 https://example.org/dl/v0.1.0/basert-0.1.0.tgz "
	    "basert-0.1.0.tgz\n"
	    "0.2.0 https://example.org/dl/v0.2.0/basert-0.2.0.tgz "
	    "basert-0.2.0.tgz\n"
	    "0.10.0 https://example.org/dl/0.10.0/basert-0.10.0.tgz "
	    "basert-0.10.0.tgz\n");

	engine(&eng, src, NULL, all);
	check_list(&eng, "0.1.0 - -\n0.2.0 - -\n0.10.0 - -\n"
	    "nightly - -\nversion-9 - -\n");
	engine(&eng, src, NULL, vtags);
	check_list(&eng, "0.1.0 - -\n0.2.0 - -\nversion-9 - -\n");
	engine(&eng, src, NULL, NULL);	/* no pattern: every tag */
	check_list(&eng, "0.1.0 - -\n0.2.0 - -\n0.10.0 - -\n"
	    "nightly - -\nversion-9 - -\n");

	/* A relative asset lies below the local repository. */
	engine(&eng, src, rel_asset, vtags);
	snprintf(want, sizeof(want),
	    "0.1.0 %s/dist/basert-0.1.0.tar.gz basert-0.1.0.tar.gz\n"
	    "0.2.0 %s/dist/basert-0.2.0.tar.gz basert-0.2.0.tar.gz\n"
	    "version-9 %s/dist/basert-version-9.tar.gz "
	    "basert-version-9.tar.gz\n", src, src, src);
	check_list(&eng, want);

	/* A bare repository opens the same way. */
	snprintf(src, sizeof(src), "%s/bare.git", root);
	engine(&eng, src, NULL, dotted);
	check_list(&eng, "0.1.0 - -\n0.2.0 - -\n0.10.0 - -\n");
}

static void
test_remote(const char *root)
{
	struct conf_engine eng;
	struct release_list l = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;
	char src[PATH_MAX + 16];
	char url_asset[] = "https://example.org/{tag}/b-{version}.zip?raw=1";
	char rel_asset[] = "b-{version}.zip";
	char dotted[] = "*.*.*";

	/* git_remote_ls over file://: the annotated v0.2.0 is listed once
	 * although the remote also advertises its peeled ^{} form. */
	snprintf(src, sizeof(src), "file://%s/bare.git", root);
	engine(&eng, src, url_asset, dotted);
	check_list(&eng,
	    "0.1.0 https://example.org/v0.1.0/b-0.1.0.zip?raw=1 b-0.1.0.zip\n"
	    "0.2.0 https://example.org/v0.2.0/b-0.2.0.zip?raw=1 b-0.2.0.zip\n"
	    "0.10.0 https://example.org/0.10.0/b-0.10.0.zip?raw=1 "
	    "b-0.10.0.zip\n");

	engine(&eng, src, rel_asset, dotted);
	CHECK_INT(source_list_git(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "engine 'basert'");
	CHECK_CONTAINS(e.msg, "neither a URL nor an absolute path");

	snprintf(src, sizeof(src), "file://%s/nothing-here.git", root);
	engine(&eng, src, url_asset, dotted);
	CHECK_INT(source_list_git(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "cannot list tags of");
	CHECK_CONTAINS(e.msg, "nothing-here.git");
	CHECK_INT(l.n, 0);
}

/*
 * A tag that is not UTF-8 (one ending in byte 0xff) is listed as
 * refused, its version written out, and the other tags as usual: JSON,
 * /metrics and the status page could not carry it.
 */
static void
test_not_utf8(const char *root)
{
	struct conf_engine eng;
	struct release_list l = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;
	char src[PATH_MAX], all[] = "*";
	int refused = 0, fine = 0;

	CHECK_INT(check_run(
	    "export GIT_CONFIG_NOSYSTEM=1 HOME=$PWD && "
	    "git init -q odd && cd odd && "
	    "git config user.name t && git config user.email t@example.org && "
	    "echo 1 > f && git add f && git commit -q -m one && "
	    "git tag 1.0.0 && git tag \"$(printf '1.0.1\\377')\" && "
	    "git tag \"$(printf '1.0.2\\303\\251')\"", NULL), 0);
	snprintf(src, sizeof(src), "%s/odd", root);
	engine(&eng, src, NULL, all);
	CHECK_INT(source_list_git(&eng, NULL, &l, &e), 0);
	CHECK_INT(l.n, 3);
	for (size_t i = 0; i < l.n; i++) {
		const struct release_info *r = &l.v[i];

		if (r->refused) {
			refused++;
			CHECK_STR(r->refused, "version is not valid UTF-8");
			CHECK_STR(r->version, "1.0.1\\xff");
		} else {
			fine++;
			CHECK(strcmp(r->version, "1.0.0") == 0 ||
			    strcmp(r->version, "1.0.2\xc3\xa9") == 0);
		}
	}
	CHECK_INT(refused, 1);
	CHECK_INT(fine, 2);
	release_list_release(&l);
}

/*
 * A remote advertises whatever names it likes, and git_remote_ls()
 * passes them on.  Tags git would not make are listed as refused, with
 * no URL, the others as usual: "../../../../tmp/evil" used to become a
 * release whose archive path left the asset's folder.  A tag holding
 * "{version}" is put in once, no longer expanded again.
 */
static void
test_hostile_remote(void)
{
	static const char *const refused[] = {
		"../../../../tmp/evil", "a..b", "/lead", ".hidden", "sp ace",
		"x:y", "rc.lock", "trail/",
	};
	struct testserver ts;
	struct conf_engine eng;
	struct release_list l = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;
	const struct release_info *r;
	char src[128], refs[4096], asset[] = "/srv/rel/{tag}/b-{version}.tgz";
	char url_asset[] = "https://example.org/dl/{tag}/b-{version}.tgz";
	size_t o;

	o = (size_t)snprintf(refs, sizeof(refs), "%s refs/tags/v1.0.0\n"
	    "%s refs/tags/v1.1{version}\n%s refs/tags/x\001y\n", OID, OID,
	    OID);
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++)
		o += (size_t)snprintf(refs + o, sizeof(refs) - o,
		    "%s refs/tags/%s\n", OID, refused[i]);
	CHECK_INT(check_run("mkdir -p srv", NULL), 0);
	check_write_file("srv/hostile", refs);
	if (testserver_start("srv", &ts) < 0) {
		CHECK(0);
		return;
	}
	snprintf(src, sizeof(src), "%s/git/hostile", ts.base);
	engine(&eng, src, asset, NULL);
	CHECK_INT(source_list_git(&eng, NULL, &l, &e), 0);
	CHECK_STR(e.msg, "");
	CHECK_INT(l.n, 11);
	if ((r = check_listed(&l, "1.0.0")) != NULL) {
		CHECK(r->refused == NULL);
		CHECK_STR(r->url, "/srv/rel/v1.0.0/b-1.0.0.tgz");
	} else
		CHECK(!"1.0.0 listed");
	if ((r = check_listed(&l, "1.1{version}")) != NULL) {
		CHECK(r->refused == NULL);
		CHECK_STR(r->url, "/srv/rel/v1.1{version}/b-1.1{version}.tgz");
	} else
		CHECK(!"1.1{version} listed");
	if ((r = check_listed(&l, "x\\x01y")) != NULL)
		CHECK_STR(r->refused, "version holds a control byte");
	else
		CHECK(!"x\\x01y listed");
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		if ((r = check_listed(&l, refused[i])) == NULL) {
			CHECK_STR(refused[i], "listed");
			continue;
		}
		CHECK_STR(r->refused ? r->refused : "taken",
		    "not a valid git tag name");
		CHECK(r->url == NULL && r->asset == NULL);
	}
	release_list_release(&l);

	/* In a URL a tag is data: '#', '%', '{' and UTF-8 percent-encoded,
	 * never a fragment or an escape of their own. */
	snprintf(refs, sizeof(refs), "%s refs/tags/v1.0#frag\n"
	    "%s refs/tags/v1.0%%2F\n%s refs/tags/v1.1{version}\n"
	    "%s refs/tags/v1.2-\xc3\xa9\n", OID, OID, OID, OID);
	check_write_file("srv/hostile", refs);
	engine(&eng, src, url_asset, NULL);
	memset(&e, 0, sizeof(e));
	CHECK_INT(source_list_git(&eng, NULL, &l, &e), 0);
	CHECK_STR(e.msg, "");
	CHECK_INT(l.n, 4);
	if ((r = check_listed(&l, "1.0#frag")) != NULL) {
		CHECK_STR(r->url, "https://example.org/dl/v1.0%23frag/"
		    "b-1.0%23frag.tgz");
		CHECK_STR(r->asset, "b-1.0%23frag.tgz");
	} else
		CHECK(!"1.0#frag listed");
	if ((r = check_listed(&l, "1.0%2F")) != NULL)
		CHECK_STR(r->url, "https://example.org/dl/v1.0%252F/"
		    "b-1.0%252F.tgz");
	else
		CHECK(!"1.0%2F listed");
	if ((r = check_listed(&l, "1.1{version}")) != NULL)
		CHECK_STR(r->url, "https://example.org/dl/v1.1%7Bversion%7D/"
		    "b-1.1%7Bversion%7D.tgz");
	else
		CHECK(!"1.1{version} listed");
	if ((r = check_listed(&l, "1.2-\xc3\xa9")) != NULL)
		CHECK_STR(r->url, "https://example.org/dl/v1.2-%C3%A9/"
		    "b-1.2-%C3%A9.tgz");
	else
		CHECK(!"1.2-\xc3\xa9 listed");
	release_list_release(&l);
	testserver_stop(&ts);
}

static void
test_local_errors(const char *root)
{
	struct conf_engine eng;
	struct release_list l = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;
	char src[PATH_MAX + 16], dotted[] = "*.*.*";

	snprintf(src, sizeof(src), "%s/missing", root);
	engine(&eng, src, NULL, dotted);
	CHECK_INT(source_list_git(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "cannot open git repository");
	CHECK_CONTAINS(e.msg, src);

	/* Inside a repository but not its top: no search upwards. */
	CHECK_INT(check_run("mkdir -p work/sub", NULL), 0);
	snprintf(src, sizeof(src), "%s/work/sub", root);
	engine(&eng, src, NULL, dotted);
	CHECK_INT(source_list_git(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "cannot open git repository");
	CHECK_INT(l.n, 0);
}

int
main(void)
{
	const char *root = check_tmpdir("gitsrc");

	make_repos();
	test_local(root);
	test_remote(root);
	test_local_errors(root);
	test_not_utf8(root);
	test_hostile_remote();
	return check_done();
}
