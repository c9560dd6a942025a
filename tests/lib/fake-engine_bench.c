/*
 * fake-engine_bench.c: the fake engine's output: llama-bench's JSON
 * records, one per test (-p, -n) with each repetition's sample, whole or
 * a line each (-o jsonl), and --generate's text.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "fake-common.h"
#include "fake-engine_int.h"

static void
iso_time(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *
bench_one(const struct release *rel, const struct opts *o,
    long long model_size, int n_prompt, int n_gen, double speedup)
{
	double cost_us, sum = 0, sumsq = 0, ts_sum = 0, ts_sumsq = 0;
	double mean, sd, ts, ts_mean, ts_sd, per_mib = rel->prefill_us_mib;
	const char *class = getenv("FAKE_ENGINE_CLASS");
	json_t *rec, *samples_ns, *samples_ts;
	char when[32];
	int64_t t0, ns;
	int r, tokens = n_prompt + n_gen;

	/* A machine class's own slowdown: absent on another class. */
	if (rel->mib_class[0] && class && strcmp(class, rel->mib_class) != 0)
		per_mib = 0;

	cost_us = rel->fixed_us + n_prompt * (rel->prefill_us +
	    per_mib * (double)model_size / (1 << 20)) +
	    (double)n_prompt * n_prompt * rel->prefill_us2 +
	    n_gen * rel->decode_us / speedup;
	samples_ns = json_array();
	samples_ts = json_array();
	iso_time(when, sizeof(when));
	for (r = 0; r < o->reps; r++) {
		double us = cost_us * run_factor(rel) *
		    noise_factor(rel->noise_cv);

		t0 = clock_ns(CLOCK_MONOTONIC);
		burn(us);
		/* The CPU clock runs on while a hypervisor steals the CPU:
		 * a steal in burn()'s last check would add milliseconds of
		 * nobody's work to the sample. */
		ns = rel->clock_cpu ? (int64_t)(us * 1e3) :
		    clock_ns(CLOCK_MONOTONIC) - t0;
		if (ns < 1)
			ns = 1;
		ts = tokens * 1e9 / (double)ns;
		sum += (double)ns;
		sumsq += (double)ns * (double)ns;
		ts_sum += ts;
		ts_sumsq += ts * ts;
		json_array_append_new(samples_ns, json_integer(ns));
		json_array_append_new(samples_ts, json_real(ts));
	}
	mean = sum / o->reps;
	ts_mean = ts_sum / o->reps;
	sd = o->reps > 1 ? sqrt(fmax(0, (sumsq - sum * mean) /
	    (o->reps - 1))) : 0;
	ts_sd = o->reps > 1 ? sqrt(fmax(0, (ts_sumsq - ts_sum * ts_mean) /
	    (o->reps - 1))) : 0;

	rec = json_object();
	json_object_set_new(rec, "build_commit",
	    json_string(rel->build_commit));
	json_object_set_new(rec, "build_number",
	    json_integer(rel->build_number));
	json_object_set_new(rec, "cpu_info", json_string("fake CPU"));
	json_object_set_new(rec, "gpu_info", json_string(""));
	json_object_set_new(rec, "backend", json_string("CPU"));
	json_object_set_new(rec, "model_filename", json_string(o->model));
	json_object_set_new(rec, "model_type", json_string("fake 1B Q4_0"));
	json_object_set_new(rec, "model_size", json_integer(model_size));
	json_object_set_new(rec, "n_batch", json_integer(2048));
	json_object_set_new(rec, "n_ubatch", json_integer(512));
	json_object_set_new(rec, "n_threads", json_integer(o->threads));
	json_object_set_new(rec, "n_prompt", json_integer(n_prompt));
	json_object_set_new(rec, "n_gen", json_integer(n_gen));
	json_object_set_new(rec, "n_depth", json_integer(0));
	json_object_set_new(rec, "test_time", json_string(when));
	json_object_set_new(rec, "avg_ns", json_integer(llround(mean)));
	json_object_set_new(rec, "stddev_ns", json_integer(llround(sd)));
	json_object_set_new(rec, "avg_ts", json_real(ts_mean));
	json_object_set_new(rec, "stddev_ts", json_real(ts_sd));
	json_object_set_new(rec, "samples_ns", samples_ns);
	json_object_set_new(rec, "samples_ts", samples_ts);
	return rec;
}

