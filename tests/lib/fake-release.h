/*
 * fake-release.h: the release.conf of the release a test engine
 * (fake-engine, fake-server) was packed into: where it is, and its
 * "key = value" lines.
 */
#ifndef TESTS_FAKE_RELEASE_H
#define TESTS_FAKE_RELEASE_H

#include <stddef.h>

/* The most a release file may hold. */
#define FAKE_RELEASE_MAX (64 * 1024)

/* <the binary's folder>/../release.conf into path: 0, or -1 with errno
 * set when /proc/self/exe does not read or the name does not fit. */
int fake_release_path(char *path, size_t len);

/* What one "key = value" line sets; line is its number, for messages. */
typedef void fake_release_set(void *arg, const char *path, int line,
    const char *key, const char *val);

/*
 * Read the release file, explicit_path or else the one of
 * fake_release_path(), its name into path: set() for each line, '#'
 * comments and blank lines passed over.  Dies on a file that does not
 * read, a line without '=', or one over FAKE_RELEASE_MAX bytes.
 */
void fake_release_read(const char *explicit_path, char *path, size_t len,
    fake_release_set *set, void *arg);

#endif
