/*
 * fake-release-path.h: where the test engines (fake-engine, fake-server)
 * find the release.conf of the release they were packed into.
 */
#ifndef TESTS_FAKE_RELEASE_PATH_H
#define TESTS_FAKE_RELEASE_PATH_H

#include <stddef.h>

/* <the binary's folder>/../release.conf into path: 0, or -1 with errno
 * set when /proc/self/exe does not read or the name does not fit. */
int fake_release_path(char *path, size_t len);

#endif
