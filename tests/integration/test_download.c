/*
 * test_download.c: fetch_download() into the content-addressed cache
 * against the loopback test server's faults: resumes, ignored ranges,
 * 416, 5xx, 404, endless bodies, refused redirects, wrong and flipped
 * bytes, pinned hashes, concurrent downloads, hosts that drip bytes or
 * never close against the deadline and the stop flag.  After each
 * failure the
 * cache must be exactly as before.
 */
#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fetch/download.h"
#include "common/err.h"
#include "fetch/http.h"
#include "fetch/sha256.h"
#include "testserver.h"

static struct testserver ts;

static const char *
url(const char *path)
{
	return testserver_url(&ts, path);
}

static void
file_hash(const char *path, char hex[SHA256_HEX_LEN + 1])
{
	struct err e = ERR_INIT;

	if (sha256_file(path, hex, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		abort();
	}
}

/* The partial file fetch_download() uses for u. */
static void
part_path(const char *u, char *out, size_t len)
{
	char hex[SHA256_HEX_LEN + 1];
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, u, strlen(u));
	sha256_final(&c, hex);
	snprintf(out, len, "cache/archives/tmp/%s.part", hex);
}

/* Every file under the cache with its hash, sorted: the cache's state. */
static char *
snapshot(void)
{
	char *out = NULL;

	check_run("cd cache && find . -type f | LC_ALL=C sort | "
	    "xargs -r sha256sum", &out);
	return out;
}

/* Test-sized options: http allowed, fast retries. */
static struct http_opts ho;

static struct download_opts
opts(void)
{
	struct download_opts o = DOWNLOAD_OPTS_INIT;
	struct http_opts h = HTTP_OPTS_INIT;

	h.allow_http = 1;
	h.retry_base_ms = 10;
	ho = h;
	o.cache = "cache";
	o.http = &ho;
	return o;
}

