/*
 * serve_run.c: one serve run (see serve_run.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/err.h"
#include "config/conf.h"
#include "definition.h"
#include "load.h"
#include "serve_run.h"

char *
serve_profile_json(const struct conf_engine *eng)
{
	static const char *const arrivals[] = { "poisson", "fixed",
	    "concurrency" };
	const struct conf_load *l = &eng->load;
	json_t *o = json_object();
	char *s;

	json_object_set_new(o, "arrival", json_string(arrivals[l->arrival]));
	if (l->arrival == ARRIVAL_CONCURRENCY)
		json_object_set_new(o, "concurrency",
		    json_integer(l->concurrency));
	else
		json_object_set_new(o, "rate", json_real(l->rate));
	if (l->requests > 0)
		json_object_set_new(o, "requests", json_integer(l->requests));
	else
		json_object_set_new(o, "duration_ms",
		    json_integer(l->duration_ms));
	json_object_set_new(o, "warmup", json_integer(l->warmup));
	json_object_set_new(o, "prompt", def_lengths_json(l->prompt,
	    l->nprompt));
	json_object_set_new(o, "output", def_lengths_json(l->output,
	    l->noutput));
	json_object_set_new(o, "dialect", json_string(l->dialect ==
	    DIALECT_LLAMA ? "llama" : "openai"));
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

/* "3 of 100 requests failed (truncated 3): FIRST". */
static void
failure_detail(const struct load_result *lr, char *buf, size_t len)
{
	size_t off;
	int failed = (int)lr->n - lr->errors[LOAD_OK];
	const char *sep = " (";

	off = (size_t)snprintf(buf, len, "%d of %zu requests failed", failed,
	    lr->n);
	for (int k = LOAD_OK + 1; k < LOAD_NERR && off < len; k++) {
		if (lr->errors[k] == 0)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s %d", sep,
		    load_error_name(k), lr->errors[k]);
		sep = ", ";
	}
	if (off < len && lr->last_status)
		off += (size_t)snprintf(buf + off, len - off, ", last status "
		    "%ld", lr->last_status);
	if (off < len)
		snprintf(buf + off, len - off, ")%s%s", lr->first_error[0] ?
		    ": " : "", lr->first_error);
}

static void
fill_row(const struct conf_engine *eng, const struct load_result *lr,
    const struct serve_figures *f, struct store_serve_run *r)
{
	int done = f->ok > 0;

	r->profile = serve_profile_json(eng);
	r->requests = (int)lr->n;
	r->ok = lr->errors[LOAD_OK];
	/* The store's error columns follow load.h's order, after OK. */
	for (int k = 0; k < SERVE_NERRORS; k++)
		r->errors[k] = lr->errors[k + 1];
	r->duration_ns = done ? (int64_t)f->duration_ns : -1;
	r->req_per_s = done ? f->req_per_s : NAN;
	r->out_tok_per_s = done ? f->out_tok_per_s : NAN;
	r->goodput_per_s = done ? f->goodput_per_s : NAN;
	r->goodput_share = f->goodput_share;
	r->lag_p50_ns = (int64_t)f->lag_p50_ns;
	r->lag_p99_ns = (int64_t)f->lag_p99_ns;
	r->lag_max_ns = (int64_t)f->lag_max_ns;
	r->lag_over = f->lag_p99_ns > (double)eng->load.max_lag_ms * 1e6;
}

int
serve_measure(const struct ttft_server_spec *spec,
    const struct conf_engine *eng, uint64_t seed, const atomic_int *stop,
    struct serve_outcome *out, struct run_result *server_run,
    struct err *e)
{
	struct load_spec ls = { eng->url, &eng->load, eng->timeout_ms, seed,
	    stop };
	struct serve_slo slo = { (double)eng->load.slo_ttft_ms * 1e6,
	    (double)eng->load.slo_tpot_ms * 1e6 };
	struct ttft_server *srv;
	struct ttft_result tr;
	struct load_result lr;
	int failed;

	memset(out, 0, sizeof(*out));
	if (ttft_server_start(spec, &srv, &tr, server_run, e) < 0) {
		out->server = tr.status;
		snprintf(out->detail, sizeof(out->detail), "%s: %s",
		    ttft_status_name(tr.status), tr.detail);
		return tr.status == TTFT_RUNNER ? -1 : 0;
	}
	if (load_run(&ls, &lr, e) < 0) {
		ttft_server_stop(srv, server_run);
		return -1;
	}
	ttft_server_stop(srv, server_run);
	out->server = TTFT_OK;
	if (lr.n == 0 || serve_figures(lr.req, lr.n, lr.itl_ns, lr.nitl, &slo,
	    &out->fig) < 0) {
		snprintf(out->detail, sizeof(out->detail), "no request was "
		    "measured%s", lr.stopped ? " (stopped)" : "");
		load_result_release(&lr);
		return 0;
	}
	out->measured = 1;
	fill_row(eng, &lr, &out->fig, &out->row);
	failed = (int)lr.n - lr.errors[LOAD_OK];
	/* Failed requests are never figures: past the bound the run is a
	 * failed run, so that a release that drops streams is not fast. */
	if (out->fig.ok == 0 || failed > eng->load.max_errors * (double)lr.n)
		failure_detail(&lr, out->detail, sizeof(out->detail));
	load_result_release(&lr);
	return 0;
}

void
serve_outcome_release(struct serve_outcome *o)
{
	free(o->row.profile);
	memset(o, 0, sizeof(*o));
}
