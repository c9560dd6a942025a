/*
 * test_weights.c: pinning the weights (fetch/weights.c): file and
 * directory hashes against sha256sum and the documented shell manifest,
 * the stamp that spares a re-hash, and every way a change is caught.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "config/conf.h"
#include "common/err.h"
#include "testserver.h"
#include "fetch/weights.h"

/* sha256sum's answer for a file, or the output of a pipeline. */
static char *
shell_hash(const char *cmd)
{
	char *out = NULL;

	if (check_run(cmd, &out) != 0 || out == NULL || strlen(out) < 64) {
		fprintf(stderr, "%s: %s\n", cmd, out ? out : "");
		exit(99);
	}
	out[64] = '\0';
	return out;
}

/* Rewrite path with content of the same length, keeping its mtime
 * (as cp --preserve=timestamps would): only ctime tells. */
static void
rewrite_keep_mtime(const char *path, const char *content)
{
	struct stat st;
	struct timespec times[2];

	CHECK_INT(stat(path, &st), 0);
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	usleep(20000);	/* a coarse clock must still see a new ctime */
	check_write_file(path, content);
	CHECK_INT(utimensat(AT_FDCWD, path, times, 0), 0);
}

static void
test_file(void)
{
	struct weights_stamp st = WEIGHTS_STAMP_INIT, saved;
	struct err e = ERR_INIT;
	char hex[65], *want, *other;

	check_write_file("model.gguf", "weights version one\n");
	want = shell_hash("sha256sum model.gguf");
	CHECK_INT(weights_hash("model.gguf", hex, &e), 0);
	CHECK_STR(hex, want);

	/* First use hashes and pins; the next one trusts the stamp. */
	CHECK_INT(weights_verify_path("model.gguf", want, &st, hex, &e), 1);
	CHECK_STR(hex, want);
	CHECK_STR(st.sha256, want);
	CHECK_INT(st.nfiles, 1);
	CHECK_INT(st.size, 20);
	CHECK_INT(weights_verify_path("model.gguf", want, &st, hex, &e), 0);
	CHECK_STR(hex, want);

	/* Proof that nothing was read: a forged pin with the same stamp
	 * is believed (and then refused against the configured hash). */
	saved = st;
	memset(st.sha256, 'a', 64);
	CHECK_INT(weights_verify_path("model.gguf", NULL, &st, hex, &e), 0);
	CHECK_STR(hex, st.sha256);
	CHECK_INT(weights_verify_path("model.gguf", want, &st, hex, &e), -1);
	CHECK_CONTAINS(e.msg, "configured sha256 is");
	st = saved;

	/* Same size, same mtime, same inode: ctime gives it away. */
	rewrite_keep_mtime("model.gguf", "weights version two\n");
	other = shell_hash("sha256sum model.gguf");
	CHECK_INT(weights_verify_path("model.gguf", want, &st, hex, &e), -1);
	CHECK_CONTAINS(e.msg, "'model.gguf'");
	CHECK_CONTAINS(e.msg, want);
	CHECK_CONTAINS(e.msg, other);
	CHECK_STR(hex, other);
	CHECK_STR(st.sha256, want);	/* the pin stays */

	/* Without a configured hash, the pin catches it, again and again. */
	CHECK_INT(weights_verify_path("model.gguf", NULL, &st, hex, &e), -1);
	CHECK_CONTAINS(e.msg, "changed since they were pinned");
	CHECK_CONTAINS(e.msg, want);
	CHECK_CONTAINS(e.msg, other);
	CHECK_INT(weights_verify_path("model.gguf", NULL, &st, hex, &e), -1);
	CHECK_STR(st.sha256, want);

	/* Restored: hashed again, accepted, stamp renewed. */
	check_write_file("model.gguf", "weights version one\n");
	CHECK_INT(weights_verify_path("model.gguf", NULL, &st, hex, &e), 1);
	CHECK_INT(weights_verify_path("model.gguf", NULL, &st, hex, &e), 0);

	/* The configuration wins: new weights with their new hash re-pin. */
	check_write_file("model.gguf", "weights version two\n");
	CHECK_INT(weights_verify_path("model.gguf", other, &st, hex, &e), 1);
	CHECK_STR(st.sha256, other);

	/* Replaced by another file (new inode), same content and times. */
	CHECK_INT(check_run("cp -p model.gguf m2 && mv m2 model.gguf", NULL), 0);
	CHECK_INT(weights_verify_path("model.gguf", other, &st, hex, &e), 1);

	/* Uppercase configured hex is the same hash. */
	for (char *p = other; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	CHECK_INT(weights_verify_path("model.gguf", other, NULL, hex, &e), 1);

	CHECK_INT(weights_verify_path("model.gguf", "abc", &st, hex, &e), -1);
	CHECK_CONTAINS(e.msg, "is not 64 hex digits");
	CHECK_INT(weights_verify_path("nope.gguf", NULL, &st, hex, &e), -1);
	CHECK_CONTAINS(e.msg, "cannot open weights 'nope.gguf'");
	free(want);
	free(other);
}

static const char manifest_cmd[] =
    "cd wdir && find -L . -name '.?*' -prune -o -type f -print | "
    "sed 's|^\\./||' | LC_ALL=C sort | while IFS= read -r f; do "
    "printf '%s %s %s\\n' \"$f\" \"$(stat -L -c %s \"$f\")\" "
    "\"$(sha256sum < \"$f\" | cut -d' ' -f1)\"; done | sha256sum";

static void
test_directory(void)
{
	struct weights_stamp st = WEIGHTS_STAMP_INIT;
	struct err e = ERR_INIT;
	char hex[65], *want, *changed;

	CHECK_INT(check_run("mkdir -p wdir/sub/deeper wdir/.git wdir/a-b && "
	    "echo config > wdir/config.json && "
	    "echo tensors > wdir/model-00001.safetensors && "
	    "echo more > wdir/sub/deeper/x && echo b > wdir/sub/b && "
	    "echo dash > wdir/a-b/c && echo obj > wdir/.git/HEAD && "
	    "echo hidden > wdir/.lock && echo blob > blob && "
	    "ln -s ../blob wdir/linked.bin", NULL), 0);
	want = shell_hash(manifest_cmd);
	CHECK_INT(weights_hash("wdir", hex, &e), 0);
	CHECK_STR(hex, want);

	CHECK_INT(weights_verify_path("wdir", want, &st, hex, &e), 1);
	CHECK_INT(st.nfiles, 6);
	CHECK_INT(weights_verify_path("wdir", want, &st, hex, &e), 0);

	/* Skipped names change nothing. */
	check_write_file("wdir/.lock", "other lock holder\n");
	CHECK_INT(weights_verify_path("wdir", want, &st, hex, &e), 0);

	/* A file deep inside, rewritten with the same size and mtime. */
	rewrite_keep_mtime("wdir/sub/deeper/x", "MORE\n");
	changed = shell_hash(manifest_cmd);
	CHECK(strcmp(changed, want) != 0);
	CHECK_INT(weights_verify_path("wdir", want, &st, hex, &e), -1);
	CHECK_CONTAINS(e.msg, "'wdir'");
	CHECK_CONTAINS(e.msg, changed);
	CHECK_CONTAINS(e.msg, want);
	free(changed);

	/* The target of a symlink changed: followed, so caught. */
	check_write_file("wdir/sub/deeper/x", "more\n");
	CHECK_INT(weights_verify_path("wdir", want, &st, hex, &e), 1);
	check_write_file("blob", "BLOB\n");
	CHECK_INT(weights_verify_path("wdir", NULL, &st, hex, &e), -1);
	CHECK_CONTAINS(e.msg, "changed since they were pinned");
	check_write_file("blob", "blob\n");

	/* A file added. */
	check_write_file("wdir/extra", "");
	CHECK_INT(weights_verify_path("wdir", NULL, &st, hex, &e), -1);
	unlink("wdir/extra");
	CHECK_INT(weights_verify_path("wdir", NULL, &st, hex, &e), 1);

	/* A loop through a symlink is refused, not followed forever. */
	CHECK_INT(symlink("..", "wdir/sub/up"), 0);
	CHECK_INT(weights_hash("wdir", hex, &e), -1);
	CHECK_CONTAINS(e.msg, "loops back");
	CHECK_INT(weights_verify_path("wdir", NULL, &st, hex, &e), -1);
	unlink("wdir/sub/up");

	CHECK_INT(check_run("mkdir -p hollow/.git && echo x > hollow/.git/x",
	    NULL), 0);
	CHECK_INT(weights_verify_path("hollow", NULL, &st, hex, &e), -1);
	CHECK_CONTAINS(e.msg, "weights directory 'hollow' holds no files");
	free(want);
}

static void
test_conf_weights(void)
{
	struct conf_weights w;
	struct weights_stamp st = WEIGHTS_STAMP_INIT;
	struct err e = ERR_INIT;
	char hex[65], *want;
	char name[] = "qwen", url[] = "https://example.org/w.gguf";
	char path[] = "q.gguf";

	memset(&w, 0, sizeof(w));
	w.name = name;
	w.url = url;
	CHECK_INT(weights_verify(&w, &st, hex, &e), -1);
	CHECK_CONTAINS(e.msg, "weights 'qwen' come from a url");

	check_write_file("q.gguf", "q weights\n");
	want = shell_hash("sha256sum q.gguf");
	w.url = NULL;
	w.path = path;
	w.sha256 = want;
	CHECK_INT(weights_verify(&w, &st, hex, &e), 1);
	CHECK_STR(hex, want);
	CHECK_INT(weights_verify(&w, &st, hex, &e), 0);
	check_write_file("q.gguf", "Q weights\n");
	CHECK_INT(weights_verify(&w, &st, hex, &e), -1);
	CHECK_CONTAINS(e.msg, "[weights \"qwen\"]: weights 'q.gguf' do not "
	    "match");
	free(want);
}

static int
same_stamp(const struct weights_stamp *a, const struct weights_stamp *b)
{
	return a->size == b->size && a->mtime_ns == b->mtime_ns &&
	    a->ctime_ns == b->ctime_ns && a->inode == b->inode &&
	    a->dev == b->dev && a->nfiles == b->nfiles &&
	    strcmp(a->meta, b->meta) == 0 && strcmp(a->sha256, b->sha256) == 0;
}

static void
test_stamp_text(void)
{
	struct weights_stamp a = WEIGHTS_STAMP_INIT, b;
	struct err e = ERR_INIT;
	char text[WEIGHTS_STAMP_TEXT_MAX], hex[65];

	weights_stamp_format(&a, text, sizeof(text));
	CHECK_INT(weights_stamp_parse(text, &b), 0);
	CHECK(same_stamp(&a, &b));

	CHECK_INT(weights_verify_path("wdir", NULL, &a, hex, &e), 1);
	weights_stamp_format(&a, text, sizeof(text));
	CHECK(strncmp(text, "v1 ", 3) == 0);
	CHECK_INT(weights_stamp_parse(text, &b), 0);
	CHECK(same_stamp(&a, &b));
	/* What was stored serves the next run: no re-hash. */
	CHECK_INT(weights_verify_path("wdir", NULL, &b, hex, &e), 0);

	CHECK_INT(weights_stamp_parse("v2 1 2 3 4 5 6 - -", &b), -1);
	CHECK_INT(weights_stamp_parse("v1 1 2 3 4 5 6 zz -", &b), -1);
	CHECK_INT(weights_stamp_parse("v1 1 2 3 4 5 6 - - extra", &b), -1);
	CHECK_INT(weights_stamp_parse("", &b), -1);
	CHECK_INT(b.size, 0);
	CHECK_STR(b.sha256, "");
}

/* url weights through the loopback server and the download module. */
static void
test_url(void)
{
	struct testserver ts;
	struct conf_weights w;
	struct weights_fetch_opts o = WEIGHTS_FETCH_OPTS_INIT;
	struct weights_stamp st = WEIGHTS_STAMP_INIT;
	struct err e = ERR_INIT;
	char name[] = "remote", url[256], hex[65], *path = NULL, *want, *other;
	char cached[128];
	static atomic_int stop;

	CHECK_INT(check_run("mkdir -p www", NULL), 0);
	check_write_file("www/model.gguf", "remote weights one\n");
	want = shell_hash("sha256sum www/model.gguf");
	if (testserver_start("www", &ts) < 0) {
		CHECK(0);
		free(want);
		return;
	}
	snprintf(url, sizeof(url), "%s/files/model.gguf", ts.base);
	snprintf(cached, sizeof(cached), "wcache/archives/%s", want);
	memset(&w, 0, sizeof(w));
	w.name = name;
	w.url = url;
	w.sha256 = want;
	o.cache = "wcache";
	o.allow_http = 1;

	CHECK_INT(weights_fetch(&w, &o, &st, hex, &path, &e), 1);
	CHECK_STR(hex, want);
	CHECK_STR(path, cached);
	CHECK_STR(st.sha256, want);
	free(path);
	/* Cached and stamped: no request, no hashing. */
	CHECK_INT(weights_fetch(&w, &o, &st, hex, &path, &e), 0);
	CHECK_STR(path, cached);
	free(path);
	CHECK_INT(testserver_count(&ts, "GET /files/model.gguf", NULL), 1);
	/* weights_verify() itself does not download. */
	CHECK_INT(weights_verify(&w, &st, hex, &e), -1);
	CHECK_CONTAINS(e.msg, "come from a url");

	/* The server's file changed: with the configured hash, refused. */
	check_write_file("www/model.gguf", "remote weights two\n");
	other = shell_hash("sha256sum www/model.gguf");
	CHECK_INT(unlink(cached), 0);
	CHECK_INT(weights_fetch(&w, &o, &st, hex, &path, &e), -1);
	CHECK(path == NULL);
	CHECK_CONTAINS(e.msg, "[weights \"remote\"]");
	CHECK_CONTAINS(e.msg, want);
	CHECK_CONTAINS(e.msg, other);
	/* Without one, the pin refuses it. */
	w.sha256 = NULL;
	CHECK_INT(weights_fetch(&w, &o, &st, hex, &path, &e), -1);
	CHECK_CONTAINS(e.msg, want);
	CHECK_CONTAINS(e.msg, other);
	CHECK_STR(st.sha256, want);

	/* Plain http only where allowed; a missing file is an error. */
	o.allow_http = 0;
	CHECK_INT(weights_fetch(&w, &o, &st, hex, &path, &e), -1);
	CHECK_CONTAINS(e.msg, "[weights \"remote\"]");
	CHECK(path == NULL);
	o.allow_http = 1;
	snprintf(url, sizeof(url), "%s/files/missing.gguf", ts.base);
	CHECK_INT(weights_fetch(&w, &o, NULL, hex, &path, &e), -1);
	CHECK_CONTAINS(e.msg, "404");
	/* A host that never finishes: the deadline ends it, and so does
	 * the stop flag, as for a release archive. */
	snprintf(url, sizeof(url), "%s/hang/model.gguf", ts.base);
	o.deadline_ms = 1000;
	CHECK_INT(weights_fetch(&w, &o, NULL, hex, &path, &e), -1);
	CHECK_CONTAINS(e.msg, "not done within its deadline of 1 s");
	o.deadline_ms = 0;
	o.stop = &stop;
	atomic_store(&stop, 1);
	CHECK_INT(weights_fetch(&w, &o, NULL, hex, &path, &e), -1);
	CHECK_CONTAINS(e.msg, "stopped");
	CHECK(path == NULL);
	testserver_stop(&ts);
	free(want);
	free(other);
}

int
main(void)
{
	check_tmpdir("weights");
	CHECK_CASE(test_file);
	CHECK_CASE(test_directory);
	CHECK_CASE(test_conf_weights);
	CHECK_CASE(test_url);
	CHECK_CASE(test_stamp_text);
	return check_done();
}
