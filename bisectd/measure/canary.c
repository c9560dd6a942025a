/*
 * canary.c: the output canary (see canary.h): the prompt's pin, the
 * definition, the runs and what the store's runs say about a release.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "canary.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/strv.h"
#include "definition.h"
#include "config/conf.h"
#include "fetch/sha256.h"
#include "parse.h"
#include "bisectd/process/runner.h"
#include "store/store.h"
#include "bisectd/process/template.h"

int
canary_prompt_pin(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, struct canary_prompt *out, struct err *e)
{
	struct buf text = BUF_INIT(CANARY_PROMPT_MAX);
	char key[300], name[128], *pinned = NULL, *dir = NULL;
	const char *want;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (eng->canary_prompt == NULL)
		return err_set(e, "engine %s has no canary-prompt", eng->name);
	if (fs_read_file(eng->canary_prompt, &text, e) < 0)
		return err_prefix(e, "canary prompt");
	if (sha256_buf(text.data ? text.data : "", text.len, out->sha256) < 0) {
		err_set(e, "out of memory");
		goto done;
	}
	snprintf(key, sizeof(key), "canary-prompt:%s", eng->name);
	if (store_state_get(s, key, &pinned, NULL, e) < 0)
		goto done;
	want = eng->canary_prompt_sha256 ? eng->canary_prompt_sha256 : pinned;
	if (want && strcmp(want, out->sha256) != 0) {
		err_set(e, "canary prompt '%s' has sha256 %s, %s %s: texts "
		    "generated from another prompt are not comparable",
		    eng->canary_prompt, out->sha256, eng->canary_prompt_sha256 ?
		    "canary-prompt-sha256 says" : "pinned at its first use as",
		    want);
		goto done;
	}
	if ((pinned == NULL || strcmp(pinned, out->sha256) != 0) &&
	    store_state_set(s, key, out->sha256, e) < 0)
		goto done;
	snprintf(name, sizeof(name), "canary/%s.txt", out->sha256);
	if ((out->path = fs_join(conf->cache, name)) == NULL ||
	    (dir = fs_join(conf->cache, "canary")) == NULL) {
		err_set(e, "out of memory");
		goto done;
	}
	/* Content-addressed: a copy that exists holds these bytes. */
	if (fs_mkdirs(dir, 0755, e) < 0 || fs_write_atomic(out->path,
	    text.data ? text.data : "", text.len, 0644, e) < 0)
		goto done;
	rc = 0;
done:
	if (rc < 0)
		canary_prompt_release(out);
	free(dir);
	free(pinned);
	buf_release(&text);
	return rc;
}

void
canary_prompt_release(struct canary_prompt *p)
{
	free(p->path);
	memset(p, 0, sizeof(*p));
}

/* The canary-parser as written in the config. */
static void
parser_text(const struct conf_engine *eng, char *buf, size_t len)
{
	if (eng->canary_parser_arg)
		snprintf(buf, len, "%s:%s", conf_text_parser_name(
		    eng->canary_parser), eng->canary_parser_arg);
	else
		snprintf(buf, len, "%s", conf_text_parser_name(
		    eng->canary_parser));
}

/* The placeholders' values of a canary run but the release's.  The
 * first gen length is {gen}. */
static void
canary_vals(const struct conf_engine *eng, struct tmpl_vals *v)
{
	v->prompt = -1;
	v->gen = eng->ngen ? eng->gen[0] : -1;
	v->threads = eng->threads;
}

/* canary_vals() and the release's: its folder, version and weights. */
static void
canary_release_vals(const struct conf_engine *eng, const char *dir,
    const char *version, const char *weights, struct tmpl_vals *v)
{
	canary_vals(eng, v);
	v->bin = dir;
	v->version = version;
	v->weights = weights;
}

int
canary_command_line(const struct conf_engine *eng, const char *dir,
    const char *version, const char *weights, struct buf *out,
    struct err *e)
{
	struct tmpl_vals v = TMPL_VALS_INIT;
	const char *in[] = { eng->canary_prompt, NULL };

	if (eng->canary == NULL || eng->canary_prompt == NULL)
		return err_set(e, "engine %s has no canary", eng->name);
	canary_release_vals(eng, dir, version, weights, &v);
	v.content = eng->canary_prompt;
	if (def_command_line(eng, eng->canary, "canary", &v, out, e) < 0)
		return -1;
	/* The prompt is its stdin as well. */
	if (buf_addstr(out, " < ") < 0 || tmpl_quote_argv(in, out) < 0)
		return err_set(e, "engine %s: the canary's command line is "
		    "too long to show", eng->name);
	return 0;
}

