/*
 * cgroup.c: the runner's cgroup v2 handling (see cgroup.h): finding and
 * probing our own cgroup once, a cgroup per run (with one emptied cgroup
 * kept for the next run), killing and removing them, and what the
 * kernel says happened inside.  runner.c spawns into them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cgroup.h"
#include "common/clock.h"
#include "common/err.h"
#include "procfs.h"

#define CLEANUP_NS	(5LL * 1000 * 1000 * 1000)	/* removal bound */
#define NS_PER_MS	1000000LL

static pthread_once_t cg_once = PTHREAD_ONCE_INIT;
static char cg_parent[PATH_MAX];	/* "" when cgroups are unavailable */
/* The delegated cgroup we left for a leaf (cgroup_leave_delegated): the
 * parent of the runs' cgroups, not the leaf we are in now. */
static char cg_base[PATH_MAX];
static char cg_why[512];
/* One emptied run cgroup kept for the next run: making and removing a
 * cgroup per run costs time and leaves the kernel work in the background
 * while the next run is being measured. */
static pthread_mutex_t cg_spare_lock = PTHREAD_MUTEX_INITIALIZER;
static char *cg_spare;		/* or NULL; malloced */
static pid_t cg_spare_owner;	/* the process that may remove it */
static pthread_once_t cg_atexit_once = PTHREAD_ONCE_INIT;

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void
unescape_octal(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
			    (s[3] - '0'));
			s += 3;
		} else
			*w++ = *s;
	}
	*w = '\0';
}

