/*
 * values.c: parsers for the value types of the configuration and the
 * command line: durations, percentages, sizes, lists of lengths, metrics,
 * listen addresses; the bound on a regex parser's size.
 */
#include <arpa/inet.h>
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
	if (strcmp(s, "gpu-memory") == 0 || strcmp(s, "rss") == 0) {
		m->kind = METRIC_MEMORY;
		m->n = s[0] == 'g' ? MEM_GPU : MEM_RSS;
		return 0;
	}
	for (int f = 0; f < FIG_N; f++)
		if (strcmp(s, conf_serve_figure_name(f)) == 0) {
			m->kind = METRIC_SERVE;
			m->n = f;
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
	case METRIC_SERVE:
		snprintf(buf, len, "%s", conf_serve_figure_name(m->n));
		break;
	case METRIC_MEMORY:
		snprintf(buf, len, "%s", m->n == MEM_GPU ? "gpu-memory" :
		    "rss");
		break;
	case METRIC_CANARY:
		snprintf(buf, len, "output");
		break;
	}
	return buf;
}

const char *
conf_mode_name(enum conf_mode m)
{
	return m == MODE_SERVE ? "serve" : m == MODE_SERVER ? "server" :
	    "bench";
}

const char *
conf_serve_figure_name(enum conf_serve_figure f)
{
	static const char *const names[FIG_N] = {
		"ttft-p50", "ttft-p90", "ttft-p99",
		"tpot-p50", "tpot-p90", "tpot-p99",
		"itl-p50", "itl-p90", "itl-p99",
		"e2e-p50", "e2e-p90", "e2e-p99"
	};

	return (unsigned)f < FIG_N ? names[f] : "?";
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

const char *
conf_url_redact(const char *url, char *buf, size_t len)
{
	const char *scheme_end = strstr(url, "://"), *auth, *host, *end, *at;

	if (len == 0)
		return buf;
	if (scheme_end == NULL) {
		snprintf(buf, len, "%s", url);
		return buf;
	}
	auth = scheme_end + 3;
	end = auth + strcspn(auth, "/?#");
	host = auth;
	for (at = auth; at < end; at++)
		if (*at == '@')
			host = at + 1;
	snprintf(buf, len, "%.*s%.*s%s", (int)(auth - url), url,
	    (int)(end - host), host, *end != '\0' ? "/..." : "");
	return buf;
}

const char *
conf_alert_shown(const struct conf_alert *a, char *buf, size_t len)
{
	if (a->kind == ALERT_WEBHOOK && a->target != NULL)
		return conf_url_redact(a->target, buf, len);
	snprintf(buf, len, "%s", a->target ? a->target : "");
	return buf;
}

/* One part of a GitHub owner or repository name: [A-Za-z0-9._-], not
 * "." or "..", at most 100 bytes. */
static size_t
github_name_len(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-");

	if (n == 0 || n > 100 || (n == 1 && s[0] == '.') ||
	    (n == 2 && s[0] == '.' && s[1] == '.'))
		return 0;
	return n;
}

int
conf_github_target(const char *s, char *repo, size_t len, long *number)
{
	size_t o = github_name_len(s), r;
	const char *p;
	char *end;
	long n = 0;

	if (o == 0 || s[o] != '/' || (r = github_name_len(s + o + 1)) == 0)
		return 0;
	p = s + o + 1 + r;
	if (*p == '#') {
		if (p[1] < '1' || p[1] > '9' || strlen(p + 1) > 9)
			return 0;
		n = strtol(p + 1, &end, 10);
		if (*end != '\0')
			return 0;
	} else if (*p != '\0')
		return 0;
	if (repo != NULL)
		snprintf(repo, len, "%.*s", (int)(o + 1 + r), s);
	if (number != NULL)
		*number = n;
	return 1;
}

int
conf_http_loopback(const struct conf *c)
{
	unsigned char a[16];

	if (c->http == NULL)
		return 1;
	if (inet_pton(AF_INET, c->http_address, a) == 1)
		return a[0] == 127;
	return inet_pton(AF_INET6, c->http_address, a) == 1 &&
	    memcmp(a, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16) == 0;
}
