/*
 * parse.c: the output parsers (see parse.h).  jansson reads llama-bench
 * records and json:PATH documents, common/regex.c (PCRE2) the regex kind.
 * Nothing here keeps state between calls; a result owns all it points to.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/err.h"
#include "common/regex.h"
#include "parse.h"

/* Longest name between dots in a json path, and the longest number text
 * a regex may capture. */
#define NAME_MAX_LEN 256
#define NUMBER_MAX_LEN 64

/* How many non-matching llama-bench records a message lists. */
#define SEEN_MAX 8

static const char *
unit_name(enum conf_unit u)
{
	switch (u) {
	case UNIT_NS:
		return "ns";
	case UNIT_US:
		return "us";
	case UNIT_MS:
		return "ms";
	case UNIT_S:
		return "s";
	case UNIT_TPS:
		return "tok/s";
	}
	return "?";
}

/*
 * value in unit as whole nanoseconds.  A time must be positive: a zero
 * or negative figure is a broken report, not a fast run.
 */
static int
to_ns(double value, enum conf_unit unit, const struct parse_cell *cell,
    int64_t *ns, struct err *e)
{
	double t, tokens;

	if (!isfinite(value) || value <= 0)
		return err_set(e, "value %g %s is not a positive time", value,
		    unit_name(unit));
	switch (unit) {
	case UNIT_NS:
		t = value;
		break;
	case UNIT_US:
		t = value * 1e3;
		break;
	case UNIT_MS:
		t = value * 1e6;
		break;
	case UNIT_S:
		t = value * 1e9;
		break;
	case UNIT_TPS:
		tokens = (double)cell->prompt_tokens + cell->gen_tokens;
		if (tokens <= 0)
			return err_set(e, "cannot turn %g tok/s into a time: "
			    "the cell has no tokens", value);
		t = tokens / value * 1e9;
		break;
	default:
		return err_set(e, "unknown unit %d", (int)unit);
	}
	if (t < 1 || t > 9e18)
		return err_set(e, "value %g %s is out of range as a time",
		    value, unit_name(unit));
	*ns = llround(t);
	return 0;
}

static int
add_sample(struct parse_result *res, const struct parse_cell *cell,
    int64_t ns, struct err *e)
{
	struct parse_sample *v;

	v = realloc(res->samples, (res->n + 1) * sizeof(*v));
	if (v == NULL)
		return err_errno(e, "cannot store sample");
	res->samples = v;
	v[res->n].prompt_tokens = cell->prompt_tokens;
	v[res->n].gen_tokens = cell->gen_tokens;
	v[res->n].engine_ns = ns;
	res->n++;
	return 0;
}

/* A NUL-terminated copy of the output up to len bytes or its first NUL. */
static char *
output_text(const char *out, size_t len, struct err *e)
{
	size_t n = out ? strnlen(out, len) : 0;
	char *s = malloc(n + 1);

	if (s == NULL) {
		err_errno(e, "cannot copy output");
		return NULL;
	}
	if (n > 0)
		memcpy(s, out, n);
	s[n] = '\0';
	return s;
}

/* ---- llama-bench ---- */

/*
 * Collect the records of -o json (one array) or -o jsonl (one object a
 * line; other lines, such as a log line on stdout, are passed over).
 * Returns a new array reference or NULL with e set.
 */
static json_t *
llama_records(const char *text, struct err *e)
{
	const char *p = text, *eol;
	json_error_t je;
	json_t *all, *rec;
	int lineno = 0;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '[') {
		if ((all = json_loads(text, 0, &je)) == NULL) {
			err_set(e, "llama-bench output is not valid JSON: "
			    "line %d column %d: %s", je.line, je.column,
			    je.text);
			return NULL;
		}
		return all;
	}
	if ((all = json_array()) == NULL) {
		err_set(e, "out of memory");
		return NULL;
	}
	for (p = text; *p != '\0'; p = *eol ? eol + 1 : eol) {
		const char *s = p;

		lineno++;
		eol = strchr(p, '\n');
		if (eol == NULL)
			eol = p + strlen(p);
		while (s < eol && isspace((unsigned char)*s))
			s++;
		if (s == eol || *s != '{')
			continue;
		rec = json_loadb(s, (size_t)(eol - s), 0, &je);
		if (rec == NULL) {
			err_set(e, "llama-bench output line %d is not valid "
			    "JSON: column %d: %s", lineno, je.column, je.text);
			json_decref(all);
			return NULL;
		}
		if (json_array_append_new(all, rec) < 0) {
			err_set(e, "out of memory");
			json_decref(all);
			return NULL;
		}
	}
	if (json_array_size(all) == 0) {
		err_set(e, "no llama-bench records (a JSON array or JSON "
		    "lines) in output");
		json_decref(all);
		return NULL;
	}
	return all;
}

