/*
 * test_github.c: the github: release source against the test server's
 * emulation of the list-releases API: pages, drafts and pre-releases,
 * assets and digests, ETags, tokens, rate limits, pages that are not
 * JSON, next links that leave the API, hostile tags.
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "check.h"
#include "config/conf.h"
#include "common/err.h"
#include "fetch/source.h"
#include "fetch/source_impl.h"
#include "testserver.h"

static struct testserver ts;
static char api[128];

#define HEX_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

/*
 * n releases v0.I.0 into srv/api/acme/REPO/releases.jsonl; release 5 is a
 * draft, 7 a pre-release, 9 has no linux asset; even ones carry a digest.
 */
static void
make_repo(const char *repo, int n)
{
	char dir[256], path[300];
	FILE *f;

	snprintf(dir, sizeof(dir), "srv/api/acme/%s", repo);
	snprintf(path, sizeof(path), "mkdir -p %s", dir);
	check_run(path, NULL);
	snprintf(path, sizeof(path), "%s/releases.jsonl", dir);
	if ((f = fopen(path, "w")) == NULL)
		abort();
	for (int i = 0; i < n; i++) {
		char linux_asset[512] = "";

		if (i != 9)
			snprintf(linux_asset, sizeof(linux_asset),
			    "{\"name\": \"basert-0.%d.0-linux.tar.gz\", "
			    "\"browser_download_url\": \"%s/files/basert-0.%d.0-"
			    "linux.tar.gz\", \"digest\": %s}, ", i, ts.base, i,
			    i % 2 == 0 ? "\"sha256:" HEX_A "\"" : "null");
		fprintf(f, "{\"id\": %d, \"tag_name\": \"v0.%d.0\", "
		    "\"draft\": %s, \"prerelease\": %s, \"assets\": [%s"
		    "{\"name\": \"basert-0.%d.0-macos.tar.gz\", "
		    "\"browser_download_url\": \"%s/files/mac\", "
		    "\"digest\": null}]}\n", i, i, i == 5 ? "true" : "false",
		    i == 7 ? "true" : "false", linux_asset, i, ts.base);
	}
	fclose(f);
}

static void
set_mode(const char *repo, const char *mode)
{
	char path[256];

	snprintf(path, sizeof(path), "srv/api/acme/%s/mode", repo);
	check_write_file(path, mode);
}

static char name[] = "basert";
static char linux_asset[] = "basert-{version}-linux.tar.gz";
static char token_env[] = "BISECTD_TEST_TOKEN";

static struct conf_engine
engine(const char *repo)
{
	static char arg[128];
	struct conf_engine eng;

	memset(&eng, 0, sizeof(eng));
	snprintf(arg, sizeof(arg), "acme/%s", repo);
	eng.name = name;
	eng.source = SOURCE_GITHUB;
	eng.source_arg = arg;
	eng.asset = linux_asset;
	eng.api = api;
	eng.allow_http = 1;
	return eng;
}

static void
test_pages(void)
{
	struct conf_engine eng = engine("basert");
	struct github_opts go = GITHUB_OPTS_INIT;
	struct release_list l = RELEASE_LIST_INIT;
	const struct release_info *r;
	struct err e = ERR_INIT;
	char want[256];

	/* 250 releases at 100 a page: three linked pages. */
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), 0);
	CHECK_INT(testserver_count(&ts, "GET /api/repos/acme/basert/releases"
	    "?per_page=100 ", "status=200", NULL), 1);
	CHECK_INT(testserver_count(&ts, "per_page=100&page=2 ", "status=200",
	    NULL), 1);
	CHECK_INT(testserver_count(&ts, "per_page=100&page=3 ", "status=200",
	    NULL), 1);
	CHECK_INT(testserver_count(&ts, "page=4", NULL), 0);
	/* Minus a draft, a pre-release and one without the asset. */
	CHECK_INT(l.n, 247);
	CHECK(check_listed(&l, "0.5.0") == NULL);
	CHECK(check_listed(&l, "0.7.0") == NULL);
	CHECK(check_listed(&l, "0.9.0") == NULL);
	CHECK((r = check_listed(&l, "0.0.0")) != NULL);
	if (r != NULL) {
		snprintf(want, sizeof(want),
		    "%s/files/basert-0.0.0-linux.tar.gz", ts.base);
		CHECK_STR(r->url, want);
		CHECK_STR(r->asset, "basert-0.0.0-linux.tar.gz");
		CHECK_STR(r->sha256, HEX_A);
		CHECK_STR(r->sha256_origin, "api-digest");
		CHECK_INT(r->prerelease, 0);
	}
	CHECK((r = check_listed(&l, "0.249.0")) != NULL);
	if (r != NULL) {
		CHECK(r->sha256 == NULL);
		CHECK(r->sha256_origin == NULL);
	}
	release_list_release(&l);

	/* Pre-releases when asked for. */
	eng.prereleases = 1;
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), 0);
	CHECK_INT(l.n, 248);
	CHECK((r = check_listed(&l, "0.7.0")) != NULL && r->prerelease == 1);
	release_list_release(&l);

	/* A page limit. */
	go.max_pages = 2;
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "more than 2 pages");
	CHECK_INT(l.n, 0);
}

