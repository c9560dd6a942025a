/*
 * canary.c: the output canary over a release range (see canary.h): the
 * judgement from the store and the driver that measures its probes.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/acquire/acquire.h"
#include "bisectd/measure/bench.h"
#include "common/err.h"
#include "config/conf.h"
#include "canary.h"
#include "store/store.h"
#include "verdict.h"

/* Tokens a diff shows of each side. */
#define DIFF_TOKENS 8

int
canary_definition_key(struct store *s, const struct conf_engine *eng,
    const char *weights_sha256, const char *hw_key, char key[65],
    struct err *e)
{
	struct canary_definition d;
	char name[300], *pinned = NULL;
	const char *prompt;
	int rc;

	key[0] = '\0';
	snprintf(name, sizeof(name), "canary-prompt:%s", eng->name);
	if (eng->canary_prompt_sha256 == NULL &&
	    store_state_get(s, name, &pinned, NULL, e) < 0)
		return -1;
	prompt = eng->canary_prompt_sha256 ? eng->canary_prompt_sha256 :
	    pinned;
	if (prompt == NULL || weights_sha256 == NULL || !*weights_sha256)
		return 0;
	rc = canary_definition(eng, prompt, weights_sha256, hw_key, &d, e);
	free(pinned);
	if (rc < 0)
		return -1;
	memcpy(key, d.key, 65);
	canary_definition_release(&d);
	return 0;
}

static void
reason(struct canary_judgement *j, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(j->reason, sizeof(j->reason), fmt, ap);
	va_end(ap);
}

int
canary_judge(struct store *s, const struct range *r, const char *def_key,
    struct canary_judgement *j, struct err *e)
{
	const struct store_release *rel = &r->list.v[r->lo];
	const struct canary_status *good;
	const char *why;

	memset(j, 0, sizeof(*j));
	j->n = r->hi - r->lo + 1;
	j->probe = -1;
	j->status = BISECT_UNKNOWN;
	j->exit_code = 1;
	j->st = calloc(j->n, sizeof(*j->st));
	j->flags = calloc(j->n, sizeof(*j->flags));
	if (j->st == NULL || j->flags == NULL) {
		canary_judgement_release(j);
		return err_set(e, "out of memory");
	}
	for (size_t i = 0; i < j->n; i++)
		if (def_key[0] && canary_status_get(s, rel[i].id, def_key,
		    &j->st[i], e) < 0) {
			canary_judgement_release(j);
			return -1;
		}
	good = &j->st[0];
	if (good->state != CANARY_DETERMINISTIC) {
		if (rel[0].state == RELEASE_FAILED)
			reason(j, "%s cannot be fetched: %s", rel[0].version,
			    rel[0].failure ? rel[0].failure : "failed");
		else if (good->state == CANARY_NOT_MEASURED)
			reason(j, "the canary of %s has not run yet",
			    rel[0].version);
		else {
			reason(j, "the canary of %s is %s (%s): it cannot be "
			    "the reference", rel[0].version,
			    canary_state_name(good->state), good->detail);
			return 0;
		}
		/* The driver measures the good end first. */
		j->probe = rel[0].state == RELEASE_FAILED ? -1 : 0;
		return 0;
	}
	for (size_t i = 0; i < j->n; i++) {
		const struct canary_status *st = &j->st[i];

		if (st->state == CANARY_DETERMINISTIC)
			j->flags[i] = strcmp(st->sha256, good->sha256) == 0 ?
			    FLAG_GOOD : FLAG_BAD;
		else if (st->state == CANARY_NOT_MEASURED &&
		    rel[i].state != RELEASE_FAILED)
			j->flags[i] = FLAG_UNKNOWN;
		else
			j->flags[i] = FLAG_SKIP;
	}
	if (bisect_flag_next(j->flags, j->n, &j->step, &why) < 0) {
		const struct canary_status *bad = &j->st[j->n - 1];

		reason(j, "%s: %s: %s", why, rel[j->n - 1].version,
		    rel[j->n - 1].state == RELEASE_FAILED ? (rel[j->n -
		    1].failure ? rel[j->n - 1].failure : "not fetched") :
		    bad->detail);
		return 0;
	}
	if (!j->step.done) {
		j->probe = (int)j->step.probe;
		j->exit_code = 4;
		reason(j, "the bisect of the range is unfinished: %s is to be "
		    "measured next", rel[j->step.probe].version);
		return 0;
	}
	j->done = 1;
	if (j->step.first_bad == SIZE_MAX) {
		j->status = BISECT_NO_REGRESSION;
		j->exit_code = 0;
		reason(j, "%s generates the same text as %s on the canary "
		    "prompt", rel[j->n - 1].version, rel[0].version);
		return 0;
	}
	j->status = BISECT_REGRESSION;
	j->exit_code = 3;
	reason(j, "%s generates different text from %s on the canary prompt",
	    rel[j->step.first_bad].version, rel[j->step.last_good].version);
	return 0;
}

