/*
 * unpack.h: unpacking a release archive (tar or zip; gzip, xz or zstd
 * compressed, or not) into its own directory, safely and atomically.
 * libarchive is used here and nowhere else.
 */
#ifndef FETCH_UNPACK_H
#define FETCH_UNPACK_H

#include <stdint.h>

struct err;

#define UNPACK_DEFAULT_MAX_BYTES	(16ULL << 30)	/* 16 GiB */
#define UNPACK_DEFAULT_MAX_ENTRIES	200000ULL
#define UNPACK_DEFAULT_RATIO_AFTER	(256ULL << 20)	/* 256 MiB */
#define UNPACK_DEFAULT_MAX_RATIO	200

/*
 * The file a finished unpack leaves at the top of the release directory,
 * written after the last entry: a tree without it (an unpack cut short by
 * an older version, a crash, a hand-made folder) is not to be trusted.
 * An archive entry of that name is refused.
 */
#define UNPACK_COMPLETE_MARK	".unpacked"

struct unpack_limits {
	uint64_t max_bytes;	/* unpacked bytes, holes of sparse files
				 * included; 0: UNPACK_DEFAULT_MAX_BYTES.  The
				 * free space of the destination's file system
				 * (less keep_free) lowers it, measured before
				 * the first entry and again while writing */
	uint64_t max_entries;	/* entries of any kind; 0: the default */
	int no_sync;		/* 1: skip the syncfs() before the rename
				 * (tests and benchmarks only) */
	uint64_t keep_free;	/* bytes left free on that file system */
	uint64_t ratio_after;	/* the expansion ratio is judged once this
				 * many bytes are unpacked; 0: the default */
	unsigned max_ratio;	/* unpacked bytes per archive byte read past
				 * ratio_after; 0: the default */
};

#define UNPACK_LIMITS_INIT { 0, 0, 0, 0, 0, 0 }

/*
 * Unpack the archive at archive_path into dest_dir, which must not exist
 * (e.g. "cache/releases/basert/0.2.4"), nothing stripped.
 *
 * The entries go to a temporary directory beside dest_dir
 * (".tmp-<name>-<pid>-XXXXXX", see cache.h), which is synced and renamed
 * to dest_dir only once every entry is in place; on any failure it is
 * removed, so dest_dir either holds the whole archive or does not exist.
 *
 * Refused, with the archive and the entry named in e: names that are
 * absolute or hold a ".." component; symlinks whose target is absolute or
 * resolves (through other symlinks too) outside the release directory;
 * hard links to anything outside it or through a symlink; writing through
 * a symlink; devices, fifos and sockets; more than limits->max_bytes or
 * limits->max_entries, counted while streaming so a decompression bomb
 * stops at the cap; more than the destination's file system has free;
 * an expansion past limits->max_ratio (a bomb under the cap); an entry
 * called UNPACK_COMPLETE_MARK; truncated or corrupt data; a write that
 * fails (a full disk: libarchive calls it a warning, here it is an
 * error); an empty archive.
 *
 * Permission bits are kept (binaries stay executable) except set-id,
 * sticky and group/other write; the owner can always read and write what
 * was unpacked, so the cache can remove it.  Modification times are kept.
 *
 * The working directory is changed to the temporary directory for the
 * duration of the call (libarchive's disk writer resolves names against
 * it, which is what makes its checks hold) and restored before return;
 * do not call this while another thread depends on the working directory.
 *
 * limits may be NULL for the defaults.  Returns 0 or -1 with e set.
 */
int fetch_unpack(const char *archive_path, const char *dest_dir,
    const struct unpack_limits *limits, struct err *e);

/*
 * 1 when dir is a release directory a finished fetch_unpack() made (it
 * holds UNPACK_COMPLETE_MARK), 0 otherwise (missing, not a directory,
 * or unpacked only in part).
 */
int fetch_unpack_complete(const char *dir);

#endif
