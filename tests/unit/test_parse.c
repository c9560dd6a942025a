/*
 * test_parse.c: the output parsers on realistic engine output: llama-bench
 * -o json and -o jsonl (as llama.cpp documents them), json:PATH and
 * regex:RE in every unit, the wall clock, and each way output can be
 * wrong (garbage, a missing record or field, a value of the wrong type).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"
#include "common/err.h"
#include "common/regex.h"
#include "bisectd/measure/parse.h"

/* llama-bench -o json from a recent build: pp512 and tg128 on Metal. */
static const char llama_json[] =
"[\n"
"  {\n"
"    \"build_commit\": \"5f2a1b07\",\n"
"    \"build_number\": 6412,\n"
"    \"cpu_info\": \"Apple M1 Max\",\n"
"    \"gpu_info\": \"Apple M1 Max\",\n"
"    \"backends\": \"Metal,BLAS\",\n"
"    \"model_filename\": \"models/qwen3-30b-a3b-q4_k_m.gguf\",\n"
"    \"model_type\": \"qwen3moe 30B.A3B Q4_K - Medium\",\n"
"    \"model_size\": 18556686336,\n"
"    \"model_n_params\": 30532122624,\n"
"    \"n_batch\": 2048,\n"
"    \"n_ubatch\": 512,\n"
"    \"n_threads\": 8,\n"
"    \"cpu_mask\": \"0x0\",\n"
"    \"cpu_strict\": false,\n"
"    \"poll\": 50,\n"
"    \"type_k\": \"f16\",\n"
"    \"type_v\": \"f16\",\n"
"    \"n_gpu_layers\": 99,\n"
"    \"split_mode\": \"layer\",\n"
"    \"main_gpu\": 0,\n"
"    \"no_kv_offload\": false,\n"
"    \"flash_attn\": false,\n"
"    \"tensor_split\": \"0.00\",\n"
"    \"use_mmap\": true,\n"
"    \"embeddings\": false,\n"
"    \"n_prompt\": 512,\n"
"    \"n_gen\": 0,\n"
"    \"n_depth\": 0,\n"
"    \"test_time\": \"2025-09-14T21:03:17Z\",\n"
"    \"avg_ns\": 551806480,\n"
"    \"stddev_ns\": 3046171,\n"
"    \"avg_ts\": 927.874512,\n"
"    \"stddev_ts\": 5.118004,\n"
"    \"samples_ns\": [ 556120540, 549011320, 553287760, 548903410, "
"551709370 ],\n"
"    \"samples_ts\": [ 920.665, 932.586, 925.378, 932.77, 928.02 ]\n"
"  },\n"
"  {\n"
"    \"build_commit\": \"5f2a1b07\",\n"
"    \"build_number\": 6412,\n"
"    \"cpu_info\": \"Apple M1 Max\",\n"
"    \"gpu_info\": \"Apple M1 Max\",\n"
"    \"backends\": \"Metal,BLAS\",\n"
"    \"model_filename\": \"models/qwen3-30b-a3b-q4_k_m.gguf\",\n"
"    \"model_type\": \"qwen3moe 30B.A3B Q4_K - Medium\",\n"
"    \"model_size\": 18556686336,\n"
"    \"model_n_params\": 30532122624,\n"
"    \"n_batch\": 2048,\n"
"    \"n_ubatch\": 512,\n"
"    \"n_threads\": 8,\n"
"    \"n_gpu_layers\": 99,\n"
"    \"n_prompt\": 0,\n"
"    \"n_gen\": 128,\n"
"    \"n_depth\": 0,\n"
"    \"test_time\": \"2025-09-14T21:03:21Z\",\n"
"    \"avg_ns\": 2088135300,\n"
"    \"stddev_ns\": 357719081,\n"
"    \"avg_ts\": 61.298412,\n"
"    \"stddev_ts\": 10.497311,\n"
"    \"samples_ns\": [ 1712409800, 2450118700, 2391026600, 1798986100 ],\n"
"    \"samples_ts\": [ 74.7484, 52.2424, 53.5335, 71.1512 ]\n"
"  }\n"
"]\n";

