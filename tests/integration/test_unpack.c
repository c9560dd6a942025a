/*
 * test_unpack.c: fetch_unpack() on real archives: made here with
 * libarchive's writer (hostile ones: "..", absolute names, symlinks and
 * hard links out, a zip slip, bombs, truncation, a full disk) and with
 * the tar, xz,
 * zstd and zip commands (the happy paths).  After every refusal the whole
 * test directory must be exactly as before: nothing outside, no partial
 * release, no temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "check.h"
#include "common/err.h"
#include "fetch/unpack.h"

#define DEST "cache/releases/eng/1.0"

enum kind { F_FILE, F_DIR, F_SYMLINK, F_HARDLINK };

struct fx {
	enum kind kind;
	const char *name;
	const char *data;	/* file content, or link target */
	int mode;		/* permission bits; 0: 0644 / 0755 */
	uint64_t zeros;		/* F_FILE: this many zero bytes instead */
};

static const char *root;	/* the test directory, absolute */

/* Write an archive with libarchive: format "tar" or "zip", filter
 * "gzip", "xz", "zstd" or "none". */
static void
write_archive(const char *path, const char *format, const char *filter,
    const struct fx *fx, size_t n)
{
	struct archive *a = archive_write_new();
	static char zero[1 << 16];

	if (strcmp(format, "zip") == 0) {
		archive_write_set_format_zip(a);
		archive_write_set_options(a, "zip:compression-level=1");
	} else
		archive_write_set_format_pax_restricted(a);
	if (strcmp(filter, "gzip") == 0) {
		archive_write_add_filter_gzip(a);
		archive_write_set_options(a, "gzip:compression-level=1");
	} else if (strcmp(filter, "xz") == 0)
		archive_write_add_filter_xz(a);
	else if (strcmp(filter, "zstd") == 0)
		archive_write_add_filter_zstd(a);
	if (archive_write_open_filename(a, path) != ARCHIVE_OK) {
		fprintf(stderr, "cannot write %s: %s\n", path,
		    archive_error_string(a));
		exit(99);
	}
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		uint64_t size = fx[i].zeros ? fx[i].zeros :
		    fx[i].kind == F_FILE && fx[i].data ? strlen(fx[i].data) : 0;

		archive_entry_set_pathname(e, fx[i].name);
		archive_entry_set_mtime(e, 1000000000, 0);
		switch (fx[i].kind) {
		case F_FILE:
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, fx[i].mode ? fx[i].mode : 0644);
			archive_entry_set_size(e, (la_int64_t)size);
			/* Zip streams of unknown length: sizes come after the
			 * data, in a descriptor, as in a zip bomb. */
			if (fx[i].zeros && strcmp(format, "zip") == 0)
				archive_entry_unset_size(e);
			break;
		case F_DIR:
			archive_entry_set_filetype(e, AE_IFDIR);
			archive_entry_set_perm(e, fx[i].mode ? fx[i].mode : 0755);
			break;
		case F_SYMLINK:
			archive_entry_set_filetype(e, AE_IFLNK);
			archive_entry_set_perm(e, 0777);
			archive_entry_set_symlink(e, fx[i].data);
			break;
		case F_HARDLINK:
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, 0644);
			archive_entry_set_hardlink(e, fx[i].data);
			archive_entry_set_size(e, 0);
			break;
		}
		if (archive_write_header(a, e) != ARCHIVE_OK) {
			fprintf(stderr, "cannot add %s: %s\n", fx[i].name,
			    archive_error_string(a));
			exit(99);
		}
		if (fx[i].zeros)
			for (uint64_t left = size; left > 0; ) {
				size_t k = left < sizeof(zero) ? left : sizeof(zero);

				archive_write_data(a, zero, k);
				left -= k;
			}
		else if (size)
			archive_write_data(a, fx[i].data, size);
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
}

/* Every path under the test directory with its type and size, sorted:
 * equal snapshots mean nothing was created, changed in size or removed. */
static char snap[1 << 16];
static size_t snap_len;

