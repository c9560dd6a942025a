/*
 * test_prefetch.c: archives downloaded ahead.  bump's releases 1.0.0 to
 * 1.0.10 (per-token cost +50% from 1.0.6) served over loopback HTTP at
 * 48 KiB a second, about a second an archive: a bisect downloads the
 * releases it measures next while it measures, takes them from there,
 * and names 1.0.6 as it does with prefetch off; an archive the server
 * lacks fails ahead without a word and is skipped as before; a release
 * needed while its download ahead is under way is not waited for at the
 * capped rate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "check_conf.h"
#include "check_json.h"
#include "common/err.h"
#include "config/conf.h"
#include "fetch/download.h"
#include "fetch/prefetch.h"
#include "fetch/sha256.h"
#include "testserver.h"

#define NREL 11

static const char *ctl, *build;
static char ctl_conf[4096];
static struct testserver ts;

/* The archives under the server's root: all of them in srv/all, all but
 * 1.0.7 in srv/gap. */
static void
serve_archives(void)
{
	char cmd[4096];

	for (int i = 0; i < NREL; i++) {
		snprintf(cmd, sizeof(cmd), "mkdir -p srv/all srv/gap && "
		    "cp %s/tests/releases/bump-1.0.%d.tar.gz srv/all/ && "
		    "{ [ %d = 7 ] || cp srv/all/bump-1.0.%d.tar.gz srv/gap/; }",
		    build, i, i, i);
		CHECK_INT(check_run(cmd, NULL), 0);
	}
}

/* An engine over url: at KIB KiB a second from folder dir. */
static void
add_engine(char *text, size_t size, size_t *len, const char *name,
    const char *dir, int kib, const char *prefetch)
{
	char source[1024], extra[1024];

	snprintf(source, sizeof(source), "url:%s/rate/%d/%s/bump-{version}"
	    ".tar.gz", ts.base, kib, dir);
	snprintf(extra, sizeof(extra), "\tversions = 1.0.0,1.0.1,1.0.2,"
	    "1.0.3,1.0.4,1.0.5,1.0.6,1.0.7,1.0.8,1.0.9,1.0.10\n"
	    "\tallow-http = yes\n\tprefetch = %s\n\tprefetch-rate = 1M\n"
	    "\treps = 3\n\ttimeout = 1m\n", prefetch);
	check_fake_engine(text, size, len, name, source, extra);
}

static void
write_config(void)
{
	char text[16384];
	size_t len;

	len = check_demo_head(text, sizeof(text), "p.db", build);
	add_engine(text, sizeof(text), &len, "ahead", "all", 48, "2");
	add_engine(text, sizeof(text), &len, "plain", "all", 48, "off");
	add_engine(text, sizeof(text), &len, "gap", "gap", 48, "2");
	check_write_file("p.conf", text);
}

/* The bisect of engine over the range as JSON; its first bad release
 * into *first_bad (malloced, NULL for none) and its stderr's notes. */
static void
bisect(const char *engine, int want_rc, char **first_bad, char **notes)
{
	char args[256];
	json_t *rep, *c;
	const char *fb;

	*first_bad = NULL;
	snprintf(args, sizeof(args), "--format json bisect --now %s "
	    "1.0.0..1.0.10", engine);
	CHECK_INT(check_ctl_json(ctl_conf, args, 0, &rep), want_rc);
	*notes = check_read_file("stderr.txt");
	if (rep == NULL)
		return;
	c = json_array_get(json_object_get(json_object_get(rep, "verdict"),
	    "change_points"), 0);
	fb = json_string_value(json_object_get(c, "first_bad"));
	*first_bad = fb ? strdup(fb) : NULL;
	json_decref(rep);
}

/* Downloads ahead: the other end while the first is measured, the next
 * probes while one is; taken when their turn comes; the same verdict as
 * without. */
static void
test_ahead_same_verdict(void)
{
	char *fa, *fp, *na, *np;

	testserver_log_reset(&ts);
	bisect("ahead", 3, &fa, &na);
	/* A release is downloaded from its start twice at most: ahead,
	 * stopped before its first byte, and then its own; one stopped
	 * later is resumed (test_take_running). */
	for (int i = 0; i < NREL; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/rate/48/all/bump-1.0.%d.tar.gz",
		    i);
		CHECK(testserver_count(&ts, path, "range=-", NULL) <= 2);
	}

	bisect("plain", 3, &fp, &np);
	printf("ahead:\n%s\nplain:\n%s\n", na ? na : "", np ? np : "");
	CHECK_STR(fa, "1.0.6");
	CHECK_STR(fp, "1.0.6");
	/* The other end and the first probe while the first end is
	 * measured; whether each is done when its turn comes is the
	 * machine's timing (test_take_done). */
	CHECK_CONTAINS(na, "download 1.0.10 ahead");
	CHECK_CONTAINS(na, "download 1.0.5 ahead");
	CHECK(strstr(np, "ahead") == NULL);
	free(fa);
	free(fp);
	free(na);
	free(np);
}