/* -o jsonl: the same shape one record a line (a stray log line too). */
static const char llama_jsonl[] =
"{\"build_commit\":\"b11382c\",\"build_number\":11382,\"backends\":\"CPU\","
"\"n_threads\":10,\"n_prompt\":2048,\"n_gen\":0,\"n_depth\":0,"
"\"avg_ns\":2207223500,\"stddev_ns\":4401200,\"avg_ts\":927.86,"
"\"stddev_ts\":1.85,\"samples_ns\":[2203110000,2211337000],"
"\"samples_ts\":[929.6,926.1]}\n"
"main: warning: this line is not JSON and is skipped\n"
"{\"build_commit\":\"b11382c\",\"build_number\":11382,\"backends\":\"CPU\","
"\"n_threads\":10,\"n_prompt\":512,\"n_gen\":0,\"n_depth\":0,"
"\"avg_ns\":551800000,\"stddev_ns\":0,\"avg_ts\":927.87,\"stddev_ts\":0,"
"\"samples_ns\":[551800000],\"samples_ts\":[927.87]}\n";

static const struct parse_spec llama = { PARSER_LLAMA_BENCH, NULL, UNIT_NS };
static const struct parse_cell pp512 = { 512, 0 };
static const struct parse_cell tg128 = { 0, 128 };

/* Parse and expect failure with a message containing want. */
static void
expect_error(const struct parse_spec *spec, const struct parse_cell *cell,
    const char *out, const char *want)
{
	struct parse_result res = PARSE_RESULT_INIT;
	struct err e = ERR_INIT;

	CHECK_INT(parse_output(spec, cell, out, strlen(out), 0, &res, &e), -1);
	CHECK_CONTAINS(e.msg, want);
	CHECK(res.samples == NULL && res.n == 0 && res.meta == NULL);
}

/* Parse len bytes and expect n samples, the first of first_ns, each
 * for the cell; res is left filled for further checks. */
static void
expect_samples(const struct parse_spec *spec, const struct parse_cell *cell,
    const char *out, size_t len, size_t n, int64_t first_ns,
    struct parse_result *res)
{
	struct err e = ERR_INIT;
	size_t i;

	CHECK_INT(parse_output(spec, cell, out, len, 0, res, &e), 0);
	CHECK_STR(e.msg, "");
	CHECK_INT(res->n, n);
	if (res->n == 0)
		return;
	CHECK_INT(res->samples[0].engine_ns, first_ns);
	for (i = 0; i < res->n; i++) {
		CHECK_INT(res->samples[i].prompt_tokens, cell->prompt_tokens);
		CHECK_INT(res->samples[i].gen_tokens, cell->gen_tokens);
	}
}

/* Parse and expect exactly one sample of ns and no metadata. */
static void
expect_one(const struct parse_spec *spec, const struct parse_cell *cell,
    const char *out, int64_t ns)
{
	struct parse_result res = PARSE_RESULT_INIT;

	expect_samples(spec, cell, out, strlen(out), 1, ns, &res);
	CHECK(res.meta == NULL);
	parse_result_release(&res);
}

static void
test_llama_json(void)
{
	struct parse_result res = PARSE_RESULT_INIT;

	expect_samples(&llama, &pp512, llama_json, strlen(llama_json), 5,
	    556120540, &res);
	if (res.n == 5)
		CHECK_INT(res.samples[4].engine_ns, 551709370);
	/* What an upstream report shows: build, model, threads, CPU. */
	CHECK_STR(res.meta, "{\"build_commit\":\"5f2a1b07\","
	    "\"build_number\":6412,\"backend\":\"Metal,BLAS\",\"n_threads\":8,"
	    "\"avg_ns\":551806480,\"stddev_ns\":3046171,\"cpu_info\":"
	    "\"Apple M1 Max\",\"model_type\":\"qwen3moe 30B.A3B Q4_K - Medium\","
	    "\"model_size\":18556686336,\"model_n_params\":30532122624}");
	parse_result_release(&res);
	CHECK(res.samples == NULL && res.meta == NULL);

	/* The other record of the same output, for a decode cell. */
	expect_samples(&llama, &tg128, llama_json, strlen(llama_json), 4,
	    1712409800, &res);
	if (res.n == 4)
		CHECK_INT(res.samples[1].engine_ns, 2450118700);
	parse_result_release(&res);
}