/* The cgroup2 mount's root and mount point, from /proc/self/mountinfo. */
static int
find_cgroup2(char *root, size_t rlen, char *mnt, size_t mlen)
{
	char line[4096], *f[6], *sep, *save;
	FILE *fp;
	int found = 0, i;

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (!found && fgets(line, sizeof(line), fp) != NULL) {
		if ((sep = strstr(line, " - ")) == NULL ||
		    strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		*sep = '\0';
		f[0] = strtok_r(line, " ", &save);
		for (i = 1; i < 6 && f[i - 1] != NULL; i++)
			f[i] = strtok_r(NULL, " ", &save);
		if (i < 6 || f[4] == NULL)
			continue;
		unescape_octal(f[3]);
		unescape_octal(f[4]);
		snprintf(root, rlen, "%s", f[3]);
		snprintf(mnt, mlen, "%s", f[4]);
		found = 1;
	}
	fclose(fp);
	return found ? 0 : -1;
}

static int
cg_populated(const char *dir)
{
	char path[PATH_MAX], buf[256], *p;

	if (procfs_pathf(path, sizeof(path), "%s/cgroup.events", dir) < 0 ||
	    procfs_read(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "populated ");
	return p != NULL && p[10] == '1';
}

void
cgroup_kill(const char *dir)
{
	char path[PATH_MAX];

	if (procfs_pathf(path, sizeof(path), "%s/cgroup.kill", dir) == 0)
		(void)procfs_write(path, "1");
}

/* Wait (bounded) for dir to empty, then remove it. */
static int
cg_remove(const char *dir)
{
	int64_t until = clock_now_ns() + CLEANUP_NS, pause = 50000;

	while (cg_populated(dir) && clock_now_ns() < until) {
		clock_sleep_ns(pause);
		if (pause < 10 * NS_PER_MS)
			pause *= 2;
	}
	while (rmdir(dir) < 0) {
		if (errno != EBUSY || clock_now_ns() >= until)
			return -1;
		clock_sleep_ns(NS_PER_MS);
	}
	return 0;
}

/* Gone, or a zombie: a process that will not run again. */
static int
pid_dead(pid_t pid)
{
	struct procfs_stat st;

	if (kill(pid, 0) < 0)
		return errno == ESRCH;
	return procfs_stat(pid, &st) == 0 && st.state == 'Z';
}

/* Remove the run cgroups a dead bisectd process left behind. */
static void
cg_remove_stale(void)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	long pid;

	if ((d = opendir(cg_parent)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (sscanf(de->d_name, "bisectd-%ld-", &pid) != 1 ||
		    pid == (long)getpid() || !pid_dead((pid_t)pid))
			continue;
		if (procfs_pathf(dir, sizeof(dir), "%s/%s", cg_parent,
		    de->d_name) < 0)
			continue;
		cgroup_kill(dir);
		(void)cg_remove(dir);
	}
	closedir(d);
}

/* Record why runs cannot have cgroups; formatted. */
static void
cg_unavailable(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
cg_unavailable(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cg_why, sizeof(cg_why), fmt, ap);
	va_end(ap);
}

/* Our own cgroup's folder into dir; -1 with cg_why set. */
static int
cg_locate(char *dir, size_t len)
{
	char root[PATH_MAX], mnt[PATH_MAX], line[PATH_MAX];
	const char *rel = NULL;
	size_t rootlen, n;
	FILE *fp;

	if (find_cgroup2(root, sizeof(root), mnt, sizeof(mnt)) < 0) {
		cg_unavailable("cgroup2 is not mounted");
		return -1;
	}
	if ((fp = fopen("/proc/self/cgroup", "re")) == NULL) {
		cg_unavailable("cannot open '/proc/self/cgroup': %s",
		    strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			rel = line + 3;
			break;
		}
	fclose(fp);
	if (rel == NULL) {
		cg_unavailable("this process has no cgroup v2 path in "
		    "/proc/self/cgroup");
		return -1;
	}
	/* Our path is relative to the hierarchy's root; the mount may show
	 * only a subtree of it. */
	rootlen = strcmp(root, "/") == 0 ? 0 : strlen(root);
	if (rootlen > 0 && (strncmp(rel, root, rootlen) != 0 ||
	    (rel[rootlen] != '/' && rel[rootlen] != '\0'))) {
		cg_unavailable("our cgroup '%s' is outside the mounted "
		    "cgroup2 tree", rel);
		return -1;
	}
	if (procfs_pathf(dir, len, "%s%s", mnt, rel + rootlen) < 0) {
		cg_unavailable("our cgroup's path is too long");
		return -1;
	}
	while ((n = strlen(dir)) > 1 && dir[n - 1] == '/')
		dir[n - 1] = '\0';
	return 0;
}

static void
cg_probe(void)
{
	char dir[PATH_MAX], probe[PATH_MAX], kill_file[PATH_MAX];

	if (cg_base[0] != '\0')
		memcpy(dir, cg_base, sizeof(dir));
	else if (cg_locate(dir, sizeof(dir)) < 0)
		return;
	if (access(dir, W_OK) < 0) {
		cg_unavailable("cannot write to our cgroup '%s': %s", dir,
		    strerror(errno));
		return;
	}
	if (procfs_pathf(probe, sizeof(probe), "%s/bisectd-%ld-probe", dir,
	    (long)getpid()) < 0 ||
	    procfs_pathf(kill_file, sizeof(kill_file), "%s/cgroup.kill",
	    probe) < 0) {
		cg_unavailable("our cgroup's path is too long");
		return;
	}
	if (mkdir(probe, 0755) < 0 && errno != EEXIST) {
		cg_unavailable("cannot create a cgroup in '%s': %s", dir,
		    strerror(errno));
		return;
	}
	if (access(kill_file, W_OK) < 0) {
		cg_unavailable("no cgroup.kill in '%s' (Linux 5.14 or later "
		    "needed)", dir);
		(void)rmdir(probe);
		return;
	}
	(void)rmdir(probe);
	memcpy(cg_parent, dir, sizeof(cg_parent));
	cg_remove_stale();
}

int
cgroup_available(char *where, size_t wlen, char *why, size_t ylen)
{
	pthread_once(&cg_once, cg_probe);
	if (cg_parent[0] == '\0') {
		if (why != NULL && ylen > 0)
			snprintf(why, ylen, "%s", cg_why);
		return 0;
	}
	if (where != NULL && wlen > 0)
		snprintf(where, wlen, "%s", cg_parent);
	return 1;
}

static int
cg_write(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX + 32];
	int fd, rc = 0;

	if (procfs_pathf(path, sizeof(path), "%s/%s", dir, file) < 0)
		return -1;
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	if (write(fd, text, strlen(text)) < 0)
		rc = -1;
	close(fd);
	return rc;
}

/* Whether we may write dir's file; errno when not. */
static int
cg_writable(const char *dir, const char *file)
{
	char path[PATH_MAX + 32];

	return procfs_pathf(path, sizeof(path), "%s/%s", dir, file) == 0 &&
	    access(path, W_OK) == 0;
}

int
cgroup_move_to_leaf(const char *dir, const char *leaf, pid_t self,
    char *why, size_t ylen)
{
	char path[PATH_MAX + 32], buf[64], pid[24];
	size_t plen;

	if (!cg_writable(dir, "cgroup.procs") ||
	    !cg_writable(dir, "cgroup.subtree_control")) {
		snprintf(why, ylen, "cgroup '%s' is not delegated to us: %s",
		    dir, strerror(errno));
		return 0;
	}
	/* Another process in it (the shell that started us, say) is not
	 * ours to move: the cgroup is not the service's own then. */
	plen = (size_t)snprintf(pid, sizeof(pid), "%ld", (long)self);
	if (procfs_pathf(path, sizeof(path), "%s/cgroup.procs", dir) < 0 ||
	    procfs_read(path, buf, sizeof(buf)) < 0) {
		snprintf(why, ylen, "cannot read '%s/cgroup.procs'", dir);
		return -1;
	}
	if (strncmp(buf, pid, plen) != 0 || strcmp(buf + plen, "\n") != 0) {
		snprintf(why, ylen, "other processes share cgroup '%s'", dir);
		return 0;
	}
	if (procfs_pathf(path, sizeof(path), "%s/%s", dir, leaf) < 0) {
		snprintf(why, ylen, "cgroup path too long");
		return -1;
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		snprintf(why, ylen, "cannot create cgroup '%s': %s", path,
		    strerror(errno));
		return -1;
	}
	if (cg_write(path, "cgroup.procs", pid) < 0) {
		snprintf(why, ylen, "cannot move into cgroup '%s': %s", path,
		    strerror(errno));
		return -1;
	}
	return 1;
}

int
cgroup_leave_delegated(const char *leaf, char *where, size_t wlen,
    char *why, size_t ylen)
{
	char dir[PATH_MAX];
	int rc;

	if (cg_locate(dir, sizeof(dir)) < 0) {
		snprintf(why, ylen, "%s", cg_why);
		return 0;
	}
	if ((rc = cgroup_move_to_leaf(dir, leaf, getpid(), why, ylen)) == 1) {
		memcpy(cg_base, dir, sizeof(cg_base));
		snprintf(where, wlen, "%s/%s", dir, leaf);
	}
	return rc;
}

int
cgroup_set_memory_max(const char *dir, uint64_t bytes)
{
	char text[32];

	snprintf(text, sizeof(text), bytes ? "%llu" : "max",
	    (unsigned long long)bytes);
	/* Without the controller the file is missing: enable it for our
	 * children once, which works where it was delegated to us. */
	if (cg_write(dir, "memory.max", text) < 0 && errno == ENOENT &&
	    (cg_write(cg_parent, "cgroup.subtree_control", "+memory") < 0 ||
	    cg_write(dir, "memory.max", text) < 0))
		return -1;
	(void)cg_write(dir, "memory.swap.max", bytes ? "0" : "max");
	return 0;
}

int64_t
cgroup_oom_kills(const char *dir)
{
	char path[PATH_MAX + 32], buf[1024], *q;

	if (procfs_pathf(path, sizeof(path), "%s/memory.events", dir) < 0 ||
	    procfs_read(path, buf, sizeof(buf)) < 0 ||
	    (q = strstr(buf, "oom_kill ")) == NULL)
		return -1;
	return strtoll(q + 9, NULL, 10);
}

static void
cg_register_atexit(void)
{
	(void)atexit(cgroup_shutdown);
}

int
cgroup_open_run(const char *marker, char **dirp, int64_t *oom_before,
    struct err *e)
{
	char *dir;
	int fd;

	pthread_mutex_lock(&cg_spare_lock);
	dir = cg_spare;
	cg_spare = NULL;
	pthread_mutex_unlock(&cg_spare_lock);
	if (dir != NULL) {
		if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
			goto opened;
		(void)rmdir(dir);
		free(dir);
	}
	if (asprintf(&dir, "%s/bisectd-%s", cg_parent, marker) < 0)
		return err_errno(e, "run cgroup");
	if (mkdir(dir, 0755) < 0) {
		err_errno(e, "cannot create cgroup '%s'", dir);
		free(dir);
		return -1;
	}
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		err_errno(e, "cannot open cgroup '%s'", dir);
		(void)rmdir(dir);
		free(dir);
		return -1;
	}
opened:
	*dirp = dir;
	*oom_before = cgroup_oom_kills(dir);
	return fd;
}

/*
 * Done with the run's cgroup: keep it as the spare once it is empty, or
 * remove it.  A cgroup that cgroup.kill was used on is not kept: Linux
 * (6.18 at least) kills a child cloned into it later.
 */
void
cgroup_close_run(char **dirp, int killed)
{
	int64_t until = clock_now_ns() + CLEANUP_NS, pause = 50000;
	char *dir = *dirp;

	if (dir == NULL)
		return;
	while (cg_populated(dir) && clock_now_ns() < until) {
		clock_sleep_ns(pause);
		if (pause < 10 * NS_PER_MS)
			pause *= 2;
	}
	if (!killed && !cg_populated(dir)) {
		pthread_once(&cg_atexit_once, cg_register_atexit);
		pthread_mutex_lock(&cg_spare_lock);
		if (cg_spare == NULL) {
			cg_spare = dir;
			cg_spare_owner = getpid();
			dir = NULL;
		}
		pthread_mutex_unlock(&cg_spare_lock);
	}
	if (dir != NULL)
		(void)cg_remove(dir);
	free(dir);
	*dirp = NULL;
}

void
cgroup_shutdown(void)
{
	pthread_mutex_lock(&cg_spare_lock);
	/* A forked child exiting must not take its parent's spare. */
	if (cg_spare != NULL && cg_spare_owner == getpid()) {
		(void)cg_remove(cg_spare);
		free(cg_spare);
		cg_spare = NULL;
	}
	pthread_mutex_unlock(&cg_spare_lock);
}

size_t
cgroup_members(const char *dir, pid_t self, pid_t *pids, size_t max)
{
	char path[PATH_MAX + 32], buf[8192], *p, *end;
	size_t n = 0;
	long v;

	if (procfs_pathf(path, sizeof(path), "%s/cgroup.procs", dir) < 0 ||
	    procfs_read(path, buf, sizeof(buf)) < 0)
		return 0;
	for (p = buf; n < max; p = end) {
		v = strtol(p, &end, 10);
		if (end == p)
			break;
		if ((pid_t)v != self)
			pids[n++] = (pid_t)v;
	}
	return n;
}

int
cgroup_has(pid_t pid, const char *cg_dir)
{
	char path[64], buf[4096];
	const char *name = strrchr(cg_dir, '/');
	char *line;

	snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long)pid);
	if (procfs_read(path, buf, sizeof(buf)) <= 0 || name == NULL)
		return 0;
	for (line = buf; line != NULL; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (strncmp(line, "0::", 3) == 0) {
			size_t len = strcspn(line, "\n"), nlen = strlen(name);

			return len >= nlen &&
			    strncmp(line + len - nlen, name, nlen) == 0;
		}
	}
	return 0;
}
