/*
 * bench.c: running the benchmark matrix and storing every run (see
 * bench.h).  A failed run is stored with its reason and output, never as
 * a zero; warm-up runs are stored and marked, never analysed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

#include "common/clock.h"
#include "bench.h"
#include "canary.h"
#include "definition.h"
#include "gpurun.h"
#include "config/conf.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/strv.h"
#include "hygiene.h"
#include "parse.h"
#include "bisectd/process/runner.h"
#include "store/store.h"
#include "bisectd/process/template.h"
#include "serve_run.h"
#include "ttft.h"

/* The tokens a server-mode request asks for: the first is timed. */
#define SERVER_MAX_TOKENS 1

/*
 * The decode texts {content} points at.  "prose" is ordinary English that
 * a draft model predicts well; "random" is letters drawn uniformly, which
 * nothing predicts.  A large gap between the two means speculative
 * decoding is on.
 */
static const char prose_text[] =
    "The old lighthouse keeper climbed the spiral stairs every evening at "
    "dusk. He trimmed the wick, polished the great lens, and watched the "
    "ships pass in the distance. In the morning he wrote in his log what "
    "he had seen: the weather, the tide, the boats that came and went. "
    "Years passed in this way, and the town below grew, and the harbour "
    "filled with new boats, but the keeper kept to his routine, because "
    "the sailors out at sea were counting on the light. ";

static int
write_content(const char *path, const char *kind, struct err *e)
{
	struct buf b = BUF_INIT(1 << 20);
	uint32_t x = 2463534242u;
	int rc;

	if (strcmp(kind, "prose") == 0) {
		for (int i = 0; i < 12; i++)
			buf_addstr(&b, prose_text);
	} else {
		for (int i = 0; i < 1200; i++) {
			char w[12];
			int len = 2 + (int)(x % 8);

			for (int k = 0; k < len; k++) {
				x ^= x << 13;
				x ^= x >> 17;
				x ^= x << 5;
				w[k] = (char)('a' + x % 26);
			}
			w[len] = ' ';
			buf_add(&b, w, (size_t)len + 1);
		}
	}
	rc = fs_write_atomic(path, b.data, b.len, 0644, e);
	buf_release(&b);
	return rc;
}

char *
bench_content_path(const struct conf *conf, const char *content)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "contents/%s.txt", content);
	return fs_join(conf->cache, rel);
}

int
bench_command_line(const struct conf_engine *eng, const struct tmpl_vals *v,
    struct buf *out, struct err *e)
{
	return def_command_line(eng, eng->command, "command", v, out, e);
}


int
bench_cells(const struct conf *conf, const struct conf_engine *eng,
    const int *prompts, size_t nprompts, const int *gens, size_t ngens,
    int one_content, struct bench_cell **out, size_t *n, struct err *e)
{
	size_t nk = eng->contents.n ? eng->contents.n : 1, k = 0;
	struct bench_cell *c;

	if (one_content)
		nk = 1;
	/* A serve run is one cell whatever is asked: the profile's. */
	if (eng->mode == MODE_SERVE) {
		if ((c = calloc(1, sizeof(*c))) == NULL)
			return err_set(e, "out of memory");
		c->kind = "pp";
		c->prompt = eng->load.prompt[0];
		c->gen = eng->load.output[0];
		c->content = "";
		*out = c;
		*n = 1;
		return 0;
	}
	/* A server is measured by time to first token: prefill only. */
	if (eng->mode == MODE_SERVER)
		ngens = 0;
	if ((c = calloc(nprompts + ngens * nk + 1, sizeof(*c))) == NULL)
		return err_set(e, "out of memory");
	for (size_t i = 0; i < nprompts; i++) {
		c[k].kind = "pp";
		c[k].prompt = prompts[i];
		c[k].content = "";
		k++;
	}
	for (size_t g = 0; g < ngens; g++)
		for (size_t j = 0; j < nk; j++) {
			c[k].kind = "tg";
			c[k].gen = gens[g];
			c[k].content = eng->contents.n ? eng->contents.v[j] : "";
			if (eng->contents.n) {
				c[k].content_path = bench_content_path(conf,
				    c[k].content);
				if (c[k].content_path == NULL) {
					bench_cells_free(c, k);
					return err_set(e, "out of memory");
				}
			}
			k++;
		}
	for (size_t i = 0; i < k; i++) {
		struct stat st;
		char dir[4096];

		if (c[i].content_path == NULL ||
		    stat(c[i].content_path, &st) == 0)
			continue;
		snprintf(dir, sizeof(dir), "%s/contents", conf->cache);
		if (fs_mkdirs(dir, 0755, e) < 0 ||
		    write_content(c[i].content_path, c[i].content, e) < 0) {
			bench_cells_free(c, k);
			return -1;
		}
	}
	*out = c;
	*n = k;
	return 0;
}

