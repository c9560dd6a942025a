/*
 * values.c: parsers for the value types of the configuration and the
 * command line: durations, percentages, sizes, lists of lengths, metrics,
 * listen addresses; the bound on a regex parser's size.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

int
conf_parse_duration(const char *s, int64_t *ms)
{
	static const struct {
		const char *unit;
		int64_t ms;
	} units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
		{ "d", 86400000 },
	};
	char *end;
	long long v;
	int too_big;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if ((errno != 0 && errno != ERANGE) || end == s)
		return -1;
	/* Digits too many for strtoll are still a duration, a long one. */
	too_big = errno == ERANGE;
	for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++)
		if (strcmp(end, units[i].unit) == 0) {
			if (too_big || v > CONF_DURATION_MAX_MS / units[i].ms)
				return -2;
			*ms = v * units[i].ms;
			return 0;
		}
	return -1;
}

int
conf_parse_percent(const char *s, double *fraction)
{
	char *end;
	double v;

	if ((s[0] < '0' || s[0] > '9') && s[0] != '.')
		return -1;
	v = strtod(s, &end);
	if (end == s || strcmp(end, "%") != 0 || !isfinite(v) || v > 1e6)
		return -1;
	*fraction = v / 100.0;
	return 0;
}

int
conf_parse_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	uint64_t mult = 1;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (*end != '\0') {
		const char *u = strchr(units, end[0] & ~0x20);

		if (u == NULL || end[0] == '\0' ||
		    !(end[1] == '\0' || (end[1] == 'B' && end[2] == '\0') ||
		    (end[1] == 'i' && end[2] == 'B' && end[3] == '\0')))
			return -1;
		for (const char *p = units; p <= u; p++)
			mult *= 1024;
	}
	if (v > UINT64_MAX / mult)
		return -1;
	*bytes = v * mult;
	return 0;
}

int
conf_parse_lengths(const char *s, int *out, size_t max, size_t *n)
{
	struct strv items = STRV_INIT;
	int rc = -1;

	*n = 0;
	if (strv_split(&items, s, ',') < 0)
		goto done;
	if (items.n > max)
		goto done;
	for (size_t i = 0; i < items.n; i++) {
		char *end;
		long v;

		errno = 0;
		v = strtol(items.v[i], &end, 10);
		if (errno || *end != '\0' || v < 0 || v > 1000000 ||
		    items.v[i][0] < '0' || items.v[i][0] > '9')
			goto done;
		for (size_t j = 0; j < *n; j++)
			if (out[j] == (int)v)
				goto done;	/* a duplicate is a typo */
		out[(*n)++] = (int)v;
	}
	rc = 0;
done:
	strv_clear(&items);
	return rc;
}

int
conf_parse_metric(const char *s, struct conf_metric *m)
{
	char *end;
	long v;

	m->n = 0;
	if (strcmp(s, "per-token") == 0) {
		m->kind = METRIC_PER_TOKEN;
		return 0;
	}
	if (strcmp(s, "fixed") == 0) {
		m->kind = METRIC_FIXED;
		return 0;
	}
	if (strncmp(s, "pp", 2) == 0)
		m->kind = METRIC_PP;
	else if (strncmp(s, "tg", 2) == 0)
		m->kind = METRIC_TG;
	else
		return -1;
	if (s[2] < '1' || s[2] > '9')
		return -1;
	v = strtol(s + 2, &end, 10);
	if (*end != '\0' || v <= 0 || v > 1000000)
		return -1;
	m->n = (int)v;
	return 0;
}

/*
 * What glibc's regcomp() builds grows with the regex expanded: it copies
 * "x{m,n}" n times, so nested bounds multiply, and its memory grows with
 * the square of the optional copies ("(.*){1,4000}" takes 2 GB).  The
 * estimate below counts each atom (a character, '.', a bracket expression,
 * an escape), '|' and group as 1, doubles what '*', '+' and '?' follow,
 * and multiplies what a bound follows by its largest count.  At
 * CONF_REGEX_MAX_NODES the worst regexes found take some 25 MB and a
 * second to compile.
 */
#define REGEX_MAX_DEPTH	32
#define REGEX_COUNT_MAX	100000	/* larger bound counts are clamped */

static uint64_t
regex_sat(uint64_t v)
{
	return v > CONF_REGEX_MAX_NODES ? CONF_REGEX_MAX_NODES + 1 : v;
}

/* The byte after the bracket expression opening at p, or NULL when it is
 * not closed (regcomp reports that). */
static const char *
regex_skip_bracket(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p != '\0' && *p != ']') {
		if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			const char *q = p + 2;

			while (*q != '\0' && !(q[0] == p[1] && q[1] == ']'))
				q++;
			if (*q == '\0')
				return NULL;
			p = q + 2;
		} else
			p++;
	}
	return *p == ']' ? p + 1 : NULL;
}

/* A bound "{m}", "{m,}", "{m,n}" or "{,n}" at p: the byte after it, with
 * the most copies it makes in *copies; NULL when p does not start one. */
