/*
 * test_acquire.c: acquire_refresh() and acquire_release() against a
 * hostile upstream: a GitHub-shaped source on the loopback test server
 * whose newest tag climbs out of the cache, a dir: source whose file
 * names the version "..", a release tree an unpack left unfinished, and
 * a url: source that first serves a captive portal's page.  Nothing
 * outside the release's own folder may change.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bisectd/acquire/acquire.h"
#include "check.h"
#include "check_conf.h"
#include "common/err.h"
#include "common/strv.h"
#include "config/conf.h"
#include "fetch/unpack.h"
#include "store/store.h"
#include "testserver.h"

static struct testserver ts;

#define ENGINE_TAIL \
    "\tcommand = {bin}/bin/engine\n\tweights = w\n\tallow-http = true\n"

#define DIR_CONF "[bisectd]\n\tdatabase = t.db\n\tcache = cache\n" \
    "[weights \"w\"]\n\tpath = w.bin\n[engine \"eng\"]\n" \
    "\tsource = dir:rel\n\tasset = basert-{version}.tar.gz\n" ENGINE_TAIL

/* Load text, open its store and start acquiring for its engine "eng". */
static int
start(const char *text, struct conf **c, struct store **s, struct acquire *a)
{
	struct err e = ERR_INIT;

	*s = NULL;
	CHECK((*c = check_conf_load(text)) != NULL);
	if (*c == NULL)
		return -1;
	if (store_open("t.db", s, &e) < 0 ||
	    acquire_init(a, *c, conf_engine(*c, "eng"), *s, &e) < 0) {
		CHECK_STR(e.msg, "");
		if (*s)
			store_close(*s);
		conf_free(*c);
		return -1;
	}
	return 0;
}

/* A release archive at path whose bin/engine prints text. */
static void
make_release(const char *path, const char *text)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "rm -rf mk && mkdir -p mk/bin && printf "
	    "'#!/bin/sh\\necho %s\\n' > mk/bin/engine && chmod 755 "
	    "mk/bin/engine && tar -czf %s -C mk .", text, path);
	CHECK_INT(check_run(cmd, NULL), 0);
}

static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* 1 when path resolves inside dir. */
static int
inside(const char *path, const char *dir)
{
	char rp[PATH_MAX], rd[PATH_MAX];
	size_t n;

	if (realpath(path, rp) == NULL || realpath(dir, rd) == NULL)
		return 0;
	n = strlen(rd);
	return strncmp(rp, rd, n) == 0 && rp[n] == '/';
}

static int nrefused;
static char last_refused[512];

static void
on_refused(void *arg, const char *version, const char *why)
{
	(void)arg;
	nrefused++;
	snprintf(last_refused, sizeof(last_refused), "%s: %s", version, why);
}

/*
 * The newest tag of a GitHub-shaped source is "../../../../some/dir":
 * from cache/releases/eng it names a/some/dir, beside the cache.  That
 * folder must stay as it is; the release goes to a folder of its own.
 */
static void
test_github_tag_escape(void)
{
	struct acquire a;
	struct acquired got;
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	char text[4096];
	char *keep;
	int listed = 0;
	FILE *f;

	check_run("mkdir -p a/b a/some/dir srv/api/acme/eng && echo precious "
	    "> a/some/dir/keep && echo w > w.bin", NULL);
	make_release("srv/basert-0.1.0.tar.gz", "old");
	make_release("srv/basert-evil.tar.gz", "evil");
	if ((f = fopen("srv/api/acme/eng/releases.jsonl", "w")) == NULL)
		abort();
	fprintf(f, "{\"id\": 1, \"tag_name\": \"v0.1.0\", \"assets\": "
	    "[{\"name\": \"basert-0.1.0.tar.gz\", \"browser_download_url\": "
	    "\"%s/files/basert-0.1.0.tar.gz\"}]}\n", ts.base);
	fprintf(f, "{\"id\": 2, \"tag_name\": \"../../../../some/dir\", "
	    "\"assets\": [{\"name\": \"basert-evil.tar.gz\", "
	    "\"browser_download_url\": \"%s/files/basert-evil.tar.gz\"}]}\n",
	    ts.base);
	fclose(f);
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "\tcache = a/b/cache\n[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"eng\"]\n\tsource = github:acme/eng\n"
	    "\tapi = %s/api/\n\tasset = basert-{version}.tar.gz\n"
	    ENGINE_TAIL, ts.base);
	if (start(text, &c, &s, &a) < 0)
		return;
	CHECK_INT(acquire_refresh(&a, &listed, NULL, &e), 0);
	CHECK_INT(listed, 2);
	CHECK_INT(acquire_release(&a, "../../../../some/dir", &got, &e), 0);
	if (e.msg[0])
		fprintf(stderr, "%s\n", e.msg);
	keep = check_read_file("a/some/dir/keep");
	CHECK_STR(keep, "precious\n");
	free(keep);
	CHECK(!exists("a/some/dir/bin"));
	CHECK(got.dir != NULL && inside(got.dir, "a/b/cache/releases/eng"));
	CHECK_STR(got.dir ? strrchr(got.dir, '/') + 1 : NULL,
	    "%2E.%2F..%2F..%2F..%2Fsome%2Fdir");
	if (got.dir) {
		char path[PATH_MAX];
		char *out = NULL;

		snprintf(path, sizeof(path), "%s/bin/engine", got.dir);
		CHECK_INT(check_run(path, &out), 0);
		CHECK_STR(out, "evil\n");
		free(out);
	}
	acquired_release(&got);
	store_close(s);
	conf_free(c);
}