static void
test_fresh_and_cached(void)
{
	struct download_opts o = opts();
	struct download_result r = DOWNLOAD_RESULT_INIT;
	struct err e = ERR_INIT;
	char want[SHA256_HEX_LEN + 1], path[256];
	struct check_progress p;
	char *tmp_list = NULL;

	file_hash("srv/a.bin", want);
	memset(&p, 0, sizeof(p));
	o.progress = check_on_progress;
	o.progress_arg = &p;
	CHECK_INT(fetch_download(url("/files/a.bin"), &o, &r, &e), 0);
	CHECK_STR(r.sha256, want);
	snprintf(path, sizeof(path), "cache/archives/%s", want);
	CHECK_STR(r.path, path);
	CHECK_INT(r.size, 300000);
	CHECK_INT(r.cached, 0);
	CHECK_INT(r.resumed, 0);
	CHECK_INT(r.pin, PIN_FIRST);
	{
		char cmd[512];

		snprintf(cmd, sizeof(cmd), "cmp srv/a.bin %s", path);
		CHECK_INT(check_run(cmd, NULL), 0);
	}
	CHECK_INT(p.now, 300000);
	CHECK_INT(p.total, 300000);
	check_run("ls -A cache/archives/tmp", &tmp_list);
	CHECK_STR(tmp_list, "");
	free(tmp_list);
	download_result_release(&r);

	/* Expected hash already in the cache: no request at all. */
	testserver_log_reset(&ts);
	o.expected_sha256 = want;
	CHECK_INT(fetch_download(url("/files/a.bin"), &o, &r, &e), 0);
	CHECK_INT(r.cached, 1);
	CHECK_STR(r.sha256, want);
	CHECK_STR(r.path, path);
	CHECK_INT(r.size, 300000);
	download_result_release(&r);
	/* Same with the pinned hash of an earlier download. */
	o.expected_sha256 = NULL;
	o.pinned_sha256 = want;
	CHECK_INT(fetch_download(url("/files/a.bin"), &o, &r, &e), 0);
	CHECK_INT(r.cached, 1);
	CHECK_INT(r.pin, PIN_SAME);
	download_result_release(&r);
	CHECK_INT(testserver_count(&ts, "GET", NULL), 0);

	/* An expected hash that matches a new download. */
	file_hash("srv/b.bin", want);
	o.pinned_sha256 = NULL;
	o.expected_sha256 = want;
	o.expected_origin = "sha256sums";
	CHECK_INT(fetch_download(url("/files/b.bin"), &o, &r, &e), 0);
	CHECK_STR(r.sha256, want);
	CHECK_INT(r.cached, 0);
	download_result_release(&r);

	/* Upper-case hex is the same hash. */
	for (char *c = want; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	CHECK_INT(fetch_download(url("/files/b.bin"), &o, &r, &e), 0);
	CHECK_INT(r.cached, 1);
	download_result_release(&r);
}

/*
 * Download path, the server's file, over a partial file that holds junk
 * (o->expected_sha256 is want, which gets the file's hash): the result
 * is the file whole.
 */
static void
over_junk(const char *path, const char *file, const char *junk,
    struct download_opts *o, struct download_result *r,
    char want[SHA256_HEX_LEN + 1])
{
	struct err e = ERR_INIT;
	char part[512];
	FILE *f;

	file_hash(file, want);
	part_path(url(path), part, sizeof(part));
	CHECK((f = fopen(part, "w")) != NULL);
	if (f == NULL)
		return;
	fputs(junk, f);
	fclose(f);
	CHECK_INT(fetch_download(url(path), o, r, &e), 0);
	CHECK_STR(r->sha256, want);
}

static void
test_resumes(void)
{
	struct download_opts o = opts();
	struct download_result r = DOWNLOAD_RESULT_INIT;
	struct err e = ERR_INIT;
	char want[SHA256_HEX_LEN + 1], part[512];

	/* Dropped mid-body: resumed with a Range, the file whole. */
	file_hash("srv/c.bin", want);
	o.expected_sha256 = want;
	CHECK_INT(fetch_download(url("/drop/c.bin"), &o, &r, &e), 0);
	CHECK_STR(r.sha256, want);
	CHECK_INT(r.resumed, 1);
	CHECK_INT(testserver_count(&ts, "GET /drop/c.bin ",
	    "range=bytes=150000-", "status=206", NULL), 1);
	download_result_release(&r);

	/* A partial file left by an earlier run is continued. */
	file_hash("srv/d.bin", want);
	part_path(url("/files/d.bin"), part, sizeof(part));
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "head -c 1000 srv/d.bin > %s",
		    part);
		CHECK_INT(check_run(cmd, NULL), 0);
	}
	o.expected_sha256 = want;
	CHECK_INT(fetch_download(url("/files/d.bin"), &o, &r, &e), 0);
	CHECK_STR(r.sha256, want);
	CHECK_INT(r.resumed, 1);
	CHECK_INT(testserver_count(&ts, "GET /files/d.bin ",
	    "range=bytes=1000-", "status=206", NULL), 1);
	CHECK(access(part, F_OK) < 0);
	download_result_release(&r);

	/* A server that ignores Range: its 200 replaces the junk partial
	 * file instead of being appended to it. */
	over_junk("/norange/e.bin", "srv/e.bin",
	    "junk that is not the file's start", &o, &r, want);
	CHECK_INT(testserver_count(&ts, "GET /norange/e.bin ",
	    "range=bytes=33-", "status=200", NULL), 1);
	download_result_release(&r);

	/* 416 to the resume: started over from zero. */
	over_junk("/416/f.bin", "srv/f.bin", "junk", &o, &r, want);
	CHECK_INT(testserver_count(&ts, "GET /416/f.bin ", "status=416",
	    NULL), 1);
	CHECK_INT(testserver_count(&ts, "GET /416/f.bin ", "range=-",
	    "status=200", NULL), 1);
	download_result_release(&r);

	/* 503 then 200. */
	file_hash("srv/a.bin", want);
	o.expected_sha256 = NULL;
	CHECK_INT(fetch_download(url("/flaky503/dl/a.bin"), &o, &r, &e), 0);
	CHECK_STR(r.sha256, want);
	CHECK_INT(testserver_count(&ts, "/flaky503/dl/", "status=503", NULL),
	    1);
	CHECK_INT(testserver_count(&ts, "/flaky503/dl/", "status=200", NULL),
	    1);
	download_result_release(&r);

	/* A transport failure keeps the partial file; the next call
	 * resumes it. */
	ho.max_retries = 0;
	part_path(url("/drop/g.bin"), part, sizeof(part));
	CHECK_INT(fetch_download(url("/drop/g.bin"), &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "/drop/g.bin");
	{
		struct stat st;

		CHECK_INT(stat(part, &st), 0);
		CHECK_INT(st.st_size, 150000);
	}
	CHECK_INT(fetch_download(url("/drop/g.bin"), &o, &r, &e), 0);
	file_hash("srv/g.bin", want);
	CHECK_STR(r.sha256, want);
	CHECK_INT(r.resumed, 1);
	CHECK(access(part, F_OK) < 0);
	/* The resume asked If-Range with the ETag the bytes came with. */
	CHECK_INT(testserver_count(&ts, "GET /drop/g.bin ",
	    "range=bytes=150000-", "ifr=\"", "status=206", NULL), 1);
	download_result_release(&r);
	{
		char sidecar[512];

		snprintf(sidecar, sizeof(sidecar), "%.*s.etag",
		    (int)strlen(part) - 5, part);
		CHECK(access(sidecar, F_OK) < 0);
	}

	/* The file changed on the server between the two halves: If-Range
	 * brings the new one whole, never spliced onto the old bytes. */
	CHECK_INT(fetch_download(url("/drop/k.bin"), &o, &r, &e), -1);
	testserver_write_pattern("srv/k.bin", 250000, 99);
	file_hash("srv/k.bin", want);
	ho.max_retries = 2;
	CHECK_INT(fetch_download(url("/drop/k.bin"), &o, &r, &e), 0);
	CHECK_STR(r.sha256, want);
	CHECK_INT(testserver_count(&ts, "GET /drop/k.bin ",
	    "range=bytes=150000-", "ifr=\"", "status=200", NULL), 1);
	CHECK_INT(testserver_count(&ts, "GET /drop/k.bin ",
	    "range=bytes=125000-", "ifr=\"", "status=206", NULL), 1);
	download_result_release(&r);
}

