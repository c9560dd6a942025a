/*
 * parse.h: turning an engine's captured output into timing samples.
 * Pure functions: text in, samples out, no I/O, so the stored raw output
 * of a run can be parsed again later with a corrected parser.
 *
 * The kinds are those of the `parser` config key: wall (the runner's own
 * clock is the one sample), llama-bench (its -o json array or -o jsonl
 * lines; each entry of samples_ns is one sample), json:PATH and regex:RE
 * (one number, in the engine's regex-unit).
 */
#ifndef BISECTD_PARSE_H
#define BISECTD_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "config/conf.h"

struct err;

/* How to read one engine's output. */
struct parse_spec {
	enum conf_parser kind;
	const char *arg;	/* json path or regex; NULL for wall and
				 * llama-bench; not owned */
	enum conf_unit unit;	/* unit of the json or regex number */
};

/* The matrix cell the output belongs to. */
struct parse_cell {
	int prompt_tokens;	/* 0 for a decode cell */
	int gen_tokens;		/* 0 for a prefill cell */
};

struct parse_sample {
	int prompt_tokens;
	int gen_tokens;
	int64_t engine_ns;	/* > 0 */
};

struct parse_result {
	struct parse_sample *samples;	/* n entries; owned */
	size_t n;
	char *meta;		/* compact JSON object the engine reported
				 * about itself (llama-bench: build_commit,
				 * build_number, backend, avg_ns, stddev_ns),
				 * or NULL; owned */
};

#define PARSE_RESULT_INIT { NULL, 0, NULL }

/*
 * Check spec->arg before any run: a json path must be well formed
 * ("a.b[0].c"), a regex must compile (common/regex.h) and have a capture
 * group.  Returns 0, or -1 with e naming the problem.
 */
int parse_check(const struct parse_spec *spec, struct err *e);

/*
 * Parse len bytes of a run's stdout (out need not be NUL-terminated and
 * is read only up to its first NUL byte) for the given cell.  wall_ns is
 * the runner's clock for the run, the one sample of PARSER_WALL; the
 * other kinds ignore it.
 *
 * A number in UNIT_TPS becomes a time through the cell's token count:
 * prompt tokens for a prefill cell, gen tokens for a decode cell (their
 * sum when both are set).
 *
 * Returns 0 with res filled (at least one sample; release it with
 * parse_result_release), or -1 with e saying what was missing, e.g.
 * "no record with n_prompt=512 n_gen=0 in llama-bench output", and res
 * left empty.
 */
int parse_output(const struct parse_spec *spec, const struct parse_cell *cell,
    const char *out, size_t len, int64_t wall_ns, struct parse_result *res,
    struct err *e);

/* Free what res holds; leaves it empty and reusable. */
void parse_result_release(struct parse_result *res);

/*
 * Generated text, for the output canary: how to pick it out of a run's
 * stdout (the config's canary-parser).
 */
struct parse_text_spec {
	enum conf_text_parser kind;
	const char *arg;	/* json path or regex; NULL for stdout; not
				 * owned */
};

/* Longest generated text kept; more is a failed canary run. */
#define PARSE_TEXT_MAX (64 * 1024)

/* Check spec->arg as parse_check() does.  Returns 0 or -1 with e set. */
int parse_text_check(const struct parse_text_spec *spec, struct err *e);

/*
 * The generated text in len bytes of stdout: all of it (TEXT_STDOUT,
 * NUL bytes included), the string at a json path (TEXT_JSON: a string,
 * not a number), or the first capture of a regex (TEXT_REGEX, on the
 * output up to its first NUL, a line at a time as the regex:RE timing
 * parser, each line up to its first 4096 bytes).  Returns 0 with *text
 * (malloced, NUL-terminated, *tlen bytes before it), or -1 with e set:
 * no match, not a string, more than PARSE_TEXT_MAX bytes.
 */
int parse_text(const struct parse_text_spec *spec, const char *out,
    size_t len, char **text, size_t *tlen, struct err *e);

#endif
