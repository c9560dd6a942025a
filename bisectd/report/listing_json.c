/*
 * listing_json.c: the JSON of the store's listings (see listing_json.h),
 * shared by bisectctl's --format json and the daemon's /api/.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/measure/canary.h"
#include "listing_json.h"
#include "store/store.h"

/* A string the store may lack, or null. */
static json_t *
maybe(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *
listing_releases_json(const struct store_release_list *l)
{
	json_t *a = json_array();

	for (size_t i = 0; i < l->n; i++) {
		const struct store_release *r = &l->v[i];
		json_t *o = json_object();

		json_object_set_new(o, "version", json_string(r->version));
		json_object_set_new(o, "state", json_string(
		    store_release_state_name(r->state)));
		json_object_set_new(o, "url", r->url ? json_string(r->url) :
		    json_null());
		json_object_set_new(o, "sha256", r->archive_sha256 ?
		    json_string(r->archive_sha256) : json_null());
		json_object_set_new(o, "failure", maybe(r->failure));
		json_array_append_new(a, o);
	}
	return a;
}

/* A count or size the store keeps as -1 when unknown. */
static json_t *
known(int64_t v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

/* A run's stderr tail, or null. */
static json_t *
tail_json(const char *tail, size_t len)
{
	return tail ? json_stringn_nocheck(tail, len) : json_null();
}

static json_t *
canary_run_json(const struct canary_runs *c, size_t i)
{
	const struct store_canary_row *r = &c->rows.v[i];
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(r->id));
	json_object_set_new(o, "cell", json_pack("{s:s}", "kind", "canary"));
	json_object_set_new(o, "started", json_integer(r->started));
	json_object_set_new(o, "wall_ns", known(r->wall_ns));
	json_object_set_new(o, "definition", maybe(r->definition));
	json_object_set_new(o, "definition_text", maybe(r->definition_text));
	json_object_set_new(o, "canary", json_pack("{s:o,s:s}", "sha256",
	    r->sha256 ? json_string(r->sha256) : json_null(), "status",
	    canary_state_name(c->state[i])));
	json_object_set_new(o, "failure", maybe(r->failure));
	json_object_set_new(o, "detail", maybe(r->failure_detail));
	json_object_set_new(o, "stderr_tail", tail_json(r->err_tail,
	    r->err_len));
	return o;
}

json_t *
listing_runs_json(const struct store_run_rows *rows,
    const struct canary_runs *canary)
{
	json_t *a = json_array();

	for (size_t i = 0; i < rows->n; i++) {
		const struct store_run_row *r = &rows->v[i];
		json_t *o = json_object();

		json_object_set_new(o, "id", json_integer(r->id));
		json_object_set_new(o, "cell", json_pack("{s:s,s:i,s:i,s:s}",
		    "kind", r->kind, "prompt", r->prompt_tokens, "gen",
		    r->gen_tokens, "content", r->content));
		/* From 1, as the progress line counts. */
		json_object_set_new(o, "rep", json_integer(r->rep + 1));
		json_object_set_new(o, "warmup", json_boolean(r->warmup));
		json_object_set_new(o, "confirm", json_boolean(r->confirm));
		json_object_set_new(o, "started", json_integer(r->started));
		json_object_set_new(o, "wall_ns", known(r->wall_ns));
		json_object_set_new(o, "engine_ms", r->engine_ms >= 0 ?
		    json_real(r->engine_ms) : json_null());
		json_object_set_new(o, "analysis_reads", r->clock ?
		    json_string(r->clock) : json_null());
		json_object_set_new(o, "user_ns", known(r->user_ns));
		json_object_set_new(o, "sys_ns", known(r->sys_ns));
		json_object_set_new(o, "max_rss_kb", known(r->max_rss_kb));
		json_object_set_new(o, "busy_share", r->busy_share >= 0 ?
		    json_real(r->busy_share) : json_null());
		json_object_set_new(o, "busy", json_boolean(r->busy));
		json_object_set_new(o, "samples", json_integer(r->nsamples));
		json_object_set_new(o, "definition", maybe(r->definition));
		json_object_set_new(o, "definition_text",
		    maybe(r->definition_text));
		json_object_set_new(o, "failure", maybe(r->failure));
		json_object_set_new(o, "detail", maybe(r->failure_detail));
		json_object_set_new(o, "stderr_tail", tail_json(r->err_tail,
		    r->err_len));
		json_object_set_new(o, "canary", json_null());
		json_array_append_new(a, o);
	}
	for (size_t i = 0; canary && i < canary->rows.n; i++)
		json_array_append_new(a, canary_run_json(canary, i));
	return a;
}

static json_t *
try_json(const struct store_alert_try *t)
{
	json_t *o = json_pack("{s:I,s:b,s:I}", "at", (json_int_t)t->at, "ok",
	    t->ok, "duration_ms", (json_int_t)t->duration_ms);

	if (t->http_status >= 0)
		json_object_set_new(o, "http_status",
		    json_integer(t->http_status));
	if (t->exit_code >= 0)
		json_object_set_new(o, "exit_code", json_integer(t->exit_code));
	if (t->error)
		json_object_set_new(o, "error", json_string(t->error));
	return o;
}

static json_t *
alert_json(const struct store_alert_row *r)
{
	json_t *o, *sinks = json_array(), *body;

	for (size_t i = 0; i < r->nsinks; i++) {
		const struct store_alert_sink *k = &r->sinks[i];
		json_t *tries = json_array();

		for (size_t j = 0; j < k->ntries; j++)
			json_array_append_new(tries, try_json(&k->tries[j]));
		json_array_append_new(sinks, json_pack("{s:s,s:s,s:s,s:i,"
		    "s:I,s:I,s:o}", "sink", k->sink, "target", k->target,
		    "state", k->state, "attempts", k->attempts, "next_at",
		    (json_int_t)(strcmp(k->state, "pending") == 0 ?
		    k->next_at : 0), "delivered", (json_int_t)k->delivered,
		    "tries", tries));
	}
	body = json_loads(r->alert.body, 0, NULL);
	o = json_pack("{s:I,s:I,s:s,s:s,s:s,s:s,s:o}", "id",
	    (json_int_t)r->alert.id, "created", (json_int_t)r->alert.created,
	    "kind", r->alert.kind, "engine", r->alert.engine, "key",
	    r->alert.dedup_key, "summary", r->alert.summary, "sinks", sinks);
	json_object_set_new(o, "body", body ? body : json_string(
	    r->alert.body));
	return o;
}

json_t *
listing_alerts_json(const struct store_alert_rows *rows)
{
	json_t *a = json_array();

	for (size_t i = 0; i < rows->n; i++)
		json_array_append_new(a, alert_json(&rows->v[i]));
	return a;
}

char *
listing_json_text(const json_t *json)
{
	char *s = json_dumps(json, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(10)), *t;
	size_t n;

	if (s == NULL)
		return NULL;
	n = strlen(s);
	if ((t = realloc(s, n + 2)) == NULL) {
		free(s);
		return NULL;
	}
	t[n] = '\n';
	t[n + 1] = '\0';
	return t;
}