/*
 * A dir: source holding "basert-...tar.gz", whose version is "..":
 * refused when listed and when asked for, and the engine's other
 * releases stay.
 */
static void
test_dir_dotdot(void)
{
	struct acquire a;
	struct acquired got, dd;
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct store_release r;
	struct conf *c;
	int listed = 0;

	check_run("rm -rf rel cache t.db && mkdir rel && echo w > w.bin",
	    NULL);
	make_release("rel/basert-0.1.0.tar.gz", "one");
	make_release("rel/basert-...tar.gz", "dots");
	if (start(DIR_CONF, &c, &s, &a) < 0)
		return;
	a.refused = on_refused;
	nrefused = 0;
	CHECK_INT(acquire_refresh(&a, &listed, NULL, &e), 0);
	CHECK_INT(listed, 1);
	CHECK_INT(nrefused, 1);
	CHECK_STR(last_refused, "..: version '.' or '..'");
	CHECK_INT(store_release_get(s, a.engine_id, "..", &r, &e), 1);
	CHECK_INT(acquire_release(&a, "0.1.0", &got, &e), 0);
	CHECK_INT(acquire_release(&a, "..", &dd, &e), -1);
	CHECK_CONTAINS(e.msg, "release '..' refused: version '.' or '..'");
	CHECK(exists("cache/releases/eng/0.1.0/bin/engine"));
	CHECK(got.dir != NULL && fetch_unpack_complete(got.dir));
	acquired_release(&got);
	store_close(s);
	conf_free(c);
}

/*
 * A tree without the mark of a finished unpack (here: the zero-filled
 * binary a full disk left before the mark existed) is unpacked again,
 * not answered "from the cache".
 */
static void
test_unfinished_tree(void)
{
	struct acquire a;
	struct acquired got;
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	char *out = NULL;

	if (start(DIR_CONF, &c, &s, &a) < 0)
		return;
	CHECK_INT(acquire_release(&a, "0.1.0", &got, &e), 0);
	acquired_release(&got);
	CHECK_INT(check_run("rm -f cache/releases/eng/0.1.0/" UNPACK_COMPLETE_MARK
	    " && truncate -s 0 cache/releases/eng/0.1.0/bin/engine && "
	    "truncate -s 64 cache/releases/eng/0.1.0/bin/engine", NULL), 0);
	CHECK_INT(acquire_release(&a, "0.1.0", &got, &e), 0);
	CHECK_INT(got.unpacked, 1);
	CHECK_INT(check_run("cache/releases/eng/0.1.0/bin/engine", &out), 0);
	CHECK_STR(out, "one\n");
	free(out);
	acquired_release(&got);
	store_close(s);
	conf_free(c);
}

/*
 * A url: source without SHA256SUMS: the first answer is a captive
 * portal's HTML page.  It must not be pinned, so the real archive
 * served next is taken, not refused as "changed under the same
 * version".
 */
