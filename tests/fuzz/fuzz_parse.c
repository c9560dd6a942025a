/*
 * fuzz_parse.c: the output parsers, llama-bench's JSON and JSONL,
 * json:PATH and regex:RE (bisectd/measure/parse.c).  The input's first
 * byte picks the parser, the unit and the cell; its first line after
 * that is the json path or regex; the rest is the engine's output.
 *
 * A parse succeeds with at least one sample, every one positive and for
 * the cell asked, or fails with a message and nothing kept.
 */
#include <stdlib.h>
#include <string.h>

#include "bisectd/measure/parse.h"
#include "common/err.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum conf_parser kinds[] = {
		PARSER_LLAMA_BENCH, PARSER_JSON, PARSER_REGEX, PARSER_REGEX
	};
	static const struct parse_cell cells[] = {
		{ 512, 0 }, { 0, 128 }, { 64, 16 }, { 1, 0 }
	};
	const uint8_t *p = data, *end = data + size;
	struct parse_result res = PARSE_RESULT_INIT;
	struct parse_spec spec;
	struct parse_cell cell;
	struct err e = ERR_INIT;
	char *arg, *out;
	size_t len;

	if (size < 1)
		return 0;
	spec.kind = kinds[p[0] & 3];
	spec.unit = (enum conf_unit)((p[0] >> 2) % 5);
	cell = cells[(p[0] >> 5) & 3];
	p++;
	arg = fuzz_line(&p, end);
	spec.arg = spec.kind == PARSER_LLAMA_BENCH ? NULL : arg;
	/* Exactly the output's bytes, so a read past them is caught. */
	len = (size_t)(end - p);
	if ((out = malloc(len > 0 ? len : 1)) == NULL)
		abort();
	memcpy(out, p, len);
	if (parse_output(&spec, &cell, out, len, 0, &res, &e) < 0) {
		if (e.msg[0] == '\0')
			fuzz_fail("failed without a message");
		if (res.samples != NULL || res.n != 0 || res.meta != NULL)
			fuzz_fail("failed but kept %zu samples", res.n);
	} else {
		if (res.n == 0)
			fuzz_fail("succeeded without a sample");
		for (size_t i = 0; i < res.n; i++)
			if (res.samples[i].engine_ns <= 0 ||
			    res.samples[i].prompt_tokens != cell.prompt_tokens ||
			    res.samples[i].gen_tokens != cell.gen_tokens)
				fuzz_fail("sample %zu: %lld ns for %d/%d tokens",
				    i, (long long)res.samples[i].engine_ns,
				    res.samples[i].prompt_tokens,
				    res.samples[i].gen_tokens);
	}
	parse_result_release(&res);
	free(arg);
	free(out);
	return 0;
}