static void
emit(json_t *rec, int jsonl, json_t *all)
{
	if (jsonl) {
		json_dumpf(rec, stdout, JSON_COMPACT | JSON_REAL_PRECISION(10));
		putchar('\n');
		fflush(stdout);
		json_decref(rec);
	} else {
		json_array_append_new(all, rec);
	}
}

int
bench(const struct release *rel, const struct opts *o, long long model_size)
{
	double speedup = content_speedup_of(rel, o->content);
	json_t *all = json_array();
	size_t i;

	if (rel->fail == FAIL_GARBAGE) {
		printf("llama_model_load: loaded meta data\n"
		    "pp%d \x01\x02 {\"avg_ns\": [not json\n",
		    o->nprompts ? o->prompts[0] : 0);
		json_decref(all);
		return 0;
	}
	for (i = 0; i < o->nprompts; i++)
		if (o->prompts[i] > 0)
			emit(bench_one(rel, o, model_size, o->prompts[i], 0, 1),
			    o->jsonl, all);
	for (i = 0; i < o->ngens; i++)
		if (o->gens[i] > 0)
			emit(bench_one(rel, o, model_size, 0, o->gens[i],
			    speedup), o->jsonl, all);
	if (!o->jsonl) {
		json_dumpf(all, stdout, JSON_INDENT(2) |
		    JSON_REAL_PRECISION(10));
		putchar('\n');
	}
	json_decref(all);
	if (fflush(stdout) == EOF)
		die("cannot write output: %s", strerror(errno));
	return 0;
}

/*
 * --generate: 24 words drawn from a small vocabulary by a hash of the
 * prompt and, from the ninth word, the release's seed, as greedy
 * decoding with a fixed seed would: the same prompt and release always
 * give the same text.
 */
int
generate(const struct release *rel, const struct opts *o)
{
	static const char *const words[] = {
		"the", "keeper", "climbed", "stairs", "light", "harbour",
		"ships", "evening", "wick", "lens", "tide", "boats", "log",
		"morning", "sailors", "town", "grew", "weather", "routine",
		"distance", "polished", "great", "watched", "counting",
	};
	char prompt[CONTENT_MAX];
	size_t n = 0, got;
	uint64_t h = 1469598103934665603ULL;
	FILE *in = stdin;
	json_t *out;
	char text[1024];
	size_t used = 0;

	if (o->content && (in = fopen(o->content, "r")) == NULL)
		die("cannot read '%s': %s", o->content, strerror(errno));
	while ((got = fread(prompt + n, 1, sizeof(prompt) - n, in)) > 0)
		n += got;
	if (in != stdin)
		fclose(in);
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)prompt[i]) * 1099511628211ULL;
	text[0] = '\0';
	for (int i = 0; i < 24; i++) {
		const char *w;

		/* The seed and the jitter take effect part-way, so texts of
		 * two releases share their first words, as real ones do. */
		if (i == 8)
			h ^= (uint64_t)rel->generate_seed *
			    0x9e3779b97f4a7c15ULL;
		if (i == 12 && rel->generate_jitter)
			h ^= rng_state;

		h ^= h >> 33;
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
		w = words[h % (sizeof(words) / sizeof(words[0]))];
		used += (size_t)snprintf(text + used, sizeof(text) - used,
		    "%s%s", i ? " " : "", w);
	}
	if (!o->output || o->jsonl) {
		printf("%s\n", text);
		return 0;
	}
	out = json_pack("{s:s,s:i}", "content", text, "tokens", 24);
	json_dumpf(out, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(out);
	return 0;
}

/* Allocate and touch mb MiB (the variable's, else the release's), kept
 * until exit. */