void
canary_judgement_release(struct canary_judgement *j)
{
	for (size_t i = 0; j->st && i < j->n; i++)
		canary_status_release(&j->st[i]);
	free(j->st);
	free(j->flags);
	memset(j, 0, sizeof(*j));
}

json_t *
canary_judgement_json(const struct canary_judgement *j, const struct range *r)
{
	const struct store_release *rel = &r->list.v[r->lo];
	json_t *v = json_object();

	json_object_set_new(v, "status", json_string(
	    bisect_status_name(j->status)));
	json_object_set_new(v, "reason", json_string(j->reason));
	json_object_set_new(v, "kind", json_string("output"));
	if (j->done && j->step.first_bad != SIZE_MAX) {
		const struct flag_step *s = &j->step;
		const struct canary_status *a = &j->st[s->last_good];
		const struct canary_status *b = &j->st[s->first_bad];
		struct canary_diff d;
		json_t *cand = json_array(), *diff = json_object();

		json_object_set_new(v, "first_bad", json_string(
		    rel[s->first_bad].version));
		json_object_set_new(v, "last_good", json_string(
		    rel[s->last_good].version));
		for (size_t i = s->first_candidate; i <= s->first_bad; i++)
			json_array_append_new(cand, json_string(
			    rel[i].version));
		json_object_set_new(v, "candidates", cand);
		json_object_set_new(v, "last_good_sha256", json_string(
		    a->sha256));
		json_object_set_new(v, "first_bad_sha256", json_string(
		    b->sha256));
		canary_diff(a->text, a->text_len, b->text, b->text_len,
		    DIFF_TOKENS, &d);
		json_object_set_new(diff, "token", json_integer(
		    (json_int_t)d.token));
		json_object_set_new(diff, "before", json_string(d.before));
		json_object_set_new(diff, "after", json_string(d.after));
		json_object_set_new(v, "diff", diff);
	} else {
		json_object_set_new(v, "first_bad", json_null());
		json_object_set_new(v, "last_good", j->done ? json_string(
		    rel[j->n - 1].version) : json_null());
		json_object_set_new(v, "candidates", json_array());
	}
	return v;
}

/* --- the driver --- */

