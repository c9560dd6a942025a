/*
 * test_release_runs.c: a range's runs read in one pass (store/
 * release_runs.c) give what the per-cell queries give, and a report
 * built from them carries the numbers the per-cell path computes.
 *
 * The store holds what a long-lived one does: runs of one to three
 * samples, warm-ups, failed runs and runs without a sample, confirmation
 * runs, busy runs, runs on another machine, under other weights and
 * under an older definition, clocks other than the engine's, a release
 * whose runs mostly fail, a release that could not be fetched, and
 * releases sharing an archive, one of them outside the range.
 *
 * The summaries a report keeps of each release (sql/011_release_summary
 * .sql) give the bytes the runs give: cold, warm, after runs of one
 * release change (its own, or a release's with its archive), under
 * another configuration, on a read-only store and on a busy one.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bisectd/analysis/fit.h"
#include "bisectd/analysis/stats.h"
#include "bisectd/search/range.h"
#include "bisectd/report/build.h"
#include "bisectd/report/summary.h"
#include "bisectd/measure/bench.h"
#include "bisectd/report/print.h"
#include "check.h"
#include "check_conf.h"
#include "common/buf.h"
#include "common/err.h"
#include "config/conf.h"
#include "fetch/version.h"
#include "store/store.h"

#define NREL 12		/* 1.0.0 .. 1.0.11; the range ends at 1.0.10 */

static const char conf_text[] =
    "[bisectd]\n\tdatabase = r.db\n\tcache = cache\n"
    "[weights \"w\"]\n\tpath = w.bin\n"
    "\tsha256 = c14922936e2cf23291cf6f5fa3e48b790c620950ea451777c6cd6586ac4e8e51\n"
    "[engine \"basert\"]\n\tsource = dir:rel\n"
    "\tasset = basert-{version}.tar.gz\n"
    "\tcommand = {bin}/bin/engine -m {weights} -p {prompt} -n {gen}\n"
    "\tparser = llama-bench\n\tweights = w\n\tprompts = 128,512\n"
    "\tgen = 16\n\tfit = 128,512\n";

static const char wsha[] =
    "c14922936e2cf23291cf6f5fa3e48b790c620950ea451777c6cd6586ac4e8e51";
static const char other_sha[] =
    "1111111111111111111111111111111111111111111111111111111111111111";
static const char other_hw[] =
    "2222222222222222222222222222222222222222222222222222222222222222";

static struct store *s;
static const struct conf_engine *eng;
static char hw[65];
static int64_t weights_id, other_weights_id, machine_id, other_machine_id;
static int64_t rel_id[NREL];
static uint64_t rng = 7;

/* The definitions of the cells: current ones, then an older one and
 * two with the runner's clock and the time to first token. */
enum { DEF_PP128, DEF_PP512, DEF_TG16, DEF_OLD, DEF_WALL, DEF_TTFT, NDEF };
static int64_t def_id[NDEF];
static char def_key[NDEF][65];

struct run_spec {
	int release;
	int64_t weights, machine;
	int def;
	int warmup, confirm, busy;
	const char *failure;
	int nsamples;		/* 0: a run that gave none */
	double ms;
	int no_engine;		/* samples without the engine's figure */
};

static void
add_run(const struct run_spec *r)
{
	static const int tokens[] = { 128, 512, 16, 128, 512, 128 };
	struct store_sample smp[3];
	struct store_run run;
	struct err e = ERR_INIT;
	int pp = r->def != DEF_TG16;

	memset(&run, 0, sizeof(run));
	run.release_id = rel_id[r->release];
	run.weights_id = r->weights ? r->weights : weights_id;
	run.machine_id = r->machine ? r->machine : machine_id;
	run.kind = pp ? "pp" : "tg";
	run.prompt_tokens = pp ? tokens[r->def] : 0;
	run.gen_tokens = pp ? 0 : tokens[r->def];
	run.content = "";
	run.mode = "bench";
	run.parser = "llama-bench";
	run.started = 1700000000;
	run.end.wall_ns = (int64_t)(r->ms * 1e6) + 500000;
	run.user_ns = run.sys_ns = run.max_rss_kb = -1;
	run.end.exit_code = r->failure ? 1 : 0;
	run.busy_share = run.loadavg = -1;
	run.warmup = r->warmup;
	run.confirm = r->confirm;
	run.busy = r->busy;
	run.end.failure = r->failure;
	run.end.failure_detail = r->failure ? "exit status 1" : NULL;
	run.definition_id = def_id[r->def];
	for (int i = 0; i < r->nsamples; i++) {
		double t = r->ms * 1e6 * (1 + 0.02 * check_normal(&rng));

		smp[i].prompt_tokens = run.prompt_tokens;
		smp[i].gen_tokens = run.gen_tokens;
		smp[i].wall_ns = (int64_t)t + 700000 + 1000 * i;
		smp[i].engine_ns = r->no_engine ? -1 : (int64_t)t;
		smp[i].user_ns = smp[i].sys_ns = smp[i].max_rss_kb = -1;
	}
	CHECK(store_run_insert(s, &run, smp, (size_t)r->nsamples, &e) == 0);
}

