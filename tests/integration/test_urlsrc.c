/*
 * test_urlsrc.c: the url: release source with its SHA256SUMS files
 * against the test server, the SHA256SUMS reader on its own, and the
 * {version} asset patterns and release lists of source.c.
 */
#include <stdlib.h>

#include "check.h"
#include "config/conf.h"
#include "common/err.h"
#include "fetch/source.h"
#include "fetch/source_impl.h"
#include "common/strv.h"
#include "testserver.h"

static struct testserver ts;

#define HA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HB "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define HC "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

static void
check_match(const char *pattern, const char *name, const char *want)
{
	char *v = NULL;
	int m = asset_match(pattern, name, &v);

	if (want == NULL) {
		CHECK_INT(m, 0);
		CHECK(v == NULL);
	} else {
		CHECK_INT(m, 1);
		CHECK_STR(v, want);
	}
	free(v);
}

static void
test_asset_patterns(void)
{
	char *s;

	check_match("basert-{version}-linux.tar.gz",
	    "basert-0.2.10-linux.tar.gz", "0.2.10");
	check_match("x-{version}.tar.gz", "x-1.2.3.tar.gz", "1.2.3");
	check_match("llama-{version}", "llama-b1234", "b1234");
	check_match("e-{version}.zip", "e-1.0.0-rc1+build_7.zip",
	    "1.0.0-rc1+build_7");
	check_match("basert-{version}-linux.tar.gz",
	    "basert-0.2.1-macos.tar.gz", NULL);
	check_match("basert-{version}-linux.tar.gz", "basert--linux.tar.gz",
	    NULL);
	check_match("basert-{version}.tar.gz", "basert-0.2/1.tar.gz", NULL);
	check_match("basert-{version}.tar.gz", "basert-0.2.1.tar.gz.sig",
	    NULL);
	check_match("basert-{version}.tar.gz", "xbasert-0.2.1.tar.gz", NULL);
	/* Every {version} stands for the same text. */
	check_match("{version}/e-{version}.zip", "1.0/e-1.0.zip", "1.0");
	check_match("{version}/e-{version}.zip", "1.0/e-1.1.zip", NULL);
	/* Without {version}: a plain name, with no version to give. */
	CHECK_INT(asset_match("fixed.tar", "fixed.tar", NULL), 1);
	CHECK_INT(asset_match("fixed.tar", "other.tar", NULL), 0);
	CHECK_INT(asset_match("basert-{version}.tar", "basert-1.tar", NULL),
	    1);

	s = asset_expand("e-{version}/e-{version}.zip", "0.2.4");
	CHECK_STR(s, "e-0.2.4/e-0.2.4.zip");
	free(s);
	s = asset_expand("fixed.zip", "0.2.4");
	CHECK_STR(s, "fixed.zip");
	free(s);
	/* A place to fetch from: encoded in a URL, as it is in a path. */
	s = url_expand("https://h/d/{version}/e.zip?v={version}", NULL,
	    "1.0#x y");
	CHECK_STR(s, "https://h/d/1.0%23x%20y/e.zip?v=1.0%23x%20y");
	free(s);
	s = url_expand("https://h/{tag}/e-{version}.zip", "v1/2", "1/2");
	CHECK_STR(s, "https://h/v1%2F2/e-1%2F2.zip");
	free(s);
	s = url_expand("/srv/{tag}/e-{version}.zip", "v1#2", "1#2");
	CHECK_STR(s, "/srv/v1#2/e-1#2.zip");
	free(s);
}

static void
test_release_list(void)
{
	struct release_list l = RELEASE_LIST_INIT;
	char version[16], u[] = "https://example.org/e.tar.gz";
	char asset[] = "e.tar.gz";
	struct release_info r;

	memset(&r, 0, sizeof(r));
	r.version = version;
	r.url = u;
	r.asset = asset;
	for (int i = 0; i < 40; i++) {
		snprintf(version, sizeof(version), "0.%d", i);
		CHECK_INT(release_list_add(&l, &r), 0);
	}
	/* Copies: the caller's strings stay the caller's. */
	snprintf(version, sizeof(version), "changed");
	CHECK_INT(l.n, 40);
	CHECK_STR(l.v[0].version, "0.0");
	CHECK_STR(l.v[39].version, "0.39");
	CHECK_STR(l.v[39].url, r.url);
	CHECK(l.v[39].url != r.url);
	CHECK(l.v[0].sha256 == NULL);
	release_list_release(&l);
	CHECK_INT(l.n, 0);
	CHECK(l.v == NULL);
}