static void
test_llama_jsonl(void)
{
	struct parse_result res = PARSE_RESULT_INIT;
	struct parse_cell pp2048 = { 2048, 0 };
	struct err e = ERR_INIT;

	expect_samples(&llama, &pp2048, llama_jsonl, strlen(llama_jsonl), 2,
	    2203110000, &res);
	if (res.n == 2)
		CHECK_INT(res.samples[1].engine_ns, 2211337000);
	CHECK_CONTAINS(res.meta, "\"backend\":\"CPU\"");
	parse_result_release(&res);

	expect_samples(&llama, &pp512, llama_jsonl, strlen(llama_jsonl), 1,
	    551800000, &res);
	parse_result_release(&res);

	expect_error(&llama, &pp512, "", "no llama-bench records");
	/* Only len bytes count: cut before the second record. */
	CHECK_INT(parse_output(&llama, &pp512, llama_jsonl,
	    (size_t)(strstr(llama_jsonl, "main:") - llama_jsonl), 0, &res,
	    &e), -1);
	CHECK_CONTAINS(e.msg, "no record with n_prompt=512 n_gen=0");
	CHECK_CONTAINS(e.msg, "found: pp2048");
}

static void
test_llama_variants(void)
{
	struct parse_result res = PARSE_RESULT_INIT;
	const char *old;

	/* An older build: "backend", no n_depth, no samples_ns. */
	old = "[{\"build_commit\":\"8e6735e\",\"build_number\":1299,"
	    "\"backend\":\"CPU\",\"n_prompt\":512,\"n_gen\":0,"
	    "\"avg_ns\":636400000,\"stddev_ns\":2000000}]";
	expect_samples(&llama, &pp512, old, strlen(old), 1, 636400000, &res);
	CHECK_CONTAINS(res.meta, "\"backend\":\"CPU\"");
	CHECK_CONTAINS(res.meta, "\"build_number\":1299");
	parse_result_release(&res);
}

static void
test_llama_errors(void)
{
	expect_error(&llama, &pp512, "llama_model_load: error loading model\n"
	    "segmentation fault\n", "no llama-bench records");
	expect_error(&llama, &pp512, "[{\"n_prompt\": 512, \"n_gen\": 0,",
	    "llama-bench output is not valid JSON");
	expect_error(&llama, &pp512, "{\"n_prompt\": 512, \"n_gen\": \n",
	    "line 1 is not valid JSON");
	/* The wrong cell. */
	expect_error(&llama, &(struct parse_cell){ 2048, 0 }, llama_json,
	    "no record with n_prompt=2048 n_gen=0 in llama-bench output "
	    "(found: pp512, tg128)");
	/* Field names of another tool. */
	expect_error(&llama, &pp512, "[{\"prompt_tokens\": 512, \"gen\": 0, "
	    "\"samples_ns\": [1]}]", "found: a record without integer "
	    "n_prompt and n_gen");
	expect_error(&llama, &pp512, "[{\"n_prompt\": \"512\", \"n_gen\": 0, "
	    "\"samples_ns\": [1]}]", "no record with n_prompt=512");
	expect_error(&llama, &pp512, "[{\"n_prompt\": 512, \"n_gen\": 0, "
	    "\"samples_ns\": [100, \"fast\"]}]", "samples_ns[1] is not a "
	    "number");
	expect_error(&llama, &pp512, "[{\"n_prompt\": 512, \"n_gen\": 0, "
	    "\"samples_ns\": {\"a\": 1}}]", "samples_ns is not an array");
	expect_error(&llama, &pp512, "[{\"n_prompt\": 512, \"n_gen\": 0, "
	    "\"samples_ns\": [0]}]", "is not a positive time");
	expect_error(&llama, &pp512, "[{\"n_prompt\": 512, \"n_gen\": 0}]",
	    "has neither samples_ns nor avg_ns");
	expect_error(&llama, &pp512, "[512]", "record 1 is not an object");
	/* Two settings of one cell (e.g. -t 4,8) cannot be told apart. */
	expect_error(&llama, &pp512, "[{\"n_prompt\":512,\"n_gen\":0,"
	    "\"n_threads\":4,\"samples_ns\":[1]},{\"n_prompt\":512,\"n_gen\":0,"
	    "\"n_threads\":8,\"samples_ns\":[2]}]", "2 records with "
	    "n_prompt=512 n_gen=0");
}

/* -d 0,512: the record at depth 512 is another test. */
static void
test_llama_depth(void)
{
	struct parse_result res = PARSE_RESULT_INIT;
	const char *out;

	out = "{\"n_prompt\":512,\"n_gen\":0,\"n_depth\":512,"
	    "\"samples_ns\":[900000000]}\n"
	    "{\"n_prompt\":512,\"n_gen\":0,\"n_depth\":0,"
	    "\"samples_ns\":[550000000]}\n";
	expect_samples(&llama, &pp512, out, strlen(out), 1, 550000000, &res);
	CHECK_STR(res.meta, "{}");
	parse_result_release(&res);
}