static void
note(const struct canary_opts *o, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (o == NULL || o->note == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	o->note(o->arg, line);
}

int
canary_session_open(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const atomic_int *stop, struct canary_session *x,
    struct err *e)
{
	int64_t machine_id;

	memset(x, 0, sizeof(*x));
	if (eng->canary == NULL)
		return err_set(e, "engine %s has no canary (see [engine] "
		    "canary in the configuration)", eng->name);
	x->acq = calloc(1, sizeof(*x->acq));
	x->w = calloc(1, sizeof(*x->w));
	if (x->acq == NULL || x->w == NULL) {
		canary_session_close(x);
		return err_set(e, "out of memory");
	}
	if (acquire_init(x->acq, conf, eng, s, e) < 0)
		goto fail;
	x->acq->stop = stop;
	x->engine_id = x->acq->engine_id;
	if (acquire_weights(x->acq, x->w, e) < 0 ||
	    bench_machine(s, &machine_id, x->hw, e) < 0 ||
	    canary_prompt_pin(conf, eng, s, &x->prompt, e) < 0 ||
	    canary_definition_key(s, eng, x->w->sha256, x->hw, x->key, e) < 0)
		goto fail;
	x->k.eng = eng;
	x->k.store = s;
	x->k.weights_id = x->w->weights_id;
	x->k.weights_path = x->w->path;
	x->k.weights_sha256 = x->w->sha256;
	x->k.machine_id = machine_id;
	x->k.hw_key = x->hw;
	x->k.prompt = &x->prompt;
	x->k.stop = stop;
	return 0;
fail:
	canary_session_close(x);
	return -1;
}

void
canary_session_close(struct canary_session *x)
{
	canary_prompt_release(&x->prompt);
	if (x->w)
		pinned_weights_release(x->w);
	free(x->w);
	free(x->acq);
	memset(x, 0, sizeof(*x));
}

int
canary_session_measure(struct canary_session *x, const char *version,
    struct canary_status *st, struct err *fe, struct err *e)
{
	struct acquired got;
	struct store_release rel;
	int rc;

	memset(st, 0, sizeof(*st));
	memset(&got, 0, sizeof(got));
	if (acquire_release(x->acq, version, &got, fe) < 0) {
		/* A failure the store keeps is a release to skip; anything
		 * else (a stop, the store) ends the job. */
		rc = store_release_get(x->k.store, x->engine_id, version, &rel,
		    e);
		if (rc != 0)
			return -1;
		rc = rel.state == RELEASE_FAILED ? 1 : err_set(e, "%s",
		    fe->msg);
		store_release_release(&rel);
		return rc;
	}
	rc = canary_run(&x->k, got.release_id, version, got.dir, e);
	if (rc == 0)
		rc = canary_status_get(x->k.store, got.release_id, x->key, st,
		    e);
	acquired_release(&got);
	return rc;
}

int
canary_alert(struct store *s, const struct conf_engine *eng,
    const char *def_key, const char *since, const struct canary_status *a,
    const char *version, const struct canary_status *b, double faster_by,
    const char *metric, struct err *e)
{
	struct canary_diff d;
	char key[512], text[512];
	json_t *o, *diff;
	char *body;
	int rc;

	snprintf(key, sizeof(key), "output:%s:%s..%s:%.16s", eng->name, since,
	    version, def_key);
	if (faster_by > 0)
		snprintf(text, sizeof(text), "%s %s is %.0f%% faster than %s "
		    "(%s) and generates different text on the canary prompt",
		    eng->name, version, 100 * faster_by, since, metric);
	else
		snprintf(text, sizeof(text), "%s %s generates different text "
		    "from %s on the canary prompt", eng->name, version, since);
	canary_diff(a->text, a->text_len, b->text, b->text_len, DIFF_TOKENS,
	    &d);
	o = json_object();
	diff = json_object();
	json_object_set_new(diff, "token", json_integer((json_int_t)d.token));
	json_object_set_new(diff, "before", json_string(d.before));
	json_object_set_new(diff, "after", json_string(d.after));
	json_object_set_new(o, "text", json_string(text));
	json_object_set_new(o, "kind", json_string("output"));
	json_object_set_new(o, "engine", json_string(eng->name));
	json_object_set_new(o, "version", json_string(version));
	json_object_set_new(o, "since", json_string(since));
	json_object_set_new(o, "since_sha256", json_string(a->sha256));
	json_object_set_new(o, "sha256", json_string(b->sha256));
	json_object_set_new(o, "diff", diff);
	json_object_set_new(o, "faster_by", faster_by > 0 ?
	    json_real(faster_by) : json_null());
	body = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (body == NULL)
		return err_set(e, "cannot encode the alert for '%s'", key);
	rc = store_alert_record(s, "output", eng->name, key, text, body, e);
	free(body);
	return rc;
}

int
canary_bisect(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct canary_opts *o,
    json_t **verdict, int *exit_code, struct err *e)
{
	struct canary_session x;
	struct range r;
	struct canary_judgement j;
	int rc = -1, probes = 0;

	memset(&r, 0, sizeof(r));
	memset(&j, 0, sizeof(j));
	if (canary_session_open(conf, eng, s, o ? o->stop : NULL, &x, e) < 0)
		return -1;
	if (range_resolve(s, x.engine_id, spec, &r, e) < 0) {
		/* Unknown versions: ask the source once, then try again. */
		struct err re = ERR_INIT;

		if (acquire_refresh(x.acq, NULL, NULL, &re) < 0) {
			err_set(e, "%s", re.msg);
			goto done;
		}
		if (range_resolve(s, x.engine_id, spec, &r, e) < 0)
			goto done;
	}
	for (;;) {
		struct store_release *rel;
		struct canary_status st;
		struct err fe = ERR_INIT;

		canary_judgement_release(&j);
		if (canary_judge(s, &r, x.key, &j, e) < 0)
			goto done;
		if (j.done || j.probe < 0)
			break;
		/* Every probe ends with a state; more than the range holds
		 * means the store does not keep what was run. */
		if (++probes > (int)j.n + 1) {
			err_set(e, "the canary bisect of %s %s does not advance",
			    eng->name, spec);
			goto done;
		}
		rel = &r.list.v[r.lo + (size_t)j.probe];
		rc = canary_session_measure(&x, rel->version, &st, &fe, e);
		if (rc < 0)
			goto done;
		if (rc == 1) {
			note(o, "skip %s: %s", rel->version, fe.msg);
			if (range_reload(s, x.engine_id, rel, e) < 0)
				goto done;
		} else if (st.state == CANARY_DETERMINISTIC)
			note(o, "%s: canary %.12s", rel->version, st.sha256);
		else
			note(o, "skip %s: its canary is %s (%s)", rel->version,
			    canary_state_name(st.state), st.detail);
		canary_status_release(&st);
		rc = -1;
	}
	*exit_code = j.exit_code;
	if (verdict)
		*verdict = canary_judgement_json(&j, &r);
	note(o, "%s", j.reason);
	rc = 0;
done:
	canary_judgement_release(&j);
	range_release(&r);
	canary_session_close(&x);
	return rc;
}