static void
test_etag_and_token(void)
{
	struct conf_engine eng = engine("small");
	struct source_state st = { NULL, 0 };
	struct release_list l = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;
	char *etag;

	make_repo("small", 3);
	setenv("BISECTD_TEST_TOKEN", "tok123", 1);
	eng.token_env = token_env;
	CHECK_INT(source_list(&eng, &st, &l, &e), 0);
	CHECK_INT(st.not_modified, 0);
	CHECK_INT(l.n, 3);
	CHECK(st.etag != NULL && st.etag[0] == '"');
	CHECK_INT(testserver_count(&ts, "/acme/small/", "auth=Bearer+tok123",
	    NULL), 1);
	release_list_release(&l);

	/* Same ETag: 304, nothing listed, the stored list holds. */
	etag = strdup(st.etag);
	CHECK_INT(source_list(&eng, &st, &l, &e), 0);
	CHECK_INT(st.not_modified, 1);
	CHECK_INT(l.n, 0);
	CHECK_STR(st.etag, etag);
	{
		char inm[128];

		snprintf(inm, sizeof(inm), "inm=%s", etag);
		CHECK_INT(testserver_count(&ts, "/acme/small/", inm,
		    "status=304", NULL), 1);
	}

	/* The releases changed: a 200 and a new ETag. */
	make_repo("small", 4);
	CHECK_INT(source_list(&eng, &st, &l, &e), 0);
	CHECK_INT(st.not_modified, 0);
	CHECK_INT(l.n, 4);
	CHECK(st.etag != NULL && strcmp(st.etag, etag) != 0);
	release_list_release(&l);
	free(etag);
	free(st.etag);

	/* No token in the environment: no Authorization. */
	unsetenv("BISECTD_TEST_TOKEN");
	testserver_log_reset(&ts);
	CHECK_INT(source_list(&eng, NULL, &l, &e), 0);
	CHECK_INT(testserver_count(&ts, "/acme/small/", "auth=-", NULL), 1);
	release_list_release(&l);
}

static void
test_rate_limits(void)
{
	struct conf_engine eng;
	struct github_opts go = GITHUB_OPTS_INIT;
	struct release_list l = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;

	go.max_wait_s = 5;

	/* Reset an hour away: a clear failure at once, never a spin. */
	make_repo("far", 3);
	set_mode("far", "ratelimit403 3600\n");
	eng = engine("far");
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "GitHub API rate limit");
	CHECK_CONTAINS(e.msg, "resets at ");
	CHECK_CONTAINS(e.msg, " UTC, in ");
	CHECK_CONTAINS(e.msg, "API rate limit exceeded");
	CHECK_INT(l.n, 0);
	CHECK_INT(testserver_count(&ts, "/acme/far/", NULL), 1);

	/* Reset in a second: waited out, then the list. */
	make_repo("near", 3);
	set_mode("near", "ratelimit403-once 1\n");
	eng = engine("near");
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), 0);
	CHECK_INT(l.n, 3);
	CHECK_INT(testserver_count(&ts, "/acme/near/", "status=403", NULL), 1);
	CHECK_INT(testserver_count(&ts, "/acme/near/", "status=200", NULL), 1);
	release_list_release(&l);

	/* 429 with Retry-After: 1: waits, then succeeds. */
	make_repo("second", 3);
	set_mode("second", "ratelimit429-once 1\n");
	eng = engine("second");
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), 0);
	CHECK_INT(l.n, 3);
	CHECK_INT(testserver_count(&ts, "/acme/second/", "status=429", NULL),
	    1);
	release_list_release(&l);

	/* 429 asking for an hour: fails, once. */
	make_repo("slow429", 3);
	set_mode("slow429", "ratelimit429 3600\n");
	eng = engine("slow429");
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "retry after 3600 s");
	CHECK_INT(testserver_count(&ts, "/acme/slow429/", NULL), 1);
}

