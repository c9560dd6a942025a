/*
 * fake-release.c: the release.conf of a packed test engine (see
 * fake-release.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake-common.h"
#include "fake-release.h"

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

void
fake_release_read(const char *explicit_path, char *path, size_t len,
    fake_release_set *set, void *arg)
{
	char line[1024], *key, *val, *eq;
	FILE *f;
	int lineno = 0;
	long size = 0;

	if (explicit_path == NULL) {
		if (fake_release_path(path, len) < 0)
			die("cannot find release.conf: %s", strerror(errno));
	} else if ((size_t)snprintf(path, len, "%s", explicit_path) >= len)
		die("release file name too long: '%s'", explicit_path);
	if ((f = fopen(path, "r")) == NULL)
		die("cannot read release parameters '%s': %s", path,
		    strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		size += (long)strlen(line);
		if (size > FAKE_RELEASE_MAX)
			die("%s: larger than %d bytes", path,
			    FAKE_RELEASE_MAX);
		if ((eq = strchr(line, '#')) != NULL)
			*eq = '\0';
		key = trim(line);
		if (*key == '\0')
			continue;
		if ((eq = strchr(key, '=')) == NULL)
			die("%s:%d: expected 'key = value'", path, lineno);
		*eq = '\0';
		val = trim(eq + 1);
		key = trim(key);
		set(arg, path, lineno, key, val);
	}
	if (ferror(f))
		die("cannot read '%s': %s", path, strerror(errno));
	fclose(f);
}