static const char *
regex_bound(const char *p, uint64_t *copies)
{
	uint64_t m = 0, n;
	const char *q = p + 1;

	if (!isdigit((unsigned char)*q) && *q != ',')
		return NULL;
	for (; isdigit((unsigned char)*q); q++)
		if ((m = m * 10 + (uint64_t)(*q - '0')) > REGEX_COUNT_MAX)
			m = REGEX_COUNT_MAX;
	n = m;
	if (*q == ',') {
		q++;
		if (*q == '}')
			n = m + 1;
		for (n = isdigit((unsigned char)*q) ? 0 : n;
		    isdigit((unsigned char)*q); q++)
			if ((n = n * 10 + (uint64_t)(*q - '0')) >
			    REGEX_COUNT_MAX)
				n = REGEX_COUNT_MAX;
	}
	if (*q != '}')
		return NULL;
	*copies = n > m ? n : m;
	if (*copies == 0)
		*copies = 1;
	return q + 1;
}

int
conf_check_regex(const char *re, const char **why)
{
	/* per open group: its size so far, and the size of its last atom,
	 * which a following repetition multiplies */
	uint64_t size[REGEX_MAX_DEPTH + 1], last[REGEX_MAX_DEPTH + 1];
	uint64_t atom, copies, nodes = 0;
	int depth = 0;
	const char *p = re, *q;

	if (strlen(re) > CONF_REGEX_MAX_LEN) {
		*why = "regex longer than 1024 bytes";
		return -1;
	}
	size[0] = last[0] = 0;
	while (*p != '\0') {
		atom = 1;
		copies = 0;
		switch (*p) {
		case '(':
			if (depth == REGEX_MAX_DEPTH) {
				*why = "regex nests groups deeper than 32";
				return -1;
			}
			depth++;
			size[depth] = last[depth] = 0;
			p++;
			continue;
		case ')':
			/* an unmatched ')' is an ordinary character */
			if (depth > 0)
				atom = regex_sat(size[depth--] + 1);
			p++;
			break;
		case '|':
			size[depth] = regex_sat(size[depth] + 1);
			last[depth] = 0;
			p++;
			continue;
		case '*':
		case '+':
		case '?':
			copies = 2;
			p++;
			break;
		case '{':
			if ((q = regex_bound(p, &copies)) == NULL)
				copies = 0;
			p = q != NULL ? q : p + 1;
			break;
		case '[':
			q = regex_skip_bracket(p);
			p = q != NULL ? q : p + strlen(p);
			break;
		case '\\':
			if (p[1] >= '1' && p[1] <= '9') {
				*why = "regex has a back-reference (\\1 to "
				    "\\9), which can take exponential time";
				return -1;
			}
			p += p[1] != '\0' ? 2 : 1;
			break;
		default:
			p++;
			break;
		}
		if (copies > 0) {
			/* size >= last always holds, so this never wraps */
			size[depth] = regex_sat(size[depth] - last[depth] +
			    last[depth] * copies);
			last[depth] = regex_sat(last[depth] * copies);
		} else {
			size[depth] = regex_sat(size[depth] + atom);
			last[depth] = atom;
		}
		if (size[depth] > CONF_REGEX_MAX_NODES)
			break;
	}
	/* groups left open (regcomp refuses them) still count */
	for (int d = 0; d <= depth; d++)
		nodes = regex_sat(nodes + size[d]);
	if (nodes > CONF_REGEX_MAX_NODES) {
		*why = "regex too complex: its repetitions expand to more "
		    "than 1000 elements";
		return -1;
	}
	return 0;
}

const char *
conf_metric_name(const struct conf_metric *m, char *buf, size_t len)
{
	switch (m->kind) {
	case METRIC_PER_TOKEN:
		snprintf(buf, len, "per-token");
		break;
	case METRIC_FIXED:
		snprintf(buf, len, "fixed");
		break;
	case METRIC_PP:
		snprintf(buf, len, "pp%d", m->n);
		break;
	case METRIC_TG:
		snprintf(buf, len, "tg%d", m->n);
		break;
	}
	return buf;
}

const char *
conf_source_name(enum conf_source s)
{
	static const char *const names[] = { "github", "url", "git", "dir" };

	return names[s];
}

const char *
conf_parser_name(enum conf_parser p)
{
	static const char *const names[] = { "wall", "llama-bench", "json",
	    "regex" };

	return names[p];
}

const char *
conf_text_parser_name(enum conf_text_parser p)
{
	static const char *const names[] = { "stdout", "json", "regex" };

	return names[p];
}

const char *
conf_unit_name(enum conf_unit u)
{
	static const char *const names[] = { "ns", "us", "ms", "s", "tps" };

	return names[u];
}

int
conf_parse_listen(const char *s, char *address, size_t len, int *port)
{
	const char *colon = strrchr(s, ':'), *host = s;
	unsigned char bin[16];
	size_t hlen;
	char *end;
	long v;
	int family = AF_INET;

	if (colon == NULL)
		return -1;
	hlen = (size_t)(colon - s);
	if (s[0] == '[') {
		if (hlen < 2 || s[hlen - 1] != ']')
			return -1;
		host = s + 1;
		hlen -= 2;
		family = AF_INET6;
	}
	if (hlen == 0 || hlen >= len)
		return -1;
	memcpy(address, host, hlen);
	address[hlen] = '\0';
	if (inet_pton(family, address, bin) != 1)
		return -1;
	if (colon[1] < '0' || colon[1] > '9')
		return -1;
	errno = 0;
	v = strtol(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}