static int
snap_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)flag;
	(void)f;
	snap_len += (size_t)snprintf(snap + snap_len, sizeof(snap) - snap_len,
	    "%s %o %lld\n", path, (unsigned)st->st_mode,
	    S_ISDIR(st->st_mode) ? 0LL : (long long)st->st_size);
	return snap_len >= sizeof(snap) - 1;
}

static int
cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *
snapshot(void)
{
	char *lines[4096], *out, *p;
	size_t n = 0;

	snap_len = 0;
	nftw(".", snap_one, 16, FTW_PHYS);
	for (p = strtok(snap, "\n"); p && n < 4096; p = strtok(NULL, "\n"))
		lines[n++] = p;
	qsort(lines, n, sizeof(lines[0]), cmp_lines);
	out = malloc(sizeof(snap) + n);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
	}
	return out;
}

static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/*
 * Unpack archive into DEST expecting a refusal whose message contains
 * each of want (NULL-terminated); the tree must be unchanged.
 */
static void
expect_refused(const char *archive, const struct unpack_limits *lim,
    const char *const *want)
{
	struct err e = ERR_INIT;
	char *before = snapshot(), *after;
	char cwd[PATH_MAX];
	int rc = fetch_unpack(archive, DEST, lim, &e);

	CHECK_INT(rc, -1);
	CHECK_CONTAINS(e.msg, archive);
	for (; *want; want++)
		CHECK_CONTAINS(e.msg, *want);
	after = snapshot();
	CHECK_STR(after, before);
	CHECK(!exists(DEST));
	if (exists(DEST))	/* one failure, not one per later case */
		check_run("rm -rf " DEST, NULL);
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL && strcmp(cwd, root) == 0);
	free(before);
	free(after);
}

static const struct unpack_limits nosync = { 0, 0, 1, 0, 0, 0 };

static void
test_dotdot(void)
{
	char outside[PATH_MAX];
	const struct fx fx[] = {
		{ F_FILE, "ok.txt", "fine", 0, 0 },
		{ F_FILE, "../../../../escaped.txt", "gotcha", 0, 0 },
	};
	const struct fx fx2[] = {
		{ F_DIR, "sub", NULL, 0, 0 },
		{ F_FILE, "sub/../../x.txt", "gotcha", 0, 0 },
	};
	const struct fx fx3[] = {
		{ F_FILE, "red\033[31m/../../x'", "gotcha", 0, 0 },
	};
	struct err e = ERR_INIT;

	write_archive("dotdot.tar.gz", "tar", "gzip", fx, 2);
	expect_refused("dotdot.tar.gz", &nosync, (const char *[]){
	    "../../../../escaped.txt", "'..'", NULL });
	snprintf(outside, sizeof(outside), "%s/escaped.txt", root);
	CHECK(!exists(outside));
	write_archive("dotdot2.tar", "tar", "none", fx2, 2);
	expect_refused("dotdot2.tar", &nosync, (const char *[]){
	    "sub/../../x.txt", NULL });
	/* A name is shown with its control bytes and quotes escaped. */
	write_archive("escape.tar", "tar", "none", fx3, 1);
	expect_refused("escape.tar", &nosync, (const char *[]){
	    "entry 'red\\x1b[31m/../../x\\x27'", NULL });
	CHECK_INT(fetch_unpack("escape.tar", DEST, &nosync, &e), -1);
	CHECK(strchr(e.msg, '\033') == NULL);
}

static void
test_absolute(void)
{
	char name[PATH_MAX];
	struct fx fx[] = {
		{ F_FILE, NULL, "gotcha", 0, 0 },
	};

	snprintf(name, sizeof(name), "%s/absolute.txt", root);
	fx[0].name = name;
	write_archive("abs.tar.xz", "tar", "xz", fx, 1);
	expect_refused("abs.tar.xz", &nosync, (const char *[]){
	    "absolute path refused", NULL });
	CHECK(!exists(name));
}

