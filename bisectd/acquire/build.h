/*
 * build.h: a commit made runnable by building it: checked out clean,
 * built by the engine's build lines under the runner, the built tree
 * cached by commit id like an unpacked release.
 */
#ifndef BISECTD_ACQUIRE_BUILD_H
#define BISECTD_ACQUIRE_BUILD_H

#include <stdatomic.h>
#include <stdint.h>

struct acquired;
struct conf;
struct conf_engine;
struct err;
struct store;
struct strv;

/* 0 when eng can build commits (a repo and build lines), else -1 with e
 * naming the key to set. */
int commit_buildable(const struct conf_engine *eng, struct err *e);

/*
 * Make commit (a release of kind 'commit') runnable: its built tree in
 * CACHE/releases/ENGINE/<id>/, reused when a finished build left it
 * there, else checked out and built now.  A build that fails is
 * recorded (the release failed, its log tail kept) and never tried
 * again: -1.  A build stopped by *stop is not finished: -1, and it is
 * built again next time.  cache-max is kept after a build.
 */
int commit_build(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, int64_t release_id, const char *id,
    const atomic_int *stop, struct acquired *out, struct err *e);

/*
 * What commit_build() would run for commit id, run nowhere: each build
 * line expanded and quoted as a shell reads it, after "cd SRC &&" (the
 * checkout it runs in), appended to lines; *bin (malloced) gets the
 * folder the built tree becomes, the commands' {bin}.  Returns 0, 1 when
 * a finished build of id is in the cache (nothing would be built, lines
 * untouched), or -1 with e set.
 */
int commit_build_plan(const struct conf *conf,
    const struct conf_engine *eng, const char *id, struct strv *lines,
    char **bin, struct err *e);

#endif