static void
add_definitions(void)
{
	static const char *const kinds[] = { "pp", "pp", "tg" };
	static const int prompt[] = { 128, 512, 0 }, gen[] = { 0, 0, 16 };
	struct err e = ERR_INIT;

	for (int i = 0; i < 3; i++) {
		struct bench_definition d;

		CHECK(bench_definition(eng, kinds[i], prompt[i], gen[i], "",
		    wsha, hw, &d, &e) == 0);
		memcpy(def_key[i], d.key, sizeof(d.key));
		CHECK(store_definition_ensure(s, d.key, d.text, d.clock,
		    &def_id[i], &e) == 0);
		bench_definition_release(&d);
	}
	snprintf(def_key[DEF_OLD], 65, "%064d", 3);
	snprintf(def_key[DEF_WALL], 65, "%064d", 4);
	snprintf(def_key[DEF_TTFT], 65, "%064d", 5);
	CHECK(store_definition_ensure(s, def_key[DEF_OLD], "{}", "engine",
	    &def_id[DEF_OLD], &e) == 0);
	CHECK(store_definition_ensure(s, def_key[DEF_WALL], "{\"w\":1}",
	    "wall", &def_id[DEF_WALL], &e) == 0);
	CHECK(store_definition_ensure(s, def_key[DEF_TTFT], "{\"t\":1}",
	    "ttft", &def_id[DEF_TTFT], &e) == 0);
}

static void
build_store(void)
{
	char key[65], cpu[] = "other", arch[] = "x86_64", kernel[] = "6";
	char os[] = "os", host[] = "h";
	struct store_machine m = { key, cpu, 4, 1 << 30, arch, kernel, os,
	    host, NULL, 0 };
	struct err e = ERR_INIT;
	int64_t engine_id;

	memcpy(key, other_hw, sizeof(key));

	CHECK(store_engine_ensure(s, "basert", "dir:rel", &engine_id,
	    &e) == 0);
	CHECK(store_weights_ensure(s, "w", wsha, 15, &weights_id, &e) == 0);
	CHECK(store_weights_ensure(s, "w-other", other_sha, 15,
	    &other_weights_id, &e) == 0);
	CHECK(bench_machine(s, &machine_id, hw, &e) == 0);
	CHECK(store_machine_ensure(s, &m, &other_machine_id, &e) == 0);
	add_definitions();
	for (int r = 0; r < NREL; r++) {
		struct store_release rel;
		char version[32];

		memset(&rel, 0, sizeof(rel));
		snprintf(version, sizeof(version), "1.0.%d", r);
		rel.engine_id = engine_id;
		rel.version = version;
		rel.order_key = version_key(version);
		rel.state = RELEASE_MEASURED;
		rel.discovered = 1700000000;
		CHECK(store_release_upsert(s, &rel, &e) == 0);
		free(rel.order_key);
		rel_id[r] = rel.id;
	}
	/* 1.0.1 has no runs of its own: its archive is 1.0.11's, outside
	 * the range.  1.0.10's is 1.0.9's. */
	CHECK(store_release_set_archive(s, rel_id[1], other_hw, &e) == 0);
	CHECK(store_release_set_archive(s, rel_id[11], other_hw, &e) == 0);
	CHECK(store_release_set_archive(s, rel_id[9], other_sha, &e) == 0);
	CHECK(store_release_set_archive(s, rel_id[10], other_sha, &e) == 0);
	CHECK(store_release_set_state(s, rel_id[7], RELEASE_FAILED,
	    "download failed: 404", &e) == 0);
	for (int r = 0; r < NREL; r++) {
		/* The per-token cost steps up by half at 1.0.8. */
		double per_token = r >= 8 ? 0.15 : 0.10;

		if (r == 1 || r == 7 || r == 10)
			continue;
		for (int k = 0; k < 8; k++) {
			struct run_spec a = { r, 0, 0, DEF_PP128, 0, 0, 0, NULL,
			    1 + k % 3, 20 + per_token * 128, 0 };
			struct run_spec b = a;
			struct run_spec c = a;

			b.def = DEF_PP512;
			b.ms = 20 + per_token * 512;
			c.def = DEF_TG16;
			c.ms = 5.0 * 16;
			c.nsamples = 1;
			if (k == 0) {
				a.warmup = b.warmup = 1;
				add_run(&a);
				add_run(&b);
				a.warmup = b.warmup = 0;
			}
			a.busy = r == 6 && k == 1;
			add_run(&a);
			add_run(&b);
			if (k < 3)
				add_run(&c);
		}
	}
	/* 1.0.2: confirmation runs of a boundary. */
	for (int k = 0; k < 3; k++) {
		struct run_spec a = { 2, 0, 0, DEF_PP128, 0, 1, 0, NULL, 2,
		    40, 0 };

		add_run(&a);
	}
	/* 1.0.3: a failed run, one without a sample, one whose samples
	 * lack the engine's figure. */
	{
		struct run_spec f = { 3, 0, 0, DEF_PP512, 0, 0, 0, "exit", 0,
		    70, 0 };
		struct run_spec none = { 3, 0, 0, DEF_PP512, 0, 0, 0, NULL, 0,
		    70, 0 };
		struct run_spec noeng = { 3, 0, 0, DEF_PP128, 0, 0, 0, NULL,
		    2, 33, 1 };

		add_run(&f);
		add_run(&none);
		add_run(&noeng);
	}
	/* 1.0.5: most of its prefill runs fail. */
	for (int k = 0; k < 10; k++) {
		struct run_spec f = { 5, 0, 0, DEF_PP512, 0, 0, 0, k % 2 ?
		    "signal" : "timeout", 0, 70, 0 };

		add_run(&f);
	}
	/* 1.0.4: runs on another machine and under other weights. */
	for (int k = 0; k < 3; k++) {
		struct run_spec om = { 4, 0, other_machine_id, DEF_PP128, 0,
		    0, 0, NULL, 1, 99, 0 };
		struct run_spec w = { 4, other_weights_id, 0, DEF_PP512, 0, 0,
		    0, NULL, 1, 99, 0 };
		struct run_spec wf = { 4, other_weights_id, 0, DEF_PP512, 0,
		    0, 0, "oom", 0, 99, 0 };

		add_run(&om);
		add_run(&w);
		add_run(&wf);
	}
	/* 1.0.6: an older definition, and the other clocks. */
	for (int k = 0; k < 3; k++) {
		struct run_spec o = { 6, 0, 0, DEF_OLD, 0, 0, 0, NULL, 1, 99,
		    0 };
		struct run_spec wall = { 6, 0, 0, DEF_WALL, 0, 0, 0, NULL, 2,
		    51, 1 };
		struct run_spec ttft = { 6, 0, 0, DEF_TTFT, 0, 0, 0, NULL, 1,
		    52, 0 };

		add_run(&o);
		add_run(&wall);
		add_run(&ttft);
	}
}