void
bench_cells_free(struct bench_cell *cells, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(cells[i].content_path);
	free(cells);
}

/* The store's row of a GPU's identity. */
static void
store_gpu_of(const struct device_identity *d, size_t slot,
    struct store_gpu *g)
{
	memset(g, 0, sizeof(*g));
	g->slot = (int)slot;
	g->index = d->index;
	snprintf(g->model, sizeof(g->model), "%s", d->model);
	snprintf(g->uuid, sizeof(g->uuid), "%s", d->uuid);
	snprintf(g->driver, sizeof(g->driver), "%s", d->driver);
	snprintf(g->cuda, sizeof(g->cuda), "%s", d->cuda);
	snprintf(g->vbios, sizeof(g->vbios), "%s", d->vbios);
	g->power_limit_mw = d->power_limit_mw;
	g->persistence = d->persistence;
	g->mig = d->mig;
	g->ecc = d->ecc;
	g->app_sm_mhz = d->app_sm_mhz;
	g->app_mem_mhz = d->app_mem_mhz;
	g->default_sm_mhz = d->default_sm_mhz;
	g->default_mem_mhz = d->default_mem_mhz;
	g->clocks_locked = d->clocks_locked;
}

int
bench_machine(struct store *s, int64_t *machine_id, char hw_key[65],
    struct err *e)
{
	static atomic_int said;	/* the hygiene lines, once a process (the
				 * daemon's workers share it) */
	struct machine m;
	struct store_machine sm;
	struct store_gpu g[DEVICE_MAX];
	char advice[2048];

	if (hygiene_machine(NULL, &m, e) < 0)
		return -1;
	for (size_t i = 0; i < m.ngpus; i++)
		store_gpu_of(&m.gpu[i], i, &g[i]);
	sm.gpus = g;
	sm.ngpus = m.ngpus;
	if (atomic_exchange(&said, 1) == 0) {
		if (m.gpu_note[0] != '\0')
			fprintf(stderr, "hygiene: no GPU state: %s\n",
			    m.gpu_note);
		hygiene_gpu_advice(&m, advice, sizeof(advice));
		for (char *l = advice, *nl; *l; l = nl + 1) {
			if ((nl = strchr(l, '\n')) == NULL)
				break;
			fprintf(stderr, "hygiene: %.*s\n", (int)(nl - l), l);
		}
	}
	sm.hw_key = m.hw_key;
	sm.cpu_model = m.cpu_model;
	sm.cores = m.cores;
	sm.mem_bytes = (int64_t)m.mem_kb * 1024;
	sm.arch = m.arch;
	sm.kernel = m.kernel;
	sm.os = m.os;
	sm.hostname = m.hostname;
	if (store_machine_ensure(s, &sm, machine_id, e) < 0)
		return -1;
	memcpy(hw_key, m.hw_key, 65);
	return 0;
}

struct wait_arg {
	struct bench_ctx *b;
	struct bench_progress *p;
};

static int
on_wait(void *arg, const struct hygiene_sample *s, int64_t waited_ms)
{
	struct wait_arg *w = arg;
	char msg[128];

	snprintf(msg, sizeof(msg), "waiting for a quiet machine: CPU %.0f%% "
	    "busy, %llds so far", s->busy * 100,
	    (long long)(waited_ms / 1000));
	w->p->waiting = msg;
	w->p->waited_ms = waited_ms;
	if (w->b->progress)
		w->b->progress(w->b->progress_arg, w->p);
	w->p->waiting = NULL;
	return w->b->stop && *w->b->stop;
}

/* The parser as runs record it: "llama-bench", "regex:RE", "ttft",
 * "serve". */
static const char *
parser_spec(const struct conf_engine *eng, char *buf, size_t len)
{
	if (eng->mode == MODE_SERVE)
		snprintf(buf, len, "serve");
	else if (eng->parser_arg)
		snprintf(buf, len, "%s:%s", conf_parser_name(eng->parser),
		    eng->parser_arg);
	else
		snprintf(buf, len, "%s", eng->mode == MODE_SERVER ? "ttft" :
		    conf_parser_name(eng->parser));
	return buf;
}

/* The parser's part of a definition: the parser, its unit, the clock. */
static void
set_parser(json_t *o, const struct conf_engine *eng,
    struct bench_definition *d)
{
	char parser[512];

	/* A serve run's samples are its figures, in wall_ns. */
	d->clock = eng->mode == MODE_SERVER ? "ttft" :
	    eng->mode == MODE_SERVE || eng->parser == PARSER_WALL ? "wall" :
	    "engine";
	json_object_set_new(o, "clock", json_string(d->clock));
	json_object_set_new(o, "parser", json_string(parser_spec(eng, parser,
	    sizeof(parser))));
	if (eng->parser == PARSER_REGEX)
		json_object_set_new(o, "unit", json_string(conf_unit_name(
		    eng->regex_unit)));
	else
		json_object_del(o, "unit");
}

