/*
 * benchlock.c: the machine-wide benchmark lock, an flock() on a file
 * that also names its holder (see benchlock.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "benchlock.h"
#include "common/err.h"

#define POLL_MS		100
#define REMIND_MS	1000

const char *
benchlock_path(const char *configured)
{
	const char *env = getenv("BISECTD_BENCH_LOCK");

	if (configured != NULL)
		return configured;
	if (env != NULL && *env != '\0')
		return env;
	return access("/run/lock", W_OK | X_OK) == 0 ? BENCHLOCK_PATH :
	    BENCHLOCK_FALLBACK;
}

/* Whether path's folder is one every user shares (sticky and writable
 * by all: /run/lock, /tmp). */
static int
shared_folder(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	struct stat st;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 :
		    (int)(slash - path), path);
	return stat(dir, &st) == 0 && (st.st_mode & S_ISVTX) &&
	    (st.st_mode & S_IWOTH);
}

/*
 * Open the lock file, creating it 0644, or readable and writable by all
 * in a folder every user shares: another user's runs wait for ours.  A
 * file of another user that we may not write (in a sticky folder,
 * protected_regular refuses O_CREAT on it) is still locked, read-only;
 * its holder line is then not ours.
 */
static int
open_lock(const char *path, int *rdonly, struct err *e)
{
	int fd;

	*rdonly = 0;
	for (;;) {
		if ((fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) >= 0)
			return fd;
		if (errno == EACCES && (fd = open(path, O_RDONLY | O_CLOEXEC |
		    O_NOFOLLOW)) >= 0) {
			*rdonly = 1;
			return fd;
		}
		if (errno != ENOENT)
			break;
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW, 0644);
		if (fd >= 0) {
			if (shared_folder(path))
				(void)fchmod(fd, 0666);	/* past the umask */
			return fd;
		}
		if (errno != EEXIST)
			break;
	}
	return err_errno(e, "cannot open lock file '%s'", path);
}

/* 0 when taken, 1 when another holds it, -1 on errors. */
static int
try_flock(int fd, const char *path, struct err *e)
{
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			return 1;
		if (errno != EINTR)
			return err_errno(e, "cannot lock '%s'", path);
	}
	return 0;
}

/* "PID WHAT\n", the command on one line. */
static int
write_holder(int fd, const char *path, const char *what, struct err *e)
{
	char line[BENCHLOCK_WHAT_MAX + 32];
	size_t len, i;
	int n;

	n = snprintf(line, sizeof(line), "%ld %s", (long)getpid(),
	    what ? what : "");
	len = n < 0 ? 0 : (size_t)n >= sizeof(line) - 1 ? sizeof(line) - 2 :
	    (size_t)n;
	for (i = 0; i < len; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[len++] = '\n';
	if (ftruncate(fd, 0) < 0 || pwrite(fd, line, len, 0) != (ssize_t)len)
		return err_errno(e, "cannot write lock file '%s'", path);
	return 0;
}

static void
parse_holder(const char *text, struct benchlock_holder *h)
{
	char *end;
	long pid;

	memset(h, 0, sizeof(*h));
	pid = strtol(text, &end, 10);
	if (end == text || pid <= 0 || *end != ' ')
		return;
	h->pid = (pid_t)pid;
	snprintf(h->what, sizeof(h->what), "%.*s", (int)strcspn(end + 1, "\n"),
	    end + 1);
}

static int
read_holder_fd(int fd, const char *path, struct benchlock_holder *h,
    struct err *e)
{
	char text[sizeof(h->what) + 64];
	ssize_t n;

	do
		n = pread(fd, text, sizeof(text) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return err_errno(e, "cannot read lock file '%s'", path);
	text[n] = '\0';
	parse_holder(text, h);
	return 0;
}

int
benchlock_holder(const char *path, struct benchlock_holder *h,
    struct err *e)
{
	int fd, rc;

	memset(h, 0, sizeof(*h));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (errno == ENOENT)
			return 0;
		return err_errno(e, "cannot open lock file '%s'", path);
	}
	rc = read_holder_fd(fd, path, h, e);
	close(fd);
	return rc;
}

static int
take(struct benchlock *l, int fd, int rdonly, const char *path,
    const char *what, struct err *e)
{
	if (!rdonly && write_holder(fd, path, what, e) < 0) {
		close(fd);
		return -1;
	}
	l->fd = fd;
	return 0;
}

int
benchlock_try(struct benchlock *l, const char *path, const char *what,
    struct benchlock_holder *holder, struct err *e)
{
	int fd, rc, rdonly;

	if (l->fd >= 0)
		return err_set(e, "benchmark lock '%s' is already held here",
		    path);
	if ((fd = open_lock(path, &rdonly, e)) < 0)
		return -1;
	if ((rc = try_flock(fd, path, e)) == 0)
		return take(l, fd, rdonly, path, what, e);
	if (rc == 1 && holder != NULL &&
	    read_holder_fd(fd, path, holder, e) < 0)
		rc = -1;
	close(fd);
	return rc;
}

int
benchlock_acquire(struct benchlock *l, const char *path, const char *what,
    benchlock_wait_fn fn, void *arg, struct err *e)
{
	struct benchlock_holder seen, now;
	int64_t start = clock_now_ms(), last_call = 0;
	struct timespec pause = { 0, POLL_MS * 1000000L };
	int fd, rc, called = 0, rdonly;

	if (l->fd >= 0)
		return err_set(e, "benchmark lock '%s' is already held here",
		    path);
	if ((fd = open_lock(path, &rdonly, e)) < 0)
		return -1;
	memset(&seen, 0, sizeof(seen));
	/* flock() has no timeout and cannot report whom it waits for, so
	 * the wait polls; a tenth of a second is nothing next to a run. */
	while ((rc = try_flock(fd, path, e)) == 1) {
		if (read_holder_fd(fd, path, &now, e) < 0)
			break;
		if (fn != NULL && (!called || now.pid != seen.pid ||
		    strcmp(now.what, seen.what) != 0 ||
		    clock_now_ms() - last_call >= REMIND_MS)) {
			called = 1;
			seen = now;
			last_call = clock_now_ms();
			if (fn(arg, &now, last_call - start) != 0) {
				close(fd);
				return 1;
			}
		}
		nanosleep(&pause, NULL);
	}
	if (rc != 0) {
		close(fd);
		return -1;
	}
	return take(l, fd, rdonly, path, what, e);
}

void
benchlock_release(struct benchlock *l)
{
	if (l->fd < 0)
		return;
	/* Cleared while still held, so the next holder's line is never
	 * the one truncated. */
	(void)!ftruncate(l->fd, 0);
	(void)flock(l->fd, LOCK_UN);
	close(l->fd);
	l->fd = -1;
}