/* 1 and *v when rec has an integer member key, else 0. */
static int
int_member(const json_t *rec, const char *key, json_int_t *v)
{
	const json_t *j = json_object_get(rec, key);

	if (!json_is_integer(j))
		return 0;
	*v = json_integer_value(j);
	return 1;
}

/* Append "pp512", "tg128", "pp512+tg128" or "?" to a list for messages. */
static void
describe_record(const json_t *rec, char *seen, size_t len, int count)
{
	json_int_t np, ng;
	size_t used = strlen(seen);
	const char *sep = count > 0 ? ", " : "";

	if (count == SEEN_MAX)
		snprintf(seen + used, len - used, ", ...");
	if (count >= SEEN_MAX)
		return;
	if (!int_member(rec, "n_prompt", &np) ||
	    !int_member(rec, "n_gen", &ng))
		snprintf(seen + used, len - used, "%sa record without "
		    "integer n_prompt and n_gen", sep);
	else if (ng == 0)
		snprintf(seen + used, len - used, "%spp%" JSON_INTEGER_FORMAT,
		    sep, np);
	else if (np == 0)
		snprintf(seen + used, len - used, "%stg%" JSON_INTEGER_FORMAT,
		    sep, ng);
	else
		snprintf(seen + used, len - used, "%spp%" JSON_INTEGER_FORMAT
		    "+tg%" JSON_INTEGER_FORMAT, sep, np, ng);
}

/* The one record for the cell; n_depth other than 0 is another test. */
static const json_t *
llama_pick(const json_t *records, const struct parse_cell *cell,
    struct err *e)
{
	const json_t *rec, *found = NULL;
	json_int_t np, ng, depth;
	char seen[512] = "";
	int count = 0, matches = 0;
	size_t i;

	for (i = 0; i < json_array_size(records); i++) {
		rec = json_array_get(records, i);
		if (!json_is_object(rec)) {
			err_set(e, "llama-bench record %zu is not an object",
			    i + 1);
			return NULL;
		}
		if (int_member(rec, "n_prompt", &np) &&
		    int_member(rec, "n_gen", &ng) &&
		    np == cell->prompt_tokens && ng == cell->gen_tokens &&
		    (!int_member(rec, "n_depth", &depth) || depth == 0)) {
			if (found == NULL)
				found = rec;
			matches++;
			continue;
		}
		describe_record(rec, seen, sizeof(seen), count++);
	}
	if (matches > 1) {
		err_set(e, "%d records with n_prompt=%d n_gen=%d in "
		    "llama-bench output; the command must run one setting",
		    matches, cell->prompt_tokens, cell->gen_tokens);
		return NULL;
	}
	if (found == NULL)
		err_set(e, "no record with n_prompt=%d n_gen=%d in llama-bench "
		    "output (found: %s)", cell->prompt_tokens, cell->gen_tokens,
		    count ? seen : "nothing");
	return found;
}

/* The small metadata object kept beside the samples; NULL if none. */
static char *
llama_meta(const json_t *rec, struct err *e)
{
	static const char *const keys[] = {
		"build_commit", "build_number", "backends", "backend",
		"n_threads", "avg_ns", "stddev_ns", "cpu_info",
		"model_type", "model_size", "model_n_params",
	};
	json_t *meta, *v;
	char *s;
	size_t i;

	if ((meta = json_object()) == NULL) {
		err_set(e, "out of memory");
		return NULL;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = json_object_get(rec, keys[i]);
		if (v == NULL || json_is_object(v) || json_is_array(v))
			continue;
		/* Newer llama-bench says "backends", older "backend". */
		if (json_object_set(meta, strcmp(keys[i], "backends") == 0 ?
		    "backend" : keys[i], v) < 0) {
			json_decref(meta);
			err_set(e, "out of memory");
			return NULL;
		}
	}
	s = json_dumps(meta, JSON_COMPACT);
	json_decref(meta);
	if (s == NULL)
		err_set(e, "out of memory");
	return s;
}