/* Fill d's text and key from o, which it takes. */
static int
definition_seal(json_t *o, struct bench_definition *d, struct err *e)
{
	if (def_seal(o, &d->text, d->key) < 0) {
		bench_definition_release(d);
		return err_set(e, "out of memory");
	}
	return 0;
}

int
bench_definition(const struct conf_engine *eng, const char *kind, int prompt,
    int gen, const char *content, const char *weights_sha256,
    const char *hw_key, struct bench_definition *d, struct err *e)
{
	/* The release's own path and version stay placeholders: they differ
	 * between the releases compared, by design. */
	struct tmpl_vals v = { "{bin}", "{version}", "{weights}", "{content}",
	    prompt, gen, eng->threads, NULL, NULL, -1 };
	struct strv argv = STRV_INIT;
	json_t *o;

	memset(d, 0, sizeof(*d));
	if (tmpl_expand(eng->command, &v, &argv, e) < 0) {
		strv_clear(&argv);
		return err_prefix(e, "engine %s: command", eng->name);
	}
	o = json_object();
	json_object_set_new(o, "timing", json_integer(BENCH_TIMING_VERSION));
	json_object_set_new(o, "mode", json_string(conf_mode_name(eng->mode)));
	set_parser(o, eng, d);
	if (eng->mode == MODE_SERVE) {
		char *profile = serve_profile_json(eng);

		json_object_set_new(o, "url", json_string(eng->url ? eng->url :
		    ""));
		json_object_set_new(o, "load", json_loads(profile ? profile :
		    "{}", 0, NULL));
		free(profile);
	}
	if (eng->mode == MODE_SERVER) {
		json_t *rq = json_loads(TTFT_REQUEST_FIELDS, 0, NULL);

		json_object_set_new(o, "url", json_string(eng->url ? eng->url :
		    ""));
		/* How it samples is part of what a server computes. */
		json_object_set_new(rq, "max_tokens",
		    json_integer(SERVER_MAX_TOKENS));
		json_object_set_new(o, "request", rq);
	}
	json_object_set_new(o, "command", def_strv_json(&argv));
	json_object_set_new(o, "env", def_strv_json(&eng->env));
	json_object_set_new(o, "threads", json_integer(eng->threads));
	json_object_set_new(o, "cell", json_pack("{s:s,s:i,s:i,s:s}", "kind",
	    kind, "prompt", prompt, "gen", gen, "content", content ? content :
	    ""));
	json_object_set_new(o, "weights", json_string(weights_sha256));
	json_object_set_new(o, "hw", json_string(hw_key));
	strv_clear(&argv);
	return definition_seal(o, d, e);
}

int
bench_definition_reparse(const char *text, const struct conf_engine *eng,
    struct bench_definition *d, struct err *e)
{
	json_t *o = json_loads(text, 0, NULL);

	memset(d, 0, sizeof(*d));
	if (!json_is_object(o)) {
		json_decref(o);
		return err_set(e, "a stored measurement definition is not a "
		    "JSON object");
	}
	set_parser(o, eng, d);
	return definition_seal(o, d, e);
}

void
bench_definition_release(struct bench_definition *d)
{
	free(d->text);
	memset(d, 0, sizeof(*d));
}

int
bench_cell_query(const struct conf_engine *eng, const char *kind, int prompt,
    int gen, const char *content, int64_t release_id,
    const char *weights_sha256, const char *hw_key,
    struct store_cell_query *q, struct err *e)
{
	struct bench_definition d;

	memset(q, 0, sizeof(*q));
	if (bench_definition(eng, kind, prompt, gen, content, weights_sha256,
	    hw_key, &d, e) < 0)
		return -1;
	q->release_id = release_id;
	q->weights_sha256 = weights_sha256;
	q->hw_key = hw_key;
	q->kind = kind;
	q->prompt_tokens = prompt;
	q->gen_tokens = gen;
	q->content = content ? content : "";
	memcpy(q->definition, d.key, sizeof(q->definition));
	bench_definition_release(&d);
	return 0;
}

/* The fields of a run every mode fills the same way. */
static void
fill_run(struct bench_ctx *b, const struct bench_target *t,
    const struct bench_cell *c, int64_t definition_id, int rep, int warmup,
    int confirm, const struct hygiene_sample *hs, int busy, char *parser,
    size_t plen, struct store_run *run)
{
	const struct conf_engine *eng = t->eng ? t->eng : b->eng;

	run->release_id = t->release_id;
	run->weights_id = t->weights_id ? t->weights_id : b->weights_id;
	run->machine_id = b->machine_id;
	run->kind = c->kind;
	run->prompt_tokens = c->prompt;
	run->gen_tokens = c->gen;
	run->content = c->content;
	run->definition_id = definition_id;
	run->rep = rep;
	run->warmup = warmup;
	run->confirm = confirm;
	run->parser = parser_spec(eng, parser, plen);
	run->busy_share = hs->busy;
	run->loadavg = hs->load1;
	run->busy = busy;
	run->ablation_id = t->ablation_id;
	run->variant = t->variant;
}

