/*
 * definition.c: what a run executes, described (see definition.h).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strv.h"
#include "config/conf.h"
#include "definition.h"
#include "fetch/sha256.h"
#include "bisectd/process/runner.h"
#include "store/store.h"
#include "bisectd/process/template.h"

json_t *
def_strv_json(const struct strv *v)
{
	json_t *a = json_array();

	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(a, json_string(v->v[i]));
	return a;
}

json_t *
def_lengths_json(const int *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

int
def_seal(json_t *o, char **text, char key[65])
{
	*text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (*text == NULL || sha256_buf(*text, strlen(*text), key) < 0) {
		free(*text);
		*text = NULL;
		return -1;
	}
	return 0;
}

int
def_command_line(const struct conf_engine *eng, const char *tmpl,
    const char *key, const struct tmpl_vals *v, struct buf *out,
    struct err *e)
{
	struct strv argv = STRV_INIT;
	int rc = -1;

	if (eng->workdir) {
		const char *cd[] = { "cd", eng->workdir, NULL };

		if (tmpl_quote_argv(cd, out) < 0 || buf_addstr(out, " && ") < 0)
			goto full;
	}
	/* The runner sets the engine's env on top of PATH, HOME, LANG and
	 * CUDA_VISIBLE_DEVICES (the GPUs, in the machine key). */
	if (eng->env.n > 0 && (strv_push(&argv, "env") < 0 ||
	    strv_extend(&argv, &eng->env) < 0)) {
		err_set(e, "out of memory");
		goto out;
	}
	if (tmpl_expand(tmpl, v, &argv, e) < 0) {
		err_prefix(e, "engine %s: %s", eng->name, key);
		goto out;
	}
	if (tmpl_quote_argv((const char *const *)argv.v, out) < 0)
		goto full;
	rc = 0;
	goto out;
full:
	err_set(e, "engine %s: the command line is too long to show",
	    eng->name);
out:
	strv_clear(&argv);
	return rc;
}

void
def_stored_end(const struct run_result *r, char *detail, size_t len,
    struct store_run_end *end)
{
	end->wall_ns = r->wall_ns;
	end->exit_code = r->exit_code;
	end->signal = r->signal;
	end->err_tail = r->errtail.data;
	end->err_len = r->errtail.len;
	end->failure = NULL;
	end->failure_detail = NULL;
	if (r->reason != RUN_OK) {
		end->failure = run_reason_name(r->reason);
		end->failure_detail = run_describe(r, detail, len);
	}
}

void
def_child_spec(const struct conf_engine *eng, struct child_spec *spec)
{
	spec->env = (const char *const *)eng->env.v;
	spec->workdir = eng->workdir;
	spec->timeout_ms = eng->timeout_ms;
	spec->memory_max = eng->max_memory;
}