static void
check_point_lists(const struct store_points *a, const struct store_points *b)
{
	CHECK_INT(a->n, b->n);
	for (size_t i = 0; i < a->n && i < b->n; i++) {
		CHECK_INT(a->v[i].time_ns, b->v[i].time_ns);
		CHECK_INT(a->v[i].run_id, b->v[i].run_id);
		CHECK_INT(a->v[i].confirm, b->v[i].confirm);
		CHECK_INT(a->v[i].busy, b->v[i].busy);
		CHECK_INT(a->v[i].lower_bound, b->v[i].lower_bound);
	}
}

/* Every release, every cell, every definition, both weights and both
 * machines: one pass and the per-cell queries agree. */
static void
test_store_equivalence(void)
{
	static const char *const shas[] = { wsha, other_sha };
	const char *hws[] = { hw, other_hw };
	static const struct { const char *kind; int prompt, gen; } cells[] = {
		{ "pp", 128, 0 }, { "pp", 512, 0 }, { "tg", 0, 16 },
		{ "tg", 0, 128 },
	};
	struct store_release_runs rr[NREL];
	struct err e = ERR_INIT;
	int compared = 0, nonempty = 0;

	for (int w = 0; w < 2; w++)
		for (int h = 0; h < 2; h++) {
			CHECK(store_release_runs_read(s, shas[w], hws[h],
			    rel_id, NREL, rr, &e) == 0);
			for (int r = 0; r < NREL; r++)
				for (size_t c = 0; c < 4; c++)
					for (int d = 0; d < NDEF; d++) {
				struct store_cell_query q = {
					rel_id[r], shas[w], hws[h],
					cells[c].kind, cells[c].prompt,
					cells[c].gen, "", ""
				};
				const struct store_cell_runs *cr;
				struct store_points want, none = { NULL, 0 };
				int ok = -1, bad = -1;

				memcpy(q.definition, def_key[d], 65);
				CHECK(store_cell_points(s, &q, &want,
				    &e) == 0);
				CHECK(store_cell_outcomes(s, &q, &ok, &bad,
				    &e) == 0);
				cr = store_release_runs_cell(&rr[r], &q);
				check_point_lists(cr ? &cr->points : &none,
				    &want);
				CHECK_INT(cr ? cr->ok : 0, ok);
				CHECK_INT(cr ? cr->bad : 0, bad);
				nonempty += want.n > 0;
				compared++;
				store_points_release(&want);
			}
			for (int r = 0; r < NREL; r++) {
				struct store_run_rows rows;
				size_t k = 0;

				CHECK(store_run_list(s, rel_id[r], &rows,
				    &e) == 0);
				for (size_t i = 0; i < rows.n; i++) {
					if (rows.v[i].failure == NULL)
						continue;
					CHECK(k < rr[r].nfailed);
					if (k >= rr[r].nfailed)
						break;
					CHECK_INT(rr[r].failed[k].run_id,
					    rows.v[i].id);
					CHECK_STR(rr[r].failed[k].failure,
					    rows.v[i].failure);
					k++;
				}
				CHECK_INT(k, rr[r].nfailed);
				store_run_rows_release(&rows);
				store_release_runs_release(&rr[r]);
			}
		}
	CHECK_INT(compared, 2 * 2 * NREL * 4 * NDEF);
	/* The store is no empty one: most releases have cells. */
	CHECK(nonempty > 30);
}

