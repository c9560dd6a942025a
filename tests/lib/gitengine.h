/*
 * gitengine.h: a git repository of a small C engine, made in the current
 * folder for the tests of commit bisection: 24 commits, built with cc.
 * The commit before the slow one does not compile.
 */
#ifndef TESTS_GITENGINE_H
#define TESTS_GITENGINE_H

/*
 * Make "repo": v1.0 at the first commit, v1.1 at the 9th, v1.2 at the
 * 15th, the broken commit at the 16th, the slow one (per-token work
 * tripled) at the 17th, v1.3 at the 21st and v2.0 (annotated) at the
 * last.  The ids of the broken, slow and last good commits go into
 * broken.id, slow.id and good.id.  0 on success.
 */
int gitengine_make_repo(void);

/*
 * Release archives rel/eng-VERSION.tar.gz of the tags v1.0 .. v2.0, each
 * built from its tag with the engine at the archive's root, as a build's
 * {out} holds it.  0 on success.
 */
int gitengine_make_releases(void);

#endif
