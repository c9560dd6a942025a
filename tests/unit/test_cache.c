/*
 * test_cache.c: trimming unpacked releases (fetch/cache.c) with small
 * caps: least recently used first, the release in use kept, archives and
 * fresh work directories untouched, stale ones removed, sizes as du(1).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fetch/cache.h"
#include "check.h"
#include "common/err.h"

struct removed {
	char paths[16][256];
	uint64_t bytes[16];
	int n;
};

static void
on_removed(void *arg, const char *path, uint64_t bytes)
{
	struct removed *r = arg;

	if (r->n < 16) {
		snprintf(r->paths[r->n], sizeof(r->paths[0]), "%s", path);
		r->bytes[r->n++] = bytes;
	}
}

static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void
set_time(const char *path, time_t t)
{
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };

	if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) < 0) {
		perror(path);
		exit(99);
	}
}

/* A release of about kb kilobytes, last used at t (0: no stamp file,
 * the directory's own mtime set to -t instead). */
static void
make_release(const char *path, int kb, time_t t)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "mkdir -p %s/bin && head -c %d /dev/urandom"
	    " > %s/bin/engine && ln %s/bin/engine %s/bin/engine-link",
	    path, kb * 1024, path, path, path);
	CHECK_INT(check_run(cmd, NULL), 0);
	if (t > 0) {
		char stamp[300];

		snprintf(stamp, sizeof(stamp), "%s/" CACHE_LAST_USED, path);
		check_write_file(stamp, "");
		set_time(stamp, t);
	} else
		set_time(path, -t);
}

/* du -s -B1, which the cache's sizes must equal. */
static uint64_t
du_bytes(const char *path)
{
	char cmd[300], *out = NULL;
	uint64_t n;

	snprintf(cmd, sizeof(cmd), "du -s -B1 %s", path);
	if (check_run(cmd, &out) != 0)
		exit(99);
	n = strtoull(out, NULL, 10);
	free(out);
	return n;
}

static void
setup(void)
{
	CHECK_INT(check_run("rm -rf cache && mkdir -p cache/archives && "
	    "echo archive > cache/archives/0123abcd", NULL), 0);
	make_release("cache/releases/eng/0.1.0", 64, 1000);
	make_release("cache/releases/eng/0.3.0", 64, 2000);
	make_release("cache/releases/eng/0.2.0", 64, 3000);
	make_release("cache/releases/other/1.0", 64, -4000);
}

static void
test_lru(void)
{
	struct cache_gc_stats st;
	struct removed r;
	struct err e = ERR_INIT;
	uint64_t each, all;

	setup();
	each = du_bytes("cache/releases/eng/0.1.0");
	all = 4 * each;
	CHECK(each >= 64 * 1024 && each < 128 * 1024);
	CHECK_INT(du_bytes("cache/releases/other/1.0"), each - 0);

	/* Under the cap: nothing to do. */
	memset(&r, 0, sizeof(r));
	CHECK_INT(cache_gc("cache", all, NULL, on_removed, &r, &st, &e), 0);
	CHECK_INT(st.releases, 4);
	CHECK_INT(st.removed, 0);
	CHECK_INT(st.kept_bytes, all);
	CHECK_INT(r.n, 0);

	/* One byte over: the least recently used goes, and only it. */
	CHECK_INT(cache_gc("cache", all - 1, NULL, on_removed, &r, &st, &e), 0);
	CHECK_INT(st.removed, 1);
	CHECK_INT(st.removed_bytes, each);
	CHECK_INT(st.kept_bytes, 3 * each);
	CHECK_INT(r.n, 1);
	CHECK_STR(r.paths[0], "cache/releases/eng/0.1.0");
	CHECK_INT(r.bytes[0], each);
	CHECK(!exists("cache/releases/eng/0.1.0"));
	CHECK(exists("cache/releases/eng/0.3.0/bin/engine"));

	/* Room for one: 0.3.0 (2000) then 0.2.0 (3000) go, the release
	 * without a stamp (its directory's mtime, 4000) stays. */
	memset(&r, 0, sizeof(r));
	CHECK_INT(cache_gc("cache", each + each / 2, NULL, on_removed, &r,
	    &st, &e), 0);
	CHECK_INT(r.n, 2);
	CHECK_STR(r.paths[0], "cache/releases/eng/0.3.0");
	CHECK_STR(r.paths[1], "cache/releases/eng/0.2.0");
	CHECK(exists("cache/releases/other/1.0/bin/engine"));
	CHECK(exists("cache/archives/0123abcd"));
	/* No ".gc-" directory left behind. */
	{
		char *out = NULL;

		check_run("ls -A cache/releases/eng", &out);
		CHECK_STR(out, "");
		free(out);
	}
}

