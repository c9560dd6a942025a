/*
 * urlsrc.c: the url:TEMPLATE release source (the versions come from the
 * config, the URL from the template) and the SHA256SUMS reader it checks
 * them against (see source_impl.h).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/conf.h"
#include "common/err.h"
#include "http.h"
#include "sha256.h"
#include "release_list.h"
#include "source_impl.h"
#include "common/strv.h"

#define SUMS_MAX_BYTES	(1u << 20)
#define SUMS_NAME_MAX	4096

/* One line of a checksum file: its hash and (unescaped) file name. */
struct sums_line {
	char hex[SHA256_HEX_LEN + 1];
	char name[SUMS_NAME_MAX];
};

static int
hex_prefix(const char *p, size_t len, char hex[SHA256_HEX_LEN + 1])
{
	if (len < SHA256_HEX_LEN)
		return 0;
	for (int i = 0; i < SHA256_HEX_LEN; i++) {
		if (!isxdigit((unsigned char)p[i]))
			return 0;
		hex[i] = (char)tolower((unsigned char)p[i]);
	}
	hex[SHA256_HEX_LEN] = '\0';
	return len == SHA256_HEX_LEN || !isxdigit((unsigned char)p[64]);
}

/* Copy name, undoing GNU's "\\" and "\n" escapes when escaped. */
static int
copy_name(char *out, const char *p, size_t len, int escaped)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = p[i];

		if (escaped && c == '\\' && i + 1 < len) {
			c = p[++i] == 'n' ? '\n' : p[i];
		}
		if (o + 1 >= SUMS_NAME_MAX)
			return 0;
		out[o++] = c;
	}
	out[o] = '\0';
	return o > 0;
}

/*
 * Parse one line (without its newline): GNU "HASH  NAME" / "HASH *NAME",
 * optionally escaped with a leading backslash, or the BSD tag form
 * "SHA256 (NAME) = HASH".  1 when it is a valid line.
 */
static int
parse_sums_line(const char *p, size_t len, struct sums_line *l)
{
	int escaped = 0;

	if (len > 0 && p[len - 1] == '\r')
		len--;
	if (len > 8 && strncmp(p, "SHA256 (", 8) == 0) {
		const char *close = NULL;

		for (size_t i = len; i-- > 8; )
			if (p[i] == ')') {
				close = p + i;
				break;
			}
		if (close == NULL || (size_t)(p + len - close) != 4 + 64 ||
		    strncmp(close, ") = ", 4) != 0)
			return 0;
		return hex_prefix(close + 4, 64, l->hex) &&
		    copy_name(l->name, p + 8, (size_t)(close - p - 8), 0);
	}
	if (len > 0 && p[0] == '\\') {
		escaped = 1;
		p++;
		len--;
	}
	if (len < SHA256_HEX_LEN + 3 || !hex_prefix(p, len, l->hex) ||
	    p[64] != ' ' || (p[65] != ' ' && p[65] != '*'))
		return 0;
	return copy_name(l->name, p + 66, len - 66, escaped);
}

static const char *
last_component(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int
sha256sums_find(const char *text, size_t len, const char *name,
    char hex[65], const char *what, struct err *e)
{
	char exact[SHA256_HEX_LEN + 1] = "", base[SHA256_HEX_LEN + 1] = "";
	struct sums_line *l = malloc(sizeof(*l));
	const char *p = text, *end = text + len;
	int valid = 0, rc = -1;

	if (l == NULL)
		return err_set(e, "cannot read '%s': out of memory", what);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *line = p;

		p = nl ? nl + 1 : end;
		if (ll == 0 || line[0] == '#' || (ll == 1 && line[0] == '\r'))
			continue;
		if (!parse_sums_line(line, ll, l))
			continue;
		valid++;
		if (strcmp(l->name, name) == 0) {
			if (exact[0] && strcmp(exact, l->hex) != 0) {
				err_set(e, "'%s' gives two hashes for '%s'",
				    what, name);
				goto out;
			}
			memcpy(exact, l->hex, sizeof(exact));
		} else if (strcmp(last_component(l->name), name) == 0) {
			if (base[0] && strcmp(base, l->hex) != 0)
				base[0] = '?';	/* ambiguous */
			else if (!base[0])
				memcpy(base, l->hex, sizeof(base));
		}
	}
	if (valid == 0) {
		err_set(e, "'%s' holds no line of the form 'SHA256  NAME'",
		    what);
		goto out;
	}
	if (exact[0]) {
		memcpy(hex, exact, SHA256_HEX_LEN + 1);
		rc = 1;
	} else if (base[0] == '?') {
		err_set(e, "'%s' gives several hashes for files named '%s'",
		    what, name);
	} else if (base[0]) {
		memcpy(hex, base, SHA256_HEX_LEN + 1);
		rc = 1;
	} else
		rc = 0;
out:
	free(l);
	return rc;
}