/* An archive the server lacks: its download ahead fails without a word,
 * its own fails and skips it, as with prefetch off. */
static void
test_missing_skipped(void)
{
	char *fb, *notes;

	bisect("gap", 3, &fb, &notes);
	printf("gap:\n%s\n", notes ? notes : "");
	CHECK_STR(fb, "1.0.6");
	CHECK_CONTAINS(notes, "skip 1.0.7");
	CHECK(strstr(notes, "1.0.7: its archive was downloaded ahead") ==
	    NULL);
	free(fb);
	free(notes);
}

/* A prefetch of the server's archives: at most max_queued at a time,
 * capped at KIB KiB a second (0: none). */
static struct prefetch *
start(size_t max_queued, int kib)
{
	struct prefetch_opts o = { "pcache", 1, 60000, (int64_t)kib * 1024,
	    max_queued };
	struct prefetch *p = NULL;
	struct err e = ERR_INIT;

	if (prefetch_new(&o, &p, &e) < 0)
		fprintf(stderr, "prefetch_new: %s\n", e.msg);
	CHECK(p != NULL);
	return p;
}

static int
want(struct prefetch *p, const char *version, const char *url)
{
	struct prefetch_item_spec sp = { version, url, NULL, NULL, NULL };

	return prefetch_want(p, &sp);
}

/* Wait up to 60 s for stats of p to show n done or failed. */
static void
wait_ended(struct prefetch *p, size_t n, struct prefetch_stats *st)
{
	for (int i = 0; i < 600; i++) {
		prefetch_stats(p, st);
		if (st->done + st->failed >= n)
			return;
		usleep(100000);
	}
}

/* A download ahead that ended is taken: its cached archive, the same
 * bytes as served, and its hash; a version never asked for, or asked
 * twice, is nothing. */
static void
test_take_done(void)
{
	struct prefetch *p = start(2, 0);
	struct prefetch_stats st;
	char sha[65], want_sha[65], *path = NULL;
	struct err e = ERR_INIT;

	if (p == NULL)
		return;
	CHECK_INT(want(p, "1.0.1", testserver_url(&ts,
	    "/files/all/bump-1.0.1.tar.gz")), 1);
	CHECK_INT(want(p, "1.0.1", testserver_url(&ts,
	    "/files/all/bump-1.0.1.tar.gz")), 0);
	wait_ended(p, 1, &st);
	CHECK_INT((int)st.done, 1);
	CHECK_INT(prefetch_take(p, "1.0.1", sha, &path), 1);
	CHECK_INT(sha256_file("srv/all/bump-1.0.1.tar.gz", want_sha, &e), 0);
	CHECK_STR(sha, want_sha);
	CHECK(path != NULL && strstr(path, want_sha) != NULL);
	CHECK(path != NULL && access(path, R_OK) == 0);
	free(path);
	CHECK_INT(prefetch_take(p, "1.0.1", sha, &path), 0);
	CHECK_INT(prefetch_take(p, "9.9.9", sha, &path), 0);
	CHECK(path == NULL);
	prefetch_stats(p, &st);
	CHECK_INT((int)st.taken_done, 1);
	prefetch_free(p);
}

/* One needed while it is under way, served at 8 KiB a second (six
 * seconds an archive): stopped within a second or two, not waited for,
 * and its bytes kept: the caller's own download asks for the rest (a
 * Range request) and gets the archive whole. */
