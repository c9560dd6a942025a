/*
 * commits.h: the commits between two ends of an engine's repository as
 * a range the bisection driver searches like releases (a commit is a
 * release row of kind 'commit', its version the commit id); building
 * one is acquire/build.h's.
 */
#ifndef BISECTD_COMMITS_H
#define BISECTD_COMMITS_H

#include <stdatomic.h>
#include <stdint.h>

#include "range.h"

struct acquired;
struct conf;
struct conf_engine;
struct err;
struct json_t;
struct store;
struct strv;

/*
 * Resolve spec ("LAST_GOOD..FIRST_BAD", tags or commit ids) in the
 * engine's repository (cloned into the cache the first time, fetched
 * when an end is unknown), walk the commits between (first parents
 * when the engine says so), record each in the store and fill r with
 * them oldest first: r->lo the good end, r->hi the bad.  With online 0
 * the repository is neither cloned nor fetched (reports).
 */
int commits_range(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, int64_t engine_id, const char *spec, int online,
    struct range *r, struct err *e);

/*
 * Whether a verdict of a release range goes on into its commits: the
 * engine drills down and the verdict is a confirmed regression.  Then
 * spec gets "LAST_GOOD..FIRST_BAD" of its boundary.
 */
int commits_drill_wanted(const struct conf_engine *eng,
    const struct json_t *verdict, char *spec, size_t len);

/*
 * Put the verdict of the commits between a release boundary (spec) into
 * the release verdict: "drill_down" holds it (with its "range"), and
 * its "commit" and "candidate_commits" are the release verdict's too, so
 * reports and alerts name both levels.  commit_verdict is taken (NULL:
 * the drill-down failed, why says why).
 */
void commits_drill_attach(struct json_t *verdict, const char *spec,
    struct json_t *commit_verdict, const char *why);

/*
 * Commit id as reports show it: id, short (12 digits), subject, author,
 * date (ISO 8601, UTC), url (its GitHub page, or null) and build
 * ("built", "failed", "not built"); NULL when the store does not know
 * it.  New reference.
 */
struct json_t *commits_describe(const struct conf_engine *eng,
    struct store *s, int64_t engine_id, const char *id, struct err *e);

/*
 * Name the commits of a verdict (search/verdict_json.h's shape, of a
 * commit range): "commit", "last_good_commit" and "candidate_commits"
 * with each commit's id, subject, author, date and, for a GitHub
 * repository, its link.  Commits the store does not know are left out.
 */
int commits_annotate(const struct conf_engine *eng, struct store *s,
    int64_t engine_id, struct json_t *verdict, struct err *e);

#endif