static int
llama_sample(const json_t *v, const char *what, size_t i,
    const struct parse_cell *cell, struct parse_result *res, struct err *e)
{
	int64_t ns = 0;

	if (!json_is_number(v))
		return err_set(e, "record pp%d/tg%d: %s[%zu] is not a number",
		    cell->prompt_tokens, cell->gen_tokens, what, i);
	if (to_ns(json_number_value(v), UNIT_NS, cell, &ns, e) < 0)
		return err_prefix(e, "record pp%d/tg%d: %s[%zu]",
		    cell->prompt_tokens, cell->gen_tokens, what, i);
	return add_sample(res, cell, ns, e);
}

static int
parse_llama(const struct parse_cell *cell, const char *text,
    struct parse_result *res, struct err *e)
{
	const json_t *rec, *samples, *avg;
	json_t *records;
	size_t i;
	int rc = -1;

	if ((records = llama_records(text, e)) == NULL)
		return -1;
	if ((rec = llama_pick(records, cell, e)) == NULL)
		goto out;
	samples = json_object_get(rec, "samples_ns");
	avg = json_object_get(rec, "avg_ns");
	if (samples != NULL && !json_is_array(samples)) {
		err_set(e, "record pp%d/tg%d: samples_ns is not an array",
		    cell->prompt_tokens, cell->gen_tokens);
		goto out;
	}
	if (json_array_size(samples) > 0) {
		for (i = 0; i < json_array_size(samples); i++)
			if (llama_sample(json_array_get(samples, i),
			    "samples_ns", i, cell, res, e) < 0)
				goto out;
	} else if (avg != NULL) {
		/* Builds before samples_ns reported only the mean. */
		if (llama_sample(avg, "avg_ns", 0, cell, res, e) < 0)
			goto out;
	} else {
		err_set(e, "record pp%d/tg%d has neither samples_ns nor "
		    "avg_ns", cell->prompt_tokens, cell->gen_tokens);
		goto out;
	}
	if ((res->meta = llama_meta(rec, e)) == NULL)
		goto out;
	rc = 0;
out:
	json_decref(records);
	return rc;
}

/* ---- json:PATH ---- */

/*
 * Follow path ("a.b[0].c", "[2].t") from root.  With root NULL only the
 * syntax is checked.  Returns 0 with *found set (borrowed), or -1.
 */
static int
json_follow(const json_t *root, const char *path, const json_t **found,
    struct err *e)
{
	const json_t *cur = root;
	const char *p = path;
	char name[NAME_MAX_LEN];
	unsigned long idx;
	char *end;
	size_t n;

	for (;;) {
		n = strcspn(p, ".[]");
		if (n == 0 && (*p != '[' || p != path))
			return err_set(e, "json path '%s': empty name at "
			    "offset %zu", path, (size_t)(p - path));
		if (n > 0) {
			if (n >= sizeof(name))
				return err_set(e, "json path '%s': name too "
				    "long", path);
			memcpy(name, p, n);
			name[n] = '\0';
			p += n;
			if (root != NULL && (!json_is_object(cur) ||
			    (cur = json_object_get(cur, name)) == NULL))
				return err_set(e, "json path '%s': nothing at "
				    "'%.*s' in the output", path,
				    (int)(p - path), path);
		}
		while (*p == '[') {
			if (!isdigit((unsigned char)p[1]))
				return err_set(e, "json path '%s': expected an "
				    "index after '['", path);
			errno = 0;
			idx = strtoul(p + 1, &end, 10);
			if (*end != ']' || errno != 0)
				return err_set(e, "json path '%s': expected "
				    "']' at offset %zu", path,
				    (size_t)(end - path));
			p = end + 1;
			if (root != NULL && (!json_is_array(cur) ||
			    idx >= json_array_size(cur)))
				return err_set(e, "json path '%s': nothing at "
				    "'%.*s' in the output", path,
				    (int)(p - path), path);
			if (root != NULL)
				cur = json_array_get(cur, idx);
		}
		if (*p == '\0')
			break;
		if (*p != '.')
			return err_set(e, "json path '%s': unexpected '%c' at "
			    "offset %zu", path, *p, (size_t)(p - path));
		p++;
		if (*p == '\0' || *p == '.' || *p == '[')
			return err_set(e, "json path '%s': empty name at "
			    "offset %zu", path, (size_t)(p - path));
	}
	*found = cur;
	return 0;
}