static void
tally_run(struct bench_ctx *b, const struct bench_target *t,
    const struct bench_cell *c, const struct store_run *run, int busy,
    struct bench_tally *tally)
{
	tally->runs++;
	tally->busy += busy;
	if (run->end.failure == NULL)
		return;
	tally->failed++;
	tally->spawn += strcmp(run->end.failure, "spawn") == 0;
	snprintf(tally->last_failure, sizeof(tally->last_failure),
	    "%s %s %s%d: %s: %s", b->eng->name, t->version, c->kind,
	    c->prompt ? c->prompt : c->gen, run->end.failure,
	    run->end.failure_detail ? run->end.failure_detail : "");
}

/* "http://host:port/health" from a completions URL (malloced). */
static char *
default_health_url(const char *url)
{
	const char *host = strstr(url, "://");
	const char *slash = host ? strchr(host + 3, '/') : NULL;
	size_t len = slash ? (size_t)(slash - url) : strlen(url);
	char *h = malloc(len + sizeof("/health"));

	if (h) {
		memcpy(h, url, len);
		memcpy(h + len, "/health", sizeof("/health"));
	}
	return h;
}

/* The stored failure of a server run the runner saw end well (stopped
 * on request) although no time came of it. */
static const char *
server_failure(enum ttft_status st)
{
	switch (st) {
	case TTFT_SPAWN:
		return "spawn";
	case TTFT_DIED:
		return "exit";
	case TTFT_NOT_READY:
		return "timeout";
	default:
		return "parse";
	}
}

/* The server of a server or serve run: its argv and health URL are
 * malloced into argv and *health, which the caller frees. */
static int
server_spec(const struct conf_engine *eng, const struct tmpl_vals *v,
    const atomic_int *stop, struct ttft_server_spec *ss, struct strv *argv,
    char **health, struct err *e)
{
	*health = NULL;
	if (tmpl_expand(eng->command, v, argv, e) < 0)
		return -1;
	memset(ss, 0, sizeof(*ss));
	ss->proc.argv = (const char *const *)argv->v;
	ss->proc.env = (const char *const *)eng->env.v;
	ss->proc.workdir = eng->workdir;
	ss->proc.timeout_ms = eng->timeout_ms;
	ss->proc.memory_max = eng->max_memory;
	ss->proc.isolation = RUN_ISOLATE_AUTO;
	ss->proc.stop = stop;
	if (eng->health_url == NULL &&
	    (*health = default_health_url(eng->url)) == NULL) {
		strv_clear(argv);
		return err_set(e, "out of memory");
	}
	ss->health_url = eng->health_url ? eng->health_url : *health;
	ss->allow_http = 1;	/* the server runs on this machine */
	return 0;
}

/*
 * Server mode: start the server, wait for it, time one streamed
 * completion to its first token, stop it.  Fills the run and one sample;
 * the figure is a lower bound on prefill speed (mode "server").  A
 * server that fails, or a stream without a token, is a failed run as a
 * crashed bench run is: 0 with the failure in run->end, the server's
 * stderr tail with it.  -1 only when nothing could be run at all (the
 * template, the runner), as run_template()'s -1.
 */
static int
server_run(const struct conf_engine *eng, const struct tmpl_vals *v,
    const struct bench_cell *c, const atomic_int *stop, struct store_run *run,
    struct store_sample *smp, size_t *nsmp, char *detail, size_t dlen,
    struct run_result *res, struct err *e)
{
	struct ttft_server_spec ss;
	struct ttft_request rq;
	struct ttft_result tr;
	struct strv argv = STRV_INIT;
	char *health;
	int rc;

	if (server_spec(eng, v, stop, &ss, &argv, &health, e) < 0)
		return -1;
	memset(&rq, 0, sizeof(rq));
	rq.url = eng->url;
	rq.prompt_tokens = c->prompt;
	rq.max_tokens = SERVER_MAX_TOKENS;
	rq.timeout_ms = eng->timeout_ms;
	rc = ttft_run(&ss, &rq, &tr, res, e);
	strv_clear(&argv);
	free(health);
	if (rc < 0 && tr.status == TTFT_RUNNER) {
		run_result_release(res);
		return -1;
	}
	if (stop && atomic_load(stop)) {
		/* Ended on a stop request (the server is always stopped at
		 * the end; this is the user's): measured again, as a bench
		 * run is. */
		run_result_release(res);
		return err_set(e, "interrupted");
	}
	run->mode = "server";
	/* The server's own end (a crash, its timeout) names the failure
	 * as it would a bench run's; the detail is what TTFT saw. */
	def_stored_end(res, detail, dlen, &run->end);
	run->user_ns = res->user_ns;
	run->sys_ns = res->sys_ns;
	run->max_rss_kb = res->max_rss_kb;
	if (rc < 0) {
		if (run->end.failure == NULL)
			run->end.failure = server_failure(tr.status);
		snprintf(detail, dlen, "%s: %s", ttft_status_name(tr.status),
		    tr.detail);
		run->end.failure_detail = detail;
		return 0;
	}
	/* The token came: how the server ended after it is not the
	 * figure's concern. */
	run->end.failure = NULL;
	run->end.failure_detail = NULL;
	smp->prompt_tokens = c->prompt;
	smp->gen_tokens = 0;
	smp->wall_ns = tr.ttft_ns;
	smp->engine_ns = -1;
	smp->user_ns = smp->sys_ns = smp->max_rss_kb = -1;
	*nsmp = 1;
	return 0;
}

