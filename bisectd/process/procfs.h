/*
 * procfs.h: reading and writing the small files of /proc and
 * /sys/fs/cgroup, and a process's state from /proc/PID/stat: what the
 * runner (runner.c) and its cgroup handling (cgroup.c) share.
 */
#ifndef BISECTD_PROCFS_H
#define BISECTD_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

/* Read a small file into buf (NUL-terminated); its length or -1. */
ssize_t procfs_read(const char *path, char *buf, size_t size);

/* Write s to an existing file; 0 or -1. */
int procfs_write(const char *path, const char *s);

/* snprintf that says when the result did not fit: -1, else 0. */
int procfs_pathf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct procfs_stat {
	char state;		/* R, S, D, Z, ... */
	pid_t ppid, pgrp;
};

/* pid's state, parent and process group; 0 or -1. */
int procfs_stat(pid_t pid, struct procfs_stat *st);

#endif