static void
test_symlink_out(void)
{
	char target[PATH_MAX];
	struct fx abs[] = {
		{ F_SYMLINK, "link", NULL, 0, 0 },
		{ F_FILE, "link/pwned", "gotcha", 0, 0 },
	};
	const struct fx rel[] = {
		{ F_SYMLINK, "bin/link", "../../../../../outside", 0, 0 },
		{ F_FILE, "bin/link/pwned", "gotcha", 0, 0 },
	};
	/* Each link passes alone; d1 is the root, so s1 leaves it. */
	const struct fx chain[] = {
		{ F_SYMLINK, "d1", ".", 0, 0 },
		{ F_SYMLINK, "s1", "d1/../outside", 0, 0 },
	};
	const struct fx loop[] = {
		{ F_SYMLINK, "a", "b", 0, 0 },
		{ F_SYMLINK, "b", "a", 0, 0 },
	};
	/* Inside, but libarchive's secure flag refuses writing through it. */
	const struct fx through[] = {
		{ F_DIR, "sub", NULL, 0, 0 },
		{ F_SYMLINK, "link", "sub", 0, 0 },
		{ F_FILE, "link/f", "x", 0, 0 },
	};

	if (mkdir("outside", 0755) < 0 && errno != EEXIST)
		exit(99);
	snprintf(target, sizeof(target), "%s/outside", root);
	abs[0].data = target;
	write_archive("symabs.tar.gz", "tar", "gzip", abs, 2);
	expect_refused("symabs.tar.gz", &nosync, (const char *[]){
	    "entry 'link'", "symlink to", "outside the release", NULL });
	write_archive("symrel.tar.zst", "tar", "zstd", rel, 2);
	expect_refused("symrel.tar.zst", &nosync, (const char *[]){
	    "entry 'bin/link'", "../../../../../outside", NULL });
	CHECK(!exists("outside/pwned"));
	write_archive("chain.tar", "tar", "none", chain, 2);
	expect_refused("chain.tar", &nosync, (const char *[]){
	    "entry 's1'", "through other symlinks", NULL });
	write_archive("loop.tar", "tar", "none", loop, 2);
	expect_refused("loop.tar", &nosync, (const char *[]){
	    "symlink loop", NULL });
	write_archive("through.tar", "tar", "none", through, 3);
	expect_refused("through.tar", &nosync, (const char *[]){
	    "entry 'link/f'", NULL });
}

static void
test_hardlink_out(void)
{
	struct stat before, after;
	const struct fx passwd[] = {
		{ F_HARDLINK, "passwd", "/etc/passwd", 0, 0 },
		{ F_FILE, "passwd", "root::0:0::/:/bin/sh\n", 0, 0 },
	};
	const struct fx rel[] = {
		{ F_HARDLINK, "h", "../../../../outside/target", 0, 0 },
	};
	const struct fx via_symlink[] = {
		{ F_DIR, "d", NULL, 0, 0 },
		{ F_FILE, "d/f", "x", 0, 0 },
		{ F_SYMLINK, "s", "d", 0, 0 },
		{ F_HARDLINK, "h", "s/f", 0, 0 },
	};

	check_write_file("outside/target", "keep me\n");
	CHECK_INT(stat("/etc/passwd", &before), 0);
	write_archive("hard.tar.gz", "tar", "gzip", passwd, 2);
	expect_refused("hard.tar.gz", &nosync, (const char *[]){
	    "entry 'passwd'", "hard link to '/etc/passwd' refused", NULL });
	CHECK_INT(stat("/etc/passwd", &after), 0);
	CHECK_INT(after.st_nlink, before.st_nlink);
	CHECK_INT(after.st_size, before.st_size);
	write_archive("hardrel.tar", "tar", "none", rel, 1);
	expect_refused("hardrel.tar", &nosync, (const char *[]){
	    "hard link to '../../../../outside/target'", NULL });
	write_archive("hardsym.tar", "tar", "none", via_symlink, 4);
	expect_refused("hardsym.tar", &nosync, (const char *[]){
	    "hard link to 's/f'", NULL });
}