int
canary_definition(const struct conf_engine *eng, const char *prompt_sha256,
    const char *weights_sha256, const char *hw_key,
    struct canary_definition *d, struct err *e)
{
	struct tmpl_vals v = { "{bin}", "{version}", "{weights}", "{content}",
	    -1, -1, -1, NULL, NULL, -1 };
	struct strv argv = STRV_INIT;
	char parser[1200];
	json_t *o;

	memset(d, 0, sizeof(*d));
	if (eng->canary == NULL)
		return err_set(e, "engine %s has no canary", eng->name);
	canary_vals(eng, &v);
	if (tmpl_expand(eng->canary, &v, &argv, e) < 0) {
		strv_clear(&argv);
		return err_prefix(e, "engine %s: canary", eng->name);
	}
	parser_text(eng, parser, sizeof(parser));
	o = json_object();
	json_object_set_new(o, "canary", def_strv_json(&argv));
	json_object_set_new(o, "env", def_strv_json(&eng->env));
	json_object_set_new(o, "parser", json_string(parser));
	json_object_set_new(o, "prompt", json_string(prompt_sha256));
	json_object_set_new(o, "threads", json_integer(eng->threads));
	json_object_set_new(o, "weights", json_string(weights_sha256));
	json_object_set_new(o, "hw", json_string(hw_key));
	strv_clear(&argv);
	if (def_seal(o, &d->text, d->key) < 0) {
		canary_definition_release(d);
		return err_set(e, "out of memory");
	}
	return 0;
}

void
canary_definition_release(struct canary_definition *d)
{
	free(d->text);
	memset(d, 0, sizeof(*d));
}

const char *
canary_state_name(enum canary_state st)
{
	static const char *const names[] = { "not-measured", "failed",
	    "nondeterministic", "deterministic" };

	return names[st];
}

/*
 * What the runs of rows under definition def_key say of their release;
 * the text of a deterministic one is moved from rows to out when
 * take_text is set.
 */
static void
status_of(struct store_canary_rows *rows, const char *def_key, int take_text,
    struct canary_status *out)
{
	const struct store_canary_row *first = NULL, *other = NULL;
	const struct store_canary_row *failure = NULL;
	int ok = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < rows->n; i++) {
		const struct store_canary_row *r = &rows->v[i];

		if (r->definition == NULL || strcmp(r->definition,
		    def_key) != 0)
			continue;
		out->runs++;
		if (r->failure || r->sha256 == NULL) {
			out->failed++;
			failure = r;
			continue;
		}
		ok++;
		if (first == NULL)
			first = r;
		else if (other == NULL && strcmp(r->sha256, first->sha256) != 0)
			other = r;
	}
	if (other) {
		out->state = CANARY_NONDETERMINISTIC;
		snprintf(out->detail, sizeof(out->detail), "runs %lld and "
		    "%lld generated texts with sha256 %.12s and %.12s",
		    (long long)first->id, (long long)other->id, first->sha256,
		    other->sha256);
	} else if (ok >= CANARY_RUNS) {
		out->state = CANARY_DETERMINISTIC;
		snprintf(out->sha256, sizeof(out->sha256), "%s", first->sha256);
		if (take_text) {
			out->text = first->text;
			out->text_len = first->text_len;
			rows->v[first - rows->v].text = NULL;
		}
	} else if (failure) {
		out->state = CANARY_FAILED;
		snprintf(out->detail, sizeof(out->detail), "%s%s%s",
		    failure->failure ? failure->failure : "failed",
		    failure->failure_detail ? ": " : "",
		    failure->failure_detail ? failure->failure_detail : "");
	} else
		out->state = CANARY_NOT_MEASURED;
}

int
canary_status_get(struct store *s, int64_t release_id, const char *def_key,
    struct canary_status *out, struct err *e)
{
	struct store_canary_rows rows;

	memset(out, 0, sizeof(*out));
	if (store_canary_list(s, release_id, def_key, &rows, e) < 0)
		return -1;
	status_of(&rows, def_key, 1, out);
	store_canary_rows_release(&rows);
	return 0;
}

