/*
 * key_use.c: the key table (keys.c) put to work: a key's value set into
 * its field, the defaults, the fields freed, and the reference
 * generated for docs/config-keys.md.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/regex.h"
#include "conf.h"
#include "conf_int.h"
#include "cron.h"
#include "keys.h"

/* --- the setters of the types --- */

void
conf_set_str(char **field, const char *v)
{
	free(*field);
	*field = conf_xstrdup(v);
}

/* A path relative to the config file's folder becomes absolute. */
void
conf_set_path(struct conf_loader *ld, char **field, const char *v)
{
	free(*field);
	if (v[0] == '/')
		*field = conf_xstrdup(v);
	else if ((*field = fs_join(ld->c->dir, v)) == NULL)
		abort();
}

static int
want_bool(struct conf_loader *ld, const struct conf_entry *en, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(en->value, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(en->value, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	ld_problem(ld, en->line, "%s: expected true or false, got '%s'",
	    en->label, en->value);
	return -1;
}

/* A duration from min_ms (0 or 1) to CONF_DURATION_MAX_MS. */
void
conf_want_duration(struct conf_loader *ld, const struct conf_entry *en,
    int64_t min_ms, int64_t *ms)
{
	int64_t v;
	int rc = conf_parse_duration(en->value, &v);

	if (rc == -1)
		ld_problem(ld, en->line,
		    "%s: expected a duration such as 250ms, "
		    "30s, 10m, 2h or 30d, got '%s'",
		    en->label, en->value);
	else if (rc < 0 || v < min_ms)
		ld_problem(ld, en->line, "%s: duration '%s' is out of range "
		    "(expected %s to %lldd)", en->label, en->value,
		    min_ms > 0 ? "1ms" : "0s",
		    (long long)(CONF_DURATION_MAX_MS / 86400000));
	else
		*ms = v;
}

static void
want_percent(struct conf_loader *ld, const struct conf_entry *en, double *f)
{
	if (conf_parse_percent(en->value, f) < 0)
		ld_problem(ld, en->line,
		    "%s: expected a percentage such as 20%%, "
		    "got '%s'",
		    en->label, en->value);
}

static void
want_int(struct conf_loader *ld, const struct conf_entry *en, int lo, int hi,
    int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(en->value, &end, 10);
	if (errno || end == en->value || *end != '\0' || v < lo || v > hi) {
		ld_problem(ld, en->line,
		    "%s: expected an integer from %d to %d, "
		    "got '%s'",
		    en->label, lo, hi, en->value);
		return;
	}
	*out = (int)v;
}

static void
want_lengths(
    struct conf_loader *ld, const struct conf_entry *en, int *out, size_t *n)
{
	if (conf_parse_lengths(en->value, out, CONF_MAX_LENGTHS, n) < 0 ||
	    *n == 0)
		ld_problem(ld, en->line,
		    "%s: expected a comma-separated list of "
		    "distinct token counts such as 512,2048, got '%s'",
		    en->label, en->value);
}

/* A size above zero, such as 4G or 512M. */
static void
want_size(struct conf_loader *ld, const struct conf_entry *en, uint64_t *out)
{
	if (conf_parse_size(en->value, out) < 0 || *out == 0)
		ld_problem(ld, en->line,
		    "%s: expected a size above zero such as "
		    "16G or 512M, got '%s'",
		    en->label, en->value);
}

/* 64 hex digits into *out, lowercased. */
static void
want_sha256(struct conf_loader *ld, const struct conf_entry *en, char **out)
{
	size_t n = strlen(en->value);
	int ok = n == 64;

	for (size_t i = 0; ok && i < n; i++)
		ok = isxdigit((unsigned char)en->value[i]);
	if (!ok)
		ld_problem(ld, en->line, "%s: expected 64 hex digits, got '%s'",
		    en->label, en->value);
	conf_set_str(out, en->value);
	for (char *p = *out; *p; p++)
		*p = (char)tolower((unsigned char)*p);
}

int
conf_valid_url(const char *v, int allow_file)
{
	return strncmp(v, "https://", 8) == 0 ||
	    strncmp(v, "http://", 7) == 0 ||
	    (allow_file && strncmp(v, "file://", 7) == 0);
}

void
conf_or_list(const char *const *names, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	while (names[n])
		n++;
	for (size_t i = 0; i < n; i++) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, "%s%s", i == 0 ? "" :
		    i + 1 == n ? " or " : ", ", names[i]);
	}
}