/*
 * x/up -> ".." stays inside from x/; a hard link to it made at the top
 * is the same link one level higher, pointing out of the release.
 */
static void
test_hardlink_to_symlink(void)
{
	const struct fx fx[] = {
		{ F_DIR, "x", NULL, 0, 0 },
		{ F_SYMLINK, "x/up", "..", 0, 0 },
		{ F_HARDLINK, "up2", "x/up", 0, 0 },
	};

	write_archive("hardlnk.tar", "tar", "none", fx, 3);
	expect_refused("hardlnk.tar", &nosync, (const char *[]){
	    "entry 'up2'", "hard link to 'x/up' refused", NULL });
}

static void
test_zip_slip(void)
{
	const struct fx fx[] = {
		{ F_FILE, "good.txt", "fine", 0, 0 },
		{ F_FILE, "../../../../zipslip.txt", "gotcha", 0, 0 },
	};

	write_archive("slip.zip", "zip", "none", fx, 2);
	expect_refused("slip.zip", &nosync, (const char *[]){
	    "entry '../../../../zipslip.txt'", NULL });
	CHECK(!exists("zipslip.txt"));
}

static void
test_devices(void)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();

	archive_write_set_format_pax_restricted(a);
	archive_write_open_filename(a, "fifo.tar");
	archive_entry_set_pathname(e, "pipe");
	archive_entry_set_filetype(e, AE_IFIFO);
	archive_entry_set_perm(e, 0644);
	archive_write_header(a, e);
	archive_entry_free(e);
	archive_write_close(a);
	archive_write_free(a);
	expect_refused("fifo.tar", &nosync, (const char *[]){
	    "entry 'pipe'", "fifo", NULL });
}

/* 1 GiB of zeros in ~1 MB: stopped at 100 MB, from the declared size
 * (tar) and by counting while streaming (zip without its central
 * directory: sizes unknown until the end). */
static void
test_bombs(void)
{
	const struct unpack_limits lim = { 100u << 20, 0, 1, 0, 0, 0 };
	const struct unpack_limits few = { 0, 100, 1, 0, 0, 0 };
	const struct fx tar[] = {
		{ F_FILE, "small", "x", 0, 0 },
		{ F_FILE, "zeros", NULL, 0, 1ULL << 30 },
	};
	const struct fx zip[] = {
		{ F_FILE, "zeros", NULL, 0, 1ULL << 30 },
	};
	struct fx many[300];
	char names[300][16];
	struct stat st;
	char *data;
	size_t len;

	write_archive("bomb.tar.zst", "tar", "zstd", tar, 2);
	CHECK(stat("bomb.tar.zst", &st) == 0 && st.st_size < (2 << 20));
	expect_refused("bomb.tar.zst", &lim, (const char *[]){
	    "entry 'zeros'", "declares 1073741824 bytes", NULL });

	write_archive("bomb.zip", "zip", "none", zip, 1);
	data = check_read_file("bomb.zip");
	CHECK(stat("bomb.zip", &st) == 0 && st.st_size < (8 << 20));
	len = (size_t)st.st_size;
	for (size_t i = len - 4; data && i > 0; i--)
		if (memcmp(data + i, "PK\001\002", 4) == 0) {
			len = i;	/* cut at the central directory */
			break;
		}
	CHECK(len < (size_t)st.st_size);
	CHECK_INT(truncate("bomb.zip", (off_t)len), 0);
	free(data);
	expect_refused("bomb.zip", &lim, (const char *[]){
	    "entry 'zeros'", "more than 104857600 bytes unpacked", NULL });

	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "f%03d", i);
		many[i] = (struct fx){ F_FILE, names[i], "", 0, 0 };
	}
	write_archive("many.tar.gz", "tar", "gzip", many, 300);
	expect_refused("many.tar.gz", &few, (const char *[]){
	    "more than 100 entries", NULL });
}