/* A serve run's samples: its figures, idx the enum conf_serve_figure;
 * 0, or -1 when one has no value (streams of a single token). */
static int
serve_samples(const struct bench_cell *c, const struct serve_figures *f,
    struct store_sample smp[FIG_N])
{
	for (int k = 0; k < FIG_N; k++) {
		double v = f->pct[k / SERVE_NPCT][k % SERVE_NPCT];

		if (!isfinite(v))
			return -1;
		smp[k].prompt_tokens = c->prompt;
		smp[k].gen_tokens = c->gen;
		smp[k].wall_ns = llround(v);
		smp[k].engine_ns = -1;
		smp[k].user_ns = smp[k].sys_ns = smp[k].max_rss_kb = -1;
	}
	return 0;
}

/*
 * Serve mode: one server start and its whole load.  The run's samples
 * are its figures, its serve_run row the rest, stored together.  A
 * server that fails, or a load past its bound of failed requests, is a
 * failed run with the requests' failures counted by type.
 */
static int
serve_one(struct bench_ctx *b, const struct bench_target *t,
    const struct bench_cell *c, int64_t definition_id, int rep, int warmup,
    int confirm, const struct hygiene_sample *hs, int busy,
    const struct tmpl_vals *v, struct device_set *dev,
    struct bench_tally *tally, struct err *e)
{
	const struct conf_engine *eng = t->eng ? t->eng : b->eng;
	struct ttft_server_spec ss;
	struct strv argv = STRV_INIT;
	struct serve_outcome so;
	struct run_result res;
	struct store_run run;
	struct store_sample smp[FIG_N];
	struct gpu_watch *gw;
	char *health, detail[1100], parser[512];
	size_t nsmp = 0;
	int rc;

	if (server_spec(eng, v, b->stop, &ss, &argv, &health, e) < 0)
		return err_prefix(e, "%s %s", eng->name, t->version);
	memset(&run, 0, sizeof(run));
	memset(&res, 0, sizeof(res));
	run.started = (int64_t)time(NULL);
	(void)gpu_watch_start(dev, &gw);
	/* One schedule per repetition, the same for every release. */
	rc = serve_measure(&ss, eng, (uint64_t)rep + 1, b->stop, &so, &res,
	    e);
	gpu_watch_stop(gw, &run.gpu);
	strv_clear(&argv);
	free(health);
	if (rc == 0 && b->stop && atomic_load(b->stop))
		rc = err_set(e, "interrupted");
	if (rc < 0) {
		run_result_release(&res);
		serve_outcome_release(&so);
		return b->stop && *b->stop ? -1 : err_prefix(e, "%s %s",
		    eng->name, t->version);
	}
	run.mode = "server";
	def_stored_end(&res, detail, sizeof(detail), &run.end);
	run.user_ns = res.user_ns;
	run.sys_ns = res.sys_ns;
	run.max_rss_kb = res.max_rss_kb;
	if (so.server != TTFT_OK) {
		if (run.end.failure == NULL)
			run.end.failure = server_failure(so.server);
		run.end.failure_detail = so.detail;
	} else {
		/* The load ended: how the server ended after it is not the
		 * figures' concern. */
		run.end.failure = NULL;
		run.end.failure_detail = NULL;
		if (so.detail[0] == '\0' && serve_samples(c, &so.fig, smp) <
		    0)
			snprintf(so.detail, sizeof(so.detail), "the streams "
			    "gave no time per output token (one token each)");
		if (so.detail[0] != '\0') {
			run.end.failure = "parse";
			run.end.failure_detail = so.detail;
		} else
			nsmp = FIG_N;
	}
	fill_run(b, t, c, definition_id, rep, warmup, confirm, hs, busy,
	    parser, sizeof(parser), &run);
	if ((rc = store_begin(b->store, e)) == 0) {
		rc = store_run_insert(b->store, &run, smp, nsmp, e);
		so.row.run_id = run.id;
		if (rc == 0 && so.measured)
			rc = store_serve_insert(b->store, &so.row, e);
		if (rc == 0)
			rc = store_commit(b->store, e);
		if (rc < 0)
			store_rollback(b->store);
		else
			tally_run(b, t, c, &run, busy, tally);
	}
	run_result_release(&res);
	serve_outcome_release(&so);
	return rc;
}

