/*
 * report-store.c: fills the store of a configuration with a large
 * history for bench/report-bench.sh: RELEASES releases of the engine
 * ENGINE, versions 1.0.0, 1.0.1, ..., each with RUNS analysed runs split
 * over its prefill cells (its prompt lengths) and its first decode cell,
 * one sample per run, under the engine's current measurement definition
 * on this machine, so that `bisectctl report` reads them all.  The
 * per-token cost steps up by half two thirds of the way along.
 *
 * usage: report-store CONFIG ENGINE RELEASES RUNS
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bisectd/measure/bench.h"
#include "common/err.h"
#include "common/strv.h"
#include "config/conf.h"
#include "fetch/version.h"
#include "store/store.h"

/* Deterministic noise in [-1, 1). */
static double
noise(uint64_t *state)
{
	uint64_t x = (*state += 0x9e3779b97f4a7c15ULL);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (double)(x >> 11) / 0x1p52 - 1;
}

static int
die(const char *what, const struct err *e)
{
	fprintf(stderr, "report-store: %s: %s\n", what, e ? e->msg : "");
	return 1;
}

int
main(int argc, char **argv)
{
	struct strv problems = STRV_INIT;
	struct err e = ERR_INIT;
	struct conf *conf;
	const struct conf_engine *eng;
	struct store *s;
	int64_t engine_id, weights_id, machine_id, defs[33];
	char hw[65];
	const char *wsha =
	    "c14922936e2cf23291cf6f5fa3e48b790c620950ea451777c6cd6586ac4e8e51";
	int releases, runs;
	size_t ncells;
	uint64_t rng = 42;

	if (argc != 5) {
		fprintf(stderr, "usage: report-store CONFIG ENGINE RELEASES "
		    "RUNS\n");
		return 2;
	}
	releases = atoi(argv[3]);
	runs = atoi(argv[4]);
	if (conf_load(argv[1], &conf, &problems) < 0) {
		for (size_t i = 0; i < problems.n; i++)
			fprintf(stderr, "%s\n", problems.v[i]);
		return 1;
	}
	if ((eng = conf_engine(conf, argv[2])) == NULL || releases < 2 ||
	    runs < 1 || eng->nprompts > 32) {
		fprintf(stderr, "report-store: no engine '%s', or too few "
		    "releases or runs\n", argv[2]);
		return 2;
	}
	if (store_open(conf->database, &s, &e) < 0)
		return die("store", &e);
	if (store_engine_ensure(s, eng->name, "dir:releases", &engine_id,
	    &e) < 0 || store_weights_ensure(s, eng->weights->name, wsha,
	    1024, &weights_id, &e) < 0 || bench_machine(s, &machine_id, hw,
	    &e) < 0)
		return die("store", &e);
	/* The cells: every prompt length, then the first decode length. */
	ncells = eng->nprompts + (eng->ngen > 0);
	for (size_t c = 0; c < ncells; c++) {
		struct bench_definition d;
		int pp = c < eng->nprompts;

		if (bench_definition(eng, pp ? "pp" : "tg", pp ?
		    eng->prompts[c] : 0, pp ? 0 : eng->gen[0], "", wsha, hw,
		    &d, &e) < 0 || store_definition_ensure(s, d.key, d.text,
		    d.clock, &defs[c], &e) < 0)
			return die("definition", &e);
		bench_definition_release(&d);
	}
	/* store_run_insert() commits each run: in WAL mode without a sync
	 * per commit, which is fast enough for this. */
	for (int r = 0; r < releases; r++) {
		struct store_release rel;
		char version[32];
		double per_token_ns = r < releases * 2 / 3 ? 100e3 : 150e3;

		memset(&rel, 0, sizeof(rel));
		snprintf(version, sizeof(version), "1.0.%d", r);
		rel.engine_id = engine_id;
		rel.version = version;
		rel.order_key = version_key(version);
		rel.state = RELEASE_MEASURED;
		rel.discovered = (int64_t)time(NULL);
		if (rel.order_key == NULL || store_release_upsert(s, &rel,
		    &e) < 0)
			return die("release", &e);
		free(rel.order_key);
		for (int k = 0; k < runs; k++) {
			size_t c = (size_t)k % ncells;
			int pp = c < eng->nprompts;
			int tokens = pp ? eng->prompts[c] : eng->gen[0];
			double t = pp ? 20e6 + per_token_ns * tokens :
			    5e6 * tokens;
			struct store_sample smp;
			struct store_run run;

			t *= 1 + 0.03 * noise(&rng);
			memset(&run, 0, sizeof(run));
			run.release_id = rel.id;
			run.weights_id = weights_id;
			run.machine_id = machine_id;
			run.kind = pp ? "pp" : "tg";
			run.prompt_tokens = pp ? tokens : 0;
			run.gen_tokens = pp ? 0 : tokens;
			run.content = "";
			run.rep = k / (int)ncells;
			run.mode = "bench";
			run.parser = "llama-bench";
			run.started = (int64_t)time(NULL);
			run.end.wall_ns = (int64_t)t + 1000000;
			run.user_ns = run.sys_ns = run.max_rss_kb = -1;
			run.end.exit_code = 0;
			run.busy_share = run.loadavg = -1;
			run.definition_id = defs[c];
			smp.prompt_tokens = run.prompt_tokens;
			smp.gen_tokens = run.gen_tokens;
			smp.wall_ns = run.end.wall_ns;
			smp.engine_ns = (int64_t)t;
			smp.user_ns = smp.sys_ns = smp.max_rss_kb = -1;
			if (store_run_insert(s, &run, &smp, 1, &e) < 0)
				return die("run", &e);
		}
	}
	store_close(s);
	conf_free(conf);
	strv_clear(&problems);
	return 0;
}