static int
parse_json(const struct parse_spec *spec, const struct parse_cell *cell,
    const char *text, struct parse_result *res, struct err *e)
{
	const json_t *v;
	json_error_t je;
	json_t *root;
	int64_t ns = 0;
	int rc = -1;

	if ((root = json_loads(text, JSON_DECODE_ANY, &je)) == NULL)
		return err_set(e, "output is not valid JSON: line %d column "
		    "%d: %s", je.line, je.column, je.text);
	if (json_follow(root, spec->arg, &v, e) < 0)
		goto out;
	if (!json_is_number(v)) {
		err_set(e, "json path '%s' is not a number", spec->arg);
		goto out;
	}
	if (to_ns(json_number_value(v), spec->unit, cell, &ns, e) < 0) {
		err_prefix(e, "json path '%s'", spec->arg);
		goto out;
	}
	rc = add_sample(res, cell, ns, e);
out:
	json_decref(root);
	return rc;
}

/* ---- regex:RE ---- */

/* No line matched; cut lines were longer than what was read of them. */
static int
regex_missed(const char *pattern, size_t cut, struct err *e)
{
	if (cut > 0)
		return err_set(e, "regex '%s' did not match (a line is read up "
		    "to its first %d bytes; %zu lines were longer)", pattern,
		    REGEX_LINE_MAX, cut);
	return err_set(e, "regex '%s' did not match", pattern);
}

static int
parse_regex(const struct parse_spec *spec, const struct parse_cell *cell,
    const char *text, struct parse_result *res, struct err *e)
{
	char number[NUMBER_MAX_LEN], *end;
	struct regex_match m;
	struct regex *re;
	size_t n, cut;
	double value;
	int64_t ns = 0;
	int rc;

	if (regex_compile(spec->arg, &re, e) < 0)
		return -1;
	rc = regex_first(re, text, &m, &cut, e);
	regex_free(re);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return regex_missed(spec->arg, cut, e);
	if (!m.captured)
		return err_set(e, "regex '%s' matched but its first group "
		    "captured nothing", spec->arg);
	n = m.eo - m.so;
	if (n == 0 || n >= sizeof(number))
		return err_set(e, "regex '%s' captured %zu characters, not a "
		    "number", spec->arg, n);
	memcpy(number, text + m.so, n);
	number[n] = '\0';
	errno = 0;
	value = strtod(number, &end);
	while (isspace((unsigned char)*end))
		end++;
	if (end == number || *end != '\0' || errno == ERANGE)
		return err_set(e, "regex '%s' captured '%s', not a number",
		    spec->arg, number);
	if (to_ns(value, spec->unit, cell, &ns, e) < 0)
		return err_prefix(e, "regex '%s'", spec->arg);
	return add_sample(res, cell, ns, e);
}

/* ---- entry points ---- */

int
parse_check(const struct parse_spec *spec, struct err *e)
{
	const json_t *unused;
	struct regex *re;

	switch (spec->kind) {
	case PARSER_WALL:
	case PARSER_LLAMA_BENCH:
		return 0;
	case PARSER_JSON:
		if (spec->arg == NULL || *spec->arg == '\0')
			return err_set(e, "json parser needs a path");
		return json_follow(NULL, spec->arg, &unused, e);
	case PARSER_REGEX:
		if (spec->arg == NULL || *spec->arg == '\0')
			return err_set(e, "regex parser needs a regex");
		if (regex_compile(spec->arg, &re, e) < 0)
			return -1;
		regex_free(re);
		return 0;
	}
	return err_set(e, "unknown parser %d", (int)spec->kind);
}