static int
find(const char *text, const char *name, char hex[65], struct err *e)
{
	return sha256sums_find(text, strlen(text), name, hex, "SUMS", e);
}

static void
test_sha256sums(void)
{
	static const char sums[] =
	    "# release 0.2.4\n"
	    "\n"
	    HA "  basert-0.2.4.tar.gz\n"
	    HB " *basert-0.2.4.zip\r\n"
	    "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
	    "  ./dist/basert-0.2.4-mac.tar.gz\n"
	    "\\" HA "  name\\\\with\\nnewline\n"
	    "SHA256 (bsd style.tar.gz) = " HB "\n"
	    "not a line at all\n"
	    "aaaa  short-hash.tar.gz\n"
	    HA "x  too-long-hash.tar.gz\n"
	    HC "  last-without-newline.tar.gz";
	/* What find() gives for a name in sums, and the hash (NULL: not
	 * looked at). */
	static const struct {
		const char *name;
		int rc;
		const char *hex;
	} t[] = {
		{ "basert-0.2.4.tar.gz", 1, HA },
		{ "basert-0.2.4.zip", 1, HB },
		/* Lower case, and matched by the last path component. */
		{ "basert-0.2.4-mac.tar.gz", 1, HC },
		{ "./dist/basert-0.2.4-mac.tar.gz", 1, NULL },
		{ "name\\with\nnewline", 1, HA },
		{ "bsd style.tar.gz", 1, HB },
		{ "last-without-newline.tar.gz", 1, HC },
		{ "short-hash.tar.gz", 0, NULL },
		{ "too-long-hash.tar.gz", 0, NULL },
		{ "basert-0.2.5.tar.gz", 0, NULL },
		{ "0.2.4.tar.gz", 0, NULL },
	};
	struct err e = ERR_INIT;
	char hex[65];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int before = check_failures;

		CHECK_INT(find(sums, t[i].name, hex, &e), t[i].rc);
		if (t[i].hex != NULL)
			CHECK_STR(hex, t[i].hex);
		if (check_failures > before)
			fprintf(stderr, "  t[%zu]: '%s'\n", i, t[i].name);
	}

	CHECK_INT(find("<html>moved</html>\n", "x", hex, &e), -1);
	CHECK_CONTAINS(e.msg, "'SUMS' holds no line");
	CHECK_INT(find("", "x", hex, &e), -1);
	CHECK_INT(find(HA "  x\n" HB "  x\n", "x", hex, &e), -1);
	CHECK_CONTAINS(e.msg, "two hashes for 'x'");
	CHECK_INT(find(HA "  x\n" HA " *x\n", "x", hex, &e), 1);
	CHECK_INT(find(HA "  a/x\n" HB "  b/x\n", "x", hex, &e), -1);
	CHECK_CONTAINS(e.msg, "several hashes");
	/* An exact name wins over a last-component match. */
	CHECK_INT(find(HA "  a/x\n" HB "  x\n", "x", hex, &e), 1);
	CHECK_STR(hex, HB);
}

static char name[] = "basert";
static char linux_asset[] = "basert-{version}-linux.tar.gz";

static struct conf_engine
engine(char *template)
{
	struct conf_engine eng;

	memset(&eng, 0, sizeof(eng));
	eng.name = name;
	eng.source = SOURCE_URL;
	eng.source_arg = template;
	eng.allow_http = 1;
	strv_push(&eng.versions, "0.2.3");
	strv_push(&eng.versions, "0.2.4");
	return eng;
}