/* Run a failing download and check the cache did not change. */
#define CHECK_FAILS_CLEANLY(where, dopts, substr) do { \
	struct download_result r_ = DOWNLOAD_RESULT_INIT; \
	struct err e_ = ERR_INIT; \
	char *before_ = snapshot(), *after_; \
	CHECK_INT(fetch_download(url(where), (dopts), &r_, &e_), -1); \
	CHECK_CONTAINS(e_.msg, substr); \
	CHECK(r_.path == NULL); \
	after_ = snapshot(); \
	CHECK_STR(after_, before_); \
	free(before_); \
	free(after_); \
} while (0)

static void
test_failures(void)
{
	struct download_opts o = opts();
	struct download_result r = DOWNLOAD_RESULT_INIT;
	struct err e = ERR_INIT;
	char want[SHA256_HEX_LEN + 1], flipped[SHA256_HEX_LEN + 1];
	char bogus[] = "0000000000000000000000000000000000000000000000000000"
	    "000000000000";
	char path[256];
	char *before, *after;

	/* 404: clear, asked once, nothing left. */
	testserver_log_reset(&ts);
	CHECK_FAILS_CLEANLY("/files/missing.bin", &o, "HTTP 404");
	CHECK_INT(testserver_count(&ts, "GET /files/missing.bin ", NULL), 1);

	/* An endless body stops at the cap, the partial file removed. */
	o.max_bytes = 1 << 20;
	CHECK_FAILS_CLEANLY("/endless", &o, "exceeds the cap of 1048576");
	o.max_bytes = 0;

	/* Redirects to file:// and in a loop are refused. */
	CHECK_FAILS_CLEANLY("/redirect-file", &o, "file:///etc/passwd");
	CHECK_FAILS_CLEANLY("/redirect-loop", &o, "too many redirects");
	ho.redirect_https_only = 1;
	CHECK_FAILS_CLEANLY("/redirect-http/a.bin", &o, "refused redirect");
	ho.redirect_https_only = 0;

	/* A wrong checksum: both hashes named, the file deleted. */
	file_hash("srv/h.bin", want);
	o.expected_sha256 = bogus;
	o.expected_origin = "config";
	CHECK_FAILS_CLEANLY("/files/h.bin", &o, bogus);
	CHECK_FAILS_CLEANLY("/files/h.bin", &o, want);
	CHECK_FAILS_CLEANLY("/files/h.bin", &o, "(config)");

	/* One flipped byte in the resumed half: caught. */
	o.expected_sha256 = want;
	CHECK_FAILS_CLEANLY("/flip/h.bin", &o, "sha256 mismatch");
	CHECK_INT(testserver_count(&ts, "GET /flip/h.bin ",
	    "range=bytes=200000-", "status=206", NULL), 1);

	/* Without an expected hash the flipped file is accepted as what it
	 * is: its hash is the hash of the bytes on disk, not the original;
	 * the pinned hash of an earlier download then refuses it. */
	o.expected_sha256 = NULL;
	CHECK_INT(fetch_download(url("/flip/h.bin"), &o, &r, &e), 0);
	CHECK_INT(r.resumed, 1);
	file_hash(r.path, flipped);
	CHECK_STR(r.sha256, flipped);
	CHECK(strcmp(flipped, want) != 0);
	snprintf(path, sizeof(path), "cache/archives/%s", flipped);
	unlink(path);
	download_result_release(&r);

	o.pinned_sha256 = want;
	before = snapshot();
	CHECK_INT(fetch_download(url("/flip/h.bin"), &o, &r, &e), -1);
	CHECK_INT(r.pin, PIN_CHANGED);
	CHECK_CONTAINS(e.msg, "release archive changed under the same "
	    "version");
	CHECK_CONTAINS(e.msg, want);
	CHECK_CONTAINS(e.msg, flipped);
	after = snapshot();
	CHECK_STR(after, before);
	free(before);
	free(after);
	o.pinned_sha256 = NULL;

	/* A bad expected hash is refused before any request. */
	testserver_log_reset(&ts);
	o.expected_sha256 = "abc";
	CHECK_FAILS_CLEANLY("/files/h.bin", &o, "not 64 hex digits");
	CHECK_INT(testserver_count(&ts, "GET", NULL), 0);
	o.expected_sha256 = NULL;
}