/* 16 MiB of zeros in a few kB of xz: under the byte cap, over the ratio. */
static void
test_ratio_bomb(void)
{
	struct unpack_limits lim = { 0, 0, 1, 0, 1u << 20, 200 };
	const struct fx zeros[] = {
		{ F_FILE, "zeros", NULL, 0, 16u << 20 },
	};
	const struct fx honest[] = {
		{ F_FILE, "a", "text", 0, 0 },
		{ F_FILE, "b", NULL, 0, 0 },
	};
	struct fx h2[2];
	struct err e = ERR_INIT;
	char *noise = malloc((2u << 20) + 1);
	uint32_t x = 7;

	write_archive("ratio.tar.xz", "tar", "xz", zeros, 1);
	expect_refused("ratio.tar.xz", &lim, (const char *[]){
	    "entry 'zeros'", "more than 200 times", "decompression bomb",
	    NULL });
	/* The same limits let an archive of ordinary data through. */
	for (size_t i = 0; i < (2u << 20); i++) {
		x = x * 1664525u + 1013904223u;
		noise[i] = (char)('a' + (x >> 24) % 26);
	}
	noise[2u << 20] = '\0';
	memcpy(h2, honest, sizeof(h2));
	h2[1].data = noise;
	write_archive("honest.tar.xz", "tar", "xz", h2, 2);
	CHECK_INT(fetch_unpack("honest.tar.xz", "cache/releases/eng/h", &lim,
	    &e), 0);
	CHECK(fetch_unpack_complete("cache/releases/eng/h"));
	check_run("rm -rf cache/releases/eng/h", NULL);
	free(noise);
}

/* The cap is bounded by the free space of the destination's file system. */
static void
test_free_space(void)
{
	struct unpack_limits lim = { 0, 0, 1, 0, 0, 0 };
	const struct fx fx[] = {
		{ F_FILE, "small", "x", 0, 0 },
	};
	struct statvfs vfs;

	CHECK_INT(statvfs(".", &vfs), 0);
	/* More than the disk holds must stay free: nothing fits. */
	lim.keep_free = (uint64_t)vfs.f_blocks * vfs.f_frsize + (1ull << 30);
	write_archive("small.tar", "tar", "none", fx, 1);
	expect_refused("small.tar", &lim, (const char *[]){
	    "free on the file system", NULL });
}

/*
 * The full disk of the field report: a small tmpfs, in a private mount
 * namespace of a child.  The archive's bytes fit the free space, but
 * each file takes a page, so write() fails with ENOSPC a few hundred
 * files in.  libarchive calls that a warning and would restore each
 * file's size with a hole: a release of zero-filled files.  Returns 0
 * when it ran, -1 when no tmpfs could be mounted here.
 */