/* The placeholders' values of target t that every command of eng on it
 * has: its folder, version, weights and eng's threads. */
static void
target_vals(const struct bench_ctx *b, const struct bench_target *t,
    const struct conf_engine *eng, struct tmpl_vals *v)
{
	v->bin = t->dir;
	v->version = t->version;
	v->weights = t->weights_path ? t->weights_path : b->weights_path;
	v->threads = eng->threads;
}

/* One run of one cell of one target: run, parse, store. */
static int
one_run(struct bench_ctx *b, const struct bench_target *t,
    const struct bench_cell *c, int64_t definition_id, int rep, int warmup,
    int confirm, struct bench_progress *p, struct hygiene_watch *hw,
    struct device_set *dev, struct bench_tally *tally, struct err *e)
{
	const struct conf_engine *eng = t->eng ? t->eng : b->eng;
	struct hygiene_sample hs = { -1, -1, 0 };
	struct wait_arg wa = { b, p };
	struct tmpl_vals v = TMPL_VALS_INIT;
	struct child_spec spec = CHILD_SPEC_INIT;
	struct run_result res;
	struct parse_spec ps = { eng->parser, eng->parser_arg,
	    eng->regex_unit };
	struct parse_cell pc = { c->prompt, c->gen };
	struct parse_result pr = PARSE_RESULT_INIT;
	struct store_run run;
	struct store_sample *smp = NULL;
	struct err pe = ERR_INIT;
	struct gpu_watch *gw;
	char detail[1100], parser[512];
	size_t nsmp = 0;
	int busy = 0, rc;

	if (hygiene_watch_run(hw, b->conf->max_busy, b->conf->max_wait_ms,
	    HYGIENE_WINDOW_MS, on_wait, &wa, &hs, &busy, &pe) < 0)
		hs.busy = hs.load1 = -1;	/* no /proc/stat: not fatal */
	target_vals(b, t, eng, &v);
	v.content = c->content_path ? c->content_path : "";
	v.prompt = c->prompt;
	v.gen = c->gen;
	def_child_spec(eng, &spec);
	spec.stop = b->stop;
	memset(&run, 0, sizeof(run));
	run.started = (int64_t)time(NULL);
	if (eng->mode == MODE_SERVE)
		return serve_one(b, t, c, definition_id, rep, warmup, confirm,
		    &hs, busy, &v, dev, tally, e);
	if (eng->mode == MODE_SERVER) {
		struct store_sample one;

		/* Without its thread the run goes on, without figures. */
		(void)gpu_watch_start(dev, &gw);
		rc = server_run(eng, &v, c, b->stop, &run, &one, &nsmp,
		    detail, sizeof(detail), &res, e);
		gpu_watch_stop(gw, &run.gpu);
		if (rc < 0 && b->stop && *b->stop)
			return -1;	/* "interrupted" */
		if (rc < 0)
			return err_prefix(e, "%s %s", eng->name, t->version);
		fill_run(b, t, c, definition_id, rep, warmup, confirm, &hs,
		    busy, parser, sizeof(parser), &run);
		rc = store_run_insert(b->store, &run, &one, nsmp, e);
		tally_run(b, t, c, &run, busy, tally);
		run_result_release(&res);
		return rc;
	}
	(void)gpu_watch_start(dev, &gw);
	rc = run_template(eng->command, &v, &spec, &res, e);
	gpu_watch_stop(gw, &run.gpu);
	if (rc < 0)
		return err_prefix(e, "%s %s", eng->name, t->version);
	if (res.stopped) {
		/* Ended half-way on a stop request: neither a sample nor a
		 * failure of the release; the run is measured again. */
		run_result_release(&res);
		return err_set(e, "interrupted");
	}
	run.mode = "bench";
	fill_run(b, t, c, definition_id, rep, warmup, confirm, &hs, busy,
	    parser, sizeof(parser), &run);
	def_stored_end(&res, detail, sizeof(detail), &run.end);
	run.user_ns = res.user_ns;
	run.sys_ns = res.sys_ns;
	run.max_rss_kb = res.max_rss_kb;
	run.out = res.out.data;
	run.out_len = res.out.len;
	run.out_truncated = res.out_truncated;
	if (run.end.failure == NULL && parse_output(&ps, &pc, res.out.data ? res.out.data : "",
	    res.out.len, res.wall_ns, &pr, &pe) < 0) {
		run.end.failure = "parse";
		snprintf(detail, sizeof(detail), "%s", pe.msg);
		run.end.failure_detail = detail;
	} else if (run.end.failure == NULL) {
		run.info = pr.meta;
		nsmp = pr.n;
		smp = calloc(nsmp ? nsmp : 1, sizeof(*smp));
		if (smp == NULL) {
			run_result_release(&res);
			parse_result_release(&pr);
			return err_set(e, "out of memory");
		}
		for (size_t i = 0; i < nsmp; i++) {
			smp[i].prompt_tokens = pr.samples[i].prompt_tokens;
			smp[i].gen_tokens = pr.samples[i].gen_tokens;
			smp[i].wall_ns = res.wall_ns;
			smp[i].engine_ns = eng->parser == PARSER_WALL ? -1 :
			    pr.samples[i].engine_ns;
			smp[i].user_ns = res.user_ns;
			smp[i].sys_ns = res.sys_ns;
			smp[i].max_rss_kb = res.max_rss_kb;
		}
	}
	rc = store_run_insert(b->store, &run, smp, nsmp, e);
	tally_run(b, t, c, &run, busy, tally);
	free(smp);
	parse_result_release(&pr);
	run_result_release(&res);
	return rc;
}