static void
want_enum(struct conf_loader *ld, const struct conf_entry *en,
    const char *const *names, int *out)
{
	char list[256];

	for (int i = 0; names[i]; i++)
		if (strcmp(en->value, names[i]) == 0) {
			*out = i;
			return;
		}
	conf_or_list(names, list, sizeof(list));
	ld_problem(ld, en->line, "%s: expected %s, got '%s'", en->label, list,
	    en->value);
}

static void
want_env(struct conf_loader *ld, const struct conf_entry *en, struct strv *v)
{
	const char *eq = strchr(en->value, '=');

	if (eq == NULL || eq == en->value)
		ld_problem(ld, en->line, "%s: expected NAME=VALUE, got '%s'",
		    en->label, en->value);
	else
		strv_push(v, en->value);
}

void
conf_key_set(struct conf_loader *ld, void *obj, const struct conf_key *k,
    const struct conf_entry *en)
{
	char *f = (char *)obj + k->off;

	switch (k->type) {
	case CK_STR:
		conf_set_str((char **)(void *)f, en->value);
		break;
	case CK_PATH:
		conf_set_path(ld, (char **)(void *)f, en->value);
		break;
	case CK_URL:
		if (!conf_valid_url(en->value, 0))
			ld_problem(ld, en->line, "%s: expected an http(s) URL, "
			    "got '%s'", en->label, en->value);
		conf_set_str((char **)(void *)f, en->value);
		break;
	case CK_SHA256:
		want_sha256(ld, en, (char **)(void *)f);
		break;
	case CK_BOOL:
		want_bool(ld, en, (int *)(void *)f);
		break;
	case CK_INT:
		want_int(ld, en, (int)k->lo, (int)k->hi, (int *)(void *)f);
		break;
	case CK_ENUM:
		want_enum(ld, en, k->names, (int *)(void *)f);
		break;
	case CK_DURATION:
		conf_want_duration(ld, en, k->lo, (int64_t *)(void *)f);
		break;
	case CK_PERCENT:
		want_percent(ld, en, (double *)(void *)f);
		break;
	case CK_SIZE:
		want_size(ld, en, (uint64_t *)(void *)f);
		break;
	case CK_LENGTHS:
		want_lengths(ld, en, (int *)(void *)f,
		    (size_t *)(void *)((char *)obj + k->off_n));
		break;
	case CK_ENV:
		want_env(ld, en, (struct strv *)(void *)f);
		break;
	case CK_CUSTOM:
		k->set(ld, obj, en);
		break;
	}
	if (k->line_off)
		*(int *)(void *)((char *)obj + k->line_off) = en->line;
}

void
conf_key_defaults(struct conf_loader *ld, enum conf_section section,
    void *obj, const char *label)
{
	for (size_t i = 0; i < conf_nkeys; i++) {
		const struct conf_key *k = &conf_keys[i];
		struct conf_entry en;
		size_t before = ld->problems->n;

		if (k->section != section || k->init == NULL)
			continue;
		memset(&en, 0, sizeof(en));
		en.key = k->name;
		en.value = k->init;
		snprintf(en.label, sizeof(en.label), "%s.%s", label, k->name);
		conf_key_set(ld, obj, k, &en);
		/* A default that its own key refuses is a bug of the table. */
		assert(ld->problems->n == before);
		(void)before;
		if (k->line_off)
			*(int *)(void *)((char *)obj + k->line_off) = 0;
	}
}