/* The per-cell path: a cell's run values from store_cell_points(). */
static int
cell_runs(int r, const char *kind, int prompt, int gen, int def,
    int confirm, struct run_stats *rs, size_t *nruns)
{
	struct store_cell_query q = { rel_id[r], wsha, hw, kind, prompt, gen,
	    "", "" };
	struct store_points pts;
	struct err e = ERR_INIT;
	double *x;
	int64_t *run;
	size_t n = 0;
	int rc;

	memcpy(q.definition, def_key[def], 65);
	CHECK(store_cell_points(s, &q, &pts, &e) == 0);
	x = calloc(pts.n + 1, sizeof(*x));
	run = calloc(pts.n + 1, sizeof(*run));
	for (size_t i = 0; i < pts.n; i++)
		if (confirm < 0 || pts.v[i].confirm == confirm) {
			x[n] = (double)pts.v[i].time_ns;
			run[n++] = pts.v[i].run_id;
		}
	rc = n > 0 ? stats_runs(x, run, n, RUN_MEAN, rs) : -1;
	if (nruns)
		*nruns = rc == 0 ? rs->runs : 0;
	free(x);
	free(run);
	store_points_release(&pts);
	return rc;
}

/* The fitted per-token cost of a release, the per-cell way. */
static double
per_token_ms(int r)
{
	struct fit_cell fc[2];
	struct fit f;
	double *v[2] = { NULL, NULL }, out = NAN;

	for (int c = 0; c < 2; c++) {
		struct store_cell_query cq = { rel_id[r], wsha, hw, "pp",
		    c ? 512 : 128, 0, "", "" };
		struct store_points pts;
		struct err e = ERR_INIT;
		double *x;
		int64_t *run;
		size_t n = 0, nv = 0;

		memcpy(cq.definition, def_key[c ? DEF_PP512 : DEF_PP128], 65);
		CHECK(store_cell_points(s, &cq, &pts, &e) == 0);
		x = calloc(pts.n + 1, sizeof(*x));
		run = calloc(pts.n + 1, sizeof(*run));
		for (size_t i = 0; i < pts.n; i++)
			if (!pts.v[i].confirm) {
				x[n] = (double)pts.v[i].time_ns;
				run[n++] = pts.v[i].run_id;
			}
		if (n > 0)
			CHECK(stats_run_values(x, run, n, RUN_MEAN, x,
			    &nv) == 0);
		/* The fit, as the bisect, leaves outlier runs out. */
		nv = stats_drop_outliers(x, nv);
		v[c] = x;
		fc[c].tokens = c ? 512 : 128;
		fc[c].time_ns = x;
		fc[c].n = nv;
		free(run);
		store_points_release(&pts);
	}
	if (fc[0].n > 0 && fc[1].n > 0 && fit_line(fc, 2, &f) == 0)
		out = f.per_token_ns.value / 1e6;
	free(v[0]);
	free(v[1]);
	return out;
}

static void
check_cell(const json_t *rj, int r, const char *group, const char *key,
    const char *kind, int prompt, int gen, int def)
{
	const json_t *c = json_object_get(json_object_get(rj, group), key);
	struct run_stats rs, conf;

	if (cell_runs(r, kind, prompt, gen, def, 0, &rs, NULL) < 0) {
		CHECK(c == NULL);
		return;
	}
	CHECK(json_is_object(c));
	CHECK_INT(json_integer_value(json_object_get(c, "n")), rs.runs);
	CHECK_INT(json_integer_value(json_object_get(c, "samples")),
	    rs.samples);
	CHECK(json_real_value(json_object_get(c, "ms")) ==
	    rs.values.mean / 1e6);
	CHECK(json_real_value(json_object_get(c, "ms_median")) ==
	    rs.values.median / 1e6);
	if (cell_runs(r, kind, prompt, gen, def, 1, &conf, NULL) == 0) {
		const json_t *cj = json_object_get(c, "confirm");

		CHECK(json_is_object(cj));
		CHECK_INT(json_integer_value(json_object_get(cj, "n")),
		    conf.runs);
		CHECK(json_real_value(json_object_get(cj, "ms")) ==
		    conf.values.mean / 1e6);
	} else
		CHECK(json_object_get(c, "confirm") == NULL);
}