/* The store's id of the definition runs of cell c are measured under. */
static int
cell_definition(struct bench_ctx *b, const struct bench_target *t,
    const struct bench_cell *c, int64_t *id, struct err *e)
{
	struct bench_definition d;
	int rc;

	if (bench_definition(t->eng ? t->eng : b->eng, c->kind, c->prompt,
	    c->gen, c->content, t->weights_sha256 ? t->weights_sha256 :
	    b->weights_sha256, b->hw_key, &d, e) < 0)
		return -1;
	rc = store_definition_ensure(b->store, d.key, d.text, d.clock, id, e);
	bench_definition_release(&d);
	return rc;
}

/* Whether target t is of the context's engine (a release or a switch
 * of it), not of another engine compared beside it. */
static int
own_engine(const struct bench_ctx *b, const struct bench_target *t)
{
	return t->eng == NULL || strcmp(t->eng->name, b->eng->name) == 0;
}

/* Run a pre or post command around a job; its failure fails the job. */
static int
hook(struct bench_ctx *b, const struct bench_target *t, int post,
    struct err *e)
{
	const struct conf_engine *eng = own_engine(b, t) ? b->eng : t->eng;
	const char *tmpl = post ? eng->post : eng->pre;
	const char *what = post ? "post" : "pre";
	struct tmpl_vals v = TMPL_VALS_INIT;
	struct child_spec spec = CHILD_SPEC_INIT;
	struct run_result res;
	char d[512];
	int rc;

	if (tmpl == NULL)
		return 0;
	target_vals(b, t, eng, &v);
	spec.env = (const char *const *)eng->env.v;
	spec.workdir = eng->workdir;
	spec.timeout_ms = eng->timeout_ms;
	if (run_template(tmpl, &v, &spec, &res, e) < 0)
		return err_prefix(e, "%s command", what);
	rc = res.reason == RUN_OK ? 0 : err_set(e, "%s command failed: %s",
	    what, run_describe(&res, d, sizeof(d)));
	run_result_release(&res);
	return rc;
}

/* The pre (or post) command of each engine among the targets, once, on
 * its first target: the context's, then each other engine's. */
static int
hooks(struct bench_ctx *b, const struct bench_target *targets,
    size_t ntargets, int post, struct err *e)
{
	int rc = hook(b, &targets[0], post, e);

	for (size_t t = 1; t < ntargets && rc == 0; t++) {
		size_t k;

		if (own_engine(b, &targets[t]))
			continue;
		for (k = 1; k < t; k++)
			if (!own_engine(b, &targets[k]) && strcmp(
			    targets[k].eng->name, targets[t].eng->name) == 0)
				break;
		if (k == t)
			rc = hook(b, &targets[t], post, e);
	}
	return rc;
}

/* The canary of every target that gave a run. */
static int
canary_targets(struct bench_ctx *b, const struct bench_target *targets,
    size_t ntargets, const int *ran_ok, struct err *e)
{
	struct canary_prompt p;
	struct canary_ctx k;
	int rc = 0;

	if (canary_prompt_pin(b->conf, b->eng, b->store, &p, e) < 0)
		return -1;
	k.eng = b->eng;
	k.store = b->store;
	k.weights_id = b->weights_id;
	k.weights_path = b->weights_path;
	k.weights_sha256 = b->weights_sha256;
	k.machine_id = b->machine_id;
	k.hw_key = b->hw_key;
	k.prompt = &p;
	k.stop = b->stop;
	for (size_t t = 0; t < ntargets && t < BENCH_MAX_TARGETS && rc == 0;
	    t++)
		if (ran_ok[t] && own_engine(b, &targets[t]))
			rc = canary_run(&k, targets[t].release_id,
			    targets[t].version, targets[t].dir, e);
	canary_prompt_release(&p);
	return rc;
}

