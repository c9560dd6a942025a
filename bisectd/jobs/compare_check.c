/*
 * compare_check.c: a [compare] section's scheduled league table and its
 * leaders (compare_check.h).
 *
 * The leaders are kept in watch_state under "compare:NAME" as JSON,
 * {"prefill": {"engine", "version"}, "decode": {...}}, each side's the
 * last entry that ranked first alone.  An entry is known by its engine
 * (a section names each once): a new release of the leading engine still
 * leading is no change of order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bisectd/acquire/acquire.h"
#include "bisectd/acquire/league_run.h"
#include "bisectd/notify/alert_sink.h"
#include "bisectd/report/league.h"
#include "common/err.h"
#include "common/logto.h"
#include "compare_check.h"
#include "config/conf.h"
#include "store/store.h"

#define clog(o, level, ...) log_to((o) ? (o)->log : NULL, \
	(o) ? (o)->arg : NULL, (level), __VA_ARGS__)

static const char *const sides[2] = { "prefill", "decode" };

static void
state_key(const struct conf_compare *k, char *buf, size_t len)
{
	snprintf(buf, len, "compare:%s", k->name);
}

int
compare_check_next(struct store *s, const struct conf_compare *k,
    int64_t *when, struct err *e)
{
	char key[300], *v = NULL;
	int64_t updated = 0;
	int rc;

	state_key(k, key, sizeof(key));
	if ((rc = store_state_get(s, key, &v, &updated, e)) < 0)
		return -1;
	free(v);
	*when = rc == 1 ? (int64_t)time(NULL) : updated + k->every_ms / 1000;
	return 0;
}

/* Spec w's engine and release: the one after '@', else the newest its
 * source lists now. */
static int
resolve(const struct conf *c, struct store *s, const char *w,
    struct league_entrant *x, struct err *e)
{
	const char *at = strchr(w, '@');
	char name[256];
	struct acquire a;

	snprintf(name, sizeof(name), "%.*s", at ? (int)(at - w) :
	    (int)strlen(w), w);
	if ((x->eng = conf_engine(c, name)) == NULL)
		return err_set(e, "engine '%s' is not configured", name);
	if (at) {
		if ((x->version = strdup(at + 1)) == NULL)
			return err_set(e, "out of memory");
		return 0;
	}
	if (acquire_init(&a, c, x->eng, s, e) < 0 ||
	    acquire_newest(&a, 1, &x->version, e) < 0)
		return -1;
	return x->version ? 0 : err_set(e, "%s has no release", name);
}

/* Entry i's ranked figure on side d as "3527 tok/s ± 40 (n 10)". */
static void
fig_words(const struct league *l, size_t i, int d, char *buf, size_t len)
{
	const struct league_fig *g = league_ranked_fig(l, i, d);

	/* Whole tokens a second from 10 up, two decimals below. */
	if (g == NULL)
		snprintf(buf, len, "no figure");
	else
		snprintf(buf, len, "%.*f tok/s ± %.*f (n %zu)%s",
		    g->tp.tps >= 10 ? 0 : 2, g->tp.tps,
		    g->tp.sd >= 10 ? 0 : 2, g->tp.sd, g->tp.n,
		    g->lower_bound ? ", a lower bound" : "");
}

/* Record the alert: on side d, entry now leads where entry was led
 * before. */
static int
alert_leader(struct store *s, const struct conf_compare *k,
    const struct league *l, int d, size_t now, size_t was, json_t *table,
    struct err *e)
{
	const struct league_entry *a = &l->v[now], *b = &l->v[was];
	char text[1024], fa[96], fb[96], key[1024];
	json_t *o;
	char *body;
	int rc;

	fig_words(l, now, d, fa, sizeof(fa));
	fig_words(l, was, d, fb, sizeof(fb));
	snprintf(text, sizeof(text), "compare %s: %s %s now leads %s at %d "
	    "tokens, %s, over %s %s at %s, beyond the noise%s", k->name,
	    a->eng->name, a->version, sides[d], d ? l->rank_gen :
	    l->rank_prompt, fa, b->eng->name, b->version, fb,
	    l->weights_differ ? " (weights differ: the ordering holds, not "
	    "the decimals)" : "");
	snprintf(key, sizeof(key), "compare:%s:%s:%s@%s:over:%s@%s", k->name,
	    sides[d], a->eng->name, a->version, b->eng->name, b->version);
	o = json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:s},s:{s:s,s:s},s:i,s:O}",
	    "kind", "compare", "compare", k->name, "text", text, "side",
	    sides[d], "leader", "engine", a->eng->name, "version", a->version,
	    "was", "engine", b->eng->name, "version", b->version, "tokens",
	    d ? l->rank_gen : l->rank_prompt, "league", table);
	body = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	if (body == NULL)
		return err_set(e, "cannot encode the compare alert");
	rc = store_alert_record(s, "compare", a->eng->name, key, text, body,
	    e);
	free(body);
	return rc < 0 ? -1 : 0;
}