/* What conf_free() frees at k's field. */
static enum conf_owned
owned(const struct conf_key *k)
{
	switch (k->type) {
	case CK_STR:
	case CK_PATH:
	case CK_URL:
	case CK_SHA256:
		return CO_STR;
	case CK_ENV:
		return CO_STRV;
	case CK_CUSTOM:
		return k->owned;
	default:
		return CO_NONE;
	}
}

void
conf_key_free(enum conf_section section, void *obj)
{
	for (size_t i = 0; i < conf_nkeys; i++) {
		const struct conf_key *k = &conf_keys[i];
		char *f = (char *)obj + k->off;

		if (k->section != section)
			continue;
		if (owned(k) == CO_STR) {
			free(*(char **)(void *)f);
			*(char **)(void *)f = NULL;
		} else if (owned(k) == CO_STRV)
			strv_clear((struct strv *)(void *)f);
	}
}

/* The value's form for people: the row's, or its type's. */
static const char *
form(const struct conf_key *k, char *buf, size_t len)
{
	static const char *const forms[] = {
		[CK_STR] = "TEXT", [CK_PATH] = "PATH", [CK_URL] = "URL",
		[CK_SHA256] = "SHA256", [CK_BOOL] = "yes | no",
		[CK_INT] = "N", [CK_DURATION] = "DURATION",
		[CK_PERCENT] = "PERCENT", [CK_SIZE] = "SIZE",
		[CK_LENGTHS] = "N,N,...", [CK_ENV] = "NAME=VALUE",
	};
	const char *const *n = k->names;

	if (k->form)
		return k->form;
	if (k->type == CK_INT) {
		snprintf(buf, len, "%lld to %lld", (long long)k->lo,
		    (long long)k->hi);
		return buf;
	}
	if (k->type == CK_ENUM) {
		buf[0] = '\0';
		for (size_t i = 0; n[i]; i++) {
			size_t used = strlen(buf);

			snprintf(buf + used, len - used, "%s%s", i ? " | " : "",
			    n[i]);
		}
		return buf;
	}
	assert(k->type < sizeof(forms) / sizeof(forms[0]) && forms[k->type]);
	return forms[k->type];
}

void
conf_keys_reference(FILE *out)
{
	int shown = -1;

	fputs("# bisectd.conf: every key\n\n"
	    "Generated from the key table (`config/keys.c`) by `test_conf_keys "
	    "--write`;\nchange the table, not this file. "
	    "`config/bisectd.conf.example` shows every key\nwith a comment, "
	    "and `bisectd.conf(5)` is made from it.\n\n"
	    "Durations are an integer with a unit (`ms`, `s`, `m`, `h`, `d`), "
	    "percentages\nend in `%`, sizes in `K`, `M`, `G` or `T`, lists are "
	    "comma-separated.\n", out);
	for (size_t i = 0; i < conf_nkeys; i++) {
		const struct conf_key *k = &conf_keys[i];
		char buf[256];

		if ((int)k->section != shown) {
			shown = (int)k->section;
			fprintf(out, "\n## [%s%s]\n\n| key | value | default "
			    "| meaning |\n|---|---|---|---|\n",
			    conf_section_name(k->section),
			    k->section == CONF_BISECTD ||
			    k->section == CONF_YARDSTICK ? "" : " \"NAME\"");
		}
		fprintf(out, "| `%s` | ", k->name);
		/* A '|' of the value's form is not the table's. */
		for (const char *p = form(k, buf, sizeof(buf)); *p; p++)
			fputs(*p == '|' ? "\\|" : (char[2]){ *p, 0 }, out);
		fprintf(out, " | %s | %s |\n", k->init ? k->init : k->dflt ?
		    k->dflt : "", k->doc);
	}
}