static void
test_report(const struct conf *conf)
{
	struct report_opts o;
	struct err e = ERR_INIT;
	json_t *rep = NULL, *rels;
	int code = -1;

	memset(&o, 0, sizeof(o));
	bisect_request_init(&o.req);
	o.plot = 1;
	CHECK(report_build(conf, eng, s, "1.0.0..1.0.10", &o, &rep, &code,
	    &e) == 0);
	if (rep == NULL) {
		fprintf(stderr, "report: %s\n", e.msg);
		return;
	}
	rels = json_object_get(rep, "releases");
	CHECK_INT(json_array_size(rels), NREL - 1);
	for (int r = 0; r < NREL - 1; r++) {
		const json_t *rj = json_array_get(rels, (size_t)r);
		const json_t *fails = json_object_get(rj, "failures");
		struct store_run_rows rows;
		size_t nf = 0, runs128 = 0, runs512 = 0, all;
		struct run_stats rs;
		double want = per_token_ms(r);

		char version[32];

		snprintf(version, sizeof(version), "1.0.%d", r);
		CHECK_STR(json_string_value(json_object_get(rj, "version")),
		    version);
		check_cell(rj, r, "pp", "128", "pp", 128, 0, DEF_PP128);
		check_cell(rj, r, "pp", "512", "pp", 512, 0, DEF_PP512);
		check_cell(rj, r, "tg", "16", "tg", 0, 16, DEF_TG16);
		if (isfinite(want))
			CHECK(json_real_value(json_object_get(rj,
			    "per_token_ms")) == want);
		else
			CHECK(json_is_null(json_object_get(rj,
			    "per_token_ms")));
		/* A plot point per run of each prompt length. */
		cell_runs(r, "pp", 128, 0, DEF_PP128, -1, &rs, &runs128);
		cell_runs(r, "pp", 512, 0, DEF_PP512, -1, &rs, &runs512);
		CHECK_INT(json_array_size(json_object_get(rj, "points")),
		    runs128 + runs512);
		/* The release's own failed runs, whatever their weights. */
		CHECK(store_run_list(s, rel_id[r], &rows, &e) == 0);
		all = json_array_size(fails);
		for (size_t i = 0; i < rows.n; i++)
			if (rows.v[i].failure && nf < all) {
				const json_t *f = json_array_get(fails, nf++);

				CHECK_STR(json_string_value(json_object_get(f,
				    "reason")), rows.v[i].failure);
				CHECK_INT(json_integer_value(json_object_get(f,
				    "run")), rows.v[i].id);
			}
		/* The fetch failure of 1.0.7 comes after its runs' (none). */
		CHECK_INT(all, nf + (r == 7));
		store_run_rows_release(&rows);
	}
	CHECK_STR(json_string_value(json_object_get(json_array_get(rels, 5),
	    "status")), "skipped");
	CHECK_STR(json_string_value(json_object_get(json_array_get(rels, 7),
	    "status")), "skipped");
	CHECK_STR(json_string_value(json_object_get(json_array_get(rels, 10),
	    "same_archive_as")), "1.0.9");
	CHECK(json_object_get(json_array_get(rels, 1), "same_archive_as") ==
	    NULL);
	/* 1.0.1 reads the runs of 1.0.11, outside the range. */
	CHECK(json_is_object(json_object_get(json_object_get(
	    json_array_get(rels, 1), "pp"), "128")));
	json_decref(rep);
}

/* text with every occurrence of from replaced by to (text freed;
 * malloced). */
static char *
replace_all(char *text, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to), n = 0;
	char *out, *o;

	if (nf == 0)
		return text;
	for (const char *p = text; (p = strstr(p, from)) != NULL; p += nf)
		n++;
	if ((out = malloc(strlen(text) + n * nt + 1)) == NULL)
		abort();
	o = out;
	for (const char *p = text, *q; ; p = q + nf) {
		if ((q = strstr(p, from)) == NULL) {
			strcpy(o, p);
			break;
		}
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, to, nt);
		o += nt;
	}
	free(text);
	return out;
}

/* Compare text with tests/golden/NAME, or write it there when
 * BISECTD_GOLDEN_WRITE is set. */
static void
check_golden(const char *name, const char *text)
{
	char path[4096], *want;

	snprintf(path, sizeof(path), "%s/tests/golden/%s",
	    check_source_dir(), name);
	if (getenv("BISECTD_GOLDEN_WRITE")) {
		check_write_file(path, text);
		return;
	}
	want = check_read_file(path);
	if (want == NULL || strcmp(want, text) != 0) {
		char got[256];

		snprintf(got, sizeof(got), "golden-%s", name);
		check_write_file(got, text);
		fprintf(stderr, "%s differs from what the report gives (kept "
		    "as %s in the test's folder; BISECTD_GOLDEN_WRITE=1 "
		    "writes it anew)\n", path, got);
	}
	CHECK(want != NULL && strcmp(want, text) == 0);
	free(want);
}

/*
 * Every format of the range's report, pinned byte for byte in
 * tests/golden/: the JSON report_build() gives and what each renderer
 * makes of it.  What differs from machine to machine is replaced first:
 * the machine (its identity is also in the definitions' keys) and the
 * test's folder.
 */