static void
test_json_path(void)
{
	struct parse_spec ms = { PARSER_JSON, "results.prefill.ms", UNIT_MS };
	struct parse_spec us = { PARSER_JSON, "runs[1].time_us", UNIT_US };
	struct parse_spec root = { PARSER_JSON, "[0][1]", UNIT_S };
	struct parse_spec tps = { PARSER_JSON, "decode.tps", UNIT_TPS };
	const char *doc = "{\"results\": {\"prefill\": {\"ms\": 636.4}},"
	    " \"runs\": [{\"time_us\": 1}, {\"time_us\": 1836600}],"
	    " \"decode\": {\"tps\": 96.2}, \"name\": \"x\"}";

	/* 636.4 ms, not 636 ns: the unit is applied. */
	expect_one(&ms, &pp512, doc, 636400000);
	expect_one(&us, &pp512, doc, 1836600000);
	expect_one(&root, &pp512, "[[0, 1.5]]", 1500000000);
	/* 128 tokens at 96.2 tok/s take 1.3306 s. */
	expect_one(&tps, &tg128, doc, 1330561331);

	ms.arg = "results.prefill.seconds";
	expect_error(&ms, &pp512, doc, "json path 'results.prefill.seconds': "
	    "nothing at 'results.prefill.seconds'");
	ms.arg = "results.decode.ms";
	expect_error(&ms, &pp512, doc, "nothing at 'results.decode'");
	ms.arg = "name";
	expect_error(&ms, &pp512, doc, "json path 'name' is not a number");
	ms.arg = "results";
	expect_error(&ms, &pp512, doc, "json path 'results' is not a number");
	us.arg = "runs[2].time_us";
	expect_error(&us, &pp512, doc, "nothing at 'runs[2]'");
	us.arg = "results[0]";
	expect_error(&us, &pp512, doc, "nothing at 'results[0]'");
	expect_error(&ms, &pp512, "prefill: 636.4 ms", "output is not valid "
	    "JSON");
	expect_error(&tps, &(struct parse_cell){ 0, 0 }, doc, "the cell has "
	    "no tokens");
	ms.arg = "t";
	expect_error(&ms, &pp512, "{\"t\": -3}", "is not a positive time");
}

static void
test_json_path_syntax(void)
{
	static const char *const bad[] = {
		"", ".a", "a.", "a..b", "a[", "a[x]", "a[1", "a]", "a.[0]",
		"a[-1]",
	};
	static const char *const good[] = {
		"a", "a.b.c", "a[0]", "a[0][12].b", "[3]", "x-y.z_1",
	};
	struct parse_spec spec = { PARSER_JSON, NULL, UNIT_MS };
	struct err e = ERR_INIT;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		spec.arg = bad[i];
		e.msg[0] = '\0';
		CHECK_INT(parse_check(&spec, &e), -1);
		CHECK(e.msg[0] != '\0');
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		spec.arg = good[i];
		CHECK_INT(parse_check(&spec, &e), 0);
	}
	spec.arg = "a..b";
	expect_error(&spec, &pp512, "{}", "json path 'a..b': empty name at "
	    "offset 2");
}

/*
 * A regex reads a line only up to its first 4096 bytes: a pattern like
 * ".*([0-9.]+) ms" is quadratic in the length it scans where digits occur
 * without " ms" after them (glibc's regexec() took 1.2 s for 20 kB; the
 * 1 MiB line below would take most of an hour).  Lines are still matched
 * in order, with ^ and $ at each line's own ends.
 */
static void
test_regex_long_lines(void)
{
	struct parse_spec spec = { PARSER_REGEX, ".*([0-9.]+) ms", UNIT_MS };
	size_t big = 1 << 20, i;
	char *out = malloc(big + 64);

	if (out == NULL)
		return;
	for (i = 0; i < big; i++)
		out[i] = "abc 12 x"[i % 8];
	strcpy(out + big, "\nprefill: 12.5 ms\n");
	expect_one(&spec, &pp512, out, 5000000);	/* greedy .* */
	spec.arg = "^prefill: ([0-9.]+) ms$";
	expect_one(&spec, &pp512, out, 12500000);

	/* A number on the long line past what is read is not seen. */
	spec.arg = "prefill: ([0-9.]+) ms";
	memcpy(out + big - 20, "prefill: 99 ms", 14);
	strcpy(out + big, "\nno number here\n");
	expect_error(&spec, &pp512, out, "did not match (a line is read up "
	    "to its first 4096 bytes; 1 lines were longer)");

	/* Within the first 4096 bytes it is, and $ does not match where
	 * the line was cut. */
	memcpy(out + 100, "prefill: 42 ms", 14);
	expect_one(&spec, &pp512, out, 42000000);
	spec.arg = "^abc.*([0-9]+) x$";
	expect_error(&spec, &pp512, out, "did not match (a line is read");
	spec.arg = "^no ([a-z]+) here$";
	expect_error(&spec, &pp512, out, "captured 'number', not a number");
	free(out);
}