static void
test_take_running(void)
{
	struct prefetch *p = start(2, 0);
	struct prefetch_stats st;
	struct download_opts o = DOWNLOAD_OPTS_INIT;
	struct download_result r = DOWNLOAD_RESULT_INIT;
	struct err e = ERR_INIT;
	char sha[65], want_sha[65], *path = NULL;
	const char *url = testserver_url(&ts, "/rate/8/all/bump-1.0.2.tar.gz");
	struct timespec t0, t1;

	if (p == NULL)
		return;
	testserver_log_reset(&ts);
	CHECK_INT(want(p, "1.0.2", url), 1);
	sleep(2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_INT(prefetch_take(p, "1.0.2", sha, &path), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK((t1.tv_sec - t0.tv_sec) < 4);
	prefetch_stats(p, &st);
	CHECK_INT((int)st.taken_stopped, 1);
	prefetch_free(p);
	o.cache = "pcache";
	o.allow_http = 1;
	CHECK_INT(fetch_download(url, &o, &r, &e), 0);
	CHECK_INT(r.resumed, 1);
	CHECK_INT(sha256_file("srv/all/bump-1.0.2.tar.gz", want_sha, &e), 0);
	CHECK_STR(r.sha256, want_sha);
	CHECK_INT(testserver_count(&ts, "bump-1.0.2", "range=bytes=", NULL),
	    1);
	download_result_release(&r);
}

/* The cap holds: a MiB at 128 KiB a second takes eight seconds, and is
 * not done after two (a loaded machine only makes it later). */
static void
test_rate_cap(void)
{
	struct prefetch *p = start(1, 128);
	struct prefetch_stats st;

	if (p == NULL)
		return;
	testserver_write_pattern("srv/all/mib.bin", 1 << 20, 7);
	CHECK_INT(want(p, "mib", testserver_url(&ts, "/files/all/mib.bin")),
	    1);
	sleep(2);
	prefetch_stats(p, &st);
	CHECK_INT((int)(st.done + st.failed), 0);
	prefetch_free(p);
}

/* A failed download ahead is forgotten: taken as nothing, for the
 * caller's own to fail and say why.  A full queue takes no more. */
static void
test_failed_and_full(void)
{
	struct prefetch *p = start(1, 8);
	struct prefetch_stats st;
	char sha[65], *path = NULL;

	if (p == NULL)
		return;
	CHECK_INT(want(p, "0.0.1", testserver_url(&ts, "/files/none.tar.gz")),
	    1);
	wait_ended(p, 1, &st);
	CHECK_INT((int)st.failed, 1);
	CHECK_INT(prefetch_take(p, "0.0.1", sha, &path), 0);
	CHECK(path == NULL);
	/* The 8 KiB/s one under way fills the queue of one. */
	CHECK_INT(want(p, "1.0.3", testserver_url(&ts,
	    "/files/all/bump-1.0.3.tar.gz")), 1);
	CHECK_INT(want(p, "1.0.4", testserver_url(&ts,
	    "/files/all/bump-1.0.4.tar.gz")), 0);
	/* Freed while one runs: it stops, nothing is left waiting. */
	prefetch_free(p);
}

/* prefetch = auto: 2 for a url: or github: source, off for dir: and a
 * Slurm runner; a number up to 16 or off as written; anything else
 * refused, naming the key. */
static void
test_prefetch_keys(void)
{
	static const char head[] = "[bisectd]\n\tdatabase = k.db\n"
	    "\tcache = cache\n[weights \"w\"]\n\tpath = w.bin\n"
	    "[runner \"cluster\"]\n\tkind = slurm\n\tspool = spool\n";
	static const struct {
		const char *engine;	/* the engine's keys */
		int want;		/* its prefetch; -1: refused */
	} rows[] = {
		{ "source = url:https://example.org/e-{version}.tar.gz\n"
		    "\tversions = 1.0", 2 },
		{ "source = github:o/r\n\tasset = e-{version}.tar.gz", 2 },
		{ "source = dir:rel\n\tasset = e-{version}.tar.gz", 0 },
		{ "source = github:o/r\n\tasset = e-{version}.tar.gz\n"
		    "\trunner = cluster", 0 },
		{ "source = github:o/r\n\tasset = e-{version}.tar.gz\n"
		    "\tprefetch = off", 0 },
		{ "source = dir:rel\n\tasset = e-{version}.tar.gz\n"
		    "\tprefetch = 5", 5 },
		{ "source = dir:rel\n\tasset = e-{version}.tar.gz\n"
		    "\tprefetch = 17", -1 },
		{ "source = dir:rel\n\tasset = e-{version}.tar.gz\n"
		    "\tprefetch = some", -1 },
	};
	char text[2048];

	check_write_file("w.bin", "w");
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		struct conf *c;

		snprintf(text, sizeof(text), "%s[engine \"e\"]\n\t%s\n"
		    "\tcommand = {bin}/e -p {prompt}\n\tweights = w\n", head,
		    rows[i].engine);
		c = check_conf_load(text);
		if (rows[i].want < 0) {
			CHECK(c == NULL);
			conf_free(c);
			continue;
		}
		CHECK(c != NULL);
		if (c == NULL) {
			fprintf(stderr, "row %zu: %s\n", i, rows[i].engine);
			continue;
		}
		CHECK_INT(c->engines[0].prefetch, rows[i].want);
		CHECK(c->engines[0].prefetch_rate == 32u << 20);
		conf_free(c);
	}
}

int
main(void)
{
	const char *daemon_bin;

	check_env(&ctl, &daemon_bin, &build);
	snprintf(ctl_conf, sizeof(ctl_conf), "%s -c p.conf", ctl);
	check_tmpdir("prefetch");
	if (testserver_start("srv", &ts) < 0)
		return 99;
	serve_archives();
	write_config();
	CHECK_CASE(test_take_done);
	CHECK_CASE(test_take_running);
	CHECK_CASE(test_rate_cap);
	CHECK_CASE(test_failed_and_full);
	CHECK_CASE(test_ahead_same_verdict);
	CHECK_CASE(test_missing_skipped);
	CHECK_CASE(test_prefetch_keys);
	testserver_stop(&ts);
	return check_done();
}