/* The file name at the end of a URL's path; malloced, NULL if none. */
static char *
url_basename(const char *url)
{
	const char *p = strstr(url, "://"), *end, *slash = NULL;

	p = p ? p + 3 : url;
	end = p + strcspn(p, "?#");
	for (const char *q = p; q < end; q++)
		if (*q == '/')
			slash = q;
	if (slash == NULL || slash + 1 >= end)
		return NULL;
	return strndup(slash + 1, (size_t)(end - slash - 1));
}

/* Fetch a checksum file into body.  -1 with e set. */
static int
fetch_sums(const struct conf_engine *eng, const char *url,
    struct http_response *r, struct err *e)
{
	struct http_opts o = HTTP_OPTS_INIT;

	o.allow_http = eng->allow_http;
	o.max_bytes = SUMS_MAX_BYTES;
	if (http_get(url, &o, r, e) < 0)
		return err_prefix(e, "engine '%s': cannot fetch checksums",
		    eng->name);
	if (r->status != 200)
		return err_set(e, "engine '%s': cannot fetch checksums '%s': "
		    "HTTP %ld", eng->name, url, r->status);
	return 0;
}

int
source_list_url(const struct conf_engine *eng, struct source_state *state,
    struct release_list *out, struct err *e)
{
	struct release_list got = RELEASE_LIST_INIT;
	struct http_response sums;
	char *sums_url = NULL;	/* the file sums holds, malloced */
	int rc = -1;

	(void)state;

	if (eng->source_arg == NULL || strstr(eng->source_arg, "{version}") ==
	    NULL)
		return err_set(e, "engine '%s': url: template '%s' has no "
		    "{version}", eng->name,
		    eng->source_arg ? eng->source_arg : "");
	if (eng->versions.n == 0)
		return err_set(e, "engine '%s': a url: source needs versions",
		    eng->name);
	http_response_init(&sums);
	for (size_t i = 0; i < eng->versions.n; i++) {
		const char *version = eng->versions.v[i];
		char hex[SHA256_HEX_LEN + 1];
		struct release_info ri;
		char *want = NULL;
		int added;

		memset(&ri, 0, sizeof(ri));
		ri.version = (char *)(uintptr_t)version;
		ri.url = url_expand(eng->source_arg, NULL, version);
		ri.asset = eng->asset ? asset_expand(eng->asset, version) :
		    ri.url ? url_basename(ri.url) : NULL;
		if (ri.url == NULL || ri.asset == NULL) {
			err_set(e, "engine '%s': no file name in '%s' for "
			    "version '%s'", eng->name, eng->source_arg,
			    version);
			goto next_fail;
		}
		if (eng->sha256sums != NULL) {
			int found;

			if ((want = url_expand(eng->sha256sums, NULL, version)) ==
			    NULL) {
				err_set(e, "engine '%s': out of memory",
				    eng->name);
				goto next_fail;
			}
			/* One fetch serves every version of a fixed file. */
			if (sums_url == NULL || strcmp(sums_url, want) != 0) {
				free(sums_url);
				sums_url = NULL;
				if (fetch_sums(eng, want, &sums, e) < 0)
					goto next_fail;
				sums_url = want;
				want = NULL;
			}
			found = sha256sums_find(sums.body.data ?
			    sums.body.data : "", sums.body.len, ri.asset, hex,
			    sums_url, e);
			if (found < 0) {
				err_prefix(e, "engine '%s'", eng->name);
				goto next_fail;
			}
			if (found == 0) {
				err_set(e, "engine '%s': '%s' has no line for "
				    "'%s'", eng->name, sums_url, ri.asset);
				goto next_fail;
			}
			ri.sha256 = hex;
			ri.sha256_origin = (char *)(uintptr_t)"sha256sums";
		}
		added = release_list_add(&got, &ri);
		free(ri.url);
		free(ri.asset);
		free(want);
		if (added < 0) {
			err_set(e, "engine '%s': out of memory", eng->name);
			goto out;
		}
		continue;
next_fail:
		free(ri.url);
		free(ri.asset);
		free(want);
		goto out;
	}
	for (size_t i = 0; i < got.n; i++)
		if (release_list_add(out, &got.v[i]) < 0) {
			err_set(e, "engine '%s': out of memory", eng->name);
			goto out;
		}
	rc = 0;
out:
	release_list_release(&got);
	http_response_release(&sums);
	free(sums_url);
	return rc;
}

const struct source_kind source_kind_url = { SOURCE_URL, source_list_url };