static void
test_touch_and_keep(void)
{
	struct cache_gc_stats st;
	struct removed r;
	struct err e = ERR_INIT;
	uint64_t each;

	setup();
	each = du_bytes("cache/releases/eng/0.1.0");

	/* Used just now: the oldest becomes the newest. */
	CHECK_INT(cache_touch("cache/releases/eng/0.1.0", &e), 0);
	memset(&r, 0, sizeof(r));
	CHECK_INT(cache_gc("cache", 4 * each - 1, NULL, on_removed, &r, &st,
	    &e), 0);
	CHECK_INT(r.n, 1);
	CHECK_STR(r.paths[0], "cache/releases/eng/0.3.0");
	CHECK(exists("cache/releases/eng/0.1.0"));

	/* The release about to run is kept even with a cap of zero. */
	memset(&r, 0, sizeof(r));
	CHECK_INT(cache_gc("cache", 0, "cache/releases/eng/0.2.0", on_removed,
	    &r, &st, &e), 0);
	CHECK_INT(st.removed, 2);
	CHECK_INT(st.kept_bytes, du_bytes("cache/releases/eng/0.2.0"));
	CHECK(exists("cache/releases/eng/0.2.0/bin/engine"));
	CHECK(!exists("cache/releases/eng/0.1.0"));
	CHECK(!exists("cache/releases/other/1.0"));

	CHECK_INT(cache_touch("cache/releases/missing", &e), -1);
	CHECK_CONTAINS(e.msg, "cannot mark 'cache/releases/missing' used");
}

/* The id of a process that has ended. */
static long
dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return (long)pid;
}

static void
test_work_dirs(void)
{
	struct cache_gc_stats st;
	struct err e = ERR_INIT;
	char cmd[1024];
	long dead = dead_pid(), live = (long)getppid(), self = (long)getpid();

	setup();
	snprintf(cmd, sizeof(cmd), "cd cache/releases/eng && "
	    "mkdir -p .tmp-0.4.0-%ld-AbCdEf/bin .tmp-0.5.0-%ld-XyZ123 "
	    ".tmp-0.6.0-%ld-OldOld .gc-0.0.1-%ld-0/bin .gc-0.0.2-%ld-3/bin "
	    ".tmp-0.7.0-%ld-Mine00 && touch .tmp-0.4.0-%ld-AbCdEf/bin/x "
	    ".gc-0.0.1-%ld-0/bin/y", dead, live, live, dead, live, self, dead,
	    dead);
	CHECK_INT(check_run(cmd, NULL), 0);
	snprintf(cmd, sizeof(cmd), "cache/releases/eng/.tmp-0.6.0-%ld-OldOld",
	    live);
	set_time(cmd, time(NULL) - CACHE_STALE_SECONDS - 60);
	CHECK_INT(cache_gc("cache", UINT64_MAX, NULL, NULL, NULL, &st, &e), 0);
	CHECK_INT(st.releases, 4);
	CHECK_INT(st.removed, 0);
	/* Gone: the dead process's unpack and removal, the old unpack. */
	CHECK_INT(st.stale_removed, 3);
	{
		char *out = NULL, want[512];

		check_run("ls -A cache/releases/eng", &out);
		snprintf(want, sizeof(want), ".gc-0.0.2-%ld-3\n"
		    ".tmp-0.5.0-%ld-XyZ123\n.tmp-0.7.0-%ld-Mine00\n"
		    "0.1.0\n0.2.0\n0.3.0\n", live, live, self);
		CHECK_STR(out, want);
		free(out);
	}
}

static void
test_edges(void)
{
	struct cache_gc_stats st;
	struct err e = ERR_INIT;

	CHECK_INT(check_run("rm -rf cache empty && mkdir empty", NULL), 0);
	CHECK_INT(cache_gc("empty", 0, NULL, NULL, NULL, &st, &e), 0);
	CHECK_INT(st.releases, 0);
	CHECK_INT(cache_gc("nonexistent", 0, NULL, NULL, NULL, NULL, &e), 0);

	check_write_file("afile", "x");
	CHECK_INT(check_run("mkdir -p bad && ln -s ../afile bad/releases",
	    NULL), 0);
	CHECK_INT(cache_gc("bad", 0, NULL, NULL, NULL, &st, &e), -1);
	CHECK_CONTAINS(e.msg, "cannot open 'bad/releases'");

	/* Files and symlinks among releases are not releases. */
	CHECK_INT(check_run("mkdir -p c2/releases/eng c2/outside && "
	    "echo x > c2/releases/eng/notes && "
	    "ln -s ../../outside c2/releases/eng/9.9 && "
	    "echo keep > c2/outside/f", NULL), 0);
	CHECK_INT(cache_gc("c2", 0, NULL, NULL, NULL, &st, &e), 0);
	CHECK_INT(st.releases, 0);
	CHECK(exists("c2/outside/f"));
	CHECK(exists("c2/releases/eng/notes"));
}

int
main(void)
{
	check_tmpdir("cache");
	CHECK_CASE(test_lru);
	CHECK_CASE(test_touch_and_keep);
	CHECK_CASE(test_work_dirs);
	CHECK_CASE(test_edges);
	return check_done();
}
