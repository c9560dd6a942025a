/*
 * procfs.c: the small files of /proc and /sys/fs/cgroup the runner and
 * its cgroups read and write (see procfs.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

/* Read a small file into buf (NUL-terminated); its length or -1. */
ssize_t
procfs_read(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while ((size_t)len < size - 1) {
		n = read(fd, buf + len, size - 1 - (size_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return len;
}

int
procfs_write(const char *path, const char *s)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

int
procfs_pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
procfs_stat(pid_t pid, struct procfs_stat *st)
{
	char path[64], buf[512], *p;
	int ppid, pgrp;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (procfs_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	/* The command name may hold spaces and parentheses: skip to the
	 * last ')'. */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 1, " %c %d %d", &st->state, &ppid, &pgrp) != 3)
		return -1;
	st->ppid = ppid;
	st->pgrp = pgrp;
	return 0;
}
