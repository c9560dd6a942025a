/*
 * fake-release-path.c: the release.conf beside a packed test engine (see
 * fake-release-path.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake-release-path.h"

int
fake_release_path(char *path, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) < 0)
		return -1;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) != NULL)
		*slash = '\0';
	if ((size_t)snprintf(path, len, "%s/../release.conf", exe) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