int
bench_run(struct bench_ctx *b, const struct bench_target *targets,
    size_t ntargets, const struct bench_cell *cells, size_t ncells,
    const int *reps, int warmup, int confirm, struct bench_tally *tally,
    struct err *e)
{
	struct bench_progress p;
	struct hygiene_watch hw;
	struct device_set dev;
	struct err de = ERR_INIT;
	double t0 = clock_now_ns() / 1e9;
	int ran_ok[BENCH_MAX_TARGETS] = { 0 }, failed, spawn, rc = 0;
	/* Targets whose run could not start in this cell. */
	int dead[BENCH_MAX_TARGETS];
	int mixed = 0;

	memset(&p, 0, sizeof(p));
	hygiene_watch_init(&hw);
	p.ncells = ncells;
	for (size_t c = 0; c < ncells; c++)
		for (size_t t = 0; t < ntargets; t++)
			if (reps[t * ncells + c] > 0)
				p.total += (size_t)(reps[t * ncells + c] +
				    warmup);
	if (p.total == 0)
		return 0;
	for (size_t t = 0; t < ntargets; t++)
		mixed |= !own_engine(b, &targets[t]);
	if (hooks(b, targets, ntargets, 0, e) < 0)
		return -1;
	if (ntargets > BENCH_MAX_TARGETS)
		return err_set(e, "%zu targets to interleave, at most %d",
		    ntargets, BENCH_MAX_TARGETS);
	/* No GPU state (bench_machine() said why): runs without figures. */
	(void)device_open(&dev, &de);
	for (size_t c = 0; c < ncells && rc == 0; c++) {
		int64_t definition_id[BENCH_MAX_TARGETS];
		int most = 0;

		p.cell = c + 1;
		p.c = &cells[c];
		for (size_t t = 0; t < ntargets; t++)
			if (reps[t * ncells + c] > most)
				most = reps[t * ncells + c];
		if (most == 0)
			continue;
		/* A target with its own engine (a switch) has its own
		 * definition: its samples never meet the baseline's. */
		for (size_t t = 0; t < ntargets && rc == 0; t++)
			rc = reps[t * ncells + c] == 0 ? 0 : cell_definition(b,
			    &targets[t], &cells[c], &definition_id[t], e);
		if (rc < 0)
			break;
		p.reps = most;
		memset(dead, 0, sizeof(dead));
		/* Warm-ups first, then A B A B ... so drift hits all alike. */
		for (int r = -warmup; r < most && rc == 0; r++)
			for (size_t t = 0; t < ntargets && rc == 0; t++) {
				if (r >= reps[t * ncells + c] ||
				    reps[t * ncells + c] == 0)
					continue;
				if (t < BENCH_MAX_TARGETS && dead[t]) {
					p.done++;
					continue;
				}
				if (b->stop && *b->stop) {
					rc = err_set(e, "interrupted");
					break;
				}
				p.version = targets[t].version;
				p.engine = !mixed ? NULL : targets[t].eng ?
				    targets[t].eng->name : b->eng->name;
				p.against = confirm && ntargets == 2 ?
				    targets[1 - t].version : NULL;
				p.warmup = r < 0;
				p.rep = r < 0 ? r + warmup + 1 : r + 1;
				p.reps = r < 0 ? warmup : most;
				p.elapsed_s = clock_now_ns() / 1e9 - t0;
				p.eta_s = p.done ? p.elapsed_s / (double)p.done *
				    (double)(p.total - p.done) : NAN;
				if (b->progress)
					b->progress(b->progress_arg, &p);
				failed = tally->failed;
				spawn = tally->spawn;
				rc = one_run(b, &targets[t], &cells[c],
				    definition_id[t], r < 0 ? r + warmup : r,
				    r < 0, confirm, &p, &hw, &dev, tally, e);
				if (rc == 0 && tally->failed == failed &&
				    t < BENCH_MAX_TARGETS)
					ran_ok[t] = 1;
				if (tally->spawn > spawn && t < BENCH_MAX_TARGETS)
					dead[t] = 1;
				p.done++;
			}
	}
	device_close(&dev);
	/* Each release that ran gets its canary pair, under the pre and
	 * post commands as its benchmark runs. */
	if (rc == 0 && b->eng->canary)
		rc = canary_targets(b, targets, ntargets, ran_ok, e);
	if (hooks(b, targets, ntargets, 1, rc < 0 ? NULL : e) < 0 && rc == 0)
		rc = -1;
	/* Measured means it gave a run: one whose runs all fail is not. */
	for (size_t t = 0; t < ntargets && t < BENCH_MAX_TARGETS; t++)
		if (ran_ok[t])
			store_release_set_state(b->store,
			    targets[t].release_id, RELEASE_MEASURED, NULL,
			    NULL);
	return rc;
}