static void
test_golden(const struct conf *conf)
{
	static const char *const placeholders[] = { "DEFINITION-PP128",
	    "DEFINITION-PP512", "DEFINITION-TG16" };
	static const struct {
		const char *file;
		enum report_format f;
	} formats[] = {
		{ "report.txt", REPORT_TEXT }, { "report.md", REPORT_MARKDOWN },
		{ "report.csv", REPORT_CSV }, { "report.html", REPORT_HTML },
	};
	struct report_opts o;
	struct err e = ERR_INIT;
	json_t *rep = NULL, *norm;
	char cwd[4096], *text;
	int code = -1;

	memset(&o, 0, sizeof(o));
	bisect_request_init(&o.req);
	o.plot = 1;
	o.fresh = 1;	/* keeps no summary: the store stays as built */
	CHECK(report_build(conf, eng, s, "1.0.0..1.0.10", &o, &rep, &code,
	    &e) == 0);
	if (rep == NULL || getcwd(cwd, sizeof(cwd)) == NULL) {
		fprintf(stderr, "report: %s\n", e.msg);
		return;
	}
	json_object_set_new(rep, "machine", json_pack("{s:s,s:i,s:I,s:s,"
	    "s:s,s:s,s:s,s:s}", "cpu_model", "Test CPU", "cores", 8,
	    "mem_bytes", (json_int_t)16 << 30, "arch", "x86_64", "kernel",
	    "6.1.0", "os", "Debian GNU/Linux 12 (bookworm)", "hostname",
	    "bench1", "hw_key", "MACHINE"));
	text = json_dumps(rep, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(rep);
	text = replace_all(text, cwd, "TESTDIR");
	text = replace_all(text, hw, "MACHINE");
	for (int i = 0; i < 3; i++)
		text = replace_all(text, def_key[i], placeholders[i]);
	check_golden("report.json", text);
	norm = json_loads(text, 0, NULL);
	CHECK(norm != NULL);
	for (size_t i = 0; norm && i < sizeof(formats) / sizeof(formats[0]);
	    i++) {
		char *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);

		if (f == NULL)
			abort();
		report_print(norm, formats[i].f, f);
		fclose(f);
		check_golden(formats[i].file, out);
		free(out);
	}
	json_decref(norm);
	free(text);
}

/* The report of the range under conf's engine as text; fresh: from the
 * runs alone, reading and keeping no summary. */
static char *
report_text(struct store *st, const struct conf *conf, int fresh)
{
	const struct conf_engine *g = conf_engine(conf, "basert");
	struct report_opts o;
	struct err e = ERR_INIT;
	json_t *rep = NULL;
	char *text;
	int code = -1;

	memset(&o, 0, sizeof(o));
	bisect_request_init(&o.req);
	o.plot = 1;
	o.fresh = fresh;
	if (report_build(conf, g, st, "1.0.0..1.0.10", &o, &rep, &code,
	    &e) < 0) {
		fprintf(stderr, "report: %s\n", e.msg);
		CHECK(0);
		return strdup("");
	}
	text = json_dumps(rep, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(rep);
	return text;
}

static int64_t
summaries(void)
{
	struct err e = ERR_INIT;
	int64_t n = -1;

	CHECK(store_summary_count(s, &n, &e) == 0);
	return n;
}

/* The entry of release r in a report's text. */
static char *
entry_text(const char *report, int r)
{
	json_t *rep = json_loads(report, 0, NULL);
	char *text = json_dumps(json_array_get(json_object_get(rep,
	    "releases"), (size_t)r), JSON_COMPACT | JSON_PRESERVE_ORDER);

	json_decref(rep);
	return text ? text : strdup("");
}

/* Whether releases' entries of a and b differ exactly at the ones in
 * changed (a bit per release). */
static void
check_changed(const char *a, const char *b, unsigned changed)
{
	for (int r = 0; r < NREL - 1; r++) {
		char *x = entry_text(a, r), *y = entry_text(b, r);

		if ((strcmp(x, y) != 0) != ((changed >> r) & 1)) {
			fprintf(stderr, "release 1.0.%d: %s\n", r,
			    changed >> r & 1 ? "unchanged" : "changed");
			CHECK(0);
		}
		free(x);
		free(y);
	}
}

static int
count_of(const char *text, const char *word)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, word)) != NULL; p++)
		n++;
	return n;
}