static int
full_tmpfs(void)
{
	enum { NFILES = 400 };
	static struct fx fx[NFILES];
	static char names[NFILES][24];
	char buf[ERR_MSG_MAX + 256] = "";
	int pfd[2], status = 0;
	ssize_t n, got = 0;
	pid_t pid;

	for (int i = 0; i < NFILES; i++) {
		snprintf(names[i], sizeof(names[i]), "bin/tool%03d", i);
		fx[i] = (struct fx){ F_FILE, names[i], "#!/bin/sh\n", 0755, 0 };
	}
	write_archive("pages.tar", "tar", "none", fx, NFILES);
	if (mkdir("small", 0755) < 0 && errno != EEXIST)
		exit(99);
	CHECK_INT(pipe(pfd), 0);
	if ((pid = fork()) == 0) {
		struct err e = ERR_INIT;
		char line[ERR_MSG_MAX + 256];
		int rc, left;

		close(pfd[0]);
		if (unshare(getuid() == 0 ? CLONE_NEWNS :
		    CLONE_NEWUSER | CLONE_NEWNS) < 0 ||
		    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("tmpfs", "small", "tmpfs", 0, "size=1m") < 0)
			_exit(77);
		if (mkdir("small/releases", 0755) < 0 ||
		    mkdir("small/releases/eng", 0755) < 0)
			_exit(98);
		rc = fetch_unpack("pages.tar", "small/releases/eng/1.0",
		    &nosync, &e);
		left = check_run("test -z \"$(ls -A small/releases/eng)\"",
		    NULL);
		snprintf(line, sizeof(line), "rc=%d left=%d %s", rc, left,
		    e.msg);
		if (write(pfd[1], line, strlen(line)) < 0)
			_exit(97);
		_exit(0);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(pfd[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		return -1;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_CONTAINS(buf, "rc=-1 left=0 ");
	CHECK_CONTAINS(buf, "cannot write");
	CHECK_CONTAINS(buf, "No space left on device");
	return 0;
}

/*
 * A full disk: under RLIMIT_FSIZE write() fails (EFBIG) part way through
 * an entry, which libarchive reports as a warning.  The unpack must fail
 * and leave nothing, not a release with a cut binary.  In a child, so
 * the limit stays there.
 */
static void
test_full_disk(void)
{
	struct fx fx[] = {
		{ F_FILE, "README", "readme", 0, 0 },
		{ F_FILE, "bin/engine", NULL, 0, 0 },
	};
	char *big = malloc((1u << 20) + 1), msg[ERR_MSG_MAX] = "";
	char *before, *after;
	uint32_t x = 3;
	int pfd[2], status = 0;
	ssize_t n, got = 0;
	pid_t pid;

	for (size_t i = 0; i < (1u << 20); i++) {
		x = x * 1664525u + 1013904223u;
		big[i] = (char)('a' + (x >> 24) % 26);
	}
	big[1u << 20] = '\0';
	fx[1].data = big;
	write_archive("full.tar.gz", "tar", "gzip", fx, 2);
	before = snapshot();
	CHECK_INT(pipe(pfd), 0);
	if ((pid = fork()) == 0) {
		struct rlimit rl = { 256u << 10, 256u << 10 };
		struct err e = ERR_INIT;
		int rc;

		close(pfd[0]);
		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		rc = fetch_unpack("full.tar.gz", DEST, &nosync, &e);
		if (write(pfd[1], e.msg, strlen(e.msg)) < 0)
			_exit(3);
		_exit(rc == 0 ? 0 : 1);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], msg + got, sizeof(msg) - 1 - (size_t)got)) > 0)
		got += n;
	msg[got] = '\0';
	close(pfd[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	CHECK_CONTAINS(msg, "entry 'bin/engine'");
	CHECK_CONTAINS(msg, "cannot write");
	after = snapshot();
	CHECK_STR(after, before);
	CHECK(!exists(DEST));
	free(before);
	free(after);
	free(big);
	if (full_tmpfs() < 0)
		fprintf(stderr, "test_full_disk: no tmpfs could be mounted "
		    "here: the ENOSPC case was not run\n");
}

/* A release directory is trusted only with the mark of a finished
 * unpack, which no archive may bring along. */
static void
test_complete_mark(void)
{
	const struct fx fx[] = {
		{ F_FILE, "bin/engine", "x", 0, 0 },
		{ F_FILE, UNPACK_COMPLETE_MARK, "", 0, 0 },
	};
	struct err e = ERR_INIT;

	CHECK_INT(check_run("mkdir -p cache/releases/eng/handmade/bin && "
	    "echo x > cache/releases/eng/handmade/bin/engine", NULL), 0);
	CHECK(!fetch_unpack_complete("cache/releases/eng/handmade"));
	CHECK(!fetch_unpack_complete("cache/releases/eng/missing"));
	check_run("rm -rf cache/releases/eng/handmade", NULL);
	write_archive("mark.tar", "tar", "none", fx, 2);
	expect_refused("mark.tar", &nosync, (const char *[]){
	    "entry '" UNPACK_COMPLETE_MARK "'", NULL });
	write_archive("nomark.tar", "tar", "none", fx, 1);
	CHECK_INT(fetch_unpack("nomark.tar", "cache/releases/eng/m", &nosync,
	    &e), 0);
	CHECK(fetch_unpack_complete("cache/releases/eng/m"));
	check_run("rm -rf cache/releases/eng/m", NULL);
}

static void
test_truncated_corrupt(void)
{
	struct fx fx[] = {
		{ F_FILE, "first.txt", "first", 0, 0 },
		{ F_FILE, "bin/engine", NULL, 0, 0 },
	};
	char *big = malloc(1 << 20);
	uint32_t x = 1;
	struct stat st;
	int fd;

	for (size_t i = 0; i < (1 << 20) - 1; i++) {
		x = x * 1664525u + 1013904223u;
		big[i] = (char)('a' + (x >> 24) % 26);
	}
	big[(1 << 20) - 1] = '\0';
	fx[1].data = big;
	write_archive("trunc.tar.gz", "tar", "gzip", fx, 2);
	CHECK_INT(stat("trunc.tar.gz", &st), 0);
	CHECK_INT(truncate("trunc.tar.gz", st.st_size / 2), 0);
	expect_refused("trunc.tar.gz", &nosync, (const char *[]){
	    "entry 'bin/engine'", "corrupt or truncated", NULL });

	/* One byte changed inside the compressed data. */
	write_archive("flip.tar.xz", "tar", "xz", fx, 2);
	CHECK_INT(stat("flip.tar.xz", &st), 0);
	fd = open("flip.tar.xz", O_RDWR);
	CHECK(fd >= 0 && pwrite(fd, "\xff\x00\xff", 3, st.st_size / 2) == 3);
	close(fd);
	expect_refused("flip.tar.xz", &nosync, (const char *[]){
	    "corrupt or truncated", NULL });

	check_write_file("junk.tar.gz", "this is not an archive at all\n");
	expect_refused("junk.tar.gz", &nosync, (const char *[]){
	    "not a readable tar or zip archive", NULL });
	check_write_file("empty.tar", "");
	expect_refused("empty.tar", &nosync, (const char *[]){ NULL });
	expect_refused("missing.tar.gz", &nosync, (const char *[]){
	    "cannot open archive", NULL });
	free(big);
}

/* A release tree made with the tools users have. */
static void
make_tree(void)
{
	CHECK_INT(check_run("rm -rf src && mkdir -p src/bin src/lib "
	    "src/share/empty && printf '#!/bin/sh\\necho hi\\n' > src/bin/engine"
	    " && chmod 0755 src/bin/engine && echo lib > src/lib/libx.so && "
	    "chmod 4775 src/lib/libx.so && echo readme > src/README && "
	    "ln -s engine src/bin/latest && ln src/bin/engine src/bin/engine2 "
	    "&& touch -h -d @1000000000 src/README", NULL), 0);
}

static void
check_release(const char *dir, int hardlinks)
{
	char path[PATH_MAX], link[64];
	struct stat st;
	char *s;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/bin/engine", dir);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0111) == 0111);
	s = check_read_file(path);
	CHECK_STR(s, "#!/bin/sh\necho hi\n");
	free(s);
	snprintf(path, sizeof(path), "%s/bin/latest", dir);
	n = readlink(path, link, sizeof(link) - 1);
	CHECK_INT(n, 6);
	link[n > 0 ? n : 0] = '\0';
	CHECK_STR(link, "engine");
	snprintf(path, sizeof(path), "%s/bin/engine2", dir);
	s = check_read_file(path);
	CHECK_STR(s, "#!/bin/sh\necho hi\n");
	free(s);
	if (hardlinks) {
		CHECK(stat(path, &st) == 0 && st.st_nlink == 2);
	}
	snprintf(path, sizeof(path), "%s/lib/libx.so", dir);
	/* set-id and group write dropped; the rest kept */
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0755);
	snprintf(path, sizeof(path), "%s/README", dir);
	CHECK(stat(path, &st) == 0 && st.st_mtime == 1000000000);
	snprintf(path, sizeof(path), "%s/share/empty", dir);
	CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
	snprintf(path, sizeof(path), "%s/bin/engine", dir);
	{
		char cmd[PATH_MAX + 8], *out = NULL;

		snprintf(cmd, sizeof(cmd), "%s%s", path[0] == '/' ? "" : "./",
		    path);
		CHECK_INT(check_run(cmd, &out), 0);
		CHECK_STR(out, "hi\n");
		free(out);
	}
}

static void
test_happy(void)
{
	static const struct {
		const char *file, *cmd, *dest;
		int hardlinks;
	} cases[] = {
		{ "r.tar.gz", "tar -czf r.tar.gz -C src .",
		  "cache/releases/eng/0.1.0", 1 },
		{ "r.tar.xz", "tar -cJf r.tar.xz -C src bin lib share README",
		  "cache/releases/eng/0.2.0", 1 },
		{ "r.tar.zst", "tar --zstd -cf r.tar.zst -C src .",
		  "cache/releases/eng/0.10.0-rc1", 1 },
		{ "r.zip", "cd src && zip -qry ../r.zip .",
		  "cache/releases/eng/b1234", 0 },
	};
	struct unpack_limits synced = UNPACK_LIMITS_INIT;

	make_tree();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err e = ERR_INIT;
		char cwd[PATH_MAX];
		char *out = NULL;
		int rc = check_run(cases[i].cmd, &out);

		if (rc != 0)
			fprintf(stderr, "%s: %s\n", cases[i].cmd, out);
		CHECK_INT(rc, 0);
		free(out);
		rc = fetch_unpack(cases[i].file, cases[i].dest,
		    i == 0 ? &synced : &nosync, &e);
		if (rc != 0)
			fprintf(stderr, "%s\n", e.msg);
		CHECK_INT(rc, 0);
		CHECK(fetch_unpack_complete(cases[i].dest));
		check_release(cases[i].dest, cases[i].hardlinks);
		CHECK(getcwd(cwd, sizeof(cwd)) != NULL &&
		    strcmp(cwd, root) == 0);
	}
	/* Nothing else beside the releases: no temporary directories. */
	{
		char *out = NULL;

		check_run("ls -A cache/releases/eng", &out);
		CHECK_STR(out, "0.1.0\n0.10.0-rc1\n0.2.0\nb1234\n");
		free(out);
	}
}