static void
test_bad_pages(void)
{
	struct conf_engine eng;
	struct github_opts go = GITHUB_OPTS_INIT;
	struct release_list l = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;
	char want[256];

	/* Not JSON: the URL and jansson's position. */
	make_repo("html", 3);
	set_mode("html", "notjson\n");
	eng = engine("html");
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), -1);
	snprintf(want, sizeof(want), "'%s/api/repos/acme/html/releases?per_page"
	    "=100' is not JSON (line 1, column ", ts.base);
	CHECK_CONTAINS(e.msg, want);
	CHECK_INT(l.n, 0);

	/* Only the second page broken: nothing is listed. */
	make_repo("html2", 150);
	set_mode("html2", "notjson 2\n");
	eng = engine("html2");
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "page=2' is not JSON");
	CHECK_INT(l.n, 0);

	/* A next link off the API's origin is not followed (the token
	 * would go with it). */
	make_repo("foreign", 150);
	set_mode("foreign", "foreignlink\n");
	eng = engine("foreign");
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "refusing next page 'http://localhost:");
	CHECK_INT(l.n, 0);

	/* No such repository. */
	eng = engine("nope");
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "answered HTTP 404: Not Found");

	/* Not OWNER/REPO: refused before any request. */
	eng = engine("x");
	snprintf(eng.source_arg, 128, "acme");
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "'acme' is not OWNER/REPO");
	snprintf(eng.source_arg, 128, "acme/../x");
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "is not OWNER/REPO");
	/* https only, unless allowed. */
	eng = engine("small");
	eng.allow_http = 0;
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "allow-http is off");
}

/*
 * Tags no release may have: a NUL ("\u0000", which jansson refuses by
 * default, failing the whole page), an escape sequence, "..".  Each is
 * listed as refused with its reason; the others are listed as usual, a
 * '/' in a tag included.
 */
static void
test_hostile_tags(void)
{
	static const char *const tags[] = {
		"v1.0.0", "1.1\\u0000evil", "1.2\\u001b[31m", "..",
		"release/1.3", "../../../../some/dir",
	};
	struct conf_engine eng = engine("hostile");
	struct github_opts go = GITHUB_OPTS_INIT;
	struct release_list l = RELEASE_LIST_INIT;
	const struct release_info *r;
	struct err e = ERR_INIT;
	FILE *f;

	check_run("mkdir -p srv/api/acme/hostile", NULL);
	if ((f = fopen("srv/api/acme/hostile/releases.jsonl", "w")) == NULL)
		abort();
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		fprintf(f, "{\"id\": %zu, \"tag_name\": \"%s\", \"draft\": "
		    "false, \"prerelease\": false, \"assets\": [{\"name\": "
		    "\"basert.tar.gz\", \"browser_download_url\": "
		    "\"%s/files/basert.tar.gz\"}]}\n", i, tags[i], ts.base);
	fclose(f);
	eng.asset = NULL;	/* the only asset */
	CHECK_INT(github_list(&eng, &go, NULL, &l, &e), 0);
	if (e.msg[0])
		fprintf(stderr, "%s\n", e.msg);
	CHECK_INT(l.n, 6);
	CHECK((r = check_listed(&l, "1.0.0")) != NULL && r->refused == NULL);
	CHECK((r = check_listed(&l, "release/1.3")) != NULL &&
	    r->refused == NULL);
	CHECK((r = check_listed(&l, "../../../../some/dir")) != NULL &&
	    r->refused == NULL);
	r = check_listed(&l, "1.1\\x00evil");
	CHECK(r != NULL);
	CHECK_STR(r ? r->refused : NULL, "version holds a NUL byte");
	r = check_listed(&l, "1.2\\x1b[31m");
	CHECK(r != NULL);
	CHECK_STR(r ? r->refused : NULL, "version holds a control byte");
	r = check_listed(&l, "..");
	CHECK(r != NULL);
	CHECK_STR(r ? r->refused : NULL, "version '.' or '..'");
	release_list_release(&l);
}

int
main(void)
{
	check_tmpdir("github");
	if (testserver_start("srv", &ts) < 0)
		return 1;
	snprintf(api, sizeof(api), "%s/api/", ts.base);
	make_repo("basert", 250);
	CHECK_CASE(test_pages);
	CHECK_CASE(test_etag_and_token);
	CHECK_CASE(test_rate_limits);
	CHECK_CASE(test_bad_pages);
	CHECK_CASE(test_hostile_tags);
	testserver_stop(&ts);
	return check_done();
}