/* Peak resident memory of this process, in MiB. */
static long
peak_mib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

/*
 * A regex's work on an output is bounded whatever its shape.  glibc's
 * regexec() took 800 MB and 26 s on one 4 kB line of "ab" for the first
 * pattern below (fuzz_parse ran out of memory on such a one), and PCRE2
 * with only its own match limit 15 s; "((a+)+)+b" backtracks
 * exponentially.  Each gives up at the step budget with an error naming
 * the line, and the process's peak memory barely moves.
 */
static void
test_regex_bounded(void)
{
	struct parse_spec spec = { PARSER_REGEX, "(a|b)*a(a|b){100}(x)",
	    UNIT_MS };
	size_t len = 3 * (REGEX_LINE_MAX + 1), i;
	char *out = malloc(len + 1);
	long before = peak_mib();

	if (out == NULL)
		return;
	/* Three lines of a and b in no order, each ending in x. */
	srand(7);
	for (i = 0; i < len; i++)
		out[i] = (i + 1) % (REGEX_LINE_MAX + 1) == 0 ? '\n' :
		    (i + 2) % (REGEX_LINE_MAX + 1) == 0 ? 'x' :
		    rand() % 2 ? 'a' : 'b';
	out[len] = '\0';
	/* No a 101 bytes before an x, so no line matches. */
	for (i = REGEX_LINE_MAX - 1; i < len; i += REGEX_LINE_MAX + 1)
		out[i - 101] = 'b';
	expect_error(&spec, &pp512, out, "regex '(a|b)*a(a|b){100}(x)' gave "
	    "up on line 1 of the output: match limit exceeded (it may take "
	    "10000000 steps over the whole output and 4096 KiB a line)");
	CHECK(peak_mib() - before < 64);

	spec.arg = "^([0-9]+)((a+)+)+b$";
	expect_error(&spec, &pp512, "prefill: 1 ms\n7aaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaa!b\n", "gave up on line 2 of the output: match limit "
	    "exceeded");
	/* The same pattern on a line it matches quickly. */
	expect_one(&spec, &pp512, "prefill: 1 ms\n7aaab\n", 7000000);
	free(out);
}

static void
test_regex(void)
{
	struct parse_spec spec = { PARSER_REGEX, "prefill: ([0-9.]+) ms",
	    UNIT_MS };
	const char *out = "loading model... done\nprefill: 636.4 ms\n"
	    "decode: 96.2 tok/s\n";

	expect_one(&spec, &pp512, out, 636400000);
	spec.unit = UNIT_NS;
	expect_one(&spec, &pp512, out, 636);
	spec.unit = UNIT_S;
	expect_one(&spec, &pp512, out, 636400000000);
	spec.unit = UNIT_US;
	expect_one(&spec, &pp512, out, 636400);

	/* tps: prompt tokens for prefill, gen tokens for decode. */
	spec.arg = "^decode: ([0-9.]+) tok/s$";
	spec.unit = UNIT_TPS;
	expect_one(&spec, &tg128, out, 1330561331);
	expect_one(&spec, &pp512, out, 5322245322);

	spec.arg = "^prefill ([0-9.]+)";
	expect_error(&spec, &pp512, out, "regex '^prefill ([0-9.]+)' did not "
	    "match");
	spec.arg = "prefill: [0-9.]+ ms";
	expect_error(&spec, &pp512, out, "has no capture group");
	spec.arg = "prefill: ([0-9.+";
	expect_error(&spec, &pp512, out, "does not compile");
	/* What check-config refuses is refused where the regex is
	 * compiled too. */
	spec.arg = "(.*){1,4000}";
	expect_error(&spec, &pp512, out, "regex '(.*){1,4000}' does not "
	    "compile: regular expression is too large");
	CHECK_INT(parse_check(&spec, &(struct err)ERR_INIT), -1);
	spec.arg = "(loading) model";
	expect_error(&spec, &pp512, out, "captured 'loading', not a number");
	spec.arg = "prefill: ([0-9]*)x?";
	expect_error(&spec, &pp512, "prefill: ms", "captured 0 characters");
	spec.arg = "(a)|(b)";
	expect_error(&spec, &pp512, "b", "first group captured nothing");
	spec.arg = "t=([-0-9.]+)";
	spec.unit = UNIT_MS;
	expect_error(&spec, &pp512, "t=0", "is not a positive time");
	/* Output past a NUL byte is not read. */
	spec.arg = "t=([0-9]+)";
	{
		struct parse_result res = PARSE_RESULT_INIT;
		struct err e = ERR_INIT;
		const char raw[] = "x\0t=5";

		CHECK_INT(parse_output(&spec, &pp512, raw, sizeof(raw) - 1, 0,
		    &res, &e), -1);
		CHECK_CONTAINS(e.msg, "did not match");
	}
}