static void
test_summaries(const struct conf *conf)
{
	char *ro, *cold, *warm, *fresh, *after, *other, *other_fresh;
	char text[sizeof(conf_text) + 64];
	struct conf *noisy;
	struct store *rs, *busy;
	struct store_sample smp[2];
	struct err e = ERR_INIT;

	/* Read-only: computed, nothing kept. */
	CHECK_INT(summaries(), 0);
	CHECK(store_open_readonly("r.db", &rs, &e) == 0);
	ro = rs ? report_text(rs, conf, 0) : strdup("");
	CHECK_INT(summaries(), 0);
	cold = report_text(s, conf, 0);
	CHECK_INT(summaries(), NREL - 1);
	warm = report_text(s, conf, 0);
	fresh = report_text(s, conf, 1);
	CHECK_INT(summaries(), NREL - 1);
	CHECK_STR(cold, ro);
	CHECK_STR(warm, cold);
	CHECK_STR(fresh, cold);
	/* What the summaries are of, checked against the per-cell path. */
	test_report(conf);

	/* New runs of 1.0.3, and of 1.0.11 whose archive 1.0.1 shares;
	 * one run of 1.0.2 read again slower (samples deleted and
	 * inserted, the run updated). */
	for (int k = 0; k < 4; k++) {
		struct run_spec a = { 3, 0, 0, DEF_PP512, 0, 0, 0, NULL, 2,
		    120, 0 };
		struct run_spec b = { 11, 0, 0, DEF_PP128, 0, 0, 0, NULL, 1,
		    90, 0 };

		add_run(&a);
		add_run(&b);
	}
	{
		struct store_run_rows rows;
		int64_t id = 0;

		CHECK(store_run_list(s, rel_id[2], &rows, &e) == 0);
		for (size_t i = 0; i < rows.n && id == 0; i++)
			if (rows.v[i].failure == NULL && !rows.v[i].warmup &&
			    rows.v[i].prompt_tokens == 128)
				id = rows.v[i].id;
		store_run_rows_release(&rows);
		memset(smp, 0, sizeof(smp));
		for (int i = 0; i < 2; i++) {
			smp[i].prompt_tokens = 128;
			smp[i].engine_ns = 300000000 + i;
			smp[i].wall_ns = 310000000 + i;
			smp[i].user_ns = smp[i].sys_ns = -1;
			smp[i].max_rss_kb = -1;
		}
		CHECK(id > 0);
		CHECK(store_run_resample(s, id, smp, 2, NULL, NULL, NULL, 0,
		    &e) == 0);
	}
	/* A read-only store does not read the summaries the changes
	 * outdated. */
	free(ro);
	ro = rs ? report_text(rs, conf, 0) : strdup("");
	after = report_text(s, conf, 0);
	free(fresh);
	fresh = report_text(s, conf, 1);
	CHECK_STR(after, fresh);
	CHECK_STR(ro, fresh);
	check_changed(cold, after, 1u << 1 | 1u << 2 | 1u << 3);
	/* The outdated ones were replaced, not added to. */
	CHECK_INT(summaries(), NREL - 1);
	free(warm);
	warm = report_text(s, conf, 0);
	CHECK_STR(warm, after);
	test_report(conf);

	/* Another configuration (a lower noise limit flags cells as
	 * noisy) reads none of the first one's summaries; a store another
	 * connection is writing keeps none and still reports. */
	snprintf(text, sizeof(text), "%s\tmax-cv = 0.5%%\n", conf_text);
	noisy = check_conf_load(text);
	CHECK(noisy != NULL);
	CHECK(store_open("r.db", &busy, &e) == 0);
	CHECK(busy && store_begin(busy, &e) == 0);
	other = noisy ? report_text(s, noisy, 0) : strdup("");
	CHECK_INT(summaries(), NREL - 1);
	store_rollback(busy);
	store_close(busy);
	other_fresh = noisy ? report_text(s, noisy, 1) : strdup("");
	CHECK_STR(other, other_fresh);
	CHECK(strcmp(other, after) != 0);
	CHECK(count_of(other, "noisy") > count_of(after, "noisy"));
	free(other);
	other = noisy ? report_text(s, noisy, 0) : strdup("");
	CHECK_INT(summaries(), 2 * (NREL - 1));
	CHECK_STR(other, other_fresh);
	free(other);
	other = noisy ? report_text(s, noisy, 0) : strdup("");
	CHECK_STR(other, other_fresh);
	free(warm);
	warm = report_text(s, conf, 0);
	CHECK_STR(warm, after);

	store_close(rs);
	conf_free(noisy);
	free(ro);
	free(cold);
	free(warm);
	free(fresh);
	free(after);
	free(other);
	free(other_fresh);
}

/* A sink that writes the JSON report as report_print() does. */
struct stream {
	FILE *out;
	size_t n;	/* releases handed over */
	int order_ok;	/* each release's index the next one */
};

static void
stream_head(const json_t *rep, void *arg)
{
	struct stream *w = arg;

	CHECK_INT(json_array_size(json_object_get(rep, "releases")), 0);
	CHECK(json_is_object(json_object_get(rep, "verdict")));
	report_json_head(rep, w->out);
}

static void
stream_release(const json_t *rel, size_t i, void *arg)
{
	struct stream *w = arg;

	w->order_ok &= i == w->n;
	report_json_release(rel, i, w->out);
	w->n++;
}

/*
 * A report streamed release by release gives the bytes of jansson's
 * dump of the whole report, which report_print() gives too; from kept
 * summaries and from the runs alone.
 */
static void
test_stream(const struct conf *conf)
{
	for (int fresh = 0; fresh <= 1; fresh++) {
		struct stream w = { NULL, 0, 1 };
		struct report_sink sink = { stream_head, stream_release, &w };
		struct report_opts o;
		struct err e = ERR_INIT;
		json_t *tree = NULL, *rest = NULL;
		char *streamed = NULL, *printed = NULL, *dumped;
		size_t len;
		FILE *f;
		int code = -1;

		memset(&o, 0, sizeof(o));
		bisect_request_init(&o.req);
		o.fresh = fresh;
		CHECK(report_build(conf, eng, s, "1.0.0..1.0.10", &o, &tree,
		    &code, &e) == 0);
		o.sink = &sink;
		w.out = open_memstream(&streamed, &len);
		CHECK(report_build(conf, eng, s, "1.0.0..1.0.10", &o, &rest,
		    &code, &e) == 0);
		if (tree == NULL || rest == NULL || w.out == NULL) {
			CHECK(0);
			return;
		}
		report_json_tail(rest, w.n, w.out);
		fclose(w.out);
		CHECK_INT(w.n, NREL - 1);
		CHECK(w.order_ok);
		CHECK_INT(json_array_size(json_object_get(rest, "releases")),
		    0);
		f = open_memstream(&printed, &len);
		report_print(tree, REPORT_JSON, f);
		fclose(f);
		dumped = json_dumps(tree, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
		    JSON_REAL_PRECISION(10));
		CHECK(dumped != NULL && strlen(dumped) > 1000);
		if (dumped != NULL) {
			size_t n = strlen(dumped);

			/* the same bytes, and a new line after */
			CHECK(strlen(streamed) == n + 1 &&
			    strncmp(streamed, dumped, n) == 0 &&
			    streamed[n] == '\n');
			CHECK_STR(printed, streamed);
		}
		free(dumped);
		free(streamed);
		free(printed);
		json_decref(tree);
		json_decref(rest);
	}
}