/* Where engine name stands in the table, or -1. */
static int
engine_index(const struct league *l, const char *name)
{
	for (size_t i = 0; name && i < l->n; i++)
		if (strcmp(l->v[i].eng->name, name) == 0)
			return (int)i;
	return -1;
}

/*
 * Each side's leader against the kept one: alerts recorded, *changed
 * set when one changed, the kept leaders updated in *kept (new reference
 * or NULL before).
 */
static int
leaders(struct store *s, const struct conf_compare *k, const struct league *l,
    json_t *kept, json_t *table, int *changed, struct err *e)
{
	*changed = 0;
	for (int d = 0; d < 2; d++) {
		int lead = league_leader(l, d), was;
		const char *old;

		if (lead < 0)
			continue;	/* shared: the last leader stays */
		old = json_string_value(json_object_get(json_object_get(kept,
		    sides[d]), "engine"));
		was = engine_index(l, old);
		if (was >= 0 && was != lead) {
			*changed = 1;
			if (alert_leader(s, k, l, d, (size_t)lead, (size_t)was,
			    table, e) < 0)
				return -1;
		}
		json_object_set_new(kept, sides[d], json_pack("{s:s,s:s}",
		    "engine", l->v[lead].eng->name, "version",
		    l->v[lead].version));
	}
	return 0;
}

int
compare_check_run(const struct conf *c, struct store *s,
    const struct watch_opts *o, const struct conf_compare *k,
    json_t **league, struct err *e)
{
	struct league_entrant x[CONF_COMPARE_MAX];
	struct bench_tally tally;
	struct league l;
	json_t *kept = NULL, *table = NULL;
	char key[300], *v = NULL, *text = NULL;
	size_t n = k->engines.n;
	int rc = -1, changed = 0, got;

	memset(x, 0, sizeof(x));
	memset(&l, 0, sizeof(l));
	memset(&tally, 0, sizeof(tally));
	if (league)
		*league = NULL;
	if (n > CONF_COMPARE_MAX)
		return err_set(e, "compare %s: too many engines", k->name);
	for (size_t i = 0; i < n; i++) {
		if (resolve(c, s, k->engines.v[i], &x[i], e) < 0) {
			err_prefix(e, "compare %s", k->name);
			goto done;
		}
		x[i].j.stop = o ? o->stop : NULL;
		x[i].j.progress = o ? o->progress : NULL;
		x[i].j.progress_arg = o ? o->arg : NULL;
	}
	clog(o, ALERT_LOG_INFO, "compare %s: measuring %zu engines, "
	    "interleaved", k->name, n);
	if (league_measure(c, s, x, n, k->reps, &tally, e) < 0) {
		err_prefix(e, "compare %s", k->name);
		goto done;
	}
	if (tally.failed > 0) {
		err_set(e, "compare %s: %d of %d runs failed; the last: %s",
		    k->name, tally.failed, tally.runs, tally.last_failure);
		goto done;
	}
	if ((l.v = calloc(n, sizeof(*l.v))) == NULL) {
		err_set(e, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++, l.n++)
		if (league_entry(&l, i, s, x[i].eng, x[i].version,
		    x[i].j.release_id, x[i].j.weights_sha256, x[i].j.hw_key,
		    e) < 0)
			goto done;
	league_rank(&l);
	if ((table = league_json(&l)) == NULL) {
		err_set(e, "out of memory");
		goto done;
	}
	state_key(k, key, sizeof(key));
	if ((got = store_state_get(s, key, &v, NULL, e)) < 0)
		goto done;
	kept = got == 0 ? json_loads(v, 0, NULL) : NULL;
	if (!json_is_object(kept)) {
		json_decref(kept);
		kept = json_object();
	}
	if (leaders(s, k, &l, kept, table, &changed, e) < 0 ||
	    (text = json_dumps(kept, JSON_COMPACT | JSON_SORT_KEYS)) == NULL ||
	    store_state_set(s, key, text, e) < 0) {
		if (e->msg[0] == '\0')
			err_set(e, "out of memory");
		goto done;
	}
	clog(o, changed ? ALERT_LOG_WARNING : ALERT_LOG_INFO, "compare %s: "
	    "%s", k->name, changed ? "another engine leads" : got == 1 ?
	    "the first table, kept" : "the same leaders (or none apart)");
	if (league) {
		*league = table;
		table = NULL;
	}
	rc = changed ? 3 : 0;
done:
	for (size_t i = 0; i < n; i++)
		league_entrant_release(&x[i]);
	league_free(&l);
	json_decref(kept);
	json_decref(table);
	free(v);
	free(text);
	return rc;
}