static void
test_url_source(void)
{
	char template[256], sums[256], want[256];
	struct release_list l = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;
	struct conf_engine eng;

	snprintf(template, sizeof(template),
	    "%s/files/basert-{version}.tar.gz?x=1", ts.base);
	eng = engine(template);

	/* No checksums: URL and asset from the template. */
	CHECK_INT(source_list(&eng, NULL, &l, &e), 0);
	CHECK_INT(l.n, 2);
	if (l.n == 2) {
		snprintf(want, sizeof(want),
		    "%s/files/basert-0.2.3.tar.gz?x=1", ts.base);
		CHECK_STR(l.v[0].version, "0.2.3");
		CHECK_STR(l.v[0].url, want);
		CHECK_STR(l.v[0].asset, "basert-0.2.3.tar.gz");
		CHECK(l.v[0].sha256 == NULL);
		CHECK_STR(l.v[1].version, "0.2.4");
	}
	release_list_release(&l);
	/* No request is made without checksums. */
	CHECK_INT(testserver_count(&ts, "GET", NULL), 0);

	/* An asset pattern names the file. */
	eng.asset = linux_asset;
	CHECK_INT(source_list(&eng, NULL, &l, &e), 0);
	CHECK(l.n == 2 && strcmp(l.v[1].asset,
	    "basert-0.2.4-linux.tar.gz") == 0);
	release_list_release(&l);

	/* One SHA256SUMS for every version: fetched once. */
	check_write_file("srv/SHA256SUMS",
	    HA "  basert-0.2.3-linux.tar.gz\n"
	    HB "  basert-0.2.4-linux.tar.gz\n");
	snprintf(sums, sizeof(sums), "%s/files/SHA256SUMS", ts.base);
	eng.sha256sums = sums;
	CHECK_INT(source_list(&eng, NULL, &l, &e), 0);
	CHECK_INT(l.n, 2);
	if (l.n == 2) {
		CHECK_STR(l.v[0].sha256, HA);
		CHECK_STR(l.v[0].sha256_origin, "sha256sums");
		CHECK_STR(l.v[1].sha256, HB);
	}
	CHECK_INT(testserver_count(&ts, "GET /files/SHA256SUMS ", NULL), 1);
	release_list_release(&l);

	/* One per version. */
	check_write_file("srv/SUMS-0.2.3", HC " *basert-0.2.3-linux.tar.gz\n");
	check_write_file("srv/SUMS-0.2.4", HA " *basert-0.2.4-linux.tar.gz\n");
	snprintf(sums, sizeof(sums), "%s/files/SUMS-{version}", ts.base);
	CHECK_INT(source_list(&eng, NULL, &l, &e), 0);
	CHECK(l.n == 2 && strcmp(l.v[0].sha256, HC) == 0 &&
	    strcmp(l.v[1].sha256, HA) == 0);
	CHECK_INT(testserver_count(&ts, "GET /files/SUMS-0.2.3 ", NULL), 1);
	CHECK_INT(testserver_count(&ts, "GET /files/SUMS-0.2.4 ", NULL), 1);
	release_list_release(&l);

	/* A version the checksum file does not name: an error, nothing
	 * listed. */
	strv_push(&eng.versions, "0.2.5");
	check_write_file("srv/SUMS-0.2.5", HA "  basert-0.2.6-linux.tar.gz\n");
	CHECK_INT(source_list(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "SUMS-0.2.5' has no line for "
	    "'basert-0.2.5-linux.tar.gz'");
	CHECK_INT(l.n, 0);

	/* Missing or not a checksum file. */
	snprintf(sums, sizeof(sums), "%s/files/NOPE", ts.base);
	CHECK_INT(source_list(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "cannot fetch checksums");
	CHECK_CONTAINS(e.msg, "HTTP 404");
	check_write_file("srv/HTML", "<html>moved</html>\n");
	snprintf(sums, sizeof(sums), "%s/files/HTML", ts.base);
	CHECK_INT(source_list(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "holds no line");
	/* Plain http refused unless allowed. */
	eng.allow_http = 0;
	CHECK_INT(source_list(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "allow-http is off");
	CHECK_INT(l.n, 0);

	/* Configuration mistakes. */
	strv_clear(&eng.versions);
	CHECK_INT(source_list(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "needs versions");
	snprintf(template, sizeof(template), "https://example.org/fixed.tgz");
	eng = engine(template);
	CHECK_INT(source_list(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "has no {version}");
	strv_clear(&eng.versions);
}

int
main(void)
{
	check_tmpdir("urlsrc");
	if (testserver_start("srv", &ts) < 0)
		return 1;
	CHECK_CASE(test_asset_patterns);
	CHECK_CASE(test_release_list);
	CHECK_CASE(test_sha256sums);
	CHECK_CASE(test_url_source);
	testserver_stop(&ts);
	return check_done();
}