/* The kept summaries' bytes, as store_summary_read() hands them over. */
struct kept {
	struct buf entry[NREL], plot[NREL], runs[NREL];
	char *stamp[NREL];
	size_t n;
};

static int
keep_row(void *arg, size_t i, const struct store_summary_row *row)
{
	struct kept *k = arg;

	k->stamp[i] = strdup(row->stamp);
	CHECK(buf_add(&k->entry[i], row->entry, row->entry_len) == 0);
	CHECK(buf_add(&k->plot[i], row->plot, row->plot_len) == 0);
	CHECK(buf_add(&k->runs[i], row->runs, row->runs_len) == 0);
	k->n++;
	return 0;
}

/* Summary i kept again, its entry and runs cut to the lengths given. */
static void
keep_cut(const struct store_summary_key *key, const struct kept *k,
    size_t i, size_t entry_len, size_t runs_len)
{
	struct store_summary_row row;
	struct err e = ERR_INIT;

	memset(&row, 0, sizeof(row));
	row.release_id = rel_id[i];
	row.stamp = k->stamp[i];
	row.entry = k->entry[i].data;
	row.entry_len = entry_len;
	row.plot = k->plot[i].data;
	row.plot_len = k->plot[i].len;
	row.runs = k->runs[i].data;
	row.runs_len = runs_len;
	CHECK_INT(store_summary_save(s, key, &row, 1, &e), 0);
}

/*
 * A kept summary that does not read back, whether its entry is cut
 * short or a sound entry stands beside a runs blob cut short, gives
 * way to the runs: the report is the one computed afresh.
 */
static void
test_unreadable(const struct conf *conf)
{
	struct store_summary sum[NREL - 1];
	struct store_cell_query pq[BISECT_MAX_CELLS];
	struct store_summary_key key;
	struct report_cells qc;
	struct bisect_params p;
	struct kept k;
	struct err e = ERR_INIT;
	char config[SHA256_HEX_LEN + 1], *fresh, *text;
	int64_t ids[NREL - 1];

	memset(&k, 0, sizeof(k));
	for (int i = 0; i < NREL; i++) {
		buf_init(&k.entry[i], 1 << 20);
		buf_init(&k.plot[i], 1 << 20);
		buf_init(&k.runs[i], 1 << 20);
	}
	for (int i = 0; i < NREL - 1; i++)
		ids[i] = rel_id[i];
	/* The key report_build() keeps them under. */
	CHECK(range_params(eng, NULL, &p, &e) == 0);
	CHECK(report_cells_init(eng, wsha, hw, &qc, &e) == 0);
	CHECK(range_cell_queries(&p, eng, wsha, hw, pq, &e) == 0);
	CHECK(summary_config(eng, &p, &qc, pq, config, &e) == 0);
	key.weights_sha256 = wsha;
	key.hw_key = hw;
	key.config = config;
	fresh = report_text(s, conf, 1);
	free(report_text(s, conf, 0));
	CHECK(store_summary_read(s, &key, 1, ids, NREL - 1, sum, keep_row,
	    &k, &e) == 0);
	CHECK_INT(k.n, NREL - 1);
	for (int i = 0; i < NREL - 1; i++)
		store_summary_release(&sum[i]);
	if (k.n == NREL - 1) {
		/* An entry cut short. */
		keep_cut(&key, &k, 4, k.entry[4].len / 2, k.runs[4].len);
		text = report_text(s, conf, 0);
		CHECK_STR(text, fresh);
		free(text);
		/* A sound entry, its runs cut short, read first. */
		keep_cut(&key, &k, 2, k.entry[2].len, 1);
		text = report_text(s, conf, 0);
		CHECK_STR(text, fresh);
		free(text);
	}
	free(qc.tg);
	for (int i = 0; i < NREL; i++) {
		buf_release(&k.entry[i]);
		buf_release(&k.plot[i]);
		buf_release(&k.runs[i]);
		free(k.stamp[i]);
	}
	free(fresh);
}

int
main(void)
{
	struct conf *conf;
	struct err e = ERR_INIT;

	check_tmpdir("release_runs");
	check_write_file("w.bin", "pinned weights\n");
	if ((conf = check_conf_load(conf_text)) == NULL ||
	    (eng = conf_engine(conf, "basert")) == NULL) {
		CHECK(0);
		return check_done();
	}
	CHECK(store_open("r.db", &s, &e) == 0);
	if (s == NULL)
		return check_done();
	build_store();
	CHECK_CASE(test_store_equivalence);
	test_golden(conf);
	test_summaries(conf);
	test_stream(conf);
	test_unreadable(conf);
	store_close(s);
	conf_free(conf);
	return check_done();
}