int
parse_output(const struct parse_spec *spec, const struct parse_cell *cell,
    const char *out, size_t len, int64_t wall_ns, struct parse_result *res,
    struct err *e)
{
	char *text;
	int rc;

	res->samples = NULL;
	res->n = 0;
	res->meta = NULL;
	if (spec->kind == PARSER_WALL) {
		if (wall_ns <= 0)
			return err_set(e, "wall time %" PRId64 " ns is not a "
			    "positive time", wall_ns);
		return add_sample(res, cell, wall_ns, e);
	}
	if (parse_check(spec, e) < 0)
		return -1;
	if ((text = output_text(out, len, e)) == NULL)
		return -1;
	switch (spec->kind) {
	case PARSER_LLAMA_BENCH:
		rc = parse_llama(cell, text, res, e);
		break;
	case PARSER_JSON:
		rc = parse_json(spec, cell, text, res, e);
		break;
	default:
		rc = parse_regex(spec, cell, text, res, e);
		break;
	}
	free(text);
	if (rc < 0)
		parse_result_release(res);
	return rc;
}

void
parse_result_release(struct parse_result *res)
{
	free(res->samples);
	free(res->meta);
	res->samples = NULL;
	res->n = 0;
	res->meta = NULL;
}

/* ---- generated text ---- */

int
parse_text_check(const struct parse_text_spec *spec, struct err *e)
{
	struct parse_spec ps = { PARSER_JSON, spec->arg, UNIT_MS };

	switch (spec->kind) {
	case TEXT_STDOUT:
		return 0;
	case TEXT_JSON:
		return parse_check(&ps, e);
	case TEXT_REGEX:
		ps.kind = PARSER_REGEX;
		return parse_check(&ps, e);
	}
	return err_set(e, "unknown text parser %d", (int)spec->kind);
}

/* A malloced, NUL-terminated copy of n bytes at p, within the cap. */
static int
text_copy(const char *p, size_t n, char **text, size_t *tlen, struct err *e)
{
	if (n > PARSE_TEXT_MAX)
		return err_set(e, "generated text of %zu bytes is over the "
		    "%d byte limit", n, PARSE_TEXT_MAX);
	if ((*text = malloc(n + 1)) == NULL)
		return err_errno(e, "cannot copy the generated text");
	if (n > 0)
		memcpy(*text, p, n);
	(*text)[n] = '\0';
	*tlen = n;
	return 0;
}

int
parse_text(const struct parse_text_spec *spec, const char *out, size_t len,
    char **text, size_t *tlen, struct err *e)
{
	const json_t *v;
	json_error_t je;
	json_t *root;
	struct regex_match m;
	struct regex *re;
	char *copy;
	size_t cut;
	int rc;

	*text = NULL;
	*tlen = 0;
	if (parse_text_check(spec, e) < 0)
		return -1;
	if (spec->kind == TEXT_STDOUT)
		return text_copy(out ? out : "", out ? len : 0, text, tlen, e);
	if ((copy = output_text(out, len, e)) == NULL)
		return -1;
	if (spec->kind == TEXT_JSON) {
		root = json_loads(copy, JSON_DECODE_ANY, &je);
		free(copy);
		if (root == NULL)
			return err_set(e, "output is not valid JSON: line %d "
			    "column %d: %s", je.line, je.column, je.text);
		rc = json_follow(root, spec->arg, &v, e);
		if (rc == 0 && !json_is_string(v))
			rc = err_set(e, "json path '%s' is not a string",
			    spec->arg);
		if (rc == 0)
			rc = text_copy(json_string_value(v),
			    json_string_length(v), text, tlen, e);
		json_decref(root);
		return rc;
	}
	if (regex_compile(spec->arg, &re, e) < 0) {
		free(copy);
		return -1;
	}
	rc = regex_first(re, copy, &m, &cut, e);
	regex_free(re);
	if (rc == 0)
		rc = regex_missed(spec->arg, cut, e);
	else if (rc > 0 && !m.captured)
		rc = err_set(e, "regex '%s' matched but its first group "
		    "captured nothing", spec->arg);
	else if (rc > 0)
		rc = text_copy(copy + m.so, m.eo - m.so, text, tlen, e);
	free(copy);
	return rc;
}
