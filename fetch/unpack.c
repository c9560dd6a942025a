/*
 * unpack.c: release archives into release directories with libarchive
 * (see unpack.h).  Owns the temporary directory of an unpack in progress
 * and the checks libarchive's secure flags do not make: where symlinks
 * and hard links point, the byte and entry caps, the free space and the
 * expansion ratio, the kinds of entries, and the mark that says an unpack
 * finished.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/strv.h"
#include "unpack.h"

#define READ_BLOCK	(256 * 1024)
#define NAME_SHOWN	200	/* bytes of an entry name put in a message */
#define SHOWN_MAX	(NAME_SHOWN * 4 + 8)	/* ...once escaped */
#define MAX_SYMLINK_HOPS	40	/* as the kernel's ELOOP limit */
#define FREE_CHECK_EVERY	(16ULL << 20)	/* bytes between statvfs() */

struct unpack {
	const char *archive;	/* the archive's path, for messages */
	const char *dest;	/* the release directory, for messages */
	struct archive *in;	/* owned */
	struct archive *out;	/* owned */
	uint64_t max_bytes, max_entries;
	uint64_t bytes, entries;
	uint64_t keep_free;	/* see unpack_limits */
	uint64_t ratio_after;
	unsigned max_ratio;
	uint64_t free_checked;	/* bytes when statvfs() was last asked */
	int cap_is_free;	/* max_bytes is the free space, not the cap */
	struct strv symlinks;	/* names of symlink entries, to re-check */
	char shown[SHOWN_MAX];	/* the current entry, printable */
	struct err *e;
};

/* A name from the archive made safe to print into out (at least
 * SHOWN_MAX bytes): control bytes and quotes escaped, long names cut. */
static void
printable(const char *name, char *out)
{
	size_t o = 0, i;

	for (i = 0; name[i] && i < NAME_SHOWN; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\')
			o += (size_t)snprintf(out + o, SHOWN_MAX - o, "\\x%02x",
			    c);
		else
			out[o++] = (char)c;
	}
	if (name[i])
		o += (size_t)snprintf(out + o, SHOWN_MAX - o, "...");
	out[o] = '\0';
}

static int entry_error(struct unpack *u, const char *fmt, ...)
    ERR_PRINTF(2, 3);

/* "cannot unpack 'ARCHIVE': entry 'NAME': " and the detail. */
static int
entry_error(struct unpack *u, const char *fmt, ...)
{
	char what[ERR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return err_set(u->e, "cannot unpack '%s': entry '%s': %s", u->archive,
	    u->shown, what);
}

static const char *
archive_msg(struct archive *a)
{
	const char *s = archive_error_string(a);

	return s ? s : "unknown libarchive error";
}

/* A failed write, with the system's reason ("No space left on device")
 * that libarchive's message leaves out. */
static int
write_error(struct unpack *u)
{
	int errnum = archive_errno(u->out);

	if (errnum > 0)
		return entry_error(u, "cannot write: %s: %s",
		    archive_msg(u->out), strerror(errnum));
	return entry_error(u, "cannot write: %s", archive_msg(u->out));
}

/*
 * Number of directory levels below the release root that name stands
 * for, or -1 when it is absolute or any ".." component is met ("a/./b"
 * is 2; "a/../b" is refused although it stays inside: an honest archive
 * has no use for it).
 */
static int
name_depth(const char *name)
{
	int depth = 0;

	if (name[0] == '/')
		return -1;
	for (const char *p = name; *p; ) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return -1;
		if (n > 0 && !(n == 1 && p[0] == '.'))
			depth++;
		p += n;
		while (*p == '/')
			p++;
	}
	return depth;
}

/*
 * 1 when a symlink called name with this target stays inside the root
 * by its text alone: relative, and never climbing above the root from
 * the link's own directory.
 */