static void
test_dest_exists(void)
{
	struct err e = ERR_INIT;
	char *before = snapshot(), *after;

	CHECK_INT(fetch_unpack("r.tar.gz", "cache/releases/eng/0.1.0", &nosync,
	    &e), -1);
	CHECK_CONTAINS(e.msg, "'cache/releases/eng/0.1.0' already exists");
	after = snapshot();
	CHECK_STR(after, before);
	free(before);
	free(after);
	/* An absolute destination and a parent made on the way. */
	{
		char dest[PATH_MAX];

		snprintf(dest, sizeof(dest), "%s/other/releases/x/1", root);
		CHECK_INT(fetch_unpack("r.tar.gz", dest, &nosync, &e), 0);
		check_release(dest, 1);
	}
}

int
main(void)
{
	static char rootbuf[PATH_MAX];

	check_tmpdir("unpack");
	root = getcwd(rootbuf, sizeof(rootbuf));
	/* The cache's folders exist; a refusal must leave them as they are. */
	CHECK_INT(check_run("mkdir -p cache/releases/eng", NULL), 0);
	CHECK_CASE(test_dotdot);
	CHECK_CASE(test_absolute);
	CHECK_CASE(test_symlink_out);
	CHECK_CASE(test_hardlink_out);
	CHECK_CASE(test_hardlink_to_symlink);
	CHECK_CASE(test_zip_slip);
	CHECK_CASE(test_devices);
	CHECK_CASE(test_bombs);
	CHECK_CASE(test_ratio_bomb);
	CHECK_CASE(test_free_space);
	CHECK_CASE(test_full_disk);
	CHECK_CASE(test_complete_mark);
	CHECK_CASE(test_truncated_corrupt);
	CHECK_CASE(test_happy);
	CHECK_CASE(test_dest_exists);
	return check_done();
}
