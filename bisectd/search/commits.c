/*
 * commits.c: commit ranges from the engine's repository, their drill-down
 * from a release verdict and their description in reports (see
 * commits.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bisectd/acquire/build.h"
#include "commits.h"
#include "common/err.h"
#include "config/conf.h"
#include "fetch/gitrepo.h"
#include "store/store.h"

/* Record the walked commits and read their rows back in walk order. */
static int
store_commits(struct store *s, int64_t engine_id,
    const struct gitrepo_commits *w, struct range *r, struct err *e)
{
	if (store_begin(s, e) < 0)
		return -1;
	for (size_t i = 0; i < w->n; i++) {
		struct store_commit_info c;
		int64_t id;

		memset(&c, 0, sizeof(c));
		memcpy(c.id, w->v[i].id, sizeof(c.id));
		c.subject = w->v[i].subject;
		c.author = w->v[i].author;
		c.author_time = w->v[i].time;
		if (store_commit_ensure(s, engine_id, &c, &id, e) < 0) {
			store_rollback(s);
			return -1;
		}
	}
	if (store_commit(s, e) < 0)
		return -1;
	if ((r->list.v = calloc(w->n, sizeof(*r->list.v))) == NULL)
		return err_set(e, "out of memory");
	for (size_t i = 0; i < w->n; i++) {
		if (store_release_get(s, engine_id, w->v[i].id,
		    &r->list.v[i], e) != 0)
			return e->msg[0] ? -1 : err_set(e, "commit %s vanished "
			    "from the store", w->v[i].id);
		r->list.n++;
	}
	r->lo = 0;
	r->hi = w->n - 1;
	return 0;
}

int
commits_range(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, int64_t engine_id, const char *spec, int online,
    struct range *r, struct err *e)
{
	char good[RANGE_END_MAX], bad[RANGE_END_MAX], gid[41], bid[41];
	struct gitrepo_commits w = { NULL, 0 };
	struct gitrepo *g = NULL;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (range_split(spec, good, bad, e) < 0 || commit_buildable(eng, e) < 0)
		return -1;
	if (gitrepo_open(conf->cache, eng->name, eng->repo, online, &g, e) < 0)
		return err_prefix(e, "engine %s", eng->name);
	if (gitrepo_resolve(g, good, gid, e) < 0 ||
	    gitrepo_resolve(g, bad, bid, e) < 0 ||
	    gitrepo_walk(g, gid, bid, eng->first_parent, &w, e) < 0)
		goto done;
	if (w.n < 2) {
		err_set(e, "'%s' and '%s' are the same commit: nothing to "
		    "bisect", good, bad);
		goto done;
	}
	if (store_commits(s, engine_id, &w, r, e) < 0) {
		range_release(r);
		goto done;
	}
	rc = 0;
done:
	gitrepo_commits_release(&w);
	gitrepo_close(g);
	return rc;
}

json_t *
commits_describe(const struct conf_engine *eng, struct store *s,
    int64_t engine_id, const char *id, struct err *e)
{
	struct store_release r;
	struct store_commit_info c;
	char date[32], link[512];
	time_t t;
	struct tm tm;
	json_t *o;
	int rc;

	if (id == NULL || store_release_get(s, engine_id, id, &r, e) != 0)
		return NULL;
	rc = store_commit_get(s, r.id, &c, e);
	store_release_release(&r);
	if (rc != 0)
		return NULL;
	t = (time_t)c.author_time;
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	o = json_pack("{s:s,s:s%,s:s,s:s}", "id", c.id, "short", c.id,
	    (size_t)12, "subject", c.subject ? c.subject : "", "author",
	    c.author ? c.author : "");
	if (o != NULL) {
		json_object_set_new(o, "date", json_string(date));
		json_object_set_new(o, "url", eng->repo &&
		    gitrepo_github_link(eng->repo, c.id, link,
		    sizeof(link)) == 0 ? json_string(link) : json_null());
		json_object_set_new(o, "build", json_string(c.state ==
		    COMMIT_BUILD_FAILED ? "failed" : c.state ==
		    COMMIT_BUILD_DONE ? "built" : "not built"));
		json_object_set_new(o, "builds", json_integer(c.builds));
	}
	store_commit_info_release(&c);
	return o;
}

int
commits_annotate(const struct conf_engine *eng, struct store *s,
    int64_t engine_id, json_t *verdict, struct err *e)
{
	const json_t *cand = json_object_get(verdict, "candidates");
	json_t *o, *list = json_array();
	size_t i;
	json_t *x;

	if ((o = commits_describe(eng, s, engine_id, json_string_value(
	    json_object_get(verdict, "first_bad")), e)) != NULL)
		json_object_set_new(verdict, "commit", o);
	if ((o = commits_describe(eng, s, engine_id, json_string_value(
	    json_object_get(verdict, "last_good")), e)) != NULL)
		json_object_set_new(verdict, "last_good_commit", o);
	json_array_foreach(cand, i, x)
		if ((o = commits_describe(eng, s, engine_id, json_string_value(x),
		    e)) != NULL)
			json_array_append_new(list, o);
	json_object_set_new(verdict, "candidate_commits", list);
	return e->msg[0] ? -1 : 0;
}

int
commits_drill_wanted(const struct conf_engine *eng, const json_t *verdict,
    char *spec, size_t len)
{
	const char *good = json_string_value(json_object_get(verdict,
	    "last_good"));
	const char *bad = json_string_value(json_object_get(verdict,
	    "first_bad"));

	if (!eng->drill_down || eng->repo == NULL || eng->build.n == 0 ||
	    good == NULL || bad == NULL || !json_is_true(json_object_get(
	    verdict, "confirmed")) || strcmp(json_string_value(
	    json_object_get(verdict, "status")) ? json_string_value(
	    json_object_get(verdict, "status")) : "", "regression") != 0)
		return 0;
	return snprintf(spec, len, "%s..%s", good, bad) < (int)len;
}

void
commits_drill_attach(json_t *verdict, const char *spec, json_t *cv,
    const char *why)
{
	if (cv == NULL) {
		json_object_set_new(verdict, "drill_down", json_pack("{s:s,s:s,"
		    "s:s}", "range", spec, "status", "failed", "reason",
		    why ? why : ""));
		return;
	}
	json_object_set_new(cv, "range", json_string(spec));
	if (json_is_object(json_object_get(cv, "commit")))
		json_object_set(verdict, "commit", json_object_get(cv,
		    "commit"));
	if (json_is_array(json_object_get(cv, "candidate_commits")))
		json_object_set(verdict, "candidate_commits",
		    json_object_get(cv, "candidate_commits"));
	json_object_set_new(verdict, "drill_down", cv);
}