static int
symlink_text_inside(const char *name, const char *target)
{
	int depth = name_depth(name) - 1;	/* the link's directory */

	if (target[0] == '/' || target[0] == '\0' || depth < 0)
		return 0;
	for (const char *p = target; *p; ) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return 0;
		} else if (n > 0 && !(n == 1 && p[0] == '.'))
			depth++;
		p += n;
		while (*p == '/')
			p++;
	}
	return 1;
}

/*
 * 1 when the hard link target names something already unpacked inside
 * the root (the working directory) and reached without a symlink: each
 * directory on the way is a real directory, the target is not one.
 */
static int
hardlink_inside(const char *target)
{
	char path[PATH_MAX];
	struct stat st;
	size_t len = strlen(target);

	if (name_depth(target) <= 0 || len >= sizeof(path))
		return 0;
	memcpy(path, target, len + 1);
	for (char *p = path; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
			*p = '/';
			return 0;
		}
		*p = '/';
	}
	/* A hard link to a symlink is that symlink at another depth, where
	 * its target means something else: refused as well. */
	return lstat(path, &st) == 0 && !S_ISDIR(st.st_mode) &&
	    !S_ISLNK(st.st_mode);
}

/* 1 when name is the completion mark at the top of the release. */
static int
is_complete_mark(const char *name)
{
	while (name[0] == '.' && name[1] == '/')
		name += 2;
	return strncmp(name, UNPACK_COMPLETE_MARK,
	    strlen(UNPACK_COMPLETE_MARK)) == 0 &&
	    strspn(name + strlen(UNPACK_COMPLETE_MARK), "/") ==
	    strlen(name + strlen(UNPACK_COMPLETE_MARK));
}

/*
 * Follow the path from the root (the working directory) as the kernel
 * would, through every symlink on the way, without leaving the root.
 * Returns 1 when it stays inside, 0 when it escapes (an absolute target
 * or a ".." above the root), -1 on a symlink loop (or a link that cannot
 * be read).  Components that do not exist are taken by their text.
 */
static int
resolves_inside(const char *path)
{
	char pending[2 * PATH_MAX];	/* what is left to follow */
	char done[PATH_MAX];		/* resolved so far, "" = the root */
	size_t dlen = 0, prev;
	int hops = 0, exists = 1;

	if (strlen(path) >= sizeof(pending))
		return 0;
	strcpy(pending, path);
	done[0] = '\0';
	while (pending[0] != '\0') {
		size_t n = strcspn(pending, "/");
		char comp[NAME_MAX + 1];
		struct stat st;

		if (n > NAME_MAX)
			return 0;
		memcpy(comp, pending, n);
		comp[n] = '\0';
		while (pending[n] == '/')
			n++;
		memmove(pending, pending + n, strlen(pending + n) + 1);
		if (comp[0] == '\0' || strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *slash;

			if (dlen == 0)
				return 0;
			slash = strrchr(done, '/');
			dlen = slash ? (size_t)(slash - done) : 0;
			done[dlen] = '\0';
			continue;
		}
		if (dlen + 1 + strlen(comp) + 1 > sizeof(done))
			return 0;
		prev = dlen;
		if (dlen > 0)
			done[dlen++] = '/';
		strcpy(done + dlen, comp);
		dlen += strlen(comp);
		if (exists && lstat(done, &st) < 0)
			exists = 0;	/* the rest is taken by its text */
		else if (exists && S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t tl = readlink(done, target, sizeof(target) - 1);
			size_t rest = strlen(pending);

			if (tl <= 0 || ++hops > MAX_SYMLINK_HOPS)
				return -1;
			target[tl] = '\0';
			if (target[0] == '/' ||
			    (size_t)tl + 1 + rest + 1 > sizeof(pending))
				return 0;
			/* The link's name gives way to its target. */
			dlen = prev;
			done[dlen] = '\0';
			memmove(pending + tl + 1, pending, rest + 1);
			memcpy(pending, target, (size_t)tl);
			pending[tl] = '/';
		}
	}
	return 1;
}

/*
 * Mode bits as unpacked: the archive's permissions without set-id,
 * sticky and group/other write, and always owner read/write (and search
 * for directories) so the cache can trim what it unpacked.
 */