int
canary_runs_list(struct store *s, int64_t release_id,
    struct canary_runs *out, struct err *e)
{
	memset(out, 0, sizeof(*out));
	if (store_canary_list(s, release_id, NULL, &out->rows, e) < 0)
		return -1;
	out->state = calloc(out->rows.n ? out->rows.n : 1,
	    sizeof(*out->state));
	if (out->state == NULL) {
		store_canary_rows_release(&out->rows);
		return err_set(e, "out of memory");
	}
	for (size_t i = 0; i < out->rows.n; i++) {
		struct canary_status st;

		status_of(&out->rows, out->rows.v[i].definition, 0, &st);
		out->state[i] = out->rows.v[i].failure ? CANARY_FAILED :
		    st.state;
	}
	return 0;
}

void
canary_runs_release(struct canary_runs *r)
{
	store_canary_rows_release(&r->rows);
	free(r->state);
	memset(r, 0, sizeof(*r));
}

void
canary_status_release(struct canary_status *st)
{
	free(st->text);
	memset(st, 0, sizeof(*st));
}

/* One canary run of t: run, pick the text out, store. */
static int
canary_once(const struct canary_ctx *k, int64_t release_id,
    const char *version, const char *dir, int64_t definition_id,
    struct err *e)
{
	const struct conf_engine *eng = k->eng;
	const struct canary_prompt *p = k->prompt;
	struct tmpl_vals v = TMPL_VALS_INIT;
	struct child_spec spec = CHILD_SPEC_INIT;
	struct parse_text_spec ps = { eng->canary_parser,
	    eng->canary_parser_arg };
	struct store_canary_run run;
	struct run_result res;
	struct err pe = ERR_INIT;
	char detail[1100], sha[65];
	char *text = NULL;
	size_t tlen = 0;
	int rc;

	canary_release_vals(eng, dir, version, k->weights_path, &v);
	v.content = p->path;
	def_child_spec(eng, &spec);
	spec.stdin_path = p->path;
	memset(&run, 0, sizeof(run));
	run.started = (int64_t)time(NULL);
	if (run_template(eng->canary, &v, &spec, &res, e) < 0)
		return err_prefix(e, "%s %s: canary", eng->name, version);
	run.release_id = release_id;
	run.weights_id = k->weights_id;
	run.machine_id = k->machine_id;
	run.definition_id = definition_id;
	run.out_bytes = res.out_bytes;
	def_stored_end(&res, detail, sizeof(detail), &run.end);
	if (run.end.failure != NULL) {
		/* Stored with its reason and no text. */
	} else if (res.out_truncated) {
		/* Text cut short compares unequal for no reason. */
		run.end.failure = "parse";
		snprintf(detail, sizeof(detail), "stdout of %llu bytes is over "
		    "the %d byte limit", (unsigned long long)res.out_bytes,
		    RUN_DEFAULT_STDOUT_MAX);
		run.end.failure_detail = detail;
	} else if (parse_text(&ps, res.out.data, res.out.len, &text, &tlen,
	    &pe) < 0) {
		run.end.failure = "parse";
		snprintf(detail, sizeof(detail), "%s", pe.msg);
		run.end.failure_detail = detail;
	} else if (sha256_buf(text, tlen, sha) < 0) {
		free(text);
		run_result_release(&res);
		return err_set(e, "out of memory");
	} else {
		run.text = text;
		run.text_len = tlen;
		run.sha256 = sha;
	}
	rc = store_canary_insert(k->store, &run, e);
	free(text);
	run_result_release(&res);
	return rc;
}

int
canary_run(const struct canary_ctx *k, int64_t release_id,
    const char *version, const char *dir, struct err *e)
{
	struct canary_definition d;
	struct store_canary_rows rows;
	int64_t definition_id;
	size_t have;
	int rc = -1;

	if (canary_definition(k->eng, k->prompt->sha256, k->weights_sha256,
	    k->hw_key, &d, e) < 0)
		return -1;
	if (store_canary_list(k->store, release_id, d.key, &rows, e) < 0)
		goto done;
	have = rows.n;
	store_canary_rows_release(&rows);
	if (have >= CANARY_RUNS) {
		rc = 0;
		goto done;
	}
	if (store_canary_definition_ensure(k->store, d.key, d.text,
	    &definition_id, e) < 0)
		goto done;
	for (; have < CANARY_RUNS; have++) {
		if (k->stop && *k->stop) {
			err_set(e, "interrupted");
			goto done;
		}
		if (canary_once(k, release_id, version, dir, definition_id,
		    e) < 0)
			goto done;
	}
	rc = 0;
done:
	canary_definition_release(&d);
	return rc;
}