static void
test_first_use_pin(void)
{
	struct acquire a;
	struct acquired got;
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct store_release r;
	struct conf *c;
	char text[4096];
	char *out = NULL;

	check_run("rm -rf cache t.db", NULL);
	check_write_file("srv/portal-0.3.0.tar.gz", "<html><body>Please log "
	    "in to the hotel wifi</body></html>\n");
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "\tcache = cache\n[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"eng\"]\n\tsource = url:%s/files/portal-{version}.tar.gz\n"
	    "\tversions = 0.3.0\n" ENGINE_TAIL, ts.base);
	if (start(text, &c, &s, &a) < 0)
		return;
	CHECK_INT(acquire_release(&a, "0.3.0", &got, &e), -1);
	CHECK_CONTAINS(e.msg, "not a readable tar or zip archive");
	CHECK_INT(store_release_get(s, a.engine_id, "0.3.0", &r, &e), 0);
	CHECK(r.archive_sha256 == NULL);
	store_release_release(&r);
	make_release("srv/portal-0.3.0.tar.gz", "real");
	e.msg[0] = '\0';
	CHECK_INT(acquire_release(&a, "0.3.0", &got, &e), 0);
	if (e.msg[0])
		fprintf(stderr, "%s\n", e.msg);
	CHECK_INT(check_run("cache/releases/eng/0.3.0/bin/engine", &out), 0);
	CHECK_STR(out, "real\n");
	free(out);
	CHECK_INT(store_release_get(s, a.engine_id, "0.3.0", &r, &e), 0);
	CHECK(r.archive_sha256 != NULL &&
	    strcmp(r.archive_sha256, got.sha256) == 0);
	store_release_release(&r);
	acquired_release(&got);
	store_close(s);
	conf_free(c);
}

/*
 * unpack-max and download-deadline: [bisectd]'s values unless the engine
 * sets its own, validated, and the engine's unpack-max is what an unpack
 * of its release is held to.
 */
static void
test_limit_keys(void)
{
	struct strv problems = STRV_INIT;
	struct acquire a;
	struct acquired got;
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c = NULL;

	check_run("rm -rf rel cache t.db && mkdir rel && head -c 3000000 "
	    "/dev/urandom > big && tar -czf rel/basert-0.4.0.tar.gz big",
	    NULL);
	if (start("[bisectd]\n\tdatabase = t.db\n\tcache = cache\n"
	    "\tunpack-max = 1G\n\tdownload-deadline = 5m\n"
	    "[weights \"w\"]\n\tpath = w.bin\n[engine \"eng\"]\n"
	    "\tsource = dir:rel\n\tasset = basert-{version}.tar.gz\n"
	    "\tunpack-max = 2M\n" ENGINE_TAIL "[engine \"other\"]\n"
	    "\tsource = dir:rel\n\tasset = basert-{version}.tar.gz\n"
	    "\tdownload-deadline = 90s\n" ENGINE_TAIL, &c, &s, &a) < 0)
		return;
	CHECK_INT(c->unpack_max, 1ull << 30);
	CHECK_INT(conf_engine(c, "eng")->unpack_max, 2u << 20);
	CHECK_INT(conf_engine(c, "eng")->download_deadline_ms, 300000);
	CHECK_INT(conf_engine(c, "other")->unpack_max, 1ull << 30);
	CHECK_INT(conf_engine(c, "other")->download_deadline_ms, 90000);
	CHECK_INT(acquire_release(&a, "0.4.0", &got, &e), -1);
	CHECK_CONTAINS(e.msg, "declares 3000000 bytes, more than the "
	    "2097152-byte cap");
	store_close(s);
	conf_free(c);
	/* Without them: the cache's cap and 30 minutes. */
	if ((c = check_conf_load(DIR_CONF)) != NULL) {
		CHECK_INT(conf_engine(c, "eng")->unpack_max, c->cache_max);
		CHECK_INT(conf_engine(c, "eng")->download_deadline_ms,
		    30 * 60000);
		conf_free(c);
	}
	check_write_file("bad.conf", "[bisectd]\n\tunpack-max = 0\n"
	    "\tdownload-deadline = soon\n");
	CHECK_INT(conf_load("bad.conf", &c, &problems), -1);
	CHECK_INT(problems.n, 2);
	CHECK_CONTAINS(problems.n > 0 ? problems.v[0] : NULL,
	    "bisectd.unpack-max: expected a size above zero");
	CHECK_CONTAINS(problems.n > 1 ? problems.v[1] : NULL,
	    "bisectd.download-deadline: expected a duration");
	strv_clear(&problems);
}

int
main(void)
{
	check_tmpdir("acquire");
	if (testserver_start("srv", &ts) < 0)
		return 1;
	CHECK_CASE(test_github_tag_escape);
	CHECK_CASE(test_dir_dotdot);
	CHECK_CASE(test_unfinished_tree);
	CHECK_CASE(test_first_use_pin);
	CHECK_CASE(test_limit_keys);
	testserver_stop(&ts);
	return check_done();
}