static mode_t
safe_perm(mode_t perm, int is_dir)
{
	perm &= 0777 & ~(mode_t)(S_IWGRP | S_IWOTH);
	return perm | (is_dir ? 0700 : 0600);
}

static int
check_entry(struct unpack *u, struct archive_entry *ent)
{
	const char *name = archive_entry_pathname(ent);
	const char *hardlink = archive_entry_hardlink(ent);
	mode_t type = archive_entry_filetype(ent);
	char target_shown[SHOWN_MAX];

	if (name == NULL || name[0] == '\0')
		return entry_error(u, "%s", "entry without a name");
	if (name_depth(name) < 0)
		return entry_error(u, "%s", name[0] == '/' ?
		    "absolute path refused" : "path with '..' refused");
	if (is_complete_mark(name))
		return entry_error(u, "%s", "the name of the mark a finished "
		    "unpack leaves is refused");
	if (hardlink != NULL) {
		if (!hardlink_inside(hardlink)) {
			printable(hardlink, target_shown);
			return entry_error(u, "hard link to '%s' refused: it is "
			    "not a file (nor a symlink) unpacked inside the "
			    "release directory", target_shown);
		}
		return 0;
	}
	switch (type) {
	case AE_IFREG:
	case AE_IFDIR:
		archive_entry_set_perm(ent,
		    safe_perm(archive_entry_perm(ent), type == AE_IFDIR));
		return 0;
	case AE_IFLNK: {
		const char *target = archive_entry_symlink(ent);

		if (target == NULL || !symlink_text_inside(name, target)) {
			printable(target ? target : "", target_shown);
			return entry_error(u, "symlink to '%s' refused: it "
			    "points outside the release directory",
			    target_shown);
		}
		if (strv_push(&u->symlinks, name) < 0)
			return err_errno(u->e, "cannot unpack '%s'", u->archive);
		return 0;
	}
	default:
		return entry_error(u, "%s", "device, fifo or socket refused");
	}
}

static int
over_cap(struct unpack *u, uint64_t entry_end)
{
	return entry_end > u->max_bytes || u->bytes > u->max_bytes - entry_end;
}

static int
cap_error(struct unpack *u)
{
	if (u->cap_is_free)
		return err_set(u->e, "cannot unpack '%s': entry '%s': more "
		    "than %llu bytes unpacked, all there is free on the file "
		    "system of '%s'", u->archive, u->shown,
		    (unsigned long long)u->max_bytes, u->dest);
	return err_set(u->e, "cannot unpack '%s': entry '%s': more than %llu "
	    "bytes unpacked (the cap): refused as a decompression bomb",
	    u->archive, u->shown, (unsigned long long)u->max_bytes);
}

/*
 * Lower the cap to what the working directory's file system has free
 * (less keep_free) with done bytes already written.  Asked before the
 * first entry and every FREE_CHECK_EVERY bytes after: other writers may
 * take the space meanwhile, and a failed write is caught anyway.
 */