static void
test_lock(void)
{
	struct download_opts o = opts();
	struct download_result r = DOWNLOAD_RESULT_INIT;
	struct err e = ERR_INIT;
	char part[512];
	int fd;

	/* Another process holds the partial file: fail at once, leave its
	 * file alone. */
	part_path(url("/files/a.bin"), part, sizeof(part));
	fd = open(part, O_RDWR | O_CREAT, 0644);
	CHECK_INT(write(fd, "abc", 3), 3);
	CHECK_INT(flock(fd, LOCK_EX), 0);
	o.pinned_sha256 = NULL;
	CHECK_INT(fetch_download(url("/files/a.bin"), &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "another process");
	CHECK_INT(access(part, F_OK), 0);
	close(fd);
	unlink(part);

	/* The ETag note cannot be written (a directory is in its way): the
	 * download stops with that reason and leaves nothing behind. */
	{
		char note[512];

		snprintf(note, sizeof(note), "%.*s.etag",
		    (int)strlen(part) - 5, part);
		CHECK_INT(mkdir(note, 0755), 0);
		CHECK_FAILS_CLEANLY("/files/a.bin", &o, "cannot rename");
		CHECK(access(part, F_OK) < 0);
		rmdir(note);
	}
}

static void
test_pinned(void)
{
	static const char a[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaa";
	static const char b[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	    "bbbbbbbbbbbbbbbb";
	static const char a_upper[] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	    "AAAAAAAAAAAAAAAAAAAAAAAA";

	CHECK_INT(download_check_pinned(NULL, a), PIN_FIRST);
	CHECK_INT(download_check_pinned("", a), PIN_FIRST);
	CHECK_INT(download_check_pinned(a, a), PIN_SAME);
	CHECK_INT(download_check_pinned(a_upper, a), PIN_SAME);
	CHECK_INT(download_check_pinned(a, b), PIN_CHANGED);
}

static void *
stop_soon(void *arg)
{
	check_sleep_ms(300);
	atomic_store((atomic_int *)arg, 1);
	return NULL;
}

/*
 * A host that sends a byte every 100 ms, or half the body and then
 * nothing on an open connection, would hold the job worker for minutes
 * (the low-speed limit sees the first as alive; the second takes 60 s a
 * try over five tries).  The download ends at its deadline, scaled up
 * for a large Content-Length, or as soon as the stop flag is set.
 */
static void
test_deadline(void)
{
	struct download_opts o = opts();
	struct download_result r = DOWNLOAD_RESULT_INIT;
	struct err e = ERR_INIT;
	static atomic_int stop;
	pthread_t t;
	int rc;

	o.deadline_ms = 1000;
	CHECK_INT(fetch_download(url("/slow/c.bin?ms=100"), &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "not done within its deadline of 1 s "
	    "(download-deadline)");
	CHECK_INT(fetch_download(url("/hang/d.bin"), &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "/hang/d.bin': not done within its deadline");
	/* 2 GiB announced (a sparse file): twice the time. */
	CHECK_INT(fetch_download(url("/slow/sparse.bin?ms=100"), &o, &r, &e),
	    -1);
	CHECK_CONTAINS(e.msg, "deadline of 2 s, scaled to its size");
	o.deadline_ms = 0;
	o.stop = &stop;
	atomic_store(&stop, 0);
	CHECK_INT(pthread_create(&t, NULL, stop_soon, &stop), 0);
	rc = fetch_download(url("/hang/e.bin"), &o, &r, &e);
	pthread_join(t, NULL);
	CHECK_INT(rc, -1);
	CHECK_CONTAINS(e.msg, "/hang/e.bin': stopped");
	/* Their partial files stay for a resume; not for the next tests. */
	check_run("rm -f cache/archives/tmp/*", NULL);
	download_result_release(&r);
}

int
main(void)
{
	static const char *names[] = { "a.bin", "b.bin", "c.bin", "d.bin",
	    "e.bin", "f.bin", "g.bin", "h.bin", "k.bin" };
	char path[64];

	check_tmpdir("download");
	if (testserver_start("srv", &ts) < 0)
		return 1;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "srv/%s", names[i]);
		testserver_write_pattern(path, i == 7 ? 400000 : 300000, i + 1);
	}
	/* Things the failures must leave alone. */
	check_run("mkdir -p cache/archives/tmp cache/releases/e/1 && "
	    "echo sentinel > cache/archives/"
	    "1111111111111111111111111111111111111111111111111111111111111111"
	    " && echo bin > cache/releases/e/1/bin", NULL);
	CHECK_CASE(test_pinned);
	CHECK_CASE(test_fresh_and_cached);
	CHECK_CASE(test_resumes);
	CHECK_CASE(test_failures);
	CHECK_CASE(test_lock);
	/* A hole: announced as 2 GiB, taking no space. */
	CHECK_INT(check_run("truncate -s 2G srv/sparse.bin", NULL), 0);
	CHECK_CASE(test_deadline);
	testserver_stop(&ts);
	return check_done();
}
