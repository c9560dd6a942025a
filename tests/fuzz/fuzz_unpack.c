/*
 * fuzz_unpack.c: release archives (fetch/unpack.c), tar and zip, gzip,
 * xz or zstd compressed or not, unpacked with the project's secure flags
 * from memory (a memfd) into a temporary folder, with small caps so a
 * bomb stops early.
 *
 * An unpack either leaves the whole release, every name inside it, no
 * set-id or group/other-writable bits and no symlink leading out, or
 * fails with a message and leaves nothing behind, not even its staging
 * folder.
 */
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "fetch/unpack.h"
#include "fuzz.h"

static char base[4096], dest[4200], dest_real[PATH_MAX], archive[64];
static int memfd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(base, sizeof(base), "%s", fuzz_tmpdir("unpack"));
	snprintf(dest, sizeof(dest), "%s/release", base);
	if ((memfd = memfd_create("archive", MFD_CLOEXEC)) < 0)
		abort();
	snprintf(archive, sizeof(archive), "/proc/self/fd/%d", memfd);
	return 0;
}

static int
check_entry(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	char target[PATH_MAX], real[PATH_MAX];
	ssize_t n;

	(void)flag;
	(void)ftw;
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) &&
	    !S_ISLNK(st->st_mode))
		fuzz_fail("'%s' is not a file, folder or symlink", path);
	/* A symlink's own mode is always 0777 and means nothing. */
	if (!S_ISLNK(st->st_mode)) {
		if (st->st_mode & (S_ISUID | S_ISGID | S_ISVTX | S_IWGRP |
		    S_IWOTH) ||
		    (st->st_mode & (S_IRUSR | S_IWUSR)) != (S_IRUSR | S_IWUSR))
			fuzz_fail("'%s' has mode %o", path,
			    (unsigned)st->st_mode);
		return 0;
	}
	if ((n = readlink(path, target, sizeof(target) - 1)) < 0)
		abort();
	target[n] = '\0';
	if (target[0] == '/')
		fuzz_fail("symlink '%s' -> '%s'", path, target);
	if (realpath(path, real) != NULL &&
	    (strncmp(real, dest_real, strlen(dest_real)) != 0 ||
	    (real[strlen(dest_real)] != '/' && real[strlen(dest_real)] != '\0')))
		fuzz_fail("symlink '%s' leads to '%s'", path, real);
	return 0;
}

/* Names in base besides the release itself: none may be left. */
static void
check_nothing_left(int unpacked)
{
	DIR *d = opendir(base);
	struct dirent *de;

	if (d == NULL)
		abort();
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    (unpacked && strcmp(de->d_name, "release") == 0))
			continue;
		fuzz_fail("'%s' left beside the release", de->d_name);
	}
	closedir(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unpack_limits lim = UNPACK_LIMITS_INIT;
	struct err e = ERR_INIT;
	struct stat st;

	lim.max_bytes = 32 << 20;
	lim.max_entries = 1000;
	lim.no_sync = 1;
	if (ftruncate(memfd, 0) < 0 ||
	    pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	if (fetch_unpack(archive, dest, &lim, &e) < 0) {
		if (e.msg[0] == '\0')
			fuzz_fail("failed without a message");
		if (lstat(dest, &st) == 0)
			fuzz_fail("failed (%s) but left the release", e.msg);
		check_nothing_left(0);
		return 0;
	}
	if (realpath(dest, dest_real) == NULL)
		fuzz_fail("unpacked, but no '%s'", dest);
	if (nftw(dest, check_entry, 16, FTW_PHYS) != 0)
		abort();
	check_nothing_left(1);
	if (fs_remove_tree(dest, &e) < 0)
		abort();
	return 0;
}