static int
bound_by_free_space(struct unpack *u, uint64_t done)
{
	struct statvfs vfs;
	uint64_t avail, room;

	u->free_checked = done;
	if (statvfs(".", &vfs) < 0)
		return err_errno(u->e, "cannot unpack '%s': cannot ask the "
		    "free space of '%s'", u->archive, u->dest);
	avail = (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize;
	if (avail <= u->keep_free && done == 0)
		return err_set(u->e, "cannot unpack '%s': only %llu bytes "
		    "free on the file system of '%s', which must keep %llu",
		    u->archive, (unsigned long long)avail, u->dest,
		    (unsigned long long)u->keep_free);
	room = avail > u->keep_free ? avail - u->keep_free : 0;
	if (room > UINT64_MAX - done)
		room = UINT64_MAX - done;
	if (done + room < u->max_bytes) {
		u->max_bytes = done + room;
		u->cap_is_free = 1;
	}
	return 0;
}

/* Bytes unpacked so far against archive bytes read: past ratio_after,
 * more than max_ratio to one is a decompression bomb. */
static int
ratio_error(struct unpack *u, uint64_t total)
{
	la_int64_t read = archive_filter_bytes(u->in, -1);
	uint64_t in = read > 0 ? (uint64_t)read : 1;

	if (total <= u->ratio_after || total / in <= u->max_ratio)
		return 0;
	return err_set(u->e, "cannot unpack '%s': entry '%s': %llu bytes "
	    "unpacked from %llu read, more than %u times: refused as a "
	    "decompression bomb", u->archive, u->shown,
	    (unsigned long long)total, (unsigned long long)in, u->max_ratio);
}

/* Copy one entry's data, counting bytes (holes included) against the cap. */
static int
copy_data(struct unpack *u, struct archive_entry *ent)
{
	uint64_t entry_end = 0;

	if (archive_entry_size_is_set(ent) && archive_entry_size(ent) > 0 &&
	    over_cap(u, (uint64_t)archive_entry_size(ent)))
		return err_set(u->e, "cannot unpack '%s': entry '%s': declares "
		    "%lld bytes, more than the %llu-byte %s leaves",
		    u->archive, u->shown, (long long)archive_entry_size(ent),
		    (unsigned long long)u->max_bytes, u->cap_is_free ?
		    "free space" : "cap");
	for (;;) {
		const void *block;
		size_t size;
		la_int64_t offset;
		int r = archive_read_data_block(u->in, &block, &size, &offset);

		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			return entry_error(u, "corrupt or truncated data: %s",
			    archive_msg(u->in));
		if (offset < 0)
			return entry_error(u, "%s", "negative data offset");
		if ((uint64_t)offset + size > entry_end)
			entry_end = (uint64_t)offset + size;
		if (u->bytes + entry_end - u->free_checked > FREE_CHECK_EVERY &&
		    bound_by_free_space(u, u->bytes + entry_end) < 0)
			return -1;
		if (over_cap(u, entry_end))
			return cap_error(u);
		if (ratio_error(u, u->bytes + entry_end) < 0)
			return -1;
		/*
		 * A failed write() (a full disk) is only ARCHIVE_WARN to
		 * libarchive, and the entry's size is then restored with a
		 * hole: anything but ARCHIVE_OK is a failed unpack.
		 */
		if (archive_write_data_block(u->out, block, size, offset) !=
		    ARCHIVE_OK)
			return write_error(u);
	}
	u->bytes += entry_end;
	return 0;
}

/* The mark, after every entry; fsync'd with the tree by sync_tree(). */
static int
write_complete_mark(struct unpack *u)
{
	char line[64];
	int fd, len;

	len = snprintf(line, sizeof(line), "%llu entries, %llu bytes\n",
	    (unsigned long long)u->entries, (unsigned long long)u->bytes);
	fd = open(UNPACK_COMPLETE_MARK, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_errno(u->e, "cannot unpack '%s': cannot create "
		    "'%s/%s'", u->archive, u->dest, UNPACK_COMPLETE_MARK);
	if (write(fd, line, (size_t)len) != len) {
		if (errno == 0)
			errno = ENOSPC;
		err_errno(u->e, "cannot unpack '%s': cannot write '%s/%s'",
		    u->archive, u->dest, UNPACK_COMPLETE_MARK);
		close(fd);
		return -1;
	}
	if (close(fd) < 0)
		return err_errno(u->e, "cannot unpack '%s': cannot write "
		    "'%s/%s'", u->archive, u->dest, UNPACK_COMPLETE_MARK);
	return 0;
}

/* Every entry into the working directory. */
static int
unpack_entries(struct unpack *u)
{
	for (;;) {
		struct archive_entry *ent;
		int r = archive_read_next_header(u->in, &ent);

		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			if (u->entries == 0)
				return err_set(u->e, "cannot unpack '%s': not a "
				    "readable tar or zip archive: %s", u->archive,
				    archive_msg(u->in));
			return err_set(u->e, "cannot unpack '%s': corrupt or "
			    "truncated after entry '%s': %s", u->archive,
			    u->shown, archive_msg(u->in));
		}
		if (++u->entries > u->max_entries)
			return err_set(u->e, "cannot unpack '%s': more than %llu "
			    "entries (the cap)", u->archive,
			    (unsigned long long)u->max_entries);
		printable(archive_entry_pathname(ent) ?
		    archive_entry_pathname(ent) : "", u->shown);
		if (check_entry(u, ent) < 0)
			return -1;
		if (archive_write_header(u->out, ent) < ARCHIVE_WARN)
			return entry_error(u, "%s", archive_msg(u->out));
		if (archive_entry_filetype(ent) == AE_IFREG &&
		    copy_data(u, ent) < 0)
			return -1;
		if (archive_write_finish_entry(u->out) != ARCHIVE_OK)
			return write_error(u);
	}
	if (u->entries == 0)
		return err_set(u->e, "cannot unpack '%s': the archive is empty",
		    u->archive);
	/* Directory modes and times are set here, deepest first. */
	if (archive_write_close(u->out) < ARCHIVE_WARN)
		return err_set(u->e, "cannot unpack '%s': %s", u->archive,
		    archive_msg(u->out));
	/* Each link passed on its own; together they may still lead out. */
	for (size_t i = 0; i < u->symlinks.n; i++) {
		int r = resolves_inside(u->symlinks.v[i]);

		if (r != 1) {
			printable(u->symlinks.v[i], u->shown);
			return entry_error(u, "%s", r == 0 ? "symlink refused: "
			    "through other symlinks it leads outside the "
			    "release directory" : "symlink loop refused");
		}
	}
	return write_complete_mark(u);
}

static int
open_reader(struct unpack *u, int fd)
{
	if ((u->in = archive_read_new()) == NULL)
		return err_set(u->e, "cannot unpack '%s': out of memory",
		    u->archive);
	archive_read_support_format_tar(u->in);
	archive_read_support_format_zip(u->in);
	archive_read_support_filter_gzip(u->in);
	archive_read_support_filter_xz(u->in);
	archive_read_support_filter_zstd(u->in);
	if (archive_read_open_fd(u->in, fd, READ_BLOCK) != ARCHIVE_OK)
		return err_set(u->e, "cannot unpack '%s': not a readable tar or "
		    "zip archive: %s", u->archive, archive_msg(u->in));
	return 0;
}

static int
open_writer(struct unpack *u)
{
	if ((u->out = archive_write_disk_new()) == NULL)
		return err_set(u->e, "cannot unpack '%s': out of memory",
		    u->archive);
	archive_write_disk_set_options(u->out,
	    ARCHIVE_EXTRACT_SECURE_NODOTDOT |
	    ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS |
	    ARCHIVE_EXTRACT_SECURE_SYMLINKS |
	    ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME);
	return 0;
}

/* Make "<parent>/.tmp-<name>-<pid>-XXXXXX" beside dest; malloced in *tmp. */
static int
make_tmpdir(const char *dest, char **tmp, struct err *e)
{
	const char *slash = strrchr(dest, '/');
	const char *name = slash ? slash + 1 : dest;
	size_t plen = slash ? (size_t)(slash - dest) : 0;
	size_t len = strlen(dest) + 32;
	char *parent, *t;

	if (name[0] == '\0' || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return err_set(e, "cannot unpack into '%s': not a directory "
		    "name", dest);
	if ((t = malloc(len)) == NULL || (parent = malloc(plen + 2)) == NULL) {
		free(t);
		return err_errno(e, "cannot unpack into '%s'", dest);
	}
	if (slash == dest)
		strcpy(parent, "/");
	else if (slash == NULL)
		strcpy(parent, ".");
	else {
		memcpy(parent, dest, plen);
		parent[plen] = '\0';
	}
	if (fs_mkdirs(parent, 0755, e) < 0) {
		free(parent);
		free(t);
		return -1;
	}
	/* The process id lets the cache tell a crash's leftovers. */
	snprintf(t, len, "%s/.tmp-%s-%ld-XXXXXX", parent, name,
	    (long)getpid());
	free(parent);
	if (mkdtemp(t) == NULL) {
		err_errno(e, "cannot create a directory like '%s'", t);
		free(t);
		return -1;
	}
	*tmp = t;
	return 0;
}

/* Unpack into tmp with the working directory moved there meanwhile. */
static int
unpack_in(struct unpack *u, const char *tmp)
{
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (cwd < 0)
		return err_errno(u->e, "cannot open the working directory");
	if (chdir(tmp) < 0) {
		err_errno(u->e, "cannot enter '%s'", tmp);
		close(cwd);
		return -1;
	}
	rc = bound_by_free_space(u, 0);
	if (rc == 0)
		rc = unpack_entries(u);
	/*
	 * Freed here, not later: on an error path freeing closes the writer,
	 * which sets the modes and times it deferred, by relative names.
	 */
	archive_write_free(u->out);
	u->out = NULL;
	if (fchdir(cwd) < 0)
		rc = err_errno(u->e, "cannot return to the working directory");
	close(cwd);
	return rc;
}

static int
sync_tree(const char *dir, struct err *e)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return err_errno(e, "cannot open '%s'", dir);
	if (syncfs(fd) < 0) {
		err_errno(e, "cannot sync '%s'", dir);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int
fetch_unpack(const char *archive_path, const char *dest_dir,
    const struct unpack_limits *limits, struct err *e)
{
	struct unpack u;
	struct stat st;
	char *tmp = NULL;
	int fd, rc = -1;

	memset(&u, 0, sizeof(u));
	u.archive = archive_path;
	u.dest = dest_dir;
	u.e = e;
	u.keep_free = limits ? limits->keep_free : 0;
	u.ratio_after = limits && limits->ratio_after ? limits->ratio_after :
	    UNPACK_DEFAULT_RATIO_AFTER;
	u.max_ratio = limits && limits->max_ratio ? limits->max_ratio :
	    UNPACK_DEFAULT_MAX_RATIO;
	u.max_bytes = limits && limits->max_bytes ? limits->max_bytes :
	    UNPACK_DEFAULT_MAX_BYTES;
	u.max_entries = limits && limits->max_entries ? limits->max_entries :
	    UNPACK_DEFAULT_MAX_ENTRIES;

	if (lstat(dest_dir, &st) == 0)
		return err_set(e, "cannot unpack '%s': '%s' already exists",
		    archive_path, dest_dir);
	if ((fd = open(archive_path, O_RDONLY | O_CLOEXEC)) < 0)
		return err_errno(e, "cannot open archive '%s'", archive_path);
	if (make_tmpdir(dest_dir, &tmp, e) < 0) {
		close(fd);
		return -1;
	}
	if (open_reader(&u, fd) < 0 || open_writer(&u) < 0 ||
	    unpack_in(&u, tmp) < 0)
		goto out;
	if (!(limits && limits->no_sync) && sync_tree(tmp, e) < 0)
		goto out;
	if (rename(tmp, dest_dir) < 0) {
		err_errno(e, "cannot rename '%s' to '%s'", tmp, dest_dir);
		goto out;
	}
	rc = fs_sync_parent(dest_dir, e);
	free(tmp);
	tmp = NULL;
out:
	if (u.out)
		archive_write_free(u.out);	/* closes if still open */
	if (u.in)
		archive_read_free(u.in);
	close(fd);
	strv_clear(&u.symlinks);
	if (tmp) {
		struct err ignored = ERR_INIT;

		fs_remove_tree(tmp, &ignored);
		free(tmp);
	}
	return rc;
}

int
fetch_unpack_complete(const char *dir)
{
	struct stat st;
	char *mark;
	int ok;

	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if ((mark = fs_join(dir, UNPACK_COMPLETE_MARK)) == NULL)
		return 0;
	ok = lstat(mark, &st) == 0 && S_ISREG(st.st_mode);
	free(mark);
	return ok;
}