static void
test_wall(void)
{
	struct parse_spec wall = { PARSER_WALL, NULL, UNIT_NS };

	/* The output does not matter; the runner's clock does. */
	{
		struct parse_result res = PARSE_RESULT_INIT;
		struct err e = ERR_INIT;

		CHECK_INT(parse_output(&wall, &pp512, "garbage", 7, 123456789,
		    &res, &e), 0);
		CHECK_INT(res.n, 1);
		if (res.n == 1)
			CHECK_INT(res.samples[0].engine_ns, 123456789);
		parse_result_release(&res);
	}
	expect_error(&wall, &pp512, "", "wall time 0 ns is not a positive "
	    "time");
}

/* The canary's text: all of stdout, a json string, a regex capture. */
static void
test_text(void)
{
	struct parse_text_spec all = { TEXT_STDOUT, NULL };
	struct parse_text_spec js = { TEXT_JSON, "choices[0].text" };
	struct parse_text_spec re = { TEXT_REGEX, "^output: (.*)$" };
	const char out[] = "a\0b\n";
	struct err e = ERR_INIT;
	char *text, *big;
	size_t len;

	/* stdout as it is, a NUL byte included */
	CHECK_INT(parse_text(&all, out, sizeof(out) - 1, &text, &len, &e), 0);
	CHECK_INT(len, 4);
	CHECK(text != NULL && memcmp(text, out, 4) == 0 && text[4] == '\0');
	free(text);
	CHECK_INT(parse_text(&js, "{\"choices\":[{\"text\":\"the cat\"}]}",
	    33, &text, &len, &e), 0);
	CHECK_STR(text, "the cat");
	free(text);
	/* a number is not generated text */
	CHECK_INT(parse_text(&js, "{\"choices\":[{\"text\":3}]}", 25, &text,
	    &len, &e), -1);
	CHECK_CONTAINS(e.msg, "is not a string");
	CHECK(text == NULL);
	CHECK_INT(parse_text(&re, "load 3 ms\noutput: the cat sat\n", 31,
	    &text, &len, &e), 0);
	CHECK_STR(text, "the cat sat");
	free(text);
	CHECK_INT(parse_text(&re, "nothing\n", 8, &text, &len, &e), -1);
	CHECK_CONTAINS(e.msg, "did not match");
	/* more than the cap is a failure, not a cut text */
	big = malloc(PARSE_TEXT_MAX + 2);
	memset(big, 'x', PARSE_TEXT_MAX + 1);
	CHECK_INT(parse_text(&all, big, PARSE_TEXT_MAX + 1, &text, &len, &e),
	    -1);
	CHECK_CONTAINS(e.msg, "over the 65536 byte limit");
	CHECK_INT(parse_text(&all, big, PARSE_TEXT_MAX, &text, &len, &e), 0);
	CHECK_INT(len, PARSE_TEXT_MAX);
	free(text);
	free(big);
	CHECK_INT(parse_text_check(&(struct parse_text_spec){ TEXT_JSON,
	    "a..b" }, &e), -1);
}

int
main(void)
{
	check_tmpdir("parse");
	CHECK_CASE(test_llama_json);
	CHECK_CASE(test_llama_jsonl);
	CHECK_CASE(test_llama_variants);
	CHECK_CASE(test_llama_errors);
	CHECK_CASE(test_llama_depth);
	CHECK_CASE(test_json_path);
	CHECK_CASE(test_json_path_syntax);
	CHECK_CASE(test_regex);
	CHECK_CASE(test_regex_long_lines);
	CHECK_CASE(test_regex_bounded);
	CHECK_CASE(test_wall);
	CHECK_CASE(test_text);
	return check_done();
}
